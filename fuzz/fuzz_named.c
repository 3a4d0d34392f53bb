
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * libFuzzer target for the heap viewer's JSON (ngx_http_malloc_named.c).
 *
 * The first byte picks the input.  Even: the rest is a dump; when the
 * parser accepts it, the heap is encoded with a resolver that gives few
 * distinct names, some of them with quotes, backslashes, control and high
 * bytes, and some NULL.  The output must be JSON that jansson reads back,
 * with at most the heap's stacks (those with the same names merge), a
 * value row per stack, and only name indexes in range.  Odd: the rest is
 * a profile.proto (a snapshot), which is gzipped here so that the reader
 * sees the fuzzer's bytes; whatever it accepts must write as JSON, with a
 * base when the byte is 3 mod 4: itself, against which nothing is judged
 * to have changed, and every margin and limit is a number.  Either way,
 * what was named must also encode as an OTLP request, with a cap of
 * three samples a profile, that reads back as protobuf: no profile over
 * the cap, a stack per sample sent (what the cap leaves out folded into
 * one), at most a function per name, a location per function, the empty
 * link only, and every string valid UTF-8, by a check of its own.
 */


#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <zlib.h>

#include "ngx_http_malloc_named.h"
#include "ngx_http_malloc_otlp.h"
#include "../t/unit/utf8_strict.h"


int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
static void otlp(ngx_http_malloc_named_t *np);
static int field(const unsigned char **p, const unsigned char *end,
    uint64_t *key, const unsigned char **msg, uint64_t *len);
static void check(int cond, const char *what);
static void same(const ngx_http_malloc_named_t *np);
static const char *resolve(void *data, uint64_t addr, int *map);
static void snapshot(const uint8_t *data, size_t size, int base);
static void profiles(const unsigned char *p, const unsigned char *end,
    int depth, size_t cap);


static void
check(int cond, const char *what)
{
    if (!cond) {
        fprintf(stderr, "fuzz_named: invariant broken: %s\n", what);
        abort();
    }
}


static const char *
resolve(void *data, uint64_t addr, int *map)
{
    static char  buf[32];

    (void) data;

    *map = -1;

    switch (addr % 4) {

    case 0:
        return NULL;

    case 1:
        return "q\"b\\s\x01\x7f\xfe";

    default:
        snprintf(buf, sizeof(buf), "f%u", (unsigned) (addr % 7));
        return buf;
    }
}


/* a gzipped profile.proto read as a snapshot, then written */

static void
snapshot(const uint8_t *data, size_t size, int base)
{
    int                       rc;
    json_t                   *j;
    uLongf                    len;
    z_stream                  z;
    json_error_t              jerr;
    unsigned char            *gz;
    ngx_http_malloc_mbuf_t    out;
    ngx_http_malloc_arena_t  *arena;
    ngx_http_malloc_named_t   np;
    char                      err[NGX_HTTP_MALLOC_NAMED_ERR_LEN];

    len = compressBound(size) + 64;
    gz = malloc(len);
    arena = ngx_http_malloc_arena_create();

    if (gz == NULL || arena == NULL) {
        abort();
    }

    memset(&z, 0, sizeof(z));
    check(deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY)
          == Z_OK, "deflate init");

    z.next_in = (unsigned char *) data;
    z.avail_in = size;
    z.next_out = gz;
    z.avail_out = len;

    rc = deflate(&z, Z_FINISH);
    check(rc == Z_STREAM_END, "deflate");
    len = z.total_out;
    deflateEnd(&z);

    ngx_http_malloc_named_init(&np, arena);

    if (ngx_http_malloc_named_pprof(&np, gz, len, 0, err) == 0
        && (!base || ngx_http_malloc_named_pprof(&np, gz, len, 1, err) == 0))
    {
        memset(&out, 0, sizeof(out));
        check(ngx_http_malloc_named_write(&np, 0, &out, err) == 0,
              "what was read is written");

        j = json_loadb((char *) out.data, out.len, 0, &jerr);
        check(j != NULL, "the snapshot's output is JSON");
        check(json_array_size(json_object_get(j, "stacks")) == np.nstacks,
              "a stack per stack read");
        check(!base || json_object_get(j, "base_values") != NULL,
              "a base has its values");

        if (base) {
            check(json_array_size(json_object_get(j, "margins"))
                  == np.nstacks, "a margin per stack");
            check(json_is_string(json_object_get(
                      json_object_get(j, "comparison"), "detection")),
                  "the detection limit in words");
            same(&np);
        }

        json_decref(j);
        ngx_http_malloc_mbuf_free(&out);

        otlp(&np);
    }

    ngx_http_malloc_arena_destroy(arena);
    free(gz);
}


/* a profile judged against itself */

static void
same(const ngx_http_malloc_named_t *np)
{
    size_t  i;

    check(np->compared, "a comparison is judged as it is written");

    for (i = 0; i < np->nstacks; i++) {
        check(np->judged[i] == 0, "a profile against itself did not change");
        check(isfinite(np->margins[i]) && np->margins[i] >= 0,
              "a margin is a number");
    }

    check(np->noise.grew == 0 && np->noise.shrank == 0,
          "nothing grew or shrank against itself");
    check(isfinite(np->noise.limit) && np->noise.limit >= 0
          && isfinite(np->noise.floor) && np->noise.floor >= 0,
          "the limits are numbers");
}


/*
 * A field's key and, when it is length-delimited, its bytes; a varint's
 * or fixed64's value in len.  -1 when malformed.
 */

static int
field(const unsigned char **p, const unsigned char *end, uint64_t *key,
    const unsigned char **msg, uint64_t *len)
{
    int       k, shift;
    uint64_t  v[2];

    for (k = 0; k < 2; k++) {
        v[k] = 0;

        if (k == 1 && (v[0] & 7) == 1) {
            if (end - *p < 8) {
                return -1;
            }

            *p += 8;
            break;
        }

        for (shift = 0; ; shift += 7) {
            if (*p == end || shift > 63) {
                return -1;
            }

            v[k] |= (uint64_t) (**p & 0x7f) << shift;

            if ((*(*p)++ & 0x80) == 0) {
                break;
            }
        }

        /* the encoder writes varints, fixed64s and bytes only */

        if (k == 0 && (v[0] & 7) != 0 && (v[0] & 7) != 1
            && (v[0] & 7) != 2)
        {
            return -1;
        }
    }

    *key = v[0];
    *msg = *p;
    *len = v[1];

    if ((v[0] & 7) == 2) {
        if (v[1] > (uint64_t) (end - *p)) {
            return -1;
        }

        *p += v[1];
    }

    return 0;
}


/* each Profile of the request (ResourceProfiles 1, ScopeProfiles 2) */

static void
profiles(const unsigned char *p, const unsigned char *end, int depth,
    size_t cap)
{
    uint64_t              key, len;
    size_t                samples;
    const unsigned char  *msg;

    samples = 0;

    while (p < end) {
        check(field(&p, end, &key, &msg, &len) == 0, "the request reads");

        if ((key & 7) != 2) {
            continue;
        }

        if (depth < 3 && key >> 3 == (depth == 0 ? 1u : 2u)) {
            profiles(msg, msg + len, depth + 1, cap);

        } else if (depth == 3 && key >> 3 == 2) {
            samples++;
        }
    }

    check(depth != 3 || samples <= cap, "no more samples than the cap");
}


static void
otlp(ngx_http_malloc_named_t *np)
{
    size_t                         cap, sent, nstrings;
    uint64_t                       key, len, n[8];
    const unsigned char           *p, *end, *msg, *dict;
    ngx_http_malloc_mbuf_t         out;
    ngx_http_malloc_otlp_t         ot;
    ngx_http_malloc_otlp_result_t  result;
    ngx_http_malloc_otlp_attr_t    a = { "nginx.malloc.source", "fuzz", 0 };
    char                           err[NGX_HTTP_MALLOC_OTLP_ERR_LEN];

    memset(&ot, 0, sizeof(ot));
    memset(&out, 0, sizeof(out));
    memset(n, 0, sizeof(n));

    /* a cap that few stacks pass, so that folding is tried too */
    cap = 3;

    ot.np = np;
    ot.arena = np->arena;
    ot.resource = &a;
    ot.nresource = 1;
    ot.attrs = &a;
    ot.nattrs = 1;
    ot.max_samples = cap;
    ot.result = &result;

    check(ngx_http_malloc_otlp_encode(&ot, &out, err) == 0,
          "what was named encodes as OTLP");

    profiles(out.data, out.data + out.len, 0, cap);

    p = out.data;
    end = out.data + out.len;
    dict = NULL;
    len = 0;

    while (p < end) {
        check(field(&p, end, &key, &msg, &len) == 0
              && (key & 7) == 2, "the request reads");

        if (key >> 3 == 2) {
            dict = msg;
            break;
        }
    }

    check(dict != NULL, "a dictionary");

    p = dict;
    end = dict + len;
    nstrings = 0;

    while (p < end) {
        check(field(&p, end, &key, &msg, &len) == 0 && (key & 7) == 2,
              "the dictionary reads");
        check(key >> 3 >= 1 && key >> 3 <= 7, "only its tables");
        n[key >> 3]++;

        if (key >> 3 == 5) {
            check(utf8_strict(msg, len), "every string is UTF-8");
            check(nstrings++ > 0 || len == 0, "string 0 is \"\"");
        }
    }

    sent = (result.stacks > cap) ? cap : result.stacks;

    check(result.stacks <= np->nstacks, "no more stacks than named");
    check(result.folded == (result.stacks > cap ? result.stacks - cap + 1
                                                : 0),
          "what the cap leaves out is folded into one");
    check(n[7] == sent + 1, "a stack per sample sent, after the zero");
    check(n[3] <= np->nnames + 2, "a function per name at most, and the "
          "folded one, after the zero");
    check(n[2] == n[3], "a location per function");
    check(n[4] == 1, "the empty link only");

    ngx_http_malloc_mbuf_free(&out);
}


int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t                     i, k, nnames, nnodes;
    json_t                    *j, *names, *stacks, *values, *nodes;
    json_error_t               jerr;
    unsigned char             *copy;
    ngx_http_malloc_heap_t     heap;
    ngx_http_malloc_mbuf_t     out;
    ngx_http_malloc_arena_t   *arena;
    ngx_http_malloc_named_t    np;
    char                       err[NGX_HTTP_MALLOC_HEAP_ERR_LEN];

    if (size > 0 && (data[0] & 1)) {
        snapshot(data + 1, size - 1, (data[0] & 3) == 3);
        return 0;
    }

    if (size > 0) {
        data++;
        size--;
    }

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

    ngx_http_malloc_named_init(&np, arena);

    memset(&out, 0, sizeof(out));

    check(ngx_http_malloc_named_heap(&np, &heap, NULL, 0, resolve, NULL, 0,
                                     err) == 0
          && ngx_http_malloc_named_write(&np, size, &out, err) == 0,
          "the encoder takes any parsed heap");

    j = json_loadb((char *) out.data, out.len, 0, &jerr);
    check(j != NULL, "the output is JSON");

    names = json_object_get(j, "names");
    stacks = json_object_get(j, "stacks");
    values = json_object_get(j, "values");
    nnames = json_array_size(names);

    /* stacks whose frames have the same names are one */
    check(json_array_size(stacks) <= heap.nstacks, "no more stacks");
    check(json_array_size(values) == json_array_size(stacks),
          "a value row per stack");

    /* the tree: names in range, parents before their children */

    nodes = json_object_get(j, "nodes");
    nnodes = json_array_size(nodes) / 2;
    check(json_array_size(nodes) % 2 == 0, "two integers a node");

    for (i = 0; i < nnodes; i++) {
        check((size_t) json_integer_value(json_array_get(nodes, 2 * i))
              < nnames, "name indexes in range");
        check((size_t) json_integer_value(json_array_get(nodes, 2 * i + 1))
              <= i, "a parent before its child");
    }

    for (i = 0; i < json_array_size(stacks); i++) {
        k = (size_t) json_integer_value(json_array_get(stacks, i));
        check(k < nnodes, "a stack's node in range");
    }

    check(json_array_size(json_object_get(j, "raw")) == nnames
          && json_array_size(json_object_get(j, "name_files")) == nnames,
          "a symbol and a file per name");

    json_decref(j);
    ngx_http_malloc_mbuf_free(&out);

    otlp(&np);

done:

    ngx_http_malloc_arena_destroy(arena);
    free(copy);

    return 0;
}
