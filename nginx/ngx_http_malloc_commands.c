
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * The state page and the commands.  GET / and GET prof_active answer at
 * once from what the workers published; a POST posts its command through
 * the board, waits for every worker's result and lists them.  Writes are
 * never refused because another request is in progress: the workers
 * apply the commands in the order posted, so the last write wins.
 *
 * Owns: the commands' bodies and their notice lines.  Calls: request,
 * reply, board, export (its state), schedule (malloc_watch's state),
 * traffic (its sentence), and the pure core (json, path, dump,
 * jemalloc).
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include <nginx.h>

#include <jansson.h>

#include "ngx_http_malloc_module.h"
#include "ngx_http_malloc_board.h"
#include "ngx_http_malloc_request.h"
#include "ngx_http_malloc_reply.h"
#include "ngx_http_malloc_traffic.h"
#include "ngx_http_malloc_commands.h"
#include "ngx_http_malloc_export.h"
#include "ngx_http_malloc_schedule.h"
#include "ngx_http_malloc_jemalloc.h"
#include "ngx_http_malloc_json.h"
#include "ngx_http_malloc_path.h"
#include "ngx_http_malloc_dump.h"


static json_t *ngx_http_malloc_generations(ngx_http_request_t *r);
static json_t *ngx_http_malloc_sampling_changed(ngx_http_malloc_gen_t *gen,
    ngx_http_malloc_gen_t *prev);
static ngx_int_t ngx_http_malloc_check_names(ngx_http_request_t *r,
    ngx_http_malloc_job_t *job, ngx_int_t *sent);
static ngx_int_t ngx_http_malloc_start(ngx_http_request_t *r,
    ngx_http_malloc_job_t *job);
static void ngx_http_malloc_log_command(ngx_http_request_t *r,
    ngx_http_malloc_job_t *job);
static json_t *ngx_http_malloc_watch_json(ngx_http_malloc_main_conf_t *mmcf);


/* GET /, GET prof_active: what the workers published, at once */

ngx_int_t
ngx_http_malloc_state(ngx_http_request_t *r, ngx_http_malloc_job_t *job,
    u_char *body, size_t len)
{
    json_t                           *json, *workers, *head;
    ngx_msec_t                        left;
    ngx_uint_t                        i, n, nzones;
    ngx_http_malloc_worker_t         *w;
    ngx_http_malloc_loc_conf_t       *mlcf;
    ngx_http_malloc_main_conf_t      *mmcf;
    ngx_http_malloc_zone_t            zones[NGX_HTTP_MALLOC_RSS_ZONES];

    mlcf = ngx_http_get_module_loc_conf(r, ngx_http_malloc_module);
    mmcf = ngx_http_get_module_main_conf(r, ngx_http_malloc_module);

    w = ngx_http_malloc_board_copy(mmcf, r->pool, 0, &n);

    json = json_object();
    workers = json_array();

    if (w == NULL || json == NULL || workers == NULL) {
        json_decref(json);
        json_decref(workers);
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    if (job->endpoint == NGX_HTTP_MALLOC_EP_INDEX) {
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
        json_object_set_new(json, "generations",
                            ngx_http_malloc_generations(r));
        json_object_set_new(json, "export",
                            ngx_http_malloc_export_json(mmcf));
        json_object_set_new(json, "watch", ngx_http_malloc_watch_json(mmcf));

        /* malloc_traffic on: is the memory the traffic, in a sentence */
        json_object_set_new(json, "traffic",
                            ngx_http_malloc_traffic_state(r, w, n));
    }

    json_object_set_new(json, "prof_active",
                        json_boolean(ngx_http_malloc_board_desired(mmcf,
                                                                   &left)));
    json_object_set_new(json, "prof_active_remaining",
                        left ? json_integer((json_int_t) (left + 999) / 1000)
                             : json_null());

    nzones = ngx_http_malloc_board_master(mmcf, NULL, zones);

    for (i = 0; i < n; i++) {
        head = ngx_http_malloc_worker_head(&w[i], 1);

        if (job->endpoint == NGX_HTTP_MALLOC_EP_INDEX) {
            /* its memory, in a sentence where it grew outside malloc */
            ngx_http_malloc_worker_rss(head, &w[i], zones, nzones, 0);
        }

        json_array_append_new(workers, head);
    }

    json_object_set_new(json, "workers", workers);

    if (job->endpoint == NGX_HTTP_MALLOC_EP_INDEX) {
        json_object_set_new(json, "master",
                            ngx_http_malloc_master_json(mmcf, 0));
    }

    if (ngx_http_malloc_je_probe()->state != NGX_HTTP_MALLOC_JE_OK) {
        return ngx_http_malloc_unusable(r, json);
    }

    return ngx_http_malloc_send_json(r, NGX_HTTP_OK, json);
}


/*
 * The master's generations, newest first: when each began (a reload),
 * the master's heap then as its first worker inherited it, and the growth
 * since the generation before, which a module that leaks at each reload
 * keeps positive.  Sampling costs the master memory too, so each says how
 * the master sampled as it read that configuration, and a growth across
 * a change of it says so.
 */

static json_t *
ngx_http_malloc_generations(ngx_http_request_t *r)
{
    json_t                       *list, *g;
    ngx_uint_t                    i, n, prev;
    ngx_http_malloc_main_conf_t  *mmcf;
    ngx_http_malloc_gen_t         gens[NGX_HTTP_MALLOC_GENERATIONS];

    mmcf = ngx_http_get_module_main_conf(r, ngx_http_malloc_module);

    n = ngx_http_malloc_board_generations(mmcf, gens);

    list = json_array();
    if (list == NULL) {
        return NULL;
    }

    for (i = 0; i < n; i++) {
        prev = (i + 1 < n
                && gens[i + 1].generation == gens[i].generation - 1);

        g = json_pack("{s:I, s:o, s:I, s:o, s:o, s:b, s:o, s:o}",
                      "generation", (json_int_t) gens[i].generation,
                      "time", ngx_http_malloc_time_json(gens[i].time),
                      "allocated", (json_int_t) gens[i].allocated,
                      "growth",
                      prev ? json_integer((json_int_t) gens[i].allocated
                                          - (json_int_t) gens[i + 1].allocated)
                           : json_null(),
                      "lg_sample",
                      gens[i].lg_sample >= 0
                      ? json_integer((json_int_t) gens[i].lg_sample)
                      : json_null(),
                      "partial", (int) gens[i].partial,
                      "sampling_changed",
                      prev ? ngx_http_malloc_sampling_changed(&gens[i],
                                                              &gens[i + 1])
                           : json_null(),
                      "snapshot",
                      gens[i].snapshot[0]
                      ? json_string((char *) gens[i].snapshot)
                      : json_null());

        json_array_append_new(list, g);
    }

    return list;
}


/*
 * malloc_watch as it stands: "armed" (waiting for a growth or a peak) or
 * "window" (sampling for a firing), its last firing and snapshot, why
 * the last firing that wrote none did not, and the outside= trigger's
 * firings; null without the directive.
 */

static json_t *
ngx_http_malloc_watch_json(ngx_http_malloc_main_conf_t *mmcf)
{
    json_t                   *outside;
    ngx_uint_t                nzones;
    ngx_http_malloc_watch_t   w;
    ngx_http_malloc_zone_t    zones[NGX_HTTP_MALLOC_RSS_ZONES];

    if (mmcf->watch == NULL) {
        return json_null();
    }

    ngx_http_malloc_schedule_watch_state(mmcf, &w, NULL);
    nzones = ngx_http_malloc_board_master(mmcf, NULL, zones);

    /* outside=: its own trigger, on RSS outside the allocator */

    outside = json_null();

    if (mmcf->watch->outside != 0) {
        outside = json_pack("{s:I, s:I, s:o, s:I, s:o, s:o, s:o, s:o}",
                      "size", (json_int_t) mmcf->watch->outside,
                      "firings", (json_int_t) w.outside_firings,
                      "last_firing",
                      w.outside_at ? ngx_http_malloc_time_json(w.outside_at)
                                   : json_null(),
                      "last_grew", (json_int_t) w.outside_grew,
                      "last_worker",
                      w.outside_at ? json_integer(w.outside_worker)
                                   : json_null(),
                      "last_pid",
                      w.outside_at ? json_integer(w.outside_pid)
                                   : json_null(),
                      "last_text",
                      w.outside_at ? json_string((char *) w.outside_text)
                                   : json_null(),
                      "last_mappings",
                      w.outside_at ? ngx_http_malloc_maps_json(&w.outside_maps,
                                                               zones, nzones)
                                   : json_null());
    }

    return json_pack("{s:s, s:I, s:I, s:I, s:o, s:I, s:o, s:o, s:o, s:o, "
                     "s:o}",
                     "state", w.fired ? "window" : "armed",
                     "baseline", (json_int_t) w.baseline,
                     "firings", (json_int_t) w.firings,
                     "snapshots", (json_int_t) w.snapshots,
                     "last_firing",
                     w.fired_at ? ngx_http_malloc_time_json(w.fired_at)
                                : json_null(),
                     "last_grew", (json_int_t) w.grew,
                     "last_snapshot",
                     w.snapshot[0] ? json_string((char *) w.snapshot)
                                   : json_null(),
                     "last_snapshot_time",
                     w.snapshot_at ? ngx_http_malloc_time_json(w.snapshot_at)
                                   : json_null(),
                     "last_failure",
                     w.failure[0] ? json_string((char *) w.failure)
                                  : json_null(),
                     "last_failure_time",
                     w.failed_at ? ngx_http_malloc_time_json(w.failed_at)
                                 : json_null(),
                     "outside", outside);
}


/*
 * A master that samples keeps a large extent for each sampled small
 * object: when it read this configuration at another interval than the
 * one before (or one of them without sampling), the growth between them
 * is partly that memory, and no leak.
 */

static json_t *
ngx_http_malloc_sampling_changed(ngx_http_malloc_gen_t *gen,
    ngx_http_malloc_gen_t *prev)
{
    u_char  *p;
    size_t   size;
    u_char   from[NGX_INT_T_LEN + 8], to[NGX_INT_T_LEN + 8];
    u_char   text[256];

    if (gen->lg_sample == prev->lg_sample) {
        return json_null();
    }

    if (ngx_http_malloc_je_sampled_size(&size) != 0) {
        size = 16384;
    }

    p = (prev->lg_sample >= 0)
        ? ngx_sprintf(from, "2^%i bytes", prev->lg_sample)
        : ngx_cpymem(from, "no sampling", sizeof("no sampling") - 1);
    *p = '\0';

    p = (gen->lg_sample >= 0)
        ? ngx_sprintf(to, "2^%i bytes", gen->lg_sample)
        : ngx_cpymem(to, "no sampling", sizeof("no sampling") - 1);
    *p = '\0';

    p = (size == 0)
        ? ngx_snprintf(text, sizeof(text) - 1,
                       "the master's sampling interval changed from %s to "
                       "%s: its samples do not compare across it (this "
                       "jemalloc keeps sampled objects in place: the "
                       "allocated bytes do not depend on it)", from, to)
        : ngx_snprintf(text, sizeof(text) - 1,
                       "the master's sampling interval changed from %s to "
                       "%s: growth across it is partly the sampler's own "
                       "memory (jemalloc keeps each sampled small object in "
                       "a %uz-byte extent), not a leak", from, to, size);
    *p = '\0';

    return json_string((char *) text);
}


ngx_int_t
ngx_http_malloc_prof_active(ngx_http_request_t *r, ngx_http_malloc_job_t *job,
    u_char *body, size_t len)
{
    ngx_str_t                 s;
    ngx_int_t                 ms;
    ngx_http_malloc_active_t  cmd;
    char                      err[NGX_HTTP_MALLOC_ERR_LEN];

    if (body == NULL) {
        return ngx_http_malloc_state(r, job, NULL, 0);
    }

    job->answered = ngx_http_malloc_results;

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

        job->cmd.duration = ms;
    }

    job->cmd.kind = NGX_HTTP_MALLOC_CMD_ACTIVE;
    job->cmd.arg = cmd.active;

    return ngx_http_malloc_start(r, job);
}


/*
 * Sampling more often than one sample per 4 KiB costs nginx much of its
 * throughput (every sample records a backtrace): such values need
 * "force": true.
 */

ngx_int_t
ngx_http_malloc_prof_reset(ngx_http_request_t *r, ngx_http_malloc_job_t *job,
    u_char *body, size_t len)
{
    int   lg, force;
    char  err[NGX_HTTP_MALLOC_ERR_LEN];

    job->answered = ngx_http_malloc_results;

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

    job->cmd.kind = NGX_HTTP_MALLOC_CMD_RESET;
    job->cmd.arg = lg;

    return ngx_http_malloc_start(r, job);
}


ngx_int_t
ngx_http_malloc_purge(ngx_http_request_t *r, ngx_http_malloc_job_t *job,
    u_char *body, size_t len)
{
    char  err[NGX_HTTP_MALLOC_ERR_LEN];

    job->answered = ngx_http_malloc_results;

    if (ngx_http_malloc_parse_empty(body, len, err) != 0) {
        return ngx_http_malloc_error(r, NGX_HTTP_BAD_REQUEST, "invalid_body",
                                     "%s", err);
    }

    job->cmd.kind = NGX_HTTP_MALLOC_CMD_PURGE;

    return ngx_http_malloc_start(r, job);
}


ngx_int_t
ngx_http_malloc_prof_dump(ngx_http_request_t *r, ngx_http_malloc_job_t *job,
    u_char *body, size_t len)
{
    int                           n;
    ngx_int_t                     rc;
    ngx_tm_t                      tm;
    ngx_time_t                   *tp;
    ngx_http_malloc_main_conf_t  *mmcf;
    char                          err[NGX_HTTP_MALLOC_ERR_LEN];
    u_char                        name[NGX_HTTP_MALLOC_BODY_MAX];

    mmcf = ngx_http_get_module_main_conf(r, ngx_http_malloc_module);

    job->answered = ngx_http_malloc_results;

    n = ngx_http_malloc_parse_dump(body, len, name, sizeof(name), err);

    if (n < 0) {
        return ngx_http_malloc_error(r, NGX_HTTP_BAD_REQUEST, "invalid_body",
                                     "%s", err);
    }

    if (n == 0) {
        /* unique enough, and O_EXCL decides */
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
                                      ngx_http_malloc_board_count(mmcf) > 1,
                                      (char *) job->cmd.tmpl,
                                      sizeof(job->cmd.tmpl));
    if (n < 0) {
        return ngx_http_malloc_error(r, NGX_HTTP_BAD_REQUEST, "invalid_path",
                                     "%s", ngx_http_malloc_path_strerror(n));
    }

    job->cmd.kind = NGX_HTTP_MALLOC_CMD_DUMP;

    if (ngx_http_malloc_check_names(r, job, &rc) != NGX_OK) {
        return rc;
    }

    return ngx_http_malloc_start(r, job);
}


/*
 * Refuses a dump before any worker writes: the directory must be usable
 * and no worker's file may exist, so a refused request changes nothing.
 * NGX_DECLINED once the refusal is sent; *sent is what sending returned.
 */

static ngx_int_t
ngx_http_malloc_check_names(ngx_http_request_t *r, ngx_http_malloc_job_t *job,
    ngx_int_t *sent)
{
    int                           rc, err;
    off_t                         used;
    ngx_uint_t                    i, n;
    ngx_http_malloc_worker_t     *w;
    ngx_http_malloc_main_conf_t  *mmcf;
    char                          name[NGX_HTTP_MALLOC_NAME_MAX + 1];
    u_char                        reason[NGX_MAX_ERROR_STR];

    mmcf = ngx_http_get_module_main_conf(r, ngx_http_malloc_module);

    used = ngx_http_malloc_dump_used((char *) mmcf->dump_dir->name.data);

    if (mmcf->dump_max_size != 0 && used >= mmcf->dump_max_size) {
        *sent = ngx_http_malloc_error(r, NGX_HTTP_INSUFFICIENT_STORAGE,
                    "dump_dir_full",
                    "malloc_dump_dir \"%V\" holds %O bytes, its max_size "
                    "is %O: remove old dumps first",
                    &mmcf->dump_dir->name, used, mmcf->dump_max_size);
        return NGX_DECLINED;
    }

    w = ngx_http_malloc_board_copy(mmcf, r->pool, 0, &n);
    if (w == NULL) {
        *sent = NGX_HTTP_INTERNAL_SERVER_ERROR;
        return NGX_DECLINED;
    }

    for (i = 0; i < n; i++) {

        if (w[i].pid == 0) {
            continue;
        }

        (void) ngx_http_malloc_path_expand((char *) job->cmd.tmpl,
                                           (long) w[i].pid, name,
                                           sizeof(name));

        err = 0;
        rc = ngx_http_malloc_dump_check((char *) mmcf->dump_dir->name.data,
                                        name, &err);

        if (rc == NGX_HTTP_MALLOC_DUMP_OK) {
            continue;
        }

        if (rc == NGX_HTTP_MALLOC_DUMP_EXISTS) {
            *sent = ngx_http_malloc_error(r, NGX_HTTP_CONFLICT,
                       "file_exists",
                       "\"%V/%s\" exists; dumps never overwrite files",
                       &mmcf->dump_dir->name, name);

        } else {
            *ngx_strerror(err, reason, sizeof(reason) - 1) = '\0';

            *sent = ngx_http_malloc_error(r, NGX_HTTP_INTERNAL_SERVER_ERROR,
                       "dump_dir_unusable",
                       "malloc_dump_dir \"%V\" cannot be used by the "
                       "worker user: %s; nginx creates it at start-up, so "
                       "reload nginx or create it for that user",
                       &mmcf->dump_dir->name, reason);
        }

        return NGX_DECLINED;
    }

    return NGX_OK;
}


static ngx_int_t
ngx_http_malloc_start(ngx_http_request_t *r, ngx_http_malloc_job_t *job)
{
    ngx_http_malloc_loc_conf_t  *mlcf;

    mlcf = ngx_http_get_module_loc_conf(r, ngx_http_malloc_module);

    ngx_http_malloc_log_command(r, job);

    return ngx_http_malloc_request_post(r, mlcf->timeout, 0);
}


/* an operator acted: a notice line naming the client */

static void
ngx_http_malloc_log_command(ngx_http_request_t *r, ngx_http_malloc_job_t *job)
{
    ngx_str_t                    *addr;
    ngx_http_malloc_cmd_t        *cmd;
    ngx_http_malloc_main_conf_t  *mmcf;

    mmcf = ngx_http_get_module_main_conf(r, ngx_http_malloc_module);
    addr = &r->connection->addr_text;
    cmd = &job->cmd;

    switch (cmd->kind) {

    case NGX_HTTP_MALLOC_CMD_ACTIVE:
        if (cmd->arg && cmd->duration) {
            ngx_log_error(NGX_LOG_NOTICE, r->connection->log, 0,
                          "heap profiling turned on for %M s by client %V",
                          cmd->duration / 1000, addr);
        } else {
            ngx_log_error(NGX_LOG_NOTICE, r->connection->log, 0,
                          "heap profiling turned %s by client %V",
                          cmd->arg ? "on" : "off", addr);
        }

        break;

    case NGX_HTTP_MALLOC_CMD_RESET:
        if (cmd->arg >= 0) {
            ngx_log_error(NGX_LOG_NOTICE, r->connection->log, 0,
                          "heap profile samples reset, lg_sample %i, by "
                          "client %V", cmd->arg, addr);
        } else {
            ngx_log_error(NGX_LOG_NOTICE, r->connection->log, 0,
                          "heap profile samples reset by client %V", addr);
        }

        break;

    case NGX_HTTP_MALLOC_CMD_PURGE:
        ngx_log_error(NGX_LOG_NOTICE, r->connection->log, 0,
                      "allocator purge requested by client %V", addr);
        break;

    default:
        ngx_log_error(NGX_LOG_NOTICE, r->connection->log, 0,
                      "heap dump \"%V/%s\" requested by client %V",
                      &mmcf->dump_dir->name, cmd->tmpl, addr);
    }
}
