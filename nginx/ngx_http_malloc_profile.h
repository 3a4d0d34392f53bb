
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * Profiles served from the admin location: heap, pprof/heap,
 * pprof/heap.pb.gz, pprof/symbol and pprof/cmdline.
 */


#ifndef _NGX_HTTP_MALLOC_PROFILE_H_INCLUDED_
#define _NGX_HTTP_MALLOC_PROFILE_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_malloc_request.h"


ngx_int_t ngx_http_malloc_profile(ngx_http_request_t *r,
    ngx_http_malloc_job_t *job, u_char *body, size_t len);
ngx_int_t ngx_http_malloc_symbol(ngx_http_request_t *r,
    ngx_http_malloc_job_t *job, u_char *body, size_t len);
ngx_int_t ngx_http_malloc_cmdline(ngx_http_request_t *r,
    ngx_http_malloc_job_t *job, u_char *body, size_t len);
void ngx_http_malloc_profile_preload(ngx_log_t *log);


#endif /* _NGX_HTTP_MALLOC_PROFILE_H_INCLUDED_ */
