
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * The walk of this worker's connections: what each HTTP request, idle
 * connection and HTTP/2 stream holds in nginx's pools, exactly (every
 * block and large allocation at the allocator's usable size), by state,
 * by location, and the biggest requests; and, with malloc_traffic on,
 * each finished request's pools added to its location in the log phase.
 */


#ifndef _NGX_HTTP_MALLOC_WALK_H_INCLUDED_
#define _NGX_HTTP_MALLOC_WALK_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include <jansson.h>

#include "ngx_http_malloc_module.h"
#include "ngx_http_malloc_tally.h"


/* one location as this worker counts it */
typedef struct {
    ngx_http_core_srv_conf_t     *cscf;
    ngx_http_core_loc_conf_t     *clcf;     /* the first seen of its name */
    ngx_http_malloc_tally_row_t   row;
} ngx_http_malloc_walk_loc_t;


/* what one walk found */
typedef struct {
    ngx_http_malloc_tally_sum_t   total;    /* every connection */
    ngx_http_malloc_tally_sum_t   requests;
    ngx_http_malloc_tally_sum_t   states[NGX_HTTP_MALLOC_TALLY_STATES];
    ngx_http_malloc_tally_sum_t   http2;    /* the connections' own */
    ngx_uint_t                    streams;
    ngx_http_malloc_tally_sum_t   other;    /* of no HTTP request */
    ngx_http_malloc_tally_row_t   nowhere;  /* rows past the table */
    ngx_uint_t                    tls;      /* OpenSSL's not counted */
    ngx_uint_t                    quic;     /* not walked */
    size_t                        allocated;    /* 0: not known */
    const char                   *allocator;
    uint64_t                      took;     /* us, of the event loop */
    ngx_http_malloc_tally_top_t   top;
} ngx_http_malloc_walk_t;


ngx_int_t ngx_http_malloc_walk_init(ngx_conf_t *cf,
    ngx_http_malloc_main_conf_t *mmcf);
/* "stats" 0: jemalloc's total not read (a dump is in progress) */
ngx_int_t ngx_http_malloc_walk(ngx_http_malloc_main_conf_t *mmcf,
    ngx_http_malloc_walk_t *w, size_t top, ngx_uint_t stats, ngx_pool_t *pool);
int ngx_http_malloc_walk_report(ngx_http_malloc_main_conf_t *mmcf, size_t top,
    ngx_uint_t stats, int fd);
void ngx_http_malloc_walk_publish(ngx_http_malloc_main_conf_t *mmcf,
    ngx_log_t *log);
json_t *ngx_http_malloc_walk_json(ngx_http_malloc_main_conf_t *mmcf,
    ngx_http_malloc_walk_t *w);
/* its server's name and the location as written, in ssize and size bytes */
void ngx_http_malloc_walk_names(ngx_http_malloc_walk_loc_t *loc, char *server,
    size_t ssize, char *location, size_t size);
/* this worker's rows as published, "cap" of them; the count */
size_t ngx_http_malloc_walk_named(ngx_http_malloc_main_conf_t *mmcf,
    ngx_http_malloc_walk_t *w, ngx_http_malloc_tally_named_t *rows,
    size_t cap);


#endif /* _NGX_HTTP_MALLOC_WALK_H_INCLUDED_ */
