
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * A worker's side of the board's commands: what it does with jemalloc
 * and the dump directory, and the figures it publishes.
 */


#ifndef _NGX_HTTP_MALLOC_APPLY_H_INCLUDED_
#define _NGX_HTTP_MALLOC_APPLY_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_malloc_module.h"


void ngx_http_malloc_apply_init_module(ngx_cycle_t *cycle,
    ngx_http_malloc_main_conf_t *mmcf);
ngx_int_t ngx_http_malloc_apply_init_process(ngx_cycle_t *cycle,
    ngx_http_malloc_main_conf_t *mmcf);


#endif /* _NGX_HTTP_MALLOC_APPLY_H_INCLUDED_ */
