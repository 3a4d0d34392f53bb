
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * Unit tests for the profile.proto encoder (ngx_http_malloc_pprof.c): the
 * output is gunzipped with zlib and read back by a small protobuf reader
 * of this file's own, so that a mistake in the encoder's framing cannot
 * be hidden by the same mistake in a shared helper.
 */


#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "tap.h"
#include "ngx_http_malloc_pprof.h"


#define STR(s)  (s), sizeof(s) - 1

#define MAX     64

#define DUMP                                                                  \
    "heap_v2/524288\n"                                                        \
    "  t*: 0: 0 [0: 0]\n"                                                     \
    "@ 0x1001 0x2001 0x3001\n"                                                \
    "  t*: 1: 768 [2: 1536]\n"                                                \
    "@ 0x1001 0x2002 0x4001\n"                                                \
    "  t*: 4: 16384 [4: 16384]\n"                                             \
    "@ 0x5001\n"                                                              \
    "  t*: 1: 67108864 [1: 67108864]\n"

#define DUMP_NO_ACCUM                                                         \
    "heap_v2/524288\n"                                                        \
    "  t*: 0: 0 [0: 0]\n"                                                     \
    "@ 0x1001 0x2001\n"                                                       \
    "  t*: 1: 768 [0: 0]\n"


typedef struct {
    const unsigned char  *p;
    const unsigned char  *end;
    int                   bad;
} pb_t;


typedef struct {
    uint64_t              locs[MAX];
    size_t                nlocs;
    int64_t               values[8];
    size_t                nvalues;
    int64_t               label_key;
    int64_t               label_num;
    size_t                nlabels;
} sample_t;


typedef struct {
    uint64_t              id, start, limit, offset, file, build_id;
    uint64_t              has_functions;
} mapping_t;


typedef struct {
    uint64_t              id, mapping, address, function;
    size_t                nlines;
} location_t;


typedef struct {
    uint64_t              id, name, system_name, filename;
} function_t;


typedef struct {
    uint64_t              type[8], unit[8];
    size_t                ntypes;
    sample_t              samples[MAX];
    size_t                nsamples;
    mapping_t             mappings[MAX];
    size_t                nmappings;
    location_t            locations[MAX];
    size_t                nlocations;
    function_t            functions[MAX];
    size_t                nfunctions;
    char                 *strings[256];
    size_t                nstrings;
    int64_t               time_nanos, duration_nanos, period;
    uint64_t              period_type, period_unit, default_type;
    int                   unknown;      /* fields this reader does not know */
} profile_t;


typedef struct {
    uint64_t              addr;
    const char           *name;
    int                   map;
    int                   calls;
} symbol_t;


static uint64_t pb_varint(pb_t *b);
static int pb_next(pb_t *b, unsigned *field, uint64_t *v, pb_t *sub);
static void pb_packed(pb_t *sub, unsigned wire, uint64_t v, uint64_t *out,
    size_t *n, size_t max);
static unsigned char *gunzip(const unsigned char *data, size_t len,
    size_t *out_len);
static int decode(const unsigned char *data, size_t len, profile_t *prof);
static void free_profile(profile_t *prof);
static const char *str(profile_t *prof, uint64_t i);
static const location_t *location(profile_t *prof, uint64_t id);
static const function_t *function(profile_t *prof, uint64_t id);
static const char *resolve(void *data, uint64_t addr, int *map);
static int encode(const char *text, size_t len, profile_t *prof,
    int64_t time_nanos, int64_t duration_nanos);
static void test_profile(void);
static void test_no_accum(void);
static void test_empty(void);
static void test_many(void);


static ngx_http_malloc_arena_t  *arena;

static symbol_t  symbols[] = {
    { 0x1001, "malloc", 0, 0 },
    { 0x2001, "ngx_alloc", 1, 0 },
    { 0x2002, "ngx_alloc", 1, 0 },
    { 0x3001, "main", 1, 0 },
    { 0x4001, "0x4001", -1, 0 },
    { 0x5001, "ngx_alloc", 7, 0 },     /* a mapping index out of range */
};

static ngx_http_malloc_map_t  maps[] = {
    { 0x1000, 0x2000, 0, "/usr/lib/libjemalloc.so.2", "abcd", 0, 0 },
    { 0x2000, 0x6000, 0x1000, "/usr/sbin/nginx", NULL, 0, 1 },
};


static uint64_t
pb_varint(pb_t *b)
{
    int       shift;
    uint64_t  v;

    v = 0;

    for (shift = 0; shift < 64; shift += 7) {
        if (b->p >= b->end) {
            b->bad = 1;
            return 0;
        }

        v |= (uint64_t) (*b->p & 0x7f) << shift;

        if ((*b->p++ & 0x80) == 0) {
            return v;
        }
    }

    b->bad = 1;

    return 0;
}


/* 1 and a field, 0 at the end; a varint goes in *v, bytes in *sub */

static int
pb_next(pb_t *b, unsigned *field, uint64_t *v, pb_t *sub)
{
    uint64_t  tag, len;

    if (b->bad || b->p >= b->end) {
        return 0;
    }

    tag = pb_varint(b);
    *field = (unsigned) (tag >> 3);

    switch (tag & 7) {

    case 0:
        *v = pb_varint(b);
        sub->p = NULL;
        sub->end = NULL;
        break;

    case 2:
        len = pb_varint(b);

        if (len > (uint64_t) (b->end - b->p)) {
            b->bad = 1;
            return 0;
        }

        sub->p = b->p;
        sub->end = b->p + len;
        sub->bad = 0;
        b->p += len;
        *v = len;
        break;

    default:
        b->bad = 1;
        return 0;
    }

    return !b->bad;
}


/* a repeated varint, packed (sub) or not (v) */

static void
pb_packed(pb_t *sub, unsigned wire, uint64_t v, uint64_t *out, size_t *n,
    size_t max)
{
    if (wire == 0) {
        if (*n < max) {
            out[(*n)++] = v;
        }

        return;
    }

    while (sub->p < sub->end && !sub->bad) {
        v = pb_varint(sub);

        if (*n < max) {
            out[(*n)++] = v;
        }
    }
}


static unsigned char *
gunzip(const unsigned char *data, size_t len, size_t *out_len)
{
    int             rc;
    size_t          cap;
    z_stream        z;
    unsigned char  *out, *p;

    memset(&z, 0, sizeof(z));

    if (inflateInit2(&z, 15 + 16) != Z_OK) {
        return NULL;
    }

    cap = 4096;
    out = malloc(cap);
    if (out == NULL) {
        abort();
    }

    z.next_in = (unsigned char *) data;
    z.avail_in = len;
    z.next_out = out;
    z.avail_out = cap;

    for ( ;; ) {
        rc = inflate(&z, Z_NO_FLUSH);

        if (rc == Z_STREAM_END) {
            break;
        }

        if (rc != Z_OK && rc != Z_BUF_ERROR) {
            free(out);
            inflateEnd(&z);
            return NULL;
        }

        if (z.avail_out == 0) {
            p = realloc(out, cap * 2);
            if (p == NULL) {
                abort();
            }

            out = p;
            z.next_out = out + cap;
            z.avail_out = cap;
            cap *= 2;

        } else if (z.avail_in == 0) {
            free(out);
            inflateEnd(&z);
            return NULL;
        }
    }

    *out_len = z.total_out;

    /* nothing may follow the gzip member */

    rc = (z.avail_in == 0);

    inflateEnd(&z);

    if (!rc) {
        free(out);
        return NULL;
    }

    return out;
}


static int
decode(const unsigned char *data, size_t len, profile_t *prof)
{
    pb_t         b, sub, sub2, sub3;
    uint64_t     v, v2, v3, vals[8];
    unsigned     f, f2, f3;
    size_t       n;
    sample_t    *s;
    mapping_t   *m;
    location_t  *l;
    function_t  *fn;

    memset(prof, 0, sizeof(profile_t));

    b.p = data;
    b.end = data + len;
    b.bad = 0;

    while (pb_next(&b, &f, &v, &sub)) {

        switch (f) {

        case 1:     /* sample_type */
        case 11:    /* period_type */
            while (pb_next(&sub, &f2, &v2, &sub2)) {
                if (f == 1 && prof->ntypes < 8) {
                    if (f2 == 1) {
                        prof->type[prof->ntypes] = v2;
                    } else if (f2 == 2) {
                        prof->unit[prof->ntypes] = v2;
                    }

                } else if (f == 11) {
                    if (f2 == 1) {
                        prof->period_type = v2;
                    } else if (f2 == 2) {
                        prof->period_unit = v2;
                    }
                }
            }

            if (f == 1) {
                prof->ntypes++;
            }

            break;

        case 2:     /* sample */
            if (prof->nsamples == MAX) {
                return -1;
            }

            s = &prof->samples[prof->nsamples++];

            while (pb_next(&sub, &f2, &v2, &sub2)) {
                if (f2 == 1) {
                    pb_packed(&sub2, sub2.p == NULL ? 0 : 2, v2, s->locs,
                              &s->nlocs, MAX);

                } else if (f2 == 2) {
                    n = 0;
                    pb_packed(&sub2, sub2.p == NULL ? 0 : 2, v2, vals, &n, 8);

                    while (n > 0 && s->nvalues < 8) {
                        s->values[s->nvalues] = (int64_t) vals[s->nvalues];
                        s->nvalues++;
                        n--;
                    }

                } else if (f2 == 3) {
                    s->nlabels++;

                    while (pb_next(&sub2, &f3, &v3, &sub3)) {
                        if (f3 == 1) {
                            s->label_key = (int64_t) v3;
                        } else if (f3 == 3) {
                            s->label_num = (int64_t) v3;
                        }
                    }
                }
            }

            break;

        case 3:     /* mapping */
            if (prof->nmappings == MAX) {
                return -1;
            }

            m = &prof->mappings[prof->nmappings++];

            while (pb_next(&sub, &f2, &v2, &sub2)) {
                switch (f2) {
                case 1: m->id = v2; break;
                case 2: m->start = v2; break;
                case 3: m->limit = v2; break;
                case 4: m->offset = v2; break;
                case 5: m->file = v2; break;
                case 6: m->build_id = v2; break;
                case 7: m->has_functions = v2; break;
                default: prof->unknown++;
                }
            }

            break;

        case 4:     /* location */
            if (prof->nlocations == MAX) {
                return -1;
            }

            l = &prof->locations[prof->nlocations++];

            while (pb_next(&sub, &f2, &v2, &sub2)) {
                switch (f2) {
                case 1: l->id = v2; break;
                case 2: l->mapping = v2; break;
                case 3: l->address = v2; break;

                case 4:
                    l->nlines++;

                    while (pb_next(&sub2, &f3, &v3, &sub3)) {
                        if (f3 == 1) {
                            l->function = v3;
                        } else {
                            prof->unknown++;
                        }
                    }

                    break;

                default: prof->unknown++;
                }
            }

            break;

        case 5:     /* function */
            if (prof->nfunctions == MAX) {
                return -1;
            }

            fn = &prof->functions[prof->nfunctions++];

            while (pb_next(&sub, &f2, &v2, &sub2)) {
                switch (f2) {
                case 1: fn->id = v2; break;
                case 2: fn->name = v2; break;
                case 3: fn->system_name = v2; break;
                case 4: fn->filename = v2; break;
                default: prof->unknown++;
                }
            }

            break;

        case 6:     /* string_table */
            if (prof->nstrings == 256 || sub.p == NULL) {
                return -1;
            }

            prof->strings[prof->nstrings] = malloc(v + 1);
            if (prof->strings[prof->nstrings] == NULL) {
                abort();
            }

            memcpy(prof->strings[prof->nstrings], sub.p, v);
            prof->strings[prof->nstrings][v] = '\0';
            prof->nstrings++;
            break;

        case 9: prof->time_nanos = (int64_t) v; break;
        case 10: prof->duration_nanos = (int64_t) v; break;
        case 12: prof->period = (int64_t) v; break;
        case 14: prof->default_type = v; break;

        default:
            prof->unknown++;
        }

        if (sub.p != NULL && sub.bad) {
            return -1;
        }
    }

    return b.bad ? -1 : 0;
}


static void
free_profile(profile_t *prof)
{
    size_t  i;

    for (i = 0; i < prof->nstrings; i++) {
        free(prof->strings[i]);
    }
}


static const char *
str(profile_t *prof, uint64_t i)
{
    return (i < prof->nstrings) ? prof->strings[i] : "<out of range>";
}


static const location_t *
location(profile_t *prof, uint64_t id)
{
    size_t  i;

    for (i = 0; i < prof->nlocations; i++) {
        if (prof->locations[i].id == id) {
            return &prof->locations[i];
        }
    }

    return NULL;
}


static const function_t *
function(profile_t *prof, uint64_t id)
{
    size_t  i;

    for (i = 0; i < prof->nfunctions; i++) {
        if (prof->functions[i].id == id) {
            return &prof->functions[i];
        }
    }

    return NULL;
}


/* names go through a reused buffer, as a real resolver's may */

static const char *
resolve(void *data, uint64_t addr, int *map)
{
    size_t       i;
    static char  buf[64];

    (void) data;

    for (i = 0; i < sizeof(symbols) / sizeof(symbols[0]); i++) {
        if (symbols[i].addr == addr) {
            symbols[i].calls++;
            *map = symbols[i].map;
            strcpy(buf, symbols[i].name);
            return buf;
        }
    }

    *map = -1;
    snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long) addr);

    return buf;
}


static int
encode(const char *text, size_t len, profile_t *prof, int64_t time_nanos,
    int64_t duration_nanos)
{
    int                      rc;
    char                     err[NGX_HTTP_MALLOC_PPROF_ERR_LEN];
    size_t                   raw_len;
    unsigned char           *raw;
    ngx_http_malloc_heap_t   heap;
    ngx_http_malloc_mbuf_t   out;
    ngx_http_malloc_pprof_t  pp;

    ngx_http_malloc_heap_init(&heap, arena);

    if (ngx_http_malloc_heap_add(&heap, (const unsigned char *) text, len,
                                 err)
        != 0)
    {
        diag("heap: %s", err);
        return -1;
    }

    memset(&pp, 0, sizeof(pp));
    pp.heap = &heap;
    pp.maps = maps;
    pp.nmaps = sizeof(maps) / sizeof(maps[0]);
    pp.resolve = resolve;
    pp.time_nanos = time_nanos;
    pp.duration_nanos = duration_nanos;
    pp.arena = arena;

    memset(&out, 0, sizeof(out));
    err[0] = '\0';

    if (ngx_http_malloc_pprof_encode(&pp, &out, err) != 0) {
        diag("encode: %s", err);
        ngx_http_malloc_mbuf_free(&out);
        return -1;
    }

    if (out.len < 2 || out.data[0] != 0x1f || out.data[1] != 0x8b) {
        diag("not gzip");
        ngx_http_malloc_mbuf_free(&out);
        return -1;
    }

    raw = gunzip(out.data, out.len, &raw_len);

    ngx_http_malloc_mbuf_free(&out);

    if (raw == NULL) {
        diag("gunzip failed");
        return -1;
    }

    rc = decode(raw, raw_len, prof);

    free(raw);

    if (rc != 0) {
        diag("decode failed");
    }

    return rc;
}


static void
test_profile(void)
{
    int                  distinct, once;
    size_t               i, j;
    int64_t              o, b;
    profile_t            prof;
    const sample_t      *s;
    const location_t    *l;
    const function_t    *fn;
    static const char   *types[] = { "alloc_objects", "count",
                                     "alloc_space", "bytes",
                                     "inuse_objects", "count",
                                     "inuse_space", "bytes" };

    if (!is_int(encode(STR(DUMP), &prof, 1700000000123456789LL, 5000000000LL),
                0, "profile: encoded, gunzipped and decoded"))
    {
        return;
    }

    is_int(prof.unknown, 0, "profile: no unexpected fields");

    /* string table */

    ok(prof.nstrings > 0 && prof.strings[0][0] == '\0',
       "profile: string 0 is empty");

    distinct = 1;

    for (i = 0; i < prof.nstrings; i++) {
        for (j = i + 1; j < prof.nstrings; j++) {
            if (strcmp(prof.strings[i], prof.strings[j]) == 0) {
                diag("string \"%s\" at %zu and %zu", prof.strings[i], i, j);
                distinct = 0;
            }
        }
    }

    ok(distinct, "profile: strings are deduplicated");

    /* sample types, period, default */

    is_int((long) prof.ntypes, 4, "profile: four sample types");

    for (i = 0; i < 4 && i < prof.ntypes; i++) {
        is_str(str(&prof, prof.type[i]), types[2 * i],
               "profile: sample type %zu", i);
        is_str(str(&prof, prof.unit[i]), types[2 * i + 1],
               "profile: sample unit %zu", i);
    }

    is_str(str(&prof, prof.period_type), "space", "profile: period type");
    is_str(str(&prof, prof.period_unit), "bytes", "profile: period unit");
    is_int((long) prof.period, 524288, "profile: period");
    is_str(str(&prof, prof.default_type), "inuse_space",
           "profile: default sample type");
    ok(prof.time_nanos == 1700000000123456789LL, "profile: time_nanos");
    ok(prof.duration_nanos == 5000000000LL, "profile: duration_nanos");

    /* samples: unbiased values, locations in stack order */

    is_int((long) prof.nsamples, 3, "profile: three samples");

    s = &prof.samples[0];
    is_int((long) s->nvalues, 4, "profile: four values per sample");

    ngx_http_malloc_heap_unbias(524288, 2, 1536, &o, &b);
    ok(s->values[0] == o && s->values[1] == b,
       "profile: alloc values unbiased");
    ok(s->values[0] == 1366 && s->values[1] == 1049344,
       "profile: alloc values by hand");
    ok(s->values[2] == 683 && s->values[3] == 524672,
       "profile: inuse values by hand");

    ok(s->nlabels == 1 && strcmp(str(&prof, s->label_key), "bytes") == 0
       && s->label_num == 768, "profile: the object size as a bytes label");

    ok(prof.samples[2].values[2] == 1 && prof.samples[2].values[3] == 67108864,
       "profile: a 64 MiB object is unbiased to itself");

    is_int((long) s->nlocs, 3, "profile: first sample has three locations");

    l = location(&prof, s->locs[0]);
    ok(l != NULL && l->address == 0x1000 && l->mapping == 1,
       "profile: leaf first, address minus 1, mapping of map 0");

    l = location(&prof, s->locs[2]);
    ok(l != NULL && l->address == 0x3000 && l->mapping == 2,
       "profile: outermost last, mapping of map 1");

    ok(prof.samples[1].locs[0] == s->locs[0],
       "profile: an address shared by stacks is one location");

    /* locations, functions */

    is_int((long) prof.nlocations, 6, "profile: one location per address");
    is_int((long) prof.nfunctions, 4, "profile: one function per name");

    once = 1;

    for (i = 0; i < sizeof(symbols) / sizeof(symbols[0]); i++) {
        if (symbols[i].calls != 1) {
            diag("0x%llx resolved %d times",
                 (unsigned long long) symbols[i].addr, symbols[i].calls);
            once = 0;
        }
    }

    ok(once, "profile: each address resolved once");

    for (i = 0; i < prof.nlocations; i++) {
        l = &prof.locations[i];
        fn = function(&prof, l->function);

        ok(l->id == i + 1 && l->nlines == 1 && fn != NULL,
           "profile: location %zu has an id and one line", i);

        for (j = 0; j < sizeof(symbols) / sizeof(symbols[0]); j++) {
            if (symbols[j].addr - 1 == l->address) {
                break;
            }
        }

        if (j == sizeof(symbols) / sizeof(symbols[0]) || fn == NULL) {
            ok(0, "profile: location %zu is a known address", i);
            continue;
        }

        is_str(str(&prof, fn->name), symbols[j].name,
               "profile: location 0x%llx names its function",
               (unsigned long long) l->address);

        is_int((long) l->mapping,
               (symbols[j].map >= 0 && symbols[j].map < 2)
               ? symbols[j].map + 1 : 0,
               "profile: location 0x%llx mapping",
               (unsigned long long) l->address);
    }

    for (i = 0; i < prof.nfunctions; i++) {
        fn = &prof.functions[i];

        ok(fn->id == i + 1 && fn->name != 0 && fn->system_name == fn->name
           && fn->filename == 0,
           "profile: function %zu: id, name, system name", i);
    }

    /* mappings */

    is_int((long) prof.nmappings, 2, "profile: two mappings");

    for (i = 0; i < prof.nmappings && i < 2; i++) {
        ok(prof.mappings[i].id == i + 1
           && prof.mappings[i].start == maps[i].start
           && prof.mappings[i].limit == maps[i].limit
           && prof.mappings[i].offset == maps[i].offset
           && prof.mappings[i].has_functions == 1,
           "profile: mapping %zu", i);
        is_str(str(&prof, prof.mappings[i].file), maps[i].path,
               "profile: mapping %zu file", i);
        is_str(str(&prof, prof.mappings[i].build_id),
               maps[i].build_id ? maps[i].build_id : "",
               "profile: mapping %zu build id", i);
    }

    free_profile(&prof);
}


static void
test_no_accum(void)
{
    profile_t  prof;

    if (!is_int(encode(STR(DUMP_NO_ACCUM), &prof, 0, 0), 0,
                "no accum: encoded"))
    {
        return;
    }

    is_int((long) prof.ntypes, 2, "no accum: two sample types");
    is_str(str(&prof, prof.type[0]), "inuse_objects", "no accum: type 0");
    is_str(str(&prof, prof.type[1]), "inuse_space", "no accum: type 1");
    is_int((long) prof.samples[0].nvalues, 2, "no accum: two values");
    ok(prof.samples[0].values[0] == 683
       && prof.samples[0].values[1] == 524672, "no accum: values");
    ok(prof.time_nanos == 0 && prof.duration_nanos == 0,
       "no accum: no time, no duration");
    is_str(str(&prof, prof.default_type), "inuse_space",
           "no accum: default sample type");

    free_profile(&prof);
}


static void
test_empty(void)
{
    profile_t  prof;

    if (!is_int(encode(STR("heap_v2/1\n  t*: 0: 0 [0: 0]\n"), &prof, 0, 0),
                0, "empty: encoded"))
    {
        return;
    }

    is_int((long) prof.nsamples, 0, "empty: no samples");
    is_int((long) prof.nlocations, 0, "empty: no locations");
    is_int((long) prof.ntypes, 2, "empty: two sample types");
    is_int((long) prof.period, 1, "empty: period");

    free_profile(&prof);
}


/* enough stacks and names to make every table grow several times */

static void
test_many(void)
{
    int                      ok_all;
    pb_t                     b, sub;
    char                     err[NGX_HTTP_MALLOC_PPROF_ERR_LEN];
    char                    *text, *p;
    size_t                   i, raw_len, nloc, nfn, nstr, nsample;
    uint64_t                 v;
    unsigned                 f;
    unsigned char           *raw;
    ngx_http_malloc_heap_t   heap;
    ngx_http_malloc_mbuf_t   out;
    ngx_http_malloc_pprof_t  pp;

    text = malloc(64 + 5000 * 80);
    if (text == NULL) {
        abort();
    }

    p = text + sprintf(text, "heap_v2/524288\n  t*: 0: 0 [0: 0]\n");

    for (i = 0; i < 5000; i++) {
        p += sprintf(p, "@ 0x%zx 0x%zx 0x1\n  t*: 1: 64 [1: 64]\n",
                     0x100000 + i, 0x200000 + i / 2);
    }

    ngx_http_malloc_heap_init(&heap, arena);
    ok_all = (ngx_http_malloc_heap_add(&heap, (unsigned char *) text,
                                       p - text, err) == 0);

    memset(&pp, 0, sizeof(pp));
    pp.heap = &heap;
    pp.resolve = resolve;
    pp.arena = arena;

    memset(&out, 0, sizeof(out));
    ok_all = ok_all && ngx_http_malloc_pprof_encode(&pp, &out, err) == 0;

    raw = ok_all ? gunzip(out.data, out.len, &raw_len) : NULL;
    ok(raw != NULL, "many: 5000 stacks, 7501 addresses encoded");

    /* count top-level fields without keeping them */

    if (raw != NULL) {
        b.p = raw;
        b.end = raw + raw_len;
        b.bad = 0;
        nloc = nfn = nstr = nsample = 0;

        while (pb_next(&b, &f, &v, &sub)) {
            nsample += (f == 2);
            nloc += (f == 4);
            nfn += (f == 5);
            nstr += (f == 6);
        }

        ok(!b.bad, "many: well-formed");
        is_int((long) nsample, 5000, "many: samples");
        is_int((long) nloc, 7501, "many: locations");
        is_int((long) nfn, 7501, "many: functions");
        ok(nstr > 7501, "many: strings");
    }

    free(raw);
    free(text);
    ngx_http_malloc_mbuf_free(&out);
}


int
main(void)
{
    arena = ngx_http_malloc_arena_create();
    if (arena == NULL) {
        abort();
    }

    test_profile();
    test_no_accum();
    test_empty();
    test_many();

    ngx_http_malloc_arena_destroy(arena);

    return done_testing();
}
