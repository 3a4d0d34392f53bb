
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * The admin location: a table of endpoints ({name, which, methods, write,
 * the methods that need jemalloc, body limit, the type and download name
 * of the data it answers, handler}) and what every request goes through
 * before its handler: the cross-origin guard, routing below the
 * location's prefix, methods, write=on and the body's size, and jemalloc.
 * Every answer, errors included, is JSON.  The request's life (its body,
 * its count, its answer) is request.c's once it is routed.
 *
 * Owns: the endpoint table.  Calls: request, the endpoint files
 * (commands, profile, stats, traffic, snapshot, ui), reply, and the pure
 * core (origin, jemalloc).
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include <jansson.h>

#include "ngx_http_malloc_module.h"
#include "ngx_http_malloc_request.h"
#include "ngx_http_malloc_reply.h"
#include "ngx_http_malloc_commands.h"
#include "ngx_http_malloc_profile.h"
#include "ngx_http_malloc_stats.h"
#include "ngx_http_malloc_traffic.h"
#include "ngx_http_malloc_snapshot.h"
#include "ngx_http_malloc_ui.h"
#include "ngx_http_malloc_origin.h"
#include "ngx_http_malloc_jemalloc.h"


typedef struct {
    ngx_str_t                      name;
    ngx_uint_t                     ep;         /* ngx_http_malloc_ep_e */
    ngx_uint_t                     methods;
    ngx_str_t                      allow;
    ngx_uint_t                     write;      /* POST changes state */
    ngx_uint_t                     jemalloc;   /* the methods that need
                                                  jemalloc usable */
    size_t                         body_max;
    const char                    *type;       /* of data; NULL: JSON */
    const char                    *download;   /* a file name to save as */
    ngx_http_malloc_endpoint_pt    handler;    /* body NULL: GET, HEAD */
} ngx_http_malloc_endpoint_t;


static ngx_int_t ngx_http_malloc_dispatch(ngx_http_request_t *r,
    ngx_http_malloc_job_t *job, u_char *body, size_t len);
static ngx_int_t ngx_http_malloc_route(ngx_http_request_t *r,
    ngx_str_t *ep);
static ngx_int_t ngx_http_malloc_refuse(ngx_http_request_t *r,
    ngx_uint_t i, ngx_str_t *ep, ngx_uint_t trusted);
static ngx_int_t ngx_http_malloc_guard(ngx_http_request_t *r,
    ngx_uint_t *trusted, ngx_int_t *sent);
static ngx_http_malloc_header_t ngx_http_malloc_header(ngx_http_request_t *r,
    const char *name, size_t len);
static ngx_int_t ngx_http_malloc_preflight(ngx_http_request_t *r,
    ngx_str_t *methods);


/* routed by name, in any order; "ep" tells the endpoint file which */

static ngx_http_malloc_endpoint_t  ngx_http_malloc_endpoints[] = {

    { ngx_string(""), NGX_HTTP_MALLOC_EP_INDEX,
      NGX_HTTP_GET|NGX_HTTP_HEAD, ngx_string("GET, HEAD"),
      0, 0, 0,
      NULL, NULL,
      ngx_http_malloc_state },

    { ngx_string("prof_active"), NGX_HTTP_MALLOC_EP_PROF_ACTIVE,
      NGX_HTTP_GET|NGX_HTTP_HEAD|NGX_HTTP_POST, ngx_string("GET, HEAD, POST"),
      1, NGX_HTTP_POST, NGX_HTTP_MALLOC_BODY_MAX,
      NULL, NULL,
      ngx_http_malloc_prof_active },

    { ngx_string("prof_dump"), NGX_HTTP_MALLOC_EP_PROF_DUMP,
      NGX_HTTP_POST, ngx_string("POST"),
      1, NGX_HTTP_POST, NGX_HTTP_MALLOC_BODY_MAX,
      NULL, NULL,
      ngx_http_malloc_prof_dump },

    { ngx_string("heap"), NGX_HTTP_MALLOC_EP_HEAP,
      NGX_HTTP_GET|NGX_HTTP_HEAD, ngx_string("GET, HEAD"),
      0, NGX_HTTP_GET|NGX_HTTP_HEAD, 0,
      "text/plain", "nginx.heap",
      ngx_http_malloc_profile },

    { ngx_string("pprof/heap"), NGX_HTTP_MALLOC_EP_PPROF_HEAP,
      NGX_HTTP_GET|NGX_HTTP_HEAD, ngx_string("GET, HEAD"),
      0, NGX_HTTP_GET|NGX_HTTP_HEAD, 0,
      "text/plain", NULL,
      ngx_http_malloc_profile },

    { ngx_string("pprof/heap.pb.gz"), NGX_HTTP_MALLOC_EP_PPROF_PROTO,
      NGX_HTTP_GET|NGX_HTTP_HEAD, ngx_string("GET, HEAD"),
      0, NGX_HTTP_GET|NGX_HTTP_HEAD, 0,
      "application/octet-stream", "nginx-heap.pb.gz",
      ngx_http_malloc_profile },

    /* jeprof posts every address of a profile at once */
    { ngx_string("pprof/symbol"), NGX_HTTP_MALLOC_EP_PPROF_SYMBOL,
      NGX_HTTP_GET|NGX_HTTP_HEAD|NGX_HTTP_POST, ngx_string("GET, HEAD, POST"),
      0, 0, NGX_HTTP_MALLOC_SYMBOL_BODY_MAX,
      "text/plain", NULL,
      ngx_http_malloc_symbol },

    { ngx_string("pprof/cmdline"), NGX_HTTP_MALLOC_EP_PPROF_CMDLINE,
      NGX_HTTP_GET|NGX_HTTP_HEAD, ngx_string("GET, HEAD"),
      0, 0, 0,
      "text/plain", NULL,
      ngx_http_malloc_cmdline },

    { ngx_string("stats"), NGX_HTTP_MALLOC_EP_STATS,
      NGX_HTTP_GET|NGX_HTTP_HEAD, ngx_string("GET, HEAD"),
      0, NGX_HTTP_GET|NGX_HTTP_HEAD, 0,
      NULL, NULL,
      ngx_http_malloc_stats },

    { ngx_string("metrics"), NGX_HTTP_MALLOC_EP_METRICS,
      NGX_HTTP_GET|NGX_HTTP_HEAD, ngx_string("GET, HEAD"),
      0, NGX_HTTP_GET|NGX_HTTP_HEAD, 0,
      "text/plain; version=0.0.4; charset=utf-8", NULL,
      ngx_http_malloc_metrics },

    { ngx_string("traffic"), NGX_HTTP_MALLOC_EP_TRAFFIC,
      NGX_HTTP_GET|NGX_HTTP_HEAD, ngx_string("GET, HEAD"),
      0, 0, 0,
      NULL, NULL,
      ngx_http_malloc_traffic },

    { ngx_string("prof_reset"), NGX_HTTP_MALLOC_EP_PROF_RESET,
      NGX_HTTP_POST, ngx_string("POST"),
      1, NGX_HTTP_POST, NGX_HTTP_MALLOC_BODY_MAX,
      NULL, NULL,
      ngx_http_malloc_prof_reset },

    { ngx_string("purge"), NGX_HTTP_MALLOC_EP_PURGE,
      NGX_HTTP_POST, ngx_string("POST"),
      1, NGX_HTTP_POST, NGX_HTTP_MALLOC_BODY_MAX,
      NULL, NULL,
      ngx_http_malloc_purge },

    { ngx_string("snapshots"), NGX_HTTP_MALLOC_EP_SNAPSHOTS,
      NGX_HTTP_GET|NGX_HTTP_HEAD, ngx_string("GET, HEAD"),
      0, 0, 0,
      NULL, NULL,
      ngx_http_malloc_snapshot_index },

    { ngx_string("snapshots/"), NGX_HTTP_MALLOC_EP_SNAPSHOT_FILE,
      NGX_HTTP_GET|NGX_HTTP_HEAD, ngx_string("GET, HEAD"),
      0, 0, 0,
      NULL, NULL,
      ngx_http_malloc_snapshot_file },

    /* the heap viewer's form of a profile */
    { ngx_string("pprof/heap.json"), NGX_HTTP_MALLOC_EP_PPROF_JSON,
      NGX_HTTP_GET|NGX_HTTP_HEAD, ngx_string("GET, HEAD"),
      0, NGX_HTTP_GET|NGX_HTTP_HEAD, 0,
      "application/json", NULL,
      ngx_http_malloc_profile },

    { ngx_string("ui"), NGX_HTTP_MALLOC_EP_UI,
      NGX_HTTP_GET|NGX_HTTP_HEAD, ngx_string("GET, HEAD"),
      0, 0, 0,
      NULL, NULL,
      ngx_http_malloc_ui },

    { ngx_string("ui/"), NGX_HTTP_MALLOC_EP_UI_FILE,
      NGX_HTTP_GET|NGX_HTTP_HEAD, ngx_string("GET, HEAD"),
      0, 0, 0,
      NULL, NULL,
      ngx_http_malloc_ui },

    { ngx_null_string, 0, 0, ngx_null_string, 0, 0, 0, NULL, NULL, NULL }
};


ngx_int_t
ngx_http_malloc_handler(ngx_http_request_t *r)
{
    ngx_int_t                    rc;
    ngx_str_t                    ep;
    ngx_uint_t                   i, trusted;
    ngx_http_malloc_job_t       *job;
    ngx_http_malloc_endpoint_t  *e;
    ngx_http_malloc_loc_conf_t  *mlcf;

    mlcf = ngx_http_get_module_loc_conf(r, ngx_http_malloc_module);

    /* before anything is routed, read or done */

    if (ngx_http_malloc_guard(r, &trusted, &rc) != NGX_OK) {
        return rc;
    }

    i = ngx_http_malloc_route(r, &ep);
    e = &ngx_http_malloc_endpoints[i];

    ngx_log_debug2(NGX_LOG_DEBUG_HTTP, r->connection->log, 0,
                   "malloc admin: endpoint \"%V\", method %ui", &ep,
                   r->method);

    if (e->name.data == NULL || !(r->method & e->methods)
        || (r->method == NGX_HTTP_POST && e->write && !mlcf->write)
        || (r->method == NGX_HTTP_POST
            && r->headers_in.content_length_n > (off_t) e->body_max))
    {
        return ngx_http_malloc_refuse(r, i, &ep, trusted);
    }

    job = ngx_http_malloc_request_create(r);
    if (job == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    job->endpoint = e->ep;
    job->row = i;
    job->type = e->type;
    job->download = e->download;
    job->rest.data = ep.data + e->name.len;
    job->rest.len = ep.len - e->name.len;

    /* its body, its endpoint, its answer: request.c's from here on */
    return ngx_http_malloc_request_start(r, e->body_max,
                                         ngx_http_malloc_dispatch);
}


/*
 * The endpoint's handler, once the request is routed and its body read:
 * what the table says it needs comes first.
 */

static ngx_int_t
ngx_http_malloc_dispatch(ngx_http_request_t *r, ngx_http_malloc_job_t *job,
    u_char *body, size_t len)
{
    ngx_http_malloc_endpoint_t  *e;

    e = &ngx_http_malloc_endpoints[job->row];

    if ((r->method & e->jemalloc)
        && ngx_http_malloc_je_probe()->state != NGX_HTTP_MALLOC_JE_OK)
    {
        return ngx_http_malloc_unusable(r, NULL);
    }

    return e->handler(r, job, body, len);
}


/* the endpoint's index in the table; ep gets the URI below the location */

static ngx_int_t
ngx_http_malloc_route(ngx_http_request_t *r, ngx_str_t *ep)
{
    ngx_uint_t                 i;
    ngx_str_t                 *name;
    ngx_http_core_loc_conf_t  *clcf;

    clcf = ngx_http_get_module_loc_conf(r, ngx_http_core_module);

    *ep = r->uri;

    if (ep->len >= clcf->name.len
        && ngx_strncmp(ep->data, clcf->name.data, clcf->name.len) == 0)
    {
        ep->data += clcf->name.len;
        ep->len -= clcf->name.len;

        /* "location /malloc" matches "/mallocfoo": not an endpoint */

        if (ep->len > 0 && clcf->name.len > 0
            && clcf->name.data[clcf->name.len - 1] != '/')
        {
            if (ep->data[0] != '/') {
                *ep = r->uri;

            } else {
                ep->data++;
                ep->len--;
            }
        }
    }

    for (i = 0; ngx_http_malloc_endpoints[i].name.data != NULL; i++) {
        name = &ngx_http_malloc_endpoints[i].name;

        if (ep->len == name->len
            && ngx_strncmp(ep->data, name->data, ep->len) == 0)
        {
            break;
        }

        /* "snapshots/<name>", "ui/<file>": matched by their prefix */

        if (name->len > 0 && name->data[name->len - 1] == '/'
            && ep->len > name->len
            && ngx_strncmp(ep->data, name->data, name->len) == 0)
        {
            break;
        }
    }

    return i;
}


/* no such endpoint, a method it does not take, a write or body refused */

static ngx_int_t
ngx_http_malloc_refuse(ngx_http_request_t *r, ngx_uint_t i, ngx_str_t *ep,
    ngx_uint_t trusted)
{
    ngx_int_t                    rc;
    ngx_str_t                   *allow;
    ngx_http_malloc_endpoint_t  *e;
    ngx_http_core_loc_conf_t    *clcf;
    ngx_http_malloc_loc_conf_t  *mlcf;

    clcf = ngx_http_get_module_loc_conf(r, ngx_http_core_module);
    mlcf = ngx_http_get_module_loc_conf(r, ngx_http_malloc_module);
    e = &ngx_http_malloc_endpoints[i];

    rc = ngx_http_discard_request_body(r);
    if (rc != NGX_OK) {
        return rc;
    }

    if (e->name.data == NULL) {
        return ngx_http_malloc_error(r, NGX_HTTP_NOT_FOUND, "not_found",
                   "no endpoint \"%V\" here: see docs/api.md, "
                   "or GET %V for the module's state", ep, &clcf->name);
    }

    allow = &e->allow;

    if (!(r->method & e->methods)) {

        if (trusted && r->method == NGX_HTTP_OPTIONS) {
            return ngx_http_malloc_preflight(r, allow);
        }

        if (ngx_http_malloc_add_header(r, "Allow", allow) != NGX_OK) {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }

        return ngx_http_malloc_error(r, NGX_HTTP_NOT_ALLOWED,
                                     "method_not_allowed",
                                     "\"%V\" takes %V", &r->uri, allow);
    }

    if (e->write && !mlcf->write) {
        return ngx_http_malloc_error(r, NGX_HTTP_FORBIDDEN, "write_disabled",
                   "this admin location is read-only: changes need "
                   "\"malloc_admin write=on;\"");
    }

    return ngx_http_malloc_error(r, NGX_HTTP_REQUEST_ENTITY_TOO_LARGE,
                                 "body_too_large",
                                 "request bodies are limited to %uz "
                                 "bytes here", e->body_max);
}


/*
 * Refuses requests that a web page of another origin made the browser
 * send (see ngx_http_malloc_origin.c); lets the trusted origins read the
 * answers.  NGX_OK to go on; else the request is answered and *sent is
 * what to return.
 */

static ngx_int_t
ngx_http_malloc_guard(ngx_http_request_t *r, ngx_uint_t *trusted,
    ngx_int_t *sent)
{
    ngx_int_t                    rc;
    ngx_str_t                    value;
    const char                  *scheme;
    ngx_http_malloc_header_t     site, origin, host;
    ngx_http_malloc_loc_conf_t  *mlcf;
    char                         err[NGX_HTTP_MALLOC_ORIGIN_ERR_LEN];

    mlcf = ngx_http_get_module_loc_conf(r, ngx_http_malloc_module);

    *trusted = 0;

    site = ngx_http_malloc_header(r, "Sec-Fetch-Site",
                                  sizeof("Sec-Fetch-Site") - 1);
    origin = ngx_http_malloc_header(r, "Origin", sizeof("Origin") - 1);

    host.data = NULL;
    host.len = 0;

    if (r->headers_in.host != NULL) {
        host.data = r->headers_in.host->value.data;
        host.len = r->headers_in.host->value.len;
    }

    /*
     * as nginx's $scheme gives it; behind a proxy that ends TLS it is
     * http (docs/security.md: trust the https origin there)
     */

    scheme = "http";

#if (NGX_HTTP_SSL)
    if (r->connection->ssl != NULL) {
        scheme = "https";
    }
#endif

    rc = ngx_http_malloc_origin_check(site, origin, host, scheme,
                                      mlcf->trusted, err);

    *sent = NGX_HTTP_INTERNAL_SERVER_ERROR;

    if (rc == NGX_HTTP_MALLOC_ORIGIN_OK) {
        return NGX_OK;
    }

    if (rc == NGX_HTTP_MALLOC_ORIGIN_TRUSTED) {
        *trusted = 1;

        value.data = (u_char *) origin.data;
        value.len = origin.len;

        if (ngx_http_malloc_add_header(r, "Access-Control-Allow-Origin",
                                       &value)
            != NGX_OK)
        {
            return NGX_ERROR;
        }

        ngx_str_set(&value, "Origin");

        if (ngx_http_malloc_add_header(r, "Vary", &value) != NGX_OK) {
            return NGX_ERROR;
        }

        return NGX_OK;
    }

    ngx_log_error(NGX_LOG_INFO, r->connection->log, 0,
                  "malloc admin %s", err);

    rc = ngx_http_discard_request_body(r);
    if (rc != NGX_OK) {
        *sent = rc;
        return NGX_DECLINED;
    }

    *sent = ngx_http_malloc_error(r, NGX_HTTP_FORBIDDEN, "cross_origin",
                                  "%s (see malloc_trusted_origin in "
                                  "docs/directives.md)", err);
    return NGX_DECLINED;
}


/* the first header of that name */

static ngx_http_malloc_header_t
ngx_http_malloc_header(ngx_http_request_t *r, const char *name, size_t len)
{
    ngx_uint_t                 i;
    ngx_list_part_t           *part;
    ngx_table_elt_t           *h;
    ngx_http_malloc_header_t   found;

    found.data = NULL;
    found.len = 0;

    part = &r->headers_in.headers.part;
    h = part->elts;

    for (i = 0; /* void */ ; i++) {

        if (i >= part->nelts) {
            if (part->next == NULL) {
                break;
            }

            part = part->next;
            h = part->elts;
            i = 0;
        }

        if (h[i].key.len == len
            && ngx_strncasecmp(h[i].key.data, (u_char *) name, len) == 0)
        {
            found.data = h[i].value.data;
            found.len = h[i].value.len;
            break;
        }
    }

    return found;
}


/* a trusted origin asks whether it may send a request that is not simple */

static ngx_int_t
ngx_http_malloc_preflight(ngx_http_request_t *r, ngx_str_t *methods)
{
    ngx_int_t  rc;
    ngx_str_t  value;

    rc = ngx_http_discard_request_body(r);
    if (rc != NGX_OK) {
        return rc;
    }

    ngx_str_set(&value, "Content-Type");

    if (ngx_http_malloc_add_header(r, "Access-Control-Allow-Methods",
                                   methods)
            != NGX_OK
        || ngx_http_malloc_add_header(r, "Access-Control-Allow-Headers",
                                      &value)
           != NGX_OK)
    {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ngx_str_set(&value, "600");

    if (ngx_http_malloc_add_header(r, "Access-Control-Max-Age", &value)
        != NGX_OK)
    {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    r->headers_out.status = NGX_HTTP_NO_CONTENT;
    r->headers_out.content_length_n = 0;
    r->header_only = 1;

    return ngx_http_send_header(r);
}
