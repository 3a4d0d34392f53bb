
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
#include "ngx_http_malloc_noise.h"


#define NGX_HTTP_MALLOC_HEAP_ERR_LEN  256


typedef struct {
    uint64_t                   *frames;      /* return addresses, innermost
                                                first, as jemalloc dumps */
    uint32_t                    nframes;
    uint64_t                    objs;        /* live: sampled counts, as in */
    uint64_t                    bytes;       /* the dump, not unbiased */
    uint64_t                    accum_objs;  /* since start or reset */
    uint64_t                    accum_bytes;
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
} ngx_http_malloc_heap_t;


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
 * heap -= base, stack by stack: only the stacks that grew beyond the
 * sampling noise stay; "nz" tells what the comparison rests on.  0, -1
 * when the sampling rates differ, -2 when out of memory.
 */
int ngx_http_malloc_heap_sub(ngx_http_malloc_heap_t *heap,
    const ngx_http_malloc_heap_t *base, ngx_http_malloc_noise_t *nz);

/* drops leading frames in [lo, hi) (the allocator's own) from each stack */
void ngx_http_malloc_heap_trim(ngx_http_malloc_heap_t *heap, uint64_t lo,
    uint64_t hi);

/* a heap_v2 dump of the (merged) heap that jeprof reads */
void ngx_http_malloc_heap_write_v2(const ngx_http_malloc_heap_t *heap,
    ngx_http_malloc_mbuf_t *out);

/*
 * gperftools' legacy heap profile text with the heap_v2 sampling header
 * ("heap profile: I: B [A: AB] @ heap_v2/PERIOD") and MAPPED_LIBRARIES,
 * which both jeprof and go tool pprof read.
 */
void ngx_http_malloc_heap_write_legacy(const ngx_http_malloc_heap_t *heap,
    ngx_http_malloc_mbuf_t *out);

/*
 * The unbiased estimate for sampled counts, as jeprof and pprof compute it
 * for heap_v2: scale = 1 / (1 - exp(-(bytes / objs) / period)).
 */
void ngx_http_malloc_heap_unbias(uint64_t period, uint64_t objs,
    uint64_t bytes, int64_t *uobjs, int64_t *ubytes);


#endif /* _NGX_HTTP_MALLOC_HEAP_H_INCLUDED_ */
