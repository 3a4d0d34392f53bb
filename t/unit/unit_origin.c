
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * Unit tests for the cross-origin rules (ngx_http_malloc_origin.c).  Every
 * buffer handed to the code under test is allocated to its exact size, so
 * that ASan reports any read or write past the end.
 */


#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "ngx_http_malloc_origin.h"
#include "origin_sentence.h"


#define ERR_LEN        NGX_HTTP_MALLOC_ORIGIN_ERR_LEN

#define RC_OK          NGX_HTTP_MALLOC_ORIGIN_OK
#define RC_TRUSTED     NGX_HTTP_MALLOC_ORIGIN_TRUSTED
#define RC_CROSS_SITE  NGX_HTTP_MALLOC_ORIGIN_CROSS_SITE
#define RC_MISMATCH    NGX_HTTP_MALLOC_ORIGIN_MISMATCH

/* how long a test header is, a little over what nginx takes by default */
#define LONG_LEN       10240


/* a header as the tests write it: data NULL when the header is absent */
typedef struct {
    const char  *data;
    size_t       len;
} hdr_t;


#define H(s)           ((hdr_t) { (s), sizeof(s) - 1 })
#define NONE           ((hdr_t) { NULL, 0 })

#define TRUSTED_ONE    "https://dash.example.com"
#define TRUSTED_THREE  "http://127.0.0.1:3000 https://dash.example.com " \
                       "https://[::1]:8443"


static ngx_http_malloc_header_t copy_header(hdr_t v);
static int run_check(hdr_t site, hdr_t origin, hdr_t host,
    const char *trusted, char *err);
static int run_check_over(const char *scheme, hdr_t site, hdr_t origin,
    hdr_t host, const char *trusted, char *err);
static int run_valid(const char *s, size_t len, char *err);
static const char *rc_name(int rc);
static size_t count(const char *s, const char *what);
static void expect(const char *desc, hdr_t site, hdr_t origin, hdr_t host,
    const char *trusted, int want, const char *in_err);
static void expect_over(const char *scheme, const char *desc, hdr_t site,
    hdr_t origin, hdr_t host, const char *trusted, int want,
    const char *in_err);
static void accept_origin(const char *s);
static void refuse_origin(const char *desc, const char *s, size_t len);
static void test_no_browser(void);
static void test_site(void);
static void test_trusted(void);
static void test_host(void);
static void test_scheme(void);
static void test_err_bytes(void);
static void test_err_long(void);
static void test_valid(void);


/*
 * An exact copy; an empty value gets a block of zero bytes, so that even
 * a read of its first byte shows.
 */

static ngx_http_malloc_header_t
copy_header(hdr_t v)
{
    unsigned char             *p;
    ngx_http_malloc_header_t   h;

    h.data = NULL;
    h.len = 0;

    if (v.data == NULL) {
        return h;
    }

    p = malloc(v.len);

    if (p == NULL && v.len == 0) {
        p = malloc(1);
    }

    if (p == NULL) {
        abort();
    }

    memcpy(p, v.data, v.len);

    h.data = p;
    h.len = v.len;

    return h;
}


/* a request over plain http, as most of the tests send */

static int
run_check(hdr_t site, hdr_t origin, hdr_t host, const char *trusted,
    char *err)
{
    return run_check_over("http", site, origin, host, trusted, err);
}


/* err receives the ERR_LEN bytes that the code left in its buffer */

static int
run_check_over(const char *scheme, hdr_t site, hdr_t origin, hdr_t host,
    const char *trusted, char *err)
{
    int                        rc;
    char                      *buf, *list, *sch;
    size_t                     n;
    ngx_http_malloc_header_t   s, o, h;

    s = copy_header(site);
    o = copy_header(origin);
    h = copy_header(host);

    n = strlen(scheme) + 1;

    sch = malloc(n);
    if (sch == NULL) {
        abort();
    }

    memcpy(sch, scheme, n);

    list = NULL;

    if (trusted != NULL) {
        n = strlen(trusted) + 1;

        list = malloc(n);
        if (list == NULL) {
            abort();
        }

        memcpy(list, trusted, n);
    }

    buf = malloc(ERR_LEN);
    if (buf == NULL) {
        abort();
    }

    /* no NUL anywhere: a refusal that does not end its sentence shows */
    memset(buf, 0x7f, ERR_LEN);

    rc = ngx_http_malloc_origin_check(s, o, h, sch, list, buf);

    memcpy(err, buf, ERR_LEN);

    free((void *) s.data);
    free((void *) o.data);
    free((void *) h.data);
    free(sch);
    free(list);
    free(buf);

    return rc;
}


static int
run_valid(const char *s, size_t len, char *err)
{
    int             rc;
    char           *buf;
    unsigned char  *copy;

    copy = malloc(len);

    if (copy == NULL && len == 0) {
        copy = malloc(1);
    }

    buf = malloc(ERR_LEN);

    if (copy == NULL || buf == NULL) {
        abort();
    }

    memcpy(copy, s, len);
    memset(buf, 0x7f, ERR_LEN);

    rc = ngx_http_malloc_origin_valid(copy, len, buf);

    memcpy(err, buf, ERR_LEN);

    free(copy);
    free(buf);

    return rc;
}


static const char *
rc_name(int rc)
{
    switch (rc) {

    case RC_OK:
        return "OK";

    case RC_TRUSTED:
        return "TRUSTED";

    case RC_CROSS_SITE:
        return "CROSS_SITE";

    case RC_MISMATCH:
        return "MISMATCH";

    default:
        return "an unknown code";
    }
}


static size_t
count(const char *s, const char *what)
{
    size_t       n;
    const char  *p;

    n = 0;

    for (p = strstr(s, what); p != NULL; p = strstr(p + 1, what)) {
        n++;
    }

    return n;
}


static void
expect(const char *desc, hdr_t site, hdr_t origin, hdr_t host,
    const char *trusted, int want, const char *in_err)
{
    expect_over("http", desc, site, origin, host, trusted, want, in_err);
}


/* in_err: what the sentence must quote, NULL for anything */

static void
expect_over(const char *scheme, const char *desc, hdr_t site, hdr_t origin,
    hdr_t host, const char *trusted, int want, const char *in_err)
{
    int   rc, sane;
    char  err[ERR_LEN];

    rc = run_check_over(scheme, site, origin, host, trusted, err);

    if (!is_int(rc, want, "%s: %s", desc, rc_name(want))) {
        diag("got %s", rc_name(rc));
    }

    if (want == RC_OK || want == RC_TRUSTED) {
        return;
    }

    sane = origin_sentence(err);

    if (!ok(sane, "%s: err is a printable sentence", desc)) {
        err[ERR_LEN - 1] = '\0';
        printf("# err: ");
        tap_quote(err, strlen(err));
        printf("\n");
    }

    if (in_err != NULL) {
        if (!ok(sane && strstr(err, in_err) != NULL, "%s: err quotes %s",
                desc, in_err)
            && sane)
        {
            diag("err: %s", err);
        }
    }
}


static void
accept_origin(const char *s)
{
    int     rc, sane;
    char    err[ERR_LEN];
    size_t  n, len;

    len = strlen(s);

    rc = run_valid(s, len, err);

    if (!is_int(rc, 0, "valid \"%s\": accepted", s) && origin_sentence(err)) {
        diag("reason: %s", err);
    }

    /* what the module stores is a list of one: it must let s in */

    rc = run_check(H("cross-site"), (hdr_t) { s, len }, H("localhost"), s,
                   err);
    is_int(rc, RC_TRUSTED, "valid \"%s\": trusted as Origin", s);

    /* each prefix, at its exact size: no read past the end */

    sane = 1;

    for (n = 0; n < len; n++) {
        rc = run_valid(s, n, err);

        if (rc != 0 && (rc != -1 || !origin_sentence(err))) {
            diag("prefix of %zu bytes: %d", n, rc);
            sane = 0;
        }
    }

    ok(sane, "valid \"%s\": each prefix is decided, refusals with reasons",
       s);
}


static void
refuse_origin(const char *desc, const char *s, size_t len)
{
    int   rc;
    char  err[ERR_LEN];

    rc = run_valid(s, len, err);

    is_int(rc, -1, "valid %s: refused", desc);
    ok(rc == -1 && origin_sentence(err), "valid %s: with a reason", desc);
}


static void
test_no_browser(void)
{
    expect("curl: no headers", NONE, NONE, NONE, NULL, RC_OK, NULL);
    expect("curl: Host only", NONE, NONE, H("localhost:8080"), NULL, RC_OK,
           NULL);
    expect("curl: Host only, trusted origins", NONE, NONE, H("localhost"),
           TRUSTED_THREE, RC_OK, NULL);
    expect("curl: Host only, empty trusted list", NONE, NONE, H("localhost"),
           "", RC_OK, NULL);
}


static void
test_site(void)
{
    expect("same-origin", H("same-origin"), NONE, H("localhost"), NULL,
           RC_OK, NULL);
    expect("none", H("none"), NONE, H("localhost"), NULL, RC_OK, NULL);
    expect("SAME-ORIGIN", H("SAME-ORIGIN"), NONE, H("localhost"), NULL,
           RC_OK, NULL);
    expect("Same-Origin", H("Same-Origin"), NONE, H("localhost"), NULL,
           RC_OK, NULL);
    expect("NONE", H("NONE"), NONE, NONE, NULL, RC_OK, NULL);
    expect("same-origin, no Host", H("same-origin"), NONE, NONE, NULL,
           RC_OK, NULL);

    /* Sec-Fetch-Site decides: Origin and Host are not looked at */

    expect("same-origin, Origin of another host",
           H("same-origin"), H("http://evil.example"), H("localhost"), NULL,
           RC_OK, NULL);
    expect("cross-site, Origin matching Host",
           H("cross-site"), H("http://localhost"), H("localhost"), NULL,
           RC_CROSS_SITE, "\"Sec-Fetch-Site: cross-site\"");

    expect("cross-site", H("cross-site"), H("http://evil.example"),
           H("localhost"), NULL, RC_CROSS_SITE,
           "\"Sec-Fetch-Site: cross-site\"");
    expect("cross-site without Origin", H("cross-site"), NONE,
           H("localhost"), NULL, RC_CROSS_SITE,
           "\"Sec-Fetch-Site: cross-site\"");
    expect("same-site", H("same-site"), H("http://a.localhost"),
           H("localhost"), NULL, RC_CROSS_SITE,
           "\"Sec-Fetch-Site: same-site\"");
    expect("unknown value", H("sideways"), NONE, H("localhost"), NULL,
           RC_CROSS_SITE, "\"Sec-Fetch-Site: sideways\"");
    expect("empty value", H(""), NONE, H("localhost"), NULL, RC_CROSS_SITE,
           "\"Sec-Fetch-Site: \"");
    expect("prefix of same-origin", H("same-origi"), NONE, H("localhost"),
           NULL, RC_CROSS_SITE, "\"Sec-Fetch-Site: same-origi\"");
    expect("same-origin and more", H("same-origin2"), NONE, H("localhost"),
           NULL, RC_CROSS_SITE, "\"Sec-Fetch-Site: same-origin2\"");
    expect("none with a space", H("none "), NONE, H("localhost"), NULL,
           RC_CROSS_SITE, "\"Sec-Fetch-Site: none \"");
    expect("NUL in same-origin", H("same\0origin"), NONE, H("localhost"),
           NULL, RC_CROSS_SITE, "\"Sec-Fetch-Site: same\\x00origin\"");
    expect("quote in the value", H("a\"b\\c"), NONE, H("localhost"), NULL,
           RC_CROSS_SITE, "\"Sec-Fetch-Site: a\\x22b\\x5cc\"");
}


static void
test_trusted(void)
{
    expect("cross-site, trusted origin",
           H("cross-site"), H(TRUSTED_ONE), H("localhost"), TRUSTED_ONE,
           RC_TRUSTED, NULL);
    expect("same-site, trusted origin",
           H("same-site"), H(TRUSTED_ONE), H("localhost"), TRUSTED_ONE,
           RC_TRUSTED, NULL);
    expect("cross-site, trusted origin in other case",
           H("cross-site"), H("HTTPS://Dash.Example.COM"), H("localhost"),
           TRUSTED_ONE, RC_TRUSTED, NULL);
    expect("cross-site, trusted list, no Origin",
           H("cross-site"), NONE, H("localhost"), TRUSTED_ONE,
           RC_CROSS_SITE, "\"Sec-Fetch-Site: cross-site\"");
    expect("cross-site, empty trusted list",
           H("cross-site"), H(TRUSTED_ONE), H("localhost"), "",
           RC_CROSS_SITE, NULL);

    expect("several trusted: the first",
           H("cross-site"), H("http://127.0.0.1:3000"), H("localhost"),
           TRUSTED_THREE, RC_TRUSTED, NULL);
    expect("several trusted: the middle one",
           H("cross-site"), H("https://dash.example.com"), H("localhost"),
           TRUSTED_THREE, RC_TRUSTED, NULL);
    expect("several trusted: the last",
           H("cross-site"), H("https://[::1]:8443"), H("localhost"),
           TRUSTED_THREE, RC_TRUSTED, NULL);
    expect("several trusted: none of them",
           H("cross-site"), H("http://127.0.0.1:3001"), H("localhost"),
           TRUSTED_THREE, RC_CROSS_SITE, NULL);
    expect("several trusted: two of them as Origin",
           H("cross-site"),
           H("http://127.0.0.1:3000 https://dash.example.com"),
           H("localhost"), TRUSTED_THREE, RC_CROSS_SITE, NULL);
    expect("several trusted: the whole list as Origin",
           H("cross-site"), H(TRUSTED_THREE), H("localhost"),
           TRUSTED_THREE, RC_CROSS_SITE, NULL);

    /* whole entries only, in either direction */

    expect("Origin a prefix of a trusted origin",
           H("cross-site"), H("http://a.example"), H("localhost"),
           "http://a.example.com", RC_CROSS_SITE,
           "\"Sec-Fetch-Site: cross-site\"");
    expect("trusted origin a prefix of Origin",
           H("cross-site"), H("http://a.example.com"), H("localhost"),
           "http://a.example", RC_CROSS_SITE, NULL);
    expect("trusted origin without the port of Origin",
           H("cross-site"), H("http://a.example:8080"), H("localhost"),
           "http://a.example", RC_CROSS_SITE, NULL);
    expect("trusted origin of another scheme",
           H("cross-site"), H("http://a.example"), H("localhost"),
           "https://a.example", RC_CROSS_SITE, NULL);
    expect("Origin a prefix of a trusted origin, several",
           H("cross-site"), H("http://127.0.0.1:300"), H("localhost"),
           TRUSTED_THREE, RC_CROSS_SITE, NULL);
    expect("empty Origin, trusted list",
           H("cross-site"), H(""), H("localhost"), TRUSTED_THREE,
           RC_CROSS_SITE, NULL);
    expect("empty Origin, a list with an empty entry",
           H("cross-site"), H(""), H("localhost"), " http://a  http://b",
           RC_CROSS_SITE, NULL);
    expect("a list with empty entries still matches",
           H("cross-site"), H("http://b"), H("localhost"),
           " http://a  http://b", RC_TRUSTED, NULL);

    /* without Sec-Fetch-Site, Origin is compared with Host first */

    expect("no Sec-Fetch-Site, trusted Origin",
           NONE, H(TRUSTED_ONE), H("localhost"), TRUSTED_ONE, RC_TRUSTED,
           NULL);
    expect("no Sec-Fetch-Site, trusted Origin, no Host",
           NONE, H(TRUSTED_ONE), NONE, TRUSTED_THREE, RC_TRUSTED, NULL);
    expect_over("https", "no Sec-Fetch-Site, Origin matching Host and trusted",
                NONE, H(TRUSTED_ONE), H("dash.example.com"), TRUSTED_ONE,
                RC_OK, NULL);
    expect("no Sec-Fetch-Site, Origin of another scheme, trusted",
           NONE, H(TRUSTED_ONE), H("dash.example.com"), TRUSTED_ONE,
           RC_TRUSTED, NULL);
    expect("no Sec-Fetch-Site, Origin a prefix of a trusted one",
           NONE, H("http://a.example"), H("localhost"),
           "http://a.example.com", RC_MISMATCH, NULL);
    expect("no Sec-Fetch-Site, trusted one a prefix of Origin",
           NONE, H("http://a.example.com"), H("localhost"),
           "http://a.example", RC_MISMATCH, NULL);
}


static void
test_host(void)
{
    expect("Origin matching Host", NONE, H("http://localhost"),
           H("localhost"), NULL, RC_OK, NULL);
    expect("Origin matching Host with port",
           NONE, H("http://127.0.0.1:8080"), H("127.0.0.1:8080"), NULL,
           RC_OK, NULL);
    expect_over("https", "Origin matching Host, https",
                NONE, H("https://dash.example.com"), H("dash.example.com"),
                NULL, RC_OK, NULL);
    expect("Origin matching Host in another case",
           NONE, H("HTTP://Dash.Example.com:8080"), H("dash.EXAMPLE.com:8080"),
           NULL, RC_OK, NULL);
    expect("Origin matching Host, IPv6",
           NONE, H("http://[::1]:8080"), H("[::1]:8080"), NULL, RC_OK, NULL);

    expect("Origin with another port",
           NONE, H("http://localhost:8081"), H("localhost:8080"), NULL,
           RC_MISMATCH, "\"Origin: http://localhost:8081\"");
    expect("Origin with another port: Host quoted",
           NONE, H("http://localhost:8081"), H("localhost:8080"), NULL,
           RC_MISMATCH, "\"Host: localhost:8080\"");
    expect("Origin without the port of Host",
           NONE, H("http://localhost"), H("localhost:8080"), NULL,
           RC_MISMATCH, NULL);
    expect("Origin of another host",
           NONE, H("http://evil.example"), H("localhost"), NULL,
           RC_MISMATCH, "\"Origin: http://evil.example\"");
    expect("Origin a prefix of Host",
           NONE, H("http://local"), H("localhost"), NULL, RC_MISMATCH, NULL);
    expect("Host a prefix of Origin",
           NONE, H("http://localhost.evil.example"), H("localhost"), NULL,
           RC_MISMATCH, NULL);
    expect("Origin with a path",
           NONE, H("http://localhost/"), H("localhost"), NULL, RC_MISMATCH,
           NULL);
    expect("Origin scheme only",
           NONE, H("http://"), H("localhost"), NULL, RC_MISMATCH,
           "\"Origin: http://\"");
    expect("Origin \"http:\"",
           NONE, H("http:"), H("localhost"), NULL, RC_MISMATCH, NULL);
    expect("Origin without scheme",
           NONE, H("localhost"), H("localhost"), NULL, RC_MISMATCH, NULL);
    expect("Origin null",
           NONE, H("null"), H("localhost"), NULL, RC_MISMATCH,
           "\"Origin: null\"");
    expect("Origin empty",
           NONE, H(""), H("localhost"), NULL, RC_MISMATCH, "\"Origin: \"");
    expect("Origin short", NONE, H("//"), H(""), NULL, RC_MISMATCH, NULL);
    expect("missing Host",
           NONE, H("http://localhost"), NONE, NULL, RC_MISMATCH,
           "\"Host: (none)\"");
    expect("empty Host",
           NONE, H("http://localhost"), H(""), NULL, RC_MISMATCH,
           "\"Host: \"");
    expect("Origin \"http://\", empty Host",
           NONE, H("http://"), H(""), NULL, RC_MISMATCH, NULL);
    expect("Origin \"http://\", no Host",
           NONE, H("http://"), NONE, NULL, RC_MISMATCH, NULL);
    expect("Origin \"://\", empty Host",
           NONE, H("://"), H(""), NULL, RC_MISMATCH, NULL);
    expect("Origin mismatch, trusted list without it",
           NONE, H("http://evil.example"), H("localhost"), TRUSTED_THREE,
           RC_MISMATCH, NULL);
}


/*
 * Without Sec-Fetch-Site, the origin of the location is the scheme of the
 * request and its Host: an Origin of the right host and port over another
 * scheme is a page of another origin
 */

static void
test_scheme(void)
{
    expect("right host, https Origin, request over http",
           NONE, H("https://127.0.0.1:8080"), H("127.0.0.1:8080"), NULL,
           RC_MISMATCH, "\"Origin: https://127.0.0.1:8080\" on a request "
           "over http");
    expect_over("https", "right host, http Origin, request over https",
                NONE, H("http://127.0.0.1:8443"), H("127.0.0.1:8443"), NULL,
                RC_MISMATCH, "\"Origin: http://127.0.0.1:8443\" on a "
                "request over https");
    expect("right host, https Origin, no port, over http",
           NONE, H("https://dash.example.com"), H("dash.example.com"), NULL,
           RC_MISMATCH, "another scheme");
    expect_over("https", "right host, http Origin, no port, over https",
                NONE, H("http://dash.example.com"), H("dash.example.com"),
                NULL, RC_MISMATCH, "another scheme");

    expect("right scheme, http", NONE, H("http://127.0.0.1:8080"),
           H("127.0.0.1:8080"), NULL, RC_OK, NULL);
    expect_over("https", "right scheme, https", NONE,
                H("https://127.0.0.1:8443"), H("127.0.0.1:8443"), NULL,
                RC_OK, NULL);
    expect_over("https", "right scheme in another case, https", NONE,
                H("HTTPS://Dash.example.com"), H("dash.example.com"), NULL,
                RC_OK, NULL);
    expect_over("https", "right scheme, https, IPv6", NONE,
                H("https://[::1]:8443"), H("[::1]:8443"), NULL, RC_OK,
                NULL);

    /* ports: the scheme does not stand for its default port, nor back */

    expect("https Origin without a port, Host with :443, over http",
           NONE, H("https://a.example"), H("a.example:443"), NULL,
           RC_MISMATCH, "\"Host: a.example:443\"");
    expect_over("https", "right scheme, another port, https",
                NONE, H("https://a.example:8443"), H("a.example:9443"), NULL,
                RC_MISMATCH, "\"Host: a.example:9443\"");
    expect_over("https", "right scheme, Origin without the port of Host",
                NONE, H("https://a.example"), H("a.example:8443"), NULL,
                RC_MISMATCH, NULL);
    expect_over("https", "wrong scheme, another port, https",
                NONE, H("http://a.example:8080"), H("a.example:8443"), NULL,
                RC_MISMATCH, "\"Host: a.example:8443\"");

    /* schemes no browser page has */

    expect("a scheme of another kind, right host",
           NONE, H("chrome-extension://localhost"), H("localhost"), NULL,
           RC_MISMATCH, "another scheme");
    expect("a prefix of the scheme, right host",
           NONE, H("htt://localhost"), H("localhost"), NULL, RC_MISMATCH,
           NULL);
    expect("the scheme and more, right host",
           NONE, H("httpx://localhost"), H("localhost"), NULL, RC_MISMATCH,
           NULL);
    expect("no scheme before \"://\", right host",
           NONE, H("://localhost"), H("localhost"), NULL, RC_MISMATCH, NULL);
    expect_over("https", "http for https, the other prefix",
                NONE, H("http://localhost"), H("localhost"), NULL,
                RC_MISMATCH, NULL);

    /* the browser's Sec-Fetch-Site decides, Origin is not looked at */

    expect("same-origin with an Origin of another scheme",
           H("same-origin"), H("https://127.0.0.1:8080"), H("127.0.0.1:8080"),
           NULL, RC_OK, NULL);

    /* what the operator trusts passes over either scheme */

    expect("another scheme, trusted",
           NONE, H("https://127.0.0.1:8080"), H("127.0.0.1:8080"),
           "https://127.0.0.1:8080", RC_TRUSTED, NULL);
    expect_over("https", "another scheme, trusted, over https",
                NONE, H("http://127.0.0.1:3000"), H("127.0.0.1:3000"),
                TRUSTED_THREE, RC_TRUSTED, NULL);
    expect("another scheme, a trusted list without it",
           NONE, H("https://127.0.0.1:3000"), H("127.0.0.1:3000"),
           TRUSTED_THREE, RC_MISMATCH, "another scheme");
}

static void
test_err_bytes(void)
{
    int    c, rc, sane, quoted;
    char   err[ERR_LEN], want[16], site[3], origin[9], host[2];
    char   all[256], back[256];
    hdr_t  v;

    sane = 1;
    quoted = 1;

    for (c = 0; c < 256; c++) {
        site[0] = 'a';
        site[1] = (char) c;
        site[2] = 'z';

        if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
            snprintf(want, sizeof(want), "a%cz", c);

        } else {
            snprintf(want, sizeof(want), "a\\x%02xz", c);
        }

        rc = run_check((hdr_t) { site, 3 }, NONE, NONE, NULL, err);

        if (rc != RC_CROSS_SITE || !origin_sentence(err)) {
            diag("Sec-Fetch-Site with byte 0x%02x: %s", c, rc_name(rc));
            sane = 0;

        } else if (strstr(err, want) == NULL) {
            diag("Sec-Fetch-Site with byte 0x%02x: %s", c, err);
            quoted = 0;
        }
    }

    ok(sane, "Sec-Fetch-Site with each byte 0x00-0xff: refused, printable");
    ok(quoted, "Sec-Fetch-Site with each byte: as itself or as \\xNN");

    sane = 1;

    for (c = 0; c < 256; c++) {
        memcpy(origin, "http://a", 8);
        origin[8] = (char) c;
        host[0] = (char) c;
        host[1] = 'b';

        rc = run_check(NONE, (hdr_t) { origin, 9 }, (hdr_t) { host, 2 },
                       NULL, err);

        if (rc != RC_MISMATCH || !origin_sentence(err)) {
            diag("Origin and Host with byte 0x%02x: %s", c, rc_name(rc));
            sane = 0;
        }
    }

    ok(sane, "Origin and Host with each byte 0x00-0xff: refused, printable");

    for (c = 0; c < 256; c++) {
        all[c] = (char) c;
        back[c] = (char) (255 - c);
    }

    v.data = all;
    v.len = sizeof(all);

    rc = run_check(v, NONE, NONE, NULL, err);
    ok(rc == RC_CROSS_SITE && origin_sentence(err),
       "Sec-Fetch-Site of all 256 bytes: refused, printable");

    rc = run_check(NONE, v, (hdr_t) { back, sizeof(back) }, TRUSTED_THREE,
                   err);
    ok(rc == RC_MISMATCH && origin_sentence(err),
       "Origin and Host of all 256 bytes: refused, printable");

    rc = run_check(H("cross-site"), v, NONE, TRUSTED_THREE, err);
    ok(rc == RC_CROSS_SITE && origin_sentence(err),
       "cross-site, Origin of all 256 bytes: refused, printable");
}


static void
test_err_long(void)
{
    int     rc;
    char    err[ERR_LEN], *a, *b;
    hdr_t   va, vb;
    size_t  i;

    a = malloc(LONG_LEN);
    b = malloc(LONG_LEN);

    if (a == NULL || b == NULL) {
        abort();
    }

    memset(a, 'a', LONG_LEN);
    va.data = a;
    va.len = LONG_LEN;

    rc = run_check(va, NONE, NONE, NULL, err);
    ok(rc == RC_CROSS_SITE && origin_sentence(err),
       "Sec-Fetch-Site of 10 KB: refused, printable, shorter than 256");
    ok(origin_sentence(err) && count(err, "...") == 1,
       "Sec-Fetch-Site of 10 KB: cut with \"...\"");

    memset(a, 0xff, LONG_LEN);

    rc = run_check(va, NONE, NONE, NULL, err);
    ok(rc == RC_CROSS_SITE && origin_sentence(err),
       "Sec-Fetch-Site of 10 KB of 0xff: refused, printable");
    ok(origin_sentence(err) && count(err, "\\xff") > 0
       && count(err, "...") == 1,
       "Sec-Fetch-Site of 10 KB of 0xff: \\xff, cut with \"...\"");

    memset(a, '"', LONG_LEN);

    rc = run_check(va, NONE, NONE, NULL, err);
    ok(rc == RC_CROSS_SITE && origin_sentence(err),
       "Sec-Fetch-Site of 10 KB of '\"': refused, printable");

    /* Origin and Host both long: both are cut, the sentence still fits */

    memcpy(a, "http://", 7);
    memset(a + 7, 'o', LONG_LEN - 7);
    memset(b, 'h', LONG_LEN);
    vb.data = b;
    vb.len = LONG_LEN;

    rc = run_check(NONE, va, vb, TRUSTED_THREE, err);
    ok(rc == RC_MISMATCH && origin_sentence(err),
       "Origin and Host of 10 KB: refused, printable, shorter than 256");
    ok(origin_sentence(err) && count(err, "...") == 2,
       "Origin and Host of 10 KB: both cut with \"...\"");

    for (i = 0; i < LONG_LEN; i++) {
        a[i] = (char) (i * 7);
        b[i] = (char) (i * 13 + 1);
    }

    rc = run_check(NONE, va, vb, NULL, err);
    ok(rc == RC_MISMATCH && origin_sentence(err),
       "Origin and Host of 10 KB of every byte: refused, printable");

    /* long, but the same: passes */

    memcpy(a, "http://", 7);
    memset(a + 7, 'x', LONG_LEN - 7);
    memset(b, 'X', LONG_LEN - 7);
    vb.len = LONG_LEN - 7;

    rc = run_check(NONE, va, vb, NULL, err);
    is_int(rc, RC_OK, "Origin of 10 KB matching Host: OK");

    /* a short value is quoted whole */

    memset(a, 'q', 64);
    va.len = 64;

    rc = run_check(va, NONE, NONE, NULL, err);
    ok(rc == RC_CROSS_SITE && origin_sentence(err) && count(err, "...") == 0
       && strstr(err, "qqqq\"") != NULL,
       "Sec-Fetch-Site of 64 bytes: quoted whole");

    free(a);
    free(b);
}


static void
test_valid(void)
{
    accept_origin("http://127.0.0.1:3000");
    accept_origin("https://dash.example.com");
    accept_origin("https://[::1]:8443");
    accept_origin("HTTPS://Dash.Example.com");
    accept_origin("http://localhost");
    accept_origin("http://a");
    accept_origin("http://a:1");
    accept_origin("http://a:65535");
    accept_origin("https://a:80");
    accept_origin("http://a:443");
    accept_origin("https://[2001:db8::1]");
    accept_origin("http://my-host_1.example");

    refuse_origin("no scheme", "dash.example.com", 16);
    refuse_origin("empty", "", 0);
    refuse_origin("\"http\"", "http", 4);
    refuse_origin("\"http:/\"", "http:/", 6);
    refuse_origin("\"//a\"", "//a", 3);
    refuse_origin("ftp://", "ftp://a", 7);
    refuse_origin("httpx://", "httpx://a", 9);
    refuse_origin("leading space", " http://a", 10);
    refuse_origin("trailing slash", "http://a/", 9);
    refuse_origin("trailing slash after port", "http://a:80/", 12);
    refuse_origin("path", "http://a/path", 13);
    refuse_origin("query", "http://a?x=1", 12);
    refuse_origin("fragment", "http://a\x23" "f", 10);
    refuse_origin("user", "http://user@a", 13);
    refuse_origin("empty host", "http://", 7);
    refuse_origin("empty host, https", "https://", 8);
    refuse_origin("empty host with port", "http://:80", 10);
    refuse_origin("port 0", "http://a:0", 10);
    refuse_origin("port 00000", "http://a:00000", 14);
    refuse_origin("port 65536", "http://a:65536", 14);
    refuse_origin("port 99999", "http://a:99999", 14);
    refuse_origin("port of six digits", "http://a:123456", 15);
    refuse_origin("port 1 of six digits", "http://a:000001", 15);
    refuse_origin("leading zero in the port", "http://a:08080", 14);
    refuse_origin("the default port of http", "http://a:80", 11);
    refuse_origin("the default port of https", "https://a:443", 13);
    refuse_origin("port with letters", "http://a:8o", 11);
    refuse_origin("port of letters", "http://a:abc", 12);
    refuse_origin("empty port", "http://a:", 9);
    refuse_origin("negative port", "http://a:-1", 11);
    refuse_origin("\"http://a b\"", "http://a b", 10);
    refuse_origin("trailing space", "http://a ", 9);
    refuse_origin("leading dot host", "http://.a", 9);
    refuse_origin("trailing dot host", "http://a.", 9);
    refuse_origin("only a dot", "http://.", 8);
    refuse_origin("NUL in host", "http://a\0b", 10);
    refuse_origin("trailing NUL", "http://a\0", 9);
    refuse_origin("UTF-8 host", "http://h\xc3\xa9", 10);
    refuse_origin("\"[\"", "http://[", 8);
    refuse_origin("\"[]\"", "http://[]", 9);
    refuse_origin("\"[::1\"", "http://[::1", 11);
    refuse_origin("\"[::g]\"", "http://[::g]", 12);
    refuse_origin("\"[::1]x\"", "http://[::1]x", 13);
    refuse_origin("\"[::1]:\"", "http://[::1]:", 13);
    refuse_origin("IPv6 without brackets", "http://::1", 10);
}


int
main(void)
{
    test_no_browser();
    test_site();
    test_trusted();
    test_host();
    test_scheme();
    test_err_bytes();
    test_err_long();
    test_valid();

    return done_testing();
}
