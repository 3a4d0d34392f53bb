
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * libFuzzer target for the heap_v2 parser and writers.
 *
 * Input: a dump.  A dump the parser accepts must come back unchanged from
 * its own heap_v2 text (same period, stacks in the same order, counts and
 * maps); adding it a second time must keep the stack count (or fail on an
 * overflow, which only merging can cause); a heap kept against itself
 * with nothing to keep must be empty, and against nothing with all to
 * keep must keep what holds bytes, as it holds them; the legacy writer
 * must produce its header; and a trimmed heap must still write a dump
 * that parses.  The check of a whole dump must refuse the dump less its
 * last byte, and ask no less with the maps known than without.
 */


#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ngx_http_malloc_heap.h"
#include "../t/unit/heap_same.h"


int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
static void check(int cond, const char *what);
static void reparse(ngx_http_malloc_arena_t *arena,
    const ngx_http_malloc_heap_t *heap, ngx_http_malloc_heap_t *again);
static void keep_all(ngx_http_malloc_arena_t *arena,
    const ngx_http_malloc_heap_t *heap);


static void
check(int cond, const char *what)
{
    if (!cond) {
        fprintf(stderr, "fuzz_heap: invariant broken: %s\n", what);
        abort();
    }
}


/* writes heap as heap_v2 and parses that into "again", which must work */

static void
reparse(ngx_http_malloc_arena_t *arena, const ngx_http_malloc_heap_t *heap,
    ngx_http_malloc_heap_t *again)
{
    int                     rc;
    char                    err[NGX_HTTP_MALLOC_HEAP_ERR_LEN];
    unsigned char          *copy;
    ngx_http_malloc_mbuf_t  out;

    memset(&out, 0, sizeof(out));
    ngx_http_malloc_heap_write_v2(heap, NULL, 0, &out);
    check(!out.failed, "heap_v2 written");

    /* exact size, so that ASan sees a read past the end */

    copy = malloc(out.len ? out.len : 1);
    if (copy == NULL) {
        abort();
    }

    memcpy(copy, out.data, out.len);

    ngx_http_malloc_heap_init(again, arena);
    rc = ngx_http_malloc_heap_add(again, copy, out.len, err);

    if (rc != 0) {
        fprintf(stderr, "fuzz_heap: own dump refused: %s\n", err);
    }

    check(rc == 0, "our own heap_v2 parses");

    free(copy);
    ngx_http_malloc_mbuf_free(&out);
}


/*
 * heap_keep on copies of the heap: against itself with no group kept,
 * nothing is left; against an empty base with every stack a group of its
 * own to keep at what it holds, every stack that holds bytes stays, its
 * kept bytes those it was given, and what is kept writes and parses
 */

static void
keep_all(ngx_http_malloc_arena_t *arena, const ngx_http_malloc_heap_t *heap)
{
    size_t                    i, n;
    double                   *bytes, *objs;
    int64_t                   o, b;
    uint32_t                 *group;
    ngx_http_malloc_heap_t    copy, again, empty;
    ngx_http_malloc_keep_t    keep;

    group = malloc((heap->nstacks + 1) * sizeof(uint32_t));
    bytes = malloc((heap->nstacks + 1) * sizeof(double));
    objs = malloc((heap->nstacks + 1) * sizeof(double));

    if (group == NULL || bytes == NULL || objs == NULL) {
        abort();
    }

    keep.group = group;
    keep.base_group = group;
    keep.bytes = bytes;
    keep.objs = objs;
    keep.ngroups = heap->nstacks;

    for (i = 0; i < heap->nstacks; i++) {
        group[i] = (uint32_t) i;
        bytes[i] = 0;
        objs[i] = 0;
    }

    reparse(arena, heap, &copy);
    check(ngx_http_malloc_heap_keep(&copy, heap, &keep) == 0, "keep works");
    check(copy.nstacks == 0, "a heap minus itself, nothing kept, is empty");

    for (i = 0; i < heap->nstacks; i++) {
        ngx_http_malloc_heap_unbias(heap->period, heap->stacks[i].objs,
                                    heap->stacks[i].bytes, &o, &b);
        bytes[i] = (double) b;
        objs[i] = (double) o;
    }

    reparse(arena, heap, &copy);
    ngx_http_malloc_heap_init(&empty, arena);

    check(ngx_http_malloc_heap_keep(&copy, &empty, &keep) == 0,
          "keep against nothing works");

    /* each group is one stack, given what it holds: it keeps that */

    for (i = 0, n = 0; i < heap->nstacks; i++) {
        if (!(bytes[i] > 0)) {
            continue;
        }

        check(n < copy.nstacks
              && (double) copy.stacks[n].kept_bytes == bytes[i]
              && copy.stacks[n].kept_objs > 0,
              "a stack kept against nothing keeps what it holds");
        n++;
    }

    check(n == copy.nstacks, "and only the stacks that hold bytes stay");

    reparse(arena, &copy, &again);
    check(again.nstacks == copy.nstacks, "what is kept parses again");

    free(group);
    free(bytes);
    free(objs);
}


int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int                       rc;
    char                      err[NGX_HTTP_MALLOC_HEAP_ERR_LEN];
    size_t                    n;
    uint64_t                  lo, top;
    unsigned char            *copy;
    ngx_http_malloc_heap_t    heap, again, twice;
    ngx_http_malloc_mbuf_t    out;
    ngx_http_malloc_arena_t  *arena;

    arena = ngx_http_malloc_arena_create();
    copy = malloc(size ? size : 1);

    if (arena == NULL || copy == NULL) {
        abort();
    }

    memcpy(copy, data, size);

    top = ngx_http_malloc_heap_top(copy, size);

    if (ngx_http_malloc_heap_whole(copy, size, top)) {
        check(ngx_http_malloc_heap_whole(copy, size, 0),
              "whole with the maps is whole without");
        check(size > 0 && copy[size - 1] == '\n', "whole ends in a newline");
        check(top == 0 || !ngx_http_malloc_heap_whole(copy, size - 1, top),
              "a whole dump less a byte is cut");
    }

    ngx_http_malloc_heap_init(&heap, arena);
    err[0] = '\0';

    rc = ngx_http_malloc_heap_add(&heap, copy, size, err);

    if (rc != 0) {
        check(err[0] != '\0', "a refusal gives a reason");
        goto done;
    }

    check(heap.period != 0, "an accepted dump has a period");

    reparse(arena, &heap, &again);
    check(same_heap(&heap, &again), "heap_v2 round trip gives the same heap");

    /* the same dump twice: the same stacks, or an overflow */

    ngx_http_malloc_heap_init(&twice, arena);
    check(ngx_http_malloc_heap_add(&twice, copy, size, err) == 0,
          "a dump parses twice alike");

    n = twice.nstacks;

    if (ngx_http_malloc_heap_add(&twice, copy, size, err) == 0) {
        check(twice.nstacks == n, "merging a dump with itself adds no stack");
    }

    memset(&out, 0, sizeof(out));
    ngx_http_malloc_heap_write_legacy(&heap, NULL, 0, &out);
    check(!out.failed && out.len >= 14
          && memcmp(out.data, "heap profile: ", 14) == 0,
          "legacy text written");
    ngx_http_malloc_mbuf_free(&out);

    keep_all(arena, &heap);

    /* trim around the first frame seen, then write and parse again */

    if (heap.nstacks > 0) {
        lo = heap.stacks[0].frames[0];
        ngx_http_malloc_heap_trim(&heap, lo, lo + 0x1000);

        for (n = 0; n < heap.nstacks; n++) {
            check(heap.stacks[n].nframes > 0, "trim keeps a frame");
        }

        reparse(arena, &heap, &again);
        check(same_heap(&heap, &again), "a trimmed heap round-trips");
    }

done:

    free(copy);
    ngx_http_malloc_arena_destroy(arena);

    return 0;
}
