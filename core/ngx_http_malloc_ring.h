
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * The command ring's rules: when an entry may be used again, what a
 * worker applies next, and what held an entry that had to be given up.
 * Pure C: the board keeps a ngx_http_malloc_ring_t in its shared zone
 * and calls these with the zone locked; the unit tests and the fuzzer
 * call them with no nginx at all.
 */


#ifndef _NGX_HTTP_MALLOC_RING_H_INCLUDED_
#define _NGX_HTTP_MALLOC_RING_H_INCLUDED_


#include <stddef.h>
#include <stdint.h>


/* commands kept */
#define NGX_HTTP_MALLOC_RING          8

/* entries a read leaves free for writes: reads cannot crowd them out */
#define NGX_HTTP_MALLOC_RING_WRITES   4

/* the workers a ring knows: nginx's NGX_MAX_PROCESSES */
#define NGX_HTTP_MALLOC_RING_PEERS    1024

/* the poster of a command nobody waits for */
#define NGX_HTTP_MALLOC_RING_NOBODY   ((unsigned) -1)

/* a worker whose figures are older than this (ms) holds nobody up */
#define NGX_HTTP_MALLOC_RING_STALE    3000

/*
 * How long (ms) the live workers have to apply a command once its poster
 * stops waiting: past it, its entry is used again whatever holds it.  A
 * write is refused for "ring full" at most its own timeout plus this.
 */
#define NGX_HTTP_MALLOC_RING_GRACE    10000


typedef struct {
    uint64_t                    seq;        /* 0: never used */
    unsigned                    poster;     /* the worker that waits */
    long                        pid;        /* its pid */
    uint64_t                    posted;     /* ms */
    uint64_t                    until;      /* ms: used again by then */
    unsigned                    closed;     /* its poster waits no more */
    unsigned                    given_up;   /* used again by force, said */
} ngx_http_malloc_ring_entry_t;


/* a worker, as the ring sees it; written under the zone's lock */
typedef struct {
    long                        pid;        /* 0: none */
    uint64_t                    generation;
    uint64_t                    applied;    /* the last command it saw */
    uint64_t                    published;  /* ms: its last sign of life */
} ngx_http_malloc_ring_peer_t;


typedef struct {
    uint64_t                    seq;        /* of the last command */
    uint64_t                    generation; /* the current one */
    uint64_t                    begun;      /* seq as it began: its workers
                                               apply what came after */
    uint64_t                    begun_at;   /* ms, as it began */
    size_t                      npeers;     /* workers of that generation */
    ngx_http_malloc_ring_entry_t  entries[NGX_HTTP_MALLOC_RING];
    ngx_http_malloc_ring_peer_t   peers[NGX_HTTP_MALLOC_RING_PEERS];
} ngx_http_malloc_ring_t;


/* an entry given up by force: what it was and what held it */
typedef struct {
    uint64_t                    seq;
    size_t                      index;      /* in entries[] */
    uint64_t                    held;       /* ms since it was posted */
    unsigned                    waiting;    /* its poster still waited */
    unsigned                    poster;
    long                        pid;
    size_t                      pending;    /* live workers that had not
                                               applied it */
    unsigned                    worker;     /* the first of them */
    long                        worker_pid;
} ngx_http_malloc_ring_given_t;


/*
 * Takes the next entry for a command if the oldest 1 + reserve entries
 * may be used again: returns its seq (its entry is entries[seq %
 * NGX_HTTP_MALLOC_RING]), or 0 when the ring has no room.  "wait" is how
 * long the poster waits for answers (0: nobody waits; the poster is then
 * NGX_HTTP_MALLOC_RING_NOBODY).  Entries given up on the way are written
 * to "given" (room for NGX_HTTP_MALLOC_RING), their count to *ngiven;
 * each is reported once in the ring's life.
 */
uint64_t ngx_http_malloc_ring_put(ngx_http_malloc_ring_t *ring,
    unsigned poster, long pid, uint64_t wait, uint64_t now, size_t reserve,
    ngx_http_malloc_ring_given_t *given, size_t *ngiven);

/* 1 when an entry may be used again; given (may be NULL) as above */
int ngx_http_malloc_ring_spent(ngx_http_malloc_ring_t *ring,
    ngx_http_malloc_ring_entry_t *e, uint64_t now,
    ngx_http_malloc_ring_given_t *given, size_t *ngiven);

/* the poster waits no more */
void ngx_http_malloc_ring_close(ngx_http_malloc_ring_t *ring, uint64_t seq);

/* 1 when nobody waits for "seq" (closed, or its entry used again) */
int ngx_http_malloc_ring_closed(ngx_http_malloc_ring_t *ring, uint64_t seq);

/*
 * The next command for a worker that saw "applied": 1 with *next set
 * and its entry still held, 0 with *next set when that entry was used
 * again (the worker missed it), -1 when there is none.  A worker that
 * fell more than a ring behind skips to the oldest kept.
 */
int ngx_http_malloc_ring_next(ngx_http_malloc_ring_t *ring, uint64_t applied,
    uint64_t *next);

/* the worker at "index" of the current generation; 1 when it is live */
int ngx_http_malloc_ring_live(ngx_http_malloc_ring_t *ring, size_t index);

/* what held a given-up entry, for the log; its length, cut to "size" */
#define NGX_HTTP_MALLOC_RING_TEXT     160

size_t ngx_http_malloc_ring_given_text(const ngx_http_malloc_ring_given_t *g,
    char *buf, size_t size);


#endif /* _NGX_HTTP_MALLOC_RING_H_INCLUDED_ */
