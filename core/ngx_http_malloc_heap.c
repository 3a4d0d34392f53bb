
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * jemalloc 5.3 writes a heap_v2 dump as:
 *
 *     heap_v2/<period>
 *       t*: <objs>: <bytes> [<accum objs>: <accum bytes>]
 *       t<thread>: <objs>: <bytes> [<accum objs>: <accum bytes>][ <name>]
 *     @ 0x<return address> 0x<return address> ...
 *       t*: <objs>: <bytes> [<accum objs>: <accum bytes>]
 *       t<thread>: <objs>: <bytes> [<accum objs>: <accum bytes>]
 *     ...
 *
 *     MAPPED_LIBRARIES:
 *     <the process's /proc/PID/maps>
 *
 * Only each stack's "t*" line counts: the per-thread lines split it, and
 * the process-wide totals are written afresh from the stacks.  The parser
 * is strict because a dump is a file that a worker may have left cut short
 * (a full disk, a killed worker): every line must be whole and exactly of
 * its kind, or the dump is refused with the number of the line.
 *
 * Owns: the parsed heap.  Calls: arena (pure C).
 */


#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ngx_http_malloc_heap.h"


/* jemalloc keeps at most 128 (PROF_BT_MAX); the rest is room for others */
#define NGX_HTTP_MALLOC_HEAP_MAX_FRAMES  1024

/* pprof and profile.proto read counts as int64 */
#define NGX_HTTP_MALLOC_HEAP_MAX_COUNT   ((uint64_t) INT64_MAX)


typedef enum {
    ngx_http_malloc_heap_st_header = 0,
    ngx_http_malloc_heap_st_total,
    ngx_http_malloc_heap_st_threads,
    ngx_http_malloc_heap_st_stack_total,
    ngx_http_malloc_heap_st_stack_threads,
    ngx_http_malloc_heap_st_blank
} ngx_http_malloc_heap_state_e;


/* what heap_add() carries from one line of a dump to the next */
typedef struct {
    ngx_http_malloc_heap_state_e    state;
    uint32_t                        nframes;
    uint64_t                       *frames;    /* the last "@" line's */
    size_t                          line;      /* its number, from 1 */
    char                           *err;
} ngx_http_malloc_heap_parse_t;


/* a group's change as heap_keep() shares it out among its stacks */
typedef struct {
    double                      grew;        /* its stacks' own growth, */
    double                      ogrew;       /* bytes and objects */
    double                      held;        /* their bytes now */
    double                      bytes;       /* the shares so far, */
    double                      objs;        /* as handed out */
    double                      samples;
    int64_t                     given_bytes;
    int64_t                     given_objs;
    int64_t                     given_samples;
} ngx_http_malloc_share_t;


static void ngx_http_malloc_heap_error(char *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static int ngx_http_malloc_heap_line(ngx_http_malloc_heap_t *heap,
    ngx_http_malloc_heap_parse_t *ps, const unsigned char *p,
    const unsigned char *last);
static int ngx_http_malloc_heap_header(ngx_http_malloc_heap_t *heap,
    const unsigned char *p, const unsigned char *last, char *err);
static int ngx_http_malloc_heap_threads(ngx_http_malloc_heap_parse_t *ps,
    const unsigned char *p, const unsigned char *last);
static int ngx_http_malloc_heap_maps(ngx_http_malloc_heap_t *heap,
    const unsigned char *p, const unsigned char *end, char *err);
static int ngx_http_malloc_heap_end(ngx_http_malloc_heap_state_e state,
    size_t line, char *err);
static int ngx_http_malloc_heap_period(const unsigned char *p,
    const unsigned char *last, uint64_t *period);
static const unsigned char *ngx_http_malloc_heap_number(
    const unsigned char *p, const unsigned char *last, uint64_t *v);
static const unsigned char *ngx_http_malloc_heap_counts(
    const unsigned char *p, const unsigned char *last, uint64_t *c);
static int ngx_http_malloc_heap_thread(const unsigned char *p,
    const unsigned char *last, int named, uint64_t *c);
static int ngx_http_malloc_heap_frames(const unsigned char *p,
    const unsigned char *last, uint64_t *frames, uint32_t *nframes,
    char *err, size_t line);
static const unsigned char *ngx_http_malloc_heap_frame(
    const unsigned char *p, const unsigned char *last, uint64_t *frame,
    char *err, size_t line);
static void ngx_http_malloc_heap_normalize(uint64_t *objs, uint64_t *bytes);
static uint64_t ngx_http_malloc_heap_hash(const uint64_t *frames,
    uint32_t nframes);
static uint32_t *ngx_http_malloc_heap_slot(const ngx_http_malloc_heap_t *heap,
    const uint64_t *frames, uint32_t nframes, uint32_t hash);
static int ngx_http_malloc_heap_grow(ngx_http_malloc_heap_t *heap);
static int ngx_http_malloc_heap_insert(ngx_http_malloc_heap_t *heap,
    const uint64_t *frames, uint32_t nframes, const uint64_t *c, char *err,
    size_t line);
static void ngx_http_malloc_heap_reindex(ngx_http_malloc_heap_t *heap);
static const ngx_http_malloc_stack_t *ngx_http_malloc_heap_base(
    const ngx_http_malloc_heap_t *base, const ngx_http_malloc_stack_t *s);
static void ngx_http_malloc_heap_groups(const ngx_http_malloc_heap_t *heap,
    const ngx_http_malloc_heap_t *base, const ngx_http_malloc_keep_t *keep,
    ngx_http_malloc_share_t *sh);
static int ngx_http_malloc_heap_kept(ngx_http_malloc_heap_t *heap,
    const ngx_http_malloc_heap_t *base, const ngx_http_malloc_keep_t *keep,
    size_t i, uint64_t period, ngx_http_malloc_share_t *sh);
static int ngx_http_malloc_heap_growth(const ngx_http_malloc_heap_t *heap,
    const ngx_http_malloc_heap_t *base, const ngx_http_malloc_keep_t *keep,
    size_t i, const ngx_http_malloc_stack_t **b, double *grew);
static int64_t ngx_http_malloc_heap_share(double *shares, int64_t *given,
    double share);
static void ngx_http_malloc_heap_sampled(ngx_http_malloc_stack_t *s,
    uint64_t period, ngx_http_malloc_share_t *sh);
static void ngx_http_malloc_heap_write_comments(ngx_http_malloc_mbuf_t *out,
    const char *const *comments, size_t n);
static uint64_t ngx_http_malloc_heap_sat(uint64_t a, uint64_t b);
static void ngx_http_malloc_heap_totals(const ngx_http_malloc_heap_t *heap,
    uint64_t *t);
static void ngx_http_malloc_heap_write_frames(ngx_http_malloc_mbuf_t *out,
    const ngx_http_malloc_stack_t *stack);
static void ngx_http_malloc_heap_write_maps(const ngx_http_malloc_heap_t *heap,
    ngx_http_malloc_mbuf_t *out);
static int64_t ngx_http_malloc_heap_round(double x);


void
ngx_http_malloc_heap_init(ngx_http_malloc_heap_t *heap,
    ngx_http_malloc_arena_t *arena)
{
    memset(heap, 0, sizeof(ngx_http_malloc_heap_t));
    heap->arena = arena;
}


static void
ngx_http_malloc_heap_error(char *err, const char *fmt, ...)
{
    va_list  args;

    if (err == NULL) {
        return;
    }

    va_start(args, fmt);
    vsnprintf(err, NGX_HTTP_MALLOC_HEAP_ERR_LEN, fmt, args);
    va_end(args);
}


int
ngx_http_malloc_heap_add(ngx_http_malloc_heap_t *heap,
    const unsigned char *text, size_t len, char *err)
{
    const unsigned char           *p, *last, *end;
    ngx_http_malloc_heap_parse_t   ps;

    ps.frames = ngx_http_malloc_arena_alloc(heap->arena,
                            NGX_HTTP_MALLOC_HEAP_MAX_FRAMES * sizeof(uint64_t));
    if (ps.frames == NULL) {
        ngx_http_malloc_heap_error(err, "out of memory");
        return -1;
    }

    ps.state = ngx_http_malloc_heap_st_header;
    ps.nframes = 0;
    ps.line = 0;
    ps.err = err;
    p = text;
    end = text + len;

    while (p < end) {
        ps.line++;

        last = memchr(p, '\n', end - p);
        if (last == NULL) {
            ngx_http_malloc_heap_error(err, "line %zu: no newline at its end "
                                       "(a dump cut short?)", ps.line);
            return -1;
        }

        if (memchr(p, '\0', last - p) != NULL) {
            ngx_http_malloc_heap_error(err, "line %zu: a NUL byte", ps.line);
            return -1;
        }

        if (ps.state == ngx_http_malloc_heap_st_blank) {
            if ((size_t) (last - p) != sizeof("MAPPED_LIBRARIES:") - 1
                || memcmp(p, "MAPPED_LIBRARIES:", last - p) != 0)
            {
                ngx_http_malloc_heap_error(err, "line %zu: expected "
                                           "\"MAPPED_LIBRARIES:\" after the "
                                           "blank line", ps.line);
                return -1;
            }

            return ngx_http_malloc_heap_maps(heap, last + 1, end, err);
        }

        if (ngx_http_malloc_heap_line(heap, &ps, p, last) != 0) {
            return -1;
        }

        p = last + 1;
    }

    return ngx_http_malloc_heap_end(ps.state, ps.line + 1, err);
}


/* one whole line of the dump before its blank line, as "ps" expects */

static int
ngx_http_malloc_heap_line(ngx_http_malloc_heap_t *heap,
    ngx_http_malloc_heap_parse_t *ps, const unsigned char *p,
    const unsigned char *last)
{
    int       total;
    uint64_t  c[4];

    switch (ps->state) {

    case ngx_http_malloc_heap_st_header:

        if (ngx_http_malloc_heap_header(heap, p, last, ps->err) != 0) {
            return -1;
        }

        ps->state = ngx_http_malloc_heap_st_total;
        return 0;

    case ngx_http_malloc_heap_st_total:
    case ngx_http_malloc_heap_st_stack_total:

        total = (ps->state == ngx_http_malloc_heap_st_total);

        if (ngx_http_malloc_heap_thread(p, last, 0, c) != 1) {
            ngx_http_malloc_heap_error(ps->err, "line %zu: expected the "
                                       "\"  t*: \" %s", ps->line,
                                       total ? "totals line"
                                             : "line of the stack above");
            return -1;
        }

        /* the process-wide totals: checked, then recomputed on write */

        if (total) {
            ps->state = ngx_http_malloc_heap_st_threads;
            return 0;
        }

        ngx_http_malloc_heap_normalize(&c[0], &c[1]);
        ngx_http_malloc_heap_normalize(&c[2], &c[3]);

        if (ngx_http_malloc_heap_insert(heap, ps->frames, ps->nframes, c,
                                        ps->err, ps->line)
            != 0)
        {
            return -1;
        }

        ps->state = ngx_http_malloc_heap_st_stack_threads;
        return 0;

    default: /* the threads of the header or of a stack */
        return ngx_http_malloc_heap_threads(ps, p, last);
    }
}


/* "heap_v2/<period>", the period the same as the dumps' before */

static int
ngx_http_malloc_heap_header(ngx_http_malloc_heap_t *heap,
    const unsigned char *p, const unsigned char *last, char *err)
{
    uint64_t  period;

    if (last - p < 8 || memcmp(p, "heap_v2/", 8) != 0) {
        ngx_http_malloc_heap_error(err, "line 1: not a heap_v2 dump "
                                   "(no \"heap_v2/\" header)");
        return -1;
    }

    if (ngx_http_malloc_heap_period(p + 8, last, &period) != 0) {
        ngx_http_malloc_heap_error(err, "line 1: bad sampling period "
                                   "in \"heap_v2/\" header");
        return -1;
    }

    if (heap->period != 0 && heap->period != period) {
        ngx_http_malloc_heap_error(err, "sampling period %" PRIu64
                                   " differs from %" PRIu64
                                   " of the dumps before",
                                   period, heap->period);
        return -1;
    }

    heap->period = period;

    return 0;
}


/*
 * A line after a "t*" line: one more thread's, the "@" line of the next
 * stack, or the blank line before the maps
 */

static int
ngx_http_malloc_heap_threads(ngx_http_malloc_heap_parse_t *ps,
    const unsigned char *p, const unsigned char *last)
{
    int       rc;
    uint64_t  c[4];

    if (p == last) {
        ps->state = ngx_http_malloc_heap_st_blank;
        return 0;
    }

    if (*p == '@') {
        if (ngx_http_malloc_heap_frames(p, last, ps->frames, &ps->nframes,
                                        ps->err, ps->line)
            != 0)
        {
            return -1;
        }

        ps->state = ngx_http_malloc_heap_st_stack_total;
        return 0;
    }

    /* thread names show only in the header's per-thread lines */

    rc = ngx_http_malloc_heap_thread(p, last,
                             ps->state == ngx_http_malloc_heap_st_threads, c);
    if (rc != 0) {
        ngx_http_malloc_heap_error(ps->err, "line %zu: expected a "
                                   "\"  t<thread>: \" line, a stack "
                                   "or a blank line", ps->line);
        return -1;
    }

    return 0;
}


/* the maps are the rest, whatever it is, but C-string safe */

static int
ngx_http_malloc_heap_maps(ngx_http_malloc_heap_t *heap,
    const unsigned char *p, const unsigned char *end, char *err)
{
    if (memchr(p, '\0', end - p) != NULL) {
        ngx_http_malloc_heap_error(err, "a NUL byte in MAPPED_LIBRARIES");
        return -1;
    }

    if (heap->maps == NULL) {
        heap->maps = ngx_http_malloc_arena_strndup(heap->arena,
                                                   (const char *) p, end - p);
        if (heap->maps == NULL) {
            ngx_http_malloc_heap_error(err, "out of memory");
            return -1;
        }

        heap->maps_len = end - p;
    }

    return 0;
}


/*
 * The text ended in "state".  jemalloc leaves the maps section out when it
 * cannot read the maps, so a dump may end right after its stacks.
 */

static int
ngx_http_malloc_heap_end(ngx_http_malloc_heap_state_e state, size_t line,
    char *err)
{
    switch (state) {

    case ngx_http_malloc_heap_st_threads:
    case ngx_http_malloc_heap_st_stack_threads:
        return 0;

    case ngx_http_malloc_heap_st_header:
        ngx_http_malloc_heap_error(err, "empty dump");
        return -1;

    case ngx_http_malloc_heap_st_total:
        ngx_http_malloc_heap_error(err, "line %zu: the dump ends before "
                                   "its \"  t*: \" totals line", line);
        return -1;

    case ngx_http_malloc_heap_st_stack_total:
        ngx_http_malloc_heap_error(err, "line %zu: the dump ends before the "
                                   "\"  t*: \" line of its last stack",
                                   line);
        return -1;

    default: /* ngx_http_malloc_heap_st_blank */
        ngx_http_malloc_heap_error(err, "line %zu: the dump ends before "
                                   "\"MAPPED_LIBRARIES:\"", line);
        return -1;
    }
}


/*
 * jemalloc writes a dump through a buffer and takes only a write() of -1
 * for an error: a short last write (the file system filled) cuts the end
 * off a dump it reports written.  That end is the maps, whose last line
 * is the highest mapping: one that stays (the stack, the vsyscall page),
 * so the caller reads its end address from /proc/self/maps right after
 * the dump, and a cut at a newline ends on another line.  Looks only at
 * the header and back from the end: the cost is the maps', not the
 * stacks'.
 */

int
ngx_http_malloc_heap_whole(const unsigned char *text, size_t len,
    uint64_t top)
{
    size_t                n;
    const unsigned char  *p, *line, *end;

    n = sizeof("MAPPED_LIBRARIES:") - 1;

    if (len < 9 || memcmp(text, "heap_v2/", 8) != 0
        || text[len - 1] != '\n')
    {
        return 0;
    }

    if (top == 0) {
        /* no maps to look for: the newline of the last stack ends it */
        return 1;
    }

    /* from the last line back to the section's header */

    end = text + len - 1;

    for (p = end; p > text; p = line - 1) {

        for (line = p; line > text && line[-1] != '\n'; line--) {
            /* void */
        }

        if ((size_t) (p - line) == n
            && memcmp(line, "MAPPED_LIBRARIES:", n) == 0)
        {
            return line - text >= 2 && line[-2] == '\n'
                   && ngx_http_malloc_heap_top(p + 1, end - p) == top;
        }

        if (line == text) {
            break;
        }
    }

    return 0;
}


uint64_t
ngx_http_malloc_heap_top(const unsigned char *maps, size_t len)
{
    uint64_t              top;
    const unsigned char  *p, *end, *line;

    if (len == 0 || maps[len - 1] != '\n') {
        return 0;
    }

    end = maps + len - 1;

    for (line = end; line > maps && line[-1] != '\n'; line--) {
        /* void */
    }

    /* "<start>-<end> <perms> ...": the end */

    for (p = line; p < end && *p != '-'; p++) {
        if (!isxdigit(*p)) {
            return 0;
        }
    }

    if (p == line || p == end) {
        return 0;
    }

    top = 0;

    for (p++; p < end && *p != ' '; p++) {
        if (!isxdigit(*p) || top >> 60 != 0) {
            return 0;
        }

        top = (top << 4) | (uint64_t) (isdigit(*p) ? *p - '0'
                                                   : (*p | 0x20) - 'a' + 10);
    }

    return (p < end) ? top : 0;
}


/*
 * The header's period, 2^lg_prof_sample: 2^63 at lg_sample 63, which
 * jemalloc takes and writes, is read as INT64_MAX, the most pprof and
 * profile.proto's int64 hold; the two mean the same, no sampling.
 */

static int
ngx_http_malloc_heap_period(const unsigned char *p, const unsigned char *last,
    uint64_t *period)
{
    uint64_t  n, d;

    if (p == last) {
        return -1;
    }

    for (n = 0; p < last; p++) {
        if (*p < '0' || *p > '9') {
            return -1;
        }

        d = *p - '0';

        if (n > (UINT64_MAX - d) / 10) {
            return -1;
        }

        n = n * 10 + d;
    }

    if (n == 0) {
        return -1;
    }

    *period = (n > NGX_HTTP_MALLOC_HEAP_MAX_COUNT)
              ? NGX_HTTP_MALLOC_HEAP_MAX_COUNT : n;

    return 0;
}


/* a decimal of at most INT64_MAX; NULL if there is none or it is bigger */

static const unsigned char *
ngx_http_malloc_heap_number(const unsigned char *p, const unsigned char *last,
    uint64_t *v)
{
    uint64_t              n, d;
    const unsigned char  *start;

    n = 0;
    start = p;

    while (p < last && *p >= '0' && *p <= '9') {
        d = *p - '0';

        if (n > (NGX_HTTP_MALLOC_HEAP_MAX_COUNT - d) / 10) {
            return NULL;
        }

        n = n * 10 + d;
        p++;
    }

    if (p == start) {
        return NULL;
    }

    *v = n;

    return p;
}


/* "<objs>: <bytes> [<accum objs>: <accum bytes>]" into c[0..3] */

static const unsigned char *
ngx_http_malloc_heap_counts(const unsigned char *p, const unsigned char *last,
    uint64_t *c)
{
    p = ngx_http_malloc_heap_number(p, last, &c[0]);
    if (p == NULL || last - p < 2 || p[0] != ':' || p[1] != ' ') {
        return NULL;
    }

    p = ngx_http_malloc_heap_number(p + 2, last, &c[1]);
    if (p == NULL || last - p < 2 || p[0] != ' ' || p[1] != '[') {
        return NULL;
    }

    p = ngx_http_malloc_heap_number(p + 2, last, &c[2]);
    if (p == NULL || last - p < 2 || p[0] != ':' || p[1] != ' ') {
        return NULL;
    }

    p = ngx_http_malloc_heap_number(p + 2, last, &c[3]);
    if (p == NULL || p == last || *p != ']') {
        return NULL;
    }

    return p + 1;
}


/*
 * "  t*: <counts>" gives 1, "  t<thread>: <counts>" 0, anything else -1.
 * "named" lets a thread line end in " <thread name>", as in the header.
 */

static int
ngx_http_malloc_heap_thread(const unsigned char *p, const unsigned char *last,
    int named, uint64_t *c)
{
    int                   star;
    const unsigned char  *start;

    if (last - p < 4 || p[0] != ' ' || p[1] != ' ' || p[2] != 't') {
        return -1;
    }

    p += 3;

    if (*p == '*') {
        star = 1;
        p++;

    } else {
        star = 0;
        start = p;

        while (p < last && *p >= '0' && *p <= '9') {
            p++;
        }

        if (p == start || p - start > 20) {
            return -1;
        }
    }

    if (last - p < 2 || p[0] != ':' || p[1] != ' ') {
        return -1;
    }

    p = ngx_http_malloc_heap_counts(p + 2, last, c);
    if (p == NULL) {
        return -1;
    }

    if (p != last && (star || !named || *p != ' ')) {
        return -1;
    }

    return star;
}


/* "@ 0x<hex> 0x<hex> ...", innermost frame first */

static int
ngx_http_malloc_heap_frames(const unsigned char *p, const unsigned char *last,
    uint64_t *frames, uint32_t *nframes, char *err, size_t line)
{
    uint32_t  n;

    n = 0;
    p++;

    while (p < last) {

        if (*p != ' ' || last - p < 2 || p[1] == ' ') {
            ngx_http_malloc_heap_error(err, "line %zu: frames must be "
                                       "separated by one space", line);
            return -1;
        }

        p++;

        if (n == NGX_HTTP_MALLOC_HEAP_MAX_FRAMES) {
            ngx_http_malloc_heap_error(err, "line %zu: a stack of more than "
                                       "%d frames", line,
                                       NGX_HTTP_MALLOC_HEAP_MAX_FRAMES);
            return -1;
        }

        /* jemalloc prints with "%#": a null frame is "0", not "0x0" */

        if (*p == '0' && (last - p == 1 || p[1] == ' ')) {
            frames[n++] = 0;
            p++;
            continue;
        }

        p = ngx_http_malloc_heap_frame(p, last, &frames[n], err, line);
        if (p == NULL) {
            return -1;
        }

        n++;
    }

    /* a stack without frames names nothing, and jeprof drops its line */

    if (n == 0) {
        ngx_http_malloc_heap_error(err, "line %zu: a stack without frames",
                                   line);
        return -1;
    }

    *nframes = n;

    return 0;
}


/* one "0x<hex>" frame of at most 64 bits: the end of it, or NULL */

static const unsigned char *
ngx_http_malloc_heap_frame(const unsigned char *p, const unsigned char *last,
    uint64_t *frame, char *err, size_t line)
{
    uint64_t              v;
    unsigned              d;
    const unsigned char  *start;

    if (last - p < 3 || p[0] != '0' || p[1] != 'x') {
        ngx_http_malloc_heap_error(err, "line %zu: a frame that is not "
                                   "\"0x<hex>\"", line);
        return NULL;
    }

    p += 2;
    start = p;
    v = 0;

    while (p < last && *p != ' ') {

        if (*p >= '0' && *p <= '9') {
            d = *p - '0';

        } else if (*p >= 'a' && *p <= 'f') {
            d = *p - 'a' + 10;

        } else if (*p >= 'A' && *p <= 'F') {
            d = *p - 'A' + 10;

        } else {
            ngx_http_malloc_heap_error(err, "line %zu: a bad hex digit in "
                                       "a frame", line);
            return NULL;
        }

        if (p - start == 16) {
            ngx_http_malloc_heap_error(err, "line %zu: a frame of more "
                                       "than 64 bits", line);
            return NULL;
        }

        v = (v << 4) | d;
        p++;
    }

    if (p == start) {
        ngx_http_malloc_heap_error(err, "line %zu: a frame that is not "
                                   "\"0x<hex>\"", line);
        return NULL;
    }

    *frame = v;

    return p;
}


/*
 * jemalloc 5.3 reconstructs the sampled count from unbiased figures and
 * can round it down to 0 while bytes remain.  pprof refuses "0: <bytes>"
 * and the unbiasing divides by the count, so such bytes are one object.
 */

static void
ngx_http_malloc_heap_normalize(uint64_t *objs, uint64_t *bytes)
{
    if (*objs == 0 && *bytes != 0) {
        *objs = 1;
    }
}


static uint64_t
ngx_http_malloc_heap_hash(const uint64_t *frames, uint32_t nframes)
{
    uint32_t  i;
    uint64_t  h;

    h = 0x9e3779b97f4a7c15ULL ^ nframes;

    for (i = 0; i < nframes; i++) {
        h ^= frames[i];
        h *= 0xff51afd7ed558ccdULL;
        h ^= h >> 32;
    }

    return h;
}


/*
 * The index slot that holds the stack with these frames (of this hash), or
 * an empty one.  The frames are compared only where the hashes match:
 * stacks share their innermost frames, and comparing them took some 3% of
 * a 50,000-stack profile's build.
 */

static uint32_t *
ngx_http_malloc_heap_slot(const ngx_http_malloc_heap_t *heap,
    const uint64_t *frames, uint32_t nframes, uint32_t hash)
{
    size_t                          i, mask;
    const ngx_http_malloc_stack_t  *s;

    mask = heap->index_size - 1;
    i = hash & mask;

    for ( ;; ) {
        if (heap->index[i] == 0) {
            return &heap->index[i];
        }

        s = &heap->stacks[heap->index[i] - 1];

        if (s->hash == hash && s->nframes == nframes
            && memcmp(s->frames, frames, nframes * sizeof(uint64_t)) == 0)
        {
            return &heap->index[i];
        }

        i = (i + 1) & mask;
    }
}


/* room for one more stack, the index at most half full */

static int
ngx_http_malloc_heap_grow(ngx_http_malloc_heap_t *heap)
{
    size_t                    i, cap, size;
    uint32_t                 *index, *slot;
    ngx_http_malloc_stack_t  *stacks;

    if (heap->nstacks >= UINT32_MAX / 4) {
        return -1;
    }

    if (heap->nstacks == heap->cap) {
        cap = heap->cap ? heap->cap * 2 : 64;

        stacks = ngx_http_malloc_arena_alloc(heap->arena,
                                     cap * sizeof(ngx_http_malloc_stack_t));
        if (stacks == NULL) {
            return -1;
        }

        if (heap->nstacks > 0) {
            memcpy(stacks, heap->stacks,
                   heap->nstacks * sizeof(ngx_http_malloc_stack_t));
        }

        heap->stacks = stacks;
        heap->cap = cap;
    }

    if ((heap->nstacks + 1) * 2 <= heap->index_size) {
        return 0;
    }

    size = heap->index_size ? heap->index_size * 2 : 128;

    index = ngx_http_malloc_arena_alloc(heap->arena, size * sizeof(uint32_t));
    if (index == NULL) {
        return -1;
    }

    heap->index = index;
    heap->index_size = size;

    for (i = 0; i < heap->nstacks; i++) {
        slot = ngx_http_malloc_heap_slot(heap, heap->stacks[i].frames,
                                         heap->stacks[i].nframes,
                                         heap->stacks[i].hash);
        *slot = i + 1;
    }

    return 0;
}


static int
ngx_http_malloc_heap_insert(ngx_http_malloc_heap_t *heap,
    const uint64_t *frames, uint32_t nframes, const uint64_t *c, char *err,
    size_t line)
{
    uint32_t                  hash, *slot;
    uint64_t                 *copy;
    ngx_http_malloc_stack_t  *s;

    hash = (uint32_t) ngx_http_malloc_heap_hash(frames, nframes);

    if (heap->index != NULL) {
        slot = ngx_http_malloc_heap_slot(heap, frames, nframes, hash);

        if (*slot != 0) {
            s = &heap->stacks[*slot - 1];

            if (c[0] > NGX_HTTP_MALLOC_HEAP_MAX_COUNT - s->objs
                || c[1] > NGX_HTTP_MALLOC_HEAP_MAX_COUNT - s->bytes
                || c[2] > NGX_HTTP_MALLOC_HEAP_MAX_COUNT - s->accum_objs
                || c[3] > NGX_HTTP_MALLOC_HEAP_MAX_COUNT - s->accum_bytes)
            {
                ngx_http_malloc_heap_error(err, "line %zu: the counts of a "
                                           "stack overflow when merged",
                                           line);
                return -1;
            }

            s->objs += c[0];
            s->bytes += c[1];
            s->accum_objs += c[2];
            s->accum_bytes += c[3];

            goto done;
        }
    }

    copy = ngx_http_malloc_arena_alloc(heap->arena,
                                       nframes * sizeof(uint64_t));

    if (copy == NULL || ngx_http_malloc_heap_grow(heap) != 0) {
        ngx_http_malloc_heap_error(err, "line %zu: out of memory", line);
        return -1;
    }

    memcpy(copy, frames, nframes * sizeof(uint64_t));

    s = &heap->stacks[heap->nstacks];
    s->frames = copy;
    s->nframes = nframes;
    s->hash = hash;
    s->objs = c[0];
    s->bytes = c[1];
    s->accum_objs = c[2];
    s->accum_bytes = c[3];
    s->kept_objs = 0;
    s->kept_bytes = 0;

    slot = ngx_http_malloc_heap_slot(heap, frames, nframes, hash);
    *slot = ++heap->nstacks;

done:

    if (c[2] != 0 || c[3] != 0) {
        heap->accum = 1;
    }

    return 0;
}


/*
 * After trim or keep: rebuilds the index over the stacks that are left,
 * compacting them and merging those that became equal.  The index never
 * needs to grow, as there are no more stacks than before.
 */

static void
ngx_http_malloc_heap_reindex(ngx_http_malloc_heap_t *heap)
{
    size_t                    i, n;
    uint32_t                 *slot;
    ngx_http_malloc_stack_t  *s, *t;

    if (heap->index == NULL) {
        return;
    }

    memset(heap->index, 0, heap->index_size * sizeof(uint32_t));

    n = 0;

    for (i = 0; i < heap->nstacks; i++) {
        s = &heap->stacks[i];
        /* trim may have taken frames off */
        s->hash = (uint32_t) ngx_http_malloc_heap_hash(s->frames, s->nframes);
        slot = ngx_http_malloc_heap_slot(heap, s->frames, s->nframes,
                                         s->hash);

        if (*slot != 0) {
            t = &heap->stacks[*slot - 1];
            t->objs = ngx_http_malloc_heap_sat(t->objs, s->objs);
            t->bytes = ngx_http_malloc_heap_sat(t->bytes, s->bytes);
            t->accum_objs = ngx_http_malloc_heap_sat(t->accum_objs,
                                                     s->accum_objs);
            t->accum_bytes = ngx_http_malloc_heap_sat(t->accum_bytes,
                                                      s->accum_bytes);
            t->kept_objs = (int64_t) ngx_http_malloc_heap_sat(
                               (uint64_t) t->kept_objs,
                               (uint64_t) s->kept_objs);
            t->kept_bytes = (int64_t) ngx_http_malloc_heap_sat(
                                (uint64_t) t->kept_bytes,
                                (uint64_t) s->kept_bytes);
            continue;
        }

        heap->stacks[n] = *s;
        *slot = ++n;
    }

    heap->nstacks = n;
}


int
ngx_http_malloc_heap_keep(ngx_http_malloc_heap_t *heap,
    const ngx_http_malloc_heap_t *base, const ngx_http_malloc_keep_t *keep)
{
    size_t                    i, n;
    uint64_t                  period;
    ngx_http_malloc_share_t  *sh;
    ngx_http_malloc_stack_t  *s;

    /* sampled counts at different rates do not subtract */

    if (heap->period != 0 && base->period != 0
        && heap->period != base->period)
    {
        return -1;
    }

    period = (heap->period != 0) ? heap->period : base->period;

    sh = ngx_http_malloc_arena_alloc(heap->arena, (keep->ngroups + 1)
                                     * sizeof(ngx_http_malloc_share_t));
    if (sh == NULL) {
        return -2;
    }

    memset(sh, 0, (keep->ngroups + 1) * sizeof(ngx_http_malloc_share_t));

    ngx_http_malloc_heap_groups(heap, base, keep, sh);

    n = 0;
    heap->accum = 0;

    for (i = 0; i < heap->nstacks; i++) {
        if (ngx_http_malloc_heap_kept(heap, base, keep, i, period, sh) != 0) {
            continue;
        }

        s = &heap->stacks[i];

        if (s->accum_objs != 0 || s->accum_bytes != 0) {
            heap->accum = 1;
        }

        heap->stacks[n++] = *s;
    }

    heap->nstacks = n;
    heap->kept = 1;

    ngx_http_malloc_heap_reindex(heap);

    return 0;
}


/*
 * What each group's stacks grew by, and hold, in all: the whole that
 * heap_kept() shares out among them
 */

static void
ngx_http_malloc_heap_groups(const ngx_http_malloc_heap_t *heap,
    const ngx_http_malloc_heap_t *base, const ngx_http_malloc_keep_t *keep,
    ngx_http_malloc_share_t *sh)
{
    size_t                          i;
    double                          grew[3];
    uint32_t                        g;
    const ngx_http_malloc_stack_t  *b;

    for (i = 0; i < heap->nstacks; i++) {
        if (ngx_http_malloc_heap_growth(heap, base, keep, i, &b, grew) != 0) {
            continue;
        }

        g = keep->group[i];

        sh[g].grew += (grew[0] > 0) ? grew[0] : 0;
        sh[g].ogrew += (grew[1] > 0) ? grew[1] : 0;
        sh[g].held += grew[2];
    }
}


/*
 * Heap stack i's share of its group's change, in place: its kept and
 * sampled counts, and its accumulated ones since the base.  -1 for a
 * stack that goes: its group goes, or its share of the bytes is none.
 */

static int
ngx_http_malloc_heap_kept(ngx_http_malloc_heap_t *heap,
    const ngx_http_malloc_heap_t *base, const ngx_http_malloc_keep_t *keep,
    size_t i, uint64_t period, ngx_http_malloc_share_t *sh)
{
    double                          grew[3], fb, fo;
    uint32_t                        g;
    ngx_http_malloc_stack_t        *s;
    const ngx_http_malloc_stack_t  *b;

    if (ngx_http_malloc_heap_growth(heap, base, keep, i, &b, grew) != 0) {
        return -1;
    }

    g = keep->group[i];
    s = &heap->stacks[i];

    fb = (sh[g].grew > 0) ? ((grew[0] > 0) ? grew[0] : 0) / sh[g].grew
         : (sh[g].held > 0) ? grew[2] / sh[g].held : 0;
    fo = (sh[g].ogrew > 0) ? ((grew[1] > 0) ? grew[1] : 0) / sh[g].ogrew
         : fb;

    s->kept_bytes = ngx_http_malloc_heap_share(&sh[g].bytes,
                                               &sh[g].given_bytes,
                                               keep->bytes[g] * fb);
    s->kept_objs = (keep->objs[g] > 0)
                   ? ngx_http_malloc_heap_share(&sh[g].objs,
                                                &sh[g].given_objs,
                                                keep->objs[g] * fo)
                   : 0;

    if (s->kept_bytes <= 0) {
        return -1;
    }

    /* grown in bytes but not in count: bigger objects */

    if (s->kept_objs <= 0) {
        s->kept_objs = 1;
    }

    ngx_http_malloc_heap_sampled(s, period, &sh[g]);

    /* accumulated counts only fall after a prof.reset */

    if (b != NULL) {
        if (s->accum_bytes > b->accum_bytes) {
            s->accum_bytes -= b->accum_bytes;
            s->accum_objs = (s->accum_objs > b->accum_objs)
                            ? s->accum_objs - b->accum_objs : 0;

        } else {
            s->accum_bytes = 0;
            s->accum_objs = 0;
        }

        ngx_http_malloc_heap_normalize(&s->accum_objs, &s->accum_bytes);
    }

    return 0;
}


/*
 * Heap stack i, if its group is kept: its base stack (*b, or NULL), and
 * what it grew by and holds, unbiased: bytes, objects, bytes now.  -1
 * for a stack whose group goes.
 */

static int
ngx_http_malloc_heap_growth(const ngx_http_malloc_heap_t *heap,
    const ngx_http_malloc_heap_t *base, const ngx_http_malloc_keep_t *keep,
    size_t i, const ngx_http_malloc_stack_t **b, double *grew)
{
    int64_t                         objs, bytes, bobjs, bbytes;
    uint32_t                        g;
    const ngx_http_malloc_stack_t  *s;

    g = keep->group[i];

    if (g >= keep->ngroups || !(keep->bytes[g] > 0)) {
        return -1;
    }

    s = &heap->stacks[i];
    *b = ngx_http_malloc_heap_base(base, s);

    if (*b != NULL && keep->base_group != NULL
        && keep->base_group[*b - base->stacks] != g)
    {
        /* the same addresses, other names: another module mapped there */
        *b = NULL;
    }

    ngx_http_malloc_heap_unbias(heap->period, s->objs, s->bytes, &objs,
                                &bytes);
    bobjs = 0;
    bbytes = 0;

    if (*b != NULL) {
        ngx_http_malloc_heap_unbias(base->period, (*b)->objs, (*b)->bytes,
                                    &bobjs, &bbytes);
    }

    grew[0] = (double) bytes - (double) bbytes;
    grew[1] = (double) objs - (double) bobjs;
    grew[2] = (double) bytes;

    return 0;
}


/*
 * One stack's part of its group's change, rounded so that the parts
 * handed out so far add up to the rounded sum of their shares
 */

static int64_t
ngx_http_malloc_heap_share(double *shares, int64_t *given, double share)
{
    int64_t  part;

    *shares += share;

    part = ngx_http_malloc_heap_round(*shares) - *given;
    *given += part;

    return part;
}


/*
 * The sampled counts of what a stack keeps: its kept objects as jemalloc
 * would have sampled them at their mean size, whole samples shared out
 * in the group as its bytes are
 */

static void
ngx_http_malloc_heap_sampled(ngx_http_malloc_stack_t *s, uint64_t period,
    ngx_http_malloc_share_t *sh)
{
    double   mean, q;
    int64_t  objs;

    mean = (double) s->kept_bytes / (double) s->kept_objs;
    q = (period > 1) ? -expm1(-mean / (double) period) : 1.0;

    objs = ngx_http_malloc_heap_share(&sh->samples, &sh->given_samples,
                                      (double) s->kept_objs * q);

    s->objs = (objs > 0) ? (uint64_t) objs : 0;
    s->bytes = (uint64_t) ngx_http_malloc_heap_round((double) s->objs
                                                     * mean);
}


void
ngx_http_malloc_heap_values(const ngx_http_malloc_heap_t *heap,
    const ngx_http_malloc_stack_t *s, int64_t *objs, int64_t *bytes)
{
    if (heap->kept) {
        *objs = s->kept_objs;
        *bytes = s->kept_bytes;
        return;
    }

    ngx_http_malloc_heap_unbias(heap->period, s->objs, s->bytes, objs,
                                bytes);
}


/* the base's stack with the frames of "s", or NULL */

static const ngx_http_malloc_stack_t *
ngx_http_malloc_heap_base(const ngx_http_malloc_heap_t *base,
    const ngx_http_malloc_stack_t *s)
{
    uint32_t  *slot;

    if (base->index == NULL) {
        return NULL;
    }

    slot = ngx_http_malloc_heap_slot(base, s->frames, s->nframes,
               (uint32_t) ngx_http_malloc_heap_hash(s->frames, s->nframes));

    if (*slot == 0) {
        return NULL;
    }

    return &base->stacks[*slot - 1];
}


void
ngx_http_malloc_heap_trim(ngx_http_malloc_heap_t *heap, uint64_t lo,
    uint64_t hi)
{
    size_t                    i;
    uint32_t                  k;
    ngx_http_malloc_stack_t  *s;

    for (i = 0; i < heap->nstacks; i++) {
        s = &heap->stacks[i];

        /* the outermost frame stays: a stack must name something */

        for (k = 0; k + 1 < s->nframes; k++) {
            if (s->frames[k] < lo || s->frames[k] >= hi) {
                break;
            }
        }

        s->frames += k;
        s->nframes -= k;
    }

    ngx_http_malloc_heap_reindex(heap);
}


static uint64_t
ngx_http_malloc_heap_sat(uint64_t a, uint64_t b)
{
    if (a >= NGX_HTTP_MALLOC_HEAP_MAX_COUNT
        || b >= NGX_HTTP_MALLOC_HEAP_MAX_COUNT - a)
    {
        return NGX_HTTP_MALLOC_HEAP_MAX_COUNT;
    }

    return a + b;
}


/* saturated, so that the header stays readable as int64 */

static void
ngx_http_malloc_heap_totals(const ngx_http_malloc_heap_t *heap, uint64_t *t)
{
    size_t                          i;
    const ngx_http_malloc_stack_t  *s;

    t[0] = 0;
    t[1] = 0;
    t[2] = 0;
    t[3] = 0;

    for (i = 0; i < heap->nstacks; i++) {
        s = &heap->stacks[i];
        t[0] = ngx_http_malloc_heap_sat(t[0], s->objs);
        t[1] = ngx_http_malloc_heap_sat(t[1], s->bytes);
        t[2] = ngx_http_malloc_heap_sat(t[2], s->accum_objs);
        t[3] = ngx_http_malloc_heap_sat(t[3], s->accum_bytes);
    }
}


/* " 0x<hex>" per frame; mbuf_printf would cut a long line at 512 bytes */

static void
ngx_http_malloc_heap_write_frames(ngx_http_malloc_mbuf_t *out,
    const ngx_http_malloc_stack_t *stack)
{
    int                    shift;
    size_t                 n;
    uint32_t               i;
    uint64_t               v;
    unsigned char          buf[1024];
    static const char      hex[] = "0123456789abcdef";

    n = 0;

    for (i = 0; i < stack->nframes; i++) {

        if (n > sizeof(buf) - 20) {
            ngx_http_malloc_mbuf_append(out, buf, n);
            n = 0;
        }

        v = stack->frames[i];

        buf[n++] = ' ';
        buf[n++] = '0';
        buf[n++] = 'x';

        for (shift = 60; shift > 0 && (v >> shift) == 0; shift -= 4) {
            /* skip leading zeros */
        }

        for ( /* void */ ; shift >= 0; shift -= 4) {
            buf[n++] = hex[(v >> shift) & 0xf];
        }
    }

    buf[n++] = '\n';

    ngx_http_malloc_mbuf_append(out, buf, n);
}


static void
ngx_http_malloc_heap_write_maps(const ngx_http_malloc_heap_t *heap,
    ngx_http_malloc_mbuf_t *out)
{
    if (heap->maps == NULL) {
        return;
    }

    ngx_http_malloc_mbuf_append(out, "\nMAPPED_LIBRARIES:\n",
                                sizeof("\nMAPPED_LIBRARIES:\n") - 1);
    ngx_http_malloc_mbuf_append(out, heap->maps, heap->maps_len);
}


/*
 * A heap with no dump in it says period 1 (nothing to scale): jeprof
 * takes a period of 0 for 128 KiB.
 */

void
ngx_http_malloc_heap_write_v2(const ngx_http_malloc_heap_t *heap,
    const char *const *comments, size_t ncomments,
    ngx_http_malloc_mbuf_t *out)
{
    size_t                          i;
    uint64_t                        t[4];
    const ngx_http_malloc_stack_t  *s;

    ngx_http_malloc_heap_totals(heap, t);

    ngx_http_malloc_mbuf_printf(out, "heap_v2/%" PRIu64 "\n"
                                "  t*: %" PRIu64 ": %" PRIu64
                                " [%" PRIu64 ": %" PRIu64 "]\n",
                                heap->period ? heap->period : 1,
                                t[0], t[1], t[2], t[3]);

    ngx_http_malloc_heap_write_comments(out, comments, ncomments);

    for (i = 0; i < heap->nstacks; i++) {
        s = &heap->stacks[i];

        ngx_http_malloc_mbuf_append(out, "@", 1);
        ngx_http_malloc_heap_write_frames(out, s);
        ngx_http_malloc_mbuf_printf(out, "  t*: %" PRIu64 ": %" PRIu64
                                    " [%" PRIu64 ": %" PRIu64 "]\n",
                                    s->objs, s->bytes, s->accum_objs,
                                    s->accum_bytes);
    }

    ngx_http_malloc_heap_write_maps(heap, out);
}


void
ngx_http_malloc_heap_write_legacy(const ngx_http_malloc_heap_t *heap,
    const char *const *comments, size_t ncomments,
    ngx_http_malloc_mbuf_t *out)
{
    size_t                          i;
    uint64_t                        t[4];
    const ngx_http_malloc_stack_t  *s;

    ngx_http_malloc_heap_totals(heap, t);

    ngx_http_malloc_mbuf_printf(out, "heap profile: %" PRIu64 ": %" PRIu64
                                " [%" PRIu64 ": %" PRIu64 "]"
                                " @ heap_v2/%" PRIu64 "\n",
                                t[0], t[1], t[2], t[3],
                                heap->period ? heap->period : 1);

    ngx_http_malloc_heap_write_comments(out, comments, ncomments);

    for (i = 0; i < heap->nstacks; i++) {
        s = &heap->stacks[i];

        ngx_http_malloc_mbuf_printf(out, "%" PRIu64 ": %" PRIu64
                                    " [%" PRIu64 ": %" PRIu64 "] @",
                                    s->objs, s->bytes, s->accum_objs,
                                    s->accum_bytes);
        ngx_http_malloc_heap_write_frames(out, s);
    }

    ngx_http_malloc_heap_write_maps(heap, out);
}


/*
 * "# <comment>" lines: a line break inside one (a symbol may hold
 * anything) would end the comment and start a line that is not one
 */

static void
ngx_http_malloc_heap_write_comments(ngx_http_malloc_mbuf_t *out,
    const char *const *comments, size_t n)
{
    size_t       i, len;
    const char  *c;

    for (i = 0; i < n; i++) {
        ngx_http_malloc_mbuf_append(out, "# ", 2);

        for (c = comments[i]; *c != '\0'; c += len) {
            len = strcspn(c, "\r\n");

            if (len == 0) {
                ngx_http_malloc_mbuf_append(out, " ", 1);
                len = 1;
                continue;
            }

            ngx_http_malloc_mbuf_append(out, c, len);
        }

        ngx_http_malloc_mbuf_append(out, "\n", 1);
    }
}


/*
 * Beyond the formula: a period of 1 samples every allocation, so there is
 * nothing to scale (pprof agrees; jeprof would add a hair for objects of
 * a few bytes), and a count without bytes has no mean size to scale by.
 */

void
ngx_http_malloc_heap_unbias(uint64_t period, uint64_t objs, uint64_t bytes,
    int64_t *uobjs, int64_t *ubytes)
{
    double  mean, scale;

    if (objs == 0 || bytes == 0 || period <= 1) {
        *uobjs = (objs > NGX_HTTP_MALLOC_HEAP_MAX_COUNT) ? INT64_MAX
                                                         : (int64_t) objs;
        *ubytes = (bytes > NGX_HTTP_MALLOC_HEAP_MAX_COUNT) ? INT64_MAX
                                                           : (int64_t) bytes;
        return;
    }

    /* expm1 keeps precision where 1 - exp() would cancel to nothing */

    mean = (double) bytes / (double) objs;
    scale = 1.0 / -expm1(-mean / (double) period);

    *uobjs = ngx_http_malloc_heap_round((double) objs * scale);
    *ubytes = ngx_http_malloc_heap_round((double) bytes * scale);
}


static int64_t
ngx_http_malloc_heap_round(double x)
{
    if (!(x < 9223372036854775807.0)) {
        return INT64_MAX;
    }

    if (x < 0) {
        return 0;
    }

    return (int64_t) (x + 0.5);
}
