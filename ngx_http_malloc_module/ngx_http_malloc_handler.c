
/*
 * The admin location: routing below the location's prefix, methods,
 * bodies, and JSON responses.  Every answer, errors included, is JSON.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include <nginx.h>

#include <jansson.h>

#include "ngx_http_malloc_module.h"
#include "ngx_http_malloc_jemalloc.h"
#include "ngx_http_malloc_json.h"
#include "ngx_http_malloc_path.h"
#include "ngx_http_malloc_dump.h"
#include "ngx_http_malloc_origin.h"


typedef struct {
    ngx_str_t                   name;
    ngx_uint_t                  methods;
    ngx_str_t                   allow;
    ngx_uint_t                  write;      /* POST changes state */
    size_t                      body_max;
} ngx_http_malloc_endpoint_t;


static ngx_int_t ngx_http_malloc_guard(ngx_http_request_t *r,
    ngx_uint_t *trusted);
static ngx_http_malloc_header_t ngx_http_malloc_header(ngx_http_request_t *r,
    const char *name, size_t len);
static ngx_int_t ngx_http_malloc_preflight(ngx_http_request_t *r,
    ngx_str_t *methods);
static ngx_int_t ngx_http_malloc_add_header(ngx_http_request_t *r,
    const char *key, ngx_str_t *value);
static ngx_int_t ngx_http_malloc_get(ngx_http_request_t *r,
    ngx_http_malloc_ctx_t *ctx);
static void ngx_http_malloc_body_handler(ngx_http_request_t *r);
static ngx_int_t ngx_http_malloc_read_body(ngx_http_request_t *r,
    u_char *buf, size_t *len);
static ngx_int_t ngx_http_malloc_post_active(ngx_http_request_t *r,
    ngx_http_malloc_ctx_t *ctx, u_char *body, size_t len);
static ngx_int_t ngx_http_malloc_post_dump(ngx_http_request_t *r,
    ngx_http_malloc_ctx_t *ctx, u_char *body, size_t len);
static ngx_int_t ngx_http_malloc_post_reset(ngx_http_request_t *r,
    ngx_http_malloc_ctx_t *ctx, u_char *body, size_t len);
static ngx_int_t ngx_http_malloc_check_names(ngx_http_request_t *r,
    ngx_http_malloc_ctx_t *ctx, ngx_int_t *sent);
static ngx_int_t ngx_http_malloc_check_name(ngx_http_request_t *r,
    ngx_http_malloc_ctx_t *ctx, ngx_pid_t pid, ngx_int_t *sent);
static off_t ngx_http_malloc_dump_used(ngx_http_malloc_main_conf_t *mmcf);
static ngx_int_t ngx_http_malloc_start(ngx_http_request_t *r,
    ngx_http_malloc_ctx_t *ctx, ngx_uint_t active);
static void ngx_http_malloc_wait_handler(ngx_event_t *ev);
static ngx_int_t ngx_http_malloc_check(ngx_http_request_t *r,
    ngx_http_malloc_ctx_t *ctx);
static void ngx_http_malloc_unqueue(ngx_http_malloc_ctx_t *ctx);
static void ngx_http_malloc_cleanup(void *data);
static json_t *ngx_http_malloc_worker_json(ngx_http_request_t *r,
    ngx_http_malloc_ctx_t *ctx, ngx_http_malloc_answer_t *a,
    ngx_uint_t *status, json_t **error);
static json_t *ngx_http_malloc_workers_json(ngx_http_request_t *r,
    ngx_uint_t seq);
static const char *ngx_http_malloc_rc_text(ngx_int_t rc);
static json_t *ngx_http_malloc_remaining_json(
    ngx_http_malloc_main_conf_t *mmcf);
static json_t *ngx_http_malloc_jemalloc_json(void);
static ngx_int_t ngx_http_malloc_unusable_json(ngx_http_request_t *r,
    json_t *json);
static json_t *ngx_http_malloc_error_json(ngx_uint_t status,
    const char *code, const char *text);


/* this worker's requests waiting for answers, woken by its eventfd */
static ngx_queue_t  ngx_http_malloc_waiting;
static ngx_uint_t   ngx_http_malloc_waiting_init;


/* in the order of ngx_http_malloc_ep_e */

static ngx_http_malloc_endpoint_t  ngx_http_malloc_endpoints[] = {

    { ngx_string(""),
      NGX_HTTP_GET|NGX_HTTP_HEAD,
      ngx_string("GET, HEAD"), 0, 0 },

    { ngx_string("prof_active"),
      NGX_HTTP_GET|NGX_HTTP_HEAD|NGX_HTTP_POST,
      ngx_string("GET, HEAD, POST"), 1, NGX_HTTP_MALLOC_BODY_MAX },

    { ngx_string("prof_dump"),
      NGX_HTTP_POST,
      ngx_string("POST"), 1, NGX_HTTP_MALLOC_BODY_MAX },

    { ngx_string("heap"),
      NGX_HTTP_GET|NGX_HTTP_HEAD,
      ngx_string("GET, HEAD"), 0, 0 },

    { ngx_string("pprof/heap"),
      NGX_HTTP_GET|NGX_HTTP_HEAD,
      ngx_string("GET, HEAD"), 0, 0 },

    { ngx_string("pprof/heap.pb.gz"),
      NGX_HTTP_GET|NGX_HTTP_HEAD,
      ngx_string("GET, HEAD"), 0, 0 },

    /* jeprof posts every address of a profile at once */
    { ngx_string("pprof/symbol"),
      NGX_HTTP_GET|NGX_HTTP_HEAD|NGX_HTTP_POST,
      ngx_string("GET, HEAD, POST"), 0, NGX_HTTP_MALLOC_SYMBOL_BODY_MAX },

    { ngx_string("pprof/cmdline"),
      NGX_HTTP_GET|NGX_HTTP_HEAD,
      ngx_string("GET, HEAD"), 0, 0 },

    { ngx_string("stats"),
      NGX_HTTP_GET|NGX_HTTP_HEAD,
      ngx_string("GET, HEAD"), 0, 0 },

    { ngx_string("metrics"),
      NGX_HTTP_GET|NGX_HTTP_HEAD,
      ngx_string("GET, HEAD"), 0, 0 },

    { ngx_string("prof_reset"),
      NGX_HTTP_POST,
      ngx_string("POST"), 1, NGX_HTTP_MALLOC_BODY_MAX },

    { ngx_string("purge"),
      NGX_HTTP_POST,
      ngx_string("POST"), 1, NGX_HTTP_MALLOC_BODY_MAX },

    { ngx_string("snapshots"),
      NGX_HTTP_GET|NGX_HTTP_HEAD,
      ngx_string("GET, HEAD"), 0, 0 },

    /* "snapshots/<name>": matched by its prefix */
    { ngx_string("snapshots/"),
      NGX_HTTP_GET|NGX_HTTP_HEAD,
      ngx_string("GET, HEAD"), 0, 0 },

    { ngx_null_string, 0, ngx_null_string, 0, 0 }
};


ngx_int_t
ngx_http_malloc_handler(ngx_http_request_t *r)
{
    ngx_int_t                    rc;
    ngx_str_t                    ep, *allow;
    ngx_uint_t                   i, trusted;
    ngx_http_malloc_ctx_t       *ctx;
    ngx_http_core_loc_conf_t    *clcf;
    ngx_http_malloc_loc_conf_t  *mlcf;

    clcf = ngx_http_get_module_loc_conf(r, ngx_http_core_module);
    mlcf = ngx_http_get_module_loc_conf(r, ngx_http_malloc_module);

    /* before anything is routed, read or done */

    rc = ngx_http_malloc_guard(r, &trusted);
    if (rc != NGX_DECLINED) {
        return rc;
    }

    ep = r->uri;

    if (ep.len >= clcf->name.len
        && ngx_strncmp(ep.data, clcf->name.data, clcf->name.len) == 0)
    {
        ep.data += clcf->name.len;
        ep.len -= clcf->name.len;

        /* "location /malloc" matches "/mallocfoo": not an endpoint */

        if (ep.len > 0 && clcf->name.len > 0
            && clcf->name.data[clcf->name.len - 1] != '/')
        {
            if (ep.data[0] != '/') {
                ep = r->uri;

            } else {
                ep.data++;
                ep.len--;
            }
        }
    }

    for (i = 0; ngx_http_malloc_endpoints[i].name.data != NULL; i++) {
        if (ep.len == ngx_http_malloc_endpoints[i].name.len
            && ngx_strncmp(ep.data, ngx_http_malloc_endpoints[i].name.data,
                           ep.len) == 0)
        {
            break;
        }

        if (i == NGX_HTTP_MALLOC_EP_SNAPSHOT_FILE
            && ep.len > ngx_http_malloc_endpoints[i].name.len
            && ngx_strncmp(ep.data, ngx_http_malloc_endpoints[i].name.data,
                           ngx_http_malloc_endpoints[i].name.len) == 0)
        {
            break;
        }
    }

    if (ngx_http_malloc_endpoints[i].name.data == NULL
        || !(r->method & ngx_http_malloc_endpoints[i].methods))
    {
        rc = ngx_http_discard_request_body(r);
        if (rc != NGX_OK) {
            return rc;
        }

        if (ngx_http_malloc_endpoints[i].name.data == NULL) {
            return ngx_http_malloc_error(r, NGX_HTTP_NOT_FOUND, "not_found",
                       "no endpoint \"%V\" here: see docs/api.md, "
                       "or GET %V for the module's state", &ep, &clcf->name);
        }

        allow = &ngx_http_malloc_endpoints[i].allow;

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

    ctx = ngx_pcalloc(r->pool, sizeof(ngx_http_malloc_ctx_t));
    if (ctx == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ctx->endpoint = i;
    ngx_http_set_ctx(r, ctx, ngx_http_malloc_module);

    if (r->method != NGX_HTTP_POST) {
        rc = ngx_http_discard_request_body(r);
        if (rc != NGX_OK) {
            return rc;
        }

        switch (i) {

        case NGX_HTTP_MALLOC_EP_INDEX:
        case NGX_HTTP_MALLOC_EP_PROF_ACTIVE:
            return ngx_http_malloc_get(r, ctx);

        case NGX_HTTP_MALLOC_EP_PPROF_SYMBOL:
            return ngx_http_malloc_profile_symbol(r, NULL, 0);

        case NGX_HTTP_MALLOC_EP_PPROF_CMDLINE:
            return ngx_http_malloc_profile_cmdline(r);

        case NGX_HTTP_MALLOC_EP_SNAPSHOTS:
            return ngx_http_malloc_snapshot_get(r, NULL);

        case NGX_HTTP_MALLOC_EP_SNAPSHOT_FILE:
            ep.data += sizeof("snapshots/") - 1;
            ep.len -= sizeof("snapshots/") - 1;
            return ngx_http_malloc_snapshot_get(r, &ep);

        default:
            rc = ngx_http_malloc_profile_get(r, ctx);

            if (rc == NGX_DONE) {
                /* answered later, from a timer */
                r->main->count++;
            }

            return rc;
        }
    }

    if (ngx_http_malloc_endpoints[i].write && !mlcf->write) {
        rc = ngx_http_discard_request_body(r);
        if (rc != NGX_OK) {
            return rc;
        }

        return ngx_http_malloc_error(r, NGX_HTTP_FORBIDDEN, "write_disabled",
                   "this admin location is read-only: changes need "
                   "\"malloc_admin write=on;\"");
    }

    if (r->headers_in.content_length_n
        > (off_t) ngx_http_malloc_endpoints[i].body_max)
    {
        rc = ngx_http_discard_request_body(r);
        if (rc != NGX_OK) {
            return rc;
        }

        return ngx_http_malloc_error(r, NGX_HTTP_REQUEST_ENTITY_TOO_LARGE,
                                     "body_too_large",
                                     "request bodies are limited to %uz "
                                     "bytes here",
                                     ngx_http_malloc_endpoints[i].body_max);
    }

    rc = ngx_http_read_client_request_body(r, ngx_http_malloc_body_handler);

    if (rc >= NGX_HTTP_SPECIAL_RESPONSE) {
        return rc;
    }

    return NGX_DONE;
}


/*
 * Refuses requests that a web page of another origin made the browser
 * send (see ngx_http_malloc_origin.c); lets the trusted origins read the
 * answers.  NGX_DECLINED: go on.
 */

static ngx_int_t
ngx_http_malloc_guard(ngx_http_request_t *r, ngx_uint_t *trusted)
{
    ngx_int_t                    rc;
    ngx_str_t                    value;
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

    rc = ngx_http_malloc_origin_check(site, origin, host, mlcf->trusted,
                                      err);

    if (rc == NGX_HTTP_MALLOC_ORIGIN_OK) {
        return NGX_DECLINED;
    }

    if (rc == NGX_HTTP_MALLOC_ORIGIN_TRUSTED) {
        *trusted = 1;

        value.data = (u_char *) origin.data;
        value.len = origin.len;

        if (ngx_http_malloc_add_header(r, "Access-Control-Allow-Origin",
                                       &value)
            != NGX_OK)
        {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }

        ngx_str_set(&value, "Origin");

        if (ngx_http_malloc_add_header(r, "Vary", &value) != NGX_OK) {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }

        return NGX_DECLINED;
    }

    ngx_log_error(NGX_LOG_INFO, r->connection->log, 0,
                  "malloc admin %s", err);

    rc = ngx_http_discard_request_body(r);
    if (rc != NGX_OK) {
        return rc;
    }

    return ngx_http_malloc_error(r, NGX_HTTP_FORBIDDEN, "cross_origin",
                                 "%s (see malloc_trusted_origin in "
                                 "docs/directives.md)", err);
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


static ngx_int_t
ngx_http_malloc_add_header(ngx_http_request_t *r, const char *key,
    ngx_str_t *value)
{
    ngx_table_elt_t  *h;

    h = ngx_list_push(&r->headers_out.headers);
    if (h == NULL) {
        return NGX_ERROR;
    }

    h->hash = 1;
    h->key.data = (u_char *) key;
    h->key.len = ngx_strlen(key);
    h->value = *value;

#if (nginx_version >= 1023000)
    /* headers of one name are linked since nginx 1.23.0 */
    h->next = NULL;
#endif

    return NGX_OK;
}


static ngx_int_t
ngx_http_malloc_get(ngx_http_request_t *r, ngx_http_malloc_ctx_t *ctx)
{
    json_t                           *json;
    ngx_http_malloc_loc_conf_t       *mlcf;
    ngx_http_malloc_main_conf_t      *mmcf;
    const ngx_http_malloc_je_info_t  *info;

    mlcf = ngx_http_get_module_loc_conf(r, ngx_http_malloc_module);
    mmcf = ngx_http_get_module_main_conf(r, ngx_http_malloc_module);
    info = ngx_http_malloc_je_probe();

    json = json_object();
    if (json == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    if (ctx->endpoint == NGX_HTTP_MALLOC_EP_INDEX) {
        json_object_set_new(json, "module",
                            json_string("ngx_http_malloc_module"));
        json_object_set_new(json, "version",
                            json_string(NGX_HTTP_MALLOC_VERSION));
        json_object_set_new(json, "nginx", json_string(NGINX_VERSION));
        json_object_set_new(json, "jemalloc",
                            ngx_http_malloc_jemalloc_json());
        json_object_set_new(json, "write", json_boolean(mlcf->write));
        json_object_set_new(json, "dump_dir",
                            json_stringn((char *) mmcf->dump_dir->name.data,
                                         mmcf->dump_dir->name.len));
    }

    json_object_set_new(json, "prof_active",
                        json_boolean(ngx_http_malloc_coord_desired(mmcf)));
    json_object_set_new(json, "prof_active_remaining",
                        ngx_http_malloc_remaining_json(mmcf));
    json_object_set_new(json, "workers", ngx_http_malloc_workers_json(r, 0));

    if (info->state != NGX_HTTP_MALLOC_JE_OK) {
        return ngx_http_malloc_unusable_json(r, json);
    }

    return ngx_http_malloc_send_json(r, NGX_HTTP_OK, json);
}


static void
ngx_http_malloc_body_handler(ngx_http_request_t *r)
{
    u_char                           *body;
    size_t                            len, max;
    ngx_int_t                         rc;
    ngx_http_malloc_ctx_t            *ctx;
    const ngx_http_malloc_je_info_t  *info;
    char                              err[NGX_HTTP_MALLOC_ERR_LEN];

    ctx = ngx_http_get_module_ctx(r, ngx_http_malloc_module);
    max = ngx_http_malloc_endpoints[ctx->endpoint].body_max;

    body = ngx_pnalloc(r->pool, max + 1);
    if (body == NULL) {
        ngx_http_finalize_request(r, NGX_HTTP_INTERNAL_SERVER_ERROR);
        return;
    }

    len = max + 1;
    rc = ngx_http_malloc_read_body(r, body, &len);

    if (rc != NGX_OK) {
        ngx_http_finalize_request(r, rc);
        return;
    }

    info = ngx_http_malloc_je_probe();

    if (len > max) {
        rc = ngx_http_malloc_error(r, NGX_HTTP_REQUEST_ENTITY_TOO_LARGE,
                                   "body_too_large",
                                   "request bodies are limited to %uz "
                                   "bytes here", max);

    } else if (ctx->endpoint == NGX_HTTP_MALLOC_EP_PPROF_SYMBOL) {
        rc = ngx_http_malloc_profile_symbol(r, body, len);

    } else if (info->state != NGX_HTTP_MALLOC_JE_OK) {
        rc = ngx_http_malloc_unusable(r);

    } else if (ctx->endpoint == NGX_HTTP_MALLOC_EP_PROF_ACTIVE) {
        rc = ngx_http_malloc_post_active(r, ctx, body, len);

    } else if (ctx->endpoint == NGX_HTTP_MALLOC_EP_PROF_DUMP) {
        rc = ngx_http_malloc_post_dump(r, ctx, body, len);

    } else if (ctx->endpoint == NGX_HTTP_MALLOC_EP_PROF_RESET) {
        rc = ngx_http_malloc_post_reset(r, ctx, body, len);

    } else if (ngx_http_malloc_parse_empty(body, len, err) != 0) {
        rc = ngx_http_malloc_error(r, NGX_HTTP_BAD_REQUEST, "invalid_body",
                                   "%s", err);

    } else {
        ctx->cmd = NGX_HTTP_MALLOC_CMD_PURGE;
        rc = ngx_http_malloc_start(r, ctx, 0);
    }

    if (rc == NGX_DONE) {
        /* waiting for the other workers; the request count stays taken */
        return;
    }

    ngx_http_finalize_request(r, rc);
}


/* copies at most *len bytes of the body, from memory or its temp file */

static ngx_int_t
ngx_http_malloc_read_body(ngx_http_request_t *r, u_char *buf, size_t *len)
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


static ngx_int_t
ngx_http_malloc_post_active(ngx_http_request_t *r, ngx_http_malloc_ctx_t *ctx,
    u_char *body, size_t len)
{
    ngx_str_t                 s;
    ngx_int_t                 ms;
    ngx_http_malloc_active_t  cmd;
    char                      err[NGX_HTTP_MALLOC_ERR_LEN];

    if (ngx_http_malloc_parse_active(body, len, &cmd, err) != 0) {
        return ngx_http_malloc_error(r, NGX_HTTP_BAD_REQUEST, "invalid_body",
                                     "%s", err);
    }

    if (cmd.duration[0] != '\0') {
        s.data = (u_char *) cmd.duration;
        s.len = ngx_strlen(cmd.duration);

        ms = ngx_parse_time(&s, 0);

        if (ms == NGX_ERROR || ms < 1000
            || ms > (ngx_int_t) NGX_HTTP_MALLOC_DURATION_MAX * 1000)
        {
            return ngx_http_malloc_error(r, NGX_HTTP_BAD_REQUEST,
                       "invalid_body", "\"duration\" must be a time from "
                       "1s to 30d in nginx syntax, such as \"10m\"");
        }

        ctx->duration = ms;
    }

    ctx->cmd = NGX_HTTP_MALLOC_CMD_ACTIVE;

    return ngx_http_malloc_start(r, ctx, cmd.active);
}


/*
 * Sampling more often than one sample per 4 KiB costs nginx much of its
 * throughput (every sample records a backtrace): such values need
 * "force": true.
 */

static ngx_int_t
ngx_http_malloc_post_reset(ngx_http_request_t *r, ngx_http_malloc_ctx_t *ctx,
    u_char *body, size_t len)
{
    int   lg, force;
    char  err[NGX_HTTP_MALLOC_ERR_LEN];

    if (ngx_http_malloc_parse_reset(body, len, &lg, &force, err) != 0) {
        return ngx_http_malloc_error(r, NGX_HTTP_BAD_REQUEST, "invalid_body",
                                     "%s", err);
    }

    if (lg >= 0 && lg < NGX_HTTP_MALLOC_LG_SAMPLE_FLOOR && !force) {
        return ngx_http_malloc_error(r, NGX_HTTP_BAD_REQUEST,
                   "lg_sample_too_low",
                   "\"lg_sample\": %d means one sample every %d bytes "
                   "allocated on average, which slows nginx down a lot; "
                   "values below %d need \"force\": true", lg, 1 << lg,
                   NGX_HTTP_MALLOC_LG_SAMPLE_FLOOR);
    }

    ctx->cmd = NGX_HTTP_MALLOC_CMD_RESET;
    ctx->arg = lg;

    return ngx_http_malloc_start(r, ctx, 0);
}


static ngx_int_t
ngx_http_malloc_post_dump(ngx_http_request_t *r, ngx_http_malloc_ctx_t *ctx,
    u_char *body, size_t len)
{
    int                           n;
    char                          err[NGX_HTTP_MALLOC_ERR_LEN];
    u_char                        name[NGX_HTTP_MALLOC_BODY_MAX];
    ngx_tm_t                      tm;
    ngx_time_t                   *tp;
    ngx_http_malloc_main_conf_t  *mmcf;

    mmcf = ngx_http_get_module_main_conf(r, ngx_http_malloc_module);

    n = ngx_http_malloc_parse_dump(body, len, name, sizeof(name), err);

    if (n < 0) {
        return ngx_http_malloc_error(r, NGX_HTTP_BAD_REQUEST, "invalid_body",
                                     "%s", err);
    }

    if (n == 0) {
        /* unique enough: commands are serialized, and O_EXCL decides */
        tp = ngx_timeofday();
        ngx_gmtime(tp->sec, &tm);

        n = ngx_snprintf(name, sizeof(name),
                         "heap-%4d%02d%02dT%02d%02d%02d.%03MZ.%%p.heap",
                         tm.ngx_tm_year, tm.ngx_tm_mon, tm.ngx_tm_mday,
                         tm.ngx_tm_hour, tm.ngx_tm_min, tm.ngx_tm_sec,
                         tp->msec)
            - name;
    }

    n = ngx_http_malloc_path_template((char *) mmcf->dump_dir->name.data,
                                      mmcf->dump_dir->name.len, name, n,
                                      ngx_http_malloc_coord_workers(mmcf) > 1,
                                      (char *) ctx->tmpl, sizeof(ctx->tmpl));
    if (n < 0) {
        return ngx_http_malloc_error(r, NGX_HTTP_BAD_REQUEST, "invalid_path",
                                     "%s", ngx_http_malloc_path_strerror(n));
    }

    ctx->cmd = NGX_HTTP_MALLOC_CMD_DUMP;

    return ngx_http_malloc_start(r, ctx, 0);
}


/*
 * Refuses a dump before any worker writes: the directory must be usable
 * and no worker's file may exist, so a refused request changes nothing.
 * NGX_DECLINED once the refusal is sent; *sent is what sending returned.
 */

static ngx_int_t
ngx_http_malloc_check_names(ngx_http_request_t *r, ngx_http_malloc_ctx_t *ctx,
    ngx_int_t *sent)
{
    off_t                         used;
    ngx_int_t                     rc;
    ngx_uint_t                    i, n;
    ngx_http_malloc_answer_t     *answers;
    ngx_http_malloc_main_conf_t  *mmcf;

    mmcf = ngx_http_get_module_main_conf(r, ngx_http_malloc_module);

    used = ngx_http_malloc_dump_used(mmcf);

    if (mmcf->dump_max_size != 0 && used >= mmcf->dump_max_size) {
        *sent = ngx_http_malloc_error(r, NGX_HTTP_INSUFFICIENT_STORAGE,
                    "dump_dir_full",
                    "malloc_dump_dir \"%V\" holds %O bytes, its max_size "
                    "is %O: remove old dumps first",
                    &mmcf->dump_dir->name, used, mmcf->dump_max_size);
        return NGX_DECLINED;
    }

    answers = ngx_http_malloc_answers(r, 0, &n);
    if (answers == NULL) {
        *sent = NGX_HTTP_INTERNAL_SERVER_ERROR;
        return NGX_DECLINED;
    }

    for (i = 0; i < n; i++) {

        if (answers[i].slot.pid == 0) {
            continue;
        }

        rc = ngx_http_malloc_check_name(r, ctx, answers[i].slot.pid, sent);

        if (rc != NGX_OK) {
            return rc;
        }
    }

    return NGX_OK;
}


/* bytes in the regular files of the dump directory */

static off_t
ngx_http_malloc_dump_used(ngx_http_malloc_main_conf_t *mmcf)
{
    DIR            *dir;
    off_t           used;
    struct stat     st;
    struct dirent  *de;

    used = 0;

    dir = opendir((char *) mmcf->dump_dir->name.data);
    if (dir == NULL) {
        return 0;
    }

    while ((de = readdir(dir)) != NULL) {
        if (fstatat(dirfd(dir), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0
            && S_ISREG(st.st_mode))
        {
            used += st.st_size;
        }
    }

    (void) closedir(dir);

    return used;
}


static ngx_int_t
ngx_http_malloc_check_name(ngx_http_request_t *r, ngx_http_malloc_ctx_t *ctx,
    ngx_pid_t pid, ngx_int_t *sent)
{
    int                           rc, err;
    char                          name[NGX_HTTP_MALLOC_NAME_MAX + 1];
    ngx_http_malloc_main_conf_t  *mmcf;

    mmcf = ngx_http_get_module_main_conf(r, ngx_http_malloc_module);

    (void) ngx_http_malloc_path_expand((char *) ctx->tmpl, (long) pid, name,
                                       sizeof(name));

    err = 0;
    rc = ngx_http_malloc_dump_check((char *) mmcf->dump_dir->name.data,
                                    name, &err);

    if (rc == NGX_HTTP_MALLOC_DUMP_OK) {
        return NGX_OK;
    }

    if (rc == NGX_HTTP_MALLOC_DUMP_EXISTS) {
        *sent = ngx_http_malloc_error(r, NGX_HTTP_CONFLICT, "file_exists",
                   "\"%V/%s\" exists; dumps never overwrite files",
                   &mmcf->dump_dir->name, name);

    } else {
        *sent = ngx_http_malloc_error(r, NGX_HTTP_INTERNAL_SERVER_ERROR,
                   "dump_dir_unusable",
                   "malloc_dump_dir \"%V\" cannot be used by the worker "
                   "user: %s; nginx creates it at start-up, so reload "
                   "nginx or create it for that user",
                   &mmcf->dump_dir->name, strerror(err));
    }

    return NGX_DECLINED;
}


static ngx_int_t
ngx_http_malloc_start(ngx_http_request_t *r, ngx_http_malloc_ctx_t *ctx,
    ngx_uint_t active)
{
    ngx_int_t                     rc;
    ngx_http_malloc_loc_conf_t   *mlcf;
    ngx_http_malloc_main_conf_t  *mmcf;

    mlcf = ngx_http_get_module_loc_conf(r, ngx_http_malloc_module);
    mmcf = ngx_http_get_module_main_conf(r, ngx_http_malloc_module);

    if (ctx->cmd == NGX_HTTP_MALLOC_CMD_DUMP
        && ngx_http_malloc_check_names(r, ctx, &rc) != NGX_OK)
    {
        return rc;
    }

    if (ngx_http_malloc_hold(r, ctx) != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    rc = ngx_http_malloc_coord_post(mmcf, ctx, active, mlcf->timeout);

    if (rc == NGX_BUSY) {
        return ngx_http_malloc_error(r, NGX_HTTP_CONFLICT, "busy",
                   "another command is being applied by the workers; "
                   "retry when it is answered");
    }

    if (ctx->cmd == NGX_HTTP_MALLOC_CMD_ACTIVE && ctx->duration) {
        ngx_log_error(NGX_LOG_NOTICE, r->connection->log, 0,
                      "heap profiling turned on for %M s by client %V",
                      ctx->duration / 1000, &r->connection->addr_text);

    } else if (ctx->cmd == NGX_HTTP_MALLOC_CMD_ACTIVE) {
        ngx_log_error(NGX_LOG_NOTICE, r->connection->log, 0,
                      "heap profiling turned %s by client %V",
                      active ? "on" : "off", &r->connection->addr_text);

    } else if (ctx->cmd == NGX_HTTP_MALLOC_CMD_RESET && ctx->arg >= 0) {
        ngx_log_error(NGX_LOG_NOTICE, r->connection->log, 0,
                      "heap profile samples reset, lg_sample %i, by "
                      "client %V", ctx->arg, &r->connection->addr_text);

    } else if (ctx->cmd == NGX_HTTP_MALLOC_CMD_RESET) {
        ngx_log_error(NGX_LOG_NOTICE, r->connection->log, 0,
                      "heap profile samples reset by client %V",
                      &r->connection->addr_text);

    } else if (ctx->cmd == NGX_HTTP_MALLOC_CMD_PURGE) {
        ngx_log_error(NGX_LOG_NOTICE, r->connection->log, 0,
                      "allocator purge requested by client %V",
                      &r->connection->addr_text);

    } else {
        ngx_log_error(NGX_LOG_NOTICE, r->connection->log, 0,
                      "heap dump \"%V/%s\" requested by client %V",
                      &mmcf->dump_dir->name, ctx->tmpl,
                      &r->connection->addr_text);
    }

    ngx_http_malloc_coord_apply_own(mmcf, r->connection->log);

    return ngx_http_malloc_wait(r, ctx);
}


/*
 * Registers what ends a wait early (the client going away, the request
 * being finalized) before anything is posted.
 */

ngx_int_t
ngx_http_malloc_hold(ngx_http_request_t *r, ngx_http_malloc_ctx_t *ctx)
{
    ngx_http_cleanup_t  *cln;

    cln = ngx_http_cleanup_add(r, 0);
    if (cln == NULL) {
        return NGX_ERROR;
    }

    ctx->request = r;
    ctx->done = 1;

    cln->handler = ngx_http_malloc_cleanup;
    cln->data = ctx;

    ctx->wait.data = r->connection;
    ctx->wait.log = r->connection->log;

    /* a client that goes away ends the wait through the cleanup */
    r->read_event_handler = ngx_http_test_reading;
    r->write_event_handler = ngx_http_request_empty_handler;

    return NGX_OK;
}


/* waits for the answers to a posted command: NGX_DONE, or a final rc */

ngx_int_t
ngx_http_malloc_wait(ngx_http_request_t *r, ngx_http_malloc_ctx_t *ctx)
{
    ctx->done = 0;
    ctx->wait.handler = ngx_http_malloc_wait_handler;

    if (!ctx->queued) {
        if (!ngx_http_malloc_waiting_init) {
            ngx_queue_init(&ngx_http_malloc_waiting);
            ngx_http_malloc_waiting_init = 1;
        }

        ngx_queue_insert_tail(&ngx_http_malloc_waiting, &ctx->queue);
        ctx->queued = 1;
    }

    return ngx_http_malloc_check(r, ctx);
}


/*
 * A worker answered this worker's command (it writes to our eventfd):
 * the waiting requests look at the slots now rather than at their next
 * poll.
 */

void
ngx_http_malloc_wake_waiting(void)
{
    ngx_queue_t            *q;
    ngx_http_malloc_ctx_t  *ctx;

    if (!ngx_http_malloc_waiting_init) {
        return;
    }

    for (q = ngx_queue_head(&ngx_http_malloc_waiting);
         q != ngx_queue_sentinel(&ngx_http_malloc_waiting);
         q = ngx_queue_next(q))
    {
        ctx = ngx_queue_data(q, ngx_http_malloc_ctx_t, queue);

        if (!ctx->wait.posted) {
            ngx_post_event(&ctx->wait, &ngx_posted_events);
        }
    }
}


static void
ngx_http_malloc_unqueue(ngx_http_malloc_ctx_t *ctx)
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
ngx_http_malloc_wait_handler(ngx_event_t *ev)
{
    ngx_int_t               rc;
    ngx_connection_t       *c;
    ngx_http_request_t     *r;
    ngx_http_malloc_ctx_t  *ctx;

    ctx = ngx_http_malloc_wait_ctx(ev);
    r = ctx->request;
    c = r->connection;

    rc = ngx_http_malloc_check(r, ctx);

    if (rc != NGX_DONE) {
        ngx_http_finalize_request(r, rc);
    }

    ngx_http_run_posted_requests(c);
}


/* NGX_DONE while some worker has yet to answer and time is left */

static ngx_int_t
ngx_http_malloc_check(ngx_http_request_t *r, ngx_http_malloc_ctx_t *ctx)
{
    ngx_uint_t                    n, answered;
    ngx_http_malloc_main_conf_t  *mmcf;

    mmcf = ngx_http_get_module_main_conf(r, ngx_http_malloc_module);

    n = NGX_MAX_PROCESSES;

    if (ctx->target != 0) {
        /* one worker's profile: the others' answers do not matter */
        answered = ngx_http_malloc_coord_answered(mmcf, ctx->seq,
                                                  ctx->target);
        n = 1;

    } else {
        answered = ngx_http_malloc_coord_answers(mmcf, ctx->seq, NULL, &n);
    }

    if (answered < n
        && (ngx_msec_int_t) (ctx->deadline - ngx_current_msec) > 0)
    {
        ngx_add_timer(&ctx->wait, NGX_HTTP_MALLOC_WAIT_POLL);
        return NGX_DONE;
    }

    ngx_http_malloc_unqueue(ctx);

    ctx->done = 1;
    ngx_http_malloc_coord_release(mmcf, ctx->seq);

    if (ctx->profile != NULL) {
        return ngx_http_malloc_profile_done(r, ctx);
    }

    return ngx_http_malloc_respond(r, ctx);
}


static void
ngx_http_malloc_cleanup(void *data)
{
    ngx_http_malloc_ctx_t *ctx = data;

    ngx_http_malloc_main_conf_t  *mmcf;

    ngx_http_malloc_unqueue(ctx);

    if (!ctx->done) {
        mmcf = ngx_http_get_module_main_conf(ctx->request,
                                             ngx_http_malloc_module);
        ngx_http_malloc_coord_release(mmcf, ctx->seq);
        ctx->done = 1;

        if (ctx->profile != NULL && ctx->cmd == NGX_HTTP_MALLOC_CMD_DUMP) {
            /* the hidden dumps written so far; the rest are not written */
            ngx_http_malloc_profile_unlink(ctx->request, ctx);
        }
    }
}


ngx_int_t
ngx_http_malloc_respond(ngx_http_request_t *r, ngx_http_malloc_ctx_t *ctx)
{
    json_t                        *json, *workers, *w, *error;
    ngx_uint_t                     i, n, status, failed;
    ngx_http_malloc_answer_t      *answers;
    ngx_http_malloc_main_conf_t   *mmcf;

    mmcf = ngx_http_get_module_main_conf(r, ngx_http_malloc_module);

    answers = ngx_http_malloc_answers(r, ctx->seq, &n);
    if (answers == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    json = json_object();
    workers = json_array();

    if (json == NULL || workers == NULL) {
        json_decref(json);
        json_decref(workers);
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    status = NGX_HTTP_OK;
    error = NULL;
    failed = 0;

    for (i = 0; i < n; i++) {
        w = ngx_http_malloc_worker_json(r, ctx, &answers[i], &status, &error);
        json_array_append_new(workers, w);

        if (json_object_get(w, "error") != NULL) {
            failed++;
        }
    }

    if (error != NULL) {
        /* the first failure names the problem, the list has the rest */
        json_object_set_new(json, "error", error);

        if (failed > 1) {
            json_object_set_new(error, "failed_workers",
                                json_integer((json_int_t) failed));
        }
    }

    if (ctx->cmd == NGX_HTTP_MALLOC_CMD_ACTIVE) {
        json_object_set_new(json, "prof_active",
                            json_boolean(ngx_http_malloc_coord_desired(mmcf)));
        json_object_set_new(json, "prof_active_remaining",
                            ngx_http_malloc_remaining_json(mmcf));
    }

    json_object_set_new(json, "workers", workers);

    return ngx_http_malloc_send_json(r, status, json);
}


static json_t *
ngx_http_malloc_worker_json(ngx_http_request_t *r, ngx_http_malloc_ctx_t *ctx,
    ngx_http_malloc_answer_t *a, ngx_uint_t *status, json_t **error)
{
    u_char                        *p;
    json_t                        *w;
    ngx_uint_t                     st;
    const char                    *code;
    ngx_http_malloc_slot_t        *slot;
    ngx_http_malloc_loc_conf_t    *mlcf;
    ngx_http_malloc_main_conf_t   *mmcf;
    u_char                         text[NGX_HTTP_MALLOC_ERR_LEN];
    char                           name[NGX_HTTP_MALLOC_NAME_MAX + 1];

    mlcf = ngx_http_get_module_loc_conf(r, ngx_http_malloc_module);
    mmcf = ngx_http_get_module_main_conf(r, ngx_http_malloc_module);
    slot = &a->slot;

    w = ngx_http_malloc_worker_head(a);
    if (w == NULL) {
        return NULL;
    }

    if (ctx->cmd == NGX_HTTP_MALLOC_CMD_DUMP && ctx->profile == NULL
        && a->answered && slot->result_seq == ctx->seq
        && slot->rc != NGX_HTTP_MALLOC_RC_ACTIVE)
    {
        (void) ngx_http_malloc_path_expand((char *) ctx->tmpl,
                                           (long) slot->pid, name,
                                           sizeof(name));
        p = ngx_snprintf(text, sizeof(text) - 1, "%V/%s",
                         &mmcf->dump_dir->name, name);
        json_object_set_new(w, "path", json_stringn((char *) text,
                                                    p - text));
    }

    if (ctx->cmd == NGX_HTTP_MALLOC_CMD_ACTIVE && a->answered) {
        json_object_set_new(w, "prof_active",
                            json_boolean(slot->prof_active));
    }

    if (ctx->cmd == NGX_HTTP_MALLOC_CMD_RESET && a->answered) {
        json_object_set_new(w, "lg_sample", json_integer(slot->lg_sample));
    }

    if (ctx->cmd == NGX_HTTP_MALLOC_CMD_PURGE && a->answered
        && slot->result_seq == ctx->seq)
    {
        json_object_set_new(w, "resident_before",
                            json_integer(slot->resident_before));
        json_object_set_new(w, "resident_after",
                            json_integer(slot->stats.resident));
    }

    st = NGX_HTTP_OK;
    code = NULL;
    p = text;

    if (!a->answered) {
        st = NGX_HTTP_GATEWAY_TIME_OUT;
        code = "worker_timeout";

        if (slot->pid) {
            p = ngx_snprintf(text, sizeof(text) - 1,
                             "worker %ui (pid %P) did not answer within %M ms",
                             a->worker, slot->pid, mlcf->timeout);
        } else {
            p = ngx_snprintf(text, sizeof(text) - 1,
                             "worker %ui was not running within %M ms",
                             a->worker, mlcf->timeout);
        }

    } else if (slot->result_seq != ctx->seq) {
        st = NGX_HTTP_INTERNAL_SERVER_ERROR;
        code = "worker_restarted";
        p = ngx_snprintf(text, sizeof(text) - 1,
                         "worker %ui was restarted (now pid %P) before it "
                         "answered; it runs in the desired state",
                         a->worker, slot->pid);

    } else if (slot->rc != NGX_HTTP_MALLOC_DUMP_OK) {
        st = (slot->rc == NGX_HTTP_MALLOC_DUMP_EXISTS)
             ? NGX_HTTP_CONFLICT : NGX_HTTP_INTERNAL_SERVER_ERROR;
        code = (slot->rc == NGX_HTTP_MALLOC_DUMP_EXISTS) ? "file_exists"
               : (slot->rc >= NGX_HTTP_MALLOC_RC_ACTIVE) ? "mallctl_failed"
               : "dump_failed";
        p = ngx_snprintf(text, sizeof(text) - 1, "worker %ui (pid %P): %s",
                         a->worker, slot->pid,
                         ngx_http_malloc_rc_text(slot->rc));

        if (slot->err != 0) {
            p = ngx_snprintf(p, sizeof(text) - 1 - (p - text), " (%s)",
                             strerror(slot->err));
        }

    } else if (ctx->cmd == NGX_HTTP_MALLOC_CMD_DUMP) {
        json_object_set_new(w, "bytes", json_integer(slot->bytes));
    }

    if (code != NULL) {
        *p = '\0';
        json_object_set_new(w, "error",
                            ngx_http_malloc_error_json(st, code,
                                                       (char *) text));

        if (*error == NULL) {
            *error = ngx_http_malloc_error_json(st, code, (char *) text);
            *status = st;
        }
    }

    return w;
}


/* the current generation's answers to "seq", copied into the pool */

ngx_http_malloc_answer_t *
ngx_http_malloc_answers(ngx_http_request_t *r, ngx_uint_t seq, ngx_uint_t *n)
{
    ngx_http_malloc_answer_t     *answers;
    ngx_http_malloc_main_conf_t  *mmcf;

    mmcf = ngx_http_get_module_main_conf(r, ngx_http_malloc_module);

    *n = ngx_http_malloc_coord_workers(mmcf);

    answers = ngx_palloc(r->pool,
                         (*n + 1) * sizeof(ngx_http_malloc_answer_t));
    if (answers == NULL) {
        return NULL;
    }

    (void) ngx_http_malloc_coord_answers(mmcf, seq, answers, n);

    return answers;
}


/* {"worker": N, "pid": P}, the start of every worker's entry */

json_t *
ngx_http_malloc_worker_head(ngx_http_malloc_answer_t *a)
{
    json_t  *w;

    w = json_object();
    if (w == NULL) {
        return NULL;
    }

    json_object_set_new(w, "worker", json_integer((json_int_t) a->worker));
    json_object_set_new(w, "pid", a->slot.pid ? json_integer(a->slot.pid)
                                              : json_null());

    return w;
}


static json_t *
ngx_http_malloc_workers_json(ngx_http_request_t *r, ngx_uint_t seq)
{
    json_t                    *workers, *w;
    ngx_uint_t                 i, n;
    ngx_http_malloc_answer_t  *answers;

    answers = ngx_http_malloc_answers(r, seq, &n);
    workers = json_array();

    if (answers == NULL || workers == NULL) {
        json_decref(workers);
        return NULL;
    }

    for (i = 0; i < n; i++) {
        w = json_object();
        if (w == NULL) {
            break;
        }

        json_object_set_new(w, "worker", json_integer((json_int_t) i));

        if (!answers[i].answered) {
            json_object_set_new(w, "pid", json_null());
            json_object_set_new(w, "prof_active", json_null());

        } else {
            json_object_set_new(w, "pid", json_integer(answers[i].slot.pid));
            json_object_set_new(w, "prof_active",
                                json_boolean(answers[i].slot.prof_active));
        }

        json_array_append_new(workers, w);
    }

    return workers;
}


static const char *
ngx_http_malloc_rc_text(ngx_int_t rc)
{
    switch (rc) {

    case NGX_HTTP_MALLOC_RC_ACTIVE:
        return "mallctl(\"prof.active\") failed";

    case NGX_HTTP_MALLOC_RC_RESET:
        return "mallctl(\"prof.reset\") failed";

    case NGX_HTTP_MALLOC_RC_PURGE:
        return "mallctl(\"arena.<all>.purge\") failed";

    case NGX_HTTP_MALLOC_RC_STATS:
        return "jemalloc's statistics could not be written";

    default:
        return ngx_http_malloc_dump_strerror(rc);
    }
}


/* seconds left of a profiling duration, or null */

static json_t *
ngx_http_malloc_remaining_json(ngx_http_malloc_main_conf_t *mmcf)
{
    ngx_msec_t  left;

    left = ngx_http_malloc_coord_remaining(mmcf);

    return left ? json_integer((json_int_t) (left + 999) / 1000)
                : json_null();
}


static json_t *
ngx_http_malloc_jemalloc_json(void)
{
    json_t                           *je;
    size_t                            lg;
    const ngx_http_malloc_je_info_t  *info;

    info = ngx_http_malloc_je_probe();

    je = json_object();
    if (je == NULL) {
        return NULL;
    }

    json_object_set_new(je, "state",
                        json_string(ngx_http_malloc_je_code(info->state)));
    json_object_set_new(je, "found",
                        json_boolean(info->state
                                     != NGX_HTTP_MALLOC_JE_NOT_FOUND));
    json_object_set_new(je, "allocator",
                        json_boolean(info->state
                                     > NGX_HTTP_MALLOC_JE_NOT_ALLOCATOR
                                     || info->state
                                        == NGX_HTTP_MALLOC_JE_OK));
    json_object_set_new(je, "library", info->library
                                       ? json_string(info->library)
                                       : json_null());
    json_object_set_new(je, "version", info->version
                                       ? json_string(info->version)
                                       : json_null());
    json_object_set_new(je, "config_prof", json_boolean(info->config_prof));
    json_object_set_new(je, "opt_prof", json_boolean(info->opt_prof));

    if (info->state == NGX_HTTP_MALLOC_JE_OK
        && ngx_http_malloc_je_lg_sample(&lg) == 0)
    {
        json_object_set_new(je, "lg_prof_sample", json_integer(lg));

        /* 2^63 does not fit a JSON integer here: sampling has stopped */
        json_object_set_new(je, "sample_bytes",
                            lg < 63 ? json_integer((json_int_t) 1 << lg)
                                    : json_null());

    } else {
        json_object_set_new(je, "lg_prof_sample", json_null());
        json_object_set_new(je, "sample_bytes", json_null());
    }

    return je;
}


ngx_int_t
ngx_http_malloc_unusable(ngx_http_request_t *r)
{
    return ngx_http_malloc_unusable_json(r, NULL);
}


/* 503 naming the cause and the fix; "json" adds what GET shows anyway */

static ngx_int_t
ngx_http_malloc_unusable_json(ngx_http_request_t *r, json_t *json)
{
    const ngx_http_malloc_je_info_t  *info;

    info = ngx_http_malloc_je_probe();

    if (json == NULL) {
        json = json_object();
        if (json == NULL) {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }

        json_object_set_new(json, "jemalloc",
                            ngx_http_malloc_jemalloc_json());
    }

    json_object_set_new(json, "error",
        ngx_http_malloc_error_json(NGX_HTTP_SERVICE_UNAVAILABLE,
                                   ngx_http_malloc_je_code(info->state),
                                   ngx_http_malloc_je_text(info->state)));

    return ngx_http_malloc_send_json(r, NGX_HTTP_SERVICE_UNAVAILABLE, json);
}


static json_t *
ngx_http_malloc_error_json(ngx_uint_t status, const char *code,
    const char *text)
{
    json_t  *error;

    error = json_object();
    if (error == NULL) {
        return NULL;
    }

    json_object_set_new(error, "status", json_integer((json_int_t) status));
    json_object_set_new(error, "code", json_string(code));
    json_object_set_new(error, "text", json_string(text));

    return error;
}


ngx_int_t
ngx_http_malloc_error(ngx_http_request_t *r, ngx_uint_t status,
    const char *code, const char *fmt, ...)
{
    u_char   *p;
    json_t   *json;
    va_list   args;
    u_char    text[512];

    va_start(args, fmt);
    p = ngx_vslprintf(text, text + sizeof(text) - 1, fmt, args);
    va_end(args);

    *p = '\0';

    json = json_object();
    if (json == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    /* jansson refuses invalid UTF-8; a client's name may hold some */
    json_object_set_new(json, "error",
                        ngx_http_malloc_error_json(status, code,
                                                   (char *) text));

    if (json_object_get(json_object_get(json, "error"), "text") == NULL) {
        json_object_set_new(json_object_get(json, "error"), "text",
                            json_string("(the message was not valid UTF-8)"));
    }

    return ngx_http_malloc_send_json(r, status, json);
}


/* takes the reference to "json"; returns what the content phase expects */

ngx_int_t
ngx_http_malloc_send_json(ngx_http_request_t *r, ngx_uint_t status,
    json_t *json)
{
    size_t        size;
    ngx_int_t     rc;
    ngx_buf_t    *b;
    ngx_chain_t   out;

    if (json == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    size = json_dumpb(json, NULL, 0, JSON_INDENT(2));

    b = ngx_create_temp_buf(r->pool, size + 1);
    if (b == NULL || size == 0) {
        json_decref(json);
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    b->last += json_dumpb(json, (char *) b->pos, size, JSON_INDENT(2));
    *b->last++ = '\n';

    json_decref(json);

    r->headers_out.status = status;
    r->headers_out.content_length_n = b->last - b->pos;
    ngx_str_set(&r->headers_out.content_type, "application/json");
    r->headers_out.content_type_len = r->headers_out.content_type.len;
    r->headers_out.content_type_lowcase = NULL;

    if (r->method == NGX_HTTP_HEAD) {
        b->last = b->pos;
    }

    b->last_buf = (r == r->main) ? 1 : 0;
    b->last_in_chain = 1;

    rc = ngx_http_send_header(r);

    if (rc == NGX_ERROR || rc > NGX_OK || r->header_only) {
        return rc;
    }

    out.buf = b;
    out.next = NULL;

    return ngx_http_output_filter(r, &out);
}
