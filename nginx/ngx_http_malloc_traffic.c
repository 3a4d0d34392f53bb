
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * What traffic holds (GET traffic): every worker walks its connections
 * (ngx_http_malloc_walk.c), as the command TRAFFIC asks, and writes what
 * it found into a hidden file; here the files are read back, removed and
 * added up: totals, states, locations (by server and name), servers, and
 * the biggest requests of all workers.  With malloc_traffic on, each
 * worker also publishes its figures about every second, which GET stats
 * says in a sentence and GET metrics exposes, without waiting.
 *
 * Owns: the answer's fields and the traffic metrics' names.  Calls: request,
 * reply, board, and the pure core (tally; path for the hidden names).
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include <jansson.h>

#include "ngx_http_malloc_module.h"
#include "ngx_http_malloc_board.h"
#include "ngx_http_malloc_request.h"
#include "ngx_http_malloc_reply.h"
#include "ngx_http_malloc_traffic.h"
#include "ngx_http_malloc_tally.h"
#include "ngx_http_malloc_path.h"


/* the sentence's room */
#define NGX_HTTP_MALLOC_TRAFFIC_TEXT   512

/* a name as a metric's label: each byte may be escaped */
#define NGX_HTTP_MALLOC_LABEL_MAX  (2 * NGX_HTTP_MALLOC_TALLY_NAME)


/* which of the traffic metrics a location's series is of */
#define NGX_HTTP_MALLOC_TRAFFIC_BYTES     0
#define NGX_HTTP_MALLOC_TRAFFIC_REQUESTS  1
#define NGX_HTTP_MALLOC_TRAFFIC_POOLS     2


typedef struct {
    json_t                       *workers;
    json_t                       *totals;
    json_t                       *locations;    /* by "server\nlocation" */
    json_t                       *top;
    json_t                       *error;        /* the first failure */
    ngx_uint_t                    status;
} ngx_http_malloc_traffic_sum_t;


static ngx_int_t ngx_http_malloc_traffic_answer(ngx_http_request_t *r,
    ngx_http_malloc_job_t *job);
static void ngx_http_malloc_traffic_worker(ngx_http_request_t *r,
    ngx_http_malloc_job_t *job, ngx_http_malloc_worker_t *w,
    ngx_http_malloc_traffic_sum_t *sum);
static void ngx_http_malloc_traffic_fill(json_t *json,
    ngx_http_malloc_traffic_sum_t *sum, size_t top);
static void ngx_http_malloc_traffic_merge(ngx_http_malloc_traffic_sum_t *sum,
    json_t *part, ngx_http_malloc_worker_t *w, json_t *wj);
static void ngx_http_malloc_traffic_add(json_t *to, json_t *from);
static json_t *ngx_http_malloc_traffic_sorted(json_t *items, size_t max);
static int ngx_libc_cdecl ngx_http_malloc_traffic_cmp(const void *a,
    const void *b);
static json_t *ngx_http_malloc_traffic_servers(json_t *locations);
static json_t *ngx_http_malloc_traffic_text(json_t *part, json_t *locations);
static uint64_t ngx_http_malloc_traffic_int(json_t *o, const char *key);
static uint64_t ngx_http_malloc_traffic_named(
    ngx_http_malloc_tally_table_t **t, ngx_uint_t n,
    const ngx_http_malloc_tally_named_t *row);
static u_char *ngx_http_malloc_traffic_rows(u_char *p, u_char *last,
    ngx_http_malloc_worker_t *w, ngx_http_malloc_tally_table_t **t,
    ngx_uint_t n, ngx_uint_t metric);
static u_char *ngx_http_malloc_traffic_series(u_char *p, u_char *last,
    ngx_uint_t worker, const ngx_http_malloc_tally_named_t *row,
    ngx_uint_t metric);
static u_char *ngx_http_malloc_traffic_histogram(u_char *p, u_char *last,
    ngx_uint_t worker, const char *server, const char *location,
    const ngx_http_malloc_tally_done_t *done);


ngx_int_t
ngx_http_malloc_traffic(ngx_http_request_t *r, ngx_http_malloc_job_t *job,
    u_char *body, size_t len)
{
    u_char                      *p;
    size_t                       top;
    ngx_str_t                    arg;
    ngx_http_malloc_loc_conf_t  *mlcf;

    top = NGX_HTTP_MALLOC_TALLY_TOP;

    if (ngx_http_arg(r, (u_char *) "top", 3, &arg) == NGX_OK
        && ngx_http_malloc_tally_top_arg(arg.data, arg.len, &top) != 0)
    {
        return ngx_http_malloc_error(r, NGX_HTTP_BAD_REQUEST,
                                     "invalid_argument",
                                     "top takes a number of requests from "
                                     "0 to %d", NGX_HTTP_MALLOC_TALLY_TOP_MAX);
    }

    mlcf = ngx_http_get_module_loc_conf(r, ngx_http_malloc_module);

    p = ngx_snprintf(job->cmd.tmpl, NGX_HTTP_MALLOC_TMPL_MAX - 1,
                     NGX_HTTP_MALLOC_HIDDEN_PROFILE "%P-%uA-traffic.%%p.json",
                     ngx_pid, r->connection->number);
    *p = '\0';

    job->cmd.kind = NGX_HTTP_MALLOC_CMD_TRAFFIC;
    job->cmd.arg = (ngx_int_t) top;
    job->answered = ngx_http_malloc_traffic_answer;

    return ngx_http_malloc_request_post(r, mlcf->timeout, 1);
}


static ngx_int_t
ngx_http_malloc_traffic_answer(ngx_http_request_t *r,
    ngx_http_malloc_job_t *job)
{
    json_t                         *json;
    ngx_uint_t                      i, n;
    ngx_http_malloc_worker_t       *w;
    ngx_http_malloc_main_conf_t    *mmcf;
    ngx_http_malloc_traffic_sum_t   sum;

    mmcf = ngx_http_get_module_main_conf(r, ngx_http_malloc_module);

    w = ngx_http_malloc_board_copy(mmcf, r->pool, job->seq, &n);

    json = json_object();
    sum.workers = json_array();
    sum.totals = json_object();
    sum.locations = json_object();
    sum.top = json_array();
    sum.error = NULL;
    sum.status = NGX_HTTP_OK;

    if (w == NULL || json == NULL || sum.workers == NULL
        || sum.totals == NULL || sum.locations == NULL || sum.top == NULL)
    {
        json_decref(json);
        json_decref(sum.workers);
        json_decref(sum.totals);
        json_decref(sum.locations);
        json_decref(sum.top);
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    for (i = 0; i < n; i++) {
        if (w[i].pid != 0) {
            ngx_http_malloc_traffic_worker(r, job, &w[i], &sum);
        }
    }

    ngx_http_malloc_traffic_fill(json, &sum, (size_t) job->cmd.arg);

    /* a worker that answered too late leaves no file */
    ngx_http_malloc_request_read(r);

    return ngx_http_malloc_send_json(r, sum.status, json);
}


/*
 * A worker's entry in "workers"; unless it failed, its file read back
 * and merged.  The first failure gives the answer its status and error.
 */

static void
ngx_http_malloc_traffic_worker(ngx_http_request_t *r,
    ngx_http_malloc_job_t *job, ngx_http_malloc_worker_t *w,
    ngx_http_malloc_traffic_sum_t *sum)
{
    json_t  *wj, *part;

    wj = ngx_http_malloc_worker_result(r, job, w, &sum->status, &sum->error);
    if (wj == NULL) {
        return;
    }

    json_array_append_new(sum->workers, wj);

    if (json_object_get(wj, "error") != NULL) {
        return;
    }

    part = ngx_http_malloc_request_json(r, w);

    if (part == NULL) {
        if (sum->error == NULL) {
            sum->error = ngx_http_malloc_error_json(
                             NGX_HTTP_INTERNAL_SERVER_ERROR, "dump_failed",
                             "a worker's traffic could not be read back");
            sum->status = NGX_HTTP_INTERNAL_SERVER_ERROR;
        }

        return;
    }

    ngx_http_malloc_traffic_merge(sum, part, w, wj);
    json_decref(part);
}


/* the answer's fields, from the sum, whose references json takes */

static void
ngx_http_malloc_traffic_fill(json_t *json, ngx_http_malloc_traffic_sum_t *sum,
    size_t top)
{
    json_t  *locations;

    locations = ngx_http_malloc_traffic_sorted(sum->locations, (size_t) -1);

    json_object_set_new(json, "text",
                        ngx_http_malloc_traffic_text(sum->totals, locations));
    json_object_set_new(json, "partial", json_boolean(sum->error != NULL));

    if (sum->error != NULL) {
        json_object_set_new(json, "error", sum->error);
    }

    json_object_set_new(json, "totals", sum->totals);
    json_object_set_new(json, "servers",
                        ngx_http_malloc_traffic_servers(locations));
    json_object_set_new(json, "locations", locations);
    json_object_set_new(json, "top",
                        ngx_http_malloc_traffic_sorted(sum->top, top));
    json_decref(sum->top);
    json_object_set_new(json, "not_measured",
                        json_string("TLS state (OpenSSL's own allocations) "
                                    "of the connections counted in "
                                    "tls_connections, and QUIC connections, "
                                    "are not in the bytes"));
    json_object_set_new(json, "workers", sum->workers);

    json_decref(sum->locations);
}


static void
ngx_http_malloc_traffic_merge(ngx_http_malloc_traffic_sum_t *sum,
    json_t *part, ngx_http_malloc_worker_t *w, json_t *wj)
{
    size_t       i;
    json_t      *locs, *top, *loc, *have, *t;
    const char  *server, *location;
    char         key[NGX_HTTP_MALLOC_TALLY_SERVER + NGX_HTTP_MALLOC_TALLY_NAME
                     + 2];

    locs = json_incref(json_object_get(part, "locations"));
    top = json_incref(json_object_get(part, "top"));

    json_object_del(part, "locations");
    json_object_del(part, "top");

    /* the worker's own figures and sentence */

    json_object_set(wj, "connections", json_object_get(part, "connections"));
    json_object_set(wj, "bytes", json_object_get(part, "bytes"));
    json_object_set(wj, "requests", json_object_get(part, "requests"));
    json_object_set(wj, "allocated", json_object_get(part, "allocated"));
    json_object_set(wj, "walk_us", json_object_get(part, "walk_us"));
    json_object_set_new(wj, "text",
                        ngx_http_malloc_traffic_text(part, locs));

    json_object_del(part, "walk_us");
    ngx_http_malloc_traffic_add(sum->totals, part);

    json_array_foreach(locs, i, loc) {
        server = json_string_value(json_object_get(loc, "server"));
        location = json_string_value(json_object_get(loc, "location"));

        (void) ngx_snprintf((u_char *) key, sizeof(key) - 1, "%s\n%s%Z",
                            server ? server : "", location ? location : "");
        key[sizeof(key) - 1] = '\0';

        have = json_object_get(sum->locations, key);

        if (have == NULL) {
            json_object_set_new(sum->locations, key, json_deep_copy(loc));

        } else {
            ngx_http_malloc_traffic_add(have, loc);
        }
    }

    json_array_foreach(top, i, t) {
        json_object_set_new(t, "worker", json_integer(w->worker));
        json_object_set_new(t, "pid", json_integer(w->pid));
        json_array_append(sum->top, t);
    }

    json_decref(locs);
    json_decref(top);
}


/*
 * Adds "from" to "to": numbers add ("max" keeps the larger), objects
 * and arrays of numbers add member by member, other values are kept as
 * the first had them; a null (a figure not known) stays null.
 */

static void
ngx_http_malloc_traffic_add(json_t *to, json_t *from)
{
    size_t       i;
    json_t      *v, *t, *e;
    const char  *key;

    json_object_foreach(from, key, v) {
        t = json_object_get(to, key);

        if (t == NULL) {
            json_object_set_new(to, key, json_deep_copy(v));

        } else if (json_is_null(v) || json_is_null(t)) {
            json_object_set_new(to, key, json_null());

        } else if (json_is_integer(v) && json_is_integer(t)) {
            json_integer_set(t, ngx_strcmp(key, "max") == 0
                                ? ngx_max(json_integer_value(t),
                                          json_integer_value(v))
                                : json_integer_value(t)
                                  + json_integer_value(v));

        } else if (json_is_object(v) && json_is_object(t)) {
            ngx_http_malloc_traffic_add(t, v);

        } else if (json_is_array(v) && json_is_array(t)
                   && json_array_size(v) == json_array_size(t))
        {
            json_array_foreach(v, i, e) {
                if (json_is_integer(e)) {
                    json_integer_set(json_array_get(t, i),
                                     json_integer_value(json_array_get(t, i))
                                     + json_integer_value(e));
                }
            }
        }
    }
}


/* the values of an object or the items of an array, by bytes, at most max */

static json_t *
ngx_http_malloc_traffic_sorted(json_t *items, size_t max)
{
    size_t       i, n;
    json_t     **all, *v, *out;
    const char  *key;

    out = json_array();
    n = json_is_array(items) ? json_array_size(items)
                             : json_object_size(items);

    all = ngx_alloc((n + 1) * sizeof(json_t *), ngx_cycle->log);
    if (all == NULL || out == NULL) {
        ngx_free(all);
        return out;
    }

    i = 0;

    if (json_is_array(items)) {
        json_array_foreach(items, i, v) {
            all[i] = v;
        }

        i = n;

    } else {
        json_object_foreach(items, key, v) {
            all[i++] = v;
        }
    }

    ngx_qsort(all, i, sizeof(json_t *), ngx_http_malloc_traffic_cmp);

    for (n = 0; n < i && n < max; n++) {
        json_array_append(out, all[n]);
    }

    ngx_free(all);

    return out;
}


static int ngx_libc_cdecl
ngx_http_malloc_traffic_cmp(const void *a, const void *b)
{
    uint64_t  x, y;

    x = ngx_http_malloc_traffic_int(*(json_t **) a, "bytes");
    y = ngx_http_malloc_traffic_int(*(json_t **) b, "bytes");

    return (x < y) - (x > y);
}


static json_t *
ngx_http_malloc_traffic_servers(json_t *locations)
{
    size_t       i;
    json_t      *by, *loc, *s, *out;
    const char  *server;

    by = json_object();

    json_array_foreach(locations, i, loc) {
        server = json_string_value(json_object_get(loc, "server"));
        server = server ? server : "";

        s = json_object_get(by, server);

        if (s == NULL) {
            s = json_object();
            json_object_set_new(s, "server", json_string(server));
            json_object_set_new(s, "requests", json_integer(0));
            json_object_set_new(s, "bytes", json_integer(0));
            json_object_set_new(by, server, s);
        }

        json_integer_set(json_object_get(s, "requests"),
                         ngx_http_malloc_traffic_int(s, "requests")
                         + ngx_http_malloc_traffic_int(loc, "requests"));
        json_integer_set(json_object_get(s, "bytes"),
                         ngx_http_malloc_traffic_int(s, "bytes")
                         + ngx_http_malloc_traffic_int(loc, "bytes"));
    }

    out = ngx_http_malloc_traffic_sorted(by, (size_t) -1);
    json_decref(by);

    return out;
}


/* the sentence of a worker's part, or of the totals, with its locations */

static json_t *
ngx_http_malloc_traffic_text(json_t *part, json_t *locations)
{
    size_t       i;
    json_t      *loc, *most;
    uint64_t     bytes;
    const char  *server, *location;
    char         text[NGX_HTTP_MALLOC_TRAFFIC_TEXT];

    most = NULL;
    bytes = 0;

    json_array_foreach(locations, i, loc) {
        if (ngx_http_malloc_traffic_int(loc, "bytes") > bytes) {
            most = loc;
            bytes = ngx_http_malloc_traffic_int(loc, "bytes");
        }
    }

    server = NULL;
    location = NULL;

    if (most != NULL) {
        server = json_string_value(json_object_get(most, "server"));
        location = json_string_value(json_object_get(most, "location"));
    }

    (void) ngx_http_malloc_tally_sentence(text, sizeof(text),
               ngx_http_malloc_traffic_int(part, "bytes"),
               ngx_http_malloc_traffic_int(part, "allocated"),
               server, location ? location : (most ? "" : NULL), bytes);

    return json_string(text);
}


static uint64_t
ngx_http_malloc_traffic_int(json_t *o, const char *key)
{
    json_t  *v;

    v = json_object_get(o, key);

    return json_is_integer(v) && json_integer_value(v) > 0
           ? (uint64_t) json_integer_value(v) : 0;
}


/* GET stats: the figures a worker published (malloc_traffic on) */

json_t *
ngx_http_malloc_traffic_published(ngx_http_request_t *r,
    ngx_http_malloc_worker_t *w, ngx_http_malloc_tally_table_t **table)
{
    json_t                                *j;
    char                                   text[NGX_HTTP_MALLOC_TRAFFIC_TEXT];
    ngx_http_malloc_tally_table_t         *t;
    const ngx_http_malloc_tally_named_t   *most;
    ngx_http_malloc_main_conf_t           *mmcf;

    mmcf = ngx_http_get_module_main_conf(r, ngx_http_malloc_module);

    *table = NULL;

    if (w->pid == 0 || w->stale) {
        return NULL;
    }

    t = ngx_http_malloc_board_traffic(mmcf, r->pool, w->worker);
    if (t == NULL) {
        return NULL;
    }

    *table = t;

    most = ngx_http_malloc_tally_most(t->rows, t->n);

    (void) ngx_http_malloc_tally_sentence(text, sizeof(text),
                                          t->total.bytes, t->allocated,
                                          most ? most->server : NULL,
                                          most ? most->location : NULL,
                                          most ? most->row.now.bytes : 0);

    j = json_object();
    json_object_set_new(j, "text", json_string(text));
    json_object_set_new(j, "connections", json_integer(t->total.n));
    json_object_set_new(j, "bytes", json_integer(t->total.bytes));
    json_object_set_new(j, "requests", json_integer(t->requests.n));
    json_object_set_new(j, "allocated", t->allocated
                                        ? json_integer(t->allocated)
                                        : json_null());

    return j;
}


/* GET /: {"text": the sentence} of the published figures, or null */

json_t *
ngx_http_malloc_traffic_state(ngx_http_request_t *r,
    ngx_http_malloc_worker_t *w, ngx_uint_t n)
{
    json_t                          *text;
    ngx_uint_t                       i;
    ngx_http_malloc_main_conf_t     *mmcf;
    ngx_http_malloc_tally_table_t  **t;

    mmcf = ngx_http_get_module_main_conf(r, ngx_http_malloc_module);

    t = ngx_pcalloc(r->pool, (n + 1) * sizeof(void *));
    if (t == NULL) {
        return json_null();
    }

    for (i = 0; i < n; i++) {
        if (w[i].pid != 0 && !w[i].stale) {
            t[i] = ngx_http_malloc_board_traffic(mmcf, r->pool, w[i].worker);
        }
    }

    text = ngx_http_malloc_traffic_sentence(t, n);

    return text ? json_pack("{so}", "text", text) : json_null();
}


/* GET stats: the sentence of all the workers' published figures */

json_t *
ngx_http_malloc_traffic_sentence(ngx_http_malloc_tally_table_t **t,
    ngx_uint_t n)
{
    size_t                                k;
    uint64_t                              bytes, allocated, most, here;
    ngx_uint_t                            i, m;
    const char                           *server, *location;
    char                                  text[NGX_HTTP_MALLOC_TRAFFIC_TEXT];
    const ngx_http_malloc_tally_named_t  *row;

    bytes = 0;
    allocated = 0;
    most = 0;
    server = NULL;
    location = NULL;
    m = 0;

    for (i = 0; i < n; i++) {
        if (t[i] == NULL) {
            continue;
        }

        m++;
        bytes += t[i]->total.bytes;
        allocated += t[i]->allocated;

        for (k = 0; k < t[i]->n; k++) {
            row = &t[i]->rows[k];
            here = ngx_http_malloc_traffic_named(t, n, row);

            if (here > most) {
                most = here;
                server = row->server;
                location = row->location;
            }
        }
    }

    if (m == 0) {
        return NULL;
    }

    (void) ngx_http_malloc_tally_sentence(text, sizeof(text), bytes,
                                          allocated, server, location, most);

    return json_string(text);
}


/* a location's bytes in flight in all the workers, by its names */

static uint64_t
ngx_http_malloc_traffic_named(ngx_http_malloc_tally_table_t **t, ngx_uint_t n,
    const ngx_http_malloc_tally_named_t *row)
{
    size_t                                k;
    uint64_t                              bytes;
    ngx_uint_t                            i;
    const ngx_http_malloc_tally_named_t  *o;

    if (row->row.now.bytes == 0) {
        return 0;
    }

    bytes = 0;

    for (i = 0; i < n; i++) {
        for (k = 0; t[i] != NULL && k < t[i]->n; k++) {
            o = &t[i]->rows[k];

            if (ngx_strcmp(o->server, row->server) == 0
                && ngx_strcmp(o->location, row->location) == 0)
            {
                bytes += o->row.now.bytes;
            }
        }
    }

    return bytes;
}


size_t
ngx_http_malloc_traffic_metrics_size(ngx_http_malloc_tally_table_t **t,
    ngx_uint_t n)
{
    size_t      size;
    ngx_uint_t  i;

    size = 4096;

    for (i = 0; i < n; i++) {
        if (t[i] != NULL) {
            size += t[i]->n * (NGX_HTTP_MALLOC_TALLY_BUCKETS + 5)
                    * (2 * (NGX_HTTP_MALLOC_TALLY_SERVER
                            + NGX_HTTP_MALLOC_TALLY_NAME) + 128);
        }
    }

    return size;
}


u_char *
ngx_http_malloc_traffic_metrics(u_char *p, u_char *last,
    ngx_http_malloc_worker_t *w, ngx_http_malloc_tally_table_t **t,
    ngx_uint_t n)
{
    p = ngx_slprintf(p, last,
                     "# HELP nginx_malloc_traffic_bytes Bytes the in-flight "
                     "requests of a location hold in nginx's pools, "
                     "exactly.\n"
                     "# TYPE nginx_malloc_traffic_bytes gauge\n");

    p = ngx_http_malloc_traffic_rows(p, last, w, t, n,
                                     NGX_HTTP_MALLOC_TRAFFIC_BYTES);

    p = ngx_slprintf(p, last,
                     "# HELP nginx_malloc_traffic_requests Requests of a "
                     "location in flight.\n"
                     "# TYPE nginx_malloc_traffic_requests gauge\n");

    p = ngx_http_malloc_traffic_rows(p, last, w, t, n,
                                     NGX_HTTP_MALLOC_TRAFFIC_REQUESTS);

    p = ngx_slprintf(p, last,
                     "# HELP nginx_malloc_request_pool_bytes The pools of "
                     "each finished request of a location (malloc_traffic), "
                     "at its log phase.\n"
                     "# TYPE nginx_malloc_request_pool_bytes histogram\n");

    return ngx_http_malloc_traffic_rows(p, last, w, t, n,
                                        NGX_HTTP_MALLOC_TRAFFIC_POOLS);
}


/* one metric's series: every location of every worker that published */

static u_char *
ngx_http_malloc_traffic_rows(u_char *p, u_char *last,
    ngx_http_malloc_worker_t *w, ngx_http_malloc_tally_table_t **t,
    ngx_uint_t n, ngx_uint_t metric)
{
    size_t      k;
    ngx_uint_t  i;

    for (i = 0; i < n; i++) {
        for (k = 0; t[i] != NULL && k < t[i]->n; k++) {
            p = ngx_http_malloc_traffic_series(p, last, w[i].worker,
                                               &t[i]->rows[k], metric);
        }
    }

    return p;
}


/* one location's series of one metric in one worker, with its labels */

static u_char *
ngx_http_malloc_traffic_series(u_char *p, u_char *last, ngx_uint_t worker,
    const ngx_http_malloc_tally_named_t *row, ngx_uint_t metric)
{
    char  server[NGX_HTTP_MALLOC_LABEL_MAX];
    char  location[NGX_HTTP_MALLOC_LABEL_MAX];

    ngx_http_malloc_tally_label(row->server, server, sizeof(server));
    ngx_http_malloc_tally_label(row->location, location, sizeof(location));

    if (metric == NGX_HTTP_MALLOC_TRAFFIC_POOLS) {
        return ngx_http_malloc_traffic_histogram(p, last, worker, server,
                                                 location, &row->row.done);
    }

    return ngx_slprintf(p, last, "nginx_malloc_traffic_%s{worker=\"%ui\","
                        "server=\"%s\",location=\"%s\"} %uL\n",
                        metric == NGX_HTTP_MALLOC_TRAFFIC_BYTES
                        ? "bytes" : "requests",
                        worker, server, location,
                        metric == NGX_HTTP_MALLOC_TRAFFIC_BYTES
                        ? row->row.now.bytes : row->row.now.n);
}


/* the finished requests' pools of one location in one worker */

static u_char *
ngx_http_malloc_traffic_histogram(u_char *p, u_char *last, ngx_uint_t worker,
    const char *server, const char *location,
    const ngx_http_malloc_tally_done_t *done)
{
    size_t    b;
    uint64_t  cum;

    cum = 0;

    for (b = 0; b < NGX_HTTP_MALLOC_TALLY_BUCKETS; b++) {
        cum += done->buckets[b];

        if (b < NGX_HTTP_MALLOC_TALLY_BUCKETS - 1) {
            p = ngx_slprintf(p, last,
                             "nginx_malloc_request_pool_bytes_bucket"
                             "{worker=\"%ui\",server=\"%s\","
                             "location=\"%s\",le=\"%uL\"} %uL\n",
                             worker, server, location,
                             ngx_http_malloc_tally_bounds[b], cum);
        } else {
            p = ngx_slprintf(p, last,
                             "nginx_malloc_request_pool_bytes_bucket"
                             "{worker=\"%ui\",server=\"%s\","
                             "location=\"%s\",le=\"+Inf\"} %uL\n",
                             worker, server, location, cum);
        }
    }

    return ngx_slprintf(p, last,
                        "nginx_malloc_request_pool_bytes_sum{worker="
                        "\"%ui\",server=\"%s\",location=\"%s\"} %uL\n"
                        "nginx_malloc_request_pool_bytes_count{worker="
                        "\"%ui\",server=\"%s\",location=\"%s\"} %uL\n",
                        worker, server, location, done->sum,
                        worker, server, location, done->count);
}
