
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * A web page in the operator's browser can send "simple" requests (any
 * GET, a POST of a form or of text/plain) to the admin location without
 * asking first; the browser only hides the answer from the page.  The
 * browser says where a request comes from, in Sec-Fetch-Site (every
 * browser since 2023) and Origin (older ones, on POSTs), so those are
 * refused here unless they come from the location's own origin or from
 * one the operator trusts.  Clients that are not browsers (curl, jeprof,
 * pprof, scrapers) send neither header and pass.
 *
 * Owns: the cross-origin rule.  Calls: nothing of the module (pure C).
 */


#include <stdio.h>
#include <string.h>

#include "ngx_http_malloc_origin.h"


static int ngx_http_malloc_origin_same(ngx_http_malloc_header_t origin,
    ngx_http_malloc_header_t host, const char *scheme, const char *trusted,
    char *err);
static size_t ngx_http_malloc_origin_host(const unsigned char *s,
    size_t len, size_t start, char *err);
static size_t ngx_http_malloc_origin_port(const unsigned char *s,
    size_t len, size_t start, unsigned def, char *err);
static int ngx_http_malloc_origin_eq(const unsigned char *a, size_t alen,
    const unsigned char *b, size_t blen);
static int ngx_http_malloc_origin_trusted(ngx_http_malloc_header_t origin,
    const char *trusted);
static const char *ngx_http_malloc_origin_quote(ngx_http_malloc_header_t h,
    char *out, size_t size);


#define NGX_HTTP_MALLOC_QUOTE_LEN  72


int
ngx_http_malloc_origin_check(ngx_http_malloc_header_t site,
    ngx_http_malloc_header_t origin, ngx_http_malloc_header_t host,
    const char *scheme, const char *trusted, char *err)
{
    char  q1[NGX_HTTP_MALLOC_QUOTE_LEN];

    if (site.data != NULL) {

        /*
         * "none": the operator typed the address or used a bookmark; the
         * browser's "same-origin" already compared schemes, hosts, ports
         */

        if (ngx_http_malloc_origin_eq(site.data, site.len,
                                      (unsigned char *) "same-origin", 11)
            || ngx_http_malloc_origin_eq(site.data, site.len,
                                         (unsigned char *) "none", 4))
        {
            return NGX_HTTP_MALLOC_ORIGIN_OK;
        }

        if (ngx_http_malloc_origin_trusted(origin, trusted)) {
            return NGX_HTTP_MALLOC_ORIGIN_TRUSTED;
        }

        snprintf(err, NGX_HTTP_MALLOC_ORIGIN_ERR_LEN,
                 "refused \"Sec-Fetch-Site: %s\": a web page of another "
                 "site sent this request; the admin location takes "
                 "requests from its own pages and from clients that are "
                 "not browsers",
                 ngx_http_malloc_origin_quote(site, q1, sizeof(q1)));

        return NGX_HTTP_MALLOC_ORIGIN_CROSS_SITE;
    }

    if (origin.data == NULL) {
        return NGX_HTTP_MALLOC_ORIGIN_OK;
    }

    return ngx_http_malloc_origin_same(origin, host, scheme, trusted, err);
}


/*
 * Without Sec-Fetch-Site: the Origin against the location's own origin,
 * scheme "://" Host, then against the trusted ones
 */

static int
ngx_http_malloc_origin_same(ngx_http_malloc_header_t origin,
    ngx_http_malloc_header_t host, const char *scheme, const char *trusted,
    char *err)
{
    int     same_host;
    size_t  skip;
    char    q1[NGX_HTTP_MALLOC_QUOTE_LEN];
    char    q2[NGX_HTTP_MALLOC_QUOTE_LEN];

    /*
     * The Host header has no scheme: compare what follows "://" with it,
     * and what comes before with the scheme of the request, or a page
     * served over https could drive a location served over http on the
     * same host and port, and the other way round
     */

    for (skip = 0; skip + 3 <= origin.len; skip++) {
        if (memcmp(origin.data + skip, "://", 3) == 0) {
            break;
        }
    }

    same_host = skip + 3 <= origin.len && host.data != NULL && host.len > 0
                && ngx_http_malloc_origin_eq(origin.data + skip + 3,
                                             origin.len - skip - 3,
                                             host.data, host.len);

    if (same_host
        && ngx_http_malloc_origin_eq(origin.data, skip,
                                     (const unsigned char *) scheme,
                                     strlen(scheme)))
    {
        return NGX_HTTP_MALLOC_ORIGIN_OK;
    }

    if (ngx_http_malloc_origin_trusted(origin, trusted)) {
        return NGX_HTTP_MALLOC_ORIGIN_TRUSTED;
    }

    if (same_host) {
        snprintf(err, NGX_HTTP_MALLOC_ORIGIN_ERR_LEN,
                 "refused \"Origin: %s\" on a request over %s: a web page "
                 "of another origin (the same host, another scheme) sent "
                 "this request",
                 ngx_http_malloc_origin_quote(origin, q1, sizeof(q1)),
                 scheme);

        return NGX_HTTP_MALLOC_ORIGIN_MISMATCH;
    }

    snprintf(err, NGX_HTTP_MALLOC_ORIGIN_ERR_LEN,
             "refused \"Origin: %s\", which is not \"Host: %s\": a web "
             "page of another origin sent this request",
             ngx_http_malloc_origin_quote(origin, q1, sizeof(q1)),
             ngx_http_malloc_origin_quote(host, q2, sizeof(q2)));

    return NGX_HTTP_MALLOC_ORIGIN_MISMATCH;
}


int
ngx_http_malloc_origin_valid(const unsigned char *s, size_t len, char *err)
{
    size_t    i;
    unsigned  def;

    if (len >= 7 && ngx_http_malloc_origin_eq(s, 7,
                                              (unsigned char *) "http://", 7))
    {
        i = 7;
        def = 80;

    } else if (len >= 8
               && ngx_http_malloc_origin_eq(s, 8,
                                            (unsigned char *) "https://", 8))
    {
        i = 8;
        def = 443;

    } else {
        snprintf(err, NGX_HTTP_MALLOC_ORIGIN_ERR_LEN,
                 "an origin starts with \"http://\" or \"https://\"");
        return -1;
    }

    i = ngx_http_malloc_origin_host(s, len, i, err);
    if (i == 0) {
        return -1;
    }

    if (i < len && s[i] == ':') {
        i = ngx_http_malloc_origin_port(s, len, i + 1, def, err);
        if (i == 0) {
            return -1;
        }
    }

    if (i < len) {
        snprintf(err, NGX_HTTP_MALLOC_ORIGIN_ERR_LEN,
                 "an origin is scheme://host[:port] and nothing after it "
                 "(no path, not even \"/\"), as in "
                 "\"https://dash.example.com:8443\"");
        return -1;
    }

    return 0;
}


/*
 * The host of an origin, a name or an IPv6 address, from "start": where
 * it ends, or 0 with a reason in err
 */

static size_t
ngx_http_malloc_origin_host(const unsigned char *s, size_t len, size_t start,
    char *err)
{
    size_t  i;

    i = start;

    if (i < len && s[i] == '[') {

        /* an IPv6 address */

        for (i++; i < len && s[i] != ']'; i++) {
            if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')
                  || (s[i] >= 'A' && s[i] <= 'F') || s[i] == ':'
                  || s[i] == '.'))
            {
                break;
            }
        }

        if (i == len || s[i] != ']' || i == start + 1) {
            snprintf(err, NGX_HTTP_MALLOC_ORIGIN_ERR_LEN,
                     "an IPv6 address in an origin is written \"[::1]\"");
            return 0;
        }

        return i + 1;
    }

    for ( /* void */ ; i < len; i++) {
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'z')
              || (s[i] >= 'A' && s[i] <= 'Z') || s[i] == '-'
              || s[i] == '.' || s[i] == '_'))
        {
            break;
        }
    }

    if (i == start || s[start] == '.' || s[i - 1] == '.') {
        snprintf(err, NGX_HTTP_MALLOC_ORIGIN_ERR_LEN,
                 "an origin names a host, as in "
                 "\"https://dash.example.com\"");
        return 0;
    }

    return i;
}


/*
 * The port of an origin, from "start" after its ':': where it ends, or 0
 * with a reason in err
 */

static size_t
ngx_http_malloc_origin_port(const unsigned char *s, size_t len, size_t start,
    unsigned def, char *err)
{
    size_t    i, digits;
    unsigned  port;

    port = 0;
    digits = 0;

    for (i = start; i < len && s[i] >= '0' && s[i] <= '9'; i++) {
        if (++digits <= 5) {
            port = port * 10 + (s[i] - '0');
        }
    }

    if (digits == 0 || digits > 5 || port == 0 || port > 65535
        || s[i - digits] == '0')
    {
        snprintf(err, NGX_HTTP_MALLOC_ORIGIN_ERR_LEN,
                 "the port of an origin is a number from 1 to 65535, "
                 "without leading zeros");
        return 0;
    }

    /* browsers leave the default port out: it would never match */

    if (port == def) {
        snprintf(err, NGX_HTTP_MALLOC_ORIGIN_ERR_LEN,
                 "browsers send an origin without the default port "
                 "of its scheme: leave \":%u\" out", port);
        return 0;
    }

    return i;
}


/*
 * ASCII case-insensitive, as host names and schemes are; over bytes that
 * may hold NUL, where strncasecmp() would stop
 */

static int
ngx_http_malloc_origin_eq(const unsigned char *a, size_t alen,
    const unsigned char *b, size_t blen)
{
    size_t         i;
    unsigned char  ca, cb;

    if (alen != blen) {
        return 0;
    }

    for (i = 0; i < alen; i++) {
        ca = (a[i] >= 'A' && a[i] <= 'Z') ? a[i] | 0x20 : a[i];
        cb = (b[i] >= 'A' && b[i] <= 'Z') ? b[i] | 0x20 : b[i];

        if (ca != cb) {
            return 0;
        }
    }

    return 1;
}


static int
ngx_http_malloc_origin_trusted(ngx_http_malloc_header_t origin,
    const char *trusted)
{
    size_t       n;
    const char  *p, *end;

    if (origin.data == NULL || trusted == NULL) {
        return 0;
    }

    for (p = trusted; *p != '\0'; p = end) {
        end = strchr(p, ' ');
        if (end == NULL) {
            end = p + strlen(p);
        }

        n = end - p;

        if (n > 0
            && ngx_http_malloc_origin_eq(origin.data, origin.len,
                                         (const unsigned char *) p, n))
        {
            return 1;
        }

        while (*end == ' ') {
            end++;
        }
    }

    return 0;
}


/* a header's value for a message: printable ASCII, bytes else as \xNN */

static const char *
ngx_http_malloc_origin_quote(ngx_http_malloc_header_t h, char *out,
    size_t size)
{
    size_t  i, n;

    if (h.data == NULL) {
        return "(none)";
    }

    n = 0;

    for (i = 0; i < h.len; i++) {
        if (n + 8 > size) {
            memcpy(out + n, "...", 3);
            n += 3;
            break;
        }

        if (h.data[i] >= 0x20 && h.data[i] < 0x7f && h.data[i] != '"'
            && h.data[i] != '\\')
        {
            out[n++] = h.data[i];

        } else {
            n += snprintf(out + n, size - n, "\\x%02x", h.data[i]);
        }
    }

    out[n] = '\0';

    return out;
}
