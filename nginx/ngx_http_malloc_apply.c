
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * A worker's side of the board: brings a new worker to the desired
 * state, applies each command in the order posted (mallctl, a dump on the
 * module's thread, jemalloc's report), answers it in the slot, and
 * publishes this worker's figures about every second so that readers
 * never wait for it.
 *
 * Owns: the dump in progress, the reading of smaps and the baseline of
 * this worker's mappings it is compared with.  Calls: board,
 * threads, walk (GET traffic's part, malloc_traffic's figures), and the
 * pure core (jemalloc, dump, path, rss).  Reached by the
 * board through its hooks.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_malloc_module.h"
#include "ngx_http_malloc_board.h"
#include "ngx_http_malloc_apply.h"
#include "ngx_http_malloc_threads.h"
#include "ngx_http_malloc_jemalloc.h"
#include "ngx_http_malloc_path.h"
#include "ngx_http_malloc_dump.h"
#include "ngx_http_malloc_rss.h"
#include "ngx_http_malloc_walk.h"


/* hidden files older than this were left by a worker that died */
#define NGX_HTTP_MALLOC_STALE        300


/* a dump on the module's thread */
typedef struct {
    ngx_http_malloc_main_conf_t  *mmcf;
    ngx_log_t                    *log;
    ngx_http_malloc_result_t      result;
    ngx_http_malloc_task_t        task;
    char                          name[NGX_HTTP_MALLOC_NAME_MAX + 1];
} ngx_http_malloc_dump_task_t;


/*
 * A read of smaps that took longer than this moves the next ones to the
 * module's thread: a small nginx reads it in a fraction of a millisecond
 * and keeps no thread while idle; a big one (the kernel walks every page
 * table) does not stall its event loop every second.
 */
#define NGX_HTTP_MALLOC_RSS_SLOW     2000     /* microseconds */


/* this process's smaps, read and parsed, in place or on a thread */
typedef struct {
    ngx_http_malloc_main_conf_t  *mmcf;
    ngx_log_t                    *log;
    ngx_http_malloc_task_t        task;
    ngx_http_malloc_je_stats_t    je;
    ngx_uint_t                    nranges;
    ngx_http_malloc_rss_range_t   ranges[NGX_HTTP_MALLOC_RSS_ZONES];
    ngx_http_malloc_rss_t         rss;
    ngx_http_malloc_maps_base_t  *base;       /* a worker's mappings as it
                                                 started, NULL: none kept */
    ngx_http_malloc_maps_t        maps;       /* those that grew most */
    ngx_uint_t                    compared;   /* maps is of this reading */
    int                           err;
    ngx_uint_t                    usec;       /* the read took */
    ngx_uint_t                    master;     /* the master's reading */
    ngx_uint_t                    busy;       /* on a thread now */
    ngx_uint_t                    slow;       /* read on a thread */
    ngx_uint_t                    failed;     /* was logged */
} ngx_http_malloc_rss_task_t;


static void ngx_http_malloc_apply_rss(ngx_cycle_t *cycle,
    ngx_http_malloc_main_conf_t *mmcf, ngx_uint_t master,
    ngx_http_malloc_je_stats_t *je, ngx_log_t *log);
static void ngx_http_malloc_apply_rss_thread(void *data);
static void ngx_http_malloc_apply_rss_done(void *data);
static void ngx_http_malloc_apply_run(ngx_log_t *log);
static void ngx_http_malloc_apply_tick(ngx_log_t *log);
static void ngx_http_malloc_apply_beat(ngx_log_t *log);
static ngx_int_t ngx_http_malloc_apply_one(ngx_http_malloc_main_conf_t *mmcf,
    ngx_http_malloc_cmd_t *cmd, ngx_http_malloc_result_t *res,
    ngx_log_t *log);
static void ngx_http_malloc_apply_active(ngx_http_malloc_cmd_t *cmd,
    ngx_http_malloc_result_t *res, ngx_log_t *log);
static ngx_int_t ngx_http_malloc_apply_dump(ngx_http_malloc_main_conf_t *mmcf,
    ngx_http_malloc_cmd_t *cmd, ngx_http_malloc_result_t *res,
    ngx_log_t *log);
static void ngx_http_malloc_apply_dump_thread(void *data);
static void ngx_http_malloc_apply_dump_done(void *data);
static void ngx_http_malloc_apply_dumped(ngx_http_malloc_main_conf_t *mmcf,
    const char *name, ngx_http_malloc_result_t *res, ngx_log_t *log);
static void ngx_http_malloc_apply_swept(void *data, const char *name);
static void ngx_http_malloc_apply_late(ngx_http_malloc_main_conf_t *mmcf,
    const char *name, ngx_http_malloc_result_t *res, ngx_log_t *log);
static ngx_int_t ngx_http_malloc_apply_report(
    ngx_http_malloc_main_conf_t *mmcf, ngx_http_malloc_cmd_t *cmd,
    char *name, int *err, off_t *bytes);
static void ngx_http_malloc_apply_answer(ngx_http_malloc_main_conf_t *mmcf,
    ngx_http_malloc_result_t *res);
static void ngx_http_malloc_apply_sync(ngx_http_malloc_main_conf_t *mmcf,
    ngx_log_t *log);
static void ngx_http_malloc_apply_publish(ngx_http_malloc_main_conf_t *mmcf,
    ngx_http_malloc_je_stats_t *st);
static ngx_int_t ngx_http_malloc_apply_name(u_char *tmpl, char *name);


/* per process: the one dump it may have in a thread, its reading of smaps */
typedef struct {
    ngx_http_malloc_dump_task_t  *dump_task;
    ngx_uint_t                    dumping;
    ngx_http_malloc_rss_task_t   *rss_task;
} ngx_http_malloc_tasks_t;


static ngx_http_malloc_tasks_t  ngx_http_malloc_tasks;


/*
 * The master parses the configuration at every reload, and what a module
 * allocates then and keeps is a leak that every new generation inherits:
 * with profiling on, the master samples too, from the next reload on.
 * This is the only place where the master's sampling follows the desired
 * state, after the configuration was read: the read was sampled if the
 * master sampled before, and is whole in the samples unless the sync
 * resets them now for a new interval.  The cycle's workers inherit the
 * record with the fork, and the first of them files it with its
 * generation.
 */

void
ngx_http_malloc_apply_init_module(ngx_cycle_t *cycle,
    ngx_http_malloc_main_conf_t *mmcf)
{
    int        active;
    size_t     lg;
    ngx_int_t  want;

    mmcf->master_lg = -1;
    mmcf->master_partial = 1;

    if (ngx_http_malloc_je_probe()->state != NGX_HTTP_MALLOC_JE_OK
        || ngx_http_malloc_je_get_active(&active) != 0)
    {
        return;
    }

    if (active && ngx_http_malloc_je_lg_sample(&lg) == 0) {
        want = ngx_http_malloc_board_lg_sample(mmcf);

        mmcf->master_lg = (ngx_int_t) lg;
        mmcf->master_partial = (want >= 0 && (size_t) want != lg);
    }

    ngx_http_malloc_apply_sync(mmcf, cycle->log);

    /*
     * The master's memory after the read, for GET stats.  Its reading
     * lives in this cycle's pool: the last cycle's goes with that cycle.
     */
    ngx_http_malloc_tasks.rss_task = NULL;
    ngx_http_malloc_apply_rss(cycle, mmcf, 1, NULL, cycle->log);

    if ((ngx_uint_t) active != ngx_http_malloc_board_desired(mmcf, NULL)) {
        ngx_log_error(NGX_LOG_INFO, cycle->log, 0,
                      "heap profiling turned %s in the master",
                      active ? "off" : "on");
    }
}


/*
 * A new worker, whether from a reload or respawned after a crash, comes up
 * in the desired state, so that profiling survives both.
 */

ngx_int_t
ngx_http_malloc_apply_init_process(ngx_cycle_t *cycle,
    ngx_http_malloc_main_conf_t *mmcf)
{
    ngx_http_malloc_je_stats_t  st;

    ngx_http_malloc_tasks.dump_task =
        ngx_pcalloc(cycle->pool, sizeof(ngx_http_malloc_dump_task_t));
    if (ngx_http_malloc_tasks.dump_task == NULL) {
        return NGX_ERROR;
    }

    if (ngx_http_malloc_je_probe()->state != NGX_HTTP_MALLOC_JE_OK) {

        /*
         * nothing of jemalloc's to apply (its endpoints say why), but
         * what traffic holds needs no jemalloc: GET traffic's command is
         * answered, malloc_traffic's figures published
         */

        ngx_http_malloc_apply_publish(mmcf, NULL);

        ngx_http_malloc_board_hook(NGX_HTTP_MALLOC_HOOK_WAKE,
                                   ngx_http_malloc_apply_run);
        ngx_http_malloc_board_hook(NGX_HTTP_MALLOC_HOOK_TICK,
                                   ngx_http_malloc_apply_beat);
        return NGX_OK;
    }

    ngx_http_malloc_apply_sync(mmcf, cycle->log);

    if (ngx_http_malloc_board_desired(mmcf, NULL)) {
        ngx_log_error(NGX_LOG_INFO, cycle->log, 0,
                      "heap profiling resumed in new worker");
    }

    /*
     * in place: this first reading is the worker's start; the parts and
     * the figures of one reading of jemalloc's, which the reading of the
     * parts itself allocates after
     */

    ngx_http_malloc_apply_publish(mmcf, &st);

    ngx_http_malloc_tasks.rss_task = NULL;
    ngx_http_malloc_apply_rss(cycle, mmcf, 0, &st, cycle->log);

    ngx_http_malloc_board_hook(NGX_HTTP_MALLOC_HOOK_WAKE,
                               ngx_http_malloc_apply_run);
    ngx_http_malloc_board_hook(NGX_HTTP_MALLOC_HOOK_TICK,
                               ngx_http_malloc_apply_tick);

    return NGX_OK;
}


static void
ngx_http_malloc_apply_tick(ngx_log_t *log)
{
    ngx_http_malloc_je_stats_t    st;
    ngx_http_malloc_main_conf_t  *mmcf;

    mmcf = ngx_http_cycle_get_module_main_conf(ngx_cycle,
                                               ngx_http_malloc_module);

    if (ngx_http_malloc_board_expire(mmcf, log)) {
        ngx_log_error(NGX_LOG_NOTICE, log, 0,
                      "heap profiling turned off: its duration has elapsed");
    }

    /*
     * jemalloc's statistics ("epoch") wait for a dump in progress: the
     * event loop would stall as long as the dump takes.  The figures of
     * a dumping worker age a little instead.
     */

    if (!ngx_http_malloc_tasks.dumping) {
        ngx_http_malloc_apply_publish(mmcf, &st);
        ngx_http_malloc_apply_rss((ngx_cycle_t *) ngx_cycle, mmcf, 0, &st,
                                  log);

        if (mmcf->traffic == 1) {
            ngx_http_malloc_walk_publish(mmcf, log);
        }
    }
}


/* without jemalloc: alive, and malloc_traffic's figures */

static void
ngx_http_malloc_apply_beat(ngx_log_t *log)
{
    ngx_http_malloc_main_conf_t  *mmcf;

    mmcf = ngx_http_cycle_get_module_main_conf(ngx_cycle,
                                               ngx_http_malloc_module);

    ngx_http_malloc_apply_publish(mmcf, NULL);

    if (mmcf->traffic == 1) {
        ngx_http_malloc_walk_publish(mmcf, log);
    }
}


/*
 * The parts of this process's RSS: smaps with jemalloc's figures of the
 * same moment and the cycle's zones.  In the master (init_module) and in
 * a worker's first reading, in place; later on the module's thread once
 * a read was slow.  One reading at a time.
 */

static void
ngx_http_malloc_apply_rss(ngx_cycle_t *cycle,
    ngx_http_malloc_main_conf_t *mmcf, ngx_uint_t master,
    ngx_http_malloc_je_stats_t *je, ngx_log_t *log)
{
    ngx_http_malloc_rss_task_t  *rt;

    rt = ngx_http_malloc_tasks.rss_task;

    if (rt != NULL && rt->busy) {
        return;
    }

    if (rt == NULL) {
        rt = ngx_pcalloc(cycle->pool, sizeof(ngx_http_malloc_rss_task_t));
        if (rt == NULL) {
            return;
        }

        ngx_http_malloc_tasks.rss_task = rt;

        /*
         * a worker's first reading is the baseline of its mappings, as
         * it is its rss_start; the master keeps none
         */

        if (!master) {
            rt->base = ngx_pcalloc(cycle->pool,
                                   sizeof(ngx_http_malloc_maps_base_t));
        }
    }

    rt->mmcf = mmcf;
    rt->log = log;
    rt->master = master;
    rt->nranges = ngx_http_malloc_board_ranges(cycle, rt->ranges, NULL);

    if (je != NULL) {
        /* the reading just published: the figures agree */
        rt->je = *je;

    } else if (ngx_http_malloc_je_stats(&rt->je) != 0) {
        /* the parts without the allocator's: all anonymous is "other" */
        ngx_memzero(&rt->je, sizeof(ngx_http_malloc_je_stats_t));
    }

    rt->task.work = ngx_http_malloc_apply_rss_thread;
    rt->task.build = 0;
    rt->task.done = ngx_http_malloc_apply_rss_done;
    rt->task.data = rt;

    if (rt->slow && !master
        && ngx_http_malloc_threads_post(&rt->task, log) == NGX_OK)
    {
        rt->busy = 1;
        return;
    }

    ngx_http_malloc_apply_rss_thread(rt);
    ngx_http_malloc_apply_rss_done(rt);
}


/* in a thread, or in place: no logging, no nginx memory */

static void
ngx_http_malloc_apply_rss_thread(void *data)
{
    ngx_http_malloc_rss_task_t *rt = data;

    int                      fd;
    struct timespec          t0, t1;
    ngx_http_malloc_maps_t  *top;

    (void) clock_gettime(CLOCK_MONOTONIC, &t0);

    /* the baseline until one was read whole, then compared with it */

    top = (rt->base != NULL && rt->base->ready) ? &rt->maps : NULL;
    rt->compared = (top != NULL);

    fd = open("/proc/self/smaps", O_RDONLY | O_NOFOLLOW | O_NONBLOCK
                                  | O_CLOEXEC);

    if (fd == -1) {
        rt->err = errno;

    } else {
        rt->err = ngx_http_malloc_rss_read(fd, rt->ranges, rt->nranges,
                                           &rt->je, rt->base, top, &rt->rss);
        (void) close(fd);
    }

    (void) clock_gettime(CLOCK_MONOTONIC, &t1);

    rt->usec = (t1.tv_sec - t0.tv_sec) * 1000000
               + (t1.tv_nsec - t0.tv_nsec) / 1000;
}


static void
ngx_http_malloc_apply_rss_done(void *data)
{
    ngx_http_malloc_rss_task_t *rt = data;

    rt->busy = 0;

    if (rt->err != 0) {
        if (!rt->failed) {
            /* once: the figures simply stay out of GET stats */
            ngx_log_error(NGX_LOG_ERR, rt->log, rt->err,
                          "cannot read \"/proc/self/smaps\": rss and "
                          "rss_parts are left out");
            rt->failed = 1;
        }

        return;
    }

    if (rt->usec > NGX_HTTP_MALLOC_RSS_SLOW && !rt->slow) {
        ngx_log_debug1(NGX_LOG_DEBUG_CORE, rt->log, 0,
                       "malloc apply: smaps took %ui us, read on the "
                       "module's thread from now on", rt->usec);
        rt->slow = 1;
    }

    if (rt->master) {
        ngx_http_malloc_board_master_rss(rt->mmcf, &rt->rss);

    } else {
        ngx_http_malloc_board_publish_rss(rt->mmcf, &rt->rss,
                                          rt->compared ? &rt->maps : NULL);
    }
}


/* the commands not applied yet, in order; a dump in a thread pauses it */

static void
ngx_http_malloc_apply_run(ngx_log_t *log)
{
    ngx_int_t                     rc;
    ngx_uint_t                    seq, applied;
    ngx_http_malloc_cmd_t         cmd;
    ngx_http_malloc_result_t      res;
    ngx_http_malloc_main_conf_t  *mmcf;

    if (ngx_http_malloc_tasks.dumping
        || ngx_http_malloc_tasks.dump_task == NULL)
    {
        /* the dump's completion comes back here */
        return;
    }

    mmcf = ngx_http_cycle_get_module_main_conf(ngx_cycle,
                                               ngx_http_malloc_module);
    applied = 0;

    for ( ;; ) {
        rc = ngx_http_malloc_board_next(mmcf, &seq, &cmd);

        if (rc == NGX_DONE) {
            break;
        }

        ngx_memzero(&res, sizeof(ngx_http_malloc_result_t));
        res.seq = seq;
        applied = 1;

        if (rc == NGX_DECLINED) {
            ngx_log_debug1(NGX_LOG_DEBUG_CORE, log, 0,
                           "malloc apply: seq %ui left the ring", seq);
            res.rc = NGX_HTTP_MALLOC_DUMP_EXPIRED;
            ngx_http_malloc_apply_answer(mmcf, &res);
            continue;
        }

        ngx_log_debug3(NGX_LOG_DEBUG_CORE, log, 0,
                       "malloc apply: seq %ui, command %ui, arg %i",
                       seq, cmd.kind, cmd.arg);

        if (ngx_http_malloc_apply_one(mmcf, &cmd, &res, log) == NGX_AGAIN) {
            return;
        }

        ngx_http_malloc_apply_answer(mmcf, &res);
    }

    if (applied) {
        ngx_http_malloc_apply_sync(mmcf, log);
        ngx_http_malloc_apply_publish(mmcf, NULL);
    }
}


/* NGX_AGAIN: a thread has the dump, its completion answers */

static ngx_int_t
ngx_http_malloc_apply_one(ngx_http_malloc_main_conf_t *mmcf,
    ngx_http_malloc_cmd_t *cmd, ngx_http_malloc_result_t *res,
    ngx_log_t *log)
{
    ngx_http_malloc_je_stats_t   st;
    char                         name[NGX_HTTP_MALLOC_NAME_MAX + 1];

    switch (cmd->kind) {

    case NGX_HTTP_MALLOC_CMD_ACTIVE:
        ngx_http_malloc_apply_active(cmd, res, log);
        return NGX_OK;

    case NGX_HTTP_MALLOC_CMD_DUMP:
        return ngx_http_malloc_apply_dump(mmcf, cmd, res, log);

    default:
        break;
    }

    if (ngx_http_malloc_board_closed(mmcf, res->seq)) {
        /* a stopped worker woke up after the request gave up on it */
        res->rc = NGX_HTTP_MALLOC_DUMP_EXPIRED;
        return NGX_OK;
    }

    switch (cmd->kind) {

    case NGX_HTTP_MALLOC_CMD_RESET:
        res->err = ngx_http_malloc_je_reset((int) cmd->arg);
        res->rc = res->err ? NGX_HTTP_MALLOC_RC_RESET
                           : NGX_HTTP_MALLOC_DUMP_OK;
        break;

    case NGX_HTTP_MALLOC_CMD_PURGE:
        if (ngx_http_malloc_je_stats(&st) == 0) {
            res->before = st.resident;
        }

        res->err = ngx_http_malloc_je_purge();
        res->rc = res->err ? NGX_HTTP_MALLOC_RC_PURGE
                           : NGX_HTTP_MALLOC_DUMP_OK;

        /* published at once: GET stats shows what the purge gave back */

        ngx_http_malloc_apply_publish(mmcf, &st);
        res->after = st.resident;

        break;

    case NGX_HTTP_MALLOC_CMD_STATS:
    case NGX_HTTP_MALLOC_CMD_TRAFFIC:
        if (cmd->tmpl[0] != '\0') {
            res->rc = ngx_http_malloc_apply_report(mmcf, cmd, name,
                                                   &res->err, &res->bytes);

            if (res->rc == NGX_HTTP_MALLOC_DUMP_OK) {
                ngx_http_malloc_apply_late(mmcf, name, res, log);
            }
        }

        break;

    default:
        break;
    }

    if (res->rc != NGX_HTTP_MALLOC_DUMP_OK) {
        ngx_log_error(NGX_LOG_ERR, log, res->err, "heap profiling %s failed "
                      "in this worker",
                      cmd->kind == NGX_HTTP_MALLOC_CMD_RESET ? "reset"
                      : cmd->kind == NGX_HTTP_MALLOC_CMD_PURGE ? "purge"
                      : cmd->kind == NGX_HTTP_MALLOC_CMD_TRAFFIC ? "traffic"
                      : "statistics");
    }

    return NGX_OK;
}


/* prof.active as the command asks: when it already is, nothing is logged */

static void
ngx_http_malloc_apply_active(ngx_http_malloc_cmd_t *cmd,
    ngx_http_malloc_result_t *res, ngx_log_t *log)
{
    int  active;

    active = 0;
    (void) ngx_http_malloc_je_get_active(&active);

    if ((ngx_uint_t) active == (ngx_uint_t) cmd->arg) {
        return;
    }

    res->err = ngx_http_malloc_je_set_active(cmd->arg);

    if (res->err != 0) {
        ngx_log_error(NGX_LOG_ERR, log, res->err,
                      "mallctl(\"prof.active\") failed");
        res->rc = NGX_HTTP_MALLOC_RC_ACTIVE;
        return;
    }

    ngx_log_error(NGX_LOG_INFO, log, 0, "heap profiling turned %s",
                  cmd->arg ? "on" : "off");
}


/*
 * A dump of many stacks takes jemalloc a while (about 3 us a stack): a
 * thread of the module's pool does it, so the worker keeps serving its
 * connections meanwhile; without one, it is done in place.
 */

static ngx_int_t
ngx_http_malloc_apply_dump(ngx_http_malloc_main_conf_t *mmcf,
    ngx_http_malloc_cmd_t *cmd, ngx_http_malloc_result_t *res,
    ngx_log_t *log)
{
    ngx_http_malloc_dump_task_t  *dt;

    if (cmd->target != 0 && cmd->target != ngx_pid) {
        return NGX_OK;
    }

    if (ngx_http_malloc_board_closed(mmcf, res->seq)) {
        res->rc = NGX_HTTP_MALLOC_DUMP_EXPIRED;
        return NGX_OK;
    }

    dt = ngx_http_malloc_tasks.dump_task;

    if (cmd->tmpl[0] == '.'
        && (cmd->target == ngx_pid || (cmd->target == 0 && ngx_worker == 0)))
    {
        /* a profile or a snapshot: one worker clears what dead ones left */
        ngx_http_malloc_dump_sweep((char *) mmcf->dump_dir->name.data,
                                   NGX_HTTP_MALLOC_STALE,
                                   ngx_http_malloc_apply_swept, log);
    }

    if (ngx_http_malloc_apply_name(cmd->tmpl, dt->name) != NGX_OK) {
        res->rc = NGX_HTTP_MALLOC_DUMP_CREATE;
        res->err = NGX_ENAMETOOLONG;
        return NGX_OK;
    }

    dt->mmcf = mmcf;
    dt->log = log;
    dt->result = *res;
    dt->task.work = ngx_http_malloc_apply_dump_thread;
    dt->task.build = 0;
    dt->task.done = ngx_http_malloc_apply_dump_done;
    dt->task.data = dt;

    if (ngx_http_malloc_threads_post(&dt->task, log) == NGX_OK) {
        ngx_http_malloc_tasks.dumping = 1;
        return NGX_AGAIN;
    }

    ngx_http_malloc_apply_dump_thread(dt);
    ngx_http_malloc_apply_dumped(mmcf, dt->name, &dt->result, log);

    *res = dt->result;

    return NGX_OK;
}


/* in a thread: no logging, no nginx memory besides the task */

static void
ngx_http_malloc_apply_dump_thread(void *data)
{
    ngx_http_malloc_dump_task_t *dt = data;

    int  err;

    err = 0;
    dt->result.rc = ngx_http_malloc_dump_write(
                        (char *) dt->mmcf->dump_dir->name.data, dt->name,
                        dt->result.seq, &dt->result.bytes, &err);
    dt->result.err = err;
}


static void
ngx_http_malloc_apply_dump_done(void *data)
{
    ngx_http_malloc_dump_task_t *dt = data;

    ngx_http_malloc_tasks.dumping = 0;

    ngx_http_malloc_apply_dumped(dt->mmcf, dt->name, &dt->result, dt->log);
    ngx_http_malloc_apply_answer(dt->mmcf, &dt->result);

    /* what the tick skipped meanwhile: dumps back to back never go stale */
    ngx_http_malloc_apply_publish(dt->mmcf, NULL);

    /* the commands posted while the thread worked */
    ngx_http_malloc_apply_run(ngx_cycle->log);
}


/*
 * Logs the dump.  A hidden dump (a profile's, a snapshot's) whose request
 * gave up meanwhile is removed: nobody would read it.
 */

static void
ngx_http_malloc_apply_dumped(ngx_http_malloc_main_conf_t *mmcf,
    const char *name, ngx_http_malloc_result_t *res, ngx_log_t *log)
{
    if (res->rc != NGX_HTTP_MALLOC_DUMP_OK) {
        ngx_log_error(NGX_LOG_ERR, log, res->err,
                      "heap dump to \"%V/%s\" failed: %s",
                      &mmcf->dump_dir->name, name,
                      ngx_http_malloc_dump_strerror(res->rc));
        return;
    }

    if (name[0] != '.') {
        ngx_log_error(NGX_LOG_INFO, log, 0,
                      "heap dump written to \"%V/%s\", %O bytes",
                      &mmcf->dump_dir->name, name, res->bytes);
        return;
    }

    ngx_log_debug3(NGX_LOG_DEBUG_CORE, log, 0,
                   "heap dump written to \"%V/%s\", %O bytes",
                   &mmcf->dump_dir->name, name, res->bytes);

    ngx_http_malloc_apply_late(mmcf, name, res, log);
}


/*
 * A hidden file (a dump, a report) is read and removed by its request or
 * schedule; one whose request gave up meanwhile is removed here, after
 * it was written: the request, closing first, missed it.
 */

static void
ngx_http_malloc_apply_late(ngx_http_malloc_main_conf_t *mmcf,
    const char *name, ngx_http_malloc_result_t *res, ngx_log_t *log)
{
    u_char  path[NGX_MAX_PATH];

    if (!ngx_http_malloc_board_closed(mmcf, res->seq)) {
        return;
    }

    (void) ngx_snprintf(path, sizeof(path), "%V/%s%Z",
                        &mmcf->dump_dir->name, name);

    if (ngx_delete_file(path) == NGX_FILE_ERROR) {
        ngx_log_error(NGX_LOG_ERR, log, ngx_errno,
                      ngx_delete_file_n " \"%s\" failed", path);
    }

    ngx_log_debug1(NGX_LOG_DEBUG_CORE, log, 0,
                   "malloc apply: \"%s\" removed, its request is gone", path);

    res->rc = NGX_HTTP_MALLOC_DUMP_EXPIRED;
}


static void
ngx_http_malloc_apply_swept(void *data, const char *name)
{
    ngx_log_t *log = data;

    ngx_log_error(NGX_LOG_INFO, log, 0, "removing stale \"%s\" from the "
                  "dump directory", name);
}


/*
 * jemalloc's full JSON report, or this worker's traffic, into a hidden
 * file the poster reads back; a file that could not be written whole is
 * removed (a full disk leaves nothing behind).
 */

static ngx_int_t
ngx_http_malloc_apply_report(ngx_http_malloc_main_conf_t *mmcf,
    ngx_http_malloc_cmd_t *cmd, char *name, int *err, off_t *bytes)
{
    int          dfd, fd;
    struct stat  st;

    if (ngx_http_malloc_apply_name(cmd->tmpl, name) != NGX_OK) {
        *err = NGX_ENAMETOOLONG;
        return NGX_HTTP_MALLOC_RC_STATS;
    }

    dfd = open((char *) mmcf->dump_dir->name.data,
               O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd == -1) {
        *err = ngx_errno;
        return NGX_HTTP_MALLOC_DUMP_DIR;
    }

    fd = openat(dfd, name,
                O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    *err = (fd == -1) ? ngx_errno : 0;

    if (fd == -1) {
        (void) close(dfd);
        return NGX_HTTP_MALLOC_DUMP_CREATE;
    }

    if (cmd->kind == NGX_HTTP_MALLOC_CMD_TRAFFIC) {
        *err = ngx_http_malloc_walk_report(mmcf, (size_t) cmd->arg,
                                           !ngx_http_malloc_tasks.dumping,
                                           fd);

    } else {
        *err = ngx_http_malloc_je_stats_json(fd);
    }

    if (*err == 0 && fstat(fd, &st) == 0) {
        *bytes = st.st_size;
    }

    (void) close(fd);

    if (*err != 0) {
        (void) unlinkat(dfd, name, 0);
    }

    (void) close(dfd);

    if (*err == NGX_ENOSPC) {
        return NGX_HTTP_MALLOC_DUMP_SPACE;
    }

    if (*err == 0) {
        return NGX_HTTP_MALLOC_DUMP_OK;
    }

    return cmd->kind == NGX_HTTP_MALLOC_CMD_TRAFFIC
           ? NGX_HTTP_MALLOC_RC_TRAFFIC : NGX_HTTP_MALLOC_RC_STATS;
}


/* the state after the command goes with the answer */

static void
ngx_http_malloc_apply_answer(ngx_http_malloc_main_conf_t *mmcf,
    ngx_http_malloc_result_t *res)
{
    int     active;
    size_t  lg;

    active = 0;
    lg = 0;

    (void) ngx_http_malloc_je_get_active(&active);
    (void) ngx_http_malloc_je_lg_sample(&lg);

    res->prof_active = active;
    res->lg_sample = lg;

    ngx_http_malloc_board_answer(mmcf, res);
}


/*
 * After the commands: the desired state, should a command have been
 * missed (a worker stopped for longer than the ring lasts, a late reset
 * that was skipped).
 */

static void
ngx_http_malloc_apply_sync(ngx_http_malloc_main_conf_t *mmcf,
    ngx_log_t *log)
{
    int         active;
    size_t      lg;
    ngx_int_t   want;
    ngx_uint_t  desired;

    want = ngx_http_malloc_board_lg_sample(mmcf);

    if (want >= 0 && ngx_http_malloc_je_lg_sample(&lg) == 0
        && lg != (size_t) want)
    {
        if (ngx_http_malloc_je_reset(want) != 0) {
            ngx_log_error(NGX_LOG_ERR, log, 0,
                          "mallctl(\"prof.reset\") failed");
        }
    }

    desired = ngx_http_malloc_board_desired(mmcf, NULL);
    active = 0;

    if (ngx_http_malloc_je_get_active(&active) == 0
        && (ngx_uint_t) active != desired)
    {
        if (ngx_http_malloc_je_set_active(desired) != 0) {
            ngx_log_error(NGX_LOG_ERR, log, 0,
                          "mallctl(\"prof.active\") failed");

        } else {
            ngx_log_debug1(NGX_LOG_DEBUG_CORE, log, 0,
                           "malloc apply: prof.active %ui, as desired",
                           desired);
        }
    }
}


/* "st": where the reading of jemalloc's figures goes too, or NULL */

static void
ngx_http_malloc_apply_publish(ngx_http_malloc_main_conf_t *mmcf,
    ngx_http_malloc_je_stats_t *st)
{
    int                         active;
    size_t                      lg;
    ngx_http_malloc_je_stats_t  here;

    active = 0;
    lg = 0;

    if (st == NULL) {
        st = &here;
    }

    ngx_memzero(st, sizeof(ngx_http_malloc_je_stats_t));

    (void) ngx_http_malloc_je_get_active(&active);
    (void) ngx_http_malloc_je_lg_sample(&lg);
    (void) ngx_http_malloc_je_stats(st);

    ngx_http_malloc_board_publish(mmcf, active, lg, st);
}


/* this worker's file name from a template ("%p": its pid) */

static ngx_int_t
ngx_http_malloc_apply_name(u_char *tmpl, char *name)
{
    tmpl[NGX_HTTP_MALLOC_TMPL_MAX - 1] = '\0';

    if (ngx_http_malloc_path_expand((char *) tmpl, (long) ngx_pid, name,
                                    NGX_HTTP_MALLOC_NAME_MAX + 1)
        < 0)
    {
        return NGX_ERROR;
    }

    return NGX_OK;
}
