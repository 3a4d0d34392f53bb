
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * profile.proto by hand: the message is flat enough that a protobuf
 * library would bring more code (and malloc) than it saves.  Each small
 * message is measured and written into a scratch buffer, then appended as
 * a length-delimited field of Profile to one mbuf; profile.proto allows
 * the repeated fields of Profile in any order, so the string table, which
 * fills while the samples are written, goes last.  The bytes are then
 * gzipped into the output, as pprof expects from a .pb.gz.
 *
 * Owns: the encoder's tables.  Calls: arena, heap, protobuf (pure C).
 */


#include <stdio.h>
#include <string.h>
#include <zlib.h>

#include "ngx_http_malloc_pprof.h"
#include "ngx_http_malloc_protobuf.h"


/* Profile */
#define NGX_HTTP_MALLOC_PB_SAMPLE_TYPE     1
#define NGX_HTTP_MALLOC_PB_SAMPLE          2
#define NGX_HTTP_MALLOC_PB_MAPPING         3
#define NGX_HTTP_MALLOC_PB_LOCATION        4
#define NGX_HTTP_MALLOC_PB_FUNCTION        5
#define NGX_HTTP_MALLOC_PB_STRING_TABLE    6
#define NGX_HTTP_MALLOC_PB_TIME_NANOS      9
#define NGX_HTTP_MALLOC_PB_DURATION_NANOS  10
#define NGX_HTTP_MALLOC_PB_PERIOD_TYPE     11
#define NGX_HTTP_MALLOC_PB_PERIOD          12
#define NGX_HTTP_MALLOC_PB_COMMENT         13
#define NGX_HTTP_MALLOC_PB_DEFAULT_TYPE    14

#define NGX_HTTP_MALLOC_PPROF_ZCHUNK       (64 * 1024)


typedef struct {
    uint64_t                         key;
    uint32_t                         value;    /* 0: the slot is free */
} ngx_http_malloc_pprof_slot_t;


/* a hash from 64-bit keys to ids, ids starting at 1 */
typedef struct {
    ngx_http_malloc_pprof_slot_t    *slots;
    size_t                           size;
    size_t                           n;
} ngx_http_malloc_pprof_table_t;


typedef struct {
    const char                      *data;
    size_t                           len;
} ngx_http_malloc_pprof_str_t;


typedef struct {
    uint64_t                         address;
    uint32_t                         mapping;   /* id, or 0 for none */
    uint32_t                         function;  /* id */
} ngx_http_malloc_pprof_loc_t;


typedef struct {
    ngx_http_malloc_pprof_t         *pp;
    ngx_http_malloc_arena_t         *arena;
    ngx_http_malloc_mbuf_t           pb;        /* the raw Profile */

    ngx_http_malloc_pprof_str_t     *strs;
    size_t                           nstrs;
    size_t                           strs_cap;
    uint32_t                        *str_index; /* string number + 1 */
    size_t                           str_index_size;

    ngx_http_malloc_pprof_table_t    addrs;     /* address -> location */
    ngx_http_malloc_pprof_table_t    names;     /* string -> function */

    ngx_http_malloc_pprof_loc_t     *locs;
    size_t                           nlocs;
    size_t                           locs_cap;
    uint32_t                        *funcs;     /* name of each function */
    size_t                           nfuncs;
    size_t                           funcs_cap;

    uint64_t                        *ids;       /* one sample's locations */
    unsigned char                   *scratch;   /* one sample's message */

    int64_t                          s_bytes;   /* string numbers */
    int64_t                          s_inuse_space;
} ngx_http_malloc_pprof_ctx_t;


static void ngx_http_malloc_pprof_error(char *err, const char *msg);
static int ngx_http_malloc_pprof_scratch(ngx_http_malloc_pprof_ctx_t *ctx);
static int ngx_http_malloc_pprof_types(ngx_http_malloc_pprof_ctx_t *ctx);
static int ngx_http_malloc_pprof_comments(ngx_http_malloc_pprof_ctx_t *ctx);
static void ngx_http_malloc_pprof_scalars(ngx_http_malloc_pprof_ctx_t *ctx);
static void *ngx_http_malloc_pprof_grow(ngx_http_malloc_arena_t *arena,
    void *old, size_t n, size_t *cap, size_t size);
static uint64_t ngx_http_malloc_pprof_mix(uint64_t key);
static ngx_http_malloc_pprof_slot_t *ngx_http_malloc_pprof_slot(
    ngx_http_malloc_arena_t *arena, ngx_http_malloc_pprof_table_t *t,
    uint64_t key);
static int64_t ngx_http_malloc_pprof_string(ngx_http_malloc_pprof_ctx_t *ctx,
    const char *s, size_t len);
static int64_t ngx_http_malloc_pprof_cstring(ngx_http_malloc_pprof_ctx_t *ctx,
    const char *s);
static int ngx_http_malloc_pprof_value_type(ngx_http_malloc_pprof_ctx_t *ctx,
    unsigned field, const char *type, const char *unit);
static uint32_t ngx_http_malloc_pprof_location(
    ngx_http_malloc_pprof_ctx_t *ctx, uint64_t addr);
static int ngx_http_malloc_pprof_sample(ngx_http_malloc_pprof_ctx_t *ctx,
    const ngx_http_malloc_stack_t *s);
static size_t ngx_http_malloc_pprof_values(ngx_http_malloc_pprof_ctx_t *ctx,
    const ngx_http_malloc_stack_t *s, int64_t *v);
static size_t ngx_http_malloc_pprof_label(ngx_http_malloc_pprof_ctx_t *ctx,
    const ngx_http_malloc_stack_t *s, unsigned char *label);
static size_t ngx_http_malloc_pprof_field_len(size_t len);
static int ngx_http_malloc_pprof_mappings(ngx_http_malloc_pprof_ctx_t *ctx);
static void ngx_http_malloc_pprof_tables(ngx_http_malloc_pprof_ctx_t *ctx);
static voidpf ngx_http_malloc_pprof_zalloc(voidpf opaque, uInt items,
    uInt size);
static void ngx_http_malloc_pprof_zfree(voidpf opaque, voidpf address);


static void
ngx_http_malloc_pprof_error(char *err, const char *msg)
{
    if (err != NULL) {
        snprintf(err, NGX_HTTP_MALLOC_PPROF_ERR_LEN, "%s", msg);
    }
}


int
ngx_http_malloc_pprof_encode(ngx_http_malloc_pprof_t *pp,
    ngx_http_malloc_mbuf_t *out, char *err)
{
    int                            rc;
    size_t                         i;
    const ngx_http_malloc_heap_t  *heap;
    ngx_http_malloc_pprof_ctx_t    ctx;

    heap = pp->heap;

    memset(&ctx, 0, sizeof(ngx_http_malloc_pprof_ctx_t));
    ctx.pp = pp;
    ctx.arena = pp->arena;

    if (ngx_http_malloc_pprof_scratch(&ctx) != 0
        || ngx_http_malloc_pprof_types(&ctx) != 0
        || ngx_http_malloc_pprof_mappings(&ctx) != 0)
    {
        goto nomem;
    }

    for (i = 0; i < heap->nstacks; i++) {
        if (ngx_http_malloc_pprof_sample(&ctx, &heap->stacks[i]) != 0) {
            goto nomem;
        }
    }

    if (ngx_http_malloc_pprof_comments(&ctx) != 0) {
        goto nomem;
    }

    ngx_http_malloc_pprof_tables(&ctx);
    ngx_http_malloc_pprof_scalars(&ctx);

    if (ctx.pb.failed) {
        goto nomem;
    }

    rc = ngx_http_malloc_pprof_gzip(ctx.arena, ctx.pb.data, ctx.pb.len, out);

    ngx_http_malloc_mbuf_free(&ctx.pb);

    if (rc != 0) {
        ngx_http_malloc_pprof_error(err, "gzip failed (out of memory?)");
        return -1;
    }

    return 0;

nomem:

    ngx_http_malloc_mbuf_free(&ctx.pb);
    ngx_http_malloc_pprof_error(err, "out of memory while encoding the "
                                "profile");
    return -1;
}


/*
 * Room for the largest sample: location ids, up to 4 values and a label,
 * each a varint, with the tags and lengths around them
 */

static int
ngx_http_malloc_pprof_scratch(ngx_http_malloc_pprof_ctx_t *ctx)
{
    size_t                         i, max;
    const ngx_http_malloc_heap_t  *heap;

    heap = ctx->pp->heap;
    max = 0;

    for (i = 0; i < heap->nstacks; i++) {
        if (heap->stacks[i].nframes > max) {
            max = heap->stacks[i].nframes;
        }
    }

    ctx->ids = ngx_http_malloc_arena_alloc(ctx->arena,
                                           (max + 1) * sizeof(uint64_t));
    ctx->scratch = ngx_http_malloc_arena_alloc(ctx->arena,
                                   (max + 16) * NGX_HTTP_MALLOC_PB_FIELD_MAX);

    if (ctx->ids == NULL || ctx->scratch == NULL) {
        return -1;
    }

    return 0;
}


/*
 * String 0, which must be "", then the sample types and the period's
 * type; -1: out of memory
 */

static int
ngx_http_malloc_pprof_types(ngx_http_malloc_pprof_ctx_t *ctx)
{
    size_t  i;
    static const struct {
        unsigned     field;
        const char  *type;
        const char  *unit;
    } types[] = {
        { NGX_HTTP_MALLOC_PB_SAMPLE_TYPE, "alloc_objects", "count" },
        { NGX_HTTP_MALLOC_PB_SAMPLE_TYPE, "alloc_space", "bytes" },
        { NGX_HTTP_MALLOC_PB_SAMPLE_TYPE, "inuse_objects", "count" },
        { NGX_HTTP_MALLOC_PB_SAMPLE_TYPE, "inuse_space", "bytes" },
        { NGX_HTTP_MALLOC_PB_PERIOD_TYPE, "space", "bytes" }
    };

    if (ngx_http_malloc_pprof_cstring(ctx, "") != 0) {
        return -1;
    }

    /* alloc_* first: pprof shows the last sample type unless told */

    for (i = ctx->pp->heap->accum ? 0 : 2;
         i < sizeof(types) / sizeof(types[0]);
         i++)
    {
        if (ngx_http_malloc_pprof_value_type(ctx, types[i].field,
                                             types[i].type, types[i].unit)
            != 0)
        {
            return -1;
        }
    }

    ctx->s_bytes = ngx_http_malloc_pprof_cstring(ctx, "bytes");
    ctx->s_inuse_space = ngx_http_malloc_pprof_cstring(ctx, "inuse_space");

    return 0;
}


/* comments are string indexes; go tool pprof -comments prints them */

static int
ngx_http_malloc_pprof_comments(ngx_http_malloc_pprof_ctx_t *ctx)
{
    size_t          i;
    int64_t         k;
    unsigned char   buf[NGX_HTTP_MALLOC_PB_FIELD_MAX];
    unsigned char  *p;

    for (i = 0; i < ctx->pp->ncomments; i++) {
        k = ngx_http_malloc_pprof_cstring(ctx, ctx->pp->comments[i]);
        if (k <= 0) {
            return -1;
        }

        p = ngx_http_malloc_protobuf_uint(buf, NGX_HTTP_MALLOC_PB_COMMENT,
                                          (uint64_t) k);
        ngx_http_malloc_mbuf_append(&ctx->pb, buf, p - buf);
    }

    return 0;
}


/* the times, the period and the default type, each left out when 0 */

static void
ngx_http_malloc_pprof_scalars(ngx_http_malloc_pprof_ctx_t *ctx)
{
    unsigned char             buf[4 * NGX_HTTP_MALLOC_PB_FIELD_MAX];
    unsigned char            *p;
    ngx_http_malloc_pprof_t  *pp;

    pp = ctx->pp;
    p = buf;

    if (pp->time_nanos != 0) {
        p = ngx_http_malloc_protobuf_uint(p, NGX_HTTP_MALLOC_PB_TIME_NANOS,
                                          (uint64_t) pp->time_nanos);
    }

    if (pp->duration_nanos != 0) {
        p = ngx_http_malloc_protobuf_uint(p, NGX_HTTP_MALLOC_PB_DURATION_NANOS,
                                          (uint64_t) pp->duration_nanos);
    }

    if (pp->heap->period != 0) {
        p = ngx_http_malloc_protobuf_uint(p, NGX_HTTP_MALLOC_PB_PERIOD,
                                          pp->heap->period);
    }

    p = ngx_http_malloc_protobuf_uint(p, NGX_HTTP_MALLOC_PB_DEFAULT_TYPE,
                                      (uint64_t) ctx->s_inuse_space);

    ngx_http_malloc_mbuf_append(&ctx->pb, buf, p - buf);
}


/* arrays grow by copying into a bigger block: the arena never frees */

static void *
ngx_http_malloc_pprof_grow(ngx_http_malloc_arena_t *arena, void *old,
    size_t n, size_t *cap, size_t size)
{
    void    *p;
    size_t   c;

    if (n < *cap) {
        return old;
    }

    c = *cap ? *cap * 2 : 256;

    if (c > SIZE_MAX / 4 / size) {
        return NULL;
    }

    p = ngx_http_malloc_arena_alloc(arena, c * size);
    if (p == NULL) {
        return NULL;
    }

    if (n > 0) {
        memcpy(p, old, n * size);
    }

    *cap = c;

    return p;
}


static uint64_t
ngx_http_malloc_pprof_mix(uint64_t key)
{
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdULL;
    key ^= key >> 33;
    key *= 0xc4ceb9fe1a85ec53ULL;
    key ^= key >> 33;

    return key;
}


/* the slot of key (value 0 if new), growing the table first; NULL: OOM */

static ngx_http_malloc_pprof_slot_t *
ngx_http_malloc_pprof_slot(ngx_http_malloc_arena_t *arena,
    ngx_http_malloc_pprof_table_t *t, uint64_t key)
{
    size_t                         i, j, mask, size;
    ngx_http_malloc_pprof_slot_t  *slots;

    if ((t->n + 1) * 2 > t->size) {
        size = t->size ? t->size * 2 : 1024;

        if (size > SIZE_MAX / 4 / sizeof(ngx_http_malloc_pprof_slot_t)) {
            return NULL;
        }

        slots = ngx_http_malloc_arena_alloc(arena,
                                size * sizeof(ngx_http_malloc_pprof_slot_t));
        if (slots == NULL) {
            return NULL;
        }

        for (i = 0; i < t->size; i++) {
            if (t->slots[i].value == 0) {
                continue;
            }

            j = ngx_http_malloc_pprof_mix(t->slots[i].key) & (size - 1);

            while (slots[j].value != 0) {
                j = (j + 1) & (size - 1);
            }

            slots[j] = t->slots[i];
        }

        t->slots = slots;
        t->size = size;
    }

    mask = t->size - 1;
    i = ngx_http_malloc_pprof_mix(key) & mask;

    while (t->slots[i].value != 0 && t->slots[i].key != key) {
        i = (i + 1) & mask;
    }

    t->slots[i].key = key;

    return &t->slots[i];
}


/* the number of the string in the string table; -1: out of memory */

static int64_t
ngx_http_malloc_pprof_string(ngx_http_malloc_pprof_ctx_t *ctx, const char *s,
    size_t len)
{
    size_t                        i, j, size, mask;
    uint32_t                     *index;
    uint64_t                      h;
    ngx_http_malloc_pprof_str_t  *str;

    h = 0xcbf29ce484222325ULL;

    for (i = 0; i < len; i++) {
        h ^= (unsigned char) s[i];
        h *= 0x100000001b3ULL;
    }

    if ((ctx->nstrs + 1) * 2 > ctx->str_index_size) {
        size = ctx->str_index_size ? ctx->str_index_size * 2 : 1024;

        if (ctx->nstrs >= UINT32_MAX / 4) {
            return -1;
        }

        index = ngx_http_malloc_arena_alloc(ctx->arena,
                                            size * sizeof(uint32_t));
        if (index == NULL) {
            return -1;
        }

        /* rehash by recomputing: strings are few next to samples */

        for (i = 0; i < ctx->nstrs; i++) {
            str = &ctx->strs[i];
            h = 0xcbf29ce484222325ULL;

            for (j = 0; j < str->len; j++) {
                h ^= (unsigned char) str->data[j];
                h *= 0x100000001b3ULL;
            }

            j = ngx_http_malloc_pprof_mix(h) & (size - 1);

            while (index[j] != 0) {
                j = (j + 1) & (size - 1);
            }

            index[j] = i + 1;
        }

        ctx->str_index = index;
        ctx->str_index_size = size;

        return ngx_http_malloc_pprof_string(ctx, s, len);
    }

    mask = ctx->str_index_size - 1;
    i = ngx_http_malloc_pprof_mix(h) & mask;

    while (ctx->str_index[i] != 0) {
        str = &ctx->strs[ctx->str_index[i] - 1];

        if (str->len == len && memcmp(str->data, s, len) == 0) {
            return ctx->str_index[i] - 1;
        }

        i = (i + 1) & mask;
    }

    ctx->strs = ngx_http_malloc_pprof_grow(ctx->arena, ctx->strs, ctx->nstrs,
                                           &ctx->strs_cap,
                                           sizeof(ngx_http_malloc_pprof_str_t));
    if (ctx->strs == NULL) {
        return -1;
    }

    /* names from the resolver may live in a buffer it reuses */

    str = &ctx->strs[ctx->nstrs];
    str->data = ngx_http_malloc_arena_strndup(ctx->arena, s, len);
    str->len = len;

    if (str->data == NULL) {
        return -1;
    }

    ctx->str_index[i] = ++ctx->nstrs;

    return ctx->nstrs - 1;
}


static int64_t
ngx_http_malloc_pprof_cstring(ngx_http_malloc_pprof_ctx_t *ctx,
    const char *s)
{
    return ngx_http_malloc_pprof_string(ctx, s, strlen(s));
}


static int
ngx_http_malloc_pprof_value_type(ngx_http_malloc_pprof_ctx_t *ctx,
    unsigned field, const char *type, const char *unit)
{
    int64_t         t, u;
    unsigned char   buf[2 * NGX_HTTP_MALLOC_PB_FIELD_MAX];
    unsigned char  *p;

    t = ngx_http_malloc_pprof_cstring(ctx, type);
    u = ngx_http_malloc_pprof_cstring(ctx, unit);

    if (t < 0 || u < 0) {
        return -1;
    }

    p = ngx_http_malloc_protobuf_uint(buf, 1, (uint64_t) t);
    p = ngx_http_malloc_protobuf_uint(p, 2, (uint64_t) u);

    ngx_http_malloc_protobuf_message(&ctx->pb, field, buf, p - buf);

    return 0;
}


/*
 * The location of a return address, made on first sight: the resolver
 * names it once.  Like pprof's reader of legacy heap text, the location's
 * address is the return address minus 1, inside the call instruction,
 * so that the line pprof shows is the call's.  0 is out of memory.
 */

static uint32_t
ngx_http_malloc_pprof_location(ngx_http_malloc_pprof_ctx_t *ctx,
    uint64_t addr)
{
    int                            map;
    char                           hex[32];
    int64_t                        name;
    const char                    *s;
    ngx_http_malloc_pprof_t       *pp;
    ngx_http_malloc_pprof_loc_t   *loc;
    ngx_http_malloc_pprof_slot_t  *slot, *fslot;

    /* the addresses' table cannot move before the location is made */

    slot = ngx_http_malloc_pprof_slot(ctx->arena, &ctx->addrs, addr);
    if (slot == NULL) {
        return 0;
    }

    if (slot->value != 0) {
        return slot->value;
    }

    pp = ctx->pp;
    map = -1;
    s = NULL;

    if (pp->resolve != NULL) {
        s = pp->resolve(pp->data, addr, &map);
    }

    if (s == NULL) {
        snprintf(hex, sizeof(hex), "0x%llx", (unsigned long long) addr);
        s = hex;
    }

    if (map < 0 || (size_t) map >= pp->nmaps) {
        map = -1;
    }

    name = ngx_http_malloc_pprof_cstring(ctx, s);
    if (name < 0) {
        return 0;
    }

    /* one function per distinct name, however many addresses it has */

    fslot = ngx_http_malloc_pprof_slot(ctx->arena, &ctx->names,
                                       (uint64_t) name);
    if (fslot == NULL) {
        return 0;
    }

    if (fslot->value == 0) {
        ctx->funcs = ngx_http_malloc_pprof_grow(ctx->arena, ctx->funcs,
                                                ctx->nfuncs, &ctx->funcs_cap,
                                                sizeof(uint32_t));
        if (ctx->funcs == NULL || ctx->nfuncs >= UINT32_MAX / 4) {
            return 0;
        }

        ctx->funcs[ctx->nfuncs++] = (uint32_t) name;
        fslot->value = ctx->nfuncs;
        ctx->names.n++;
    }

    ctx->locs = ngx_http_malloc_pprof_grow(ctx->arena, ctx->locs, ctx->nlocs,
                                           &ctx->locs_cap,
                                           sizeof(ngx_http_malloc_pprof_loc_t));
    if (ctx->locs == NULL || ctx->nlocs >= UINT32_MAX / 4) {
        return 0;
    }

    loc = &ctx->locs[ctx->nlocs++];
    loc->address = (addr != 0) ? addr - 1 : 0;
    loc->mapping = map + 1;
    loc->function = fslot->value;

    slot->value = ctx->nlocs;
    ctx->addrs.n++;

    return slot->value;
}


static int
ngx_http_malloc_pprof_sample(ngx_http_malloc_pprof_ctx_t *ctx,
    const ngx_http_malloc_stack_t *s)
{
    size_t          i, nv, locs_len, values_len, label_len, len;
    int64_t         v[4];
    uint32_t        id;
    unsigned char   label[3 * NGX_HTTP_MALLOC_PB_FIELD_MAX];
    unsigned char  *p;

    nv = ngx_http_malloc_pprof_values(ctx, s, v);

    locs_len = 0;

    for (i = 0; i < s->nframes; i++) {
        id = ngx_http_malloc_pprof_location(ctx, s->frames[i]);
        if (id == 0) {
            return -1;
        }

        ctx->ids[i] = id;
        locs_len += ngx_http_malloc_protobuf_varint_len(id);
    }

    values_len = 0;

    for (i = 0; i < nv; i++) {
        values_len += ngx_http_malloc_protobuf_varint_len((uint64_t) v[i]);
    }

    label_len = ngx_http_malloc_pprof_label(ctx, s, label);

    /* a sample has at least two values: values_len is never 0 */

    len = ngx_http_malloc_pprof_field_len(locs_len)
          + ngx_http_malloc_pprof_field_len(values_len)
          + ngx_http_malloc_pprof_field_len(label_len);

    p = ngx_http_malloc_protobuf_head(ctx->scratch, NGX_HTTP_MALLOC_PB_SAMPLE,
                                      len);

    if (locs_len != 0) {
        p = ngx_http_malloc_protobuf_head(p, 1, locs_len);

        for (i = 0; i < s->nframes; i++) {
            p = ngx_http_malloc_protobuf_varint(p, ctx->ids[i]);
        }
    }

    p = ngx_http_malloc_protobuf_head(p, 2, values_len);

    for (i = 0; i < nv; i++) {
        p = ngx_http_malloc_protobuf_varint(p, (uint64_t) v[i]);
    }

    if (label_len != 0) {
        p = ngx_http_malloc_protobuf_head(p, 3, label_len);
        memcpy(p, label, label_len);
        p += label_len;
    }

    ngx_http_malloc_mbuf_append(&ctx->pb, ctx->scratch, p - ctx->scratch);

    return 0;
}


/* a stack's values, unbiased, in the order of the sample types; how many */

static size_t
ngx_http_malloc_pprof_values(ngx_http_malloc_pprof_ctx_t *ctx,
    const ngx_http_malloc_stack_t *s, int64_t *v)
{
    size_t  nv;

    nv = 0;

    if (ctx->pp->heap->accum) {
        ngx_http_malloc_heap_unbias(ctx->pp->heap->period, s->accum_objs,
                                    s->accum_bytes, &v[0], &v[1]);
        nv = 2;
    }

    ngx_http_malloc_heap_values(ctx->pp->heap, s, &v[nv], &v[nv + 1]);

    return nv + 2;
}


/*
 * The object size, as pprof's "bytes" tag, like Go's heap profiles: the
 * Label message in "label", its length, 0 when the size is not known
 */

static size_t
ngx_http_malloc_pprof_label(ngx_http_malloc_pprof_ctx_t *ctx,
    const ngx_http_malloc_stack_t *s, unsigned char *label)
{
    int64_t         block;
    unsigned char  *l;

    if (ctx->pp->heap->kept && s->kept_objs > 0) {
        block = s->kept_bytes / s->kept_objs;

    } else if (s->objs != 0) {
        block = (int64_t) (s->bytes / s->objs);

    } else if (s->accum_objs != 0) {
        block = (int64_t) (s->accum_bytes / s->accum_objs);

    } else {
        block = 0;
    }

    l = label;
    l = ngx_http_malloc_protobuf_uint(l, 1, (uint64_t) ctx->s_bytes);
    l = ngx_http_malloc_protobuf_uint(l, 3, (uint64_t) block);

    return (block != 0) ? (size_t) (l - label) : 0;
}


/* the bytes of a length-delimited field of a Sample; none when empty */

static size_t
ngx_http_malloc_pprof_field_len(size_t len)
{
    if (len == 0) {
        return 0;
    }

    return 1 + ngx_http_malloc_protobuf_varint_len(len) + len;
}


/*
 * Every mapping is written, whether a sample uses it or not, so that
 * mapping ids stay the resolver's map indexes plus 1.  The names come
 * from the resolver: has_functions keeps pprof from symbolizing again.
 */

static int
ngx_http_malloc_pprof_mappings(ngx_http_malloc_pprof_ctx_t *ctx)
{
    size_t                        i;
    int64_t                       file, build_id;
    unsigned char                 buf[8 * NGX_HTTP_MALLOC_PB_FIELD_MAX];
    unsigned char                *p;
    const ngx_http_malloc_map_t  *m;

    for (i = 0; i < ctx->pp->nmaps; i++) {
        m = &ctx->pp->maps[i];

        file = ngx_http_malloc_pprof_cstring(ctx, (m->path != NULL)
                                                  ? m->path : "");
        build_id = ngx_http_malloc_pprof_cstring(ctx, (m->build_id != NULL)
                                                      ? m->build_id : "");

        if (file < 0 || build_id < 0) {
            return -1;
        }

        p = ngx_http_malloc_protobuf_uint(buf, 1, i + 1);
        p = ngx_http_malloc_protobuf_uint(p, 2, m->start);
        p = ngx_http_malloc_protobuf_uint(p, 3, m->limit);
        p = ngx_http_malloc_protobuf_uint(p, 4, m->offset);
        p = ngx_http_malloc_protobuf_uint(p, 5, (uint64_t) file);
        p = ngx_http_malloc_protobuf_uint(p, 6, (uint64_t) build_id);
        p = ngx_http_malloc_protobuf_uint(p, 7, 1);

        ngx_http_malloc_protobuf_message(&ctx->pb, NGX_HTTP_MALLOC_PB_MAPPING,
                                         buf, p - buf);
    }

    return 0;
}


/* locations, functions and strings, once the samples have named them all */

static void
ngx_http_malloc_pprof_tables(ngx_http_malloc_pprof_ctx_t *ctx)
{
    size_t                        i;
    unsigned char                 buf[8 * NGX_HTTP_MALLOC_PB_FIELD_MAX];
    unsigned char                *p, *q;
    ngx_http_malloc_pprof_loc_t  *loc;

    for (i = 0; i < ctx->nlocs; i++) {
        loc = &ctx->locs[i];

        p = ngx_http_malloc_protobuf_uint(buf, 1, i + 1);
        p = ngx_http_malloc_protobuf_uint(p, 2, loc->mapping);
        p = ngx_http_malloc_protobuf_uint(p, 3, loc->address);

        /* Line { function_id }: at most 11 bytes, so a 1-byte length */

        q = ngx_http_malloc_protobuf_uint(p + 2, 1, loc->function);
        p = ngx_http_malloc_protobuf_head(p, 4, q - (p + 2));
        p = q;

        ngx_http_malloc_protobuf_message(&ctx->pb, NGX_HTTP_MALLOC_PB_LOCATION,
                                         buf, p - buf);
    }

    for (i = 0; i < ctx->nfuncs; i++) {
        p = ngx_http_malloc_protobuf_uint(buf, 1, i + 1);
        p = ngx_http_malloc_protobuf_uint(p, 2, ctx->funcs[i]);
        p = ngx_http_malloc_protobuf_uint(p, 3, ctx->funcs[i]);

        ngx_http_malloc_protobuf_message(&ctx->pb, NGX_HTTP_MALLOC_PB_FUNCTION,
                                         buf, p - buf);
    }

    for (i = 0; i < ctx->nstrs; i++) {
        ngx_http_malloc_protobuf_message(&ctx->pb,
                                         NGX_HTTP_MALLOC_PB_STRING_TABLE,
                                         ctx->strs[i].data, ctx->strs[i].len);
    }
}


/* zlib's own memory comes from the arena too, and goes with it */

static voidpf
ngx_http_malloc_pprof_zalloc(voidpf opaque, uInt items, uInt size)
{
    void  *p;

    if (size != 0 && items > SIZE_MAX / size) {
        return Z_NULL;
    }

    p = ngx_http_malloc_arena_alloc(opaque, (size_t) items * size);

    return (p != NULL) ? p : Z_NULL;
}


static void
ngx_http_malloc_pprof_zfree(voidpf opaque, voidpf address)
{
    (void) opaque;
    (void) address;
}


/* the fastest level, as Go's runtime/pprof: the worker waits for it */

int
ngx_http_malloc_pprof_gzip(ngx_http_malloc_arena_t *arena,
    const unsigned char *data, size_t len, ngx_http_malloc_mbuf_t *out)
{
    int             rc;
    size_t          n;
    z_stream        z;
    unsigned char  *chunk;

    chunk = ngx_http_malloc_arena_alloc(arena, NGX_HTTP_MALLOC_PPROF_ZCHUNK);
    if (chunk == NULL) {
        return -1;
    }

    memset(&z, 0, sizeof(z_stream));
    z.zalloc = ngx_http_malloc_pprof_zalloc;
    z.zfree = ngx_http_malloc_pprof_zfree;
    z.opaque = arena;

    /* windowBits 15 + 16: a gzip header and trailer, not zlib's */

    if (deflateInit2(&z, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8,
                     Z_DEFAULT_STRATEGY)
        != Z_OK)
    {
        return -1;
    }

    do {
        /* avail_in is an uInt: feed a huge profile in parts */

        if (z.avail_in == 0 && len > 0) {
            n = (len > 1024 * 1024 * 1024) ? 1024 * 1024 * 1024 : len;
            z.next_in = (Bytef *) data;
            z.avail_in = (uInt) n;
            data += n;
            len -= n;
        }

        z.next_out = chunk;
        z.avail_out = NGX_HTTP_MALLOC_PPROF_ZCHUNK;

        rc = deflate(&z, (len == 0) ? Z_FINISH : Z_NO_FLUSH);

        if (rc == Z_STREAM_ERROR) {
            deflateEnd(&z);
            return -1;
        }

        ngx_http_malloc_mbuf_append(out, chunk,
                                    NGX_HTTP_MALLOC_PPROF_ZCHUNK - z.avail_out);

    } while (rc != Z_STREAM_END && !out->failed);

    deflateEnd(&z);

    return out->failed ? -1 : 0;
}
