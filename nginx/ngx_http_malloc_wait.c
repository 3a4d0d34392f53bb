
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * The collection of the workers' answers to a command, for whoever
 * posted it: a request of the admin location, the snapshot schedule, the
 * watch.  A collection posts its command through the board (waiting for
 * room in the ring while it has none), then looks at the slots whenever
 * the board's wake hook runs (a worker answered through this worker's
 * eventfd) and on a short timer, until every live worker of the current
 * generation has answered or the deadline passes, and hands the answers
 * to its caller's "collected".  One loop, one deadline, and the command
 * closed on every way out, so that a worker coming to it late makes
 * nothing.
 *
 * A request's side of its collection (holding it, the busy answer, the
 * files the workers make for a read) is request.c's.
 *
 * Owns: this worker's list of collections.
 * Calls: board.  Reaches its callers only through their "collected".
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_malloc_module.h"
#include "ngx_http_malloc_board.h"
#include "ngx_http_malloc_wait.h"


static void ngx_http_malloc_collect_wake(ngx_log_t *log);
static void ngx_http_malloc_collect_handler(ngx_event_t *ev);
static void ngx_http_malloc_collect_look(ngx_http_malloc_collect_t *co);
static ngx_uint_t ngx_http_malloc_collect_again(
    ngx_http_malloc_collect_t *co);
static void ngx_http_malloc_collect_sweep(ngx_http_malloc_collect_t *co);
static ngx_uint_t ngx_http_malloc_collect_posted(
    ngx_http_malloc_collect_t *co);
static void ngx_http_malloc_collect_stop(ngx_http_malloc_collect_t *co);


/* this worker's collections */
static ngx_queue_t  ngx_http_malloc_collections;


void
ngx_http_malloc_wait_init_process(void)
{
    ngx_queue_init(&ngx_http_malloc_collections);

    ngx_http_malloc_board_hook(NGX_HTTP_MALLOC_HOOK_WAKE,
                               ngx_http_malloc_collect_wake);
}


/*
 * Starts a collection of *co->cmd: it is posted now if the ring has room,
 * and co->collected runs later, from the event loop, in every case.
 */

void
ngx_http_malloc_collect(ngx_http_malloc_collect_t *co)
{
    co->seq = 0;
    co->again = 0;
    co->deadline = ngx_current_msec + co->timeout;
    co->ev.handler = ngx_http_malloc_collect_handler;
    co->ev.log = co->log;

    if (!co->queued) {
        ngx_queue_insert_tail(&ngx_http_malloc_collections, &co->queue);
        co->queued = 1;
    }

    (void) ngx_http_malloc_collect_posted(co);

    if (co->ev.timer_set) {
        ngx_del_timer(&co->ev);
    }

    ngx_add_timer(&co->ev, NGX_HTTP_MALLOC_WAIT_POLL);
}


/* a collection that its caller gives up: the command is closed */

void
ngx_http_malloc_collect_end(ngx_http_malloc_collect_t *co)
{
    ngx_http_malloc_collect_stop(co);

    if (co->seq != 0) {
        ngx_log_debug1(NGX_LOG_DEBUG_CORE, co->log, 0,
                       "malloc collect: seq %ui abandoned", co->seq);

        ngx_http_malloc_board_close(co->mmcf, co->seq);
    }
}


/* a worker answered a command of this worker: the collections look now */

static void
ngx_http_malloc_collect_wake(ngx_log_t *log)
{
    ngx_queue_t                *q;
    ngx_http_malloc_collect_t  *co;

    for (q = ngx_queue_head(&ngx_http_malloc_collections);
         q != ngx_queue_sentinel(&ngx_http_malloc_collections);
         q = ngx_queue_next(q))
    {
        co = ngx_queue_data(q, ngx_http_malloc_collect_t, queue);

        if (!co->ev.posted) {
            ngx_post_event(&co->ev, &ngx_posted_events);
        }
    }
}


static void
ngx_http_malloc_collect_handler(ngx_event_t *ev)
{
    ngx_http_malloc_collect_look((ngx_http_malloc_collect_t *)
        ((u_char *) ev - offsetof(ngx_http_malloc_collect_t, ev)));
}


/* looks again in a moment while some worker has yet to answer */

static void
ngx_http_malloc_collect_look(ngx_http_malloc_collect_t *co)
{
    ngx_uint_t                    n, seq, answered;
    ngx_http_malloc_main_conf_t  *mmcf;

    mmcf = co->mmcf;

    if (!ngx_http_malloc_collect_posted(co)) {
        answered = 0;
        n = 1;

    } else if (co->cmd->target != 0) {
        /* one worker's dump: the others' answers do not matter */
        answered = ngx_http_malloc_board_answered(mmcf, co->seq,
                                                  co->cmd->target);
        n = 1;

    } else {
        n = NGX_MAX_PROCESSES;
        answered = ngx_http_malloc_board_workers(mmcf, co->seq, NULL, &n);
    }

    if (answered < n
        && (ngx_msec_int_t) (co->deadline - ngx_current_msec) > 0)
    {
        if (co->ev.timer_set) {
            ngx_del_timer(&co->ev);
        }

        ngx_add_timer(&co->ev, NGX_HTTP_MALLOC_WAIT_POLL);
        return;
    }

    if (ngx_http_malloc_collect_again(co)) {
        return;
    }

    ngx_log_debug3(NGX_LOG_DEBUG_CORE, co->log, 0,
                   "malloc collect: seq %ui over, %ui of %ui answered",
                   co->seq, answered, n);

    /*
     * the caller reads the answers before the entry is closed, when it
     * may be used again; "co" may be gone once it returns
     */

    seq = co->seq;

    ngx_http_malloc_collect_stop(co);
    co->collected(co, seq == 0);

    if (seq != 0) {
        ngx_http_malloc_board_close(mmcf, seq);
    }
}


/*
 * A reload between the post and the answers: the new workers came up
 * after the command and never apply it.  A command whose effect is the
 * desired state (profiling on or off, a reset's rate) is theirs already;
 * any other (a dump, stats, a purge) is posted again, once, to them, so
 * that the answer is whole.  1 when it was.
 */

static ngx_uint_t
ngx_http_malloc_collect_again(ngx_http_malloc_collect_t *co)
{
    if (co->seq == 0 || co->again || co->cmd->target != 0
        || ngx_http_malloc_cmd_is_state(co->cmd->kind)
        || co->generation == ngx_http_malloc_board_generation(co->mmcf)
        || (ngx_msec_int_t) (co->deadline - ngx_current_msec) <= 0)
    {
        return 0;
    }

    ngx_log_debug2(NGX_LOG_DEBUG_CORE, co->log, 0,
                   "malloc collect: seq %ui crossed a reload, "
                   "generation %ui: posted again", co->seq,
                   ngx_http_malloc_board_generation(co->mmcf));

    ngx_http_malloc_board_close(co->mmcf, co->seq);
    ngx_http_malloc_collect_sweep(co);

    co->seq = 0;
    co->again = 1;

    (void) ngx_http_malloc_collect_posted(co);

    if (co->ev.timer_set) {
        ngx_del_timer(&co->ev);
    }

    ngx_add_timer(&co->ev, NGX_HTTP_MALLOC_WAIT_POLL);

    return 1;
}


/*
 * The hidden files that the old workers wrote for the command, whatever
 * their pids: its template before and after "%p" names them.  One that
 * is still being written when its worker sees the command closed is
 * removed by that worker.
 */

static void
ngx_http_malloc_collect_sweep(ngx_http_malloc_collect_t *co)
{
    size_t       len, head, tail;
    u_char      *name, *pid;
    ngx_dir_t    dir;
    ngx_str_t   *dump;
    u_char       path[NGX_MAX_PATH];

    pid = (u_char *) ngx_strstr(co->cmd->tmpl, "%p");

    if (co->cmd->tmpl[0] != '.' || pid == NULL) {
        return;
    }

    head = pid - co->cmd->tmpl;
    tail = ngx_strlen(pid + 2);
    dump = &co->mmcf->dump_dir->name;

    if (ngx_open_dir((ngx_str_t *) dump, &dir) != NGX_OK) {
        return;
    }

    while (ngx_read_dir(&dir) == NGX_OK) {
        name = ngx_de_name(&dir);
        len = ngx_de_namelen(&dir);

        if (len <= head + tail
            || ngx_strncmp(name, co->cmd->tmpl, head) != 0
            || ngx_strncmp(name + len - tail, pid + 2, tail) != 0)
        {
            continue;
        }

        if (ngx_snprintf(path, sizeof(path) - 1, "%V/%*s%Z", dump, len, name)
            >= path + sizeof(path) - 1)
        {
            continue;
        }

        if (ngx_delete_file(path) == NGX_FILE_ERROR
            && ngx_errno != NGX_ENOENT)
        {
            ngx_log_error(NGX_LOG_ERR, co->log, ngx_errno,
                          ngx_delete_file_n " \"%s\" failed", path);
        }
    }

    (void) ngx_close_dir(&dir);
}


/* posts the command once the ring has room: 0 while it has none */

static ngx_uint_t
ngx_http_malloc_collect_posted(ngx_http_malloc_collect_t *co)
{
    if (co->seq != 0) {
        return 1;
    }

    co->seq = ngx_http_malloc_board_post(co->mmcf, co->cmd, co->reserve,
                                         co->timeout, co->log);
    if (co->seq == 0) {
        return 0;
    }

    /* the workers have the whole timeout from now */
    co->deadline = ngx_current_msec + co->timeout;
    co->generation = ngx_http_malloc_board_generation(co->mmcf);

    ngx_log_debug2(NGX_LOG_DEBUG_CORE, co->log, 0,
                   "malloc collect: seq %ui, %M ms", co->seq, co->timeout);

    return 1;
}


static void
ngx_http_malloc_collect_stop(ngx_http_malloc_collect_t *co)
{
    if (co->ev.timer_set) {
        ngx_del_timer(&co->ev);
    }

    if (co->ev.posted) {
        ngx_delete_posted_event(&co->ev);
    }

    if (co->queued) {
        ngx_queue_remove(&co->queue);
        co->queued = 0;
    }
}
