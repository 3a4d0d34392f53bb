
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * Profiles with their frames named, for the heap viewer: from a heap
 * (symbolized by a resolver) or from a gzipped profile.proto (a
 * snapshot), merged stack by stack, optionally against a base, and
 * written as JSON: the distinct readable names once, with the symbols
 * they were demangled from and the files they lie in, the call tree of
 * all the stacks as nodes, each stack as the node of its allocating
 * function, and its values.  Pure C; all memory comes from an arena.
 */


#ifndef _NGX_HTTP_MALLOC_NAMED_H_INCLUDED_
#define _NGX_HTTP_MALLOC_NAMED_H_INCLUDED_


#include <stddef.h>
#include <stdint.h>

#include "ngx_http_malloc_arena.h"
#include "ngx_http_malloc_heap.h"
#include "ngx_http_malloc_noise.h"
#include "ngx_http_malloc_pprof.h"
#include "ngx_http_malloc_symbol.h"


#define NGX_HTTP_MALLOC_NAMED_ERR_LEN  256

/* inuse_space, inuse_objects, alloc_space, alloc_objects */
#define NGX_HTTP_MALLOC_NAMED_VALUES   4


/* what a file that frames lie in is to an operator */
typedef enum {
    NGX_HTTP_MALLOC_FILE_LIBRARY = 0,
    NGX_HTTP_MALLOC_FILE_BINARY,        /* the nginx executable */
    NGX_HTTP_MALLOC_FILE_MODULE         /* ngx_*_module.so, load_module's */
} ngx_http_malloc_file_kind_e;


/*
 * The readable form of a symbol into buf (NUL-ended, within size), its
 * length; 0: the symbol is to be shown as it is.
 */
typedef size_t (*ngx_http_malloc_rename_pt)(const char *sym, char *buf,
    size_t size);


typedef struct {
    const char                 *path;
    const char                 *build_id;   /* lowercase hex, or NULL */
    unsigned                    kind;       /* file_kind_e */
} ngx_http_malloc_nfile_t;


/* an open-addressing table: key -> index + 1 (0: empty) */
typedef struct {
    uint64_t                    key;
    uint32_t                    value;
} ngx_http_malloc_fslot_t;


typedef struct {
    ngx_http_malloc_fslot_t    *slots;
    size_t                      cap;        /* a power of two */
    size_t                      n;
} ngx_http_malloc_ftable_t;


typedef struct {
    uint32_t                   *ids;        /* name indexes, root first */
    uint32_t                    n;
    int64_t                     v[NGX_HTTP_MALLOC_NAMED_VALUES];
    int64_t                     base[NGX_HTTP_MALLOC_NAMED_VALUES];
    ngx_http_malloc_side_t      side[2];    /* the samples of v, base */
} ngx_http_malloc_nstack_t;


typedef struct {
    ngx_http_malloc_arena_t    *arena;
    ngx_http_malloc_rename_pt   rename;     /* NULL: names as they are */
    const char                **names;      /* readable, distinct */
    const char                **raws;       /* the symbol of a renamed
                                               name, else NULL */
    int32_t                    *name_files; /* its file, -1: not known */
    size_t                      nnames;
    size_t                      names_cap;
    ngx_http_malloc_ftable_t    byname;     /* hash of a name -> name */
    ngx_http_malloc_nfile_t    *files;
    size_t                      nfiles;
    ngx_http_malloc_nstack_t   *stacks;
    size_t                      nstacks;
    size_t                      stacks_cap;
    ngx_http_malloc_ftable_t    bystack;    /* hash of ids -> stack */
    uint64_t                    period;     /* of the first profile added */
    const char                 *exact_of;   /* what the exact change is
                                               of, NULL: not known */
    int64_t                     exact_change;
    const char                 *caveat;     /* why the comparison may
                                               mislead, NULL: nothing */
    ngx_http_malloc_noise_t     noise;      /* the comparison, judged */
    signed char                *judged;     /* each stack: 1 grew, -1
                                               shrank, 0 within the noise */
    double                     *margins;    /* each stack's change is
                                               known to +- this, bytes */
    unsigned                    alloc:1;    /* alloc_* values are known */
    unsigned                    has_base:1;
    unsigned                    compared:1; /* named_judge() done */
} ngx_http_malloc_named_t;


void ngx_http_malloc_named_init(ngx_http_malloc_named_t *np,
    ngx_http_malloc_arena_t *arena);

/*
 * Adds the stacks of a heap (unbiased), or of a gzipped profile.proto as
 * the module writes them, to the profile, or to its base.  The resolver
 * names an address and gives its index in maps (the first map is the
 * executable's).  0, or -1 with a reason in err.
 */
int ngx_http_malloc_named_heap(ngx_http_malloc_named_t *np,
    const ngx_http_malloc_heap_t *heap, const ngx_http_malloc_map_t *maps,
    size_t nmaps, ngx_http_malloc_resolve_pt resolve, void *data, int base,
    char *err);
int ngx_http_malloc_named_pprof(ngx_http_malloc_named_t *np,
    const unsigned char *gz, size_t len, int base, char *err);

/*
 * named_heap() that also tells, in which[i], the named stack that heap
 * stack i went into (which: heap->nstacks entries, or NULL)
 */
int ngx_http_malloc_named_heap_map(ngx_http_malloc_named_t *np,
    const ngx_http_malloc_heap_t *heap, const ngx_http_malloc_map_t *maps,
    size_t nmaps, ngx_http_malloc_resolve_pt resolve, void *data, int base,
    uint32_t *which, char *err);

/*
 * The comparison of the profile with its base, made once for every form
 * of the answer: each named stack judged against the sampling noise
 * (np->judged), its margin at the same level (np->margins), and what the
 * comparison rests on and can see (np->noise, with its detection limit
 * and floor; see ngx_http_malloc_noise.h).  0, or -1 out of memory.
 */
int ngx_http_malloc_named_judge(ngx_http_malloc_named_t *np);

/*
 * {"period", "seconds", "types", "names", "raw", "files", "name_files",
 * "nodes", "stacks", "values", "samples"[, "base_values", "base_samples",
 * "significant", "margins", "comparison"]}: types are inuse_space,
 * inuse_objects and, when known, alloc_space, alloc_objects; "raw" the
 * symbol of each
 * renamed name, else null; "files" {path, kind} and each name's file
 * index, -1 unknown; "nodes" the call tree, two integers per node (its
 * name, and how many nodes back its parent is, 0: a child of the root),
 * depth first; "stacks" the node of each stack's allocating function;
 * "samples" the sampled objects of each stack; with a base, its rows as
 * "values" and "samples", each stack's change judged against the sampling
 * noise (1 grew, -1 shrank, 0 within it), its "margins", and what the
 * comparison rests on and can see (named_judge(), made here if it was
 * not yet).
 */
int ngx_http_malloc_named_write(ngx_http_malloc_named_t *np,
    uint64_t seconds, ngx_http_malloc_mbuf_t *out, char *err);


#endif /* _NGX_HTTP_MALLOC_NAMED_H_INCLUDED_ */
