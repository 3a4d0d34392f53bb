
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * Allocator statistics of every worker, as JSON (GET stats) and in the
 * Prometheus text exposition format (GET metrics), answered at once from
 * the figures each worker publishes in its slot about every second: a
 * stopped worker shows as stale, with the age of its figures, and never
 * delays the answer.  Only ?detail=full needs the workers: each writes
 * jemalloc's own JSON report into a hidden file, read back here and
 * removed.
 *
 * Owns: the figures' names and help texts.  Calls: request, reply, board,
 * traffic (malloc_traffic's figures), export (its counts), and the pure
 * core (path, jemalloc, rss, tally's label escape).
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include <jansson.h>

#include "ngx_http_malloc_module.h"
#include "ngx_http_malloc_board.h"
#include "ngx_http_malloc_request.h"
#include "ngx_http_malloc_reply.h"
#include "ngx_http_malloc_stats.h"
#include "ngx_http_malloc_jemalloc.h"
#include "ngx_http_malloc_path.h"
#include "ngx_http_malloc_rss.h"
#include "ngx_http_malloc_tally.h"


/* a zone's name as a label: each byte may be escaped */
#define NGX_HTTP_MALLOC_ZONE_LABEL  (2 * NGX_HTTP_MALLOC_ZONE_NAME + 1)
#include "ngx_http_malloc_traffic.h"
#include "ngx_http_malloc_export.h"


typedef struct {
    const char                 *name;
    const char                 *help;
    size_t                      offset;
} ngx_http_malloc_figure_t;


static ngx_int_t ngx_http_malloc_stats_answer(ngx_http_request_t *r,
    ngx_http_malloc_job_t *job);
static json_t *ngx_http_malloc_stats_worker(ngx_http_request_t *r,
    ngx_http_malloc_job_t *job, ngx_http_malloc_worker_t *w,
    ngx_http_malloc_zone_t *zones, ngx_uint_t nzones);
static ngx_uint_t ngx_http_malloc_stats_tables(ngx_http_request_t *r,
    ngx_http_malloc_worker_t *w, ngx_uint_t n,
    ngx_http_malloc_tally_table_t **tables);
static u_char *ngx_http_malloc_stats_figures(u_char *p, u_char *last,
    ngx_http_malloc_worker_t *w, ngx_uint_t n);
static u_char *ngx_http_malloc_stats_growth(u_char *p, u_char *last,
    ngx_http_malloc_worker_t *w, ngx_uint_t n);
static u_char *ngx_http_malloc_stats_zones(u_char *p, u_char *last,
    ngx_http_malloc_worker_t *w, ngx_uint_t n,
    ngx_http_malloc_main_conf_t *mmcf);
static u_char *ngx_http_malloc_stats_rss(u_char *p, u_char *last,
    ngx_http_malloc_worker_t *w, ngx_uint_t n,
    ngx_http_malloc_main_conf_t *mmcf);
static u_char *ngx_http_malloc_stats_export(u_char *p, u_char *last,
    ngx_http_malloc_main_conf_t *mmcf);
static u_char *ngx_http_malloc_stats_master(u_char *p, u_char *last,
    ngx_http_malloc_main_conf_t *mmcf);
static json_t *ngx_http_malloc_stats_report(ngx_http_request_t *r,
    ngx_http_malloc_job_t *job, ngx_http_malloc_worker_t *w);
static u_char *ngx_http_malloc_stats_series(u_char *p, u_char *last,
    const char *name, const char *unit, ngx_http_malloc_worker_t *w,
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
ngx_http_malloc_stats(ngx_http_request_t *r, ngx_http_malloc_job_t *job,
    u_char *body, size_t len)
{
    u_char                       *p;
    ngx_str_t                     arg;
    ngx_http_malloc_loc_conf_t   *mlcf;

    job->answered = ngx_http_malloc_stats_answer;

    if (ngx_http_arg(r, (u_char *) "detail", 6, &arg) != NGX_OK
        || arg.len != 4 || ngx_strncmp(arg.data, "full", 4) != 0)
    {
        return ngx_http_malloc_stats_answer(r, job);
    }

    /* jemalloc's report of each worker: a read that needs the workers */

    mlcf = ngx_http_get_module_loc_conf(r, ngx_http_malloc_module);

    p = ngx_snprintf(job->cmd.tmpl, NGX_HTTP_MALLOC_TMPL_MAX - 1,
                     NGX_HTTP_MALLOC_HIDDEN_PROFILE "%P-%uA-stats.%%p.json",
                     ngx_pid, r->connection->number);
    *p = '\0';

    job->cmd.kind = NGX_HTTP_MALLOC_CMD_STATS;

    return ngx_http_malloc_request_post(r, mlcf->timeout, 1);
}


static ngx_int_t
ngx_http_malloc_stats_answer(ngx_http_request_t *r,
    ngx_http_malloc_job_t *job)
{
    size_t                          *value;
    json_t                          *json, *workers, *totals, *wj, *text;
    ngx_uint_t                       i, k, n, stale;
    ngx_uint_t                       nzones;
    ngx_http_malloc_worker_t        *w;
    ngx_http_malloc_main_conf_t     *mmcf;
    ngx_http_malloc_tally_table_t  **tables;
    size_t                           sums[6];
    ngx_http_malloc_zone_t           zones[NGX_HTTP_MALLOC_RSS_ZONES];

    mmcf = ngx_http_get_module_main_conf(r, ngx_http_malloc_module);

    w = ngx_http_malloc_board_copy(mmcf, r->pool, job->seq, &n);
    nzones = ngx_http_malloc_board_master(mmcf, NULL, zones);
    tables = ngx_pcalloc(r->pool, (n + 1) * sizeof(void *));

    json = json_object();
    workers = json_array();
    totals = json_object();

    if (w == NULL || tables == NULL || json == NULL || workers == NULL
        || totals == NULL)
    {
        json_decref(json);
        json_decref(workers);
        json_decref(totals);
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ngx_memzero(sums, sizeof(sums));
    stale = 0;

    for (i = 0; i < n; i++) {
        wj = ngx_http_malloc_stats_worker(r, job, &w[i], zones, nzones);

        /* malloc_traffic on: what its traffic held at its last walk */

        if (wj != NULL && w[i].pid != 0) {
            text = ngx_http_malloc_traffic_published(r, &w[i], &tables[i]);
            json_object_set_new(wj, "traffic", text ? text : json_null());
        }

        json_array_append_new(workers, wj);

        if (w[i].stale) {
            /* the totals are of fresh figures only, as the metrics */
            stale++;
            continue;
        }

        for (k = 0; ngx_http_malloc_figures[k].name != NULL; k++) {
            value = (size_t *) ((u_char *) &w[i].stats
                                + ngx_http_malloc_figures[k].offset);
            sums[k] += *value;
        }
    }

    for (k = 0; ngx_http_malloc_figures[k].name != NULL; k++) {
        json_object_set_new(totals, ngx_http_malloc_figures[k].name,
                            json_integer((json_int_t) sums[k]));
    }

    json_object_set_new(json, "prof_active",
                        json_boolean(ngx_http_malloc_board_desired(mmcf,
                                                                   NULL)));
    json_object_set_new(json, "stale_workers",
                        json_integer((json_int_t) stale));
    json_object_set_new(json, "totals", totals);

    /* detail=full: a worker that answered too late leaves no file */
    ngx_http_malloc_request_read(r);

    text = ngx_http_malloc_traffic_sentence(tables, n);
    json_object_set_new(json, "traffic", text ? json_pack("{so}", "text", text)
                                              : json_null());
    json_object_set_new(json, "workers", workers);
    json_object_set_new(json, "master", ngx_http_malloc_master_json(mmcf, 1));

    return ngx_http_malloc_send_json(r, NGX_HTTP_OK, json);
}


static json_t *
ngx_http_malloc_stats_worker(ngx_http_request_t *r,
    ngx_http_malloc_job_t *job, ngx_http_malloc_worker_t *w,
    ngx_http_malloc_zone_t *zones, ngx_uint_t nzones)
{
    json_t      *j;
    size_t      *value;
    ngx_uint_t   k;

    j = ngx_http_malloc_worker_head(w, 1);
    if (j == NULL || w->pid == 0) {
        return j;
    }

    json_object_set_new(j, "lg_prof_sample", json_integer(w->lg_sample));
    json_object_set_new(j, "sample_bytes",
                        w->lg_sample < 63
                        ? json_integer((json_int_t) 1 << w->lg_sample)
                        : json_null());

    for (k = 0; ngx_http_malloc_figures[k].name != NULL; k++) {
        value = (size_t *) ((u_char *) &w->stats
                            + ngx_http_malloc_figures[k].offset);
        json_object_set_new(j, ngx_http_malloc_figures[k].name,
                            json_integer((json_int_t) *value));
    }

    ngx_http_malloc_worker_rss(j, w, zones, nzones, 1);

    if (job->seq != 0) {
        json_object_set_new(j, "detail",
                            ngx_http_malloc_stats_report(r, job, w));
    }

    return j;
}


/* a worker's malloc_stats_print() JSON, read back and removed */

static json_t *
ngx_http_malloc_stats_report(ngx_http_request_t *r,
    ngx_http_malloc_job_t *job, ngx_http_malloc_worker_t *w)
{
    json_t  *report;

    if (!w->answered || w->result.seq != job->seq || w->result.rc != 0) {
        return json_null();
    }

    report = ngx_http_malloc_request_json(r, w);

    return report ? report : json_null();
}


/*
 * One series per worker, labelled with its number and pid.  A stale
 * worker only shows in nginx_malloc_worker_up, so a scrape never fails
 * or waits for one stopped worker.
 */

ngx_int_t
ngx_http_malloc_metrics(ngx_http_request_t *r, ngx_http_malloc_job_t *job,
    u_char *body, size_t len)
{
    u_char                          *p, *last, *buf;
    size_t                           size;
    ngx_uint_t                       i, n, traffic;
    ngx_http_malloc_worker_t        *w;
    ngx_http_malloc_main_conf_t     *mmcf;
    ngx_http_malloc_tally_table_t  **tables;

    mmcf = ngx_http_get_module_main_conf(r, ngx_http_malloc_module);

    w = ngx_http_malloc_board_copy(mmcf, r->pool, 0, &n);
    tables = ngx_pcalloc(r->pool, (n + 1) * sizeof(void *));

    if (w == NULL || tables == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    traffic = ngx_http_malloc_stats_tables(r, w, n, tables);

    size = 6144 + n * (2048 + NGX_HTTP_MALLOC_RSS_ZONES
                             * (NGX_HTTP_MALLOC_ZONE_LABEL + 96))
           + (traffic ? ngx_http_malloc_traffic_metrics_size(tables, n) : 0);

    buf = ngx_pnalloc(r->pool, size);
    if (buf == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    p = buf;
    last = buf + size;

    p = ngx_http_malloc_stats_figures(p, last, w, n);

    p = ngx_slprintf(p, last,
                     "# HELP nginx_malloc_prof_active Whether heap profile "
                     "sampling is active in the worker.\n"
                     "# TYPE nginx_malloc_prof_active gauge\n");

    for (i = 0; i < n; i++) {
        if (!w[i].stale) {
            p = ngx_http_malloc_stats_series(p, last, "prof_active", "",
                                             &w[i], w[i].prof_active);
        }
    }

    p = ngx_slprintf(p, last,
                     "# HELP nginx_malloc_sample_interval_bytes Mean bytes "
                     "allocated between two samples (2^lg_prof_sample).\n"
                     "# TYPE nginx_malloc_sample_interval_bytes gauge\n");

    for (i = 0; i < n; i++) {
        if (!w[i].stale) {
            p = ngx_http_malloc_stats_series(p, last, "sample_interval",
                                             "_bytes", &w[i],
                                             (size_t) 1 << w[i].lg_sample);
        }
    }

    p = ngx_slprintf(p, last,
                     "# HELP nginx_malloc_worker_up Whether the worker "
                     "published its figures within the last %M seconds.\n"
                     "# TYPE nginx_malloc_worker_up gauge\n",
                     (ngx_msec_t) NGX_HTTP_MALLOC_STALE_MS / 1000);

    for (i = 0; i < n; i++) {
        p = ngx_http_malloc_stats_series(p, last, "worker_up", "", &w[i],
                                         !w[i].stale);
    }

    p = ngx_http_malloc_stats_rss(p, last, w, n, mmcf);
    p = ngx_http_malloc_stats_master(p, last, mmcf);
    p = ngx_http_malloc_stats_export(p, last, mmcf);

    if (traffic) {
        p = ngx_http_malloc_traffic_metrics(p, last, w, tables, n);
    }

    return ngx_http_malloc_send_data(r, job->type, NULL, buf, p - buf);
}


/*
 * malloc_traffic on: the tables the running workers published, in
 * tables[], and 1 if there was any.
 */

static ngx_uint_t
ngx_http_malloc_stats_tables(ngx_http_request_t *r,
    ngx_http_malloc_worker_t *w, ngx_uint_t n,
    ngx_http_malloc_tally_table_t **tables)
{
    ngx_uint_t                    i, traffic;
    ngx_http_malloc_main_conf_t  *mmcf;

    mmcf = ngx_http_get_module_main_conf(r, ngx_http_malloc_module);

    traffic = 0;

    for (i = 0; i < n; i++) {
        if (w[i].pid != 0 && !w[i].stale) {
            tables[i] = ngx_http_malloc_board_traffic(mmcf, r->pool,
                                                      w[i].worker);
            traffic |= (tables[i] != NULL);
        }
    }

    return traffic;
}


/* jemalloc's figures, a gauge each with a series per running worker */

static u_char *
ngx_http_malloc_stats_figures(u_char *p, u_char *last,
    ngx_http_malloc_worker_t *w, ngx_uint_t n)
{
    size_t      *value;
    ngx_uint_t   i, k;

    for (k = 0; ngx_http_malloc_figures[k].name != NULL; k++) {
        p = ngx_slprintf(p, last,
                         "# HELP nginx_malloc_%s_bytes %s\n"
                         "# TYPE nginx_malloc_%s_bytes gauge\n",
                         ngx_http_malloc_figures[k].name,
                         ngx_http_malloc_figures[k].help,
                         ngx_http_malloc_figures[k].name);

        for (i = 0; i < n; i++) {
            if (w[i].stale) {
                continue;
            }

            value = (size_t *) ((u_char *) &w[i].stats
                                + ngx_http_malloc_figures[k].offset);

            p = ngx_http_malloc_stats_series(p, last,
                                             ngx_http_malloc_figures[k].name,
                                             "_bytes", &w[i], *value);
        }
    }

    return p;
}


/*
 * Where each worker's RSS grew since it started: in the allocator (by
 * jemalloc's own resident) or outside it (a library's own mmap, as
 * LuaJIT's, stacks, files, zones), which no heap profile shows.
 */

static u_char *
ngx_http_malloc_stats_growth(u_char *p, u_char *last,
    ngx_http_malloc_worker_t *w, ngx_uint_t n)
{
    int64_t                  allocator;
    ngx_uint_t               i;
    ngx_http_malloc_rss_t   *from, *to;

    p = ngx_slprintf(p, last,
                     "# HELP nginx_malloc_rss_growth_bytes Growth of the "
                     "worker's resident memory since it started, in the "
                     "allocator or outside it (which a heap profile cannot "
                     "show).\n"
                     "# TYPE nginx_malloc_rss_growth_bytes gauge\n");

    for (i = 0; i < n; i++) {
        from = &w[i].rss_start;
        to = &w[i].rss;

        if (w[i].stale || from->rss == 0 || to->rss == 0) {
            continue;
        }

        allocator = ngx_http_malloc_rss_allocator_growth(from, to);

        p = ngx_slprintf(p, last, "nginx_malloc_rss_growth_bytes{"
                         "worker=\"%ui\",pid=\"%P\",where=\"allocator\"} "
                         "%L\n"
                         "nginx_malloc_rss_growth_bytes{"
                         "worker=\"%ui\",pid=\"%P\",where=\"outside\"} "
                         "%L\n",
                         w[i].worker, w[i].pid, allocator,
                         w[i].worker, w[i].pid,
                         (int64_t) to->rss - (int64_t) from->rss - allocator);
    }

    return p;
}


/* each shared zone's resident bytes in each worker, by the zone's name */

static u_char *
ngx_http_malloc_stats_zones(u_char *p, u_char *last,
    ngx_http_malloc_worker_t *w, ngx_uint_t n,
    ngx_http_malloc_main_conf_t *mmcf)
{
    ngx_uint_t              i, z, nzones;
    ngx_http_malloc_zone_t  zones[NGX_HTTP_MALLOC_RSS_ZONES];
    char                    name[NGX_HTTP_MALLOC_ZONE_LABEL];

    nzones = ngx_http_malloc_board_master(mmcf, NULL, zones);

    p = ngx_slprintf(p, last,
                     "# HELP nginx_malloc_shared_zone_bytes Resident bytes "
                     "of each shared zone in the worker (the first %d "
                     "zones; the rest together in nginx_malloc_rss_bytes"
                     "{part=\"shared_zones\"}).\n"
                     "# TYPE nginx_malloc_shared_zone_bytes gauge\n",
                     NGX_HTTP_MALLOC_RSS_ZONES);

    for (i = 0; i < n; i++) {
        if (w[i].stale || w[i].rss.rss == 0) {
            continue;
        }

        for (z = 0; z < ngx_min(nzones, (ngx_uint_t) w[i].rss.nzones); z++) {
            ngx_http_malloc_tally_label((const char *) zones[z].name, name,
                                        sizeof(name));

            p = ngx_slprintf(p, last, "nginx_malloc_shared_zone_bytes{"
                             "worker=\"%ui\",pid=\"%P\",zone=\"%s\"} %uL\n",
                             w[i].worker, w[i].pid, name, w[i].rss.zone[z]);
        }
    }

    return p;
}


/* the parts of RSS, a series per part, of each worker and of the master */

static u_char *
ngx_http_malloc_stats_rss(u_char *p, u_char *last,
    ngx_http_malloc_worker_t *w, ngx_uint_t n,
    ngx_http_malloc_main_conf_t *mmcf)
{
    int                        k;
    ngx_uint_t                 i;
    ngx_http_malloc_master_t   m;

    p = ngx_slprintf(p, last,
                     "# HELP nginx_malloc_rss_bytes Resident memory of the "
                     "worker (from /proc/self/smaps), in parts that add up "
                     "to it.\n"
                     "# TYPE nginx_malloc_rss_bytes gauge\n");

    for (i = 0; i < n; i++) {
        if (w[i].stale || w[i].rss.rss == 0) {
            continue;
        }

        for (k = 0; k < NGX_HTTP_MALLOC_RSS_PARTS; k++) {
            p = ngx_slprintf(p, last, "nginx_malloc_rss_bytes{worker=\"%ui\","
                             "pid=\"%P\",part=\"%s\"} %uL\n", w[i].worker,
                             w[i].pid, ngx_http_malloc_rss_part_name(k),
                             ngx_http_malloc_rss_part(&w[i].rss, k));
        }
    }

    p = ngx_http_malloc_stats_growth(p, last, w, n);
    p = ngx_http_malloc_stats_zones(p, last, w, n, mmcf);

    (void) ngx_http_malloc_board_master(mmcf, &m, NULL);

    if (m.pid == 0 || m.rss.rss == 0) {
        return p;
    }

    p = ngx_slprintf(p, last,
                     "# HELP nginx_malloc_master_rss_bytes Resident memory "
                     "of the master after the last configuration read, in "
                     "parts that add up to it.\n"
                     "# TYPE nginx_malloc_master_rss_bytes gauge\n");

    for (k = 0; k < NGX_HTTP_MALLOC_RSS_PARTS; k++) {
        p = ngx_slprintf(p, last, "nginx_malloc_master_rss_bytes{part=\"%s\"} "
                         "%uL\n", ngx_http_malloc_rss_part_name(k),
                         ngx_http_malloc_rss_part(&m.rss, k));
    }

    return p;
}


/* the master: its heap as the current generation began, and reloads */

static u_char *
ngx_http_malloc_stats_master(u_char *p, u_char *last,
    ngx_http_malloc_main_conf_t *mmcf)
{
    ngx_http_malloc_gen_t  gens[NGX_HTTP_MALLOC_GENERATIONS];

    if (ngx_http_malloc_board_generations(mmcf, gens) > 0) {
        p = ngx_slprintf(p, last,
                         "# HELP nginx_malloc_master_allocated_bytes Bytes "
                         "allocated in the master after the last reload "
                         "(or the start), as its workers inherited them.\n"
                         "# TYPE nginx_malloc_master_allocated_bytes gauge\n"
                         "nginx_malloc_master_allocated_bytes %uz\n"
                         "# HELP nginx_malloc_reloads_total Reloads since "
                         "nginx started.\n"
                         "# TYPE nginx_malloc_reloads_total counter\n"
                         "nginx_malloc_reloads_total %ui\n",
                         gens[0].allocated, gens[0].generation - 1);
    }

    return p;
}


/* malloc_export's counts, kept across reloads */

static u_char *
ngx_http_malloc_stats_export(u_char *p, u_char *last,
    ngx_http_malloc_main_conf_t *mmcf)
{
    ngx_http_malloc_export_state_t  st;

    if (mmcf->export == NULL) {
        return p;
    }

    ngx_http_malloc_export_state(mmcf, &st);

    return ngx_slprintf(p, last,
               "# HELP nginx_malloc_export_sent_total Profiles the "
               "collector accepted.\n"
               "# TYPE nginx_malloc_export_sent_total counter\n"
               "nginx_malloc_export_sent_total %uL\n"
               "# HELP nginx_malloc_export_failed_total Attempts to send "
               "a profile that failed.\n"
               "# TYPE nginx_malloc_export_failed_total counter\n"
               "nginx_malloc_export_failed_total %uL\n"
               "# HELP nginx_malloc_export_dropped_total Profiles given "
               "up, never sent.\n"
               "# TYPE nginx_malloc_export_dropped_total counter\n"
               "nginx_malloc_export_dropped_total %uL\n"
               "# HELP nginx_malloc_export_bytes_total Bytes of the "
               "profiles sent, gzipped.\n"
               "# TYPE nginx_malloc_export_bytes_total counter\n"
               "nginx_malloc_export_bytes_total %uL\n"
               "# HELP nginx_malloc_export_last_success_timestamp_seconds "
               "When the collector last accepted a profile, 0: never.\n"
               "# TYPE nginx_malloc_export_last_success_timestamp_seconds "
               "gauge\n"
               "nginx_malloc_export_last_success_timestamp_seconds %T\n",
               st.sent, st.failed, st.dropped, st.bytes, st.last_success);
}


static u_char *
ngx_http_malloc_stats_series(u_char *p, u_char *last, const char *name,
    const char *unit, ngx_http_malloc_worker_t *w, size_t value)
{
    return ngx_slprintf(p, last, "nginx_malloc_%s%s{worker=\"%ui\","
                        "pid=\"%P\"} %uz\n", name, unit, w->worker,
                        w->pid, value);
}
