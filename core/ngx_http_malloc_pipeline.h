
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * From dump files to an answer: read the workers' heap_v2 dumps (removing
 * them), merge, subtract a base (growth), drop the allocator's frames,
 * symbolize and encode.  Pure C with its own result codes; the callers
 * turn them into HTTP statuses.
 */


#ifndef _NGX_HTTP_MALLOC_PIPELINE_H_INCLUDED_
#define _NGX_HTTP_MALLOC_PIPELINE_H_INCLUDED_


#include <stddef.h>
#include <stdint.h>

#include "ngx_http_malloc_arena.h"
#include "ngx_http_malloc_heap.h"
#include "ngx_http_malloc_noise.h"
#include "ngx_http_malloc_otlp.h"


#define NGX_HTTP_MALLOC_PIPE_ERR_LEN  (NGX_HTTP_MALLOC_HEAP_ERR_LEN + 128)


typedef enum {
    NGX_HTTP_MALLOC_PIPE_OK = 0,
    NGX_HTTP_MALLOC_PIPE_READ,        /* a dump cannot be read back */
    NGX_HTTP_MALLOC_PIPE_PARSE,       /* a dump is not heap_v2 */
    NGX_HTTP_MALLOC_PIPE_RATE,        /* the sampling rate changed */
    NGX_HTTP_MALLOC_PIPE_NOMEM,
    NGX_HTTP_MALLOC_PIPE_ENCODE,
    NGX_HTTP_MALLOC_PIPE_SYMBOLS,     /* this process's mappings */
    NGX_HTTP_MALLOC_PIPE_WRITE        /* the output file */
} ngx_http_malloc_pipe_rc_e;


typedef enum {
    NGX_HTTP_MALLOC_PIPE_V2 = 0,      /* jemalloc's heap_v2, for jeprof */
    NGX_HTTP_MALLOC_PIPE_LEGACY,      /* gperftools' text, for pprof */
    NGX_HTTP_MALLOC_PIPE_PROTO,       /* symbolized profile.proto */
    NGX_HTTP_MALLOC_PIPE_JSON,      /* the heap viewer's JSON */
    NGX_HTTP_MALLOC_PIPE_OTLP         /* a gzipped OTLP request */
} ngx_http_malloc_pipe_format_e;


typedef struct {
    ngx_http_malloc_arena_t    *arena;
    ngx_http_malloc_heap_t      base;       /* the start of a window */
    ngx_http_malloc_heap_t      heap;
    ngx_http_malloc_mbuf_t      out;        /* the answer */
    unsigned                    format;     /* pipe_format_e */
    unsigned                    seconds;    /* of a growth window, 0: none */
    char                      **snapshot;   /* JSON, OTLP: these files (a
                                               snapshot's), not the dumps */
    char                      **against;    /* JSON: a snapshot's files
                                               to compare with */
    size_t                    (*rename)(const char *sym, char *buf,
                                            size_t size);
                                            /* JSON: the readable form of
                                               a mangled name, NULL: none */
    const ngx_http_malloc_otlp_t *otlp;     /* OTLP: the resource, the
                                               attributes; np is set here */
    unsigned                    payload:1;  /* OTLP: with the profile as
                                               pprof */
    const unsigned char        *original;   /* OTLP: the pprof snapshot
                                               read, NULL: none */
    size_t                      original_len;
    unsigned                    keep:1;     /* the files read are not
                                               removed (the master's) */
    unsigned                    gzip:1;     /* JSON: the answer gzipped */
    unsigned                    subtract:1; /* heap - base, as a window */
    ngx_http_malloc_noise_t     noise;      /* what heap - base rests on,
                                               once encoded */
    const char                **comments;   /* the same in words, once
                                               encoded (not JSON) */
    size_t                      ncomments;
    const char                 *exact_of;   /* what the comparison
                                               estimates, exactly known:
                                               "the master's allocated
                                               bytes since generation 3" */
    int64_t                     exact_change;
    const char                 *caveat;     /* why the samples may mislead,
                                               NULL: nothing known */
    int                         rc;         /* pipe_rc_e of the first
                                               failure */
    char                        error[NGX_HTTP_MALLOC_PIPE_ERR_LEN];
} ngx_http_malloc_pipe_t;


/* 0, or -1 when out of memory */
int ngx_http_malloc_pipe_init(ngx_http_malloc_pipe_t *pl);
void ngx_http_malloc_pipe_free(ngx_http_malloc_pipe_t *pl);

/*
 * The build's memory (the arena: the heaps, the dumps mapped) given back,
 * the answer (out, rc, error) kept; nothing else of the pipe is read
 * again.  Where the build ran, off the event loop: unmapping what a
 * profile of 50,000 stacks built takes some 20 ms.
 */
void ngx_http_malloc_pipe_release(ngx_http_malloc_pipe_t *pl);

/*
 * Reads and removes the NULL-ended "paths", into the base (the start of
 * a window) or the heap; all are removed even when one fails.
 */
int ngx_http_malloc_pipe_read(ngx_http_malloc_pipe_t *pl, char **paths,
    int base);

/*
 * heap - base (with "seconds" or "subtract"), trimmed, symbolized,
 * encoded into out.  A comparison is judged once, by named stack
 * (named.c's named_judge, as pprof/heap.json shows it), and every
 * format holds that judgement: the JSON both sides and each stack's
 * verdict, the others the address stacks of the named stacks that grew,
 * with their change, and the comparison in words.
 */
int ngx_http_malloc_pipe_encode(ngx_http_malloc_pipe_t *pl);

/* the symbol protocol: "0x1a2b+0x3c4d..." in, "0x... name" lines out */
int ngx_http_malloc_pipe_symbols(ngx_http_malloc_pipe_t *pl,
    const unsigned char *body, size_t len);

/* the start of a growth that a written profile is to hold */
typedef struct {
    char                      **paths;      /* its dumps, removed */
    const char                 *exact_of;   /* as in the pipe */
    int64_t                     exact_change;
} ngx_http_malloc_pipe_base_t;


/*
 * A symbolized profile.proto of the dumps at "paths" (removed) written to
 * "out", never over an existing file; with a base, what grew beyond the
 * sampling noise since.  0, or a pipe_rc_e with a reason.
 */
int ngx_http_malloc_pipe_write(char **paths, ngx_http_malloc_pipe_base_t *base,
    const char *out, char *err, size_t len);

/*
 * Loads the symbols of every file mapped in this process (the master
 * does, as root, before it forks); "unreadable" is called for each file
 * whose symbols cannot be read.
 */
void ngx_http_malloc_pipe_preload(void (*unreadable)(void *data,
    const char *path), void *data);

const char *ngx_http_malloc_pipe_code(int rc);


#endif /* _NGX_HTTP_MALLOC_PIPELINE_H_INCLUDED_ */
