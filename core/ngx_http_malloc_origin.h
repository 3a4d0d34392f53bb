
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * Who may drive the admin location from a browser: pure C, no nginx
 * types, so that unit tests and fuzzers can drive it without a server.
 */


#ifndef _NGX_HTTP_MALLOC_ORIGIN_H_INCLUDED_
#define _NGX_HTTP_MALLOC_ORIGIN_H_INCLUDED_


#include <stddef.h>


typedef enum {
    NGX_HTTP_MALLOC_ORIGIN_OK = 0,     /* not a browser, or same origin */
    NGX_HTTP_MALLOC_ORIGIN_TRUSTED,    /* another origin, trusted */
    NGX_HTTP_MALLOC_ORIGIN_CROSS_SITE, /* Sec-Fetch-Site: not ours */
    NGX_HTTP_MALLOC_ORIGIN_MISMATCH    /* Origin is not scheme://Host */
} ngx_http_malloc_origin_rc_e;


/* a request header's value; data NULL: the header is absent */
typedef struct {
    const unsigned char        *data;
    size_t                      len;
} ngx_http_malloc_header_t;


/*
 * Decides on a request from its Sec-Fetch-Site, Origin and Host headers,
 * the scheme it came over ("http" or "https", as nginx's $scheme) and
 * the trusted origins ("" or origins separated by single spaces, each as
 * ngx_http_malloc_origin_valid() accepted it).  Without Sec-Fetch-Site,
 * the location's own origin is scheme "://" Host: an Origin of the same
 * host and another scheme is another origin.  Anything refused gets a
 * sentence in err (NGX_HTTP_MALLOC_ORIGIN_ERR_LEN bytes, printable ASCII
 * whatever the headers held).
 */
int ngx_http_malloc_origin_check(ngx_http_malloc_header_t site,
    ngx_http_malloc_header_t origin, ngx_http_malloc_header_t host,
    const char *scheme, const char *trusted, char *err);

/*
 * 0 if "s" is an origin a browser sends: http or https, "://", a host
 * name or address, an optional port, nothing after it; -1 with a reason
 * in err otherwise.
 */
int ngx_http_malloc_origin_valid(const unsigned char *s, size_t len,
    char *err);


#define NGX_HTTP_MALLOC_ORIGIN_ERR_LEN  256


#endif /* _NGX_HTTP_MALLOC_ORIGIN_H_INCLUDED_ */
