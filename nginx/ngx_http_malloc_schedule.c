
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * Scheduled snapshots (malloc_snapshot): while profiling is active, every
 * interval one worker (the first whose once-a-second tick sees the time
 * come; the board decides under its lock) has every worker dump its heap
 * into a hidden file.  With format=pprof it then merges the dumps into
 * one symbolized snapshot-<time>.pb.gz on the module's thread; with
 * format=heap the per-worker snapshot-<time>.<pid>.heap files are the
 * snapshot.  The schedule lives in the zone, so a reload neither resets
 * it nor doubles it.  Old snapshots go so that at most "keep" remain
 * within "max_size"; a snapshot is named only once there is room.
 *
 * Owns: this worker's snapshot in progress, and the zone's parts of
 * malloc_watch and of the schedule.  Calls: board, wait (the
 * collection of the workers' dumps), threads, export (a snapshot taken),
 * and the pure core (pipeline, path).  Reached by the board's tick hook.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_malloc_module.h"
#include "ngx_http_malloc_board.h"
#include "ngx_http_malloc_threads.h"
#include "ngx_http_malloc_wait.h"
#include "ngx_http_malloc_export.h"
#include "ngx_http_malloc_schedule.h"
#include "ngx_http_malloc_pipeline.h"
#include "ngx_http_malloc_jemalloc.h"
#include "ngx_http_malloc_path.h"
#include "ngx_http_malloc_dump.h"


/* the most snapshot files the retention looks at */
#define NGX_HTTP_MALLOC_SNAP_FILES    4096

/* how long the workers have to dump a snapshot */
#define NGX_HTTP_MALLOC_SNAP_TIMEOUT  5000



/* one per worker: the snapshot it took, if any */
typedef struct {
    ngx_http_malloc_main_conf_t   *mmcf;
    ngx_uint_t                     taking;       /* a snapshot is under way */
    ngx_http_malloc_collect_t      co;           /* the workers' dumps */
    ngx_pool_t                    *pool;
    char                         **paths;        /* the hidden dumps */
    ngx_int_t                      rc;
    ngx_http_malloc_task_t         task;
    const char                    *reason;       /* NULL: the schedule */
    ngx_uint_t                     basing;       /* this collection is the
                                                    start of a watch's
                                                    window */
    ngx_uint_t                     with_base;    /* this one is its end */
    ngx_http_malloc_pipe_base_t    base;         /* the start's dumps */
    ngx_pool_t                    *base_pool;
    off_t                          base_allocated;
    char                           tag[32];      /* "<reason>.<figure>." */
    char                           ts[NGX_HTTP_MALLOC_SNAP_TS_LEN + 1];
    char                           out[NGX_MAX_PATH];
    char                          *done[2];      /* out, for publish */
    char                          *first;        /* the first file that
                                                    publish names */
    char                           err[NGX_HTTP_MALLOC_ERR_TEXT];
    ngx_http_malloc_cmd_t          cmd;
    ngx_connection_t               conn;         /* of the timers' events */
} ngx_http_malloc_snap_t;


/* what every worker published, as malloc_watch reads it once a second */
typedef struct {
    size_t                        total;      /* of the fresh workers */
    ngx_uint_t                    fresh;
    size_t                        each[NGX_HTTP_MALLOC_WATCHED];
                                              /* allocated, 0: silent */
    int64_t                       outside[NGX_HTTP_MALLOC_WATCHED];
                                              /* beyond it, 0: silent */
    ngx_pid_t                     pid[NGX_HTTP_MALLOC_WATCHED];
                                              /* 0: no process */
} ngx_http_malloc_reading_t;


static ngx_uint_t ngx_http_malloc_schedule_due(
    ngx_http_malloc_main_conf_t *mmcf, time_t now, time_t every);
static ngx_uint_t ngx_http_malloc_schedule_outcome(
    ngx_http_malloc_main_conf_t *mmcf, ngx_uint_t failed);
static void ngx_http_malloc_schedule_tick(ngx_log_t *log);
static ngx_int_t ngx_http_malloc_schedule_daemon(
    ngx_http_malloc_rss_kernel_t *k);
static void ngx_http_malloc_schedule_generation(
    ngx_http_malloc_main_conf_t *mmcf, ngx_log_t *log);
static void ngx_http_malloc_schedule_watch(ngx_http_malloc_snap_t *sn,
    ngx_log_t *log);
static ngx_uint_t ngx_http_malloc_schedule_same(
    ngx_http_malloc_main_conf_t *mmcf, ngx_http_malloc_watch_t *w,
    ngx_http_malloc_reading_t *rd);
static ngx_uint_t ngx_http_malloc_schedule_slots(ngx_http_malloc_watch_t *w,
    ngx_http_malloc_reading_t *rd);
static void ngx_http_malloc_schedule_fire(ngx_http_malloc_snap_t *sn,
    ngx_http_malloc_watch_t *w, size_t total, ngx_uint_t active,
    ngx_log_t *log);
static void ngx_http_malloc_schedule_window(ngx_http_malloc_snap_t *sn,
    ngx_http_malloc_watch_t *w, size_t total, size_t *each, ngx_log_t *log);
static void ngx_http_malloc_schedule_failed(ngx_http_malloc_watch_t *w,
    const char *why, ngx_log_t *log);
static void ngx_http_malloc_schedule_watched(ngx_http_malloc_snap_t *sn,
    ngx_int_t ok, const char *text, ngx_log_t *log);
static void ngx_http_malloc_schedule_read(ngx_http_malloc_main_conf_t *mmcf,
    ngx_http_malloc_reading_t *rd);
static void ngx_http_malloc_schedule_outside(ngx_http_malloc_snap_t *sn,
    ngx_http_malloc_watch_t *w, int64_t *outside, ngx_log_t *log);
static void ngx_http_malloc_schedule_outside_fired(ngx_http_malloc_snap_t *sn,
    ngx_http_malloc_watch_t *w, ngx_uint_t worker, size_t grew,
    ngx_log_t *log);
static size_t ngx_http_malloc_schedule_grew(ngx_http_malloc_watch_t *w,
    size_t total, size_t *each);
static void ngx_http_malloc_schedule_take(ngx_http_malloc_snap_t *sn,
    const char *reason, size_t figure, ngx_log_t *log);
static void ngx_http_malloc_schedule_based(ngx_http_malloc_snap_t *sn,
    ngx_http_malloc_worker_t *w, ngx_uint_t n, ngx_log_t *log);
static void ngx_http_malloc_schedule_unbase(ngx_http_malloc_snap_t *sn);
static void ngx_http_malloc_schedule_collected(ngx_http_malloc_collect_t *co,
    ngx_uint_t busy);
static void ngx_http_malloc_schedule_check(ngx_http_malloc_snap_t *sn,
    ngx_log_t *log);
static void ngx_http_malloc_schedule_write(ngx_http_malloc_snap_t *sn,
    ngx_log_t *log);
static ngx_int_t ngx_http_malloc_schedule_paths(ngx_http_malloc_snap_t *sn,
    ngx_http_malloc_worker_t *w, ngx_uint_t n);
static void ngx_http_malloc_schedule_merge(void *data);
static void ngx_http_malloc_schedule_merged(void *data);
static void ngx_http_malloc_schedule_publish(
    ngx_http_malloc_main_conf_t *mmcf, const char *reason, char **hidden,
    ngx_log_t *log);
static void ngx_http_malloc_schedule_result(ngx_http_malloc_snap_t *sn,
    ngx_int_t ok, const char *text, ngx_log_t *log);
static void ngx_http_malloc_schedule_prune(ngx_http_malloc_main_conf_t *mmcf,
    const char *reason, off_t incoming, ngx_log_t *log);
static ngx_uint_t ngx_http_malloc_schedule_keep(
    ngx_http_malloc_main_conf_t *mmcf, const char *reason, off_t *max_size);
static const char *ngx_http_malloc_schedule_reason(u_char *name,
    size_t len, off_t *figure);
static int ngx_libc_cdecl ngx_http_malloc_schedule_cmp(const void *one,
    const void *two);


static ngx_http_malloc_snap_t  ngx_http_malloc_snap;


void
ngx_http_malloc_schedule_init_process(ngx_http_malloc_main_conf_t *mmcf)
{
    ngx_http_malloc_snap.mmcf = mmcf;

    /* the collection's timer does not hold a worker that is exiting */
    ngx_http_malloc_snap.conn.fd = (ngx_socket_t) -1;
    ngx_http_malloc_snap.co.ev.data = &ngx_http_malloc_snap.conn;
    ngx_http_malloc_snap.co.ev.cancelable = 1;
    ngx_http_malloc_snap.co.mmcf = mmcf;
    ngx_http_malloc_snap.co.cmd = &ngx_http_malloc_snap.cmd;
    ngx_http_malloc_snap.co.timeout = NGX_HTTP_MALLOC_SNAP_TIMEOUT;
    ngx_http_malloc_snap.co.collected = ngx_http_malloc_schedule_collected;
    ngx_http_malloc_snap.co.log = ngx_cycle->log;
    ngx_http_malloc_snap.co.data = &ngx_http_malloc_snap;

    ngx_http_malloc_schedule_generation(mmcf, ngx_cycle->log);

    if (mmcf->snapshot != NULL || mmcf->watch != NULL) {
        ngx_http_malloc_board_hook(NGX_HTTP_MALLOC_HOOK_TICK,
                                   ngx_http_malloc_schedule_tick);
    }
}


/*
 * The first worker of a generation records it: its heap is the master's
 * as the reload left it (a worker is a fork of the master, and jemalloc's
 * samples come with the fork).  With profiling on and after a reload, it
 * also writes that heap as a snapshot: what a reload allocates and keeps
 * is a leak that every new generation inherits.  How the master sampled
 * as it read the configuration came with the fork too (apply recorded it
 * in the master): the interval, which the allocated bytes depend on, and
 * whether the samples hold all of the read.
 */

static void
ngx_http_malloc_schedule_generation(ngx_http_malloc_main_conf_t *mmcf,
    ngx_log_t *log)
{
    int                            err;
    off_t                          bytes;
    ngx_tm_t                       tm;
    ngx_int_t                      rc;
    ngx_uint_t                     start;
    char                          *paths[2];
    ngx_http_malloc_gen_t          gen;
    ngx_http_malloc_je_stats_t     st;
    ngx_http_malloc_rss_kernel_t   k;
    u_char                         path[NGX_MAX_PATH];

    if (ngx_http_malloc_je_probe()->state != NGX_HTTP_MALLOC_JE_OK
        || !ngx_http_malloc_board_first(mmcf))
    {
        return;
    }

    ngx_memzero(&gen, sizeof(ngx_http_malloc_gen_t));
    ngx_memzero(&st, sizeof(ngx_http_malloc_je_stats_t));

    (void) ngx_http_malloc_je_stats(&st);

    gen.time = ngx_time();
    gen.allocated = st.allocated;

    start = (ngx_http_malloc_board_generation(mmcf) == 1);

    ngx_http_malloc_board_master_allocated(mmcf, gen.allocated, start,
                                 (start && ngx_http_malloc_schedule_daemon(&k)
                                           == NGX_OK)
                                 ? &k : NULL);
    gen.small = st.small;
    gen.lg_sample = mmcf->master_lg;
    gen.partial = mmcf->master_partial;

    if (ngx_http_malloc_board_generation(mmcf) > 1
        && ngx_http_malloc_board_desired(mmcf, NULL)
        && (mmcf->dump_max_size == 0
            || ngx_http_malloc_dump_used((char *) mmcf->dump_dir->name.data)
               < mmcf->dump_max_size))
    {
        ngx_gmtime(gen.time, &tm);

        /* reloads come faster than seconds: the generation tells apart */

        (void) ngx_snprintf(gen.snapshot, sizeof(gen.snapshot),
                            NGX_HTTP_MALLOC_SNAP_PREFIX
                            "%4d%02d%02dT%02d%02d%02dZ."
                            NGX_HTTP_MALLOC_SNAP_RELOAD ".%ui.heap%Z",
                            tm.ngx_tm_year, tm.ngx_tm_mon, tm.ngx_tm_mday,
                            tm.ngx_tm_hour, tm.ngx_tm_min, tm.ngx_tm_sec,
                            ngx_http_malloc_board_generation(mmcf));

        err = 0;
        rc = ngx_http_malloc_dump_write((char *) mmcf->dump_dir->name.data,
                                        (char *) gen.snapshot, 0, &bytes,
                                        &err);

        if (rc != NGX_HTTP_MALLOC_DUMP_OK) {
            ngx_log_error(NGX_LOG_ERR, log, err,
                          "the master's heap to \"%V/%s\" failed: %s",
                          &mmcf->dump_dir->name, gen.snapshot,
                          ngx_http_malloc_dump_strerror(rc));
            gen.snapshot[0] = '\0';

        } else {
            ngx_log_error(NGX_LOG_INFO, log, 0,
                          "the master's heap after the reload, %uz bytes "
                          "allocated, written to \"%V/%s\"", gen.allocated,
                          &mmcf->dump_dir->name, gen.snapshot);

            ngx_http_malloc_schedule_prune(mmcf, NGX_HTTP_MALLOC_SNAP_RELOAD,
                                           -1, log);

            (void) ngx_snprintf(path, sizeof(path), "%V/%s%Z",
                                &mmcf->dump_dir->name, gen.snapshot);
            paths[0] = (char *) path;
            paths[1] = NULL;

            ngx_http_malloc_export_snapshot(mmcf,
                                            NGX_HTTP_MALLOC_EXPORT_RELOAD,
                                            paths, log);
        }
    }

    ngx_http_malloc_board_record(mmcf, &gen);
}


/*
 * The master's totals from /proc/<ppid>/status, which any process may
 * read (its smaps needs ptrace's permission, which the workers' user
 * lacks): the daemon's, as its first workers started.
 */

static ngx_int_t
ngx_http_malloc_schedule_daemon(ngx_http_malloc_rss_kernel_t *k)
{
    int      fd;
    ssize_t  n;
    char     path[NGX_INT64_LEN + sizeof("/proc//status")];
    char     text[8192];

    (void) ngx_snprintf((u_char *) path, sizeof(path), "/proc/%P/status%Z",
                        getppid());

    fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd == -1) {
        return NGX_ERROR;
    }

    n = read(fd, text, sizeof(text));

    (void) close(fd);

    if (n <= 0 || ngx_http_malloc_rss_status(text, (size_t) n, k) != 0) {
        return NGX_ERROR;
    }

    return NGX_OK;
}


static void
ngx_http_malloc_schedule_tick(ngx_log_t *log)
{
    time_t                        every;
    ngx_http_malloc_snap_t       *sn;
    ngx_http_malloc_main_conf_t  *mmcf;

    sn = &ngx_http_malloc_snap;
    mmcf = sn->mmcf;

    if (ngx_exiting || sn->taking) {
        /* one snapshot at a time per worker */
        return;
    }

    if (mmcf->watch != NULL && ngx_worker == 0) {
        ngx_http_malloc_schedule_watch(sn, log);

        if (sn->taking) {
            return;
        }
    }

    if (mmcf->snapshot == NULL) {
        return;
    }

    every = ngx_http_malloc_board_desired(mmcf, NULL)
            ? mmcf->snapshot->interval : 0;

    if (ngx_http_malloc_schedule_due(mmcf, ngx_time(), every)) {
        ngx_http_malloc_schedule_take(sn, NULL, 0, log);
    }
}


/*
 * malloc_watch, in worker 0, from the figures every worker publishes:
 * nothing runs in any worker until a trigger fires.  Growth: the total
 * (or one worker) grew by "growth" above the baseline; with sampling off
 * it is turned on for "sample", and the growth of that window is saved as
 * a snapshot when it ends (sampling then turns itself off); with sampling
 * on, a snapshot is saved at once.  Then a new baseline.  Peak: with
 * sampling on, a snapshot whenever the total passes the last peak by a
 * tenth; only the newest is kept.
 */

static void
ngx_http_malloc_schedule_watch(ngx_http_malloc_snap_t *sn, ngx_log_t *log)
{
    size_t                        total, grew, *each;
    ngx_uint_t                    active;
    ngx_http_malloc_watch_t       w;
    ngx_http_malloc_reading_t     rd;
    ngx_http_malloc_watch_conf_t *wc;

    wc = sn->mmcf->watch;

    ngx_http_malloc_schedule_watch_state(sn->mmcf, &w, NULL);

    ngx_http_malloc_schedule_read(sn->mmcf, &rd);
    active = ngx_http_malloc_board_desired(sn->mmcf, NULL);

    if (!rd.fresh || !ngx_http_malloc_schedule_same(sn->mmcf, &w, &rd)) {
        return;
    }

    total = rd.total;
    each = rd.each;

    if (wc->outside != 0) {
        ngx_http_malloc_schedule_outside(sn, &w, rd.outside, log);
    }

    if (w.fired) {
        ngx_http_malloc_schedule_window(sn, &w, total, each, log);
        return;
    }

    if (wc->growth != 0) {

        grew = ngx_http_malloc_schedule_grew(&w, total, each);

        if (grew >= (size_t) wc->growth) {
            w.grew = grew;
            w.baseline = total;
            ngx_memcpy(w.worker, each, sizeof(rd.each));

            ngx_http_malloc_schedule_fire(sn, &w, total, active, log);
            return;
        }

        ngx_http_malloc_schedule_watch_state(sn->mmcf, NULL, &w);
    }

    if (wc->peak && active && w.peak == 0) {
        /* the first figure seen while sampling is the peak to pass */
        w.peak = total;
        ngx_http_malloc_schedule_watch_state(sn->mmcf, NULL, &w);

    } else if (wc->peak && active && total > w.peak + w.peak / 10) {
        ngx_log_error(NGX_LOG_NOTICE, log, 0,
                      "heap at a new peak, %uz bytes allocated: saving a "
                      "peak snapshot", total);

        w.peak = total;
        w.firings++;
        w.fired_at = ngx_time();
        ngx_http_malloc_schedule_watch_state(sn->mmcf, NULL, &w);

        ngx_http_malloc_schedule_take(sn, NGX_HTTP_MALLOC_SNAP_PEAK, total,
                                      log);
    }
}


/*
 * 1 when the baselines are of the workers whose figures are read now.  A
 * worker that goes silent or comes back changes the sum by its whole
 * heap, which is no growth: the total's baseline starts again from now,
 * while each worker keeps its own (what it grew while it was silent,
 * busy on a long request or starved of the CPU, is growth).  A reload
 * is waited out until each of its workers has published (10 s at most):
 * then the growth is measured across it, so that what every new
 * generation inherits (a module that leaks at each reload) counts.
 */

static ngx_uint_t
ngx_http_malloc_schedule_same(ngx_http_malloc_main_conf_t *mmcf,
    ngx_http_malloc_watch_t *w, ngx_http_malloc_reading_t *rd)
{
    ngx_uint_t  generation, count, changed;

    generation = ngx_http_malloc_board_generation(mmcf);
    count = ngx_http_malloc_board_count(mmcf);

    if (generation != w->generation) {
        if (w->changed_at == 0) {
            w->changed_at = ngx_current_msec;
        }

        if (rd->fresh < count && ngx_current_msec - w->changed_at < 10000) {
            ngx_http_malloc_schedule_watch_state(mmcf, NULL, w);
            return 0;
        }

        w->generation = generation;
        w->changed_at = 0;

        if (rd->fresh == count) {
            /*
             * the new workers' heaps are measured from the old ones'
             * baselines; what they hold outside it, afresh
             */
            w->fresh = rd->fresh;
            ngx_memcpy(w->pid, rd->pid, sizeof(rd->pid));
            ngx_memzero(w->outside, sizeof(w->outside));
            ngx_http_malloc_schedule_watch_state(mmcf, NULL, w);
            return 1;
        }

        /* some never published: another set of workers, all start again */
        w->fresh = (ngx_uint_t) -1;
    }

    changed = ngx_http_malloc_schedule_slots(w, rd);

    if (rd->fresh == w->fresh) {
        if (changed) {
            ngx_http_malloc_schedule_watch_state(mmcf, NULL, w);
        }

        return 1;
    }

    w->fresh = rd->fresh;
    w->baseline = rd->total;
    ngx_http_malloc_schedule_watch_state(mmcf, NULL, w);

    return 0;
}


/*
 * A slot that has another process than its baselines' (a worker that
 * died and was started again, the workers of a reload that did not all
 * publish in time) starts again from what it holds now.  1 when one did.
 */

static ngx_uint_t
ngx_http_malloc_schedule_slots(ngx_http_malloc_watch_t *w,
    ngx_http_malloc_reading_t *rd)
{
    ngx_uint_t  i, changed;

    changed = 0;

    for (i = 0; i < NGX_HTTP_MALLOC_WATCHED; i++) {
        if (rd->pid[i] == w->pid[i]) {
            continue;
        }

        w->pid[i] = rd->pid[i];
        w->worker[i] = rd->each[i];
        w->outside[i] = rd->outside[i];
        changed = 1;
    }

    return changed;
}


/*
 * A growth fired the watch, its new baseline set: with sampling on, a
 * snapshot at once; with it off, sampling on for the window (nobody
 * waits for the command's answers: the duration ends it by itself).
 */

static void
ngx_http_malloc_schedule_fire(ngx_http_malloc_snap_t *sn,
    ngx_http_malloc_watch_t *w, size_t total, ngx_uint_t active,
    ngx_log_t *log)
{
    ngx_msec_t             sample;
    ngx_http_malloc_cmd_t  cmd;

    sample = sn->mmcf->watch->sample;

    w->firings++;
    w->fired_at = ngx_time();

    if (active) {
        ngx_log_error(NGX_LOG_NOTICE, log, 0,
                      "heap grew by %uz bytes, %uz in all: saving a growth "
                      "snapshot", w->grew, total);

        ngx_http_malloc_schedule_watch_state(sn->mmcf, NULL, w);

        ngx_http_malloc_schedule_take(sn, NGX_HTTP_MALLOC_SNAP_GROWTH,
                                      w->grew, log);
        return;
    }

    ngx_memzero(&cmd, sizeof(ngx_http_malloc_cmd_t));
    cmd.kind = NGX_HTTP_MALLOC_CMD_ACTIVE;
    cmd.arg = 1;
    cmd.duration = sample;

    if (ngx_http_malloc_board_post(sn->mmcf, &cmd, 0, 0, log) == 0) {
        /* said once: the new baseline waits for the next growth */
        ngx_http_malloc_schedule_failed(w, "heap profiling could not be "
                                        "turned on: the workers had "
                                        "commands to apply", log);
        ngx_http_malloc_schedule_watch_state(sn->mmcf, NULL, w);
        return;
    }

    ngx_log_error(NGX_LOG_NOTICE, log, 0,
                  "heap grew by %uz bytes, %uz in all: heap profiling "
                  "turned on for %M ms", w->grew, total, sample);

    w->fired = 1;
    w->based = 0;
    w->until = ngx_current_msec + sample;
    w->base_at = ngx_current_msec + sample / 2;
    ngx_http_malloc_schedule_watch_state(sn->mmcf, NULL, w);
}


/*
 * A firing's window, sampling on: its start recorded halfway, its end
 * saved as a growth snapshot, then a new baseline.
 */

static void
ngx_http_malloc_schedule_window(ngx_http_malloc_snap_t *sn,
    ngx_http_malloc_watch_t *w, size_t total, size_t *each, ngx_log_t *log)
{
    /*
     * halfway, the workers' heaps are recorded: what the window then
     * saves is what grew beyond the noise since, not all that was
     * sampled since sampling began (churn that was there before but
     * unsampled would pass for growth)
     */

    if (!w->based && (ngx_msec_int_t) (ngx_current_msec - w->base_at) >= 0) {
        w->based = 1;
        ngx_http_malloc_schedule_watch_state(sn->mmcf, NULL, w);

        sn->basing = 1;
        ngx_http_malloc_schedule_take(sn, NGX_HTTP_MALLOC_SNAP_GROWTH, 0, log);
        return;
    }

    if ((ngx_msec_int_t) (w->until - ngx_current_msec) > 0) {
        return;
    }

    /* the window is over: what grew in it, then a new baseline */

    if (sn->base.paths != NULL) {
        ngx_log_error(NGX_LOG_NOTICE, log, 0,
                      "heap growth of %uz bytes: saving what grew beyond "
                      "the sampling noise in the last %M ms", w->grew,
                      ngx_current_msec - w->base_at);

    } else {
        ngx_log_error(NGX_LOG_NOTICE, log, 0,
                      "heap growth of %uz bytes: saving what was sampled "
                      "in the last %M ms", w->grew, sn->mmcf->watch->sample);
    }

    w->fired = 0;
    w->baseline = total;
    ngx_memcpy(w->worker, each, NGX_HTTP_MALLOC_WATCHED * sizeof(size_t));
    ngx_http_malloc_schedule_watch_state(sn->mmcf, NULL, w);

    ngx_http_malloc_schedule_take(sn, NGX_HTTP_MALLOC_SNAP_GROWTH,
                                  w->grew, log);
}


/*
 * A firing that writes no snapshot says why, at warn, once: the watch
 * then waits for the next growth from a new baseline, not the next second.
 */

static void
ngx_http_malloc_schedule_failed(ngx_http_malloc_watch_t *w, const char *why,
    ngx_log_t *log)
{
    ngx_log_error(NGX_LOG_WARN, log, 0, "malloc_watch: no snapshot for the "
                  "heap's growth of %uz bytes: %s; watching for the next "
                  "growth", w->grew, why);

    w->failed_at = ngx_time();
    (void) ngx_cpystrn(w->failure, (u_char *) why, sizeof(w->failure));
}


/* a watch's snapshot ended: GET <loc>/ shows the last, and any failure */

static void
ngx_http_malloc_schedule_watched(ngx_http_malloc_snap_t *sn, ngx_int_t ok,
    const char *text, ngx_log_t *log)
{
    const char               *name;
    ngx_http_malloc_watch_t   w;

    ngx_http_malloc_schedule_watch_state(sn->mmcf, &w, NULL);

    if (ok) {
        /* "<dir>/.snapshot-..." -> "snapshot-..." */
        name = (sn->first != NULL)
               ? sn->first + sn->mmcf->dump_dir->name.len + 2 : "";

        w.snapshots++;
        w.snapshot_at = ngx_time();
        (void) ngx_cpystrn(w.snapshot, (u_char *) name, sizeof(w.snapshot));

    } else {
        w.failed_at = ngx_time();
        (void) ngx_cpystrn(w.failure, (u_char *) text, sizeof(w.failure));
    }

    ngx_http_malloc_schedule_watch_state(sn->mmcf, NULL, &w);
}


/*
 * The allocated bytes of the workers whose figures are fresh, in all and
 * each (0 for a stale one), for the first NGX_HTTP_MALLOC_WATCHED, and
 * the process in each slot, stale or not.
 */

static void
ngx_http_malloc_schedule_read(ngx_http_malloc_main_conf_t *mmcf,
    ngx_http_malloc_reading_t *rd)
{
    ngx_uint_t                 i, n;
    ngx_http_malloc_worker_t   w[NGX_HTTP_MALLOC_WATCHED];

    n = NGX_HTTP_MALLOC_WATCHED;
    (void) ngx_http_malloc_board_workers(mmcf, 0, w, &n);

    ngx_memzero(rd, sizeof(ngx_http_malloc_reading_t));

    for (i = 0; i < n; i++) {
        rd->pid[i] = w[i].pid;

        if (w[i].stale) {
            continue;
        }

        rd->each[i] = w[i].stats.allocated;
        rd->total += rd->each[i];
        rd->fresh++;

        /* what the kernel holds beyond the allocator's own figure */

        if (w[i].rss.rss != 0) {
            rd->outside[i] = ngx_http_malloc_rss_outside_bytes(&w[i].rss);
        }
    }
}


/*
 * outside=: a worker whose RSS outside the allocator (a library's own
 * mmap, as LuaJIT's, threads' stacks, files, zones) grew by that much
 * above its baseline fires once, with the parts that grew in words; a
 * heap profile cannot show such memory, so nothing is sampled.  The
 * baseline is a worker's first reading, follows memory down, and moves
 * up to what the firing saw, as growth= does.
 */

static void
ngx_http_malloc_schedule_outside(ngx_http_malloc_snap_t *sn,
    ngx_http_malloc_watch_t *w, int64_t *outside, ngx_log_t *log)
{
    size_t      grew, most;
    ngx_uint_t  i, worker, changed;

    most = 0;
    worker = 0;
    changed = 0;

    for (i = 0; i < NGX_HTTP_MALLOC_WATCHED; i++) {
        if (outside[i] == 0) {
            continue;
        }

        if (w->outside[i] == 0 || outside[i] < w->outside[i]) {
            w->outside[i] = outside[i];
            changed = 1;
            continue;
        }

        grew = (size_t) (outside[i] - w->outside[i]);

        if (grew > most) {
            most = grew;
            worker = i;
        }
    }

    if (most >= (size_t) sn->mmcf->watch->outside) {
        w->outside[worker] = outside[worker];
        ngx_http_malloc_schedule_outside_fired(sn, w, worker, most, log);
        changed = 1;
    }

    if (changed) {
        ngx_http_malloc_schedule_watch_state(sn->mmcf, NULL, w);
    }
}


/*
 * The firing in the log at notice, and in the watch's state: the parts
 * that grew, and the mappings that grew most as that worker found them
 * in its own smaps (no other process may read it once nginx dropped
 * root), both since the worker started.
 */

static void
ngx_http_malloc_schedule_outside_fired(ngx_http_malloc_snap_t *sn,
    ngx_http_malloc_watch_t *w, ngx_uint_t worker, size_t grew,
    ngx_log_t *log)
{
    ngx_uint_t                 i, n, nzones;
    ngx_http_malloc_worker_t  *wk;
    ngx_http_malloc_zone_t     zones[NGX_HTTP_MALLOC_RSS_ZONES];
    const char                *names[NGX_HTTP_MALLOC_RSS_ZONES];
    ngx_http_malloc_worker_t   ws[NGX_HTTP_MALLOC_WATCHED];
    char                       maps[NGX_HTTP_MALLOC_MAPS_TEXT_LEN];

    n = NGX_HTTP_MALLOC_WATCHED;
    (void) ngx_http_malloc_board_workers(sn->mmcf, 0, ws, &n);

    if (worker >= n) {
        return;
    }

    wk = &ws[worker];

    nzones = ngx_http_malloc_board_master(sn->mmcf, NULL, zones);

    for (i = 0; i < nzones; i++) {
        names[i] = (const char *) zones[i].name;
    }

    w->outside_firings++;
    w->outside_at = ngx_time();
    w->outside_grew = grew;
    w->outside_worker = wk->worker;
    w->outside_pid = wk->pid;

    if (ngx_http_malloc_rss_sentence(&wk->rss_start, &wk->rss,
                                     "the worker started", names,
                                     (char *) w->outside_text)
        == 0)
    {
        ngx_cpystrn(w->outside_text, (u_char *) "RSS grew outside the "
                    "allocator: a heap profile cannot show it",
                    sizeof(w->outside_text));
    }

    (void) ngx_http_malloc_board_maps(sn->mmcf, worker, wk->pid,
                                      &w->outside_maps);

    if (ngx_http_malloc_maps_text(&w->outside_maps, "the worker started",
                                  names, nzones, maps)
        == 0)
    {
        (void) ngx_cpystrn((u_char *) maps, (u_char *) "No mapping grew by "
                           "a MiB or more since the worker started.",
                           sizeof(maps));
    }

    ngx_log_error(NGX_LOG_NOTICE, log, 0,
                  "RSS outside malloc grew by %uz bytes in worker %ui "
                  "(pid %P): %s %s", grew, wk->worker, wk->pid,
                  w->outside_text, maps);
}


/*
 * The growth above the baselines, of the total or of the worker that grew
 * most; baselines that are not set yet, or above what is allocated now
 * (memory was freed), are set to now.
 */

static size_t
ngx_http_malloc_schedule_grew(ngx_http_malloc_watch_t *w, size_t total,
    size_t *each)
{
    size_t      grew;
    ngx_uint_t  i;

    if (w->baseline == 0 || total < w->baseline) {
        w->baseline = total;
    }

    grew = total - w->baseline;

    for (i = 0; i < NGX_HTTP_MALLOC_WATCHED; i++) {
        if (each[i] == 0) {
            /* silent, or none: its baseline waits */
            continue;
        }

        if (w->worker[i] == 0 || each[i] < w->worker[i]) {
            w->worker[i] = each[i];
        }

        if (each[i] - w->worker[i] > grew) {
            grew = each[i] - w->worker[i];
        }
    }

    return grew;
}


/*
 * Posts the dump to every worker; nobody else waits for it.  A watch's
 * snapshot carries its reason and the figure that fired it in its name:
 * "snapshot-<time>.growth.<bytes grown>.", "snapshot-<time>.peak.<bytes
 * allocated>.".
 */

static void
ngx_http_malloc_schedule_take(ngx_http_malloc_snap_t *sn, const char *reason,
    size_t figure, ngx_log_t *log)
{
    u_char    *p;
    off_t      used;
    ngx_tm_t   tm;

    /* the watch's snapshots respect the directory's limit, as dumps do */

    if (reason != NULL && sn->mmcf->dump_max_size != 0) {
        used = ngx_http_malloc_dump_used(
                   (char *) sn->mmcf->dump_dir->name.data);

        if (used >= sn->mmcf->dump_max_size) {
            ngx_log_error(NGX_LOG_ERR, log, 0,
                          "heap snapshot for %s skipped: malloc_dump_dir "
                          "\"%V\" holds %O bytes, its max_size is %O",
                          reason, &sn->mmcf->dump_dir->name, used,
                          sn->mmcf->dump_max_size);

            sn->first = NULL;
            ngx_http_malloc_schedule_watched(sn, 0, "malloc_dump_dir is at "
                                             "its max_size", log);

            /* a window without its start ends as a plain snapshot */
            sn->basing = 0;
            return;
        }
    }

    ngx_gmtime(ngx_time(), &tm);

    (void) ngx_snprintf((u_char *) sn->ts, sizeof(sn->ts),
                        "%4d%02d%02dT%02d%02d%02dZ%Z",
                        tm.ngx_tm_year, tm.ngx_tm_mon, tm.ngx_tm_mday,
                        tm.ngx_tm_hour, tm.ngx_tm_min, tm.ngx_tm_sec);

    /*
     * hidden dumps, merged into one file (pprof) or given their names
     * (heap) once all are in: a listing never shows half a snapshot
     */

    ngx_memzero(&sn->cmd, sizeof(ngx_http_malloc_cmd_t));
    sn->cmd.kind = NGX_HTTP_MALLOC_CMD_DUMP;

    /* "snapshot-<time>.", and the reason unless it is the schedule */

    sn->reason = reason;
    sn->tag[0] = '\0';
    sn->with_base = (!sn->basing && sn->base.paths != NULL
                     && reason != NULL
                     && ngx_strcmp(reason, NGX_HTTP_MALLOC_SNAP_GROWTH) == 0);

    if (reason != NULL) {
        (void) ngx_snprintf((u_char *) sn->tag, sizeof(sn->tag), "%s.%uz.%Z",
                            reason, figure);
    }

    p = ngx_snprintf(sn->cmd.tmpl, NGX_HTTP_MALLOC_TMPL_MAX - 1,
                     NGX_HTTP_MALLOC_HIDDEN_SNAPSHOT "%s.%s%%p.heap",
                     sn->ts, sn->tag);
    *p = '\0';

    sn->taking = 1;

    ngx_log_error(NGX_LOG_INFO, log, 0, "heap snapshot %s%s%s started",
                  sn->ts, reason ? " for " : "", reason ? reason : "");

    ngx_http_malloc_collect(&sn->co);
}


static void
ngx_http_malloc_schedule_collected(ngx_http_malloc_collect_t *co,
    ngx_uint_t busy)
{
    ngx_http_malloc_snap_t  *sn;

    sn = co->data;

    if (busy) {
        ngx_http_malloc_schedule_result(sn, 0, "the workers had eight "
                                        "commands in flight", co->log);
        return;
    }

    ngx_http_malloc_schedule_check(sn, co->log);
}


/* once every worker answered (or the time is up): merge or publish */

static void
ngx_http_malloc_schedule_check(ngx_http_malloc_snap_t *sn, ngx_log_t *log)
{
    ngx_uint_t                 i, n, failed;
    ngx_http_malloc_worker_t  *w;

    sn->pool = ngx_create_pool(NGX_DEFAULT_POOL_SIZE, log);
    if (sn->pool == NULL) {
        sn->taking = 0;
        return;
    }

    w = ngx_http_malloc_board_copy(sn->mmcf, sn->pool, sn->co.seq, &n);

    failed = (w == NULL);

    for (i = 0; w != NULL && i < n; i++) {
        if (!w[i].answered || w[i].result.seq != sn->co.seq
            || w[i].result.rc != 0)
        {
            failed++;
            w[i].pid = 0;
        }
    }

    if (w != NULL && ngx_http_malloc_schedule_paths(sn, w, n) != NGX_OK) {
        failed = n;
    }

    if (failed) {
        /* every worker's dump, or nothing */
        for (i = 0; sn->paths != NULL && sn->paths[i] != NULL; i++) {
            (void) ngx_delete_file(sn->paths[i]);
        }

        ngx_http_malloc_schedule_result(sn, 0, "a worker did not dump "
                                        "its heap (see the lines above)",
                                        log);
        return;
    }

    if (sn->basing) {
        ngx_http_malloc_schedule_based(sn, w, n, log);
        return;
    }

    if (sn->with_base) {
        sn->base.exact_change = -sn->base_allocated;

        for (i = 0; i < n; i++) {
            if (w[i].pid != 0) {
                sn->base.exact_change += w[i].stats.allocated;
            }
        }

    /* a difference is one merged profile, whatever the format */

    } else if (sn->mmcf->snapshot != NULL && !sn->mmcf->snapshot->pprof) {
        sn->first = sn->paths[0];
        ngx_http_malloc_schedule_publish(sn->mmcf, sn->reason, sn->paths,
                                         log);
        ngx_http_malloc_schedule_result(sn, 1, NULL, log);
        return;
    }

    ngx_http_malloc_schedule_write(sn, log);
}


/*
 * The workers' dumps merged into one pprof snapshot, on the module's
 * thread (or in place, without one); its end publishes the snapshot.
 */

static void
ngx_http_malloc_schedule_write(ngx_http_malloc_snap_t *sn, ngx_log_t *log)
{
    /* written hidden, named by ngx_http_malloc_schedule_publish() */

    (void) ngx_snprintf((u_char *) sn->out, sizeof(sn->out),
                        "%V/." NGX_HTTP_MALLOC_SNAP_PREFIX "%s.%spb.gz%Z",
                        &sn->mmcf->dump_dir->name, sn->ts, sn->tag);

    sn->done[0] = sn->out;
    sn->done[1] = NULL;
    sn->first = sn->out;

    sn->task.work = ngx_http_malloc_schedule_merge;
    sn->task.build = 1;
    sn->task.done = ngx_http_malloc_schedule_merged;
    sn->task.data = sn;

    if (ngx_http_malloc_threads_post(&sn->task, log) == NGX_OK) {
        return;
    }

    ngx_http_malloc_schedule_merge(sn);
    ngx_http_malloc_schedule_merged(sn);
}


/*
 * The start of a watch's window: its dumps wait for the end, with the
 * workers' allocated bytes then, for the exact figure beside the growth.
 */

static void
ngx_http_malloc_schedule_based(ngx_http_malloc_snap_t *sn,
    ngx_http_malloc_worker_t *w, ngx_uint_t n, ngx_log_t *log)
{
    ngx_uint_t  i;

    ngx_http_malloc_schedule_unbase(sn);

    sn->base.paths = sn->paths;
    sn->base.exact_of = "the workers' allocated bytes over the second half "
                        "of the window";
    sn->base_pool = sn->pool;
    sn->base_allocated = 0;

    for (i = 0; i < n; i++) {
        if (w[i].pid != 0) {
            sn->base_allocated += w[i].stats.allocated;
        }
    }

    ngx_log_error(NGX_LOG_INFO, log, 0, "heap growth window: the workers' "
                  "heaps recorded, %O bytes allocated", sn->base_allocated);

    sn->basing = 0;
    sn->pool = NULL;
    sn->paths = NULL;
    sn->taking = 0;
}


/* the start's dumps go, read (by the merge) or not */

static void
ngx_http_malloc_schedule_unbase(ngx_http_malloc_snap_t *sn)
{
    ngx_uint_t  i;

    for (i = 0; sn->base.paths != NULL && sn->base.paths[i] != NULL; i++) {
        (void) ngx_delete_file(sn->base.paths[i]);
    }

    if (sn->base_pool != NULL) {
        ngx_destroy_pool(sn->base_pool);
    }

    sn->base.paths = NULL;
    sn->base_pool = NULL;
    sn->basing = 0;
    sn->with_base = 0;
}


/* the hidden dumps of the workers that answered (pid not 0) */

static ngx_int_t
ngx_http_malloc_schedule_paths(ngx_http_malloc_snap_t *sn,
    ngx_http_malloc_worker_t *w, ngx_uint_t n)
{
    ngx_uint_t  i, k;
    char        name[NGX_HTTP_MALLOC_NAME_MAX + 1];

    sn->paths = ngx_pcalloc(sn->pool, (n + 1) * sizeof(char *));
    if (sn->paths == NULL) {
        return NGX_ERROR;
    }

    for (i = 0, k = 0; i < n; i++) {
        if (w[i].pid == 0) {
            continue;
        }

        (void) ngx_http_malloc_path_expand((char *) sn->cmd.tmpl,
                                           (long) w[i].pid, name,
                                           sizeof(name));

        sn->paths[k] = ngx_pnalloc(sn->pool, NGX_MAX_PATH);
        if (sn->paths[k] == NULL) {
            return NGX_ERROR;
        }

        (void) ngx_snprintf((u_char *) sn->paths[k], NGX_MAX_PATH, "%V/%s%Z",
                            &sn->mmcf->dump_dir->name, name);
        k++;
    }

    return NGX_OK;
}


/* in a thread (or in place) */

static void
ngx_http_malloc_schedule_merge(void *data)
{
    ngx_http_malloc_snap_t *sn = data;

    sn->rc = ngx_http_malloc_pipe_write(sn->paths,
                                        sn->with_base ? &sn->base : NULL,
                                        sn->out, sn->err, sizeof(sn->err));
}


static void
ngx_http_malloc_schedule_merged(void *data)
{
    ngx_http_malloc_snap_t *sn = data;


    if (sn->rc == NGX_HTTP_MALLOC_PIPE_OK) {
        ngx_http_malloc_schedule_publish(sn->mmcf, sn->reason, sn->done,
                                         ngx_cycle->log);
    }

    ngx_http_malloc_schedule_result(sn, sn->rc == NGX_HTTP_MALLOC_PIPE_OK,
                                    sn->err, ngx_cycle->log);
}


/*
 * Gives hidden files their names (less the dot) once the retention has
 * made room for them: a listing never shows more than "keep" snapshots,
 * nor a file being written.
 */

static void
ngx_http_malloc_schedule_publish(ngx_http_malloc_main_conf_t *mmcf,
    const char *reason, char **hidden, ngx_log_t *log)
{
    off_t            size;
    char           **finals;
    u_char          *final;
    ngx_uint_t       i, n;
    ngx_file_info_t  fi;

    size = 0;

    for (i = 0; hidden[i] != NULL; i++) {
        if (ngx_file_info(hidden[i], &fi) != NGX_FILE_ERROR) {
            size += ngx_file_size(&fi);
        }
    }

    ngx_http_malloc_schedule_prune(mmcf, reason, size, log);

    /* the names given, for malloc_export */

    finals = ngx_alloc((i + 1) * (sizeof(char *) + NGX_MAX_PATH), log);
    if (finals == NULL) {
        return;
    }

    final = (u_char *) (finals + i + 1);
    n = 0;

    for (i = 0; hidden[i] != NULL; i++) {
        /* "<dir>/.snapshot-..." -> "<dir>/snapshot-..." */
        (void) ngx_snprintf(final, NGX_MAX_PATH, "%V/%s%Z",
                            &mmcf->dump_dir->name,
                            hidden[i] + mmcf->dump_dir->name.len + 2);

        if (ngx_rename_file(hidden[i], final) == NGX_FILE_ERROR) {
            ngx_log_error(NGX_LOG_ERR, log, ngx_errno,
                          ngx_rename_file_n " \"%s\" to \"%s\" failed",
                          hidden[i], final);
            continue;
        }

        finals[n++] = (char *) final;
        final += NGX_MAX_PATH;
    }

    finals[n] = NULL;

    if (n > 0) {
        ngx_http_malloc_export_snapshot(mmcf, (reason == NULL)
                                        ? NGX_HTTP_MALLOC_EXPORT_SCHEDULE
                                        : NGX_HTTP_MALLOC_EXPORT_WATCH,
                                        finals, log);
    }

    ngx_free(finals);
}


/*
 * Logs a failure once, not every interval (the board remembers across
 * workers), and the recovery; then applies the retention.
 */

static void
ngx_http_malloc_schedule_result(ngx_http_malloc_snap_t *sn, ngx_int_t ok,
    const char *text, ngx_log_t *log)
{
    ngx_uint_t  was;

    if (sn->with_base || sn->basing) {
        ngx_http_malloc_schedule_unbase(sn);
    }

    if (sn->reason != NULL) {
        /* a watch's snapshot: each is an event of its own */

        ngx_http_malloc_schedule_watched(sn, ok, text, log);

        if (ok) {
            ngx_log_error(NGX_LOG_NOTICE, log, 0,
                          "heap snapshot %s for %s written", sn->ts,
                          sn->reason);
        } else {
            ngx_log_error(NGX_LOG_ERR, log, 0,
                          "heap snapshot %s for %s failed: %s", sn->ts,
                          sn->reason, text);
        }

        ngx_http_malloc_schedule_prune(sn->mmcf, sn->reason, -1, log);

        if (sn->pool != NULL) {
            /* none when the command could not be posted */
            ngx_destroy_pool(sn->pool);
            sn->pool = NULL;
        }

        sn->paths = NULL;
        sn->taking = 0;
        return;
    }

    was = ngx_http_malloc_schedule_outcome(sn->mmcf, !ok);

    if (!ok && !was) {
        ngx_log_error(NGX_LOG_ERR, log, 0, "heap snapshot %s failed: %s; "
                      "retrying every interval", sn->ts, text);

    } else if (ok && was) {
        ngx_log_error(NGX_LOG_NOTICE, log, 0, "heap snapshot %s written "
                      "again", sn->ts);

    } else if (ok) {
        ngx_log_error(NGX_LOG_INFO, log, 0, "heap snapshot %s written",
                      sn->ts);
    }

    ngx_http_malloc_schedule_prune(sn->mmcf, NULL, -1, log);

    if (sn->pool != NULL) {
        ngx_destroy_pool(sn->pool);
        sn->pool = NULL;
    }

    sn->paths = NULL;
    sn->taking = 0;
}


/*
 * Keeps the newest "keep" snapshots of a reason (NULL: the schedule),
 * and fewer when they would take more than "max_size" together; with
 * "incoming" bytes of a snapshot about to be named (-1: none), that one
 * counts as the newest.
 */

static void
ngx_http_malloc_schedule_prune(ngx_http_malloc_main_conf_t *mmcf,
    const char *reason, off_t incoming, ngx_log_t *log)
{
    off_t                         total, group, max_size;
    ngx_uint_t                    i, k, n, groups, drop, keep;
    ngx_pool_t                   *pool;
    ngx_http_malloc_snap_file_t  *files;
    u_char                        path[NGX_MAX_PATH];

    pool = ngx_create_pool(NGX_DEFAULT_POOL_SIZE, log);
    if (pool == NULL) {
        return;
    }

    if (ngx_http_malloc_schedule_list(mmcf, pool, &files, &n, log)
        != NGX_OK)
    {
        ngx_destroy_pool(pool);
        return;
    }

    keep = ngx_http_malloc_schedule_keep(mmcf, reason, &max_size);

    if (reason == NULL) {
        reason = NGX_HTTP_MALLOC_SNAP_SCHEDULE;
    }

    total = (incoming > 0) ? incoming : 0;
    groups = (incoming >= 0) ? 1 : 0;
    drop = 0;

    /* this reason's files only, still newest first */

    for (i = 0, k = 0; i < n; i++) {
        if (ngx_strcmp(files[i].reason, reason) == 0) {
            files[k++] = files[i];
        }
    }

    n = k;

    /*
     * newest first; the files of one snapshot are next to each other and
     * go together: once one snapshot is over a limit, so are older ones
     */

    for (i = 0; i < n; i = k) {

        group = 0;

        /*
         * the files of one time go together (format=heap writes one per
         * worker), but each reload's alone: reloads come faster than
         * seconds
         */

        for (k = i; k < n; k++) {
            if (k > i
                && (ngx_strcmp(files[k].ts, files[i].ts) != 0
                    || ngx_strcmp(reason, NGX_HTTP_MALLOC_SNAP_RELOAD) == 0))
            {
                break;
            }

            group += files[k].size;
        }

        groups++;
        total += group;

        if (groups > keep || (max_size != 0 && total > max_size)) {
            drop = 1;
        }

        for ( /* void */ ; drop && i < k; i++) {
            (void) ngx_snprintf(path, sizeof(path), "%V/%s%Z",
                                &mmcf->dump_dir->name, files[i].name);

            if (ngx_delete_file(path) == NGX_FILE_ERROR
                && ngx_errno != NGX_ENOENT)
            {
                ngx_log_error(NGX_LOG_ERR, log, ngx_errno,
                              ngx_delete_file_n " \"%s\" failed", path);
            }
        }
    }

    ngx_destroy_pool(pool);
}


/*
 * How many snapshots of a reason (NULL: the schedule) stay, and in how
 * many bytes (0: any).  The schedule's limits are malloc_snapshot's; the
 * master's heap after each of the last 16 reloads, the last 8 growth
 * snapshots and the last peak are kept.
 */

static ngx_uint_t
ngx_http_malloc_schedule_keep(ngx_http_malloc_main_conf_t *mmcf,
    const char *reason, off_t *max_size)
{
    if (reason == NULL) {
        *max_size = mmcf->snapshot ? mmcf->snapshot->max_size : 0;
        return mmcf->snapshot ? mmcf->snapshot->keep : 24;
    }

    *max_size = 0;

    return (ngx_strcmp(reason, NGX_HTTP_MALLOC_SNAP_RELOAD) == 0) ? 16
           : (ngx_strcmp(reason, NGX_HTTP_MALLOC_SNAP_GROWTH) == 0) ? 8
           : 1;
}


/* the snapshot files of the dump directory, newest first */

ngx_int_t
ngx_http_malloc_schedule_list(ngx_http_malloc_main_conf_t *mmcf,
    ngx_pool_t *pool, ngx_http_malloc_snap_file_t **files, ngx_uint_t *n,
    ngx_log_t *log)
{
    size_t        len;
    u_char       *name;
    ngx_tm_t      tm;
    ngx_dir_t     dir;
    struct stat   st;
    char          now[NGX_HTTP_MALLOC_SNAP_TS_LEN + 1];

    /* a minute of slack: the clocks of the workers' ticks differ */

    ngx_gmtime(ngx_time() + 60, &tm);
    (void) ngx_snprintf((u_char *) now, sizeof(now),
                        "%4d%02d%02dT%02d%02d%02dZ%Z",
                        tm.ngx_tm_year, tm.ngx_tm_mon, tm.ngx_tm_mday,
                        tm.ngx_tm_hour, tm.ngx_tm_min, tm.ngx_tm_sec);

    *files = ngx_palloc(pool, NGX_HTTP_MALLOC_SNAP_FILES
                              * sizeof(ngx_http_malloc_snap_file_t));
    if (*files == NULL) {
        return NGX_ERROR;
    }

    *n = 0;

    if (ngx_open_dir(&mmcf->dump_dir->name, &dir) == NGX_ERROR) {
        ngx_log_error(NGX_LOG_ERR, log, ngx_errno,
                      ngx_open_dir_n " \"%V\" failed", &mmcf->dump_dir->name);
        return NGX_ERROR;
    }

    while (*n < NGX_HTTP_MALLOC_SNAP_FILES && ngx_read_dir(&dir) == NGX_OK) {

        name = ngx_de_name(&dir);
        len = ngx_de_namelen(&dir);

        if (len <= sizeof(NGX_HTTP_MALLOC_SNAP_PREFIX) - 1
                   + NGX_HTTP_MALLOC_SNAP_TS_LEN
            || len > NGX_HTTP_MALLOC_NAME_MAX
            || ngx_strncmp(name, NGX_HTTP_MALLOC_SNAP_PREFIX,
                           sizeof(NGX_HTTP_MALLOC_SNAP_PREFIX) - 1)
               != 0)
        {
            continue;
        }

        if (fstatat(dirfd(dir.dir), (char *) name, &st, AT_SYMLINK_NOFOLLOW)
            == -1
            || !S_ISREG(st.st_mode))
        {
            continue;
        }

        ngx_memcpy((*files)[*n].ts,
                   name + sizeof(NGX_HTTP_MALLOC_SNAP_PREFIX) - 1,
                   NGX_HTTP_MALLOC_SNAP_TS_LEN);
        (*files)[*n].ts[NGX_HTTP_MALLOC_SNAP_TS_LEN] = '\0';
        ngx_memcpy((*files)[*n].name, name, len + 1);
        (*files)[*n].reason = ngx_http_malloc_schedule_reason(name, len,
                                                   &(*files)[*n].figure);
        (*files)[*n].size = st.st_size;
        (*files)[*n].future = (ngx_strcmp((*files)[*n].ts, now) > 0);
        (*n)++;
    }

    if (ngx_close_dir(&dir) == NGX_ERROR) {
        ngx_log_error(NGX_LOG_ALERT, log, ngx_errno,
                      ngx_close_dir_n " \"%V\" failed", &mmcf->dump_dir->name);
    }

    ngx_qsort(*files, *n, sizeof(ngx_http_malloc_snap_file_t),
              ngx_http_malloc_schedule_cmp);

    return NGX_OK;
}


static int ngx_libc_cdecl
ngx_http_malloc_schedule_cmp(const void *one, const void *two)
{
    const ngx_http_malloc_snap_file_t  *a = one;
    const ngx_http_malloc_snap_file_t  *b = two;

    ngx_int_t  rc;

    /* newest first, and those from the future last, the first to go */

    if (a->future != b->future) {
        return a->future ? 1 : -1;
    }

    rc = ngx_strcmp(b->ts, a->ts);

    return rc ? rc : ngx_strcmp(a->name, b->name);
}


/*
 * "snapshot-<time>.<reason>.<figure>...": the reason, or the schedule's,
 * and the figure that fired a watch's snapshot (-1: none)
 */

static const char *
ngx_http_malloc_schedule_reason(u_char *name, size_t len, off_t *figure)
{
    u_char              *p, *last;
    size_t               i, at;
    static const char   *reasons[] = { NGX_HTTP_MALLOC_SNAP_RELOAD,
                                       NGX_HTTP_MALLOC_SNAP_GROWTH,
                                       NGX_HTTP_MALLOC_SNAP_PEAK, NULL };

    *figure = -1;

    at = sizeof(NGX_HTTP_MALLOC_SNAP_PREFIX) - 1
         + NGX_HTTP_MALLOC_SNAP_TS_LEN + 1;

    for (i = 0; at < len && reasons[i] != NULL; i++) {
        if (len - at > ngx_strlen(reasons[i])
            && ngx_strncmp(name + at, reasons[i], ngx_strlen(reasons[i])) == 0
            && name[at + ngx_strlen(reasons[i])] == '.')
        {
            p = name + at + ngx_strlen(reasons[i]) + 1;
            last = ngx_strlchr(p, name + len, '.');

            if (i > 0 && last != NULL && last > p) {
                *figure = ngx_atoof(p, last - p);
            }

            return reasons[i];
        }
    }

    return NGX_HTTP_MALLOC_SNAP_SCHEDULE;
}


/*
 * The schedule's part of the zone: 1 when a snapshot is due at "now",
 * every "every" seconds (0: none).  The first interval starts when
 * profiling is first seen on, and again whenever it was switched.
 */

static ngx_uint_t
ngx_http_malloc_schedule_due(ngx_http_malloc_main_conf_t *mmcf, time_t now,
    time_t every)
{
    ngx_uint_t                        due, switches;
    ngx_http_malloc_schedule_part_t  *part;

    switches = ngx_http_malloc_board_switches(mmcf);
    due = 0;

    part = ngx_http_malloc_board_lock(mmcf, NGX_HTTP_MALLOC_PART_SCHEDULE);

    if (part->switches != switches) {
        part->switches = switches;
        part->next = 0;
    }

    if (every == 0) {
        part->next = 0;

    } else if (part->next == 0) {
        part->next = now + every;

    } else if (now >= part->next) {
        part->next += ((now - part->next) / every + 1) * every;
        due = 1;
    }

    ngx_http_malloc_board_unlock(mmcf);

    return due;
}


time_t
ngx_http_malloc_schedule_next(ngx_http_malloc_main_conf_t *mmcf)
{
    time_t                            next;
    ngx_http_malloc_schedule_part_t  *part;

    part = ngx_http_malloc_board_lock(mmcf, NGX_HTTP_MALLOC_PART_SCHEDULE);
    next = part->next;
    ngx_http_malloc_board_unlock(mmcf);

    return next;
}


/* whether the last snapshot failed, replaced by this one's: the old */

static ngx_uint_t
ngx_http_malloc_schedule_outcome(ngx_http_malloc_main_conf_t *mmcf,
    ngx_uint_t failed)
{
    ngx_uint_t                        was;
    ngx_http_malloc_schedule_part_t  *part;

    part = ngx_http_malloc_board_lock(mmcf, NGX_HTTP_MALLOC_PART_SCHEDULE);
    was = part->failed;
    part->failed = failed;
    ngx_http_malloc_board_unlock(mmcf);

    return was;
}


void
ngx_http_malloc_schedule_watch_state(ngx_http_malloc_main_conf_t *mmcf,
    ngx_http_malloc_watch_t *get, ngx_http_malloc_watch_t *set)
{
    ngx_http_malloc_watch_t  *w;

    w = ngx_http_malloc_board_lock(mmcf, NGX_HTTP_MALLOC_PART_WATCH);

    if (get != NULL) {
        *get = *w;
    }

    if (set != NULL) {
        *w = *set;
    }

    ngx_http_malloc_board_unlock(mmcf);
}
