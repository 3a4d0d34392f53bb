
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * malloc_export: OTLP/HTTP pushes of heap profiles.  Worker 0 has every
 * worker dump its heap each interval (the collection malloc_snapshot
 * uses) and sends the merged heap as one request: one series per nginx,
 * under the master's pid, which a reload does not change (workers' pids
 * do).  A snapshot is pushed by the worker that wrote it.  Profiles are
 * built on the module's thread; the request is nginx's own non-blocking
 * connection in the event loop, one at a time, with a timer, as upstream
 * health checks make theirs.  At most four requests wait per process:
 * the oldest gives way.  429, 502, 503, 504, a timeout and network errors
 * are retried after 1 s, 2 s, 4 s... up to the interval (or Retry-After),
 * for five minutes; any other answer drops the request.  Connection
 * errors go to a log of the export's own that keeps them quiet; a
 * failure is logged at most once an interval, at warn.  A profile has
 * at most 16,000 samples, Pyroscope's limit: the encoder folds the
 * smallest stacks past it into one, and the state counts the requests
 * it did so in.
 *
 * Owns: this process's queue of requests and its connection, and the
 * zone's part of the counts.  Calls: board (the counts' part), wait (the
 * collection), reply (times in JSON), threads, and the pure core
 * (pipeline, path, symbol, arena, otlp's UTF-8 check).  Reached by
 * module (the directive, init), schedule (snapshots written), commands
 * (GET /) and stats (the counts).
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_event.h>
#include <ngx_event_connect.h>
#include <ngx_http.h>

#include "ngx_http_malloc_export.h"
#include "ngx_http_malloc_board.h"
#include "ngx_http_malloc_wait.h"
#include "ngx_http_malloc_reply.h"
#include "ngx_http_malloc_threads.h"
#include "ngx_http_malloc_pipeline.h"
#include "ngx_http_malloc_path.h"
#include "ngx_http_malloc_otlp.h"


#define NGX_HTTP_MALLOC_EXPORT_PATH     "/v1development/profiles"
#define NGX_HTTP_MALLOC_EXPORT_JOBS     4
#define NGX_HTTP_MALLOC_EXPORT_GIVE_UP  300        /* seconds */
#define NGX_HTTP_MALLOC_EXPORT_ANSWER   2048       /* of an answer read */
#define NGX_HTTP_MALLOC_EXPORT_DUMPS    5000       /* ms for the dumps */
#define NGX_HTTP_MALLOC_EXPORT_ATTRS    10         /* the operator's */

/*
 * samples in one profile: Pyroscope refuses a profile of more (its
 * validation.max-profile-stacktrace-samples, 16000 by default), and with
 * it the whole request
 */
#define NGX_HTTP_MALLOC_EXPORT_SAMPLES  16000

/* the connection speaks TLS already (handshaken or shaking hands) */
#if (NGX_HTTP_SSL)
#define ngx_http_malloc_export_tls(c)   ((c)->ssl != NULL)
#else
#define ngx_http_malloc_export_tls(c)   0
#endif
#define NGX_HTTP_MALLOC_EXPORT_RESOURCE (6 + NGX_HTTP_MALLOC_EXPORT_ATTRS)


typedef enum {
    NGX_HTTP_MALLOC_JOB_WAITING = 0,  /* to be built */
    NGX_HTTP_MALLOC_JOB_BUILDING,
    NGX_HTTP_MALLOC_JOB_READY,        /* built: to be sent */
    NGX_HTTP_MALLOC_JOB_SENDING
} ngx_http_malloc_job_e;


typedef struct {
    ngx_uint_t                     state;      /* job_e */
    ngx_uint_t                     source;     /* EXPORT_* */
    char                         **paths;      /* NULL-ended */
    ngx_uint_t                     dumps;      /* the paths are removed */
    ngx_http_malloc_mbuf_t         body;       /* gzipped, once built */
    ngx_int_t                      rc;         /* the build's pipe_rc_e */
    char                           error[NGX_HTTP_MALLOC_PIPE_ERR_LEN];
    ngx_http_malloc_otlp_t         ot;
    ngx_http_malloc_otlp_result_t  result;     /* the build's stacks */
    ngx_http_malloc_otlp_attr_t    attrs[2];
    ngx_http_malloc_otlp_attr_t    resource[NGX_HTTP_MALLOC_EXPORT_RESOURCE
                                            + 1];
    ngx_http_malloc_task_t         task;
    time_t                         first;      /* its first attempt */
    u_char                         name[NGX_HTTP_MALLOC_NAME_MAX + 1];
} ngx_http_malloc_push_t;


/* per process */
typedef struct {
    ngx_http_malloc_main_conf_t   *mmcf;
    ngx_http_malloc_export_conf_t *ec;
    ngx_http_malloc_otlp_attr_t    resource[NGX_HTTP_MALLOC_EXPORT_RESOURCE];
    size_t                         nresource;
    u_char                         exe[64];
    u_char                         host[NGX_MAXHOSTNAMELEN + 1];
    ngx_http_malloc_push_t         *jobs[NGX_HTTP_MALLOC_EXPORT_JOBS];
    ngx_uint_t                     njobs;
    ngx_uint_t                     building;
    ngx_http_malloc_collect_t      co;          /* the interval's dumps */
    ngx_http_malloc_cmd_t          cmd;
    ngx_uint_t                     collecting;
    ngx_event_t                    tick;
    ngx_event_t                    retry;
    ngx_connection_t               dummy;       /* of the two timers */
    ngx_log_t                      log;         /* the connection's */
    ngx_peer_connection_t          pc;
    ngx_http_malloc_push_t         *sending;
    u_char                        *head;        /* the request's head */
    size_t                         head_len;
    size_t                         written;     /* of head and body */
    u_char                         answer[NGX_HTTP_MALLOC_EXPORT_ANSWER];
    size_t                         answer_len;
    ngx_msec_t                     due;         /* of the next attempt */
    ngx_msec_t                     backoff;     /* after a failure */
    time_t                         warned;      /* the last warn line */
    ngx_uint_t                     failing;
} ngx_http_malloc_export_t;


static void ngx_http_malloc_export_add(ngx_http_malloc_main_conf_t *mmcf,
    const ngx_http_malloc_export_state_t *delta);
static char *ngx_http_malloc_export_url(ngx_conf_t *cf,
    ngx_http_malloc_export_conf_t *ec, ngx_str_t *url);
static const char *ngx_http_malloc_export_url_bad(ngx_str_t *url,
    size_t skip);
static ngx_str_t *ngx_http_malloc_export_quoted(ngx_conf_t *cf,
    ngx_str_t *v);
static ngx_int_t ngx_http_malloc_export_names(ngx_conf_t *cf,
    ngx_http_malloc_export_conf_t *ec, ngx_url_t *u, ngx_str_t *url,
    size_t skip);
static char *ngx_http_malloc_export_param(ngx_conf_t *cf,
    ngx_http_malloc_export_conf_t *ec, ngx_str_t *v);
static char *ngx_http_malloc_export_pair(ngx_conf_t *cf, ngx_array_t *a,
    ngx_str_t *v, size_t skip, u_char sep);
static char *ngx_http_malloc_export_header(ngx_conf_t *cf,
    ngx_http_malloc_export_conf_t *ec, ngx_str_t *v);
static char *ngx_http_malloc_export_attribute(ngx_conf_t *cf,
    ngx_http_malloc_export_conf_t *ec, ngx_str_t *v);
static char *ngx_http_malloc_export_invalid(ngx_conf_t *cf, ngx_str_t *v);
static ngx_int_t ngx_http_malloc_export_sources(
    ngx_http_malloc_export_conf_t *ec, ngx_str_t *list);
#if (NGX_HTTP_SSL)
static char *ngx_http_malloc_export_ssl(ngx_conf_t *cf,
    ngx_http_malloc_export_conf_t *ec);
#endif
static void ngx_http_malloc_export_resource(ngx_http_malloc_export_t *ex);
static void ngx_http_malloc_export_tick(ngx_event_t *ev);
static void ngx_http_malloc_export_collected(ngx_http_malloc_collect_t *co,
    ngx_uint_t busy);
static char **ngx_http_malloc_export_dumps(ngx_http_malloc_export_t *ex,
    ngx_uint_t *n);
static ngx_http_malloc_push_t *ngx_http_malloc_export_job(
    ngx_http_malloc_export_t *ex, ngx_uint_t source, char **paths,
    ngx_uint_t n, ngx_uint_t dumps);
static void ngx_http_malloc_export_queue(ngx_http_malloc_export_t *ex,
    ngx_http_malloc_push_t *job);
static void ngx_http_malloc_export_remove(ngx_http_malloc_export_t *ex,
    ngx_http_malloc_push_t *job, ngx_uint_t dropped);
static void ngx_http_malloc_export_kick(ngx_http_malloc_export_t *ex);
static void ngx_http_malloc_export_build(void *data);
static void ngx_http_malloc_export_built(void *data);
static void ngx_http_malloc_export_retry(ngx_event_t *ev);
static void ngx_http_malloc_export_connect(ngx_http_malloc_export_t *ex,
    ngx_http_malloc_push_t *job);
static ngx_int_t ngx_http_malloc_export_request(ngx_http_malloc_export_t *ex,
    ngx_http_malloc_push_t *job);
static void ngx_http_malloc_export_write(ngx_event_t *wev);
static ngx_int_t ngx_http_malloc_export_connected(ngx_connection_t *c);
#if (NGX_HTTP_SSL)
static void ngx_http_malloc_export_handshake(ngx_connection_t *c);
static void ngx_http_malloc_export_handshaked(ngx_connection_t *c);
#endif
static void ngx_http_malloc_export_read(ngx_event_t *rev);
static void ngx_http_malloc_export_answered(ngx_http_malloc_export_t *ex);
static void ngx_http_malloc_export_dummy(ngx_event_t *ev);
static void ngx_http_malloc_export_done(ngx_http_malloc_export_t *ex,
    ngx_int_t status, time_t retry_after, const char *fmt, ...);
static void ngx_http_malloc_export_close(ngx_http_malloc_export_t *ex);


static ngx_http_malloc_export_t  ngx_http_malloc_export;


/* malloc_export URL [interval=] [timeout=] [header=] [attribute=] ... */

char *
ngx_http_malloc_export_conf(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_malloc_main_conf_t *mmcf = conf;

    char                           *rv;
    ngx_str_t                      *value;
    ngx_uint_t                      i;
    ngx_http_malloc_export_conf_t  *ec;

    if (mmcf->export != NULL) {
        return "is duplicate";
    }

    ec = ngx_pcalloc(cf->pool, sizeof(ngx_http_malloc_export_conf_t));
    if (ec == NULL) {
        return NGX_CONF_ERROR;
    }

    ec->interval = 60;
    ec->timeout = 10000;
    ec->sources = NGX_HTTP_MALLOC_EXPORT_INTERVAL;

    if (ngx_array_init(&ec->headers, cf->pool, 2, sizeof(ngx_keyval_t))
        != NGX_OK
        || ngx_array_init(&ec->attributes, cf->pool, 2, sizeof(ngx_keyval_t))
           != NGX_OK)
    {
        return NGX_CONF_ERROR;
    }

    value = cf->args->elts;

    rv = ngx_http_malloc_export_url(cf, ec, &value[1]);
    if (rv != NGX_CONF_OK) {
        return rv;
    }

    for (i = 2; i < cf->args->nelts; i++) {
        rv = ngx_http_malloc_export_param(cf, ec, &value[i]);
        if (rv != NGX_CONF_OK) {
            return rv;
        }
    }

    mmcf->export = ec;

    return NGX_CONF_OK;
}


/* http://host[:port][/base] or https://..., resolved now, as upstreams */

static char *
ngx_http_malloc_export_url(ngx_conf_t *cf, ngx_http_malloc_export_conf_t *ec,
    ngx_str_t *url)
{
    size_t       skip;
    ngx_url_t    u;
    const char  *reason;

    ngx_memzero(&u, sizeof(ngx_url_t));

    if (url->len > 7 && ngx_strncasecmp(url->data, (u_char *) "http://", 7)
                        == 0)
    {
        skip = 7;
        u.default_port = 80;

    } else if (url->len > 8
               && ngx_strncasecmp(url->data, (u_char *) "https://", 8) == 0)
    {
#if (NGX_HTTP_SSL)
        skip = 8;
        u.default_port = 443;
#else
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "invalid URL \"%V\": this nginx is built without "
                           "SSL, https is not available", url);
        return NGX_CONF_ERROR;
#endif

    } else {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "invalid URL \"%V\": expected the collector's "
                           "OTLP/HTTP base, http://host:port or "
                           "https://host:port", url);
        return NGX_CONF_ERROR;
    }

    reason = ngx_http_malloc_export_url_bad(url, skip);

    if (reason != NULL) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "invalid URL \"%V\": %s",
                           ngx_http_malloc_export_quoted(cf, url), reason);
        return NGX_CONF_ERROR;
    }

    u.url.data = url->data + skip;
    u.url.len = url->len - skip;
    u.uri_part = 1;

    if (ngx_parse_url(cf->pool, &u) != NGX_OK || u.naddrs == 0) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "invalid URL \"%V\": %s",
                           url, u.err ? u.err : "host not found");
        return NGX_CONF_ERROR;
    }

    if (ngx_http_malloc_export_names(cf, ec, &u, url, skip) != NGX_OK) {
        return NGX_CONF_ERROR;
    }

#if (NGX_HTTP_SSL)
    if (skip == 8) {
        ec->ssl = ngx_pcalloc(cf->pool, sizeof(ngx_ssl_t));
        if (ec->ssl == NULL) {
            return NGX_CONF_ERROR;
        }
    }
#endif

    return NGX_CONF_OK;
}


/*
 * What in a URL would not go into the request as it is: bytes that end
 * or split the request line, a query that the signal's path would be
 * appended to, a UNIX-domain socket (ngx_parse_url's "unix:"), which has
 * no host for the Host header, and credentials.  NULL: none.
 */

static const char *
ngx_http_malloc_export_url_bad(ngx_str_t *url, size_t skip)
{
    u_char  *p, *last, *slash;

    last = url->data + url->len;

    for (p = url->data; p < last; p++) {
        if (*p <= ' ' || *p == 0x7f) {
            return "it has a space or a control character, which would go "
                   "into the request line";
        }

        if (*p == '?' || *p == '#') {
            return "a query or a fragment cannot be part of the base URL: "
                   "nginx appends /v1development/profiles to its path; "
                   "send a token with header=";
        }
    }

    p = url->data + skip;

    if (last - p >= 5 && ngx_strncasecmp(p, (u_char *) "unix:", 5) == 0) {
        return "a UNIX-domain socket is not supported: the collector is "
               "reached at a host and a port";
    }

    slash = ngx_strlchr(p, last, '/');

    if (ngx_strlchr(p, slash ? slash : last, '@') != NULL) {
        return "credentials cannot be part of the URL: send them with "
               "header=Authorization:...";
    }

    return NULL;
}


/* v as an [emerg] quotes it: control characters escaped, as \r or \x01 */

static ngx_str_t *
ngx_http_malloc_export_quoted(ngx_conf_t *cf, ngx_str_t *v)
{
    u_char     *p, *q, *last;
    ngx_str_t  *s;

    static const u_char  hex[] = "0123456789abcdef";

    s = ngx_palloc(cf->pool, sizeof(ngx_str_t));
    if (s == NULL) {
        return v;
    }

    s->data = ngx_pnalloc(cf->pool, 4 * v->len + 1);
    if (s->data == NULL) {
        return v;
    }

    last = v->data + v->len;

    for (p = v->data, q = s->data; p < last; p++) {
        if (*p >= ' ' && *p != 0x7f) {
            *q++ = *p;
            continue;
        }

        *q++ = '\\';

        switch (*p) {
        case CR:
            *q++ = 'r';
            break;
        case LF:
            *q++ = 'n';
            break;
        case '\t':
            *q++ = 't';
            break;
        default:
            *q++ = 'x';
            *q++ = hex[*p >> 4];
            *q++ = hex[*p & 0xf];
        }
    }

    s->len = q - s->data;

    return s;
}


/* the address, the Host header, the path and the URL as logs show it */

static ngx_int_t
ngx_http_malloc_export_names(ngx_conf_t *cf, ngx_http_malloc_export_conf_t *ec,
    ngx_url_t *u, ngx_str_t *url, size_t skip)
{
    u_char  *p;

    ec->addr = u->addrs[0];
    ec->host = u->host;

    if (u->port != u->default_port) {
        ec->host.len = u->host.len + 1 + NGX_INT_T_LEN;
        ec->host.data = ngx_pnalloc(cf->pool, ec->host.len);
        if (ec->host.data == NULL) {
            return NGX_ERROR;
        }

        ec->host.len = ngx_sprintf(ec->host.data, "%V:%d", &u->host, u->port)
                       - ec->host.data;
    }

    /* a C string, for SNI */

    ec->server_name.len = u->host.len;
    ec->server_name.data = ngx_pnalloc(cf->pool, u->host.len + 1);
    if (ec->server_name.data == NULL) {
        return NGX_ERROR;
    }

    *ngx_cpymem(ec->server_name.data, u->host.data, u->host.len) = '\0';

    /* the base's path, its last "/" dropped, and the signal's path */

    while (u->uri.len > 0 && u->uri.data[u->uri.len - 1] == '/') {
        u->uri.len--;
    }

    ec->path.len = u->uri.len + sizeof(NGX_HTTP_MALLOC_EXPORT_PATH) - 1;
    ec->path.data = ngx_pnalloc(cf->pool, ec->path.len);
    ec->url.len = skip + u->host.len + 1 + NGX_INT_T_LEN + ec->path.len;
    ec->url.data = ngx_pnalloc(cf->pool, ec->url.len);

    if (ec->path.data == NULL || ec->url.data == NULL) {
        return NGX_ERROR;
    }

    p = ngx_cpymem(ec->path.data, u->uri.data, u->uri.len);
    ngx_memcpy(p, NGX_HTTP_MALLOC_EXPORT_PATH,
               sizeof(NGX_HTTP_MALLOC_EXPORT_PATH) - 1);

    ec->url.len = ngx_sprintf(ec->url.data, "%*s%V%V", skip, url->data,
                              &ec->host, &ec->path)
                  - ec->url.data;

    return NGX_OK;
}


static char *
ngx_http_malloc_export_param(ngx_conf_t *cf, ngx_http_malloc_export_conf_t *ec,
    ngx_str_t *v)
{
    ngx_int_t  n;
    ngx_str_t  s;

    if (ngx_strncmp(v->data, "interval=", 9) == 0) {
        s.data = v->data + 9;
        s.len = v->len - 9;

        n = ngx_parse_time(&s, 1);
        if (n == NGX_ERROR || n < 1 || n > NGX_HTTP_MALLOC_DURATION_MAX) {
            goto invalid;
        }

        ec->interval = n;
        return NGX_CONF_OK;
    }

    if (ngx_strncmp(v->data, "timeout=", 8) == 0) {
        s.data = v->data + 8;
        s.len = v->len - 8;

        n = ngx_parse_time(&s, 0);
        if (n == NGX_ERROR || n < 100 || n > 600000) {
            goto invalid;
        }

        ec->timeout = n;
        return NGX_CONF_OK;
    }

    if (ngx_strncmp(v->data, "header=", 7) == 0) {
        return ngx_http_malloc_export_header(cf, ec, v);
    }

    if (ngx_strncmp(v->data, "attribute=", 10) == 0) {
        return ngx_http_malloc_export_attribute(cf, ec, v);
    }

    if (ngx_strncmp(v->data, "sources=", 8) == 0) {
        s.data = v->data + 8;
        s.len = v->len - 8;

        n = ngx_http_malloc_export_sources(ec, &s);

        if (n == NGX_DECLINED) {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                               "invalid parameter \"%V\": an empty item "
                               "in the list", v);
            return NGX_CONF_ERROR;
        }

        if (n != NGX_OK) {
            goto invalid;
        }

        return NGX_CONF_OK;
    }

    if (ngx_strncmp(v->data, "ca=", 3) == 0 && v->len > 3) {
        ec->ca.data = v->data + 3;
        ec->ca.len = v->len - 3;

        if (ngx_conf_full_name(cf->cycle, &ec->ca, 1) != NGX_OK) {
            return NGX_CONF_ERROR;
        }

        return NGX_CONF_OK;
    }

    if (ngx_strcmp(v->data, "payload=pprof") == 0) {
        ec->payload = 1;
        return NGX_CONF_OK;
    }

invalid:

    return ngx_http_malloc_export_invalid(cf, v);
}


/* header=name:value, attribute=key=value: "skip" bytes of name first */

static char *
ngx_http_malloc_export_pair(ngx_conf_t *cf, ngx_array_t *a, ngx_str_t *v,
    size_t skip, u_char sep)
{
    u_char        *p, *last;
    ngx_keyval_t  *kv;

    last = v->data + v->len;
    p = ngx_strlchr(v->data + skip, last, sep);

    if (p == NULL || p == v->data + skip || p == last - 1
        || ngx_strlchr(v->data, last, CR) != NULL
        || ngx_strlchr(v->data, last, LF) != NULL)
    {
        return ngx_http_malloc_export_invalid(cf, v);
    }

    kv = ngx_array_push(a);
    if (kv == NULL) {
        return NGX_CONF_ERROR;
    }

    /*
     * the keys are C strings for the encoder; a value ends its argument,
     * which nginx ends with a NUL
     */

    kv->key.len = p - (v->data + skip);
    kv->key.data = ngx_pnalloc(cf->pool, kv->key.len + 1);
    if (kv->key.data == NULL) {
        return NGX_CONF_ERROR;
    }

    *ngx_cpymem(kv->key.data, v->data + skip, kv->key.len) = '\0';

    for (p++; *p == ' '; p++) { /* void */ }

    kv->value.data = p;
    kv->value.len = last - p;

    return NGX_CONF_OK;
}


/*
 * header=name:value: a name that is a token and not one of the headers
 * nginx writes itself (a second Host or Content-Length would be read
 * after, or instead of, nginx's), a value without control characters
 */

static char *
ngx_http_malloc_export_header(ngx_conf_t *cf,
    ngx_http_malloc_export_conf_t *ec, ngx_str_t *v)
{
    u_char        *p, *last;
    char          *rv;
    ngx_uint_t     i;
    ngx_keyval_t  *h;

    static const char  *own[] = { "Transfer-Encoding", "Host",
                                  "Content-Length", "Content-Type",
                                  "Content-Encoding", "Connection",
                                  "User-Agent" };

    /* RFC 9110's tchar */
    static const char   tchar[] = "!#$%&'*+-.^_`|~";

    rv = ngx_http_malloc_export_pair(cf, &ec->headers, v, 7, ':');
    if (rv != NGX_CONF_OK) {
        return rv;
    }

    h = (ngx_keyval_t *) ec->headers.elts + ec->headers.nelts - 1;
    last = h->key.data + h->key.len;

    for (p = h->key.data; p < last; p++) {
        if (!(*p >= '0' && *p <= '9') && !((*p | 0x20) >= 'a'
                                           && (*p | 0x20) <= 'z')
            && ngx_strlchr((u_char *) tchar, (u_char *) tchar
                                             + sizeof(tchar) - 1, *p)
               == NULL)
        {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                               "invalid parameter \"%V\": the header name "
                               "\"%V\" has a character that a header name "
                               "cannot have (a space, a quote, a "
                               "bracket...)",
                               ngx_http_malloc_export_quoted(cf, v),
                               ngx_http_malloc_export_quoted(cf, &h->key));
            return NGX_CONF_ERROR;
        }
    }

    for (i = 0; i < sizeof(own) / sizeof(own[0]); i++) {
        if (h->key.len == ngx_strlen(own[i])
            && ngx_strncasecmp(h->key.data, (u_char *) own[i], h->key.len)
               == 0)
        {
            if (i == 0) {
                ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                                   "invalid parameter \"%V\": nginx sends "
                                   "the body with a Content-Length, never "
                                   "with a Transfer-Encoding", v);

            } else {
                ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                                   "invalid parameter \"%V\": nginx "
                                   "writes the %s header itself", v,
                                   own[i]);
            }

            return NGX_CONF_ERROR;
        }
    }

    last = h->value.data + h->value.len;

    for (p = h->value.data; p < last; p++) {
        if ((*p < ' ' && *p != '\t') || *p == 0x7f) {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                               "invalid parameter \"%V\": a control "
                               "character in the header's value",
                               ngx_http_malloc_export_quoted(cf, v));
            return NGX_CONF_ERROR;
        }
    }

    return NGX_CONF_OK;
}


/*
 * attribute=key=value: a key of UTF-8, given once, and none of the keys
 * the module sets on every push (nginx.malloc.*): Pyroscope keeps the
 * first of two keys and drops the other
 */

static char *
ngx_http_malloc_export_attribute(ngx_conf_t *cf,
    ngx_http_malloc_export_conf_t *ec, ngx_str_t *v)
{
    char          *rv;
    ngx_uint_t     i;
    ngx_keyval_t  *kv, *a;

    rv = ngx_http_malloc_export_pair(cf, &ec->attributes, v, 10, '=');
    if (rv != NGX_CONF_OK) {
        return rv;
    }

    a = ec->attributes.elts;
    kv = &a[ec->attributes.nelts - 1];

    if (ngx_http_malloc_otlp_utf8_valid((char *) kv->key.data, kv->key.len)
        != kv->key.len)
    {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "invalid parameter \"%V\": the key is not "
                           "UTF-8", ngx_http_malloc_export_quoted(cf, v));
        return NGX_CONF_ERROR;
    }

    if (kv->key.len >= sizeof("nginx.malloc.") - 1
        && ngx_strncmp(kv->key.data, "nginx.malloc.",
                       sizeof("nginx.malloc.") - 1) == 0)
    {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "invalid parameter \"%V\": keys that start "
                           "with \"nginx.malloc.\" are the module's own: "
                           "it sets nginx.malloc.source and "
                           "nginx.malloc.snapshot on every push", v);
        return NGX_CONF_ERROR;
    }

    for (i = 0; i + 1 < ec->attributes.nelts; i++) {
        if (a[i].key.len == kv->key.len
            && ngx_strncmp(a[i].key.data, kv->key.data, kv->key.len) == 0)
        {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                               "invalid parameter \"%V\": the attribute "
                               "\"%V\" is given twice", v, &kv->key);
            return NGX_CONF_ERROR;
        }
    }

    return NGX_CONF_OK;
}


static char *
ngx_http_malloc_export_invalid(ngx_conf_t *cf, ngx_str_t *v)
{
    ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                       "invalid parameter \"%V\": expected interval=time "
                       "(1s to 30d), timeout=time (100ms to 10m), "
                       "header=name:value, attribute=key=value, "
                       "sources=interval,watch,schedule,reload, ca=file "
                       "or payload=pprof",
                       ngx_http_malloc_export_quoted(cf, v));

    return NGX_CONF_ERROR;
}


/*
 * "interval,watch,schedule,reload", any of them, at least one;
 * NGX_DECLINED: an empty item
 */

static ngx_int_t
ngx_http_malloc_export_sources(ngx_http_malloc_export_conf_t *ec,
    ngx_str_t *list)
{
    u_char      *p, *last, *comma;
    size_t       len;
    ngx_uint_t   i;

    static const char  *names[] = { "interval", "watch", "schedule",
                                    "reload" };

    ec->sources = 0;

    p = list->data;
    last = list->data + list->len;

    while (p <= last) {
        comma = ngx_strlchr(p, last, ',');
        len = (comma ? comma : last) - p;

        if (len == 0) {
            return NGX_DECLINED;
        }

        for (i = 0; i < 4; i++) {
            if (len == ngx_strlen(names[i])
                && ngx_strncmp(p, names[i], len) == 0)
            {
                ec->sources |= 1 << i;
                break;
            }
        }

        if (i == 4) {
            return NGX_ERROR;
        }

        p += len + 1;
    }

    return ec->sources ? NGX_OK : NGX_ERROR;
}


char *
ngx_http_malloc_export_check(ngx_conf_t *cf, ngx_http_malloc_main_conf_t *mmcf)
{
    ngx_http_malloc_export_conf_t  *ec;

    ec = mmcf->export;

    if (ec == NULL) {
        return NGX_CONF_OK;
    }

    if (!mmcf->admin) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "malloc_export needs a location with "
                           "malloc_admin: sampling is turned on there");
        return NGX_CONF_ERROR;
    }

    if (mmcf->threads == 0) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "malloc_export needs malloc_threads: its "
                           "profiles are built on the module's threads, "
                           "never in the event loop");
        return NGX_CONF_ERROR;
    }

    if (ec->attributes.nelts > NGX_HTTP_MALLOC_EXPORT_ATTRS) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "malloc_export takes at most %d attribute= "
                           "parameters", NGX_HTTP_MALLOC_EXPORT_ATTRS);
        return NGX_CONF_ERROR;
    }

    if (ec->ca.len != 0 && ec->ssl == NULL) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "malloc_export's ca= is for an https URL, "
                           "not \"%V\"", &ec->url);
        return NGX_CONF_ERROR;
    }

#if (NGX_HTTP_SSL)
    if (ec->ssl != NULL) {
        return ngx_http_malloc_export_ssl(cf, ec);
    }
#endif

    return NGX_CONF_OK;
}


#if (NGX_HTTP_SSL)

/* the client's context: the collector's certificate is checked */

static char *
ngx_http_malloc_export_ssl(ngx_conf_t *cf, ngx_http_malloc_export_conf_t *ec)
{
    ngx_ssl_t           *ssl;
    ngx_pool_cleanup_t  *cln;

    ssl = ec->ssl;
    ssl->log = cf->log;

    if (ngx_ssl_create(ssl, NGX_SSL_TLSv1_2 | NGX_SSL_TLSv1_3, NULL)
        != NGX_OK)
    {
        return NGX_CONF_ERROR;
    }

    cln = ngx_pool_cleanup_add(cf->pool, 0);
    if (cln == NULL) {
        ngx_ssl_cleanup_ctx(ssl);
        return NGX_CONF_ERROR;
    }

    cln->handler = ngx_ssl_cleanup_ctx;
    cln->data = ssl;

    if (ec->ca.len != 0) {
        return (ngx_ssl_trusted_certificate(cf, ssl, &ec->ca, 4) == NGX_OK)
               ? NGX_CONF_OK : NGX_CONF_ERROR;
    }

    /* the system's trusted certificates, as curl checks them */

    if (SSL_CTX_set_default_verify_paths(ssl->ctx) != 1) {
        ngx_ssl_error(NGX_LOG_EMERG, cf->log, 0,
                      "SSL_CTX_set_default_verify_paths() failed");
        return NGX_CONF_ERROR;
    }

    return NGX_CONF_OK;
}

#endif


void
ngx_http_malloc_export_init_process(ngx_http_malloc_main_conf_t *mmcf)
{
    ngx_http_malloc_export_t  *ex;

    if (mmcf->export == NULL) {
        return;
    }

    ex = &ngx_http_malloc_export;
    ex->mmcf = mmcf;
    ex->ec = mmcf->export;

    ngx_http_malloc_export_resource(ex);

    /* the connection's own log: its errors are the export's to tell */

    ex->log = *ngx_cycle->log;
    ex->log.next = NULL;
    ex->log.log_level = NGX_LOG_CRIT;

    ex->dummy.fd = (ngx_socket_t) -1;

    ex->tick.handler = ngx_http_malloc_export_tick;
    ex->tick.data = &ex->dummy;
    ex->tick.log = ngx_cycle->log;
    ex->tick.cancelable = 1;

    ex->retry.handler = ngx_http_malloc_export_retry;
    ex->retry.data = &ex->dummy;
    ex->retry.log = ngx_cycle->log;
    ex->retry.cancelable = 1;

    /* the collection's timer does not hold a worker that is exiting */
    ex->co.ev.data = &ex->dummy;
    ex->co.ev.cancelable = 1;
    ex->co.mmcf = mmcf;
    ex->co.cmd = &ex->cmd;
    ex->co.timeout = NGX_HTTP_MALLOC_EXPORT_DUMPS;
    ex->co.collected = ngx_http_malloc_export_collected;
    ex->co.log = ngx_cycle->log;
    ex->co.data = ex;

    if (ngx_worker == 0
        && (ex->ec->sources & NGX_HTTP_MALLOC_EXPORT_INTERVAL))
    {
        ngx_add_timer(&ex->tick, (ngx_msec_t) ex->ec->interval * 1000);
    }
}


/* the resource: who sends, then the operator's attributes */

static void
ngx_http_malloc_export_resource(ngx_http_malloc_export_t *ex)
{
    u_char                       *p;
    ssize_t                       n;
    ngx_uint_t                    i;
    ngx_keyval_t                 *kv;
    ngx_http_malloc_otlp_attr_t  *a;
    char                          exe[NGX_MAX_PATH];

    static ngx_http_malloc_otlp_attr_t  fixed[] = {
        { "service.name", "nginx", 0 },
        { "host.name", NULL, 0 },
        { "process.pid", NULL, 0 },
        { "process.executable.name", "nginx", 0 },
        { "process.runtime.name", "nginx", 0 },
        { "process.runtime.version", NGINX_VERSION, 0 }
    };

    ngx_memcpy(ex->resource, fixed, sizeof(fixed));
    ex->nresource = sizeof(fixed) / sizeof(fixed[0]);

    /* nginx's hostname is a length and bytes, with no NUL after them */

    (void) ngx_cpystrn(ex->host, ngx_cycle->hostname.data,
                       ngx_min(ngx_cycle->hostname.len, NGX_MAXHOSTNAMELEN)
                       + 1);
    ex->resource[1].str = (char *) ex->host;
    ex->resource[2].num = (ngx_process == NGX_PROCESS_WORKER) ? getppid()
                                                               : ngx_pid;

    n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

    if (n > 0) {
        exe[n] = '\0';
        p = (u_char *) strrchr(exe, '/');
        p = (p != NULL) ? p + 1 : (u_char *) exe;

        ngx_cpystrn(ex->exe, p, sizeof(ex->exe));
        ex->resource[3].str = (char *) ex->exe;
    }

    kv = ex->ec->attributes.elts;

    for (i = 0; i < ex->ec->attributes.nelts; i++) {

        /* service.name and the like are the operator's to override */

        for (a = ex->resource; a < ex->resource + ex->nresource; a++) {
            if (ngx_strcmp(a->key, kv[i].key.data) == 0) {
                break;
            }
        }

        if (a == ex->resource + ex->nresource) {
            /* room for all: the configuration's check counted them */
            ex->nresource++;
            a->key = (char *) kv[i].key.data;
        }

        a->str = (char *) kv[i].value.data;
    }
}


/* worker 0, every interval: the workers' dumps while sampling is on */

static void
ngx_http_malloc_export_tick(ngx_event_t *ev)
{
    ngx_tm_t                   tm;
    ngx_http_malloc_export_t  *ex;

    ex = &ngx_http_malloc_export;

    if (ngx_exiting) {
        return;
    }

    ngx_add_timer(&ex->tick, (ngx_msec_t) ex->ec->interval * 1000);

    if (ex->collecting || !ngx_http_malloc_board_desired(ex->mmcf, NULL)) {
        return;
    }

    ngx_gmtime(ngx_time(), &tm);

    ngx_memzero(&ex->cmd, sizeof(ngx_http_malloc_cmd_t));
    ex->cmd.kind = NGX_HTTP_MALLOC_CMD_DUMP;

    (void) ngx_snprintf(ex->cmd.tmpl, NGX_HTTP_MALLOC_TMPL_MAX - 1,
                        ".export-%4d%02d%02dT%02d%02d%02dZ.%%p.heap%Z",
                        tm.ngx_tm_year, tm.ngx_tm_mon, tm.ngx_tm_mday,
                        tm.ngx_tm_hour, tm.ngx_tm_min, tm.ngx_tm_sec);

    ex->collecting = 1;

    ngx_http_malloc_collect(&ex->co);
}


static void
ngx_http_malloc_export_collected(ngx_http_malloc_collect_t *co,
    ngx_uint_t busy)
{
    char                            **paths;
    ngx_uint_t                        n;
    ngx_http_malloc_push_t            *job;
    ngx_http_malloc_export_t         *ex;
    ngx_http_malloc_export_state_t    delta;

    ex = co->data;
    ex->collecting = 0;

    if (busy) {
        /* the ring was full: the next interval tries again */
        return;
    }

    paths = ngx_http_malloc_export_dumps(ex, &n);

    if (paths == NULL) {
        /* a full disk, say: what would have been sent is not */
        ngx_memzero(&delta, sizeof(ngx_http_malloc_export_state_t));
        delta.dropped = 1;
        delta.last_error = ngx_time();
        (void) ngx_cpystrn(delta.reason, (u_char *) "no worker could dump "
                           "its heap (see the error log)",
                           NGX_HTTP_MALLOC_EXPORT_REASON);
        ngx_http_malloc_export_add(ex->mmcf, &delta);
        return;
    }

    job = ngx_http_malloc_export_job(ex, NGX_HTTP_MALLOC_EXPORT_INTERVAL,
                                     paths, n, 1);
    ngx_free(paths);

    if (job != NULL) {
        ngx_http_malloc_export_queue(ex, job);
    }
}


/* the dumps of the workers that answered; the others' are removed */

static char **
ngx_http_malloc_export_dumps(ngx_http_malloc_export_t *ex, ngx_uint_t *n)
{
    char                     **paths;
    ngx_uint_t                 i, k, nw;
    ngx_pool_t                *pool;
    ngx_http_malloc_worker_t  *w;
    char                       name[NGX_HTTP_MALLOC_NAME_MAX + 1];

    pool = ngx_create_pool(NGX_DEFAULT_POOL_SIZE, ngx_cycle->log);
    if (pool == NULL) {
        return NULL;
    }

    w = ngx_http_malloc_board_copy(ex->mmcf, pool, ex->co.seq, &nw);
    paths = (w != NULL) ? ngx_alloc((nw + 1) * sizeof(char *)
                                    + nw * NGX_MAX_PATH, ngx_cycle->log)
                        : NULL;

    if (paths == NULL) {
        ngx_destroy_pool(pool);
        return NULL;
    }

    for (i = 0, k = 0; i < nw; i++) {
        if (w[i].pid == 0) {
            continue;
        }

        (void) ngx_http_malloc_path_expand((char *) ex->cmd.tmpl,
                                           (long) w[i].pid, name,
                                           sizeof(name));

        paths[k] = (char *) (paths + nw + 1) + k * NGX_MAX_PATH;

        (void) ngx_snprintf((u_char *) paths[k], NGX_MAX_PATH, "%V/%s%Z",
                            &ex->mmcf->dump_dir->name, name);

        if (!w[i].answered || w[i].result.seq != ex->co.seq
            || w[i].result.rc != 0)
        {
            /* a dump cut short is not read, but it goes */
            (void) ngx_delete_file(paths[k]);
            continue;
        }

        k++;
    }

    paths[k] = NULL;
    *n = k;

    ngx_destroy_pool(pool);

    if (k == 0) {
        ngx_free(paths);
        return NULL;
    }

    return paths;
}


void
ngx_http_malloc_export_snapshot(ngx_http_malloc_main_conf_t *mmcf,
    ngx_uint_t source, char **paths, ngx_log_t *log)
{
    ngx_uint_t                 n;
    ngx_http_malloc_push_t     *job;
    ngx_http_malloc_export_t  *ex;

    ex = &ngx_http_malloc_export;

    if (mmcf->export == NULL || !(mmcf->export->sources & source)
        || ex->ec == NULL)
    {
        return;
    }

    for (n = 0; paths[n] != NULL; n++) { /* void */ }

    job = ngx_http_malloc_export_job(ex, source, paths, n, 0);

    if (job != NULL) {
        ngx_http_malloc_export_queue(ex, job);
    }
}


/* a request to build from "paths" (copied), with its attributes */

static ngx_http_malloc_push_t *
ngx_http_malloc_export_job(ngx_http_malloc_export_t *ex, ngx_uint_t source,
    char **paths, ngx_uint_t n, ngx_uint_t dumps)
{
    u_char                 *p;
    size_t                  size;
    ngx_uint_t              i;
    ngx_http_malloc_push_t  *job;

    static const char  *kinds[] = { "interval", "watch", "schedule",
                                    "reload" };

    size = sizeof(ngx_http_malloc_push_t) + (n + 1) * sizeof(char *);

    for (i = 0; i < n; i++) {
        size += ngx_strlen(paths[i]) + 1;
    }

    job = ngx_alloc(size, ngx_cycle->log);
    if (job == NULL) {
        return NULL;
    }

    ngx_memzero(job, sizeof(ngx_http_malloc_push_t));

    job->source = source;
    job->dumps = dumps;
    job->paths = (char **) (job + 1);
    p = (u_char *) (job->paths + n + 1);

    for (i = 0; i < n; i++) {
        job->paths[i] = (char *) p;
        p = ngx_cpymem(p, paths[i], ngx_strlen(paths[i]) + 1);
    }

    job->paths[n] = NULL;

    /* bit 1 << k is kinds[k] */

    for (i = 0; (1u << i) != source; i++) { /* void */ }

    job->attrs[0].key = "nginx.malloc.source";
    job->attrs[0].str = kinds[i];
    job->ot.nattrs = 1;

    if (!dumps) {
        p = (u_char *) strrchr(paths[0], '/');
        ngx_cpystrn(job->name, p ? p + 1 : (u_char *) paths[0],
                    sizeof(job->name));

        job->attrs[1].key = "nginx.malloc.snapshot";
        job->attrs[1].str = (char *) job->name;
        job->ot.nattrs = 2;
    }

    /*
     * the kind goes in the resource too: Pyroscope makes its labels of
     * the resource's attributes only, and a snapshot is not the live heap
     */

    ngx_memcpy(job->resource, ex->resource,
               ex->nresource * sizeof(ngx_http_malloc_otlp_attr_t));
    job->resource[ex->nresource] = job->attrs[0];

    job->ot.attrs = job->attrs;
    job->ot.resource = job->resource;
    job->ot.nresource = ex->nresource + 1;
    job->ot.scope_name = "ngx_http_malloc_module";
    job->ot.scope_version = NGX_HTTP_MALLOC_VERSION;
    job->ot.max_samples = NGX_HTTP_MALLOC_EXPORT_SAMPLES;
    job->ot.result = &job->result;

    job->task.work = ngx_http_malloc_export_build;
    job->task.done = ngx_http_malloc_export_built;
    job->task.data = job;
    job->task.build = 1;

    return job;
}


/* into the queue, the oldest one at rest giving way when it is full */

static void
ngx_http_malloc_export_queue(ngx_http_malloc_export_t *ex,
    ngx_http_malloc_push_t *job)
{
    ngx_uint_t                       i;
    ngx_http_malloc_export_state_t   delta;

    if (ex->njobs == NGX_HTTP_MALLOC_EXPORT_JOBS) {
        for (i = 0; i < ex->njobs; i++) {
            if (ex->jobs[i]->state == NGX_HTTP_MALLOC_JOB_WAITING
                || ex->jobs[i]->state == NGX_HTTP_MALLOC_JOB_READY)
            {
                ngx_http_malloc_export_remove(ex, ex->jobs[i], 1);
                break;
            }
        }

        if (ex->njobs == NGX_HTTP_MALLOC_EXPORT_JOBS) {
            ngx_memzero(&delta, sizeof(ngx_http_malloc_export_state_t));
            delta.dropped = 1;
            ngx_http_malloc_export_add(ex->mmcf, &delta);

            if (job->dumps) {
                for (i = 0; job->paths[i] != NULL; i++) {
                    (void) ngx_delete_file(job->paths[i]);
                }
            }

            ngx_free(job);
            return;
        }
    }

    ex->jobs[ex->njobs++] = job;

    ngx_memzero(&delta, sizeof(ngx_http_malloc_export_state_t));
    delta.queued = 1;
    ngx_http_malloc_export_add(ex->mmcf, &delta);

    ngx_http_malloc_export_kick(ex);
}


static void
ngx_http_malloc_export_remove(ngx_http_malloc_export_t *ex,
    ngx_http_malloc_push_t *job, ngx_uint_t dropped)
{
    ngx_uint_t                       i;
    ngx_http_malloc_export_state_t   delta;

    for (i = 0; i < ex->njobs && ex->jobs[i] != job; i++) { /* void */ }

    if (i == ex->njobs) {
        return;
    }

    ngx_memmove(&ex->jobs[i], &ex->jobs[i + 1],
                (ex->njobs - i - 1) * sizeof(ngx_http_malloc_push_t *));
    ex->njobs--;

    ngx_memzero(&delta, sizeof(ngx_http_malloc_export_state_t));
    delta.queued = -1;
    delta.dropped = dropped;
    ngx_http_malloc_export_add(ex->mmcf, &delta);

    if (job->dumps && job->state == NGX_HTTP_MALLOC_JOB_WAITING) {
        for (i = 0; job->paths[i] != NULL; i++) {
            (void) ngx_delete_file(job->paths[i]);
        }
    }

    ngx_http_malloc_mbuf_free(&job->body);
    ngx_free(job);
}


/* one build at a time, one request at a time, each when it is due */

static void
ngx_http_malloc_export_kick(ngx_http_malloc_export_t *ex)
{
    ngx_uint_t              i;
    ngx_msec_int_t          left;
    ngx_http_malloc_push_t  *job;

    for (i = 0; !ex->building && i < ex->njobs; i++) {
        job = ex->jobs[i];

        if (job->state != NGX_HTTP_MALLOC_JOB_WAITING) {
            continue;
        }

        job->state = NGX_HTTP_MALLOC_JOB_BUILDING;
        ex->building = 1;

        if (ngx_http_malloc_threads_post(&job->task, ngx_cycle->log)
            != NGX_OK)
        {
            /* no thread now (malloc_threads is checked): built in place */
            ngx_http_malloc_export_build(job);
            ngx_http_malloc_export_built(job);
            return;
        }
    }

    if (ex->sending != NULL || ngx_exiting) {
        return;
    }

    for (i = 0; i < ex->njobs; i++) {
        job = ex->jobs[i];

        if (job->state != NGX_HTTP_MALLOC_JOB_READY) {
            continue;
        }

        /* after a failure the export as a whole waits, as OTLP asks */

        left = (ngx_msec_int_t) (ex->due - ngx_current_msec);

        if (left > 0) {
            ngx_add_timer(&ex->retry, (ngx_msec_t) left);
            return;
        }

        ngx_http_malloc_export_connect(ex, job);
        return;
    }
}


/* in a thread: the files read, merged, named and encoded, gzipped */

static void
ngx_http_malloc_export_build(void *data)
{
    ngx_http_malloc_push_t *job = data;

    struct timespec         ts;
    ngx_http_malloc_pipe_t  pl;

    if (ngx_http_malloc_pipe_init(&pl) != 0) {
        job->rc = NGX_HTTP_MALLOC_PIPE_NOMEM;
        ngx_cpystrn((u_char *) job->error, (u_char *) "out of memory",
                    sizeof(job->error));
        return;
    }

    (void) clock_gettime(CLOCK_REALTIME, &ts);
    job->ot.time_nanos = (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;

    pl.format = NGX_HTTP_MALLOC_PIPE_OTLP;
    pl.otlp = &job->ot;
    pl.payload = ngx_http_malloc_export.ec->payload;
    pl.rename = ngx_http_malloc_symbols_demangle;

    if (job->dumps) {
        (void) ngx_http_malloc_pipe_read(&pl, job->paths, 0);

    } else {
        pl.snapshot = job->paths;
    }

    job->rc = ngx_http_malloc_pipe_encode(&pl);

    /* the body waits in the queue; the build's memory goes now */

    if (job->rc == NGX_HTTP_MALLOC_PIPE_OK) {
        job->body = pl.out;
        ngx_memzero(&pl.out, sizeof(ngx_http_malloc_mbuf_t));

    } else {
        ngx_memcpy(job->error, pl.error, sizeof(job->error));
    }

    ngx_http_malloc_pipe_free(&pl);
}


static void
ngx_http_malloc_export_built(void *data)
{
    ngx_http_malloc_push_t *job = data;

    ngx_http_malloc_export_t        *ex;
    ngx_http_malloc_export_state_t   delta;

    ex = &ngx_http_malloc_export;
    ex->building = 0;

    job->state = NGX_HTTP_MALLOC_JOB_READY;

    if (job->rc != NGX_HTTP_MALLOC_PIPE_OK) {
        ngx_log_error(NGX_LOG_WARN, ngx_cycle->log, 0,
                      "malloc export: the profile for \"%V\" was not "
                      "built: %s", &ex->ec->url, job->error);

        ngx_http_malloc_export_remove(ex, job, 1);
        ngx_http_malloc_export_kick(ex);
        return;
    }

    job->first = ngx_time();

    if (job->result.folded != 0) {
        ngx_memzero(&delta, sizeof(ngx_http_malloc_export_state_t));
        delta.capped = 1;
        delta.last_capped = ngx_time();
        delta.capped_stacks = job->result.stacks;
        delta.capped_folded = job->result.folded;
        ngx_http_malloc_export_add(ex->mmcf, &delta);
    }

    ngx_http_malloc_export_kick(ex);
}


static void
ngx_http_malloc_export_retry(ngx_event_t *ev)
{
    ngx_http_malloc_export_kick(&ngx_http_malloc_export);
}


static void
ngx_http_malloc_export_connect(ngx_http_malloc_export_t *ex,
    ngx_http_malloc_push_t *job)
{
    ngx_int_t          rc;
    ngx_err_t          err;
    ngx_connection_t  *c;

    if (ngx_http_malloc_export_request(ex, job) != NGX_OK) {
        /* out of memory for its head: the next one may fare better */
        ngx_http_malloc_export_remove(ex, job, 1);
        ngx_add_timer(&ex->retry, 1000);
        return;
    }

    ex->sending = job;
    job->state = NGX_HTTP_MALLOC_JOB_SENDING;

    ngx_memzero(&ex->pc, sizeof(ngx_peer_connection_t));

    ex->pc.sockaddr = ex->ec->addr.sockaddr;
    ex->pc.socklen = ex->ec->addr.socklen;
    ex->pc.name = &ex->ec->addr.name;
    ex->pc.get = ngx_event_get_peer;
    ex->pc.log = &ex->log;
    ex->pc.log_error = NGX_ERROR_INFO;

    rc = ngx_event_connect_peer(&ex->pc);
    err = ngx_socket_errno;

    if (rc == NGX_ERROR || rc == NGX_BUSY || rc == NGX_DECLINED) {
        ex->pc.connection = NULL;
        ngx_http_malloc_export_done(ex, 0, 0, "connect() failed: %s",
                                    strerror(err));
        return;
    }

    c = ex->pc.connection;
    c->data = ex;
    c->log_error = NGX_ERROR_INFO;
    c->write->handler = ngx_http_malloc_export_write;
    c->read->handler = ngx_http_malloc_export_read;

    c->pool = ngx_create_pool(1024, &ex->log);
    if (c->pool == NULL) {
        ngx_http_malloc_export_done(ex, 0, 0, "out of memory");
        return;
    }

    /* one timer for the whole exchange */
    ngx_add_timer(c->read, ex->ec->timeout);

    if (rc == NGX_OK) {
        ngx_http_malloc_export_write(c->write);
    }
}


/* the request's head, the body being the pipe's output */

static ngx_int_t
ngx_http_malloc_export_request(ngx_http_malloc_export_t *ex,
    ngx_http_malloc_push_t *job)
{
    u_char        *p;
    size_t         len;
    ngx_uint_t     i;
    ngx_keyval_t  *h;

    static const char  head[] =
        "Content-Type: application/x-protobuf" CRLF
        "Content-Encoding: gzip" CRLF
        "User-Agent: ngx_http_malloc_module/" NGX_HTTP_MALLOC_VERSION CRLF
        "Connection: close" CRLF;

    len = sizeof("POST  HTTP/1.1" CRLF "Host: " CRLF) - 1 + ex->ec->path.len
          + ex->ec->host.len + sizeof(head) - 1
          + sizeof("Content-Length: " CRLF CRLF) - 1 + NGX_SIZE_T_LEN;

    h = ex->ec->headers.elts;

    for (i = 0; i < ex->ec->headers.nelts; i++) {
        len += h[i].key.len + 2 + h[i].value.len + 2;
    }

    ngx_free(ex->head);

    ex->head = ngx_alloc(len, ngx_cycle->log);
    if (ex->head == NULL) {
        return NGX_ERROR;
    }

    p = ngx_sprintf(ex->head, "POST %V HTTP/1.1" CRLF "Host: %V" CRLF
                    "%s" "Content-Length: %uz" CRLF, &ex->ec->path,
                    &ex->ec->host, head, job->body.len);

    for (i = 0; i < ex->ec->headers.nelts; i++) {
        p = ngx_sprintf(p, "%V: %V" CRLF, &h[i].key, &h[i].value);
    }

    *p++ = CR; *p++ = LF;

    ex->head_len = p - ex->head;
    ex->written = 0;
    ex->answer_len = 0;

    return NGX_OK;
}


static void
ngx_http_malloc_export_write(ngx_event_t *wev)
{
    size_t                     total;
    ssize_t                    n;
    ngx_connection_t          *c;
    ngx_http_malloc_export_t  *ex;
    ngx_http_malloc_push_t     *job;

    c = wev->data;
    ex = c->data;
    job = ex->sending;

    if (ex->written == 0 && !ngx_http_malloc_export_tls(c)) {
        if (ngx_http_malloc_export_connected(c) != NGX_OK) {
            return;
        }

#if (NGX_HTTP_SSL)
        if (ex->ec->ssl != NULL) {
            ngx_http_malloc_export_handshake(c);
            return;
        }
#endif
    }

    total = ex->head_len + job->body.len;

    while (ex->written < total) {
        if (ex->written < ex->head_len) {
            n = c->send(c, ex->head + ex->written,
                        ex->head_len - ex->written);
        } else {
            n = c->send(c, job->body.data + ex->written - ex->head_len,
                        total - ex->written);
        }

        if (n == NGX_ERROR) {
            ngx_http_malloc_export_done(ex, 0, 0, "send() failed: %s",
                                        strerror(ngx_socket_errno));
            return;
        }

        if (n == NGX_AGAIN || n == 0) {
            if (ngx_handle_write_event(wev, 0) != NGX_OK) {
                ngx_http_malloc_export_done(ex, 0, 0, "cannot wait to "
                                            "write");
            }

            return;
        }

        ex->written += n;
    }

    wev->handler = ngx_http_malloc_export_dummy;

    if (c->read->ready) {
        ngx_http_malloc_export_read(c->read);
        return;
    }

    if (ngx_handle_read_event(c->read, 0) != NGX_OK) {
        ngx_http_malloc_export_done(ex, 0, 0, "cannot wait to read");
    }
}


/* the outcome of a non-blocking connect(), as upstreams test it */

static ngx_int_t
ngx_http_malloc_export_connected(ngx_connection_t *c)
{
    int                        err;
    socklen_t                  len;
    ngx_http_malloc_export_t  *ex;

    ex = c->data;

    err = 0;
    len = sizeof(int);

    if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, (void *) &err, &len) == -1) {
        err = ngx_socket_errno;
    }

    if (err) {
        ngx_http_malloc_export_done(ex, 0, 0, "connect() failed: %s",
                                    strerror(err));
        return NGX_ERROR;
    }

    return NGX_OK;
}


#if (NGX_HTTP_SSL)

static void
ngx_http_malloc_export_handshake(ngx_connection_t *c)
{
    ngx_int_t                  rc;
    ngx_http_malloc_export_t  *ex;

    ex = c->data;

    if (ngx_ssl_create_connection(ex->ec->ssl, c, NGX_SSL_CLIENT) != NGX_OK) {
        ngx_http_malloc_export_done(ex, 0, 0, "SSL connection failed");
        return;
    }

    (void) SSL_set_tlsext_host_name(c->ssl->connection,
                                    (char *) ex->ec->server_name.data);

    rc = ngx_ssl_handshake(c);

    if (rc == NGX_AGAIN) {
        c->ssl->handler = ngx_http_malloc_export_handshaked;
        return;
    }

    ngx_http_malloc_export_handshaked(c);
}


static void
ngx_http_malloc_export_handshaked(ngx_connection_t *c)
{
    long                       rc;
    ngx_http_malloc_export_t  *ex;

    ex = c->data;

    if (!c->ssl->handshaked) {
        ngx_http_malloc_export_done(ex, 0, 0, "SSL handshake failed");
        return;
    }

    rc = SSL_get_verify_result(c->ssl->connection);

    if (rc != X509_V_OK) {
        ngx_http_malloc_export_done(ex, 0, 0, "the collector's certificate "
                                    "is not trusted: %s",
                                    X509_verify_cert_error_string(rc));
        return;
    }

    if (ngx_ssl_check_host(c, &ex->ec->server_name) != NGX_OK) {
        ngx_http_malloc_export_done(ex, 0, 0, "the collector's certificate "
                                    "is not for \"%V\"",
                                    &ex->ec->server_name);
        return;
    }

    c->write->handler = ngx_http_malloc_export_write;
    c->read->handler = ngx_http_malloc_export_read;

    ngx_http_malloc_export_write(c->write);
}

#endif


static void
ngx_http_malloc_export_read(ngx_event_t *rev)
{
    ssize_t                    n;
    ngx_connection_t          *c;
    ngx_http_malloc_export_t  *ex;

    c = rev->data;
    ex = c->data;

    if (rev->timedout) {
        ngx_http_malloc_export_done(ex, 0, 0, "timed out after %M ms",
                                    ex->ec->timeout);
        return;
    }

    /* an error on the socket wakes the reader first: say which */

    if (ex->written == 0 && !ngx_http_malloc_export_tls(c)) {
        if (ngx_http_malloc_export_connected(c) == NGX_OK) {
            (void) ngx_handle_read_event(rev, 0);
        }

        return;
    }

    for ( ;; ) {
        n = c->recv(c, ex->answer + ex->answer_len,
                    sizeof(ex->answer) - 1 - ex->answer_len);

        if (n == NGX_AGAIN) {
            if (ngx_handle_read_event(rev, 0) != NGX_OK) {
                ngx_http_malloc_export_done(ex, 0, 0, "cannot wait to "
                                            "read");
            }

            return;
        }

        if (n == NGX_ERROR) {
            ngx_http_malloc_export_done(ex, 0, 0, "recv() failed: %s",
                                        strerror(ngx_socket_errno));
            return;
        }

        ex->answer_len += n;
        ex->answer[ex->answer_len] = '\0';

        /* the status line and the headers are all it takes */

        if (n == 0 || ex->answer_len == sizeof(ex->answer) - 1
            || ngx_strstr(ex->answer, CRLF CRLF) != NULL)
        {
            ngx_http_malloc_export_answered(ex);
            return;
        }
    }
}


/* "HTTP/1.1 503 ..." and its Retry-After, in seconds */

static void
ngx_http_malloc_export_answered(ngx_http_malloc_export_t *ex)
{
    u_char     *p, *eol, *line;
    time_t      after;
    ngx_int_t   status;

    p = ex->answer;

    if (ex->answer_len < 12 || ngx_strncmp(p, "HTTP/1.", 7) != 0
        || p[8] != ' ')
    {
        ngx_http_malloc_export_done(ex, 0, 0, "the collector's answer is "
                                    "not HTTP");
        return;
    }

    status = ngx_atoi(p + 9, 3);

    if (status == NGX_ERROR) {
        ngx_http_malloc_export_done(ex, 0, 0, "the collector's answer is "
                                    "not HTTP");
        return;
    }

    line = (u_char *) ngx_strstr(p, CRLF);
    line = (line != NULL) ? line : p + ex->answer_len;

    after = 0;

    for (p = line; p != NULL; p = (u_char *) ngx_strstr(p + 2, CRLF)) {
        if (ngx_strncasecmp(p + 2, (u_char *) "Retry-After:", 12) == 0) {
            p += 14;

            while (*p == ' ') {
                p++;
            }

            for (eol = p; *eol >= '0' && *eol <= '9'; eol++) { /* void */ }

            after = ngx_atotm(p, eol - p);
            break;
        }
    }

    ngx_http_malloc_export_done(ex, status, after > 0 ? after : 0,
                                "%*s", (size_t) (line - ex->answer - 9),
                                ex->answer + 9);
}


static void
ngx_http_malloc_export_dummy(ngx_event_t *ev)
{
}


/*
 * The end of an attempt: status 2xx is success; 0 (no answer), 429, 502,
 * 503 and 504 are tried again later, any other answer is not
 */

static void
ngx_http_malloc_export_done(ngx_http_malloc_export_t *ex, ngx_int_t status,
    time_t retry_after, const char *fmt, ...)
{
    u_char                          *p;
    va_list                          args;
    ngx_uint_t                       again;
    ngx_msec_t                       wait;
    ngx_http_malloc_push_t           *job;
    ngx_http_malloc_export_state_t   delta;

    job = ex->sending;

    ngx_http_malloc_export_close(ex);
    ex->sending = NULL;
    job->state = NGX_HTTP_MALLOC_JOB_READY;

    ngx_memzero(&delta, sizeof(ngx_http_malloc_export_state_t));

    if (status >= 200 && status < 300) {
        if (ex->failing) {
            ngx_log_error(NGX_LOG_NOTICE, ngx_cycle->log, 0,
                          "malloc export to \"%V\" works again, after %ui "
                          "failed attempts", &ex->ec->url, ex->failing);
        }

        ex->failing = 0;
        ex->backoff = 0;

        delta.sent = 1;
        delta.bytes = job->body.len;
        delta.last_success = ngx_time();
        ngx_http_malloc_export_add(ex->mmcf, &delta);

        ngx_http_malloc_export_remove(ex, job, 0);
        ngx_http_malloc_export_kick(ex);
        return;
    }

    /* "503 Service Unavailable", "connect() failed: ..." */

    va_start(args, fmt);
    p = ngx_vslprintf(delta.reason, delta.reason
                      + NGX_HTTP_MALLOC_EXPORT_REASON - 1, fmt, args);
    va_end(args);
    *p = '\0';

    again = (status == 0 || status == 429 || status == 502 || status == 503
             || status == 504);

    if (again && ngx_time() - job->first >= NGX_HTTP_MALLOC_EXPORT_GIVE_UP) {
        again = 0;
    }

    ex->failing++;

    delta.failed = 1;
    delta.last_error = ngx_time();
    ngx_http_malloc_export_add(ex->mmcf, &delta);

    if (ngx_time() - ex->warned >= ex->ec->interval) {
        ex->warned = ngx_time();

        ngx_log_error(NGX_LOG_WARN, ngx_cycle->log, 0,
                      "malloc export to \"%V\" failed: %s%s", &ex->ec->url,
                      delta.reason, again ? ", will try again"
                                          : ", the profile is dropped");
    }

    if (!again) {
        ngx_http_malloc_export_remove(ex, job, 1);
        ngx_http_malloc_export_kick(ex);
        return;
    }

    /* the backoff: 1 s, doubling, within the interval, or as told */

    ex->backoff = ngx_min(ex->backoff ? ex->backoff * 2 : 1000,
                          (ngx_msec_t) ex->ec->interval * 1000);
    wait = ex->backoff;

    if (retry_after > 0) {
        wait = (ngx_msec_t) ngx_min(retry_after,
                                    NGX_HTTP_MALLOC_EXPORT_GIVE_UP) * 1000;
    }

    ex->due = ngx_current_msec + wait;

    ngx_http_malloc_export_kick(ex);
}


static void
ngx_http_malloc_export_close(ngx_http_malloc_export_t *ex)
{
    ngx_pool_t        *pool;
    ngx_connection_t  *c;

    c = ex->pc.connection;

    if (c == NULL) {
        return;
    }

    ex->pc.connection = NULL;
    pool = c->pool;

#if (NGX_HTTP_SSL)
    if (c->ssl) {
        c->ssl->no_wait_shutdown = 1;
        c->ssl->no_send_shutdown = 1;
        (void) ngx_ssl_shutdown(c);
    }
#endif

    ngx_close_connection(c);

    if (pool != NULL) {
        ngx_destroy_pool(pool);
    }
}


/*
 * A request under way is closed, and what waits here is lost with the
 * process: no longer queued, and no file of it left.  A reload ends the
 * old worker 0 at once, in the middle of an interval's collection, say:
 * its command is closed, so that a worker that dumps later removes its
 * own file, and those already written go; so do the dumps of the jobs
 * not built yet.
 */

void
ngx_http_malloc_export_exit_process(void)
{
    char                           **paths;
    ngx_uint_t                       i, k, n;
    ngx_http_malloc_push_t           *job;
    ngx_http_malloc_export_t        *ex;
    ngx_http_malloc_export_state_t   delta;

    ex = &ngx_http_malloc_export;

    /* before nginx looks for sockets left open: a TERM while quitting */
    ngx_http_malloc_export_close(ex);

    if (ex->mmcf == NULL) {
        return;
    }

    if (ex->collecting) {
        ngx_http_malloc_collect_end(&ex->co);
        ex->collecting = 0;

        paths = ngx_http_malloc_export_dumps(ex, &n);

        for (i = 0; paths != NULL && i < n; i++) {
            (void) ngx_delete_file(paths[i]);
        }

        ngx_free(paths);
    }

    if (ex->njobs == 0) {
        return;
    }

    for (k = 0; k < ex->njobs; k++) {
        job = ex->jobs[k];

        if (job->dumps && job->state == NGX_HTTP_MALLOC_JOB_WAITING) {
            for (i = 0; job->paths[i] != NULL; i++) {
                (void) ngx_delete_file(job->paths[i]);
            }
        }
    }

    ngx_memzero(&delta, sizeof(ngx_http_malloc_export_state_t));
    delta.queued = -(ngx_int_t) ex->njobs;
    delta.dropped = ex->njobs;
    ngx_http_malloc_export_add(ex->mmcf, &delta);

    ex->njobs = 0;
}


json_t *
ngx_http_malloc_export_json(ngx_http_malloc_main_conf_t *mmcf)
{
    json_t                          *json, *sources, *err, *capped;
    ngx_uint_t                       i;
    ngx_http_malloc_export_conf_t   *ec;
    ngx_http_malloc_export_state_t   st;

    static const char  *kinds[] = { "interval", "watch", "schedule",
                                    "reload" };

    ec = mmcf->export;

    if (ec == NULL) {
        return json_null();
    }

    ngx_http_malloc_export_state(mmcf, &st);

    json = json_object();
    sources = json_array();

    for (i = 0; i < 4; i++) {
        if (ec->sources & (1 << i)) {
            json_array_append_new(sources, json_string(kinds[i]));
        }
    }

    err = json_null();

    if (st.last_error != 0) {
        err = json_object();
        json_object_set_new(err, "time",
                            ngx_http_malloc_time_json(st.last_error));
        json_object_set_new(err, "reason",
                            json_string((char *) st.reason));
    }

    json_object_set_new(json, "url",
                        json_stringn((char *) ec->url.data, ec->url.len));
    json_object_set_new(json, "interval",
                        json_integer((json_int_t) ec->interval));
    json_object_set_new(json, "sources", sources);
    json_object_set_new(json, "sent", json_integer((json_int_t) st.sent));
    json_object_set_new(json, "failed",
                        json_integer((json_int_t) st.failed));
    json_object_set_new(json, "dropped",
                        json_integer((json_int_t) st.dropped));
    json_object_set_new(json, "queued", json_integer(st.queued));
    json_object_set_new(json, "bytes", json_integer((json_int_t) st.bytes));
    json_object_set_new(json, "last_success",
                        st.last_success
                        ? ngx_http_malloc_time_json(st.last_success)
                        : json_null());
    json_object_set_new(json, "last_error", err);

    capped = json_null();

    if (st.last_capped != 0) {
        capped = json_object();
        json_object_set_new(capped, "time",
                            ngx_http_malloc_time_json(st.last_capped));
        json_object_set_new(capped, "stacks",
                            json_integer((json_int_t) st.capped_stacks));
        json_object_set_new(capped, "folded",
                            json_integer((json_int_t) st.capped_folded));
    }

    json_object_set_new(json, "max_samples",
                        json_integer(NGX_HTTP_MALLOC_EXPORT_SAMPLES));
    json_object_set_new(json, "capped",
                        json_integer((json_int_t) st.capped));
    json_object_set_new(json, "last_capped", capped);

    return json;
}


/*
 * The export's part of the zone: the counts of "delta" added (queued may
 * be negative); a non-zero last_success or last_error, with its reason,
 * replaces the one kept.
 */

static void
ngx_http_malloc_export_add(ngx_http_malloc_main_conf_t *mmcf,
    const ngx_http_malloc_export_state_t *delta)
{
    ngx_http_malloc_export_state_t  *st;

    st = ngx_http_malloc_board_lock(mmcf, NGX_HTTP_MALLOC_PART_EXPORT);

    st->sent += delta->sent;
    st->failed += delta->failed;
    st->dropped += delta->dropped;
    st->bytes += delta->bytes;
    st->queued += delta->queued;

    if (st->queued < 0) {
        /* a reload cannot make it so, but a reader must never see it */
        st->queued = 0;
    }

    if (delta->last_success != 0) {
        st->last_success = delta->last_success;
    }

    if (delta->last_error != 0) {
        st->last_error = delta->last_error;
        ngx_memcpy(st->reason, delta->reason, NGX_HTTP_MALLOC_EXPORT_REASON);
    }

    st->capped += delta->capped;

    if (delta->last_capped != 0) {
        st->last_capped = delta->last_capped;
        st->capped_stacks = delta->capped_stacks;
        st->capped_folded = delta->capped_folded;
    }

    ngx_http_malloc_board_unlock(mmcf);
}


void
ngx_http_malloc_export_state(ngx_http_malloc_main_conf_t *mmcf,
    ngx_http_malloc_export_state_t *state)
{
    ngx_http_malloc_export_state_t  *st;

    st = ngx_http_malloc_board_lock(mmcf, NGX_HTTP_MALLOC_PART_EXPORT);
    *state = *st;
    ngx_http_malloc_board_unlock(mmcf);
}
