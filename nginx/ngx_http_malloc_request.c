
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * The life of a request of the admin location, owned here from its body
 * to its finalization.  The handler creates the job and starts the
 * request: its body is read (or discarded), the endpoint runs, and the
 * request count is taken when it answers later.  An endpoint then hands
 * this file what it needs done: a command to post and collect (with its
 * "answered"), a work for the module's thread (with its "done"), a step
 * after a delay (a growth window).  Every way back (the collection, the
 * thread, a timer) resumes the request here, and every way out (answered,
 * refused, timed out, the client gone, a reload or quit) passes the
 * cleanup here, which gives back the admission, stops the timers, closes
 * a command still collecting and removes the files it made.
 *
 * Owns: the request's context, this worker's admitted requests.
 * Calls: wait (the collection), threads, board, reply (the answer
 * "busy"), and the pure core (path).  Reaches the endpoints only through
 * the dispatch, "answered" and "done" they hand it.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include <jansson.h>

#include "ngx_http_malloc_module.h"
#include "ngx_http_malloc_board.h"
#include "ngx_http_malloc_wait.h"
#include "ngx_http_malloc_threads.h"
#include "ngx_http_malloc_request.h"
#include "ngx_http_malloc_reply.h"
#include "ngx_http_malloc_path.h"


/* builds of profiles, and growth windows, at once in a worker */
#define NGX_HTTP_MALLOC_ADMIT        4

/* how often a request whose work is on a thread looks in on it */
#define NGX_HTTP_MALLOC_WAIT_THREAD  1000


typedef struct {
    ngx_http_malloc_job_t          job;         /* the endpoint's view */
    ngx_http_request_t            *request;
    ngx_http_malloc_endpoint_pt    dispatch;
    size_t                         body_max;
    ngx_http_malloc_collect_t      co;
    ngx_event_t                    ev;          /* a thread's keep-alive,
                                                   a delayed step */
    ngx_http_malloc_task_t         task;
    ngx_http_malloc_work_pt        work;        /* on the thread */
    ngx_http_malloc_done_pt        done;        /* after the thread or the
                                                   delay */
    void                          *data;        /* theirs */

    unsigned                       admitted:2;  /* 1 build, 2 window */
    unsigned                       collecting:1;
    unsigned                       held:1;
    unsigned                       blocked:1;   /* r->main->blocked taken */
} ngx_http_malloc_ctx_t;


#define ngx_http_malloc_request_ctx(r)                                        \
    ((ngx_http_malloc_ctx_t *)                                                \
         ngx_http_get_module_ctx(r, ngx_http_malloc_module))

#define ngx_http_malloc_ev_ctx(e)                                             \
    ((ngx_http_malloc_ctx_t *)                                                \
         ((u_char *) (e) - offsetof(ngx_http_malloc_ctx_t, ev)))


static void ngx_http_malloc_request_body(ngx_http_request_t *r);
static ngx_int_t ngx_http_malloc_request_copy(ngx_http_request_t *r,
    u_char *buf, size_t *len);
static ngx_int_t ngx_http_malloc_request_hold(ngx_http_request_t *r,
    ngx_http_malloc_ctx_t *ctx);
static void ngx_http_malloc_request_collected(ngx_http_malloc_collect_t *co,
    ngx_uint_t busy);
static ngx_int_t ngx_http_malloc_request_busy(ngx_http_request_t *r,
    const char *fmt, ngx_uint_t n);
static void ngx_http_malloc_request_work(void *data);
static void ngx_http_malloc_request_running(ngx_event_t *ev);
static void ngx_http_malloc_request_ran(void *data);
static void ngx_http_malloc_request_timer(ngx_event_t *ev);
static void ngx_http_malloc_request_resume(ngx_http_request_t *r,
    ngx_int_t rc);
static void ngx_http_malloc_request_stop(ngx_http_malloc_ctx_t *ctx);
static void ngx_http_malloc_request_cleanup(void *data);


/* builds, windows: taken by admission, given back by the cleanup */
static ngx_uint_t  ngx_http_malloc_admitted[2];


ngx_http_malloc_job_t *
ngx_http_malloc_request_create(ngx_http_request_t *r)
{
    ngx_http_malloc_ctx_t  *ctx;

    ctx = ngx_pcalloc(r->pool, sizeof(ngx_http_malloc_ctx_t));
    if (ctx == NULL) {
        return NULL;
    }

    ctx->request = r;
    ngx_http_set_ctx(r, ctx, ngx_http_malloc_module);

    return &ctx->job;
}


/*
 * The body, read whole (POST) or discarded, then the endpoint through
 * "dispatch".  An endpoint that answers later returns NGX_DONE: the
 * request count is taken for it here, and its resuming finalizes.
 */

ngx_int_t
ngx_http_malloc_request_start(ngx_http_request_t *r, size_t body_max,
    ngx_http_malloc_endpoint_pt dispatch)
{
    ngx_int_t               rc;
    ngx_http_malloc_ctx_t  *ctx;

    ctx = ngx_http_malloc_request_ctx(r);
    ctx->dispatch = dispatch;
    ctx->body_max = body_max;

    if (r->method == NGX_HTTP_POST) {
        rc = ngx_http_read_client_request_body(r,
                                               ngx_http_malloc_request_body);

        if (rc >= NGX_HTTP_SPECIAL_RESPONSE) {
            return rc;
        }

        return NGX_DONE;
    }

    rc = ngx_http_discard_request_body(r);
    if (rc != NGX_OK) {
        return rc;
    }

    rc = dispatch(r, &ctx->job, NULL, 0);

    if (rc == NGX_DONE) {
        /* answered later, from a timer, an event or a thread */
        r->main->count++;
    }

    return rc;
}


static void
ngx_http_malloc_request_body(ngx_http_request_t *r)
{
    u_char                 *body;
    size_t                  len, max;
    ngx_int_t               rc;
    ngx_http_malloc_ctx_t  *ctx;

    ctx = ngx_http_malloc_request_ctx(r);
    max = ctx->body_max;

    body = ngx_pnalloc(r->pool, max + 1);
    if (body == NULL) {
        ngx_http_finalize_request(r, NGX_HTTP_INTERNAL_SERVER_ERROR);
        return;
    }

    len = max + 1;
    rc = ngx_http_malloc_request_copy(r, body, &len);

    if (rc != NGX_OK) {
        ngx_http_finalize_request(r, rc);
        return;
    }

    if (len > max) {
        rc = ngx_http_malloc_error(r, NGX_HTTP_REQUEST_ENTITY_TOO_LARGE,
                                   "body_too_large",
                                   "request bodies are limited to %uz "
                                   "bytes here", max);

    } else {
        rc = ctx->dispatch(r, &ctx->job, body, len);
    }

    if (rc == NGX_DONE) {
        /* the count that reading the body took stays taken */
        return;
    }

    ngx_http_finalize_request(r, rc);
}


/* copies at most *len bytes of the body, from memory or its temp file */

static ngx_int_t
ngx_http_malloc_request_copy(ngx_http_request_t *r, u_char *buf,
    size_t *len)
{
    size_t        size, total;
    ssize_t       n;
    ngx_buf_t    *b;
    ngx_chain_t  *cl;

    total = 0;

    if (r->request_body == NULL) {
        *len = 0;
        return NGX_OK;
    }

    for (cl = r->request_body->bufs; cl != NULL; cl = cl->next) {
        b = cl->buf;

        if (total >= *len) {
            break;
        }

        if (b->in_file) {
            size = (size_t) ngx_min(b->file_last - b->file_pos,
                                    (off_t) (*len - total));

            n = ngx_read_file(b->file, buf + total, size, b->file_pos);
            if (n == NGX_ERROR) {
                return NGX_HTTP_INTERNAL_SERVER_ERROR;
            }

            total += n;
            continue;
        }

        size = ngx_min((size_t) (b->last - b->pos), *len - total);

        if (size == 0) {
            /* an empty buffer may have no memory at all */
            continue;
        }

        ngx_memcpy(buf + total, b->pos, size);
        total += size;
    }

    *len = total;

    return NGX_OK;
}


/*
 * Registers what ends the request's waiting early (the client going
 * away, the request being finalized) before anything is posted, built or
 * timed; once per request.
 */

static ngx_int_t
ngx_http_malloc_request_hold(ngx_http_request_t *r,
    ngx_http_malloc_ctx_t *ctx)
{
    ngx_http_cleanup_t  *cln;

    if (ctx->held) {
        return NGX_OK;
    }

    cln = ngx_http_cleanup_add(r, 0);
    if (cln == NULL) {
        return NGX_ERROR;
    }

    cln->handler = ngx_http_malloc_request_cleanup;
    cln->data = ctx;

    ctx->held = 1;

    /* timer events: data non-NULL (debug logging reads it), cancelable */

    ctx->ev.data = r->connection;
    ctx->ev.log = r->connection->log;
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
ngx_http_malloc_request_admit(ngx_http_request_t *r, ngx_uint_t window,
    ngx_int_t *rc)
{
    ngx_http_malloc_ctx_t  *ctx;

    ctx = ngx_http_malloc_request_ctx(r);

    if (ngx_http_malloc_admitted[window] >= NGX_HTTP_MALLOC_ADMIT) {
        *rc = ngx_http_malloc_request_busy(r, window
                                  ? "this worker keeps %ui growth windows "
                                    "open already; ask again"
                                  : "this worker builds %ui profiles "
                                    "already; ask again",
                                  NGX_HTTP_MALLOC_ADMIT);
        return NGX_DECLINED;
    }

    if (ngx_http_malloc_request_hold(r, ctx) != NGX_OK) {
        *rc = NGX_HTTP_INTERNAL_SERVER_ERROR;
        return NGX_ERROR;
    }

    ngx_http_malloc_admitted[window]++;
    ctx->admitted = window + 1;

    return NGX_OK;
}


/*
 * Posts the job's command and collects the answers: NGX_DONE; what the
 * job's "answered" returns then finalizes the request.  A read ("read"
 * 1) leaves room in the ring for writes.
 */

ngx_int_t
ngx_http_malloc_request_post(ngx_http_request_t *r, ngx_msec_t timeout,
    ngx_uint_t read)
{
    ngx_http_malloc_ctx_t      *ctx;
    ngx_http_malloc_collect_t  *co;

    ctx = ngx_http_malloc_request_ctx(r);

    if (ngx_http_malloc_request_hold(r, ctx) != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    co = &ctx->co;

    co->mmcf = ngx_http_get_module_main_conf(r, ngx_http_malloc_module);
    co->cmd = &ctx->job.cmd;
    co->reserve = read ? NGX_HTTP_MALLOC_RING_WRITES : 0;
    co->timeout = timeout;
    co->collected = ngx_http_malloc_request_collected;
    co->data = ctx;

    ctx->job.seq = 0;
    ctx->collecting = 1;

    ngx_http_malloc_collect(co);

    return NGX_DONE;
}


static void
ngx_http_malloc_request_collected(ngx_http_malloc_collect_t *co,
    ngx_uint_t busy)
{
    ngx_int_t               rc;
    ngx_http_request_t     *r;
    ngx_http_malloc_ctx_t  *ctx;

    ctx = co->data;
    r = ctx->request;

    ctx->collecting = 0;

    if (busy) {
        rc = ngx_http_malloc_request_busy(r, "the workers had %ui commands "
                                          "to apply within the timeout; "
                                          "ask again",
                                          NGX_HTTP_MALLOC_RING - co->reserve);

    } else {
        ctx->job.seq = co->seq;
        ctx->job.generation = co->generation;
        rc = ctx->job.answered(r, &ctx->job);
    }

    ngx_http_malloc_request_resume(r, rc);
}


/* no room for the request now: 503, ask again in a second */

static ngx_int_t
ngx_http_malloc_request_busy(ngx_http_request_t *r, const char *fmt,
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
 * "work" on the module's thread pool (in place when it cannot take it),
 * then "done" back here.  While it runs, the request and its pool stay
 * ("blocked"), and a timer keeps the worker from exiting under it: a
 * worker shutting down (a reload, a quit) finishes the request first, as
 * it would one waiting for an upstream.
 */

ngx_int_t
ngx_http_malloc_request_thread(ngx_http_request_t *r,
    ngx_http_malloc_work_pt work, ngx_http_malloc_done_pt done, void *data)
{
    ngx_http_malloc_ctx_t  *ctx;

    ctx = ngx_http_malloc_request_ctx(r);

    if (ngx_http_malloc_request_hold(r, ctx) != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ctx->task.work = ngx_http_malloc_request_work;
    ctx->task.build = 1;
    ctx->task.done = ngx_http_malloc_request_ran;
    ctx->task.data = ctx;
    ctx->work = work;
    ctx->done = done;
    ctx->data = data;

    if (ngx_http_malloc_threads_post(&ctx->task, r->connection->log)
        != NGX_OK)
    {
        work(data);
        return done(r, data);
    }

    r->main->blocked++;
    ctx->blocked = 1;

    ctx->ev.handler = ngx_http_malloc_request_running;
    ngx_add_timer(&ctx->ev, NGX_HTTP_MALLOC_WAIT_THREAD);

    return NGX_DONE;
}


/* on the thread: the fields it reads were written before the post */

static void
ngx_http_malloc_request_work(void *data)
{
    ngx_http_malloc_ctx_t *ctx = data;

    ctx->work(ctx->data);
}


static void
ngx_http_malloc_request_running(ngx_event_t *ev)
{
    ngx_add_timer(ev, NGX_HTTP_MALLOC_WAIT_THREAD);
}


static void
ngx_http_malloc_request_ran(void *data)
{
    ngx_http_malloc_ctx_t *ctx = data;

    ngx_http_request_t  *r;

    r = ctx->request;

    r->main->blocked--;
    ctx->blocked = 0;

    if (ctx->ev.timer_set) {
        ngx_del_timer(&ctx->ev);
    }

    if (r->connection->error) {
        /* the client left meanwhile: the request ends now */
        ngx_http_malloc_request_resume(r, NGX_HTTP_CLIENT_CLOSED_REQUEST);
        return;
    }

    ngx_http_malloc_request_resume(r, ctx->done(r, ctx->data));
}


/* "done" in "delay" ms (a growth window's end): NGX_DONE */

ngx_int_t
ngx_http_malloc_request_later(ngx_http_request_t *r, ngx_msec_t delay,
    ngx_http_malloc_done_pt done, void *data)
{
    ngx_http_malloc_ctx_t  *ctx;

    ctx = ngx_http_malloc_request_ctx(r);

    if (ngx_http_malloc_request_hold(r, ctx) != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ctx->done = done;
    ctx->data = data;
    ctx->ev.handler = ngx_http_malloc_request_timer;

    if (ctx->ev.timer_set) {
        ngx_del_timer(&ctx->ev);
    }

    ngx_add_timer(&ctx->ev, delay);

    return NGX_DONE;
}


static void
ngx_http_malloc_request_timer(ngx_event_t *ev)
{
    ngx_http_request_t     *r;
    ngx_http_malloc_ctx_t  *ctx;

    ctx = ngx_http_malloc_ev_ctx(ev);
    r = ctx->request;

    ngx_http_malloc_request_resume(r, ctx->done(r, ctx->data));
}


/* back from a timer, an event or a thread: finalize unless still waiting */

static void
ngx_http_malloc_request_resume(ngx_http_request_t *r, ngx_int_t rc)
{
    ngx_connection_t  *c;

    c = r->connection;

    if (rc != NGX_DONE) {
        ngx_http_finalize_request(r, rc);
    }

    ngx_http_run_posted_requests(c);
}


static void
ngx_http_malloc_request_stop(ngx_http_malloc_ctx_t *ctx)
{
    if (ctx->ev.timer_set) {
        ngx_del_timer(&ctx->ev);
    }

    if (ctx->ev.posted) {
        ngx_delete_posted_event(&ctx->ev);
    }
}


/*
 * Every way out of a request: its timers stopped, its admission given
 * back, and a read that ends while it collects closes its command and
 * removes the files the workers made for it.
 */

static void
ngx_http_malloc_request_cleanup(void *data)
{
    ngx_http_malloc_ctx_t *ctx = data;

    ngx_http_malloc_request_stop(ctx);

    if (ctx->admitted) {
        ngx_http_malloc_admitted[ctx->admitted - 1]--;
        ctx->admitted = 0;
    }

    if (!ctx->collecting) {
        return;
    }

    ctx->collecting = 0;

    /* closed first: a worker that comes to it now makes nothing */
    ngx_http_malloc_collect_end(&ctx->co);

    ctx->job.seq = ctx->co.seq;
    ngx_http_malloc_request_unlink(ctx->request);
}


/* the dump directory's path of the file that worker "pid" makes */

void
ngx_http_malloc_request_file(ngx_http_request_t *r, ngx_pid_t pid,
    u_char *path)
{
    u_char                       *p;
    ngx_http_malloc_ctx_t        *ctx;
    ngx_http_malloc_main_conf_t  *mmcf;
    char                          name[NGX_HTTP_MALLOC_NAME_MAX + 1];

    ctx = ngx_http_malloc_request_ctx(r);
    mmcf = ngx_http_get_module_main_conf(r, ngx_http_malloc_module);

    (void) ngx_http_malloc_path_expand((char *) ctx->job.cmd.tmpl,
                                       (long) pid, name, sizeof(name));

    p = ngx_snprintf(path, NGX_MAX_PATH - 1, "%V/%s", &mmcf->dump_dir->name,
                     name);
    *p = '\0';
}


/*
 * A worker's JSON file of a read's command (jemalloc's report, its
 * traffic), read back and removed; NULL: none, or not JSON, logged.
 */

json_t *
ngx_http_malloc_request_json(ngx_http_request_t *r,
    ngx_http_malloc_worker_t *w)
{
    json_t        *j;
    json_error_t   error;
    u_char         path[NGX_MAX_PATH];

    ngx_http_malloc_request_file(r, w->pid, path);

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
ngx_http_malloc_request_read(ngx_http_request_t *r)
{
    ngx_http_malloc_ctx_t        *ctx;
    ngx_http_malloc_main_conf_t  *mmcf;

    ctx = ngx_http_malloc_request_ctx(r);

    if (ctx->job.seq == 0) {
        return;
    }

    mmcf = ngx_http_get_module_main_conf(r, ngx_http_malloc_module);

    ngx_http_malloc_board_close(mmcf, ctx->job.seq);
    ngx_http_malloc_request_unlink(r);
}


/*
 * Removes the hidden files that the job's command made, answered or not:
 * a worker that writes its file after this sees the command closed and
 * removes it itself.  An operator's dump (a name without the leading dot)
 * is never removed.
 */

void
ngx_http_malloc_request_unlink(ngx_http_request_t *r)
{
    ngx_uint_t                    i, n;
    ngx_http_malloc_job_t        *job;
    ngx_http_malloc_worker_t     *w;
    ngx_http_malloc_main_conf_t  *mmcf;
    u_char                        path[NGX_MAX_PATH];

    job = &ngx_http_malloc_request_ctx(r)->job;
    mmcf = ngx_http_get_module_main_conf(r, ngx_http_malloc_module);

    if (job->seq == 0 || job->cmd.tmpl[0] != '.') {
        return;
    }

    w = ngx_http_malloc_board_copy(mmcf, r->pool, job->seq, &n);
    if (w == NULL) {
        return;
    }

    for (i = 0; i < n; i++) {
        if (w[i].pid == 0
            || (job->cmd.target != 0 && w[i].pid != job->cmd.target))
        {
            continue;
        }

        ngx_http_malloc_request_file(r, w[i].pid, path);

        if (ngx_delete_file(path) == NGX_FILE_ERROR
            && ngx_errno != NGX_ENOENT)
        {
            ngx_log_error(NGX_LOG_ERR, r->connection->log, ngx_errno,
                          ngx_delete_file_n " \"%s\" failed", path);
        }
    }
}
