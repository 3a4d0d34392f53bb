
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * A minimal TAP producer for the unit programs: enough for prove and for
 * t/unit.t, with no library to install.  Header-only, so each program is a
 * single file; the functions are static inline so that a program using only
 * some of them still builds with -Werror.
 */


#ifndef _TAP_H_INCLUDED_
#define _TAP_H_INCLUDED_


#include <stdio.h>
#include <stdarg.h>
#include <string.h>


#define TAP_PRINTF(f, a)  __attribute__((format(printf, f, a)))


static int          tap_planned = -1;
static int          tap_run;
static int          tap_failed;
static const char  *tap_todo;


static inline void plan(int n);
static inline int ok(int cond, const char *fmt, ...) TAP_PRINTF(2, 3);
static inline int is_int(long got, long want, const char *fmt, ...)
    TAP_PRINTF(3, 4);
static inline int is_str(const char *got, const char *want,
    const char *fmt, ...) TAP_PRINTF(3, 4);
static inline void diag(const char *fmt, ...) TAP_PRINTF(1, 2);
static inline void todo_start(const char *reason);
static inline void todo_end(void);
static inline void tap_quote(const char *s, size_t len);
static inline int tap_vok(int cond, const char *fmt, va_list args);
static inline int done_testing(void);


static inline void
plan(int n)
{
    tap_planned = n;
    printf("1..%d\n", n);
}


/* returns cond, so that callers can add diagnostics on failure */

static inline int
tap_vok(int cond, const char *fmt, va_list args)
{
    char    desc[512];
    size_t  i;

    vsnprintf(desc, sizeof(desc), fmt, args);

    /* a newline would end the TAP line and break the parser */

    for (i = 0; desc[i] != '\0'; i++) {
        if (desc[i] == '\n' || desc[i] == '\r') {
            desc[i] = ' ';
        }
    }

    tap_run++;

    if (!cond && tap_todo == NULL) {
        tap_failed++;
    }

    printf("%sok %d - %s", cond ? "" : "not ", tap_run, desc);

    if (tap_todo != NULL) {
        printf(" # TODO %s", tap_todo);
    }

    printf("\n");

    return cond;
}


static inline int
ok(int cond, const char *fmt, ...)
{
    int      rc;
    va_list  args;

    va_start(args, fmt);
    rc = tap_vok(cond, fmt, args);
    va_end(args);

    return rc;
}


static inline int
is_int(long got, long want, const char *fmt, ...)
{
    int      rc;
    va_list  args;

    va_start(args, fmt);
    rc = tap_vok(got == want, fmt, args);
    va_end(args);

    if (!rc) {
        diag("     got: %ld", got);
        diag("expected: %ld", want);
    }

    return rc;
}


static inline int
is_str(const char *got, const char *want, const char *fmt, ...)
{
    int      rc, same;
    va_list  args;

    if (got == NULL || want == NULL) {
        same = (got == want);

    } else {
        same = (strcmp(got, want) == 0);
    }

    va_start(args, fmt);
    rc = tap_vok(same, fmt, args);
    va_end(args);

    if (!rc) {
        printf("#      got: ");
        tap_quote(got, got == NULL ? 0 : strlen(got));
        printf("\n# expected: ");
        tap_quote(want, want == NULL ? 0 : strlen(want));
        printf("\n");
    }

    return rc;
}


/* diagnostics go to stdout so that they stay next to the failing line */

static inline void
diag(const char *fmt, ...)
{
    va_list  args;

    printf("# ");

    va_start(args, fmt);
    vprintf(fmt, args);
    va_end(args);

    printf("\n");
}


/*
 * Tests between todo_start() and todo_end() document a known bug: they are
 * reported, but a failure does not fail the program.
 */

static inline void
todo_start(const char *reason)
{
    tap_todo = reason;
}


static inline void
todo_end(void)
{
    tap_todo = NULL;
}


/* the names under test hold control bytes that would garble the output */

static inline void
tap_quote(const char *s, size_t len)
{
    size_t         i;
    unsigned char  c;

    if (s == NULL) {
        printf("NULL");
        return;
    }

    putchar('"');

    for (i = 0; i < len; i++) {
        c = (unsigned char) s[i];

        if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\') {
            printf("\\x%02x", c);

        } else {
            putchar(c);
        }
    }

    putchar('"');
}


/* the exit status: 0 only if every test ran and passed */

static inline int
done_testing(void)
{
    if (tap_planned < 0) {
        printf("1..%d\n", tap_run);

    } else if (tap_planned != tap_run) {
        diag("planned %d tests but ran %d", tap_planned, tap_run);
        return 255;
    }

    if (tap_failed != 0) {
        diag("failed %d test(s) of %d", tap_failed, tap_run);
    }

    fflush(stdout);

    return tap_failed > 254 ? 254 : tap_failed;
}


#endif /* _TAP_H_INCLUDED_ */
