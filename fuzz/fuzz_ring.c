
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * libFuzzer target for the command ring's rules.
 *
 * Input: a program of two-byte steps over a ring of up to 4 workers.
 * The first byte picks the step (post a read or a write, with or without
 * a wait; close; a worker applies, publishes, exits, is respawned; a
 * reload; time passes), the second its argument.
 *
 * Whatever the program, the ring stays whole: seqs grow one by one, a
 * worker's next command is never one it saw, no entry outlives its wait
 * and the grace, and a write finds room once that bound has passed.
 */


#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ngx_http_malloc_ring.h"


#define WORKERS    4
#define WAIT       5000


int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
static void check(int cond, const char *what);
static void check_bound(ngx_http_malloc_ring_t *ring, uint64_t now);


static void
check(int cond, const char *what)
{
    if (!cond) {
        fprintf(stderr, "fuzz_ring: invariant broken: %s\n", what);
        abort();
    }
}


/* every entry past its bound is spent, whatever holds it */

static void
check_bound(ngx_http_malloc_ring_t *ring, uint64_t now)
{
    size_t                         i;
    ngx_http_malloc_ring_entry_t  *e;

    for (i = 0; i < NGX_HTTP_MALLOC_RING; i++) {
        e = &ring->entries[i];

        if (e->seq != 0 && (int64_t) (now - e->until) >= 0) {
            check(ngx_http_malloc_ring_spent(ring, e, now, NULL, NULL),
                  "an entry past its bound is spent");
        }
    }
}


int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t                         i, w, ngiven;
    uint64_t                       now, seq, next, last;
    unsigned                       op, arg;
    ngx_http_malloc_ring_t        *ring;
    ngx_http_malloc_ring_given_t   given[NGX_HTTP_MALLOC_RING];
    char                           text[NGX_HTTP_MALLOC_RING_TEXT];

    ring = calloc(1, sizeof(ngx_http_malloc_ring_t));
    if (ring == NULL) {
        abort();
    }

    ring->generation = 1;
    ring->npeers = WORKERS;
    now = 1 << 20;
    last = 0;

    for (w = 0; w < WORKERS; w++) {
        ring->peers[w].pid = 10 + (long) w;
        ring->peers[w].generation = 1;
        ring->peers[w].published = now;
    }

    for (i = 0; i + 1 < size; i += 2) {
        op = data[i] % 10;
        arg = data[i + 1];
        w = arg % WORKERS;
        ngiven = 0;

        switch (op) {

        case 0:
        case 1:
        case 2:
            seq = ngx_http_malloc_ring_put(ring, (unsigned) w,
                                           ring->peers[w].pid,
                                           (op == 2) ? 0 : WAIT, now,
                                           (op == 1)
                                           ? NGX_HTTP_MALLOC_RING_WRITES : 0,
                                           given, &ngiven);
            if (seq != 0) {
                check(seq == last + 1, "seqs grow one by one");
                last = seq;
            }

            check(ngiven <= NGX_HTTP_MALLOC_RING, "given up fits");

            while (ngiven-- > 0) {
                (void) ngx_http_malloc_ring_given_text(&given[ngiven], text,
                                                       sizeof(text));
                check(strlen(text) < sizeof(text), "its text fits");
            }

            break;

        case 3:
            ngx_http_malloc_ring_close(ring, last - (arg % 9));
            break;

        case 4:
            if (ngx_http_malloc_ring_next(ring, ring->peers[w].applied,
                                          &next) >= 0)
            {
                check(next > ring->peers[w].applied, "next is new");
                check(next <= ring->seq, "next exists");
                ring->peers[w].applied = next;
            }

            ring->peers[w].published = now;
            break;

        case 5:
            ring->peers[w].published = now;
            break;

        case 6:
            ring->peers[w].pid = 0;
            break;

        case 7:
            ring->peers[w].pid = 100 + arg;
            ring->peers[w].generation = ring->generation;
            ring->peers[w].applied = ring->seq;
            ring->peers[w].published = now;
            break;

        case 8:
            ring->generation++;
            break;

        default:
            now += (uint64_t) arg * 97;
        }

        check_bound(ring, now);
    }

    /* past every bound, with every worker alive: a write has room */

    now += WAIT + NGX_HTTP_MALLOC_RING_GRACE;

    for (w = 0; w < WORKERS; w++) {
        ring->peers[w].published = now;
    }

    ngiven = 0;
    check(ngx_http_malloc_ring_put(ring, 0, ring->peers[0].pid, WAIT, now,
                                   0, given, &ngiven) != 0,
          "a write has room past the bound");

    free(ring);

    return 0;
}
