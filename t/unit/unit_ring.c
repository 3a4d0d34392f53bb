
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * Unit tests for the command ring's rules (ngx_http_malloc_ring.c): the
 * ways an entry can be held (a poster that waits, a worker that has not
 * applied it) and the ways they end (answers, a close, a poster or worker
 * that exits, a worker gone stale, a reload, the time running out), with
 * the interleaving of writes, reads and the watch's commands that jammed
 * the ring once.
 */


#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "ngx_http_malloc_ring.h"


#define GEN        7
#define TIMEOUT    5000         /* a request's collection */
#define READ       NGX_HTTP_MALLOC_RING_WRITES
#define WRITE      0


static ngx_http_malloc_ring_t        *ring;
static ngx_http_malloc_ring_given_t   given[NGX_HTTP_MALLOC_RING];
static size_t                         ngiven;
static uint64_t                       now;


static void fresh(size_t workers);
static uint64_t post(unsigned poster, uint64_t wait, size_t reserve);
static uint64_t post_closed(size_t n, size_t applier);
static void apply_all(size_t workers);
static void publish(size_t workers);
static void test_answered(void);
static void test_nobody_waits(void);
static void test_poster_exits(void);
static void test_never_applies(void);
static void test_stale_worker(void);
static void test_timed_out(void);
static void test_reload(void);
static void test_reads_leave_writes(void);
static void test_watch_firings(void);
static void test_interleaved(void);
static void test_next(void);
static void test_text(void);


/* a ring of "workers" live workers of generation GEN, each up to date */

static void
fresh(size_t workers)
{
    size_t  i;

    memset(ring, 0, sizeof(ngx_http_malloc_ring_t));

    ring->generation = GEN;
    ring->npeers = workers;
    now = 1000000;

    for (i = 0; i < workers; i++) {
        ring->peers[i].pid = 100 + (long) i;
        ring->peers[i].generation = GEN;
        ring->peers[i].published = now;
    }

    ngiven = 0;
}


static uint64_t
post(unsigned poster, uint64_t wait, size_t reserve)
{
    return ngx_http_malloc_ring_put(ring, poster, 100 + (long) poster, wait,
                                    now, reserve, given, &ngiven);
}


/*
 * n writes of worker 0, each closed by its poster and applied by worker
 * "applier" only (none past the last worker); the first one's seq
 */

static uint64_t
post_closed(size_t n, size_t applier)
{
    size_t    i;
    uint64_t  seq, first;

    first = 0;

    for (i = 0; i < n; i++) {
        seq = post(0, TIMEOUT, WRITE);

        if (applier < ring->npeers) {
            ring->peers[applier].applied = seq;
        }

        ngx_http_malloc_ring_close(ring, seq);
        first = first ? first : seq;
    }

    return first;
}


static void
apply_all(size_t workers)
{
    size_t  i;

    for (i = 0; i < workers; i++) {
        ring->peers[i].applied = ring->seq;
        ring->peers[i].published = now;
    }
}


static void
publish(size_t workers)
{
    size_t  i;

    for (i = 0; i < workers; i++) {
        ring->peers[i].published = now;
    }
}


/* the usual life: posted, answered by all, closed: used again */

static void
test_answered(void)
{
    uint64_t  seq;
    size_t    i;

    fresh(2);

    for (i = 0; i < 3 * NGX_HTTP_MALLOC_RING; i++) {
        seq = post(0, TIMEOUT, WRITE);
        is_int((long) seq, (long) i + 1, "answered: post %zu gets seq %zu",
               i + 1, i + 1);

        apply_all(2);
        ngx_http_malloc_ring_close(ring, seq);
        now += 10;
    }

    is_int((long) ngiven, 0, "answered: nothing given up");
}


/* wait 0: nobody waits, the entry is closed from the start */

static void
test_nobody_waits(void)
{
    uint64_t  seq;

    fresh(2);

    seq = post(0, 0, WRITE);

    ok(ngx_http_malloc_ring_closed(ring, seq),
       "nobody waits: the entry is closed at once");
    is_int((long) ring->entries[seq % NGX_HTTP_MALLOC_RING].poster,
           (long) NGX_HTTP_MALLOC_RING_NOBODY, "nobody waits: no poster");

    apply_all(2);
    ok(ngx_http_malloc_ring_spent(ring,
           &ring->entries[seq % NGX_HTTP_MALLOC_RING], now, NULL, NULL),
       "nobody waits: spent once applied, with no close");
}


/* a poster that exits without closing holds nothing */

static void
test_poster_exits(void)
{
    size_t    i;
    uint64_t  seq;

    fresh(2);

    for (i = 0; i < NGX_HTTP_MALLOC_RING; i++) {
        seq = post(1, TIMEOUT, WRITE);
        ok(seq != 0, "poster exits: post %zu", i + 1);
    }

    apply_all(2);

    is_int((long) post(0, TIMEOUT, WRITE), 0,
           "poster exits: a ring full of open entries refuses");

    /* worker 1 is respawned: same slot, another pid */
    ring->peers[1].pid = 999;
    ring->peers[1].applied = ring->seq;

    ok(post(0, TIMEOUT, WRITE) != 0,
       "poster exits: its entries are spent once it is gone");
    is_int((long) ngiven, 0, "poster exits: nothing given up for it");
}


/* a worker that publishes but never applies: held until the grace ends */

static void
test_never_applies(void)
{
    uint64_t  first, seq;

    fresh(2);

    first = post_closed(NGX_HTTP_MALLOC_RING, 0);

    /* worker 1 stays at 0, and keeps publishing */
    now += TIMEOUT;
    publish(2);

    is_int((long) post(0, TIMEOUT, WRITE), 0,
           "never applies: the ring waits for it within the grace");
    is_int((long) ngiven, 0, "never applies: nothing given up yet");

    now += NGX_HTTP_MALLOC_RING_GRACE;
    publish(2);

    seq = post(0, TIMEOUT, WRITE);
    ok(seq != 0, "never applies: room once the grace is over");
    is_int((long) ngiven, 1, "never applies: one entry given up");
    is_int((long) given[0].seq, (long) first,
           "never applies: the oldest, seq %lu", (unsigned long) first);
    is_int((long) given[0].pending, 1, "never applies: one worker pending");
    is_int((long) given[0].worker, 1, "never applies: worker 1");
    is_int(given[0].worker_pid, 101, "never applies: its pid");
    ok(!given[0].waiting, "never applies: its poster did not wait");
    ok(given[0].held >= TIMEOUT + NGX_HTTP_MALLOC_RING_GRACE,
       "never applies: held %lu ms", (unsigned long) given[0].held);

    /* the worker comes to it: the entry is another command now */
    {
        uint64_t  next;

        is_int(ngx_http_malloc_ring_next(ring, 0, &next), 1,
               "never applies: the worker skips what is gone");
        is_int((long) next, (long) first + 1,
               "never applies: to the oldest kept");
    }

    /* said once: the next post does not report it again */
    ngiven = 0;
    apply_all(2);
    ngx_http_malloc_ring_close(ring, seq);
    (void) post(0, TIMEOUT, WRITE);
    is_int((long) ngiven, 0, "never applies: reported once");
}


/* a worker that stops publishing holds nobody up */

static void
test_stale_worker(void)
{
    fresh(2);

    (void) post_closed(NGX_HTTP_MALLOC_RING, 0);

    now += NGX_HTTP_MALLOC_RING_STALE + 1;
    ring->peers[0].published = now;

    ok(post(0, TIMEOUT, WRITE) != 0, "stale: a silent worker holds nothing");
    is_int((long) ngiven, 0, "stale: nothing given up");
}


/*
 * A collection that timed out closes its entry; one whose poster never
 * closes it (as the watch's post did) holds it for its wait and the
 * grace, then it is given up, said as "never collected".
 */

static void
test_timed_out(void)
{
    uint64_t  seq, held;

    fresh(2);

    held = post(0, TIMEOUT, WRITE);
    (void) post_closed(NGX_HTTP_MALLOC_RING - 1, 2);

    apply_all(2);

    is_int((long) post(0, TIMEOUT, WRITE), 0,
           "timed out: an open entry holds the ring");

    now += TIMEOUT + NGX_HTTP_MALLOC_RING_GRACE - 1;
    publish(2);
    is_int((long) post(0, TIMEOUT, WRITE), 0,
           "timed out: still within its wait and grace");

    now += 1;
    publish(2);
    ok(post(0, TIMEOUT, WRITE) != 0, "timed out: room at the bound");
    is_int((long) ngiven, 1, "timed out: one given up");
    is_int((long) given[0].seq, (long) held, "timed out: the open one");
    ok(given[0].waiting && given[0].pending == 0,
       "timed out: its poster still waited, every worker had applied it");
    ok(ngx_http_malloc_ring_closed(ring, held) , "timed out: closed for "
       "a worker that comes late");

    /* a closed collection: spent at once, well before the bound */
    fresh(2);
    seq = post(0, TIMEOUT, WRITE);
    apply_all(2);
    ngx_http_malloc_ring_close(ring, seq);
    ok(ngx_http_malloc_ring_spent(ring,
           &ring->entries[seq % NGX_HTTP_MALLOC_RING], now, NULL, NULL),
       "timed out: closed and applied is spent at once");
}


/* a reload: the old generation's posters and workers hold nothing */

static void
test_reload(void)
{
    size_t  i;

    fresh(2);

    for (i = 0; i < NGX_HTTP_MALLOC_RING; i++) {
        (void) post(0, TIMEOUT, WRITE);
    }

    is_int((long) post(0, TIMEOUT, WRITE), 0, "reload: full before it");

    /* the master's new cycle: two new workers come up at the last seq */
    ring->generation++;

    for (i = 0; i < 2; i++) {
        ring->peers[i].pid = 200 + (long) i;
        ring->peers[i].generation = ring->generation;
        ring->peers[i].applied = ring->seq;
    }

    ok(post(0, TIMEOUT, WRITE) != 0, "reload: room at once after it");
    is_int((long) ngiven, 0, "reload: nothing given up");

    /*
     * between a reload and its workers' start, old workers post: their
     * commands wait for the new workers, which apply from where the
     * generation began, instead of passing on unseen
     */
    fresh(2);
    ring->generation++;
    ring->begun = ring->seq;
    ring->begun_at = now;

    for (i = 0; i < NGX_HTTP_MALLOC_RING; i++) {
        (void) post(NGX_HTTP_MALLOC_RING_NOBODY, 0, WRITE);
    }

    is_int((long) post(NGX_HTTP_MALLOC_RING_NOBODY, 0, WRITE), 0,
           "reload gap: the commands wait for the workers to come");

    for (i = 0; i < 2; i++) {
        ring->peers[i].pid = 300 + (long) i;
        ring->peers[i].generation = ring->generation;
        ring->peers[i].applied = ring->begun;
        ring->peers[i].published = now;
    }

    is_int((long) post(NGX_HTTP_MALLOC_RING_NOBODY, 0, WRITE), 0,
           "reload gap: and for them to apply them");
    apply_all(2);
    ok(post(NGX_HTTP_MALLOC_RING_NOBODY, 0, WRITE) != 0,
       "reload gap: room once they have");

    /* a worker that never comes up holds them no longer than stale */
    fresh(2);
    ring->generation++;
    ring->begun = ring->seq;
    ring->begun_at = now;

    for (i = 0; i < NGX_HTTP_MALLOC_RING; i++) {
        (void) post(NGX_HTTP_MALLOC_RING_NOBODY, 0, WRITE);
    }

    now += NGX_HTTP_MALLOC_RING_STALE + 1;
    ok(post(NGX_HTTP_MALLOC_RING_NOBODY, 0, WRITE) != 0,
       "reload gap: a worker that never comes holds nothing past stale");
}


/* reads leave NGX_HTTP_MALLOC_RING_WRITES entries to the writes */

static void
test_reads_leave_writes(void)
{
    size_t  i, reads, writes;

    fresh(2);

    for (reads = 0; post(0, TIMEOUT, READ) != 0; reads++) {
        /* nobody answers: they stay held */
    }

    is_int((long) reads, NGX_HTTP_MALLOC_RING - READ,
           "reads: %d reads fill the ring", NGX_HTTP_MALLOC_RING - READ);

    for (writes = 0; post(0, TIMEOUT, WRITE) != 0; writes++) {
        /* nor these */
    }

    is_int((long) writes, READ, "reads: the writes still have %d", READ);

    /* and all of it ends at the bound, without one answer */
    now += TIMEOUT + NGX_HTTP_MALLOC_RING_GRACE;
    publish(2);

    for (i = 0; i < NGX_HTTP_MALLOC_RING; i++) {
        ngiven = 0;
        ok(post(0, TIMEOUT, WRITE) != 0, "reads: write %zu after the bound",
           i + 1);
    }
}


/*
 * The watch's firings, any number: profiling on for a window (nobody
 * waits), the start's dumps and the end's (collections that close), the
 * end of the duration (nobody waits), between an operator's writes.
 */

static void
test_watch_firings(void)
{
    size_t    firing, refused;
    uint64_t  seq;

    fresh(2);
    refused = 0;

    for (firing = 0; firing < 20; firing++) {
        /* on for the window */
        refused += (post(0, 0, WRITE) == 0);
        apply_all(2);
        now += 1000;

        /* the window's start: a dump collection */
        seq = post(0, TIMEOUT, WRITE);
        refused += (seq == 0);
        apply_all(2);
        ngx_http_malloc_ring_close(ring, seq);
        now += 1000;

        /* the operator's write in between */
        seq = post(1, TIMEOUT, WRITE);
        refused += (seq == 0);
        apply_all(2);
        ngx_http_malloc_ring_close(ring, seq);

        /* the duration's end */
        refused += (post(1, 0, WRITE) == 0);
        apply_all(2);

        /* the window's end: a dump collection */
        seq = post(0, TIMEOUT, WRITE);
        refused += (seq == 0);
        apply_all(2);
        ngx_http_malloc_ring_close(ring, seq);
        now += 3000;
    }

    is_int((long) refused, 0, "watch: 20 firings, nothing refused");
    is_int((long) ngiven, 0, "watch: nothing given up");
}


/*
 * Writes, reads and the watch's posts interleaved by a fixed random
 * sequence, workers applying late, some posters never closing: no post
 * is refused for longer than its wait and the grace.
 */

static void
test_interleaved(void)
{
    size_t    i, k, refused_since, worst, poster;
    uint64_t  seq, refused_at, wait;

    fresh(3);
    srand(26);

    refused_at = 0;
    refused_since = 0;
    worst = 0;

    for (i = 0; i < 20000; i++) {
        now += (uint64_t) (rand() % 300);

        /* each worker publishes; two in three apply what is there */
        for (k = 0; k < 3; k++) {
            ring->peers[k].published = now;

            if (rand() % 3 != 0) {
                ring->peers[k].applied = ring->seq;
            }
        }

        poster = (size_t) rand() % 3;
        wait = (rand() % 4 == 0) ? 0 : TIMEOUT;
        seq = post((unsigned) poster, wait, (rand() % 2) ? READ : WRITE);

        if (seq == 0) {
            if (refused_since++ == 0) {
                refused_at = now;
            }

            if (now - refused_at > worst) {
                worst = (size_t) (now - refused_at);
            }

            continue;
        }

        refused_since = 0;

        /* most collections close; one in ten forgets */
        if (wait != 0 && rand() % 10 != 0) {
            ngx_http_malloc_ring_close(ring, seq);
        }
    }

    ok(worst <= TIMEOUT + NGX_HTTP_MALLOC_RING_GRACE,
       "interleaved: the longest refusal, %zu ms, within the bound", worst);
    ok(ring->seq > 1000, "interleaved: %lu commands went through",
       (unsigned long) ring->seq);
}


static void
test_next(void)
{
    uint64_t  next;
    size_t    i;

    fresh(1);

    is_int(ngx_http_malloc_ring_next(ring, 0, &next), -1, "next: none");

    (void) post(0, 0, WRITE);
    is_int(ngx_http_malloc_ring_next(ring, 0, &next), 1, "next: one");
    is_int((long) next, 1, "next: seq 1");

    for (i = 0; i < 3 * NGX_HTTP_MALLOC_RING; i++) {
        ring->peers[0].applied = ring->seq;
        (void) post(0, 0, WRITE);
    }

    is_int(ngx_http_malloc_ring_next(ring, 1, &next), 1,
           "next: far behind, the oldest kept");
    is_int((long) next, (long) (ring->seq - NGX_HTTP_MALLOC_RING + 1),
           "next: seq %lu",
           (unsigned long) (ring->seq - NGX_HTTP_MALLOC_RING + 1));
}


static void
test_text(void)
{
    char                          buf[NGX_HTTP_MALLOC_RING_TEXT];
    ngx_http_malloc_ring_given_t  g;

    memset(&g, 0, sizeof(g));
    g.held = 15000;
    g.waiting = 1;
    g.poster = 0;
    g.pid = 4242;

    (void) ngx_http_malloc_ring_given_text(&g, buf, sizeof(buf));
    is_str(buf, "worker 0 (pid 4242) posted it 15000 ms ago and never "
           "collected its answers", "text: a poster that never collected");

    g.waiting = 0;
    g.pending = 2;
    g.worker = 1;
    g.worker_pid = 4343;

    (void) ngx_http_malloc_ring_given_text(&g, buf, sizeof(buf));
    is_str(buf, "posted 15000 ms ago, worker 1 (pid 4343) and others had "
           "not applied it", "text: workers that did not apply");

    is_int((long) ngx_http_malloc_ring_given_text(&g, buf, 8), 7,
           "text: cut to its buffer");
    is_str(buf, "posted ", "text: cut, terminated");
}


int
main(void)
{
    /* the size the zone has, and no more: ASan sees a read past it */
    ring = malloc(sizeof(ngx_http_malloc_ring_t));
    if (ring == NULL) {
        abort();
    }

    test_answered();
    test_nobody_waits();
    test_poster_exits();
    test_never_applies();
    test_stale_worker();
    test_timed_out();
    test_reload();
    test_reads_leave_writes();
    test_watch_firings();
    test_interleaved();
    test_next();
    test_text();

    free(ring);

    return done_testing();
}
