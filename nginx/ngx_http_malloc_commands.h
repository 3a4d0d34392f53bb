
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * The state page and the commands: GET /, GET and POST prof_active,
 * POST prof_dump, prof_reset and purge.
 */


#ifndef _NGX_HTTP_MALLOC_COMMANDS_H_INCLUDED_
#define _NGX_HTTP_MALLOC_COMMANDS_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_malloc_request.h"


ngx_int_t ngx_http_malloc_state(ngx_http_request_t *r,
    ngx_http_malloc_job_t *job, u_char *body, size_t len);
ngx_int_t ngx_http_malloc_prof_active(ngx_http_request_t *r,
    ngx_http_malloc_job_t *job, u_char *body, size_t len);
ngx_int_t ngx_http_malloc_prof_dump(ngx_http_request_t *r,
    ngx_http_malloc_job_t *job, u_char *body, size_t len);
ngx_int_t ngx_http_malloc_prof_reset(ngx_http_request_t *r,
    ngx_http_malloc_job_t *job, u_char *body, size_t len);
ngx_int_t ngx_http_malloc_purge(ngx_http_request_t *r,
    ngx_http_malloc_job_t *job, u_char *body, size_t len);


#endif /* _NGX_HTTP_MALLOC_COMMANDS_H_INCLUDED_ */
