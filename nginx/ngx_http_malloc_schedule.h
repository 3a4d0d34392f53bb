
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * Scheduled snapshots (malloc_snapshot) and their retention.
 */


#ifndef _NGX_HTTP_MALLOC_SCHEDULE_H_INCLUDED_
#define _NGX_HTTP_MALLOC_SCHEDULE_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_malloc_module.h"
#include "ngx_http_malloc_path.h"
#include "ngx_http_malloc_rss.h"
#include "ngx_http_malloc_maps.h"
#include "ngx_http_malloc_board.h"


/* the longest reason kept of a firing that wrote no snapshot */
#define NGX_HTTP_MALLOC_WATCH_WHY    160

/* the workers whose growth malloc_watch follows one by one */
#define NGX_HTTP_MALLOC_WATCHED      64


/* what malloc_watch remembers, across reloads */
typedef struct {
    size_t                      baseline;   /* total allocated, 0: none */
    size_t                      worker[NGX_HTTP_MALLOC_WATCHED];
                                            /* each worker's baseline */
    size_t                      peak;       /* of the last peak snapshot */
    ngx_msec_t                  until;      /* a firing's sampling ends */
    ngx_msec_t                  base_at;    /* its heaps are recorded */
    ngx_uint_t                  fired;      /* sampling for a firing */
    ngx_uint_t                  based;      /* the recording was taken */
    size_t                      grew;       /* by how much it fired */
    ngx_uint_t                  generation; /* the workers the baselines */
    ngx_uint_t                  fresh;      /* are of, and how many */
    ngx_pid_t                   pid[NGX_HTTP_MALLOC_WATCHED];
                                            /* each baseline's process */
    ngx_msec_t                  changed_at; /* a reload was first seen */

    /* what GET <loc>/ shows of it */
    ngx_uint_t                  firings;    /* growths and peaks seen */
    time_t                      fired_at;   /* the last, 0: none */
    ngx_uint_t                  snapshots;  /* written for them */
    time_t                      snapshot_at;
    u_char                      snapshot[NGX_HTTP_MALLOC_NAME_MAX + 1];
                                            /* the last written, "": none */
    time_t                      failed_at;  /* the last firing that wrote
                                               no snapshot, 0: none */
    u_char                      failure[NGX_HTTP_MALLOC_WATCH_WHY];
                                            /* why, said once at warn */

    /*
     * outside=: each worker's RSS beyond the allocator's own figure, less
     * than 0 where jemalloc counts pages the kernel does not
     */
    int64_t                     outside[NGX_HTTP_MALLOC_WATCHED];
                                            /* its baseline, 0: none */
    ngx_uint_t                  outside_firings;
    time_t                      outside_at; /* the last, 0: none */
    size_t                      outside_grew;
    ngx_uint_t                  outside_worker;
    ngx_pid_t                   outside_pid;
    u_char                      outside_text[NGX_HTTP_MALLOC_RSS_TEXT_LEN];
                                            /* what grew, in words */
    ngx_http_malloc_maps_t      outside_maps;
                                            /* the mappings that grew most
                                               in that worker */
} ngx_http_malloc_watch_t;


/* the snapshot schedule's part of the zone */
typedef struct {
    time_t                      next;       /* 0: not scheduled */
    ngx_uint_t                  failed;     /* the last one failed */
    ngx_uint_t                  switches;   /* of prof.active, as seen */
} ngx_http_malloc_schedule_part_t;


/* "snapshot-" and "20261130T105000Z" */
#define NGX_HTTP_MALLOC_SNAP_PREFIX   "snapshot-"
#define NGX_HTTP_MALLOC_SNAP_TS_LEN   16


/* why a snapshot was taken, as its name says after its time */
#define NGX_HTTP_MALLOC_SNAP_SCHEDULE  "schedule"
#define NGX_HTTP_MALLOC_SNAP_RELOAD    "reload"
#define NGX_HTTP_MALLOC_SNAP_GROWTH    "growth"
#define NGX_HTTP_MALLOC_SNAP_PEAK      "peak"


typedef struct {
    char                        ts[NGX_HTTP_MALLOC_SNAP_TS_LEN + 1];
    char                        name[NGX_HTTP_MALLOC_NAME_MAX + 1];
    const char                 *reason;
    off_t                       figure;     /* growth: bytes grown; peak:
                                               bytes allocated; -1: none */
    off_t                       size;
    ngx_uint_t                  future;     /* dated after now: written
                                               before the clock stepped
                                               back, so older than all */
} ngx_http_malloc_snap_file_t;


void ngx_http_malloc_schedule_init_process(
    ngx_http_malloc_main_conf_t *mmcf);
ngx_int_t ngx_http_malloc_schedule_list(ngx_http_malloc_main_conf_t *mmcf,
    ngx_pool_t *pool, ngx_http_malloc_snap_file_t **files, ngx_uint_t *n,
    ngx_log_t *log);


/* malloc_watch's state: a copy of it ("get"), or replaced ("set") */
void ngx_http_malloc_schedule_watch_state(ngx_http_malloc_main_conf_t *mmcf,
    ngx_http_malloc_watch_t *get, ngx_http_malloc_watch_t *set);
/* when the next scheduled snapshot is due, 0: none */
time_t ngx_http_malloc_schedule_next(ngx_http_malloc_main_conf_t *mmcf);


#endif /* _NGX_HTTP_MALLOC_SCHEDULE_H_INCLUDED_ */
