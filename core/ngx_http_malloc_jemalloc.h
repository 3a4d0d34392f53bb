
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * The only file that calls mallctl.  jemalloc is found at run time and
 * never linked: linking gives a second, empty heap (see docs/operations.md).
 */


#ifndef _NGX_HTTP_MALLOC_JEMALLOC_H_INCLUDED_
#define _NGX_HTTP_MALLOC_JEMALLOC_H_INCLUDED_


#include <stddef.h>


typedef enum {
    NGX_HTTP_MALLOC_JE_OK = 0,
    NGX_HTTP_MALLOC_JE_NOT_FOUND,
    NGX_HTTP_MALLOC_JE_NOT_ALLOCATOR,
    NGX_HTTP_MALLOC_JE_NO_CONFIG_PROF,
    NGX_HTTP_MALLOC_JE_NO_OPT_PROF
} ngx_http_malloc_je_state_e;


typedef struct {
    ngx_http_malloc_je_state_e  state;
    const char                 *version;
    const char                 *library;
    int                         config_prof;
    int                         opt_prof;
    size_t                      lg_prof_sample;
} ngx_http_malloc_je_info_t;


/* jemalloc's own figures, in bytes (see "stats.*" in jemalloc(3)) */
typedef struct {
    size_t                      allocated;
    size_t                      active;
    size_t                      resident;
    size_t                      mapped;
    size_t                      retained;
    size_t                      metadata;
    size_t                      small;      /* of allocated, in small
                                               size classes */
} ngx_http_malloc_je_stats_t;


/* the range of prof.lg_sample: 64 and more are clamped to 63 silently */
#define NGX_HTTP_MALLOC_LG_SAMPLE_MAX  63


/* looks jemalloc up once per process; later calls return the same answer */
const ngx_http_malloc_je_info_t *ngx_http_malloc_je_probe(void);

/* an error code and a sentence with the fix, for a state other than OK */
const char *ngx_http_malloc_je_code(ngx_http_malloc_je_state_e state);
const char *ngx_http_malloc_je_text(ngx_http_malloc_je_state_e state);

/* these return 0 or an errno value; they require the state OK */
int ngx_http_malloc_je_get_active(int *active);
int ngx_http_malloc_je_set_active(int active);
int ngx_http_malloc_je_lg_sample(size_t *lg);
int ngx_http_malloc_je_dump(const char *path);

/*
 * the bytes that a sampled small object takes beyond its size (its own
 * extent in 5.3.0; 0 from 5.3.1 on, which keeps it in its slab)
 */
int ngx_http_malloc_je_sampled_size(size_t *size);

/* refreshes the "epoch" first, so the figures are current */
int ngx_http_malloc_je_stats(ngx_http_malloc_je_stats_t *st);

/* returns unused dirty pages of every arena to the kernel */
int ngx_http_malloc_je_purge(void);

/* drops all samples; lg_sample < 0 keeps the sampling interval */
int ngx_http_malloc_je_reset(int lg_sample);

/* writes malloc_stats_print()'s JSON report to fd */
int ngx_http_malloc_je_stats_json(int fd);


#endif /* _NGX_HTTP_MALLOC_JEMALLOC_H_INCLUDED_ */
