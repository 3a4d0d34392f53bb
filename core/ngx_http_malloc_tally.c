
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * What traffic holds, counted (see ngx_http_malloc_tally.h).  No state
 * of its own: the caller owns every table and the top's arrays.
 */


#include <stdio.h>
#include <string.h>

#include "ngx_http_malloc_tally.h"


static void ngx_http_malloc_tally_down(ngx_http_malloc_tally_top_t *top,
    size_t i);
static size_t ngx_http_malloc_tally_size(char *out, size_t size,
    uint64_t bytes);


const char *ngx_http_malloc_tally_states[NGX_HTTP_MALLOC_TALLY_STATES] = {
    "reading_request",
    "reading_body",
    "processing",
    "upstream",
    "sending",
    "upgraded",
    "keepalive",
    "waiting",
    "closing"
};


/* the upper bounds (inclusive) of all buckets but the last */
const uint64_t ngx_http_malloc_tally_bounds[NGX_HTTP_MALLOC_TALLY_BUCKETS - 1]
    = {
    4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864
};


void
ngx_http_malloc_tally_done(ngx_http_malloc_tally_done_t *d, uint64_t bytes)
{
    size_t  i;

    for (i = 0; i < NGX_HTTP_MALLOC_TALLY_BUCKETS - 1; i++) {
        if (bytes <= ngx_http_malloc_tally_bounds[i]) {
            break;
        }
    }

    d->buckets[i]++;
    d->count++;
    d->sum += bytes;

    if (bytes > d->max) {
        d->max = bytes;
    }
}


void
ngx_http_malloc_tally_merge(ngx_http_malloc_tally_row_t *to,
    const ngx_http_malloc_tally_row_t *from)
{
    size_t  i;

    to->now.n += from->now.n;
    to->now.bytes += from->now.bytes;
    to->done.count += from->done.count;
    to->done.sum += from->done.sum;

    if (from->done.max > to->done.max) {
        to->done.max = from->done.max;
    }

    for (i = 0; i < NGX_HTTP_MALLOC_TALLY_BUCKETS; i++) {
        to->done.buckets[i] += from->done.buckets[i];
    }
}


/* a min-heap on bytes: the smallest kept is the first to go */

ngx_http_malloc_tally_req_t *
ngx_http_malloc_tally_offer(ngx_http_malloc_tally_top_t *top, uint64_t bytes)
{
    size_t                        i, up;
    ngx_http_malloc_tally_req_t  *req, *t;

    if (top->cap == 0) {
        return NULL;
    }

    if (top->n == top->cap) {
        if (bytes <= top->heap[0]->bytes) {
            return NULL;
        }

        req = top->heap[0];
        memset(req, 0, sizeof(ngx_http_malloc_tally_req_t));
        req->bytes = bytes;
        req->row = -1;
        ngx_http_malloc_tally_down(top, 0);
        return req;
    }

    req = &top->reqs[top->n];
    memset(req, 0, sizeof(ngx_http_malloc_tally_req_t));
    req->bytes = bytes;
    req->row = -1;

    i = top->n++;
    top->heap[i] = req;

    while (i > 0) {
        up = (i - 1) / 2;

        if (top->heap[up]->bytes <= top->heap[i]->bytes) {
            break;
        }

        t = top->heap[up];
        top->heap[up] = top->heap[i];
        top->heap[i] = t;
        i = up;
    }

    return req;
}


static void
ngx_http_malloc_tally_down(ngx_http_malloc_tally_top_t *top, size_t i)
{
    size_t                        l, r, m;
    ngx_http_malloc_tally_req_t  *t;

    for ( ;; ) {
        l = 2 * i + 1;
        r = l + 1;
        m = i;

        if (l < top->n && top->heap[l]->bytes < top->heap[m]->bytes) {
            m = l;
        }

        if (r < top->n && top->heap[r]->bytes < top->heap[m]->bytes) {
            m = r;
        }

        if (m == i) {
            return;
        }

        t = top->heap[m];
        top->heap[m] = top->heap[i];
        top->heap[i] = t;
        i = m;
    }
}


size_t
ngx_http_malloc_tally_sorted(ngx_http_malloc_tally_top_t *top,
    ngx_http_malloc_tally_req_t **out)
{
    size_t  n, k;

    n = top->n;

    /* the smallest leaves first: filled from the end */

    for (k = n; k > 0; k--) {
        out[k - 1] = top->heap[0];
        top->heap[0] = top->heap[--top->n];
        ngx_http_malloc_tally_down(top, 0);
    }

    return n;
}


size_t
ngx_http_malloc_tally_path(const unsigned char *uri, size_t len, char *out)
{
    char                  *p;
    size_t                 i;
    static const char      hex[] = "0123456789ABCDEF";

    p = out;

    for (i = 0; i < len && i < NGX_HTTP_MALLOC_TALLY_PATH; i++) {
        if (uri[i] == '?' || uri[i] == '#') {
            break;
        }

        if (uri[i] > 0x20 && uri[i] < 0x7f) {
            *p++ = (char) uri[i];
            continue;
        }

        *p++ = '%';
        *p++ = hex[uri[i] >> 4];
        *p++ = hex[uri[i] & 0xf];
    }

    if (i == NGX_HTTP_MALLOC_TALLY_PATH && i < len
        && uri[i] != '?' && uri[i] != '#')
    {
        memcpy(p, "...", 3);
        p += 3;
    }

    *p = '\0';

    return p - out;
}


void
ngx_http_malloc_tally_text(const unsigned char *s, size_t len, char *out,
    size_t size)
{
    size_t  i;

    if (size == 0) {
        return;
    }

    for (i = 0; i < len && i < size - 1; i++) {
        out[i] = (s[i] >= 0x20 && s[i] < 0x7f) ? (char) s[i] : '?';
    }

    out[i] = '\0';
}


void
ngx_http_malloc_tally_label(const char *in, char *out, size_t size)
{
    size_t  i, k;

    for (i = 0, k = 0; in[i] != '\0'; i++) {
        if (k + 3 > size) {
            k = 0;
            break;
        }

        /* a backslash or a quote (0x22) is escaped */

        if (in[i] == '\\' || in[i] == '\x22') {
            out[k++] = '\\';
        }

        out[k++] = in[i];
    }

    if (size > 0) {
        out[k] = '\0';
    }
}


const ngx_http_malloc_tally_named_t *
ngx_http_malloc_tally_most(const ngx_http_malloc_tally_named_t *rows,
    size_t n)
{
    size_t                                i;
    const ngx_http_malloc_tally_named_t  *most;

    most = NULL;

    for (i = 0; i < n; i++) {
        if (rows[i].row.now.bytes != 0
            && (most == NULL || rows[i].row.now.bytes > most->row.now.bytes))
        {
            most = &rows[i];
        }
    }

    return most;
}


int
ngx_http_malloc_tally_top_arg(const unsigned char *s, size_t len, size_t *n)
{
    size_t  i, v;

    if (len == 0 || len > 4) {
        return -1;
    }

    v = 0;

    for (i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') {
            return -1;
        }

        v = v * 10 + (s[i] - '0');
    }

    if (v > NGX_HTTP_MALLOC_TALLY_TOP_MAX) {
        return -1;
    }

    *n = v;

    return 0;
}


size_t
ngx_http_malloc_tally_sentence(char *out, size_t size, uint64_t traffic,
    uint64_t allocated, const char *server, const char *location,
    uint64_t where_bytes)
{
    int       n;
    char      t[32], a[32], w[32];
    uint64_t  permille;

    if (size == 0) {
        return 0;
    }

    (void) ngx_http_malloc_tally_size(t, sizeof(t), traffic);

    if (allocated == 0) {
        n = snprintf(out, size, "in-flight traffic holds %s; the "
                     "allocator's total is not known here", t);
        return n < 0 ? 0 : ((size_t) n < size ? (size_t) n : size - 1);
    }

    (void) ngx_http_malloc_tally_size(a, sizeof(a), allocated);

    permille = traffic >= allocated ? 1000 : traffic * 1000 / allocated;

    if (permille < 500) {
        n = snprintf(out, size, "in-flight traffic holds %s of the %s "
                     "allocated (%u.%u%%); the rest is kept outside "
                     "requests: see the heap profile", t, a,
                     (unsigned) (permille / 10), (unsigned) (permille % 10));

    } else if (location == NULL) {
        n = snprintf(out, size, "in-flight traffic holds %s of the %s "
                     "allocated (%u.%u%%): the memory is the traffic, in "
                     "no request: see its states", t, a,
                     (unsigned) (permille / 10), (unsigned) (permille % 10));

    } else {
        (void) ngx_http_malloc_tally_size(w, sizeof(w), where_bytes);

        n = snprintf(out, size, "in-flight traffic holds %s of the %s "
                     "allocated (%u.%u%%): the memory is the traffic, most "
                     "of it in location \"%s\" of server \"%s\" (%s); see "
                     "the top requests", t, a,
                     (unsigned) (permille / 10), (unsigned) (permille % 10),
                     location[0] ? location : "(none yet)",
                     server ? server : "", w);
    }

    return n < 0 ? 0 : ((size_t) n < size ? (size_t) n : size - 1);
}


/* "12.3 MiB", "4.0 KiB", "512 B": truncated toward zero */

static size_t
ngx_http_malloc_tally_size(char *out, size_t size, uint64_t bytes)
{
    int  n;

    if (bytes >= 1048576) {
        n = snprintf(out, size, "%llu.%llu MiB",
                     (unsigned long long) (bytes >> 20),
                     (unsigned long long) ((bytes & 1048575) * 10 >> 20));

    } else if (bytes >= 1024) {
        n = snprintf(out, size, "%llu.%llu KiB",
                     (unsigned long long) (bytes >> 10),
                     (unsigned long long) ((bytes & 1023) * 10 >> 10));

    } else {
        n = snprintf(out, size, "%llu B", (unsigned long long) bytes);
    }

    return n < 0 ? 0 : (size_t) n;
}
