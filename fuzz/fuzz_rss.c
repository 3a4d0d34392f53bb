
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * libFuzzer target for the parts of RSS (ngx_http_malloc_rss.c).
 *
 * Input: one byte, the number of known ranges (up to 20, more than the
 * parser tells apart); 16 bytes per range (start, size); 16 bytes of
 * jemalloc's figures (allocated, resident); one byte that cuts the rest
 * into pieces of that many bytes (0: whole); then the smaps text.
 *
 * Whatever the input: no figure passes NGX_HTTP_MALLOC_RSS_MAX; unless
 * saturated, the parts add up to rss and the zones to shared_zones; the
 * sentence comparing an empty reading with this one is printable and
 * fits its buffer.
 */


#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ngx_http_malloc_rss.h"


int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
static void check(int cond, const char *what);
static uint64_t take64(const uint8_t **data, size_t *size);


static void
check(int cond, const char *what)
{
    if (!cond) {
        fprintf(stderr, "fuzz_rss: invariant broken: %s\n", what);
        abort();
    }
}


static uint64_t
take64(const uint8_t **data, size_t *size)
{
    uint64_t  v;

    v = 0;

    if (*size >= 8) {
        memcpy(&v, *data, 8);
        *data += 8;
        *size -= 8;
    }

    return v;
}


int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int                            k;
    char                          *piece;
    size_t                         i, n, nranges, cut, len;
    uint64_t                       sum, zones;
    ngx_http_malloc_rss_t          r, zero;
    ngx_http_malloc_rss_parser_t   p;
    ngx_http_malloc_je_stats_t     je;
    ngx_http_malloc_rss_range_t    ranges[20];
    char                           text[NGX_HTTP_MALLOC_RSS_TEXT_LEN];
    const char                    *names[NGX_HTTP_MALLOC_RSS_ZONES];

    if (size < 1) {
        return 0;
    }

    nranges = data[0] % 21;
    data++;
    size--;

    for (i = 0; i < nranges; i++) {
        ranges[i].start = (uintptr_t) take64(&data, &size);
        ranges[i].size = (size_t) take64(&data, &size);
    }

    memset(&je, 0, sizeof(je));
    je.allocated = (size_t) take64(&data, &size);
    je.resident = (size_t) take64(&data, &size);

    cut = 0;

    if (size > 0) {
        cut = data[0];
        data++;
        size--;
    }

    ngx_http_malloc_rss_init(&p, ranges, nranges);

    /* each piece an exact copy, so that ASan sees a read past its end */

    for (i = 0; i < size; i += n) {
        n = (cut == 0) ? size : cut;

        if (n > size - i) {
            n = size - i;
        }

        piece = malloc(n);
        if (piece == NULL) {
            return 0;
        }

        memcpy(piece, data + i, n);
        ngx_http_malloc_rss_feed(&p, piece, n);
        free(piece);
    }

    ngx_http_malloc_rss_done(&p, &je, &r);

    check(r.nzones <= NGX_HTTP_MALLOC_RSS_ZONES, "nzones");

    sum = 0;

    for (k = 0; k < NGX_HTTP_MALLOC_RSS_PARTS; k++) {
        check(ngx_http_malloc_rss_part(&r, k) <= NGX_HTTP_MALLOC_RSS_MAX,
              "a part passes the maximum");
        sum += ngx_http_malloc_rss_part(&r, k);
    }

    check(r.rss <= NGX_HTTP_MALLOC_RSS_MAX, "rss passes the maximum");
    check(r.allocated <= je.allocated, "allocated above jemalloc's");

    if (r.rss < NGX_HTTP_MALLOC_RSS_MAX) {
        check(sum == r.rss, "the parts do not add up to rss");
    }

    zones = 0;

    for (i = 0; i < r.nzones; i++) {
        check(r.zone[i] <= NGX_HTTP_MALLOC_RSS_MAX, "a zone's figure");
        zones += r.zone[i];
    }

    if (r.shared_zones < NGX_HTTP_MALLOC_RSS_MAX) {
        check(zones == r.shared_zones, "the zones do not add up");
    }

    for (i = 0; i < NGX_HTTP_MALLOC_RSS_ZONES; i++) {
        names[i] = (i % 2) ? "a\"zone\\" : "z";
    }

    memset(&zero, 0, sizeof(zero));
    zero.nzones = r.nzones;

    len = ngx_http_malloc_rss_sentence(&zero, &r, "the start", names, text);

    check(len < NGX_HTTP_MALLOC_RSS_TEXT_LEN && strlen(text) == len,
          "the sentence's length");

    for (i = 0; i < len; i++) {
        check(text[i] >= 0x20 && text[i] < 0x7f, "an unprintable byte");
    }

    (void) ngx_http_malloc_rss_sentence(&r, &zero, "x", NULL, text);

    return 0;
}
