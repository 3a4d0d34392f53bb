
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * What traffic holds, counted: the states a connection is in, the sizes
 * of finished requests in buckets, the biggest requests kept as they are
 * offered, a request's path made safe to show, the top= argument, and
 * the one sentence that says whether the memory is the traffic.  Pure C:
 * the walk of a worker's connections (ngx_http_malloc_walk.c) fills
 * these; the unit tests and the fuzzer call them with no nginx at all.
 */


#ifndef _NGX_HTTP_MALLOC_TALLY_H_INCLUDED_
#define _NGX_HTTP_MALLOC_TALLY_H_INCLUDED_


#include <stddef.h>
#include <stdint.h>


/* what a connection is doing, as GET traffic names it */
typedef enum {
    NGX_HTTP_MALLOC_TALLY_READING = 0,  /* the request line, headers */
    NGX_HTTP_MALLOC_TALLY_BODY,         /* reading the request body */
    NGX_HTTP_MALLOC_TALLY_PROCESSING,   /* in a handler, no upstream */
    NGX_HTTP_MALLOC_TALLY_UPSTREAM,     /* waiting on the upstream */
    NGX_HTTP_MALLOC_TALLY_SENDING,      /* the response, header sent */
    NGX_HTTP_MALLOC_TALLY_UPGRADED,     /* a proxied upgrade (websocket) */
    NGX_HTTP_MALLOC_TALLY_KEEPALIVE,    /* idle between requests */
    NGX_HTTP_MALLOC_TALLY_WAITING,      /* accepted, no request yet */
    NGX_HTTP_MALLOC_TALLY_CLOSING,      /* lingering close */
    NGX_HTTP_MALLOC_TALLY_STATES
} ngx_http_malloc_tally_state_e;


/* a count of connections or requests and the bytes they hold */
typedef struct {
    uint64_t                    n;
    uint64_t                    bytes;
} ngx_http_malloc_tally_sum_t;


/* finished requests' sizes: up to 4 KiB, 16 KiB, ... 64 MiB, more */
#define NGX_HTTP_MALLOC_TALLY_BUCKETS  9

typedef struct {
    uint64_t                    count;
    uint64_t                    sum;
    uint64_t                    max;
    uint64_t                    buckets[NGX_HTTP_MALLOC_TALLY_BUCKETS];
                                            /* each its own, not
                                               cumulative */
} ngx_http_malloc_tally_done_t;


/* one location's figures: in flight now, and the finished requests */
typedef struct {
    ngx_http_malloc_tally_sum_t   now;
    ngx_http_malloc_tally_done_t  done;
} ngx_http_malloc_tally_row_t;


/* a location as a worker publishes it for GET stats and metrics */
#define NGX_HTTP_MALLOC_TALLY_SERVER   64
#define NGX_HTTP_MALLOC_TALLY_NAME     128

typedef struct {
    char                          server[NGX_HTTP_MALLOC_TALLY_SERVER];
    char                          location[NGX_HTTP_MALLOC_TALLY_NAME];
    ngx_http_malloc_tally_row_t   row;
} ngx_http_malloc_tally_named_t;


/* a worker's published figures: its traffic and its locations' rows */
typedef struct {
    uint64_t                      generation;
    uint64_t                      time;     /* ms, of the walk */
    ngx_http_malloc_tally_sum_t   total;    /* connections */
    ngx_http_malloc_tally_sum_t   requests;
    uint64_t                      allocated;
    size_t                        n;
    size_t                        cap;
    ngx_http_malloc_tally_named_t rows[1];  /* cap of them */
} ngx_http_malloc_tally_table_t;

#define ngx_http_malloc_tally_table_size(cap)                                 \
    (offsetof(ngx_http_malloc_tally_table_t, rows)                            \
     + (cap) * sizeof(ngx_http_malloc_tally_named_t))


/* the longest path shown, in bytes of the request as received */
#define NGX_HTTP_MALLOC_TALLY_PATH     256

/* room for it escaped: each byte may become "%XX", and "..." and NUL */
#define NGX_HTTP_MALLOC_TALLY_PATH_MAX  (3 * NGX_HTTP_MALLOC_TALLY_PATH + 4)

/* top=: the default and the most */
#define NGX_HTTP_MALLOC_TALLY_TOP      20
#define NGX_HTTP_MALLOC_TALLY_TOP_MAX  1000


/* one request as the top list shows it */
typedef struct {
    uint64_t                    bytes;
    uint64_t                    age;        /* ms */
    unsigned                    state;      /* tally_state_e */
    unsigned                    http_version;   /* 1000, 1001, 2000 */
    int                         row;        /* its location's, -1: none */
    char                        method[32];
    char                        client[64];
    char                        path[NGX_HTTP_MALLOC_TALLY_PATH_MAX];
} ngx_http_malloc_tally_req_t;


/* the biggest requests, kept in a heap by bytes as they are offered */
typedef struct {
    size_t                        n;
    size_t                        cap;
    ngx_http_malloc_tally_req_t  *reqs;     /* cap of them */
    ngx_http_malloc_tally_req_t **heap;     /* cap pointers into reqs */
} ngx_http_malloc_tally_top_t;


extern const char *ngx_http_malloc_tally_states[NGX_HTTP_MALLOC_TALLY_STATES];
extern const uint64_t
    ngx_http_malloc_tally_bounds[NGX_HTTP_MALLOC_TALLY_BUCKETS - 1];


void ngx_http_malloc_tally_done(ngx_http_malloc_tally_done_t *d,
    uint64_t bytes);
void ngx_http_malloc_tally_merge(ngx_http_malloc_tally_row_t *to,
    const ngx_http_malloc_tally_row_t *from);

/*
 * A request of "bytes": the entry to fill in (its bytes set), or NULL
 * when the top is full of bigger ones.  cap 0 keeps none.
 */
ngx_http_malloc_tally_req_t *ngx_http_malloc_tally_offer(
    ngx_http_malloc_tally_top_t *top, uint64_t bytes);
/* the entries kept, biggest first (the heap is used up) */
size_t ngx_http_malloc_tally_sorted(ngx_http_malloc_tally_top_t *top,
    ngx_http_malloc_tally_req_t **out);

/*
 * The path of a request line's target: up to '?' or '#', at most
 * NGX_HTTP_MALLOC_TALLY_PATH bytes of it ("..." after a cut), with every
 * byte that is not printable ASCII (and '%' itself kept as it came, a
 * quote or backslash escaped by the JSON writer) as "%XX": always valid
 * UTF-8.  out has NGX_HTTP_MALLOC_TALLY_PATH_MAX bytes.
 */
size_t ngx_http_malloc_tally_path(const unsigned char *uri, size_t len,
    char *out);
/* a Prometheus label's value: '\\' and '"' escaped; "" if it cannot fit */
void ngx_http_malloc_tally_label(const char *in, char *out, size_t size);
/* the row that holds most in flight, or NULL */
const ngx_http_malloc_tally_named_t *ngx_http_malloc_tally_most(
    const ngx_http_malloc_tally_named_t *rows, size_t n);

/* printable ASCII of at most size - 1 bytes, others as '?' */
void ngx_http_malloc_tally_text(const unsigned char *s, size_t len,
    char *out, size_t size);

/* top=N: 0 to NGX_HTTP_MALLOC_TALLY_TOP_MAX; -1: not a number in range */
int ngx_http_malloc_tally_top_arg(const unsigned char *s, size_t len,
    size_t *n);

/*
 * The sentence: is the memory the traffic or something kept?  "server"
 * and "location" name the location that holds most, "where_bytes" (a
 * location NULL: none; "": the server's level, no location chosen yet).
 * Returns its length.
 */
size_t ngx_http_malloc_tally_sentence(char *out, size_t size,
    uint64_t traffic, uint64_t allocated, const char *server,
    const char *location, uint64_t where_bytes);


#endif /* _NGX_HTTP_MALLOC_TALLY_H_INCLUDED_ */
