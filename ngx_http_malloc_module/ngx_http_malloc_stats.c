
/*
 * Allocator statistics of every worker, as JSON (GET stats) and in the
 * Prometheus text exposition format (GET metrics).  A STATS command makes
 * each worker refresh jemalloc's figures into its slot; with
 * ?detail=full each also writes jemalloc's own JSON report into a hidden
 * file that is read back here and removed.
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include <jansson.h>

#include "ngx_http_malloc_module.h"
#include "ngx_http_malloc_jemalloc.h"
#include "ngx_http_malloc_path.h"


/* the longest report a worker may write with ?detail=full */
#define NGX_HTTP_MALLOC_REPORT_MAX  (16 * 1024 * 1024)


typedef struct {
    const char                 *name;
    const char                 *help;
    size_t                      offset;
} ngx_http_malloc_figure_t;


static json_t *ngx_http_malloc_stats_worker(ngx_http_request_t *r,
    ngx_http_malloc_ctx_t *ctx, ngx_http_malloc_answer_t *a,
    ngx_uint_t *missing);
static json_t *ngx_http_malloc_stats_report(ngx_http_request_t *r,
    ngx_http_malloc_ctx_t *ctx, ngx_pid_t pid);
static ngx_int_t ngx_http_malloc_stats_metrics(ngx_http_request_t *r,
    ngx_http_malloc_answer_t *answers, ngx_uint_t n);
static u_char *ngx_http_malloc_stats_series(u_char *p, u_char *last,
    const char *name, const char *unit, ngx_http_malloc_answer_t *a,
    size_t value);


static ngx_http_malloc_figure_t  ngx_http_malloc_figures[] = {

    { "allocated",
      "Bytes allocated by nginx and its modules (jemalloc stats.allocated).",
      offsetof(ngx_http_malloc_je_stats_t, allocated) },

    { "active",
      "Bytes in active pages (jemalloc stats.active).",
      offsetof(ngx_http_malloc_je_stats_t, active) },

    { "resident",
      "Bytes in physically resident data pages mapped by the allocator "
      "(jemalloc stats.resident).",
      offsetof(ngx_http_malloc_je_stats_t, resident) },

    { "mapped",
      "Bytes in active extents mapped by the allocator "
      "(jemalloc stats.mapped).",
      offsetof(ngx_http_malloc_je_stats_t, mapped) },

    { "retained",
      "Bytes in virtual memory mappings retained for reuse "
      "(jemalloc stats.retained).",
      offsetof(ngx_http_malloc_je_stats_t, retained) },

    { "metadata",
      "Bytes dedicated to allocator metadata (jemalloc stats.metadata).",
      offsetof(ngx_http_malloc_je_stats_t, metadata) },

    { NULL, NULL, 0 }
};


ngx_int_t
ngx_http_malloc_stats_done(ngx_http_request_t *r, ngx_http_malloc_ctx_t *ctx)
{
    size_t                        *value;
    json_t                        *json, *workers, *totals, *w;
    ngx_uint_t                     i, k, n, missing, status;
    ngx_http_malloc_answer_t      *answers;
    ngx_http_malloc_main_conf_t   *mmcf;
    size_t                         sums[6];
    u_char                         text[128];

    mmcf = ngx_http_get_module_main_conf(r, ngx_http_malloc_module);

    answers = ngx_http_malloc_answers(r, ctx->seq, &n);
    if (answers == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    if (ctx->endpoint == NGX_HTTP_MALLOC_EP_METRICS) {
        return ngx_http_malloc_stats_metrics(r, answers, n);
    }

    json = json_object();
    workers = json_array();
    totals = json_object();

    if (json == NULL || workers == NULL || totals == NULL) {
        json_decref(json);
        json_decref(workers);
        json_decref(totals);
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ngx_memzero(sums, sizeof(sums));
    missing = 0;

    for (i = 0; i < n; i++) {
        w = ngx_http_malloc_stats_worker(r, ctx, &answers[i], &missing);
        json_array_append_new(workers, w);

        if (!answers[i].answered) {
            continue;
        }

        for (k = 0; ngx_http_malloc_figures[k].name != NULL; k++) {
            value = (size_t *) ((u_char *) &answers[i].slot.stats
                                + ngx_http_malloc_figures[k].offset);
            sums[k] += *value;
        }
    }

    for (k = 0; ngx_http_malloc_figures[k].name != NULL; k++) {
        json_object_set_new(totals, ngx_http_malloc_figures[k].name,
                            json_integer((json_int_t) sums[k]));
    }

    json_object_set_new(json, "prof_active",
                        json_boolean(ngx_http_malloc_coord_desired(mmcf)));
    json_object_set_new(json, "totals", totals);
    json_object_set_new(json, "workers", workers);

    status = NGX_HTTP_OK;

    if (missing) {
        status = NGX_HTTP_GATEWAY_TIME_OUT;
        (void) ngx_snprintf(text, sizeof(text), "%ui worker(s) did not "
                            "answer; the totals leave them out%Z", missing);
        json_object_set_new(json, "error",
                            json_pack("{s:i, s:s, s:s}", "status",
                                      (int) status, "code", "worker_timeout",
                                      "text", (char *) text));
    }

    return ngx_http_malloc_send_json(r, status, json);
}


static json_t *
ngx_http_malloc_stats_worker(ngx_http_request_t *r,
    ngx_http_malloc_ctx_t *ctx, ngx_http_malloc_answer_t *a,
    ngx_uint_t *missing)
{
    json_t                  *w;
    size_t                  *value;
    ngx_uint_t               k;
    ngx_http_malloc_slot_t  *slot;

    slot = &a->slot;

    w = ngx_http_malloc_worker_head(a);
    if (w == NULL) {
        return NULL;
    }

    if (!a->answered) {
        (*missing)++;
        json_object_set_new(w, "error",
                            json_pack("{s:i, s:s, s:s}", "status", 504,
                                      "code", "worker_timeout", "text",
                                      "the worker did not answer in time"));
        return w;
    }

    json_object_set_new(w, "prof_active", json_boolean(slot->prof_active));
    json_object_set_new(w, "lg_prof_sample", json_integer(slot->lg_sample));
    json_object_set_new(w, "sample_bytes",
                        slot->lg_sample < 63
                        ? json_integer((json_int_t) 1 << slot->lg_sample)
                        : json_null());

    for (k = 0; ngx_http_malloc_figures[k].name != NULL; k++) {
        value = (size_t *) ((u_char *) &slot->stats
                            + ngx_http_malloc_figures[k].offset);
        json_object_set_new(w, ngx_http_malloc_figures[k].name,
                            json_integer((json_int_t) *value));
    }

    if (ctx->tmpl[0] != '\0') {
        json_object_set_new(w, "detail",
                            ngx_http_malloc_stats_report(r, ctx, slot->pid));
    }

    return w;
}


/* a worker's malloc_stats_print() JSON, read back and removed */

static json_t *
ngx_http_malloc_stats_report(ngx_http_request_t *r,
    ngx_http_malloc_ctx_t *ctx, ngx_pid_t pid)
{
    u_char                       *p;
    json_t                       *report;
    json_error_t                  error;
    ngx_http_malloc_main_conf_t  *mmcf;
    char                          name[NGX_HTTP_MALLOC_NAME_MAX + 1];
    u_char                        path[NGX_MAX_PATH];

    mmcf = ngx_http_get_module_main_conf(r, ngx_http_malloc_module);

    (void) ngx_http_malloc_path_expand((char *) ctx->tmpl, (long) pid, name,
                                       sizeof(name));

    p = ngx_snprintf(path, sizeof(path) - 1, "%V/%s", &mmcf->dump_dir->name,
                     name);
    *p = '\0';

    report = json_load_file((char *) path, 0, &error);

    if (unlink((char *) path) == -1) {
        ngx_log_error(NGX_LOG_ERR, r->connection->log, ngx_errno,
                      "unlink(\"%s\") failed", path);
    }

    if (report == NULL) {
        ngx_log_error(NGX_LOG_ERR, r->connection->log, 0,
                      "cannot read jemalloc's report \"%s\": %s", path,
                      error.text);
        return json_null();
    }

    return report;
}


/*
 * One series per worker, labelled with its number and pid.  A worker that
 * did not answer only shows in nginx_malloc_worker_up, so a scrape never
 * fails for one stopped worker.
 */

static ngx_int_t
ngx_http_malloc_stats_metrics(ngx_http_request_t *r,
    ngx_http_malloc_answer_t *answers, ngx_uint_t n)
{
    u_char      *p, *last, *buf;
    size_t       size, *value;
    ngx_uint_t   i, k;

    size = 4096 + n * 1024;

    buf = ngx_pnalloc(r->pool, size);
    if (buf == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    p = buf;
    last = buf + size;

    for (k = 0; ngx_http_malloc_figures[k].name != NULL; k++) {
        p = ngx_slprintf(p, last,
                         "# HELP nginx_malloc_%s_bytes %s\n"
                         "# TYPE nginx_malloc_%s_bytes gauge\n",
                         ngx_http_malloc_figures[k].name,
                         ngx_http_malloc_figures[k].help,
                         ngx_http_malloc_figures[k].name);

        for (i = 0; i < n; i++) {
            if (!answers[i].answered) {
                continue;
            }

            value = (size_t *) ((u_char *) &answers[i].slot.stats
                                + ngx_http_malloc_figures[k].offset);

            p = ngx_http_malloc_stats_series(p, last,
                                             ngx_http_malloc_figures[k].name,
                                             "_bytes", &answers[i], *value);
        }
    }

    p = ngx_slprintf(p, last,
                     "# HELP nginx_malloc_prof_active Whether heap profile "
                     "sampling is active in the worker.\n"
                     "# TYPE nginx_malloc_prof_active gauge\n");

    for (i = 0; i < n; i++) {
        if (answers[i].answered) {
            p = ngx_http_malloc_stats_series(p, last, "prof_active", "",
                                             &answers[i],
                                             answers[i].slot.prof_active);
        }
    }

    p = ngx_slprintf(p, last,
                     "# HELP nginx_malloc_sample_interval_bytes Mean bytes "
                     "allocated between two samples (2^lg_prof_sample).\n"
                     "# TYPE nginx_malloc_sample_interval_bytes gauge\n");

    for (i = 0; i < n; i++) {
        if (answers[i].answered) {
            p = ngx_http_malloc_stats_series(p, last, "sample_interval",
                                  "_bytes", &answers[i],
                                  (size_t) 1 << answers[i].slot.lg_sample);
        }
    }

    p = ngx_slprintf(p, last,
                     "# HELP nginx_malloc_worker_up Whether the worker "
                     "answered within the admin location's timeout.\n"
                     "# TYPE nginx_malloc_worker_up gauge\n");

    for (i = 0; i < n; i++) {
        p = ngx_http_malloc_stats_series(p, last, "worker_up", "",
                                         &answers[i], answers[i].answered);
    }

    return ngx_http_malloc_send_data(r,
                                     "text/plain; version=0.0.4; "
                                     "charset=utf-8", NULL, buf, p - buf);
}


static u_char *
ngx_http_malloc_stats_series(u_char *p, u_char *last, const char *name,
    const char *unit, ngx_http_malloc_answer_t *a, size_t value)
{
    return ngx_slprintf(p, last, "nginx_malloc_%s%s{worker=\"%ui\","
                        "pid=\"%P\"} %uz\n", name, unit, a->worker,
                        a->slot.pid, value);
}
