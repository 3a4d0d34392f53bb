
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * GET traffic: what every worker's in-flight traffic holds, by state,
 * server and location, with the biggest requests; and the published
 * figures of malloc_traffic for GET stats and GET metrics.
 */


#ifndef _NGX_HTTP_MALLOC_TRAFFIC_H_INCLUDED_
#define _NGX_HTTP_MALLOC_TRAFFIC_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include <jansson.h>

#include "ngx_http_malloc_board.h"
#include "ngx_http_malloc_request.h"


ngx_int_t ngx_http_malloc_traffic(ngx_http_request_t *r,
    ngx_http_malloc_job_t *job, u_char *body, size_t len);

/* a worker's published traffic as GET stats shows it, or NULL: none */
json_t *ngx_http_malloc_traffic_published(ngx_http_request_t *r,
    ngx_http_malloc_worker_t *w, ngx_http_malloc_tally_table_t **table);
/* GET /'s "traffic": the sentence of the published figures, or null */
json_t *ngx_http_malloc_traffic_state(ngx_http_request_t *r,
    ngx_http_malloc_worker_t *w, ngx_uint_t n);
/* the sentence over all workers' published tables; NULL: none */
json_t *ngx_http_malloc_traffic_sentence(ngx_http_malloc_tally_table_t **t,
    ngx_uint_t n);
/* the metrics of the published tables; "last" bounds the buffer */
u_char *ngx_http_malloc_traffic_metrics(u_char *p, u_char *last,
    ngx_http_malloc_worker_t *w, ngx_http_malloc_tally_table_t **t,
    ngx_uint_t n);
/* an upper bound of the metrics' bytes */
size_t ngx_http_malloc_traffic_metrics_size(ngx_http_malloc_tally_table_t **t,
    ngx_uint_t n);


#endif /* _NGX_HTTP_MALLOC_TRAFFIC_H_INCLUDED_ */
