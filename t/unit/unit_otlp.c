
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * Unit tests for the OTLP profiles encoder (ngx_http_malloc_otlp.c): a
 * heap is named, encoded, and the request read back field by field with
 * the field numbers of opentelemetry-proto's .proto files, by a reader
 * written here; the rules profcheck (open-telemetry/sig-profiling)
 * applies to the dictionary are checked on every request: zero entries,
 * nothing unreferenced, no string twice.  And UTF-8: every string made
 * valid, each ill-formed sequence replaced by U+FFFD.
 */


#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "utf8_strict.h"
#include "ngx_http_malloc_otlp.h"


#define STR(s)  (s), sizeof(s) - 1

/* two stacks sharing their allocating frame 0x10, with accum */
#define DUMP                                                                  \
    "heap_v2/524288\n"                                                        \
    "  t*: 6: 3072 [10: 5120]\n"                                              \
    "@ 0x10 0x20 0x30\n"                                                      \
    "  t*: 4: 2048 [6: 3072]\n"                                               \
    "@ 0x10 0x40\n"                                                           \
    "  t*: 2: 1024 [4: 2048]\n"

#define DUMP_NO_ACCUM                                                         \
    "heap_v2/524288\n"                                                        \
    "  t*: 1: 512 [0: 0]\n"                                                   \
    "@ 0x10 0x20\n"                                                           \
    "  t*: 1: 512 [0: 0]\n"

#define MAX  64


/* the resolver encode() names the frames with */
static const char *(*resolver)(void *data, uint64_t addr, int *map);


static ngx_http_malloc_map_t  maps[] = {
    { 0x30, 0x50, 0, "/usr/sbin/nginx", "ab12", 0, -1 },
    { 0x10, 0x30, 0, "/usr/lib/nginx/modules/ngx_http_t_module.so", NULL,
      0, -1 }
};


/* a message's bytes */
typedef struct {
    const unsigned char  *p;
    size_t                len;
} msg_t;


/* one field of a message */
typedef struct {
    unsigned              field;
    unsigned              wire;
    uint64_t              v;        /* varint, fixed64 */
    msg_t                 m;        /* length-delimited */
} field_t;


typedef struct {
    msg_t                 strings[MAX];
    size_t                nstrings;
    msg_t                 functions[MAX];
    size_t                nfunctions;
    msg_t                 locations[MAX];
    size_t                nlocations;
    msg_t                 mappings[MAX];
    size_t                nmappings;
    msg_t                 stacks[MAX];
    size_t                nstacks;
    msg_t                 attributes[MAX];
    size_t                nattributes;
    msg_t                 links[MAX];
    size_t                nlinks;
    msg_t                 profiles[MAX];
    size_t                nprofiles;
    msg_t                 resource;
    msg_t                 scope;
    int                   bad;
} request_t;


static int next_field(msg_t *m, field_t *f);
static uint64_t get_uint(msg_t m, unsigned field);
static msg_t get_msg(msg_t m, unsigned field, size_t nth);
static size_t packed(msg_t m, unsigned field, uint64_t *out, size_t max);
static const char *str(request_t *rq, uint64_t i);
static int is_msg(msg_t m, const char *want);
static void read_request(const unsigned char *p, size_t len, request_t *rq);
static int encode(const char *text, size_t len, ngx_http_malloc_otlp_t *ot,
    ngx_http_malloc_mbuf_t *out, ngx_http_malloc_arena_t *arena,
    ngx_http_malloc_named_t *np);
static const char *resolve(void *data, uint64_t addr, int *map);
static const char *resolve_bad(void *data, uint64_t addr, int *map);
static size_t rename_grow(const char *sym, char *buf, size_t size);
static int all_valid(request_t *rq);
static int conforms(request_t *rq);
static void mark(unsigned char *seen, size_t n, uint64_t i, int *bad,
    const char *what);
static int64_t sum_samples(msg_t prof, request_t *rq, const char *leaf,
    size_t *nsamples);
static void test_request(void);
static void test_no_accum(void);
static void test_empty(void);
static void test_utf8(void);
static void test_utf8_request(void);
static void test_cap(void);
static void test_shared_strings(void);


static int
next_field(msg_t *m, field_t *f)
{
    int       shift;
    uint64_t  v, key;
    size_t    i;

    for (i = 0; i < 2; i++) {
        v = 0;

        for (shift = 0; ; shift += 7) {
            if (m->len == 0 || shift > 63) {
                return -1;
            }

            v |= (uint64_t) (*m->p & 0x7f) << shift;
            m->len--;

            if ((*m->p++ & 0x80) == 0) {
                break;
            }
        }

        if (i == 0) {
            key = v;
            f->field = (unsigned) (key >> 3);
            f->wire = key & 7;

            if (f->wire == 1) {
                if (m->len < 8) {
                    return -1;
                }

                f->v = 0;

                for (shift = 0; shift < 64; shift += 8) {
                    f->v |= (uint64_t) *m->p++ << shift;
                }

                m->len -= 8;
                return 0;
            }

            if (f->wire != 0 && f->wire != 2) {
                return -1;
            }

            continue;
        }

        if (f->wire == 0) {
            f->v = v;
            return 0;
        }

        if (v > m->len) {
            return -1;
        }

        f->m.p = m->p;
        f->m.len = v;
        m->p += v;
        m->len -= v;
    }

    return 0;
}


static uint64_t
get_uint(msg_t m, unsigned field)
{
    field_t  f;

    while (m.len > 0 && next_field(&m, &f) == 0) {
        if (f.field == field && f.wire != 2) {
            return f.v;
        }
    }

    return 0;
}


static msg_t
get_msg(msg_t m, unsigned field, size_t nth)
{
    field_t  f;
    msg_t    none = { NULL, 0 };

    while (m.len > 0 && next_field(&m, &f) == 0) {
        if (f.field == field && f.wire == 2 && nth-- == 0) {
            return f.m;
        }
    }

    return none;
}


static size_t
packed(msg_t m, unsigned field, uint64_t *out, size_t max)
{
    int       shift;
    size_t    n;
    msg_t     p;
    uint64_t  v;

    p = get_msg(m, field, 0);
    n = 0;

    while (p.len > 0 && n < max) {
        v = 0;

        for (shift = 0; p.len > 0; shift += 7) {
            v |= (uint64_t) (*p.p & 0x7f) << shift;
            p.len--;

            if ((*p.p++ & 0x80) == 0) {
                break;
            }
        }

        out[n++] = v;
    }

    return n;
}


static const char *
str(request_t *rq, uint64_t i)
{
    static char  buf[MAX][256];
    static int   k;
    char        *s;

    if (i >= rq->nstrings) {
        return "(out of the table)";
    }

    s = buf[k++ % MAX];
    snprintf(s, 256, "%.*s", (int) rq->strings[i].len,
             (const char *) rq->strings[i].p);

    return s;
}


static int
is_msg(msg_t m, const char *want)
{
    return m.len == strlen(want) && memcmp(m.p, want, m.len) == 0;
}


static void
read_request(const unsigned char *p, size_t len, request_t *rq)
{
    msg_t    top, dict, rp, sp;
    field_t  f;
    size_t   i;

    memset(rq, 0, sizeof(request_t));

    top.p = p;
    top.len = len;

    rp = get_msg(top, 1, 0);
    dict = get_msg(top, 2, 0);
    rq->resource = get_msg(rp, 1, 0);
    sp = get_msg(rp, 2, 0);
    rq->scope = get_msg(sp, 1, 0);

    for (i = 0; i < MAX; i++) {
        rq->profiles[i] = get_msg(sp, 2, i);

        if (rq->profiles[i].p == NULL) {
            break;
        }
    }

    rq->nprofiles = i;

    while (dict.len > 0) {
        if (next_field(&dict, &f) != 0 || f.wire != 2) {
            rq->bad = 1;
            return;
        }

#define TABLE(num, t)                                                         \
        case num:                                                             \
            if (rq->n##t < MAX) {                                             \
                rq->t[rq->n##t++] = f.m;                                      \
            }                                                                 \
            break

        switch (f.field) {
        TABLE(1, mappings);
        TABLE(2, locations);
        TABLE(3, functions);
        TABLE(5, strings);
        TABLE(6, attributes);
        TABLE(7, stacks);
        TABLE(4, links);
        default:
            rq->bad = 1;
        }
    }
}


static const char *
resolve(void *data, uint64_t addr, int *map)
{
    (void) data;

    *map = (addr >= 0x30) ? 0 : 1;

    switch (addr) {
    case 0x10:
        return "ngx_t_hold";
    case 0x20:
        return "_ZN1t4growEv";
    case 0x30:
        return "main";
    default:
        return "ngx_t_handler";
    }
}

static const char *
resolve_bad(void *data, uint64_t addr, int *map)
{
    (void) data;

    *map = (addr >= 0x30) ? 0 : 1;

    switch (addr) {
    case 0x10:
        return "ngx_\xff_hold";
    case 0x20:
        return "_ZN1t4growEv";
    case 0x30:
        return "ma\xc3";
    default:
        return "ngx_t_handler";
    }
}


/* names that are the encoder's own strings too */

static const char *
resolve_same(void *data, uint64_t addr, int *map)
{
    (void) data;

    *map = (addr >= 0x30) ? 0 : 1;

    switch (addr) {
    case 0x10:
        return "bytes";
    case 0x20:
        return "space";
    case 0x30:
        return "inuse_space";
    default:
        return "ngx_t_handler";
    }
}


/* every string of the request, in the table or out of it */

static int
all_valid(request_t *rq)
{
    size_t  i, bad;
    msg_t   kv, any;

    bad = 0;

    for (i = 0; i < rq->nstrings; i++) {
        if (!utf8_strict(rq->strings[i].p, rq->strings[i].len)) {
            diag("string %zu is not UTF-8: %s", i, str(rq, i));
            bad++;
        }
    }

    for (i = 0; ; i++) {
        kv = get_msg(rq->resource, 1, i);
        if (kv.p == NULL) {
            break;
        }

        any = get_msg(get_msg(kv, 2, 0), 1, 0);
        kv = get_msg(kv, 1, 0);

        bad += !utf8_strict(kv.p, kv.len) + !utf8_strict(any.p, any.len);
    }

    for (i = 1; i < rq->nattributes; i++) {
        any = get_msg(get_msg(rq->attributes[i], 2, 0), 1, 0);
        bad += !utf8_strict(any.p, any.len);
    }

    for (i = 1; i <= 2; i++) {
        any = get_msg(rq->scope, i, 0);
        bad += !utf8_strict(any.p, any.len);
    }

    return bad == 0;
}


static void
mark(unsigned char *seen, size_t n, uint64_t i, int *bad, const char *what)
{
    if (i >= n) {
        diag("%s %llu is out of its table of %zu", what,
             (unsigned long long) i, n);
        (*bad)++;
        return;
    }

    seen[i] = 1;
}


/*
 * profcheck's rules for the dictionary, with its checks of duplicates
 * and orphans on: each table's entry 0 is empty, every index is within
 * its table, every entry is referred to, and no string is there twice.
 * The number of faults.
 */

static int
conforms(request_t *rq)
{
    int            bad;
    size_t         i, j, k, n, counts[6];
    msg_t          prof, m, vt, firsts[6];
    uint64_t       v[MAX];
    unsigned char  str_s[MAX], map_s[MAX], loc_s[MAX], fn_s[MAX],
                   attr_s[MAX], stack_s[MAX], link_s[MAX];

    static const char  *names[] = { "mapping", "location", "function",
                                    "link", "attribute", "stack" };

    bad = 0;

    if (rq->nstrings == 0 || rq->strings[0].len != 0) {
        diag("string_table[0] is not \"\"");
        bad++;
    }

    counts[0] = rq->nmappings;
    counts[1] = rq->nlocations;
    counts[2] = rq->nfunctions;
    counts[3] = rq->nlinks;
    counts[4] = rq->nattributes;
    counts[5] = rq->nstacks;
    firsts[0] = rq->mappings[0];
    firsts[1] = rq->locations[0];
    firsts[2] = rq->functions[0];
    firsts[3] = rq->links[0];
    firsts[4] = rq->attributes[0];
    firsts[5] = rq->stacks[0];

    for (i = 0; i < 6; i++) {
        if (counts[i] == 0 || firsts[i].len != 0) {
            diag("%s_table[0] is not the empty message", names[i]);
            bad++;
        }
    }

    memset(str_s, 0, sizeof(str_s));
    memset(map_s, 0, sizeof(map_s));
    memset(loc_s, 0, sizeof(loc_s));
    memset(fn_s, 0, sizeof(fn_s));
    memset(attr_s, 0, sizeof(attr_s));
    memset(stack_s, 0, sizeof(stack_s));
    memset(link_s, 0, sizeof(link_s));

    str_s[0] = map_s[0] = loc_s[0] = fn_s[0] = attr_s[0] = stack_s[0]
             = link_s[0] = 1;

    for (i = 0; i < rq->nprofiles; i++) {
        prof = rq->profiles[i];

        for (j = 1; j <= 5; j += 4) {
            vt = get_msg(prof, j, 0);
            mark(str_s, rq->nstrings, get_uint(vt, 1), &bad, "type");
            mark(str_s, rq->nstrings, get_uint(vt, 2), &bad, "unit");
        }

        n = packed(prof, 11, v, MAX);

        for (k = 0; k < n; k++) {
            mark(attr_s, rq->nattributes, v[k], &bad, "attribute");
        }

        for (j = 0; ; j++) {
            m = get_msg(prof, 2, j);
            if (m.p == NULL) {
                break;
            }

            mark(stack_s, rq->nstacks, get_uint(m, 1), &bad, "stack");
            mark(link_s, rq->nlinks, get_uint(m, 3), &bad, "link");

            if (packed(m, 4, v, MAX) != 1) {
                diag("a sample without exactly one value");
                bad++;
            }
        }
    }

    for (i = 1; i < rq->nstacks; i++) {
        n = packed(rq->stacks[i], 1, v, MAX);

        for (k = 0; k < n; k++) {
            mark(loc_s, rq->nlocations, v[k], &bad, "location");
        }
    }

    for (i = 1; i < rq->nlocations; i++) {
        mark(map_s, rq->nmappings, get_uint(rq->locations[i], 1), &bad,
             "mapping");

        for (j = 0; ; j++) {
            m = get_msg(rq->locations[i], 3, j);
            if (m.p == NULL) {
                break;
            }

            mark(fn_s, rq->nfunctions, get_uint(m, 1), &bad, "function");
        }
    }

    for (i = 1; i < rq->nmappings; i++) {
        mark(str_s, rq->nstrings, get_uint(rq->mappings[i], 4), &bad,
             "filename");

        n = packed(rq->mappings[i], 5, v, MAX);

        for (k = 0; k < n; k++) {
            mark(attr_s, rq->nattributes, v[k], &bad, "attribute");
        }
    }

    for (i = 1; i < rq->nfunctions; i++) {
        for (j = 1; j <= 3; j++) {
            mark(str_s, rq->nstrings, get_uint(rq->functions[i], j), &bad,
                 "function's string");
        }
    }

    for (i = 1; i < rq->nattributes; i++) {
        mark(str_s, rq->nstrings, get_uint(rq->attributes[i], 1), &bad,
             "key");
        mark(str_s, rq->nstrings, get_uint(rq->attributes[i], 3), &bad,
             "unit");
    }

#define ORPHANS(seen, count, what)                                            \
    for (i = 0; i < (count); i++) {                                           \
        if (!seen[i]) {                                                       \
            diag("%s %zu is referred to by nothing", what, i);                \
            bad++;                                                            \
        }                                                                     \
    }

    ORPHANS(str_s, rq->nstrings, "string");
    ORPHANS(map_s, rq->nmappings, "mapping");
    ORPHANS(loc_s, rq->nlocations, "location");
    ORPHANS(fn_s, rq->nfunctions, "function");
    ORPHANS(attr_s, rq->nattributes, "attribute");
    ORPHANS(stack_s, rq->nstacks, "stack");
    ORPHANS(link_s, rq->nlinks, "link");

    for (i = 0; i < rq->nstrings; i++) {
        for (j = i + 1; j < rq->nstrings; j++) {
            if (rq->strings[i].len == rq->strings[j].len
                && memcmp(rq->strings[i].p, rq->strings[j].p,
                          rq->strings[i].len) == 0)
            {
                diag("strings %zu and %zu are both \"%s\"", i, j,
                     str(rq, i));
                bad++;
            }
        }
    }

    return bad;
}


/* the values of a profile's samples, of those whose leaf is "leaf" */

static int64_t
sum_samples(msg_t prof, request_t *rq, const char *leaf, size_t *nsamples)
{
    size_t    i, s;
    int64_t   sum;
    uint64_t  v, locs[MAX];
    msg_t     sample, fn;

    sum = 0;
    *nsamples = 0;

    for (i = 0; ; i++) {
        sample = get_msg(prof, 2, i);
        if (sample.p == NULL) {
            break;
        }

        s = get_uint(sample, 1);

        if (s >= rq->nstacks || packed(sample, 4, &v, 1) != 1) {
            continue;
        }

        if (leaf != NULL) {
            if (packed(rq->stacks[s], 1, locs, MAX) == 0
                || locs[0] >= rq->nlocations)
            {
                continue;
            }

            fn = rq->functions[get_uint(get_msg(rq->locations[locs[0]], 3,
                                                0), 1)];

            if (strcmp(str(rq, get_uint(fn, 1)), leaf) != 0) {
                continue;
            }
        }

        sum += (int64_t) v;
        (*nsamples)++;
    }

    return sum;
}



static size_t
rename_grow(const char *sym, char *buf, size_t size)
{
    if (strcmp(sym, "_ZN1t4growEv") != 0) {
        return 0;
    }

    return (size_t) snprintf(buf, size, "t::grow()");
}


static int
encode(const char *text, size_t len, ngx_http_malloc_otlp_t *ot,
    ngx_http_malloc_mbuf_t *out, ngx_http_malloc_arena_t *arena,
    ngx_http_malloc_named_t *np)
{
    ngx_http_malloc_heap_t   heap;
    char                     err[NGX_HTTP_MALLOC_OTLP_ERR_LEN];
    unsigned char           *copy;

    ngx_http_malloc_heap_init(&heap, arena);

    copy = ngx_http_malloc_arena_alloc(arena, len);
    memcpy(copy, text, len);

    if (ngx_http_malloc_heap_add(&heap, copy, len, err) != 0) {
        diag("heap_add: %s", err);
        return -1;
    }

    ngx_http_malloc_named_init(np, arena);
    np->rename = rename_grow;

    if (ngx_http_malloc_named_heap(np, &heap, maps, 2,
                                   resolver ? resolver : resolve, NULL, 0,
                                   err)
        != 0)
    {
        diag("named_heap: %s", err);
        return -1;
    }

    if (np->period == 0) {
        np->period = heap.period;
    }

    ot->np = np;
    ot->arena = arena;

    if (ngx_http_malloc_otlp_encode(ot, out, err) != 0) {
        diag("otlp_encode: %s", err);
        return -1;
    }

    return 0;
}


static void
test_request(void)
{
    size_t                        i, s, n, found;
    uint64_t                      locs[MAX], attrs[MAX], v;
    msg_t                         prof, st, vt, sample, kv, any, fn, loc, m;
    request_t                     rq;
    ngx_http_malloc_mbuf_t        out;
    ngx_http_malloc_named_t       np;
    ngx_http_malloc_arena_t      *arena;
    ngx_http_malloc_otlp_t        ot;
    ngx_http_malloc_otlp_attr_t   res[3], kind[1];
    static const char            *types[] = { "inuse_space",
                                              "inuse_objects" };
    static const char            *units[] = { "bytes", "count" };

    arena = ngx_http_malloc_arena_create();
    memset(&out, 0, sizeof(out));
    memset(&ot, 0, sizeof(ot));

    res[0].key = "service.name";
    res[0].str = "nginx";
    res[1].key = "process.pid";
    res[1].str = NULL;
    res[1].num = 4242;
    res[2].key = "host.name";
    res[2].str = "web1";
    kind[0].key = "nginx.malloc.source";
    kind[0].str = "interval";

    ot.resource = res;
    ot.nresource = 3;
    ot.attrs = kind;
    ot.nattrs = 1;
    ot.scope_name = "ngx_http_malloc_module";
    ot.scope_version = "0.1";
    ot.time_nanos = 1700000000123456789LL;
    ot.original = (const unsigned char *) "PPROF";
    ot.original_len = 5;

    if (!ok(encode(STR(DUMP), &ot, &out, arena, &np) == 0, "encoded")) {
        return;
    }

    read_request(out.data, out.len, &rq);

    ok(!rq.bad, "the dictionary holds only known tables");

    /* every table starts with its zero entry */

    ok(rq.nstrings > 0 && rq.strings[0].len == 0, "string_table[0] is \"\"");
    ok(rq.nmappings > 0 && rq.mappings[0].len == 0, "mapping_table[0] zero");
    ok(rq.nlocations > 0 && rq.locations[0].len == 0,
       "location_table[0] zero");
    ok(rq.nfunctions > 0 && rq.functions[0].len == 0,
       "function_table[0] zero");
    ok(rq.nattributes > 0 && rq.attributes[0].len == 0,
       "attribute_table[0] zero");
    ok(rq.nstacks > 0 && rq.stacks[0].len == 0, "stack_table[0] zero");
    is_int(rq.nlinks, 1, "link_table has its zero entry only");
    ok(rq.nlinks == 1 && rq.links[0].len == 0,
       "link_table[0] is the empty Link, no ids of zero bytes");
    is_int(conforms(&rq), 0, "the dictionary as profcheck checks it: "
           "nothing unreferenced, no string twice");
    ok(all_valid(&rq), "every string is UTF-8");

    for (i = 0; i < rq.nstrings; i++) {
        if (strncmp(str(&rq, i), "alloc_", 6) == 0) {
            break;
        }
    }

    is_int(i, rq.nstrings, "no alloc_* string: nothing refers to one");

    /* the resource's attributes, as KeyValue with a plain key */

    for (i = 0; i < 3; i++) {
        kv = get_msg(rq.resource, 1, i);
        any = get_msg(kv, 2, 0);

        ok(is_msg(get_msg(kv, 1, 0), res[i].key), "resource key %s",
           res[i].key);

        if (res[i].str != NULL) {
            ok(is_msg(get_msg(any, 1, 0), res[i].str), "%s is a string",
               res[i].key);
        } else {
            is_int((long) get_uint(any, 3), 4242, "%s is an integer",
                   res[i].key);
        }
    }

    ok(is_msg(get_msg(rq.scope, 1, 0), "ngx_http_malloc_module"),
       "the scope's name");
    ok(is_msg(get_msg(rq.scope, 2, 0), "0.1"), "the scope's version");

    /* a profile per sample type */

    is_int(rq.nprofiles, 2, "two profiles, though the heap has accum: "
           "alloc_* are cumulative, not of this moment");

    for (i = 0; i < rq.nprofiles && i < 2; i++) {
        prof = rq.profiles[i];
        vt = get_msg(prof, 1, 0);

        is_str(str(&rq, get_uint(vt, 1)), types[i], "profile %zu's type", i);
        is_str(str(&rq, get_uint(vt, 2)), units[i], "profile %zu's unit", i);

        vt = get_msg(prof, 5, 0);
        is_str(str(&rq, get_uint(vt, 1)), "space", "period type");
        is_str(str(&rq, get_uint(vt, 2)), "bytes", "period unit");
        is_int((long) get_uint(prof, 6), 524288, "period");
        ok(get_uint(prof, 3) == 1700000000123456789ULL,
           "time_unix_nano is a fixed64");

        n = packed(prof, 11, attrs, MAX);
        ok(n == 1 && attrs[0] < rq.nattributes, "the profile's attribute");

        if (n == 1) {
            kv = rq.attributes[attrs[0]];
            is_str(str(&rq, get_uint(kv, 1)), "nginx.malloc.source",
                   "its key by string index");
            ok(is_msg(get_msg(get_msg(kv, 2, 0), 1, 0), "interval"),
               "its value");
        }

        ok((i == 0) == is_msg(get_msg(prof, 10, 0), "PPROF"),
           "original_payload with the first profile only");
        ok((i == 0) == is_msg(get_msg(prof, 9, 0), "pprof"),
           "original_payload_format with it");
    }

    /*
     * inuse_space: stack 0x10 0x20 0x30 holds 2048 (unbiased: more),
     * 0x10 0x40 holds 1024; each stack's locations, the leaf first
     */

    prof = rq.profiles[0];
    found = 0;

    for (i = 0; ; i++) {
        sample = get_msg(prof, 2, i);
        if (sample.p == NULL) {
            break;
        }

        s = get_uint(sample, 1);
        ok(s > 0 && s < rq.nstacks, "sample %zu's stack is in the table", i);

        n = packed(sample, 4, &v, 1);
        ok(n == 1 && v > 0, "sample %zu has one value", i);

        st = rq.stacks[s];
        n = packed(st, 1, locs, MAX);

        fn = rq.functions[get_uint(get_msg(rq.locations[locs[0]], 3, 0), 1)];
        is_str(str(&rq, get_uint(fn, 1)), "ngx_t_hold",
               "the leaf is the allocating function");

        if (n == 3) {
            found++;
            loc = rq.locations[locs[1]];
            fn = rq.functions[get_uint(get_msg(loc, 3, 0), 1)];
            is_str(str(&rq, get_uint(fn, 1)), "t::grow()",
                   "the readable name");
            is_str(str(&rq, get_uint(fn, 2)), "_ZN1t4growEv",
                   "the symbol is the system name");

            m = rq.mappings[get_uint(loc, 1)];
            is_str(str(&rq, get_uint(m, 4)),
                   "/usr/lib/nginx/modules/ngx_http_t_module.so",
                   "its mapping's file");

            loc = rq.locations[locs[2]];
            fn = rq.functions[get_uint(get_msg(loc, 3, 0), 1)];
            is_str(str(&rq, get_uint(fn, 1)), "main", "the root is last");
            is_str(str(&rq, get_uint(fn, 2)), "main",
                   "an unmangled name is its own system name");

            m = rq.mappings[get_uint(loc, 1)];
            is_str(str(&rq, get_uint(m, 4)), "/usr/sbin/nginx",
                   "the binary's mapping");

            n = packed(m, 5, attrs, MAX);
            ok(n == 1 && attrs[0] < rq.nattributes,
               "the binary's mapping has its build id");

            if (n == 1) {
                kv = rq.attributes[attrs[0]];
                is_str(str(&rq, get_uint(kv, 1)),
                       NGX_HTTP_MALLOC_OTLP_BUILD_ID, "its key");
                ok(is_msg(get_msg(get_msg(kv, 2, 0), 1, 0), "ab12"),
                   "its value");
            }

            /* unbiased: 2048 bytes of 1024-byte objects sampled at 512k */
            ok(v > 2048, "the sampled bytes are unbiased (%llu)",
               (unsigned long long) v);
        }
    }

    is_int(i, 2, "two samples");
    is_int(found, 1, "one of them three frames deep");

    ngx_http_malloc_mbuf_free(&out);
    ngx_http_malloc_arena_destroy(arena);
}


static void
test_no_accum(void)
{
    request_t                 rq;
    ngx_http_malloc_mbuf_t    out;
    ngx_http_malloc_named_t   np;
    ngx_http_malloc_arena_t  *arena;
    ngx_http_malloc_otlp_t    ot;

    arena = ngx_http_malloc_arena_create();
    memset(&out, 0, sizeof(out));
    memset(&ot, 0, sizeof(ot));

    if (!ok(encode(STR(DUMP_NO_ACCUM), &ot, &out, arena, &np) == 0,
            "encoded without accum"))
    {
        return;
    }

    read_request(out.data, out.len, &rq);

    is_int(rq.nprofiles, 2, "two profiles without accum");
    ok(get_msg(rq.profiles[0], 10, 0).p == NULL, "no original payload");
    ok(get_msg(rq.profiles[0], 11, 0).p == NULL, "no attributes");
    is_int(rq.nattributes, 1, "the zero attribute only: no file of these "
           "stacks has a build id");
    is_int(conforms(&rq), 0, "as profcheck checks it");

    ngx_http_malloc_mbuf_free(&out);
    ngx_http_malloc_arena_destroy(arena);
}


static void
test_empty(void)
{
    request_t                 rq;
    ngx_http_malloc_mbuf_t    out;
    ngx_http_malloc_named_t   np;
    ngx_http_malloc_arena_t  *arena;
    ngx_http_malloc_otlp_t    ot;

    arena = ngx_http_malloc_arena_create();
    memset(&out, 0, sizeof(out));
    memset(&ot, 0, sizeof(ot));

    if (!ok(encode(STR("heap_v2/524288\n  t*: 0: 0 [0: 0]\n"), &ot, &out,
                   arena, &np)
            == 0, "an empty heap is encoded"))
    {
        return;
    }

    read_request(out.data, out.len, &rq);

    is_int(rq.nprofiles, 2, "two profiles");
    ok(get_msg(rq.profiles[0], 2, 0).p == NULL, "with no samples");
    ok(rq.nstrings > 0 && rq.nstacks == 1 && rq.nlocations == 1,
       "and the zero entries only");
    ok(rq.resource.p != NULL, "an empty resource is still there");
    is_int(rq.nstrings, 6, "the strings of the two sample types and the "
           "period type, after \"\"");
    is_int(conforms(&rq), 0, "as profcheck checks it");

    ngx_http_malloc_mbuf_free(&out);
    ngx_http_malloc_arena_destroy(arena);
}


static void
test_utf8(void)
{
    size_t  i, n, m;
    char    out[64];

    static const struct {
        const char  *in;
        const char  *want;
        size_t       valid;
    } cases[] = {
        { "abc", "abc", 3 },
        { "caf\xc3\xa9", "caf\xc3\xa9", 5 },
        { "\xf0\x9f\x98\x80!", "\xf0\x9f\x98\x80!", 5 },
        { "\xef\xbf\xbd", "\xef\xbf\xbd", 3 },
        { "a\xff" "b", "a\xef\xbf\xbd" "b", 1 },
        /* an overlong "/": two bytes that cannot start or go on */
        { "\xc0\xaf", "\xef\xbf\xbd\xef\xbf\xbd", 0 },
        /* cut short at the end, and before another character */
        { "x\xe2\x82", "x\xef\xbf\xbd", 1 },
        { "\xe2\x82x", "\xef\xbf\xbdx", 0 },
        { "\xf0\x9f\x98!", "\xef\xbf\xbd!", 0 },
        /* a surrogate, and past U+10FFFF: each byte on its own */
        { "\xed\xa0\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd", 0 },
        { "\xf4\x90\x80\x80",
          "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd", 0 },
        { "\x80" "a", "\xef\xbf\xbd" "a", 0 },
        { "", "", 0 }
    };

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        n = ngx_http_malloc_otlp_utf8(cases[i].in, strlen(cases[i].in),
                                      NULL);
        memset(out, 0, sizeof(out));
        m = ngx_http_malloc_otlp_utf8(cases[i].in, strlen(cases[i].in),
                                      out);

        ok(n == m && m == strlen(cases[i].want)
           && memcmp(out, cases[i].want, m) == 0,
           "UTF-8 case %zu: each ill-formed sequence is one U+FFFD "
           "(measured %zu, wrote %zu)", i, n, m);
        is_int((long) ngx_http_malloc_otlp_utf8_valid(cases[i].in,
                                                      strlen(cases[i].in)),
               (long) cases[i].valid,
               "UTF-8 case %zu: the valid part it starts with", i);
    }
}


static void
test_utf8_request(void)
{
    size_t                        i, found;
    msg_t                         kv, any;
    request_t                     rq;
    ngx_http_malloc_mbuf_t        out;
    ngx_http_malloc_named_t       np;
    ngx_http_malloc_arena_t      *arena;
    ngx_http_malloc_otlp_t        ot;
    ngx_http_malloc_otlp_attr_t   res[1], kind[1];
    const char                   *path, *build;

    arena = ngx_http_malloc_arena_create();
    memset(&out, 0, sizeof(out));
    memset(&ot, 0, sizeof(ot));

    res[0].key = "host.name";
    res[0].str = "we\xff" "b1";
    kind[0].key = "nginx.malloc.source";
    kind[0].str = "inter\xc0val";

    ot.resource = res;
    ot.nresource = 1;
    ot.attrs = kind;
    ot.nattrs = 1;
    ot.scope_name = "ngx_http_malloc_module";
    ot.scope_version = "0.1\xfe";

    path = maps[1].path;
    build = maps[0].build_id;
    maps[1].path = "/usr/lib/nginx/modules/ngx_\xfe_module.so";
    maps[0].build_id = "ab\x80";
    resolver = resolve_bad;

    i = encode(STR(DUMP), &ot, &out, arena, &np);

    maps[1].path = path;
    maps[0].build_id = build;
    resolver = NULL;

    if (!ok(i == 0, "names, a path, a build id and attributes that are "
            "not UTF-8 encode"))
    {
        return;
    }

    read_request(out.data, out.len, &rq);

    ok(all_valid(&rq), "every string of the request is UTF-8");
    is_int(conforms(&rq), 0, "as profcheck checks it");

    found = 0;

    for (i = 0; i < rq.nstrings; i++) {
        found += is_msg(rq.strings[i], "ngx_\xef\xbf\xbd_hold")
                 + is_msg(rq.strings[i], "ma\xef\xbf\xbd")
                 + is_msg(rq.strings[i], "/usr/lib/nginx/modules/ngx_"
                                         "\xef\xbf\xbd_module.so");
    }

    is_int(found, 3, "a symbol, a symbol cut short and a path, with "
           "U+FFFD for their bad bytes");

    kv = get_msg(rq.resource, 1, 0);
    any = get_msg(get_msg(kv, 2, 0), 1, 0);
    ok(is_msg(any, "we\xef\xbf\xbd" "b1"), "a resource attribute's value");
    ok(is_msg(get_msg(rq.scope, 2, 0), "0.1\xef\xbf\xbd"),
       "the scope's version");

    found = 0;

    for (i = 1; i < rq.nattributes; i++) {
        any = get_msg(get_msg(rq.attributes[i], 2, 0), 1, 0);
        found += is_msg(any, "inter\xef\xbf\xbdval")
                 + is_msg(any, "ab\xef\xbf\xbd");
    }

    is_int(found, 2, "a profile's attribute and a build id");

    ngx_http_malloc_mbuf_free(&out);
    ngx_http_malloc_arena_destroy(arena);
}


/* three stacks that each hold a different amount */
#define DUMP3                                                                 \
    "heap_v2/524288\n"                                                        \
    "  t*: 7: 7168 [0: 0]\n"                                                  \
    "@ 0x10 0x20\n"                                                           \
    "  t*: 1: 4096 [0: 0]\n"                                                  \
    "@ 0x10 0x30\n"                                                           \
    "  t*: 2: 2048 [0: 0]\n"                                                  \
    "@ 0x10 0x40\n"                                                           \
    "  t*: 4: 1024 [0: 0]\n"


static void
test_cap(void)
{
    int                            rc;
    size_t                         s, t, n, nf, biggest;
    int64_t                        total[2], top;
    request_t                      rq;
    ngx_http_malloc_mbuf_t         out;
    ngx_http_malloc_named_t        np;
    ngx_http_malloc_arena_t       *arena;
    ngx_http_malloc_otlp_t         ot;
    ngx_http_malloc_otlp_result_t  result;
    char                           err[NGX_HTTP_MALLOC_OTLP_ERR_LEN];

    arena = ngx_http_malloc_arena_create();
    memset(&out, 0, sizeof(out));
    memset(&ot, 0, sizeof(ot));
    memset(&result, 0, sizeof(result));

    ot.max_samples = 2;
    ot.result = &result;

    if (!ok(encode(STR(DUMP3), &ot, &out, arena, &np) == 0,
            "three stacks encoded with a cap of two samples"))
    {
        return;
    }

    read_request(out.data, out.len, &rq);

    is_int((long) result.stacks, 3, "the result: three stacks");
    is_int((long) result.folded, 2, "the result: two folded");
    is_int(conforms(&rq), 0, "as profcheck checks it");

    biggest = 0;
    total[0] = total[1] = 0;

    for (s = 0; s < np.nstacks; s++) {
        total[0] += np.stacks[s].v[0];
        total[1] += np.stacks[s].v[1];

        if (np.stacks[s].v[0] > np.stacks[biggest].v[0]) {
            biggest = s;
        }
    }

    for (t = 0; t < 2 && t < rq.nprofiles; t++) {
        is_int((long) sum_samples(rq.profiles[t], &rq, NULL, &n),
               (long) total[t], "profile %zu: the totals stay", t);
        is_int((long) n, 2, "profile %zu: two samples", t);
        (void) sum_samples(rq.profiles[t], &rq,
                           "(2 smaller stacks folded)", &nf);
        is_int((long) nf, 1, "profile %zu: one of them the folded stack", t);
    }

    /* all three leaves are ngx_t_hold: the one sent is the biggest */

    top = sum_samples(rq.profiles[0], &rq, "ngx_t_hold", &n);
    ok(n == 1 && top == np.stacks[biggest].v[0],
       "the stack kept holds the most bytes (%lld)", (long long) top);

    ngx_http_malloc_mbuf_free(&out);
    ngx_http_malloc_arena_destroy(arena);

    /* a cap that the stacks fit: nothing folded */

    arena = ngx_http_malloc_arena_create();
    memset(&out, 0, sizeof(out));
    ot.max_samples = 3;

    if (ok(encode(STR(DUMP3), &ot, &out, arena, &np) == 0,
           "three stacks with a cap of three"))
    {
        read_request(out.data, out.len, &rq);
        is_int((long) result.folded, 0, "nothing folded");
        (void) sum_samples(rq.profiles[0], &rq, NULL, &n);
        is_int((long) n, 3, "three samples");
    }

    ngx_http_malloc_mbuf_free(&out);

    /* one sample would leave no room for the folded stack */

    memset(&out, 0, sizeof(out));
    ot.max_samples = 1;
    rc = ngx_http_malloc_otlp_encode(&ot, &out, err);
    ok(rc == -1 && strstr(err, "folded") != NULL, "a cap of one is refused: "
       "%s", err);

    ngx_http_malloc_mbuf_free(&out);
    ngx_http_malloc_arena_destroy(arena);
}


static void
test_shared_strings(void)
{
    size_t                    i;
    request_t                 rq;
    ngx_http_malloc_mbuf_t    out;
    ngx_http_malloc_named_t   np;
    ngx_http_malloc_arena_t  *arena;
    ngx_http_malloc_otlp_t    ot;

    arena = ngx_http_malloc_arena_create();
    memset(&out, 0, sizeof(out));
    memset(&ot, 0, sizeof(ot));

    resolver = resolve_same;
    i = encode(STR(DUMP), &ot, &out, arena, &np);
    resolver = NULL;

    if (!ok(i == 0, "functions named bytes, space and inuse_space encode")) {
        return;
    }

    read_request(out.data, out.len, &rq);

    is_int(conforms(&rq), 0, "each string once, though a name is also a "
           "type, a unit or the period's type");

    /* "", the 5 of the types, ngx_t_handler, 2 paths, the build id's key */
    is_int(rq.nstrings, 10, "ten strings");

    ngx_http_malloc_mbuf_free(&out);
    ngx_http_malloc_arena_destroy(arena);
}


int
main(void)
{
    test_request();
    test_no_accum();
    test_empty();
    test_utf8();
    test_utf8_request();
    test_cap();
    test_shared_strings();

    return done_testing();
}
