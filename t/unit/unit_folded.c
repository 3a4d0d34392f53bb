
/*
 * Unit tests for the heap viewer's JSON form of a heap
 * (ngx_http_malloc_folded.c): the output is parsed back with jansson and
 * compared with the heap it came from.
 */


#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "tap.h"
#include "ngx_http_malloc_folded.h"


#define STR(s)  (s), sizeof(s) - 1

/* two stacks sharing their allocating frame 0x10, one with accum */
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
    "@ 0x10 0x10 0x20\n"                                                      \
    "  t*: 1: 512 [0: 0]\n"


static json_t *encode(const char *text, size_t len,
    ngx_http_malloc_resolve_pt resolve, uint64_t seconds);
static const char *resolve_names(void *data, uint64_t addr, int *map);
static const char *resolve_odd(void *data, uint64_t addr, int *map);
static const char *name_of(json_t *j, json_t *stack, size_t i);
static void test_shape(void);
static void test_names(void);
static void test_no_accum(void);
static void test_escape(void);
static void test_empty(void);
static void test_pprof(void);
static void test_base(void);
static void test_bad_pprof(void);


static json_t *
encode(const char *text, size_t len, ngx_http_malloc_resolve_pt resolve,
    uint64_t seconds)
{
    json_t                    *j;
    json_error_t               jerr;
    ngx_http_malloc_heap_t     heap;
    ngx_http_malloc_arena_t   *arena;
    ngx_http_malloc_mbuf_t     out;
    ngx_http_malloc_named_t    np;
    char                       err[NGX_HTTP_MALLOC_HEAP_ERR_LEN];
    unsigned char             *copy;

    arena = ngx_http_malloc_arena_create();
    ngx_http_malloc_heap_init(&heap, arena);
    memset(&out, 0, sizeof(out));

    /* exactly its size: ASan sees a read past the end */
    copy = malloc(len);
    memcpy(copy, text, len);

    if (ngx_http_malloc_heap_add(&heap, copy, len, err) != 0) {
        diag("heap_add: %s", err);
    }

    ngx_http_malloc_named_init(&np, arena);

    j = NULL;

    if (ngx_http_malloc_named_heap(&np, &heap, resolve, NULL, 0, err) == 0
        && ngx_http_malloc_named_write(&np, seconds, &out, err) == 0)
    {
        j = json_loadb((char *) out.data, out.len, 0, &jerr);
        if (j == NULL) {
            diag("not JSON: %s: %.*s", jerr.text, (int) out.len,
                 (char *) out.data);
        }

    } else {
        diag("encode: %s", err);
    }

    ngx_http_malloc_mbuf_free(&out);
    ngx_http_malloc_arena_destroy(arena);
    free(copy);

    return j;
}


static const char *
resolve_names(void *data, uint64_t addr, int *map)
{
    (void) data;

    *map = -1;

    /* return addresses: the resolver is given them as they are */

    switch (addr) {
    case 0x10:
        return "alloc";
    case 0x20:
        return "middle";
    case 0x30:
        return "main";
    case 0x40:
        return "main";
    default:
        return NULL;
    }
}


static const char *
resolve_odd(void *data, uint64_t addr, int *map)
{
    (void) data;

    *map = -1;

    return (addr == 0x10) ? "a\"b\\c\x01\xff<d>" : "plain";
}


static const char *
name_of(json_t *j, json_t *stack, size_t i)
{
    return json_string_value(
               json_array_get(json_object_get(j, "names"),
                              json_integer_value(json_array_get(stack, i))));
}


static void
test_shape(void)
{
    json_t  *j, *types, *stacks, *values, *s0, *s1;

    j = encode(STR(DUMP), NULL, 7);
    ok(j != NULL, "shape: valid JSON");

    is_int(json_integer_value(json_object_get(j, "period")), 524288,
           "shape: period");
    is_int(json_integer_value(json_object_get(j, "seconds")), 7,
           "shape: seconds");

    types = json_object_get(j, "types");
    is_int(json_array_size(types), 4, "shape: four types with accum");
    is_str(json_string_value(json_array_get(types, 0)), "inuse_space",
           "shape: inuse_space first");
    is_str(json_string_value(json_array_get(types, 3)), "alloc_objects",
           "shape: alloc_objects last");

    stacks = json_object_get(j, "stacks");
    values = json_object_get(j, "values");
    is_int(json_array_size(stacks), 2, "shape: two stacks");
    is_int(json_array_size(values), 2, "shape: a value row per stack");

    s0 = json_array_get(stacks, 0);
    s1 = json_array_get(stacks, 1);
    is_int(json_array_size(s0), 3, "shape: three frames");
    is_int(json_array_size(s1), 2, "shape: two frames");

    /* root first: the allocating frame 0x10 is last */
    is_str(name_of(j, s0, 2), "0x10", "shape: allocating frame last");
    is_str(name_of(j, s0, 0), "0x30", "shape: outermost caller first");
    ok(json_equal(json_array_get(s0, 2), json_array_get(s1, 1)),
       "shape: one name index for one address");

    /* unbiased: more than the sampled bytes, objects scaled alike */
    ok(json_integer_value(json_array_get(json_array_get(values, 0), 0))
       > 2048, "shape: inuse bytes unbiased upwards");
    ok(json_integer_value(json_array_get(json_array_get(values, 0), 2))
       > json_integer_value(json_array_get(json_array_get(values, 0), 0)),
       "shape: alloc bytes above inuse bytes");

    json_decref(j);
}


static void
test_names(void)
{
    json_t  *j, *names, *s0, *s1;

    j = encode(STR(DUMP), resolve_names, 0);
    names = json_object_get(j, "names");

    /* 0x30 and 0x40 both resolve to "main": one name */
    is_int(json_array_size(names), 3, "names: distinct names only");

    s0 = json_array_get(json_object_get(j, "stacks"), 0);
    s1 = json_array_get(json_object_get(j, "stacks"), 1);
    is_str(name_of(j, s0, 0), "main", "names: root named");
    is_str(name_of(j, s0, 1), "middle", "names: middle named");
    is_str(name_of(j, s0, 2), "alloc", "names: leaf named");
    ok(json_equal(json_array_get(s0, 0), json_array_get(s1, 0)),
       "names: two addresses of main share its index");

    json_decref(j);
}


static void
test_no_accum(void)
{
    json_t  *j;

    j = encode(STR(DUMP_NO_ACCUM), resolve_names, 0);

    is_int(json_array_size(json_object_get(j, "types")), 2,
           "no accum: inuse types only");
    is_int(json_array_size(json_array_get(json_object_get(j, "values"), 0)),
           2, "no accum: two values per stack");
    is_int(json_array_size(json_array_get(json_object_get(j, "stacks"), 0)),
           3, "no accum: a recursive frame kept twice");

    json_decref(j);
}


static void
test_escape(void)
{
    json_t  *j, *s0;

    j = encode(STR(DUMP), resolve_odd, 0);
    ok(j != NULL, "escape: still valid JSON");

    s0 = json_array_get(json_object_get(j, "stacks"), 0);

    /* a byte that is not ASCII comes back as that code point */
    is_str(name_of(j, s0, 2), "a\"b\\c\x01\xc3\xbf<d>",
           "escape: quotes, backslash, control and high bytes");

    json_decref(j);
}


static void
test_empty(void)
{
    json_t  *j;

    j = encode(STR("heap_v2/524288\n  t*: 0: 0 [0: 0]\n"), NULL, 0);
    ok(j != NULL, "empty: valid JSON");
    is_int(json_array_size(json_object_get(j, "stacks")), 0,
           "empty: no stacks");
    is_int(json_array_size(json_object_get(j, "names")), 0,
           "empty: no names");

    json_decref(j);
}


/* a heap and the profile.proto encoded from it name the same stacks */

static void
test_pprof(void)
{
    size_t                     i, k;
    ngx_http_malloc_heap_t     heap;
    ngx_http_malloc_arena_t   *arena;
    ngx_http_malloc_mbuf_t     gz;
    ngx_http_malloc_pprof_t    pp;
    ngx_http_malloc_named_t    a, b;
    ngx_http_malloc_nstack_t  *sa, *sb;
    char                       err[NGX_HTTP_MALLOC_FOLDED_ERR_LEN];
    unsigned char              copy[sizeof(DUMP)];
    int                        same;

    arena = ngx_http_malloc_arena_create();
    ngx_http_malloc_heap_init(&heap, arena);
    memcpy(copy, DUMP, sizeof(DUMP) - 1);
    ok(ngx_http_malloc_heap_add(&heap, copy, sizeof(DUMP) - 1, err) == 0,
       "pprof: the dump parses");

    memset(&pp, 0, sizeof(pp));
    memset(&gz, 0, sizeof(gz));
    pp.heap = &heap;
    pp.resolve = resolve_names;
    pp.arena = arena;

    ok(ngx_http_malloc_pprof_encode(&pp, &gz, err) == 0, "pprof: encoded");

    ngx_http_malloc_named_init(&a, arena);
    ngx_http_malloc_named_init(&b, arena);

    ok(ngx_http_malloc_named_heap(&a, &heap, resolve_names, NULL, 0, err)
       == 0, "pprof: the heap named");
    ok(ngx_http_malloc_named_pprof(&b, gz.data, gz.len, 0, err) == 0,
       "pprof: the profile read back");

    is_int((long) b.nstacks, (long) a.nstacks, "pprof: as many stacks");
    is_int((long) b.period, 524288, "pprof: its period");
    ok(b.alloc, "pprof: alloc values known");

    same = 1;

    for (i = 0; i < a.nstacks; i++) {
        sa = &a.stacks[i];
        sb = &b.stacks[i];

        same &= (sa->n == sb->n);

        for (k = 0; same && k < sa->n; k++) {
            same &= (strcmp(a.names[sa->ids[k] - 1],
                            b.names[sb->ids[k] - 1]) == 0);
        }

        for (k = 0; same && k < NGX_HTTP_MALLOC_FOLDED_VALUES; k++) {
            same &= (sa->v[k] == sb->v[k]);
        }
    }

    ok(same, "pprof: same names root first, same values");

    /* read twice: the stacks merge, the values add up */

    ok(ngx_http_malloc_named_pprof(&b, gz.data, gz.len, 0, err) == 0,
       "pprof: read again");
    is_int((long) b.nstacks, (long) a.nstacks, "pprof: no new stacks");
    is_int((long) b.stacks[0].v[0], (long) (2 * a.stacks[0].v[0]),
           "pprof: values doubled");

    ngx_http_malloc_mbuf_free(&gz);
    ngx_http_malloc_arena_destroy(arena);
}


/* a comparison: the union of the stacks, each with its base values */

static void
test_base(void)
{
    json_t                    *j, *values, *base;
    ngx_http_malloc_heap_t     now, then;
    ngx_http_malloc_arena_t   *arena;
    ngx_http_malloc_mbuf_t     out;
    ngx_http_malloc_named_t    np;
    char                       err[NGX_HTTP_MALLOC_FOLDED_ERR_LEN];
    json_error_t               jerr;
    unsigned char              c1[sizeof(DUMP)], c2[sizeof(DUMP_NO_ACCUM)];

    arena = ngx_http_malloc_arena_create();
    ngx_http_malloc_heap_init(&now, arena);
    ngx_http_malloc_heap_init(&then, arena);
    memcpy(c1, DUMP, sizeof(DUMP) - 1);
    memcpy(c2, DUMP_NO_ACCUM, sizeof(DUMP_NO_ACCUM) - 1);
    (void) ngx_http_malloc_heap_add(&now, c1, sizeof(DUMP) - 1, err);
    (void) ngx_http_malloc_heap_add(&then, c2, sizeof(DUMP_NO_ACCUM) - 1,
                                    err);

    ngx_http_malloc_named_init(&np, arena);
    ok(ngx_http_malloc_named_heap(&np, &now, resolve_names, NULL, 0, err)
       == 0, "base: now");
    ok(ngx_http_malloc_named_heap(&np, &then, resolve_names, NULL, 1, err)
       == 0, "base: the base");

    memset(&out, 0, sizeof(out));
    ok(ngx_http_malloc_named_write(&np, 0, &out, err) == 0, "base: written");

    j = json_loadb((char *) out.data, out.len, 0, &jerr);
    values = json_object_get(j, "values");
    base = json_object_get(j, "base_values");

    /* now: main>middle>alloc, main>alloc; base: middle>alloc>alloc */
    is_int(json_array_size(json_object_get(j, "stacks")), 3,
           "base: the union of the stacks");
    is_int(json_array_size(base), 3, "base: a base row per stack");
    is_int(json_integer_value(json_array_get(json_array_get(base, 0), 0)),
           0, "base: a stack only now has no base");
    is_int(json_integer_value(json_array_get(json_array_get(values, 2), 0)),
           0, "base: a stack only in the base has no value now");
    ok(json_integer_value(json_array_get(json_array_get(base, 2), 0)) > 0,
       "base: and its base value");

    json_decref(j);
    ngx_http_malloc_mbuf_free(&out);
    ngx_http_malloc_arena_destroy(arena);
}


static void
test_bad_pprof(void)
{
    ngx_http_malloc_arena_t  *arena;
    ngx_http_malloc_named_t   np;
    char                      err[NGX_HTTP_MALLOC_FOLDED_ERR_LEN];

    arena = ngx_http_malloc_arena_create();
    ngx_http_malloc_named_init(&np, arena);

    ok(ngx_http_malloc_named_pprof(&np, (const unsigned char *) STR("nope"),
                                   0, err)
       == -1, "bad pprof: not gzip refused");
    ok(strstr(err, "gzipped") != NULL, "bad pprof: says so");

    ngx_http_malloc_arena_destroy(arena);
}


int
main(void)
{
    test_shape();
    test_names();
    test_no_accum();
    test_escape();
    test_empty();
    test_pprof();
    test_base();
    test_bad_pprof();

    return done_testing();
}
