
/*
 * Profiles with their frames named, for the heap viewer: from a heap
 * (symbolized by a resolver) or from a gzipped profile.proto (a
 * snapshot), merged stack by stack, optionally against a base, and
 * written as JSON: the distinct names once, each stack as name indexes
 * from the root (the outermost caller) to the allocating function, and
 * its values.  Pure C; all memory comes from an arena.
 */


#ifndef _NGX_HTTP_MALLOC_FOLDED_H_INCLUDED_
#define _NGX_HTTP_MALLOC_FOLDED_H_INCLUDED_


#include <stddef.h>
#include <stdint.h>

#include "ngx_http_malloc_arena.h"
#include "ngx_http_malloc_heap.h"
#include "ngx_http_malloc_pprof.h"


#define NGX_HTTP_MALLOC_FOLDED_ERR_LEN  256

/* inuse_space, inuse_objects, alloc_space, alloc_objects */
#define NGX_HTTP_MALLOC_FOLDED_VALUES   4


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
    uint32_t                   *ids;        /* name indexes, root first */
    uint32_t                    n;
    int64_t                     v[NGX_HTTP_MALLOC_FOLDED_VALUES];
    int64_t                     base[NGX_HTTP_MALLOC_FOLDED_VALUES];
    ngx_http_malloc_side_t      side[2];    /* the samples of v, base */
} ngx_http_malloc_nstack_t;


typedef struct {
    ngx_http_malloc_arena_t    *arena;
    const char                **names;
    size_t                      nnames;
    size_t                      names_cap;
    ngx_http_malloc_ftable_t    byname;     /* hash of a name -> name */
    ngx_http_malloc_nstack_t   *stacks;
    size_t                      nstacks;
    size_t                      stacks_cap;
    ngx_http_malloc_ftable_t    bystack;    /* hash of ids -> stack */
    uint64_t                    period;     /* of the first profile added */
    const char                 *exact_of;   /* what the exact change is
                                               of, NULL: not known */
    int64_t                     exact_change;
    const char                 *caveat;     /* why the comparison may
                                               mislead, NULL: nothing */
    unsigned                    alloc:1;    /* alloc_* values are known */
    unsigned                    has_base:1;
} ngx_http_malloc_named_t;


void ngx_http_malloc_named_init(ngx_http_malloc_named_t *np,
    ngx_http_malloc_arena_t *arena);

/*
 * Adds the stacks of a heap (unbiased), or of a gzipped profile.proto as
 * the module writes them, to the profile, or to its base.  0, or -1 with
 * a reason in err.
 */
int ngx_http_malloc_named_heap(ngx_http_malloc_named_t *np,
    const ngx_http_malloc_heap_t *heap, ngx_http_malloc_resolve_pt resolve,
    void *data, int base, char *err);
int ngx_http_malloc_named_pprof(ngx_http_malloc_named_t *np,
    const unsigned char *gz, size_t len, int base, char *err);

/*
 * {"period", "seconds", "types", "names", "stacks", "values", "samples"[,
 * "base_values", "base_samples", "significant", "comparison"]}: types are
 * inuse_space, inuse_objects and, when known, alloc_space, alloc_objects;
 * "samples" the sampled objects of each stack; with a base, its rows as
 * "values" and "samples", each stack's change judged against the sampling
 * noise (1 grew, -1 shrank, 0 within it) and what the comparison rests
 * on (see ngx_http_malloc_noise.h).
 */
int ngx_http_malloc_named_write(const ngx_http_malloc_named_t *np,
    uint64_t seconds, ngx_http_malloc_mbuf_t *out, char *err);


#endif /* _NGX_HTTP_MALLOC_FOLDED_H_INCLUDED_ */
