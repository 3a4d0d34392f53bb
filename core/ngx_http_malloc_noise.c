
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * jemalloc samples an allocation of s bytes with the probability
 * q = 1 - exp(-s / period) and a heap profile scales each sample up by
 * 1 / q.  Between two heaps a stack's estimate moves by chance alone: the
 * variance of one side is the sum over its samples of (s / q)^2 (1 - q),
 * which for small objects is the Poisson variance of the count times the
 * period squared, and for objects much larger than the period is nil
 * (they are always sampled).  A change is z = (|change| - one sample's
 * random part) / sqrt(var(heap) + var(base)), a normal test with a
 * continuity correction; samples that stay in both heaps count on both
 * sides, which only makes the test stricter.
 *
 * A large object is sampled almost always, but not always: a 1 MiB
 * object at the default period is missed one time in seven.  Seen on one
 * side only, it is one sample that its own side's variance says little
 * about, so each sample also stands for an object that the other side
 * holds too if nothing changed (its variance there is at least
 * n u^2 q (1 - q)), and the correction is half a sample, as for any
 * count of few events.  Small objects keep a whole sample's correction:
 * their counts are Poisson's, for which that is the stricter.
 *
 * Many stacks are compared at once, so the level is for the family:
 * Bonferroni's bound, divided not by every stack but by the stacks whose
 * samples could reach it at all (Tarone): a stack seen once on one side
 * cannot, and a profile of 50,000 such stacks is not made deaf by them.
 *
 * What a comparison can see follows from the same test.  A change's
 * interval at the level is the change plus or minus z standard
 * deviations and the correction (its margin): a stack is judged grown
 * exactly when its interval lies above zero.  The detection limit is
 * the smallest growth whose z reaches the level, the growth's own
 * samples counted: of the kind a stack holds, on top of what it holds,
 * or, for a stack that held nothing, of objects far below the period,
 * whose counts vary the most (larger objects are seen sooner).
 *
 * Owns: the test.  Calls: nothing (pure C, libm).
 */


#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ngx_http_malloc_noise.h"


/* a change that no sampling could make: the objects are always sampled */
#define NGX_HTTP_MALLOC_NOISE_SURE  1e9

/* objects missed less often than this are as good as always sampled */
#define NGX_HTTP_MALLOC_NOISE_MISS  1e-6


static double ngx_http_malloc_noise_sd(const ngx_http_malloc_side_t *heap,
    const ngx_http_malloc_side_t *base, double *step);
static double ngx_http_malloc_noise_grown(const ngx_http_malloc_side_t *held,
    const ngx_http_malloc_side_t *one, double k);
static const char *ngx_http_malloc_noise_unit(double bytes, double *div,
    int *digits);
static double ngx_http_malloc_noise_quantile(double alpha);
static size_t ngx_http_malloc_noise_reach(const double *zmax, size_t n,
    double z);
static int ngx_http_malloc_noise_desc(const void *a, const void *b);


void
ngx_http_malloc_noise_add(ngx_http_malloc_side_t *side, uint64_t period,
    double objs, double bytes)
{
    double  mean, q, u, step;

    if (!(objs > 0) || !(bytes > 0)) {
        return;
    }

    mean = bytes / objs;
    q = (period > 1) ? -expm1(-mean / (double) period) : 1.0;

    if (!(q > 0)) {
        return;
    }

    u = mean / q;

    side->samples += objs;
    side->bytes += objs * u;
    side->var += objs * u * u * (1.0 - q);
    side->held += objs * u * u * q * (1.0 - q);

    step = u * (1.0 - q);

    if (1.0 - q >= NGX_HTTP_MALLOC_NOISE_MISS && step < u / 2) {
        step = u / 2;
    }

    if (step > side->step) {
        side->step = step;
    }
}


void
ngx_http_malloc_noise_add_unbiased(ngx_http_malloc_side_t *side,
    uint64_t period, double objs, double bytes)
{
    double  mean, q;

    if (!(objs > 0) || !(bytes > 0)) {
        return;
    }

    mean = bytes / objs;
    q = (period > 1) ? -expm1(-mean / (double) period) : 1.0;

    ngx_http_malloc_noise_add(side, period, objs * q, objs * q * mean);
}


double
ngx_http_malloc_noise_z(const ngx_http_malloc_side_t *heap,
    const ngx_http_malloc_side_t *base, double *zmax)
{
    double  change, sd, step, z;

    change = heap->bytes - base->bytes;
    sd = ngx_http_malloc_noise_sd(heap, base, &step);

    /* counts beyond any real heap (a hostile dump): nothing to judge */

    if (!isfinite(sd) || !isfinite(change)) {
        *zmax = 0;
        return 0;
    }

    if (!(sd > 0)) {
        /* nothing random: only objects that are always sampled */
        *zmax = (heap->bytes + base->bytes > 0) ? NGX_HTTP_MALLOC_NOISE_SURE
                                                : 0;
        return (change > 0) ? NGX_HTTP_MALLOC_NOISE_SURE
                            : (change < 0) ? -NGX_HTTP_MALLOC_NOISE_SURE : 0;
    }

    *zmax = (heap->bytes + base->bytes - step) / sd;

    if (*zmax < 0) {
        *zmax = 0;
    }

    z = (fabs(change) - step) / sd;

    if (z <= 0) {
        return 0;
    }

    return (change > 0) ? z : -z;
}


/*
 * The standard deviation of a change, and in *step its continuity
 * correction: both sides hold the objects of the side that holds more
 */

static double
ngx_http_malloc_noise_sd(const ngx_http_malloc_side_t *heap,
    const ngx_http_malloc_side_t *base, double *step)
{
    double  var, held;

    *step = (heap->step > base->step) ? heap->step : base->step;

    var = heap->var + base->var;
    held = 2 * ((heap->held > base->held) ? heap->held : base->held);

    return sqrt((held > var) ? held : var);
}


void
ngx_http_malloc_noise_level(ngx_http_malloc_noise_t *nz, double *zmax,
    size_t n)
{
    size_t  lo, hi, k;
    double  alpha;

    alpha = 1.0 - NGX_HTTP_MALLOC_NOISE_LEVEL;

    if (n > 1) {
        qsort(zmax, n, sizeof(double), ngx_http_malloc_noise_desc);
    }

    /*
     * the smallest k such that at most k stacks could reach the level
     * of k tests; at k = n it holds, and the count only falls as k grows
     */

    lo = 1;
    hi = (n > 0) ? n : 1;

    while (lo < hi) {
        k = lo + (hi - lo) / 2;

        if (ngx_http_malloc_noise_reach(zmax, n,
                                  ngx_http_malloc_noise_quantile(alpha / k))
            <= k)
        {
            hi = k;

        } else {
            lo = k + 1;
        }
    }

    nz->testable = ngx_http_malloc_noise_reach(zmax, n,
                                ngx_http_malloc_noise_quantile(alpha / lo));
    nz->z = ngx_http_malloc_noise_quantile(alpha / lo);
}


int
ngx_http_malloc_noise_judge(ngx_http_malloc_noise_t *nz, double z,
    double change)
{
    if (z == 0 || fabs(z) < nz->z) {
        return 0;
    }

    if (change > 0) {
        nz->grew++;
        nz->grown += change;
        return 1;
    }

    nz->shrank++;
    nz->shrunk -= change;

    return -1;
}


double
ngx_http_malloc_noise_margin(const ngx_http_malloc_side_t *heap,
    const ngx_http_malloc_side_t *base, double z)
{
    double  sd, step, margin;

    sd = ngx_http_malloc_noise_sd(heap, base, &step);

    /* as noise_z: nothing random, or nothing to judge */

    if (!isfinite(sd) || !(sd > 0)) {
        return 0;
    }

    margin = z * sd + step;

    return isfinite(margin) ? margin : 0;
}


void
ngx_http_malloc_noise_sum(ngx_http_malloc_side_t *to,
    const ngx_http_malloc_side_t *from)
{
    to->samples += from->samples;
    to->bytes += from->bytes;
    to->var += from->var;
    to->held += from->held;

    if (from->step > to->step) {
        to->step = from->step;
    }
}


/*
 * The growth is k more samples of one kind, on top of what both sides
 * hold: its z rises with k (the change linearly, its deviation as a
 * square root), so the smallest k that reaches z is found by doubling,
 * then halving the interval.
 */

double
ngx_http_malloc_noise_limit(const ngx_http_malloc_side_t *held,
    uint64_t period, double z)
{
    int                     i;
    double                  lo, hi, mid;
    ngx_http_malloc_side_t  none, one;

    memset(&none, 0, sizeof(ngx_http_malloc_side_t));
    memset(&one, 0, sizeof(ngx_http_malloc_side_t));

    if (held == NULL) {
        held = &none;
    }

    if (held->samples > 0) {
        one.samples = 1;
        one.bytes = held->bytes / held->samples;
        one.var = held->var / held->samples;
        one.held = held->held / held->samples;
        one.step = held->step;

    } else {
        /* one byte: as small as objects come */
        ngx_http_malloc_noise_add(&one, period, 1, 1);
    }

    if (!(one.bytes > 0) || !isfinite(one.bytes) || !isfinite(one.var)
        || !isfinite(one.held) || !isfinite(held->var)
        || !isfinite(held->held))
    {
        return 0;
    }

    for (hi = 1; ngx_http_malloc_noise_grown(held, &one, hi) < z; hi *= 2) {
        if (hi > 1e18) {
            return hi * one.bytes;
        }
    }

    lo = 0;

    for (i = 0; i < 64; i++) {
        mid = (lo + hi) / 2;

        if (ngx_http_malloc_noise_grown(held, &one, mid) < z) {
            lo = mid;

        } else {
            hi = mid;
        }
    }

    return hi * one.bytes;
}


/* the z of "held" grown by k samples like "one", against "held" */

static double
ngx_http_malloc_noise_grown(const ngx_http_malloc_side_t *held,
    const ngx_http_malloc_side_t *one, double k)
{
    double                  zmax;
    ngx_http_malloc_side_t  now;

    now = *held;
    now.samples += k * one->samples;
    now.bytes += k * one->bytes;
    now.var += k * one->var;
    now.held += k * one->held;

    if (one->step > now.step) {
        now.step = one->step;
    }

    return ngx_http_malloc_noise_z(&now, held, &zmax);
}


char *
ngx_http_malloc_noise_size(char *buf, size_t size, double bytes)
{
    int          digits;
    double       div;
    const char  *unit;

    unit = ngx_http_malloc_noise_unit(bytes, &div, &digits);

    (void) snprintf(buf, size, "%.*f %s", digits, bytes / div, unit);

    return buf;
}


size_t
ngx_http_malloc_noise_detection(char *buf, size_t size,
    const ngx_http_malloc_noise_t *nz)
{
    int   n;
    char  limit[32], floor[32];

    if (size == 0) {
        return 0;
    }

    if (!(nz->floor > 0)) {
        n = snprintf(buf, size, "with %.0f samples now and %.0f in the "
                     "base, every change is told from noise: every "
                     "allocation is sampled", nz->samples, nz->base_samples);

    } else {
        n = snprintf(buf, size, "with %.0f samples now and %.0f in the "
                     "base, a change of small blocks under %s cannot be "
                     "told from noise; growth is seen from %s in a stack "
                     "that held nothing, from %s in one that held them all",
                     nz->samples, nz->base_samples,
                     ngx_http_malloc_noise_size(floor, sizeof(floor),
                                                nz->floor),
                     floor,
                     ngx_http_malloc_noise_size(limit, sizeof(limit),
                                                nz->limit));
    }

    if (n < 0) {
        buf[0] = '\0';
        return 0;
    }

    return ((size_t) n < size) ? (size_t) n : size - 1;
}


size_t
ngx_http_malloc_noise_interval(char *buf, size_t size, double change,
    double margin)
{
    int          n, digits;
    double       lo, hi, big, div;
    const char  *unit;

    if (size == 0) {
        return 0;
    }

    lo = change - margin;
    hi = change + margin;

    /* one unit for the three, that of the largest */

    big = (fabs(lo) > fabs(hi)) ? fabs(lo) : fabs(hi);
    big = (fabs(change) > big) ? fabs(change) : big;

    unit = ngx_http_malloc_noise_unit(big, &div, &digits);

    n = snprintf(buf, size, "%+.*f %s, %.0f%%: %.*f to %.*f %s", digits,
                 change / div, unit, NGX_HTTP_MALLOC_NOISE_LEVEL * 100,
                 digits, lo / div, digits, hi / div, unit);

    if (n < 0) {
        buf[0] = '\0';
        return 0;
    }

    return ((size_t) n < size) ? (size_t) n : size - 1;
}


/* bytes' unit: what to divide by, and the decimals worth showing */

static const char *
ngx_http_malloc_noise_unit(double bytes, double *div, int *digits)
{
    double  a;

    a = fabs(bytes);
    *digits = 1;

    if (!(a >= 1024)) {
        *div = 1;
        *digits = 0;
        return "B";
    }

    if (a < 1024.0 * 1024) {
        *div = 1024;
        return "KiB";
    }

    if (a < 1024.0 * 1024 * 1024) {
        *div = 1024.0 * 1024;
        return "MiB";
    }

    *div = 1024.0 * 1024 * 1024;

    return "GiB";
}


/* the two-sided z of a normal test at "alpha": erfc(z / sqrt 2) = alpha */

static double
ngx_http_malloc_noise_quantile(double alpha)
{
    int     i;
    double  lo, hi, mid;

    lo = 0;
    hi = 40;

    for (i = 0; i < 64; i++) {
        mid = (lo + hi) / 2;

        if (erfc(mid / M_SQRT2) > alpha) {
            lo = mid;

        } else {
            hi = mid;
        }
    }

    return hi;
}


/* how many of the zmax, sorted from the largest, reach z */

static size_t
ngx_http_malloc_noise_reach(const double *zmax, size_t n, double z)
{
    size_t  lo, hi, mid;

    lo = 0;
    hi = n;

    while (lo < hi) {
        mid = lo + (hi - lo) / 2;

        if (zmax[mid] >= z) {
            lo = mid + 1;

        } else {
            hi = mid;
        }
    }

    return lo;
}


static int
ngx_http_malloc_noise_desc(const void *a, const void *b)
{
    double  x, y;

    x = *(const double *) a;
    y = *(const double *) b;

    return (x < y) ? 1 : (x > y) ? -1 : 0;
}
