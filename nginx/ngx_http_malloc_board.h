
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * The board: the shared zone through which the workers hear commands and
 * publish their state.  Its layout is private to ngx_http_malloc_board.c;
 * what leaves it are copies.
 */


#ifndef _NGX_HTTP_MALLOC_BOARD_H_INCLUDED_
#define _NGX_HTTP_MALLOC_BOARD_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_malloc_module.h"
#include "ngx_http_malloc_jemalloc.h"
#include "ngx_http_malloc_path.h"
#include "ngx_http_malloc_rss.h"
#include "ngx_http_malloc_ring.h"
#include "ngx_http_malloc_tally.h"


/* the zone's pages for the workers' traffic tables (malloc_traffic) */
#define NGX_HTTP_MALLOC_TRAFFIC_PAGES  256

/* a worker whose figures are older than this shows as stale */
#define NGX_HTTP_MALLOC_STALE_MS     NGX_HTTP_MALLOC_RING_STALE


typedef enum {
    NGX_HTTP_MALLOC_CMD_NONE = 0,
    NGX_HTTP_MALLOC_CMD_ACTIVE,
    NGX_HTTP_MALLOC_CMD_DUMP,
    NGX_HTTP_MALLOC_CMD_STATS,
    NGX_HTTP_MALLOC_CMD_RESET,
    NGX_HTTP_MALLOC_CMD_PURGE,
    NGX_HTTP_MALLOC_CMD_TRAFFIC
} ngx_http_malloc_cmd_e;


/*
 * A command whose effect is the desired state (profiling on or off, a
 * reset's rate): a worker that came up after it runs in that state.
 */
#define ngx_http_malloc_cmd_is_state(kind)                                    \
    ((kind) == NGX_HTTP_MALLOC_CMD_ACTIVE                                     \
     || (kind) == NGX_HTTP_MALLOC_CMD_RESET)


/* what the hooks are called for */
typedef enum {
    NGX_HTTP_MALLOC_HOOK_WAKE = 0,   /* a command or an answer arrived */
    NGX_HTTP_MALLOC_HOOK_TICK,       /* about every second */
    NGX_HTTP_MALLOC_HOOK_MAX
} ngx_http_malloc_hook_e;

typedef void (*ngx_http_malloc_hook_pt)(ngx_log_t *log);


typedef struct {
    ngx_uint_t                  kind;       /* ngx_http_malloc_cmd_e */
    ngx_int_t                   arg;        /* ACTIVE: 0 or 1; RESET:
                                               lg_sample, or -1; TRAFFIC:
                                               the top requests kept */
    ngx_msec_t                  duration;   /* ACTIVE: of profiling */
    ngx_pid_t                   target;     /* DUMP: one worker, 0: all */
    u_char                      tmpl[NGX_HTTP_MALLOC_TMPL_MAX];
                                            /* DUMP, STATS: file name
                                               with "%p"; "": no file */
} ngx_http_malloc_cmd_t;


/* a slot's rc besides ngx_http_malloc_dump_rc_e: a mallctl failed */
#define NGX_HTTP_MALLOC_RC_ACTIVE    100
#define NGX_HTTP_MALLOC_RC_RESET     101
#define NGX_HTTP_MALLOC_RC_PURGE     102
#define NGX_HTTP_MALLOC_RC_STATS     103
#define NGX_HTTP_MALLOC_RC_TRAFFIC   104     /* its walk, not written */


/* one worker's result of one command */
typedef struct {
    ngx_uint_t                  seq;
    ngx_int_t                   rc;         /* dump rc_e or RC_* */
    ngx_err_t                   err;
    off_t                       bytes;
    size_t                      before;     /* PURGE: resident before */
    size_t                      after;      /* PURGE: resident after */
    ngx_uint_t                  prof_active;
    ngx_uint_t                  lg_sample;
} ngx_http_malloc_result_t;


/* one worker as a reader sees it, copied out of the zone */
typedef struct {
    ngx_uint_t                  worker;
    ngx_pid_t                   pid;        /* 0: not running */
    ngx_msec_t                  age;        /* of the figures below */
    ngx_uint_t                  stale;      /* unsigned stale:1; */
    ngx_uint_t                  prof_active;
    ngx_uint_t                  lg_sample;
    ngx_http_malloc_je_stats_t  stats;
    ngx_http_malloc_rss_t       rss;        /* rss.rss 0: none yet */
    ngx_http_malloc_rss_t       rss_start;  /* its first, as it started */
    ngx_uint_t                  answered;   /* has seen the command */
    ngx_http_malloc_result_t    result;     /* its result; result.seq not
                                               the command's: none */
} ngx_http_malloc_worker_t;


/* longest name of a shared zone kept, as its mapping is told apart */
#define NGX_HTTP_MALLOC_ZONE_NAME    63


/* a shared zone of the current generation, as its master made it */
typedef struct {
    u_char                      name[NGX_HTTP_MALLOC_ZONE_NAME + 1];
    size_t                      size;
} ngx_http_malloc_zone_t;


/* the master's memory, as it read at the last configuration read */
typedef struct {
    ngx_pid_t                   pid;        /* 0: none recorded */
    ngx_http_malloc_rss_t       rss;
    ngx_http_malloc_rss_t       rss_start;  /* at nginx's start */
} ngx_http_malloc_master_t;


/* the generations kept, one per cycle: a reload makes a new one */
#define NGX_HTTP_MALLOC_GENERATIONS  16


/* a generation as the first of its workers found the master's heap */
typedef struct {
    ngx_uint_t                  generation;
    time_t                      time;       /* its first worker's start */
    size_t                      allocated;  /* of the heap it inherited */
    size_t                      small;      /* of it, in small objects */
    ngx_int_t                   lg_sample;  /* the master read its
                                               configuration sampling at
                                               2^lg_sample; -1: not
                                               sampling */
    ngx_uint_t                  partial;    /* unsigned partial:1; the
                                               master's samples miss part
                                               of that read (sampling came
                                               on, or was reset, after it) */
    u_char                      snapshot[NGX_HTTP_MALLOC_NAME_MAX + 1];
                                            /* the master's heap, "": none */
} ngx_http_malloc_gen_t;


ngx_int_t ngx_http_malloc_board_add(ngx_conf_t *cf,
    ngx_http_malloc_main_conf_t *mmcf);
ngx_int_t ngx_http_malloc_board_init_module(ngx_cycle_t *cycle,
    ngx_http_malloc_main_conf_t *mmcf);
ngx_int_t ngx_http_malloc_board_init_process(ngx_cycle_t *cycle,
    ngx_http_malloc_main_conf_t *mmcf);
void ngx_http_malloc_board_hook(ngx_uint_t event,
    ngx_http_malloc_hook_pt hook);

/*
 * Commands kept (NGX_HTTP_MALLOC_RING), and results per worker.  A
 * command's entry is used again once its poster has its answers (or is
 * gone) and every live worker has seen it, so that a burst never pushes
 * out a command nobody applied yet; or, whatever holds it, once its
 * poster's wait and NGX_HTTP_MALLOC_RING_GRACE are over, said at warn.
 */

/* the poster's side; "wait" 0: nobody waits for the answers */
ngx_uint_t ngx_http_malloc_board_post(ngx_http_malloc_main_conf_t *mmcf,
    ngx_http_malloc_cmd_t *cmd, ngx_uint_t reserve, ngx_msec_t wait,
    ngx_log_t *log);
void ngx_http_malloc_board_close(ngx_http_malloc_main_conf_t *mmcf,
    ngx_uint_t seq);
ngx_uint_t ngx_http_malloc_board_workers(ngx_http_malloc_main_conf_t *mmcf,
    ngx_uint_t seq, ngx_http_malloc_worker_t *workers, ngx_uint_t *n);
ngx_http_malloc_worker_t *ngx_http_malloc_board_copy(
    ngx_http_malloc_main_conf_t *mmcf, ngx_pool_t *pool, ngx_uint_t seq,
    ngx_uint_t *n);
ngx_uint_t ngx_http_malloc_board_answered(ngx_http_malloc_main_conf_t *mmcf,
    ngx_uint_t seq, ngx_pid_t pid);
ngx_uint_t ngx_http_malloc_board_count(ngx_http_malloc_main_conf_t *mmcf);
ngx_uint_t ngx_http_malloc_board_generation(
    ngx_http_malloc_main_conf_t *mmcf);
ngx_uint_t ngx_http_malloc_board_desired(ngx_http_malloc_main_conf_t *mmcf,
    ngx_msec_t *remaining);

/* the applying worker's side */
ngx_int_t ngx_http_malloc_board_next(ngx_http_malloc_main_conf_t *mmcf,
    ngx_uint_t *seq, ngx_http_malloc_cmd_t *cmd);
ngx_uint_t ngx_http_malloc_board_closed(ngx_http_malloc_main_conf_t *mmcf,
    ngx_uint_t seq);
void ngx_http_malloc_board_answer(ngx_http_malloc_main_conf_t *mmcf,
    ngx_http_malloc_result_t *result);
void ngx_http_malloc_board_publish(ngx_http_malloc_main_conf_t *mmcf,
    ngx_uint_t prof_active, ngx_uint_t lg_sample,
    ngx_http_malloc_je_stats_t *stats);
ngx_int_t ngx_http_malloc_board_lg_sample(ngx_http_malloc_main_conf_t *mmcf);
void ngx_http_malloc_board_publish_rss(ngx_http_malloc_main_conf_t *mmcf,
    ngx_http_malloc_rss_t *rss, ngx_http_malloc_maps_t *maps);
ngx_uint_t ngx_http_malloc_board_maps(ngx_http_malloc_main_conf_t *mmcf,
    ngx_uint_t worker, ngx_pid_t pid, ngx_http_malloc_maps_t *maps);
ngx_uint_t ngx_http_malloc_board_current(ngx_http_malloc_main_conf_t *mmcf);
void ngx_http_malloc_board_publish_traffic(ngx_http_malloc_main_conf_t *mmcf,
    ngx_http_malloc_tally_table_t *table, ngx_log_t *log);
ngx_http_malloc_tally_table_t *ngx_http_malloc_board_traffic(
    ngx_http_malloc_main_conf_t *mmcf, ngx_pool_t *pool, ngx_uint_t worker);
ngx_uint_t ngx_http_malloc_board_expire(ngx_http_malloc_main_conf_t *mmcf,
    ngx_log_t *log);

/* the master's generations */
ngx_uint_t ngx_http_malloc_board_first(ngx_http_malloc_main_conf_t *mmcf);
void ngx_http_malloc_board_record(ngx_http_malloc_main_conf_t *mmcf,
    ngx_http_malloc_gen_t *gen);
ngx_uint_t ngx_http_malloc_board_generations(
    ngx_http_malloc_main_conf_t *mmcf, ngx_http_malloc_gen_t *gens);

/* the shared zones and the master's memory */
ngx_uint_t ngx_http_malloc_board_ranges(ngx_cycle_t *cycle,
    ngx_http_malloc_rss_range_t *ranges, ngx_http_malloc_zone_t *zones);
void ngx_http_malloc_board_master_allocated(
    ngx_http_malloc_main_conf_t *mmcf, size_t allocated, ngx_uint_t start,
    ngx_http_malloc_rss_kernel_t *kernel);
void ngx_http_malloc_board_master_rss(ngx_http_malloc_main_conf_t *mmcf,
    ngx_http_malloc_rss_t *rss);
ngx_uint_t ngx_http_malloc_board_master(ngx_http_malloc_main_conf_t *mmcf,
    ngx_http_malloc_master_t *master, ngx_http_malloc_zone_t *zones);



/*
 * A feature's own part of the zone: its struct is its file's (the
 * watch's and the schedule's in schedule.h, the export's in export.h),
 * and only that file reads and writes it, between the lock, which
 * returns the part, and the unlock; nothing else (no mallctl, no I/O)
 * while it holds them.
 */
typedef enum {
    NGX_HTTP_MALLOC_PART_WATCH = 0,
    NGX_HTTP_MALLOC_PART_SCHEDULE,
    NGX_HTTP_MALLOC_PART_EXPORT
} ngx_http_malloc_part_e;

void *ngx_http_malloc_board_lock(ngx_http_malloc_main_conf_t *mmcf,
    ngx_uint_t part);
void ngx_http_malloc_board_unlock(ngx_http_malloc_main_conf_t *mmcf);

/* how many times the desired prof.active changed: a schedule restarts */
ngx_uint_t ngx_http_malloc_board_switches(ngx_http_malloc_main_conf_t *mmcf);


#endif /* _NGX_HTTP_MALLOC_BOARD_H_INCLUDED_ */
