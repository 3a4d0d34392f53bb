
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * Unit tests for the request body parsers (ngx_http_malloc_json.c).  Bodies,
 * names and error buffers are heap copies of their exact size, so that ASan
 * catches any access past the end: a real body is not NUL-terminated.
 */


#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "ngx_http_malloc_json.h"
#include "ngx_http_malloc_path.h"


/* what the handler passes: NGX_HTTP_MALLOC_BODY_MAX */
#define NAME_SIZE  4096

#define STR(s)     (s), sizeof(s) - 1


static unsigned char *dup_body(const char *body, size_t len);
static char *new_err(void);
static int err_is_set(const char *err, const char *part);
static void active_ok(const char *desc, const char *body, size_t len,
    int want);
static void active_bad(const char *desc, const char *body, size_t len,
    const char *part);
static int run_dump(const char *body, size_t len, size_t size, char *res,
    char *err);
static void dump_ok(const char *desc, const char *body, size_t len,
    const char *want, size_t want_len);
static void dump_bad(const char *desc, const char *body, size_t len,
    const char *part);
static void duration_ok(const char *desc, const char *body, size_t len,
    int want_active, const char *want);
static void reset_ok(const char *desc, const char *body, size_t len,
    int want_lg, int want_force);
static void reset_bad(const char *desc, const char *body, size_t len,
    const char *part);
static void test_active(void);
static void test_duration(void);
static void test_reset(void);
static void test_dump(void);
static void test_dump_size(void);
static void test_hostile(void);
static void test_nul_path(void);


static unsigned char *
dup_body(const char *body, size_t len)
{
    unsigned char  *p;

    p = malloc(len ? len : 1);
    if (p == NULL) {
        abort();
    }

    memcpy(p, body, len);

    return p;
}


/* no NUL anywhere, so a reason that is not terminated shows */

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


static int
err_is_set(const char *err, const char *part)
{
    if (memchr(err, '\0', NGX_HTTP_MALLOC_ERR_LEN) == NULL) {
        diag("err is not NUL-terminated");
        return 0;
    }

    if (err[0] == '\0' || err[0] == 'X') {
        diag("err is not set: \"%s\"", err);
        return 0;
    }

    if (part != NULL && strstr(err, part) == NULL) {
        diag("err \"%s\" does not mention \"%s\"", err, part);
        return 0;
    }

    return 1;
}


static void
active_ok(const char *desc, const char *body, size_t len, int want)
{
    int                        rc;
    char                      *err;
    unsigned char             *p;
    ngx_http_malloc_active_t   cmd;

    p = dup_body(body, len);
    err = new_err();
    cmd.active = -1;

    rc = ngx_http_malloc_parse_active(p, len, &cmd, err);

    if (!is_int(rc, 0, "active %s: accepted", desc)) {
        diag("err: %.*s", NGX_HTTP_MALLOC_ERR_LEN, err);
    }

    is_int(cmd.active, want, "active %s: value", desc);

    free(p);
    free(err);
}


static void
active_bad(const char *desc, const char *body, size_t len, const char *part)
{
    int                        rc;
    char                      *err;
    unsigned char             *p;
    ngx_http_malloc_active_t   cmd;

    p = dup_body(body, len);
    err = new_err();
    cmd.active = -1;

    rc = ngx_http_malloc_parse_active(p, len, &cmd, err);

    is_int(rc, -1, "active %s: refused", desc);
    ok(err_is_set(err, part), "active %s: reason", desc);

    free(p);
    free(err);
}


/* the duration is copied NUL-terminated; "" when absent or null */

static void
duration_ok(const char *desc, const char *body, size_t len, int want_active,
    const char *want)
{
    int                        rc;
    char                      *err;
    unsigned char             *p;
    ngx_http_malloc_active_t   cmd;

    p = dup_body(body, len);
    err = new_err();
    cmd.active = -1;
    memset(cmd.duration, 'Z', sizeof(cmd.duration));

    rc = ngx_http_malloc_parse_active(p, len, &cmd, err);

    if (!is_int(rc, 0, "duration %s: accepted", desc)) {
        diag("err: %.*s", NGX_HTTP_MALLOC_ERR_LEN, err);
    }

    is_int(cmd.active, want_active, "duration %s: active", desc);

    ok(memchr(cmd.duration, '\0', sizeof(cmd.duration)) != NULL,
       "duration %s: NUL-terminated", desc);

    cmd.duration[sizeof(cmd.duration) - 1] = '\0';
    is_str(cmd.duration, want, "duration %s: value", desc);

    free(p);
    free(err);
}


static void
reset_ok(const char *desc, const char *body, size_t len, int want_lg,
    int want_force)
{
    int             rc, lg, force;
    char           *err;
    unsigned char  *p;

    p = dup_body(body, len);
    err = new_err();
    lg = -2;
    force = -2;

    rc = ngx_http_malloc_parse_reset(p, len, &lg, &force, err);

    if (!is_int(rc, 0, "reset %s: accepted", desc)) {
        diag("err: %.*s", NGX_HTTP_MALLOC_ERR_LEN, err);
    }

    is_int(lg, want_lg, "reset %s: lg_sample", desc);
    is_int(force, want_force, "reset %s: force", desc);

    free(p);
    free(err);
}


static void
reset_bad(const char *desc, const char *body, size_t len, const char *part)
{
    int             rc, lg, force;
    char           *err;
    unsigned char  *p;

    p = dup_body(body, len);
    err = new_err();

    rc = ngx_http_malloc_parse_reset(p, len, &lg, &force, err);

    is_int(rc, -1, "reset %s: refused", desc);
    ok(err_is_set(err, part), "reset %s: reason", desc);

    free(p);
    free(err);
}


/* res receives the name, which may hold NUL bytes; it must hold "size" */

static int
run_dump(const char *body, size_t len, size_t size, char *res, char *err)
{
    int             rc;
    unsigned char  *p, *name;

    p = dup_body(body, len);

    name = malloc(size ? size : 1);
    if (name == NULL) {
        abort();
    }

    rc = ngx_http_malloc_parse_dump(p, len, name, size, err);

    if (rc > 0 && (size_t) rc <= size) {
        memcpy(res, name, rc);
    }

    free(p);
    free(name);

    return rc;
}


static void
dump_ok(const char *desc, const char *body, size_t len, const char *want,
    size_t want_len)
{
    int    rc;
    char  *err;
    char   res[NAME_SIZE];

    err = new_err();

    rc = run_dump(body, len, NAME_SIZE, res, err);

    if (!is_int(rc, (long) want_len, "dump %s: accepted", desc)) {
        diag("err: %.*s", NGX_HTTP_MALLOC_ERR_LEN, err);
    }

    ok(rc >= 0 && (size_t) rc == want_len && memcmp(res, want, rc) == 0,
       "dump %s: name", desc);

    free(err);
}


static void
dump_bad(const char *desc, const char *body, size_t len, const char *part)
{
    int    rc;
    char  *err;
    char   res[NAME_SIZE];

    err = new_err();

    rc = run_dump(body, len, NAME_SIZE, res, err);

    is_int(rc, -1, "dump %s: refused", desc);
    ok(err_is_set(err, part), "dump %s: reason", desc);

    free(err);
}


static void
test_active(void)
{
    active_ok("true", STR("true"), 1);
    active_ok("false", STR("false"), 0);
    active_ok("true with whitespace", STR(" \t\r\ntrue\r\n"), 1);
    active_ok("object true", STR("{\"active\": true}"), 1);
    active_ok("object false", STR("{\"active\":false}"), 0);
    active_ok("object with whitespace", STR("\n{ \"active\" : true }\n"), 1);

    active_bad("empty body", "", 0, "empty");
    active_bad("whitespace body", STR(" \t\r\n"), "empty");
    active_bad("form feed is not JSON whitespace", STR("\f"), "not valid");
    active_bad("1", STR("1"), "expected true, false");
    active_bad("0", STR("0"), "expected true, false");
    active_bad("\"true\"", STR("\"true\""), "expected true, false");
    active_bad("null", STR("null"), "expected true, false");
    active_bad("array", STR("[true]"), "expected true, false");
    active_bad("{}", STR("{}"), "\"active\" is missing");
    active_bad("active 1", STR("{\"active\": 1}"), "expected true, false");
    active_bad("active null", STR("{\"active\": null}"),
               "expected true, false");
    active_bad("active \"true\"", STR("{\"active\": \"true\"}"),
               "expected true, false");
    active_bad("active object", STR("{\"active\": {\"active\": true}}"),
               "expected true, false");
    active_bad("unknown key besides", STR("{\"active\": true, \"x\": 1}"),
               "unknown field \"x\"");
    active_bad("unknown key alone", STR("{\"enabled\": true}"),
               "unknown field \"enabled\"");
    active_bad("key with other case", STR("{\"Active\": true}"),
               "unknown field \"Active\"");
    active_bad("duplicate key", STR("{\"active\": true, \"active\": false}"),
               "duplicate");
    active_bad("TRUE", STR("TRUE"), "not valid");
    active_bad("tru", STR("tru"), "not valid");
    active_bad("truncated object", STR("{\"active\": true"), "not valid");
    active_bad("trailing garbage", STR("true false"), "not valid");
    active_bad("trailing brace", STR("true}"), "not valid");
    active_bad("garbage after object", STR("{\"active\": true}x"),
               "not valid");

    /*
     * jansson 2.14 takes a bare literal followed by one NUL byte as if the
     * NUL were the end of the body; the parser refuses any raw NUL first.
     */
    active_bad("NUL after true", STR("true\0"), "NUL byte");
    active_bad("NUL after false", STR("false\0"), "NUL byte");
    active_bad("NUL after true, with space", STR(" true\0"), "NUL byte");

    active_bad("NUL then garbage after true", STR("true\0x"), "not valid");
    active_bad("space and NUL after true", STR("true \0"), "not valid");
    active_bad("NUL before true", STR("\0true"), "not valid");
    active_bad("BOM", STR("\xef\xbb\xbftrue"), "not valid");
    active_bad("single quotes", STR("{'active': true}"), "not valid");
    active_bad("comment", STR("true /* on */"), "not valid");
    active_bad("NUL in key", STR("{\"active\\u0000\": true}"), "not valid");
}


static void
test_duration(void)
{
    int   n;
    char  body[128];

    duration_ok("10m", STR("{\"active\": true, \"duration\": \"10m\"}"), 1,
                "10m");
    duration_ok("1h 30m", STR("{\"active\": true, \"duration\": \"1h 30m\"}"),
                1, "1h 30m");
    duration_ok("90s", STR("{\"duration\": \"90s\", \"active\": true}"), 1,
                "90s");
    duration_ok("30d", STR("{\"active\": true, \"duration\": \"30d\"}"), 1,
                "30d");

    /* the form only: the handler refuses what nginx cannot parse or 0s */
    duration_ok("500ms passes the form",
                STR("{\"active\": true, \"duration\": \"500ms\"}"), 1,
                "500ms");
    duration_ok("0s passes the form",
                STR("{\"active\": true, \"duration\": \"0s\"}"), 1, "0s");

    duration_ok("null is none", STR("{\"active\": true, \"duration\": null}"),
                1, "");
    duration_ok("null with false",
                STR("{\"active\": false, \"duration\": null}"), 0, "");
    duration_ok("absent", STR("{\"active\": true}"), 1, "");
    duration_ok("bare true", STR("true"), 1, "");
    duration_ok("bare false", STR("false"), 0, "");

    /* NGX_HTTP_MALLOC_DURATION_LEN is 32: 31 characters fit, 32 do not */

    n = snprintf(body, sizeof(body), "{\"active\": true, \"duration\": "
                 "\"%s\"}", "111111111111111111111111111111s");
    duration_ok("31 characters", body, n, 1,
                "111111111111111111111111111111s");

    n = snprintf(body, sizeof(body), "{\"active\": true, \"duration\": "
                 "\"%s\"}", "1111111111111111111111111111111s");
    active_bad("duration of 32 characters", body, n, "\"duration\" takes");

    active_bad("duration number",
               STR("{\"active\": true, \"duration\": 600}"),
               "\"duration\" takes");
    active_bad("duration real",
               STR("{\"active\": true, \"duration\": 1.5}"),
               "\"duration\" takes");
    active_bad("duration true",
               STR("{\"active\": true, \"duration\": true}"),
               "\"duration\" takes");
    active_bad("duration array",
               STR("{\"active\": true, \"duration\": [\"10m\"]}"),
               "\"duration\" takes");
    active_bad("duration object",
               STR("{\"active\": true, \"duration\": {}}"),
               "\"duration\" takes");
    active_bad("duration empty string",
               STR("{\"active\": true, \"duration\": \"\"}"),
               "\"duration\" takes");
    active_bad("duration with false",
               STR("{\"active\": false, \"duration\": \"10m\"}"),
               "with \"active\": true");
    active_bad("duration alone", STR("{\"duration\": \"10m\"}"),
               "\"active\" is missing");
    active_bad("duration letters",
               STR("{\"active\": true, \"duration\": \"abc\"}"),
               "\"duration\" takes");
    active_bad("duration negative",
               STR("{\"active\": true, \"duration\": \"-10m\"}"),
               "\"duration\" takes");
    active_bad("duration with a dot",
               STR("{\"active\": true, \"duration\": \"1.5h\"}"),
               "\"duration\" takes");
    active_bad("duration with a tab",
               STR("{\"active\": true, \"duration\": \"1h\\t30m\"}"),
               "\"duration\" takes");
    active_bad("duration with a semicolon",
               STR("{\"active\": true, \"duration\": \"10m;\"}"),
               "\"duration\" takes");
    active_bad("duration with a NUL",
               STR("{\"active\": true, \"duration\": \"10m\\u0000\"}"),
               "\"duration\" takes");
    active_bad("duration in full-width digits",
               STR("{\"active\": true, \"duration\": \"\xef\xbc\x91m\"}"),
               "\"duration\" takes");
    active_bad("duplicate duration",
               STR("{\"active\": true, \"duration\": \"1m\", "
                   "\"duration\": \"2m\"}"), "duplicate");
    active_bad("unknown key besides duration",
               STR("{\"active\": true, \"duration\": \"1m\", \"for\": 1}"),
               "unknown field \"for\"");
}


static void
test_reset(void)
{
    reset_ok("empty body", "", 0, -1, 0);
    reset_ok("whitespace body", STR(" \t\r\n"), -1, 0);
    reset_ok("{}", STR("{}"), -1, 0);
    reset_ok("lg_sample 0", STR("{\"lg_sample\": 0}"), 0, 0);
    reset_ok("lg_sample 12", STR("{\"lg_sample\": 12}"), 12, 0);
    reset_ok("lg_sample 19", STR("{\"lg_sample\":19}"), 19, 0);
    reset_ok("lg_sample 63", STR("{\"lg_sample\": 63}"), 63, 0);
    reset_ok("force true alone", STR("{\"force\": true}"), -1, 1);
    reset_ok("force false", STR("{\"lg_sample\": 14, \"force\": false}"), 14,
             0);
    reset_ok("force first", STR("{\"force\": true, \"lg_sample\": 5}"), 5, 1);
    reset_ok("with whitespace", STR("\n{ \"lg_sample\" : 20 }\n"), 20, 0);

    reset_bad("lg_sample 64", STR("{\"lg_sample\": 64}"), "from 0 to 63");
    reset_bad("lg_sample -1", STR("{\"lg_sample\": -1}"), "from 0 to 63");
    reset_bad("lg_sample 64 with force",
              STR("{\"lg_sample\": 64, \"force\": true}"), "from 0 to 63");
    reset_bad("lg_sample INT64_MAX",
              STR("{\"lg_sample\": 9223372036854775807}"), "from 0 to 63");
    reset_bad("lg_sample INT64_MIN",
              STR("{\"lg_sample\": -9223372036854775808}"), "from 0 to 63");
    reset_bad("lg_sample 2^32 + 14", STR("{\"lg_sample\": 4294967310}"),
              "from 0 to 63");
    reset_bad("lg_sample past int64",
              STR("{\"lg_sample\": 99999999999999999999}"), "not valid");
    reset_bad("lg_sample 14.0", STR("{\"lg_sample\": 14.0}"), "from 0 to 63");
    reset_bad("lg_sample 14.5", STR("{\"lg_sample\": 14.5}"), "from 0 to 63");
    reset_bad("lg_sample 1e1", STR("{\"lg_sample\": 1e1}"), "from 0 to 63");
    reset_bad("lg_sample \"14\"", STR("{\"lg_sample\": \"14\"}"),
              "from 0 to 63");
    reset_bad("lg_sample true", STR("{\"lg_sample\": true}"), "from 0 to 63");
    reset_bad("lg_sample null", STR("{\"lg_sample\": null}"), "from 0 to 63");
    reset_bad("lg_sample array", STR("{\"lg_sample\": [14]}"), "from 0 to 63");
    reset_bad("lg_sample object", STR("{\"lg_sample\": {}}"), "from 0 to 63");
    reset_bad("force \"true\"", STR("{\"force\": \"true\"}"),
              "\"force\" takes true or false");
    reset_bad("force 1", STR("{\"lg_sample\": 5, \"force\": 1}"),
              "\"force\" takes true or false");
    reset_bad("force null", STR("{\"force\": null}"),
              "\"force\" takes true or false");

    reset_bad("bare number", STR("14"), "expected nothing");
    reset_bad("bare true", STR("true"), "expected nothing");
    reset_bad("null", STR("null"), "expected nothing");
    reset_bad("string", STR("\"lg_sample\""), "expected nothing");
    reset_bad("array", STR("[]"), "expected nothing");
    reset_bad("array of object", STR("[{\"lg_sample\": 14}]"),
              "expected nothing");

    reset_bad("unknown key alone", STR("{\"lg\": 14}"),
              "unknown field \"lg\"");
    reset_bad("unknown key besides", STR("{\"lg_sample\": 14, \"x\": 1}"),
              "unknown field \"x\"");
    reset_bad("key with other case", STR("{\"LG_SAMPLE\": 14}"),
              "unknown field \"LG_SAMPLE\"");
    reset_bad("key that ends a known one", STR("{\"sample\": 14}"),
              "unknown field \"sample\"");
    reset_bad("key that starts a known one", STR("{\"lg_\": 14}"),
              "unknown field \"lg_\"");
    reset_bad("key with a trailing space", STR("{\"force \": true}"),
              "unknown field \"force \"");
    reset_bad("prof_active's key", STR("{\"active\": true}"),
              "unknown field \"active\"");

    reset_bad("key spelled as the key list",
              STR("{\"lg_sample, force\": 5}"), "unknown field");
    reset_bad("empty key", STR("{\"\": 14}"), "unknown field");

    reset_bad("duplicate lg_sample",
              STR("{\"lg_sample\": 14, \"lg_sample\": 15}"), "duplicate");
    reset_bad("duplicate force",
              STR("{\"force\": true, \"force\": false}"), "duplicate");

    reset_bad("lone brace", STR("{"), "not valid");
    reset_bad("missing value", STR("{\"lg_sample\": }"), "not valid");
    reset_bad("trailing comma", STR("{\"lg_sample\": 14,}"), "not valid");
    reset_bad("two objects", STR("{} {}"), "not valid");
    reset_bad("hex", STR("{\"lg_sample\": 0x10}"), "not valid");
    reset_bad("leading zero", STR("{\"lg_sample\": 014}"), "not valid");
    reset_bad("plus sign", STR("{\"lg_sample\": +14}"), "not valid");
    reset_bad("NUL after {}", STR("{}\0"), "NUL byte");
    reset_bad("form feed", STR("\f"), "not valid");
}


static void
test_dump(void)
{
    dump_ok("string", STR("\"a.heap\""), STR("a.heap"));
    dump_ok("string with whitespace", STR(" \"a\"\n"), STR("a"));
    dump_ok("null", STR("null"), "", 0);
    dump_ok("empty body", "", 0, "", 0);
    dump_ok("whitespace body", STR(" \t\r\n"), "", 0);
    dump_ok("{}", STR("{}"), "", 0);
    dump_ok("path", STR("{\"path\": \"x\"}"), STR("x"));
    dump_ok("path null", STR("{\"path\": null}"), "", 0);
    dump_ok("absolute path", STR("{\"path\":\"/tmp/dumps/a\"}"),
            STR("/tmp/dumps/a"));
    dump_ok("escaped slash", STR("\"\\/etc\""), STR("/etc"));
    dump_ok("%p is plain text here", STR("\"a-%p\""), STR("a-%p"));

    /* an empty string means "no name": the module then makes one up */
    dump_ok("empty string", STR("\"\""), "", 0);
    dump_ok("path empty string", STR("{\"path\": \"\"}"), "", 0);

    dump_ok("\\u escape to UTF-8", STR("\"h\\u00e9\""), STR("h\xc3\xa9"));
    dump_ok("surrogate pair", STR("\"\\ud83d\\ude00\""),
            STR("\xf0\x9f\x98\x80"));
    dump_ok("raw UTF-8", STR("\"\xe2\x82\xac\""), STR("\xe2\x82\xac"));
    dump_ok("escaped newline kept", STR("\"a\\nb\""), STR("a\nb"));
    dump_ok("NUL kept", STR("\"a\\u0000b\""), STR("a\0b"));
    dump_ok("NUL only", STR("\"\\u0000\""), STR("\0"));
    dump_ok("path with NUL kept", STR("{\"path\": \"\\u0000x\"}"),
            STR("\0x"));

    dump_bad("number", STR("1"), "expected a file name");
    dump_bad("true", STR("true"), "expected a file name");
    dump_bad("array", STR("[]"), "expected a file name");
    dump_bad("array of string", STR("[\"a\"]"), "expected a file name");
    dump_bad("path number", STR("{\"path\": 1}"), "expected a file name");
    dump_bad("path array", STR("{\"path\": [\"a\"]}"),
             "expected a file name");
    dump_bad("path object", STR("{\"path\": {\"path\": \"a\"}}"),
             "expected a file name");
    dump_bad("path false", STR("{\"path\": false}"), "expected a file name");
    dump_bad("unknown key besides", STR("{\"path\": \"a\", \"x\": 1}"),
             "unknown field \"x\"");
    dump_bad("unknown key alone", STR("{\"name\": \"a\"}"),
             "unknown field \"name\"");
    dump_bad("unknown key with null", STR("{\"name\": null}"),
             "unknown field \"name\"");
    dump_bad("duplicate key", STR("{\"path\": \"a\", \"path\": \"b\"}"),
             "duplicate");
    dump_bad("duplicate null key", STR("{\"path\": null, \"path\": null}"),
             "duplicate");
    dump_bad("two strings", STR("\"a\" \"b\""), "not valid");
    dump_bad("unterminated string", STR("\"a"), "not valid");
    dump_bad("unquoted", STR("a.heap"), "not valid");
    dump_bad("lone brace", STR("{"), "not valid");
    dump_bad("trailing comma", STR("{\"path\": \"a\",}"), "not valid");
    dump_bad("raw newline in string", STR("\"a\nb\""), "not valid");
    dump_bad("raw NUL in string", STR("\"a\0b\""), "not valid");
    dump_bad("NUL after string", STR("\"a\"\0"), "not valid");

    dump_bad("NUL after null", STR("null\0"), "NUL byte");

    dump_bad("NUL after number", STR("1\0"), NULL);
    dump_bad("bad escape", STR("\"\\x41\""), "not valid");
    dump_bad("short \\u escape", STR("\"\\u12\""), "not valid");
    dump_bad("lone high surrogate", STR("\"\\ud800\""), "not valid");
    dump_bad("lone low surrogate", STR("\"\\udc00\""), "not valid");
    dump_bad("NUL in key", STR("{\"path\\u0000\": \"a\"}"), "not valid");
}


static void
test_dump_size(void)
{
    int    rc;
    char  *err, *body;
    char   res[NAME_SIZE];

    err = new_err();

    rc = run_dump(STR("\"abcd\""), 4, res, err);
    is_int(rc, 4, "dump: name of exactly name_size bytes");
    ok(memcmp(res, "abcd", 4) == 0, "dump: name of exactly name_size: name");

    rc = run_dump(STR("\"abcde\""), 4, res, err);
    is_int(rc, -1, "dump: name one byte over name_size");
    ok(err_is_set(err, "longer than 4 bytes"),
       "dump: name over name_size: reason");

    memset(err, 'X', NGX_HTTP_MALLOC_ERR_LEN);

    rc = run_dump(STR("\"a\""), 0, res, err);
    is_int(rc, -1, "dump: name_size 0 refuses any name");
    ok(err_is_set(err, "longer than 0 bytes"), "dump: name_size 0: reason");

    rc = run_dump(STR("\"\""), 0, res, err);
    is_int(rc, 0, "dump: name_size 0 takes the empty string");

    /* escapes are counted once decoded */
    rc = run_dump(STR("\"\\u00e9\\u00e9\""), 4, res, err);
    is_int(rc, 4, "dump: decoded length counts, not the escaped one");

    rc = run_dump(STR("\"\\u00e9\\u00e9a\""), 4, res, err);
    is_int(rc, -1, "dump: decoded length over name_size");

    /* a body as large as the handler allows */

    body = malloc(NAME_SIZE);
    if (body == NULL) {
        abort();
    }

    memset(body, 'a', NAME_SIZE);
    body[0] = '"';
    body[NAME_SIZE - 1] = '"';

    rc = run_dump(body, NAME_SIZE, NAME_SIZE, res, err);
    is_int(rc, NAME_SIZE - 2, "dump: 4094-byte name in a 4096-byte body");

    rc = run_dump(body, NAME_SIZE, NAME_SIZE - 3, res, err);
    is_int(rc, -1, "dump: 4094-byte name with name_size 4093");

    free(body);
    free(err);
}


static void
test_hostile(void)
{
    char    *body;
    size_t   i, n;

    n = 20000;

    body = malloc(n);
    if (body == NULL) {
        abort();
    }

    memset(body, '[', 10000);
    active_bad("10000 '['", body, 10000, "not valid");
    dump_bad("10000 '['", body, 10000, "not valid");

    memset(body + 10000, ']', 10000);
    active_bad("10000 nested arrays", body, n, "not valid");
    dump_bad("10000 nested arrays", body, n, "not valid");

    /* {"path":{"path":...}} nested deeper than jansson allows */

    for (i = 0; i + 8 <= n; i += 8) {
        memcpy(body + i, "{\"path\":", 8);
    }

    dump_bad("2500 nested objects", body, i, "not valid");
    active_bad("2500 nested objects", body, i, "not valid");

    /* a shallow nesting parses, and is then refused for its type */
    active_bad("100 nested arrays", STR("[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
               "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
               "[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"
               "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"),
               "expected true, false");

    active_bad("huge integer", STR("99999999999999999999999"), "not valid");
    active_bad("huge real", STR("1e999"), "not valid");
    active_bad("tiny real", STR("{\"active\": 1e-999}"), NULL);
    dump_bad("huge integer", STR("99999999999999999999999"), "not valid");
    dump_bad("huge real", STR("{\"path\": 1e999}"), "not valid");
    dump_bad("-0", STR("-0"), "expected a file name");

    active_bad("invalid UTF-8 in string", STR("\"\xff\""), "not valid");
    active_bad("invalid UTF-8 in key", STR("{\"\xc3\x28\": true}"),
               "not valid");
    dump_bad("invalid UTF-8", STR("\"\xff\""), "not valid");
    dump_bad("truncated UTF-8", STR("\"\xc3\""), "not valid");
    dump_bad("overlong UTF-8 slash", STR("\"\xc0\xaf\""), "not valid");
    dump_bad("UTF-8 encoded surrogate", STR("\"\xed\xa0\x80\""),
             "not valid");
    dump_bad("UTF-8 past U+10FFFF", STR("\"\xf4\x90\x80\x80\""),
             "not valid");
    dump_bad("invalid UTF-8 in key", STR("{\"\xff\": \"a\"}"), "not valid");

    /* long keys and tokens must not overflow the reason */

    memcpy(body, "{\"", 2);
    memset(body + 2, 'k', 1000);
    memcpy(body + 1002, "\": 1}", 5);
    active_bad("1000-byte unknown key", body, 1007, "unknown field \"kkk");
    dump_bad("1000-byte unknown key", body, 1007, "unknown field \"kkk");

    memset(body, 'z', 5000);
    active_bad("5000-byte bare token", body, 5000, "not valid");
    dump_bad("5000-byte bare token", body, 5000, "not valid");

    free(body);
}


/* what the handler does: a NUL from \u0000 must reach the path rules */

static void
test_nul_path(void)
{
    int    rc;
    char  *err;
    char   res[NAME_SIZE], out[256];

    err = new_err();

    rc = run_dump(STR("{\"path\": \"a\\u0000/../../etc/x\"}"), NAME_SIZE,
                  res, err);
    is_int(rc, 14, "dump: NUL and what follows it are kept");

    rc = ngx_http_malloc_path_template("/tmp/dumps", 10,
                                       (unsigned char *) res, rc, 0,
                                       out, sizeof(out));
    is_int(rc, -NGX_HTTP_MALLOC_PATH_CONTROL,
           "dump: the path rules refuse the name with NUL");

    free(err);
}


int
main(void)
{
    test_active();
    test_duration();
    test_reset();
    test_dump();
    test_dump_size();
    test_hostile();
    test_nul_path();

    return done_testing();
}
