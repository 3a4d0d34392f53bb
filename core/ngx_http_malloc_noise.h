
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * Whether the change of a stack between two sampled heaps is more than
 * sampling noise.  Pure C.
 */


#ifndef _NGX_HTTP_MALLOC_NOISE_H_INCLUDED_
#define _NGX_HTTP_MALLOC_NOISE_H_INCLUDED_


#include <stddef.h>
#include <stdint.h>


/* the confidence that no change called significant is sampling noise */
#define NGX_HTTP_MALLOC_NOISE_LEVEL  0.99


/* one side of a stack (or the sum of several stacks' sides) */
typedef struct {
    double                      samples;    /* sampled objects */
    double                      bytes;      /* unbiased estimate */
    double                      var;        /* its variance */
    double                      held;       /* the variance the other
                                               side has at least, if it
                                               holds the same objects */
    double                      step;       /* the continuity correction:
                                               half the bytes of one
                                               sample that may be missed,
                                               or all for small ones */
} ngx_http_malloc_side_t;


/* a comparison of two heaps, stack by stack */
typedef struct {
    size_t                      compared;   /* stacks with a sample */
    size_t                      testable;   /* of them, those whose
                                               samples could show a
                                               change at the level */
    size_t                      grew;       /* significant changes */
    size_t                      shrank;
    double                      z;          /* the |z| they reach */
    double                      samples;    /* of the heap, in all */
    double                      base_samples;
    double                      net;        /* bytes, every stack */
    double                      grown;      /* bytes, the significant */
    double                      shrunk;     /* growths and shrinkages */
    double                      limit;      /* the smallest growth told
                                               from noise in a stack that
                                               held all the samples */
    double                      floor;      /* the same in one that held
                                               none, of small blocks:
                                               under it none is told */
} ngx_http_malloc_noise_t;


/*
 * Adds a stack's sampled counts, as jemalloc dumps them (not unbiased),
 * to a side; "period" is the mean bytes between samples.
 */
void ngx_http_malloc_noise_add(ngx_http_malloc_side_t *side,
    uint64_t period, double objs, double bytes);

/*
 * The same from unbiased counts (as profile.proto holds them): the mean
 * object size, and so the sampling probability, is their ratio.
 */
void ngx_http_malloc_noise_add_unbiased(ngx_http_malloc_side_t *side,
    uint64_t period, double objs, double bytes);

/*
 * The change's z-score (signed), and in *zmax the largest |z| that the
 * same samples could give, had they all been on one side.
 */
double ngx_http_malloc_noise_z(const ngx_http_malloc_side_t *heap,
    const ngx_http_malloc_side_t *base, double *zmax);

/*
 * Sets nz->testable and nz->z from the zmax of every stack compared
 * (sorted in place): Bonferroni's bound at NGX_HTTP_MALLOC_NOISE_LEVEL
 * over the stacks that could reach it (Tarone's count).
 */
void ngx_http_malloc_noise_level(ngx_http_malloc_noise_t *nz, double *zmax,
    size_t n);

/* -1 (shrank), 0 (noise) or 1 (grew); counted into nz */
int ngx_http_malloc_noise_judge(ngx_http_malloc_noise_t *nz, double z,
    double change);

/*
 * The half-width of the change's interval at the level z: the change is
 * judged beyond the noise exactly when it exceeds it (z standard
 * deviations and the continuity correction); 0 when nothing is random.
 */
double ngx_http_malloc_noise_margin(const ngx_http_malloc_side_t *heap,
    const ngx_http_malloc_side_t *base, double z);

/* adds a side to another: the side of several stacks together */
void ngx_http_malloc_noise_sum(ngx_http_malloc_side_t *to,
    const ngx_http_malloc_side_t *from);

/*
 * The smallest growth that the test at z tells from noise in a stack
 * that holds "held" (NULL: nothing) and grows by more objects of the kind
 * it holds; by objects far smaller than the period, the hardest kind to
 * see, when it holds none.
 */
double ngx_http_malloc_noise_limit(const ngx_http_malloc_side_t *held,
    uint64_t period, double z);

/* "512 B", "17.5 MiB": bytes as people read them, into buf, returned */
char *ngx_http_malloc_noise_size(char *buf, size_t size, double bytes);

/*
 * "with 23 samples now and 24 in the base, a change of small blocks
 * under 5.5 MiB cannot be told from noise; growth is seen from 5.5 MiB in
 * a stack that held nothing, from 13.4 MiB in one that held them all"
 * (nz->floor, nz->limit), NUL-ended within size; its length.
 */
size_t ngx_http_malloc_noise_detection(char *buf, size_t size,
    const ngx_http_malloc_noise_t *nz);

/* "+17.5 MiB, 99%: 9.0 to 26.0 MiB", NUL-ended within size; its length */
size_t ngx_http_malloc_noise_interval(char *buf, size_t size, double change,
    double margin);


#endif /* _NGX_HTTP_MALLOC_NOISE_H_INCLUDED_ */
