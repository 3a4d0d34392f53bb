
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * ExportProfilesServiceRequest by hand, as profile.proto is: each message
 * is written into its own buffer and appended, with its length, to the
 * one that holds it.  First the stacks to send are chosen: every stack
 * with a value, or, past max_samples, the biggest and one stack for the
 * rest.  Then only what those stacks reach is numbered: a function and
 * its location per name, a mapping per path and build id, a string per
 * distinct text, each table after the zero entry the specification asks
 * for.  So no entry of the dictionary is left that nothing refers to,
 * and no string is there twice (sig-profiling's profcheck checks both).
 * Every string is made valid UTF-8 first, as protobuf requires of a
 * string field: receivers that parse with libprotobuf or Go refuse the
 * whole request otherwise.
 *
 * Owns: nothing past a call.  Calls: arena, named's types, protobuf
 * (pure C).
 */


#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ngx_http_malloc_otlp.h"
#include "ngx_http_malloc_protobuf.h"


/* ExportProfilesServiceRequest */
#define NGX_HTTP_MALLOC_OT_RESOURCE_PROFILES  1
#define NGX_HTTP_MALLOC_OT_DICTIONARY         2

/* ProfilesDictionary */
#define NGX_HTTP_MALLOC_OT_MAPPING            1
#define NGX_HTTP_MALLOC_OT_LOCATION           2
#define NGX_HTTP_MALLOC_OT_FUNCTION           3
#define NGX_HTTP_MALLOC_OT_LINK               4
#define NGX_HTTP_MALLOC_OT_STRING             5
#define NGX_HTTP_MALLOC_OT_ATTRIBUTE          6
#define NGX_HTTP_MALLOC_OT_STACK              7

/* Profile */
#define NGX_HTTP_MALLOC_OT_SAMPLE_TYPE        1
#define NGX_HTTP_MALLOC_OT_SAMPLE             2
#define NGX_HTTP_MALLOC_OT_TIME               3
#define NGX_HTTP_MALLOC_OT_DURATION           4
#define NGX_HTTP_MALLOC_OT_PERIOD_TYPE        5
#define NGX_HTTP_MALLOC_OT_PERIOD             6
#define NGX_HTTP_MALLOC_OT_PAYLOAD_FORMAT     9
#define NGX_HTTP_MALLOC_OT_PAYLOAD            10
#define NGX_HTTP_MALLOC_OT_ATTRIBUTES         11

/* the indexes must fit an int32 */
#define NGX_HTTP_MALLOC_OT_MAX                (INT32_MAX / 4)
#define NGX_HTTP_MALLOC_OT_ATTRS              64

/* the profiles sent: the named profile's first values */
#define NGX_HTTP_MALLOC_OT_TYPES              2


static const char  *ngx_http_malloc_otlp_types[][2] = {
    { "inuse_space", "bytes" },
    { "inuse_objects", "count" }
};


/* texts, each once: slots hold an index + 1, 0 is a free slot */
typedef struct {
    const char                     **texts;
    size_t                          *lens;
    size_t                           n;
    size_t                           max;
    uint32_t                        *slots;
    size_t                           mask;
} ngx_http_malloc_otlp_pool_t;


/* a stack as the cap ranks it */
typedef struct {
    int64_t                          v[NGX_HTTP_MALLOC_OT_TYPES];
    size_t                           stack;
} ngx_http_malloc_otlp_rank_t;


typedef struct {
    const ngx_http_malloc_otlp_t    *ot;
    const ngx_http_malloc_named_t   *np;
    ngx_http_malloc_arena_t         *arena;
    ngx_http_malloc_otlp_pool_t      strings;   /* the string table */
    ngx_http_malloc_otlp_pool_t      builds;    /* build ids */
    ngx_http_malloc_otlp_pool_t      mappings;  /* path and build id */
    uint32_t                        *stack_of;  /* each stack's index in
                                                   the table, 0: not sent */
    size_t                           nsent;     /* stacks sent as such */
    size_t                           nfolded;   /* stacks in the last one */
    int64_t                          folded[NGX_HTTP_MALLOC_OT_TYPES];
    uint32_t                        *func_of;   /* each name's function
                                                   and location, 0: none */
    uint32_t                        *name_at;   /* function i + 1's name */
    size_t                           nfuncs;    /* of names */
    uint32_t                        *map_of;    /* each file's mapping, 0:
                                                   none */
    uint32_t                         type_s[NGX_HTTP_MALLOC_OT_TYPES][2];
    uint32_t                         space_s;
    uint32_t                         attr_s[NGX_HTTP_MALLOC_OT_ATTRS];
    uint32_t                         build_s;   /* the build id's key */
    uint32_t                         folded_s;  /* the folded stack's name */
    unsigned char                   *scratch;   /* one stack's message */
    int                              failed;
} ngx_http_malloc_otlp_ctx_t;


static void ngx_http_malloc_otlp_error(char *err, const char *msg);
static int ngx_http_malloc_otlp_utf8_next(const unsigned char *p,
    const unsigned char *last);
static int ngx_http_malloc_otlp_pool(ngx_http_malloc_otlp_ctx_t *ctx,
    ngx_http_malloc_otlp_pool_t *pool, size_t max);
static uint32_t ngx_http_malloc_otlp_add(ngx_http_malloc_otlp_ctx_t *ctx,
    ngx_http_malloc_otlp_pool_t *pool, const char *s, size_t len);
static const char *ngx_http_malloc_otlp_valid(ngx_http_malloc_otlp_ctx_t *ctx,
    const char *s, size_t *len);
static uint32_t ngx_http_malloc_otlp_intern(ngx_http_malloc_otlp_ctx_t *ctx,
    const char *s);
static int ngx_http_malloc_otlp_start(ngx_http_malloc_otlp_ctx_t *ctx);
static int ngx_http_malloc_otlp_select(ngx_http_malloc_otlp_ctx_t *ctx);
static int ngx_http_malloc_otlp_rank(const void *one, const void *two);
static void ngx_http_malloc_otlp_number(ngx_http_malloc_otlp_ctx_t *ctx);
static void ngx_http_malloc_otlp_file(ngx_http_malloc_otlp_ctx_t *ctx,
    int32_t f);
static void ngx_http_malloc_otlp_attr(ngx_http_malloc_otlp_ctx_t *ctx,
    ngx_http_malloc_mbuf_t *b, unsigned field,
    const ngx_http_malloc_otlp_attr_t *a, uint32_t key_s);
static void ngx_http_malloc_otlp_any(ngx_http_malloc_otlp_ctx_t *ctx,
    ngx_http_malloc_mbuf_t *b, const ngx_http_malloc_otlp_attr_t *a);
static void ngx_http_malloc_otlp_resource(ngx_http_malloc_otlp_ctx_t *ctx,
    ngx_http_malloc_mbuf_t *out);
static void ngx_http_malloc_otlp_profile(ngx_http_malloc_otlp_ctx_t *ctx,
    unsigned type, ngx_http_malloc_mbuf_t *out);
static void ngx_http_malloc_otlp_sample(ngx_http_malloc_mbuf_t *out,
    size_t stack, int64_t v);
static void ngx_http_malloc_otlp_dictionary(ngx_http_malloc_otlp_ctx_t *ctx,
    ngx_http_malloc_mbuf_t *out);
static void ngx_http_malloc_otlp_mappings(ngx_http_malloc_otlp_ctx_t *ctx,
    ngx_http_malloc_mbuf_t *d);
static void ngx_http_malloc_otlp_attributes(ngx_http_malloc_otlp_ctx_t *ctx,
    ngx_http_malloc_mbuf_t *d);
static void ngx_http_malloc_otlp_names(ngx_http_malloc_otlp_ctx_t *ctx,
    ngx_http_malloc_mbuf_t *d);
static void ngx_http_malloc_otlp_location(ngx_http_malloc_mbuf_t *d,
    uint32_t mapping, uint32_t function);
static void ngx_http_malloc_otlp_function(ngx_http_malloc_mbuf_t *d,
    uint32_t name_s, uint32_t sys_s);
static void ngx_http_malloc_otlp_stacks(ngx_http_malloc_otlp_ctx_t *ctx,
    ngx_http_malloc_mbuf_t *d);
static void ngx_http_malloc_otlp_text(ngx_http_malloc_otlp_ctx_t *ctx,
    ngx_http_malloc_mbuf_t *b, unsigned field, const char *s);
static void ngx_http_malloc_otlp_nested(ngx_http_malloc_mbuf_t *out,
    unsigned field, ngx_http_malloc_mbuf_t *msg);


static void
ngx_http_malloc_otlp_error(char *err, const char *msg)
{
    if (err != NULL) {
        snprintf(err, NGX_HTTP_MALLOC_OTLP_ERR_LEN, "%s", msg);
    }
}


int
ngx_http_malloc_otlp_encode(const ngx_http_malloc_otlp_t *ot,
    ngx_http_malloc_mbuf_t *out, char *err)
{
    unsigned                     t;
    ngx_http_malloc_mbuf_t       rp, sp, scope, prof;
    ngx_http_malloc_otlp_ctx_t   ctx;

    memset(&ctx, 0, sizeof(ngx_http_malloc_otlp_ctx_t));
    ctx.ot = ot;
    ctx.np = ot->np;
    ctx.arena = ot->arena;

    if (ctx.np->nnames > NGX_HTTP_MALLOC_OT_MAX
        || ctx.np->nstacks > NGX_HTTP_MALLOC_OT_MAX
        || ctx.np->nfiles > NGX_HTTP_MALLOC_OT_MAX
        || ot->nattrs > NGX_HTTP_MALLOC_OT_ATTRS)
    {
        ngx_http_malloc_otlp_error(err, "the profile is too large");
        return -1;
    }

    if (ot->max_samples == 1) {
        ngx_http_malloc_otlp_error(err, "a cap of one sample leaves no "
                                   "room for the folded stack");
        return -1;
    }

    if (ngx_http_malloc_otlp_start(&ctx) != 0
        || ngx_http_malloc_otlp_select(&ctx) != 0)
    {
        ngx_http_malloc_otlp_error(err, "out of memory");
        return -1;
    }

    ngx_http_malloc_otlp_number(&ctx);

    if (ot->result != NULL) {
        ot->result->folded = ctx.nfolded;
    }

    memset(&rp, 0, sizeof(ngx_http_malloc_mbuf_t));
    memset(&sp, 0, sizeof(ngx_http_malloc_mbuf_t));
    memset(&scope, 0, sizeof(ngx_http_malloc_mbuf_t));

    ngx_http_malloc_otlp_resource(&ctx, &rp);

    /* ScopeProfiles: scope 1 (InstrumentationScope: name 1, version 2) */

    ngx_http_malloc_otlp_text(&ctx, &scope, 1, ot->scope_name);
    ngx_http_malloc_otlp_text(&ctx, &scope, 2, ot->scope_version);
    ngx_http_malloc_otlp_nested(&sp, 1, &scope);

    for (t = 0; t < NGX_HTTP_MALLOC_OT_TYPES; t++) {
        memset(&prof, 0, sizeof(ngx_http_malloc_mbuf_t));
        ngx_http_malloc_otlp_profile(&ctx, t, &prof);
        ngx_http_malloc_otlp_nested(&sp, 2, &prof);
    }

    /* ResourceProfiles: scope_profiles 2 */

    ngx_http_malloc_otlp_nested(&rp, 2, &sp);
    ngx_http_malloc_otlp_nested(out, NGX_HTTP_MALLOC_OT_RESOURCE_PROFILES,
                                &rp);

    ngx_http_malloc_otlp_dictionary(&ctx, out);

    if (out->failed || ctx.failed) {
        ngx_http_malloc_otlp_error(err, "out of memory");
        return -1;
    }

    return 0;
}


/*
 * One sequence at p: its length if it is well formed (Unicode 15, table
 * 3-7), else minus the length of its maximal subpart, at least 1
 */

static int
ngx_http_malloc_otlp_utf8_next(const unsigned char *p,
    const unsigned char *last)
{
    int            i, need;
    unsigned char  c, lo, hi;

    c = p[0];

    if (c < 0x80) {
        return 1;
    }

    lo = 0x80;
    hi = 0xbf;

    if (c >= 0xc2 && c <= 0xdf) {
        need = 1;

    } else if (c >= 0xe0 && c <= 0xef) {
        need = 2;
        lo = (c == 0xe0) ? 0xa0 : 0x80;
        hi = (c == 0xed) ? 0x9f : 0xbf;

    } else if (c >= 0xf0 && c <= 0xf4) {
        need = 3;
        lo = (c == 0xf0) ? 0x90 : 0x80;
        hi = (c == 0xf4) ? 0x8f : 0xbf;

    } else {
        return -1;
    }

    for (i = 1; i <= need; i++) {
        if (p + i >= last || p[i] < lo || p[i] > hi) {
            return -i;
        }

        lo = 0x80;
        hi = 0xbf;
    }

    return need + 1;
}


size_t
ngx_http_malloc_otlp_utf8(const char *s, size_t len, char *out)
{
    int                   n;
    size_t                w;
    const unsigned char  *p, *last;

    p = (const unsigned char *) s;
    last = p + len;
    w = 0;

    while (p < last) {
        n = ngx_http_malloc_otlp_utf8_next(p, last);

        if (n > 0) {
            if (out != NULL) {
                memcpy(out + w, p, n);
            }

            p += n;
            w += n;
            continue;
        }

        /* U+FFFD REPLACEMENT CHARACTER */

        if (out != NULL) {
            memcpy(out + w, "\xef\xbf\xbd", 3);
        }

        p += -n;
        w += 3;
    }

    return w;
}


size_t
ngx_http_malloc_otlp_utf8_valid(const char *s, size_t len)
{
    int                   n;
    const unsigned char  *p, *last;

    p = (const unsigned char *) s;
    last = p + len;

    while (p < last) {
        n = ngx_http_malloc_otlp_utf8_next(p, last);

        if (n < 0) {
            break;
        }

        p += n;
    }

    return p - (const unsigned char *) s;
}


/* room for "max" texts, the table at most half full */

static int
ngx_http_malloc_otlp_pool(ngx_http_malloc_otlp_ctx_t *ctx,
    ngx_http_malloc_otlp_pool_t *pool, size_t max)
{
    size_t  cap;

    for (cap = 16; cap < 2 * max; cap *= 2) { /* void */ }

    pool->texts = ngx_http_malloc_arena_alloc(ctx->arena,
                                              max * sizeof(char *));
    pool->lens = ngx_http_malloc_arena_alloc(ctx->arena,
                                             max * sizeof(size_t));
    pool->slots = ngx_http_malloc_arena_alloc(ctx->arena,
                                              cap * sizeof(uint32_t));

    if (pool->texts == NULL || pool->lens == NULL || pool->slots == NULL) {
        return -1;
    }

    pool->n = 0;
    pool->max = max;
    pool->mask = cap - 1;

    return 0;
}


/* the index of the text, added if it is new; s must outlive the call */

static uint32_t
ngx_http_malloc_otlp_add(ngx_http_malloc_otlp_ctx_t *ctx,
    ngx_http_malloc_otlp_pool_t *pool, const char *s, size_t len)
{
    size_t    i, k;
    uint64_t  h;

    /* FNV-1a */

    h = 14695981039346656037ULL;

    for (i = 0; i < len; i++) {
        h = (h ^ (unsigned char) s[i]) * 1099511628211ULL;
    }

    for (i = h & pool->mask; pool->slots[i] != 0; i = (i + 1) & pool->mask) {
        k = pool->slots[i] - 1;

        if (pool->lens[k] == len && memcmp(pool->texts[k], s, len) == 0) {
            return (uint32_t) k;
        }
    }

    if (pool->n == pool->max) {
        /* the pools are sized for every text: this cannot be */
        ctx->failed = 1;
        return 0;
    }

    pool->texts[pool->n] = s;
    pool->lens[pool->n] = len;
    pool->slots[i] = (uint32_t) ++pool->n;

    return (uint32_t) (pool->n - 1);
}


/* s as valid UTF-8: itself, or a copy mended in the arena */

static const char *
ngx_http_malloc_otlp_valid(ngx_http_malloc_otlp_ctx_t *ctx, const char *s,
    size_t *len)
{
    char    *copy;
    size_t   n;

    if (ngx_http_malloc_otlp_utf8_valid(s, *len) == *len) {
        return s;
    }

    n = ngx_http_malloc_otlp_utf8(s, *len, NULL);

    copy = ngx_http_malloc_arena_alloc(ctx->arena, n + 1);
    if (copy == NULL) {
        ctx->failed = 1;
        *len = 0;
        return "";
    }

    *len = ngx_http_malloc_otlp_utf8(s, *len, copy);

    return copy;
}


/* a string's index in the string table; NULL is "" */

static uint32_t
ngx_http_malloc_otlp_intern(ngx_http_malloc_otlp_ctx_t *ctx, const char *s)
{
    size_t  len;

    if (s == NULL) {
        s = "";
    }

    len = strlen(s);
    s = ngx_http_malloc_otlp_valid(ctx, s, &len);

    return ngx_http_malloc_otlp_add(ctx, &ctx->strings, s, len);
}


/* the tables' room, and the strings every request has, "" first */

static int
ngx_http_malloc_otlp_start(ngx_http_malloc_otlp_ctx_t *ctx)
{
    size_t                          i, t;
    const ngx_http_malloc_named_t  *np;

    np = ctx->np;

    /* the fixed strings, the keys, names, symbols, paths, two more */

    if (ngx_http_malloc_otlp_pool(ctx, &ctx->strings,
                                  8 + ctx->ot->nattrs + 2 * np->nnames
                                  + np->nfiles)
        != 0
        || ngx_http_malloc_otlp_pool(ctx, &ctx->builds, np->nfiles + 1) != 0
        || ngx_http_malloc_otlp_pool(ctx, &ctx->mappings, np->nfiles + 1)
           != 0)
    {
        return -1;
    }

    ctx->func_of = ngx_http_malloc_arena_alloc(ctx->arena,
                                       (np->nnames + 1) * sizeof(uint32_t));
    ctx->name_at = ngx_http_malloc_arena_alloc(ctx->arena,
                                       (np->nnames + 1) * sizeof(uint32_t));
    ctx->map_of = ngx_http_malloc_arena_alloc(ctx->arena,
                                       (np->nfiles + 1) * sizeof(uint32_t));

    if (ctx->func_of == NULL || ctx->name_at == NULL || ctx->map_of == NULL)
    {
        return -1;
    }

    (void) ngx_http_malloc_otlp_intern(ctx, "");

    for (t = 0; t < NGX_HTTP_MALLOC_OT_TYPES; t++) {
        ctx->type_s[t][0] = ngx_http_malloc_otlp_intern(ctx,
                                            ngx_http_malloc_otlp_types[t][0]);
        ctx->type_s[t][1] = ngx_http_malloc_otlp_intern(ctx,
                                            ngx_http_malloc_otlp_types[t][1]);
    }

    ctx->space_s = ngx_http_malloc_otlp_intern(ctx, "space");

    for (i = 0; i < ctx->ot->nattrs; i++) {
        ctx->attr_s[i] = ngx_http_malloc_otlp_intern(ctx,
                                                     ctx->ot->attrs[i].key);
    }

    return ctx->failed ? -1 : 0;
}


/*
 * The stacks sent: those with a value; past the cap, the biggest (by
 * bytes, then objects, then the order of the profile) and, for all the
 * others, one folded stack that holds their sum
 */

static int
ngx_http_malloc_otlp_select(ngx_http_malloc_otlp_ctx_t *ctx)
{
    size_t                           s, n, i, t, keep;
    const ngx_http_malloc_nstack_t  *st;
    const ngx_http_malloc_named_t   *np;
    ngx_http_malloc_otlp_rank_t     *rank;

    np = ctx->np;

    ctx->stack_of = ngx_http_malloc_arena_alloc(ctx->arena,
                                       (np->nstacks + 1) * sizeof(uint32_t));
    if (ctx->stack_of == NULL) {
        return -1;
    }

    n = 0;

    for (s = 0; s < np->nstacks; s++) {
        st = &np->stacks[s];

        if (st->v[0] != 0 || st->v[1] != 0) {
            ctx->stack_of[s] = 1;
            n++;
        }
    }

    if (ctx->ot->result != NULL) {
        ctx->ot->result->stacks = n;
    }

    if (ctx->ot->max_samples != 0 && n > ctx->ot->max_samples) {
        rank = ngx_http_malloc_arena_alloc(ctx->arena,
                                   n * sizeof(ngx_http_malloc_otlp_rank_t));
        if (rank == NULL) {
            return -1;
        }

        for (s = 0, i = 0; s < np->nstacks; s++) {
            if (ctx->stack_of[s] != 0) {
                rank[i].v[0] = np->stacks[s].v[0];
                rank[i].v[1] = np->stacks[s].v[1];
                rank[i++].stack = s;
            }
        }

        qsort(rank, n, sizeof(ngx_http_malloc_otlp_rank_t),
              ngx_http_malloc_otlp_rank);

        keep = ctx->ot->max_samples - 1;

        for (i = keep; i < n; i++) {
            ctx->stack_of[rank[i].stack] = 0;

            /* as the pprof form sums them: modulo 2^64, never trapping */

            for (t = 0; t < NGX_HTTP_MALLOC_OT_TYPES; t++) {
                ctx->folded[t] = (int64_t) ((uint64_t) ctx->folded[t]
                                            + (uint64_t) rank[i].v[t]);
            }
        }

        ctx->nfolded = n - keep;
    }

    for (s = 0, n = 0; s < np->nstacks; s++) {
        if (ctx->stack_of[s] != 0) {
            ctx->stack_of[s] = (uint32_t) ++n;
        }
    }

    ctx->nsent = n;

    return 0;
}


static int
ngx_http_malloc_otlp_rank(const void *one, const void *two)
{
    const ngx_http_malloc_otlp_rank_t  *a = one;
    const ngx_http_malloc_otlp_rank_t  *b = two;

    size_t  t;

    for (t = 0; t < NGX_HTTP_MALLOC_OT_TYPES; t++) {
        if (a->v[t] != b->v[t]) {
            return (a->v[t] > b->v[t]) ? -1 : 1;
        }
    }

    return (a->stack < b->stack) ? -1 : (a->stack > b->stack);
}


/* a function per name that a stack sent reaches, a mapping per file */

static void
ngx_http_malloc_otlp_number(ngx_http_malloc_otlp_ctx_t *ctx)
{
    size_t                           s, k;
    uint32_t                         id;
    char                            *name;
    const ngx_http_malloc_nstack_t  *st;
    const ngx_http_malloc_named_t   *np;

    np = ctx->np;

    for (s = 0; s < np->nstacks; s++) {
        if (ctx->stack_of[s] == 0) {
            continue;
        }

        st = &np->stacks[s];

        for (k = 0; k < st->n; k++) {

            /* a stack's ids are name indexes + 1 */

            id = st->ids[k] - 1;

            if (id >= np->nnames || ctx->func_of[id] != 0) {
                continue;
            }

            ctx->name_at[ctx->nfuncs] = id;
            ctx->func_of[id] = (uint32_t) ++ctx->nfuncs;

            ngx_http_malloc_otlp_file(ctx, np->name_files[id]);
        }
    }

    if (ctx->nfolded == 0) {
        return;
    }

    name = ngx_http_malloc_arena_alloc(ctx->arena, 64);
    if (name == NULL) {
        ctx->failed = 1;
        return;
    }

    snprintf(name, 64, "(%zu smaller stacks folded)", ctx->nfolded);
    ctx->folded_s = ngx_http_malloc_otlp_intern(ctx, name);
}


/*
 * File f's mapping, numbered if it is new; files whose paths read the
 * same once made UTF-8, with the same build id, share one
 */

static void
ngx_http_malloc_otlp_file(ngx_http_malloc_otlp_ctx_t *ctx, int32_t f)
{
    size_t                          n, len;
    uint32_t                       *key, m;
    const char                     *id;
    const ngx_http_malloc_nfile_t  *file;

    if (f < 0 || (size_t) f >= ctx->np->nfiles || ctx->map_of[f] != 0) {
        return;
    }

    file = &ctx->np->files[f];

    key = ngx_http_malloc_arena_alloc(ctx->arena, 2 * sizeof(uint32_t));
    if (key == NULL) {
        ctx->failed = 1;
        return;
    }

    key[0] = ngx_http_malloc_otlp_intern(ctx, file->path);
    key[1] = 0;

    if (file->build_id != NULL) {
        len = strlen(file->build_id);
        id = ngx_http_malloc_otlp_valid(ctx, file->build_id, &len);
        key[1] = ngx_http_malloc_otlp_add(ctx, &ctx->builds, id, len) + 1;
    }

    n = ctx->mappings.n;
    m = ngx_http_malloc_otlp_add(ctx, &ctx->mappings, (const char *) key,
                                 2 * sizeof(uint32_t));

    ctx->map_of[f] = m + 1;

    if (ctx->mappings.n != n && key[1] != 0 && ctx->build_s == 0) {
        ctx->build_s = ngx_http_malloc_otlp_intern(ctx,
                                              NGX_HTTP_MALLOC_OTLP_BUILD_ID);
    }
}


/* KeyValue (key 1, value 2) or, with a key's string, KeyValueAndUnit */

static void
ngx_http_malloc_otlp_attr(ngx_http_malloc_otlp_ctx_t *ctx,
    ngx_http_malloc_mbuf_t *b, unsigned field,
    const ngx_http_malloc_otlp_attr_t *a, uint32_t key_s)
{
    unsigned char           buf[NGX_HTTP_MALLOC_PB_FIELD_MAX], *p;
    ngx_http_malloc_mbuf_t  kv, any;

    memset(&kv, 0, sizeof(ngx_http_malloc_mbuf_t));
    memset(&any, 0, sizeof(ngx_http_malloc_mbuf_t));

    if (key_s != 0) {
        p = ngx_http_malloc_protobuf_uint(buf, 1, key_s);
        ngx_http_malloc_mbuf_append(&kv, buf, p - buf);

    } else {
        ngx_http_malloc_otlp_text(ctx, &kv, 1, a->key);
    }

    ngx_http_malloc_otlp_any(ctx, &any, a);
    ngx_http_malloc_otlp_nested(&kv, 2, &any);
    ngx_http_malloc_otlp_nested(b, field, &kv);
}


/* AnyValue: string_value 1 or int_value 3 */

static void
ngx_http_malloc_otlp_any(ngx_http_malloc_otlp_ctx_t *ctx,
    ngx_http_malloc_mbuf_t *b, const ngx_http_malloc_otlp_attr_t *a)
{
    unsigned char   buf[NGX_HTTP_MALLOC_PB_FIELD_MAX], *p;

    if (a->str != NULL) {
        ngx_http_malloc_otlp_text(ctx, b, 1, a->str);
        return;
    }

    p = ngx_http_malloc_protobuf_varint(buf, 3 << 3
                                             | NGX_HTTP_MALLOC_PB_VARINT);
    p = ngx_http_malloc_protobuf_varint(p, (uint64_t) a->num);

    ngx_http_malloc_mbuf_append(b, buf, p - buf);
}


/* ResourceProfiles: resource 1 (Resource: attributes 1) */

static void
ngx_http_malloc_otlp_resource(ngx_http_malloc_otlp_ctx_t *ctx,
    ngx_http_malloc_mbuf_t *out)
{
    size_t                  i;
    ngx_http_malloc_mbuf_t  res;

    memset(&res, 0, sizeof(ngx_http_malloc_mbuf_t));

    for (i = 0; i < ctx->ot->nresource; i++) {
        ngx_http_malloc_otlp_attr(ctx, &res, 1, &ctx->ot->resource[i], 0);
    }

    /* an empty Resource is still sent: the field says there is one */

    ngx_http_malloc_protobuf_message(out, 1, res.data, res.len);
    ngx_http_malloc_mbuf_free(&res);

    if (res.failed) {
        out->failed = 1;
    }
}


/* one Profile: the samples of one value of every stack sent */

static void
ngx_http_malloc_otlp_profile(ngx_http_malloc_otlp_ctx_t *ctx, unsigned type,
    ngx_http_malloc_mbuf_t *out)
{
    size_t                           s;
    unsigned char                    buf[4 * NGX_HTTP_MALLOC_PB_FIELD_MAX];
    unsigned char                    attrs[2 * NGX_HTTP_MALLOC_OT_ATTRS];
    unsigned char                   *p;
    const ngx_http_malloc_otlp_t    *ot;
    const ngx_http_malloc_named_t   *np;

    ot = ctx->ot;
    np = ctx->np;

    /* ValueType: type_strindex 1, unit_strindex 2 */

    p = ngx_http_malloc_protobuf_uint(buf, 1, ctx->type_s[type][0]);
    p = ngx_http_malloc_protobuf_uint(p, 2, ctx->type_s[type][1]);
    ngx_http_malloc_protobuf_message(out, NGX_HTTP_MALLOC_OT_SAMPLE_TYPE,
                                     buf, p - buf);

    for (s = 0; s < np->nstacks; s++) {
        if (ctx->stack_of[s] != 0) {
            ngx_http_malloc_otlp_sample(out, ctx->stack_of[s],
                                        np->stacks[s].v[type]);
        }
    }

    if (ctx->nfolded != 0) {
        ngx_http_malloc_otlp_sample(out, ctx->nsent + 1, ctx->folded[type]);
    }

    /* time_unix_nano 3 is a fixed64 */

    p = buf;

    if (ot->time_nanos != 0) {
        p = ngx_http_malloc_protobuf_varint(p, NGX_HTTP_MALLOC_OT_TIME << 3
                                               | NGX_HTTP_MALLOC_PB_FIXED64);
        for (s = 0; s < 8; s++) {
            *p++ = (unsigned char) ((uint64_t) ot->time_nanos >> (8 * s));
        }
    }

    p = ngx_http_malloc_protobuf_uint(p, NGX_HTTP_MALLOC_OT_DURATION,
                                      (uint64_t) ot->duration_nanos);
    ngx_http_malloc_mbuf_append(out, buf, p - buf);

    p = ngx_http_malloc_protobuf_uint(buf, 1, ctx->space_s);
    p = ngx_http_malloc_protobuf_uint(p, 2, ctx->type_s[0][1]);
    ngx_http_malloc_protobuf_message(out, NGX_HTTP_MALLOC_OT_PERIOD_TYPE,
                                     buf, p - buf);

    p = ngx_http_malloc_protobuf_uint(buf, NGX_HTTP_MALLOC_OT_PERIOD,
                                      np->period);
    ngx_http_malloc_mbuf_append(out, buf, p - buf);

    if (type == 0 && ot->original != NULL) {
        ngx_http_malloc_otlp_text(ctx, out, NGX_HTTP_MALLOC_OT_PAYLOAD_FORMAT,
                                  "pprof");
        ngx_http_malloc_protobuf_message(out, NGX_HTTP_MALLOC_OT_PAYLOAD,
                                         ot->original, ot->original_len);
    }

    /* attribute_indices 11 (packed): the attributes 1 to nattrs */

    p = attrs;

    for (s = 1; s <= ot->nattrs; s++) {
        p = ngx_http_malloc_protobuf_varint(p, s);
    }

    if (p != attrs) {
        ngx_http_malloc_protobuf_message(out, NGX_HTTP_MALLOC_OT_ATTRIBUTES,
                                         attrs, p - attrs);
    }
}


/* Sample: stack_index 1, values 4 (packed); none for a zero */

static void
ngx_http_malloc_otlp_sample(ngx_http_malloc_mbuf_t *out, size_t stack,
    int64_t v)
{
    unsigned char   value[NGX_HTTP_MALLOC_PB_VARINT_MAX];
    unsigned char   sample[3 * NGX_HTTP_MALLOC_PB_FIELD_MAX];
    unsigned char  *p, *q;

    if (v == 0) {
        return;
    }

    q = ngx_http_malloc_protobuf_varint(value, (uint64_t) v);

    p = ngx_http_malloc_protobuf_uint(sample, 1, stack);
    p = ngx_http_malloc_protobuf_head(p, 4, q - value);
    memcpy(p, value, q - value);
    p += q - value;

    ngx_http_malloc_protobuf_message(out, NGX_HTTP_MALLOC_OT_SAMPLE, sample,
                                     p - sample);
}


/*
 * The tables; the strings last, once every other table has named those
 * it refers to.  Link 0 is the empty Link every table's zero entry is:
 * no sample has a link.
 */

static void
ngx_http_malloc_otlp_dictionary(ngx_http_malloc_otlp_ctx_t *ctx,
    ngx_http_malloc_mbuf_t *out)
{
    size_t                  i;
    ngx_http_malloc_mbuf_t  d;

    memset(&d, 0, sizeof(ngx_http_malloc_mbuf_t));

    ngx_http_malloc_otlp_mappings(ctx, &d);
    ngx_http_malloc_otlp_names(ctx, &d);
    ngx_http_malloc_protobuf_message(&d, NGX_HTTP_MALLOC_OT_LINK, "", 0);
    ngx_http_malloc_otlp_attributes(ctx, &d);
    ngx_http_malloc_otlp_stacks(ctx, &d);

    for (i = 0; i < ctx->strings.n; i++) {
        ngx_http_malloc_protobuf_message(&d, NGX_HTTP_MALLOC_OT_STRING,
                                         ctx->strings.texts[i],
                                         ctx->strings.lens[i]);
    }

    ngx_http_malloc_otlp_nested(out, NGX_HTTP_MALLOC_OT_DICTIONARY, &d);
}


/* Mapping: filename_strindex 4, attribute_indices 5 (packed) */

static void
ngx_http_malloc_otlp_mappings(ngx_http_malloc_otlp_ctx_t *ctx,
    ngx_http_malloc_mbuf_t *d)
{
    size_t           i;
    uint32_t         a;
    unsigned char    buf[4 * NGX_HTTP_MALLOC_PB_FIELD_MAX], *p, *q;
    const uint32_t  *key;

    ngx_http_malloc_protobuf_message(d, NGX_HTTP_MALLOC_OT_MAPPING, "", 0);

    for (i = 0; i < ctx->mappings.n; i++) {
        key = (const uint32_t *) ctx->mappings.texts[i];

        p = ngx_http_malloc_protobuf_uint(buf, 4, key[0]);

        if (key[1] != 0) {
            /* the build ids follow the profiles' attributes */
            a = (uint32_t) ctx->ot->nattrs + key[1];

            q = ngx_http_malloc_protobuf_head(p, 5,
                                   ngx_http_malloc_protobuf_varint_len(a));
            p = ngx_http_malloc_protobuf_varint(q, a);
        }

        ngx_http_malloc_protobuf_message(d, NGX_HTTP_MALLOC_OT_MAPPING, buf,
                                         p - buf);
    }
}


/* KeyValueAndUnit: key_strindex 1, value 2; 0 is the empty one */

static void
ngx_http_malloc_otlp_attributes(ngx_http_malloc_otlp_ctx_t *ctx,
    ngx_http_malloc_mbuf_t *d)
{
    size_t                       i;
    ngx_http_malloc_otlp_attr_t  build;

    ngx_http_malloc_protobuf_message(d, NGX_HTTP_MALLOC_OT_ATTRIBUTE, "", 0);

    for (i = 0; i < ctx->ot->nattrs; i++) {
        ngx_http_malloc_otlp_attr(ctx, d, NGX_HTTP_MALLOC_OT_ATTRIBUTE,
                                  &ctx->ot->attrs[i], ctx->attr_s[i]);
    }

    for (i = 0; i < ctx->builds.n; i++) {
        build.key = NGX_HTTP_MALLOC_OTLP_BUILD_ID;
        build.str = ctx->builds.texts[i];   /* valid, and NUL-ended */
        build.num = 0;

        ngx_http_malloc_otlp_attr(ctx, d, NGX_HTTP_MALLOC_OT_ATTRIBUTE,
                                  &build, ctx->build_s);
    }
}


/*
 * Location: mapping_index 1, lines 3 (Line: function_index 1).  Location
 * i is function i, and the folded stack's comes last.
 */

static void
ngx_http_malloc_otlp_names(ngx_http_malloc_otlp_ctx_t *ctx,
    ngx_http_malloc_mbuf_t *d)
{
    size_t                          i;
    int32_t                         f;
    uint32_t                        id, name_s;
    const ngx_http_malloc_named_t  *np;

    np = ctx->np;

    ngx_http_malloc_protobuf_message(d, NGX_HTTP_MALLOC_OT_LOCATION, "", 0);

    for (i = 0; i < ctx->nfuncs; i++) {
        f = np->name_files[ctx->name_at[i]];

        ngx_http_malloc_otlp_location(d, (f >= 0 && (size_t) f < np->nfiles)
                                         ? ctx->map_of[f] : 0,
                                      i + 1);
    }

    if (ctx->nfolded != 0) {
        ngx_http_malloc_otlp_location(d, 0, ctx->nfuncs + 1);
    }

    ngx_http_malloc_protobuf_message(d, NGX_HTTP_MALLOC_OT_FUNCTION, "", 0);

    for (i = 0; i < ctx->nfuncs; i++) {
        id = ctx->name_at[i];
        name_s = ngx_http_malloc_otlp_intern(ctx, np->names[id]);

        ngx_http_malloc_otlp_function(d, name_s,
                                      (np->raws[id] != NULL)
                                      ? ngx_http_malloc_otlp_intern(ctx,
                                                              np->raws[id])
                                      : name_s);
    }

    if (ctx->nfolded != 0) {
        ngx_http_malloc_otlp_function(d, ctx->folded_s, ctx->folded_s);
    }
}


static void
ngx_http_malloc_otlp_location(ngx_http_malloc_mbuf_t *d, uint32_t mapping,
    uint32_t function)
{
    unsigned char   buf[4 * NGX_HTTP_MALLOC_PB_FIELD_MAX];
    unsigned char   line[NGX_HTTP_MALLOC_PB_FIELD_MAX];
    unsigned char  *p, *q;

    q = ngx_http_malloc_protobuf_uint(line, 1, function);

    p = ngx_http_malloc_protobuf_uint(buf, 1, mapping);
    p = ngx_http_malloc_protobuf_head(p, 3, q - line);
    memcpy(p, line, q - line);
    p += q - line;

    ngx_http_malloc_protobuf_message(d, NGX_HTTP_MALLOC_OT_LOCATION, buf,
                                     p - buf);
}


/* Function: name_strindex 1, system_name_strindex 2 */

static void
ngx_http_malloc_otlp_function(ngx_http_malloc_mbuf_t *d, uint32_t name_s,
    uint32_t sys_s)
{
    unsigned char   buf[2 * NGX_HTTP_MALLOC_PB_FIELD_MAX], *p;

    p = ngx_http_malloc_protobuf_uint(buf, 1, name_s);
    p = ngx_http_malloc_protobuf_uint(p, 2, sys_s);

    ngx_http_malloc_protobuf_message(d, NGX_HTTP_MALLOC_OT_FUNCTION, buf,
                                     p - buf);
}


/* Stack: location_indices 1 (packed), the leaf first */

static void
ngx_http_malloc_otlp_stacks(ngx_http_malloc_otlp_ctx_t *ctx,
    ngx_http_malloc_mbuf_t *d)
{
    size_t                           s, k, len, max;
    uint32_t                         loc;
    unsigned char                   *p;
    const ngx_http_malloc_nstack_t  *st;

    ngx_http_malloc_protobuf_message(d, NGX_HTTP_MALLOC_OT_STACK, "", 0);

    max = 1;

    for (s = 0; s < ctx->np->nstacks; s++) {
        if (ctx->np->stacks[s].n > max) {
            max = ctx->np->stacks[s].n;
        }
    }

    ctx->scratch = ngx_http_malloc_arena_alloc(ctx->arena,
                               (max + 2) * NGX_HTTP_MALLOC_PB_FIELD_MAX);
    if (ctx->scratch == NULL) {
        d->failed = 1;
        return;
    }

    for (s = 0; s < ctx->np->nstacks; s++) {
        if (ctx->stack_of[s] == 0) {
            continue;
        }

        st = &ctx->np->stacks[s];

        len = 0;

        for (k = 0; k < st->n; k++) {
            if (st->ids[k] - 1 < ctx->np->nnames) {
                len += ngx_http_malloc_protobuf_varint_len(
                                              ctx->func_of[st->ids[k] - 1]);
            }
        }

        p = ctx->scratch;

        if (len != 0) {
            p = ngx_http_malloc_protobuf_head(p, 1, len);

            for (k = st->n; k > 0; k--) {
                if (st->ids[k - 1] - 1 < ctx->np->nnames) {
                    loc = ctx->func_of[st->ids[k - 1] - 1];
                    p = ngx_http_malloc_protobuf_varint(p, loc);
                }
            }
        }

        ngx_http_malloc_protobuf_message(d, NGX_HTTP_MALLOC_OT_STACK,
                                         ctx->scratch, p - ctx->scratch);
    }

    if (ctx->nfolded != 0) {
        loc = (uint32_t) ctx->nfuncs + 1;

        p = ngx_http_malloc_protobuf_head(ctx->scratch, 1,
                                    ngx_http_malloc_protobuf_varint_len(loc));
        p = ngx_http_malloc_protobuf_varint(p, loc);

        ngx_http_malloc_protobuf_message(d, NGX_HTTP_MALLOC_OT_STACK,
                                         ctx->scratch, p - ctx->scratch);
    }
}


/* a string field outside the string table, made valid UTF-8 */

static void
ngx_http_malloc_otlp_text(ngx_http_malloc_otlp_ctx_t *ctx,
    ngx_http_malloc_mbuf_t *b, unsigned field, const char *s)
{
    size_t  len;

    if (s == NULL) {
        s = "";
    }

    len = strlen(s);
    s = ngx_http_malloc_otlp_valid(ctx, s, &len);

    ngx_http_malloc_protobuf_message(b, field, s, len);
}


/* msg appended as a field of out, then freed */

static void
ngx_http_malloc_otlp_nested(ngx_http_malloc_mbuf_t *out, unsigned field,
    ngx_http_malloc_mbuf_t *msg)
{
    ngx_http_malloc_protobuf_message(out, field, msg->data, msg->len);

    if (msg->failed) {
        out->failed = 1;
    }

    ngx_http_malloc_mbuf_free(msg);
}
