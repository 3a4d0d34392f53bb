
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * What this worker's traffic holds, walked from nginx's own structures
 * (see ngx_http_malloc_walk.h).  Every open connection is in
 * ngx_cycle->connections.  An HTTP/1 connection's log context names its
 * request, if it has one; an HTTP/2 connection's state begins with the
 * connection itself and indexes its streams' requests.  A connection
 * nginx opened (an upstream) shares its client's log, so the upstreams
 * are found first, by their log, and added to their client's request.
 * A pool is measured block by block and large allocation by large
 * allocation at malloc_usable_size(), exact on jemalloc and on glibc.
 * TLS state (OpenSSL's own allocations) is counted as connections, not
 * bytes; QUIC connections are not walked.
 *
 * Runs in the worker's event loop only: nothing else touches the
 * connections meanwhile.
 *
 * Owns: a location's row (its index in the worker's table, cached in
 * its configuration), the log phase handler.  Calls: board, and the
 * pure core (tally, jemalloc).
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#if (NGX_HTTP_V2)
#include <ngx_http_v2.h>
#include <ngx_http_v2_module.h>
#endif

#include <malloc.h>


#if (NGX_HTTP_V2)
#define ngx_http_malloc_walk_stream(r)  ((r)->stream != NULL)
#else
#define ngx_http_malloc_walk_stream(r)  0
#endif

#include "ngx_http_malloc_module.h"
#include "ngx_http_malloc_walk.h"
#include "ngx_http_malloc_tally.h"
#include "ngx_http_malloc_jemalloc.h"
#include "ngx_http_malloc_board.h"


/* an upstream (or any connection nginx opened): its log and its pools */
typedef struct {
    ngx_log_t                    *log;
    uint64_t                      bytes;
    ngx_uint_t                    claimed;  /* by a client's request */
} ngx_http_malloc_walk_out_t;


typedef struct {
    ngx_http_malloc_main_conf_t  *mmcf;
    ngx_http_malloc_walk_t       *w;
    ngx_http_malloc_walk_out_t   *outs;
    ngx_uint_t                    nouts;
} ngx_http_malloc_walk_ctx_t;


static ngx_int_t ngx_http_malloc_walk_log(ngx_http_request_t *r);
static ngx_int_t ngx_http_malloc_walk_row(ngx_http_malloc_main_conf_t *mmcf,
    ngx_http_request_t *r);
static uint64_t ngx_http_malloc_walk_pool(ngx_pool_t *pool);
static uint64_t ngx_http_malloc_walk_us(void);
static int ngx_http_malloc_walk_write(int fd, const char *text, size_t len);
static void ngx_http_malloc_walk_connections(
    ngx_http_malloc_walk_ctx_t *ctx);
static void ngx_http_malloc_walk_totals(ngx_http_malloc_walk_ctx_t *ctx);
static void ngx_http_malloc_walk_allocated(ngx_http_malloc_walk_t *w,
    ngx_uint_t stats);
static void ngx_http_malloc_walk_outs(ngx_http_malloc_walk_ctx_t *ctx);
static int ngx_libc_cdecl ngx_http_malloc_walk_cmp(const void *a,
    const void *b);
static uint64_t ngx_http_malloc_walk_upstreams(ngx_http_malloc_walk_ctx_t *ctx,
    ngx_log_t *log);
static void ngx_http_malloc_walk_http(ngx_http_malloc_walk_ctx_t *ctx,
    ngx_connection_t *c);
static void ngx_http_malloc_walk_request(ngx_http_malloc_walk_ctx_t *ctx,
    ngx_http_request_t *r, uint64_t bytes);
static ngx_uint_t ngx_http_malloc_walk_state(ngx_http_request_t *r);
#if (NGX_HTTP_V2)
static void ngx_http_malloc_walk_h2(ngx_http_malloc_walk_ctx_t *ctx,
    ngx_connection_t *c, uint64_t bytes);
#endif
static json_t *ngx_http_malloc_walk_locations(
    ngx_http_malloc_main_conf_t *mmcf, ngx_http_malloc_walk_t *w);
static json_t *ngx_http_malloc_walk_top(ngx_http_malloc_main_conf_t *mmcf,
    ngx_http_malloc_walk_t *w);
static json_t *ngx_http_malloc_walk_row_json(const char *server,
    const char *location, ngx_http_malloc_tally_row_t *row);
static json_t *ngx_http_malloc_walk_sum(ngx_http_malloc_tally_sum_t *sum);
static json_t *ngx_http_malloc_walk_done(ngx_http_malloc_tally_done_t *d);


ngx_int_t
ngx_http_malloc_walk_init(ngx_conf_t *cf, ngx_http_malloc_main_conf_t *mmcf)
{
    ngx_http_handler_pt        *h;
    ngx_http_core_main_conf_t  *cmcf;

    /* every location configuration made is room for one row, made now */

    if (ngx_array_init(&mmcf->traffic_locs, cf->pool, mmcf->nlocs + 1,
                       sizeof(ngx_http_malloc_walk_loc_t))
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    if (mmcf->traffic != 1) {
        return NGX_OK;
    }

    cmcf = ngx_http_conf_get_module_main_conf(cf, ngx_http_core_module);

    h = ngx_array_push(&cmcf->phases[NGX_HTTP_LOG_PHASE].handlers);
    if (h == NULL) {
        return NGX_ERROR;
    }

    *h = ngx_http_malloc_walk_log;

    return NGX_OK;
}


/* malloc_traffic on: a finished request's pools, to its location */

static ngx_int_t
ngx_http_malloc_walk_log(ngx_http_request_t *r)
{
    uint64_t                      bytes;
    ngx_int_t                     row;
    ngx_http_malloc_walk_loc_t   *loc;
    ngx_http_malloc_main_conf_t  *mmcf;

    if (r != r->main) {
        return NGX_OK;
    }

    mmcf = ngx_http_get_module_main_conf(r, ngx_http_malloc_module);

    bytes = ngx_http_malloc_walk_pool(r->pool);

    if (!ngx_http_malloc_walk_stream(r)) {
        bytes += ngx_http_malloc_walk_pool(r->connection->pool);
    }

    row = ngx_http_malloc_walk_row(mmcf, r);
    if (row < 0) {
        return NGX_OK;
    }

    loc = mmcf->traffic_locs.elts;

    ngx_http_malloc_tally_done(&loc[row].row.done, bytes);

    return NGX_OK;
}


/*
 * The row of the request's location: found once per configuration and
 * worker, by server and name (an "if" in a location has its name), then
 * cached in the location's configuration.  No allocation: the table was
 * made with room for every location.  -1: none (a location made after
 * the table, which cannot happen, or a request with no configuration).
 */

static ngx_int_t
ngx_http_malloc_walk_row(ngx_http_malloc_main_conf_t *mmcf,
    ngx_http_request_t *r)
{
    ngx_uint_t                   i;
    ngx_http_malloc_walk_loc_t  *loc;
    ngx_http_core_srv_conf_t    *cscf;
    ngx_http_core_loc_conf_t    *clcf;
    ngx_http_malloc_loc_conf_t  *mlcf;

    if (r->loc_conf == NULL || r->srv_conf == NULL) {
        return -1;
    }

    mlcf = ngx_http_get_module_loc_conf(r, ngx_http_malloc_module);

    if (mlcf->traffic_row >= 0) {
        return mlcf->traffic_row;
    }

    cscf = ngx_http_get_module_srv_conf(r, ngx_http_core_module);
    clcf = ngx_http_get_module_loc_conf(r, ngx_http_core_module);

    loc = mmcf->traffic_locs.elts;

    for (i = 0; i < mmcf->traffic_locs.nelts; i++) {
        if (loc[i].cscf == cscf
            && loc[i].clcf->name.len == clcf->name.len
            && ngx_strncmp(loc[i].clcf->name.data, clcf->name.data,
                           clcf->name.len) == 0
            && loc[i].clcf->exact_match == clcf->exact_match
            && loc[i].clcf->noregex == clcf->noregex)
        {
            mlcf->traffic_row = i;
            return i;
        }
    }

    if (mmcf->traffic_locs.nelts == mmcf->traffic_locs.nalloc) {
        return -1;
    }

    loc = ngx_array_push(&mmcf->traffic_locs);
    ngx_memzero(loc, sizeof(ngx_http_malloc_walk_loc_t));
    loc->cscf = cscf;
    loc->clcf = clcf;

    mlcf->traffic_row = i;

    return i;
}


ngx_int_t
ngx_http_malloc_walk(ngx_http_malloc_main_conf_t *mmcf,
    ngx_http_malloc_walk_t *w, size_t top, ngx_uint_t stats, ngx_pool_t *pool)
{
    uint64_t                     start;
    ngx_uint_t                   i;
    ngx_http_malloc_walk_ctx_t   ctx;
    ngx_http_malloc_walk_loc_t  *loc;

    ngx_memzero(w, sizeof(ngx_http_malloc_walk_t));

    start = ngx_http_malloc_walk_us();

    /* top 0 (the figures published every second): nothing allocated */

    w->top.cap = top;

    if (top != 0) {
        w->top.reqs = ngx_pcalloc(pool,
                                  top * sizeof(ngx_http_malloc_tally_req_t));
        w->top.heap = ngx_pcalloc(pool,
                                  top * sizeof(ngx_http_malloc_tally_req_t *));
        if (w->top.reqs == NULL || w->top.heap == NULL) {
            return NGX_ERROR;
        }
    }

    loc = mmcf->traffic_locs.elts;

    for (i = 0; i < mmcf->traffic_locs.nelts; i++) {
        ngx_memzero(&loc[i].row.now, sizeof(ngx_http_malloc_tally_sum_t));
    }

    ctx.mmcf = mmcf;
    ctx.w = w;

    ngx_http_malloc_walk_outs(&ctx);

    if (ctx.outs == NULL) {
        return NGX_ERROR;
    }

    ngx_http_malloc_walk_connections(&ctx);
    ngx_http_malloc_walk_totals(&ctx);

    ngx_http_malloc_walk_allocated(w, stats);

    w->took = ngx_http_malloc_walk_us() - start;

    return NGX_OK;
}


/*
 * Every connection of the worker: an HTTP one by its requests, one of
 * another module by its pool, with the connections nginx opened for it.
 */

static void
ngx_http_malloc_walk_connections(ngx_http_malloc_walk_ctx_t *ctx)
{
    ngx_uint_t               i;
    ngx_connection_t        *c;
    ngx_http_malloc_walk_t  *w;

    w = ctx->w;

    c = ngx_cycle->connections;

    for (i = 0; i < ngx_cycle->connection_n; i++) {
        /* a listening socket's own connection holds nothing */

        if (c[i].fd == (ngx_socket_t) -1 || c[i].listening == NULL
            || c[i].listening->connection == &c[i])
        {
            continue;
        }

        if (c[i].type == SOCK_DGRAM) {
            w->quic++;
            continue;
        }

        if (c[i].listening->handler != ngx_http_init_connection
            || c[i].data == NULL || c[i].log == NULL)
        {
            /* a stream module's, a mail proxy's: its pool, by itself */
            w->other.n++;
            w->other.bytes += ngx_http_malloc_walk_pool(c[i].pool)
                              + ngx_http_malloc_walk_upstreams(ctx, c[i].log);
            continue;
        }

        ngx_http_malloc_walk_http(ctx, &c[i]);
    }
}


/* what no request claimed, and the totals of all that was walked */

static void
ngx_http_malloc_walk_totals(ngx_http_malloc_walk_ctx_t *ctx)
{
    size_t                   si;
    ngx_uint_t               i;
    ngx_http_malloc_walk_t  *w;

    w = ctx->w;

    /* what nginx opened and no client claimed: upstream keepalive, ... */

    for (i = 0; i < ctx->nouts; i++) {
        if (!ctx->outs[i].claimed) {
            w->other.n++;
            w->other.bytes += ctx->outs[i].bytes;
        }
    }

    w->total.n += w->other.n;
    w->total.bytes += w->other.bytes + w->http2.bytes;

    for (si = 0; si < NGX_HTTP_MALLOC_TALLY_STATES; si++) {
        w->total.bytes += w->states[si].bytes;
    }
}


/* the allocator's total, beside what traffic holds of it */

static void
ngx_http_malloc_walk_allocated(ngx_http_malloc_walk_t *w, ngx_uint_t stats)
{
    ngx_http_malloc_je_stats_t  st;
    ngx_http_malloc_je_state_e  je;
    struct mallinfo2            mi;

    je = ngx_http_malloc_je_probe()->state;

    if (je == NGX_HTTP_MALLOC_JE_NOT_FOUND
        || je == NGX_HTTP_MALLOC_JE_NOT_ALLOCATOR)
    {
        mi = mallinfo2();
        w->allocated = mi.uordblks + mi.hblkhd;
        w->allocator = "glibc";

    } else if (stats && ngx_http_malloc_je_stats(&st) == 0) {
        w->allocated = st.allocated;
        w->allocator = "jemalloc";

    } else {
        /* jemalloc's figures would wait for the dump in progress */
        w->allocator = "jemalloc";
    }
}


/*
 * The connections nginx opened, by log, each with its pool; in room for
 * every connection, made at the worker's first walk and kept.
 */

static void
ngx_http_malloc_walk_outs(ngx_http_malloc_walk_ctx_t *ctx)
{
    ngx_uint_t         i, n;
    ngx_connection_t  *c;

    if (ctx->mmcf->traffic_outs == NULL) {
        ctx->mmcf->traffic_outs = ngx_palloc(ngx_cycle->pool,
                                      (ngx_cycle->connection_n + 1)
                                      * sizeof(ngx_http_malloc_walk_out_t));
    }

    ctx->outs = ctx->mmcf->traffic_outs;
    ctx->nouts = 0;

    if (ctx->outs == NULL) {
        return;
    }

    c = ngx_cycle->connections;
    n = 0;

    for (i = 0; i < ngx_cycle->connection_n; i++) {
        /* a channel's or an eventfd's: the cycle's pool, not traffic */

        if (c[i].fd == (ngx_socket_t) -1 || c[i].listening != NULL
            || c[i].pool == NULL || c[i].pool == ngx_cycle->pool
            || c[i].log == NULL)
        {
            continue;
        }

        ctx->outs[n].log = c[i].log;
        ctx->outs[n].bytes = ngx_http_malloc_walk_pool(c[i].pool);
        ctx->outs[n].claimed = 0;
        n++;
    }

    ngx_qsort(ctx->outs, n, sizeof(ngx_http_malloc_walk_out_t),
              ngx_http_malloc_walk_cmp);

    ctx->nouts = n;
}


static int ngx_libc_cdecl
ngx_http_malloc_walk_cmp(const void *a, const void *b)
{
    uintptr_t  x, y;

    x = (uintptr_t) ((ngx_http_malloc_walk_out_t *) a)->log;
    y = (uintptr_t) ((ngx_http_malloc_walk_out_t *) b)->log;

    return (x > y) - (x < y);
}


/* the upstreams of a client's log, claimed: counted once */

static uint64_t
ngx_http_malloc_walk_upstreams(ngx_http_malloc_walk_ctx_t *ctx,
    ngx_log_t *log)
{
    uint64_t    bytes;
    ngx_uint_t  lo, hi, mid, i;

    lo = 0;
    hi = ctx->nouts;

    while (lo < hi) {
        mid = lo + (hi - lo) / 2;

        if ((uintptr_t) ctx->outs[mid].log < (uintptr_t) log) {
            lo = mid + 1;

        } else {
            hi = mid;
        }
    }

    bytes = 0;

    for (i = lo; i < ctx->nouts && ctx->outs[i].log == log; i++) {
        if (!ctx->outs[i].claimed) {
            bytes += ctx->outs[i].bytes;
            ctx->outs[i].claimed = 1;
        }
    }

    return bytes;
}


static void
ngx_http_malloc_walk_http(ngx_http_malloc_walk_ctx_t *ctx,
    ngx_connection_t *c)
{
    uint64_t                 bytes;
    ngx_uint_t               state;
    ngx_http_log_ctx_t      *lctx;
    ngx_http_malloc_walk_t  *w;

    w = ctx->w;

    if (c->ssl) {
        w->tls++;
    }

    bytes = ngx_http_malloc_walk_pool(c->pool);

#if (NGX_HTTP_V2)

    /* an HTTP/2 connection's state begins with its connection */

    if (*(ngx_connection_t **) c->data == c) {
        ngx_http_malloc_walk_h2(ctx, c, bytes);
        return;
    }

#endif

    lctx = c->log->data;

    if (lctx != NULL && lctx->request != NULL) {
        ngx_http_malloc_walk_request(ctx, lctx->request,
                                     bytes + ngx_http_malloc_walk_upstreams(
                                                 ctx, c->log));
        w->total.n++;
        return;
    }

    state = c->requests ? NGX_HTTP_MALLOC_TALLY_KEEPALIVE
                        : NGX_HTTP_MALLOC_TALLY_WAITING;

    w->states[state].n++;
    w->states[state].bytes += bytes;
    w->total.n++;
}


#if (NGX_HTTP_V2)

static void
ngx_http_malloc_walk_h2(ngx_http_malloc_walk_ctx_t *ctx, ngx_connection_t *c,
    uint64_t bytes)
{
    ngx_uint_t                 i;
    ngx_http_v2_node_t        *node;
    ngx_http_request_t        *r;
    ngx_http_v2_srv_conf_t    *h2scf;
    ngx_http_v2_connection_t  *h2c;

    h2c = c->data;

    if (h2c->pool != NULL) {
        bytes += ngx_http_malloc_walk_pool(h2c->pool);
    }

    if (h2c->hpack.storage != NULL) {
        bytes += malloc_usable_size(h2c->hpack.storage);
    }

    ctx->w->http2.n++;
    ctx->w->http2.bytes += bytes;
    ctx->w->total.n++;

    if (h2c->streams_index == NULL || h2c->http_connection == NULL) {
        return;
    }

    /* as nginx indexes them: by the server the connection came to */

    h2scf = ngx_http_get_module_srv_conf(h2c->http_connection->conf_ctx,
                                         ngx_http_v2_module);

    for (i = 0; i <= h2scf->streams_index_mask; i++) {
        for (node = h2c->streams_index[i]; node; node = node->index) {
            if (node->stream == NULL || node->stream->request == NULL) {
                continue;
            }

            r = node->stream->request;

            ngx_http_malloc_walk_request(ctx, r,
                                         ngx_http_malloc_walk_upstreams(
                                             ctx, r->connection->log));
            ctx->w->streams++;
        }
    }
}

#endif


/* a request: its pool and what it was given ("bytes") */

static void
ngx_http_malloc_walk_request(ngx_http_malloc_walk_ctx_t *ctx,
    ngx_http_request_t *r, uint64_t bytes)
{
    ngx_int_t                     row;
    ngx_uint_t                    state;
    ngx_time_t                   *tp;
    ngx_http_malloc_walk_t       *w;
    ngx_http_malloc_walk_loc_t   *loc;
    ngx_http_malloc_tally_row_t  *to;
    ngx_http_malloc_tally_req_t  *req;

    w = ctx->w;

    bytes += ngx_http_malloc_walk_pool(r->pool);
    state = ngx_http_malloc_walk_state(r);

    w->states[state].n++;
    w->states[state].bytes += bytes;
    w->requests.n++;
    w->requests.bytes += bytes;

    row = ngx_http_malloc_walk_row(ctx->mmcf, r);

    if (row >= 0) {
        loc = ctx->mmcf->traffic_locs.elts;
        to = &loc[row].row;

    } else {
        to = &w->nowhere;
    }

    to->now.n++;
    to->now.bytes += bytes;

    req = ngx_http_malloc_tally_offer(&w->top, bytes);
    if (req == NULL) {
        return;
    }

    tp = ngx_timeofday();

    req->row = (int) row;
    req->state = (unsigned) state;
    req->http_version = (unsigned) r->http_version;
    req->age = (uint64_t) (tp->sec - r->start_sec) * 1000
               + tp->msec - r->start_msec;

    ngx_http_malloc_tally_text(r->method_name.data, r->method_name.len,
                               req->method, sizeof(req->method));
    ngx_http_malloc_tally_text(r->connection->addr_text.data,
                               r->connection->addr_text.len,
                               req->client, sizeof(req->client));
    (void) ngx_http_malloc_tally_path(r->unparsed_uri.data,
                                      r->unparsed_uri.len, req->path);
}


static ngx_uint_t
ngx_http_malloc_walk_state(ngx_http_request_t *r)
{
    /* r->lingering_close means "may need it"; the time is set as it starts */

    if (r->lingering_time != 0) {
        return NGX_HTTP_MALLOC_TALLY_CLOSING;
    }

    if (r->upstream && r->upstream->upgrade) {
        return NGX_HTTP_MALLOC_TALLY_UPGRADED;
    }

    if (ngx_http_malloc_walk_stream(r) ? r->request_line.len == 0
                  : r->http_state == NGX_HTTP_READING_REQUEST_STATE)
    {
        return NGX_HTTP_MALLOC_TALLY_READING;
    }

    /* a body being read: its rest is -1 before the first bytes come */

    if (r->reading_body
        || (r->request_body && r->request_body->rest != 0
            && (r->headers_in.content_length_n > 0
                || r->headers_in.chunked)))
    {
        return NGX_HTTP_MALLOC_TALLY_BODY;
    }

    if (r->header_sent) {
        return NGX_HTTP_MALLOC_TALLY_SENDING;
    }

    if (r->upstream) {
        return NGX_HTTP_MALLOC_TALLY_UPSTREAM;
    }

    return NGX_HTTP_MALLOC_TALLY_PROCESSING;
}


/* the walk's own time: how long it held the event loop */

static uint64_t
ngx_http_malloc_walk_us(void)
{
    struct timespec  ts;

    (void) clock_gettime(CLOCK_MONOTONIC, &ts);

    return (uint64_t) ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}


/* every block and every large allocation, at its usable size */

static uint64_t
ngx_http_malloc_walk_pool(ngx_pool_t *pool)
{
    uint64_t            bytes;
    ngx_pool_t         *p;
    ngx_pool_large_t   *l;

    if (pool == NULL) {
        return 0;
    }

    bytes = 0;

    for (p = pool; p; p = p->d.next) {
        bytes += malloc_usable_size(p);
    }

    for (l = pool->large; l; l = l->next) {
        if (l->alloc) {
            bytes += malloc_usable_size(l->alloc);
        }
    }

    return bytes;
}


json_t *
ngx_http_malloc_walk_json(ngx_http_malloc_main_conf_t *mmcf,
    ngx_http_malloc_walk_t *w)
{
    size_t   i;
    json_t  *j, *states, *o;

    j = json_object();
    states = json_object();

    if (j == NULL || states == NULL) {
        json_decref(j);
        json_decref(states);
        return NULL;
    }

    json_object_set_new(j, "allocator", json_string(w->allocator));
    json_object_set_new(j, "allocated", w->allocated
                                        ? json_integer(w->allocated)
                                        : json_null());
    json_object_set_new(j, "connections", json_integer(w->total.n));
    json_object_set_new(j, "bytes", json_integer(w->total.bytes));
    json_object_set_new(j, "requests", ngx_http_malloc_walk_sum(&w->requests));

    for (i = 0; i < NGX_HTTP_MALLOC_TALLY_STATES; i++) {
        json_object_set_new(states, ngx_http_malloc_tally_states[i],
                            ngx_http_malloc_walk_sum(&w->states[i]));
    }

    json_object_set_new(j, "states", states);

    o = ngx_http_malloc_walk_sum(&w->http2);
    json_object_set_new(o, "streams", json_integer(w->streams));
    json_object_set_new(j, "http2", o);
    json_object_set_new(j, "other", ngx_http_malloc_walk_sum(&w->other));
    json_object_set_new(j, "tls_connections", json_integer(w->tls));
    json_object_set_new(j, "quic_connections", json_integer(w->quic));
    json_object_set_new(j, "walk_us", json_integer(w->took));
    json_object_set_new(j, "locations",
                        ngx_http_malloc_walk_locations(mmcf, w));
    json_object_set_new(j, "top", ngx_http_malloc_walk_top(mmcf, w));

    return j;
}


/* the locations with requests in flight or finished, as published */

static json_t *
ngx_http_malloc_walk_locations(ngx_http_malloc_main_conf_t *mmcf,
    ngx_http_malloc_walk_t *w)
{
    size_t                          i, n, cap;
    json_t                         *locs;
    ngx_http_malloc_tally_named_t  *rows;

    locs = json_array();
    cap = mmcf->traffic_locs.nelts + 1;
    rows = ngx_alloc(cap * sizeof(ngx_http_malloc_tally_named_t),
                     ngx_cycle->log);

    if (locs == NULL || rows == NULL) {
        ngx_free(rows);
        return locs;
    }

    n = ngx_http_malloc_walk_named(mmcf, w, rows, cap);

    for (i = 0; i < n; i++) {
        if (rows[i].row.now.n != 0 || rows[i].row.done.count != 0) {
            json_array_append_new(locs,
                                  ngx_http_malloc_walk_row_json(
                                      rows[i].server, rows[i].location,
                                      &rows[i].row));
        }
    }

    ngx_free(rows);

    return locs;
}


/* the biggest requests, biggest first (the walk's top is used up) */

static json_t *
ngx_http_malloc_walk_top(ngx_http_malloc_main_conf_t *mmcf,
    ngx_http_malloc_walk_t *w)
{
    size_t                         i, n;
    json_t                        *top, *o;
    ngx_http_malloc_walk_loc_t    *loc;
    ngx_http_malloc_tally_req_t  **sorted, *req;
    char                           server[NGX_HTTP_MALLOC_TALLY_SERVER];
    char                           location[NGX_HTTP_MALLOC_TALLY_NAME];

    top = json_array();
    sorted = ngx_alloc((w->top.n + 1) * sizeof(ngx_http_malloc_tally_req_t *),
                       ngx_cycle->log);

    if (top == NULL || sorted == NULL) {
        ngx_free(sorted);
        return top;
    }

    loc = mmcf->traffic_locs.elts;
    n = ngx_http_malloc_tally_sorted(&w->top, sorted);

    for (i = 0; i < n; i++) {
        req = sorted[i];

        if (req->row >= 0) {
            ngx_http_malloc_walk_names(&loc[req->row], server, sizeof(server),
                                       location, sizeof(location));

        } else {
            server[0] = '\0';
            ngx_cpystrn((u_char *) location, (u_char *) "(other)",
                        sizeof(location));
        }

        o = json_object();
        json_object_set_new(o, "bytes", json_integer(req->bytes));
        json_object_set_new(o, "state",
                            json_string(
                                ngx_http_malloc_tally_states[req->state]));
        json_object_set_new(o, "method", json_string(req->method));
        json_object_set_new(o, "server", json_string(server));
        json_object_set_new(o, "location", json_string(location));
        json_object_set_new(o, "path", json_string(req->path));
        json_object_set_new(o, "client", json_string(req->client));
        json_object_set_new(o, "age_ms", json_integer(req->age));
        json_object_set_new(o, "http_version",
                            json_integer(req->http_version));
        json_array_append_new(top, o);
    }

    ngx_free(sorted);

    return top;
}


static json_t *
ngx_http_malloc_walk_row_json(const char *server, const char *location,
    ngx_http_malloc_tally_row_t *row)
{
    json_t  *o;

    o = json_object();
    json_object_set_new(o, "server", json_string(server));
    json_object_set_new(o, "location", json_string(location));
    json_object_set_new(o, "requests", json_integer(row->now.n));
    json_object_set_new(o, "bytes", json_integer(row->now.bytes));
    json_object_set_new(o, "finished", ngx_http_malloc_walk_done(&row->done));

    return o;
}


static json_t *
ngx_http_malloc_walk_sum(ngx_http_malloc_tally_sum_t *sum)
{
    json_t  *o;

    o = json_object();
    json_object_set_new(o, "n", json_integer(sum->n));
    json_object_set_new(o, "bytes", json_integer(sum->bytes));

    return o;
}


static json_t *
ngx_http_malloc_walk_done(ngx_http_malloc_tally_done_t *d)
{
    size_t   i;
    json_t  *o, *b;

    o = json_object();
    b = json_array();

    for (i = 0; i < NGX_HTTP_MALLOC_TALLY_BUCKETS; i++) {
        json_array_append_new(b, json_integer(d->buckets[i]));
    }

    json_object_set_new(o, "count", json_integer(d->count));
    json_object_set_new(o, "sum", json_integer(d->sum));
    json_object_set_new(o, "max", json_integer(d->max));
    json_object_set_new(o, "buckets", b);

    return o;
}


/*
 * A location as written in the configuration: "= /x", "^~ /x", "~ re",
 * "@name", "/x"; "" at the server's level (no location chosen yet).
 * Printable ASCII, so that JSON and the metrics' labels can take it.
 */

void
ngx_http_malloc_walk_names(ngx_http_malloc_walk_loc_t *loc, char *server,
    size_t ssize, char *location, size_t size)
{
    size_t                     pre;
    const char                *kind;
    ngx_http_core_loc_conf_t  *clcf;

    ngx_http_malloc_tally_text(loc->cscf->server_name.data,
                               loc->cscf->server_name.len, server, ssize);
    clcf = loc->clcf;

    kind = clcf->exact_match ? "= "
           : clcf->noregex ? "^~ "
#if (NGX_PCRE)
           : clcf->regex ? "~ "
#endif
           : "";

    pre = ngx_strlen(kind);

    if (clcf->name.len == 0 || size <= pre) {
        location[0] = '\0';
        return;
    }

    ngx_memcpy(location, kind, pre);
    ngx_http_malloc_tally_text(clcf->name.data, clcf->name.len,
                               location + pre, size - pre);
}



size_t
ngx_http_malloc_walk_named(ngx_http_malloc_main_conf_t *mmcf,
    ngx_http_malloc_walk_t *w, ngx_http_malloc_tally_named_t *rows,
    size_t cap)
{
    size_t                       i, n;
    ngx_http_malloc_walk_loc_t  *loc;

    loc = mmcf->traffic_locs.elts;
    n = 0;

    for (i = 0; i < mmcf->traffic_locs.nelts && n < cap; i++) {
        ngx_http_malloc_walk_names(&loc[i], rows[n].server,
                                   sizeof(rows[n].server), rows[n].location,
                                   sizeof(rows[n].location));
        rows[n++].row = loc[i].row;
    }

    if (n < cap && (w->nowhere.now.n != 0 || w->nowhere.done.count != 0)) {
        rows[n].server[0] = '\0';
        ngx_cpystrn((u_char *) rows[n].location, (u_char *) "(other)",
                    sizeof(rows[n].location));
        rows[n++].row = w->nowhere;
    }

    return n;
}


/* GET traffic's part of this worker, as JSON into "fd"; 0 or an errno */

int
ngx_http_malloc_walk_report(ngx_http_malloc_main_conf_t *mmcf, size_t top,
    ngx_uint_t stats, int fd)
{
    int                      err;
    char                    *text;
    json_t                  *j;
    ngx_pool_t              *pool;
    ngx_http_malloc_walk_t   w;

    pool = ngx_create_pool(NGX_DEFAULT_POOL_SIZE, ngx_cycle->log);
    if (pool == NULL) {
        return NGX_ENOMEM;
    }

    j = NULL;
    err = NGX_ENOMEM;

    if (ngx_http_malloc_walk(mmcf, &w, top, stats, pool) == NGX_OK) {
        j = ngx_http_malloc_walk_json(mmcf, &w);
    }

    /* in one write: json_dumpfd() writes token by token */

    text = (j != NULL) ? json_dumps(j, JSON_COMPACT) : NULL;
    json_decref(j);

    if (text != NULL) {
        err = ngx_http_malloc_walk_write(fd, text, ngx_strlen(text));
        free(text);
    }

    ngx_destroy_pool(pool);

    return err;
}


/* all of "text", or an errno */

static int
ngx_http_malloc_walk_write(int fd, const char *text, size_t len)
{
    ssize_t  n;

    while (len > 0) {
        n = write(fd, text, len);

        if (n == -1) {
            if (ngx_errno == NGX_EINTR) {
                continue;
            }

            return ngx_errno;
        }

        text += n;
        len -= n;
    }

    return 0;
}


/* malloc_traffic on: the figures GET stats and metrics read, published */

void
ngx_http_malloc_walk_publish(ngx_http_malloc_main_conf_t *mmcf,
    ngx_log_t *log)
{
    size_t                          cap;
    ngx_http_malloc_walk_t          w;
    ngx_http_malloc_tally_table_t  *t;

    /* room for every row there can be, made once: nothing each second */

    cap = mmcf->traffic_locs.nalloc + 1;

    if (mmcf->traffic_table == NULL) {
        mmcf->traffic_table = ngx_pcalloc(ngx_cycle->pool,
                                  ngx_http_malloc_tally_table_size(cap));
    }

    t = mmcf->traffic_table;

    if (t == NULL || ngx_http_malloc_walk(mmcf, &w, 0, 1, NULL) != NGX_OK) {
        return;
    }

    t->time = ngx_current_msec;
    t->total = w.total;
    t->requests = w.requests;
    t->allocated = w.allocated;
    t->n = ngx_http_malloc_walk_named(mmcf, &w, t->rows, cap);

    ngx_http_malloc_board_publish_traffic(mmcf, t, log);
}
