
/*
 * Requests waiting for the workers: each posts its command through the
 * board, then looks at the slots whenever the board's wake hook runs (a
 * worker answered through this worker's eventfd) and on a short timer,
 * until every worker of the current generation has answered or the
 * deadline passes.  A request that ends early closes its command, so
 * that a worker coming to it late does nothing.
 *
 * Owns: this worker's list of waiting requests, the names of the files
 * the workers make for a request, and their removal when a read ends
 * early.  Calls: board, reply (the answer "busy"), and the pure core
 * (path).  Reaches
 * the endpoints only through the handlers in the request's context.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_malloc_module.h"
#include "ngx_http_malloc_board.h"
#include "ngx_http_malloc_wait.h"
#include "ngx_http_malloc_reply.h"
#include "ngx_http_malloc_path.h"


/* builds of profiles, and growth windows, at once in a worker */
#define NGX_HTTP_MALLOC_ADMIT        4

/* how often a request whose work is on a thread looks in on it */
#define NGX_HTTP_MALLOC_WAIT_THREAD  1000


static void ngx_http_malloc_wait_wake(ngx_log_t *log);
static void ngx_http_malloc_wait_handler(ngx_event_t *ev);
static void ngx_http_malloc_wait_running(ngx_event_t *ev);
static ngx_uint_t ngx_http_malloc_wait_posted(ngx_http_request_t *r,
    ngx_http_malloc_ctx_t *ctx);
static ngx_int_t ngx_http_malloc_wait_busy(ngx_http_request_t *r,
    ngx_http_malloc_ctx_t *ctx);
static ngx_int_t ngx_http_malloc_wait_check(ngx_http_request_t *r,
    ngx_http_malloc_ctx_t *ctx);
static void ngx_http_malloc_wait_unqueue(ngx_http_malloc_ctx_t *ctx);
static void ngx_http_malloc_wait_cleanup(void *data);


/* this worker's requests: those waiting for answers, those admitted */
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
                               ngx_http_malloc_wait_wake);
}


/*
 * Registers what ends a wait early (the client going away, the request
 * being finalized) before anything is posted.
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
    ctx->done = 1;

    cln->handler = ngx_http_malloc_wait_cleanup;
    cln->data = ctx;

    ctx->wait.data = r->connection;
    ctx->wait.log = r->connection->log;

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
    static ngx_str_t  retry = ngx_string("1");

    *rc = NGX_HTTP_INTERNAL_SERVER_ERROR;

    if (ngx_http_malloc_requests.admitted[window] >= NGX_HTTP_MALLOC_ADMIT) {
        if (ngx_http_malloc_add_header(r, "Retry-After", &retry) == NGX_OK) {
            *rc = ngx_http_malloc_error(r, NGX_HTTP_SERVICE_UNAVAILABLE,
                                        "busy", "this worker builds %d %s "
                                        "already; ask again",
                                        NGX_HTTP_MALLOC_ADMIT,
                                        window ? "growth windows"
                                               : "profiles");
        }

        return NGX_DECLINED;
    }

    if (ngx_http_malloc_wait_hold(r, ctx) != NGX_OK) {
        return NGX_ERROR;
    }

    ngx_http_malloc_requests.admitted[window]++;
    ctx->admitted = window + 1;

    return NGX_OK;
}


/*
 * Posts ctx->cmd and waits for the answers: NGX_DONE, or what
 * ctx->answered returned when they are all in already.  A read ("read"
 * 1) leaves room in the ring for writes; a command that finds no room
 * waits for it until the deadline, and is then answered 503 busy.
 */

ngx_int_t
ngx_http_malloc_wait_post(ngx_http_request_t *r, ngx_http_malloc_ctx_t *ctx,
    ngx_msec_t timeout, ngx_uint_t read)
{
    if (ngx_http_malloc_wait_hold(r, ctx) != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ctx->seq = 0;
    ctx->timeout = timeout;
    ctx->reserve = read ? NGX_HTTP_MALLOC_RING_WRITES : 0;
    ctx->deadline = ngx_current_msec + timeout;
    ctx->done = 0;
    ctx->wait.handler = ngx_http_malloc_wait_handler;

    if (!ctx->queued) {
        ngx_queue_insert_tail(&ngx_http_malloc_requests.waiting, &ctx->queue);
        ctx->queued = 1;
    }

    return ngx_http_malloc_wait_check(r, ctx);
}


/* posts the command once the ring has room: 0 while it has none */

static ngx_uint_t
ngx_http_malloc_wait_posted(ngx_http_request_t *r, ngx_http_malloc_ctx_t *ctx)
{
    ngx_http_malloc_main_conf_t  *mmcf;

    if (ctx->seq != 0) {
        return 1;
    }

    mmcf = ngx_http_get_module_main_conf(r, ngx_http_malloc_module);

    ctx->seq = ngx_http_malloc_board_post(mmcf, &ctx->cmd, ctx->reserve,
                                          r->connection->log);
    if (ctx->seq == 0) {
        return 0;
    }

    /* the workers have the whole timeout from now */
    ctx->deadline = ngx_current_msec + ctx->timeout;

    ngx_log_debug2(NGX_LOG_DEBUG_HTTP, r->connection->log, 0,
                   "malloc wait: seq %ui, %M ms", ctx->seq, ctx->timeout);

    return 1;
}


/* no room in the ring within the deadline: ask again in a second */

static ngx_int_t
ngx_http_malloc_wait_busy(ngx_http_request_t *r, ngx_http_malloc_ctx_t *ctx)
{
    static ngx_str_t  retry = ngx_string("1");

    ngx_http_malloc_wait_unqueue(ctx);
    ctx->done = 1;

    if (ngx_http_malloc_add_header(r, "Retry-After", &retry) != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    return ngx_http_malloc_error(r, NGX_HTTP_SERVICE_UNAVAILABLE, "busy",
                                 "the workers had %ui commands to apply "
                                 "for %M ms; ask again",
                                 (ngx_uint_t) NGX_HTTP_MALLOC_RING
                                 - ctx->reserve, ctx->timeout);
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
    if (ctx->wait.timer_set) {
        ngx_del_timer(&ctx->wait);
    }

    if (running) {
        ctx->wait.handler = ngx_http_malloc_wait_running;
        ngx_add_timer(&ctx->wait, NGX_HTTP_MALLOC_WAIT_THREAD);
    }
}


static void
ngx_http_malloc_wait_running(ngx_event_t *ev)
{
    ngx_add_timer(ev, NGX_HTTP_MALLOC_WAIT_THREAD);
}


/* a worker answered a command of this worker: the waiting look now */

static void
ngx_http_malloc_wait_wake(ngx_log_t *log)
{
    ngx_queue_t            *q;
    ngx_http_malloc_ctx_t  *ctx;

    for (q = ngx_queue_head(&ngx_http_malloc_requests.waiting);
         q != ngx_queue_sentinel(&ngx_http_malloc_requests.waiting);
         q = ngx_queue_next(q))
    {
        ctx = ngx_queue_data(q, ngx_http_malloc_ctx_t, queue);

        if (!ctx->wait.posted) {
            ngx_post_event(&ctx->wait, &ngx_posted_events);
        }
    }
}


static void
ngx_http_malloc_wait_handler(ngx_event_t *ev)
{
    ngx_http_request_t     *r;
    ngx_http_malloc_ctx_t  *ctx;

    ctx = ngx_http_malloc_wait_ctx(ev);
    r = ctx->request;

    ngx_http_malloc_wait_resume(r, ngx_http_malloc_wait_check(r, ctx));
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


/* NGX_DONE while some worker has yet to answer and time is left */

static ngx_int_t
ngx_http_malloc_wait_check(ngx_http_request_t *r, ngx_http_malloc_ctx_t *ctx)
{
    ngx_uint_t                    n, answered;
    ngx_http_malloc_main_conf_t  *mmcf;

    mmcf = ngx_http_get_module_main_conf(r, ngx_http_malloc_module);

    if (!ngx_http_malloc_wait_posted(r, ctx)) {
        if ((ngx_msec_int_t) (ctx->deadline - ngx_current_msec) <= 0) {
            return ngx_http_malloc_wait_busy(r, ctx);
        }

        if (!ctx->wait.timer_set) {
            ngx_add_timer(&ctx->wait, NGX_HTTP_MALLOC_WAIT_POLL);
        }

        return NGX_DONE;
    }

    n = NGX_MAX_PROCESSES;

    if (ctx->cmd.target != 0) {
        /* one worker's dump: the others' answers do not matter */
        answered = ngx_http_malloc_board_answered(mmcf, ctx->seq,
                                                  ctx->cmd.target);
        n = 1;

    } else {
        answered = ngx_http_malloc_board_workers(mmcf, ctx->seq, NULL, &n);
    }

    if (answered < n
        && (ngx_msec_int_t) (ctx->deadline - ngx_current_msec) > 0)
    {
        if (ctx->wait.timer_set) {
            ngx_del_timer(&ctx->wait);
        }

        ngx_add_timer(&ctx->wait, NGX_HTTP_MALLOC_WAIT_POLL);
        return NGX_DONE;
    }

    ngx_log_debug3(NGX_LOG_DEBUG_HTTP, r->connection->log, 0,
                   "malloc wait: seq %ui over, %ui of %ui answered",
                   ctx->seq, answered, n);

    ngx_http_malloc_wait_unqueue(ctx);

    ctx->done = 1;
    ngx_http_malloc_board_close(mmcf, ctx->seq);

    return ctx->answered(r, ctx);
}


static void
ngx_http_malloc_wait_unqueue(ngx_http_malloc_ctx_t *ctx)
{
    if (ctx->wait.timer_set) {
        ngx_del_timer(&ctx->wait);
    }

    if (ctx->wait.posted) {
        ngx_delete_posted_event(&ctx->wait);
    }

    if (ctx->queued) {
        ngx_queue_remove(&ctx->queue);
        ctx->queued = 0;
    }
}


static void
ngx_http_malloc_wait_cleanup(void *data)
{
    ngx_http_malloc_ctx_t *ctx = data;

    ngx_http_malloc_main_conf_t  *mmcf;

    ngx_http_malloc_wait_unqueue(ctx);

    if (ctx->admitted) {
        ngx_http_malloc_requests.admitted[ctx->admitted - 1]--;
        ctx->admitted = 0;
    }

    if (ctx->done) {
        return;
    }

    ctx->done = 1;

    ngx_log_debug1(NGX_LOG_DEBUG_HTTP, ctx->request->connection->log, 0,
                   "malloc wait: seq %ui abandoned", ctx->seq);

    if (ctx->seq != 0) {
        /* closed first: a worker that comes to it now makes nothing */
        mmcf = ngx_http_get_module_main_conf(ctx->request,
                                             ngx_http_malloc_module);
        ngx_http_malloc_board_close(mmcf, ctx->seq);
        ngx_http_malloc_wait_unlink(ctx);
    }

    if (ctx->abandoned != NULL) {
        ctx->abandoned(ctx);
    }
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
 * Removes the hidden files that a read's command made, answered or not:
 * a worker that writes its file after this sees the command closed and
 * removes it itself.
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

    if (ctx->seq == 0 || ctx->cmd.tmpl[0] != '.') {
        /* nothing posted, or an operator's dump: kept */
        return;
    }

    w = ngx_http_malloc_board_copy(mmcf, r->pool, ctx->seq, &n);
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
