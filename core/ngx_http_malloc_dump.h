
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * Writes one heap dump without following symlinks or replacing files:
 * pure C over libc and the jemalloc wrapper.
 */


#ifndef _NGX_HTTP_MALLOC_DUMP_H_INCLUDED_
#define _NGX_HTTP_MALLOC_DUMP_H_INCLUDED_


#include <sys/types.h>
#include <time.h>


typedef enum {
    NGX_HTTP_MALLOC_DUMP_OK = 0,
    NGX_HTTP_MALLOC_DUMP_EXISTS,      /* the name is taken */
    NGX_HTTP_MALLOC_DUMP_DIR,         /* the directory cannot be used */
    NGX_HTTP_MALLOC_DUMP_CREATE,      /* the file cannot be created */
    NGX_HTTP_MALLOC_DUMP_MALLCTL,     /* prof.dump failed */
    NGX_HTTP_MALLOC_DUMP_LINK,        /* the file could not be named */
    NGX_HTTP_MALLOC_DUMP_EXPIRED,     /* the request had given up */
    NGX_HTTP_MALLOC_DUMP_SPACE,       /* the file system is full: the
                                         dump may be cut, and is gone */
    NGX_HTTP_MALLOC_DUMP_CUT          /* the dump was cut short, and is
                                         gone */
} ngx_http_malloc_dump_rc_e;


/*
 * Dumps the heap to "name" inside "dir".  Returns a rc_e, the errno
 * behind a failure in *err, and the file's size in *bytes.
 */
int ngx_http_malloc_dump_write(const char *dir, const char *name,
    unsigned long seq, off_t *bytes, int *err);

/* 0 if "name" is free in "dir"; NGX_HTTP_MALLOC_DUMP_EXISTS or _DIR */
int ngx_http_malloc_dump_check(const char *dir, const char *name, int *err);

const char *ngx_http_malloc_dump_strerror(int rc);

/* bytes in the regular files of a directory */
off_t ngx_http_malloc_dump_used(const char *dir);

/* removes hidden files older than "age" seconds left by a killed worker */
void ngx_http_malloc_dump_sweep(const char *dir, time_t age,
    void (*removed)(void *data, const char *name), void *data);


#endif /* _NGX_HTTP_MALLOC_DUMP_H_INCLUDED_ */
