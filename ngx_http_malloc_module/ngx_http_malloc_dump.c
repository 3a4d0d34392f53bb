
/*
 * jemalloc's prof.dump opens its file with creat(): it truncates and
 * follows symlinks.  So the dump goes into a private temporary file we
 * create with O_EXCL | O_NOFOLLOW (mode 0600), handed to jemalloc as
 * /proc/self/fd/N, and only then gets its name with linkat(), which never
 * replaces an existing file.  A failed dump leaves nothing behind.
 *
 * Owns: the temporary file of a dump.  Calls: jemalloc (pure C).
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
#include <sys/stat.h>
#include <sys/statvfs.h>

#include "ngx_http_malloc_dump.h"
#include "ngx_http_malloc_jemalloc.h"


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
    int             dfd, fd, rc, e;
    char            tmp[64], proc[64];
    struct stat     st;
    struct statvfs  vfs;

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

    snprintf(tmp, sizeof(tmp), ".malloc-%ld-%lu.tmp", (long) getpid(), seq);

    fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                0600);
    if (fd == -1) {
        *err = errno;
        close(dfd);
        return NGX_HTTP_MALLOC_DUMP_CREATE;
    }

    snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);

    e = ngx_http_malloc_je_dump(proc);

    if (e == 0 && fstat(fd, &st) == 0 && st.st_size > 0) {
        *bytes = st.st_size;

    } else if (e == 0) {
        e = EIO;
    }

    close(fd);

    if (e != 0) {
        /*
         * jemalloc answers EFAULT for any failed write: a full file
         * system is the common cause, and it can be told
         */
        if (e == EFAULT && fstatvfs(dfd, &vfs) == 0 && vfs.f_bavail == 0) {
            e = ENOSPC;
        }

        *err = e;
        rc = NGX_HTTP_MALLOC_DUMP_MALLCTL;

    } else if (linkat(dfd, tmp, dfd, name, 0) == -1) {
        *err = errno;
        rc = (errno == EEXIST) ? NGX_HTTP_MALLOC_DUMP_EXISTS
                               : NGX_HTTP_MALLOC_DUMP_LINK;
    }

    (void) unlinkat(dfd, tmp, 0);
    close(dfd);

    return rc;
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

    default:
        return "the dump was written";
    }
}


/*
 * Removes the hidden files that a worker killed in the middle of a
 * profile, a snapshot or a dump left behind: ".profile-*", ".snapshot-*"
 * and ".malloc-*" older than "age" seconds.  "removed" hears each name.
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

        if (strncmp(de->d_name, ".profile-", 9) != 0
            && strncmp(de->d_name, ".snapshot-", 10) != 0
            && strncmp(de->d_name, ".malloc-", 8) != 0)
        {
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
