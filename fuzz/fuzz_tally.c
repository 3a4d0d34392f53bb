
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * libFuzzer target for what traffic holds, counted: a request's path as
 * the top list shows it, the top= argument, a label's escape, and the
 * top requests kept.
 *
 * Input: the bytes of a request line's target (the path) and of a top=
 * value, the same bytes each time; then, eight bytes at a time, request
 * sizes offered to a top of (first byte % 8) entries.
 *
 * Whatever the input: the path is valid printable ASCII within its room,
 * with no '?' or '#'; an accepted top= is at most 1000; a label has no
 * unescaped quote; the top keeps the biggest sizes, biggest first.
 */


#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ngx_http_malloc_tally.h"


int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
static void check(int cond, const char *what);
static void check_path(const uint8_t *data, size_t size);
static void check_top(const uint8_t *data, size_t size);


static void
check(int cond, const char *what)
{
    if (!cond) {
        fprintf(stderr, "fuzz_tally: invariant broken: %s\n", what);
        abort();
    }
}


int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t  n;
    char    label[64];

    check_path(data, size);

    n = 12345;

    if (ngx_http_malloc_tally_top_arg(data, size, &n) == 0) {
        check(n <= NGX_HTTP_MALLOC_TALLY_TOP_MAX, "top= within its range");

    } else {
        check(n == 12345, "a refused top= changes nothing");
    }

    if (size > 0 && memchr(data, '\0', size) == NULL && size < 200) {
        char  in[200];

        memcpy(in, data, size);
        in[size] = '\0';

        ngx_http_malloc_tally_label(in, label, sizeof(label));

        for (n = 0; label[n] != '\0'; n++) {
            if (label[n] == '\\') {
                check(label[n + 1] == '\\' || label[n + 1] == '"',
                      "a backslash in a label escapes");
                n++;

            } else {
                check(label[n] != '"', "no bare quote in a label");
            }
        }

        check(n < sizeof(label), "a label within its room");
    }

    check_top(data, size);

    return 0;
}


static void
check_path(const uint8_t *data, size_t size)
{
    size_t  n, i;
    char    out[NGX_HTTP_MALLOC_TALLY_PATH_MAX];

    n = ngx_http_malloc_tally_path(data, size, out);

    check(n < sizeof(out), "the path within its room");
    check(strlen(out) == n, "the path's length");

    for (i = 0; i < n; i++) {
        check(out[i] > 0x20 && out[i] < 0x7f, "printable ASCII only");
        check(out[i] != '?' && out[i] != '#', "no query, no fragment");
    }
}


static void
check_top(const uint8_t *data, size_t size)
{
    size_t                        i, k, n, cap, count;
    uint64_t                      v, sizes[256];
    ngx_http_malloc_tally_top_t   top;
    ngx_http_malloc_tally_req_t   reqs[8], *heap[8], *out[8];

    if (size == 0) {
        return;
    }

    cap = data[0] % 8;
    top.n = 0;
    top.cap = cap;
    top.reqs = reqs;
    top.heap = heap;

    count = 0;

    for (i = 1; i + 8 <= size && count < 256; i += 8) {
        memcpy(&v, data + i, 8);
        sizes[count++] = v;
        (void) ngx_http_malloc_tally_offer(&top, v);
    }

    n = ngx_http_malloc_tally_sorted(&top, out);

    check(n == (count < cap ? count : cap), "as many kept as room");

    for (i = 1; i < n; i++) {
        check(out[i - 1]->bytes >= out[i]->bytes, "biggest first");
    }

    /* nothing left out is bigger than the smallest kept */

    for (k = 0; n == cap && n > 0 && k < count; k++) {
        for (i = 0; i < n; i++) {
            if (out[i]->bytes == sizes[k]) {
                break;
            }
        }

        check(i < n || sizes[k] <= out[n - 1]->bytes,
              "no bigger request left out");
    }
}
