
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * Where the resident memory goes.  Every mapping of /proc/self/smaps
 * lands in one kind by its header line, and its Rss is added to that
 * kind, so the kinds add up to the kernel's Rss of the process:
 *
 *     a known range (a shared zone)       shared_zones, zone by zone
 *     [stack]                             stack (the main thread's)
 *     shared, no file ("/dev/zero
 *     (deleted)", as MAP_SHARED|MAP_ANON
 *     shows, SysV, [anon_shmem:])         other_shared
 *     private, no file, [heap], [anon:]   anonymous
 *     anything else with a name           file (code, data, mapped files)
 *
 * jemalloc maps its memory anonymously, so the allocator's share is taken
 * out of the anonymous kind; the rest of that kind is other_anonymous.
 * Each mapping, its range, name and Rss, goes to the mappings' baseline
 * or comparison (ngx_http_malloc_maps.c) when asked.
 *
 * Owns: the parts and the rule for "outside malloc".  Calls: maps (pure
 * C, as this file is).
 */


#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "ngx_http_malloc_rss.h"


#define NGX_HTTP_MALLOC_MIB          (1024 * 1024)

#define ngx_http_malloc_rss_lit(p, last, s)                                   \
    ngx_http_malloc_maps_put(p, last, s, sizeof(s) - 1)


typedef enum {
    NGX_HTTP_MALLOC_KIND_NONE = -1,
    NGX_HTTP_MALLOC_KIND_ANON = 0,
    NGX_HTTP_MALLOC_KIND_STACK,
    NGX_HTTP_MALLOC_KIND_SHARED,
    NGX_HTTP_MALLOC_KIND_FILE,
    NGX_HTTP_MALLOC_KIND_ZONE
} ngx_http_malloc_kind_e;


static uint64_t ngx_http_malloc_rss_add(uint64_t a, uint64_t b);
static uint64_t ngx_http_malloc_rss_anonymous_growth(
    const ngx_http_malloc_rss_t *from, const ngx_http_malloc_rss_t *to);
static size_t ngx_http_malloc_rss_rank(ngx_http_malloc_rss_grew_t *grew,
    size_t n, const ngx_http_malloc_rss_grew_t *c);
static void ngx_http_malloc_rss_line(ngx_http_malloc_rss_parser_t *p,
    const char *s, size_t len);
static void ngx_http_malloc_rss_mapped(ngx_http_malloc_rss_parser_t *p);
static void ngx_http_malloc_rss_map(ngx_http_malloc_rss_parser_t *p,
    uintptr_t start, uintptr_t end, const char *path, size_t len);
static int ngx_http_malloc_rss_kb(const char *s, size_t len, size_t i,
    uint64_t *bytes);
static void ngx_http_malloc_rss_zones(ngx_http_malloc_rss_t *rss,
    uint64_t total);
static uint64_t ngx_http_malloc_rss_take(uint64_t *part, uint64_t want);
static int ngx_http_malloc_rss_header(ngx_http_malloc_rss_parser_t *p,
    const char *s, size_t len);
static int ngx_http_malloc_rss_kind(const char *perms, const char *path,
    size_t len);
static void ngx_http_malloc_rss_count(ngx_http_malloc_rss_parser_t *p,
    uint64_t bytes);
static size_t ngx_http_malloc_rss_hex(const char *s, size_t len,
    uintptr_t *value);
static int ngx_http_malloc_rss_prefix(const char *s, size_t len,
    const char *prefix);
static size_t ngx_http_malloc_rss_mib(char *p, char *last, uint64_t bytes);


static const char  *ngx_http_malloc_rss_names[] = {
    "allocated",
    "allocator_overhead",
    "shared_zones",
    "other_shared",
    "other_anonymous",
    "stack",
    "file"
};


static uint64_t
ngx_http_malloc_rss_add(uint64_t a, uint64_t b)
{
    if (a > NGX_HTTP_MALLOC_RSS_MAX || b > NGX_HTTP_MALLOC_RSS_MAX - a) {
        return NGX_HTTP_MALLOC_RSS_MAX;
    }

    return a + b;
}


void
ngx_http_malloc_rss_init(ngx_http_malloc_rss_parser_t *p,
    const ngx_http_malloc_rss_range_t *ranges, size_t nranges)
{
    memset(p, 0, sizeof(ngx_http_malloc_rss_parser_t));

    p->ranges = ranges;
    p->nranges = (nranges > NGX_HTTP_MALLOC_RSS_ZONES)
                 ? NGX_HTTP_MALLOC_RSS_ZONES : (uint32_t) nranges;
    p->kind = NGX_HTTP_MALLOC_KIND_NONE;
    p->range = -1;
    p->out.nzones = p->nranges;
}


void
ngx_http_malloc_rss_maps(ngx_http_malloc_rss_parser_t *p,
    ngx_http_malloc_maps_base_t *base, ngx_http_malloc_maps_t *top)
{
    p->base = base;
    p->top = top;

    if (base == NULL) {
        return;
    }

    if (top == NULL) {
        ngx_http_malloc_maps_begin(base);

    } else {
        ngx_http_malloc_maps_reset(top);
    }
}


/* any pieces: a line may be cut anywhere between two calls */

void
ngx_http_malloc_rss_feed(ngx_http_malloc_rss_parser_t *p, const char *data,
    size_t len)
{
    size_t       n;
    const char  *nl, *end;

    end = data + len;

    while (data < end) {
        nl = memchr(data, '\n', end - data);
        n = (nl != NULL ? nl : end) - data;

        if (n > sizeof(p->line) - p->len) {
            /* a long path: its start is enough to tell the kind */
            n = sizeof(p->line) - p->len;
            p->overlong = 1;
        }

        memcpy(p->line + p->len, data, n);
        p->len += n;

        if (nl == NULL) {
            return;
        }

        ngx_http_malloc_rss_line(p, p->line, p->len);

        p->len = 0;
        p->overlong = 0;
        data = nl + 1;
    }
}


/*
 * jemalloc's stats.resident counts every page of its active extents, and
 * stats.allocated objects whose pages may never have been touched (a big
 * malloc() not written yet): neither is what the kernel holds.  So the
 * allocator's share is clamped to the anonymous memory the kernel counts,
 * and the allocated bytes to that share; other_anonymous is what is left,
 * and may be low by as much as jemalloc's untouched pages.  The parts add
 * up to the Rss the kernel reported, whatever jemalloc said.
 */

void
ngx_http_malloc_rss_done(ngx_http_malloc_rss_parser_t *p,
    const ngx_http_malloc_je_stats_t *je, ngx_http_malloc_rss_t *out)
{
    uint64_t  allocator, allocated;

    if (p->len > 0) {
        /* the last line had no newline */
        ngx_http_malloc_rss_line(p, p->line, p->len);
        p->len = 0;
    }

    ngx_http_malloc_rss_mapped(p);

    if (p->base != NULL) {
        if (p->top == NULL) {
            ngx_http_malloc_maps_end(p->base);

        } else {
            ngx_http_malloc_maps_trim(p->top);
        }
    }

    allocator = (je != NULL) ? je->resident : 0;
    allocated = (je != NULL) ? je->allocated : 0;

    if (allocator > p->anonymous) {
        allocator = p->anonymous;
    }

    if (allocated > allocator) {
        allocated = allocator;
    }

    p->out.resident = (je != NULL) ? je->resident : 0;
    p->out.allocated = allocated;
    p->out.allocator_overhead = allocator - allocated;
    p->out.other_anonymous = p->anonymous - allocator;

    *out = p->out;
}


static void
ngx_http_malloc_rss_line(ngx_http_malloc_rss_parser_t *p, const char *s,
    size_t len)
{
    uint64_t  bytes;

    if (len == 0) {
        return;
    }

    if ((s[0] >= '0' && s[0] <= '9') || (s[0] >= 'a' && s[0] <= 'f')) {
        ngx_http_malloc_rss_mapped(p);

        if (ngx_http_malloc_rss_header(p, s, len) != 0) {
            p->kind = NGX_HTTP_MALLOC_KIND_NONE;
            p->out.flawed++;
        }

        return;
    }

    if (len < 4 || memcmp(s, "Rss:", 4) != 0) {
        /* the other fields: Pss, Swap, VmFlags... */
        return;
    }

    if (p->kind == NGX_HTTP_MALLOC_KIND_NONE
        || ngx_http_malloc_rss_kb(s, len, 4, &bytes) != 0)
    {
        p->out.flawed++;
        return;
    }

    ngx_http_malloc_rss_count(p, bytes);
}


/* "   1234 kB" from s[i] on, in bytes, saturated: 0, or -1 for no digit */

static int
ngx_http_malloc_rss_kb(const char *s, size_t len, size_t i, uint64_t *bytes)
{
    uint64_t  kb;

    for ( /* void */ ; i < len && (s[i] == ' ' || s[i] == '\t'); i++) {
        /* void */
    }

    if (i == len || s[i] < '0' || s[i] > '9') {
        return -1;
    }

    kb = 0;

    for ( /* void */ ; i < len && s[i] >= '0' && s[i] <= '9'; i++) {
        if (kb > (NGX_HTTP_MALLOC_RSS_MAX / 1024 - 9) / 10) {
            kb = NGX_HTTP_MALLOC_RSS_MAX / 1024;
            continue;
        }

        kb = kb * 10 + (s[i] - '0');
    }

    *bytes = (kb >= NGX_HTTP_MALLOC_RSS_MAX / 1024)
             ? NGX_HTTP_MALLOC_RSS_MAX : kb * 1024;

    return 0;
}


/* "start-end perms offset dev inode   path": 0, or -1 for nonsense */

static int
ngx_http_malloc_rss_header(ngx_http_malloc_rss_parser_t *p, const char *s,
    size_t len)
{
    size_t       i, n, field;
    uint32_t     r;
    uintptr_t    start, end, rend;
    const char  *perms;

    n = ngx_http_malloc_rss_hex(s, len, &start);
    if (n == 0 || n == len || s[n] != '-') {
        return -1;
    }

    i = n + 1;

    n = ngx_http_malloc_rss_hex(s + i, len - i, &end);
    if (n == 0 || end < start) {
        return -1;
    }

    i += n;

    if (len - i < 6 || s[i] != ' ' || s[i + 5] != ' '
        || (s[i + 4] != 'p' && s[i + 4] != 's'))
    {
        return -1;
    }

    perms = s + i + 1;
    i += 6;

    /* offset, device, inode */

    for (field = 0; field < 3; field++) {
        for (n = i; i < len && s[i] != ' '; i++) {
            /* void */
        }

        if (i == n) {
            return -1;
        }

        for ( /* void */ ; i < len && s[i] == ' '; i++) {
            /* void */
        }
    }

    p->out.mappings++;
    p->range = -1;
    p->kind = NGX_HTTP_MALLOC_KIND_NONE;

    for (r = 0; r < p->nranges; r++) {
        rend = p->ranges[r].start + p->ranges[r].size;

        if (rend < p->ranges[r].start) {
            rend = UINTPTR_MAX;
        }

        if (start < rend && p->ranges[r].start < end) {
            p->kind = NGX_HTTP_MALLOC_KIND_ZONE;
            p->range = (int) r;
            break;
        }
    }

    if (p->kind == NGX_HTTP_MALLOC_KIND_NONE) {
        p->kind = ngx_http_malloc_rss_kind(perms, s + i, len - i);
    }

    ngx_http_malloc_rss_map(p, start, end, s + i, len - i);

    return 0;
}


/* the mapping whose header was just read, its Rss to come */

static void
ngx_http_malloc_rss_map(ngx_http_malloc_rss_parser_t *p, uintptr_t start,
    uintptr_t end, const char *path, size_t len)
{
    ngx_http_malloc_mapping_t  *m;

    if (p->base == NULL) {
        return;
    }

    m = &p->map;

    m->start = start;
    m->end = end;
    m->rss = 0;
    m->zone = -1;

    switch (p->kind) {

    case NGX_HTTP_MALLOC_KIND_ZONE:
        m->kind = NGX_HTTP_MALLOC_MAP_ZONE;
        m->zone = p->range;
        break;

    case NGX_HTTP_MALLOC_KIND_STACK:
        m->kind = NGX_HTTP_MALLOC_MAP_STACK;
        break;

    case NGX_HTTP_MALLOC_KIND_SHARED:
        m->kind = NGX_HTTP_MALLOC_MAP_SHARED;
        break;

    case NGX_HTTP_MALLOC_KIND_FILE:
        m->kind = NGX_HTTP_MALLOC_MAP_FILE;
        break;

    default: /* NGX_HTTP_MALLOC_KIND_ANON */
        m->kind = ngx_http_malloc_rss_prefix(path, len, "[heap]")
                  ? NGX_HTTP_MALLOC_MAP_HEAP : NGX_HTTP_MALLOC_MAP_ANONYMOUS;
        break;
    }

    ngx_http_malloc_maps_name(m, path, len);

    p->mapped = 1;
}


/* the mapping read, with all its Rss: to the baseline or compared */

static void
ngx_http_malloc_rss_mapped(ngx_http_malloc_rss_parser_t *p)
{
    if (!p->mapped) {
        return;
    }

    p->mapped = 0;

    if (p->top == NULL) {
        ngx_http_malloc_maps_remember(p->base, &p->map);

    } else {
        ngx_http_malloc_maps_compare(p->base, &p->map, p->top);
    }
}


static int
ngx_http_malloc_rss_kind(const char *perms, const char *path, size_t len)
{
    if (ngx_http_malloc_rss_prefix(path, len, "[stack")) {
        /* "[stack]"; old kernels named threads' stacks "[stack:tid]" */
        return NGX_HTTP_MALLOC_KIND_STACK;
    }

    if (perms[3] == 's') {
        if (len == 0
            || ngx_http_malloc_rss_prefix(path, len, "/dev/zero")
            || ngx_http_malloc_rss_prefix(path, len, "/SYSV")
            || ngx_http_malloc_rss_prefix(path, len, "[anon_shmem:"))
        {
            return NGX_HTTP_MALLOC_KIND_SHARED;
        }

        return NGX_HTTP_MALLOC_KIND_FILE;
    }

    if (len == 0
        || ngx_http_malloc_rss_prefix(path, len, "[heap]")
        || ngx_http_malloc_rss_prefix(path, len, "[anon:"))
    {
        return NGX_HTTP_MALLOC_KIND_ANON;
    }

    /* files, [vdso], [vvar]: the kernel's code counts as code */
    return NGX_HTTP_MALLOC_KIND_FILE;
}


static void
ngx_http_malloc_rss_count(ngx_http_malloc_rss_parser_t *p, uint64_t bytes)
{
    ngx_http_malloc_rss_t  *o;

    o = &p->out;
    o->rss = ngx_http_malloc_rss_add(o->rss, bytes);

    if (p->mapped) {
        p->map.rss = ngx_http_malloc_rss_add(p->map.rss, bytes);
    }

    switch (p->kind) {

    case NGX_HTTP_MALLOC_KIND_ZONE:
        o->zone[p->range] = ngx_http_malloc_rss_add(o->zone[p->range],
                                                    bytes);
        o->shared_zones = ngx_http_malloc_rss_add(o->shared_zones, bytes);
        break;

    case NGX_HTTP_MALLOC_KIND_STACK:
        o->stack = ngx_http_malloc_rss_add(o->stack, bytes);
        break;

    case NGX_HTTP_MALLOC_KIND_SHARED:
        o->other_shared = ngx_http_malloc_rss_add(o->other_shared, bytes);
        break;

    case NGX_HTTP_MALLOC_KIND_FILE:
        o->file = ngx_http_malloc_rss_add(o->file, bytes);
        break;

    default: /* NGX_HTTP_MALLOC_KIND_ANON */
        p->anonymous = ngx_http_malloc_rss_add(p->anonymous, bytes);
        break;
    }
}


/* lowercase hex digits, at most as many as an address holds */

static size_t
ngx_http_malloc_rss_hex(const char *s, size_t len, uintptr_t *value)
{
    size_t     i;
    uintptr_t  v;

    v = 0;

    for (i = 0; i < len; i++) {
        if (s[i] >= '0' && s[i] <= '9') {
            v = (v << 4) | (uintptr_t) (s[i] - '0');

        } else if (s[i] >= 'a' && s[i] <= 'f') {
            v = (v << 4) | (uintptr_t) (s[i] - 'a' + 10);

        } else {
            break;
        }

        if (i == 2 * sizeof(uintptr_t)) {
            return 0;
        }
    }

    *value = v;

    return i;
}


static int
ngx_http_malloc_rss_prefix(const char *s, size_t len, const char *prefix)
{
    size_t  n;

    n = strlen(prefix);

    return len >= n && memcmp(s, prefix, n) == 0;
}


int
ngx_http_malloc_rss_read(int fd, const ngx_http_malloc_rss_range_t *ranges,
    size_t nranges, const ngx_http_malloc_je_stats_t *je,
    ngx_http_malloc_maps_base_t *base, ngx_http_malloc_maps_t *top,
    ngx_http_malloc_rss_t *out)
{
    ssize_t                        n;
    ngx_http_malloc_rss_parser_t   p;
    char                           buf[16384];

    ngx_http_malloc_rss_init(&p, ranges, nranges);
    ngx_http_malloc_rss_maps(&p, base, top);

    for ( ;; ) {
        n = read(fd, buf, sizeof(buf));

        if (n == 0) {
            break;
        }

        if (n == -1) {
            if (errno == EINTR) {
                continue;
            }

            return errno;
        }

        ngx_http_malloc_rss_feed(&p, buf, (size_t) n);
    }

    ngx_http_malloc_rss_done(&p, je, out);

    return 0;
}


int
ngx_http_malloc_rss_status(const char *text, size_t len,
    ngx_http_malloc_rss_kernel_t *k)
{
    int                 found;
    size_t              n, i;
    uint64_t           *to;
    const char         *s, *nl, *end;
    static const char  *names[] = { "RssAnon:", "RssFile:", "RssShmem:" };

    found = 0;
    end = text + len;

    for (s = text; s < end; s = nl + 1) {
        nl = memchr(s, '\n', end - s);
        if (nl == NULL) {
            nl = end;
        }

        n = nl - s;

        for (i = 0; i < 3; i++) {
            if (!ngx_http_malloc_rss_prefix(s, n, names[i])) {
                continue;
            }

            to = (i == 0) ? &k->anon : (i == 1) ? &k->file : &k->shmem;

            if (ngx_http_malloc_rss_kb(s, n, strlen(names[i]), to) != 0) {
                return -1;
            }

            found |= 1 << i;
        }
    }

    return (found == 7) ? 0 : -1;
}


void
ngx_http_malloc_rss_rebase(ngx_http_malloc_rss_t *rss,
    const ngx_http_malloc_rss_kernel_t *k)
{
    int       i;
    uint64_t  fixed, short_by;

    rss->file = k->file;

    if (k->shmem >= rss->shared_zones) {
        rss->other_shared = k->shmem - rss->shared_zones;

    } else {
        ngx_http_malloc_rss_zones(rss, k->shmem);
        rss->other_shared = 0;
    }

    fixed = ngx_http_malloc_rss_add(ngx_http_malloc_rss_add(rss->allocated,
                                        rss->allocator_overhead),
                                    rss->stack);

    if (k->anon >= fixed) {
        rss->other_anonymous = k->anon - fixed;

    } else {
        /* what the allocator left resident went with the fork first */
        rss->other_anonymous = 0;
        short_by = fixed - k->anon;
        short_by -= ngx_http_malloc_rss_take(&rss->allocator_overhead,
                                             short_by);
        short_by -= ngx_http_malloc_rss_take(&rss->stack, short_by);
        (void) ngx_http_malloc_rss_take(&rss->allocated, short_by);
    }

    rss->rss = 0;

    for (i = 0; i < NGX_HTTP_MALLOC_RSS_PARTS; i++) {
        rss->rss = ngx_http_malloc_rss_add(rss->rss,
                                           ngx_http_malloc_rss_part(rss, i));
    }
}


/*
 * The zones hold "total" now, less than they did: each its share of it,
 * so that they still add up to shared_zones.
 */

static void
ngx_http_malloc_rss_zones(ngx_http_malloc_rss_t *rss, uint64_t total)
{
    uint32_t  i;
    uint64_t  left;

    left = total;

    for (i = 0; i < rss->nzones && i < NGX_HTTP_MALLOC_RSS_ZONES; i++) {
        rss->zone[i] = (uint64_t) ((long double) rss->zone[i] * total
                                   / rss->shared_zones);
        left -= (rss->zone[i] < left) ? rss->zone[i] : left;
    }

    if (rss->nzones > 0) {
        /* what the rounding down left */
        rss->zone[0] += left;
    }

    rss->shared_zones = total;
}


/* takes at most "want" from *part: how much */

static uint64_t
ngx_http_malloc_rss_take(uint64_t *part, uint64_t want)
{
    uint64_t  n;

    n = (*part < want) ? *part : want;
    *part -= n;

    return n;
}


const char *
ngx_http_malloc_rss_part_name(int part)
{
    if (part < 0 || part >= NGX_HTTP_MALLOC_RSS_PARTS) {
        return "";
    }

    return ngx_http_malloc_rss_names[part];
}


uint64_t
ngx_http_malloc_rss_part(const ngx_http_malloc_rss_t *rss, int part)
{
    switch (part) {

    case NGX_HTTP_MALLOC_RSS_ALLOCATED:
        return rss->allocated;

    case NGX_HTTP_MALLOC_RSS_OVERHEAD:
        return rss->allocator_overhead;

    case NGX_HTTP_MALLOC_RSS_SHARED_ZONES:
        return rss->shared_zones;

    case NGX_HTTP_MALLOC_RSS_OTHER_SHARED:
        return rss->other_shared;

    case NGX_HTTP_MALLOC_RSS_OTHER_ANONYMOUS:
        return rss->other_anonymous;

    case NGX_HTTP_MALLOC_RSS_STACK:
        return rss->stack;

    case NGX_HTTP_MALLOC_RSS_FILE:
        return rss->file;

    default:
        return 0;
    }
}


/* "c" inserted into the "n" biggest growths, kept in order: the new n */

static size_t
ngx_http_malloc_rss_rank(ngx_http_malloc_rss_grew_t *grew, size_t n,
    const ngx_http_malloc_rss_grew_t *c)
{
    size_t  i, j;

    for (i = 0; i < n && grew[i].bytes >= c->bytes; i++) {
        /* void */
    }

    if (i == NGX_HTTP_MALLOC_RSS_GREW) {
        return n;
    }

    if (n < NGX_HTTP_MALLOC_RSS_GREW) {
        n++;
    }

    for (j = n - 1; j > i; j--) {
        grew[j] = grew[j - 1];
    }

    grew[i] = *c;

    return n;
}


uint64_t
ngx_http_malloc_rss_allocator(const ngx_http_malloc_rss_t *rss)
{
    if (rss->resident != 0) {
        return ngx_http_malloc_rss_add(rss->resident, 0);
    }

    return ngx_http_malloc_rss_add(rss->allocated, rss->allocator_overhead);
}


int64_t
ngx_http_malloc_rss_allocator_growth(const ngx_http_malloc_rss_t *from,
    const ngx_http_malloc_rss_t *to)
{
    return (int64_t) ngx_http_malloc_rss_allocator(to)
           - (int64_t) ngx_http_malloc_rss_allocator(from);
}


int64_t
ngx_http_malloc_rss_outside_bytes(const ngx_http_malloc_rss_t *rss)
{
    return (int64_t) rss->rss - (int64_t) ngx_http_malloc_rss_allocator(rss);
}


/*
 * The other anonymous memory that grew: the anonymous parts' growth less
 * the allocator's by its own figure, so that what the parts moved from
 * other_anonymous to the allocator's share (jemalloc counted it first,
 * another library touched it) is still told as growth outside malloc.
 */

static uint64_t
ngx_http_malloc_rss_anonymous_growth(const ngx_http_malloc_rss_t *from,
    const ngx_http_malloc_rss_t *to)
{
    int64_t  anonymous, allocator;

    /* each within 0 to RSS_MAX, so that the differences cannot overflow */

    anonymous = (int64_t) ngx_http_malloc_rss_add(to->other_anonymous,
                    ngx_http_malloc_rss_add(to->allocated,
                                            to->allocator_overhead))
                - (int64_t) ngx_http_malloc_rss_add(from->other_anonymous,
                    ngx_http_malloc_rss_add(from->allocated,
                                            from->allocator_overhead));

    allocator = ngx_http_malloc_rss_allocator_growth(from, to);

    return (anonymous > allocator)
           ? (uint64_t) anonymous - (uint64_t) allocator : 0;
}


size_t
ngx_http_malloc_rss_outside(const ngx_http_malloc_rss_t *from,
    const ngx_http_malloc_rss_t *to, int zones,
    ngx_http_malloc_rss_grew_t *grew)
{
    int                         part;
    size_t                      n;
    int64_t                     allocator;
    uint32_t                    z, nzones;
    uint64_t                    growth, a, b;
    ngx_http_malloc_rss_grew_t  c;

    if (to->rss <= from->rss
        || to->rss - from->rss < NGX_HTTP_MALLOC_RSS_GROWTH)
    {
        return 0;
    }

    growth = to->rss - from->rss;
    allocator = ngx_http_malloc_rss_allocator_growth(from, to);

    if (allocator > 0 && (uint64_t) allocator * 2 >= growth) {
        return 0;
    }

    nzones = (zones && from->nzones == to->nzones
              && to->nzones <= NGX_HTTP_MALLOC_RSS_ZONES)
             ? to->nzones : 0;

    n = 0;

    for (part = NGX_HTTP_MALLOC_RSS_SHARED_ZONES;
         part < NGX_HTTP_MALLOC_RSS_PARTS;
         part++)
    {
        for (z = 0; z < (part == NGX_HTTP_MALLOC_RSS_SHARED_ZONES && nzones
                         ? nzones : 1); z++)
        {
            c.part = part;
            c.zone = (part == NGX_HTTP_MALLOC_RSS_SHARED_ZONES && nzones)
                     ? (int) z : -1;

            a = (c.zone >= 0) ? from->zone[z]
                              : ngx_http_malloc_rss_part(from, part);
            b = (c.zone >= 0) ? to->zone[z]
                              : ngx_http_malloc_rss_part(to, part);

            c.bytes = (part == NGX_HTTP_MALLOC_RSS_OTHER_ANONYMOUS)
                      ? ngx_http_malloc_rss_anonymous_growth(from, to)
                      : (b > a) ? b - a : 0;

            if (c.bytes != 0) {
                n = ngx_http_malloc_rss_rank(grew, n, &c);
            }
        }
    }

    /* the parts that grew by less than a MiB are no news, but the first */

    while (n > 1 && grew[n - 1].bytes < NGX_HTTP_MALLOC_MIB) {
        n--;
    }

    if (n == 0) {
        /* cannot be: the growth is in some part; say it all the same */
        grew[0].part = NGX_HTTP_MALLOC_RSS_OTHER_ANONYMOUS;
        grew[0].zone = -1;
        grew[0].bytes = 0;
        n = 1;
    }

    return n;
}


size_t
ngx_http_malloc_rss_sentence(const ngx_http_malloc_rss_t *from,
    const ngx_http_malloc_rss_t *to, const char *since,
    const char *const *names, char *text)
{
    char                        *p, *last;
    size_t                       i, n;
    int64_t                      allocator;
    const char                  *name;
    ngx_http_malloc_rss_grew_t   grew[NGX_HTTP_MALLOC_RSS_GREW];

    n = ngx_http_malloc_rss_outside(from, to, names != NULL, grew);
    if (n == 0) {
        text[0] = '\0';
        return 0;
    }

    p = text;
    last = text + NGX_HTTP_MALLOC_RSS_TEXT_LEN - 1;

    allocator = ngx_http_malloc_rss_allocator_growth(from, to);

    p += ngx_http_malloc_rss_lit(p, last, "RSS grew by ");
    p += ngx_http_malloc_rss_mib(p, last, to->rss - from->rss);
    p += ngx_http_malloc_rss_lit(p, last, " since ");
    p += ngx_http_malloc_maps_put(p, last, since, strlen(since));

    if (allocator >= 0) {
        p += ngx_http_malloc_rss_lit(p, last,
                                     " and the allocator's memory by ");
        p += ngx_http_malloc_rss_mib(p, last, (uint64_t) allocator);

    } else {
        p += ngx_http_malloc_rss_lit(p, last,
                                     " while the allocator's memory fell by ");
        p += ngx_http_malloc_rss_mib(p, last, (uint64_t) -allocator);
    }

    p += ngx_http_malloc_rss_lit(p, last,
                                 ": the growth is outside malloc, and heap "
                                 "profiles cannot show it. Grew most: ");

    for (i = 0; i < n; i++) {
        if (i > 0) {
            p += ngx_http_malloc_rss_lit(p, last, ", ");
        }

        if (grew[i].zone >= 0 && names[grew[i].zone] != NULL) {
            p += ngx_http_malloc_rss_lit(p, last, "shared zone \"");
            p += ngx_http_malloc_maps_quoted(p, last, names[grew[i].zone], 64);
            p += ngx_http_malloc_rss_lit(p, last, "\"");

        } else {
            name = ngx_http_malloc_rss_part_name(grew[i].part);
            p += ngx_http_malloc_maps_put(p, last, name, strlen(name));
        }

        p += ngx_http_malloc_rss_lit(p, last, " +");
        p += ngx_http_malloc_rss_mib(p, last, grew[i].bytes);
    }

    p += ngx_http_malloc_rss_lit(p, last, ".");
    *p = '\0';

    return p - text;
}


/* "12.3 MiB", truncated toward zero */

static size_t
ngx_http_malloc_rss_mib(char *p, char *last, uint64_t bytes)
{
    int       i;
    char      digits[32];
    size_t    n;
    uint64_t  mib;

    mib = bytes / NGX_HTTP_MALLOC_MIB;

    i = sizeof(digits);

    digits[--i] = 'B';
    digits[--i] = 'i';
    digits[--i] = 'M';
    digits[--i] = ' ';
    digits[--i] = (char) ('0' + (bytes % NGX_HTTP_MALLOC_MIB) * 10
                                / NGX_HTTP_MALLOC_MIB);
    digits[--i] = '.';

    do {
        digits[--i] = (char) ('0' + mib % 10);
        mib /= 10;
    } while (mib != 0);

    n = sizeof(digits) - i;

    return ngx_http_malloc_maps_put(p, last, digits + i, n);
}
