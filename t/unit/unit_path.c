
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * Unit tests for the dump-path rules (ngx_http_malloc_path.c).  Every
 * buffer handed to the code under test is allocated to its exact size, so
 * that ASan reports any read or write past the end.
 */


#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "ngx_http_malloc_path.h"


#define DUMP_DIR   "/tmp/dumps"

/* what the module passes: ctx->tmpl is NGX_HTTP_MALLOC_TMPL_MAX bytes */
#define TMPL_SIZE  256

#define STR(s)     (s), sizeof(s) - 1


static int run_template(const char *name, size_t len, int multi,
    size_t size, char *res);
static int run_expand(const char *tmpl, long pid, size_t size, char *res);
static void accept_name(const char *desc, const char *name, size_t len,
    int multi, const char *want);
static void refuse_name(const char *desc, const char *name, size_t len,
    int multi, int want);
static void expect_expand(const char *desc, const char *tmpl, long pid,
    const char *want);
static char *repeat(char *buf, const char *head, int c, size_t n,
    const char *tail);
static void test_accepted(void);
static void test_absolute(void);
static void test_refused(void);
static void test_percent(void);
static void test_extension(void);
static void test_length(void);
static void test_out_size(void);
static void test_expand(void);
static void test_strerror(void);


/* res receives the template, or "" on failure; it must hold 1024 bytes */

static int
run_template(const char *name, size_t len, int multi, size_t size, char *res)
{
    int             rc;
    char           *out;
    unsigned char  *copy;

    copy = malloc(len ? len : 1);
    out = malloc(size ? size : 1);

    if (copy == NULL || out == NULL) {
        abort();
    }

    memcpy(copy, name, len);

    rc = ngx_http_malloc_path_template(DUMP_DIR, sizeof(DUMP_DIR) - 1, copy,
                                       len, multi, out, size);

    res[0] = '\0';

    if (rc >= 0 && (size_t) rc < size) {
        memcpy(res, out, rc + 1);
    }

    free(copy);
    free(out);

    return rc;
}


static int
run_expand(const char *tmpl, long pid, size_t size, char *res)
{
    int    rc;
    char  *out;

    out = malloc(size ? size : 1);
    if (out == NULL) {
        abort();
    }

    rc = ngx_http_malloc_path_expand(tmpl, pid, out, size);

    res[0] = '\0';

    if (rc >= 0 && (size_t) rc < size) {
        memcpy(res, out, rc + 1);
    }

    free(out);

    return rc;
}


static void
accept_name(const char *desc, const char *name, size_t len, int multi,
    const char *want)
{
    int   rc;
    char  res[1024];

    rc = run_template(name, len, multi, TMPL_SIZE, res);

    if (!is_int(rc, (long) strlen(want), "%s (multi=%d): accepted",
                desc, multi))
    {
        diag("refused: %s", ngx_http_malloc_path_strerror(rc));
    }

    is_str(res, want, "%s (multi=%d): template", desc, multi);
}


static void
refuse_name(const char *desc, const char *name, size_t len, int multi,
    int want)
{
    int   rc;
    char  res[1024];

    rc = run_template(name, len, multi, TMPL_SIZE, res);

    if (!is_int(rc, -want, "%s (multi=%d): refused", desc, multi)) {
        diag("expected: %s", ngx_http_malloc_path_strerror(want));
        diag("template: %s", res);
    }
}


/* checks the result, the measuring call and the exact buffer size */

static void
expect_expand(const char *desc, const char *tmpl, long pid, const char *want)
{
    int     rc;
    char    res[1024];
    size_t  n;

    n = strlen(want);

    rc = run_expand(tmpl, pid, n + 1, res);
    is_int(rc, (long) n, "expand %s, pid %ld: length", desc, pid);
    is_str(res, want, "expand %s, pid %ld: result", desc, pid);

    rc = ngx_http_malloc_path_expand(tmpl, pid, NULL, 0);
    is_int(rc, (long) n, "expand %s, pid %ld: measured without out",
           desc, pid);

    rc = run_expand(tmpl, pid, n, res);
    is_int(rc, -1, "expand %s, pid %ld: no room for the NUL", desc, pid);
}


static char *
repeat(char *buf, const char *head, int c, size_t n, const char *tail)
{
    size_t  h;

    h = strlen(head);

    memcpy(buf, head, h);
    memset(buf + h, c, n);
    strcpy(buf + h + n, tail);

    return buf;
}


static void
test_accepted(void)
{
    accept_name("plain name", STR("a.heap"), 0, "a.heap");
    accept_name("one byte", STR("a"), 0, "a");
    accept_name("inner dots", STR("a..b"), 0, "a..b");
    accept_name("trailing dot", STR("a."), 0, "a.");
    accept_name("space", STR("a b"), 0, "a b");
    accept_name("dash and tilde", STR("-~"), 0, "-~");
    accept_name("UTF-8", STR("h\xc3\xa9\xe2\x82\xac.heap"), 0,
                "h\xc3\xa9\xe2\x82\xac.heap");
    accept_name("high bytes that are not UTF-8", STR("\xff\xfe\x80"), 0,
                "\xff\xfe\x80");
    accept_name("0x20 is the first byte allowed", STR(" "), 0, " ");
    accept_name("0x7e is allowed", STR("~"), 0, "~");
}


static void
test_absolute(void)
{
    int   rc;
    char  out[64];

    accept_name("absolute inside dir", STR(DUMP_DIR "/a.heap"), 0, "a.heap");
    accept_name("absolute inside dir", STR(DUMP_DIR "/a.heap"), 1,
                "a.%p.heap");
    accept_name("absolute with %p", STR(DUMP_DIR "/x-%p"), 1, "x-%p");

    refuse_name("dir itself", STR(DUMP_DIR), 0, NGX_HTTP_MALLOC_PATH_DIR);
    refuse_name("dir with slash", STR(DUMP_DIR "/"), 0,
                NGX_HTTP_MALLOC_PATH_DIR);
    refuse_name("dir with slash", STR(DUMP_DIR "/"), 1,
                NGX_HTTP_MALLOC_PATH_DIR);
    refuse_name("dir prefix trick", STR(DUMP_DIR "X/a"), 0,
                NGX_HTTP_MALLOC_PATH_OUTSIDE);
    refuse_name("dir prefix, same length", STR("/tmp/dumpsX"), 0,
                NGX_HTTP_MALLOC_PATH_OUTSIDE);
    refuse_name("parent of dir", STR("/tmp"), 0,
                NGX_HTTP_MALLOC_PATH_OUTSIDE);
    refuse_name("shorter than dir", STR("/tmp/dump"), 0,
                NGX_HTTP_MALLOC_PATH_OUTSIDE);
    refuse_name("root", STR("/"), 0, NGX_HTTP_MALLOC_PATH_OUTSIDE);
    refuse_name("snapshot name", STR("snapshot-1.heap"), 0,
                NGX_HTTP_MALLOC_PATH_RESERVED);
    refuse_name("snapshot name, absolute", STR(DUMP_DIR "/snapshot-x"), 1,
                NGX_HTTP_MALLOC_PATH_RESERVED);
    accept_name("snapshot as a suffix", STR("my-snapshot-1"), 0,
                "my-snapshot-1");

    /* malloc_dump_dir / keeps its only slash */

    rc = ngx_http_malloc_path_template("/", 1, (const unsigned char *) "/a",
                                       2, 0, out, sizeof(out));
    is_int(rc, 1, "dir \"/\": \"/a\" is inside");
    is_str(rc == 1 ? out : "", "a", "dir \"/\": name \"a\"");
    rc = ngx_http_malloc_path_template("/", 1, (const unsigned char *) "//a",
                                       3, 0, out, sizeof(out));
    is_int(rc, -NGX_HTTP_MALLOC_PATH_SUBDIR, "dir \"/\": \"//a\" refused");
    rc = ngx_http_malloc_path_template("/", 1, (const unsigned char *) "/",
                                       1, 0, out, sizeof(out));
    is_int(rc, -NGX_HTTP_MALLOC_PATH_DIR, "dir \"/\": \"/\" is the dir");
    refuse_name("elsewhere", STR("/etc/passwd"), 0,
                NGX_HTTP_MALLOC_PATH_OUTSIDE);
    refuse_name("elsewhere, multi", STR("/etc/passwd"), 1,
                NGX_HTTP_MALLOC_PATH_OUTSIDE);
    refuse_name("dot-dot out of dir", STR(DUMP_DIR "/../x"), 0,
                NGX_HTTP_MALLOC_PATH_DOT);
    refuse_name("dot in dir", STR(DUMP_DIR "/./x"), 0,
                NGX_HTTP_MALLOC_PATH_DOT);
    refuse_name("hidden in dir", STR(DUMP_DIR "/.x"), 0,
                NGX_HTTP_MALLOC_PATH_DOT);
    refuse_name("subdir of dir", STR(DUMP_DIR "/sub/a"), 0,
                NGX_HTTP_MALLOC_PATH_SUBDIR);
    refuse_name("double slash", STR(DUMP_DIR "//a"), 0,
                NGX_HTTP_MALLOC_PATH_SUBDIR);
    refuse_name("trailing slash", STR(DUMP_DIR "/a/"), 0,
                NGX_HTTP_MALLOC_PATH_SUBDIR);
    refuse_name("relative path naming dir", STR("tmp/dumps/a"), 0,
                NGX_HTTP_MALLOC_PATH_SUBDIR);

    /* control bytes are refused before the directory is compared */
    refuse_name("control char outside dir", STR("/etc/\n"), 0,
                NGX_HTTP_MALLOC_PATH_CONTROL);
    refuse_name("NUL inside dir prefix", STR("/tmp/dumps\0/a"), 0,
                NGX_HTTP_MALLOC_PATH_CONTROL);
}


static void
test_refused(void)
{
    refuse_name("empty", "", 0, 0, NGX_HTTP_MALLOC_PATH_DIR);
    refuse_name("empty", "", 0, 1, NGX_HTTP_MALLOC_PATH_DIR);
    refuse_name("dot", STR("."), 0, NGX_HTTP_MALLOC_PATH_DOT);
    refuse_name("dot-dot", STR(".."), 0, NGX_HTTP_MALLOC_PATH_DOT);
    refuse_name("dot-dot", STR(".."), 1, NGX_HTTP_MALLOC_PATH_DOT);
    refuse_name("hidden", STR(".hidden"), 0, NGX_HTTP_MALLOC_PATH_DOT);
    refuse_name("hidden", STR(".hidden"), 1, NGX_HTTP_MALLOC_PATH_DOT);
    refuse_name("dot then slash", STR("../x"), 0, NGX_HTTP_MALLOC_PATH_DOT);
    refuse_name("subdir", STR("a/b"), 0, NGX_HTTP_MALLOC_PATH_SUBDIR);
    refuse_name("subdir, multi", STR("a/b"), 1, NGX_HTTP_MALLOC_PATH_SUBDIR);
    refuse_name("trailing slash", STR("a/"), 0, NGX_HTTP_MALLOC_PATH_SUBDIR);
    refuse_name("dot-dot later", STR("a/../b"), 0,
                NGX_HTTP_MALLOC_PATH_SUBDIR);
    refuse_name("NUL in the middle", STR("a\0b"), 0,
                NGX_HTTP_MALLOC_PATH_CONTROL);
    refuse_name("NUL at the end", STR("a\0"), 0,
                NGX_HTTP_MALLOC_PATH_CONTROL);
    refuse_name("lone NUL", STR("\0"), 0, NGX_HTTP_MALLOC_PATH_CONTROL);
    refuse_name("newline", STR("a\nb"), 0, NGX_HTTP_MALLOC_PATH_CONTROL);
    refuse_name("carriage return", STR("a\r"), 0,
                NGX_HTTP_MALLOC_PATH_CONTROL);
    refuse_name("tab", STR("a\tb"), 0, NGX_HTTP_MALLOC_PATH_CONTROL);
    refuse_name("0x01", STR("\x01" "a"), 0, NGX_HTTP_MALLOC_PATH_CONTROL);
    refuse_name("0x1f", STR("a\x1f"), 0, NGX_HTTP_MALLOC_PATH_CONTROL);
    refuse_name("DEL 0x7f", STR("a\x7f"), 0, NGX_HTTP_MALLOC_PATH_CONTROL);
    refuse_name("escape sequence", STR("\x1b[2J"), 1,
                NGX_HTTP_MALLOC_PATH_CONTROL);
}


static void
test_percent(void)
{
    accept_name("%p", STR("heap-%p.prof"), 0, "heap-%p.prof");
    accept_name("%p is kept as is", STR("heap-%p.prof"), 1, "heap-%p.prof");
    accept_name("%p alone", STR("%p"), 0, "%p");
    accept_name("%p twice", STR("%p-%p"), 1, "%p-%p");
    accept_name("%%", STR("100%%"), 0, "100%%");
    accept_name("%% is not a pid", STR("100%%"), 1, "100%%.%p");
    accept_name("%%p is a literal %p", STR("a%%p"), 1, "a%%p.%p");
    accept_name("%% then %p", STR("a%%%p"), 1, "a%%%p");
    accept_name("%% before the extension", STR("a%%.b"), 1, "a%%.%p.b");

    refuse_name("%x", STR("a%x"), 0, NGX_HTTP_MALLOC_PATH_PERCENT);
    refuse_name("%x", STR("a%x"), 1, NGX_HTTP_MALLOC_PATH_PERCENT);
    refuse_name("%P", STR("a%P"), 0, NGX_HTTP_MALLOC_PATH_PERCENT);
    refuse_name("%s", STR("%s"), 0, NGX_HTTP_MALLOC_PATH_PERCENT);
    refuse_name("trailing %", STR("a%"), 0, NGX_HTTP_MALLOC_PATH_PERCENT);
    refuse_name("trailing %", STR("a%"), 1, NGX_HTTP_MALLOC_PATH_PERCENT);
    refuse_name("lone %", STR("%"), 0, NGX_HTTP_MALLOC_PATH_PERCENT);
    refuse_name("% before dot", STR("a%.heap"), 1,
                NGX_HTTP_MALLOC_PATH_PERCENT);
    refuse_name("odd run of %", STR("a%%%"), 0,
                NGX_HTTP_MALLOC_PATH_PERCENT);
    refuse_name("% then NUL", STR("a%\0"), 0, NGX_HTTP_MALLOC_PATH_CONTROL);
}


static void
test_extension(void)
{
    accept_name("extension", STR("a.heap"), 1, "a.%p.heap");
    accept_name("no extension", STR("a"), 1, "a.%p");
    accept_name("last extension only", STR("a.b.c"), 1, "a.b.%p.c");
    accept_name("inner dots", STR("a..b"), 1, "a..%p.b");
    accept_name("empty extension", STR("a."), 1, "a.%p.");
    accept_name("UTF-8 extension", STR("a.\xc3\xa9"), 1, "a.%p.\xc3\xa9");
    accept_name("no extension, multi=0", STR("a"), 0, "a");
    accept_name("extension, multi=0", STR("a.b.c"), 0, "a.b.c");
}


static void
test_length(void)
{
    int   rc;
    char  name[1024], want[1024], res[1024];

    /* 255 bytes is the longest file name; %p counts as 10 digits */

    repeat(name, "", 'a', 255, "");
    accept_name("255 bytes", name, 255, 0, name);
    refuse_name("256 bytes", repeat(name, "", 'a', 256, ""), 256, 0,
                NGX_HTTP_MALLOC_PATH_TOO_LONG);
    refuse_name("1000 bytes", repeat(name, "", 'a', 1000, ""), 1000, 0,
                NGX_HTTP_MALLOC_PATH_TOO_LONG);

    repeat(name, "%p", 'a', 245, "");
    accept_name("%p + 245 bytes expands to 255", name, 247, 0, name);
    accept_name("%p + 245 bytes expands to 255", name, 247, 1, name);
    refuse_name("%p + 246 bytes expands to 256",
                repeat(name, "%p", 'a', 246, ""), 248, 0,
                NGX_HTTP_MALLOC_PATH_TOO_LONG);

    /* with multi, ".%p" adds 1 + 10 bytes once expanded */

    repeat(name, "", 'a', 244, "");
    accept_name("244 bytes, multi", name, 244, 1,
                repeat(want, "", 'a', 244, ".%p"));
    refuse_name("245 bytes, multi", repeat(name, "", 'a', 245, ""), 245, 1,
                NGX_HTTP_MALLOC_PATH_TOO_LONG);
    refuse_name("255 bytes, multi", repeat(name, "", 'a', 255, ""), 255, 1,
                NGX_HTTP_MALLOC_PATH_TOO_LONG);

    repeat(name, "", 'a', 239, ".heap");
    accept_name("239 + \".heap\", multi", name, 244, 1,
                repeat(want, "", 'a', 239, ".%p.heap"));
    refuse_name("240 + \".heap\", multi",
                repeat(name, "", 'a', 240, ".heap"), 245, 1,
                NGX_HTTP_MALLOC_PATH_TOO_LONG);

    /* "%%" is one byte on disk but two in the template */

    repeat(name, "%%", 'a', 253, "");
    accept_name("%% + 253 bytes", name, 255, 0, name);

    /* the limit is on the file name, not on the whole path */

    repeat(name, DUMP_DIR "/", 'a', 255, "");
    accept_name("absolute, 255-byte name", name, strlen(name), 0, name + 11);
    repeat(name, DUMP_DIR "/", 'a', 256, "");
    refuse_name("absolute, 256-byte name", name, strlen(name), 0,
                NGX_HTTP_MALLOC_PATH_TOO_LONG);

    /* pid 9999999999 fills the 255 bytes of a template that is accepted */

    repeat(name, "%p", 'a', 245, "");
    rc = run_template(name, 247, 0, TMPL_SIZE, want);
    is_int(rc, 247, "%%p + 245 bytes: template");
    rc = run_expand(want, 9999999999L, 256, res);
    is_int(rc, 255, "%%p + 245 bytes with pid 9999999999: 255 bytes");
}


static void
test_out_size(void)
{
    int   rc;
    char  res[1024];

    rc = run_template(STR("abc"), 0, 4, res);
    is_int(rc, 3, "out of exactly len + 1 bytes");
    is_str(res, "abc", "out of exactly len + 1 bytes: template");

    rc = run_template(STR("abc"), 0, 3, res);
    is_int(rc, -NGX_HTTP_MALLOC_PATH_TOO_LONG, "out without room for NUL");

    rc = run_template(STR("abc"), 0, 1, res);
    is_int(rc, -NGX_HTTP_MALLOC_PATH_TOO_LONG, "out of one byte");

    rc = run_template(STR("abc"), 0, 0, res);
    is_int(rc, -NGX_HTTP_MALLOC_PATH_TOO_LONG, "out of zero bytes");

    rc = run_template(STR("a.b"), 1, 7, res);
    is_int(rc, 6, "multi: out of exactly len + 4 bytes");
    is_str(res, "a.%p.b", "multi: out of exactly len + 4 bytes: template");

    rc = run_template(STR("a.b"), 1, 6, res);
    is_int(rc, -NGX_HTTP_MALLOC_PATH_TOO_LONG,
           "multi: out without room for \".%%p\" and NUL");

    rc = run_template(STR("a.b"), 1, 4, res);
    is_int(rc, -NGX_HTTP_MALLOC_PATH_TOO_LONG,
           "multi: out with room for the name only");

    rc = run_template(STR(DUMP_DIR "/ab"), 0, 3, res);
    is_int(rc, 2, "absolute: out sized for the name, not the path");
}


static void
test_expand(void)
{
    int   rc;
    char  tmpl[1024], want[1024], res[1024];

    expect_expand("\"a.%p.heap\"", "a.%p.heap", 1, "a.1.heap");
    expect_expand("\"a.%p.heap\"", "a.%p.heap", 4194304, "a.4194304.heap");
    expect_expand("\"%p\"", "%p", 1, "1");
    expect_expand("\"%p\"", "%p", 4194304, "4194304");
    expect_expand("\"%p%p\"", "%p%p", 12, "1212");
    expect_expand("\"100%%\"", "100%%", 1, "100%");
    expect_expand("\"%%p\"", "%%p", 1, "%p");
    expect_expand("\"%%%p\"", "%%%p", 7, "%7");
    expect_expand("no escapes", "plain", 1, "plain");
    expect_expand("trailing lone %", "a%", 1, "a%");
    expect_expand("empty", "", 1, "");

    repeat(tmpl, "", 'a', 255, "");
    expect_expand("255 bytes", tmpl, 1, tmpl);

    repeat(tmpl, "%p", 'a', 248, "");
    expect_expand("%p + 248 bytes, pid 4194304", tmpl, 4194304,
                  repeat(want, "4194304", 'a', 248, ""));

    repeat(tmpl, "", 'a', 256, "");
    rc = ngx_http_malloc_path_expand(tmpl, 1, NULL, 0);
    is_int(rc, -1, "expand 256 bytes: measured, too long");
    rc = run_expand(tmpl, 1, 1024, res);
    is_int(rc, -1, "expand 256 bytes into a large buffer: too long");

    repeat(tmpl, "%p", 'a', 249, "");
    rc = run_expand(tmpl, 4194304, 1024, res);
    is_int(rc, -1, "expand %%p + 249 bytes, pid 4194304: 256, too long");

    rc = run_expand("a.%p.heap", 4194304, 0, res);
    is_int(rc, -1, "expand into zero bytes");
    rc = run_expand("a.%p.heap", 4194304, 5, res);
    is_int(rc, -1, "expand with the pid straddling the end of out");
}


static void
test_strerror(void)
{
    int          a, b, distinct, signs;
    const char  *msg;

    distinct = 1;
    signs = 1;

    for (a = NGX_HTTP_MALLOC_PATH_OK; a <= NGX_HTTP_MALLOC_PATH_TOO_LONG; a++)
    {
        msg = ngx_http_malloc_path_strerror(-a);

        if (strcmp(msg, ngx_http_malloc_path_strerror(a)) != 0) {
            signs = 0;
        }

        for (b = a + 1; b <= NGX_HTTP_MALLOC_PATH_TOO_LONG; b++) {
            if (strcmp(msg, ngx_http_malloc_path_strerror(-b)) == 0) {
                distinct = 0;
                diag("codes %d and %d share \"%s\"", a, b, msg);
            }
        }
    }

    ok(distinct, "strerror: each code has its own message");
    ok(signs, "strerror: the sign of the code does not matter");

    is_str(ngx_http_malloc_path_strerror(-NGX_HTTP_MALLOC_PATH_TOO_LONG),
           "the file name is longer than 255 bytes once \"%p\" is expanded",
           "strerror: TOO_LONG message");
}


/* the one list of the hidden names that the sweep removes */

static void
test_hidden(void)
{
    size_t  i;

    static const char  *hidden[] = {
        ".profile-12-3.12.heap", ".profile-12-4-stats.12.json",
        ".profile-12-5-traffic.12.json", ".snapshot-20261202T000000Z.12.heap",
        ".export-20261202T000000Z.12.heap", ".malloc-12-1.tmp"
    };

    static const char  *kept[] = {
        "snapshot-20261202T000000Z.pb.gz", "mine.heap", ".profile",
        ".export", "..", ".", ".bashrc", "profile-1.heap", ".malloc"
    };

    for (i = 0; i < sizeof(hidden) / sizeof(hidden[0]); i++) {
        is_int(ngx_http_malloc_path_hidden(hidden[i]), 1, "hidden: %s",
               hidden[i]);
    }

    for (i = 0; i < sizeof(kept) / sizeof(kept[0]); i++) {
        is_int(ngx_http_malloc_path_hidden(kept[i]), 0, "not hidden: %s",
               kept[i]);
    }
}


int
main(void)
{
    test_accepted();
    test_absolute();
    test_refused();
    test_percent();
    test_extension();
    test_length();
    test_out_size();
    test_expand();
    test_strerror();
    test_hidden();

    return done_testing();
}
