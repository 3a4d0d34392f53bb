
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * Unit tests for the heap_v2 parser, merger and writers
 * (ngx_http_malloc_heap.c).  Every dump handed to the parser is copied
 * into a buffer of its exact size, so that ASan reports any read past
 * the end.
 */


#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "ngx_http_malloc_heap.h"
#include "ngx_http_malloc_noise.h"
#include "heap_same.h"


#define STR(s)  (s), sizeof(s) - 1

#define MAPS                                                                  \
    "00400000-00452000 r-xp 00000000 08:02 173521      /usr/sbin/nginx\n"

/* the highest mapping of a process on x86_64 */
#define MAPS_TOP                                                              \
    "ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0   [vsyscall]\n"

/* two threads, one of them named, and two stacks */
#define DUMP_A  "heap_v2/524288\n" DUMP_A_STACKS

#define DUMP_A_STACKS                                                         \
    "  t*: 6: 3072 [10: 5120]\n"                                              \
    "  t0: 4: 2048 [6: 3072] nginx: worker\n"                                 \
    "  t1: 2: 1024 [4: 2048]\n"                                               \
    "@ 0x10 0x20 0x30\n"                                                      \
    "  t*: 4: 2048 [6: 3072]\n"                                               \
    "  t0: 4: 2048 [6: 3072]\n"                                               \
    "@ 0x10 0x40\n"                                                           \
    "  t*: 2: 1024 [4: 2048]\n"                                               \
    "  t1: 2: 1024 [4: 2048]\n"                                               \
    "\n"                                                                      \
    "MAPPED_LIBRARIES:\n"                                                     \
    MAPS

/* shares a stack with DUMP_A, has one of its own and no maps section */
#define DUMP_B  "heap_v2/524288\n" DUMP_B_STACKS

#define DUMP_B_STACKS                                                         \
    "  t*: 3: 1536 [3: 1536]\n"                                               \
    "@ 0x10 0x20 0x30\n"                                                      \
    "  t*: 1: 512 [1: 512]\n"                                                 \
    "@ 0x50\n"                                                                \
    "  t*: 2: 1024 [2: 1024]\n"

#define HEAD  "heap_v2/524288\n  t*: 0: 0 [0: 0]\n"

/* every allocation sampled: nothing is noise */
#define EXACT  "heap_v2/1\n  t*: 0: 0 [0: 0]\n"


typedef struct {
    const char  *desc;
    const char  *text;
    size_t       len;
    const char  *reason;    /* a part of the error message */
} bad_dump_t;


static int add(ngx_http_malloc_heap_t *heap, const char *text, size_t len,
    char *err);
static void expect_error(const char *desc, const char *err,
    const char *reason);
static ngx_http_malloc_stack_t *find(ngx_http_malloc_heap_t *heap,
    const uint64_t *frames, uint32_t nframes);
static char *text_of(ngx_http_malloc_mbuf_t *b);
static void test_parse(void);
static void test_no_maps(void);
static int whole(const char *text, size_t len, uint64_t top);
static uint64_t top_of(const char *text, size_t len);
static void test_whole(void);
static void test_merge(void);
static void test_period(void);
static void test_malformed(void);
static void test_limits(void);
static void test_normalize(void);
static void test_keep(void);
static void stack_of(ngx_http_malloc_heap_t *heap, unsigned frame,
    uint64_t n, uint64_t size);
static void test_keep_sampled(void);
static void test_noise(void);
static void test_limit(void);
static void test_words(void);
static void test_comments(void);
static void test_trim(void);
static void test_round_trip(void);
static void test_legacy(void);
static void test_empty(void);
static void test_unbias(void);


static ngx_http_malloc_arena_t  *arena;


static int
add(ngx_http_malloc_heap_t *heap, const char *text, size_t len, char *err)
{
    int             rc;
    unsigned char  *copy;

    copy = malloc(len ? len : 1);
    if (copy == NULL) {
        abort();
    }

    memcpy(copy, text, len);
    err[0] = '\0';

    rc = ngx_http_malloc_heap_add(heap, copy, len, err);

    free(copy);

    return rc;
}


static void
expect_error(const char *desc, const char *err, const char *reason)
{
    if (!ok(strstr(err, reason) != NULL, "%s: reason", desc)) {
        diag("     got: %s", err);
        diag("expected: ...%s...", reason);
    }
}


static ngx_http_malloc_stack_t *
find(ngx_http_malloc_heap_t *heap, const uint64_t *frames, uint32_t nframes)
{
    size_t                    i;
    ngx_http_malloc_stack_t  *s;

    for (i = 0; i < heap->nstacks; i++) {
        s = &heap->stacks[i];

        if (s->nframes == nframes
            && memcmp(s->frames, frames, nframes * sizeof(uint64_t)) == 0)
        {
            return s;
        }
    }

    return NULL;
}


/* the mbuf's bytes as a string owned by the arena */

static char *
text_of(ngx_http_malloc_mbuf_t *b)
{
    return ngx_http_malloc_arena_strndup(arena, (const char *) b->data,
                                         b->len);
}


static void
test_parse(void)
{
    char                      err[NGX_HTTP_MALLOC_HEAP_ERR_LEN];
    ngx_http_malloc_heap_t    heap;
    ngx_http_malloc_stack_t  *s;
    static const uint64_t     f1[] = { 0x10, 0x20, 0x30 };
    static const uint64_t     f2[] = { 0x10, 0x40 };

    ngx_http_malloc_heap_init(&heap, arena);

    if (!is_int(add(&heap, STR(DUMP_A), err), 0, "parse: a small dump")) {
        diag("%s", err);
    }

    is_int((long) heap.period, 524288, "parse: period");
    is_int((long) heap.nstacks, 2, "parse: two stacks");
    ok(heap.accum, "parse: accumulated counts seen");

    s = find(&heap, f1, 3);
    ok(s != NULL && s->objs == 4 && s->bytes == 2048 && s->accum_objs == 6
       && s->accum_bytes == 3072, "parse: first stack, t* counts only");

    s = find(&heap, f2, 2);
    ok(s != NULL && s->objs == 2 && s->bytes == 1024 && s->accum_objs == 4
       && s->accum_bytes == 2048, "parse: second stack");

    is_str(heap.maps, MAPS, "parse: maps are the rest of the dump");
    is_int((long) heap.maps_len, (long) strlen(MAPS), "parse: maps length");
}


/* jemalloc leaves the section out when it cannot read the maps */

static void
test_no_maps(void)
{
    char                    err[NGX_HTTP_MALLOC_HEAP_ERR_LEN];
    ngx_http_malloc_heap_t  heap;
    ngx_http_malloc_mbuf_t  out;

    ngx_http_malloc_heap_init(&heap, arena);

    is_int(add(&heap, STR(DUMP_B), err), 0, "no maps: accepted");
    ok(heap.maps == NULL, "no maps: none kept");
    ok(heap.accum, "no maps: accumulated counts seen");

    memset(&out, 0, sizeof(out));
    ngx_http_malloc_heap_write_v2(&heap, NULL, 0, &out);

    ok(strstr(text_of(&out), "MAPPED_LIBRARIES") == NULL,
       "no maps: none written");

    ngx_http_malloc_mbuf_free(&out);

    ngx_http_malloc_heap_init(&heap, arena);

    is_int(add(&heap, STR(HEAD), err), 0, "no stacks, no maps: accepted");
    is_int((long) heap.nstacks, 0, "no stacks, no maps: no stacks");
    ok(!heap.accum, "no stacks: nothing accumulated");

    ngx_http_malloc_heap_init(&heap, arena);

    is_int(add(&heap, STR(HEAD "\nMAPPED_LIBRARIES:\n"), err), 0,
           "empty maps section: accepted");
    ok(heap.maps != NULL && heap.maps_len == 0,
       "empty maps section: kept empty");
}


/* whole(), on a copy of the exact size, so that ASan sees a read past it */

static int
whole(const char *text, size_t len, uint64_t top)
{
    int             rc;
    unsigned char  *copy;

    copy = malloc(len ? len : 1);
    if (copy == NULL) {
        abort();
    }

    memcpy(copy, text, len);

    rc = ngx_http_malloc_heap_whole(copy, len, top);

    free(copy);

    return rc;
}


static uint64_t
top_of(const char *text, size_t len)
{
    uint64_t        top;
    unsigned char  *copy;

    copy = malloc(len ? len : 1);
    if (copy == NULL) {
        abort();
    }

    memcpy(copy, text, len);

    top = ngx_http_malloc_heap_top(copy, len);

    free(copy);

    return top;
}


/* a dump cut short by a short last write is told from a whole one */

static void
test_whole(void)
{
    size_t       k, len, passed;
    uint64_t     top;
    const char  *dump;

    dump = HEAD "@ 0x10\n  t*: 1: 512 [1: 512]\n\nMAPPED_LIBRARIES:\n"
           MAPS MAPS_TOP;
    len = strlen(dump);
    top = 0xffffffffff601000ULL;

    ok(whole(dump, len, top), "whole: a whole dump");
    ok(!whole(dump, len, 0x601000), "whole: the maps end elsewhere");
    ok(whole(dump, len, 0), "whole: maps unknown, a newline at the end");

    /* every cut, at a newline or not, with the maps readable */

    passed = 0;

    for (k = 0; k < len; k++) {
        if (whole(dump, k, top)) {
            diag("a cut at %zu of %zu passed", k, len);
            passed++;
        }
    }

    is_int((long) passed, 0, "whole: every cut of it refused");

    ok(whole(STR(DUMP_A), 0x00452000), "whole: one mapping");
    ok(!whole(STR(DUMP_B), top), "whole: no maps where the maps are read");
    ok(whole(STR(DUMP_B), 0), "whole: no maps, none read");
    ok(!whole(DUMP_B, sizeof(DUMP_B) - 3, 0),
       "whole: no maps, cut in a line");
    ok(!whole(STR(HEAD "\nMAPPED_LIBRARIES:\n"), top),
       "whole: an empty maps section");
    ok(!whole(STR(HEAD "MAPPED_LIBRARIES:\n" MAPS_TOP), top),
       "whole: the section without its blank line");
    ok(!whole(STR("heap_v1/524288\n  t*: 0: 0 [0: 0]\n"), 0),
       "whole: not heap_v2");
    ok(!whole("", 0, 0) && !whole(STR("heap_v2/"), 0),
       "whole: empty, or a header cut");

    is_int((long) top_of(STR(MAPS)), 0x00452000, "top: one line");
    ok(top_of(STR(MAPS MAPS_TOP)) == top, "top: the last line's end");
    ok(top_of(STR("7FFD0000-7FFE0000 rw-p 0 00:00 0 [stack]\n"))
       == 0x7ffe0000, "top: upper case hex");
    ok(top_of(STR("0-ffffffffffffffff r\n")) == UINT64_MAX,
       "top: 16 digits");
    is_int((long) top_of(STR("0-10000000000000000 r\n")), 0,
           "top: 17 digits refused");
    is_int((long) top_of(STR("1000-2000 r")), 0, "top: no newline");
    is_int((long) top_of(STR("1000-2000\n")), 0, "top: nothing after it");
    is_int((long) top_of(STR("-2000 r\n")), 0, "top: no start");
    is_int((long) top_of(STR("1000- r\n")), 0, "top: no end");
    is_int((long) top_of(STR("  t*: 1: 512 [1: 512]\n")), 0,
           "top: not a mapping");
    is_int((long) top_of("", 0), 0, "top: empty");
}


static void
test_merge(void)
{
    char                      err[NGX_HTTP_MALLOC_HEAP_ERR_LEN];
    ngx_http_malloc_heap_t    heap;
    ngx_http_malloc_stack_t  *s;
    static const uint64_t     f1[] = { 0x10, 0x20, 0x30 };
    static const uint64_t     f2[] = { 0x10, 0x40 };
    static const uint64_t     f3[] = { 0x50 };

    ngx_http_malloc_heap_init(&heap, arena);

    is_int(add(&heap, STR(DUMP_A), err), 0, "merge: first dump");
    is_int(add(&heap, STR(DUMP_B), err), 0, "merge: second dump");
    is_int((long) heap.nstacks, 3, "merge: three distinct stacks");

    s = find(&heap, f1, 3);
    ok(s != NULL && s->objs == 5 && s->bytes == 2560 && s->accum_objs == 7
       && s->accum_bytes == 3584, "merge: the shared stack adds up");

    s = find(&heap, f2, 2);
    ok(s != NULL && s->objs == 2 && s->bytes == 1024,
       "merge: a stack of the first dump only stays");

    s = find(&heap, f3, 1);
    ok(s != NULL && s->objs == 2 && s->bytes == 1024,
       "merge: a stack of the second dump only stays");

    is_str(heap.maps, MAPS, "merge: the maps of the first dump");

    /* the same dump again doubles everything and adds no stack */

    is_int(add(&heap, STR(DUMP_B), err), 0, "merge: second dump again");
    is_int((long) heap.nstacks, 3, "merge: still three stacks");

    s = find(&heap, f3, 1);
    ok(s != NULL && s->objs == 4 && s->bytes == 2048,
       "merge: the same stack twice doubles");
}


static void
test_period(void)
{
    char                    err[NGX_HTTP_MALLOC_HEAP_ERR_LEN];
    ngx_http_malloc_heap_t  heap;

    ngx_http_malloc_heap_init(&heap, arena);

    is_int(add(&heap, STR(DUMP_A), err), 0, "period: first dump");
    is_int(add(&heap, STR("heap_v2/1\n  t*: 0: 0 [0: 0]\n"), err), -1,
           "period: a different period is refused");
    expect_error("period", err, "period 1 differs from 524288");

    is_int(add(&heap, STR(HEAD), err), 0, "period: the same period again");
}


static void
test_malformed(void)
{
    char                    err[NGX_HTTP_MALLOC_HEAP_ERR_LEN], desc[128];
    size_t                  i;
    ngx_http_malloc_heap_t  heap;

    static const bad_dump_t  bad[] = {

        { "empty", STR(""), "empty dump" },
        { "not heap_v2", STR("heap_v1/524288\n  t*: 0: 0 [0: 0]\n"),
          "line 1: not a heap_v2 dump" },
        { "gperftools text",
          STR("heap profile: 1: 2 [3: 4] @ heap_v2/524288\n"),
          "line 1: not a heap_v2 dump" },
        { "period 0", STR("heap_v2/0\n  t*: 0: 0 [0: 0]\n"),
          "line 1: bad sampling period" },
        { "no period", STR("heap_v2/\n  t*: 0: 0 [0: 0]\n"),
          "line 1: bad sampling period" },
        { "period with junk", STR("heap_v2/524288x\n  t*: 0: 0 [0: 0]\n"),
          "line 1: bad sampling period" },
        { "period beyond uint64",
          STR("heap_v2/18446744073709551616\n  t*: 0: 0 [0: 0]\n"),
          "line 1: bad sampling period" },
        { "header only, cut", STR("heap_v2/524288"),
          "line 1: no newline" },
        { "no totals line", STR("heap_v2/524288\n"),
          "line 2: the dump ends before its \"  t*: \" totals" },
        { "totals line wrong",
          STR("heap_v2/524288\n  t0: 0: 0 [0: 0]\n"),
          "line 2: expected the \"  t*: \" totals" },
        { "totals with a name",
          STR("heap_v2/524288\n  t*: 0: 0 [0: 0] x\n"),
          "line 2: expected the \"  t*: \" totals" },
        { "stack without its t* line", STR(HEAD "@ 0x1\n"),
          "line 4: the dump ends before the \"  t*: \" line of its last" },
        { "stack cut in a frame", STR(HEAD "@ 0x1 0x7f"),
          "line 3: no newline" },
        { "counts cut", STR(HEAD "@ 0x1\n  t*: 1: 8 [0:"),
          "line 4: no newline" },
        { "t* line cut short", STR(HEAD "@ 0x1\n  t*: 1: 8 [0: 0\n"),
          "line 4: expected the \"  t*: \" line of the stack" },
        { "thread line instead of t*",
          STR(HEAD "@ 0x1\n  t0: 1: 8 [0: 0]\n"),
          "line 4: expected the \"  t*: \" line of the stack" },
        { "a second t* line",
          STR(HEAD "@ 0x1\n  t*: 1: 8 [0: 0]\n  t*: 1: 8 [0: 0]\n"),
          "line 5: expected a \"  t<thread>: \" line" },
        { "a thread name on a stack's thread line",
          STR(HEAD "@ 0x1\n  t*: 1: 8 [0: 0]\n  t0: 1: 8 [0: 0] x\n"),
          "line 5: expected a \"  t<thread>: \" line" },
        { "bad hex", STR(HEAD "@ 0x1 0xzz\n  t*: 1: 8 [0: 0]\n"),
          "line 3: a bad hex digit" },
        { "0x alone", STR(HEAD "@ 0x\n  t*: 1: 8 [0: 0]\n"),
          "line 3: a frame that is not \"0x<hex>\"" },
        { "no 0x", STR(HEAD "@ 1234\n  t*: 1: 8 [0: 0]\n"),
          "line 3: a frame that is not \"0x<hex>\"" },
        { "frame beyond 64 bits",
          STR(HEAD "@ 0x10000000000000000\n  t*: 1: 8 [0: 0]\n"),
          "line 3: a frame of more than 64 bits" },
        { "two spaces", STR(HEAD "@ 0x1  0x2\n  t*: 1: 8 [0: 0]\n"),
          "line 3: frames must be separated by one space" },
        { "trailing space", STR(HEAD "@ 0x1 \n  t*: 1: 8 [0: 0]\n"),
          "line 3: frames must be separated by one space" },
        { "no frames", STR(HEAD "@\n  t*: 1: 8 [0: 0]\n"),
          "line 3: a stack without frames" },
        { "@ glued to a frame", STR(HEAD "@0x1\n  t*: 1: 8 [0: 0]\n"),
          "line 3: frames must be separated" },
        { "count beyond int64",
          STR(HEAD "@ 0x1\n  t*: 1: 9223372036854775808 [0: 0]\n"),
          "line 4: expected the \"  t*: \" line of the stack" },
        { "huge count",
          STR(HEAD "@ 0x1\n  t*: 1: 99999999999999999999999 [0: 0]\n"),
          "line 4: expected the \"  t*: \" line of the stack" },
        { "negative count", STR(HEAD "@ 0x1\n  t*: -1: 8 [0: 0]\n"),
          "line 4: expected the \"  t*: \" line of the stack" },
        { "garbage between stacks",
          STR(HEAD "@ 0x1\n  t*: 1: 8 [0: 0]\nxyz\n"),
          "line 5: expected a \"  t<thread>: \" line" },
        { "CRLF", STR("heap_v2/524288\r\n  t*: 0: 0 [0: 0]\r\n"),
          "line 1: bad sampling period" },
        { "NUL in a line", STR(HEAD "@ 0x1\0\n  t*: 1: 8 [0: 0]\n"),
          "line 3: a NUL byte" },
        { "blank line, then the end", STR(HEAD "\n"),
          "line 4: the dump ends before \"MAPPED_LIBRARIES:\"" },
        { "blank line, then no maps", STR(HEAD "\nfoo\n"),
          "line 4: expected \"MAPPED_LIBRARIES:\"" },
        { "two blank lines", STR(HEAD "\n\nMAPPED_LIBRARIES:\n"),
          "line 4: expected \"MAPPED_LIBRARIES:\"" },
        { "maps without the blank line",
          STR(HEAD "MAPPED_LIBRARIES:\n" MAPS),
          "line 3: expected a \"  t<thread>: \" line" },
        { "NUL in the maps", STR(HEAD "\nMAPPED_LIBRARIES:\nab\0cd\n"),
          "a NUL byte in MAPPED_LIBRARIES" },
    };

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ngx_http_malloc_heap_init(&heap, arena);

        is_int(add(&heap, bad[i].text, bad[i].len, err), -1,
               "malformed: %s: refused", bad[i].desc);

        snprintf(desc, sizeof(desc), "malformed: %s", bad[i].desc);
        expect_error(desc, err, bad[i].reason);
    }
}


static void
test_limits(void)
{
    char                    err[NGX_HTTP_MALLOC_HEAP_ERR_LEN], *text, *p;
    size_t                  i;
    ngx_http_malloc_heap_t  heap;

    /* lg_sample 63: jemalloc writes 2^63, read as pprof's INT64_MAX */

    ngx_http_malloc_heap_init(&heap, arena);

    is_int(add(&heap, STR("heap_v2/9223372036854775808\n  t*: 0: 0 [0: 0]\n"
                          "\nMAPPED_LIBRARIES:\n"), err),
           0, "limits: the period of lg_sample 63");
    is_int(heap.period == (uint64_t) INT64_MAX, 1,
           "limits: 2^63 read as INT64_MAX");

    /* INT64_MAX is the largest count, and merging must not pass it */

    ngx_http_malloc_heap_init(&heap, arena);

    is_int(add(&heap, STR(HEAD "@ 0x1\n  t*: 1: 9223372036854775807 "
                          "[0: 0]\n"), err),
           0, "limits: a count of INT64_MAX");

    is_int(add(&heap, STR(HEAD "@ 0x2\n  t*: 1: 1 [0: 0]\n"), err),
           0, "limits: another stack beside it");

    is_int(add(&heap, STR(HEAD "@ 0x1\n  t*: 1: 1 [0: 0]\n"), err),
           -1, "limits: merging past INT64_MAX is refused");
    expect_error("limits: overflow", err,
                 "line 4: the counts of a stack overflow");

    /* a null frame, as "%#x" prints it, and 16 hex digits */

    ngx_http_malloc_heap_init(&heap, arena);

    is_int(add(&heap, STR(HEAD "@ 0xFFFFffffFFFFffff 0\n"
                          "  t*: 1: 8 [0: 0]\n"), err),
           0, "limits: 16 hex digits and a null frame");
    ok(heap.nstacks == 1 && heap.stacks[0].nframes == 2
       && heap.stacks[0].frames[0] == UINT64_MAX
       && heap.stacks[0].frames[1] == 0, "limits: those frames");

    /* 1024 frames pass, 1025 do not */

    text = malloc(64 + 1025 * 19 + 64);
    if (text == NULL) {
        abort();
    }

    p = text + sprintf(text, HEAD "@");

    for (i = 0; i < 1024; i++) {
        p += sprintf(p, " 0x%" PRIx64, (uint64_t) 0x7f0000000000 + i);
    }

    strcpy(p, "\n  t*: 1: 8 [0: 0]\n");

    ngx_http_malloc_heap_init(&heap, arena);
    is_int(add(&heap, text, strlen(text), err), 0, "limits: 1024 frames");

    p += sprintf(p, " 0x1");
    strcpy(p, "\n  t*: 1: 8 [0: 0]\n");

    ngx_http_malloc_heap_init(&heap, arena);
    is_int(add(&heap, text, strlen(text), err), -1,
           "limits: 1025 frames refused");
    expect_error("limits: too many frames", err,
                 "line 3: a stack of more than 1024 frames");

    free(text);
}


/* jemalloc 5.3 can round a sampled count down to 0 while bytes remain */

static void
test_normalize(void)
{
    char                    err[NGX_HTTP_MALLOC_HEAP_ERR_LEN];
    ngx_http_malloc_heap_t  heap;

    ngx_http_malloc_heap_init(&heap, arena);

    is_int(add(&heap, STR(HEAD "@ 0x1\n  t*: 0: 100 [0: 300]\n"), err), 0,
           "normalize: bytes without objects accepted");
    ok(heap.nstacks == 1 && heap.stacks[0].objs == 1
       && heap.stacks[0].bytes == 100 && heap.stacks[0].accum_objs == 1
       && heap.stacks[0].accum_bytes == 300,
       "normalize: such bytes are one object");
}


/*
 * Every allocation sampled (period 1), so that unbiased and sampled
 * counts are the same: group 0 is one function reached from two call
 * sites (0x10, 0x20), its base partly at an address of its own (0x50, a
 * module mapped elsewhere); group 1 did not change; group 2 (0x40) is
 * new, and the base's stack at its address has other names.
 */

static void
test_keep(void)
{
    char                      err[NGX_HTTP_MALLOC_HEAP_ERR_LEN];
    double                    bytes[4], objs[4];
    uint32_t                  group[4], base_group[4];
    ngx_http_malloc_heap_t    heap, base, other;
    ngx_http_malloc_keep_t    keep;
    ngx_http_malloc_stack_t  *s, *t;
    int64_t                   o, b;
    static const uint64_t     f10[] = { 0x10 };
    static const uint64_t     f20[] = { 0x20 };
    static const uint64_t     f30[] = { 0x30 };
    static const uint64_t     f40[] = { 0x40 };

    ngx_http_malloc_heap_init(&heap, arena);
    ngx_http_malloc_heap_init(&base, arena);

    add(&heap, STR(EXACT "@ 0x10\n  t*: 4: 4096 [0: 0]\n"
                   "@ 0x20\n  t*: 2: 2048 [0: 0]\n"
                   "@ 0x30\n  t*: 3: 300 [0: 0]\n"
                   "@ 0x40\n  t*: 1: 100 [5: 500]\n"), err);
    add(&base, STR(EXACT "@ 0x10\n  t*: 2: 2048 [0: 0]\n"
                   "@ 0x50\n  t*: 1: 1024 [0: 0]\n"
                   "@ 0x30\n  t*: 3: 300 [0: 0]\n"
                   "@ 0x40\n  t*: 1: 50 [2: 200]\n"), err);

    group[0] = 0;
    group[1] = 0;
    group[2] = 1;
    group[3] = 2;
    base_group[0] = 0;
    base_group[1] = 0;
    base_group[2] = 1;
    base_group[3] = 3;

    /* group 0: 6144 - 3072 bytes, 6 - 3 objects; group 2: all of it */

    bytes[0] = 3072;
    objs[0] = 3;
    bytes[1] = 0;
    objs[1] = 0;
    bytes[2] = 100;
    objs[2] = 1;
    bytes[3] = 0;
    objs[3] = 0;

    keep.group = group;
    keep.base_group = base_group;
    keep.bytes = bytes;
    keep.objs = objs;
    keep.ngroups = 4;

    is_int(ngx_http_malloc_heap_keep(&heap, &base, &keep), 0, "keep: done");
    is_int((long) heap.nstacks, 3, "keep: the stacks of the groups kept");
    ok(heap.kept, "keep: the heap says what it holds");

    s = find(&heap, f10, 1);
    t = find(&heap, f20, 1);
    ok(s != NULL && t != NULL && s->kept_bytes == 1536
       && t->kept_bytes == 1536,
       "keep: two call sites that grew alike share the group's change");
    ok(s != NULL && t != NULL && s->kept_objs + t->kept_objs == 3
       && s->objs + t->objs == 3 && s->bytes + t->bytes == 3072,
       "keep: whole objects, adding up to the group's");

    ok(find(&heap, f30, 1) == NULL, "keep: a group judged noise goes");

    s = find(&heap, f40, 1);
    ok(s != NULL && s->kept_bytes == 100 && s->kept_objs == 1,
       "keep: a new group is all growth");
    ok(s != NULL && s->accum_objs == 5 && s->accum_bytes == 500,
       "keep: the same address under other names is not its base");

    ngx_http_malloc_heap_values(&heap, s, &o, &b);
    ok(o == 1 && b == 100, "keep: values are what was kept");

    /* the index still works */

    ok(find(&heap, f10, 1) == &heap.stacks[0] && heap.index != NULL,
       "keep: the index is rebuilt");

    /* one call site grew, the other shrank: the group's net is kept */

    ngx_http_malloc_heap_init(&heap, arena);
    ngx_http_malloc_heap_init(&base, arena);

    add(&heap, STR(EXACT "@ 0x10\n  t*: 10: 1000 [0: 0]\n"
                   "@ 0x20\n  t*: 1: 100 [0: 0]\n"), err);
    add(&base, STR(EXACT "@ 0x10\n  t*: 4: 400 [0: 0]\n"
                   "@ 0x20\n  t*: 3: 300 [0: 0]\n"), err);

    group[0] = 0;
    group[1] = 0;
    base_group[0] = 0;
    base_group[1] = 0;
    bytes[0] = 400;
    objs[0] = 4;
    keep.ngroups = 1;

    is_int(ngx_http_malloc_heap_keep(&heap, &base, &keep), 0, "keep: net");
    s = find(&heap, f10, 1);
    ok(heap.nstacks == 1 && s != NULL && s->kept_bytes == 400
       && s->kept_objs == 4 && s->objs == 4 && s->bytes == 400,
       "keep: the site that grew holds the group's net growth");

    /* by frames alone: a base stack of the same frames is the base */

    ngx_http_malloc_heap_init(&heap, arena);
    ngx_http_malloc_heap_init(&base, arena);

    add(&heap, STR(EXACT "@ 0x40\n  t*: 2: 200 [5: 500]\n"), err);
    add(&base, STR(EXACT "@ 0x40\n  t*: 1: 100 [2: 200]\n"), err);

    group[0] = 0;
    bytes[0] = 100;
    objs[0] = 1;
    keep.base_group = NULL;

    is_int(ngx_http_malloc_heap_keep(&heap, &base, &keep), 0,
           "keep: no base groups");
    s = find(&heap, f40, 1);
    ok(s != NULL && s->kept_bytes == 100 && s->accum_objs == 3
       && s->accum_bytes == 300, "keep: the stack of its frames is its base");

    /* kept by what they hold, when the stacks themselves did not grow */

    ngx_http_malloc_heap_init(&heap, arena);
    ngx_http_malloc_heap_init(&base, arena);

    add(&heap, STR(EXACT "@ 0x10\n  t*: 3: 300 [0: 0]\n"
                   "@ 0x20\n  t*: 1: 100 [0: 0]\n"), err);
    add(&base, STR(EXACT "@ 0x10\n  t*: 3: 300 [0: 0]\n"
                   "@ 0x20\n  t*: 1: 100 [0: 0]\n"), err);

    group[0] = 0;
    group[1] = 0;
    bytes[0] = 40;
    objs[0] = 0;

    is_int(ngx_http_malloc_heap_keep(&heap, &base, &keep), 0,
           "keep: none grew");
    s = find(&heap, f10, 1);
    t = find(&heap, f20, 1);
    ok(s != NULL && t != NULL && s->kept_bytes == 30 && t->kept_bytes == 10
       && s->kept_objs == 1 && t->kept_objs == 1,
       "keep: shared by what they hold, bytes without objects are one");

    /* nothing kept: a heap against itself */

    ngx_http_malloc_heap_init(&other, arena);
    add(&other, STR("heap_v2/1\n" DUMP_A_STACKS), err);

    group[0] = 0;
    group[1] = 1;
    bytes[0] = 0;
    bytes[1] = 0;
    keep.ngroups = 2;

    is_int(ngx_http_malloc_heap_keep(&other, &other, &keep), 0,
           "keep: self");
    ok(other.nstacks == 0 && !other.accum,
       "keep: self leaves nothing, no accumulated counts");

    /* a group out of range goes */

    ngx_http_malloc_heap_init(&other, arena);
    add(&other, STR("heap_v2/1\n" DUMP_A_STACKS), err);

    group[0] = 7;
    group[1] = 7;

    is_int(ngx_http_malloc_heap_keep(&other, &base, &keep), 0,
           "keep: groups out of range");
    is_int((long) other.nstacks, 0, "keep: their stacks go");

    /* sampled counts at different rates do not subtract */

    ngx_http_malloc_heap_init(&other, arena);
    ngx_http_malloc_heap_init(&base, arena);
    add(&other, STR("heap_v2/1\n" DUMP_A_STACKS), err);
    add(&base, STR(HEAD), err);

    is_int(ngx_http_malloc_heap_keep(&other, &base, &keep), -1,
           "keep: a base of another period is refused");
}


/* one stack of "n" sampled objects of "size" bytes at the default rate */

static void
stack_of(ngx_http_malloc_heap_t *heap, unsigned frame, uint64_t n,
    uint64_t size)
{
    char  text[256], err[NGX_HTTP_MALLOC_HEAP_ERR_LEN];

    snprintf(text, sizeof(text), HEAD "@ 0x%x\n  t*: %llu: %llu [0: 0]\n",
             frame, (unsigned long long) n, (unsigned long long) (n * size));

    if (add(heap, text, strlen(text), err) != 0) {
        ok(0, "stack_of: %s", err);
    }
}


/*
 * At the default rate, 40 samples of 128-byte blocks against 32 kept
 * with their change: the sampled counts, whole samples, follow the
 * unbiased ones that heap_values gives, and what jeprof and pprof compute
 * from them comes within a sample of it
 */

static void
test_keep_sampled(void)
{
    double                    bytes[2], objs[2], change;
    uint32_t                  group[2], base_group[2];
    int64_t                   o, b, uo, ub, total;
    ngx_http_malloc_heap_t    heap, base;
    ngx_http_malloc_keep_t    keep;
    ngx_http_malloc_stack_t  *s;
    size_t                    i;

    ngx_http_malloc_heap_init(&heap, arena);
    ngx_http_malloc_heap_init(&base, arena);

    stack_of(&base, 0x1, 32, 128);
    stack_of(&heap, 0x1, 40, 128);
    stack_of(&heap, 0x2, 5, 128);

    ngx_http_malloc_heap_unbias(524288, 40, 40 * 128, &uo, &ub);
    ngx_http_malloc_heap_unbias(524288, 32, 32 * 128, &o, &b);
    change = (double) (ub - b);

    ngx_http_malloc_heap_unbias(524288, 5, 5 * 128, &uo, &ub);
    change += (double) ub;

    group[0] = 0;
    group[1] = 0;
    base_group[0] = 0;
    bytes[0] = change;
    objs[0] = change / 128;

    keep.group = group;
    keep.base_group = base_group;
    keep.bytes = bytes;
    keep.objs = objs;
    keep.ngroups = 1;

    is_int(ngx_http_malloc_heap_keep(&heap, &base, &keep), 0,
           "keep sampled: done");
    is_int((long) heap.nstacks, 2, "keep sampled: both call sites");

    total = 0;

    for (i = 0; i < heap.nstacks; i++) {
        s = &heap.stacks[i];
        total += s->kept_bytes;
    }

    ok(total == (int64_t) (change + 0.5),
       "keep sampled: the unbiased bytes add up to the change exactly");

    s = &heap.stacks[0];
    ok(heap.stacks[0].objs + heap.stacks[1].objs == 13,
       "keep sampled: 13 samples grew, in whole samples");

    total = 0;

    for (i = 0; i < heap.nstacks; i++) {
        s = &heap.stacks[i];
        ngx_http_malloc_heap_unbias(heap.period, s->objs, s->bytes, &o, &b);
        total += b;
    }

    ok(total > change - 524288 && total < change + 524288,
       "keep sampled: scaled again, within a sample of the change");
}


/* the test itself, from the samples of two sides */

static void
test_noise(void)
{
    double                    z, zmax;
    ngx_http_malloc_noise_t   nz;
    ngx_http_malloc_side_t    a, b;

    /* the side and the z directly: symmetric, and zmax bounds z */

    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));
    ngx_http_malloc_noise_add(&a, 524288, 100, 12800);
    ngx_http_malloc_noise_add(&b, 524288, 50, 6400);

    z = ngx_http_malloc_noise_z(&a, &b, &zmax);
    ok(z > 0 && zmax >= z, "noise: z is bounded by zmax");
    ok(ngx_http_malloc_noise_z(&b, &a, &zmax) == -z, "noise: z is signed");

    memset(&b, 0, sizeof(b));
    ngx_http_malloc_noise_add_unbiased(&b, 524288, a.bytes / 128, a.bytes);
    ok(b.samples > 99.9 && b.samples < 100.1,
       "noise: unbiased counts give the samples back");

    /*
     * a 1 MiB object, missed one time in seven, seen on one side only:
     * noise, even alone; one of 64 MiB, never missed, is not
     */

    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));
    ngx_http_malloc_noise_add(&a, 524288, 1, 1048576);

    z = ngx_http_malloc_noise_z(&a, &b, &zmax);
    ok(z > 0 && z < 2.0, "noise: a large object seen once is noise");

    memset(&a, 0, sizeof(a));
    ngx_http_malloc_noise_add(&a, 524288, 1, 64 * 1048576.0);

    z = ngx_http_malloc_noise_z(&a, &b, &zmax);
    ok(z > 1e6, "noise: an object always sampled is a sure change");

    /* no stacks: the level of one test */

    memset(&nz, 0, sizeof(nz));
    ngx_http_malloc_noise_level(&nz, NULL, 0);
    ok(nz.z > 2.57 && nz.z < 2.58 && nz.testable == 0,
       "noise: 99%% two-sided, nothing testable");
}


/*
 * The margin and the detection limit: a change is beyond the noise
 * exactly when it exceeds its margin; the limit of small objects at the
 * default period solves (k - 1) / sqrt(k) = z for a stack that held
 * nothing, (k - 1) / sqrt(2 n + k) = z for one that holds n samples
 */

static void
test_limit(void)
{
    double                  z, zmax, m, k, limit, more;
    ngx_http_malloc_side_t  a, b, none;

    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));
    memset(&none, 0, sizeof(none));
    ngx_http_malloc_noise_add(&a, 524288, 100, 12800);
    ngx_http_malloc_noise_add(&b, 524288, 50, 6400);

    z = ngx_http_malloc_noise_z(&a, &b, &zmax);
    m = ngx_http_malloc_noise_margin(&a, &b, z);
    ok(m > 0 && fabs(m - (a.bytes - b.bytes)) < 1e-6 * m,
       "limit: at the change's own z its margin is the change");
    ok(ngx_http_malloc_noise_margin(&a, &b, z + 0.5) > a.bytes - b.bytes,
       "limit: at a higher level it is wider than the change");
    ok(ngx_http_malloc_noise_margin(&b, &a, z) == m,
       "limit: the margin is the same either way");

    memset(&a, 0, sizeof(a));
    ngx_http_malloc_noise_add(&a, 524288, 1, 64 * 1048576.0);
    ok(ngx_http_malloc_noise_margin(&a, &none, 3) == 0,
       "limit: no margin for objects always sampled");

    k = (3 + sqrt(13)) / 2;
    k *= k;
    limit = ngx_http_malloc_noise_limit(NULL, 524288, 3);
    ok(fabs(limit - k * 524288) < 0.002 * limit,
       "limit: a stack that held nothing: %.2f samples", limit / 524288);

    memset(&a, 0, sizeof(a));
    ngx_http_malloc_noise_add(&a, 524288, 24, 24);

    k = (11 + sqrt(121 + 4 * 431)) / 2;
    more = ngx_http_malloc_noise_limit(&a, 524288, 3);
    ok(fabs(more - k * 524288) < 0.002 * more,
       "limit: one that holds 24 samples: %.2f samples", more / 524288);
    ok(ngx_http_malloc_noise_limit(&a, 524288, 4) > more,
       "limit: a stricter level sees less");

    ngx_http_malloc_noise_add(&a, 524288, 100, 100);
    ok(ngx_http_malloc_noise_limit(&a, 524288, 3) > more,
       "limit: more samples held hide more");

    ok(ngx_http_malloc_noise_limit(NULL, 1, 3) < 1,
       "limit: every allocation sampled, every change is seen");

    memset(&a, 0, sizeof(a));
    ngx_http_malloc_noise_add(&a, 524288, 2, 128 * 1048576.0);
    ok(ngx_http_malloc_noise_limit(&a, 524288, 3) < 1,
       "limit: a stack of objects always sampled shows every change");
}


static void
test_words(void)
{
    char                     buf[256];
    size_t                   n;
    ngx_http_malloc_noise_t  nz;

    is_str(ngx_http_malloc_noise_size(buf, sizeof(buf), 512), "512 B",
           "words: bytes");
    is_str(ngx_http_malloc_noise_size(buf, sizeof(buf), 1536), "1.5 KiB",
           "words: KiB");
    is_str(ngx_http_malloc_noise_size(buf, sizeof(buf), 17.5 * 1048576),
           "17.5 MiB", "words: MiB");
    is_str(ngx_http_malloc_noise_size(buf, sizeof(buf), -3.0 * 1073741824),
           "-3.0 GiB", "words: GiB, signed");

    n = ngx_http_malloc_noise_interval(buf, sizeof(buf), 17.5 * 1048576,
                                       8.5 * 1048576);
    is_str(buf, "+17.5 MiB, 99%: 9.0 to 26.0 MiB", "words: an interval");
    is_int((long) n, (long) strlen(buf), "words: its length");

    (void) ngx_http_malloc_noise_interval(buf, sizeof(buf), 300 * 1024,
                                          2 * 1048576);
    is_str(buf, "+0.3 MiB, 99%: -1.7 to 2.3 MiB",
           "words: in the unit of the widest bound");

    (void) ngx_http_malloc_noise_interval(buf, sizeof(buf), 100, 0);
    is_str(buf, "+100 B, 99%: 100 to 100 B", "words: nothing random");

    memset(&nz, 0, sizeof(nz));
    nz.samples = 23;
    nz.base_samples = 24;
    nz.limit = 13.4 * 1048576;
    nz.floor = 5.5 * 1048576;

    n = ngx_http_malloc_noise_detection(buf, sizeof(buf), &nz);
    is_str(buf, "with 23 samples now and 24 in the base, a change of "
           "small blocks under 5.5 MiB cannot be told from noise; growth "
           "is seen from 5.5 MiB in a stack that held nothing, from 13.4 "
           "MiB in one that held them all", "words: the detection limit");
    is_int((long) n, (long) strlen(buf), "words: its length");

    nz.limit = 0;
    nz.floor = 0;
    (void) ngx_http_malloc_noise_detection(buf, sizeof(buf), &nz);
    is_str(buf, "with 23 samples now and 24 in the base, every change is "
           "told from noise: every allocation is sampled",
           "words: no limit");

    n = ngx_http_malloc_noise_detection(buf, 10, &nz);
    ok(n == 9 && strlen(buf) == 9, "words: cut to the buffer");
}


static void
test_comments(void)
{
    char                    err[NGX_HTTP_MALLOC_HEAP_ERR_LEN];
    ngx_http_malloc_heap_t  heap;
    ngx_http_malloc_mbuf_t  out;
    static const char      *comments[] = { "growth: one", "two\nlines\r" };

    ngx_http_malloc_heap_init(&heap, arena);
    add(&heap, STR(DUMP_B), err);

    memset(&out, 0, sizeof(out));
    ngx_http_malloc_heap_write_legacy(&heap, comments, 2, &out);

    is_str(text_of(&out),
           "heap profile: 3: 1536 [3: 1536] @ heap_v2/524288\n"
           "# growth: one\n"
           "# two lines \n"
           "1: 512 [1: 512] @ 0x10 0x20 0x30\n"
           "2: 1024 [2: 1024] @ 0x50\n",
           "comments: after the legacy header, one line each");

    ngx_http_malloc_mbuf_free(&out);

    memset(&out, 0, sizeof(out));
    ngx_http_malloc_heap_write_v2(&heap, comments, 1, &out);

    is_str(text_of(&out),
           "heap_v2/524288\n"
           "  t*: 3: 1536 [3: 1536]\n"
           "# growth: one\n"
           "@ 0x10 0x20 0x30\n"
           "  t*: 1: 512 [1: 512]\n"
           "@ 0x50\n"
           "  t*: 2: 1024 [2: 1024]\n",
           "comments: after the heap_v2 totals");

    ngx_http_malloc_mbuf_free(&out);
}


static void
test_trim(void)
{
    char                      err[NGX_HTTP_MALLOC_HEAP_ERR_LEN];
    ngx_http_malloc_heap_t    heap;
    ngx_http_malloc_stack_t  *s;
    static const uint64_t     f1[] = { 0x30, 0x18 };
    static const uint64_t     f2[] = { 0x11 };
    static const uint64_t     f3[] = { 0x20, 0x10 };

    ngx_http_malloc_heap_init(&heap, arena);

    is_int(add(&heap, STR(HEAD
                          "@ 0x10 0x11 0x30 0x18\n  t*: 1: 100 [2: 200]\n"
                          "@ 0x12 0x30 0x18\n  t*: 2: 200 [3: 300]\n"
                          "@ 0x10 0x11\n  t*: 4: 400 [0: 0]\n"
                          "@ 0x20 0x10\n  t*: 8: 800 [0: 0]\n"), err),
           0, "trim: dump");

    ngx_http_malloc_heap_trim(&heap, 0x10, 0x20);

    is_int((long) heap.nstacks, 3, "trim: stacks made equal are merged");

    s = find(&heap, f1, 2);
    ok(s != NULL && s->objs == 3 && s->bytes == 300 && s->accum_objs == 5
       && s->accum_bytes == 500, "trim: leading frames dropped, counts add");

    s = find(&heap, f2, 1);
    ok(s != NULL && s->objs == 4, "trim: the last frame stays");

    s = find(&heap, f3, 2);
    ok(s != NULL && s->objs == 8,
       "trim: frames in the range past the first other one stay");

    /* the index was rebuilt: a later dump merges */

    is_int(add(&heap, STR(HEAD "@ 0x30 0x18\n  t*: 1: 100 [0: 0]\n"), err),
           0, "trim: another dump after trimming");
    is_int((long) heap.nstacks, 3, "trim: it merged with a trimmed stack");
}


static void
test_round_trip(void)
{
    char                    err[NGX_HTTP_MALLOC_HEAP_ERR_LEN], *text, *p;
    size_t                  i;
    ngx_http_malloc_heap_t  heap, again;
    ngx_http_malloc_mbuf_t  out;

    ngx_http_malloc_heap_init(&heap, arena);
    add(&heap, STR(DUMP_A), err);
    add(&heap, STR(DUMP_B), err);

    memset(&out, 0, sizeof(out));
    ngx_http_malloc_heap_write_v2(&heap, NULL, 0, &out);

    ok(!out.failed, "round trip: written");

    is_str(text_of(&out),
           "heap_v2/524288\n"
           "  t*: 9: 4608 [13: 6656]\n"
           "@ 0x10 0x20 0x30\n"
           "  t*: 5: 2560 [7: 3584]\n"
           "@ 0x10 0x40\n"
           "  t*: 2: 1024 [4: 2048]\n"
           "@ 0x50\n"
           "  t*: 2: 1024 [2: 1024]\n"
           "\n"
           "MAPPED_LIBRARIES:\n"
           MAPS,
           "round trip: heap_v2 text, totals summed from the stacks");

    ngx_http_malloc_heap_init(&again, arena);

    if (!is_int(add(&again, (const char *) out.data, out.len, err), 0,
                "round trip: parsed back"))
    {
        diag("%s", err);
    }

    ok(same_heap(&heap, &again), "round trip: the same heap");

    ngx_http_malloc_mbuf_free(&out);

    /* a line longer than any buffer of the writer */

    text = malloc(64 + 1024 * 19 + 64);
    if (text == NULL) {
        abort();
    }

    p = text + sprintf(text, "heap_v2/524288\n  t*: 1: 8 [0: 0]\n@");

    for (i = 0; i < 1024; i++) {
        p += sprintf(p, " 0x%" PRIx64, UINT64_MAX - i);
    }

    strcpy(p, "\n  t*: 1: 8 [0: 0]\n\nMAPPED_LIBRARIES:\n");

    ngx_http_malloc_heap_init(&heap, arena);
    is_int(add(&heap, text, strlen(text), err), 0, "round trip: long stack");

    memset(&out, 0, sizeof(out));
    ngx_http_malloc_heap_write_v2(&heap, NULL, 0, &out);

    ok(strcmp(text_of(&out), text) == 0,
       "round trip: long stack written as read");

    ngx_http_malloc_heap_init(&again, arena);
    is_int(add(&again, (const char *) out.data, out.len, err), 0,
           "round trip: long stack parsed back");
    ok(same_heap(&heap, &again), "round trip: the same long stack");

    ngx_http_malloc_mbuf_free(&out);
    free(text);
}


static void
test_legacy(void)
{
    char                    err[NGX_HTTP_MALLOC_HEAP_ERR_LEN];
    ngx_http_malloc_heap_t  heap;
    ngx_http_malloc_mbuf_t  out;

    ngx_http_malloc_heap_init(&heap, arena);
    add(&heap, STR(DUMP_A), err);
    add(&heap, STR(DUMP_B), err);

    memset(&out, 0, sizeof(out));
    ngx_http_malloc_heap_write_legacy(&heap, NULL, 0, &out);

    ok(!out.failed, "legacy: written");

    is_str(text_of(&out),
           "heap profile: 9: 4608 [13: 6656] @ heap_v2/524288\n"
           "5: 2560 [7: 3584] @ 0x10 0x20 0x30\n"
           "2: 1024 [4: 2048] @ 0x10 0x40\n"
           "2: 1024 [2: 1024] @ 0x50\n"
           "\n"
           "MAPPED_LIBRARIES:\n"
           MAPS,
           "legacy: gperftools heap text");

    ngx_http_malloc_mbuf_free(&out);
}


static void
test_empty(void)
{
    char                    err[NGX_HTTP_MALLOC_HEAP_ERR_LEN];
    ngx_http_malloc_heap_t  heap, again;
    ngx_http_malloc_mbuf_t  out;

    ngx_http_malloc_heap_init(&heap, arena);

    memset(&out, 0, sizeof(out));
    ngx_http_malloc_heap_write_v2(&heap, NULL, 0, &out);

    is_str(text_of(&out), "heap_v2/1\n  t*: 0: 0 [0: 0]\n",
           "empty: heap_v2 with period 1");

    ngx_http_malloc_heap_init(&again, arena);
    is_int(add(&again, (const char *) out.data, out.len, err), 0,
           "empty: parsed back");

    ngx_http_malloc_mbuf_free(&out);

    memset(&out, 0, sizeof(out));
    ngx_http_malloc_heap_write_legacy(&heap, NULL, 0, &out);

    is_str(text_of(&out), "heap profile: 0: 0 [0: 0] @ heap_v2/1\n",
           "empty: legacy with period 1");

    ngx_http_malloc_mbuf_free(&out);
}


static void
test_unbias(void)
{
    int64_t  o, b;

    /* 1 / (1 - exp(-768 / 524288)) = 683.1667887... */

    ngx_http_malloc_heap_unbias(524288, 1, 768, &o, &b);
    is_int((long) o, 683, "unbias: one 768-byte sample: objects");
    is_int((long) b, 524672, "unbias: one 768-byte sample: bytes");

    /* 514.0026 and 2105354.667: the bytes round up */

    ngx_http_malloc_heap_unbias(524288, 4, 16384, &o, &b);
    is_int((long) o, 514, "unbias: four 4 KiB samples: objects");
    is_int((long) b, 2105355, "unbias: four 4 KiB samples: bytes, rounded");

    /* objects far bigger than the period are all sampled */

    ngx_http_malloc_heap_unbias(524288, 2, 1 << 30, &o, &b);
    ok(o == 2 && b == 1 << 30, "unbias: big objects unchanged");

    ngx_http_malloc_heap_unbias(0, 3, 300, &o, &b);
    ok(o == 3 && b == 300, "unbias: period 0 leaves values");

    ngx_http_malloc_heap_unbias(1, 3, 3, &o, &b);
    ok(o == 3 && b == 3, "unbias: period 1 samples everything");

    ngx_http_malloc_heap_unbias(524288, 0, 0, &o, &b);
    ok(o == 0 && b == 0, "unbias: 0 stays 0");

    ngx_http_malloc_heap_unbias(524288, 0, 5, &o, &b);
    ok(o == 0 && b == 5, "unbias: no objects, nothing to scale by");

    ngx_http_malloc_heap_unbias(524288, INT64_MAX, INT64_MAX, &o, &b);
    ok(o == INT64_MAX && b == INT64_MAX, "unbias: clamped to INT64_MAX");

    ngx_http_malloc_heap_unbias(2, UINT64_MAX, UINT64_MAX, &o, &b);
    ok(o == INT64_MAX && b == INT64_MAX, "unbias: beyond int64 clamped");
}


int
main(void)
{
    arena = ngx_http_malloc_arena_create();
    if (arena == NULL) {
        abort();
    }

    test_parse();
    test_no_maps();
    test_whole();
    test_merge();
    test_period();
    test_malformed();
    test_limits();
    test_normalize();
    test_keep();
    test_keep_sampled();
    test_noise();
    test_limit();
    test_words();
    test_comments();
    test_trim();
    test_round_trip();
    test_legacy();
    test_empty();
    test_unbias();

    ngx_http_malloc_arena_destroy(arena);

    return done_testing();
}
