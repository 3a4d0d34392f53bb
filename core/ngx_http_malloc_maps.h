
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * Which mappings of a process grew: a baseline of its resident mappings
 * from one reading of /proc/self/smaps, and the mappings of a later
 * reading that hold the most RSS beyond it, by address range and name.
 * Bounded: the baseline is a fixed table, the result a few entries.
 * Pure C, no nginx types; the parser of smaps (ngx_http_malloc_rss.c)
 * hands it each mapping.
 */


#ifndef _NGX_HTTP_MALLOC_MAPS_H_INCLUDED_
#define _NGX_HTTP_MALLOC_MAPS_H_INCLUDED_


#include <stddef.h>
#include <stdint.h>


/*
 * The resident mappings a baseline remembers, the largest by RSS: an
 * nginx worker has a few hundred, a worker with LuaJIT or many threads
 * may have more; those left out are the smallest.
 */
#define NGX_HTTP_MALLOC_MAPS_BASE    512

/* the mappings named as having grown, most first */
#define NGX_HTTP_MALLOC_MAPS_TOP     5

/* a mapping that grew by less is no news */
#define NGX_HTTP_MALLOC_MAPS_FLOOR   (1024 * 1024)

/* a name kept, with its NUL: a longer one keeps its end */
#define NGX_HTTP_MALLOC_MAPS_NAME    64

#define NGX_HTTP_MALLOC_MAPS_TEXT_LEN                                         \
    (64 + NGX_HTTP_MALLOC_MAPS_TOP * (2 * NGX_HTTP_MALLOC_MAPS_NAME + 64))


/* what a mapping is, in the words of ngx_http_malloc_maps_kind() */
typedef enum {
    NGX_HTTP_MALLOC_MAP_ANONYMOUS = 0,  /* private, no file, [anon:] */
    NGX_HTTP_MALLOC_MAP_HEAP,           /* [heap], brk() */
    NGX_HTTP_MALLOC_MAP_STACK,          /* [stack] */
    NGX_HTTP_MALLOC_MAP_SHARED,         /* shared, no file: /dev/zero,
                                           SysV, [anon_shmem:] */
    NGX_HTTP_MALLOC_MAP_ZONE,           /* a known range: nginx's zone */
    NGX_HTTP_MALLOC_MAP_FILE,           /* a file, [vdso] and the like */
    NGX_HTTP_MALLOC_MAP_KINDS
} ngx_http_malloc_map_kind_e;


/* one mapping of a reading, as the parser hands it */
typedef struct {
    uintptr_t                   start;
    uintptr_t                   end;
    uint64_t                    rss;
    uint64_t                    id;         /* of its kind and whole name */
    int                         kind;       /* ngx_http_malloc_map_kind_e */
    int                         zone;       /* ZONE: the range's index,
                                               else -1 */
    char                        name[NGX_HTTP_MALLOC_MAPS_NAME];
                                            /* printable, "" for none */
} ngx_http_malloc_mapping_t;


/* a mapping the baseline remembers */
typedef struct {
    uintptr_t                   start;
    uintptr_t                   end;
    uint64_t                    rss;
    uint64_t                    id;
} ngx_http_malloc_maps_entry_t;


typedef struct {
    uint32_t                    n;
    uint32_t                    ready;      /* complete, in address order */
    uint32_t                    smallest;   /* while taken: the index of
                                               the least RSS */
    uint32_t                    left;       /* resident, not remembered */
    uint64_t                    left_max;   /* the most RSS of those */
    ngx_http_malloc_maps_entry_t  e[NGX_HTTP_MALLOC_MAPS_BASE];
} ngx_http_malloc_maps_base_t;


/* a mapping that grew, as published: fixed size, for shared memory */
typedef struct {
    uint64_t                    start;
    uint64_t                    end;
    uint64_t                    rss;        /* now */
    uint64_t                    grew;       /* beyond the baseline's */
    int32_t                     kind;
    int32_t                     zone;
    char                        name[NGX_HTTP_MALLOC_MAPS_NAME];
} ngx_http_malloc_maps_grew_t;


typedef struct {
    uint32_t                    n;
    ngx_http_malloc_maps_grew_t  m[NGX_HTTP_MALLOC_MAPS_TOP];
} ngx_http_malloc_maps_t;


/* a mapping's id and printable name from its path as smaps writes it */
void ngx_http_malloc_maps_name(ngx_http_malloc_mapping_t *m, const char *path,
    size_t len);

/* a baseline taken: begin, each mapping, end */
void ngx_http_malloc_maps_begin(ngx_http_malloc_maps_base_t *base);
void ngx_http_malloc_maps_remember(ngx_http_malloc_maps_base_t *base,
    const ngx_http_malloc_mapping_t *m);
void ngx_http_malloc_maps_end(ngx_http_malloc_maps_base_t *base);

/*
 * A later reading compared: reset, each mapping, trim.  A mapping's
 * growth is its RSS less the RSS the baseline had in its address range
 * under the same kind and name; where it covers part of a remembered
 * mapping (mappings split and merge), that part's share of its RSS by
 * length.  A mapping the baseline has not counts all its RSS.  Trim
 * drops those that grew by less than NGX_HTTP_MALLOC_MAPS_FLOOR.  With a
 * baseline not ready, nothing grew.
 */
void ngx_http_malloc_maps_reset(ngx_http_malloc_maps_t *top);
void ngx_http_malloc_maps_compare(const ngx_http_malloc_maps_base_t *base,
    const ngx_http_malloc_mapping_t *m, ngx_http_malloc_maps_t *top);
void ngx_http_malloc_maps_trim(ngx_http_malloc_maps_t *top);

/* "anonymous", "heap", ... ; "" for none */
const char *ngx_http_malloc_maps_kind(int kind);

/*
 * In words, into text (NGX_HTTP_MALLOC_MAPS_TEXT_LEN bytes, printable
 * ASCII): "Mappings that grew most since <since>: anonymous
 * 7f12a0000000-7f12a4000000 +64.0 MiB, ...".  Zones are named by names
 * (nnames of them, NULL for none).  Its length, 0 when none grew.
 */
size_t ngx_http_malloc_maps_text(const ngx_http_malloc_maps_t *top,
    const char *since, const char *const *names, size_t nnames, char *text);

/*
 * Text pieces, rss.c's too: at most "len" bytes of "s" before "last";
 * the C string "s" as printable ASCII without quotes or backslashes,
 * "max" bytes at most.  How many bytes each wrote.
 */
size_t ngx_http_malloc_maps_put(char *p, char *last, const char *s,
    size_t len);
size_t ngx_http_malloc_maps_quoted(char *p, char *last, const char *s,
    size_t max);


#endif /* _NGX_HTTP_MALLOC_MAPS_H_INCLUDED_ */
