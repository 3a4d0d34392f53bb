
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * libFuzzer target for the demangling wrapper of symbol.c
 * (ngx_http_malloc_symbols_demangle, over libiberty's callback
 * demanglers).
 *
 * Input: one byte, the size of the output buffer (0: 4096), then the
 * symbol, cut at its first NUL.  Odd first bytes put "_Z" before the
 * symbol, and the ones that are 2 modulo 4 "_R", so that most inputs
 * reach the grammars rather than the check of the prefix.
 *
 * Whatever the input: the result is 0 or the length of a NUL-ended
 * string within the buffer, 0 leaves the buffer empty, no byte past the
 * buffer is written (the buffer is allocated to its size, for ASan), a
 * second run gives the same bytes, and a name that fits the buffer is
 * the one a buffer of 4096 bytes gets.  What demangles must be printable
 * ASCII.  libiberty is not instrumented: the fuzzer sees the wrapper's
 * branches only, and libiberty's time and stack (libFuzzer's -timeout,
 * the wrapper's jump out of a name that outgrows the buffer).
 */


#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ngx_http_malloc_symbol.h"


#define BIG  4096


int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
static void check(int cond, const char *what);


static void
check(int cond, const char *what)
{
    if (!cond) {
        fprintf(stderr, "fuzz_demangle: invariant broken: %s\n", what);
        abort();
    }
}


int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char        *sym, *buf, *again, *big;
    size_t       len, out, n, m, i, pre;
    const char  *prefix;

    if (size < 1) {
        return 0;
    }

    out = data[0] == 0 ? BIG : data[0];
    prefix = (data[0] & 1) ? "_Z" : ((data[0] & 3) == 2 ? "_R" : "");
    pre = strlen(prefix);

    data++;
    size--;

    len = strnlen((const char *) data, size);

    /* exact size: a read past the NUL shows */

    sym = malloc(pre + len + 1);
    buf = malloc(out);
    again = malloc(out);
    big = malloc(BIG);

    if (sym == NULL || buf == NULL || again == NULL || big == NULL) {
        abort();
    }

    memcpy(sym, prefix, pre);
    memcpy(sym + pre, data, len);
    sym[pre + len] = '\0';

    memset(buf, 0x7f, out);

    n = ngx_http_malloc_symbols_demangle(sym, buf, out);

    check(n < out, "the length fits the buffer with its NUL");
    check(buf[n] == '\0', "the output ends at its length");
    check(strlen(buf) == n, "no NUL before the length");
    check(n == 0 || buf[0] != '\0', "0 only with an empty buffer");

    for (i = 0; i < n; i++) {
        check(buf[i] >= 0x20 && buf[i] < 0x7f, "printable ASCII");
    }

    memset(again, 0x7f, out);
    check(ngx_http_malloc_symbols_demangle(sym, again, out) == n
          && memcmp(buf, again, n + 1) == 0, "the same on a second run");

    if (n > 0) {
        m = ngx_http_malloc_symbols_demangle(sym, big, BIG);
        check(m == n && memcmp(buf, big, n + 1) == 0,
              "the same in a buffer of 4096 bytes");
    }

    free(sym);
    free(buf);
    free(again);
    free(big);

    return 0;
}
