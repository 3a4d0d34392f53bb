
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
 * For requests, the rest of their waiting: holding the request (its
 * cleanup, ngx_http_test_reading), admitting a bounded number of builds
 * and windows, the busy answer, the timer that keeps a request on the
 * module's thread alive, resuming, and the files the workers make for a
 * read: named, read back as JSON (stats?detail=full, traffic) and
 * removed, or removed when it ends early.
 *
 * Owns: this worker's list of collections and its admitted requests.
 * Calls: board, reply (the answer "busy"), and the pure core (path).
 * Reaches its callers only through their "collected" and "answered".
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include <jansson.h>

#include "ngx_http_malloc_module.h"
#include "ngx_http_malloc_board.h"
#include "ngx_http_malloc_wait.h"
#include "ngx_http_malloc_reply.h"
#include "ngx_http_malloc_path.h"


/* builds of profiles, and growth windows, at once in a worker */
#define NGX_HTTP_MALLOC_ADMIT        4

/* how often a request whose work is on a thread looks in on it */
#define NGX_HTTP_MALLOC_WAIT_THREAD  1000


static void ngx_http_malloc_collect_wake(ngx_log_t *log);
static void ngx_http_malloc_collect_handler(ngx_event_t *ev);
static void ngx_http_malloc_collect_look(ngx_http_malloc_collect_t *co);
static ngx_uint_t ngx_http_malloc_collect_again(
    ngx_http_malloc_collect_t *co);
static void ngx_http_malloc_collect_sweep(ngx_http_malloc_collect_t *co);
static ngx_uint_t ngx_http_malloc_collect_posted(
    ngx_http_malloc_collect_t *co);
static void ngx_http_malloc_collect_stop(ngx_http_malloc_collect_t *co);
static void ngx_http_malloc_wait_collected(ngx_http_malloc_collect_t *co,
    ngx_uint_t busy);
static ngx_int_t ngx_http_malloc_wait_busy(ngx_http_request_t *r,
    const char *fmt, ngx_uint_t n);
static void ngx_http_malloc_wait_running(ngx_event_t *ev);
static void ngx_http_malloc_wait_cleanup(void *data);


/* this worker's collections, and its admitted requests */
typedef struct {
    ngx_queue_t                 waiting;
    ngx_uint_t                  admitted[2];  /* builds, windows */
} ngx_http_malloc_requests_t;


static ngx_http_malloc_requests_t  ngx_http_malloc_requests;


void
ngx_http_malloc_wait_init_process(void)
{
    ngx_queue_init(&ngx_http_malloc_requests.waiting);

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
        ngx_queue_insert_tail(&ngx_http_malloc_requests.waiting, &co->queue);
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

    for (q = ngx_queue_head(&ngx_http_malloc_requests.waiting);
         q != ngx_queue_sentinel(&ngx_http_malloc_requests.waiting);
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


/*
 * Registers what ends a request's wait early (the client going away, the
 * request being finalized) before anything is posted or built.
 */

ngx_int_t
ngx_http_malloc_wait_hold(ngx_http_request_t *r, ngx_http_malloc_ctx_t *ctx)
{
    ngx_http_cleanup_t  *cln;

    if (ctx->request != NULL) {
        /* held already: a growth window's second collection */
        return NGX_OK;
    }

    cln = ngx_http_cleanup_add(r, 0);
    if (cln == NULL) {
        return NGX_ERROR;
    }

    ctx->request = r;

    cln->handler = ngx_http_malloc_wait_cleanup;
    cln->data = ctx;

    ctx->co.ev.data = r->connection;
    ctx->co.ev.log = r->connection->log;
    ctx->co.log = r->connection->log;

    /* a client that goes away ends the wait through the cleanup */
    r->read_event_handler = ngx_http_test_reading;
    r->write_event_handler = ngx_http_request_empty_handler;

    return NGX_OK;
}


/*
 * A profile's build (or a growth window, "window" 1) is admitted while
 * this worker runs fewer than NGX_HTTP_MALLOC_ADMIT of its kind: each
 * holds a heap in memory, and builds queue for one thread.  NGX_OK to go
 * on; else the request is answered (503 busy) and *rc is what to return.
 * The request's cleanup lets the next one in.
 */

ngx_int_t
ngx_http_malloc_wait_admit(ngx_http_request_t *r, ngx_http_malloc_ctx_t *ctx,
    ngx_uint_t window, ngx_int_t *rc)
{
    if (ngx_http_malloc_requests.admitted[window] >= NGX_HTTP_MALLOC_ADMIT) {
        *rc = ngx_http_malloc_wait_busy(r, window
                                  ? "this worker keeps %ui growth windows "
                                    "open already; ask again"
                                  : "this worker builds %ui profiles "
                                    "already; ask again",
                                  NGX_HTTP_MALLOC_ADMIT);
        return NGX_DECLINED;
    }

    if (ngx_http_malloc_wait_hold(r, ctx) != NGX_OK) {
        *rc = NGX_HTTP_INTERNAL_SERVER_ERROR;
        return NGX_ERROR;
    }

    ngx_http_malloc_requests.admitted[window]++;
    ctx->admitted = window + 1;

    return NGX_OK;
}


/*
 * Posts ctx->cmd and collects the answers for the request: NGX_DONE; what
 * ctx->answered returns then finalizes the request.  A read ("read" 1)
 * leaves room in the ring for writes.
 */

ngx_int_t
ngx_http_malloc_wait_post(ngx_http_request_t *r, ngx_http_malloc_ctx_t *ctx,
    ngx_msec_t timeout, ngx_uint_t read)
{
    ngx_http_malloc_collect_t  *co;

    if (ngx_http_malloc_wait_hold(r, ctx) != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    co = &ctx->co;

    co->mmcf = ngx_http_get_module_main_conf(r, ngx_http_malloc_module);
    co->cmd = &ctx->cmd;
    co->reserve = read ? NGX_HTTP_MALLOC_RING_WRITES : 0;
    co->timeout = timeout;
    co->collected = ngx_http_malloc_wait_collected;
    co->data = ctx;

    ctx->collecting = 1;

    ngx_http_malloc_collect(co);

    return NGX_DONE;
}


static void
ngx_http_malloc_wait_collected(ngx_http_malloc_collect_t *co,
    ngx_uint_t busy)
{
    ngx_int_t               rc;
    ngx_http_request_t     *r;
    ngx_http_malloc_ctx_t  *ctx;

    ctx = co->data;
    r = ctx->request;

    ctx->collecting = 0;

    if (busy) {
        rc = ngx_http_malloc_wait_busy(r, "the workers had %ui commands to "
                                       "apply within the timeout; ask again",
                                       NGX_HTTP_MALLOC_RING - co->reserve);
    } else {
        rc = ctx->answered(r, ctx);
    }

    ngx_http_malloc_wait_resume(r, rc);
}


/* no room for the request now: 503, ask again in a second */

static ngx_int_t
ngx_http_malloc_wait_busy(ngx_http_request_t *r, const char *fmt,
    ngx_uint_t n)
{
    static ngx_str_t  retry = ngx_string("1");

    if (ngx_http_malloc_add_header(r, "Retry-After", &retry) != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    return ngx_http_malloc_error(r, NGX_HTTP_SERVICE_UNAVAILABLE, "busy",
                                 fmt, n);
}


/*
 * While a request's work runs on the module's thread, nothing of nginx's
 * waits for it: a timer does, so that a worker shutting down (a reload,
 * a quit) finishes the request before it exits, as it would one waiting
 * for an upstream.  The timer only comes back; the thread's completion
 * removes it.
 */

void
ngx_http_malloc_wait_thread(ngx_http_malloc_ctx_t *ctx, ngx_uint_t running)
{
    if (ctx->co.ev.timer_set) {
        ngx_del_timer(&ctx->co.ev);
    }

    if (running) {
        ctx->co.ev.handler = ngx_http_malloc_wait_running;
        ngx_add_timer(&ctx->co.ev, NGX_HTTP_MALLOC_WAIT_THREAD);
    }
}


static void
ngx_http_malloc_wait_running(ngx_event_t *ev)
{
    ngx_add_timer(ev, NGX_HTTP_MALLOC_WAIT_THREAD);
}


/* back from a timer, an event or a thread: finalize unless still waiting */

void
ngx_http_malloc_wait_resume(ngx_http_request_t *r, ngx_int_t rc)
{
    ngx_connection_t  *c;

    c = r->connection;

    if (rc != NGX_DONE) {
        ngx_http_finalize_request(r, rc);
    }

    ngx_http_run_posted_requests(c);
}


/*
 * Every way out of a request: its admission is given back, and a read
 * that ends while it collects closes its command and removes the files
 * the workers made for it.
 */

static void
ngx_http_malloc_wait_cleanup(void *data)
{
    ngx_http_malloc_ctx_t *ctx = data;

    ngx_http_malloc_collect_stop(&ctx->co);

    if (ctx->admitted) {
        ngx_http_malloc_requests.admitted[ctx->admitted - 1]--;
        ctx->admitted = 0;
    }

    if (!ctx->collecting) {
        return;
    }

    ctx->collecting = 0;

    /* closed first: a worker that comes to it now makes nothing */
    ngx_http_malloc_collect_end(&ctx->co);
    ngx_http_malloc_wait_unlink(ctx);
}


/* the dump directory's path of the file that worker "pid" makes for ctx */

void
ngx_http_malloc_wait_file(ngx_http_request_t *r, ngx_http_malloc_ctx_t *ctx,
    ngx_pid_t pid, u_char *path)
{
    u_char                       *p;
    ngx_http_malloc_main_conf_t  *mmcf;
    char                          name[NGX_HTTP_MALLOC_NAME_MAX + 1];

    mmcf = ngx_http_get_module_main_conf(r, ngx_http_malloc_module);

    (void) ngx_http_malloc_path_expand((char *) ctx->cmd.tmpl, (long) pid,
                                       name, sizeof(name));

    p = ngx_snprintf(path, NGX_MAX_PATH - 1, "%V/%s", &mmcf->dump_dir->name,
                     name);
    *p = '\0';
}


/*
 * A worker's JSON file of a read's command (jemalloc's report, its
 * traffic), read back and removed; NULL: none, or not JSON, logged.
 */

json_t *
ngx_http_malloc_wait_json(ngx_http_request_t *r, ngx_http_malloc_ctx_t *ctx,
    ngx_http_malloc_worker_t *w)
{
    json_t        *j;
    json_error_t   error;
    u_char         path[NGX_MAX_PATH];

    ngx_http_malloc_wait_file(r, ctx, w->pid, path);

    j = json_load_file((char *) path, 0, &error);

    if (ngx_delete_file(path) == NGX_FILE_ERROR) {
        ngx_log_error(NGX_LOG_ERR, r->connection->log, ngx_errno,
                      ngx_delete_file_n " \"%s\" failed", path);
    }

    if (j == NULL || !json_is_object(j)) {
        ngx_log_error(NGX_LOG_ERR, r->connection->log, 0,
                      "cannot read the answer of worker %ui from \"%s\": "
                      "%s", w->worker, path,
                      j == NULL ? error.text : "not an object");
        json_decref(j);
        return NULL;
    }

    return j;
}


/*
 * A read whose answers were all read in its "answered" (stats, traffic):
 * its command closed now, then every file of it removed.  A worker that
 * answered late wrote its file before the close (removed here) or
 * after it (it removes the file itself): none is left.
 */

void
ngx_http_malloc_wait_read(ngx_http_malloc_ctx_t *ctx)
{
    ngx_http_malloc_main_conf_t  *mmcf;

    if (ctx->co.seq == 0) {
        return;
    }

    mmcf = ngx_http_get_module_main_conf(ctx->request, ngx_http_malloc_module);

    ngx_http_malloc_board_close(mmcf, ctx->co.seq);
    ngx_http_malloc_wait_unlink(ctx);
}


/*
 * Removes the hidden files that a read's command made, answered or not:
 * a worker that writes its file after this sees the command closed and
 * removes it itself.  An operator's dump (a name without the leading dot)
 * is never removed.
 */

void
ngx_http_malloc_wait_unlink(ngx_http_malloc_ctx_t *ctx)
{
    ngx_uint_t                    i, n;
    ngx_http_request_t           *r;
    ngx_http_malloc_worker_t     *w;
    ngx_http_malloc_main_conf_t  *mmcf;
    u_char                        path[NGX_MAX_PATH];

    r = ctx->request;
    mmcf = ngx_http_get_module_main_conf(r, ngx_http_malloc_module);

    if (ctx->co.seq == 0 || ctx->cmd.tmpl[0] != '.') {
        return;
    }

    w = ngx_http_malloc_board_copy(mmcf, r->pool, ctx->co.seq, &n);
    if (w == NULL) {
        return;
    }

    for (i = 0; i < n; i++) {
        if (w[i].pid == 0
            || (ctx->cmd.target != 0 && w[i].pid != ctx->cmd.target))
        {
            continue;
        }

        ngx_http_malloc_wait_file(r, ctx, w[i].pid, path);

        if (ngx_delete_file(path) == NGX_FILE_ERROR
            && ngx_errno != NGX_ENOENT)
        {
            ngx_log_error(NGX_LOG_ERR, r->connection->log, ngx_errno,
                          ngx_delete_file_n " \"%s\" failed", path);
        }
    }
}
