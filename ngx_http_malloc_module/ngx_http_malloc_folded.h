
/*
 * A heap as JSON for the heap viewer: the distinct function names once,
 * each stack as name indexes from the root (the outermost caller) to the
 * allocating function, and its unbiased values.  Pure C.
 */


#ifndef _NGX_HTTP_MALLOC_FOLDED_H_INCLUDED_
#define _NGX_HTTP_MALLOC_FOLDED_H_INCLUDED_


#include <stddef.h>
#include <stdint.h>

#include "ngx_http_malloc_arena.h"
#include "ngx_http_malloc_heap.h"
#include "ngx_http_malloc_pprof.h"


#define NGX_HTTP_MALLOC_FOLDED_ERR_LEN  128


typedef struct {
    const ngx_http_malloc_heap_t  *heap;
    ngx_http_malloc_resolve_pt     resolve;   /* NULL: "0x<addr>" names */
    void                          *data;
    uint64_t                       seconds;   /* of a growth window */
    ngx_http_malloc_arena_t       *arena;
} ngx_http_malloc_folded_t;


/*
 * Writes {"period", "seconds", "types", "names", "stacks", "values"}
 * into "out": types are inuse_space, inuse_objects and, when the heap
 * accumulates, alloc_space, alloc_objects; values are unbiased as pprof
 * shows them.  0, or -1 with a reason in err.
 */
int ngx_http_malloc_folded_encode(const ngx_http_malloc_folded_t *f,
    ngx_http_malloc_mbuf_t *out, char *err);


#endif /* _NGX_HTTP_MALLOC_FOLDED_H_INCLUDED_ */
