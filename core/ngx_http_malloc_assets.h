
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * The heap viewer's files (ui/), built into the module by ui/embed.pl.
 * Pure C.
 */


#ifndef _NGX_HTTP_MALLOC_ASSETS_H_INCLUDED_
#define _NGX_HTTP_MALLOC_ASSETS_H_INCLUDED_


#include <stddef.h>


typedef struct {
    const char                 *name;       /* "index.html" */
    const char                 *type;       /* its Content-Type */
    const unsigned char        *data;
    size_t                      len;
} ngx_http_malloc_asset_t;


/* NULL-ended: name NULL */
extern const ngx_http_malloc_asset_t  ngx_http_malloc_assets[];


#endif /* _NGX_HTTP_MALLOC_ASSETS_H_INCLUDED_ */
