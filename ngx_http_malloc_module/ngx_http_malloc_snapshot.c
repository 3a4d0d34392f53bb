
/*
 * Scheduled snapshots (malloc_snapshot): while profiling is active, every
 * interval one worker (the first whose once-a-second timer sees the time
 * come, under the board's lock) has every worker dump its heap.  With
 * format=pprof it then merges the dumps into one symbolized
 * snapshot-<time>.pb.gz, in a thread; with format=heap the per-worker
 * snapshot-<time>.<pid>.heap files are the snapshot.  The schedule lives
 * in the shared zone, so a reload neither resets it nor doubles it.  Old
 * snapshots go so that at most "keep" remain within "max_size".
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include <jansson.h>

#include "ngx_http_malloc_module.h"
#include "ngx_http_malloc_path.h"


/* "snapshot-" and "20261130T105000Z" */
#define NGX_HTTP_MALLOC_SNAP_PREFIX   "snapshot-"
#define NGX_HTTP_MALLOC_SNAP_TS_LEN   16

/* the most snapshot files the retention looks at */
#define NGX_HTTP_MALLOC_SNAP_FILES    4096

/* how long the workers have to dump a snapshot */
#define NGX_HTTP_MALLOC_SNAP_TIMEOUT  5000

/* how often the worker that took a snapshot looks for the answers */
#define NGX_HTTP_MALLOC_SNAP_POLL     10


typedef struct {
    ngx_http_malloc_main_conf_t   *mmcf;
    char                         **paths;
    ngx_int_t                      rc;
    ngx_pool_t                    *pool;
    char                           out[NGX_MAX_PATH];
    char                          *done[2];      /* out, for publish */
    char                           err[NGX_HTTP_MALLOC_ERR_TEXT];
} ngx_http_malloc_snap_task_t;


typedef struct {
    char                           ts[NGX_HTTP_MALLOC_SNAP_TS_LEN + 1];
    char                           name[NGX_HTTP_MALLOC_NAME_MAX + 1];
    off_t                          size;
} ngx_http_malloc_snap_file_t;


static void ngx_http_malloc_snapshot_take(ngx_http_malloc_main_conf_t *mmcf,
    ngx_log_t *log);
static void ngx_http_malloc_snapshot_check(ngx_http_malloc_main_conf_t *mmcf,
    ngx_log_t *log);
static void ngx_http_malloc_snapshot_poll(ngx_event_t *ev);
static void ngx_http_malloc_snapshot_merge(ngx_http_malloc_main_conf_t *mmcf,
    ngx_http_malloc_answer_t *answers, ngx_uint_t n, ngx_pool_t *pool,
    ngx_log_t *log);
#if (NGX_THREADS)
static void ngx_http_malloc_snapshot_thread(void *data, ngx_log_t *log);
static void ngx_http_malloc_snapshot_merged(ngx_event_t *ev);
#endif
static void ngx_http_malloc_snapshot_publish(
    ngx_http_malloc_main_conf_t *mmcf, char **hidden, ngx_log_t *log);
static void ngx_http_malloc_snapshot_result(ngx_http_malloc_main_conf_t *mmcf,
    ngx_int_t ok, const char *text, ngx_log_t *log);
static ngx_int_t ngx_http_malloc_snapshot_list(
    ngx_http_malloc_main_conf_t *mmcf, ngx_pool_t *pool,
    ngx_http_malloc_snap_file_t **files, ngx_uint_t *n);
static int ngx_libc_cdecl ngx_http_malloc_snapshot_cmp(const void *one,
    const void *two);
static ngx_int_t ngx_http_malloc_snapshot_index(ngx_http_request_t *r);
static ngx_int_t ngx_http_malloc_snapshot_file(ngx_http_request_t *r,
    ngx_str_t *name);


/* this worker's snapshot in progress, if it took one */
static ngx_uint_t  ngx_http_malloc_snap_seq;
static ngx_msec_t  ngx_http_malloc_snap_started;
static ngx_uint_t  ngx_http_malloc_snap_merging;
static char        ngx_http_malloc_snap_ts[NGX_HTTP_MALLOC_SNAP_TS_LEN + 1];
static u_char      ngx_http_malloc_snap_tmpl[NGX_HTTP_MALLOC_TMPL_MAX];

/* the board stays busy while a snapshot is dumped: look often, free it */
static ngx_event_t       ngx_http_malloc_snap_ev;
static ngx_connection_t  ngx_http_malloc_snap_conn;


void
ngx_http_malloc_snapshot_tick(ngx_http_malloc_main_conf_t *mmcf,
    ngx_log_t *log)
{
    if (mmcf->snapshot == NULL || ngx_exiting) {
        return;
    }

    if (ngx_http_malloc_snap_seq != 0) {
        ngx_http_malloc_snapshot_check(mmcf, log);
        return;
    }

    ngx_http_malloc_snapshot_take(mmcf, log);
}


/* claims a snapshot that is due, and posts the dump to every worker */

static void
ngx_http_malloc_snapshot_take(ngx_http_malloc_main_conf_t *mmcf,
    ngx_log_t *log)
{
    time_t                  now, every;
    u_char                 *p;
    ngx_tm_t                tm;
    ngx_http_malloc_ctx_t   ctx;
    ngx_http_malloc_shm_t  *shm;

    shm = mmcf->shm_zone->data;
    now = ngx_time();
    every = mmcf->snapshot->interval;

    if (!shm->sh->prof_active) {

        if (shm->sh->snapshot_next != 0) {
            /* profiling on again starts a fresh interval */
            ngx_shmtx_lock(&shm->shpool->mutex);
            shm->sh->snapshot_next = 0;
            ngx_shmtx_unlock(&shm->shpool->mutex);
        }

        return;
    }

    ngx_shmtx_lock(&shm->shpool->mutex);

    if (shm->sh->snapshot_next == 0) {
        /* the first interval starts when profiling is first seen on */
        shm->sh->snapshot_next = now + every;
        ngx_shmtx_unlock(&shm->shpool->mutex);
        return;
    }

    if (now < shm->sh->snapshot_next) {
        ngx_shmtx_unlock(&shm->shpool->mutex);
        return;
    }

    /* the next due time after now, however far the clock jumped */
    shm->sh->snapshot_next += ((now - shm->sh->snapshot_next) / every + 1)
                              * every;

    ngx_shmtx_unlock(&shm->shpool->mutex);

    ngx_http_malloc_sweep(mmcf, log);

    ngx_gmtime(now, &tm);

    (void) ngx_snprintf((u_char *) ngx_http_malloc_snap_ts,
                        sizeof(ngx_http_malloc_snap_ts),
                        "%4d%02d%02dT%02d%02d%02dZ%Z",
                        tm.ngx_tm_year, tm.ngx_tm_mon, tm.ngx_tm_mday,
                        tm.ngx_tm_hour, tm.ngx_tm_min, tm.ngx_tm_sec);

    ngx_memzero(&ctx, sizeof(ngx_http_malloc_ctx_t));

    /*
     * hidden dumps, merged into one file (pprof) or given their names
     * (heap) once all are in: a listing never shows half a snapshot
     */

    p = ngx_snprintf(ctx.tmpl, NGX_HTTP_MALLOC_TMPL_MAX - 1,
                     "." NGX_HTTP_MALLOC_SNAP_PREFIX "%s.%%p.heap",
                     ngx_http_malloc_snap_ts);
    *p = '\0';

    ctx.cmd = NGX_HTTP_MALLOC_CMD_DUMP;

    if (ngx_http_malloc_coord_post(mmcf, &ctx, 0,
                                   NGX_HTTP_MALLOC_SNAP_TIMEOUT)
        != NGX_OK)
    {
        /* a command is pending: this interval's snapshot is skipped */
        ngx_log_error(NGX_LOG_INFO, log, 0,
                      "heap snapshot skipped: another command is pending");
        return;
    }

    ngx_memcpy(ngx_http_malloc_snap_tmpl, ctx.tmpl, NGX_HTTP_MALLOC_TMPL_MAX);
    ngx_http_malloc_snap_seq = ctx.seq;
    ngx_http_malloc_snap_started = ngx_current_msec;

    ngx_log_error(NGX_LOG_INFO, log, 0, "heap snapshot %s started",
                  ngx_http_malloc_snap_ts);

    ngx_http_malloc_coord_apply_own(mmcf, log);

    ngx_http_malloc_snap_conn.fd = (ngx_socket_t) -1;
    ngx_http_malloc_snap_ev.handler = ngx_http_malloc_snapshot_poll;
    ngx_http_malloc_snap_ev.data = &ngx_http_malloc_snap_conn;
    ngx_http_malloc_snap_ev.log = ngx_cycle->log;
    ngx_http_malloc_snap_ev.cancelable = 1;

    ngx_add_timer(&ngx_http_malloc_snap_ev, NGX_HTTP_MALLOC_SNAP_POLL);
}


static void
ngx_http_malloc_snapshot_poll(ngx_event_t *ev)
{
    ngx_http_malloc_main_conf_t  *mmcf;

    if (ngx_http_malloc_snap_seq == 0 || ngx_http_malloc_snap_merging) {
        return;
    }

    mmcf = ngx_http_cycle_get_module_main_conf(ngx_cycle,
                                               ngx_http_malloc_module);

    ngx_http_malloc_snapshot_check(mmcf, ev->log);

    if (ngx_http_malloc_snap_seq != 0 && !ngx_http_malloc_snap_merging
        && !ngx_exiting)
    {
        ngx_add_timer(ev, NGX_HTTP_MALLOC_SNAP_POLL);
    }
}


/* once every worker answered (or the time is up): merge, then prune */

static void
ngx_http_malloc_snapshot_check(ngx_http_malloc_main_conf_t *mmcf,
    ngx_log_t *log)
{
    char                     **paths;
    u_char                    *p;
    ngx_uint_t                 i, k, n, answered, failed;
    ngx_pool_t                *pool;
    ngx_http_malloc_answer_t  *answers;
    char                       name[NGX_HTTP_MALLOC_NAME_MAX + 1];

    if (ngx_http_malloc_snap_merging) {
        return;
    }

    n = NGX_MAX_PROCESSES;
    answered = ngx_http_malloc_coord_answers(mmcf, ngx_http_malloc_snap_seq,
                                             NULL, &n);

    if (answered < n
        && ngx_current_msec - ngx_http_malloc_snap_started
           < NGX_HTTP_MALLOC_SNAP_TIMEOUT)
    {
        return;
    }

    pool = ngx_create_pool(NGX_DEFAULT_POOL_SIZE, log);
    if (pool == NULL) {
        return;
    }

    answers = ngx_palloc(pool, n * sizeof(ngx_http_malloc_answer_t));
    if (answers == NULL) {
        ngx_destroy_pool(pool);
        return;
    }

    (void) ngx_http_malloc_coord_answers(mmcf, ngx_http_malloc_snap_seq,
                                         answers, &n);

    ngx_http_malloc_coord_release(mmcf, ngx_http_malloc_snap_seq);

    failed = 0;

    for (i = 0; i < n; i++) {
        if (!answers[i].answered
            || answers[i].slot.result_seq != ngx_http_malloc_snap_seq
            || answers[i].slot.rc != 0)
        {
            failed++;
            answers[i].answered = 0;
        }
    }

    if (!failed && mmcf->snapshot->pprof) {
        ngx_http_malloc_snapshot_merge(mmcf, answers, n, pool, log);
        return;
    }

    /* every worker's dump, or nothing; heap: named now */

    paths = ngx_pcalloc(pool, (n + 1) * sizeof(char *));
    if (paths == NULL) {
        /* the sweep removes the hidden dumps */
        failed = n;
    }

    for (i = 0, k = 0; paths != NULL && i < n; i++) {

        if (!answers[i].answered) {
            continue;
        }

        (void) ngx_http_malloc_path_expand((char *) ngx_http_malloc_snap_tmpl,
                                           (long) answers[i].slot.pid, name,
                                           sizeof(name));

        paths[k] = ngx_pnalloc(pool, NGX_MAX_PATH);
        if (paths[k] == NULL) {
            failed = n;
            break;
        }

        p = ngx_snprintf((u_char *) paths[k], NGX_MAX_PATH - 1, "%V/%s",
                         &mmcf->dump_dir->name, name);
        *p = '\0';

        if (failed) {
            (void) unlink(paths[k]);
            continue;
        }

        k++;
    }

    if (!failed) {
        ngx_http_malloc_snapshot_publish(mmcf, paths, log);
    }

    ngx_destroy_pool(pool);
    ngx_http_malloc_snap_seq = 0;

    ngx_http_malloc_snapshot_result(mmcf, !failed, "a worker did not dump "
                                    "its heap (see the lines above)", log);
}


/*
 * Gives hidden files their names (less the dot) once the retention has
 * made room for them: a listing never shows more than "keep" snapshots,
 * nor a file being written.
 */

static void
ngx_http_malloc_snapshot_publish(ngx_http_malloc_main_conf_t *mmcf,
    char **hidden, ngx_log_t *log)
{
    off_t         size;
    ngx_uint_t    i;
    struct stat   st;
    u_char        final[NGX_MAX_PATH];

    size = 0;

    for (i = 0; hidden[i] != NULL; i++) {
        if (stat(hidden[i], &st) == 0) {
            size += st.st_size;
        }
    }

    ngx_http_malloc_snapshot_prune(mmcf, size, log);

    for (i = 0; hidden[i] != NULL; i++) {
        /* "<dir>/.snapshot-..." -> "<dir>/snapshot-..." */
        (void) ngx_snprintf(final, sizeof(final), "%V/%s%Z",
                            &mmcf->dump_dir->name,
                            hidden[i] + mmcf->dump_dir->name.len + 2);

        if (rename(hidden[i], (char *) final) == -1) {
            ngx_log_error(NGX_LOG_ERR, log, ngx_errno,
                          "rename(\"%s\", \"%s\") failed", hidden[i],
                          final);
        }
    }
}


/* merges the workers' hidden dumps into snapshot-<time>.pb.gz */

static void
ngx_http_malloc_snapshot_merge(ngx_http_malloc_main_conf_t *mmcf,
    ngx_http_malloc_answer_t *answers, ngx_uint_t n, ngx_pool_t *pool,
    ngx_log_t *log)
{
    u_char                       *p;
    ngx_uint_t                    i, k;
    ngx_http_malloc_snap_task_t  *st;
    char                          name[NGX_HTTP_MALLOC_NAME_MAX + 1];
#if (NGX_THREADS)
    ngx_thread_task_t            *task;
#endif

    st = ngx_pcalloc(pool, sizeof(ngx_http_malloc_snap_task_t));
    if (st != NULL) {
        st->paths = ngx_pcalloc(pool, (n + 1) * sizeof(char *));
    }

    if (st == NULL || st->paths == NULL) {
        ngx_destroy_pool(pool);
        ngx_http_malloc_snap_seq = 0;
        return;
    }

    st->mmcf = mmcf;
    st->pool = pool;

    for (i = 0, k = 0; i < n; i++) {
        (void) ngx_http_malloc_path_expand((char *) ngx_http_malloc_snap_tmpl,
                                           (long) answers[i].slot.pid, name,
                                           sizeof(name));

        st->paths[k] = ngx_pnalloc(pool, NGX_MAX_PATH);
        if (st->paths[k] == NULL) {
            break;
        }

        p = ngx_snprintf((u_char *) st->paths[k], NGX_MAX_PATH - 1, "%V/%s",
                         &mmcf->dump_dir->name, name);
        *p = '\0';
        k++;
    }

    /* written hidden, named by ngx_http_malloc_snapshot_publish() */

    p = ngx_snprintf((u_char *) st->out, sizeof(st->out) - 1,
                     "%V/." NGX_HTTP_MALLOC_SNAP_PREFIX "%s.pb.gz",
                     &mmcf->dump_dir->name, ngx_http_malloc_snap_ts);
    *p = '\0';

    st->done[0] = st->out;
    st->done[1] = NULL;

#if (NGX_THREADS)
    if (mmcf->thread_pool != NULL) {
        task = ngx_thread_task_alloc(pool, 0);

        if (task != NULL) {
            task->ctx = st;
            task->handler = ngx_http_malloc_snapshot_thread;
            task->event.handler = ngx_http_malloc_snapshot_merged;
            task->event.data = st;
            task->event.log = log;

            if (ngx_thread_task_post(mmcf->thread_pool, task) == NGX_OK) {
                ngx_http_malloc_snap_merging = 1;
                return;
            }
        }
    }
#endif

    st->rc = ngx_http_malloc_profile_write(st->paths, st->out, st->err,
                                           sizeof(st->err));

    if (st->rc == NGX_OK) {
        ngx_http_malloc_snapshot_publish(mmcf, st->done, log);
    }

    ngx_http_malloc_snapshot_result(mmcf, st->rc == NGX_OK, st->err, log);
    ngx_destroy_pool(pool);
    ngx_http_malloc_snap_seq = 0;
}


#if (NGX_THREADS)

static void
ngx_http_malloc_snapshot_thread(void *data, ngx_log_t *log)
{
    ngx_http_malloc_snap_task_t *st = data;

    st->rc = ngx_http_malloc_profile_write(st->paths, st->out, st->err,
                                           sizeof(st->err));
}


static void
ngx_http_malloc_snapshot_merged(ngx_event_t *ev)
{
    ngx_http_malloc_snap_task_t *st = ev->data;

    ngx_http_malloc_snap_merging = 0;
    ngx_http_malloc_snap_seq = 0;

    if (st->rc == NGX_OK) {
        ngx_http_malloc_snapshot_publish(st->mmcf, st->done, ev->log);
    }

    ngx_http_malloc_snapshot_result(st->mmcf, st->rc == NGX_OK, st->err,
                                    ev->log);
    ngx_destroy_pool(st->pool);
}

#endif


/*
 * Logs a failure once, not every interval (the board remembers across
 * workers), and the recovery; then applies the retention.
 */

static void
ngx_http_malloc_snapshot_result(ngx_http_malloc_main_conf_t *mmcf,
    ngx_int_t ok, const char *text, ngx_log_t *log)
{
    ngx_uint_t              was;
    ngx_http_malloc_shm_t  *shm;

    shm = mmcf->shm_zone->data;

    ngx_shmtx_lock(&shm->shpool->mutex);
    was = shm->sh->snapshot_failed;
    shm->sh->snapshot_failed = !ok;
    ngx_shmtx_unlock(&shm->shpool->mutex);

    if (!ok && !was) {
        ngx_log_error(NGX_LOG_ERR, log, 0, "heap snapshot %s failed: %s; "
                      "retrying every interval", ngx_http_malloc_snap_ts,
                      text);

    } else if (ok && was) {
        ngx_log_error(NGX_LOG_NOTICE, log, 0, "heap snapshot %s written "
                      "again", ngx_http_malloc_snap_ts);

    } else if (ok) {
        ngx_log_error(NGX_LOG_INFO, log, 0, "heap snapshot %s written",
                      ngx_http_malloc_snap_ts);
    }

    ngx_http_malloc_snapshot_prune(mmcf, -1, log);
}


/*
 * Keeps the newest "keep" snapshots, and fewer when they would take more
 * than "max_size" together; with "incoming" bytes of a snapshot about to
 * be named (-1: none), that one counts as the newest.
 */

void
ngx_http_malloc_snapshot_prune(ngx_http_malloc_main_conf_t *mmcf,
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

    if (ngx_http_malloc_snapshot_list(mmcf, pool, &files, &n) != NGX_OK) {
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

            if (unlink((char *) path) == -1 && ngx_errno != NGX_ENOENT) {
                ngx_log_error(NGX_LOG_ERR, log, ngx_errno,
                              "unlink(\"%s\") failed", path);
            }
        }
    }

    ngx_destroy_pool(pool);
}


/* the snapshot files of the dump directory, newest first */

static ngx_int_t
ngx_http_malloc_snapshot_list(ngx_http_malloc_main_conf_t *mmcf,
    ngx_pool_t *pool, ngx_http_malloc_snap_file_t **files, ngx_uint_t *n)
{
    DIR            *dir;
    size_t          len;
    struct stat     st;
    struct dirent  *de;

    *files = ngx_palloc(pool, NGX_HTTP_MALLOC_SNAP_FILES
                              * sizeof(ngx_http_malloc_snap_file_t));
    if (*files == NULL) {
        return NGX_ERROR;
    }

    *n = 0;

    dir = opendir((char *) mmcf->dump_dir->name.data);
    if (dir == NULL) {
        return NGX_ERROR;
    }

    while ((de = readdir(dir)) != NULL && *n < NGX_HTTP_MALLOC_SNAP_FILES) {

        len = ngx_strlen(de->d_name);

        if (len <= sizeof(NGX_HTTP_MALLOC_SNAP_PREFIX) - 1
                   + NGX_HTTP_MALLOC_SNAP_TS_LEN
            || len > NGX_HTTP_MALLOC_NAME_MAX
            || ngx_strncmp(de->d_name, NGX_HTTP_MALLOC_SNAP_PREFIX,
                           sizeof(NGX_HTTP_MALLOC_SNAP_PREFIX) - 1)
               != 0)
        {
            continue;
        }

        if (fstatat(dirfd(dir), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == -1
            || !S_ISREG(st.st_mode))
        {
            continue;
        }

        ngx_memcpy((*files)[*n].ts,
                   de->d_name + sizeof(NGX_HTTP_MALLOC_SNAP_PREFIX) - 1,
                   NGX_HTTP_MALLOC_SNAP_TS_LEN);
        (*files)[*n].ts[NGX_HTTP_MALLOC_SNAP_TS_LEN] = '\0';
        ngx_memcpy((*files)[*n].name, de->d_name, len + 1);
        (*files)[*n].size = st.st_size;
        (*n)++;
    }

    (void) closedir(dir);

    ngx_qsort(*files, *n, sizeof(ngx_http_malloc_snap_file_t),
              ngx_http_malloc_snapshot_cmp);

    return NGX_OK;
}


static int ngx_libc_cdecl
ngx_http_malloc_snapshot_cmp(const void *one, const void *two)
{
    const ngx_http_malloc_snap_file_t  *a = one;
    const ngx_http_malloc_snap_file_t  *b = two;

    ngx_int_t  rc;

    rc = ngx_strcmp(b->ts, a->ts);

    return rc ? rc : ngx_strcmp(a->name, b->name);
}


/* GET snapshots (name NULL) lists them; GET snapshots/<name> downloads */

ngx_int_t
ngx_http_malloc_snapshot_get(ngx_http_request_t *r, ngx_str_t *name)
{
    if (name == NULL) {
        return ngx_http_malloc_snapshot_index(r);
    }

    return ngx_http_malloc_snapshot_file(r, name);
}


static ngx_int_t
ngx_http_malloc_snapshot_index(ngx_http_request_t *r)
{
    u_char                       *p;
    json_t                       *json, *list, *f, *sched;
    time_t                        next;
    ngx_uint_t                    i, n;
    ngx_http_malloc_shm_t        *shm;
    ngx_http_malloc_snap_file_t  *files;
    ngx_http_malloc_main_conf_t  *mmcf;
    char                         *ts;
    u_char                        time[32], path[NGX_MAX_PATH];

    mmcf = ngx_http_get_module_main_conf(r, ngx_http_malloc_module);
    shm = mmcf->shm_zone->data;

    json = json_object();
    list = json_array();

    if (json == NULL || list == NULL
        || ngx_http_malloc_snapshot_list(mmcf, r->pool, &files, &n)
           != NGX_OK)
    {
        json_decref(json);
        json_decref(list);
        return ngx_http_malloc_error(r, NGX_HTTP_INTERNAL_SERVER_ERROR,
                                     "dump_dir_unusable",
                                     "cannot list malloc_dump_dir \"%V\"",
                                     &mmcf->dump_dir->name);
    }

    for (i = 0; i < n; i++) {
        ts = files[i].ts;

        /* 20261130T105000Z -> 2026-11-30T10:50:00Z */
        p = ngx_snprintf(time, sizeof(time) - 1, "%*s-%*s-%*sT%*s:%*s:%*sZ",
                         (size_t) 4, ts, (size_t) 2, ts + 4, (size_t) 2,
                         ts + 6, (size_t) 2, ts + 9, (size_t) 2, ts + 11,
                         (size_t) 2, ts + 13);
        *p = '\0';

        p = ngx_snprintf(path, sizeof(path) - 1, "%V/%s",
                         &mmcf->dump_dir->name, files[i].name);
        *p = '\0';

        f = json_pack("{s:s, s:s, s:s, s:I}", "name", files[i].name,
                      "time", (char *) time, "path", (char *) path,
                      "bytes", (json_int_t) files[i].size);
        json_array_append_new(list, f);
    }

    sched = json_null();

    if (mmcf->snapshot != NULL) {
        next = shm->sh->snapshot_next;

        sched = json_pack("{s:I, s:I, s:I, s:s, s:o}",
                          "interval", (json_int_t) mmcf->snapshot->interval,
                          "keep", (json_int_t) mmcf->snapshot->keep,
                          "max_size", (json_int_t) mmcf->snapshot->max_size,
                          "format", mmcf->snapshot->pprof ? "pprof" : "heap",
                          "next_in",
                          (next && shm->sh->prof_active)
                          ? json_integer((json_int_t) ngx_max(next
                                                              - ngx_time(), 0))
                          : json_null());
    }

    json_object_set_new(json, "schedule", sched);
    json_object_set_new(json, "snapshots", list);

    return ngx_http_malloc_send_json(r, NGX_HTTP_OK, json);
}


/* only names that the schedule writes, opened without following links */

static ngx_int_t
ngx_http_malloc_snapshot_file(ngx_http_request_t *r, ngx_str_t *name)
{
    u_char                       *p;
    ngx_fd_t                      fd;
    ngx_uint_t                    i;
    ngx_buf_t                    *b;
    ngx_int_t                     rc;
    ngx_chain_t                   out;
    ngx_file_info_t               fi;
    ngx_table_elt_t              *h;
    ngx_pool_cleanup_t           *cln;
    ngx_pool_cleanup_file_t      *clnf;
    ngx_http_malloc_main_conf_t  *mmcf;
    u_char                       *path;

    mmcf = ngx_http_get_module_main_conf(r, ngx_http_malloc_module);

    for (i = 0; i < name->len; i++) {
        if (name->data[i] <= 0x20 || name->data[i] == '/'
            || name->data[i] == 0x7f || name->data[i] == '"')
        {
            break;
        }
    }

    if (i < name->len || name->len > NGX_HTTP_MALLOC_NAME_MAX
        || name->len <= sizeof(NGX_HTTP_MALLOC_SNAP_PREFIX) - 1
        || ngx_strncmp(name->data, NGX_HTTP_MALLOC_SNAP_PREFIX,
                       sizeof(NGX_HTTP_MALLOC_SNAP_PREFIX) - 1)
           != 0)
    {
        return ngx_http_malloc_error(r, NGX_HTTP_NOT_FOUND,
                                     "no_such_snapshot",
                                     "no snapshot by that name: GET "
                                     "snapshots lists them");
    }

    /* the file's name outlives this call: the cleanup logs it */

    path = ngx_pnalloc(r->pool, mmcf->dump_dir->name.len + name->len + 2);
    if (path == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    p = ngx_sprintf(path, "%V/%V", &mmcf->dump_dir->name, name);
    *p = '\0';

    fd = open((char *) path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

    if (fd == NGX_INVALID_FILE || ngx_fd_info(fd, &fi) == NGX_FILE_ERROR
        || !ngx_is_file(&fi))
    {
        if (fd != NGX_INVALID_FILE) {
            (void) ngx_close_file(fd);
        }

        return ngx_http_malloc_error(r, NGX_HTTP_NOT_FOUND,
                                     "no_such_snapshot",
                                     "no snapshot by that name: GET "
                                     "snapshots lists them");
    }

    cln = ngx_pool_cleanup_add(r->pool, sizeof(ngx_pool_cleanup_file_t));
    b = ngx_calloc_buf(r->pool);
    h = ngx_list_push(&r->headers_out.headers);

    if (cln == NULL || b == NULL || h == NULL) {
        (void) ngx_close_file(fd);
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    cln->handler = ngx_pool_cleanup_file;
    clnf = cln->data;
    clnf->fd = fd;
    clnf->name = path;
    clnf->log = r->connection->log;

    b->file = ngx_pcalloc(r->pool, sizeof(ngx_file_t));
    h->value.data = ngx_pnalloc(r->pool, name->len + 32);

    if (b->file == NULL || h->value.data == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    h->hash = 1;
    ngx_str_set(&h->key, "Content-Disposition");
    h->value.len = ngx_sprintf(h->value.data, "attachment; filename=\"%V\"",
                               name)
                   - h->value.data;

    r->headers_out.status = NGX_HTTP_OK;
    r->headers_out.content_length_n = ngx_file_size(&fi);
    ngx_str_set(&r->headers_out.content_type, "application/octet-stream");
    r->headers_out.content_type_len = r->headers_out.content_type.len;

    rc = ngx_http_send_header(r);

    if (rc == NGX_ERROR || rc > NGX_OK || r->header_only
        || ngx_file_size(&fi) == 0)
    {
        return rc;
    }

    b->file->fd = fd;
    b->file->name.data = path;
    b->file->name.len = p - path;
    b->file->log = r->connection->log;
    b->file_pos = 0;
    b->file_last = ngx_file_size(&fi);
    b->in_file = 1;
    b->last_buf = 1;
    b->last_in_chain = 1;

    out.buf = b;
    out.next = NULL;

    return ngx_http_output_filter(r, &out);
}
