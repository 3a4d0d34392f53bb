
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * libFuzzer target for the profile.proto encoder.
 *
 * Input: a dump.  When the parser accepts it, the heap is encoded with a
 * resolver that gives few distinct names (so functions are shared by
 * addresses) and mapping indexes both in and out of range.  The output
 * must gunzip, and its top-level fields must be well-formed protobuf with
 * one sample per stack.
 */


#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "ngx_http_malloc_pprof.h"


int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
static void check(int cond, const char *what);
static const char *resolve(void *data, uint64_t addr, int *map);
static int varint(const unsigned char **p, const unsigned char *end,
    uint64_t *v);
static size_t count_samples(const unsigned char *p, size_t len);


static ngx_http_malloc_map_t  maps[] = {
    { 0x400000, 0x500000, 0, "/usr/sbin/nginx", "0123abcd", 0, 0 },
    { 0x7f0000000000, 0x7f0000100000, 0x1000, "/lib/libc.so.6", NULL, 0, -1 },
};


static void
check(int cond, const char *what)
{
    if (!cond) {
        fprintf(stderr, "fuzz_pprof: invariant broken: %s\n", what);
        abort();
    }
}


static const char *
resolve(void *data, uint64_t addr, int *map)
{
    static char  buf[32];

    (void) data;

    /* -1, 0, 1 and 2 (out of range) */

    *map = (int) (addr % 4) - 1;

    if (addr & 0x10) {
        snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long) addr);

    } else {
        snprintf(buf, sizeof(buf), "f%u", (unsigned) (addr % 5));
    }

    return buf;
}


static int
varint(const unsigned char **p, const unsigned char *end, uint64_t *v)
{
    int  shift;

    *v = 0;

    for (shift = 0; shift < 64; shift += 7) {
        if (*p >= end) {
            return -1;
        }

        *v |= (uint64_t) (**p & 0x7f) << shift;

        if ((*(*p)++ & 0x80) == 0) {
            return 0;
        }
    }

    return -1;
}


/* the number of Profile.sample fields, or SIZE_MAX if malformed */

static size_t
count_samples(const unsigned char *p, size_t len)
{
    size_t                n;
    uint64_t              tag, v;
    const unsigned char  *end;

    n = 0;
    end = p + len;

    while (p < end) {
        if (varint(&p, end, &tag) != 0) {
            return SIZE_MAX;
        }

        switch (tag & 7) {

        case 0:
            if (varint(&p, end, &v) != 0) {
                return SIZE_MAX;
            }

            break;

        case 2:
            if (varint(&p, end, &v) != 0 || v > (uint64_t) (end - p)) {
                return SIZE_MAX;
            }

            p += v;
            break;

        default:
            return SIZE_MAX;
        }

        if ((tag >> 3) == 2) {
            n++;
        }
    }

    return n;
}


int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int                       rc;
    char                      err[NGX_HTTP_MALLOC_PPROF_ERR_LEN];
    uLongf                    raw_len;
    unsigned char            *copy, *raw;
    z_stream                  z;
    ngx_http_malloc_heap_t    heap;
    ngx_http_malloc_mbuf_t    out;
    ngx_http_malloc_pprof_t   pp;
    ngx_http_malloc_arena_t  *arena;

    arena = ngx_http_malloc_arena_create();
    copy = malloc(size ? size : 1);

    if (arena == NULL || copy == NULL) {
        abort();
    }

    memcpy(copy, data, size);

    ngx_http_malloc_heap_init(&heap, arena);

    if (ngx_http_malloc_heap_add(&heap, copy, size, err) != 0) {
        goto done;
    }

    memset(&pp, 0, sizeof(pp));
    pp.heap = &heap;
    pp.maps = maps;
    pp.nmaps = sizeof(maps) / sizeof(maps[0]);
    pp.resolve = resolve;
    pp.data = NULL;
    pp.time_nanos = 1;
    pp.duration_nanos = -1;
    pp.arena = arena;

    memset(&out, 0, sizeof(out));
    err[0] = '\0';

    rc = ngx_http_malloc_pprof_encode(&pp, &out, err);
    check(rc == 0, "the encoder takes any parsed heap");
    check(out.len > 18 && out.data[0] == 0x1f && out.data[1] == 0x8b,
          "the output is gzip");

    /* a frame takes 2 bytes of text and at most about 60 of proto */

    raw_len = 1024 * 1024 + size * 128;
    raw = malloc(raw_len);
    if (raw == NULL) {
        abort();
    }

    memset(&z, 0, sizeof(z));
    check(inflateInit2(&z, 15 + 16) == Z_OK, "inflate init");

    z.next_in = out.data;
    z.avail_in = out.len;
    z.next_out = raw;
    z.avail_out = raw_len;

    rc = inflate(&z, Z_FINISH);
    check(rc == Z_STREAM_END && z.avail_in == 0, "the output gunzips");

    check(count_samples(raw, z.total_out) == heap.nstacks,
          "well-formed protobuf with one sample per stack");

    inflateEnd(&z);
    free(raw);
    ngx_http_malloc_mbuf_free(&out);

done:

    free(copy);
    ngx_http_malloc_arena_destroy(arena);

    return 0;
}
