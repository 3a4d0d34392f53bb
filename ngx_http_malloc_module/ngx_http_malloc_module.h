
/*
 * Types shared by the nginx shell: configuration, the command board in
 * shared memory, and the per-request context.
 */


#ifndef _NGX_HTTP_MALLOC_MODULE_H_INCLUDED_
#define _NGX_HTTP_MALLOC_MODULE_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_malloc_jemalloc.h"


#define NGX_HTTP_MALLOC_VERSION      "0.1.0"

/* longest request body taken by any endpoint */
#define NGX_HTTP_MALLOC_BODY_MAX     4096

/*
 * A command wakes every worker through its eventfd; the timer is only a
 * safety net (a poster from an older generation has no eventfds of the
 * current one).  A waiting request looks at the slots more often.
 */
#define NGX_HTTP_MALLOC_POLL         1000
#define NGX_HTTP_MALLOC_WAIT_POLL    5

/* a name of 255 bytes once expanded, written with "%%" and ".%p" */
#define NGX_HTTP_MALLOC_TMPL_MAX     520

/* the longest "duration" of profiling, in seconds */
#define NGX_HTTP_MALLOC_DURATION_MAX     (30 * 24 * 3600)

/* below this, prof_reset needs "force": true */
#define NGX_HTTP_MALLOC_LG_SAMPLE_FLOOR  12

/* room for an error sentence built outside a request */
#define NGX_HTTP_MALLOC_ERR_TEXT         384

/* a symbol request lists every address of a profile */
#define NGX_HTTP_MALLOC_SYMBOL_BODY_MAX  (1024 * 1024)


/* the admin location's endpoints, in the order of the handler's table */
typedef enum {
    NGX_HTTP_MALLOC_EP_INDEX = 0,
    NGX_HTTP_MALLOC_EP_PROF_ACTIVE,
    NGX_HTTP_MALLOC_EP_PROF_DUMP,
    NGX_HTTP_MALLOC_EP_HEAP,
    NGX_HTTP_MALLOC_EP_PPROF_HEAP,
    NGX_HTTP_MALLOC_EP_PPROF_PROTO,
    NGX_HTTP_MALLOC_EP_PPROF_SYMBOL,
    NGX_HTTP_MALLOC_EP_PPROF_CMDLINE,
    NGX_HTTP_MALLOC_EP_STATS,
    NGX_HTTP_MALLOC_EP_METRICS,
    NGX_HTTP_MALLOC_EP_PROF_RESET,
    NGX_HTTP_MALLOC_EP_PURGE,
    NGX_HTTP_MALLOC_EP_SNAPSHOTS,
    NGX_HTTP_MALLOC_EP_SNAPSHOT_FILE
} ngx_http_malloc_ep_e;


typedef enum {
    NGX_HTTP_MALLOC_CMD_NONE = 0,
    NGX_HTTP_MALLOC_CMD_ACTIVE,
    NGX_HTTP_MALLOC_CMD_DUMP,
    NGX_HTTP_MALLOC_CMD_STATS,
    NGX_HTTP_MALLOC_CMD_RESET,
    NGX_HTTP_MALLOC_CMD_PURGE
} ngx_http_malloc_cmd_e;


typedef struct {
    time_t                      interval;      /* seconds */
    ngx_uint_t                  keep;
    off_t                       max_size;      /* 0: no limit */
    ngx_uint_t                  pprof;         /* format=pprof */
} ngx_http_malloc_snapshot_conf_t;


typedef struct {
    ngx_path_t                       *dump_dir;
    off_t                             dump_max_size; /* 0: no limit */
    ngx_http_malloc_snapshot_conf_t  *snapshot;      /* NULL: none */
    ngx_shm_zone_t                   *shm_zone;
    ngx_fd_t                         *wake;          /* an eventfd per
                                                        worker */
    ngx_uint_t                        nwake;
#if (NGX_THREADS)
    ngx_thread_pool_t                *thread_pool;   /* dumps, profiles */
#endif
    ngx_uint_t                        admin;         /* unsigned admin:1; */
} ngx_http_malloc_main_conf_t;


typedef struct {
    ngx_flag_t                  admin;
    ngx_flag_t                  write;
    ngx_msec_t                  timeout;
    char                       *trusted;   /* malloc_trusted_origin: the
                                              origins, space-separated */
} ngx_http_malloc_loc_conf_t;


/* a slot's rc besides ngx_http_malloc_dump_rc_e: a mallctl failed */
#define NGX_HTTP_MALLOC_RC_ACTIVE    100
#define NGX_HTTP_MALLOC_RC_RESET     101
#define NGX_HTTP_MALLOC_RC_PURGE     102
#define NGX_HTTP_MALLOC_RC_STATS     103


/* what one worker last did; written only by that worker */
typedef struct {
    ngx_pid_t                   pid;
    ngx_uint_t                  generation;
    ngx_uint_t                  applied;       /* board seq seen */
    ngx_uint_t                  result_seq;    /* seq of the result below */
    ngx_uint_t                  prof_active;
    ngx_int_t                   rc;            /* dump rc_e or RC_* */
    ngx_err_t                   err;
    off_t                       bytes;
    ngx_uint_t                  lg_sample;
    size_t                      resident_before;  /* of a purge */
    ngx_http_malloc_je_stats_t  stats;         /* as of "applied" */
} ngx_http_malloc_slot_t;


typedef struct {
    ngx_uint_t                  generation;    /* bumped by every cycle */
    ngx_uint_t                  workers;       /* of that cycle */
    ngx_atomic_t                seq;           /* of the last command */
    ngx_uint_t                  cmd;           /* ngx_http_malloc_cmd_e */
    ngx_uint_t                  prof_active;   /* desired state */
    ngx_msec_t                  active_until;  /* 0: no duration */
    ngx_int_t                   lg_sample;     /* of the last reset, or -1 */
    ngx_int_t                   arg;           /* lg_sample of a reset */
    ngx_uint_t                  busy;
    ngx_msec_t                  busy_until;
    ngx_uint_t                  poster;        /* worker that waits */
    ngx_pid_t                   target;        /* the worker that dumps,
                                                  0: all of them */
    time_t                      snapshot_next; /* 0: not scheduled yet */
    ngx_uint_t                  snapshot_failed;
    u_char                      tmpl[NGX_HTTP_MALLOC_TMPL_MAX];
    ngx_http_malloc_slot_t      slots[NGX_MAX_PROCESSES];
} ngx_http_malloc_shctx_t;


typedef struct {
    ngx_http_malloc_shctx_t    *sh;
    ngx_slab_pool_t            *shpool;
} ngx_http_malloc_shm_t;


typedef struct ngx_http_malloc_profile_s  ngx_http_malloc_profile_t;


typedef struct {
    ngx_http_request_t         *request;
    ngx_uint_t                  endpoint;
    ngx_uint_t                  seq;
    ngx_uint_t                  cmd;
    ngx_pid_t                   target;
    ngx_msec_t                  duration;       /* of profiling, 0: none */
    ngx_int_t                   arg;
    ngx_uint_t                  done;           /* unsigned done:1; */
    ngx_msec_t                  deadline;
    ngx_event_t                 wait;
    ngx_queue_t                 queue;          /* in the waiting list */
    ngx_uint_t                  queued;         /* unsigned queued:1; */
    ngx_http_malloc_profile_t  *profile;        /* profile requests */
    u_char                      tmpl[NGX_HTTP_MALLOC_TMPL_MAX];
} ngx_http_malloc_ctx_t;


/* the request context of a waiting request's timer event */
#define ngx_http_malloc_wait_ctx(ev)                                          \
    ((ngx_http_malloc_ctx_t *)                                                \
         ((u_char *) (ev) - offsetof(ngx_http_malloc_ctx_t, wait)))


/* one worker's answer, as copied out of shared memory for a response */
typedef struct {
    ngx_uint_t                  worker;
    ngx_http_malloc_slot_t      slot;
    ngx_uint_t                  answered;       /* unsigned answered:1; */
} ngx_http_malloc_answer_t;


extern ngx_module_t  ngx_http_malloc_module;


/* ngx_http_malloc_coord.c */
ngx_int_t ngx_http_malloc_coord_init_zone(ngx_shm_zone_t *shm_zone,
    void *data);
ngx_int_t ngx_http_malloc_coord_init_module(ngx_cycle_t *cycle,
    ngx_http_malloc_main_conf_t *mmcf);
ngx_int_t ngx_http_malloc_coord_init_process(ngx_cycle_t *cycle,
    ngx_http_malloc_main_conf_t *mmcf);
ngx_int_t ngx_http_malloc_coord_post(ngx_http_malloc_main_conf_t *mmcf,
    ngx_http_malloc_ctx_t *ctx, ngx_uint_t prof_active, ngx_msec_t timeout);
void ngx_http_malloc_coord_apply_own(ngx_http_malloc_main_conf_t *mmcf,
    ngx_log_t *log);
void ngx_http_malloc_coord_release(ngx_http_malloc_main_conf_t *mmcf,
    ngx_uint_t seq);
ngx_uint_t ngx_http_malloc_coord_answers(ngx_http_malloc_main_conf_t *mmcf,
    ngx_uint_t seq, ngx_http_malloc_answer_t *answers, ngx_uint_t *n);
ngx_uint_t ngx_http_malloc_coord_answered(ngx_http_malloc_main_conf_t *mmcf,
    ngx_uint_t seq, ngx_pid_t pid);
ngx_uint_t ngx_http_malloc_coord_workers(ngx_http_malloc_main_conf_t *mmcf);
ngx_uint_t ngx_http_malloc_coord_desired(ngx_http_malloc_main_conf_t *mmcf);
ngx_msec_t ngx_http_malloc_coord_remaining(ngx_http_malloc_main_conf_t *mmcf);

/* ngx_http_malloc_handler.c */
ngx_int_t ngx_http_malloc_handler(ngx_http_request_t *r);
ngx_int_t ngx_http_malloc_hold(ngx_http_request_t *r,
    ngx_http_malloc_ctx_t *ctx);
ngx_int_t ngx_http_malloc_wait(ngx_http_request_t *r,
    ngx_http_malloc_ctx_t *ctx);
void ngx_http_malloc_wake_waiting(void);
ngx_int_t ngx_http_malloc_respond(ngx_http_request_t *r,
    ngx_http_malloc_ctx_t *ctx);
ngx_http_malloc_answer_t *ngx_http_malloc_answers(ngx_http_request_t *r,
    ngx_uint_t seq, ngx_uint_t *n);
ngx_int_t ngx_http_malloc_unusable(ngx_http_request_t *r);
ngx_int_t ngx_http_malloc_error(ngx_http_request_t *r, ngx_uint_t status,
    const char *code, const char *fmt, ...);
#ifdef JANSSON_H
ngx_int_t ngx_http_malloc_send_json(ngx_http_request_t *r, ngx_uint_t status,
    json_t *json);
json_t *ngx_http_malloc_worker_head(ngx_http_malloc_answer_t *a);
#endif

/* ngx_http_malloc_profile.c */
ngx_int_t ngx_http_malloc_profile_get(ngx_http_request_t *r,
    ngx_http_malloc_ctx_t *ctx);
ngx_int_t ngx_http_malloc_profile_done(ngx_http_request_t *r,
    ngx_http_malloc_ctx_t *ctx);
ngx_int_t ngx_http_malloc_profile_symbol(ngx_http_request_t *r,
    u_char *body, size_t len);
ngx_int_t ngx_http_malloc_profile_cmdline(ngx_http_request_t *r);
void ngx_http_malloc_profile_preload(ngx_log_t *log);
void ngx_http_malloc_profile_unlink(ngx_http_request_t *r,
    ngx_http_malloc_ctx_t *ctx);
ngx_int_t ngx_http_malloc_send_data(ngx_http_request_t *r, const char *type,
    const char *filename, u_char *data, size_t len);

ngx_int_t ngx_http_malloc_profile_write(char **paths, const char *out,
    char *err, size_t len);
void ngx_http_malloc_sweep(ngx_http_malloc_main_conf_t *mmcf,
    ngx_log_t *log);

/* ngx_http_malloc_snapshot.c */
void ngx_http_malloc_snapshot_tick(ngx_http_malloc_main_conf_t *mmcf,
    ngx_log_t *log);
void ngx_http_malloc_snapshot_prune(ngx_http_malloc_main_conf_t *mmcf,
    off_t incoming, ngx_log_t *log);
ngx_int_t ngx_http_malloc_snapshot_get(ngx_http_request_t *r,
    ngx_str_t *name);

/* ngx_http_malloc_stats.c */
ngx_int_t ngx_http_malloc_stats_done(ngx_http_request_t *r,
    ngx_http_malloc_ctx_t *ctx);


#endif /* _NGX_HTTP_MALLOC_MODULE_H_INCLUDED_ */
