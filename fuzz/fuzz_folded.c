
/*
 * libFuzzer target for the heap viewer's JSON (ngx_http_malloc_folded.c).
 *
 * Input: a dump.  When the parser accepts it, the heap is encoded with a
 * resolver that gives few distinct names, some of them with quotes,
 * backslashes, control and high bytes, and some NULL.  The output must be
 * JSON that jansson reads back, with one stack and one value row per
 * stack of the heap, and only name indexes in range.
 */


#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "ngx_http_malloc_folded.h"


int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
static void check(int cond, const char *what);
static const char *resolve(void *data, uint64_t addr, int *map);


static void
check(int cond, const char *what)
{
    if (!cond) {
        fprintf(stderr, "fuzz_folded: invariant broken: %s\n", what);
        abort();
    }
}


static const char *
resolve(void *data, uint64_t addr, int *map)
{
    static char  buf[32];

    (void) data;

    *map = -1;

    switch (addr % 4) {

    case 0:
        return NULL;

    case 1:
        return "q\"b\\s\x01\x7f\xfe";

    default:
        snprintf(buf, sizeof(buf), "f%u", (unsigned) (addr % 7));
        return buf;
    }
}


int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t                     i, k, nnames;
    json_t                    *j, *names, *stacks, *values, *s;
    json_error_t               jerr;
    unsigned char             *copy;
    ngx_http_malloc_heap_t     heap;
    ngx_http_malloc_mbuf_t     out;
    ngx_http_malloc_arena_t   *arena;
    ngx_http_malloc_folded_t   f;
    char                       err[NGX_HTTP_MALLOC_HEAP_ERR_LEN];

    arena = ngx_http_malloc_arena_create();
    copy = malloc(size ? size : 1);

    if (arena == NULL || copy == NULL) {
        abort();
    }

    memcpy(copy, data, size);

    ngx_http_malloc_heap_init(&heap, arena);

    if (ngx_http_malloc_heap_add(&heap, copy, size, err) != 0) {
        goto done;
    }

    f.heap = &heap;
    f.resolve = resolve;
    f.data = NULL;
    f.seconds = size;
    f.arena = arena;

    memset(&out, 0, sizeof(out));

    check(ngx_http_malloc_folded_encode(&f, &out, err) == 0,
          "the encoder takes any parsed heap");

    j = json_loadb((char *) out.data, out.len, 0, &jerr);
    check(j != NULL, "the output is JSON");

    names = json_object_get(j, "names");
    stacks = json_object_get(j, "stacks");
    values = json_object_get(j, "values");
    nnames = json_array_size(names);

    check(json_array_size(stacks) == heap.nstacks, "a stack per stack");
    check(json_array_size(values) == heap.nstacks, "a value row per stack");

    for (i = 0; i < heap.nstacks; i++) {
        s = json_array_get(stacks, i);
        check(json_array_size(s) == heap.stacks[i].nframes,
              "a name per frame");

        for (k = 0; k < json_array_size(s); k++) {
            check((size_t) json_integer_value(json_array_get(s, k)) < nnames,
                  "name indexes in range");
        }
    }

    json_decref(j);
    ngx_http_malloc_mbuf_free(&out);

done:

    ngx_http_malloc_arena_destroy(arena);
    free(copy);

    return 0;
}
