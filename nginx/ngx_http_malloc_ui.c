
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * The heap viewer: GET ui is its page, GET ui/<file> its script and
 * style, all built into the module (ngx_http_malloc_assets.c).  The page
 * reads the admin location's own endpoints and nothing else: its
 * Content-Security-Policy forbids any other origin, inline code and
 * framing, so that the page cannot be turned against the location it
 * drives.
 *
 * Owns: the viewer's headers.  Calls: reply, and the assets (data).
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include <jansson.h>

#include "ngx_http_malloc_module.h"
#include "ngx_http_malloc_request.h"
#include "ngx_http_malloc_reply.h"
#include "ngx_http_malloc_ui.h"
#include "ngx_http_malloc_assets.h"


typedef struct {
    const char                 *key;
    ngx_str_t                   value;
} ngx_http_malloc_ui_header_t;


static ngx_http_malloc_ui_header_t  ngx_http_malloc_ui_headers[] = {

    { "Content-Security-Policy",
      ngx_string("default-src 'none'; script-src 'self'; "
                 "style-src 'self'; img-src 'self' data:; "
                 "connect-src 'self'; base-uri 'none'; "
                 "form-action 'none'; frame-ancestors 'none'") },

    { "X-Content-Type-Options", ngx_string("nosniff") },
    { "Referrer-Policy", ngx_string("no-referrer") },
    { "Cache-Control", ngx_string("no-cache") },

    { NULL, ngx_null_string }
};


static ngx_int_t ngx_http_malloc_ui_redirect(ngx_http_request_t *r);


ngx_int_t
ngx_http_malloc_ui(ngx_http_request_t *r, ngx_http_malloc_job_t *job,
    u_char *body, size_t len)
{
    ngx_str_t                       name;
    ngx_uint_t                      i;
    const ngx_http_malloc_asset_t  *a;

    /* "ui" is the page; "ui/<file>" the rest */

    name = job->rest;

    if (name.len == 0 && job->endpoint == NGX_HTTP_MALLOC_EP_UI_FILE) {
        return ngx_http_malloc_ui_redirect(r);
    }

    if (name.len == 0) {
        ngx_str_set(&name, "index.html");

    } else if (name.data[0] == '/') {
        name.data++;
        name.len--;
    }

    for (a = ngx_http_malloc_assets; a->name != NULL; a++) {
        if (ngx_strlen(a->name) == name.len
            && ngx_strncmp(a->name, name.data, name.len) == 0)
        {
            break;
        }
    }

    if (a->name == NULL || name.len == 0) {
        return ngx_http_malloc_error(r, NGX_HTTP_NOT_FOUND, "not_found",
                                     "the heap viewer has no file \"%V\"",
                                     &name);
    }

    for (i = 0; ngx_http_malloc_ui_headers[i].key != NULL; i++) {
        if (ngx_http_malloc_add_header(r, ngx_http_malloc_ui_headers[i].key,
                                       &ngx_http_malloc_ui_headers[i].value)
            != NGX_OK)
        {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }
    }

    return ngx_http_malloc_send_data(r, a->type, NULL, (u_char *) a->data,
                                     a->len);
}


/*
 * "ui/" would be the page at another base: its relative links (ui/app.js,
 * ./pprof/heap.json) would miss.  It moves to "ui", its arguments kept,
 * as nginx's static module adds the slash to a directory.
 */

static ngx_int_t
ngx_http_malloc_ui_redirect(ngx_http_request_t *r)
{
    u_char           *p;
    size_t            len;
    ngx_table_elt_t  *h;

    len = r->uri.len - 1 + (r->args.len ? r->args.len + 1 : 0);

    p = ngx_pnalloc(r->pool, len);
    if (p == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    h = ngx_list_push(&r->headers_out.headers);
    if (h == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    h->hash = 1;
    ngx_str_set(&h->key, "Location");
    h->value.data = p;
    h->value.len = len;

#if (nginx_version >= 1023000)
    h->next = NULL;
#endif

    p = ngx_cpymem(p, r->uri.data, r->uri.len - 1);

    if (r->args.len) {
        *p++ = '?';
        ngx_memcpy(p, r->args.data, r->args.len);
    }

    ngx_http_clear_location(r);
    r->headers_out.location = h;

    return NGX_HTTP_MOVED_PERMANENTLY;
}
