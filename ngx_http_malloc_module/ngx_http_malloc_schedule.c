
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
 * Owns: this worker's snapshot in progress.  Calls: board, threads, and
 * the pure core (pipeline, path).  Reached by the board's tick hook.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_malloc_module.h"
#include "ngx_http_malloc_board.h"
#include "ngx_http_malloc_threads.h"
#include "ngx_http_malloc_schedule.h"
#include "ngx_http_malloc_pipeline.h"
#include "ngx_http_malloc_path.h"


/* the most snapshot files the retention looks at */
#define NGX_HTTP_MALLOC_SNAP_FILES    4096

/* how long the workers have to dump a snapshot */
#define NGX_HTTP_MALLOC_SNAP_TIMEOUT  5000

/* how often the worker that took a snapshot looks for the answers */
#define NGX_HTTP_MALLOC_SNAP_POLL     10


/* one per worker: the snapshot it took, if any */
typedef struct {
    ngx_http_malloc_main_conf_t   *mmcf;
    ngx_uint_t                     seq;          /* 0: none */
    ngx_msec_t                     started;
    ngx_uint_t                     merging;
    ngx_pool_t                    *pool;
    char                         **paths;        /* the hidden dumps */
    ngx_int_t                      rc;
    ngx_http_malloc_task_t         task;
    ngx_event_t                    poll;
    char                           ts[NGX_HTTP_MALLOC_SNAP_TS_LEN + 1];
    char                           out[NGX_MAX_PATH];
    char                          *done[2];      /* out, for publish */
    char                           err[NGX_HTTP_MALLOC_ERR_TEXT];
    ngx_http_malloc_cmd_t          cmd;
} ngx_http_malloc_snap_t;


static void ngx_http_malloc_schedule_tick(ngx_log_t *log);
static void ngx_http_malloc_schedule_take(ngx_http_malloc_snap_t *sn,
    ngx_log_t *log);
static void ngx_http_malloc_schedule_poll(ngx_event_t *ev);
static void ngx_http_malloc_schedule_check(ngx_http_malloc_snap_t *sn,
    ngx_log_t *log);
static ngx_int_t ngx_http_malloc_schedule_paths(ngx_http_malloc_snap_t *sn,
    ngx_http_malloc_worker_t *w, ngx_uint_t n);
static void ngx_http_malloc_schedule_merge(void *data);
static void ngx_http_malloc_schedule_merged(void *data);
static void ngx_http_malloc_schedule_publish(
    ngx_http_malloc_main_conf_t *mmcf, char **hidden, ngx_log_t *log);
static void ngx_http_malloc_schedule_result(ngx_http_malloc_snap_t *sn,
    ngx_int_t ok, const char *text, ngx_log_t *log);
static void ngx_http_malloc_schedule_prune(ngx_http_malloc_main_conf_t *mmcf,
    off_t incoming, ngx_log_t *log);
static int ngx_libc_cdecl ngx_http_malloc_schedule_cmp(const void *one,
    const void *two);


static ngx_http_malloc_snap_t  ngx_http_malloc_snap;
static ngx_connection_t        ngx_http_malloc_snap_conn;


void
ngx_http_malloc_schedule_init_process(ngx_http_malloc_main_conf_t *mmcf)
{
    if (mmcf->snapshot == NULL) {
        return;
    }

    ngx_http_malloc_snap.mmcf = mmcf;

    ngx_http_malloc_snap_conn.fd = (ngx_socket_t) -1;
    ngx_http_malloc_snap.poll.handler = ngx_http_malloc_schedule_poll;
    ngx_http_malloc_snap.poll.data = &ngx_http_malloc_snap_conn;
    ngx_http_malloc_snap.poll.log = ngx_cycle->log;
    ngx_http_malloc_snap.poll.cancelable = 1;

    ngx_http_malloc_board_hook(NGX_HTTP_MALLOC_HOOK_TICK,
                               ngx_http_malloc_schedule_tick);
}


static void
ngx_http_malloc_schedule_tick(ngx_log_t *log)
{
    time_t                        every;
    ngx_http_malloc_snap_t       *sn;
    ngx_http_malloc_main_conf_t  *mmcf;

    sn = &ngx_http_malloc_snap;
    mmcf = sn->mmcf;

    if (ngx_exiting || sn->seq != 0) {
        /* one snapshot at a time per worker */
        return;
    }

    every = ngx_http_malloc_board_desired(mmcf, NULL)
            ? mmcf->snapshot->interval : 0;

    if (ngx_http_malloc_board_due(mmcf, ngx_time(), every)) {
        ngx_http_malloc_schedule_take(sn, log);
    }
}


/* posts the dump to every worker; nobody else waits for it */

static void
ngx_http_malloc_schedule_take(ngx_http_malloc_snap_t *sn, ngx_log_t *log)
{
    u_char    *p;
    ngx_tm_t   tm;

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

    p = ngx_snprintf(sn->cmd.tmpl, NGX_HTTP_MALLOC_TMPL_MAX - 1,
                     "." NGX_HTTP_MALLOC_SNAP_PREFIX "%s.%%p.heap", sn->ts);
    *p = '\0';

    sn->seq = ngx_http_malloc_board_post(sn->mmcf, &sn->cmd, log);
    sn->started = ngx_current_msec;

    ngx_log_error(NGX_LOG_INFO, log, 0, "heap snapshot %s started", sn->ts);

    ngx_add_timer(&sn->poll, NGX_HTTP_MALLOC_SNAP_POLL);
}


static void
ngx_http_malloc_schedule_poll(ngx_event_t *ev)
{
    ngx_http_malloc_snap_t  *sn;

    sn = &ngx_http_malloc_snap;

    if (sn->seq == 0 || sn->merging) {
        return;
    }

    ngx_http_malloc_schedule_check(sn, ev->log);

    if (sn->seq != 0 && !sn->merging && !ngx_exiting) {
        ngx_add_timer(ev, NGX_HTTP_MALLOC_SNAP_POLL);
    }
}


/* once every worker answered (or the time is up): merge or publish */

static void
ngx_http_malloc_schedule_check(ngx_http_malloc_snap_t *sn, ngx_log_t *log)
{
    ngx_uint_t                 i, n, answered, failed;
    ngx_http_malloc_worker_t  *w;

    n = NGX_MAX_PROCESSES;
    answered = ngx_http_malloc_board_workers(sn->mmcf, sn->seq, NULL, &n);

    if (answered < n
        && ngx_current_msec - sn->started < NGX_HTTP_MALLOC_SNAP_TIMEOUT)
    {
        return;
    }

    ngx_http_malloc_board_close(sn->mmcf, sn->seq);

    sn->pool = ngx_create_pool(NGX_DEFAULT_POOL_SIZE, log);
    if (sn->pool == NULL) {
        sn->seq = 0;
        return;
    }

    w = ngx_http_malloc_board_copy(sn->mmcf, sn->pool, sn->seq, &n);

    failed = (w == NULL);

    for (i = 0; w != NULL && i < n; i++) {
        if (!w[i].answered || w[i].result.seq != sn->seq
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

    if (!sn->mmcf->snapshot->pprof) {
        ngx_http_malloc_schedule_publish(sn->mmcf, sn->paths, log);
        ngx_http_malloc_schedule_result(sn, 1, NULL, log);
        return;
    }

    /* written hidden, named by ngx_http_malloc_schedule_publish() */

    (void) ngx_snprintf((u_char *) sn->out, sizeof(sn->out),
                        "%V/." NGX_HTTP_MALLOC_SNAP_PREFIX "%s.pb.gz%Z",
                        &sn->mmcf->dump_dir->name, sn->ts);

    sn->done[0] = sn->out;
    sn->done[1] = NULL;

    sn->task.work = ngx_http_malloc_schedule_merge;
    sn->task.done = ngx_http_malloc_schedule_merged;
    sn->task.data = sn;

    if (ngx_http_malloc_threads_post(&sn->task, log) == NGX_OK) {
        sn->merging = 1;
        return;
    }

    ngx_http_malloc_schedule_merge(sn);
    ngx_http_malloc_schedule_merged(sn);
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

    sn->rc = ngx_http_malloc_pipe_write(sn->paths, sn->out, sn->err,
                                        sizeof(sn->err));
}


static void
ngx_http_malloc_schedule_merged(void *data)
{
    ngx_http_malloc_snap_t *sn = data;

    sn->merging = 0;

    if (sn->rc == NGX_HTTP_MALLOC_PIPE_OK) {
        ngx_http_malloc_schedule_publish(sn->mmcf, sn->done, ngx_cycle->log);
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
    char **hidden, ngx_log_t *log)
{
    off_t            size;
    ngx_uint_t       i;
    ngx_file_info_t  fi;
    u_char           final[NGX_MAX_PATH];

    size = 0;

    for (i = 0; hidden[i] != NULL; i++) {
        if (ngx_file_info(hidden[i], &fi) != NGX_FILE_ERROR) {
            size += ngx_file_size(&fi);
        }
    }

    ngx_http_malloc_schedule_prune(mmcf, size, log);

    for (i = 0; hidden[i] != NULL; i++) {
        /* "<dir>/.snapshot-..." -> "<dir>/snapshot-..." */
        (void) ngx_snprintf(final, sizeof(final), "%V/%s%Z",
                            &mmcf->dump_dir->name,
                            hidden[i] + mmcf->dump_dir->name.len + 2);

        if (ngx_rename_file(hidden[i], final) == NGX_FILE_ERROR) {
            ngx_log_error(NGX_LOG_ERR, log, ngx_errno,
                          ngx_rename_file_n " \"%s\" to \"%s\" failed",
                          hidden[i], final);
        }
    }
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

    was = ngx_http_malloc_board_snapshot_failed(sn->mmcf, !ok);

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

    ngx_http_malloc_schedule_prune(sn->mmcf, -1, log);

    ngx_destroy_pool(sn->pool);
    sn->pool = NULL;
    sn->paths = NULL;
    sn->seq = 0;
}


/*
 * Keeps the newest "keep" snapshots, and fewer when they would take more
 * than "max_size" together; with "incoming" bytes of a snapshot about to
 * be named (-1: none), that one counts as the newest.
 */

static void
ngx_http_malloc_schedule_prune(ngx_http_malloc_main_conf_t *mmcf,
    off_t incoming, ngx_log_t *log)
{
    off_t                         total, group;
    ngx_uint_t                    i, k, n, groups, drop;
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

    total = (incoming > 0) ? incoming : 0;
    groups = (incoming >= 0) ? 1 : 0;
    drop = 0;

    /*
     * newest first; the files of one snapshot are next to each other and
     * go together: once one snapshot is over a limit, so are older ones
     */

    for (i = 0; i < n; i = k) {

        group = 0;

        for (k = i; k < n && ngx_strcmp(files[k].ts, files[i].ts) == 0; k++) {
            group += files[k].size;
        }

        groups++;
        total += group;

        if (groups > mmcf->snapshot->keep
            || (mmcf->snapshot->max_size != 0
                && total > mmcf->snapshot->max_size))
        {
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


/* the snapshot files of the dump directory, newest first */

ngx_int_t
ngx_http_malloc_schedule_list(ngx_http_malloc_main_conf_t *mmcf,
    ngx_pool_t *pool, ngx_http_malloc_snap_file_t **files, ngx_uint_t *n,
    ngx_log_t *log)
{
    size_t        len;
    u_char       *name;
    ngx_dir_t     dir;
    struct stat   st;

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
        (*files)[*n].size = st.st_size;
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

    rc = ngx_strcmp(b->ts, a->ts);

    return rc ? rc : ngx_strcmp(a->name, b->name);
}
