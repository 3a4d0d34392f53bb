
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * Cost of reading a process's smaps into the parts of its RSS, as each
 * worker does once a second:
 *
 *     bench_rss PID [RUNS]
 *
 * Reads /proc/PID/smaps RUNS times (default 50) with ngx_http_malloc_
 * rss_read() (the kernel's walk of the page tables and the parse), and
 * as often into a buffer only (the kernel's share); prints the mappings,
 * the RSS and min / median / max of both in microseconds.  Reading
 * another process's smaps costs the kernel what the process's own read
 * does.  As a worker does, each read compares the mappings with a
 * baseline taken by a first read.  Build without sanitizers, e.g. cc -O2.
 */


#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ngx_http_malloc_rss.h"


static double now(void);
static int cmp(const void *a, const void *b);
static void report(const char *what, double *v, int n);


/* the first read's mappings, which the others are compared with */
static ngx_http_malloc_maps_base_t  base;
static ngx_http_malloc_maps_t       top;


static double
now(void)
{
    struct timespec  ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);

    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}


static int
cmp(const void *a, const void *b)
{
    double  x = *(const double *) a, y = *(const double *) b;

    return (x > y) - (x < y);
}


static void
report(const char *what, double *v, int n)
{
    qsort(v, n, sizeof(double), cmp);
    printf("%s: %.0f / %.0f / %.0f us\n", what, v[0], v[n / 2], v[n - 1]);
}


int
main(int argc, char **argv)
{
    int                    i, fd, runs;
    char                   path[64], buf[16384];
    double                 t0, *full, *kernel;
    ngx_http_malloc_rss_t  rss;

    if (argc < 2) {
        fprintf(stderr, "usage: bench_rss PID [RUNS]\n");
        return 2;
    }

    runs = (argc > 2) ? atoi(argv[2]) : 50;
    if (runs < 1) {
        runs = 1;
    }

    snprintf(path, sizeof(path), "/proc/%s/smaps", argv[1]);

    full = calloc(runs, sizeof(double));
    kernel = calloc(runs, sizeof(double));
    if (full == NULL || kernel == NULL) {
        return 1;
    }

    memset(&rss, 0, sizeof(rss));

    for (i = 0; i < runs; i++) {
        t0 = now();
        fd = open(path, O_RDONLY);
        if (fd == -1
            || ngx_http_malloc_rss_read(fd, NULL, 0, NULL, &base,
                                        base.ready ? &top : NULL, &rss))
        {
            perror(path);
            return 1;
        }
        close(fd);
        full[i] = now() - t0;

        t0 = now();
        fd = open(path, O_RDONLY);
        if (fd == -1) {
            perror(path);
            return 1;
        }
        while (read(fd, buf, sizeof(buf)) > 0) {
            /* void */
        }
        close(fd);
        kernel[i] = now() - t0;
    }

    printf("mappings: %u, rss: %llu kB, runs: %d\n", (unsigned) rss.mappings,
           (unsigned long long) rss.rss / 1024, runs);
    report("read and parse", full, runs);
    report("read only", kernel, runs);

    return 0;
}
