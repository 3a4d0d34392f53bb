
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * Answers of the admin location: JSON, data, errors.  Every answer,
 * errors included, is JSON unless it is a profile.
 */


#ifndef _NGX_HTTP_MALLOC_REPLY_H_INCLUDED_
#define _NGX_HTTP_MALLOC_REPLY_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include <jansson.h>

#include "ngx_http_malloc_board.h"
#include "ngx_http_malloc_request.h"


ngx_int_t ngx_http_malloc_send_json(ngx_http_request_t *r, ngx_uint_t status,
    json_t *json);
ngx_int_t ngx_http_malloc_send_data(ngx_http_request_t *r, const char *type,
    const char *filename, u_char *data, size_t len);
ngx_int_t ngx_http_malloc_error(ngx_http_request_t *r, ngx_uint_t status,
    const char *code, const char *fmt, ...);
json_t *ngx_http_malloc_error_json(ngx_uint_t status, const char *code,
    const char *text);
ngx_int_t ngx_http_malloc_add_header(ngx_http_request_t *r, const char *key,
    ngx_str_t *value);
ngx_int_t ngx_http_malloc_attachment(ngx_http_request_t *r,
    ngx_str_t *filename);
ngx_uint_t ngx_http_malloc_gzip_accepted(ngx_http_request_t *r);
ngx_int_t ngx_http_malloc_gzipped(ngx_http_request_t *r, ngx_uint_t gzipped);
ngx_int_t ngx_http_malloc_unusable(ngx_http_request_t *r, json_t *json);
json_t *ngx_http_malloc_jemalloc_json(void);

/* a time as the API writes times: "2026-12-01T03:43:08Z" */
json_t *ngx_http_malloc_time_json(time_t t);
json_t *ngx_http_malloc_worker_head(ngx_http_malloc_worker_t *w,
    ngx_uint_t state);
ngx_int_t ngx_http_malloc_results(ngx_http_request_t *r,
    ngx_http_malloc_job_t *job);
json_t *ngx_http_malloc_worker_result(ngx_http_request_t *r,
    ngx_http_malloc_job_t *job, ngx_http_malloc_worker_t *a,
    ngx_uint_t *status, json_t **error);

/* a process's memory: rss_parts, and its growth outside malloc or null */
json_t *ngx_http_malloc_rss_json(ngx_http_malloc_rss_t *rss,
    ngx_http_malloc_zone_t *zones, ngx_uint_t nzones);
json_t *ngx_http_malloc_outside_json(ngx_http_malloc_rss_t *from,
    ngx_http_malloc_rss_t *to, const char *since,
    ngx_http_malloc_zone_t *zones, ngx_uint_t nzones);
json_t *ngx_http_malloc_maps_json(ngx_http_malloc_maps_t *maps,
    ngx_http_malloc_zone_t *zones, ngx_uint_t nzones);
void ngx_http_malloc_worker_rss(json_t *j, ngx_http_malloc_worker_t *w,
    ngx_http_malloc_zone_t *zones, ngx_uint_t nzones, ngx_uint_t parts);
json_t *ngx_http_malloc_master_json(ngx_http_malloc_main_conf_t *mmcf,
    ngx_uint_t parts);


#endif /* _NGX_HTTP_MALLOC_REPLY_H_INCLUDED_ */
