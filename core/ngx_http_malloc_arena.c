
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * A bump allocator over a list of anonymous mappings, and a byte buffer
 * that grows with mremap().  Nothing here is ever handed to free().
 *
 * Owns: the mappings.  Calls: nothing of the module (pure C).
 */


#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "ngx_http_malloc_arena.h"


#define NGX_HTTP_MALLOC_ARENA_CHUNK  (1024 * 1024)


typedef struct ngx_http_malloc_chunk_s  ngx_http_malloc_chunk_t;

struct ngx_http_malloc_chunk_s {
    ngx_http_malloc_chunk_t    *next;
    size_t                      size;
    size_t                      used;
};

typedef struct ngx_http_malloc_view_s  ngx_http_malloc_view_t;

/* a file mapped for the arena's life */
struct ngx_http_malloc_view_s {
    ngx_http_malloc_view_t     *next;
    void                       *data;
    size_t                      size;
};

struct ngx_http_malloc_arena_s {
    ngx_http_malloc_chunk_t    *chunks;
    ngx_http_malloc_view_t     *views;
    size_t                      mapped;
    int                         populate;
};


static ngx_http_malloc_chunk_t *ngx_http_malloc_arena_chunk(size_t size,
    int populate);


static ngx_http_malloc_chunk_t *
ngx_http_malloc_arena_chunk(size_t size, int populate)
{
    void                     *p;
    ngx_http_malloc_chunk_t  *c;

    p = mmap(NULL, size, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS | (populate ? MAP_POPULATE : 0),
             -1, 0);
    if (p == MAP_FAILED) {
        return NULL;
    }

    c = p;
    c->next = NULL;
    c->size = size;
    c->used = (sizeof(ngx_http_malloc_chunk_t) + 15) & ~(size_t) 15;

    return c;
}


ngx_http_malloc_arena_t *
ngx_http_malloc_arena_create(void)
{
    ngx_http_malloc_arena_t  *a;
    ngx_http_malloc_chunk_t  *c;

    c = ngx_http_malloc_arena_chunk(NGX_HTTP_MALLOC_ARENA_CHUNK, 0);
    if (c == NULL) {
        return NULL;
    }

    /* the arena's own header lives in its first chunk */

    a = (ngx_http_malloc_arena_t *) ((unsigned char *) c + c->used);
    c->used += (sizeof(ngx_http_malloc_arena_t) + 15) & ~(size_t) 15;

    a->chunks = c;
    a->views = NULL;
    a->mapped = c->size;
    a->populate = 0;

    return a;
}


void *
ngx_http_malloc_arena_alloc(ngx_http_malloc_arena_t *a, size_t size)
{
    size_t                    need, chunk;
    unsigned char            *p;
    ngx_http_malloc_chunk_t  *c;

    if (size > SIZE_MAX / 2) {
        return NULL;
    }

    size = (size + 15) & ~(size_t) 15;
    c = a->chunks;

    if (c->size - c->used < size) {
        need = size + ((sizeof(ngx_http_malloc_chunk_t) + 15) & ~(size_t) 15);
        chunk = NGX_HTTP_MALLOC_ARENA_CHUNK;

        while (chunk < need) {
            chunk *= 2;
        }

        c = ngx_http_malloc_arena_chunk(chunk, a->populate);
        if (c == NULL) {
            return NULL;
        }

        /* the first chunk holds the arena: keep it last in the list */
        c->next = a->chunks;
        a->chunks = c;
        a->mapped += c->size;
    }

    /* anonymous mappings come zeroed and are never reused */
    p = (unsigned char *) c + c->used;
    c->used += size;

    return p;
}


char *
ngx_http_malloc_arena_strndup(ngx_http_malloc_arena_t *a, const char *s,
    size_t len)
{
    char  *p;

    p = ngx_http_malloc_arena_alloc(a, len + 1);
    if (p == NULL) {
        return NULL;
    }

    memcpy(p, s, len);
    p[len] = '\0';

    return p;
}


void
ngx_http_malloc_arena_populate(ngx_http_malloc_arena_t *a)
{
    a->populate = 1;
}


const unsigned char *
ngx_http_malloc_arena_view(ngx_http_malloc_arena_t *a, int fd, size_t size)
{
    void                    *p;
    ngx_http_malloc_view_t  *v;

    v = ngx_http_malloc_arena_alloc(a, sizeof(ngx_http_malloc_view_t));
    if (v == NULL || size == 0) {
        return NULL;
    }

    /* read at once from start to end: the pages come with the mapping */

    p = mmap(NULL, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    if (p == MAP_FAILED) {
        return NULL;
    }

    v->data = p;
    v->size = size;
    v->next = a->views;
    a->views = v;

    return p;
}


void
ngx_http_malloc_arena_destroy(ngx_http_malloc_arena_t *a)
{
    ngx_http_malloc_view_t   *v;
    ngx_http_malloc_chunk_t  *c, *next;

    if (a == NULL) {
        return;
    }

    /* the views' records are in the chunks: they go first */

    for (v = a->views; v != NULL; v = v->next) {
        munmap(v->data, v->size);
    }

    for (c = a->chunks; c != NULL; c = next) {
        next = c->next;
        munmap(c, c->size);
    }
}


size_t
ngx_http_malloc_arena_mapped(ngx_http_malloc_arena_t *a)
{
    return a->mapped;
}


void
ngx_http_malloc_mbuf_append(ngx_http_malloc_mbuf_t *b, const void *data,
    size_t len)
{
    void    *p;
    size_t   cap;

    if (b->failed) {
        return;
    }

    if (b->cap - b->len < len) {
        cap = b->cap ? b->cap : 64 * 1024;

        while (cap - b->len < len) {
            if (cap > SIZE_MAX / 4) {
                b->failed = 1;
                return;
            }

            cap *= 2;
        }

        if (b->data == NULL) {
            p = mmap(NULL, cap, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        } else {
            p = mremap(b->data, b->cap, cap, MREMAP_MAYMOVE);
        }

        if (p == MAP_FAILED) {
            b->failed = 1;
            return;
        }

        b->data = p;
        b->cap = cap;
    }

    if (len > 0) {
        memcpy(b->data + b->len, data, len);
        b->len += len;
    }
}


void
ngx_http_malloc_mbuf_printf(ngx_http_malloc_mbuf_t *b, const char *fmt, ...)
{
    int      n;
    char     small[512];
    va_list  args;

    /* profile lines are short; longer ones are cut, never overrun */

    va_start(args, fmt);
    n = vsnprintf(small, sizeof(small), fmt, args);
    va_end(args);

    if (n < 0) {
        b->failed = 1;
        return;
    }

    if ((size_t) n >= sizeof(small)) {
        n = sizeof(small) - 1;
    }

    ngx_http_malloc_mbuf_append(b, small, n);
}


void
ngx_http_malloc_mbuf_free(ngx_http_malloc_mbuf_t *b)
{
    if (b->data != NULL) {
        munmap(b->data, b->cap);
    }

    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    b->failed = 0;
}
