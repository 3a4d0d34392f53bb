
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * Stacks by name: the judgement of a comparison (one for every form of
 * the answer) and the heap viewer's JSON of them.  Names are resolved
 * once per distinct address and kept once per distinct name; stacks with
 * the same names are one stack, so the workers' heaps merge and a base
 * lines up with what is compared to it.  A profile of 50k stacks stays a
 * few hundred kilobytes.  Bytes of a name that are not printable ASCII are
 * written as \u00XX: the JSON is valid whatever the symbol tables hold.
 *
 * Owns: the named profile.  Calls: arena, heap, noise (pure C).
 */


#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "ngx_http_malloc_named.h"


/* the largest profile.proto read back, once gunzipped */
#define NGX_HTTP_MALLOC_PROTO_MAX  (256 * 1024 * 1024)


/* a slice of the message being read */
typedef struct {
    const unsigned char        *p;
    const unsigned char        *end;
} ngx_http_malloc_pb_t;


/* what a profile.proto says, before its samples are added */
typedef struct {
    ngx_http_malloc_pb_t       *strings;
    size_t                      nstrings;
    ngx_http_malloc_ftable_t    maps;       /* mapping id -> file + 1 */
    ngx_http_malloc_ftable_t    funcs;      /* function id -> name + 1 */
    ngx_http_malloc_ftable_t    locs;       /* location id -> loc + 1 */
    uint32_t                  **loc_names;  /* innermost first, ended by 0 */
    size_t                      nlocs;
    int                         col[16];    /* sample value -> our value */
    size_t                      ncols;
    uint64_t                    period;
} ngx_http_malloc_proto_t;


/* what named_heap_map() needs to name the addresses of a heap */
typedef struct {
    const ngx_http_malloc_map_t  *maps;
    size_t                        nmaps;
    int32_t                      *files;     /* a map's file, -2: not yet */
    ngx_http_malloc_resolve_pt    resolve;
    void                         *data;
    ngx_http_malloc_ftable_t      addrs;     /* address -> name + 1 */
    uint32_t                     *ids;       /* one stack's names */
    uint32_t                      cap;
} ngx_http_malloc_naming_t;


/* stacks that agree on their first "depth" names, waiting to be sorted */
typedef struct {
    size_t                      lo;
    size_t                      n;
    uint32_t                    depth;
} ngx_http_malloc_fpart_t;


/*
 * The JSON as it is written: a few hundred thousand numbers, each
 * formatted here by hand and appended in batches, where a snprintf and
 * an append apiece took most of the time the page waited for.
 */
typedef struct {
    ngx_http_malloc_mbuf_t     *out;
    size_t                      n;
    char                        buf[8192];
} ngx_http_malloc_fbatch_t;


static int ngx_http_malloc_ftable_grow(ngx_http_malloc_arena_t *arena,
    ngx_http_malloc_ftable_t *t);
static uint32_t ngx_http_malloc_ftable_get(ngx_http_malloc_ftable_t *t,
    uint64_t key);
static void *ngx_http_malloc_named_array_room(ngx_http_malloc_arena_t *arena,
    void *array, size_t n, size_t size);
static int ngx_http_malloc_ftable_set(ngx_http_malloc_arena_t *arena,
    ngx_http_malloc_ftable_t *t, uint64_t key, uint32_t value);
static ngx_http_malloc_fslot_t *ngx_http_malloc_ftable_find(
    ngx_http_malloc_ftable_t *t, uint64_t key);
static uint64_t ngx_http_malloc_named_hash(const void *p, size_t len);
static uint64_t ngx_http_malloc_named_hash_ids(const uint32_t *ids,
    uint32_t n);
static uint32_t ngx_http_malloc_named_name(ngx_http_malloc_named_t *np,
    const char *s, size_t len, int32_t file);
static int ngx_http_malloc_named_grow(ngx_http_malloc_named_t *np);
static int ngx_http_malloc_named_build_id(ngx_http_malloc_named_t *np,
    int32_t file, const char *id, size_t len);
static int32_t ngx_http_malloc_named_file(ngx_http_malloc_named_t *np,
    const char *path, size_t len, int binary);
static uint32_t *ngx_http_malloc_named_tree(const ngx_http_malloc_named_t *np,
    uint32_t *nnodes, uint32_t **leaves);
static int ngx_http_malloc_named_sort(ngx_http_malloc_arena_t *arena,
    const ngx_http_malloc_nstack_t **a, size_t n);
static void ngx_http_malloc_named_insert(const ngx_http_malloc_nstack_t **a,
    size_t n, uint32_t depth);
static uint32_t ngx_http_malloc_named_key(const ngx_http_malloc_nstack_t *s,
    uint32_t depth);
static size_t ngx_http_malloc_named_part(ngx_http_malloc_fpart_t *part,
    size_t top, size_t lo, size_t n, uint32_t depth);
static int ngx_http_malloc_named_order(const ngx_http_malloc_nstack_t *a,
    const ngx_http_malloc_nstack_t *b, uint32_t depth);
static void ngx_http_malloc_named_lists(ngx_http_malloc_fbatch_t *b,
    const ngx_http_malloc_named_t *np);
static int ngx_http_malloc_named_room(ngx_http_malloc_named_t *np,
    size_t more);
static ngx_http_malloc_nstack_t *ngx_http_malloc_named_stack(
    ngx_http_malloc_named_t *np, const uint32_t *ids, uint32_t n);
static void ngx_http_malloc_named_add(ngx_http_malloc_nstack_t *s,
    const int64_t *v, int base, uint64_t period);
static ngx_http_malloc_nstack_t *ngx_http_malloc_named_frames(
    ngx_http_malloc_named_t *np, ngx_http_malloc_naming_t *nm,
    const ngx_http_malloc_stack_t *st);
static uint32_t ngx_http_malloc_named_address(ngx_http_malloc_named_t *np,
    ngx_http_malloc_naming_t *nm, uint64_t addr);
static int32_t ngx_http_malloc_named_map_file(ngx_http_malloc_named_t *np,
    ngx_http_malloc_naming_t *nm, int i);
static double ngx_http_malloc_named_finite(double x);
static void ngx_http_malloc_named_noise(ngx_http_malloc_fbatch_t *b,
    const ngx_http_malloc_named_t *np);
static int ngx_http_malloc_gunzip(ngx_http_malloc_arena_t *arena,
    const unsigned char *gz, size_t len, ngx_http_malloc_pb_t *raw);
static int ngx_http_malloc_pb_varint(ngx_http_malloc_pb_t *b, uint64_t *v);
static int ngx_http_malloc_pb_field(ngx_http_malloc_pb_t *b, uint64_t *tag,
    uint64_t *v, ngx_http_malloc_pb_t *sub);
static int ngx_http_malloc_proto_scan(ngx_http_malloc_named_t *np,
    ngx_http_malloc_pb_t raw, ngx_http_malloc_proto_t *pr);
static int ngx_http_malloc_proto_columns(ngx_http_malloc_named_t *np,
    ngx_http_malloc_proto_t *pr, const ngx_http_malloc_pb_t *types);
static int ngx_http_malloc_proto_tables(ngx_http_malloc_named_t *np,
    ngx_http_malloc_proto_t *pr, ngx_http_malloc_pb_t raw);
static const char *ngx_http_malloc_proto_string(ngx_http_malloc_proto_t *pr,
    uint64_t i, size_t *len);
static int ngx_http_malloc_proto_mapping(ngx_http_malloc_named_t *np,
    ngx_http_malloc_proto_t *pr, ngx_http_malloc_pb_t m);
static const char *ngx_http_malloc_proto_named(ngx_http_malloc_proto_t *pr,
    ngx_http_malloc_pb_t m, uint64_t field, uint64_t *id, size_t *len);
static int ngx_http_malloc_proto_function(ngx_http_malloc_named_t *np,
    ngx_http_malloc_proto_t *pr, ngx_http_malloc_pb_t m);
static int ngx_http_malloc_proto_location(ngx_http_malloc_named_t *np,
    ngx_http_malloc_proto_t *pr, ngx_http_malloc_pb_t m);
static int ngx_http_malloc_proto_lines(ngx_http_malloc_named_t *np,
    ngx_http_malloc_proto_t *pr, ngx_http_malloc_pb_t m, int32_t file,
    uint32_t *names);
static int ngx_http_malloc_proto_sample(ngx_http_malloc_named_t *np,
    ngx_http_malloc_proto_t *pr, ngx_http_malloc_pb_t m, int base);
static int ngx_http_malloc_proto_fields(ngx_http_malloc_proto_t *pr,
    ngx_http_malloc_pb_t m, uint64_t *locs, size_t *nlocs, int64_t *v);
static void ngx_http_malloc_proto_value(ngx_http_malloc_proto_t *pr,
    int64_t *v, size_t i, uint64_t x);
static uint32_t *ngx_http_malloc_proto_stack(ngx_http_malloc_named_t *np,
    ngx_http_malloc_proto_t *pr, const uint64_t *locs, size_t nlocs,
    size_t *nids);
static void ngx_http_malloc_named_string(ngx_http_malloc_fbatch_t *b,
    const char *s);
static void ngx_http_malloc_named_row(ngx_http_malloc_fbatch_t *b,
    const int64_t *v, size_t n, int first);
static void ngx_http_malloc_fbatch_text(ngx_http_malloc_fbatch_t *b,
    const char *s, size_t len);
static void ngx_http_malloc_fbatch_flush(ngx_http_malloc_fbatch_t *b);
static void ngx_http_malloc_fbatch_int(ngx_http_malloc_fbatch_t *b,
    int64_t v, int comma);
static void ngx_http_malloc_fbatch_round(ngx_http_malloc_fbatch_t *b,
    double x, int comma);


void
ngx_http_malloc_named_init(ngx_http_malloc_named_t *np,
    ngx_http_malloc_arena_t *arena)
{
    memset(np, 0, sizeof(ngx_http_malloc_named_t));
    np->arena = arena;
}


/* FNV-1a */

static uint64_t
ngx_http_malloc_named_hash(const void *p, size_t len)
{
    uint64_t              h;
    const unsigned char  *s;

    h = 14695981039346656037ULL;

    for (s = p; len > 0; s++, len--) {
        h = (h ^ *s) * 1099511628211ULL;
    }

    return h;
}


/*
 * FNV-1a a name at a time: a stack is some dozens of them, and a byte at
 * a time was a quarter of the time spent naming 50k stacks
 */

static uint64_t
ngx_http_malloc_named_hash_ids(const uint32_t *ids, uint32_t n)
{
    uint32_t  i;
    uint64_t  h;

    h = 14695981039346656037ULL;

    for (i = 0; i < n; i++) {
        h = (h ^ ids[i]) * 1099511628211ULL;
    }

    return h;
}


/*
 * The slot of "key", or the empty one where it would go.  The high half
 * is folded in first: a product's middle bits see only the key's low
 * ones, and a tree's keys differ in their high half (the parent).
 */

static ngx_http_malloc_fslot_t *
ngx_http_malloc_ftable_find(ngx_http_malloc_ftable_t *t, uint64_t key)
{
    size_t  i;

    i = (size_t) (((key ^ (key >> 32)) * 0x9e3779b97f4a7c15ULL) >> 17)
        & (t->cap - 1);

    while (t->slots[i].value != 0 && t->slots[i].key != key) {
        i = (i + 1) & (t->cap - 1);
    }

    return &t->slots[i];
}


/* doubles the table when it is half full; -1 when out of memory */

static int
ngx_http_malloc_ftable_grow(ngx_http_malloc_arena_t *arena,
    ngx_http_malloc_ftable_t *t)
{
    size_t                    i, cap;
    ngx_http_malloc_ftable_t  old;

    if (t->slots != NULL && (t->n + 1) * 2 <= t->cap) {
        return 0;
    }

    old = *t;
    cap = (old.cap != 0) ? old.cap * 2 : 1024;

    t->slots = ngx_http_malloc_arena_alloc(arena,
                                 cap * sizeof(ngx_http_malloc_fslot_t));
    if (t->slots == NULL) {
        *t = old;
        return -1;
    }

    t->cap = cap;

    for (i = 0; i < old.cap; i++) {
        if (old.slots[i].value != 0) {
            *ngx_http_malloc_ftable_find(t, old.slots[i].key) = old.slots[i];
        }
    }

    return 0;
}


/* key -> value, added or replaced; -1 when out of memory */

static int
ngx_http_malloc_ftable_set(ngx_http_malloc_arena_t *arena,
    ngx_http_malloc_ftable_t *t, uint64_t key, uint32_t value)
{
    ngx_http_malloc_fslot_t  *slot;

    if (ngx_http_malloc_ftable_grow(arena, t) != 0) {
        return -1;
    }

    slot = ngx_http_malloc_ftable_find(t, key);

    if (slot->value == 0) {
        t->n++;
    }

    slot->key = key;
    slot->value = value;

    return 0;
}


/* the value of key; 0 when there is none, the table empty or not */

static uint32_t
ngx_http_malloc_ftable_get(ngx_http_malloc_ftable_t *t, uint64_t key)
{
    if (t->slots == NULL) {
        return 0;
    }

    return ngx_http_malloc_ftable_find(t, key)->value;
}


/*
 * Room for one more in an array of n elements of "size" that doubles
 * when n is 0, 1, 2, 4...: the array, a copy when it grew; NULL: out of
 * memory
 */

static void *
ngx_http_malloc_named_array_room(ngx_http_malloc_arena_t *arena, void *array,
    size_t n, size_t size)
{
    void  *p;

    if ((n & (n - 1)) != 0) {
        return array;
    }

    p = ngx_http_malloc_arena_alloc(arena, (n ? n * 2 : 1) * size);
    if (p == NULL) {
        return NULL;
    }

    if (n != 0) {
        memcpy(p, array, n * size);
    }

    return p;
}


/*
 * The index + 1 of a name, added if new, its file noted if not known yet;
 * 0: out of memory.  A name is kept in its readable form: two symbols
 * that read the same are one name (the first one's symbol is kept).  A
 * name whose hash is taken by another goes on to hash + 1, + 2...:
 * lookups follow the same chain, and nothing is ever removed.
 */

static uint32_t
ngx_http_malloc_named_name(ngx_http_malloc_named_t *np, const char *s,
    size_t len, int32_t file)
{
    size_t                    n;
    uint64_t                  h;
    const char               *copy, *raw;
    ngx_http_malloc_fslot_t  *slot;
    char                      sym[1024], readable[4096];

    raw = NULL;

    /* only a "_Z..." or "_R..." symbol can read otherwise */

    if (np->rename != NULL && len > 2 && len < sizeof(sym) && s[0] == '_') {
        memcpy(sym, s, len);
        sym[len] = '\0';

        n = np->rename(sym, readable, sizeof(readable));

        if (n != 0 && n < sizeof(readable)) {
            raw = s;
            s = readable;
            len = n;
        }
    }

    if (ngx_http_malloc_ftable_grow(np->arena, &np->byname) != 0) {
        return 0;
    }

    h = ngx_http_malloc_named_hash(s, len);

    for (slot = ngx_http_malloc_ftable_find(&np->byname, h);
         slot->value != 0;
         slot = ngx_http_malloc_ftable_find(&np->byname, ++h))
    {
        copy = np->names[slot->value - 1];

        if (strncmp(copy, s, len) == 0 && copy[len] == '\0') {
            if (np->name_files[slot->value - 1] == -1) {
                np->name_files[slot->value - 1] = file;
            }

            return slot->value;
        }
    }

    if (np->nnames == np->names_cap && ngx_http_malloc_named_grow(np) != 0) {
        return 0;
    }

    copy = ngx_http_malloc_arena_strndup(np->arena, s, len);
    if (copy == NULL) {
        return 0;
    }

    np->raws[np->nnames] = NULL;

    if (raw != NULL) {
        np->raws[np->nnames] = ngx_http_malloc_arena_strndup(np->arena, sym,
                                                             strlen(sym));
        if (np->raws[np->nnames] == NULL) {
            return 0;
        }
    }

    np->name_files[np->nnames] = file;
    np->names[np->nnames++] = copy;
    slot->key = h;
    slot->value = (uint32_t) np->nnames;
    np->byname.n++;

    return slot->value;
}


/* twice the room for names, their symbols and files; -1: no memory */

static int
ngx_http_malloc_named_grow(ngx_http_malloc_named_t *np)
{
    size_t        cap;
    int32_t      *files;
    const char  **names, **raws;

    cap = np->names_cap ? np->names_cap * 2 : 1024;
    names = ngx_http_malloc_arena_alloc(np->arena, cap * sizeof(char *));
    raws = ngx_http_malloc_arena_alloc(np->arena, cap * sizeof(char *));
    files = ngx_http_malloc_arena_alloc(np->arena, cap * sizeof(int32_t));

    if (names == NULL || raws == NULL || files == NULL) {
        return -1;
    }

    if (np->nnames != 0) {
        memcpy(names, np->names, np->nnames * sizeof(char *));
        memcpy(raws, np->raws, np->nnames * sizeof(char *));
        memcpy(files, np->name_files, np->nnames * sizeof(int32_t));
    }

    np->names = names;
    np->raws = raws;
    np->name_files = files;
    np->names_cap = cap;

    return 0;
}


/*
 * The index of a file, added if new; -1: out of memory.  A process maps a
 * few dozen files: a look through them is cheap.
 */

static int32_t
ngx_http_malloc_named_file(ngx_http_malloc_named_t *np, const char *path,
    size_t len, int binary)
{
    size_t                    i;
    const char               *base;
    ngx_http_malloc_nfile_t  *files, *f;

    for (i = 0; i < np->nfiles; i++) {
        if (strncmp(np->files[i].path, path, len) == 0
            && np->files[i].path[len] == '\0')
        {
            return (int32_t) i;
        }
    }

    files = ngx_http_malloc_named_array_room(np->arena, np->files, np->nfiles,
                                        sizeof(ngx_http_malloc_nfile_t));
    if (files == NULL) {
        return -1;
    }

    np->files = files;

    f = &np->files[np->nfiles];

    f->path = ngx_http_malloc_arena_strndup(np->arena, path, len);
    if (f->path == NULL) {
        return -1;
    }

    /* load_module's files are named so: ngx_http_lua_module.so */

    base = strrchr(f->path, '/');
    base = (base != NULL) ? base + 1 : f->path;
    len = strlen(base);

    f->kind = binary ? NGX_HTTP_MALLOC_FILE_BINARY
              : (strncmp(base, "ngx_", 4) == 0 && len > 10
                 && strcmp(base + len - 10, "_module.so") == 0)
                ? NGX_HTTP_MALLOC_FILE_MODULE : NGX_HTTP_MALLOC_FILE_LIBRARY;

    return (int32_t) np->nfiles++;
}


/* a file's build id, the first one known; -1: out of memory */

static int
ngx_http_malloc_named_build_id(ngx_http_malloc_named_t *np, int32_t file,
    const char *id, size_t len)
{
    ngx_http_malloc_nfile_t  *f;

    f = &np->files[file];

    if (len == 0 || f->build_id != NULL) {
        return 0;
    }

    f->build_id = ngx_http_malloc_arena_strndup(np->arena, id, len);

    return (f->build_id != NULL) ? 0 : -1;
}


/* the stack of these names (indexes + 1), added if new; NULL: no memory */

static ngx_http_malloc_nstack_t *
ngx_http_malloc_named_stack(ngx_http_malloc_named_t *np, const uint32_t *ids,
    uint32_t n)
{
    uint32_t                   none;
    uint64_t                   h;
    ngx_http_malloc_fslot_t   *slot;
    ngx_http_malloc_nstack_t  *s;

    /* a stack must end in a node: one with no frames gets a name */

    if (n == 0) {
        none = ngx_http_malloc_named_name(np, "(no frames)", 11, -1);
        if (none == 0) {
            return NULL;
        }

        ids = &none;
        n = 1;
    }

    if (ngx_http_malloc_ftable_grow(np->arena, &np->bystack) != 0) {
        return NULL;
    }

    h = ngx_http_malloc_named_hash_ids(ids, n);

    for (slot = ngx_http_malloc_ftable_find(&np->bystack, h);
         slot->value != 0;
         slot = ngx_http_malloc_ftable_find(&np->bystack, ++h))
    {
        s = &np->stacks[slot->value - 1];

        if (s->n == n && memcmp(s->ids, ids, n * sizeof(uint32_t)) == 0) {
            return s;
        }
    }

    if (np->nstacks == np->stacks_cap
        && ngx_http_malloc_named_room(np, np->stacks_cap ? np->stacks_cap
                                                         : 1024)
           != 0)
    {
        return NULL;
    }

    s = &np->stacks[np->nstacks];

    s->ids = ngx_http_malloc_arena_alloc(np->arena,
                                         (n + 1) * sizeof(uint32_t));
    if (s->ids == NULL) {
        return NULL;
    }

    if (n != 0) {
        memcpy(s->ids, ids, n * sizeof(uint32_t));
    }

    s->n = n;

    np->nstacks++;
    slot->key = h;
    slot->value = (uint32_t) np->nstacks;
    np->bystack.n++;

    return s;
}


/*
 * Room for "more" stacks beyond those named; -1: out of memory.  The
 * first heap says how many stacks it brings: one array of that size,
 * where growing it by doubling touched about twice its pages (each a
 * page fault) and copied it on the way.
 */

static int
ngx_http_malloc_named_room(ngx_http_malloc_named_t *np, size_t more)
{
    ngx_http_malloc_nstack_t  *stacks;

    if (np->stacks_cap - np->nstacks >= more) {
        return 0;
    }

    stacks = ngx_http_malloc_arena_alloc(np->arena, (np->nstacks + more)
                                         * sizeof(ngx_http_malloc_nstack_t));
    if (stacks == NULL) {
        return -1;
    }

    if (np->nstacks != 0) {
        memcpy(stacks, np->stacks,
               np->nstacks * sizeof(ngx_http_malloc_nstack_t));
    }

    np->stacks = stacks;
    np->stacks_cap = np->nstacks + more;

    return 0;
}


/* counts from dumps may be anything: sums saturate */

static void
ngx_http_malloc_named_add(ngx_http_malloc_nstack_t *s, const int64_t *v,
    int base, uint64_t period)
{
    size_t    i;
    int64_t  *to;

    to = base ? s->base : s->v;

    for (i = 0; i < NGX_HTTP_MALLOC_NAMED_VALUES; i++) {
        if (v[i] > 0 && to[i] > INT64_MAX - v[i]) {
            to[i] = INT64_MAX;

        } else if (v[i] < 0 && to[i] < INT64_MIN - v[i]) {
            to[i] = INT64_MIN;

        } else {
            to[i] += v[i];
        }
    }

    ngx_http_malloc_noise_add_unbiased(&s->side[base != 0], period,
                                       (double) v[1], (double) v[0]);
}


int
ngx_http_malloc_named_heap(ngx_http_malloc_named_t *np,
    const ngx_http_malloc_heap_t *heap, const ngx_http_malloc_map_t *maps,
    size_t nmaps, ngx_http_malloc_resolve_pt resolve, void *data, int base,
    char *err)
{
    return ngx_http_malloc_named_heap_map(np, heap, maps, nmaps, resolve,
                                          data, base, NULL, err);
}


int
ngx_http_malloc_named_heap_map(ngx_http_malloc_named_t *np,
    const ngx_http_malloc_heap_t *heap, const ngx_http_malloc_map_t *maps,
    size_t nmaps, ngx_http_malloc_resolve_pt resolve, void *data, int base,
    uint32_t *which, char *err)
{
    size_t                          i;
    int64_t                         v[NGX_HTTP_MALLOC_NAMED_VALUES];
    ngx_http_malloc_naming_t        nm;
    ngx_http_malloc_nstack_t       *ns;
    const ngx_http_malloc_stack_t  *st;

    memset(&nm, 0, sizeof(ngx_http_malloc_naming_t));
    nm.maps = maps;
    nm.nmaps = nmaps;
    nm.resolve = resolve;
    nm.data = data;

    /* an empty base is a base: everything grew */
    np->has_base |= (base != 0);

    if (np->period == 0) {
        np->period = heap->period;
    }

    if (heap->accum) {
        np->alloc = 1;
    }

    /* a map's file, found once: -2 not yet */

    nm.files = ngx_http_malloc_arena_alloc(np->arena,
                                           (nmaps + 1) * sizeof(int32_t));
    if (nm.files == NULL) {
        goto nomem;
    }

    for (i = 0; i < nmaps; i++) {
        nm.files[i] = -2;
    }

    /* a base's stacks are mostly the heap's: it grows as it needs */

    if (np->nstacks == 0
        && ngx_http_malloc_named_room(np, heap->nstacks) != 0)
    {
        goto nomem;
    }

    for (i = 0; i < heap->nstacks; i++) {
        st = &heap->stacks[i];

        ns = ngx_http_malloc_named_frames(np, &nm, st);
        if (ns == NULL) {
            goto nomem;
        }

        if (which != NULL) {
            which[i] = (uint32_t) (ns - np->stacks);
        }

        ngx_http_malloc_heap_values(heap, st, &v[1], &v[0]);
        ngx_http_malloc_heap_unbias(heap->period, st->accum_objs,
                                    st->accum_bytes, &v[3], &v[2]);

        ngx_http_malloc_named_add(ns, v, base, heap->period);
    }

    return 0;

nomem:

    snprintf(err, NGX_HTTP_MALLOC_NAMED_ERR_LEN,
             "out of memory while naming the stacks");
    return -1;
}


/* the named stack of a heap's stack, its frames named; NULL: no memory */

static ngx_http_malloc_nstack_t *
ngx_http_malloc_named_frames(ngx_http_malloc_named_t *np,
    ngx_http_malloc_naming_t *nm, const ngx_http_malloc_stack_t *st)
{
    size_t  k;

    if (st->nframes + 1 > nm->cap) {
        nm->cap = st->nframes + 1;
        nm->ids = ngx_http_malloc_arena_alloc(np->arena,
                                              nm->cap * sizeof(uint32_t));
        if (nm->ids == NULL) {
            return NULL;
        }
    }

    /* jemalloc lists the allocating frame first: the root goes first */

    for (k = 0; k < st->nframes; k++) {
        nm->ids[st->nframes - 1 - k] = ngx_http_malloc_named_address(np, nm,
                                                              st->frames[k]);
        if (nm->ids[st->nframes - 1 - k] == 0) {
            return NULL;
        }
    }

    return ngx_http_malloc_named_stack(np, nm->ids, st->nframes);
}


/*
 * The name (index + 1) of a return address, resolved on first sight, so
 * that a name's file is its first address's; 0: out of memory
 */

static uint32_t
ngx_http_malloc_named_address(ngx_http_malloc_named_t *np,
    ngx_http_malloc_naming_t *nm, uint64_t addr)
{
    int          map;
    int32_t      file;
    uint32_t     name;
    const char  *s;
    char         hex[32];

    /* most frames are seen before: the table grows only for new ones */

    name = ngx_http_malloc_ftable_get(&nm->addrs, addr);

    if (name != 0) {
        return name;
    }

    map = -1;
    s = (nm->resolve != NULL) ? nm->resolve(nm->data, addr, &map) : NULL;

    if (s == NULL) {
        snprintf(hex, sizeof(hex), "0x%llx", (unsigned long long) addr);
        s = hex;
    }

    file = -1;

    if (map >= 0 && (size_t) map < nm->nmaps) {
        file = ngx_http_malloc_named_map_file(np, nm, map);
        if (file == -1) {
            return 0;
        }
    }

    name = ngx_http_malloc_named_name(np, s, strlen(s), file);

    if (name == 0
        || ngx_http_malloc_ftable_set(np->arena, &nm->addrs, addr, name) != 0)
    {
        return 0;
    }

    return name;
}


/* the file of map i, with its build id, added on first use; -1: no memory */

static int32_t
ngx_http_malloc_named_map_file(ngx_http_malloc_named_t *np,
    ngx_http_malloc_naming_t *nm, int i)
{
    const ngx_http_malloc_map_t  *m;

    if (nm->files[i] != -2) {
        return nm->files[i];
    }

    m = &nm->maps[i];

    nm->files[i] = ngx_http_malloc_named_file(np, m->path, strlen(m->path),
                                       strcmp(m->path, nm->maps[0].path) == 0);
    if (nm->files[i] == -1
        || ngx_http_malloc_named_build_id(np, nm->files[i], m->build_id,
                                          m->build_id ? strlen(m->build_id)
                                                      : 0)
           != 0)
    {
        return -1;
    }

    return nm->files[i];
}


int
ngx_http_malloc_named_write(ngx_http_malloc_named_t *np, uint64_t seconds,
    ngx_http_malloc_mbuf_t *out, char *err)
{
    size_t                     i, nv;
    uint32_t                  *tree, *leaves, nnodes;
    ngx_http_malloc_fbatch_t   b;

    nv = np->alloc ? 4 : 2;

    if (np->has_base && !np->compared
        && ngx_http_malloc_named_judge(np) != 0)
    {
        snprintf(err, NGX_HTTP_MALLOC_NAMED_ERR_LEN,
                 "out of memory while comparing the profiles");
        return -1;
    }

    tree = ngx_http_malloc_named_tree(np, &nnodes, &leaves);
    if (tree == NULL) {
        snprintf(err, NGX_HTTP_MALLOC_NAMED_ERR_LEN,
                 "out of memory while merging the stacks");
        return -1;
    }

    ngx_http_malloc_mbuf_printf(out, "{\"period\":%llu,\"seconds\":%llu,"
                                "\"types\":[\"inuse_space\","
                                "\"inuse_objects\"%s],",
                                (unsigned long long) np->period,
                                (unsigned long long) seconds,
                                np->alloc ? ",\"alloc_space\","
                                            "\"alloc_objects\"" : "");

    b.out = out;
    b.n = 0;

    ngx_http_malloc_named_lists(&b, np);

    ngx_http_malloc_fbatch_text(&b, "],\"nodes\":[", 11);

    for (i = 0; i < nnodes; i++) {
        ngx_http_malloc_fbatch_int(&b, tree[2 * i], i != 0);
        ngx_http_malloc_fbatch_int(&b, tree[2 * i + 1], 1);
    }

    ngx_http_malloc_fbatch_text(&b, "],\"stacks\":[", 12);

    for (i = 0; i < np->nstacks; i++) {
        ngx_http_malloc_fbatch_int(&b, leaves[i], i != 0);
    }

    ngx_http_malloc_fbatch_text(&b, "],\"values\":[", 12);

    for (i = 0; i < np->nstacks; i++) {
        ngx_http_malloc_named_row(&b, np->stacks[i].v, nv, i == 0);
    }

    ngx_http_malloc_fbatch_text(&b, "],\"samples\":[", 13);

    for (i = 0; i < np->nstacks; i++) {
        ngx_http_malloc_fbatch_round(&b, np->stacks[i].side[0].samples,
                                     i != 0);
    }

    if (np->has_base) {
        ngx_http_malloc_fbatch_text(&b, "],\"base_values\":[", 17);

        for (i = 0; i < np->nstacks; i++) {
            ngx_http_malloc_named_row(&b, np->stacks[i].base, nv, i == 0);
        }

        ngx_http_malloc_named_noise(&b, np);
        ngx_http_malloc_fbatch_text(&b, "}\n", 2);

    } else {
        ngx_http_malloc_fbatch_text(&b, "]}\n", 3);
    }

    ngx_http_malloc_fbatch_flush(&b);

    if (out->failed) {
        snprintf(err, NGX_HTTP_MALLOC_NAMED_ERR_LEN,
                 "out of memory while writing the profile");
        return -1;
    }

    return 0;
}


/*
 * "names", "raw", "files" and "name_files", up to the "]" of the last:
 * the strings of the profile.
 */

static void
ngx_http_malloc_named_lists(ngx_http_malloc_fbatch_t *b,
    const ngx_http_malloc_named_t *np)
{
    size_t        i;
    const char   *kind;
    static char  *kinds[] = { "library", "binary", "module" };

    ngx_http_malloc_fbatch_text(b, "\"names\":[", 9);

    for (i = 0; i < np->nnames; i++) {
        if (i != 0) {
            ngx_http_malloc_fbatch_text(b, ",", 1);
        }

        ngx_http_malloc_named_string(b, np->names[i]);
    }

    ngx_http_malloc_fbatch_text(b, "],\"raw\":[", 9);

    for (i = 0; i < np->nnames; i++) {
        if (i != 0) {
            ngx_http_malloc_fbatch_text(b, ",", 1);
        }

        if (np->raws[i] == NULL) {
            ngx_http_malloc_fbatch_text(b, "null", 4);

        } else {
            ngx_http_malloc_named_string(b, np->raws[i]);
        }
    }

    ngx_http_malloc_fbatch_text(b, "],\"files\":[", 11);

    for (i = 0; i < np->nfiles; i++) {
        ngx_http_malloc_fbatch_text(b, i ? ",{\"path\":" : "{\"path\":",
                                    i ? 9 : 8);
        ngx_http_malloc_named_string(b, np->files[i].path);

        kind = kinds[np->files[i].kind];
        ngx_http_malloc_fbatch_text(b, ",\"kind\":\"", 9);
        ngx_http_malloc_fbatch_text(b, kind, strlen(kind));
        ngx_http_malloc_fbatch_text(b, "\"}", 2);
    }

    ngx_http_malloc_fbatch_text(b, "],\"name_files\":[", 16);

    for (i = 0; i < np->nnames; i++) {
        ngx_http_malloc_fbatch_int(b, np->name_files[i], i != 0);
    }
}


/*
 * The call tree of the stacks, two integers a node (its name, and how
 * many nodes back its parent is, 0: none); *leaves: each stack's node.
 * NULL: out of memory.  The stacks are sorted by their names from the
 * root: a stack then shares with the one before it the nodes of their
 * common start and adds the rest, and the nodes come depth first, so
 * that the second integer is mostly 1 and compresses.
 */

static uint32_t *
ngx_http_malloc_named_tree(const ngx_http_malloc_named_t *np,
    uint32_t *nnodes, uint32_t **leaves)
{
    size_t                           i, k, total, common, maxn;
    uint32_t                        *tree, *path, n;
    ngx_http_malloc_nstack_t        *s;
    const ngx_http_malloc_nstack_t  *prev, **sorted;

    total = 0;
    maxn = 0;

    for (i = 0; i < np->nstacks; i++) {
        total += np->stacks[i].n;
        maxn = (np->stacks[i].n > maxn) ? np->stacks[i].n : maxn;
    }

    if (total > UINT32_MAX / 2) {
        return NULL;
    }

    tree = ngx_http_malloc_arena_alloc(np->arena,
                                       (2 * total + 1) * sizeof(uint32_t));
    path = ngx_http_malloc_arena_alloc(np->arena,
                                       (maxn + 1) * sizeof(uint32_t));
    sorted = ngx_http_malloc_arena_alloc(np->arena,
                                         (np->nstacks + 1) * sizeof(void *));
    *leaves = ngx_http_malloc_arena_alloc(np->arena,
                                          (np->nstacks + 1)
                                          * sizeof(uint32_t));
    if (tree == NULL || path == NULL || sorted == NULL || *leaves == NULL) {
        return NULL;
    }

    for (i = 0; i < np->nstacks; i++) {
        sorted[i] = &np->stacks[i];
    }

    if (ngx_http_malloc_named_sort(np->arena, sorted, np->nstacks) != 0) {
        return NULL;
    }

    /* path[k]: the node of the previous stack's frame k */

    n = 0;
    prev = NULL;

    for (i = 0; i < np->nstacks; i++) {
        s = (ngx_http_malloc_nstack_t *) sorted[i];

        for (common = 0;
             prev != NULL && common < prev->n && common < s->n
             && prev->ids[common] == s->ids[common];
             common++)
        {
            /* void */
        }

        for (k = common; k < s->n; k++) {
            tree[2 * n] = s->ids[k] - 1;
            tree[2 * n + 1] = (k == 0) ? 0 : n - path[k - 1];
            path[k] = n++;
        }

        /* a stack is not empty (named_stack), nor the same as another */
        (*leaves)[s - np->stacks] = path[s->n - 1];
        prev = s;
    }

    *nnodes = n;

    return tree;
}


/*
 * The stacks in the tree's order (names from the root, the shorter
 * first), by Bentley and Sedgewick's multikey quicksort: a partition
 * reads one frame of each stack, and the stacks that agree on it go on
 * to the next frame.  Stacks share long starts (the event loop, the
 * phases, the handler): comparing whole stacks read those again at each
 * of the n log n comparisons, half the time of the JSON at 50k stacks.
 * Parts wait on a list in the arena, not on the C stack: they are
 * disjoint and of two stacks or more, so n / 2 + 1 entries hold them.
 * -1: out of memory.
 */

static int
ngx_http_malloc_named_sort(ngx_http_malloc_arena_t *arena,
    const ngx_http_malloc_nstack_t **a, size_t n)
{
    size_t                           lo, lt, gt, i, k, top;
    uint32_t                         depth, pivot, key, x, y, z;
    ngx_http_malloc_fpart_t         *part;
    const ngx_http_malloc_nstack_t  *t, **p;

    part = ngx_http_malloc_arena_alloc(arena,
                               (n / 2 + 1) * sizeof(ngx_http_malloc_fpart_t));
    if (part == NULL) {
        return -1;
    }

    top = ngx_http_malloc_named_part(part, 0, 0, n, 0);

    while (top > 0) {
        top--;
        lo = part[top].lo;
        k = part[top].n;
        depth = part[top].depth;
        p = a + lo;

        if (k < 12) {
            ngx_http_malloc_named_insert(p, k, depth);
            continue;
        }

        /* the median of the first, middle and last keys */

        x = ngx_http_malloc_named_key(p[0], depth);
        y = ngx_http_malloc_named_key(p[k / 2], depth);
        z = ngx_http_malloc_named_key(p[k - 1], depth);

        pivot = (x < y) ? ((y < z) ? y : (x < z) ? z : x)
                        : ((x < z) ? x : (y < z) ? z : y);

        /* [0, lt) less, [lt, i) equal, [gt, k) greater */

        lt = 0;
        gt = k;
        i = 0;

        while (i < gt) {
            key = ngx_http_malloc_named_key(p[i], depth);
            t = p[i];

            if (key < pivot) {
                p[i++] = p[lt];
                p[lt++] = t;

            } else if (key > pivot) {
                p[i] = p[--gt];
                p[gt] = t;

            } else {
                i++;
            }
        }

        top = ngx_http_malloc_named_part(part, top, lo, lt, depth);
        top = ngx_http_malloc_named_part(part, top, lo + gt, k - gt, depth);

        /* stacks that ended here are one stack: named_stack() merged them */

        if (pivot != 0) {
            top = ngx_http_malloc_named_part(part, top, lo + lt, gt - lt,
                                             depth + 1);
        }
    }

    return 0;
}


/* a part is queued when it has two stacks to order; the new top */

static size_t
ngx_http_malloc_named_part(ngx_http_malloc_fpart_t *part, size_t top,
    size_t lo, size_t n, uint32_t depth)
{
    if (n < 2) {
        return top;
    }

    part[top].lo = lo;
    part[top].n = n;
    part[top].depth = depth;

    return top + 1;
}


/* a stack's key at a depth: its name + 1 there, 0 once it has ended */

static uint32_t
ngx_http_malloc_named_key(const ngx_http_malloc_nstack_t *s, uint32_t depth)
{
    return (depth < s->n) ? s->ids[depth] : 0;
}


/* a few stacks that agree up to "depth", sorted by insertion */

static void
ngx_http_malloc_named_insert(const ngx_http_malloc_nstack_t **a, size_t n,
    uint32_t depth)
{
    size_t                           i, j;
    const ngx_http_malloc_nstack_t  *s;

    for (i = 1; i < n; i++) {
        s = a[i];

        for (j = i; j > 0 && ngx_http_malloc_named_order(s, a[j - 1], depth)
                             < 0;
             j--)
        {
            a[j] = a[j - 1];
        }

        a[j] = s;
    }
}


/* names from "depth" on, then the shorter first: the tree's order */

static int
ngx_http_malloc_named_order(const ngx_http_malloc_nstack_t *a,
    const ngx_http_malloc_nstack_t *b, uint32_t depth)
{
    uint32_t  k;

    for (k = depth; k < a->n && k < b->n; k++) {
        if (a->ids[k] != b->ids[k]) {
            return (a->ids[k] < b->ids[k]) ? -1 : 1;
        }
    }

    return (a->n < b->n) ? -1 : (a->n > b->n);
}


/* JSON has no infinity: sums of hostile counts stop at int64's range */

static double
ngx_http_malloc_named_finite(double x)
{
    if (!(x < 9.2e18)) {
        return (x > 0) ? 9.2e18 : 0;
    }

    return (x > -9.2e18) ? x : -9.2e18;
}


/*
 * The level is Tarone's over the stacks that have a sample; the limit is
 * that of the heap as one stack, on the side of the larger variance, as
 * if nothing had changed: what growth among the samples it rests on
 * must reach to be seen.
 */

int
ngx_http_malloc_named_judge(ngx_http_malloc_named_t *np)
{
    size_t                           i, n;
    double                          *z, *zmax;
    ngx_http_malloc_noise_t         *nz;
    ngx_http_malloc_side_t           now, was;
    const ngx_http_malloc_nstack_t  *s;

    nz = &np->noise;
    memset(nz, 0, sizeof(ngx_http_malloc_noise_t));
    memset(&now, 0, sizeof(ngx_http_malloc_side_t));
    memset(&was, 0, sizeof(ngx_http_malloc_side_t));

    z = ngx_http_malloc_arena_alloc(np->arena,
                                    (np->nstacks + 1) * sizeof(double));
    zmax = ngx_http_malloc_arena_alloc(np->arena,
                                       (np->nstacks + 1) * sizeof(double));
    np->margins = ngx_http_malloc_arena_alloc(np->arena,
                                      (np->nstacks + 1) * sizeof(double));
    np->judged = ngx_http_malloc_arena_alloc(np->arena, np->nstacks + 1);

    if (z == NULL || zmax == NULL || np->margins == NULL
        || np->judged == NULL)
    {
        return -1;
    }

    n = 0;

    for (i = 0; i < np->nstacks; i++) {
        s = &np->stacks[i];

        nz->samples += s->side[0].samples;
        nz->base_samples += s->side[1].samples;
        nz->net += s->side[0].bytes - s->side[1].bytes;

        ngx_http_malloc_noise_sum(&now, &s->side[0]);
        ngx_http_malloc_noise_sum(&was, &s->side[1]);

        z[i] = ngx_http_malloc_noise_z(&s->side[0], &s->side[1], &zmax[n]);

        if (s->side[0].samples + s->side[1].samples > 0) {
            nz->compared++;
            n++;
        }
    }

    ngx_http_malloc_noise_level(nz, zmax, n);

    for (i = 0; i < np->nstacks; i++) {
        s = &np->stacks[i];
        np->judged[i] = (signed char) ngx_http_malloc_noise_judge(nz, z[i],
                                      s->side[0].bytes - s->side[1].bytes);
        np->margins[i] = ngx_http_malloc_noise_margin(&s->side[0],
                                                      &s->side[1], nz->z);
    }

    nz->limit = ngx_http_malloc_noise_limit((now.var > was.var) ? &now
                                                                : &was,
                                            np->period, nz->z);
    nz->floor = ngx_http_malloc_noise_limit(NULL, np->period, nz->z);

    np->compared = 1;

    return 0;
}


/*
 * "base_samples", "significant" (1 grew, -1 shrank, 0 within the noise)
 * and "margins" by stack, and what the comparison rests on
 */

static void
ngx_http_malloc_named_noise(ngx_http_malloc_fbatch_t *b,
    const ngx_http_malloc_named_t *np)
{
    size_t                          i;
    const ngx_http_malloc_noise_t  *nz;
    char                            line[512];

    nz = &np->noise;

    ngx_http_malloc_fbatch_text(b, "],\"base_samples\":[", 18);

    for (i = 0; i < np->nstacks; i++) {
        ngx_http_malloc_fbatch_round(b, np->stacks[i].side[1].samples,
                                     i != 0);
    }

    ngx_http_malloc_fbatch_text(b, "],\"significant\":[", 17);

    for (i = 0; i < np->nstacks; i++) {
        ngx_http_malloc_fbatch_int(b, np->judged[i], i != 0);
    }

    ngx_http_malloc_fbatch_text(b, "],\"margins\":[", 13);

    for (i = 0; i < np->nstacks; i++) {
        ngx_http_malloc_fbatch_round(b, np->margins[i], i != 0);
    }

    /* once per answer: printf's own formats, and its rounding */

    ngx_http_malloc_fbatch_flush(b);

    ngx_http_malloc_mbuf_printf(b->out, "],\"comparison\":{\"level\":%.2f,"
                                "\"z\":%.3f,\"compared\":%zu,"
                                "\"testable\":%zu,\"grew\":%zu,"
                                "\"shrank\":%zu,\"samples\":%.0f,"
                                "\"base_samples\":%.0f,\"net\":%.0f,"
                                "\"grown\":%.0f,\"shrunk\":%.0f,"
                                "\"limit\":%.0f,\"floor\":%.0f,"
                                "\"detection\":",
                                NGX_HTTP_MALLOC_NOISE_LEVEL, nz->z,
                                nz->compared, nz->testable, nz->grew,
                                nz->shrank,
                                ngx_http_malloc_named_finite(nz->samples),
                                ngx_http_malloc_named_finite(
                                    nz->base_samples),
                                ngx_http_malloc_named_finite(nz->net),
                                ngx_http_malloc_named_finite(nz->grown),
                                ngx_http_malloc_named_finite(nz->shrunk),
                                ngx_http_malloc_named_finite(nz->limit),
                                ngx_http_malloc_named_finite(nz->floor));

    (void) ngx_http_malloc_noise_detection(line, sizeof(line), nz);
    ngx_http_malloc_named_string(b, line);

    if (np->exact_of != NULL) {
        ngx_http_malloc_fbatch_text(b, ",\"exact\":{\"of\":", 15);
        ngx_http_malloc_named_string(b, np->exact_of);
        ngx_http_malloc_fbatch_text(b, ",\"change\":", 10);
        ngx_http_malloc_fbatch_int(b, np->exact_change, 0);
        ngx_http_malloc_fbatch_text(b, "}", 1);
    }

    if (np->caveat != NULL) {
        ngx_http_malloc_fbatch_text(b, ",\"caveat\":", 10);
        ngx_http_malloc_named_string(b, np->caveat);
    }

    ngx_http_malloc_fbatch_text(b, "}", 1);
}


static void
ngx_http_malloc_named_row(ngx_http_malloc_fbatch_t *b, const int64_t *v,
    size_t n, int first)
{
    size_t  i;

    ngx_http_malloc_fbatch_text(b, first ? "[" : ",[", first ? 1 : 2);

    for (i = 0; i < n; i++) {
        ngx_http_malloc_fbatch_int(b, v[i], i != 0);
    }

    ngx_http_malloc_fbatch_text(b, "]", 1);
}


/* the runs of bytes that need no escape go in one piece */

static void
ngx_http_malloc_named_string(ngx_http_malloc_fbatch_t *b, const char *s)
{
    char                  esc[8];
    const unsigned char  *p, *run;
    static const char     hex[] = "0123456789abcdef";

    ngx_http_malloc_fbatch_text(b, "\"", 1);

    for (p = (const unsigned char *) s, run = p; *p != '\0'; p++) {

        if (*p != '"' && *p != '\\' && *p >= 0x20 && *p < 0x7f) {
            continue;
        }

        ngx_http_malloc_fbatch_text(b, (const char *) run, p - run);
        run = p + 1;

        if (*p == '"' || *p == '\\') {
            esc[0] = '\\';
            esc[1] = (char) *p;
            ngx_http_malloc_fbatch_text(b, esc, 2);
            continue;
        }

        memcpy(esc, "\\u00", 4);
        esc[4] = hex[*p >> 4];
        esc[5] = hex[*p & 0xf];
        ngx_http_malloc_fbatch_text(b, esc, 6);
    }

    ngx_http_malloc_fbatch_text(b, (const char *) run, p - run);
    ngx_http_malloc_fbatch_text(b, "\"", 1);
}


static void
ngx_http_malloc_fbatch_flush(ngx_http_malloc_fbatch_t *b)
{
    ngx_http_malloc_mbuf_append(b->out, b->buf, b->n);
    b->n = 0;
}


/* a piece longer than the batch goes straight after what is batched */

static void
ngx_http_malloc_fbatch_text(ngx_http_malloc_fbatch_t *b, const char *s,
    size_t len)
{
    if (len > sizeof(b->buf) - b->n) {
        ngx_http_malloc_fbatch_flush(b);

        if (len > sizeof(b->buf)) {
            ngx_http_malloc_mbuf_append(b->out, s, len);
            return;
        }
    }

    memcpy(b->buf + b->n, s, len);
    b->n += len;
}


/* v as printf's "%lld" would write it, after a comma if "comma" */

static void
ngx_http_malloc_fbatch_int(ngx_http_malloc_fbatch_t *b, int64_t v,
    int comma)
{
    char      digits[20], *d, *p;
    uint64_t  u;

    /* a comma, a sign and 20 digits */

    if (sizeof(b->buf) - b->n < 22) {
        ngx_http_malloc_fbatch_flush(b);
    }

    p = b->buf + b->n;

    if (comma) {
        *p++ = ',';
    }

    u = (uint64_t) v;

    if (v < 0) {
        *p++ = '-';
        u = 0 - u;
    }

    d = digits + sizeof(digits);

    do {
        *--d = (char) ('0' + u % 10);
        u /= 10;
    } while (u != 0);

    memcpy(p, d, digits + sizeof(digits) - d);
    p += digits + sizeof(digits) - d;

    b->n = p - b->buf;
}


/*
 * x as printf's "%.0f" writes it, once made finite: rint() rounds as
 * printf does (to nearest, a half to even; past 2^53 a double is whole
 * already), the result fits int64, and a negative that rounds to zero
 * keeps printf's "-0"
 */

static void
ngx_http_malloc_fbatch_round(ngx_http_malloc_fbatch_t *b, double x,
    int comma)
{
    x = rint(ngx_http_malloc_named_finite(x));

    if (x == 0 && signbit(x)) {
        ngx_http_malloc_fbatch_text(b, comma ? ",-0" : "-0", comma ? 3 : 2);
        return;
    }

    ngx_http_malloc_fbatch_int(b, (int64_t) x, comma);
}


/* ---- profile.proto, as the module writes snapshots ---- */


int
ngx_http_malloc_named_pprof(ngx_http_malloc_named_t *np,
    const unsigned char *gz, size_t len, int base, char *err)
{
    uint64_t                 tag, v;
    ngx_http_malloc_pb_t     raw, b, m;
    ngx_http_malloc_proto_t  pr;

    np->has_base |= (base != 0);

    if (ngx_http_malloc_gunzip(np->arena, gz, len, &raw) != 0) {
        snprintf(err, NGX_HTTP_MALLOC_NAMED_ERR_LEN,
                 "not a gzipped profile (or larger than %d bytes)",
                 NGX_HTTP_MALLOC_PROTO_MAX);
        return -1;
    }

    memset(&pr, 0, sizeof(ngx_http_malloc_proto_t));

    if (ngx_http_malloc_proto_scan(np, raw, &pr) != 0) {
        goto malformed;
    }

    /* the samples, once every location and function is known */

    b = raw;

    while (b.p < b.end) {
        if (ngx_http_malloc_pb_field(&b, &tag, &v, &m) != 0) {
            goto malformed;
        }

        if (tag == (2 << 3 | 2)
            && ngx_http_malloc_proto_sample(np, &pr, m, base) != 0)
        {
            goto malformed;
        }
    }

    return 0;

malformed:

    snprintf(err, NGX_HTTP_MALLOC_NAMED_ERR_LEN,
             "a malformed profile.proto, or out of memory");
    return -1;
}


static int
ngx_http_malloc_gunzip(ngx_http_malloc_arena_t *arena,
    const unsigned char *gz, size_t len, ngx_http_malloc_pb_t *raw)
{
    int                     rc;
    z_stream                z;
    unsigned char           buf[65536];
    unsigned char          *data;
    ngx_http_malloc_mbuf_t  out;

    memset(&z, 0, sizeof(z));
    memset(&out, 0, sizeof(out));

    if (inflateInit2(&z, 15 + 16) != Z_OK) {
        return -1;
    }

    z.next_in = (unsigned char *) gz;
    z.avail_in = (uInt) len;

    do {
        z.next_out = buf;
        z.avail_out = sizeof(buf);

        rc = inflate(&z, Z_NO_FLUSH);

        if (rc != Z_OK && rc != Z_STREAM_END) {
            break;
        }

        ngx_http_malloc_mbuf_append(&out, buf, sizeof(buf) - z.avail_out);

        if (out.len > NGX_HTTP_MALLOC_PROTO_MAX) {
            rc = Z_MEM_ERROR;
            break;
        }

    } while (rc != Z_STREAM_END && !out.failed
             && (z.avail_in != 0 || z.avail_out == 0));

    (void) inflateEnd(&z);

    if (rc != Z_STREAM_END || out.failed) {
        ngx_http_malloc_mbuf_free(&out);
        return -1;
    }

    /* into the arena: it goes with the profile */

    data = ngx_http_malloc_arena_alloc(arena, out.len + 1);
    if (data == NULL) {
        ngx_http_malloc_mbuf_free(&out);
        return -1;
    }

    if (out.len != 0) {
        memcpy(data, out.data, out.len);
    }

    raw->p = data;
    raw->end = data + out.len;

    ngx_http_malloc_mbuf_free(&out);

    return 0;
}


static int
ngx_http_malloc_pb_varint(ngx_http_malloc_pb_t *b, uint64_t *v)
{
    int  shift;

    *v = 0;

    for (shift = 0; shift < 64; shift += 7) {
        if (b->p >= b->end) {
            return -1;
        }

        *v |= (uint64_t) (*b->p & 0x7f) << shift;

        if ((*b->p++ & 0x80) == 0) {
            return 0;
        }
    }

    return -1;
}


/* the next field: its tag, a varint's value, or a length's payload */

static int
ngx_http_malloc_pb_field(ngx_http_malloc_pb_t *b, uint64_t *tag, uint64_t *v,
    ngx_http_malloc_pb_t *sub)
{
    if (ngx_http_malloc_pb_varint(b, tag) != 0) {
        return -1;
    }

    *v = 0;
    sub->p = b->p;
    sub->end = b->p;

    switch (*tag & 7) {

    case 0:
        return ngx_http_malloc_pb_varint(b, v);

    case 1:
        if (b->end - b->p < 8) {
            return -1;
        }

        b->p += 8;
        return 0;

    case 2:
        if (ngx_http_malloc_pb_varint(b, v) != 0
            || *v > (uint64_t) (b->end - b->p))
        {
            return -1;
        }

        sub->p = b->p;
        sub->end = b->p + *v;
        b->p += *v;
        return 0;

    case 5:
        if (b->end - b->p < 4) {
            return -1;
        }

        b->p += 4;
        return 0;

    default:
        return -1;
    }
}


/* strings, sample types, functions and locations; -1: malformed */

static int
ngx_http_malloc_proto_scan(ngx_http_malloc_named_t *np,
    ngx_http_malloc_pb_t raw, ngx_http_malloc_proto_t *pr)
{
    size_t                n, i;
    uint64_t              tag, v;
    ngx_http_malloc_pb_t  b, m, *types;

    /* count the strings and sample types first, to size their arrays */

    n = 0;
    pr->ncols = 0;
    b = raw;

    while (b.p < b.end) {
        if (ngx_http_malloc_pb_field(&b, &tag, &v, &m) != 0) {
            return -1;
        }

        n += (tag == (6 << 3 | 2));
        pr->ncols += (tag == (1 << 3 | 2));
    }

    if (pr->ncols > 16) {
        return -1;
    }

    pr->strings = ngx_http_malloc_arena_alloc(np->arena,
                                   (n + 1) * sizeof(ngx_http_malloc_pb_t));
    types = ngx_http_malloc_arena_alloc(np->arena,
                                   (pr->ncols + 1)
                                   * sizeof(ngx_http_malloc_pb_t));
    if (pr->strings == NULL || types == NULL) {
        return -1;
    }

    b = raw;
    i = 0;

    while (b.p < b.end) {
        (void) ngx_http_malloc_pb_field(&b, &tag, &v, &m);

        if (tag == (6 << 3 | 2)) {
            pr->strings[pr->nstrings++] = m;

        } else if (tag == (1 << 3 | 2)) {
            types[i++] = m;

        } else if (tag == (12 << 3 | 0)) {
            /* an int64 in profile.proto: larger is a negative period */
            pr->period = (v > INT64_MAX) ? INT64_MAX : v;
            v = pr->period;

            if (np->period == 0) {
                np->period = v;
            }
        }
    }

    if (ngx_http_malloc_proto_columns(np, pr, types) != 0) {
        return -1;
    }

    return ngx_http_malloc_proto_tables(np, pr, raw);
}


/* which of our four values each sample value is; -1: malformed */

static int
ngx_http_malloc_proto_columns(ngx_http_malloc_named_t *np,
    ngx_http_malloc_proto_t *pr, const ngx_http_malloc_pb_t *types)
{
    size_t                 n, len, i;
    uint64_t               tag, t;
    const char            *s;
    ngx_http_malloc_pb_t   f, sub;
    static const char     *known[] = { "inuse_space", "inuse_objects",
                                       "alloc_space", "alloc_objects" };

    for (i = 0; i < pr->ncols; i++) {
        pr->col[i] = -1;
        f = types[i];

        while (f.p < f.end) {
            if (ngx_http_malloc_pb_field(&f, &tag, &t, &sub) != 0) {
                return -1;
            }

            if (tag != (1 << 3 | 0)) {
                continue;
            }

            s = ngx_http_malloc_proto_string(pr, t, &len);

            for (n = 0; s != NULL && n < 4; n++) {
                if (len == strlen(known[n]) && memcmp(s, known[n], len) == 0)
                {
                    pr->col[i] = (int) n;
                    np->alloc |= (n >= 2);
                }
            }
        }
    }

    return 0;
}


/*
 * Mappings (3) and functions (5) before locations (4): a location names
 * its functions and its mapping.  -1: malformed, or out of memory.
 */

static int
ngx_http_malloc_proto_tables(ngx_http_malloc_named_t *np,
    ngx_http_malloc_proto_t *pr, ngx_http_malloc_pb_t raw)
{
    size_t                i;
    uint64_t              tag, v, t;
    ngx_http_malloc_pb_t  b, m;

    for (i = 0; i < 3; i++) {
        t = (i == 0) ? 3 : (i == 1) ? 5 : 4;
        b = raw;

        while (b.p < b.end) {
            (void) ngx_http_malloc_pb_field(&b, &tag, &v, &m);

            if (tag != (t << 3 | 2)) {
                continue;
            }

            if ((t == 3 && ngx_http_malloc_proto_mapping(np, pr, m) != 0)
                || (t == 5 && ngx_http_malloc_proto_function(np, pr, m) != 0)
                || (t == 4 && ngx_http_malloc_proto_location(np, pr, m) != 0))
            {
                return -1;
            }
        }
    }

    return 0;
}


static const char *
ngx_http_malloc_proto_string(ngx_http_malloc_proto_t *pr, uint64_t i,
    size_t *len)
{
    if (i >= pr->nstrings) {
        return NULL;
    }

    *len = pr->strings[i].end - pr->strings[i].p;

    return (const char *) pr->strings[i].p;
}


/*
 * Mapping: id 1, filename 5, build_id 6 (string indexes).  The first one
 * is the executable's, as pprof has it.
 */

static int
ngx_http_malloc_proto_mapping(ngx_http_malloc_named_t *np,
    ngx_http_malloc_proto_t *pr, ngx_http_malloc_pb_t m)
{
    size_t       len;
    int32_t      file;
    uint64_t     id;
    const char  *s;

    s = ngx_http_malloc_proto_named(pr, m, 5, &id, &len);
    if (s == NULL) {
        return (len == 0) ? 0 : -1;
    }

    file = ngx_http_malloc_named_file(np, s, len, pr->maps.n == 0);

    if (file == -1) {
        return -1;
    }

    /* build_id 6 (a string index) */

    s = ngx_http_malloc_proto_named(pr, m, 6, &id, &len);

    if (ngx_http_malloc_named_build_id(np, file, s, s ? len : 0) != 0) {
        return -1;
    }

    return ngx_http_malloc_ftable_set(np->arena, &pr->maps, id,
                                      (uint32_t) file + 1);
}


/* Function: id 1, name 2 (a string index) */

static int
ngx_http_malloc_proto_function(ngx_http_malloc_named_t *np,
    ngx_http_malloc_proto_t *pr, ngx_http_malloc_pb_t m)
{
    size_t       len;
    uint32_t     n;
    uint64_t     id;
    const char  *s;

    s = ngx_http_malloc_proto_named(pr, m, 2, &id, &len);
    if (s == NULL) {
        if (len != 0) {
            return -1;
        }

        s = "?";
        len = 1;
    }

    n = ngx_http_malloc_named_name(np, s, len, -1);

    if (n == 0) {
        return -1;
    }

    return ngx_http_malloc_ftable_set(np->arena, &pr->funcs, id, n);
}


/*
 * A message's id (field 1) and the string its field "field" indexes:
 * NULL with *len 0 when it has none, NULL with *len 1 when malformed.
 */

static const char *
ngx_http_malloc_proto_named(ngx_http_malloc_proto_t *pr,
    ngx_http_malloc_pb_t m, uint64_t field, uint64_t *id, size_t *len)
{
    uint64_t              tag, v, name;
    const char           *s;
    ngx_http_malloc_pb_t  sub;

    *id = 0;
    name = 0;

    while (m.p < m.end) {
        if (ngx_http_malloc_pb_field(&m, &tag, &v, &sub) != 0) {
            *len = 1;
            return NULL;
        }

        if (tag == (1 << 3 | 0)) {
            *id = v;

        } else if (tag == (field << 3 | 0)) {
            name = v;
        }
    }

    s = ngx_http_malloc_proto_string(pr, name, len);

    if (s == NULL || *len == 0) {
        *len = 0;
        return NULL;
    }

    return s;
}


/* Location: id 1, line 4 (Line: function_id 1), innermost line first */

static int
ngx_http_malloc_proto_location(ngx_http_malloc_named_t *np,
    ngx_http_malloc_proto_t *pr, ngx_http_malloc_pb_t m)
{
    size_t                nlines;
    int32_t               file;
    uint64_t              tag, v, id, mapping;
    uint32_t             *names, **all;
    ngx_http_malloc_pb_t  b, line;

    nlines = 0;
    id = 0;
    mapping = 0;
    b = m;

    while (b.p < b.end) {
        if (ngx_http_malloc_pb_field(&b, &tag, &v, &line) != 0) {
            return -1;
        }

        nlines += (tag == (4 << 3 | 2));

        if (tag == (1 << 3 | 0)) {
            id = v;

        } else if (tag == (2 << 3 | 0)) {
            mapping = v;
        }
    }

    /* the file of the location's mapping, for names that have none yet */

    file = -1;

    if (mapping != 0) {
        file = (int32_t) ngx_http_malloc_ftable_get(&pr->maps, mapping) - 1;
    }

    names = ngx_http_malloc_arena_alloc(np->arena,
                                        (nlines + 1) * sizeof(uint32_t));
    if (names == NULL
        || ngx_http_malloc_proto_lines(np, pr, m, file, names) != 0)
    {
        return -1;
    }

    all = ngx_http_malloc_named_array_room(np->arena, pr->loc_names, pr->nlocs,
                                      sizeof(uint32_t *));
    if (all == NULL) {
        return -1;
    }

    pr->loc_names = all;
    pr->loc_names[pr->nlocs++] = names;

    return ngx_http_malloc_ftable_set(np->arena, &pr->locs, id,
                                      (uint32_t) pr->nlocs);
}


/*
 * The names of a location's lines (Line: function_id 1) into "names",
 * ended by 0; a name without a file yet gets the location's
 */

static int
ngx_http_malloc_proto_lines(ngx_http_malloc_named_t *np,
    ngx_http_malloc_proto_t *pr, ngx_http_malloc_pb_t m, int32_t file,
    uint32_t *names)
{
    size_t                i;
    uint32_t              n;
    uint64_t              tag, v, fid;
    ngx_http_malloc_pb_t  line, sub;

    i = 0;

    while (m.p < m.end) {
        (void) ngx_http_malloc_pb_field(&m, &tag, &v, &line);

        if (tag != (4 << 3 | 2)) {
            continue;
        }

        fid = 0;

        while (line.p < line.end) {
            if (ngx_http_malloc_pb_field(&line, &tag, &v, &sub) != 0) {
                return -1;
            }

            if (tag == (1 << 3 | 0)) {
                fid = v;
            }
        }

        n = ngx_http_malloc_ftable_get(&pr->funcs, fid);
        if (n == 0) {
            return -1;
        }

        names[i++] = n;

        if (np->name_files[n - 1] == -1) {
            np->name_files[n - 1] = file;
        }
    }

    names[i] = 0;

    return 0;
}


/*
 * Sample: location_id 1 (leaf first), value 2, both packed or not.  Its
 * stack is written root first: locations from the last, and each
 * location's lines from its outermost.
 */

static int
ngx_http_malloc_proto_sample(ngx_http_malloc_named_t *np,
    ngx_http_malloc_proto_t *pr, ngx_http_malloc_pb_t m, int base)
{
    size_t                     nids, nlocs;
    int64_t                    v[NGX_HTTP_MALLOC_NAMED_VALUES];
    uint32_t                  *ids;
    uint64_t                  *locs;
    ngx_http_malloc_nstack_t  *s;

    /* at most one location per byte of the sample */

    locs = ngx_http_malloc_arena_alloc(np->arena,
                                       (m.end - m.p + 1) * sizeof(uint64_t));
    if (locs == NULL) {
        return -1;
    }

    memset(v, 0, sizeof(v));

    if (ngx_http_malloc_proto_fields(pr, m, locs, &nlocs, v) != 0) {
        return -1;
    }

    ids = ngx_http_malloc_proto_stack(np, pr, locs, nlocs, &nids);
    if (ids == NULL) {
        return -1;
    }

    s = ngx_http_malloc_named_stack(np, ids, (uint32_t) nids);
    if (s == NULL) {
        return -1;
    }

    ngx_http_malloc_named_add(s, v, base, pr->period);

    return 0;
}


/* a sample's location ids and those of its values that we know */

static int
ngx_http_malloc_proto_fields(ngx_http_malloc_proto_t *pr,
    ngx_http_malloc_pb_t m, uint64_t *locs, size_t *nlocs, int64_t *v)
{
    size_t                nvals;
    uint64_t              tag, x;
    ngx_http_malloc_pb_t  sub;

    *nlocs = 0;
    nvals = 0;

    while (m.p < m.end) {
        if (ngx_http_malloc_pb_field(&m, &tag, &x, &sub) != 0) {
            return -1;
        }

        if (tag == (1 << 3 | 0)) {
            locs[(*nlocs)++] = x;

        } else if (tag == (1 << 3 | 2)) {
            while (sub.p < sub.end) {
                if (ngx_http_malloc_pb_varint(&sub, &locs[(*nlocs)++]) != 0) {
                    return -1;
                }
            }

        } else if (tag == (2 << 3 | 0)) {
            ngx_http_malloc_proto_value(pr, v, nvals++, x);

        } else if (tag == (2 << 3 | 2)) {
            while (sub.p < sub.end) {
                if (ngx_http_malloc_pb_varint(&sub, &x) != 0) {
                    return -1;
                }

                ngx_http_malloc_proto_value(pr, v, nvals++, x);
            }
        }
    }

    return 0;
}


/* sample value i, kept if its type is one of ours */

static void
ngx_http_malloc_proto_value(ngx_http_malloc_proto_t *pr, int64_t *v,
    size_t i, uint64_t x)
{
    if (i < pr->ncols && pr->col[i] >= 0) {
        v[pr->col[i]] = (int64_t) x;
    }
}


/*
 * The names of the locations' lines, root first as proto_sample() says;
 * NULL: malformed, or out of memory
 */

static uint32_t *
ngx_http_malloc_proto_stack(ngx_http_malloc_named_t *np,
    ngx_http_malloc_proto_t *pr, const uint64_t *locs, size_t nlocs,
    size_t *nids)
{
    size_t     i, k;
    uint32_t  *ids, *names, loc;

    /* counted, then placed */

    k = 0;

    for (i = 0; i < nlocs; i++) {
        loc = ngx_http_malloc_ftable_get(&pr->locs, locs[i]);
        if (loc == 0) {
            return NULL;
        }

        for (names = pr->loc_names[loc - 1]; *names; names++) {
            k++;
        }
    }

    ids = ngx_http_malloc_arena_alloc(np->arena, (k + 1) * sizeof(uint32_t));
    if (ids == NULL) {
        return NULL;
    }

    *nids = k;

    for (i = 0; i < nlocs; i++) {
        loc = ngx_http_malloc_ftable_get(&pr->locs, locs[i]);

        for (names = pr->loc_names[loc - 1]; *names; names++) {
            ids[--k] = *names;
        }
    }

    return ids;
}
