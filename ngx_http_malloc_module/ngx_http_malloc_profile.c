
/*
 * Profiles served from the admin location: every worker (or one, ?pid=N)
 * dumps its heap through the command board into a hidden file of the dump
 * directory; the serving worker reads the dumps back, removes them, merges
 * them and writes heap_v2, gperftools' legacy text or a symbolized
 * profile.proto.  ?seconds=N subtracts a first collection taken N seconds
 * earlier, waiting on a timer, so the worker keeps serving meanwhile.
 * Everything built here lives in mmap'ed memory (arena.c), so a profile
 * never reports its own making, and all of it is unmapped with the request.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_malloc_module.h"
#include "ngx_http_malloc_jemalloc.h"
#include "ngx_http_malloc_json.h"
#include "ngx_http_malloc_path.h"
#include "ngx_http_malloc_arena.h"
#include "ngx_http_malloc_heap.h"
#include "ngx_http_malloc_symbol.h"
#include "ngx_http_malloc_pprof.h"

#include <pthread.h>


/* the longest growth window a request may wait for */
#define NGX_HTTP_MALLOC_SECONDS_MAX  3600

/* the longest dump read back, a guard against a runaway file */
#define NGX_HTTP_MALLOC_DUMP_MAX     (256 * 1024 * 1024)

/* hidden files older than this were left by a worker that died */
#define NGX_HTTP_MALLOC_STALE        300


typedef void (*ngx_http_malloc_work_pt)(ngx_http_malloc_profile_t *pf);


struct ngx_http_malloc_profile_s {
    ngx_uint_t                     phase;        /* 0: base, 1: final */
    ngx_uint_t                     seconds;
    ngx_uint_t                     kind;         /* ngx_http_malloc_ep_e */
    ngx_uint_t                     detail;       /* stats?detail=full */
    ngx_http_malloc_arena_t       *arena;
    ngx_http_malloc_heap_t         base;
    ngx_http_malloc_heap_t         heap;
    ngx_http_malloc_mbuf_t         out;
    char                         **paths;        /* dumps to read */
    u_char                        *body;         /* addresses to name */
    size_t                         body_len;
    ngx_http_malloc_work_pt        work;
    ngx_uint_t                     status;       /* an error to send */
    const char                    *code;
    char                           error[NGX_HTTP_MALLOC_HEAP_ERR_LEN + 128];
};


typedef struct {
    ngx_http_malloc_symbols_t     *syms;
    ngx_http_malloc_arena_t       *arena;
    ngx_http_malloc_map_t         *maps;
    size_t                         nmaps;
} ngx_http_malloc_resolver_t;


static ngx_int_t ngx_http_malloc_profile_post(ngx_http_request_t *r,
    ngx_http_malloc_ctx_t *ctx);
static void ngx_http_malloc_profile_timer(ngx_event_t *ev);
static ngx_int_t ngx_http_malloc_profile_run(ngx_http_request_t *r,
    ngx_http_malloc_ctx_t *ctx, ngx_http_malloc_work_pt work);
#if (NGX_THREADS)
static void ngx_http_malloc_profile_thread(void *data, ngx_log_t *log);
static void ngx_http_malloc_profile_ran(ngx_event_t *ev);
#endif
static ngx_int_t ngx_http_malloc_profile_finish(ngx_http_request_t *r,
    ngx_http_malloc_ctx_t *ctx);
static void ngx_http_malloc_profile_fail(ngx_http_malloc_profile_t *pf,
    ngx_uint_t status, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void ngx_http_malloc_profile_build(ngx_http_malloc_profile_t *pf);
static ngx_int_t ngx_http_malloc_profile_read(ngx_http_malloc_profile_t *pf,
    const char *path, ngx_http_malloc_heap_t *heap);
static void ngx_http_malloc_profile_maps(ngx_http_malloc_profile_t *pf,
    ngx_http_malloc_resolver_t *rs);
static void ngx_http_malloc_profile_proto(ngx_http_malloc_profile_t *pf,
    ngx_http_malloc_resolver_t *rs);
static const char *ngx_http_malloc_profile_resolve(void *data,
    uint64_t addr, int *map);
static void ngx_http_malloc_profile_trim(ngx_http_malloc_heap_t *heap,
    ngx_http_malloc_map_t *maps, size_t nmaps);
static void ngx_http_malloc_profile_lock(void);
static void ngx_http_malloc_profile_unlock(void);
static void ngx_http_malloc_profile_lookup(ngx_http_malloc_profile_t *pf);
static ngx_int_t ngx_http_malloc_self_maps(ngx_http_malloc_arena_t *arena,
    ngx_http_malloc_map_t **maps, size_t *nmaps, char *err);
static ngx_int_t ngx_http_malloc_profile_self_maps(
    ngx_http_malloc_profile_t *pf, ngx_http_malloc_map_t **maps,
    size_t *nmaps);
static void ngx_http_malloc_profile_free(void *data);


/* one per worker, for the life of the worker: symbol tables are costly */
static ngx_http_malloc_symbols_t  *ngx_http_malloc_symbols;
static pthread_mutex_t             ngx_http_malloc_symbols_mutex =
    PTHREAD_MUTEX_INITIALIZER;


ngx_int_t
ngx_http_malloc_profile_get(ngx_http_request_t *r, ngx_http_malloc_ctx_t *ctx)
{
    ngx_int_t                     n;
    ngx_str_t                     arg;
    ngx_uint_t                    i, nw, found;
    ngx_pool_cleanup_t           *cln;
    ngx_http_malloc_profile_t    *pf;
    ngx_http_malloc_answer_t     *answers;
    ngx_http_malloc_loc_conf_t   *mlcf;

    if (ngx_http_malloc_je_probe()->state != NGX_HTTP_MALLOC_JE_OK) {
        return ngx_http_malloc_unusable(r);
    }

    mlcf = ngx_http_get_module_loc_conf(r, ngx_http_malloc_module);

    pf = ngx_pcalloc(r->pool, sizeof(ngx_http_malloc_profile_t));
    if (pf == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    if (ngx_http_arg(r, (u_char *) "seconds", 7, &arg) == NGX_OK) {
        n = ngx_atoi(arg.data, arg.len);

        if (n <= 0 || n > NGX_HTTP_MALLOC_SECONDS_MAX
            || (ctx->endpoint != NGX_HTTP_MALLOC_EP_PPROF_HEAP
                && ctx->endpoint != NGX_HTTP_MALLOC_EP_PPROF_PROTO))
        {
            return ngx_http_malloc_error(r, NGX_HTTP_BAD_REQUEST,
                       "invalid_argument",
                       "\"seconds\" takes 1 to %d, on pprof/heap and "
                       "pprof/heap.pb.gz", NGX_HTTP_MALLOC_SECONDS_MAX);
        }

        pf->seconds = n;
    }

    if (ngx_http_arg(r, (u_char *) "pid", 3, &arg) == NGX_OK) {
        n = ngx_atoi(arg.data, arg.len);

        answers = ngx_http_malloc_answers(r, 0, &nw);
        if (answers == NULL) {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }

        found = 0;

        for (i = 0; i < nw; i++) {
            if (n > 0 && answers[i].slot.pid == (ngx_pid_t) n) {
                found = 1;
            }
        }

        if (!found) {
            return ngx_http_malloc_error(r, NGX_HTTP_NOT_FOUND,
                       "no_such_worker",
                       "\"pid\" must be the pid of a worker of this "
                       "nginx; GET the admin location to list them");
        }

        ctx->target = (ngx_pid_t) n;
    }

    pf->arena = ngx_http_malloc_arena_create();
    if (pf->arena == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    cln = ngx_pool_cleanup_add(r->pool, 0);
    if (cln == NULL) {
        ngx_http_malloc_arena_destroy(pf->arena);
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    cln->handler = ngx_http_malloc_profile_free;
    cln->data = pf;

    ngx_http_malloc_heap_init(&pf->base, pf->arena);
    ngx_http_malloc_heap_init(&pf->heap, pf->arena);

    ctx->profile = pf;
    pf->kind = ctx->endpoint;

    if (ctx->endpoint == NGX_HTTP_MALLOC_EP_STATS
        || ctx->endpoint == NGX_HTTP_MALLOC_EP_METRICS)
    {
        ctx->cmd = NGX_HTTP_MALLOC_CMD_STATS;

        pf->detail = (ctx->endpoint == NGX_HTTP_MALLOC_EP_STATS
                      && ngx_http_arg(r, (u_char *) "detail", 6, &arg)
                         == NGX_OK
                      && arg.len == 4 && ngx_strncmp(arg.data, "full", 4) == 0);

    } else {
        ctx->cmd = NGX_HTTP_MALLOC_CMD_DUMP;
    }
    pf->phase = pf->seconds ? 0 : 1;

    if (ngx_http_malloc_hold(r, ctx) != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    /* waiting for a busy board counts against the same timeout */
    ctx->deadline = ngx_current_msec + mlcf->timeout;

    ngx_http_malloc_sweep(ngx_http_get_module_main_conf(r,
                              ngx_http_malloc_module), r->connection->log);

    return ngx_http_malloc_profile_post(r, ctx);
}


/*
 * Removes the hidden dumps and temporary files that a worker killed in the
 * middle of a profile or a dump left behind.
 */

void
ngx_http_malloc_sweep(ngx_http_malloc_main_conf_t *mmcf, ngx_log_t *log)
{
    DIR            *dir;
    struct stat     st;
    struct dirent  *de;

    dir = opendir((char *) mmcf->dump_dir->name.data);
    if (dir == NULL) {
        return;
    }

    while ((de = readdir(dir)) != NULL) {

        if (ngx_strncmp(de->d_name, ".profile-", 9) != 0
            && ngx_strncmp(de->d_name, ".snapshot-", 10) != 0
            && ngx_strncmp(de->d_name, ".malloc-", 8) != 0)
        {
            continue;
        }

        if (fstatat(dirfd(dir), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0
            && S_ISREG(st.st_mode)
            && st.st_mtime < ngx_time() - NGX_HTTP_MALLOC_STALE)
        {
            ngx_log_error(NGX_LOG_INFO, log, 0,
                          "removing stale \"%V/%s\"",
                          &mmcf->dump_dir->name, de->d_name);

            (void) unlinkat(dirfd(dir), de->d_name, 0);
        }
    }

    (void) closedir(dir);
}


/*
 * Posts the dump, or waits on the timer while another command holds the
 * board: a profile is a read, it queues rather than fails.
 */

static ngx_int_t
ngx_http_malloc_profile_post(ngx_http_request_t *r, ngx_http_malloc_ctx_t *ctx)
{
    u_char                       *p;
    ngx_int_t                     rc;
    ngx_msec_t                    deadline;
    ngx_http_malloc_loc_conf_t   *mlcf;
    ngx_http_malloc_main_conf_t  *mmcf;

    mlcf = ngx_http_get_module_loc_conf(r, ngx_http_malloc_module);
    mmcf = ngx_http_get_module_main_conf(r, ngx_http_malloc_module);

    /* a leading dot: no name an operator can ask for looks like it */

    if (ctx->cmd == NGX_HTTP_MALLOC_CMD_STATS && !ctx->profile->detail) {
        p = ctx->tmpl;

    } else {
        p = ngx_snprintf(ctx->tmpl, NGX_HTTP_MALLOC_TMPL_MAX - 1,
                         ".profile-%P-%M-%ui.%%p.%s", ngx_pid,
                         ngx_current_msec, ctx->profile->phase,
                         ctx->cmd == NGX_HTTP_MALLOC_CMD_STATS ? "json"
                                                               : "heap");
    }

    *p = '\0';

    deadline = ctx->deadline;

    rc = ngx_http_malloc_coord_post(mmcf, ctx, 0, mlcf->timeout);

    if (rc == NGX_BUSY) {
        ctx->deadline = deadline;

        if ((ngx_msec_int_t) (deadline - ngx_current_msec) <= 0) {
            return ngx_http_malloc_error(r, NGX_HTTP_CONFLICT, "busy",
                       "another command kept the workers busy for %M ms",
                       mlcf->timeout);
        }

        ctx->wait.handler = ngx_http_malloc_profile_timer;
        ngx_add_timer(&ctx->wait, NGX_HTTP_MALLOC_WAIT_POLL);

        return NGX_DONE;
    }

    ngx_http_malloc_coord_apply_own(mmcf, r->connection->log);

    return ngx_http_malloc_wait(r, ctx);
}


/* a busy board freed, or the growth window over: post (again) */

static void
ngx_http_malloc_profile_timer(ngx_event_t *ev)
{
    ngx_int_t                    rc;
    ngx_connection_t            *c;
    ngx_http_request_t          *r;
    ngx_http_malloc_ctx_t       *ctx;
    ngx_http_malloc_loc_conf_t  *mlcf;

    ctx = ngx_http_malloc_wait_ctx(ev);
    r = ctx->request;
    c = r->connection;

    if (ctx->profile->phase == 1 && ctx->seq != 0 && ctx->done) {
        /* the growth window is over: a fresh deadline for the second dump */
        mlcf = ngx_http_get_module_loc_conf(r, ngx_http_malloc_module);
        ctx->deadline = ngx_current_msec + mlcf->timeout;
        ctx->seq = 0;
    }

    rc = ngx_http_malloc_profile_post(r, ctx);

    if (rc != NGX_DONE) {
        ngx_http_finalize_request(r, rc);
    }

    ngx_http_run_posted_requests(c);
}


/*
 * Every worker has answered (or the deadline passed).  The dumps are read
 * back, merged and encoded by a thread: for a heap of many stacks that is
 * the long part, and the worker has other connections to serve.
 */

ngx_int_t
ngx_http_malloc_profile_done(ngx_http_request_t *r, ngx_http_malloc_ctx_t *ctx)
{
    u_char                        *p;
    ngx_uint_t                     i, n, k;
    ngx_http_malloc_slot_t        *slot;
    ngx_http_malloc_profile_t     *pf;
    ngx_http_malloc_answer_t      *answers;
    ngx_http_malloc_main_conf_t   *mmcf;
    char                           name[NGX_HTTP_MALLOC_NAME_MAX + 1];

    if (ctx->cmd == NGX_HTTP_MALLOC_CMD_STATS) {
        return ngx_http_malloc_stats_done(r, ctx);
    }

    mmcf = ngx_http_get_module_main_conf(r, ngx_http_malloc_module);
    pf = ctx->profile;

    answers = ngx_http_malloc_answers(r, ctx->seq, &n);

    pf->paths = ngx_http_malloc_arena_alloc(pf->arena,
                                            (n + 1) * sizeof(char *));
    if (answers == NULL || pf->paths == NULL) {
        ngx_http_malloc_profile_unlink(r, ctx);
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    k = 0;

    for (i = 0; i < n; i++) {
        slot = &answers[i].slot;

        if (ctx->target != 0 && slot->pid != ctx->target) {
            continue;
        }

        if (!answers[i].answered || slot->result_seq != ctx->seq
            || slot->rc != 0)
        {
            /* the JSON answer of prof_dump says which worker and why */
            ngx_http_malloc_profile_unlink(r, ctx);
            return ngx_http_malloc_respond(r, ctx);
        }

        (void) ngx_http_malloc_path_expand((char *) ctx->tmpl,
                                           (long) slot->pid, name,
                                           sizeof(name));

        pf->paths[k] = ngx_http_malloc_arena_alloc(pf->arena, NGX_MAX_PATH);
        if (pf->paths[k] == NULL) {
            ngx_http_malloc_profile_unlink(r, ctx);
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }

        p = ngx_snprintf((u_char *) pf->paths[k], NGX_MAX_PATH - 1, "%V/%s",
                         &mmcf->dump_dir->name, name);
        *p = '\0';
        k++;
    }

    pf->paths[k] = NULL;

    return ngx_http_malloc_profile_run(r, ctx, ngx_http_malloc_profile_build);
}


/* runs "work" in nginx's thread pool, or here when there is none */

static ngx_int_t
ngx_http_malloc_profile_run(ngx_http_request_t *r, ngx_http_malloc_ctx_t *ctx,
    ngx_http_malloc_work_pt work)
{
#if (NGX_THREADS)
    ngx_thread_task_t            *task;
    ngx_http_malloc_main_conf_t  *mmcf;

    mmcf = ngx_http_get_module_main_conf(r, ngx_http_malloc_module);

    if (mmcf->thread_pool != NULL) {
        task = ngx_thread_task_alloc(r->pool, 0);
        if (task == NULL) {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }

        ctx->profile->work = work;

        task->ctx = ctx->profile;
        task->handler = ngx_http_malloc_profile_thread;
        task->event.handler = ngx_http_malloc_profile_ran;
        task->event.data = ctx;
        task->event.log = r->connection->log;

        if (ngx_thread_task_post(mmcf->thread_pool, task) == NGX_OK) {
            /* the request and its arena stay until the thread is done */
            r->main->blocked++;
            return NGX_DONE;
        }
    }
#endif

    work(ctx->profile);

    return ngx_http_malloc_profile_finish(r, ctx);
}


#if (NGX_THREADS)

static void
ngx_http_malloc_profile_thread(void *data, ngx_log_t *log)
{
    ngx_http_malloc_profile_t *pf = data;

    pf->work(pf);
}


static void
ngx_http_malloc_profile_ran(ngx_event_t *ev)
{
    ngx_int_t               rc;
    ngx_connection_t       *c;
    ngx_http_request_t     *r;
    ngx_http_malloc_ctx_t  *ctx;

    ctx = ev->data;
    r = ctx->request;
    c = r->connection;

    r->main->blocked--;

    if (c->error) {
        /* the client left meanwhile: the request ends now */
        ngx_http_finalize_request(r, NGX_HTTP_CLIENT_CLOSED_REQUEST);

    } else {
        rc = ngx_http_malloc_profile_finish(r, ctx);

        if (rc != NGX_DONE) {
            ngx_http_finalize_request(r, rc);
        }
    }

    ngx_http_run_posted_requests(c);
}

#endif


/* back in the event loop: answer, or wait for a growth window */

static ngx_int_t
ngx_http_malloc_profile_finish(ngx_http_request_t *r,
    ngx_http_malloc_ctx_t *ctx)
{
    ngx_http_malloc_profile_t  *pf;

    pf = ctx->profile;

    if (pf->status != 0) {
        ngx_log_error(NGX_LOG_ERR, r->connection->log, 0, "%s", pf->error);

        return ngx_http_malloc_error(r, pf->status, pf->code, "%s",
                                     pf->error);
    }

    if (ctx->endpoint == NGX_HTTP_MALLOC_EP_PPROF_SYMBOL) {
        return ngx_http_malloc_send_data(r, "text/plain", NULL,
                                            pf->out.data, pf->out.len);
    }

    if (pf->phase == 0) {
        pf->phase = 1;
        ctx->wait.handler = ngx_http_malloc_profile_timer;
        ngx_add_timer(&ctx->wait, pf->seconds * 1000);
        return NGX_DONE;
    }

    switch (ctx->endpoint) {

    case NGX_HTTP_MALLOC_EP_HEAP:
        return ngx_http_malloc_send_data(r, "text/plain", "nginx.heap",
                                            pf->out.data, pf->out.len);

    case NGX_HTTP_MALLOC_EP_PPROF_HEAP:
        return ngx_http_malloc_send_data(r, "text/plain", NULL,
                                            pf->out.data, pf->out.len);

    default: /* NGX_HTTP_MALLOC_EP_PPROF_PROTO */
        return ngx_http_malloc_send_data(r, "application/octet-stream",
                                            "nginx-heap.pb.gz",
                                            pf->out.data, pf->out.len);
    }
}


static void
ngx_http_malloc_profile_fail(ngx_http_malloc_profile_t *pf,
    ngx_uint_t status, const char *code, const char *fmt, ...)
{
    va_list  args;

    pf->status = status;
    pf->code = code;

    va_start(args, fmt);
    (void) vsnprintf(pf->error, sizeof(pf->error), fmt, args);
    va_end(args);
}


/*
 * In a thread (or in place): reads and removes the dumps, merges them and,
 * for the final collection, writes the answer into pf->out.  Touches only
 * the profile, its arena and the locked symbol cache.
 */

static void
ngx_http_malloc_profile_build(ngx_http_malloc_profile_t *pf)
{
    char                        **path;
    ngx_http_malloc_heap_t       *heap;
    ngx_http_malloc_resolver_t    rs;

    heap = pf->phase ? &pf->heap : &pf->base;

    for (path = pf->paths; *path != NULL; path++) {

        if (ngx_http_malloc_profile_read(pf, *path, heap) != NGX_OK) {
            for ( /* void */ ; *path != NULL; path++) {
                (void) unlink(*path);
            }

            return;
        }

        (void) unlink(*path);
    }

    if (pf->phase == 0) {
        return;
    }

    if (pf->seconds && ngx_http_malloc_heap_sub(&pf->heap, &pf->base) != 0) {
        ngx_http_malloc_profile_fail(pf, NGX_HTTP_INTERNAL_SERVER_ERROR,
                                     "dump_failed", "the sampling interval "
                                     "changed during the growth window");
        return;
    }

    if (pf->kind == NGX_HTTP_MALLOC_EP_HEAP) {
        ngx_http_malloc_heap_write_v2(&pf->heap, &pf->out);

    } else {
        ngx_http_malloc_profile_lock();

        ngx_http_malloc_profile_maps(pf, &rs);
        ngx_http_malloc_profile_trim(&pf->heap, rs.maps, rs.nmaps);

        if (pf->kind == NGX_HTTP_MALLOC_EP_PPROF_HEAP) {
            ngx_http_malloc_heap_write_legacy(&pf->heap, &pf->out);

        } else {
            ngx_http_malloc_profile_proto(pf, &rs);
        }

        ngx_http_malloc_profile_unlock();
    }

    if (pf->out.failed && pf->status == 0) {
        ngx_http_malloc_profile_fail(pf, NGX_HTTP_INTERNAL_SERVER_ERROR,
                                     "out_of_memory",
                                     "out of memory while writing the profile");
    }
}


static ngx_int_t
ngx_http_malloc_profile_read(ngx_http_malloc_profile_t *pf, const char *path,
    ngx_http_malloc_heap_t *heap)
{
    int          fd, err;
    u_char      *buf;
    ssize_t      n;
    struct stat  st;
    char         reason[NGX_HTTP_MALLOC_HEAP_ERR_LEN];

    fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

    if (fd == -1 || fstat(fd, &st) == -1) {
        err = errno;

        if (fd != -1) {
            (void) close(fd);
        }

        ngx_http_malloc_profile_fail(pf, NGX_HTTP_INTERNAL_SERVER_ERROR,
                                     "dump_failed", "cannot read back the "
                                     "dump \"%s\": %s", path, strerror(err));
        return NGX_ERROR;
    }

    if (st.st_size > NGX_HTTP_MALLOC_DUMP_MAX) {
        (void) close(fd);
        ngx_http_malloc_profile_fail(pf, NGX_HTTP_INTERNAL_SERVER_ERROR,
                                     "dump_failed", "the dump \"%s\" is "
                                     "larger than %d bytes", path,
                                     NGX_HTTP_MALLOC_DUMP_MAX);
        return NGX_ERROR;
    }

    buf = ngx_http_malloc_arena_alloc(pf->arena, st.st_size + 1);
    if (buf == NULL) {
        (void) close(fd);
        ngx_http_malloc_profile_fail(pf, NGX_HTTP_INTERNAL_SERVER_ERROR,
                                     "out_of_memory", "out of memory while "
                                     "reading \"%s\"", path);
        return NGX_ERROR;
    }

    n = read(fd, buf, st.st_size);
    err = errno;

    (void) close(fd);

    if (n != st.st_size) {
        ngx_http_malloc_profile_fail(pf, NGX_HTTP_INTERNAL_SERVER_ERROR,
                                     "dump_failed", "short read of the dump "
                                     "\"%s\": %s", path,
                                     n == -1 ? strerror(err) : "truncated");
        return NGX_ERROR;
    }

    if (ngx_http_malloc_heap_add(heap, buf, n, reason) != 0) {
        ngx_http_malloc_profile_fail(pf, NGX_HTTP_INTERNAL_SERVER_ERROR,
                                     "dump_failed", "cannot parse the dump "
                                     "\"%s\": %s", path, reason);
        return NGX_ERROR;
    }

    return NGX_OK;
}


/*
 * The hidden dumps never outlive the request that asked for them, even
 * one that ends before it reads them.
 */

void
ngx_http_malloc_profile_unlink(ngx_http_request_t *r,
    ngx_http_malloc_ctx_t *ctx)
{
    u_char                       *p;
    ngx_uint_t                    i, n;
    ngx_http_malloc_answer_t     *answers;
    ngx_http_malloc_main_conf_t  *mmcf;
    char                          name[NGX_HTTP_MALLOC_NAME_MAX + 1];
    u_char                        path[NGX_MAX_PATH];

    mmcf = ngx_http_get_module_main_conf(r, ngx_http_malloc_module);

    answers = ngx_http_malloc_answers(r, ctx->seq, &n);
    if (answers == NULL) {
        return;
    }

    for (i = 0; i < n; i++) {
        if (answers[i].slot.pid == 0
            || answers[i].slot.result_seq != ctx->seq)
        {
            continue;
        }

        (void) ngx_http_malloc_path_expand((char *) ctx->tmpl,
                                           (long) answers[i].slot.pid, name,
                                           sizeof(name));

        p = ngx_snprintf(path, sizeof(path) - 1, "%V/%s",
                         &mmcf->dump_dir->name, name);
        *p = '\0';

        if (unlink((char *) path) == -1 && ngx_errno != NGX_ENOENT) {
            ngx_log_error(NGX_LOG_ERR, r->connection->log, ngx_errno,
                          "unlink(\"%s\") failed", path);
        }
    }
}


/* the first dump's mappings, with their symbols loaded into the cache */

static void
ngx_http_malloc_profile_maps(ngx_http_malloc_profile_t *pf,
    ngx_http_malloc_resolver_t *rs)
{
    rs->syms = ngx_http_malloc_symbols;
    rs->arena = pf->arena;
    rs->maps = NULL;
    rs->nmaps = 0;

    if (rs->syms != NULL && pf->heap.maps != NULL
        && ngx_http_malloc_symbols_maps(rs->syms, pf->arena, pf->heap.maps,
                                        pf->heap.maps_len, &rs->maps,
                                        &rs->nmaps)
           != 0)
    {
        rs->maps = NULL;
        rs->nmaps = 0;
    }
}


static void
ngx_http_malloc_profile_proto(ngx_http_malloc_profile_t *pf,
    ngx_http_malloc_resolver_t *rs)
{
    struct timespec          ts;
    ngx_http_malloc_pprof_t  pp;
    char                     err[NGX_HTTP_MALLOC_PPROF_ERR_LEN];

    (void) clock_gettime(CLOCK_REALTIME, &ts);

    ngx_memzero(&pp, sizeof(ngx_http_malloc_pprof_t));

    pp.heap = &pf->heap;
    pp.maps = rs->maps;
    pp.nmaps = rs->nmaps;
    pp.resolve = ngx_http_malloc_profile_resolve;
    pp.data = rs;
    pp.time_nanos = (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
    pp.duration_nanos = (int64_t) pf->seconds * 1000000000;
    pp.arena = pf->arena;

    if (ngx_http_malloc_pprof_encode(&pp, &pf->out, err) != 0) {
        ngx_http_malloc_profile_fail(pf, NGX_HTTP_INTERNAL_SERVER_ERROR,
                                     "encode_failed", "cannot encode the "
                                     "heap profile: %s", err);
    }
}


/* return addresses point after the call: name the call itself */

static const char *
ngx_http_malloc_profile_resolve(void *data, uint64_t addr, int *map)
{
    ngx_http_malloc_resolver_t *rs = data;

    *map = -1;

    if (rs->syms == NULL || addr == 0) {
        return NULL;
    }

    return ngx_http_malloc_symbols_lookup(rs->syms, rs->arena, rs->maps,
                                          rs->nmaps, addr - 1, map);
}


/*
 * jemalloc's own frames (its backtrace and malloc internals) go, as pprof
 * drops its runtime's
 */

static void
ngx_http_malloc_profile_trim(ngx_http_malloc_heap_t *heap,
    ngx_http_malloc_map_t *maps, size_t nmaps)
{
    size_t  i;

    for (i = 0; i < nmaps; i++) {
        if (ngx_strstr(maps[i].path, "libjemalloc") != NULL) {
            ngx_http_malloc_heap_trim(heap, maps[i].start, maps[i].limit);
        }
    }
}


/*
 * One symbol cache per worker, for the life of the worker (symbol tables
 * are costly to load), shared by the pool's threads under a mutex.
 */

static void
ngx_http_malloc_profile_lock(void)
{
    (void) pthread_mutex_lock(&ngx_http_malloc_symbols_mutex);

    if (ngx_http_malloc_symbols == NULL) {
        ngx_http_malloc_symbols = ngx_http_malloc_symbols_create();
    }
}


static void
ngx_http_malloc_profile_unlock(void)
{
    (void) pthread_mutex_unlock(&ngx_http_malloc_symbols_mutex);
}


/*
 * The symbol protocol of jeprof and go tool pprof: GET says a symbol
 * table exists, POST takes "0x1a2b+0x3c4d..." and names each address that
 * lies in a mapping of this worker (all workers share the master's).
 */

ngx_int_t
ngx_http_malloc_profile_symbol(ngx_http_request_t *r, u_char *body,
    size_t len)
{
    ngx_pool_cleanup_t         *cln;
    ngx_http_malloc_ctx_t      *ctx;
    ngx_http_malloc_profile_t  *pf;

    if (body == NULL) {
        return ngx_http_malloc_send_data(r, "text/plain", NULL,
                                            (u_char *) "num_symbols: 1\n",
                                            sizeof("num_symbols: 1\n") - 1);
    }

    ctx = ngx_http_get_module_ctx(r, ngx_http_malloc_module);

    pf = ngx_pcalloc(r->pool, sizeof(ngx_http_malloc_profile_t));
    cln = ngx_pool_cleanup_add(r->pool, 0);

    if (pf == NULL || cln == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    /* the arena and the answer are unmapped with the request's pool */

    cln->handler = ngx_http_malloc_profile_free;
    cln->data = pf;

    pf->arena = ngx_http_malloc_arena_create();
    if (pf->arena == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    pf->body = body;
    pf->body_len = len;

    ctx->request = r;
    ctx->profile = pf;

    return ngx_http_malloc_profile_run(r, ctx, ngx_http_malloc_profile_lookup);
}


/* in a thread (or in place): names the addresses of pf->body */

static void
ngx_http_malloc_profile_lookup(ngx_http_malloc_profile_t *pf)
{
    int                     map;
    u_char                 *p, *last, *start;
    size_t                  nmaps;
    uint64_t                addr;
    ngx_int_t               digit;
    const char             *name;
    ngx_http_malloc_map_t  *maps;

    ngx_http_malloc_profile_lock();

    if (ngx_http_malloc_profile_self_maps(pf, &maps, &nmaps) != NGX_OK) {
        ngx_http_malloc_profile_unlock();
        return;
    }

    p = pf->body;
    last = pf->body + pf->body_len;

    while (p < last) {

        if (*p == '+' || *p == ' ' || *p == '\n' || *p == '\r') {
            p++;
            continue;
        }

        if (last - p > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
            p += 2;
        }

        start = p;
        addr = 0;

        while (p < last && p - start < 16) {
            digit = ngx_hextoi(p, 1);

            if (digit == NGX_ERROR) {
                break;
            }

            addr = (addr << 4) | (uint64_t) digit;
            p++;
        }

        if (p == start || (p < last && *p != '+' && *p != '\n'
                           && *p != '\r' && *p != ' '))
        {
            /* not an address: skip to the next separator */
            while (p < last && *p != '+' && *p != ' ' && *p != '\n'
                   && *p != '\r')
            {
                p++;
            }

            continue;
        }

        name = ngx_http_malloc_symbols_lookup(ngx_http_malloc_symbols,
                                              pf->arena, maps, nmaps, addr,
                                              &map);
        if (name != NULL) {
            ngx_http_malloc_mbuf_printf(&pf->out, "0x%016llx\t%s\n",
                                        (unsigned long long) addr, name);
        }
    }

    ngx_http_malloc_profile_unlock();

    if (pf->out.failed) {
        ngx_http_malloc_profile_fail(pf, NGX_HTTP_INTERNAL_SERVER_ERROR,
                                     "out_of_memory",
                                     "out of memory while naming addresses");
    }
}


/* with the symbol cache locked */

static ngx_int_t
ngx_http_malloc_profile_self_maps(ngx_http_malloc_profile_t *pf,
    ngx_http_malloc_map_t **maps, size_t *nmaps)
{
    char  err[NGX_HTTP_MALLOC_ERR_LEN];

    if (ngx_http_malloc_self_maps(pf->arena, maps, nmaps, err) != NGX_OK) {
        ngx_http_malloc_profile_fail(pf, NGX_HTTP_INTERNAL_SERVER_ERROR,
                                     "symbols_unavailable", "%s", err);
        return NGX_ERROR;
    }

    return NGX_OK;
}


/*
 * This process's executable mappings, their files' symbols loaded into
 * the cache (locked by the caller), or NGX_ERROR with a reason in err.
 */

static ngx_int_t
ngx_http_malloc_self_maps(ngx_http_malloc_arena_t *arena,
    ngx_http_malloc_map_t **maps, size_t *nmaps, char *err)
{
    int                      fd;
    ssize_t                  n;
    ngx_http_malloc_mbuf_t   text;
    u_char                   buf[4096];

    ngx_memzero(&text, sizeof(ngx_http_malloc_mbuf_t));

    fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd == -1) {
        ngx_snprintf((u_char *) err, NGX_HTTP_MALLOC_ERR_LEN,
                     "cannot read /proc/self/maps: %s%Z", strerror(errno));
        return NGX_ERROR;
    }

    for ( ;; ) {
        n = read(fd, buf, sizeof(buf));

        if (n <= 0) {
            break;
        }

        ngx_http_malloc_mbuf_append(&text, buf, n);
    }

    (void) close(fd);

    if (n == -1 || text.failed || ngx_http_malloc_symbols == NULL
        || ngx_http_malloc_symbols_maps(ngx_http_malloc_symbols, arena,
                                        (char *) text.data, text.len,
                                        maps, nmaps)
           != 0)
    {
        ngx_http_malloc_mbuf_free(&text);
        ngx_snprintf((u_char *) err, NGX_HTTP_MALLOC_ERR_LEN,
                     "cannot read this process's mappings%Z");
        return NGX_ERROR;
    }

    ngx_http_malloc_mbuf_free(&text);

    return NGX_OK;
}


/*
 * In the master, as root, before it forks the workers: the symbols of
 * every mapped file, so that a worker names the code of files that its
 * user may not open (a module under a home of mode 0700, a vendor
 * directory of mode 0750).  The workers inherit the cache.
 */

void
ngx_http_malloc_profile_preload(ngx_log_t *log)
{
    size_t                    i, nmaps;
    ngx_http_malloc_map_t    *maps;
    ngx_http_malloc_arena_t  *arena;
    char                      err[NGX_HTTP_MALLOC_ERR_LEN];

    arena = ngx_http_malloc_arena_create();
    if (arena == NULL) {
        return;
    }

    ngx_http_malloc_profile_lock();

    if (ngx_http_malloc_self_maps(arena, &maps, &nmaps, err) != NGX_OK) {
        ngx_log_error(NGX_LOG_WARN, log, 0, "%s", err);
        nmaps = 0;
    }

    for (i = 0; i < nmaps; i++) {
        if (maps[i].file == -1
            && (i == 0 || ngx_strcmp(maps[i].path, maps[i - 1].path) != 0))
        {
            ngx_log_error(NGX_LOG_NOTICE, log, 0,
                          "cannot read the symbols of \"%s\": profiles "
                          "name its code \"<file>+0x<offset>\"",
                          maps[i].path);
        }
    }

    ngx_http_malloc_profile_unlock();

    ngx_http_malloc_arena_destroy(arena);
}


ngx_int_t
ngx_http_malloc_profile_cmdline(ngx_http_request_t *r)
{
    u_char   *p;
    ssize_t   n;

    /* argv[0] is "nginx: worker process" by now; the file is the truth */

    p = ngx_pnalloc(r->pool, NGX_MAX_PATH + 1);
    if (p == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    n = readlink("/proc/self/exe", (char *) p, NGX_MAX_PATH - 1);
    if (n <= 0) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    p[n++] = '\n';

    return ngx_http_malloc_send_data(r, "text/plain", NULL, p, n);
}


static void
ngx_http_malloc_profile_free(void *data)
{
    ngx_http_malloc_profile_t *pf = data;

    if (pf == NULL) {
        return;
    }

    ngx_http_malloc_mbuf_free(&pf->out);
    ngx_http_malloc_arena_destroy(pf->arena);
    pf->arena = NULL;
}


/* the data must stay valid until the request's pool goes */

ngx_int_t
ngx_http_malloc_send_data(ngx_http_request_t *r, const char *type,
    const char *filename, u_char *data, size_t len)
{
    ngx_int_t         rc;
    ngx_buf_t        *b;
    ngx_chain_t       out;
    ngx_table_elt_t  *h;

    r->headers_out.status = NGX_HTTP_OK;
    r->headers_out.content_length_n = len;
    r->headers_out.content_type.data = (u_char *) type;
    r->headers_out.content_type.len = ngx_strlen(type);
    r->headers_out.content_type_len = r->headers_out.content_type.len;
    r->headers_out.content_type_lowcase = NULL;

    if (filename != NULL) {
        h = ngx_list_push(&r->headers_out.headers);
        if (h == NULL) {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }

        h->hash = 1;
        ngx_str_set(&h->key, "Content-Disposition");
        h->value.len = sizeof("attachment; filename=\"\"") - 1
                       + ngx_strlen(filename);
        h->value.data = ngx_pnalloc(r->pool, h->value.len);
        if (h->value.data == NULL) {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }

        ngx_sprintf(h->value.data, "attachment; filename=\"%s\"", filename);
    }

    rc = ngx_http_send_header(r);

    if (rc == NGX_ERROR || rc > NGX_OK || r->header_only || len == 0) {
        return (len == 0 && rc == NGX_OK) ? ngx_http_send_special(r,
                                                       NGX_HTTP_LAST)
                                          : rc;
    }

    /* the data stays mapped until the request's pool goes */

    b = ngx_calloc_buf(r->pool);
    if (b == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    b->pos = data;
    b->last = data + len;
    b->memory = 1;
    b->last_buf = (r == r->main) ? 1 : 0;
    b->last_in_chain = 1;

    out.buf = b;
    out.next = NULL;

    return ngx_http_output_filter(r, &out);
}


/*
 * For scheduled snapshots, in a thread or in place: merges the dumps at
 * "paths" (removing them) into a symbolized profile.proto written to
 * "out", never over an existing file.  0, or -1 with a reason in err.
 */

ngx_int_t
ngx_http_malloc_profile_write(char **paths, const char *out, char *err,
    size_t len)
{
    int                         fd;
    ssize_t                     n;
    ngx_int_t                   rc;
    ngx_http_malloc_profile_t   pf;

    ngx_memzero(&pf, sizeof(ngx_http_malloc_profile_t));

    pf.arena = ngx_http_malloc_arena_create();
    if (pf.arena == NULL) {
        (void) ngx_cpystrn((u_char *) err, (u_char *) "out of memory", len);
        return NGX_ERROR;
    }

    ngx_http_malloc_heap_init(&pf.base, pf.arena);
    ngx_http_malloc_heap_init(&pf.heap, pf.arena);

    pf.phase = 1;
    pf.kind = NGX_HTTP_MALLOC_EP_PPROF_PROTO;
    pf.paths = paths;

    ngx_http_malloc_profile_build(&pf);

    rc = NGX_ERROR;

    if (pf.status != 0) {
        (void) ngx_cpystrn((u_char *) err, (u_char *) pf.error, len);
        goto done;
    }

    fd = open(out, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd == -1) {
        (void) ngx_snprintf((u_char *) err, len, "cannot create \"%s\": %s%Z",
                            out, strerror(errno));
        goto done;
    }

    n = write(fd, pf.out.data, pf.out.len);

    if (n != (ssize_t) pf.out.len) {
        (void) ngx_snprintf((u_char *) err, len, "cannot write \"%s\": %s%Z",
                            out, n == -1 ? strerror(errno) : "short write");
        (void) close(fd);
        (void) unlink(out);
        goto done;
    }

    if (close(fd) == -1) {
        (void) ngx_snprintf((u_char *) err, len, "cannot write \"%s\": %s%Z",
                            out, strerror(errno));
        (void) unlink(out);
        goto done;
    }

    rc = NGX_OK;

done:

    ngx_http_malloc_profile_free(&pf);

    return rc;
}
