
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * Where a process's resident memory goes: /proc/self/smaps, the known
 * ranges of nginx's shared zones and jemalloc's figures, turned into parts
 * that add up to the kernel's Rss.  Pure C, no nginx types, so that unit
 * tests and fuzzers can drive it without a server.
 */


#ifndef _NGX_HTTP_MALLOC_RSS_H_INCLUDED_
#define _NGX_HTTP_MALLOC_RSS_H_INCLUDED_


#include <stddef.h>
#include <stdint.h>

#include "ngx_http_malloc_jemalloc.h"
#include "ngx_http_malloc_maps.h"


/* shared zones told apart by name; the memory of more counts as shared */
#define NGX_HTTP_MALLOC_RSS_ZONES    16

/* a line of smaps is kept up to this; the rest of a longer one is skipped */
#define NGX_HTTP_MALLOC_RSS_LINE     512

/* every figure saturates here, so that it stays a JSON integer */
#define NGX_HTTP_MALLOC_RSS_MAX      ((uint64_t) INT64_MAX)

/*
 * The rule for "the growth is outside malloc": RSS grew by at least this
 * since the reading compared with, and the allocator's memory by its own
 * figure (below) by less than half of that growth.
 */
#define NGX_HTTP_MALLOC_RSS_GROWTH   (32 * 1024 * 1024)

/* the parts named in the sentence, biggest growth first */
#define NGX_HTTP_MALLOC_RSS_GREW     3

#define NGX_HTTP_MALLOC_RSS_TEXT_LEN 512


/* a known range: a shared zone's mapping */
typedef struct {
    uintptr_t                   start;
    size_t                      size;
} ngx_http_malloc_rss_range_t;


/*
 * bytes; rss is the sum of the parts, allocated to file (zone[] is in
 * shared_zones); resident is jemalloc's own stats.resident as read, not a
 * part: it may count pages the kernel does not (never touched)
 */
typedef struct {
    uint64_t                    rss;
    uint64_t                    resident;
    uint64_t                    allocated;
    uint64_t                    allocator_overhead;
    uint64_t                    shared_zones;
    uint64_t                    other_shared;
    uint64_t                    other_anonymous;
    uint64_t                    stack;
    uint64_t                    file;
    uint64_t                    zone[NGX_HTTP_MALLOC_RSS_ZONES];
    uint32_t                    nzones;
    uint32_t                    mappings;   /* of smaps */
    uint32_t                    flawed;     /* lines that made no sense */
} ngx_http_malloc_rss_t;


/* the parts that are single figures, in the order of the JSON and metrics */
typedef enum {
    NGX_HTTP_MALLOC_RSS_ALLOCATED = 0,
    NGX_HTTP_MALLOC_RSS_OVERHEAD,
    NGX_HTTP_MALLOC_RSS_SHARED_ZONES,
    NGX_HTTP_MALLOC_RSS_OTHER_SHARED,
    NGX_HTTP_MALLOC_RSS_OTHER_ANONYMOUS,
    NGX_HTTP_MALLOC_RSS_STACK,
    NGX_HTTP_MALLOC_RSS_FILE,
    NGX_HTTP_MALLOC_RSS_PARTS
} ngx_http_malloc_rss_part_e;


/* the parser's state, fed smaps in pieces of any size */
typedef struct {
    const ngx_http_malloc_rss_range_t  *ranges;
    uint32_t                    nranges;
    int                         kind;       /* of the current mapping */
    int                         range;
    uint64_t                    anonymous;  /* private anonymous Rss */
    ngx_http_malloc_rss_t       out;
    ngx_http_malloc_maps_base_t  *base;     /* NULL: no mappings kept */
    ngx_http_malloc_maps_t     *top;        /* NULL: taking the baseline */
    ngx_http_malloc_mapping_t       map;        /* the current mapping */
    int                         mapped;     /* map holds one */
    size_t                      len;
    int                         overlong;
    char                        line[NGX_HTTP_MALLOC_RSS_LINE];
} ngx_http_malloc_rss_parser_t;


/* a part that grew, for the sentence */
typedef struct {
    int                         part;       /* ngx_http_malloc_rss_part_e */
    int                         zone;       /* SHARED_ZONES: its index,
                                               -1: the zones together */
    uint64_t                    bytes;
} ngx_http_malloc_rss_grew_t;


/* ranges beyond NGX_HTTP_MALLOC_RSS_ZONES are not told apart */
void ngx_http_malloc_rss_init(ngx_http_malloc_rss_parser_t *p,
    const ngx_http_malloc_rss_range_t *ranges, size_t nranges);
/*
 * The mappings too: with top NULL, the reading is taken as the baseline;
 * else compared with it, the mappings that grew most into top (see
 * ngx_http_malloc_maps.h).  Both live until done.
 */
void ngx_http_malloc_rss_maps(ngx_http_malloc_rss_parser_t *p,
    ngx_http_malloc_maps_base_t *base, ngx_http_malloc_maps_t *top);
void ngx_http_malloc_rss_feed(ngx_http_malloc_rss_parser_t *p,
    const char *data, size_t len);
void ngx_http_malloc_rss_done(ngx_http_malloc_rss_parser_t *p,
    const ngx_http_malloc_je_stats_t *je, ngx_http_malloc_rss_t *out);

/*
 * The whole of an open smaps file, read with a buffer on the stack; base
 * and top as for ngx_http_malloc_rss_maps(), base NULL for none
 */
int ngx_http_malloc_rss_read(int fd,
    const ngx_http_malloc_rss_range_t *ranges, size_t nranges,
    const ngx_http_malloc_je_stats_t *je, ngx_http_malloc_maps_base_t *base,
    ngx_http_malloc_maps_t *top, ngx_http_malloc_rss_t *out);

/* the kernel's totals of a process, from /proc/<pid>/status, in bytes */
typedef struct {
    uint64_t                    anon;       /* RssAnon */
    uint64_t                    file;       /* RssFile */
    uint64_t                    shmem;      /* RssShmem */
} ngx_http_malloc_rss_kernel_t;

/*
 * /proc/<pid>/status, whole in "text" (any process may read another's,
 * where its smaps needs ptrace's permission): 0, or -1 when one of the
 * three lines is missing or makes no sense.
 */
int ngx_http_malloc_rss_status(const char *text, size_t len,
    ngx_http_malloc_rss_kernel_t *k);

/*
 * A reading's parts made to agree with the kernel's later totals of the
 * same heap (the master's start, read before nginx daemonized, and its
 * totals once it had): file and shared memory take the kernel's figures,
 * the allocator's parts stay and the anonymous rest is what the kernel
 * counts beyond them, so the parts add up to the new rss.
 */
void ngx_http_malloc_rss_rebase(ngx_http_malloc_rss_t *rss,
    const ngx_http_malloc_rss_kernel_t *k);

const char *ngx_http_malloc_rss_part_name(int part);
uint64_t ngx_http_malloc_rss_part(const ngx_http_malloc_rss_t *rss,
    int part);

/*
 * The allocator's memory by its own figure: jemalloc's resident, or its
 * share of the parts where jemalloc gave none.  Its change between two
 * readings is the allocator's growth, and what RSS is beyond it the
 * memory outside malloc: another allocator's memory (LuaJIT's) never
 * counts as the allocator's, even where the parts had to give it the
 * anonymous memory jemalloc counted and the kernel did not.  The memory
 * outside is less than 0 where jemalloc counts more than the kernel does.
 */
uint64_t ngx_http_malloc_rss_allocator(const ngx_http_malloc_rss_t *rss);
int64_t ngx_http_malloc_rss_allocator_growth(const ngx_http_malloc_rss_t *from,
    const ngx_http_malloc_rss_t *to);
int64_t ngx_http_malloc_rss_outside_bytes(const ngx_http_malloc_rss_t *rss);

/*
 * Whether the growth from "from" to "to" is outside the allocator, by
 * the rule above: the number of parts that grew listed in "grew" (at most
 * NGX_HTTP_MALLOC_RSS_GREW), 0 when the rule does not apply.  Zones are
 * compared one by one only when "zones" is set: both readings have the
 * same zones.
 */
size_t ngx_http_malloc_rss_outside(const ngx_http_malloc_rss_t *from,
    const ngx_http_malloc_rss_t *to, int zones,
    ngx_http_malloc_rss_grew_t *grew);

/*
 * The same in words, into text (NGX_HTTP_MALLOC_RSS_TEXT_LEN bytes,
 * printable ASCII whatever the names hold); "since" says since when, the
 * zones' names may be NULL.  Its length, 0 when the rule does not apply.
 */
size_t ngx_http_malloc_rss_sentence(const ngx_http_malloc_rss_t *from,
    const ngx_http_malloc_rss_t *to, const char *since,
    const char *const *names, char *text);


#endif /* _NGX_HTTP_MALLOC_RSS_H_INCLUDED_ */
