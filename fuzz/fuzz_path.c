
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * libFuzzer target for the dump-path rules.
 *
 * Input: one flag byte, then the name.  Flag bit 0 sets "multi"; bit 1
 * prefixes the name with the dump directory and "/", so the absolute-path
 * branch is reached without the fuzzer guessing the directory; bit 2 takes
 * the size of "out" from the next byte instead of the module's 256.
 *
 * Whatever the input, a template that is accepted must name a plain file
 * directly in the directory, and expand to at most 255 bytes.
 */


#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ngx_http_malloc_path.h"


#define DUMP_DIR   "/var/lib/nginx/malloc"

/* the module's NGX_HTTP_MALLOC_TMPL_MAX */
#define TMPL_SIZE  256


int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
static void check(int cond, const char *what);
static int scan_template(const char *tmpl, size_t len, int *pids);
static void check_accepted(const unsigned char *name, size_t len, int multi,
    const char *out, size_t out_len, size_t out_size);


static void
check(int cond, const char *what)
{
    if (!cond) {
        fprintf(stderr, "fuzz_path: invariant broken: %s\n", what);
        abort();
    }
}


/* counts "%p" tokens; 0 if a "%" starts no valid escape */

static int
scan_template(const char *tmpl, size_t len, int *pids)
{
    size_t  i;

    *pids = 0;

    for (i = 0; i < len; i++) {
        if (tmpl[i] != '%') {
            continue;
        }

        if (i + 1 == len || (tmpl[i + 1] != 'p' && tmpl[i + 1] != '%')) {
            return 0;
        }

        if (tmpl[i + 1] == 'p') {
            (*pids)++;
        }

        i++;
    }

    return 1;
}


static void
check_accepted(const unsigned char *name, size_t len, int multi,
    const char *out, size_t out_len, size_t out_size)
{
    int          pids, name_pids, n, m;
    char         expanded[NGX_HTTP_MALLOC_NAME_MAX + 1];
    size_t       i, dot, dir_len;
    const char  *p;

    check(out_len < out_size, "the template fits in out with its NUL");
    check(out[out_len] == '\0', "the template is NUL-terminated");
    check(strlen(out) == out_len, "the template has no NUL inside");
    check(out_len > 0, "the template is not empty");
    check(out[0] != '.', "the template does not start with a dot");

    for (i = 0; i < out_len; i++) {
        check(out[i] != '/', "the template has no slash");
        check((unsigned char) out[i] >= 0x20 && out[i] != 0x7f,
              "the template has no control character");
    }

    check(scan_template(out, out_len, &pids), "every % starts %p or %%");
    check(!multi || pids > 0, "with multi, the template has %p");

    /* the template is the name, less the directory, maybe with ".%p" */

    p = (const char *) name;
    dir_len = sizeof(DUMP_DIR) - 1;

    if (len > 0 && name[0] == '/') {
        check(len > dir_len + 1
              && memcmp(name, DUMP_DIR "/", dir_len + 1) == 0,
              "an absolute name lies in the directory");
        p += dir_len + 1;
        len -= dir_len + 1;
    }

    check(scan_template(p, len, &name_pids), "the name has valid escapes");

    if (out_len == len) {
        check(memcmp(out, p, len) == 0, "the name is kept as is");

    } else {
        check(multi && name_pids == 0, "\".%p\" only added for multi");
        check(out_len == len + 3, "only \".%p\" is added");

        dot = len;

        for (i = len; i > 1; i--) {
            if (p[i - 1] == '.') {
                dot = i - 1;
                break;
            }
        }

        check(memcmp(out, p, dot) == 0
              && memcmp(out + dot, ".%p", 3) == 0
              && memcmp(out + dot + 3, p + dot, len - dot) == 0,
              "\".%p\" goes before the last extension");
    }

    /* the widest pid still gives a file name the file system takes */

    n = ngx_http_malloc_path_expand(out, 9999999999L, NULL, 0);
    check(n >= 0 && n <= NGX_HTTP_MALLOC_NAME_MAX,
          "the expanded name is at most 255 bytes");

    m = ngx_http_malloc_path_expand(out, 4194304, expanded, sizeof(expanded));
    check(m >= 0 && m == n - 3 * pids, "a 7-digit pid is 3 bytes shorter");
    check((size_t) m == strlen(expanded), "the expansion has no NUL inside");
    check(expanded[0] != '.', "the expanded name does not start with a dot");
    check(memchr(expanded, '/', m) == NULL, "the expanded name has no slash");
}


int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int             rc, multi, control;
    char           *out;
    size_t          i, len, out_size, prefix;
    unsigned char   flags;
    unsigned char  *name;

    if (size < 1) {
        return 0;
    }

    flags = data[0];
    multi = flags & 1;
    prefix = (flags & 2) ? sizeof(DUMP_DIR "/") - 1 : 0;
    out_size = TMPL_SIZE;

    data++;
    size--;

    if (flags & 4) {
        if (size < 1) {
            return 0;
        }

        out_size = data[0];
        data++;
        size--;
    }

    /* exact sizes, so that ASan sees any access past the end */

    len = prefix + size;
    name = malloc(len ? len : 1);
    out = malloc(out_size ? out_size : 1);

    if (name == NULL || out == NULL) {
        abort();
    }

    memcpy(name, DUMP_DIR "/", prefix);
    memcpy(name + prefix, data, size);

    rc = ngx_http_malloc_path_template(DUMP_DIR, sizeof(DUMP_DIR) - 1, name,
                                       len, multi, out, out_size);

    if (rc >= 0) {
        check_accepted(name, len, multi, out, rc, out_size);

    } else {
        check(rc >= -NGX_HTTP_MALLOC_PATH_RESERVED, "a known refusal code");
        check(ngx_http_malloc_path_strerror(rc) != NULL, "a refusal message");
    }

    /* control bytes are refused first, whatever else is wrong */

    control = 0;

    for (i = 0; i < len; i++) {
        if (name[i] < 0x20 || name[i] == 0x7f) {
            control = 1;
        }
    }

    check(control == (rc == -NGX_HTTP_MALLOC_PATH_CONTROL),
          "names with control bytes, and only they, are refused as such");

    free(name);
    free(out);

    return 0;
}
