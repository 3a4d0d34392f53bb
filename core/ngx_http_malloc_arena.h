
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * Memory for building profiles, taken from mmap and never from malloc: a
 * profile must not report the memory used to build it, and a worker must
 * give it all back to the kernel when the response is done.  Pure C.
 */


#ifndef _NGX_HTTP_MALLOC_ARENA_H_INCLUDED_
#define _NGX_HTTP_MALLOC_ARENA_H_INCLUDED_


#include <stddef.h>


typedef struct ngx_http_malloc_arena_s  ngx_http_malloc_arena_t;


/* a growable byte buffer in its own mapping */
typedef struct {
    unsigned char              *data;
    size_t                      len;
    size_t                      cap;
    int                         failed;   /* an append ran out of memory */
} ngx_http_malloc_mbuf_t;


ngx_http_malloc_arena_t *ngx_http_malloc_arena_create(void);

/* 16-byte aligned, zeroed; NULL when out of memory */
void *ngx_http_malloc_arena_alloc(ngx_http_malloc_arena_t *arena,
    size_t size);
char *ngx_http_malloc_arena_strndup(ngx_http_malloc_arena_t *arena,
    const char *s, size_t len);

/*
 * The chunks mapped from now on come with their pages (MAP_POPULATE): for
 * an arena that fills them as soon as it takes them (a profile's build),
 * one call instead of a fault per page, some 15% of a 50,000-stack
 * build on a virtual machine.  Not for an arena that lives on half full.
 */
void ngx_http_malloc_arena_populate(ngx_http_malloc_arena_t *arena);

/*
 * size bytes of the regular file fd, mapped read-only until the arena is
 * destroyed, without a copy; NULL when it cannot be mapped (or is empty).
 * Only for a file no one else writes: one cut short while mapped would
 * kill the process with SIGBUS when read
 */
const unsigned char *ngx_http_malloc_arena_view(ngx_http_malloc_arena_t *arena,
    int fd, size_t size);

void ngx_http_malloc_arena_destroy(ngx_http_malloc_arena_t *arena);

/* bytes mapped by the arena, for tests and benchmarks */
size_t ngx_http_malloc_arena_mapped(ngx_http_malloc_arena_t *arena);


/* appends; on failure sets failed and keeps what it had */
void ngx_http_malloc_mbuf_append(ngx_http_malloc_mbuf_t *b,
    const void *data, size_t len);
void ngx_http_malloc_mbuf_printf(ngx_http_malloc_mbuf_t *b,
    const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ngx_http_malloc_mbuf_free(ngx_http_malloc_mbuf_t *b);


#endif /* _NGX_HTTP_MALLOC_ARENA_H_INCLUDED_ */
