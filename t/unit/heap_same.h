
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * Shared by the heap unit tests and the heap fuzz target: whether two
 * parsed heaps are the same (period, stacks in order, counts, maps).
 */


#ifndef _HEAP_SAME_H_INCLUDED_
#define _HEAP_SAME_H_INCLUDED_


#include <string.h>

#include "ngx_http_malloc_heap.h"


static int
same_heap(const ngx_http_malloc_heap_t *a, const ngx_http_malloc_heap_t *b)
{
    size_t                          i;
    const ngx_http_malloc_stack_t  *s, *t;

    if (a->period != b->period || a->nstacks != b->nstacks
        || a->accum != b->accum || a->maps_len != b->maps_len
        || (a->maps == NULL) != (b->maps == NULL)
        || (a->maps != NULL && memcmp(a->maps, b->maps, a->maps_len) != 0))
    {
        return 0;
    }

    for (i = 0; i < a->nstacks; i++) {
        s = &a->stacks[i];
        t = &b->stacks[i];

        if (s->nframes != t->nframes
            || memcmp(s->frames, t->frames, s->nframes * sizeof(uint64_t))
               != 0
            || s->objs != t->objs || s->bytes != t->bytes
            || s->accum_objs != t->accum_objs
            || s->accum_bytes != t->accum_bytes)
        {
            return 0;
        }
    }

    return 1;
}



#endif /* _HEAP_SAME_H_INCLUDED_ */
