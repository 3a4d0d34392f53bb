
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * Unit tests for what traffic holds, counted (ngx_http_malloc_tally.c):
 * the buckets of finished requests at their bounds, rows added up, the
 * top requests kept whatever the order they come in (and none kept with
 * top=0), a path cut and escaped, the top= argument, the labels, and the
 * sentence both ways.
 */


#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "ngx_http_malloc_tally.h"


static void test_buckets(void);
static void test_merge(void);
static void test_top(void);
static void test_top_none(void);
static void test_path(void);
static void test_top_arg(void);
static void test_label(void);
static void test_sentence(void);


int
main(void)
{
    test_buckets();
    test_merge();
    test_top();
    test_top_none();
    test_path();
    test_top_arg();
    test_label();
    test_sentence();

    return done_testing();
}


static void
test_buckets(void)
{
    ngx_http_malloc_tally_done_t  d;

    memset(&d, 0, sizeof(d));

    ngx_http_malloc_tally_done(&d, 0);
    ngx_http_malloc_tally_done(&d, 4096);
    ngx_http_malloc_tally_done(&d, 4097);
    ngx_http_malloc_tally_done(&d, 1048576);
    ngx_http_malloc_tally_done(&d, 67108864);
    ngx_http_malloc_tally_done(&d, 67108865);

    is_int((long) d.buckets[0], 2, "up to 4 KiB: 0 and 4096 (inclusive)");
    is_int((long) d.buckets[1], 1, "4097 in the next");
    is_int((long) d.buckets[4], 1, "1 MiB in the 1 MiB bucket");
    is_int((long) d.buckets[7], 1, "64 MiB in the last bounded one");
    is_int((long) d.buckets[8], 1, "more: the last");
    is_int((long) d.count, 6, "count");
    is_int((long) d.max, 67108865, "max");
    ok(d.sum == (uint64_t) 4096 + 4097 + 1048576 + 67108864 + 67108865,
       "sum");
}


static void
test_merge(void)
{
    ngx_http_malloc_tally_row_t  a, b;

    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));

    a.now.n = 2;
    a.now.bytes = 100;
    ngx_http_malloc_tally_done(&a.done, 5000);
    b.now.n = 3;
    b.now.bytes = 50;
    ngx_http_malloc_tally_done(&b.done, 70000);
    ngx_http_malloc_tally_done(&b.done, 10);

    ngx_http_malloc_tally_merge(&a, &b);

    is_int((long) a.now.n, 5, "merge: requests add");
    is_int((long) a.now.bytes, 150, "merge: bytes add");
    is_int((long) a.done.count, 3, "merge: counts add");
    is_int((long) a.done.max, 70000, "merge: the larger max");
    is_int((long) a.done.buckets[0], 1, "merge: buckets add (4 KiB)");
    is_int((long) a.done.buckets[1], 1, "merge: buckets add (16 KiB)");
    is_int((long) a.done.buckets[3], 1, "merge: buckets add (256 KiB)");
}


static void
test_top(void)
{
    size_t                         i, n, order;
    uint64_t                       want;
    ngx_http_malloc_tally_top_t    top;
    ngx_http_malloc_tally_req_t    reqs[5], *heap[5], *out[5], *req;
    static const uint64_t          in[3][12] = {
        { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 },
        { 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1 },
        { 7, 1, 12, 3, 9, 5, 11, 2, 10, 4, 8, 6 }
    };

    for (order = 0; order < 3; order++) {
        top.n = 0;
        top.cap = 5;
        top.reqs = reqs;
        top.heap = heap;

        for (i = 0; i < 12; i++) {
            req = ngx_http_malloc_tally_offer(&top, in[order][i]);

            if (req != NULL) {
                ok(req->bytes == in[order][i] && req->row == -1
                   && req->path[0] == '\0', "order %zu: offered %llu, "
                   "an entry of its bytes, the rest blank", order,
                   (unsigned long long) in[order][i]);
            }
        }

        n = ngx_http_malloc_tally_sorted(&top, out);
        is_int((long) n, 5, "order %zu: five kept", order);

        for (i = 0, want = 12; i < n; i++, want--) {
            ok(out[i]->bytes == want, "order %zu: #%zu is %llu", order, i,
               (unsigned long long) want);
        }
    }

    /* ties: not more than the room, the first ones kept */

    top.n = 0;
    top.cap = 2;

    ok(ngx_http_malloc_tally_offer(&top, 5) != NULL, "ties: the first");
    ok(ngx_http_malloc_tally_offer(&top, 5) != NULL, "ties: the second");
    ok(ngx_http_malloc_tally_offer(&top, 5) == NULL,
       "ties: a third of the same size is not kept");
}


static void
test_top_none(void)
{
    ngx_http_malloc_tally_top_t  top;
    ngx_http_malloc_tally_req_t  reqs[1], *heap[1], *out[1];

    top.n = 0;
    top.cap = 0;
    top.reqs = reqs;
    top.heap = heap;

    ok(ngx_http_malloc_tally_offer(&top, 1000) == NULL, "top=0 keeps none");
    is_int((long) ngx_http_malloc_tally_sorted(&top, out), 0,
           "top=0: nothing sorted");
}


static void
test_path(void)
{
    size_t          n, i;
    char            out[NGX_HTTP_MALLOC_TALLY_PATH_MAX];
    unsigned char   uri[600];

    n = ngx_http_malloc_tally_path((unsigned char *) "/a/b?token=secret",
                                   17, out);
    is_str(out, "/a/b", "path: no query string");
    is_int((long) n, 4, "path: its length");

    (void) ngx_http_malloc_tally_path((unsigned char *) "/x#frag", 7, out);
    is_str(out, "/x", "path: no fragment");

    (void) ngx_http_malloc_tally_path((unsigned char *) "/a b\"\\\x01\xff%41",
                                      11, out);
    is_str(out, "/a%20b\"\\%01%FF%41", "path: space, control and non-ASCII "
           "bytes escaped, quotes left to the JSON writer");

    (void) ngx_http_malloc_tally_path((unsigned char *) "", 0, out);
    is_str(out, "", "path: none yet");

    memset(uri, 'a', sizeof(uri));
    uri[0] = '/';

    n = ngx_http_malloc_tally_path(uri, sizeof(uri), out);
    is_int((long) n, NGX_HTTP_MALLOC_TALLY_PATH + 3, "path: cut at 256");
    is_str(out + NGX_HTTP_MALLOC_TALLY_PATH, "...", "path: the cut said");

    n = ngx_http_malloc_tally_path(uri, NGX_HTTP_MALLOC_TALLY_PATH, out);
    is_int((long) n, NGX_HTTP_MALLOC_TALLY_PATH, "path: 256 exactly, whole");

    uri[NGX_HTTP_MALLOC_TALLY_PATH] = '?';
    n = ngx_http_malloc_tally_path(uri, sizeof(uri), out);
    is_int((long) n, NGX_HTTP_MALLOC_TALLY_PATH,
           "path: 256 and its query: whole, no cut said");

    /* the worst case fits: every byte escaped, and the cut */

    for (i = 0; i < sizeof(uri); i++) {
        uri[i] = 0x80;
    }

    n = ngx_http_malloc_tally_path(uri, sizeof(uri), out);
    is_int((long) n, 3 * NGX_HTTP_MALLOC_TALLY_PATH + 3,
           "path: all escaped, within NGX_HTTP_MALLOC_TALLY_PATH_MAX");
}


static void
test_top_arg(void)
{
    size_t  n;

    n = 7;
    ok(ngx_http_malloc_tally_top_arg((unsigned char *) "0", 1, &n) == 0
       && n == 0, "top=0");
    ok(ngx_http_malloc_tally_top_arg((unsigned char *) "1000", 4, &n) == 0
       && n == 1000, "top=1000");

    n = 7;
    ok(ngx_http_malloc_tally_top_arg((unsigned char *) "1001", 4, &n) == -1
       && n == 7, "top=1001: refused, unchanged");
    ok(ngx_http_malloc_tally_top_arg((unsigned char *) "100000", 6, &n)
       == -1, "top=100000: refused");
    ok(ngx_http_malloc_tally_top_arg((unsigned char *) "-1", 2, &n) == -1,
       "top=-1: refused");
    ok(ngx_http_malloc_tally_top_arg((unsigned char *) "x", 1, &n) == -1,
       "top=x: refused");
    ok(ngx_http_malloc_tally_top_arg((unsigned char *) "", 0, &n) == -1,
       "top=: refused");
    ok(ngx_http_malloc_tally_top_arg((unsigned char *) "5 ", 2, &n) == -1,
       "top=\"5 \": refused");
}


static void
test_label(void)
{
    char  out[16];

    ngx_http_malloc_tally_label("~ \\.php\"$", out, sizeof(out));
    is_str(out, "~ \\\\.php\\\"$", "label: backslash and quote escaped");

    ngx_http_malloc_tally_label("/a-very-long-location", out, sizeof(out));
    is_str(out, "", "label: too long for its room: empty, not cut");

    ngx_http_malloc_tally_label("", out, sizeof(out));
    is_str(out, "", "label: empty");
}


static void
test_sentence(void)
{
    char    out[512];
    size_t  n;

    n = ngx_http_malloc_tally_sentence(out, sizeof(out), 1048576,
                                       10 * 1048576, "a", "/up", 1048576);
    is_str(out, "in-flight traffic holds 1.0 MiB of the 10.0 MiB allocated "
           "(10.0%); the rest is kept outside requests: see the heap "
           "profile", "sentence: something kept");
    is_int((long) n, (long) strlen(out), "sentence: its length");

    (void) ngx_http_malloc_tally_sentence(out, sizeof(out), 9 * 1048576,
                                          10 * 1048576, "a", "/up",
                                          8 * 1048576 + 524288);
    is_str(out, "in-flight traffic holds 9.0 MiB of the 10.0 MiB allocated "
           "(90.0%): the memory is the traffic, most of it in location "
           "\"/up\" of server \"a\" (8.5 MiB); see the top requests",
           "sentence: the traffic, and where");

    (void) ngx_http_malloc_tally_sentence(out, sizeof(out), 20 * 1048576,
                                          10 * 1048576, NULL, NULL, 0);
    is_str(out, "in-flight traffic holds 20.0 MiB of the 10.0 MiB allocated "
           "(100.0%): the memory is the traffic, in no request: see its "
           "states", "sentence: no more than all; idle connections, no "
           "location to name");

    (void) ngx_http_malloc_tally_sentence(out, sizeof(out), 3000, 0, NULL,
                                          NULL, 0);
    is_str(out, "in-flight traffic holds 2.9 KiB; the allocator's total is "
           "not known here", "sentence: no total");

    (void) ngx_http_malloc_tally_sentence(out, 10, 3000, 0, NULL, NULL, 0);
    is_int((long) strlen(out), 9, "sentence: cut to its room");
}
