
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * profile.proto (google/pprof proto/profile.proto), gzipped, from a
 * merged heap: pure C over zlib, memory from an arena.
 */


#ifndef _NGX_HTTP_MALLOC_PPROF_H_INCLUDED_
#define _NGX_HTTP_MALLOC_PPROF_H_INCLUDED_


#include <stddef.h>
#include <stdint.h>

#include "ngx_http_malloc_arena.h"
#include "ngx_http_malloc_heap.h"
#include "ngx_http_malloc_symbol.h"


#define NGX_HTTP_MALLOC_PPROF_ERR_LEN  256


/*
 * Resolves one return address for the encoder: the function name (never
 * NULL: a name, "<file>+0x<vaddr>" or "0x<addr>") and the mapping index in
 * *map, or -1.  The encoder calls it once per distinct address.
 */
typedef const char *(*ngx_http_malloc_resolve_pt)(void *data, uint64_t addr,
    int *map);


typedef struct {
    const ngx_http_malloc_heap_t  *heap;
    const ngx_http_malloc_map_t   *maps;
    size_t                         nmaps;
    ngx_http_malloc_resolve_pt     resolve;
    void                          *data;
    int64_t                        time_nanos;
    int64_t                        duration_nanos;  /* growth profiles */
    const char                   **comments;
    size_t                         ncomments;
    ngx_http_malloc_arena_t       *arena;
} ngx_http_malloc_pprof_t;


/*
 * Encodes the heap as a gzipped profile.proto into "out": sample types
 * [alloc_objects/count, alloc_space/bytes,] inuse_objects/count,
 * inuse_space/bytes (alloc_* only when heap->accum), values unbiased
 * (heap_values: what a comparison kept, as it kept it),
 * period_type space/bytes, period = heap->period, default_sample_type
 * inuse_space, and the comments.  0, or -1 with a reason in err.
 */
int ngx_http_malloc_pprof_encode(ngx_http_malloc_pprof_t *pp,
    ngx_http_malloc_mbuf_t *out, char *err);


/* data gzipped onto out; 0, or -1 when out of memory */
int ngx_http_malloc_pprof_gzip(ngx_http_malloc_arena_t *arena,
    const unsigned char *data, size_t len, ngx_http_malloc_mbuf_t *out);

#endif /* _NGX_HTTP_MALLOC_PPROF_H_INCLUDED_ */
