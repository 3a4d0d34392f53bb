
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


#endif /* _NGX_HTTP_MALLOC_SCHEDULE_H_INCLUDED_ */
