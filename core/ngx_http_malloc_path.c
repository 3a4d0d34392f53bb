
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * Dump names are plain file names directly inside malloc_dump_dir: no
 * subdirectories, no leading dot (our temporary files use it), no control
 * characters.  That keeps the only untrusted component the last one, which
 * the dump writer opens with O_EXCL and O_NOFOLLOW.
 *
 * Owns: the naming rules.  Calls: nothing of the module (pure C).
 */


#include <string.h>
#include <stdio.h>

#include "ngx_http_malloc_path.h"


static int ngx_http_malloc_path_check(const unsigned char *name, size_t len,
    int *has_pid);


int
ngx_http_malloc_path_template(const char *dir, size_t dir_len,
    const unsigned char *name, size_t len, int multi, char *out, size_t size)
{
    int                   rc, has_pid;
    size_t                i, dot, need, skip;
    const unsigned char  *p;

    for (i = 0; i < len; i++) {
        if (name[i] < 0x20 || name[i] == 0x7f) {
            return -NGX_HTTP_MALLOC_PATH_CONTROL;
        }
    }

    p = name;

    if (len > 0 && name[0] == '/') {

        /* "<dir>/name", where a dir of "/" brings its own slash */

        skip = (dir_len > 0 && dir[dir_len - 1] == '/') ? dir_len
                                                        : dir_len + 1;

        if (len < skip || memcmp(name, dir, dir_len) != 0
            || (skip > dir_len && name[dir_len] != '/'))
        {
            if (len == dir_len && memcmp(name, dir, dir_len) == 0) {
                return -NGX_HTTP_MALLOC_PATH_DIR;
            }

            return -NGX_HTTP_MALLOC_PATH_OUTSIDE;
        }

        p = name + skip;
        len -= skip;
    }

    rc = ngx_http_malloc_path_check(p, len, &has_pid);
    if (rc != NGX_HTTP_MALLOC_PATH_OK) {
        return -rc;
    }

    /* where ".%p" goes: before the last dot, or at the end */

    dot = len;

    if (multi && !has_pid) {
        for (i = len; i > 1; i--) {
            if (p[i - 1] == '.') {
                dot = i - 1;
                break;
            }
        }
    }

    need = len + ((multi && !has_pid) ? 3 : 0);

    if (need + 1 > size) {
        return -NGX_HTTP_MALLOC_PATH_TOO_LONG;
    }

    memcpy(out, p, dot);

    if (multi && !has_pid) {
        memcpy(out + dot, ".%p", 3);
        memcpy(out + dot + 3, p + dot, len - dot);

    } else {
        memcpy(out + dot, p + dot, len - dot);
    }

    out[need] = '\0';

    /* the longest pid must still give a valid file name */

    if (ngx_http_malloc_path_expand(out, 9999999999L, NULL, 0) < 0) {
        return -NGX_HTTP_MALLOC_PATH_TOO_LONG;
    }

    return (int) need;
}


static int
ngx_http_malloc_path_check(const unsigned char *name, size_t len,
    int *has_pid)
{
    size_t  i;

    *has_pid = 0;

    if (len == 0) {
        return NGX_HTTP_MALLOC_PATH_DIR;
    }

    if (name[0] == '.') {
        return NGX_HTTP_MALLOC_PATH_DOT;
    }

    if (len >= sizeof(NGX_HTTP_MALLOC_PATH_SNAPSHOT) - 1
        && memcmp(name, NGX_HTTP_MALLOC_PATH_SNAPSHOT,
                  sizeof(NGX_HTTP_MALLOC_PATH_SNAPSHOT) - 1)
           == 0)
    {
        return NGX_HTTP_MALLOC_PATH_RESERVED;
    }

    for (i = 0; i < len; i++) {

        if (name[i] == '/') {
            return NGX_HTTP_MALLOC_PATH_SUBDIR;
        }

        if (name[i] != '%') {
            continue;
        }

        if (i + 1 == len || (name[i + 1] != 'p' && name[i + 1] != '%')) {
            return NGX_HTTP_MALLOC_PATH_PERCENT;
        }

        if (name[i + 1] == 'p') {
            *has_pid = 1;
        }

        i++;
    }

    return NGX_HTTP_MALLOC_PATH_OK;
}


/* with out == NULL it only measures, so templates can be checked early */

int
ngx_http_malloc_path_expand(const char *tmpl, long pid, char *out,
    size_t size)
{
    int          n;
    char         num[24];
    size_t       len;
    const char  *p;

    len = 0;

    for (p = tmpl; *p != '\0'; p++) {

        if (p[0] == '%' && p[1] == 'p') {
            n = snprintf(num, sizeof(num), "%ld", pid);

            if (out != NULL && len + n < size) {
                memcpy(out + len, num, n);
            }

            len += n;
            p++;
            continue;
        }

        if (p[0] == '%' && p[1] == '%') {
            p++;
        }

        if (out != NULL && len + 1 < size) {
            out[len] = *p;
        }

        len++;
    }

    if (len > NGX_HTTP_MALLOC_NAME_MAX || (out != NULL && len + 1 > size)) {
        return -1;
    }

    if (out != NULL) {
        out[len] = '\0';
    }

    return (int) len;
}


int
ngx_http_malloc_path_hidden(const char *name)
{
    size_t       i;

    static const char  *hidden[] = {
        NGX_HTTP_MALLOC_HIDDEN_PROFILE, NGX_HTTP_MALLOC_HIDDEN_SNAPSHOT,
        NGX_HTTP_MALLOC_HIDDEN_EXPORT, NGX_HTTP_MALLOC_HIDDEN_DUMP
    };

    for (i = 0; i < sizeof(hidden) / sizeof(hidden[0]); i++) {
        if (strncmp(name, hidden[i], strlen(hidden[i])) == 0) {
            return 1;
        }
    }

    return 0;
}


const char *
ngx_http_malloc_path_strerror(int rc)
{
    switch (rc < 0 ? -rc : rc) {

    case NGX_HTTP_MALLOC_PATH_CONTROL:
        return "the name contains NUL or control characters";

    case NGX_HTTP_MALLOC_PATH_OUTSIDE:
        return "absolute paths must lie inside malloc_dump_dir";

    case NGX_HTTP_MALLOC_PATH_SUBDIR:
        return "dumps are written directly in malloc_dump_dir: "
               "the name must not contain \"/\"";

    case NGX_HTTP_MALLOC_PATH_DOT:
        return "the name must not start with \".\" (this refuses \".\", "
               "\"..\" and hidden files)";

    case NGX_HTTP_MALLOC_PATH_DIR:
        return "the path names the dump directory, not a file in it";

    case NGX_HTTP_MALLOC_PATH_PERCENT:
        return "\"%\" must be followed by \"p\" (the worker pid) or \"%\"";

    case NGX_HTTP_MALLOC_PATH_RESERVED:
        return "names starting with \"snapshot-\" belong to malloc_snapshot, "
               "whose retention deletes them";

    case NGX_HTTP_MALLOC_PATH_TOO_LONG:
        return "the file name is longer than 255 bytes once \"%p\" is "
               "expanded";

    default:
        return "the name is valid";
    }
}


int
ngx_http_malloc_path_snapshot(const unsigned char *name, size_t len)
{
    size_t  i;

    if (len <= sizeof(NGX_HTTP_MALLOC_PATH_SNAPSHOT) - 1
        || len > NGX_HTTP_MALLOC_NAME_MAX
        || memcmp(name, NGX_HTTP_MALLOC_PATH_SNAPSHOT,
                  sizeof(NGX_HTTP_MALLOC_PATH_SNAPSHOT) - 1)
           != 0)
    {
        return 0;
    }

    for (i = 0; i < len; i++) {
        if (name[i] <= 0x20 || name[i] == '/' || name[i] == 0x7f
            || name[i] == '"')
        {
            return 0;
        }
    }

    return 1;
}
