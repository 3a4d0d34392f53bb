/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */

/*
 * Linked into the ASan build of the modules (make test-asan); the linker
 * sends the modules' calls of the functions below here (-Wl,--wrap), and
 * nobody else's.
 *
 * Pools: nginx carves small pool allocations out of one block, where a
 * read past the end of one lands in the next and ASan sees nothing.
 * Here each is a block of its own, from ngx_pmemalign()
 * (posix_memalign(), which ASan serves with a red zone after the exact
 * size), freed with the pool as nginx frees its large allocations.
 * nginx's own pool allocations are left as they are.
 *
 * Paths: ASan checks the string given to opendir(), fopen() or
 * readlink(), not to open(), stat() and the rest, whose 64-bit forms it
 * does not intercept at all: each path the modules pass to one of those
 * is measured with strlen(), which ASan checks up to its NUL, before the
 * call.
 *
 * No nginx header: the pool stays opaque.  ngx_pmemalign() is weak so
 * that configure's test programs, linked with this file too, link
 * without nginx.
 */

/* O_TMPFILE */
#define _GNU_SOURCE

#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>


/* NGX_ALIGNMENT on Linux, which ngx_palloc() aligns to */
#define ASAN_WRAP_ALIGNMENT  sizeof(unsigned long)


void *ngx_pmemalign(void *pool, size_t size, size_t alignment)
    __attribute__((weak));

void *__wrap_ngx_palloc(void *pool, size_t size);
void *__wrap_ngx_pnalloc(void *pool, size_t size);
void *__wrap_ngx_pcalloc(void *pool, size_t size);

int __real_open(const char *path, int flags, ...);
int __real_open64(const char *path, int flags, ...);
int __real_openat(int dfd, const char *path, int flags, ...);
int __real_openat64(int dfd, const char *path, int flags, ...);
int __real_stat(const char *path, void *st);
int __real_stat64(const char *path, void *st);
int __real_lstat64(const char *path, void *st);
int __real_fstatat(int dfd, const char *path, void *st, int flags);
int __real_fstatat64(int dfd, const char *path, void *st, int flags);
int __real_faccessat(int dfd, const char *path, int mode, int flags);
int __real_unlink(const char *path);
int __real_unlinkat(int dfd, const char *path, int flags);
int __real_rename(const char *from, const char *to);
int __real_linkat(int fdfrom, const char *from, int fdto, const char *to,
    int flags);

int __wrap_open(const char *path, int flags, ...);
int __wrap_open64(const char *path, int flags, ...);
int __wrap_openat(int dfd, const char *path, int flags, ...);
int __wrap_openat64(int dfd, const char *path, int flags, ...);
int __wrap_stat(const char *path, void *st);
int __wrap_stat64(const char *path, void *st);
int __wrap_lstat64(const char *path, void *st);
int __wrap_fstatat(int dfd, const char *path, void *st, int flags);
int __wrap_fstatat64(int dfd, const char *path, void *st, int flags);
int __wrap_faccessat(int dfd, const char *path, int mode, int flags);
int __wrap_unlink(const char *path);
int __wrap_unlinkat(int dfd, const char *path, int flags);
int __wrap_rename(const char *from, const char *to);
int __wrap_linkat(int fdfrom, const char *from, int fdto, const char *to,
    int flags);

static void asan_wrap_check(const char *path);
static unsigned int asan_wrap_mode(int flags, va_list ap);


void *
__wrap_ngx_palloc(void *pool, size_t size)
{
    return ngx_pmemalign(pool, size, ASAN_WRAP_ALIGNMENT);
}


void *
__wrap_ngx_pnalloc(void *pool, size_t size)
{
    return ngx_pmemalign(pool, size, ASAN_WRAP_ALIGNMENT);
}


void *
__wrap_ngx_pcalloc(void *pool, size_t size)
{
    void  *p;

    p = ngx_pmemalign(pool, size, ASAN_WRAP_ALIGNMENT);

    if (p != NULL) {
        memset(p, 0, size);
    }

    return p;
}


/* ASan checks strlen() up to the NUL; the volatile keeps the call */

static void
asan_wrap_check(const char *path)
{
    volatile size_t  n;

    n = strlen(path);
    (void) n;
}


/* the mode that open() takes only with O_CREAT or O_TMPFILE */

static unsigned int
asan_wrap_mode(int flags, va_list ap)
{
    if ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE) {
        return va_arg(ap, unsigned int);
    }

    return 0;
}


int
__wrap_open(const char *path, int flags, ...)
{
    va_list       ap;
    unsigned int  mode;

    va_start(ap, flags);
    mode = asan_wrap_mode(flags, ap);
    va_end(ap);

    asan_wrap_check(path);

    return __real_open(path, flags, mode);
}


int
__wrap_open64(const char *path, int flags, ...)
{
    va_list       ap;
    unsigned int  mode;

    va_start(ap, flags);
    mode = asan_wrap_mode(flags, ap);
    va_end(ap);

    asan_wrap_check(path);

    return __real_open64(path, flags, mode);
}


int
__wrap_openat(int dfd, const char *path, int flags, ...)
{
    va_list       ap;
    unsigned int  mode;

    va_start(ap, flags);
    mode = asan_wrap_mode(flags, ap);
    va_end(ap);

    asan_wrap_check(path);

    return __real_openat(dfd, path, flags, mode);
}


int
__wrap_openat64(int dfd, const char *path, int flags, ...)
{
    va_list       ap;
    unsigned int  mode;

    va_start(ap, flags);
    mode = asan_wrap_mode(flags, ap);
    va_end(ap);

    asan_wrap_check(path);

    return __real_openat64(dfd, path, flags, mode);
}


int
__wrap_stat(const char *path, void *st)
{
    asan_wrap_check(path);

    return __real_stat(path, st);
}


int
__wrap_stat64(const char *path, void *st)
{
    asan_wrap_check(path);

    return __real_stat64(path, st);
}


int
__wrap_lstat64(const char *path, void *st)
{
    asan_wrap_check(path);

    return __real_lstat64(path, st);
}


int
__wrap_fstatat(int dfd, const char *path, void *st, int flags)
{
    asan_wrap_check(path);

    return __real_fstatat(dfd, path, st, flags);
}


int
__wrap_fstatat64(int dfd, const char *path, void *st, int flags)
{
    asan_wrap_check(path);

    return __real_fstatat64(dfd, path, st, flags);
}


int
__wrap_faccessat(int dfd, const char *path, int mode, int flags)
{
    asan_wrap_check(path);

    return __real_faccessat(dfd, path, mode, flags);
}


int
__wrap_unlink(const char *path)
{
    asan_wrap_check(path);

    return __real_unlink(path);
}


int
__wrap_unlinkat(int dfd, const char *path, int flags)
{
    asan_wrap_check(path);

    return __real_unlinkat(dfd, path, flags);
}


int
__wrap_rename(const char *from, const char *to)
{
    asan_wrap_check(from);
    asan_wrap_check(to);

    return __real_rename(from, to);
}


int
__wrap_linkat(int fdfrom, const char *from, int fdto, const char *to,
    int flags)
{
    asan_wrap_check(from);
    asan_wrap_check(to);

    return __real_linkat(fdfrom, from, fdto, to, flags);
}
