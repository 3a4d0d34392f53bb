
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * libFuzzer target for the request body parsers.  The input is the body,
 * given to both parsers as the handler would, and a parsed dump name goes
 * on to the path rules as in the handler.
 */


#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ngx_http_malloc_json.h"
#include "ngx_http_malloc_path.h"


#define DUMP_DIR    "/var/lib/nginx/malloc"

/* the handler's NGX_HTTP_MALLOC_BODY_MAX, and a size names often exceed */
#define NAME_SIZE   4096
#define SMALL_SIZE  16


int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
static void check(int cond, const char *what);
static char *new_err(void);
static void check_err(const char *err);
static int parse_dump(const unsigned char *body, size_t len,
    unsigned char *name, size_t name_size);
static void check_name(const unsigned char *name, size_t len, int multi);


static void
check(int cond, const char *what)
{
    if (!cond) {
        fprintf(stderr, "fuzz_body: invariant broken: %s\n", what);
        abort();
    }
}


/* no NUL in it, so a reason left unterminated shows */

static char *
new_err(void)
{
    char  *err;

    err = malloc(NGX_HTTP_MALLOC_ERR_LEN);
    if (err == NULL) {
        abort();
    }

    memset(err, 'X', NGX_HTTP_MALLOC_ERR_LEN);

    return err;
}


static void
check_err(const char *err)
{
    check(memchr(err, '\0', NGX_HTTP_MALLOC_ERR_LEN) != NULL,
          "the reason is NUL-terminated");
    check(err[0] != '\0' && err[0] != 'X', "a refusal gives a reason");
}


/* "name" must be name_size bytes on the heap, for ASan to see overruns */

static int
parse_dump(const unsigned char *body, size_t len, unsigned char *name,
    size_t name_size)
{
    int    rc;
    char  *err;

    err = new_err();

    rc = ngx_http_malloc_parse_dump(body, len, name, name_size, err);

    check(rc >= -1, "parse_dump returns -1 or a length");
    check(rc < 0 || (size_t) rc <= name_size, "the name fits in name_size");

    if (rc < 0) {
        check_err(err);
    }

    free(err);

    return rc;
}


static void
check_name(const unsigned char *name, size_t len, int multi)
{
    int     rc;
    char    out[256];
    size_t  i;

    rc = ngx_http_malloc_path_template(DUMP_DIR, sizeof(DUMP_DIR) - 1, name,
                                       len, multi, out, sizeof(out));

    /* "\u0000" in the body must not cut the name short */

    if (memchr(name, '\0', len) != NULL) {
        check(rc == -NGX_HTTP_MALLOC_PATH_CONTROL,
              "a name with NUL is refused by the path rules");
    }

    if (rc < 0) {
        return;
    }

    check(out[0] != '.', "an accepted dump name does not start with a dot");

    for (i = 0; i < (size_t) rc; i++) {
        check(out[i] != '/', "an accepted dump name has no slash");
        check((unsigned char) out[i] >= 0x20 && out[i] != 0x7f,
              "an accepted dump name has no control character");
    }

    check(ngx_http_malloc_path_expand(out, 9999999999L, NULL, 0) >= 0,
          "an accepted dump name expands to at most 255 bytes");
}


int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int                        rc, active, n, small, lg, force;
    char                      *err;
    unsigned char             *body, *name, *short_name;
    ngx_http_malloc_active_t   cmd;

    /* an exact copy, not NUL-terminated, as the handler's body is */

    body = malloc(size ? size : 1);
    name = malloc(NAME_SIZE);
    short_name = malloc(SMALL_SIZE);

    if (body == NULL || name == NULL || short_name == NULL) {
        abort();
    }

    memcpy(body, data, size);

    err = new_err();

    rc = ngx_http_malloc_parse_reset(body, size, &lg, &force, err);

    check(rc == -1 || (lg >= -1 && lg <= 63 && (force == 0 || force == 1)),
          "parse_reset gives lg_sample -1..63 and a boolean force");

    cmd.active = 42;
    rc = ngx_http_malloc_parse_active(body, size, &cmd, err);
    active = cmd.active;

    check(rc == 0 || rc == -1, "parse_active returns 0 or -1");

    if (rc == 0) {
        check(active == 0 || active == 1, "active is set to 0 or 1");
        check(strlen(cmd.duration) < NGX_HTTP_MALLOC_DURATION_LEN,
              "a duration fits its buffer");

    } else {
        check_err(err);
    }

    free(err);

    /* the same body with a smaller buffer: same answer, or "too long" */

    n = parse_dump(body, size, name, NAME_SIZE);
    small = parse_dump(body, size, short_name, SMALL_SIZE);

    if (n > SMALL_SIZE || n < 0) {
        check(small == -1, "a name too long for the buffer is refused");

    } else {
        check(small == n && memcmp(name, short_name, n) == 0,
              "the buffer size does not change a name that fits");
    }

    if (n > 0) {
        check_name(name, n, size & 1);
    }

    free(body);
    free(name);
    free(short_name);

    return 0;
}
