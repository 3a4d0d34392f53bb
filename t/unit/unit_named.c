
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * Unit tests for the heap viewer's JSON form of a heap
 * (ngx_http_malloc_named.c): the output is parsed back with jansson and
 * compared with the heap it came from.
 */


#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "tap.h"
#include "ngx_http_malloc_named.h"


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


/* the frames that lie in files: 0x30 and 0x40 in the binary */

static ngx_http_malloc_map_t  maps[] = {
    { 0x30, 0x50, 0, "/usr/sbin/nginx", NULL, 0, -1 },
    { 0x20, 0x30, 0, "/usr/lib/nginx/modules/ngx_http_lua_module.so",
      "cafe01", 0, -1 },
    { 0x10, 0x20, 0, "/lib/x86_64-linux-gnu/libc.so.6", NULL, 0, -1 }
};



static json_t *encode(const char *text, size_t len,
    ngx_http_malloc_resolve_pt resolve, uint64_t seconds);
static json_t *encode_with(const char *text, size_t len,
    const ngx_http_malloc_map_t *maps, size_t nmaps,
    ngx_http_malloc_resolve_pt resolve, ngx_http_malloc_rename_pt rename);
static void unfold(json_t *j);
static const char *resolve_mapped(void *data, uint64_t addr, int *map);
static size_t rename_z(const char *sym, char *buf, size_t size);
static void test_tree(void);
static void test_order(void);
static int preorder(json_t *nodes);
static int compare_roots(const void *one, const void *two);
static const char *resolve_letters(void *data, uint64_t addr, int *map);
static void test_rename(void);
static void test_files(void);
static const char *resolve_names(void *data, uint64_t addr, int *map);
static const char *resolve_odd(void *data, uint64_t addr, int *map);
static const char *resolve_mangled(void *data, uint64_t addr, int *map);
static const char *name_of(json_t *j, json_t *stack, size_t i);
static void test_shape(void);
static void test_names(void);
static void test_no_accum(void);
static void test_escape(void);
static void test_empty(void);
static void test_pprof(void);
static void test_base(void);
static void test_bad_pprof(void);
static const char *resolve_sites(void *data, uint64_t addr, int *map);
static void stacks_of(ngx_http_malloc_heap_t *heap, const char *fmt, ...);
static void test_judge(void);


static json_t *
encode(const char *text, size_t len, ngx_http_malloc_resolve_pt resolve,
    uint64_t seconds)
{
    json_t  *j;

    j = encode_with(text, len, NULL, 0, resolve, NULL);

    if (j != NULL && seconds != 0) {
        json_object_set_new(j, "seconds", json_integer((json_int_t) seconds));
    }

    return j;
}


/*
 * The JSON of a heap, its "stacks" turned back into name indexes from the
 * root (as "tree" keeps the nodes), for the tests of what the stacks hold
 */

static json_t *
encode_with(const char *text, size_t len, const ngx_http_malloc_map_t *maps,
    size_t nmaps, ngx_http_malloc_resolve_pt resolve,
    ngx_http_malloc_rename_pt rename)
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
    np.rename = rename;

    j = NULL;

    if (ngx_http_malloc_named_heap(&np, &heap, maps, nmaps, resolve, NULL, 0,
                                   err) == 0
        && ngx_http_malloc_named_write(&np, 0, &out, err) == 0)
    {
        j = json_loadb((char *) out.data, out.len, 0, &jerr);
        if (j == NULL) {
            diag("not JSON: %s: %.*s", jerr.text, (int) out.len,
                 (char *) out.data);

        } else {
            unfold(j);
        }

    } else {
        diag("encode: %s", err);
    }

    ngx_http_malloc_mbuf_free(&out);
    ngx_http_malloc_arena_destroy(arena);
    free(copy);

    return j;
}


/*
 * "nodes" checked (a parent before its children, no two children of one
 * parent with one name, a distinct node per stack) and each stack's node
 * walked up to the root: "stacks" becomes name lists, "leaves" keeps the
 * nodes; "tree_ok" says whether the checks held
 */

static void
unfold(json_t *j)
{
    int      good;
    size_t   n, i, k, s, depth;
    json_t  *nodes, *stacks, *lists, *list;
    long    *name, *parent, leaf;

    nodes = json_object_get(j, "nodes");
    stacks = json_object_get(j, "stacks");
    n = json_array_size(nodes) / 2;
    good = (json_array_size(nodes) % 2 == 0);

    name = calloc(n + 1, sizeof(long));
    parent = calloc(n + 1, sizeof(long));

    for (i = 0; i < n; i++) {
        name[i] = (long) json_integer_value(json_array_get(nodes, 2 * i));
        k = (size_t) json_integer_value(json_array_get(nodes, 2 * i + 1));
        good &= (k <= i);
        parent[i] = (k == 0) ? -1 : (long) (i - k);
    }

    for (i = 0; i < n; i++) {
        for (k = i + 1; k < n; k++) {
            good &= !(parent[i] == parent[k] && name[i] == name[k]);
        }
    }

    lists = json_array();

    for (s = 0; s < json_array_size(stacks); s++) {
        leaf = (long) json_integer_value(json_array_get(stacks, s));
        good &= (leaf >= 0 && (size_t) leaf < n);

        for (k = 0; k < s; k++) {
            good &= (json_integer_value(json_array_get(stacks, k)) != leaf);
        }

        list = json_array();

        for (depth = 0; good && leaf >= 0 && depth <= n; depth++) {
            json_array_insert_new(list, 0, json_integer(name[leaf]));
            leaf = parent[leaf];
        }

        json_array_append_new(lists, list);
    }

    json_object_set(j, "leaves", stacks);
    json_object_set_new(j, "stacks", lists);
    json_object_set_new(j, "tree_ok", json_boolean(good));

    free(name);
    free(parent);
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
    char                       err[NGX_HTTP_MALLOC_NAMED_ERR_LEN];
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
    pp.resolve = resolve_mapped;
    pp.maps = maps;
    pp.nmaps = 3;
    pp.arena = arena;

    ok(ngx_http_malloc_pprof_encode(&pp, &gz, err) == 0, "pprof: encoded");

    ngx_http_malloc_named_init(&a, arena);
    ngx_http_malloc_named_init(&b, arena);

    ok(ngx_http_malloc_named_heap(&a, &heap, maps, 3, resolve_mapped, NULL,
                                  0, err)
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

        for (k = 0; same && k < NGX_HTTP_MALLOC_NAMED_VALUES; k++) {
            same &= (sa->v[k] == sb->v[k]);
        }
    }

    ok(same, "pprof: same names root first, same values");

    /* the snapshot's mappings give its names their files */
    is_int((long) b.nfiles, 3, "pprof: three files");
    same = (b.nfiles == 3);

    for (i = 0; same && i < a.nnames; i++) {
        same &= (a.name_files[i] >= 0 && b.name_files[i] >= 0
                 && strcmp(a.files[a.name_files[i]].path,
                           b.files[b.name_files[i]].path) == 0
                 && a.files[a.name_files[i]].kind
                    == b.files[b.name_files[i]].kind);
    }

    ok(same, "pprof: each name in the same file, of the same kind");

    /* the build ids, for OTLP's mappings: from the maps, and read back */

    same = (a.nfiles == 3 && b.nfiles == 3);

    for (i = 0; same && i < 3; i++) {
        k = (strstr(a.files[i].path, "lua") != NULL);
        same &= k ? (a.files[i].build_id != NULL
                     && strcmp(a.files[i].build_id, "cafe01") == 0)
                  : (a.files[i].build_id == NULL);
        k = (strstr(b.files[i].path, "lua") != NULL);
        same &= k ? (b.files[i].build_id != NULL
                     && strcmp(b.files[i].build_id, "cafe01") == 0)
                  : (b.files[i].build_id == NULL);
    }

    ok(same, "pprof: the module's build id, from the maps and read back; "
       "none for the others");

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
    char                       err[NGX_HTTP_MALLOC_NAMED_ERR_LEN];
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
    ok(ngx_http_malloc_named_heap(&np, &now, NULL, 0, resolve_names, NULL,
                                  0, err)
       == 0, "base: now");
    ok(ngx_http_malloc_named_heap(&np, &then, NULL, 0, resolve_names, NULL,
                                  1, err)
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


#define DETECTION                                                             \
    "with 77 samples now and 45 in the base, a change of small blocks under "


/* two call sites of one function, a churn, and stacks seen once */

static const char *
resolve_sites(void *data, uint64_t addr, int *map)
{
    (void) data;

    *map = -1;

    switch (addr) {
    case 0x3:
    case 0x4:
        return "acmp_add_pattern";
    case 0x1:
        return "churn";
    default:
        return NULL;
    }
}


/* a heap_v2 dump at the default rate, its stacks from fmt, added */

static void
stacks_of(ngx_http_malloc_heap_t *heap, const char *fmt, ...)
{
    int       n;
    char      text[2048], err[NGX_HTTP_MALLOC_HEAP_ERR_LEN];
    va_list   args;

    n = snprintf(text, sizeof(text), "heap_v2/524288\n  t*: 0: 0 [0: 0]\n");

    va_start(args, fmt);
    n += vsnprintf(text + n, sizeof(text) - n, fmt, args);
    va_end(args);

    if (ngx_http_malloc_heap_add(heap, (unsigned char *) text, n, err) != 0) {
        diag("stacks_of: %s", err);
    }
}


/*
 * The judgement by name: 128-byte blocks at the default rate.  Each call
 * site of acmp_add_pattern alone grew by 4 to 16 samples, too few to be
 * told from noise; the function grew by 8 to 32.  The churn, 32 to 40,
 * is noise; ten stacks seen once are not counted against the level.
 */

static void
test_judge(void)
{
    size_t                    i, site, churn;
    uint32_t                  which[16];
    double                    change;
    ngx_http_malloc_heap_t    now, then;
    ngx_http_malloc_named_t   np;
    ngx_http_malloc_arena_t  *arena;
    ngx_http_malloc_noise_t  *nz;
    ngx_http_malloc_mbuf_t    out;
    json_t                   *j, *c;
    json_error_t              jerr;
    char                      err[NGX_HTTP_MALLOC_NAMED_ERR_LEN];

    arena = ngx_http_malloc_arena_create();
    ngx_http_malloc_heap_init(&now, arena);
    ngx_http_malloc_heap_init(&then, arena);

    stacks_of(&now, "@ 0x3\n  t*: 16: 2048 [0: 0]\n"
                    "@ 0x4\n  t*: 16: 2048 [0: 0]\n"
                    "@ 0x1\n  t*: 40: 5120 [0: 0]\n");
    stacks_of(&then, "@ 0x3\n  t*: 4: 512 [0: 0]\n"
                     "@ 0x4\n  t*: 4: 512 [0: 0]\n"
                     "@ 0x1\n  t*: 32: 4096 [0: 0]\n");

    for (i = 0; i < 10; i++) {
        stacks_of((i & 1) ? &now : &then, "@ 0x%zx\n  t*: 1: 64 [0: 0]\n",
                  0x100 + i);
    }

    ngx_http_malloc_named_init(&np, arena);

    ok(ngx_http_malloc_named_heap_map(&np, &now, NULL, 0, resolve_sites,
                                      NULL, 0, which, err)
       == 0, "judge: now named");
    ok(which[0] == which[1] && which[0] != which[2],
       "judge: both call sites are one named stack");
    site = which[0];
    churn = which[2];

    ok(ngx_http_malloc_named_heap(&np, &then, NULL, 0, resolve_sites, NULL,
                                  1, err)
       == 0, "judge: the base named");

    ok(ngx_http_malloc_named_judge(&np) == 0 && np.compared,
       "judge: judged");

    nz = &np.noise;

    is_int((long) nz->compared, 12, "judge: every named stack compared");
    ok(nz->testable >= 2 && nz->testable < 12,
       "judge: stacks seen once are not counted against the level");
    ok(nz->z > 2.5 && nz->z < 4, "judge: the level's z, %.2f", nz->z);
    is_int(np.judged[site], 1, "judge: the function grew");
    is_int(np.judged[churn], 0, "judge: the churn is noise");
    is_int((long) nz->grew, 1, "judge: one grew");

    change = np.stacks[site].side[0].bytes - np.stacks[site].side[1].bytes;
    ok(fabs(nz->grown - change) < 1, "judge: grown is the function's change");
    ok(change > np.margins[site] && np.margins[site] > 0,
       "judge: its interval lies above zero");

    change = np.stacks[churn].side[0].bytes - np.stacks[churn].side[1].bytes;
    ok(fabs(change) < np.margins[churn],
       "judge: the churn's interval holds zero");

    ok(nz->floor > 4 * 1048576 && nz->floor < 8 * 1048576,
       "judge: a stack that held nothing is seen from %.1f MiB",
       nz->floor / 1048576);
    ok(nz->limit > nz->floor,
       "judge: one that held all %.0f samples from %.1f MiB",
       nz->base_samples > nz->samples ? nz->base_samples : nz->samples,
       nz->limit / 1048576);

    /* the JSON says the same, once: judge() is not made again */

    memset(&out, 0, sizeof(out));
    ok(ngx_http_malloc_named_write(&np, 0, &out, err) == 0, "judge: written");

    j = json_loadb((char *) out.data, out.len, 0, &jerr);
    c = json_object_get(j, "comparison");

    is_int(json_integer_value(json_object_get(c, "grew")), 1,
           "judge: the JSON's grew");
    is_int(json_integer_value(json_object_get(c, "limit")),
           (long) (nz->limit + 0.5), "judge: the JSON's limit");
    is_int(json_integer_value(json_object_get(c, "floor")),
           (long) (nz->floor + 0.5), "judge: the JSON's floor");
    ok(strncmp(json_string_value(json_object_get(c, "detection")) ?: "",
               DETECTION, strlen(DETECTION)) == 0,
       "judge: the JSON's sentence");
    is_int(json_integer_value(json_array_get(json_object_get(j, "margins"),
                                             site)),
           (long) (np.margins[site] + 0.5), "judge: the JSON's margins");

    json_decref(j);
    ngx_http_malloc_mbuf_free(&out);
    ngx_http_malloc_arena_destroy(arena);
}


static void
test_bad_pprof(void)
{
    ngx_http_malloc_arena_t  *arena;
    ngx_http_malloc_named_t   np;
    char                      err[NGX_HTTP_MALLOC_NAMED_ERR_LEN];

    arena = ngx_http_malloc_arena_create();
    ngx_http_malloc_named_init(&np, arena);

    ok(ngx_http_malloc_named_pprof(&np, (const unsigned char *) STR("nope"),
                                   0, err)
       == -1, "bad pprof: not gzip refused");
    ok(strstr(err, "gzipped") != NULL, "bad pprof: says so");

    ngx_http_malloc_arena_destroy(arena);
}


static const char *
resolve_mapped(void *data, uint64_t addr, int *map)
{
    const char  *name;

    name = resolve_names(data, addr, map);
    *map = (addr >= 0x30) ? 0 : (addr >= 0x20) ? 1 : (addr >= 0x10) ? 2 : -1;

    return name;
}


/* "_Zxyz" reads "xyz()"; no other symbol reads otherwise */

static size_t
rename_z(const char *sym, char *buf, size_t size)
{
    size_t  len;

    if (strncmp(sym, "_Z", 2) != 0 || strlen(sym) + 1 > size) {
        return 0;
    }

    len = strlen(sym) - 2 + 2;
    memcpy(buf, sym + 2, len - 2);
    memcpy(buf + len - 2, "()", 3);

    return len;
}


static const char *
resolve_mangled(void *data, uint64_t addr, int *map)
{
    (void) data;

    *map = -1;

    return (addr == 0x10) ? "_Zalloc" : (addr == 0x20) ? "_Zmiddle"
                                      : (addr == 0x30) ? "middle()"
                                      : "main";
}


static void
test_tree(void)
{
    json_t  *j, *nodes, *leaves;

    /* main>middle>alloc and main>alloc: main once, alloc twice */

    j = encode(STR(DUMP), resolve_names, 0);
    nodes = json_object_get(j, "nodes");
    leaves = json_object_get(j, "leaves");

    ok(json_is_true(json_object_get(j, "tree_ok")),
       "tree: parents first, siblings distinct, a node per stack");
    is_int(json_array_size(nodes), 8, "tree: four nodes");
    is_int(json_integer_value(json_array_get(nodes, 1)), 0,
           "tree: the first node is a root's child");
    is_int(json_integer_value(json_array_get(nodes, 3)), 1,
           "tree: depth first, the next is its child");
    is_int(json_array_size(leaves), 2, "tree: a node per stack");
    ok(!json_equal(json_array_get(leaves, 0), json_array_get(leaves, 1)),
       "tree: two stacks, two nodes");

    json_decref(j);

    /* a recursive frame: two nodes of one name, one below the other */

    j = encode(STR(DUMP_NO_ACCUM), resolve_names, 0);
    ok(json_is_true(json_object_get(j, "tree_ok")), "tree: recursion");
    is_int(json_array_size(json_object_get(j, "nodes")), 6,
           "tree: alloc under alloc, three nodes");

    json_decref(j);
}


static const char *
resolve_letters(void *data, uint64_t addr, int *map)
{
    static char  name[8];

    (void) data;

    *map = -1;

    snprintf(name, sizeof(name), "f%c", (char) ('a' + addr % 16));

    return name;
}


/*
 * The nodes as the sorted stacks make them: depth first (a node comes
 * right after its parent or after a node below its parent) and the
 * children of a node by name index.  1 when they are.
 */

static int
preorder(json_t *nodes)
{
    size_t   n, i, k;
    long    *name, *parent, *last, up;

    n = json_array_size(nodes) / 2;
    name = calloc(n + 1, sizeof(long));
    parent = calloc(n + 1, sizeof(long));
    last = calloc(n + 1, sizeof(long));  /* a parent's last child, + 1 */

    for (i = 0; i < n; i++) {
        name[i] = (long) json_integer_value(json_array_get(nodes, 2 * i));
        k = (size_t) json_integer_value(json_array_get(nodes, 2 * i + 1));
        parent[i] = (k == 0) ? -1 : (long) (i - k);
    }

    for (i = 0; i < n; i++) {

        /* the node before: the parent, or below it */

        for (up = (long) i - 1; up != -1 && up != parent[i]; up = parent[up]) {
            /* void */
        }

        if (i > 0 && up != parent[i]) {
            break;
        }

        /* the parent's last child so far: the root's is last[n] */

        k = (parent[i] == -1) ? n : (size_t) parent[i];

        if (last[k] != 0 && name[last[k] - 1] >= name[i]) {
            break;
        }

        last[k] = (long) i + 1;
    }

    free(name);
    free(parent);
    free(last);

    return (i == n);
}


static void
test_order(void)
{
    char      *text, (*roots)[32];
    size_t     len, i, k, depth, cap, nodes;
    json_t    *j, *stacks;
    uint64_t   seed;

    /*
     * 3,000 stacks over 5 names, 1 to 24 frames deep: many share their
     * start, some are the start of others, enough for the sort to
     * partition and not only to insert
     */

    cap = 3000 * 24 * 8 + 64;
    text = malloc(cap);
    roots = calloc(3000, sizeof(*roots));
    len = (size_t) snprintf(text, cap, "heap_v2/1\n  t*: 0: 0 [0: 0]\n");
    seed = 31;

    for (i = 0; i < 3000; i++) {
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        depth = 1 + (seed >> 33) % 24;

        text[len++] = '@';

        for (k = 0; k < depth; k++) {
            seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
            len += (size_t) snprintf(text + len, cap - len, " 0x%x",
                                     (unsigned) (0x10 + (seed >> 33) % 5));

            /* the names from the root: the dump lists the leaf first */
            roots[i][depth - 1 - k] = (char) ('a' + (seed >> 33) % 5);
        }

        len += (size_t) snprintf(text + len, cap - len,
                                 "\n  t*: 1: 64 [0: 0]\n");
    }

    /* a node per distinct start of a stack, counted on the sorted stacks */

    qsort(roots, 3000, sizeof(*roots), compare_roots);

    nodes = 0;

    for (i = 0; i < 3000; i++) {
        for (k = 0; i > 0 && roots[i][k] != '\0'
                    && roots[i][k] == roots[i - 1][k]; k++)
        {
            /* void */
        }

        nodes += strlen(roots[i]) - k;
    }

    j = encode(text, len, resolve_letters, 0);
    stacks = json_object_get(j, "stacks");

    ok(json_is_true(json_object_get(j, "tree_ok")),
       "order: parents first, siblings distinct, a node per stack");
    ok(preorder(json_object_get(j, "nodes")),
       "order: depth first, siblings by name");
    is_int(json_array_size(json_object_get(j, "nodes")) / 2, nodes,
           "order: a node per distinct start of a stack");
    ok(json_array_size(stacks) > 2000 && json_array_size(stacks) <= 3000,
       "order: the stacks merged by name only");

    json_decref(j);
    free(roots);
    free(text);
}


static int
compare_roots(const void *one, const void *two)
{
    return strcmp(one, two);
}


static void
test_rename(void)
{
    json_t      *j, *names, *raw;
    size_t       i;
    const char  *name;
    int          found;

    j = encode_with(STR(DUMP), NULL, 0, resolve_mangled, rename_z);
    names = json_object_get(j, "names");
    raw = json_object_get(j, "raw");

    is_int(json_array_size(raw), json_array_size(names),
           "rename: a raw entry per name");

    /* "_Zmiddle" reads as "middle()", which 0x30 is called already */
    is_int(json_array_size(names), 3, "rename: two symbols, one name");

    found = 0;

    for (i = 0; i < json_array_size(names); i++) {
        name = json_string_value(json_array_get(names, i));

        if (strcmp(name, "alloc()") == 0) {
            is_str(json_string_value(json_array_get(raw, i)), "_Zalloc",
                   "rename: the symbol beside its readable name");
            found++;

        } else if (strcmp(name, "main") == 0) {
            ok(json_is_null(json_array_get(raw, i)),
               "rename: a plain name has no raw symbol");
            found++;
        }
    }

    is_int(found, 2, "rename: both names found");

    json_decref(j);

    j = encode_with(STR(DUMP), NULL, 0, resolve_mangled, NULL);
    ok(json_array_get(json_object_get(j, "raw"), 0) != NULL
       && json_is_null(json_array_get(json_object_get(j, "raw"), 0)),
       "rename: none without a renamer");

    json_decref(j);
}


static void
test_files(void)
{
    json_t      *j, *names, *files, *nf, *f;
    size_t       i;
    const char  *name, *kind;
    int          checked;

    j = encode_with(STR(DUMP), maps, 3, resolve_mapped, NULL);
    names = json_object_get(j, "names");
    files = json_object_get(j, "files");
    nf = json_object_get(j, "name_files");

    is_int(json_array_size(files), 3, "files: three");
    is_int(json_array_size(nf), json_array_size(names),
           "files: one per name");

    checked = 0;

    for (i = 0; i < json_array_size(names); i++) {
        name = json_string_value(json_array_get(names, i));
        f = json_array_get(files, json_integer_value(json_array_get(nf, i)));
        kind = json_string_value(json_object_get(f, "kind"));

        if (strcmp(name, "main") == 0) {
            is_str(kind, "binary", "files: main in the binary");
            checked++;

        } else if (strcmp(name, "middle") == 0) {
            is_str(kind, "module", "files: a module's file");
            is_str(json_string_value(json_object_get(f, "path")),
                   "/usr/lib/nginx/modules/ngx_http_lua_module.so",
                   "files: its path");
            checked++;

        } else if (strcmp(name, "alloc") == 0) {
            is_str(kind, "library", "files: libc is a library");
            checked++;
        }
    }

    is_int(checked, 3, "files: every name has its file");

    json_decref(j);

    j = encode(STR(DUMP), resolve_names, 0);
    is_int(json_array_size(json_object_get(j, "files")), 0,
           "files: none without maps");
    is_int(json_integer_value(json_array_get(json_object_get(j,
                                                             "name_files"),
                                             0)),
           -1, "files: a name with no file is -1");

    json_decref(j);
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
    test_judge();
    test_bad_pprof();
    test_tree();
    test_order();
    test_rename();
    test_files();

    return done_testing();
}
