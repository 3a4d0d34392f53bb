
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * Profiles served from the admin location: every worker (or one, ?pid=N)
 * dumps its heap through the board into a hidden file of the dump
 * directory; a thread of the module's pool reads the dumps back, removes
 * them and runs the pipeline into heap_v2, gperftools' legacy text or a
 * symbolized profile.proto.  ?seconds=N subtracts a first collection
 * taken N seconds earlier, waiting on a timer, so the worker keeps
 * serving meanwhile; a reload or a restarted worker in between ends the
 * window with an error, never a profile of different processes.
 *
 * Owns: a profile request's steps; the request's life (its collections,
 * its thread, the window's timer) is request.c's.  Calls: request,
 * reply, board, schedule (its listing of snapshots), and the pure core
 * (pipeline, path, jemalloc, symbol: its demangler for heap.json's
 * names).
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_malloc_module.h"
#include "ngx_http_malloc_board.h"
#include "ngx_http_malloc_request.h"
#include "ngx_http_malloc_reply.h"
#include "ngx_http_malloc_profile.h"
#include "ngx_http_malloc_schedule.h"
#include "ngx_http_malloc_pipeline.h"
#include "ngx_http_malloc_jemalloc.h"
#include "ngx_http_malloc_path.h"
#include "ngx_http_malloc_symbol.h"


#define NGX_HTTP_MALLOC_PROCESS_ARGS                                         \
    "\"process\" takes \"master\", without \"pid\", \"seconds\", "           \
    "\"snapshot\" or \"base\""


/* the longest growth window a request may wait for */
#define NGX_HTTP_MALLOC_SECONDS_MAX  3600


typedef struct {
    ngx_http_malloc_job_t         *job;
    ngx_http_malloc_pipe_t         pipe;
    ngx_uint_t                     phase;        /* 0: base, 1: final */
    ngx_uint_t                     generation;   /* of the base */
    off_t                          allocated;    /* by the base's workers */
    ngx_pid_t                     *pids;         /* of the base */
    ngx_uint_t                     npids;
    char                         **paths;        /* dumps to read */
    char                         **base_paths;   /* the master's, since */
    u_char                        *body;         /* addresses to name */
    size_t                         body_len;
} ngx_http_malloc_profile_t;


static ngx_http_malloc_profile_t *ngx_http_malloc_profile_create(
    ngx_http_request_t *r, ngx_http_malloc_job_t *job);
static ngx_int_t ngx_http_malloc_profile_args(ngx_http_request_t *r,
    ngx_http_malloc_profile_t *pf, ngx_int_t *sent);
static ngx_int_t ngx_http_malloc_profile_seconds(ngx_http_request_t *r,
    ngx_http_malloc_profile_t *pf, ngx_int_t *sent);
static ngx_int_t ngx_http_malloc_profile_read(ngx_http_request_t *r,
    ngx_http_malloc_profile_t *pf);
static void ngx_http_malloc_profile_free(void *data);
static ngx_int_t ngx_http_malloc_profile_post(ngx_http_request_t *r,
    ngx_http_malloc_job_t *job);
static ngx_int_t ngx_http_malloc_profile_dumped(ngx_http_request_t *r,
    ngx_http_malloc_job_t *job);
static ngx_int_t ngx_http_malloc_profile_same(ngx_http_request_t *r,
    ngx_http_malloc_profile_t *pf, ngx_http_malloc_worker_t *w,
    ngx_uint_t n, ngx_int_t *sent);
static ngx_int_t ngx_http_malloc_profile_paths(ngx_http_request_t *r,
    ngx_http_malloc_profile_t *pf, ngx_http_malloc_worker_t *w,
    ngx_uint_t n);
static void ngx_http_malloc_profile_build(void *data);
static void ngx_http_malloc_profile_lookup(void *data);
static ngx_int_t ngx_http_malloc_profile_finish(ngx_http_request_t *r,
    void *data);
static ngx_int_t ngx_http_malloc_profile_window(ngx_http_request_t *r,
    void *data);
static void ngx_http_malloc_profile_unreadable(void *data, const char *path);
static ngx_int_t ngx_http_malloc_profile_master(ngx_http_request_t *r,
    ngx_http_malloc_profile_t *pf, ngx_int_t *sent);
static char **ngx_http_malloc_profile_generation(ngx_http_request_t *r,
    ngx_http_malloc_profile_t *pf, const char *arg, ngx_http_malloc_gen_t *gen,
    ngx_int_t *sent);
static void ngx_http_malloc_profile_exact(ngx_http_malloc_profile_t *pf,
    ngx_http_malloc_gen_t *gen, ngx_http_malloc_gen_t *base);
static ngx_int_t ngx_http_malloc_profile_reloads(ngx_http_request_t *r,
    ngx_http_malloc_profile_t *pf, ngx_int_t *sent);
static ngx_int_t ngx_http_malloc_profile_whole(ngx_http_request_t *r,
    ngx_http_malloc_gen_t *gen, ngx_http_malloc_gen_t *base,
    const char *arg, ngx_int_t *sent);
static ngx_int_t ngx_http_malloc_profile_pid(ngx_http_request_t *r,
    ngx_http_malloc_job_t *job, ngx_int_t *sent);
static ngx_int_t ngx_http_malloc_profile_snapshot(ngx_http_request_t *r,
    ngx_http_malloc_arena_t *arena, const char *arg, char ***paths,
    ngx_int_t *sent);
static ngx_int_t ngx_http_malloc_profile_files(
    ngx_http_malloc_main_conf_t *mmcf, ngx_http_malloc_arena_t *arena,
    ngx_str_t *name, ngx_http_malloc_snap_file_t *files, ngx_uint_t n,
    char ***paths);


/* names this worker's hidden dumps apart, however many profiles run */
static ngx_uint_t  ngx_http_malloc_profile_number;


ngx_int_t
ngx_http_malloc_profile(ngx_http_request_t *r, ngx_http_malloc_job_t *job,
    u_char *body, size_t len)
{
    ngx_int_t                   rc;
    ngx_str_t                   arg;
    ngx_http_malloc_profile_t  *pf;

    /* a bounded number at once, before the profile takes any memory */

    if (ngx_http_malloc_request_admit(r,
            ngx_http_arg(r, (u_char *) "seconds", 7, &arg) == NGX_OK, &rc)
        != NGX_OK)
    {
        return rc;
    }

    pf = ngx_http_malloc_profile_create(r, job);
    if (pf == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    if (ngx_http_malloc_profile_args(r, pf, &rc) != NGX_OK) {
        return rc;
    }

    if (pf->pipe.snapshot != NULL || pf->paths != NULL) {
        return ngx_http_malloc_profile_read(r, pf);
    }

    job->cmd.kind = NGX_HTTP_MALLOC_CMD_DUMP;
    job->answered = ngx_http_malloc_profile_dumped;

    return ngx_http_malloc_profile_post(r, job);
}


/*
 * The request's arguments into the profile's pipe, refused when they do
 * not go together: the window, the worker, the snapshots compared, the
 * format, the master.  NGX_OK, or NGX_DECLINED with what the refusal's
 * sending returned in *sent.
 */

static ngx_int_t
ngx_http_malloc_profile_args(ngx_http_request_t *r,
    ngx_http_malloc_profile_t *pf, ngx_int_t *sent)
{
    ngx_str_t               arg;
    ngx_uint_t              snapshot, base;
    ngx_http_malloc_job_t  *job;

    job = pf->job;

    if (ngx_http_malloc_profile_seconds(r, pf, sent) != NGX_OK
        || ngx_http_malloc_profile_pid(r, job, sent) != NGX_OK)
    {
        return NGX_DECLINED;
    }

    snapshot = (ngx_http_arg(r, (u_char *) "snapshot", 8, &arg) == NGX_OK);
    base = (ngx_http_arg(r, (u_char *) "base", 4, &arg) == NGX_OK);

    /* snapshots are of all workers: nothing to compare one worker with */

    if ((snapshot || base)
        && (job->endpoint != NGX_HTTP_MALLOC_EP_PPROF_JSON
            || pf->pipe.seconds || job->cmd.target))
    {
        *sent = ngx_http_malloc_error(r, NGX_HTTP_BAD_REQUEST,
                    "invalid_argument",
                    "\"snapshot\" and \"base\" are taken by "
                    "pprof/heap.json, without \"seconds\" or \"pid\"");
        return NGX_DECLINED;
    }

    if (ngx_http_malloc_profile_snapshot(r, pf->pipe.arena, "snapshot",
                                         &pf->pipe.snapshot, sent)
            != NGX_OK
        || ngx_http_malloc_profile_snapshot(r, pf->pipe.arena, "base",
                                            &pf->pipe.against, sent)
           != NGX_OK)
    {
        return NGX_DECLINED;
    }

    if (snapshot && base
        && ngx_http_malloc_profile_reloads(r, pf, sent) != NGX_OK)
    {
        return NGX_DECLINED;
    }

    pf->pipe.format = (job->endpoint == NGX_HTTP_MALLOC_EP_HEAP)
                      ? NGX_HTTP_MALLOC_PIPE_V2
                      : (job->endpoint == NGX_HTTP_MALLOC_EP_PPROF_HEAP)
                      ? NGX_HTTP_MALLOC_PIPE_LEGACY
                      : (job->endpoint == NGX_HTTP_MALLOC_EP_PPROF_JSON)
                      ? NGX_HTTP_MALLOC_PIPE_JSON
                      : NGX_HTTP_MALLOC_PIPE_PROTO;
    pf->phase = pf->pipe.seconds ? 0 : 1;

    if (pf->pipe.format == NGX_HTTP_MALLOC_PIPE_JSON) {
        pf->pipe.gzip = ngx_http_malloc_gzip_accepted(r);
        pf->pipe.rename = ngx_http_malloc_symbols_demangle;
    }

    if (ngx_http_arg(r, (u_char *) "process", 7, &arg) == NGX_OK) {
        if (!(arg.len == 6 && ngx_strncmp(arg.data, "master", 6) == 0)
            || snapshot || base || pf->pipe.seconds || job->cmd.target)
        {
            *sent = ngx_http_malloc_error(r, NGX_HTTP_BAD_REQUEST,
                        "invalid_argument", NGX_HTTP_MALLOC_PROCESS_ARGS);
            return NGX_DECLINED;
        }

        return ngx_http_malloc_profile_master(r, pf, sent);
    }

    return NGX_OK;
}


/*
 * ?seconds=N: the growth over the next N seconds.  NGX_OK (pipe.seconds
 * set, or no seconds), or NGX_DECLINED with what the refusal's sending
 * returned in *sent.
 */

static ngx_int_t
ngx_http_malloc_profile_seconds(ngx_http_request_t *r,
    ngx_http_malloc_profile_t *pf, ngx_int_t *sent)
{
    ngx_int_t  n;
    ngx_str_t  arg;

    if (ngx_http_arg(r, (u_char *) "seconds", 7, &arg) != NGX_OK) {
        return NGX_OK;
    }

    n = ngx_atoi(arg.data, arg.len);

    if (n <= 0 || n > NGX_HTTP_MALLOC_SECONDS_MAX
        || pf->job->endpoint == NGX_HTTP_MALLOC_EP_HEAP)
    {
        *sent = ngx_http_malloc_error(r, NGX_HTTP_BAD_REQUEST,
                    "invalid_argument",
                    "\"seconds\" takes 1 to %d, on pprof/heap, "
                    "pprof/heap.pb.gz and pprof/heap.json",
                    NGX_HTTP_MALLOC_SECONDS_MAX);
        return NGX_DECLINED;
    }

    pf->pipe.seconds = n;

    return NGX_OK;
}


/*
 * A snapshot, or the master's heap: nothing to dump, the files are built
 * into the profile at once, on the module's thread or in place.
 */

static ngx_int_t
ngx_http_malloc_profile_read(ngx_http_request_t *r,
    ngx_http_malloc_profile_t *pf)
{
    if (pf->paths == NULL) {
        pf->paths = ngx_pcalloc(r->pool, sizeof(char *));
        if (pf->paths == NULL) {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }
    }

    return ngx_http_malloc_request_thread(r, ngx_http_malloc_profile_build,
                                          ngx_http_malloc_profile_finish,
                                          pf);
}


/*
 * ?process=master[&generation=N][&since=M]: the master's heap as the
 * reload of generation N (the last one written, by default) left it,
 * less that of generation M: what the reloads in between kept.  Read
 * from the snapshots the first worker of each generation wrote, which
 * stay.  NGX_OK, or NGX_DECLINED once the refusal is sent.
 */

static ngx_int_t
ngx_http_malloc_profile_master(ngx_http_request_t *r,
    ngx_http_malloc_profile_t *pf, ngx_int_t *sent)
{
    char                   **paths;
    ngx_str_t                since;
    ngx_http_malloc_gen_t    gen, base;

    paths = ngx_http_malloc_profile_generation(r, pf, "generation", &gen,
                                               sent);
    if (paths == NULL) {
        return NGX_DECLINED;
    }

    pf->pipe.keep = 1;

    if (pf->pipe.format == NGX_HTTP_MALLOC_PIPE_JSON) {
        pf->pipe.snapshot = paths;

    } else {
        pf->paths = paths;
    }

    if (ngx_http_arg(r, (u_char *) "since", 5, &since) == NGX_OK) {
        paths = ngx_http_malloc_profile_generation(r, pf, "since", &base,
                                                   sent);
        if (paths == NULL) {
            return NGX_DECLINED;
        }

        if (ngx_http_malloc_profile_whole(r, &gen, &base, "since", sent)
            != NGX_OK)
        {
            return NGX_DECLINED;
        }

        ngx_http_malloc_profile_exact(pf, &gen, &base);

        if (pf->pipe.format == NGX_HTTP_MALLOC_PIPE_JSON) {
            pf->pipe.against = paths;

        } else {
            pf->base_paths = paths;
            pf->pipe.subtract = 1;
        }
    }

    return NGX_OK;
}


/*
 * Beside the sampled comparison, the exact change of the master's
 * allocated bytes, and what makes the samples mislead: a heap sampled at
 * another interval.
 */

static void
ngx_http_malloc_profile_exact(ngx_http_malloc_profile_t *pf,
    ngx_http_malloc_gen_t *gen, ngx_http_malloc_gen_t *base)
{
    u_char  *p, *last;

    p = ngx_http_malloc_arena_alloc(pf->pipe.arena, 256);
    if (p == NULL) {
        return;
    }

    last = ngx_snprintf(p, 255, "the master's allocated bytes from "
                        "generation %ui to %ui", base->generation,
                        gen->generation);
    *last = '\0';

    pf->pipe.exact_of = (char *) p;
    pf->pipe.exact_change = (int64_t) gen->allocated
                            - (int64_t) base->allocated;

    p = ngx_http_malloc_arena_alloc(pf->pipe.arena, 256);
    if (p == NULL) {
        return;
    }

    /* a generation sampled in part is refused before: see _whole() */

    if (base->lg_sample >= 0 && gen->lg_sample >= 0
        && base->lg_sample != gen->lg_sample)
    {
        last = ngx_snprintf(p, 255, "the sampling interval changed between "
                            "the generations (2^%i, 2^%i bytes): the samples "
                            "do not compare, and the sampler's own memory "
                            "grew or shrank with it", base->lg_sample,
                            gen->lg_sample);

    } else {
        return;
    }

    *last = '\0';
    pf->pipe.caveat = (char *) p;
}


/*
 * ?pid=N: one worker's heap.  NGX_OK (job->cmd.target set, or no pid),
 * or NGX_DECLINED with what the refusal's sending returned in *sent.
 */

static ngx_int_t
ngx_http_malloc_profile_pid(ngx_http_request_t *r,
    ngx_http_malloc_job_t *job, ngx_int_t *sent)
{
    ngx_int_t                     n;
    ngx_str_t                     arg, value;
    ngx_uint_t                    i, nw, found;
    ngx_http_malloc_worker_t     *w;
    ngx_http_malloc_main_conf_t  *mmcf;

    if (ngx_http_arg(r, (u_char *) "pid", 3, &arg) != NGX_OK) {
        return NGX_OK;
    }

    /* the master is no worker: a wrong mix, before any lookup */

    if (ngx_http_arg(r, (u_char *) "process", 7, &value) == NGX_OK) {
        *sent = ngx_http_malloc_error(r, NGX_HTTP_BAD_REQUEST,
                    "invalid_argument", NGX_HTTP_MALLOC_PROCESS_ARGS);
        return NGX_DECLINED;
    }

    mmcf = ngx_http_get_module_main_conf(r, ngx_http_malloc_module);

    n = ngx_atoi(arg.data, arg.len);

    w = ngx_http_malloc_board_copy(mmcf, r->pool, 0, &nw);
    if (w == NULL) {
        *sent = NGX_HTTP_INTERNAL_SERVER_ERROR;
        return NGX_DECLINED;
    }

    found = 0;

    for (i = 0; i < nw; i++) {
        if (n > 0 && w[i].pid == (ngx_pid_t) n) {
            found = 1;
        }
    }

    if (!found) {
        *sent = ngx_http_malloc_error(r, NGX_HTTP_NOT_FOUND,
                    "no_such_worker",
                    "\"pid\" must be the pid of a worker of this "
                    "nginx; GET the admin location to list them");
        return NGX_DECLINED;
    }

    job->cmd.target = (ngx_pid_t) n;

    return NGX_OK;
}


/*
 * Two of the master's reload snapshots compared (as the viewer does): the
 * generations they are of know the exact change between them.
 */

static ngx_int_t
ngx_http_malloc_profile_reloads(ngx_http_request_t *r,
    ngx_http_malloc_profile_t *pf, ngx_int_t *sent)
{
    ngx_str_t                     name, against;
    ngx_uint_t                    i, n;
    ngx_http_malloc_gen_t        *gen, *base;
    ngx_http_malloc_main_conf_t  *mmcf;
    ngx_http_malloc_gen_t         gens[NGX_HTTP_MALLOC_GENERATIONS];

    mmcf = ngx_http_get_module_main_conf(r, ngx_http_malloc_module);

    if (ngx_http_arg(r, (u_char *) "snapshot", 8, &name) != NGX_OK
        || ngx_http_arg(r, (u_char *) "base", 4, &against) != NGX_OK)
    {
        return NGX_OK;
    }

    n = ngx_http_malloc_board_generations(mmcf, gens);
    gen = NULL;
    base = NULL;

    for (i = 0; i < n; i++) {
        if (ngx_strlen(gens[i].snapshot) == name.len
            && ngx_strncmp(gens[i].snapshot, name.data, name.len) == 0)
        {
            gen = &gens[i];
        }

        if (ngx_strlen(gens[i].snapshot) == against.len
            && ngx_strncmp(gens[i].snapshot, against.data, against.len)
               == 0)
        {
            base = &gens[i];
        }
    }

    if (gen == NULL || base == NULL) {
        return NGX_OK;
    }

    if (ngx_http_malloc_profile_whole(r, gen, base, "base", sent) != NGX_OK) {
        return NGX_DECLINED;
    }

    ngx_http_malloc_profile_exact(pf, gen, base);

    return NGX_OK;
}


/*
 * A generation sampled only in part misses what the master held before
 * its sampling came on (or was reset): compared, that shows as growth
 * that is not there, or hides growth that is.  Such a comparison is
 * refused in every form, and the refusal names the first whole
 * generation after it to compare with, "arg" saying how (since=N, or
 * base=<its snapshot>).  NGX_OK, or NGX_DECLINED with *sent.
 */

static ngx_int_t
ngx_http_malloc_profile_whole(ngx_http_request_t *r,
    ngx_http_malloc_gen_t *gen, ngx_http_malloc_gen_t *base,
    const char *arg, ngx_int_t *sent)
{
    u_char                       *p, *last, with[NGX_HTTP_MALLOC_NAME_MAX + 32];
    ngx_uint_t                    i, n, part, numbered;
    ngx_http_malloc_gen_t        *whole;
    ngx_http_malloc_main_conf_t  *mmcf;
    ngx_http_malloc_gen_t         gens[NGX_HTTP_MALLOC_GENERATIONS];

    if (!base->partial && !gen->partial) {
        return NGX_OK;
    }

    part = base->partial ? base->generation : gen->generation;

    mmcf = ngx_http_get_module_main_conf(r, ngx_http_malloc_module);
    n = ngx_http_malloc_board_generations(mmcf, gens);

    /*
     * the oldest whole one after the partial: before the one compared
     * for a partial base, any later for a partial newer one
     */

    whole = NULL;

    for (i = 0; i < n; i++) {
        if (gens[i].generation > part
            && (gen->partial || gens[i].generation < gen->generation)
            && !gens[i].partial && gens[i].snapshot[0] != '\0'
            && (whole == NULL || gens[i].generation < whole->generation))
        {
            whole = &gens[i];
        }
    }

    p = with;
    numbered = (ngx_strcmp(arg, "since") == 0);

    if (gen->partial) {
        arg = numbered ? "generation" : "snapshot";
    }

    if (whole == NULL) {
        last = ngx_snprintf(p, sizeof(with) - 1, "no whole generation "
                            "comes %s: reload nginx with profiling on and "
                            "compare with that one",
                            gen->partial ? "after it" : "between them");

    } else if (numbered) {
        last = ngx_snprintf(p, sizeof(with) - 1, "compare with %s=%ui, "
                            "the first whole generation after it", arg,
                            whole->generation);

    } else {
        last = ngx_snprintf(p, sizeof(with) - 1, "compare with %s=%s, "
                            "the snapshot of generation %ui, the first "
                            "whole one after it", arg, whole->snapshot,
                            whole->generation);
    }

    *last = '\0';

    *sent = ngx_http_malloc_error(r, NGX_HTTP_CONFLICT, "partial_generation",
                "generation %ui was sampled only in part (sampling came on, "
                "or was reset, while the master read its configuration): "
                "what it held before is missing from its heap, and a "
                "comparison with it would name growth that is not there; "
                "%s", part, with);

    return NGX_DECLINED;
}


/* the master's snapshot of the generation that "arg" names, or NULL */

static char **
ngx_http_malloc_profile_generation(ngx_http_request_t *r,
    ngx_http_malloc_profile_t *pf, const char *arg, ngx_http_malloc_gen_t *gen,
    ngx_int_t *sent)
{
    u_char                       *p;
    char                        **paths;
    ngx_int_t                     want;
    ngx_str_t                     value;
    ngx_uint_t                    i, n;
    ngx_file_info_t               fi;
    ngx_http_malloc_main_conf_t  *mmcf;
    ngx_http_malloc_gen_t         gens[NGX_HTTP_MALLOC_GENERATIONS];

    mmcf = ngx_http_get_module_main_conf(r, ngx_http_malloc_module);

    want = 0;

    if (ngx_http_arg(r, (u_char *) arg, ngx_strlen(arg), &value) == NGX_OK) {
        want = ngx_atoi(value.data, value.len);

        if (want <= 0) {
            *sent = ngx_http_malloc_error(r, NGX_HTTP_BAD_REQUEST,
                                          "invalid_argument",
                                          "\"%s\" takes a generation number, "
                                          "as GET the admin location lists "
                                          "them", arg);
            return NULL;
        }
    }

    n = ngx_http_malloc_board_generations(mmcf, gens);

    for (i = 0; i < n; i++) {
        if (gens[i].snapshot[0] != '\0'
            && (want == 0 || gens[i].generation == (ngx_uint_t) want))
        {
            break;
        }
    }

    paths = ngx_http_malloc_arena_alloc(pf->pipe.arena, 2 * sizeof(char *));
    p = ngx_http_malloc_arena_alloc(pf->pipe.arena,
                                    mmcf->dump_dir->name.len
                                    + NGX_HTTP_MALLOC_NAME_MAX + 2);
    if (paths == NULL || p == NULL) {
        *sent = NGX_HTTP_INTERNAL_SERVER_ERROR;
        return NULL;
    }

    if (i < n) {
        *ngx_sprintf(p, "%V/%s", &mmcf->dump_dir->name, gens[i].snapshot)
            = '\0';
    }

    /* a snapshot removed since (by hand, or by its retention) is none */

    if (i == n || ngx_link_info(p, &fi) == NGX_FILE_ERROR
        || !ngx_is_file(&fi))
    {
        if (want) {
            *sent = ngx_http_malloc_error(r, NGX_HTTP_NOT_FOUND,
                       "no_such_generation",
                       "no heap of the master for generation %i: it is "
                       "written after a reload while profiling is on, and "
                       "kept for the last %d generations (GET the admin "
                       "location lists them)", want,
                       NGX_HTTP_MALLOC_GENERATIONS);
        } else {
            *sent = ngx_http_malloc_error(r, NGX_HTTP_NOT_FOUND,
                       "no_such_generation",
                       "no heap of the master yet: it is written after a "
                       "reload while profiling is on (GET the admin "
                       "location lists the generations)");
        }

        return NULL;
    }

    paths[0] = (char *) p;
    paths[1] = NULL;

    *gen = gens[i];

    return paths;
}


/*
 * ?snapshot=<name>, ?base=<name>: a file of the schedule's, as GET
 * snapshots lists them, or "snapshot-<time>" for all the files of one
 * snapshot (format=heap writes one per worker).  NGX_OK with *paths
 * (NULL: not asked), or NGX_DECLINED once the refusal is sent.
 */

static ngx_int_t
ngx_http_malloc_profile_snapshot(ngx_http_request_t *r,
    ngx_http_malloc_arena_t *arena, const char *arg, char ***paths,
    ngx_int_t *sent)
{
    ngx_int_t                     rc;
    ngx_str_t                     name;
    ngx_uint_t                    n;
    ngx_pool_t                   *pool;
    ngx_http_malloc_snap_file_t  *files;
    ngx_http_malloc_main_conf_t  *mmcf;

    *paths = NULL;

    if (ngx_http_arg(r, (u_char *) arg, ngx_strlen(arg), &name) != NGX_OK) {
        return NGX_OK;
    }

    mmcf = ngx_http_get_module_main_conf(r, ngx_http_malloc_module);

    if (!ngx_http_malloc_path_snapshot(name.data, name.len)) {
        goto none;
    }

    /*
     * the listing is gone before the workers dump, and the paths live in
     * the profile's arena: the profile shows nothing of its own making
     */

    pool = ngx_create_pool(NGX_DEFAULT_POOL_SIZE, r->connection->log);
    if (pool == NULL) {
        *sent = NGX_HTTP_INTERNAL_SERVER_ERROR;
        return NGX_DECLINED;
    }

    n = 0;
    files = NULL;

    if (name.len == sizeof(NGX_HTTP_MALLOC_SNAP_PREFIX) - 1
                    + NGX_HTTP_MALLOC_SNAP_TS_LEN
        && ngx_http_malloc_schedule_list(mmcf, pool, &files, &n,
                                         r->connection->log)
           != NGX_OK)
    {
        ngx_destroy_pool(pool);
        goto none;
    }

    rc = ngx_http_malloc_profile_files(mmcf, arena, &name, files, n, paths);

    ngx_destroy_pool(pool);

    if (rc == NGX_ERROR) {
        *sent = NGX_HTTP_INTERNAL_SERVER_ERROR;
        return NGX_DECLINED;
    }

    if (rc == NGX_OK) {
        return NGX_OK;
    }

none:

    *paths = NULL;
    *sent = ngx_http_malloc_error(r, NGX_HTTP_NOT_FOUND, "no_such_snapshot",
                                  "no snapshot \"%V\" (\"%s\"): GET "
                                  "snapshots lists them", &name, arg);
    return NGX_DECLINED;
}


/*
 * The paths of snapshot "name", in the arena, NULL-terminated: each of
 * the n files listed that the schedule wrote at that time, or else the
 * file of that name.  NGX_OK, NGX_DECLINED when there is no such file,
 * or NGX_ERROR.
 */

static ngx_int_t
ngx_http_malloc_profile_files(ngx_http_malloc_main_conf_t *mmcf,
    ngx_http_malloc_arena_t *arena, ngx_str_t *name,
    ngx_http_malloc_snap_file_t *files, ngx_uint_t n, char ***paths)
{
    u_char          *p;
    ngx_uint_t       i, k;
    ngx_file_info_t  fi;

    *paths = ngx_http_malloc_arena_alloc(arena, (n + 2) * sizeof(char *));
    if (*paths == NULL) {
        return NGX_ERROR;
    }

    for (i = 0, k = 0; i <= n; i++) {

        /* the name itself, or each file of the schedule at that time */

        if (i < n
            && (ngx_strncmp(files[i].name, name->data, name->len) != 0
                || ngx_strcmp(files[i].reason, NGX_HTTP_MALLOC_SNAP_SCHEDULE)
                   != 0))
        {
            continue;
        }

        p = ngx_http_malloc_arena_alloc(arena, mmcf->dump_dir->name.len
                                               + NGX_HTTP_MALLOC_NAME_MAX + 2);
        if (p == NULL) {
            return NGX_ERROR;
        }

        if (i < n) {
            *ngx_sprintf(p, "%V/%s", &mmcf->dump_dir->name,
                         files[i].name) = '\0';

        } else if (k == 0) {
            *ngx_sprintf(p, "%V/%V", &mmcf->dump_dir->name, name) = '\0';

            if (ngx_link_info(p, &fi) == NGX_FILE_ERROR
                || !ngx_is_file(&fi))
            {
                return NGX_DECLINED;
            }

        } else {
            break;
        }

        (*paths)[k++] = (char *) p;
    }

    return NGX_OK;
}


static ngx_http_malloc_profile_t *
ngx_http_malloc_profile_create(ngx_http_request_t *r,
    ngx_http_malloc_job_t *job)
{
    ngx_pool_cleanup_t         *cln;
    ngx_http_malloc_profile_t  *pf;

    pf = ngx_pcalloc(r->pool, sizeof(ngx_http_malloc_profile_t));
    cln = ngx_pool_cleanup_add(r->pool, 0);

    if (pf == NULL || cln == NULL
        || ngx_http_malloc_pipe_init(&pf->pipe) != 0)
    {
        return NULL;
    }

    /* the arena and the answer are unmapped with the request's pool */

    cln->handler = ngx_http_malloc_profile_free;
    cln->data = pf;

    pf->job = job;
    job->data = pf;

    return pf;
}


static void
ngx_http_malloc_profile_free(void *data)
{
    ngx_http_malloc_profile_t *pf = data;

    ngx_http_malloc_pipe_free(&pf->pipe);
}


/* each collection is a dump command of its own, into hidden files */

static ngx_int_t
ngx_http_malloc_profile_post(ngx_http_request_t *r, ngx_http_malloc_job_t *job)
{
    u_char                      *p;
    ngx_http_malloc_loc_conf_t  *mlcf;

    mlcf = ngx_http_get_module_loc_conf(r, ngx_http_malloc_module);

    /* a leading dot: no name an operator can ask for looks like it */

    p = ngx_snprintf(job->cmd.tmpl, NGX_HTTP_MALLOC_TMPL_MAX - 1,
                     NGX_HTTP_MALLOC_HIDDEN_PROFILE "%P-%ui.%%p.heap", ngx_pid,
                     ++ngx_http_malloc_profile_number);
    *p = '\0';

    return ngx_http_malloc_request_post(r, mlcf->timeout, 1);
}


/*
 * Every worker has answered (or the deadline passed).  The dumps are read
 * back, merged and encoded by a thread: for a heap of many stacks that is
 * the long part, and the worker has other connections to serve.
 */

static ngx_int_t
ngx_http_malloc_profile_dumped(ngx_http_request_t *r,
    ngx_http_malloc_job_t *job)
{
    ngx_int_t                     rc;
    ngx_uint_t                    i, n;
    ngx_http_malloc_worker_t     *w;
    ngx_http_malloc_profile_t    *pf;
    ngx_http_malloc_main_conf_t  *mmcf;

    mmcf = ngx_http_get_module_main_conf(r, ngx_http_malloc_module);
    pf = job->data;

    w = ngx_http_malloc_board_copy(mmcf, r->pool, job->seq, &n);
    if (w == NULL) {
        ngx_http_malloc_request_unlink(r);
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    for (i = 0; i < n; i++) {
        if (job->cmd.target != 0 && w[i].pid != job->cmd.target) {
            continue;
        }

        if (!w[i].answered || w[i].result.seq != job->seq
            || w[i].result.rc != 0)
        {
            /* the answer of prof_dump says which worker and why */
            ngx_http_malloc_request_unlink(r);
            return ngx_http_malloc_results(r, job);
        }
    }

    if (ngx_http_malloc_profile_same(r, pf, w, n, &rc) != NGX_OK) {
        ngx_http_malloc_request_unlink(r);
        return rc;
    }

    if (ngx_http_malloc_profile_paths(r, pf, w, n) != NGX_OK) {
        ngx_http_malloc_request_unlink(r);
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    return ngx_http_malloc_request_thread(r, ngx_http_malloc_profile_build,
                                          ngx_http_malloc_profile_finish,
                                          pf);
}


/*
 * The end of a growth window must measure the processes its start did:
 * after a reload or a worker's restart, subtracting would mix heaps.
 * NGX_OK, or NGX_DECLINED once the refusal is sent (*sent: what sending
 * returned).
 */

static ngx_int_t
ngx_http_malloc_profile_same(ngx_http_request_t *r,
    ngx_http_malloc_profile_t *pf, ngx_http_malloc_worker_t *w, ngx_uint_t n,
    ngx_int_t *sent)
{
    off_t                         allocated;
    ngx_uint_t                    i, changed;
    ngx_http_malloc_main_conf_t  *mmcf;

    if (pf->pipe.seconds == 0) {
        return NGX_OK;
    }

    mmcf = ngx_http_get_module_main_conf(r, ngx_http_malloc_module);

    /* each worker published its figures with its answer to the dump */

    allocated = 0;

    for (i = 0; i < n; i++) {
        if (pf->job->cmd.target == 0 || w[i].pid == pf->job->cmd.target) {
            allocated += w[i].stats.allocated;
        }
    }

    if (pf->phase == 0) {
        pf->generation = ngx_http_malloc_board_generation(mmcf);
        pf->pids = ngx_palloc(r->pool, (n + 1) * sizeof(ngx_pid_t));
        if (pf->pids == NULL) {
            *sent = NGX_HTTP_INTERNAL_SERVER_ERROR;
            return NGX_DECLINED;
        }

        for (i = 0; i < n; i++) {
            pf->pids[i] = w[i].pid;
        }

        pf->npids = n;
        pf->allocated = allocated;

        return NGX_OK;
    }

    changed = (pf->generation != ngx_http_malloc_board_generation(mmcf)
               || pf->npids != n);

    for (i = 0; !changed && i < n; i++) {
        if (pf->job->cmd.target == 0 || pf->pids[i] == pf->job->cmd.target) {
            changed = (pf->pids[i] != w[i].pid);
        }
    }

    if (!changed) {
        pf->pipe.exact_of = pf->job->cmd.target
                            ? "the worker's allocated bytes in the window"
                            : "the workers' allocated bytes in the window";
        pf->pipe.exact_change = allocated - pf->allocated;
        return NGX_OK;
    }

    ngx_log_error(NGX_LOG_INFO, r->connection->log, 0,
                  "heap growth profile over %ui s refused: the workers "
                  "changed during the window", (ngx_uint_t) pf->pipe.seconds);

    *sent = ngx_http_malloc_error(r, NGX_HTTP_SERVICE_UNAVAILABLE,
               "workers_changed",
               "nginx was reloaded or a worker restarted during the %ui s "
               "growth window, so its start and its end measured different "
               "processes; ask again", (ngx_uint_t) pf->pipe.seconds);

    return NGX_DECLINED;
}


/* the dumps of this collection, as paths the pipeline reads */

static ngx_int_t
ngx_http_malloc_profile_paths(ngx_http_request_t *r,
    ngx_http_malloc_profile_t *pf, ngx_http_malloc_worker_t *w, ngx_uint_t n)
{
    ngx_uint_t              i, k;
    ngx_http_malloc_job_t  *job;

    job = pf->job;

    pf->paths = ngx_palloc(r->pool, (n + 1) * sizeof(char *));
    if (pf->paths == NULL) {
        return NGX_ERROR;
    }

    for (i = 0, k = 0; i < n; i++) {
        if (job->cmd.target != 0 && w[i].pid != job->cmd.target) {
            continue;
        }

        pf->paths[k] = ngx_pnalloc(r->pool, NGX_MAX_PATH);
        if (pf->paths[k] == NULL) {
            return NGX_ERROR;
        }

        ngx_http_malloc_request_file(r, w[i].pid, (u_char *) pf->paths[k]);
        k++;
    }

    pf->paths[k] = NULL;

    return NGX_OK;
}


/* in a thread (or in place): touches only the profile and its pipe */

static void
ngx_http_malloc_profile_build(void *data)
{
    ngx_http_malloc_profile_t *pf = data;

    if (pf->base_paths != NULL) {
        (void) ngx_http_malloc_pipe_read(&pf->pipe, pf->base_paths, 1);
    }

    if (ngx_http_malloc_pipe_read(&pf->pipe, pf->paths, pf->phase == 0)
        == NGX_HTTP_MALLOC_PIPE_OK
        && pf->phase == 1)
    {
        (void) ngx_http_malloc_pipe_encode(&pf->pipe);
    }

    /* what the answer needs no more goes here, not in the event loop */

    if (pf->phase == 1 || pf->pipe.rc != NGX_HTTP_MALLOC_PIPE_OK) {
        ngx_http_malloc_pipe_release(&pf->pipe);
    }
}


static void
ngx_http_malloc_profile_lookup(void *data)
{
    ngx_http_malloc_profile_t *pf = data;

    (void) ngx_http_malloc_pipe_symbols(&pf->pipe, pf->body, pf->body_len);
    ngx_http_malloc_pipe_release(&pf->pipe);
}


/* back in the event loop: answer, or wait for a growth window */

static ngx_int_t
ngx_http_malloc_profile_finish(ngx_http_request_t *r, void *data)
{
    ngx_http_malloc_profile_t *pf = data;

    ngx_http_malloc_job_t  *job;

    job = pf->job;

    if (pf->pipe.rc != NGX_HTTP_MALLOC_PIPE_OK) {
        ngx_log_error(NGX_LOG_ERR, r->connection->log, 0, "%s",
                      pf->pipe.error);

        return ngx_http_malloc_error(r, NGX_HTTP_INTERNAL_SERVER_ERROR,
                                     ngx_http_malloc_pipe_code(pf->pipe.rc),
                                     "%s", pf->pipe.error);
    }

    if (job->endpoint == NGX_HTTP_MALLOC_EP_PPROF_SYMBOL) {
        return ngx_http_malloc_send_data(r, job->type, NULL,
                                         pf->pipe.out.data,
                                         pf->pipe.out.len);
    }

    if (pf->phase == 0) {
        pf->phase = 1;

        ngx_log_debug1(NGX_LOG_DEBUG_HTTP, r->connection->log, 0,
                       "malloc profile: growth window of %ui s",
                       (ngx_uint_t) pf->pipe.seconds);

        return ngx_http_malloc_request_later(r,
                   (ngx_msec_t) pf->pipe.seconds * 1000,
                   ngx_http_malloc_profile_window, pf);
    }

    if (pf->pipe.format == NGX_HTTP_MALLOC_PIPE_JSON
        && ngx_http_malloc_gzipped(r, pf->pipe.gzip) != NGX_OK)
    {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    return ngx_http_malloc_send_data(r, job->type, job->download,
                                     pf->pipe.out.data, pf->pipe.out.len);
}


/* the growth window is over: the second collection */

static ngx_int_t
ngx_http_malloc_profile_window(ngx_http_request_t *r, void *data)
{
    ngx_http_malloc_profile_t *pf = data;

    return ngx_http_malloc_profile_post(r, pf->job);
}


/*
 * The symbol protocol of jeprof and go tool pprof: GET says a symbol
 * table exists, POST takes "0x1a2b+0x3c4d..." and names each address that
 * lies in a mapping of this worker (all workers share the master's).
 */

ngx_int_t
ngx_http_malloc_symbol(ngx_http_request_t *r, ngx_http_malloc_job_t *job,
    u_char *body, size_t len)
{
    ngx_http_malloc_profile_t  *pf;

    if (body == NULL) {
        return ngx_http_malloc_send_data(r, job->type, NULL,
                                         (u_char *) "num_symbols: 1\n",
                                         sizeof("num_symbols: 1\n") - 1);
    }

    pf = ngx_http_malloc_profile_create(r, job);
    if (pf == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    pf->body = body;
    pf->body_len = len;

    return ngx_http_malloc_request_thread(r, ngx_http_malloc_profile_lookup,
                                          ngx_http_malloc_profile_finish,
                                          pf);
}


ngx_int_t
ngx_http_malloc_cmdline(ngx_http_request_t *r, ngx_http_malloc_job_t *job,
    u_char *body, size_t len)
{
    u_char   *p;
    ssize_t   n;

    /* argv[0] is "nginx: worker process" by now; the file is the truth */

    p = ngx_pnalloc(r->pool, NGX_MAX_PATH + 1);
    if (p == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    n = readlink("/proc/self/exe", (char *) p, NGX_MAX_PATH - 1);
    if (n <= 0) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    p[n++] = '\n';

    return ngx_http_malloc_send_data(r, job->type, NULL, p, n);
}


/*
 * In the master, as root, before it forks the workers: the symbols of
 * every mapped file, so that a worker names the code of files that its
 * user may not open (a module under a home of mode 0700, a vendor
 * directory of mode 0750).  The workers inherit the cache.
 */

void
ngx_http_malloc_profile_preload(ngx_log_t *log)
{
    ngx_http_malloc_pipe_preload(ngx_http_malloc_profile_unreadable, log);
}


static void
ngx_http_malloc_profile_unreadable(void *data, const char *path)
{
    ngx_log_t *log = data;

    ngx_log_error(NGX_LOG_NOTICE, log, 0,
                  "cannot read the symbols of \"%s\": profiles name its "
                  "code \"<file>+0x<offset>\"", path);
}
