
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * The command ring's rules (see ngx_http_malloc_ring.h).  An entry is
 * used again once nobody waits for it and every live worker of the
 * generation has seen it, or, whatever holds it, once its time is up:
 * its poster's wait plus NGX_HTTP_MALLOC_RING_GRACE.  Nothing can keep
 * an entry for longer, so the ring cannot stay full: a poster that never
 * closes its command, a worker that publishes but never applies, a
 * collection that timed out, all end there.
 */


#include <stdio.h>
#include <string.h>

#include "ngx_http_malloc_ring.h"


static int ngx_http_malloc_ring_waiting(ngx_http_malloc_ring_t *ring,
    ngx_http_malloc_ring_entry_t *e);
static size_t ngx_http_malloc_ring_pending(ngx_http_malloc_ring_t *ring,
    ngx_http_malloc_ring_entry_t *e, uint64_t now, size_t *first);


/* a ms clock that may wrap, as nginx's does */
#define ngx_http_malloc_ring_after(a, b)  ((int64_t) ((a) - (b)) >= 0)


uint64_t
ngx_http_malloc_ring_put(ngx_http_malloc_ring_t *ring, unsigned poster,
    long pid, uint64_t wait, uint64_t now, size_t reserve,
    ngx_http_malloc_ring_given_t *given, size_t *ngiven)
{
    size_t                         i;
    int                            room;
    ngx_http_malloc_ring_entry_t  *e;

    room = 1;

    for (i = 1; i <= reserve + 1 && i <= NGX_HTTP_MALLOC_RING; i++) {
        e = &ring->entries[(ring->seq + i) % NGX_HTTP_MALLOC_RING];

        /* every entry looked at, so that each given up is said at once */
        if (!ngx_http_malloc_ring_spent(ring, e, now, given, ngiven)) {
            room = 0;
        }
    }

    if (!room) {
        return 0;
    }

    ring->seq++;

    e = &ring->entries[ring->seq % NGX_HTTP_MALLOC_RING];
    e->seq = ring->seq;
    e->poster = (wait != 0) ? poster : NGX_HTTP_MALLOC_RING_NOBODY;
    e->pid = pid;
    e->posted = now;
    e->until = now + wait + NGX_HTTP_MALLOC_RING_GRACE;
    e->closed = (wait == 0);
    e->given_up = 0;

    return ring->seq;
}


int
ngx_http_malloc_ring_spent(ngx_http_malloc_ring_t *ring,
    ngx_http_malloc_ring_entry_t *e, uint64_t now,
    ngx_http_malloc_ring_given_t *given, size_t *ngiven)
{
    size_t                         pending, first;
    int                            waiting;
    ngx_http_malloc_ring_given_t  *g;

    if (e->seq == 0 || e->given_up) {
        return 1;
    }

    waiting = ngx_http_malloc_ring_waiting(ring, e);
    pending = ngx_http_malloc_ring_pending(ring, e, now, &first);

    if (!waiting && pending == 0) {
        return 1;
    }

    if (!ngx_http_malloc_ring_after(now, e->until)) {
        return 0;
    }

    /* held past its time: used again, and said once */

    e->given_up = 1;

    if (given != NULL && *ngiven < NGX_HTTP_MALLOC_RING) {
        g = &given[(*ngiven)++];

        memset(g, 0, sizeof(ngx_http_malloc_ring_given_t));
        g->seq = e->seq;
        g->index = e->seq % NGX_HTTP_MALLOC_RING;
        g->held = now - e->posted;
        g->waiting = waiting;
        g->poster = e->poster;
        g->pid = e->pid;
        g->pending = pending;

        if (pending != 0) {
            g->worker = (unsigned) first;
            g->worker_pid = ring->peers[first].pid;
        }
    }

    return 1;
}


/* its poster is a live worker of the generation that has not closed it */

static int
ngx_http_malloc_ring_waiting(ngx_http_malloc_ring_t *ring,
    ngx_http_malloc_ring_entry_t *e)
{
    if (e->closed || e->poster >= ring->npeers
        || e->poster >= NGX_HTTP_MALLOC_RING_PEERS)
    {
        return 0;
    }

    return ngx_http_malloc_ring_live(ring, e->poster)
           && ring->peers[e->poster].pid == e->pid;
}


/*
 * The live workers that have not seen the entry; a worker that stopped
 * publishing holds nobody up: it finds the desired state when it comes
 * back.
 */

static size_t
ngx_http_malloc_ring_pending(ngx_http_malloc_ring_t *ring,
    ngx_http_malloc_ring_entry_t *e, uint64_t now, size_t *first)
{
    size_t                        i, n;
    ngx_http_malloc_ring_peer_t  *p;

    n = 0;
    *first = 0;

    for (i = 0; i < ring->npeers && i < NGX_HTTP_MALLOC_RING_PEERS; i++) {
        p = &ring->peers[i];

        if (ngx_http_malloc_ring_live(ring, i)
            ? p->applied < e->seq
              && (int64_t) (now - p->published) <= NGX_HTTP_MALLOC_RING_STALE
            /*
             * a worker of the generation that is not up yet: what was
             * posted to the generation is for it too (old workers post
             * between a reload and the new workers' start), unless it
             * does not come up within the stale time
             */
            : e->seq > ring->begun
              && (int64_t) (now - ring->begun_at) <= NGX_HTTP_MALLOC_RING_STALE)
        {
            if (n++ == 0) {
                *first = i;
            }
        }
    }

    return n;
}


void
ngx_http_malloc_ring_close(ngx_http_malloc_ring_t *ring, uint64_t seq)
{
    ngx_http_malloc_ring_entry_t  *e;

    e = &ring->entries[seq % NGX_HTTP_MALLOC_RING];

    if (e->seq == seq) {
        e->closed = 1;
    }
}


int
ngx_http_malloc_ring_closed(ngx_http_malloc_ring_t *ring, uint64_t seq)
{
    ngx_http_malloc_ring_entry_t  *e;

    e = &ring->entries[seq % NGX_HTTP_MALLOC_RING];

    return e->seq != seq || e->closed || e->given_up;
}


int
ngx_http_malloc_ring_next(ngx_http_malloc_ring_t *ring, uint64_t applied,
    uint64_t *next)
{
    uint64_t  n;

    if (ring->seq == applied) {
        return -1;
    }

    n = applied + 1;

    if (ring->seq - n >= NGX_HTTP_MALLOC_RING) {
        /* stopped for a while: the older commands are gone */
        n = ring->seq - NGX_HTTP_MALLOC_RING + 1;
    }

    *next = n;

    return ring->entries[n % NGX_HTTP_MALLOC_RING].seq == n;
}


int
ngx_http_malloc_ring_live(ngx_http_malloc_ring_t *ring, size_t index)
{
    return index < NGX_HTTP_MALLOC_RING_PEERS
           && ring->peers[index].pid != 0
           && ring->peers[index].generation == ring->generation;
}


size_t
ngx_http_malloc_ring_given_text(const ngx_http_malloc_ring_given_t *g,
    char *buf, size_t size)
{
    int  n;

    if (g->waiting && g->pending == 0) {
        n = snprintf(buf, size, "worker %u (pid %ld) posted it %llu ms ago "
                     "and never collected its answers", g->poster, g->pid,
                     (unsigned long long) g->held);

    } else {
        n = snprintf(buf, size, "posted %llu ms ago, worker %u (pid %ld)%s "
                     "had not applied it", (unsigned long long) g->held,
                     g->worker, g->worker_pid,
                     g->pending > 1 ? " and others" : "");
    }

    if (n < 0) {
        buf[0] = '\0';
        return 0;
    }

    return ((size_t) n < size) ? (size_t) n : size - 1;
}
