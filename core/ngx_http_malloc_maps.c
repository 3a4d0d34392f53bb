
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * The mappings that grew.  A heap profile cannot show memory that the
 * allocator did not hand out (a library's own mmap, as LuaJIT's, a
 * thread's stack, a zone, a mapped file): the parts of RSS say which
 * kind grew, and this says which mapping, so that an operator can find
 * it in /proc/<pid>/smaps and in the library that mapped it.
 *
 * A baseline remembers the resident mappings of one reading, the largest
 * NGX_HTTP_MALLOC_MAPS_BASE by RSS, in address order.  A mapping of a
 * later reading is matched by address range and by an id of its kind
 * and name, so that a file mapped where anonymous memory was is new:
 * every remembered mapping it overlaps gives its share of its RSS, all
 * of it where covered whole, by length where covered in part (the
 * kernel merges neighbouring anonymous mappings and splits one at an
 * mprotect()).  Memory not remembered (a mapping that had no RSS then)
 * counts as grown.  A full table leaves out the smallest mappings, and
 * cannot tell one of them from a new mapping: one that overlaps nothing
 * remembered is taken for one left out, less the most RSS those had, so
 * that thousands of small mappings never pass for growth; a big new
 * mapping is then told short by that much.
 *
 * Owns: the baseline's table, the ranking and the words.  Calls: nothing
 * of the module (pure C).
 */


#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ngx_http_malloc_maps.h"


#define NGX_HTTP_MALLOC_MAPS_MIB     (1024 * 1024)

#define ngx_http_malloc_maps_lit(p, last, s)                                  \
    ngx_http_malloc_maps_put(p, last, s, sizeof(s) - 1)


static uint64_t ngx_http_malloc_maps_add(uint64_t a, uint64_t b);
static void ngx_http_malloc_maps_smallest(ngx_http_malloc_maps_base_t *base);
static int ngx_http_malloc_maps_cmp(const void *one, const void *two);
static uint64_t ngx_http_malloc_maps_before(
    const ngx_http_malloc_maps_base_t *base,
    const ngx_http_malloc_mapping_t *m, int *matched);
static size_t ngx_http_malloc_maps_words(char *p, char *last,
    const ngx_http_malloc_maps_grew_t *g, const char *const *names,
    size_t nnames);
static char ngx_http_malloc_maps_printable(char c);


static const char  *ngx_http_malloc_maps_kinds[] = {
    "anonymous",
    "heap",
    "stack",
    "shared",
    "zone",
    "file"
};


static uint64_t
ngx_http_malloc_maps_add(uint64_t a, uint64_t b)
{
    return (b > UINT64_MAX - a) ? UINT64_MAX : a + b;
}


/*
 * The id is FNV-1a of the kind and the whole name as read; the name kept
 * is its end where it is long ("...lib/x86_64-linux-gnu/libluajit.so"):
 * the file's own name says more than the folders above it.
 */

void
ngx_http_malloc_maps_name(ngx_http_malloc_mapping_t *m, const char *path,
    size_t len)
{
    size_t       i, n, skip;
    uint64_t     h;
    const char  *s;

    h = 0xcbf29ce484222325ULL;
    h = (h ^ (unsigned char) m->kind) * 0x100000001b3ULL;

    for (i = 0; i < len; i++) {
        h = (h ^ (unsigned char) path[i]) * 0x100000001b3ULL;
    }

    m->id = h;

    n = 0;
    skip = 0;
    s = path;

    if (len > NGX_HTTP_MALLOC_MAPS_NAME - 1) {
        memcpy(m->name, "...", 3);
        n = 3;
        skip = len - (NGX_HTTP_MALLOC_MAPS_NAME - 1 - 3);
    }

    for (i = skip; i < len; i++) {
        m->name[n++] = ngx_http_malloc_maps_printable(s[i]);
    }

    m->name[n] = '\0';
}


void
ngx_http_malloc_maps_begin(ngx_http_malloc_maps_base_t *base)
{
    base->n = 0;
    base->ready = 0;
    base->smallest = 0;
    base->left = 0;
    base->left_max = 0;
}


/* a full table gives up its smallest for a bigger one */

void
ngx_http_malloc_maps_remember(ngx_http_malloc_maps_base_t *base,
    const ngx_http_malloc_mapping_t *m)
{
    uint64_t                       out;
    ngx_http_malloc_maps_entry_t  *e;

    if (base->ready || m->rss == 0 || m->end <= m->start) {
        /* no RSS: whatever it holds later is growth, as it should be */
        return;
    }

    if (base->n < NGX_HTTP_MALLOC_MAPS_BASE) {
        e = &base->e[base->n++];

    } else {
        e = &base->e[base->smallest];
        out = (m->rss > e->rss) ? e->rss : m->rss;

        base->left++;

        if (out > base->left_max) {
            base->left_max = out;
        }

        if (m->rss <= e->rss) {
            return;
        }
    }

    e->start = m->start;
    e->end = m->end;
    e->rss = m->rss;
    e->id = m->id;

    if (base->n == NGX_HTTP_MALLOC_MAPS_BASE) {
        ngx_http_malloc_maps_smallest(base);
    }
}


static void
ngx_http_malloc_maps_smallest(ngx_http_malloc_maps_base_t *base)
{
    uint32_t  i, s;

    s = 0;

    for (i = 1; i < base->n; i++) {
        if (base->e[i].rss < base->e[s].rss) {
            s = i;
        }
    }

    base->smallest = s;
}


void
ngx_http_malloc_maps_end(ngx_http_malloc_maps_base_t *base)
{
    qsort(base->e, base->n, sizeof(ngx_http_malloc_maps_entry_t),
          ngx_http_malloc_maps_cmp);

    base->ready = 1;
}


static int
ngx_http_malloc_maps_cmp(const void *one, const void *two)
{
    const ngx_http_malloc_maps_entry_t  *a = one;
    const ngx_http_malloc_maps_entry_t  *b = two;

    if (a->start != b->start) {
        return (a->start < b->start) ? -1 : 1;
    }

    if (a->end != b->end) {
        return (a->end < b->end) ? -1 : 1;
    }

    return 0;
}


void
ngx_http_malloc_maps_reset(ngx_http_malloc_maps_t *top)
{
    top->n = 0;
}


void
ngx_http_malloc_maps_compare(const ngx_http_malloc_maps_base_t *base,
    const ngx_http_malloc_mapping_t *m, ngx_http_malloc_maps_t *top)
{
    int                           matched;
    uint32_t                      i, j;
    uint64_t                      grew, before;
    ngx_http_malloc_maps_grew_t  *g;

    if (!base->ready || m->rss == 0 || m->end <= m->start
        || top->n > NGX_HTTP_MALLOC_MAPS_TOP)
    {
        return;
    }

    before = ngx_http_malloc_maps_before(base, m, &matched);

    if (!matched && base->left > 0) {
        before = base->left_max;
    }

    if (m->rss <= before) {
        return;
    }

    grew = m->rss - before;

    /* in order, most first; an equal growth keeps the one found first */

    for (i = 0; i < top->n && top->m[i].grew >= grew; i++) {
        /* void */
    }

    if (i == NGX_HTTP_MALLOC_MAPS_TOP) {
        return;
    }

    if (top->n < NGX_HTTP_MALLOC_MAPS_TOP) {
        top->n++;
    }

    for (j = top->n - 1; j > i; j--) {
        top->m[j] = top->m[j - 1];
    }

    g = &top->m[i];

    g->start = m->start;
    g->end = m->end;
    g->rss = m->rss;
    g->grew = grew;
    g->kind = m->kind;
    g->zone = m->zone;
    memcpy(g->name, m->name, NGX_HTTP_MALLOC_MAPS_NAME);
    g->name[NGX_HTTP_MALLOC_MAPS_NAME - 1] = '\0';
}


/*
 * The RSS the baseline had where "m" is now, under its id.  The table
 * is in address order and its mappings do not overlap (smaps never
 * lists two at one address), so those that overlap "m" are the ones
 * just below the first that starts at or past its end.  *matched: some
 * remembered mapping of its id overlaps it.
 */

static uint64_t
ngx_http_malloc_maps_before(const ngx_http_malloc_maps_base_t *base,
    const ngx_http_malloc_mapping_t *m, int *matched)
{
    uint32_t                             lo, hi, mid;
    double                               d;
    uint64_t                             before, share;
    uintptr_t                            from, to;
    const ngx_http_malloc_maps_entry_t  *e;

    lo = 0;
    hi = base->n;

    while (lo < hi) {
        mid = lo + (hi - lo) / 2;

        if (base->e[mid].start < m->end) {
            lo = mid + 1;

        } else {
            hi = mid;
        }
    }

    before = 0;
    *matched = 0;

    while (lo-- > 0) {
        e = &base->e[lo];

        if (e->end <= m->start) {
            break;
        }

        if (e->id != m->id) {
            /* another mapping was there: what is here now is new */
            continue;
        }

        from = (e->start > m->start) ? e->start : m->start;
        to = (e->end < m->end) ? e->end : m->end;

        if (to <= from) {
            continue;
        }

        *matched = 1;

        if (from == e->start && to == e->end) {
            share = e->rss;

        } else {
            d = (double) e->rss * (double) (to - from)
                / (double) (e->end - e->start);

            /* rounding may reach 2^64, which no uint64_t holds */
            share = (d < (double) e->rss) ? (uint64_t) d : e->rss;
        }

        before = ngx_http_malloc_maps_add(before, share);
    }

    return before;
}


void
ngx_http_malloc_maps_trim(ngx_http_malloc_maps_t *top)
{
    if (top->n > NGX_HTTP_MALLOC_MAPS_TOP) {
        top->n = NGX_HTTP_MALLOC_MAPS_TOP;
    }

    while (top->n > 0 && top->m[top->n - 1].grew < NGX_HTTP_MALLOC_MAPS_FLOOR)
    {
        top->n--;
    }
}


const char *
ngx_http_malloc_maps_kind(int kind)
{
    if (kind < 0 || kind >= NGX_HTTP_MALLOC_MAP_KINDS) {
        return "";
    }

    return ngx_http_malloc_maps_kinds[kind];
}


size_t
ngx_http_malloc_maps_text(const ngx_http_malloc_maps_t *top,
    const char *since, const char *const *names, size_t nnames, char *text)
{
    char      *p, *last;
    size_t     i, n;
    uint64_t   mib;
    char       num[64];

    n = (top->n > NGX_HTTP_MALLOC_MAPS_TOP) ? NGX_HTTP_MALLOC_MAPS_TOP
                                             : top->n;

    if (n == 0) {
        text[0] = '\0';
        return 0;
    }

    p = text;
    last = text + NGX_HTTP_MALLOC_MAPS_TEXT_LEN - 1;

    p += ngx_http_malloc_maps_lit(p, last, "Mappings that grew most since ");
    p += ngx_http_malloc_maps_quoted(p, last, since, 64);
    p += ngx_http_malloc_maps_lit(p, last, ": ");

    for (i = 0; i < n; i++) {
        if (i > 0) {
            p += ngx_http_malloc_maps_lit(p, last, ", ");
        }

        p += ngx_http_malloc_maps_words(p, last, &top->m[i], names, nnames);

        /* as smaps writes the range, to be found there */

        mib = top->m[i].grew / NGX_HTTP_MALLOC_MAPS_MIB;

        (void) snprintf(num, sizeof(num), " %llx-%llx +%llu.%llu MiB",
                        (unsigned long long) top->m[i].start,
                        (unsigned long long) top->m[i].end,
                        (unsigned long long) mib,
                        (unsigned long long)
                        ((top->m[i].grew % NGX_HTTP_MALLOC_MAPS_MIB) * 10
                         / NGX_HTTP_MALLOC_MAPS_MIB));

        p += ngx_http_malloc_maps_put(p, last, num, strlen(num));
    }

    p += ngx_http_malloc_maps_lit(p, last, ".");
    *p = '\0';

    return p - text;
}


/*
 * "anonymous", "anonymous [anon:lua]", "[heap]", "/usr/lib/x.so",
 * "shared /dev/zero (deleted)", "shared zone \"one\""
 */

static size_t
ngx_http_malloc_maps_words(char *p, char *last,
    const ngx_http_malloc_maps_grew_t *g, const char *const *names,
    size_t nnames)
{
    char        *start;
    size_t       len;
    const char  *kind;

    start = p;
    kind = ngx_http_malloc_maps_kind(g->kind);
    len = strnlen(g->name, NGX_HTTP_MALLOC_MAPS_NAME - 1);

    if (g->kind == NGX_HTTP_MALLOC_MAP_ZONE) {
        p += ngx_http_malloc_maps_lit(p, last, "shared zone");

        if (names != NULL && g->zone >= 0 && (size_t) g->zone < nnames
            && names[g->zone] != NULL)
        {
            p += ngx_http_malloc_maps_lit(p, last, " \"");
            p += ngx_http_malloc_maps_quoted(p, last, names[g->zone], 64);
            p += ngx_http_malloc_maps_lit(p, last, "\"");
            return p - start;
        }

    } else if (len == 0 || g->kind == NGX_HTTP_MALLOC_MAP_ANONYMOUS
               || g->kind == NGX_HTTP_MALLOC_MAP_SHARED)
    {
        p += ngx_http_malloc_maps_put(p, last, kind, strlen(kind));
    }

    if (len > 0) {
        if (p != start) {
            p += ngx_http_malloc_maps_lit(p, last, " ");
        }

        p += ngx_http_malloc_maps_quoted(p, last, g->name, len);
    }

    return p - start;
}


size_t
ngx_http_malloc_maps_put(char *p, char *last, const char *s, size_t len)
{
    size_t  i;

    for (i = 0; i < len && p + i < last; i++) {
        p[i] = s[i];
    }

    return i;
}


size_t
ngx_http_malloc_maps_quoted(char *p, char *last, const char *s, size_t max)
{
    size_t  i;

    for (i = 0; s[i] != '\0' && i < max && p + i < last; i++) {
        p[i] = ngx_http_malloc_maps_printable(s[i]);
    }

    return i;
}


/*
 * What may stand in a quoted name: "?" for a quote (0x22), a backslash
 * (0x5c) or a byte that is not printable ASCII.
 */

static char
ngx_http_malloc_maps_printable(char c)
{
    return (c >= 0x20 && c < 0x7f && c != 0x22 && c != 0x5c) ? c : '?';
}
