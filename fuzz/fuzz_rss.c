
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
 * fits its buffer.  The mappings (ngx_http_malloc_maps.c): a baseline of
 * the text's first half, in address order, within its table; the whole
 * compared with it names at most NGX_HTTP_MALLOC_MAPS_TOP, most first,
 * each of a MiB or more and no more than its RSS, printable; the whole
 * compared with a baseline of itself names none unless the table left
 * some out.
 */


#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ngx_http_malloc_rss.h"


int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
static void check(int cond, const char *what);
static uint64_t take64(const uint8_t **data, size_t *size);
static void feed(const uint8_t *data, size_t size, size_t cut,
    const ngx_http_malloc_rss_range_t *ranges, size_t nranges,
    const ngx_http_malloc_je_stats_t *je,
    ngx_http_malloc_maps_base_t *base, ngx_http_malloc_maps_t *top,
    ngx_http_malloc_rss_t *r);
static void check_maps(const ngx_http_malloc_maps_base_t *base,
    const ngx_http_malloc_maps_t *top);


static ngx_http_malloc_maps_base_t  base;


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


/* each piece an exact copy, so that ASan sees a read past its end */

static void
feed(const uint8_t *data, size_t size, size_t cut,
    const ngx_http_malloc_rss_range_t *ranges, size_t nranges,
    const ngx_http_malloc_je_stats_t *je, ngx_http_malloc_maps_base_t *b,
    ngx_http_malloc_maps_t *top, ngx_http_malloc_rss_t *r)
{
    char                          *piece;
    size_t                         i, n;
    ngx_http_malloc_rss_parser_t   p;

    ngx_http_malloc_rss_init(&p, ranges, nranges);
    ngx_http_malloc_rss_maps(&p, b, top);

    for (i = 0; i < size; i += n) {
        n = (cut == 0) ? size : cut;

        if (n > size - i) {
            n = size - i;
        }

        piece = malloc(n);
        if (piece == NULL) {
            abort();
        }

        memcpy(piece, data + i, n);
        ngx_http_malloc_rss_feed(&p, piece, n);
        free(piece);
    }

    ngx_http_malloc_rss_done(&p, je, r);
}


static void
check_maps(const ngx_http_malloc_maps_base_t *b,
    const ngx_http_malloc_maps_t *top)
{
    size_t  i, k, len;
    char    text[NGX_HTTP_MALLOC_MAPS_TEXT_LEN];

    check(b->ready && b->n <= NGX_HTTP_MALLOC_MAPS_BASE, "the baseline");

    for (i = 1; i < b->n; i++) {
        check(b->e[i - 1].start <= b->e[i].start, "the baseline's order");
    }

    check(top->n <= NGX_HTTP_MALLOC_MAPS_TOP, "too many named");

    for (i = 0; i < top->n; i++) {
        check(top->m[i].grew >= NGX_HTTP_MALLOC_MAPS_FLOOR
              && top->m[i].grew <= top->m[i].rss, "a growth");
        check(i == 0 || top->m[i - 1].grew >= top->m[i].grew, "the order");
        check(top->m[i].kind >= 0
              && top->m[i].kind < NGX_HTTP_MALLOC_MAP_KINDS, "a kind");

        len = strnlen(top->m[i].name, NGX_HTTP_MALLOC_MAPS_NAME);
        check(len < NGX_HTTP_MALLOC_MAPS_NAME, "a name's end");

        for (k = 0; k < len; k++) {
            check(top->m[i].name[k] >= 0x20 && top->m[i].name[k] < 0x7f,
                  "an unprintable name");
        }
    }

    len = ngx_http_malloc_maps_text(top, "the start", NULL, 0, text);
    check(len < NGX_HTTP_MALLOC_MAPS_TEXT_LEN && strlen(text) == len
          && (len == 0) == (top->n == 0), "the words' length");

    for (i = 0; i < len; i++) {
        check(text[i] >= 0x20 && text[i] < 0x7f, "an unprintable word");
    }
}


int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int                            k;
    size_t                         i, nranges, cut, len;
    uint64_t                       sum, zones;
    ngx_http_malloc_rss_t          r, zero;
    ngx_http_malloc_maps_t         top;
    ngx_http_malloc_je_stats_t     je;
    ngx_http_malloc_rss_kernel_t   kernel;
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

    /* the mappings: the first half's, then the whole compared */

    feed(data, size / 2, cut, ranges, nranges, &je, &base, NULL, &r);
    feed(data, size, cut, ranges, nranges, &je, &base, &top, &r);
    check_maps(&base, &top);

    /* the same, none grew, unless remembered mappings were left out */

    feed(data, size, cut, ranges, nranges, &je, &base, NULL, &r);
    feed(data, size, 0, ranges, nranges, &je, &base, &top, &r);
    check_maps(&base, &top);
    check(base.left > 0 || top.n == 0, "no change named a mapping");

    feed(data, size, cut, ranges, nranges, &je, NULL, NULL, &r);

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

    /* the same bytes as /proc/<pid>/status, and the reading rebased */

    if (ngx_http_malloc_rss_status((const char *) data, size, &kernel) == 0
        && r.rss < NGX_HTTP_MALLOC_RSS_MAX)
    {
        ngx_http_malloc_rss_rebase(&r, &kernel);

        sum = 0;

        for (k = 0; k < NGX_HTTP_MALLOC_RSS_PARTS; k++) {
            sum += ngx_http_malloc_rss_part(&r, k);
        }

        check(r.rss >= NGX_HTTP_MALLOC_RSS_MAX || sum == r.rss,
              "rebased, the parts do not add up");
    }

    return 0;
}
