
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * Cost of the symbolizer on a real process's mappings:
 *
 *     bench_symbol [MAPS_FILE [LOOKUPS]]
 *
 * MAPS_FILE is a /proc/PID/maps (default: this program's own); LOOKUPS
 * addresses (default 100000) are drawn evenly from the executable
 * mappings.  Prints the time and the bytes mapped to load every file's
 * symbols, the time of a second pass over the same maps, and the time
 * per lookup.  Build without sanitizers, e.g. cc -O2.
 */


#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ngx_http_malloc_symbol.h"


static double now(void);
static char *slurp(const char *path, size_t *len);


static double
now(void)
{
    struct timespec  ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);

    return ts.tv_sec + ts.tv_nsec / 1e9;
}


static char *
slurp(const char *path, size_t *len)
{
    FILE    *f;
    char    *buf;
    size_t   cap, n;

    f = fopen(path, "r");
    if (f == NULL) {
        return NULL;
    }

    cap = 1024 * 1024;
    buf = malloc(cap);
    n = (buf != NULL) ? fread(buf, 1, cap, f) : 0;

    fclose(f);

    *len = n;

    return buf;
}


int
main(int argc, char **argv)
{
    int                         map;
    char                       *text;
    size_t                      len, n, i, k, nnamed, nanon, lookups;
    double                      t0, t1, t2, t3;
    uint64_t                    total, addr, pick, *addrs, *named, *anon;
    const char                 *path, *name;
    ngx_http_malloc_map_t      *maps;
    ngx_http_malloc_arena_t    *arena;
    ngx_http_malloc_symbols_t  *syms;

    path = (argc > 1) ? argv[1] : "/proc/self/maps";
    lookups = (argc > 2) ? strtoul(argv[2], NULL, 10) : 100000;

    text = slurp(path, &len);
    syms = ngx_http_malloc_symbols_create();
    arena = ngx_http_malloc_arena_create();

    if (text == NULL || syms == NULL || arena == NULL) {
        fprintf(stderr, "bench_symbol: cannot read %s\n", path);
        return 1;
    }

    t0 = now();
    ngx_http_malloc_symbols_maps(syms, arena, text, len, &maps, &n);
    t1 = now();
    ngx_http_malloc_symbols_maps(syms, arena, text, len, &maps, &n);
    t2 = now();

    total = 0;

    for (i = 0; i < n; i++) {
        printf("  %-60s file %2d  build-id %s\n", maps[i].path, maps[i].file,
               maps[i].build_id ? maps[i].build_id : "-");
        total += maps[i].limit - maps[i].start;
    }

    printf("executable mappings: %zu (%" PRIu64 " KB of code)\n", n,
           total / 1024);
    printf("first pass (read every file): %.2f ms, cache maps %zu KB\n",
           (t1 - t0) * 1e3, ngx_http_malloc_symbols_mapped(syms) / 1024);
    printf("second pass (all cached):     %.3f ms\n", (t2 - t1) * 1e3);

    if (n == 0 || total == 0) {
        return 0;
    }

    /* addresses spread over all the code by a fixed generator */

    addrs = malloc(lookups * sizeof(uint64_t));
    named = malloc(lookups * sizeof(uint64_t));
    anon = malloc(lookups * sizeof(uint64_t));

    if (addrs == NULL || named == NULL || anon == NULL) {
        return 1;
    }

    pick = 0x9e3779b97f4a7c15ULL;

    for (k = 0; k < lookups; k++) {
        pick = pick * 6364136223846793005ULL + 1442695040888963407ULL;
        addr = (pick >> 16) % total;

        for (i = 0; addr >= maps[i].limit - maps[i].start; i++) {
            addr -= maps[i].limit - maps[i].start;
        }

        addrs[k] = maps[i].start + addr;
    }

    nnamed = 0;
    nanon = 0;

    t2 = now();

    for (k = 0; k < lookups; k++) {
        name = ngx_http_malloc_symbols_lookup(syms, arena, maps, n, addrs[k],
                                              &map);

        if (name != NULL && strchr(name, '+') == NULL) {
            named[nnamed++] = addrs[k];

        } else {
            anon[nanon++] = addrs[k];
        }
    }

    t3 = now();

    printf("%zu lookups: %.1f ns each, %.1f%% named by a symbol\n",
           lookups, (t3 - t2) * 1e9 / lookups, 100.0 * nnamed / lookups);

    /* a symbol's name comes from the cache, "file+0x..." is formatted */

    t2 = now();

    for (k = 0; k < nnamed; k++) {
        (void) ngx_http_malloc_symbols_lookup(syms, arena, maps, n, named[k],
                                              &map);
    }

    t3 = now();

    for (k = 0; k < nanon; k++) {
        (void) ngx_http_malloc_symbols_lookup(syms, arena, maps, n, anon[k],
                                              &map);
    }

    printf("  named by a symbol: %.1f ns each; file+0xvaddr: %.1f ns each\n",
           nnamed ? (t3 - t2) * 1e9 / nnamed : 0.0,
           nanon ? (now() - t3) * 1e9 / nanon : 0.0);
    printf("caller arena after all lookups: %zu KB\n",
           ngx_http_malloc_arena_mapped(arena) / 1024);

    free(addrs);
    free(named);
    free(anon);

    ngx_http_malloc_arena_destroy(arena);
    ngx_http_malloc_symbols_destroy(syms);
    free(text);

    return 0;
}
