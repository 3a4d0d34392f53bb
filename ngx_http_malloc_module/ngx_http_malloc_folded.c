
/*
 * The heap viewer's form of a profile.  Names are resolved once per
 * distinct address and written once per distinct name, so a profile of
 * 50k stacks stays a few hundred kilobytes.  All memory comes from the
 * caller's arena and out.  Bytes of a name that are not printable ASCII
 * are escaped as \u00XX: the JSON is always valid, whatever the symbol
 * tables hold.
 */


#include <stdio.h>
#include <string.h>

#include "ngx_http_malloc_folded.h"


/* an open-addressing table: key -> index + 1 (0: empty) */
typedef struct {
    uint64_t                    key;
    uint32_t                    value;
} ngx_http_malloc_fslot_t;


typedef struct {
    ngx_http_malloc_fslot_t    *slots;
    size_t                      cap;        /* a power of two */
    size_t                      n;
} ngx_http_malloc_ftable_t;


typedef struct {
    const ngx_http_malloc_folded_t  *f;
    ngx_http_malloc_ftable_t         addrs;    /* address -> name */
    ngx_http_malloc_ftable_t         names;    /* hash of name -> name */
    const char                     **list;     /* the names, in order */
    size_t                           nlist;
    size_t                           list_cap;
} ngx_http_malloc_fctx_t;


static int ngx_http_malloc_folded_grow(ngx_http_malloc_arena_t *arena,
    ngx_http_malloc_ftable_t *t);
static ngx_http_malloc_fslot_t *ngx_http_malloc_folded_find(
    ngx_http_malloc_ftable_t *t, uint64_t key);
static uint32_t ngx_http_malloc_folded_name(ngx_http_malloc_fctx_t *ctx,
    uint64_t addr);
static void ngx_http_malloc_folded_string(ngx_http_malloc_mbuf_t *out,
    const char *s);


static uint64_t
ngx_http_malloc_folded_hash(const char *s)
{
    uint64_t  h;

    /* FNV-1a */

    for (h = 14695981039346656037ULL; *s != '\0'; s++) {
        h = (h ^ (unsigned char) *s) * 1099511628211ULL;
    }

    return h;
}


/* the slot of "key", or the empty one where it would go */

static ngx_http_malloc_fslot_t *
ngx_http_malloc_folded_find(ngx_http_malloc_ftable_t *t, uint64_t key)
{
    size_t  i;

    i = (size_t) ((key * 0x9e3779b97f4a7c15ULL) >> 17) & (t->cap - 1);

    while (t->slots[i].value != 0 && t->slots[i].key != key) {
        i = (i + 1) & (t->cap - 1);
    }

    return &t->slots[i];
}


/* doubles the table when it is half full; -1 when out of memory */

static int
ngx_http_malloc_folded_grow(ngx_http_malloc_arena_t *arena,
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
            *ngx_http_malloc_folded_find(t, old.slots[i].key) = old.slots[i];
        }
    }

    return 0;
}


/* the index + 1 of the name of "addr" in ctx->list; 0: out of memory */

static uint32_t
ngx_http_malloc_folded_name(ngx_http_malloc_fctx_t *ctx, uint64_t addr)
{
    int                       map;
    size_t                    cap;
    uint64_t                  h;
    const char               *s, **list;
    ngx_http_malloc_fslot_t  *slot, *nslot;
    char                      hex[32];

    if (ngx_http_malloc_folded_grow(ctx->f->arena, &ctx->addrs) != 0) {
        return 0;
    }

    slot = ngx_http_malloc_folded_find(&ctx->addrs, addr);

    if (slot->value != 0) {
        return slot->value;
    }

    s = NULL;
    map = -1;

    if (ctx->f->resolve != NULL) {
        s = ctx->f->resolve(ctx->f->data, addr, &map);
    }

    if (s == NULL) {
        snprintf(hex, sizeof(hex), "0x%llx", (unsigned long long) addr);
        s = hex;
    }

    /*
     * equal names share an index; a name whose hash is taken by another
     * goes on to hash + 1, + 2...: lookups follow the same chain, and
     * nothing is ever removed
     */

    if (ngx_http_malloc_folded_grow(ctx->f->arena, &ctx->names) != 0) {
        return 0;
    }

    h = ngx_http_malloc_folded_hash(s);

    for (nslot = ngx_http_malloc_folded_find(&ctx->names, h);
         nslot->value != 0;
         nslot = ngx_http_malloc_folded_find(&ctx->names, ++h))
    {
        if (strcmp(ctx->list[nslot->value - 1], s) == 0) {
            break;
        }
    }

    if (nslot->value == 0) {
        if (ctx->nlist == ctx->list_cap) {
            cap = ctx->list_cap ? ctx->list_cap * 2 : 1024;
            list = ngx_http_malloc_arena_alloc(ctx->f->arena,
                                               cap * sizeof(char *));
            if (list == NULL) {
                return 0;
            }

            if (ctx->nlist != 0) {
                memcpy(list, ctx->list, ctx->nlist * sizeof(char *));
            }

            ctx->list = list;
            ctx->list_cap = cap;
        }

        s = ngx_http_malloc_arena_strndup(ctx->f->arena, s, strlen(s));
        if (s == NULL) {
            return 0;
        }

        ctx->list[ctx->nlist++] = s;
        nslot->key = h;
        nslot->value = (uint32_t) ctx->nlist;
        ctx->names.n++;
    }

    slot->key = addr;
    slot->value = nslot->value;
    ctx->addrs.n++;

    return slot->value;
}


int
ngx_http_malloc_folded_encode(const ngx_http_malloc_folded_t *f,
    ngx_http_malloc_mbuf_t *out, char *err)
{
    size_t                          i, k;
    int64_t                         v[4];
    uint32_t                       *ids;
    const ngx_http_malloc_heap_t   *heap;
    const ngx_http_malloc_stack_t  *s;
    ngx_http_malloc_fctx_t          ctx;
    ngx_http_malloc_mbuf_t          stacks;

    memset(&ctx, 0, sizeof(ngx_http_malloc_fctx_t));
    memset(&stacks, 0, sizeof(ngx_http_malloc_mbuf_t));
    ctx.f = f;
    heap = f->heap;

    /* the stacks first: they name the functions */

    ngx_http_malloc_mbuf_append(&stacks, "[", 1);

    for (i = 0; i < heap->nstacks; i++) {
        s = &heap->stacks[i];

        ids = ngx_http_malloc_arena_alloc(f->arena,
                                          (s->nframes + 1) * sizeof(uint32_t));
        if (ids == NULL) {
            goto nomem;
        }

        for (k = 0; k < s->nframes; k++) {
            ids[k] = ngx_http_malloc_folded_name(&ctx, s->frames[k]);
            if (ids[k] == 0) {
                goto nomem;
            }
        }

        ngx_http_malloc_mbuf_append(&stacks, i ? ",[" : "[", i ? 2 : 1);

        /* jemalloc lists the allocating frame first: the root goes first */

        for (k = s->nframes; k > 0; k--) {
            ngx_http_malloc_mbuf_printf(&stacks, k == s->nframes ? "%u"
                                                                : ",%u",
                                        (unsigned) ids[k - 1] - 1);
        }

        ngx_http_malloc_mbuf_append(&stacks, "]", 1);
    }

    ngx_http_malloc_mbuf_append(&stacks, "]", 1);

    if (stacks.failed) {
        goto nomem;
    }

    ngx_http_malloc_mbuf_printf(out, "{\"period\":%llu,\"seconds\":%llu,"
                                "\"types\":[\"inuse_space\","
                                "\"inuse_objects\"%s],\"names\":[",
                                (unsigned long long) heap->period,
                                (unsigned long long) f->seconds,
                                heap->accum ? ",\"alloc_space\","
                                              "\"alloc_objects\"" : "");

    for (i = 0; i < ctx.nlist; i++) {
        if (i != 0) {
            ngx_http_malloc_mbuf_append(out, ",", 1);
        }

        ngx_http_malloc_folded_string(out, ctx.list[i]);
    }

    ngx_http_malloc_mbuf_append(out, "],\"stacks\":", 11);
    ngx_http_malloc_mbuf_append(out, stacks.data, stacks.len);
    ngx_http_malloc_mbuf_free(&stacks);

    ngx_http_malloc_mbuf_append(out, ",\"values\":[", 11);

    for (i = 0; i < heap->nstacks; i++) {
        s = &heap->stacks[i];

        ngx_http_malloc_heap_unbias(heap->period, s->objs, s->bytes,
                                    &v[1], &v[0]);
        ngx_http_malloc_heap_unbias(heap->period, s->accum_objs,
                                    s->accum_bytes, &v[3], &v[2]);

        if (heap->accum) {
            ngx_http_malloc_mbuf_printf(out, "%s[%lld,%lld,%lld,%lld]",
                                        i ? "," : "", (long long) v[0],
                                        (long long) v[1], (long long) v[2],
                                        (long long) v[3]);
        } else {
            ngx_http_malloc_mbuf_printf(out, "%s[%lld,%lld]", i ? "," : "",
                                        (long long) v[0], (long long) v[1]);
        }
    }

    ngx_http_malloc_mbuf_append(out, "]}\n", 3);

    if (out->failed) {
        snprintf(err, NGX_HTTP_MALLOC_FOLDED_ERR_LEN,
                 "out of memory while writing the profile");
        return -1;
    }

    return 0;

nomem:

    ngx_http_malloc_mbuf_free(&stacks);
    snprintf(err, NGX_HTTP_MALLOC_FOLDED_ERR_LEN,
             "out of memory while naming the stacks");

    return -1;
}


static void
ngx_http_malloc_folded_string(ngx_http_malloc_mbuf_t *out, const char *s)
{
    const unsigned char  *p;

    ngx_http_malloc_mbuf_append(out, "\"", 1);

    for (p = (const unsigned char *) s; *p != '\0'; p++) {

        if (*p == '"' || *p == '\\') {
            ngx_http_malloc_mbuf_printf(out, "\\%c", *p);

        } else if (*p < 0x20 || *p >= 0x7f) {
            ngx_http_malloc_mbuf_printf(out, "\\u%04x", *p);

        } else {
            ngx_http_malloc_mbuf_append(out, p, 1);
        }
    }

    ngx_http_malloc_mbuf_append(out, "\"", 1);
}
