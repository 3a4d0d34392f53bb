
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * Answers of the admin location: JSON documents, profile data, errors,
 * and the answer to a command (each worker's result).  A leaf of the
 * endpoints: below it only the board, whose copies it reads.
 *
 * Owns: the JSON of answers.  Calls: board (copies and the desired
 * state), and the pure core (jemalloc, path, dump, rss).
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include <jansson.h>

#include "ngx_http_malloc_module.h"
#include "ngx_http_malloc_board.h"
#include "ngx_http_malloc_request.h"
#include "ngx_http_malloc_reply.h"
#include "ngx_http_malloc_jemalloc.h"
#include "ngx_http_malloc_json.h"
#include "ngx_http_malloc_path.h"
#include "ngx_http_malloc_dump.h"


static void ngx_http_malloc_result_fields(ngx_http_request_t *r,
    ngx_http_malloc_job_t *job, ngx_http_malloc_worker_t *a, json_t *w);
static const char *ngx_http_malloc_result_missed(ngx_http_request_t *r,
    ngx_http_malloc_job_t *job, ngx_http_malloc_worker_t *a, u_char *text,
    size_t size, ngx_uint_t *st);
static const char *ngx_http_malloc_result_error(ngx_http_request_t *r,
    ngx_http_malloc_job_t *job, ngx_http_malloc_worker_t *a, u_char *text,
    size_t size, ngx_uint_t *st);
static const char *ngx_http_malloc_rc_text(ngx_int_t rc);
static json_t *ngx_http_malloc_sampler(ngx_http_request_t *r,
    ngx_http_malloc_job_t *job, ngx_http_malloc_worker_t *w, ngx_uint_t n,
    json_t *workers);
static size_t ngx_http_malloc_sampler_bytes(size_t small, size_t lg,
    size_t size);


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

    size = json_dumpb(json, NULL, 0,
                      JSON_INDENT(2) | JSON_REAL_PRECISION(6));

    b = ngx_create_temp_buf(r->pool, size + 1);
    if (b == NULL || size == 0) {
        json_decref(json);
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    b->last += json_dumpb(json, (char *) b->pos, size,
                          JSON_INDENT(2) | JSON_REAL_PRECISION(6));
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


json_t *
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


/*
 * Whether the client takes a gzipped answer, by gzip_static's rules
 * (Accept-Encoding, gzip_http_version, gzip_proxied, gzip_disable); never
 * in an nginx built without them.
 */

ngx_uint_t
ngx_http_malloc_gzip_accepted(ngx_http_request_t *r)
{
#if (NGX_HTTP_GZIP)
    return ngx_http_gzip_ok(r) == NGX_OK;
#else
    return 0;
#endif
}


/*
 * "Vary: Accept-Encoding" for an answer that comes gzipped or not, by the
 * client, and "Content-Encoding: gzip" when it does: the gzip filter
 * then leaves it as it is.
 */

ngx_int_t
ngx_http_malloc_gzipped(ngx_http_request_t *r, ngx_uint_t gzipped)
{
    ngx_str_t          value;
    ngx_table_elt_t   *h;

    ngx_str_set(&value, "Accept-Encoding");

    if (ngx_http_malloc_add_header(r, "Vary", &value) != NGX_OK) {
        return NGX_ERROR;
    }

    if (!gzipped) {
        return NGX_OK;
    }

    ngx_str_set(&value, "gzip");

    if (ngx_http_malloc_add_header(r, "Content-Encoding", &value) != NGX_OK) {
        return NGX_ERROR;
    }

    /* the element just pushed: the last of the list's last part */
    h = r->headers_out.headers.last->elts;
    r->headers_out.content_encoding = &h[r->headers_out.headers.last->nelts
                                         - 1];

    return NGX_OK;
}


/* a download: "Content-Disposition: attachment; filename=..." */

ngx_int_t
ngx_http_malloc_attachment(ngx_http_request_t *r, ngx_str_t *filename)
{
    ngx_str_t  value;

    value.len = sizeof("attachment; filename=\"\"") - 1 + filename->len;
    value.data = ngx_pnalloc(r->pool, value.len);
    if (value.data == NULL) {
        return NGX_ERROR;
    }

    (void) ngx_sprintf(value.data, "attachment; filename=\"%V\"", filename);

    return ngx_http_malloc_add_header(r, "Content-Disposition", &value);
}


json_t *
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
ngx_http_malloc_unusable(ngx_http_request_t *r, json_t *json)
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


json_t *
ngx_http_malloc_worker_head(ngx_http_malloc_worker_t *w, ngx_uint_t state)
{
    json_t  *j;

    j = json_object();
    if (j == NULL) {
        return NULL;
    }

    json_object_set_new(j, "worker", json_integer((json_int_t) w->worker));
    json_object_set_new(j, "pid", w->pid ? json_integer(w->pid)
                                         : json_null());

    if (!state) {
        return j;
    }

    /* what it published, and how long ago: readers never wait for it */

    json_object_set_new(j, "prof_active", w->pid
                                          ? json_boolean(w->prof_active)
                                          : json_null());
    json_object_set_new(j, "age", w->pid
                                  ? json_real((double) w->age / 1000)
                                  : json_null());
    json_object_set_new(j, "stale", json_boolean(w->stale));

    return j;
}


/*
 * The answer to a command: each worker's result; the first failure names
 * the problem and sets the status.
 */

ngx_int_t
ngx_http_malloc_results(ngx_http_request_t *r, ngx_http_malloc_job_t *job)
{
    json_t                        *json, *workers, *w, *error;
    ngx_msec_t                     left;
    ngx_uint_t                     i, n, status, failed;
    ngx_http_malloc_worker_t      *answers;
    ngx_http_malloc_main_conf_t   *mmcf;

    static ngx_str_t  retry = ngx_string("1");

    mmcf = ngx_http_get_module_main_conf(r, ngx_http_malloc_module);

    answers = ngx_http_malloc_board_copy(mmcf, r->pool, job->seq, &n);
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
        w = ngx_http_malloc_worker_result(r, job, &answers[i], &status,
                                        &error);
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

    if (job->cmd.kind == NGX_HTTP_MALLOC_CMD_ACTIVE) {
        json_object_set_new(json, "prof_active",
                            json_boolean(ngx_http_malloc_board_desired(mmcf,
                                                                       &left)));
        json_object_set_new(json, "prof_active_remaining",
                            left ? json_integer((json_int_t) (left + 999)
                                                / 1000)
                                 : json_null());
    }

    if (job->cmd.kind == NGX_HTTP_MALLOC_CMD_RESET) {
        json_object_set_new(json, "sampler",
                            ngx_http_malloc_sampler(r, job, answers, n,
                                                    workers));
    }

    json_object_set_new(json, "workers", workers);

    if (status == NGX_HTTP_SERVICE_UNAVAILABLE
        && ngx_http_malloc_add_header(r, "Retry-After", &retry) != NGX_OK)
    {
        json_decref(json);
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    return ngx_http_malloc_send_json(r, status, json);
}


/*
 * What the interval after a reset costs: jemalloc 5.3 keeps each sampled
 * small object in an extent of its own (16 KiB with 4 KiB pages), and a
 * heap of S bytes in small objects holds about S / 2^lg of them sampled
 * (an object of s bytes is sampled with a chance of s / 2^lg at most):
 * S * 16 KiB / 2^lg at most, reached as the heap is allocated anew.
 * Large objects cost nothing more.  Each worker's figure is from its own
 * published heap, the master's from the newest generation's: the master
 * reads its configuration at the new interval from its second reload on.
 */

static json_t *
ngx_http_malloc_sampler(ngx_http_request_t *r, ngx_http_malloc_job_t *job,
    ngx_http_malloc_worker_t *w, ngx_uint_t n, json_t *workers)
{
    u_char                       *p;
    json_t                       *j, *wj;
    size_t                        size, lg, bytes, all, master;
    ngx_uint_t                    i, known, gens;
    ngx_http_malloc_main_conf_t  *mmcf;
    ngx_http_malloc_gen_t         gen[NGX_HTTP_MALLOC_GENERATIONS];
    u_char                        text[512];

    mmcf = ngx_http_get_module_main_conf(r, ngx_http_malloc_module);

    if (ngx_http_malloc_je_sampled_size(&size) != 0) {
        return json_null();
    }

    lg = (job->cmd.arg >= 0) ? (size_t) job->cmd.arg : 0;
    known = (job->cmd.arg >= 0);
    all = 0;

    for (i = 0; i < n; i++) {
        if (!w[i].answered || w[i].pid == 0) {
            continue;
        }

        if (!known) {
            lg = (w[i].result.seq == job->seq) ? w[i].result.lg_sample
                                               : w[i].lg_sample;
            known = 1;
        }

        bytes = ngx_http_malloc_sampler_bytes(w[i].stats.small, lg, size);
        all += bytes;

        wj = json_array_get(workers, i);
        if (wj != NULL) {
            json_object_set_new(wj, "sampler_bytes",
                                json_integer((json_int_t) bytes));
        }
    }

    if (!known) {
        return json_null();
    }

    gens = ngx_http_malloc_board_generations(mmcf, gen);
    master = gens ? ngx_http_malloc_sampler_bytes(gen[0].small, lg, size) : 0;

    p = (size == 0)
        ? ngx_snprintf(text, sizeof(text) - 1,
                       "at one sample per 2^%uz bytes, no memory of its "
                       "own: this jemalloc keeps sampled objects in place",
                       lg)
        : ngx_snprintf(text, sizeof(text) - 1,
                       "at one sample per 2^%uz bytes, the %uz-byte extents "
                       "of sampled small objects will hold up to about %uz "
                       "bytes while profiling is on: %uz in the workers as "
                       "their heaps are allocated anew, %uz in the master "
                       "from its second reload on",
                       lg, size, all + master, all, master);
    *p = '\0';

    j = json_pack("{s:I, s:I, s:I, s:I, s:I, s:s}",
                  "lg_sample", (json_int_t) lg,
                  "extent_bytes", (json_int_t) size,
                  "workers_bytes", (json_int_t) all,
                  "master_bytes", (json_int_t) master,
                  "total_bytes", (json_int_t) (all + master),
                  "text", (char *) text);

    return j ? j : json_null();
}


/* small * size / 2^lg */

static size_t
ngx_http_malloc_sampler_bytes(size_t small, size_t lg, size_t size)
{
    double  bytes;

    bytes = (double) small * (double) size
            / (double) ((uint64_t) 1 << (lg < 63 ? lg : 63));

    return (bytes < (double) NGX_MAX_SIZE_T_VALUE / 2) ? (size_t) bytes
                                                       : NGX_MAX_SIZE_T_VALUE
                                                         / 2;
}


/* a worker's part of an answer; the first failure sets *status, *error */

json_t *
ngx_http_malloc_worker_result(ngx_http_request_t *r,
    ngx_http_malloc_job_t *job, ngx_http_malloc_worker_t *a,
    ngx_uint_t *status, json_t **error)
{
    json_t      *w;
    ngx_uint_t   st;
    const char  *code;
    u_char       text[NGX_HTTP_MALLOC_ERR_LEN];

    w = ngx_http_malloc_worker_head(a, 0);
    if (w == NULL) {
        return NULL;
    }

    ngx_http_malloc_result_fields(r, job, a, w);

    code = ngx_http_malloc_result_error(r, job, a, text, sizeof(text), &st);

    if (code != NULL) {
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


/*
 * What the command left in the worker: where a dump went and its size,
 * the state the worker runs in (a restarted one's own), the resident
 * bytes a purge went from and to.  A worker that did not answer has none.
 */

static void
ngx_http_malloc_result_fields(ngx_http_request_t *r,
    ngx_http_malloc_job_t *job, ngx_http_malloc_worker_t *a, json_t *w)
{
    u_char                       *p;
    ngx_http_malloc_result_t     *res;
    ngx_http_malloc_main_conf_t  *mmcf;
    u_char                        text[NGX_HTTP_MALLOC_ERR_LEN];
    char                          name[NGX_HTTP_MALLOC_NAME_MAX + 1];

    mmcf = ngx_http_get_module_main_conf(r, ngx_http_malloc_module);
    res = &a->result;

    if (job->cmd.kind == NGX_HTTP_MALLOC_CMD_DUMP
        && job->cmd.tmpl[0] != '.'
        && a->answered && res->seq == job->seq)
    {
        (void) ngx_http_malloc_path_expand((char *) job->cmd.tmpl,
                                           (long) a->pid, name,
                                           sizeof(name));
        p = ngx_snprintf(text, sizeof(text) - 1, "%V/%s",
                         &mmcf->dump_dir->name, name);
        json_object_set_new(w, "path", json_stringn((char *) text,
                                                    p - text));
    }

    if (job->cmd.kind == NGX_HTTP_MALLOC_CMD_ACTIVE && a->answered) {
        json_object_set_new(w, "prof_active",
                            json_boolean(res->seq == job->seq
                                         ? res->prof_active
                                         : a->prof_active));
    }

    if (job->cmd.kind == NGX_HTTP_MALLOC_CMD_RESET && a->answered) {
        json_object_set_new(w, "lg_sample",
                            json_integer(res->seq == job->seq
                                         ? res->lg_sample : a->lg_sample));
    }

    if (job->cmd.kind == NGX_HTTP_MALLOC_CMD_PURGE && a->answered
        && res->seq == job->seq)
    {
        json_object_set_new(w, "resident_before",
                            json_integer(res->before));
        json_object_set_new(w, "resident_after",
                            json_integer(res->after));
    }

    if (job->cmd.kind == NGX_HTTP_MALLOC_CMD_DUMP && a->answered
        && res->seq == job->seq && res->rc == NGX_HTTP_MALLOC_DUMP_OK)
    {
        json_object_set_new(w, "bytes", json_integer(res->bytes));
    }
}


/*
 * Why a worker failed the command, or NULL if it did not: the error's
 * code, with its status in *st and its text, terminated, in text.
 */

static const char *
ngx_http_malloc_result_error(ngx_http_request_t *r,
    ngx_http_malloc_job_t *job, ngx_http_malloc_worker_t *a, u_char *text,
    size_t size, ngx_uint_t *st)
{
    u_char                      *p, *last;
    const char                  *code;
    ngx_http_malloc_result_t    *res;
    ngx_http_malloc_loc_conf_t  *mlcf;

    mlcf = ngx_http_get_module_loc_conf(r, ngx_http_malloc_module);
    res = &a->result;
    last = text + size - 1;

    if (!a->answered) {
        *st = NGX_HTTP_GATEWAY_TIME_OUT;
        code = "worker_timeout";

        if (a->pid) {
            p = ngx_snprintf(text, size - 1,
                             "worker %ui (pid %P) did not answer within %M ms",
                             a->worker, a->pid, mlcf->timeout);
        } else {
            p = ngx_snprintf(text, size - 1,
                             "worker %ui was not running within %M ms",
                             a->worker, mlcf->timeout);
        }

    } else if (res->seq != job->seq) {
        return ngx_http_malloc_result_missed(r, job, a, text, size, st);

    } else if (res->rc != NGX_HTTP_MALLOC_DUMP_OK) {
        switch (res->rc) {

        case NGX_HTTP_MALLOC_DUMP_EXISTS:
            *st = NGX_HTTP_CONFLICT;
            code = "file_exists";
            break;

        case NGX_HTTP_MALLOC_DUMP_SPACE:
            /* as dump_dir_full: storage, not the server, is short */
            *st = NGX_HTTP_INSUFFICIENT_STORAGE;
            code = "no_space";
            break;

        default:
            *st = NGX_HTTP_INTERNAL_SERVER_ERROR;
            code = (res->rc >= NGX_HTTP_MALLOC_RC_ACTIVE
                    && res->rc != NGX_HTTP_MALLOC_RC_TRAFFIC)
                   ? "mallctl_failed" : "dump_failed";
        }
        p = ngx_snprintf(text, size - 1, "worker %ui (pid %P): %s",
                         a->worker, a->pid,
                         ngx_http_malloc_rc_text(res->rc));

        if (res->err != 0 && last - p > 4) {
            p = ngx_cpymem(p, " (", 2);
            p = ngx_strerror(res->err, p, last - p - 1);
            *p++ = ')';
        }

    } else {
        return NULL;
    }

    *p = '\0';

    return code;
}


/*
 * A worker that has seen the command but has no result of it: it came up
 * after the command was posted.  After a command whose effect is the
 * desired state it runs in that state; after a reload that the
 * collection could not post the command again across, the workers
 * changed; otherwise it replaced a worker that crashed.
 */

static const char *
ngx_http_malloc_result_missed(ngx_http_request_t *r,
    ngx_http_malloc_job_t *job, ngx_http_malloc_worker_t *a, u_char *text,
    size_t size, ngx_uint_t *st)
{
    u_char                       *p;
    const char                   *code;
    ngx_http_malloc_main_conf_t  *mmcf;

    mmcf = ngx_http_get_module_main_conf(r, ngx_http_malloc_module);

    if (ngx_http_malloc_cmd_is_state(job->cmd.kind)) {
        return NULL;
    }

    if (job->generation != ngx_http_malloc_board_generation(mmcf)) {
        *st = NGX_HTTP_SERVICE_UNAVAILABLE;
        code = "workers_changed";
        p = ngx_snprintf(text, size - 1,
                         "nginx was reloaded before worker %ui answered, "
                         "twice or with a worker named by pid; ask again",
                         a->worker);

    } else {
        *st = NGX_HTTP_INTERNAL_SERVER_ERROR;
        code = "worker_restarted";
        p = ngx_snprintf(text, size - 1,
                         "worker %ui was restarted (now pid %P) before it "
                         "answered; it runs in the desired state",
                         a->worker, a->pid);
    }

    *p = '\0';

    return code;
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

    case NGX_HTTP_MALLOC_RC_TRAFFIC:
        return "the walk of its connections could not be written";

    default:
        return ngx_http_malloc_dump_strerror(rc);
    }
}


ngx_int_t
ngx_http_malloc_send_data(ngx_http_request_t *r, const char *type,
    const char *filename, u_char *data, size_t len)
{
    ngx_int_t     rc;
    ngx_str_t     name;
    ngx_buf_t    *b;
    ngx_chain_t   out;

    r->headers_out.status = NGX_HTTP_OK;
    r->headers_out.content_length_n = len;
    r->headers_out.content_type.data = (u_char *) type;
    r->headers_out.content_type.len = ngx_strlen(type);
    r->headers_out.content_type_len = r->headers_out.content_type.len;
    r->headers_out.content_type_lowcase = NULL;

    if (filename != NULL) {
        name.data = (u_char *) filename;
        name.len = ngx_strlen(filename);

        if (ngx_http_malloc_attachment(r, &name) != NGX_OK) {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }
    }

    rc = ngx_http_send_header(r);

    if (rc == NGX_ERROR || rc > NGX_OK || r->header_only || len == 0) {
        return (len == 0 && rc == NGX_OK) ? ngx_http_send_special(r,
                                                       NGX_HTTP_LAST)
                                          : rc;
    }

    /* the data stays mapped until the request's pool goes */

    b = ngx_calloc_buf(r->pool);
    if (b == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    b->pos = data;
    b->last = data + len;
    b->memory = 1;
    b->last_buf = (r == r->main) ? 1 : 0;
    b->last_in_chain = 1;

    out.buf = b;
    out.next = NULL;

    return ngx_http_output_filter(r, &out);
}


/*
 * The parts of a process's RSS, as the kernel counts it: they add up to
 * "rss", the shared zones' resident bytes included.  Zone names are made
 * printable ASCII: jansson takes only UTF-8, nginx takes any bytes.
 */

json_t *
ngx_http_malloc_rss_json(ngx_http_malloc_rss_t *rss,
    ngx_http_malloc_zone_t *zones, ngx_uint_t nzones)
{
    int         k;
    json_t     *parts, *list;
    ngx_uint_t  i, j, n;
    u_char      name[NGX_HTTP_MALLOC_ZONE_NAME + 1];

    parts = json_object();
    list = json_array();

    if (parts == NULL || list == NULL) {
        json_decref(parts);
        json_decref(list);
        return NULL;
    }

    n = ngx_min((ngx_uint_t) rss->nzones, nzones);

    for (i = 0; i < n; i++) {
        for (j = 0; zones[i].name[j] != '\0'; j++) {
            name[j] = (zones[i].name[j] >= 0x20 && zones[i].name[j] < 0x7f)
                      ? zones[i].name[j] : '?';
        }

        name[j] = '\0';

        json_array_append_new(list,
                              json_pack("{s:s, s:I, s:I}",
                                        "name", (char *) name,
                                        "size", (json_int_t) zones[i].size,
                                        "resident",
                                        (json_int_t) rss->zone[i]));
    }

    for (k = 0; k < NGX_HTTP_MALLOC_RSS_PARTS; k++) {
        json_object_set_new(parts, ngx_http_malloc_rss_part_name(k),
                            (k == NGX_HTTP_MALLOC_RSS_SHARED_ZONES)
                            ? json_incref(list)
                            : json_integer((json_int_t)
                                           ngx_http_malloc_rss_part(rss, k)));
    }

    json_decref(list);

    return parts;
}


/*
 * Null, or what says that RSS grew outside the allocator since "from":
 * the sentence, the two growths and the parts that grew most.  Zones are
 * named one by one when both readings have the same ("zones" set).
 */

json_t *
ngx_http_malloc_outside_json(ngx_http_malloc_rss_t *from,
    ngx_http_malloc_rss_t *to, const char *since,
    ngx_http_malloc_zone_t *zones, ngx_uint_t nzones)
{
    json_t                      *j, *list, *g;
    ngx_uint_t                   i, n;
    const char                  *names[NGX_HTTP_MALLOC_RSS_ZONES];
    ngx_http_malloc_rss_grew_t   grew[NGX_HTTP_MALLOC_RSS_GREW];
    char                         text[NGX_HTTP_MALLOC_RSS_TEXT_LEN];

    if (from->rss == 0 || to->rss == 0) {
        return json_null();
    }

    nzones = ngx_min(nzones, NGX_HTTP_MALLOC_RSS_ZONES);

    for (i = 0; i < nzones; i++) {
        names[i] = (const char *) zones[i].name;
    }

    n = ngx_http_malloc_rss_outside(from, to, zones != NULL, grew);

    if (n == 0
        || ngx_http_malloc_rss_sentence(from, to, since,
                                        zones != NULL ? names : NULL, text)
           == 0)
    {
        return json_null();
    }

    list = json_array();
    if (list == NULL) {
        return NULL;
    }

    for (i = 0; i < n; i++) {
        g = json_pack("{s:s, s:I}",
                      "part", ngx_http_malloc_rss_part_name(grew[i].part),
                      "bytes", (json_int_t) grew[i].bytes);

        if (g != NULL && grew[i].zone >= 0
            && (ngx_uint_t) grew[i].zone < nzones)
        {
            json_object_set_new(g, "zone", json_string(names[grew[i].zone]));
        }

        json_array_append_new(list, g);
    }

    j = json_pack("{s:s, s:I, s:I, s:o}",
                  "text", text,
                  "rss_growth", (json_int_t) (to->rss - from->rss),
                  "allocator_growth",
                  (json_int_t) ngx_http_malloc_rss_allocator_growth(from, to),
                  "grew", list);

    return j;
}


/*
 * The mappings that grew most, as a worker found them in its smaps:
 * [{"start": "0x7f12a0000000", "end": ..., "kind": "anonymous", "name":
 * "", "rss": N, "grew": N}], and "zone" with a shared zone's name.
 */

json_t *
ngx_http_malloc_maps_json(ngx_http_malloc_maps_t *maps,
    ngx_http_malloc_zone_t *zones, ngx_uint_t nzones)
{
    json_t                       *list, *o;
    uint64_t                      rss, grew;
    ngx_uint_t                    i, n;
    ngx_http_malloc_maps_grew_t  *g;
    u_char                        start[NGX_INT64_LEN + 3];
    u_char                        end[NGX_INT64_LEN + 3];

    list = json_array();
    if (list == NULL) {
        return NULL;
    }

    n = ngx_min(maps->n, NGX_HTTP_MALLOC_MAPS_TOP);

    for (i = 0; i < n; i++) {
        g = &maps->m[i];

        *ngx_snprintf(start, sizeof(start) - 1, "0x%xL", g->start) = '\0';
        *ngx_snprintf(end, sizeof(end) - 1, "0x%xL", g->end) = '\0';

        /* JSON integers */
        rss = ngx_min(g->rss, (uint64_t) INT64_MAX);
        grew = ngx_min(g->grew, (uint64_t) INT64_MAX);

        o = json_pack("{s:s, s:s, s:s, s:s%, s:I, s:I}",
                      "start", (char *) start,
                      "end", (char *) end,
                      "kind", ngx_http_malloc_maps_kind(g->kind),
                      "name", g->name,
                      ngx_strnlen((u_char *) g->name,
                                  NGX_HTTP_MALLOC_MAPS_NAME - 1),
                      "rss", (json_int_t) rss,
                      "grew", (json_int_t) grew);

        if (o != NULL && g->kind == NGX_HTTP_MALLOC_MAP_ZONE
            && g->zone >= 0 && (ngx_uint_t) g->zone < nzones)
        {
            json_object_set_new(o, "zone",
                                json_string((char *) zones[g->zone].name));
        }

        json_array_append_new(list, o);
    }

    return list;
}


/*
 * A worker's memory from smaps, all of it (the allocator's is a part):
 * rss, rss_start, with "parts" rss_parts, and outside_malloc, with the
 * mappings that grew most where it grew outside.
 */

void
ngx_http_malloc_worker_rss(json_t *j, ngx_http_malloc_worker_t *w,
    ngx_http_malloc_zone_t *zones, ngx_uint_t nzones, ngx_uint_t parts)
{
    json_t                       *outside;
    ngx_http_malloc_maps_t        maps;
    ngx_http_malloc_main_conf_t  *mmcf;

    if (j == NULL || w->pid == 0 || w->rss.rss == 0) {
        return;
    }

    json_object_set_new(j, "rss", json_integer((json_int_t) w->rss.rss));
    json_object_set_new(j, "rss_start",
                        json_integer((json_int_t) w->rss_start.rss));

    if (parts) {
        json_object_set_new(j, "rss_parts",
                            ngx_http_malloc_rss_json(&w->rss, zones, nzones));
    }

    outside = ngx_http_malloc_outside_json(&w->rss_start, &w->rss,
                                           "the worker started", zones,
                                           nzones);

    if (json_is_object(outside)) {
        mmcf = ngx_http_cycle_get_module_main_conf(ngx_cycle,
                                                   ngx_http_malloc_module);

        (void) ngx_http_malloc_board_maps(mmcf, w->worker, w->pid, &maps);

        json_object_set_new(outside, "mappings",
                            ngx_http_malloc_maps_json(&maps, zones, nzones));
    }

    json_object_set_new(j, "outside_malloc", outside);
}


/*
 * The master's memory as it was after the last configuration read, and
 * its growth since nginx started; null before any.  Its zones may have
 * changed since then: they are compared together.
 */

json_t *
ngx_http_malloc_master_json(ngx_http_malloc_main_conf_t *mmcf,
    ngx_uint_t parts)
{
    json_t                    *j;
    ngx_uint_t                 nzones;
    ngx_http_malloc_master_t   m;
    ngx_http_malloc_zone_t     zones[NGX_HTTP_MALLOC_RSS_ZONES];

    nzones = ngx_http_malloc_board_master(mmcf, &m, zones);

    if (m.pid == 0 || m.rss.rss == 0) {
        return json_null();
    }

    j = json_object();
    if (j == NULL) {
        return NULL;
    }

    /* a worker's parent; the master's own pid changed as it daemonized */
    json_object_set_new(j, "pid", json_integer(ngx_process
                                               == NGX_PROCESS_WORKER
                                               ? getppid() : ngx_pid));
    json_object_set_new(j, "rss", json_integer((json_int_t) m.rss.rss));
    json_object_set_new(j, "rss_start",
                        json_integer((json_int_t) m.rss_start.rss));

    if (parts) {
        json_object_set_new(j, "rss_parts",
                            ngx_http_malloc_rss_json(&m.rss, zones, nzones));
    }

    json_object_set_new(j, "outside_malloc",
                        ngx_http_malloc_outside_json(&m.rss_start, &m.rss,
                                                     "nginx started", NULL,
                                                     0));

    return j;
}


json_t *
ngx_http_malloc_time_json(time_t t)
{
    u_char    *p;
    ngx_tm_t   tm;
    u_char     text[sizeof("2026-12-01T03:43:08Z")];

    ngx_gmtime(t, &tm);

    p = ngx_snprintf(text, sizeof(text) - 1,
                     "%4d-%02d-%02dT%02d:%02d:%02dZ", tm.ngx_tm_year,
                     tm.ngx_tm_mon, tm.ngx_tm_mday, tm.ngx_tm_hour,
                     tm.ngx_tm_min, tm.ngx_tm_sec);
    *p = '\0';

    return json_string((char *) text);
}
