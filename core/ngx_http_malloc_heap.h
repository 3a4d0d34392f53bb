
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * jemalloc heap_v2 dumps: tell whole from cut short, parse, merge over
 * workers, subtract (growth), and write back as heap_v2 or as gperftools'
 * legacy heap text.  Pure C; all memory comes from an
 * ngx_http_malloc_arena_t.
 */


#ifndef _NGX_HTTP_MALLOC_HEAP_H_INCLUDED_
#define _NGX_HTTP_MALLOC_HEAP_H_INCLUDED_


#include <stddef.h>
#include <stdint.h>

#include "ngx_http_malloc_arena.h"


#define NGX_HTTP_MALLOC_HEAP_ERR_LEN  256


typedef struct {
    uint64_t                   *frames;      /* return addresses, innermost
                                                first, as jemalloc dumps */
    uint32_t                    nframes;
    uint32_t                    hash;        /* of the frames: the index
                                                compares frames only where
                                                it matches */
    uint64_t                    objs;        /* live: sampled counts, as in */
    uint64_t                    bytes;       /* the dump, not unbiased */
    uint64_t                    accum_objs;  /* since start or reset */
    uint64_t                    accum_bytes;
    int64_t                     kept_objs;   /* unbiased, in a heap that */
    int64_t                     kept_bytes;  /* heap_keep() made */
} ngx_http_malloc_stack_t;


typedef struct {
    ngx_http_malloc_arena_t    *arena;
    uint64_t                    period;      /* mean bytes between samples,
                                                0 until a dump is added */
    ngx_http_malloc_stack_t    *stacks;
    size_t                      nstacks;
    size_t                      cap;
    uint32_t                   *index;       /* open-addressing hash of
                                                stacks by frames, for merging */
    size_t                      index_size;
    const char                 *maps;        /* MAPPED_LIBRARIES of the first
                                                dump added, NUL-terminated */
    size_t                      maps_len;
    unsigned                    accum:1;     /* some accum_* is not zero */
    unsigned                    kept:1;      /* what a comparison kept:
                                                heap_values() */
} ngx_http_malloc_heap_t;


/* what a comparison judged, for heap_keep() */
typedef struct {
    const uint32_t             *group;       /* each heap stack's group */
    const uint32_t             *base_group;  /* each base stack's, or NULL:
                                                by its frames alone */
    const double               *bytes;       /* each group's change to keep,
                                                unbiased; > 0: it stays */
    const double               *objs;
    size_t                      ngroups;
} ngx_http_malloc_keep_t;


void ngx_http_malloc_heap_init(ngx_http_malloc_heap_t *heap,
    ngx_http_malloc_arena_t *arena);

/*
 * Parses one heap_v2 dump and adds its stacks, merging stacks with equal
 * frames.  0, or -1 with a reason in err (malformed input, a sampling
 * period that differs from earlier dumps, out of memory); on -1 the heap
 * may hold part of the dump and should be dropped.
 */
int ngx_http_malloc_heap_add(ngx_http_malloc_heap_t *heap,
    const unsigned char *text, size_t len, char *err);

/*
 * 1 if "text", a dump as jemalloc wrote it, is whole: its header, a
 * newline at its end and, unless "top" is 0 (the maps could not be read),
 * a MAPPED_LIBRARIES section whose last line ends at address "top".  0
 * for a dump cut short.  Does not parse the stacks: heap_add() does.
 */
int ngx_http_malloc_heap_whole(const unsigned char *text, size_t len,
    uint64_t top);

/*
 * The end address of the last line of a maps text (/proc/PID/maps), the
 * highest mapping; 0 when that line is not whole or not a mapping.
 */
uint64_t ngx_http_malloc_heap_top(const unsigned char *maps, size_t len);

/*
 * heap -= base, by groups of stacks (the stacks of the same function
 * names): a comparison judged each group, and only the heap's stacks of
 * the groups to keep stay, sharing the group's change in proportion to
 * their own growth (each its own change when none of the group shrank;
 * by what they hold when none grew).  The base's stack of a heap stack
 * is the one with its frames, in the same group.  Their unbiased counts
 * (heap_values) add up to each group's change; their sampled counts
 * follow as near as whole samples allow.  A heap kept takes no more
 * dumps.  0, -1 when the sampling rates differ, -2 when out of memory.
 */
int ngx_http_malloc_heap_keep(ngx_http_malloc_heap_t *heap,
    const ngx_http_malloc_heap_t *base, const ngx_http_malloc_keep_t *keep);

/* a stack's live counts, unbiased: the sampled ones scaled, or kept */
void ngx_http_malloc_heap_values(const ngx_http_malloc_heap_t *heap,
    const ngx_http_malloc_stack_t *s, int64_t *objs, int64_t *bytes);

/* drops leading frames in [lo, hi) (the allocator's own) from each stack */
void ngx_http_malloc_heap_trim(ngx_http_malloc_heap_t *heap, uint64_t lo,
    uint64_t hi);

/*
 * A heap_v2 dump of the (merged) heap that jeprof reads; the comments, if
 * any, as "# " lines after the header, which jeprof passes over.
 */
void ngx_http_malloc_heap_write_v2(const ngx_http_malloc_heap_t *heap,
    const char *const *comments, size_t ncomments,
    ngx_http_malloc_mbuf_t *out);

/*
 * gperftools' legacy heap profile text with the heap_v2 sampling header
 * ("heap profile: I: B [A: AB] @ heap_v2/PERIOD") and MAPPED_LIBRARIES,
 * which both jeprof and go tool pprof read; the comments as "# " lines
 * after the header, which both pass over.
 */
void ngx_http_malloc_heap_write_legacy(const ngx_http_malloc_heap_t *heap,
    const char *const *comments, size_t ncomments,
    ngx_http_malloc_mbuf_t *out);

/*
 * The unbiased estimate for sampled counts, as jeprof and pprof compute it
 * for heap_v2: scale = 1 / (1 - exp(-(bytes / objs) / period)).
 */
void ngx_http_malloc_heap_unbias(uint64_t period, uint64_t objs,
    uint64_t bytes, int64_t *uobjs, int64_t *ubytes);


#endif /* _NGX_HTTP_MALLOC_HEAP_H_INCLUDED_ */
