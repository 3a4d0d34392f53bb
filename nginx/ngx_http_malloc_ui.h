
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * The heap viewer: GET ui and its files.
 */


#ifndef _NGX_HTTP_MALLOC_UI_H_INCLUDED_
#define _NGX_HTTP_MALLOC_UI_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_malloc_request.h"


ngx_int_t ngx_http_malloc_ui(ngx_http_request_t *r,
    ngx_http_malloc_job_t *job, u_char *body, size_t len);


#endif /* _NGX_HTTP_MALLOC_UI_H_INCLUDED_ */
