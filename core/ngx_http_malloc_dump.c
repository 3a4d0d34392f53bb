
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * jemalloc's prof.dump opens its file with creat(): it truncates and
 * follows symlinks.  So the dump goes into a private temporary file we
 * create with O_EXCL | O_NOFOLLOW (mode 0600), handed to jemalloc as
 * /proc/self/fd/N, and only then gets its name with linkat(), which never
 * replaces an existing file, once it is known whole: jemalloc reports a
 * dump cut short by a full disk as written.  A failed dump leaves nothing
 * behind.
 *
 * Owns: the temporary file of a dump.  Calls: jemalloc, heap, path (pure
 * C).
 */


#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <dirent.h>
#include <time.h>
#include <unistd.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include "ngx_http_malloc_dump.h"
#include "ngx_http_malloc_heap.h"
#include "ngx_http_malloc_jemalloc.h"
#include "ngx_http_malloc_path.h"


static int ngx_http_malloc_dump_whole(int fd, int e, int we, off_t *bytes,
    int *err);
static uint64_t ngx_http_malloc_dump_top(void);


int
ngx_http_malloc_dump_check(const char *dir, const char *name, int *err)
{
    int          fd, rc;
    struct stat  st;

    fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd == -1) {
        *err = errno;
        return NGX_HTTP_MALLOC_DUMP_DIR;
    }

    rc = NGX_HTTP_MALLOC_DUMP_OK;

    if (faccessat(fd, ".", W_OK | X_OK, AT_EACCESS) == -1) {
        *err = errno;
        rc = NGX_HTTP_MALLOC_DUMP_DIR;

    } else if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
        *err = EEXIST;
        rc = NGX_HTTP_MALLOC_DUMP_EXISTS;
    }

    close(fd);

    return rc;
}


int
ngx_http_malloc_dump_write(const char *dir, const char *name,
    unsigned long seq, off_t *bytes, int *err)
{
    int   dfd, fd, rc, e;
    char  tmp[64], proc[64];

    *bytes = 0;
    *err = 0;

    rc = ngx_http_malloc_dump_check(dir, name, err);
    if (rc != NGX_HTTP_MALLOC_DUMP_OK) {
        return rc;
    }

    dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd == -1) {
        *err = errno;
        return NGX_HTTP_MALLOC_DUMP_DIR;
    }

    snprintf(tmp, sizeof(tmp), NGX_HTTP_MALLOC_HIDDEN_DUMP "%ld-%lu.tmp",
             (long) getpid(), seq);

    /* read back, to tell a whole dump from a cut one */

    fd = openat(dfd, tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                0600);
    if (fd == -1) {
        *err = errno;
        close(dfd);
        return NGX_HTTP_MALLOC_DUMP_CREATE;
    }

    snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);

    /* what the failed write() said, if nothing overwrote it since */

    errno = 0;
    e = ngx_http_malloc_je_dump(proc);

    rc = ngx_http_malloc_dump_whole(fd, e, errno, bytes, err);

    close(fd);

    if (rc == NGX_HTTP_MALLOC_DUMP_OK
        && linkat(dfd, tmp, dfd, name, 0) == -1)
    {
        *err = errno;
        rc = (errno == EEXIST) ? NGX_HTTP_MALLOC_DUMP_EXISTS
                               : NGX_HTTP_MALLOC_DUMP_LINK;
    }

    if (rc != NGX_HTTP_MALLOC_DUMP_OK) {
        *bytes = 0;
    }

    (void) unlinkat(dfd, tmp, 0);
    close(dfd);

    return rc;
}


/*
 * Whether the file that prof.dump (its answer "e", errno "we") wrote is
 * the whole dump.  jemalloc misses a short last write, which leaves the
 * file system full: then the end may be missing even where it looks
 * whole, and the dump is refused.  With room left (another dump's failure
 * may have freed some meanwhile), the end of the dump must be the end of
 * the maps.
 */

static int
ngx_http_malloc_dump_whole(int fd, int e, int we, off_t *bytes, int *err)
{
    int             whole, full;
    void           *text;
    uint64_t        top;
    struct stat     st;
    struct statvfs  vfs;

    /* no block left for this writer: root may take the reserved ones */

    full = (fstatvfs(fd, &vfs) == 0
            && (geteuid() == 0 ? vfs.f_bfree : vfs.f_bavail) == 0);

    if (e != 0) {
        /*
         * jemalloc answers EFAULT for any failed write: its errno tells
         * a full disk or quota, and so does a file system left full (the
         * errno may be gone, or another dump's failure freed some room)
         */
        if (e == EFAULT && (we == ENOSPC || we == EDQUOT)) {
            *err = we;
            return NGX_HTTP_MALLOC_DUMP_SPACE;
        }

        if (e == EFAULT && full) {
            *err = ENOSPC;
            return NGX_HTTP_MALLOC_DUMP_SPACE;
        }

        *err = e;
        return NGX_HTTP_MALLOC_DUMP_MALLCTL;
    }

    if (fstat(fd, &st) == -1 || st.st_size == 0) {
        *err = EIO;
        return full ? NGX_HTTP_MALLOC_DUMP_SPACE : NGX_HTTP_MALLOC_DUMP_MALLCTL;
    }

    /* before the mapping below, which is never the highest anyway */

    top = ngx_http_malloc_dump_top();

    text = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);

    if (text == MAP_FAILED) {
        whole = 0;
        *err = errno;

    } else {
        whole = ngx_http_malloc_heap_whole(text, st.st_size, top);
        *err = EIO;
        (void) munmap(text, st.st_size);
    }

    if (full) {
        *err = ENOSPC;
        return NGX_HTTP_MALLOC_DUMP_SPACE;
    }

    if (!whole) {
        return NGX_HTTP_MALLOC_DUMP_CUT;
    }

    *err = 0;
    *bytes = st.st_size;

    return NGX_HTTP_MALLOC_DUMP_OK;
}


/*
 * The end address of the highest mapping of the process, which ends the
 * maps that jemalloc copied into the dump; 0 when the maps cannot be read
 * (jemalloc could not read them either, and left them out).  The kernel
 * hands /proc maps out in whole lines (a page of them at a time), so the
 * last read holds the last line.
 */

static uint64_t
ngx_http_malloc_dump_top(void)
{
    int            fd;
    size_t         len;
    ssize_t        n;
    unsigned char  buf[16384];

    fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd == -1) {
        return 0;
    }

    len = 0;

    while ((n = read(fd, buf, sizeof(buf))) > 0) {
        len = n;
    }

    (void) close(fd);

    return (n == 0) ? ngx_http_malloc_heap_top(buf, len) : 0;
}


const char *
ngx_http_malloc_dump_strerror(int rc)
{
    switch (rc) {

    case NGX_HTTP_MALLOC_DUMP_EXISTS:
        return "the file exists; dumps never overwrite files";

    case NGX_HTTP_MALLOC_DUMP_DIR:
        return "the dump directory cannot be used by the worker";

    case NGX_HTTP_MALLOC_DUMP_CREATE:
        return "the dump file could not be created";

    case NGX_HTTP_MALLOC_DUMP_MALLCTL:
        return "jemalloc could not write the dump (prof.dump failed)";

    case NGX_HTTP_MALLOC_DUMP_LINK:
        return "the finished dump could not be given its name";

    case NGX_HTTP_MALLOC_DUMP_EXPIRED:
        return "the request had timed out before this worker saw it";

    case NGX_HTTP_MALLOC_DUMP_SPACE:
        return "no space left on the device: the dump, which may be cut "
               "short, was removed";

    case NGX_HTTP_MALLOC_DUMP_CUT:
        return "the dump jemalloc wrote could not be read back whole (cut "
               "short?); it was removed";

    default:
        return "the dump was written";
    }
}


/*
 * Removes the hidden files that a worker killed in the middle of a
 * profile, a snapshot, an export or a dump left behind (path.c's one
 * list of them) older than "age" seconds.  "removed" hears each name.
 */

void
ngx_http_malloc_dump_sweep(const char *dir, time_t age,
    void (*removed)(void *data, const char *name), void *data)
{
    DIR            *d;
    time_t          now;
    struct stat     st;
    struct dirent  *de;

    d = opendir(dir);
    if (d == NULL) {
        return;
    }

    now = time(NULL);

    while ((de = readdir(d)) != NULL) {

        if (!ngx_http_malloc_path_hidden(de->d_name)) {
            continue;
        }

        if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0
            && S_ISREG(st.st_mode) && st.st_mtime < now - age
            && unlinkat(dirfd(d), de->d_name, 0) == 0)
        {
            removed(data, de->d_name);
        }
    }

    (void) closedir(d);
}


/* bytes in the regular files of the directory; 0 when it cannot be read */

off_t
ngx_http_malloc_dump_used(const char *dir)
{
    DIR            *d;
    off_t           used;
    struct stat     st;
    struct dirent  *de;

    d = opendir(dir);
    if (d == NULL) {
        return 0;
    }

    used = 0;

    while ((de = readdir(d)) != NULL) {
        if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0
            && S_ISREG(st.st_mode))
        {
            used += st.st_size;
        }
    }

    (void) closedir(d);

    return used;
}
