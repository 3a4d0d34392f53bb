
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * libFuzzer target for the cross-origin rules.
 *
 * Input: one flag byte, three length bytes, then the values.  Flag bit 0
 * says that a Sec-Fetch-Site header is present, bit 1 an Origin header,
 * bit 2 a Host header.  The length bytes give the sizes of the
 * Sec-Fetch-Site, Origin and Host values, which follow in that order, cut
 * short where the input ends (a length counts whether or not its header
 * is present).  What remains makes the trusted list.  Flag bit 4 says
 * that the request came over https, else over http.
 *
 * Flag bit 3 clear: the list is made as the module makes it, of the words
 * of the rest that ngx_http_malloc_origin_valid() accepts, joined by
 * single spaces.  Set: the list is the rest as it is, up to a NUL; the
 * empty entries that stray spaces make must match nothing.
 *
 * The result must be one of the four codes and what the rules give when
 * worked out here: OK without Sec-Fetch-Site and Origin, TRUSTED only for
 * an Origin in the list, OK from Origin only for the request's scheme.
 * A refusal must leave a printable sentence of less than 256 bytes that
 * quotes the headers, bytes that are not printable and '"' and '\\' as
 * \xNN, long values cut with "...".
 *
 * valid() is given the Origin value and, without bit 3, each word of the
 * list.  What it accepts must be http:// or https://, a host name or a
 * bracketed address, and maybe a port from 1 to 65535; and a list of just
 * that origin must let it in from another site.
 */


#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ngx_http_malloc_origin.h"
#include "../t/unit/origin_sentence.h"


#define ERR_LEN       NGX_HTTP_MALLOC_ORIGIN_ERR_LEN

/*
 * how refusals start, what joins the two values of a MISMATCH, and what
 * follows Origin when only the scheme differs
 */
#define SITE_QUOTE    "refused \"Sec-Fetch-Site: "
#define ORIGIN_QUOTE  "refused \"Origin: "
#define HOST_QUOTE    "\", which is not \"Host: "
#define SCHEME_QUOTE  "\" on a request over "


int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
static void check(int cond, const char *what);
static unsigned char *copy(const uint8_t *data, size_t len);
static int same(const unsigned char *a, size_t alen, const char *b,
    size_t blen);
static int listed(ngx_http_malloc_header_t origin, const char *list);
static int expected(ngx_http_malloc_header_t site,
    ngx_http_malloc_header_t origin, ngx_http_malloc_header_t host,
    const char *scheme, const char *list);
static int rendered(ngx_http_malloc_header_t h, const char *p, size_t m,
    size_t *used);
static const char *quoted(const char *p, ngx_http_malloc_header_t h);
static void check_accepted(const unsigned char *s, size_t len);
static void check_shape(const unsigned char *s, size_t len);
static char *make_list(const uint8_t *data, size_t len, int raw);
static void check_valid(ngx_http_malloc_header_t origin,
    ngx_http_malloc_header_t host, const char *scheme);


static void
check(int cond, const char *what)
{
    if (!cond) {
        fprintf(stderr, "fuzz_origin: invariant broken: %s\n", what);
        abort();
    }
}


/* exact size, so that ASan sees any access past the end */

static unsigned char *
copy(const uint8_t *data, size_t len)
{
    unsigned char  *p;

    p = malloc(len);

    if (p == NULL && len == 0) {
        p = malloc(1);
    }

    if (p == NULL) {
        abort();
    }

    memcpy(p, data, len);

    return p;
}


/* ASCII case-insensitive, written apart from the code under test */

static int
same(const unsigned char *a, size_t alen, const char *b, size_t blen)
{
    int     ca, cb;
    size_t  i;

    if (alen != blen) {
        return 0;
    }

    for (i = 0; i < alen; i++) {
        ca = a[i];
        cb = (unsigned char) b[i];

        if (ca >= 'A' && ca <= 'Z') {
            ca += 'a' - 'A';
        }

        if (cb >= 'A' && cb <= 'Z') {
            cb += 'a' - 'A';
        }

        if (ca != cb) {
            return 0;
        }
    }

    return 1;
}


/* whether origin is a word of the list; empty words match nothing */

static int
listed(ngx_http_malloc_header_t origin, const char *list)
{
    size_t  i, start;

    if (origin.data == NULL) {
        return 0;
    }

    start = 0;

    for (i = 0; /* void */ ; i++) {
        if (list[i] != ' ' && list[i] != '\0') {
            continue;
        }

        if (i > start
            && same(origin.data, origin.len, list + start, i - start))
        {
            return 1;
        }

        if (list[i] == '\0') {
            return 0;
        }

        start = i + 1;
    }
}


/* the rules, from the header comment of ngx_http_malloc_origin.h */

static int
expected(ngx_http_malloc_header_t site, ngx_http_malloc_header_t origin,
    ngx_http_malloc_header_t host, const char *scheme, const char *list)
{
    size_t  i;

    if (site.data != NULL) {
        if (same(site.data, site.len, "same-origin", 11)
            || same(site.data, site.len, "none", 4))
        {
            return NGX_HTTP_MALLOC_ORIGIN_OK;
        }

        return listed(origin, list) ? NGX_HTTP_MALLOC_ORIGIN_TRUSTED
                                    : NGX_HTTP_MALLOC_ORIGIN_CROSS_SITE;
    }

    if (origin.data == NULL) {
        return NGX_HTTP_MALLOC_ORIGIN_OK;
    }

    for (i = 0; i + 3 <= origin.len; i++) {
        if (origin.data[i] == ':' && origin.data[i + 1] == '/'
            && origin.data[i + 2] == '/')
        {
            if (host.data != NULL && host.len > 0
                && same(origin.data + i + 3, origin.len - i - 3,
                        (const char *) host.data, host.len)
                && same(origin.data, i, scheme, strlen(scheme)))
            {
                return NGX_HTTP_MALLOC_ORIGIN_OK;
            }

            break;
        }
    }

    return listed(origin, list) ? NGX_HTTP_MALLOC_ORIGIN_TRUSTED
                                : NGX_HTTP_MALLOC_ORIGIN_MISMATCH;
}


/*
 * Whether the m bytes at p are the first *used bytes of h as a sentence
 * shows them: printable bytes as they are, others and '"' and '\\' as
 * \xNN.
 */

static int
rendered(ngx_http_malloc_header_t h, const char *p, size_t m, size_t *used)
{
    char           esc[8];
    size_t         i, e, n;
    unsigned char  c;

    e = 0;

    for (i = 0; i < h.len && e < m; i++) {
        c = h.data[i];

        if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
            esc[0] = (char) c;
            n = 1;

        } else {
            n = snprintf(esc, sizeof(esc), "\\x%02x", c);
        }

        if (e + n > m || memcmp(p + e, esc, n) != 0) {
            return 0;
        }

        e += n;
    }

    *used = i;

    return e == m;
}


/*
 * A header quoted at p, up to the closing '"': "(none)" if absent, else
 * the whole value or, cut where it is long, a prefix of it and "...".
 * Returns the closing quote, NULL if the quote is wrong.
 */

static const char *
quoted(const char *p, ngx_http_malloc_header_t h)
{
    size_t       n, used;
    const char  *end;

    end = strchr(p, '"');
    if (end == NULL) {
        return NULL;
    }

    n = end - p;

    if (h.data == NULL) {
        return (n == 6 && memcmp(p, "(none)", 6) == 0) ? end : NULL;
    }

    if (rendered(h, p, n, &used) && used == h.len) {
        return end;
    }

    /* the sentence has room for some 60 bytes of each value */

    if (n >= 3 + 60 && memcmp(end - 3, "...", 3) == 0
        && rendered(h, p, n - 3, &used) && used < h.len)
    {
        return end;
    }

    return NULL;
}


/* what valid() accepts: http:// or https://, a host, maybe a port */

static void
check_accepted(const unsigned char *s, size_t len)
{
    size_t         i, skip;
    unsigned char  c;

    if (len >= 7 && same(s, 7, "http://", 7)) {
        skip = 7;

    } else {
        check(len >= 8 && same(s, 8, "https://", 8),
              "an accepted origin starts with http:// or https://");
        skip = 8;
    }

    for (i = skip; i < len; i++) {
        c = s[i];

        check(c > 0x20 && c < 0x7f, "an accepted origin is printable");
        check(c != '/' && c != '?' && c != '#' && c != '@' && c != '\\',
              "an accepted origin has no path, query, fragment or user");
    }

    check_shape(s + skip, len - skip);
}


/* the rest of an accepted origin: a host, then nothing or a port */

static void
check_shape(const unsigned char *s, size_t len)
{
    size_t    i, digits;
    unsigned  port;

    check(len > 0, "an accepted origin has a host");

    if (s[0] == '[') {
        for (i = 1; i < len && s[i] != ']'; i++) {
            /* void */
        }

        check(i < len && i > 1, "an IPv6 address closed and not empty");

        i++;

    } else {
        for (i = 0; i < len && s[i] != ':'; i++) {
            check(s[i] != '[' && s[i] != ']', "brackets only around IPv6");
        }

        check(i > 0 && s[0] != '.' && s[i - 1] != '.',
              "a host name neither starts nor ends with a dot");
    }

    if (i == len) {
        return;
    }

    check(s[i] == ':', "only a port follows the host");

    port = 0;
    digits = 0;

    for (i++; i < len; i++) {
        check(s[i] >= '0' && s[i] <= '9', "a port is digits");

        if (++digits <= 5) {
            port = port * 10 + (s[i] - '0');
        }
    }

    check(digits >= 1 && digits <= 5 && port >= 1 && port <= 65535,
          "a port from 1 to 65535");
}


/* the trusted list, NUL-terminated in a block of its exact size */

static char *
make_list(const uint8_t *data, size_t len, int raw)
{
    int             rc;
    char           *list, *err;
    size_t          i, n, start;
    unsigned char  *word;

    list = malloc(len + 1);
    err = malloc(ERR_LEN);

    if (list == NULL || err == NULL) {
        abort();
    }

    n = 0;

    if (raw) {
        for (i = 0; i < len && data[i] != '\0'; i++) {
            list[n++] = data[i];
        }

    } else {
        start = 0;

        for (i = 0; i <= len; i++) {
            if (i < len && data[i] != ' ') {
                continue;
            }

            word = copy(data + start, i - start);
            memset(err, 0x7f, ERR_LEN);

            rc = ngx_http_malloc_origin_valid(word, i - start, err);

            check(rc == 0 || rc == -1, "valid() returns 0 or -1");
            check(rc == 0 || origin_sentence(err), "valid() gives a reason");

            if (rc == 0) {
                check_accepted(word, i - start);

                if (n > 0) {
                    list[n++] = ' ';
                }

                memcpy(list + n, word, i - start);
                n += i - start;
            }

            free(word);
            start = i + 1;
        }
    }

    list[n++] = '\0';

    free(err);

    /* once more, to its exact size */

    word = copy((const uint8_t *) list, n);
    free(list);

    return (char *) word;
}


/*
 * An origin that valid() accepts is one a browser could send, and a list
 * of that origin alone lets it in.
 */

static void
check_valid(ngx_http_malloc_header_t origin, ngx_http_malloc_header_t host,
    const char *scheme)
{
    int                        rc;
    char                      *err, *list;
    ngx_http_malloc_header_t   site;

    err = malloc(ERR_LEN);
    if (err == NULL) {
        abort();
    }

    memset(err, 0x7f, ERR_LEN);

    rc = ngx_http_malloc_origin_valid(origin.data, origin.len, err);

    check(rc == 0 || rc == -1, "valid() returns 0 or -1");

    if (rc == -1) {
        check(origin_sentence(err), "valid() gives a reason");
        free(err);
        return;
    }

    check_accepted(origin.data, origin.len);

    list = malloc(origin.len + 1);
    if (list == NULL) {
        abort();
    }

    memcpy(list, origin.data, origin.len);
    list[origin.len] = '\0';

    check(strlen(list) == origin.len, "an accepted origin has no NUL");

    site.data = copy((const uint8_t *) "cross-site", 10);
    site.len = 10;

    memset(err, 0x7f, ERR_LEN);

    rc = ngx_http_malloc_origin_check(site, origin, host, scheme, list, err);

    check(rc == NGX_HTTP_MALLOC_ORIGIN_TRUSTED,
          "an accepted origin, trusted alone, is let in from another site");

    free((void *) site.data);
    free(list);
    free(err);
}


int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int                        rc;
    char                      *err, *list;
    size_t                     k, n, lens[3];
    const char                *p, *scheme;
    unsigned char              flags;
    ngx_http_malloc_header_t   h[3];

    if (size < 4) {
        return 0;
    }

    flags = data[0];

    for (k = 0; k < 3; k++) {
        lens[k] = data[k + 1];
    }

    data += 4;
    size -= 4;

    for (k = 0; k < 3; k++) {
        n = lens[k] < size ? lens[k] : size;

        h[k].data = NULL;
        h[k].len = 0;

        if (flags & (1 << k)) {
            h[k].data = copy(data, n);
            h[k].len = n;
        }

        data += n;
        size -= n;
    }

    list = make_list(data, size, flags & 8);

    scheme = (flags & 16) ? "https" : "http";

    err = malloc(ERR_LEN);
    if (err == NULL) {
        abort();
    }

    /* no NUL anywhere: a refusal that does not end its sentence shows */
    memset(err, 0x7f, ERR_LEN);

    rc = ngx_http_malloc_origin_check(h[0], h[1], h[2], scheme, list, err);

    check(rc == NGX_HTTP_MALLOC_ORIGIN_OK
          || rc == NGX_HTTP_MALLOC_ORIGIN_TRUSTED
          || rc == NGX_HTTP_MALLOC_ORIGIN_CROSS_SITE
          || rc == NGX_HTTP_MALLOC_ORIGIN_MISMATCH,
          "one of the four codes");

    check(h[0].data != NULL || h[1].data != NULL
          || rc == NGX_HTTP_MALLOC_ORIGIN_OK,
          "without Sec-Fetch-Site and Origin, OK");

    check(rc != NGX_HTTP_MALLOC_ORIGIN_TRUSTED
          || (h[1].data != NULL && listed(h[1], list)),
          "TRUSTED only for an Origin in the list");

    check(rc == expected(h[0], h[1], h[2], scheme, list),
          "the result of the rules");

    if (rc == NGX_HTTP_MALLOC_ORIGIN_CROSS_SITE) {
        check(origin_sentence(err), "a refusal leaves a printable sentence");
        check(strncmp(err, SITE_QUOTE, sizeof(SITE_QUOTE) - 1) == 0
              && quoted(err + sizeof(SITE_QUOTE) - 1, h[0]) != NULL,
              "a CROSS_SITE refusal quotes Sec-Fetch-Site");

    } else if (rc == NGX_HTTP_MALLOC_ORIGIN_MISMATCH) {
        check(origin_sentence(err), "a refusal leaves a printable sentence");

        p = NULL;

        if (strncmp(err, ORIGIN_QUOTE, sizeof(ORIGIN_QUOTE) - 1) == 0) {
            p = quoted(err + sizeof(ORIGIN_QUOTE) - 1, h[1]);
        }

        check(p != NULL, "a MISMATCH refusal quotes Origin");
        check((strncmp(p, HOST_QUOTE, sizeof(HOST_QUOTE) - 1) == 0
               && quoted(p + sizeof(HOST_QUOTE) - 1, h[2]) != NULL)
              || (strncmp(p, SCHEME_QUOTE, sizeof(SCHEME_QUOTE) - 1) == 0
                  && strncmp(p + sizeof(SCHEME_QUOTE) - 1, scheme,
                             strlen(scheme)) == 0
                  && p[sizeof(SCHEME_QUOTE) - 1 + strlen(scheme)] == ':'),
              "a MISMATCH refusal quotes Host, or names the scheme");
    }

    if (h[1].data != NULL) {
        check_valid(h[1], h[2], scheme);
    }

    for (k = 0; k < 3; k++) {
        free((void *) h[k].data);
    }

    free(list);
    free(err);

    return 0;
}
