
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * Unit tests for the in-process symbolizer (ngx_http_malloc_symbol.c):
 * this program's own maps, Debian's stripped nginx through a maps line
 * made up for it, malformed maps text, truncated and garbled ELF files,
 * and ELF images built here to exercise one rule each.
 *
 * binutils (readelf, nm, objcopy) give the expected answers; the tests
 * that need a tool or a file this machine lacks say so and pass.
 */


#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tap.h"
#include "ngx_http_malloc_symbol.h"
#include "ngx_http_malloc_symbol_fuzz.h"


#define NGINX        "/usr/sbin/nginx"

/* where the made-up mappings go: far from anything this process maps */
#define FAKE_START   0x7e0000000000ULL


typedef ngx_http_malloc_map_t  map_t;


/* an ELF image built by make_elf(), with its symbols at known places */

typedef struct {
    unsigned char  *data;
    size_t          len;
} image_t;


/* a copy of this program in a file of its own, and its text mapping */

typedef struct {
    char                        path[64];
    char                       *image;
    char                       *text;
    size_t                      ilen;
    uint64_t                    addr;       /* in unit_symbol_static */
    const map_t                *self;       /* our own text mapping */
    ngx_http_malloc_arena_t    *arena;
    ngx_http_malloc_symbols_t  *syms;
} copy_t;


void unit_symbol_exported(void);
static void unit_symbol_static(void) __attribute__((noinline));
static char *slurp(const char *path, size_t *len);
static int spit(const char *path, const void *data, size_t len);
static int run(const char *cmd, char *out, size_t size);
static int build_id_of(const char *path, char *id, size_t size);
static const map_t *map_of(const map_t *maps, size_t n, uint64_t addr);
static const char *name_at(ngx_http_malloc_symbols_t *syms,
    ngx_http_malloc_arena_t *arena, const map_t *maps, size_t n,
    uint64_t addr, int *map);
static char *fake_line(char *buf, size_t size, uint64_t start,
    uint64_t len, uint64_t offset, const char *path);
static int self_path(char *buf, size_t size);
static void copy_open(copy_t *c, const char *tmpl);
static void copy_close(copy_t *c);
static void make_elf(image_t *img);
static void test_self(void);
static void test_cache_stable(void);
static void test_lines(void);
static void test_deleted(void);
static void test_nginx(void);
static void test_stripped(void);
static void test_garbage(void);
static void test_mutations(void);
static void test_bounds(void);
static void test_reload(void);
static void test_unreachable(void);
static void test_truncated(void);
static void test_debug_file(void);
static void test_rules(void);


static volatile int  unit_symbol_calls;


/* exported in the sense of a global symbol; the binary has .symtab */

void __attribute__((noinline))
unit_symbol_exported(void)
{
    unit_symbol_calls++;
    unit_symbol_calls *= 3;
}


static void
unit_symbol_static(void)
{
    unit_symbol_calls += 2;
    unit_symbol_calls *= 5;
}


static void (*volatile unit_symbol_keep)(void) = unit_symbol_static;


/* the file's bytes, with a NUL after them for the text ones */

static char *
slurp(const char *path, size_t *len)
{
    int      fd;
    char    *buf, *p;
    size_t   cap;
    ssize_t  n;

    fd = open(path, O_RDONLY);
    if (fd == -1) {
        return NULL;
    }

    cap = 64 * 1024;
    buf = malloc(cap);
    *len = 0;

    for ( ;; ) {
        if (buf == NULL) {
            close(fd);
            return NULL;
        }

        n = read(fd, buf + *len, cap - 1 - *len);
        if (n <= 0) {
            break;
        }

        *len += n;

        if (*len == cap - 1) {
            cap *= 2;
            p = realloc(buf, cap);
            if (p == NULL) {
                free(buf);
            }

            buf = p;
        }
    }

    close(fd);

    buf[*len] = '\0';

    return buf;
}


static int
spit(const char *path, const void *data, size_t len)
{
    int  fd, rc;

    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd == -1) {
        return -1;
    }

    rc = (write(fd, data, len) == (ssize_t) len) ? 0 : -1;

    close(fd);

    return rc;
}


/* a command's stdout, NUL-terminated; -1 if it failed or printed nothing */

static int
run(const char *cmd, char *out, size_t size)
{
    FILE    *f;
    size_t   n;

    f = popen(cmd, "r");
    if (f == NULL) {
        return -1;
    }

    n = fread(out, 1, size - 1, f);
    out[n] = '\0';

    if (pclose(f) != 0 || n == 0) {
        return -1;
    }

    return 0;
}


static int
build_id_of(const char *path, char *id, size_t size)
{
    char   cmd[PATH_MAX + 64], out[4096], *p;
    char   fmt[32];

    snprintf(cmd, sizeof(cmd), "readelf -n '%s' 2>/dev/null", path);

    if (run(cmd, out, sizeof(out)) != 0) {
        return -1;
    }

    p = strstr(out, "Build ID: ");
    if (p == NULL) {
        return -1;
    }

    snprintf(fmt, sizeof(fmt), "Build ID: %%%zus", size - 1);

    return (sscanf(p, fmt, id) == 1) ? 0 : -1;
}


static const map_t *
map_of(const map_t *maps, size_t n, uint64_t addr)
{
    size_t  i;

    for (i = 0; i < n; i++) {
        if (addr >= maps[i].start && addr < maps[i].limit) {
            return &maps[i];
        }
    }

    return NULL;
}


static const char *
name_at(ngx_http_malloc_symbols_t *syms, ngx_http_malloc_arena_t *arena,
    const map_t *maps, size_t n, uint64_t addr, int *map)
{
    int  dummy;

    return ngx_http_malloc_symbols_lookup(syms, arena, maps, n, addr,
                                          map != NULL ? map : &dummy);
}


static char *
fake_line(char *buf, size_t size, uint64_t start, uint64_t len,
    uint64_t offset, const char *path)
{
    snprintf(buf, size, "%" PRIx64 "-%" PRIx64 " r-xp %08" PRIx64
             " fe:00 4242                       %s\n",
             start, start + len, offset, path);

    return buf;
}


static int
self_path(char *buf, size_t size)
{
    ssize_t  n;

    n = readlink("/proc/self/exe", buf, size - 1);
    if (n <= 0) {
        return -1;
    }

    buf[n] = '\0';

    return 0;
}


/* an empty file at c->path, the image to put there, a cache and arena */

static void
copy_open(copy_t *c, const char *tmpl)
{
    int      fd;
    size_t   len, n;
    map_t   *maps;

    snprintf(c->path, sizeof(c->path), "%s", tmpl);

    fd = mkstemp(c->path);
    if (fd == -1) {
        abort();
    }

    close(fd);

    c->syms = ngx_http_malloc_symbols_create();
    c->arena = ngx_http_malloc_arena_create();
    c->text = slurp("/proc/self/maps", &len);
    c->image = slurp("/proc/self/exe", &c->ilen);

    if (c->syms == NULL || c->arena == NULL || c->text == NULL
        || c->image == NULL)
    {
        abort();
    }

    ngx_http_malloc_symbols_maps(c->syms, c->arena, c->text, len, &maps, &n);

    c->addr = (uint64_t) (uintptr_t) unit_symbol_keep + 1;
    c->self = map_of(maps, n, c->addr);

    if (c->self == NULL) {
        abort();
    }
}


static void
copy_close(copy_t *c)
{
    free(c->image);
    free(c->text);
    unlink(c->path);
    ngx_http_malloc_arena_destroy(c->arena);
    ngx_http_malloc_symbols_destroy(c->syms);
}


static void
test_self(void)
{
    int                         i, map;
    char                        exe[PATH_MAX], id[256], *text;
    void                       *libc;
    size_t                      len, n;
    uint64_t                    addr;
    const char                 *name;
    const map_t                *m;
    map_t                      *maps;
    ngx_http_malloc_arena_t    *arena;
    ngx_http_malloc_symbols_t  *syms;

    syms = ngx_http_malloc_symbols_create();
    arena = ngx_http_malloc_arena_create();
    text = slurp("/proc/self/maps", &len);

    if (syms == NULL || arena == NULL || text == NULL
        || self_path(exe, sizeof(exe)) != 0)
    {
        abort();
    }

    is_int(ngx_http_malloc_symbols_maps(syms, arena, text, len, &maps, &n),
           0, "self: maps parsed");
    ok(n >= 2, "self: executable mappings found (%zu)", n);

    for (i = 1; i < (int) n; i++) {
        if (maps[i - 1].limit > maps[i].start) {
            break;
        }
    }

    is_int(i, (long) n, "self: mappings sorted and disjoint");

    /* a global function of the program */

    addr = (uint64_t) (uintptr_t) unit_symbol_exported;
    m = map_of(maps, n, addr);

    ok(m != NULL && strcmp(m->path, exe) == 0,
       "self: the program's text is mapped from %s", exe);
    ok(m != NULL && m->file >= 0, "self: the program is in the cache");

    name = name_at(syms, arena, maps, n, addr + 1, &map);
    is_str(name, "unit_symbol_exported", "self: global function by name");
    ok(m != NULL && map == (int) (m - maps), "self: its mapping index");
    is_str(name_at(syms, arena, maps, n, addr, NULL), "unit_symbol_exported",
           "self: global function at its first byte");

    /* a static one: .symtab is read, not only .dynsym */

    addr = (uint64_t) (uintptr_t) unit_symbol_keep;
    is_str(name_at(syms, arena, maps, n, addr + 1, NULL),
           "unit_symbol_static", "self: static function by name");

    /* libc, whichever alias the debug file or .dynsym lists first */

    libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
    ok(libc != NULL, "self: libc is loaded");

    if (libc != NULL) {
        addr = (uint64_t) (uintptr_t) dlsym(libc, "malloc");
        is_str(name_at(syms, arena, maps, n, addr + 1, NULL), "malloc",
               "self: libc malloc");

        addr = (uint64_t) (uintptr_t) dlsym(libc, "printf");
        is_str(name_at(syms, arena, maps, n, addr + 1, NULL), "printf",
               "self: libc printf (not _IO_printf)");

        m = map_of(maps, n, addr);
        ok(m != NULL && strstr(m->path, "libc") != NULL,
           "self: printf lies in libc's mapping");

        if (m != NULL && build_id_of(m->path, id, sizeof(id)) == 0) {
            is_str(m->build_id, id, "self: libc build ID as readelf -n");

        } else {
            ok(1, "self: libc build ID: skipped, no readelf");
        }

        dlclose(libc);
    }

    m = map_of(maps, n, (uint64_t) (uintptr_t) unit_symbol_exported);

    if (m != NULL && build_id_of(exe, id, sizeof(id)) == 0) {
        is_str(m->build_id, id, "self: program build ID as readelf -n");

    } else {
        ok(1, "self: program build ID: skipped, no readelf");
    }

    /* outside every executable mapping */

    name = ngx_http_malloc_symbols_lookup(syms, arena, maps, n, 16, &map);
    ok(name == NULL && map == -1, "self: address 16 is nowhere");

    addr = (uint64_t) (uintptr_t) &len;
    name = ngx_http_malloc_symbols_lookup(syms, arena, maps, n, addr, &map);
    ok(name == NULL && map == -1, "self: a stack address is no code");

    name = ngx_http_malloc_symbols_lookup(syms, arena, maps, n, UINT64_MAX,
                                          &map);
    ok(name == NULL && map == -1, "self: the last address is nowhere");

    name = ngx_http_malloc_symbols_lookup(syms, arena, maps, 0, addr, &map);
    ok(name == NULL && map == -1, "self: no mappings, no name");

    is_int(ngx_http_malloc_symbols_verify(syms), 0, "self: cache is sound");

    free(text);
    ngx_http_malloc_arena_destroy(arena);
    ngx_http_malloc_symbols_destroy(syms);
}


/* a second pass over the same maps reads no file again */

static void
test_cache_stable(void)
{
    int                         same;
    char                       *text;
    size_t                      len, n1, n2, i, before;
    map_t                      *m1, *m2;
    ngx_http_malloc_arena_t    *arena;
    ngx_http_malloc_symbols_t  *syms;

    syms = ngx_http_malloc_symbols_create();
    arena = ngx_http_malloc_arena_create();
    text = slurp("/proc/self/maps", &len);

    if (syms == NULL || arena == NULL || text == NULL) {
        abort();
    }

    ngx_http_malloc_symbols_maps(syms, arena, text, len, &m1, &n1);
    before = ngx_http_malloc_symbols_mapped(syms);

    ngx_http_malloc_symbols_maps(syms, arena, text, len, &m2, &n2);

    is_int((long) ngx_http_malloc_symbols_mapped(syms), (long) before,
           "cache: a second pass maps nothing more (%zu bytes)", before);
    is_int((long) n2, (long) n1, "cache: as many mappings");

    same = (n1 == n2);

    for (i = 0; same && i < n1; i++) {
        same = m1[i].file == m2[i].file && m1[i].bias == m2[i].bias
               && m1[i].start == m2[i].start;
    }

    ok(same, "cache: the same entries and biases");
    ok(ngx_http_malloc_symbols_count(syms, (int) n1) == -1
       || n1 == 0, "cache: no entry beyond the files seen");

    free(text);
    ngx_http_malloc_arena_destroy(arena);
    ngx_http_malloc_symbols_destroy(syms);
}


static void
test_lines(void)
{
    int                         map;
    char                        text[8192], *self;
    size_t                      n, len;
    map_t                      *maps;
    ngx_http_malloc_arena_t    *arena;
    ngx_http_malloc_symbols_t  *syms;

    syms = ngx_http_malloc_symbols_create();
    arena = ngx_http_malloc_arena_create();
    self = slurp("/proc/self/maps", &len);

    if (syms == NULL || arena == NULL || self == NULL) {
        abort();
    }

    /* one well-formed line for a real file, then every way to break it */

    len = snprintf(text, sizeof(text), "%s",
        "7e0000001000-7e0000002000 r-xp 00001000 fe:00 1 /bin/sh\n"
        "\n"
        "garbage\n"
        "7e0000003000-7e0000004000 r-xp 00001000 fe:00 1\n"
        "7e0000005000-7e0000006000 r-xp 00001000 fe:00 1 [vdso]\n"
        "7e0000007000-7e0000008000 r-xp 00001000 fe:00 1 relative/path\n"
        "7e0000009000-7e000000a000 r--p 00001000 fe:00 1 /bin/sh\n"
        "7e000000c000-7e000000b000 r-xp 00001000 fe:00 1 /bin/sh\n"
        "7e000000d000-7e000000d000 r-xp 00001000 fe:00 1 /bin/sh\n"
        "7e000000e000 7e000000f000 r-xp 00001000 fe:00 1 /bin/sh\n"
        "7e0000010000-7e0000011000 r-x 00001000 fe:00 1 /bin/sh\n"
        "7e0000012000-7e0000013000 r-xq 00001000 fe:00 1 /bin/sh\n"
        "7e0000014000-7e0000015000 r-xp 0000100g fe:00 1 /bin/sh\n"
        "7e0000016000-7e0000017000 r-xp 00001000 fe00 1 /bin/sh\n"
        "7e0000018000-7e0000019000 r-xp 00001000 fe:00 x /bin/sh\n"
        "7e000001a000-7e000001b000 r-xp 00001000 fe:00 1x /bin/sh\n"
        "7e000001c000-7e000001d000 r-xp 00001000 fe:00 "
            "99999999999999999999999 /bin/sh\n"
        "17e000001e0000000-7e000001f000 r-xp 00001000 fe:00 1 /bin/sh\n"
        "7e0000020000-10000000000000000 r-xp 00001000 fe:00 1 /bin/sh\n"
        "-7e0000021000 r-xp 00001000 fe:00 1 /bin/sh\n"
        "7e0000022000- r-xp 00001000 fe:00 1 /bin/sh\n"
        "7e0000023000-7e0000024000\n"
        "7e0000025000-7e0000026000 r-xp\n"
        "7e0000027000-7e0000028000 r-xp 00001000\n"
        "7e0000029000-7e000002a000 r-xp 00001000 fe:00\n"
        /* overlaps the first line */
        "7e0000001800-7e0000002800 r-xp 00001000 fe:00 1 /bin/sh\n"
        /* out of order, fine */
        "7e0000000000-7e0000001000 r-xp 00000000 fe:00 1 /nonexistent/a.so\n"
        /* a special file and a directory: never opened as ELF */
        "7e0000030000-7e0000031000 r-xp 00000000 00:05 1 /dev/null\n"
        "7e0000032000-7e0000033000 r-xp 00000000 00:05 1 /tmp\n"
        /* no newline at the end */
        "7e0000040000-7e0000041000 r-xs 00002000 fe:00 1 /with space/b.so");

    is_int(ngx_http_malloc_symbols_maps(syms, arena, text, len, &maps, &n),
           0, "lines: parsed");

    if (!is_int((long) n, 5, "lines: 5 good lines of many")) {
        for (len = 0; len < n; len++) {
            diag("%" PRIx64 " %s", maps[len].start, maps[len].path);
        }

        goto done;
    }

    is_str(maps[0].path, "/nonexistent/a.so", "lines: sorted by address");
    is_int(maps[0].file, -1, "lines: a missing file is not cached");
    ok(maps[0].bias == maps[0].start && maps[0].build_id == NULL,
       "lines: a missing file: bias start - offset, no build ID");
    is_str(name_at(syms, arena, maps, n, 0x7e0000000123ULL, &map),
           "a.so+0x123", "lines: a missing file names file+0xvaddr");
    is_int(map, 0, "lines: and its mapping");

    is_str(maps[1].path, "/bin/sh", "lines: the good line's path");
    ok(maps[1].start == 0x7e0000001000ULL && maps[1].limit == 0x7e0000002000ULL
       && maps[1].offset == 0x1000, "lines: its addresses and offset");
    ok(maps[1].file >= 0, "lines: /bin/sh is cached");
    ok(maps[1].build_id != NULL, "lines: /bin/sh has a build ID");

    is_int(maps[2].file, -1, "lines: /dev/null is not read");
    is_int(maps[3].file, -1, "lines: a directory is not read");
    is_str(maps[4].path, "/with space/b.so",
           "lines: a path with a space, the last line without newline");
    is_str(name_at(syms, arena, maps, n, 0x7e0000040010ULL, NULL),
           "b.so+0x2010", "lines: shared mapping, missing file");

    /* nothing, empty text, only junk */

    is_int(ngx_http_malloc_symbols_maps(syms, arena, "", 0, &maps, &n), 0,
           "lines: empty text");
    is_int((long) n, 0, "lines: empty text, no mappings");
    is_int(ngx_http_malloc_symbols_maps(syms, arena, "\n\n\0\n", 4, &maps,
                                        &n),
           0, "lines: blank lines and a NUL");
    is_int((long) n, 0, "lines: blank lines, no mappings");

    len = snprintf(text, sizeof(text),
                   "7e0000001000-7e0000002000 r-xp 00001000 fe:00 1 /bin/sh");
    text[len - 3] = '\0';
    ngx_http_malloc_symbols_maps(syms, arena, text, len, &maps, &n);
    is_int((long) n, 0, "lines: a NUL inside the path");

    /* /proc/self/maps cut anywhere parses without a fault */

    for (len = 0; len < strlen(self); len += 7) {
        if (ngx_http_malloc_symbols_maps(syms, arena, self, len, &maps, &n)
            != 0)
        {
            break;
        }
    }

    ok(len >= strlen(self), "lines: every prefix of our maps parses");

done:

    free(self);
    ngx_http_malloc_arena_destroy(arena);
    ngx_http_malloc_symbols_destroy(syms);
}


/*
 * A mapping of a deleted file: the path now names another file (or none)
 * and is not read; the mapping is found through /proc/self/map_files
 * when the inode is ours.
 */

static void
test_deleted(void)
{
    char                        line[PATH_MAX + 128], exe[PATH_MAX];
    char                        want[300], *text, *p, *eol;
    size_t                      len, n;
    uint64_t                    addr, start, limit, offset, inode;
    const map_t                *m;
    map_t                      *maps;
    ngx_http_malloc_arena_t    *arena;
    ngx_http_malloc_symbols_t  *syms;

    syms = ngx_http_malloc_symbols_create();
    arena = ngx_http_malloc_arena_create();
    text = slurp("/proc/self/maps", &len);

    if (syms == NULL || arena == NULL || text == NULL
        || self_path(exe, sizeof(exe)) != 0)
    {
        abort();
    }

    /* our own text line */

    addr = (uint64_t) (uintptr_t) unit_symbol_keep;
    inode = 0;

    for (p = text; p < text + len; p = eol + 1) {
        eol = memchr(p, '\n', text + len - p);
        if (eol == NULL) {
            break;
        }

        *eol = '\0';

        if (sscanf(p, "%" SCNx64 "-%" SCNx64 " %*s %" SCNx64 " %*s %" SCNu64,
                   &start, &limit, &offset, &inode) == 4
            && addr >= start && addr < limit)
        {
            break;
        }

        inode = 0;
    }

    if (!ok(inode != 0, "deleted: found our text line")) {
        goto done;
    }

    snprintf(line, sizeof(line), "%" PRIx64 "-%" PRIx64 " r-xp %08" PRIx64
             " fe:00 %" PRIu64 " %s (deleted)\n",
             start, limit, offset, inode, exe);

    ngx_http_malloc_symbols_maps(syms, arena, line, strlen(line), &maps, &n);
    m = (n == 1) ? &maps[0] : NULL;

    ok(m != NULL && strcmp(m->path, exe) == 0,
       "deleted: \" (deleted)\" is cut from the path");

    /* the kernel opens map_files only for CAP_SYS_ADMIN */

    if (geteuid() != 0) {
        todo_start("/proc/self/map_files needs root");
    }

    ok(m != NULL && m->file >= 0, "deleted: read through map_files");
    is_str(name_at(syms, arena, maps, n, addr + 1, NULL),
           "unit_symbol_static", "deleted: names from the mapped file");

    if (geteuid() != 0) {
        todo_end();
    }

    /* the same line with another inode: not the file we have mapped */

    snprintf(line, sizeof(line), "%" PRIx64 "-%" PRIx64 " r-xp %08" PRIx64
             " fe:00 %" PRIu64 " %s (deleted)\n",
             start, limit, offset, inode + 1, exe);

    ngx_http_malloc_symbols_maps(syms, arena, line, strlen(line), &maps, &n);
    m = (n == 1) ? &maps[0] : NULL;

    ok(m != NULL && m->file == -1, "deleted: another inode is not read");

    snprintf(want, sizeof(want), "%s+0x%" PRIx64, strrchr(exe, '/') + 1,
             addr + 1 - (start - offset));
    is_str(name_at(syms, arena, maps, n, addr + 1, NULL), want,
           "deleted: another inode gives file+0xvaddr");

done:

    free(text);
    ngx_http_malloc_arena_destroy(arena);
    ngx_http_malloc_symbols_destroy(syms);
}


/*
 * Debian's nginx is stripped and exports its functions (-Wl,-E): every
 * exported function resolves, and an address between two of them that
 * neither covers is not credited to the one below (jeprof's mistake).
 */

static void
test_nginx(void)
{
    int                         bad, checked;
    char                        line[256], id[256], *out, *p, *eol;
    char                        type, sym[256], want[300];
    size_t                      n;
    uint64_t                    off, vaddr, filesz, value, size, addr;
    uint64_t                    dl_end, next;
    const char                 *name;
    struct stat                 st;
    map_t                      *maps;
    ngx_http_malloc_arena_t    *arena;
    ngx_http_malloc_symbols_t  *syms;

    out = malloc(1024 * 1024);
    id[0] = '\0';

    if (out == NULL || stat(NGINX, &st) != 0
        || run("readelf -lW " NGINX, out, 1024 * 1024) != 0)
    {
        ok(1, "nginx: skipped, no " NGINX " or no readelf");
        free(out);
        return;
    }

    /* the executable segment, as the kernel would map it */

    off = vaddr = filesz = 0;

    for (p = out; (p = strstr(p, "LOAD ")) != NULL; p++) {
        eol = strchr(p, '\n');

        if (sscanf(p, "LOAD %" SCNx64 " %" SCNx64 " %*x %" SCNx64,
                   &off, &vaddr, &filesz) == 3
            && eol != NULL && memchr(p, 'E', eol - p) != NULL)
        {
            break;
        }

        filesz = 0;
    }

    if (!ok(filesz > 0, "nginx: readelf shows an executable segment")) {
        free(out);
        return;
    }

    syms = ngx_http_malloc_symbols_create();
    arena = ngx_http_malloc_arena_create();

    if (syms == NULL || arena == NULL) {
        abort();
    }

    fake_line(line, sizeof(line), FAKE_START, (filesz + 0xfff) & ~0xfffULL,
              off & ~0xfffULL, NGINX);

    ngx_http_malloc_symbols_maps(syms, arena, line, strlen(line), &maps, &n);

    if (!is_int((long) n, 1, "nginx: the made-up line parses")) {
        goto done;
    }

    ok(maps[0].file >= 0, "nginx: cached");
    ok(maps[0].bias == FAKE_START - (vaddr + ((off & ~0xfffULL) - off)),
       "nginx: bias from the program headers");
    ok(ngx_http_malloc_symbols_count(syms, maps[0].file) > 100,
       "nginx: .dynsym read (%ld functions)",
       ngx_http_malloc_symbols_count(syms, maps[0].file));

    if (build_id_of(NGINX, id, sizeof(id)) == 0) {
        is_str(maps[0].build_id, id, "nginx: build ID as readelf -n");
    }

    /* the debug file would name the static functions: then skip those */

    snprintf(want, sizeof(want), "/usr/lib/debug/.build-id/%.2s/%s.debug",
             id, id + 2);

    if (run("nm -D --defined-only -S " NGINX " | sort", out, 1024 * 1024)
        != 0)
    {
        ok(1, "nginx: skipped, no nm");
        goto done;
    }

    /* every exported function by name, at its first and last byte */

    bad = 0;
    checked = 0;
    dl_end = 0;
    next = 0;

    for (p = out; *p != '\0'; p = eol + 1) {
        eol = strchr(p, '\n');
        if (eol == NULL) {
            break;
        }

        if (sscanf(p, "%" SCNx64 " %" SCNx64 " %c %255s", &value, &size,
                   &type, sym) != 4)
        {
            continue;
        }

        if (dl_end != 0 && next == 0 && value >= dl_end) {
            next = value;
        }

        if (strcmp(sym, "ngx_dlerror") == 0) {
            dl_end = value + size;
        }

        if ((type != 'T' && type != 'W' && type != 'i') || size == 0) {
            continue;
        }

        addr = maps[0].bias + value;

        name = name_at(syms, arena, maps, n, addr, NULL);

        if (name == NULL || strcmp(name, sym) != 0) {
            if (bad++ < 5) {
                diag("%s at 0x%" PRIx64 ": got %s", sym, value,
                     name ? name : "NULL");
            }
        }

        name = name_at(syms, arena, maps, n, addr + size - 1, NULL);

        if (name == NULL || strcmp(name, sym) != 0) {
            if (bad++ < 5) {
                diag("%s at its end 0x%" PRIx64 ": got %s", sym,
                     value + size - 1, name ? name : "NULL");
            }
        }

        if (strcmp(sym, "ngx_http_core_content_phase") == 0) {
            is_str(name_at(syms, arena, maps, n, addr + 1, NULL), sym,
                   "nginx: ngx_http_core_content_phase");
        }

        checked++;
    }

    ok(checked > 100 && bad == 0,
       "nginx: %d exported functions as nm -D says", checked);

    /* an address past ngx_dlerror's end, before the next symbol */

    if (!ok(dl_end != 0 && next > dl_end + 16,
            "nginx: a gap after ngx_dlerror (0x%" PRIx64 "-0x%" PRIx64 ")",
            dl_end, next))
    {
        goto done;
    }

    if (stat(want, &st) == 0) {
        ok(1, "nginx: static functions: skipped, %s is installed", want);
        goto done;
    }

    vaddr = dl_end + (next - dl_end) / 2;
    snprintf(want, sizeof(want), "nginx+0x%" PRIx64, vaddr);

    is_str(name_at(syms, arena, maps, n, maps[0].bias + vaddr, NULL), want,
           "nginx: a static function is not ngx_dlerror");

    snprintf(want, sizeof(want), "nginx+0x%" PRIx64, dl_end);

    is_str(name_at(syms, arena, maps, n, maps[0].bias + dl_end, NULL), want,
           "nginx: one past ngx_dlerror's end");

done:

    free(out);
    ngx_http_malloc_arena_destroy(arena);
    ngx_http_malloc_symbols_destroy(syms);
}


/* a stripped copy of this program: no .symtab, no exported functions */

static void
test_stripped(void)
{
    int                         fd;
    char                        path[] = "/tmp/unit_symbol_strip.XXXXXX";
    char                        cmd[2 * PATH_MAX + 128], out[256];
    char                        line[PATH_MAX + 128], exe[PATH_MAX];
    char                        want[300];
    char                       *text;
    size_t                      n, len, n0;
    uint64_t                    addr;
    const map_t                *self;
    map_t                      *maps, *m0;
    ngx_http_malloc_arena_t    *arena;
    ngx_http_malloc_symbols_t  *syms;

    fd = mkstemp(path);
    if (fd == -1) {
        abort();
    }

    close(fd);

    /* not /proc/self/exe: in the shell that is objcopy itself */

    if (self_path(exe, sizeof(exe)) != 0) {
        abort();
    }

    snprintf(cmd, sizeof(cmd),
             "objcopy --strip-all '%s' %s 2>&1 && echo done", exe, path);

    if (run(cmd, out, sizeof(out)) != 0 || strstr(out, "done") == NULL) {
        ok(1, "stripped: skipped, no objcopy");
        unlink(path);
        return;
    }

    syms = ngx_http_malloc_symbols_create();
    arena = ngx_http_malloc_arena_create();
    text = slurp("/proc/self/maps", &len);

    if (syms == NULL || arena == NULL || text == NULL) {
        abort();
    }

    ngx_http_malloc_symbols_maps(syms, arena, text, len, &m0, &n0);

    addr = (uint64_t) (uintptr_t) unit_symbol_keep;
    self = map_of(m0, n0, addr);

    if (self == NULL) {
        abort();
    }

    /* the copy "mapped" where this program is: the same layout */

    fake_line(line, sizeof(line), self->start, self->limit - self->start,
              self->offset, path);

    ngx_http_malloc_symbols_maps(syms, arena, line, strlen(line), &maps, &n);

    if (!is_int((long) n, 1, "stripped: one mapping")) {
        goto done;
    }

    ok(maps[0].file >= 0, "stripped: cached");
    is_int((long) maps[0].bias, (long) self->bias,
           "stripped: the same bias as the original");
    is_str(maps[0].build_id, self->build_id,
           "stripped: strip keeps the build ID");

    snprintf(want, sizeof(want), "%s+0x%" PRIx64, strrchr(path, '/') + 1,
             addr + 1 - self->bias);
    is_str(name_at(syms, arena, maps, n, addr + 1, NULL), want,
           "stripped: a static function is file+0xvaddr");

    addr = (uint64_t) (uintptr_t) unit_symbol_exported;
    snprintf(want, sizeof(want), "%s+0x%" PRIx64, strrchr(path, '/') + 1,
             addr - self->bias);
    is_str(name_at(syms, arena, maps, n, addr, NULL), want,
           "stripped: so is a global one not in .dynsym");

done:

    free(text);
    unlink(path);
    ngx_http_malloc_arena_destroy(arena);
    ngx_http_malloc_symbols_destroy(syms);
}


/*
 * Files that are not ELF, or ELF cut short: read without a fault, and
 * never give a name that the intact file would not.
 */

static void
test_garbage(void)
{
    int                         fd, wrong;
    char                        path[] = "/tmp/unit_symbol_junk.XXXXXX";
    char                        line[PATH_MAX + 128], *image, *text;
    char                        junk[4096], want[300];
    size_t                      i, len, n, n0, ilen, cut;
    uint64_t                    addr;
    const char                 *name;
    const map_t                *self;
    map_t                      *maps, *m0;
    ngx_http_malloc_arena_t    *arena;
    ngx_http_malloc_symbols_t  *syms, *cut_syms;

    static const size_t         cuts[] = { 0, 1, 4, 16, 63, 64, 65, 100,
                                           200, 4095, 4096, 8192, 65536 };

    fd = mkstemp(path);
    if (fd == -1) {
        abort();
    }

    close(fd);

    syms = ngx_http_malloc_symbols_create();
    arena = ngx_http_malloc_arena_create();
    text = slurp("/proc/self/maps", &len);
    image = slurp("/proc/self/exe", &ilen);

    if (syms == NULL || arena == NULL || text == NULL || image == NULL) {
        abort();
    }

    ngx_http_malloc_symbols_maps(syms, arena, text, len, &m0, &n0);

    addr = (uint64_t) (uintptr_t) unit_symbol_keep + 1;
    self = map_of(m0, n0, addr);

    if (self == NULL) {
        abort();
    }

    snprintf(want, sizeof(want), "%s+0x%" PRIx64, strrchr(path, '/') + 1,
             addr - self->bias);

    fake_line(line, sizeof(line), self->start, self->limit - self->start,
              self->offset, path);

    /* random bytes, and random bytes behind an ELF magic */

    srandom(42);

    for (i = 0; i < sizeof(junk); i++) {
        junk[i] = (char) random();
    }

    spit(path, junk, sizeof(junk));
    ngx_http_malloc_symbols_maps(syms, arena, line, strlen(line), &maps, &n);
    ok(n == 1 && maps[0].build_id == NULL, "garbage: random bytes read");
    is_str(name_at(syms, arena, maps, n, addr, NULL), want,
           "garbage: random bytes give file+0xvaddr");

    memcpy(junk, image, 64);
    spit(path, junk, sizeof(junk));
    ngx_http_malloc_symbols_maps(syms, arena, line, strlen(line), &maps, &n);
    is_str(name_at(syms, arena, maps, n, addr, NULL), want,
           "garbage: an ELF header over random bytes");

    spit(path, "", 0);
    ngx_http_malloc_symbols_maps(syms, arena, line, strlen(line), &maps, &n);
    is_str(name_at(syms, arena, maps, n, addr, NULL), want,
           "garbage: an empty file");

    /* this program cut at many lengths */

    wrong = 0;

    for (i = 0; i < sizeof(cuts) / sizeof(cuts[0]) + 64; i++) {
        cut = (i < sizeof(cuts) / sizeof(cuts[0]))
              ? cuts[i] : ilen - ilen / (i - sizeof(cuts) / sizeof(cuts[0])
                                          + 2);

        if (cut > ilen) {
            continue;
        }

        spit(path, image, cut);

        /* a cache of its own each time: 64 cuts would fill one */

        cut_syms = ngx_http_malloc_symbols_create();
        if (cut_syms == NULL) {
            abort();
        }

        ngx_http_malloc_symbols_maps(cut_syms, arena, line, strlen(line),
                                     &maps, &n);
        name = name_at(cut_syms, arena, maps, n, addr, NULL);

        if (name == NULL
            || (strcmp(name, want) != 0
                && strcmp(name, "unit_symbol_static") != 0)
            || ngx_http_malloc_symbols_verify(cut_syms) != 0)
        {
            if (wrong++ < 5) {
                diag("cut at %zu: %s", cut, name ? name : "NULL");
            }
        }

        ngx_http_malloc_symbols_destroy(cut_syms);
    }

    is_int(wrong, 0, "garbage: truncated copies name right or not at all");

    spit(path, image, ilen - 1);
    ngx_http_malloc_symbols_maps(syms, arena, line, strlen(line), &maps, &n);
    is_str(name_at(syms, arena, maps, n, addr, NULL), want,
           "garbage: one byte short loses the section headers");

    spit(path, image, ilen);
    ngx_http_malloc_symbols_maps(syms, arena, line, strlen(line), &maps, &n);
    is_str(name_at(syms, arena, maps, n, addr, NULL), "unit_symbol_static",
           "garbage: the whole copy names it");

    is_int(ngx_http_malloc_symbols_verify(syms), 0,
           "garbage: cache is sound");

    free(image);
    free(text);
    unlink(path);
    ngx_http_malloc_arena_destroy(arena);
    ngx_http_malloc_symbols_destroy(syms);
}


/*
 * This program's image with single bytes changed all through its headers:
 * no fault (ASan watches), a sound cache, a name for every address.
 */

static void
test_mutations(void)
{
    int                         fails, trials, mapi;
    char                       *image;
    size_t                      ilen, i, k, v, end;
    uint64_t                    addr;
    Elf64_Ehdr                  eh;
    unsigned char              *copy, saved;
    const char                 *name;
    map_t                       map;
    ngx_http_malloc_arena_t    *arena;
    ngx_http_malloc_symbols_t  *syms;

    static const unsigned char  values[] = { 0x00, 0xff, 0x01, 0x80, 0x7f };

    image = slurp("/proc/self/exe", &ilen);
    if (image == NULL || ilen < sizeof(eh)) {
        abort();
    }

    /* exactly the image's size, so that ASan sees any read past it */

    copy = malloc(ilen);
    if (copy == NULL) {
        abort();
    }

    memcpy(copy, image, ilen);
    memcpy(&eh, image, sizeof(eh));

    fails = 0;
    trials = 0;
    addr = 0x100000;

    /* the ELF and program headers, then the section headers */

    for (k = 0; k < 2; k++) {
        i = (k == 0) ? 0 : eh.e_shoff;
        end = (k == 0) ? eh.e_phoff + eh.e_phnum * sizeof(Elf64_Phdr)
                       : eh.e_shoff + eh.e_shnum * sizeof(Elf64_Shdr);

        for ( /* void */ ; i < end && i < ilen; i++) {
            saved = copy[i];

            for (v = 0; v < sizeof(values); v++) {
                copy[i] = saved ^ values[v];

                syms = ngx_http_malloc_symbols_create();
                arena = ngx_http_malloc_arena_create();

                if (syms == NULL || arena == NULL) {
                    abort();
                }

                memset(&map, 0, sizeof(map));
                map.start = 0x100000;
                map.limit = 0x100000 + ilen;
                map.offset = 0;
                map.path = "/mutant";

                (void) ngx_http_malloc_symbols_load_mem(syms, arena, copy,
                                                        ilen, &map);

                name = ngx_http_malloc_symbols_lookup(syms, arena, &map, 1,
                                                      addr, &mapi);
                if (name == NULL
                    || ngx_http_malloc_symbols_verify(syms) != 0)
                {
                    fails++;
                }

                addr = 0x100000 + (addr * 7 + 13) % ilen;
                trials++;

                ngx_http_malloc_arena_destroy(arena);
                ngx_http_malloc_symbols_destroy(syms);
            }

            copy[i] = saved;
        }
    }

    is_int(fails, 0, "mutations: %d single-byte changes to the headers",
           trials);

    free(copy);
    free(image);
}


/* the cache stops at 64 files; mappings after that still get a bias */

static void
test_bounds(void)
{
    int                         i, last;
    char                        path[64], want[64];
    size_t                      before;
    uint64_t                    addr;
    map_t                       map;
    image_t                     elf;
    ngx_http_malloc_arena_t    *arena;
    ngx_http_malloc_symbols_t  *syms;

    syms = ngx_http_malloc_symbols_create();
    arena = ngx_http_malloc_arena_create();

    if (syms == NULL || arena == NULL) {
        abort();
    }

    make_elf(&elf);

    last = 0;
    before = 0;

    for (i = 0; i < 70; i++) {
        snprintf(path, sizeof(path), "/elf/%d", i);

        memset(&map, 0, sizeof(map));
        map.start = 0x200000;
        map.limit = 0x300000;
        map.path = path;

        if (i == 64) {
            before = ngx_http_malloc_symbols_mapped(syms);
        }

        if (ngx_http_malloc_symbols_load_mem(syms, arena, elf.data, elf.len,
                                             &map)
            != 0)
        {
            break;
        }

        last = map.file;
    }

    is_int(i, 64, "bounds: 64 files cached");
    is_int(last, 63, "bounds: indexes 0 to 63");
    is_int(map.file, -1, "bounds: the 65th is not cached");
    is_int((long) map.bias, 0x200000, "bounds: but has its bias");
    is_str(map.build_id, "0123456789abcdef0123456789abcdef01234567",
           "bounds: and its build ID");
    is_int((long) ngx_http_malloc_symbols_mapped(syms), (long) before,
           "bounds: a full cache maps nothing more");

    addr = 0x200000 + 0x1050;
    snprintf(want, sizeof(want), "64+0x%x", 0x1050);
    is_str(ngx_http_malloc_symbols_lookup(syms, arena, &map, 1, addr, &i),
           want, "bounds: the 65th file names file+0xvaddr");

    /* a file already cached is still found */

    map.path = "/elf/3";
    is_int(ngx_http_malloc_symbols_load_mem(syms, arena, elf.data, elf.len,
                                            &map),
           0, "bounds: a cached file is found when full");
    is_int(map.file, 3, "bounds: at its index");
    is_str(ngx_http_malloc_symbols_lookup(syms, arena, &map, 1, addr, &i),
           "outer", "bounds: and named");

    free(elf.data);
    ngx_http_malloc_arena_destroy(arena);
    ngx_http_malloc_symbols_destroy(syms);
}


/* a file that changes on disk is read again; older maps keep working */

static void
test_reload(void)
{
    copy_t                      c;
    int                         first;
    char                        line[PATH_MAX + 128], want[300];
    size_t                      n, n1;
    map_t                      *m1, *m2;
    struct timespec             times[2];

    copy_open(&c, "/tmp/unit_symbol_reload.XXXXXX");

    fake_line(line, sizeof(line), c.self->start, c.self->limit - c.self->start,
              c.self->offset, c.path);

    spit(c.path, c.image, c.ilen);
    ngx_http_malloc_symbols_maps(c.syms, c.arena, line, strlen(line),
                                 &m1, &n1);

    first = (n1 == 1) ? m1[0].file : -1;
    ok(first >= 0, "reload: the copy is cached");
    is_str(name_at(c.syms, c.arena, m1, n1, c.addr, NULL),
           "unit_symbol_static",
           "reload: the copy names it");

    /* the same size and time: taken for the same file */

    memset(c.image + c.ilen - 8, 0, 8);
    spit(c.path, c.image, c.ilen);

    times[0].tv_sec = 1000000000;
    times[0].tv_nsec = 0;
    times[1] = times[0];
    utimensat(AT_FDCWD, c.path, times, 0);

    ngx_http_malloc_symbols_maps(c.syms, c.arena, line, strlen(line), &m2, &n);
    ok(n == 1 && m2[0].file != first, "reload: a new mtime is a new file");

    first = (n == 1) ? m2[0].file : -1;

    /* now garbage of another size */

    spit(c.path, "not an ELF file", 15);
    ngx_http_malloc_symbols_maps(c.syms, c.arena, line, strlen(line), &m2, &n);

    ok(n == 1 && m2[0].file >= 0 && m2[0].file != first,
       "reload: a changed file gets a new entry");

    snprintf(want, sizeof(want), "%s+0x%" PRIx64, strrchr(c.path, '/') + 1,
             c.addr - (c.self->start - c.self->offset));
    is_str(name_at(c.syms, c.arena, m2, n, c.addr, NULL), want,
           "reload: the new contents have no symbols");
    is_str(name_at(c.syms, c.arena, m1, n1, c.addr, NULL),
           "unit_symbol_static",
           "reload: maps parsed before still name from the old entry");

    /* back to a version seen before: its entry, not a new one */

    spit(c.path, c.image, c.ilen);
    utimensat(AT_FDCWD, c.path, times, 0);

    ngx_http_malloc_symbols_maps(c.syms, c.arena, line, strlen(line), &m2, &n);
    ok(n == 1 && m2[0].file == first,
       "reload: a version seen before finds its entry again");
    is_str(name_at(c.syms, c.arena, m2, n, c.addr, NULL), "unit_symbol_static",
           "reload: and its names");

    copy_close(&c);
}


/*
 * A file that this process can no longer stat (a worker that may not
 * enter the directory; here the file is gone) keeps the names that were
 * read before, from the master, as long as the maps line has its inode.
 */

static void
test_unreachable(void)
{
    copy_t                      c;
    int                         first;
    char                        line[PATH_MAX + 128], want[300];
    size_t                      n;
    map_t                      *m1;
    struct stat                 st;

    copy_open(&c, "/tmp/unit_symbol_gone.XXXXXX");

    spit(c.path, c.image, c.ilen);

    if (stat(c.path, &st) != 0) {
        abort();
    }

    snprintf(line, sizeof(line), "%" PRIx64 "-%" PRIx64 " r-xp %08" PRIx64
             " fe:00 %" PRIu64 " %s\n", c.self->start, c.self->limit,
             c.self->offset, (uint64_t) st.st_ino, c.path);

    ngx_http_malloc_symbols_maps(c.syms, c.arena, line, strlen(line), &m1, &n);
    first = (n == 1) ? m1[0].file : -1;
    ok(first >= 0, "unreachable: read while it could be");

    unlink(c.path);

    ngx_http_malloc_symbols_maps(c.syms, c.arena, line, strlen(line), &m1, &n);
    ok(n == 1 && m1[0].file == first,
       "unreachable: the entry of its path and inode is used");
    is_str(name_at(c.syms, c.arena, m1, n, c.addr, NULL), "unit_symbol_static",
           "unreachable: and names its code");

    /* another inode at that path: another file, never read */

    snprintf(line, sizeof(line), "%" PRIx64 "-%" PRIx64 " r-xp %08" PRIx64
             " fe:00 %" PRIu64 " %s\n", c.self->start, c.self->limit,
             c.self->offset, (uint64_t) st.st_ino + 1, c.path);

    ngx_http_malloc_symbols_maps(c.syms, c.arena, line, strlen(line), &m1, &n);
    ok(n == 1 && m1[0].file == -1, "unreachable: another inode is unknown");

    snprintf(want, sizeof(want), "%s+0x%" PRIx64, strrchr(c.path, '/') + 1,
             c.addr - (c.self->start - c.self->offset));
    is_str(name_at(c.syms, c.arena, m1, n, c.addr, NULL), want,
           "unreachable: another inode gives file+0xvaddr");

    copy_close(&c);
}


/*
 * A library rewritten in place while its symbols are read (a careless
 * upgrade): a child truncates and rewrites the copy over and over while
 * this process loads it, each time into a new cache.  Reading a mapped
 * file, the loader died of SIGBUS; reading it part by part, a load only
 * sees a short file.
 */

static void
test_truncated(void)
{
    int                         fd, loads, named;
    char                        line[PATH_MAX + 128];
    pid_t                       pid, parent;
    size_t                      n;
    time_t                      end;
    map_t                      *m;
    copy_t                      c;
    const char                 *name;
    ngx_http_malloc_arena_t    *arena;
    ngx_http_malloc_symbols_t  *syms;

    copy_open(&c, "/tmp/unit_symbol_trunc.XXXXXX");
    spit(c.path, c.image, c.ilen);
    fake_line(line, sizeof(line), c.self->start,
              c.self->limit - c.self->start, c.self->offset, c.path);

    parent = getpid();
    pid = fork();

    if (pid == 0) {
        /* the output is the parent's; a parent that died ends the child */
        close(STDOUT_FILENO);

        while (getppid() == parent) {
            fd = open(c.path, O_WRONLY | O_TRUNC);
            if (fd == -1 || write(fd, c.image, c.ilen) < 0) {
                _exit(1);
            }

            close(fd);
        }

        _exit(0);
    }

    if (pid == -1) {
        abort();
    }

    loads = 0;
    named = 0;
    end = time(NULL) + 2;

    while (time(NULL) < end) {
        syms = ngx_http_malloc_symbols_create();
        arena = ngx_http_malloc_arena_create();

        if (syms == NULL || arena == NULL) {
            abort();
        }

        ngx_http_malloc_symbols_maps(syms, arena, line, strlen(line), &m, &n);
        name = name_at(syms, arena, m, n, c.addr, NULL);
        named += (name != NULL && strcmp(name, "unit_symbol_static") == 0);
        loads++;

        ngx_http_malloc_arena_destroy(arena);
        ngx_http_malloc_symbols_destroy(syms);
    }

    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);

    ok(loads > 0, "truncated: %d loads while the file was rewritten, "
       "%d of them named the function", loads, named);

    /* whole again: read whole */

    spit(c.path, c.image, c.ilen);

    syms = ngx_http_malloc_symbols_create();
    ngx_http_malloc_symbols_maps(syms, c.arena, line, strlen(line), &m, &n);
    is_str(name_at(syms, c.arena, m, n, c.addr, NULL), "unit_symbol_static",
           "truncated: the file written again names it");
    ngx_http_malloc_symbols_destroy(syms);

    copy_close(&c);
}


/* libc's static functions come from libc6-dbg's file, when installed */

static void
test_debug_file(void)
{
    char                        cmd[PATH_MAX + 128], out[4096], dbg[256];
    char                       *text;
    void                       *libc;
    size_t                      len, n;
    uint64_t                    addr, value;
    const map_t                *m;
    struct stat                 st;
    map_t                      *maps;
    ngx_http_malloc_arena_t    *arena;
    ngx_http_malloc_symbols_t  *syms;

    syms = ngx_http_malloc_symbols_create();
    arena = ngx_http_malloc_arena_create();
    text = slurp("/proc/self/maps", &len);
    libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);

    if (syms == NULL || arena == NULL || text == NULL || libc == NULL) {
        abort();
    }

    ngx_http_malloc_symbols_maps(syms, arena, text, len, &maps, &n);

    addr = (uint64_t) (uintptr_t) dlsym(libc, "malloc");
    m = map_of(maps, n, addr);

    if (m == NULL || m->build_id == NULL) {
        ok(0, "debug: libc mapping with a build ID");
        goto done;
    }

    snprintf(dbg, sizeof(dbg), "/usr/lib/debug/.build-id/%.2s/%s.debug",
             m->build_id, m->build_id + 2);

    if (stat(dbg, &st) != 0) {
        ok(1, "debug: skipped, libc6-dbg is not installed");
        goto done;
    }

    snprintf(cmd, sizeof(cmd), "nm %s 2>/dev/null | grep ' t _int_malloc$'",
             dbg);

    if (run(cmd, out, sizeof(out)) != 0
        || sscanf(out, "%" SCNx64, &value) != 1)
    {
        ok(1, "debug: skipped, no nm or no _int_malloc in %s", dbg);
        goto done;
    }

    is_str(name_at(syms, arena, maps, n, m->bias + value + 1, NULL),
           "_int_malloc", "debug: libc's static _int_malloc by name");

done:

    dlclose(libc);
    free(text);
    ngx_http_malloc_arena_destroy(arena);
    ngx_http_malloc_symbols_destroy(syms);
}


/*
 * An image laid out by hand: one loadable segment from offset 0, a build
 * ID note, .symtab with one symbol for each rule.
 */

static void
make_elf(image_t *img)
{
    size_t           off, sym_off, str_off, sh_off, note_off, i;
    Elf64_Ehdr      *eh;
    Elf64_Phdr      *ph;
    Elf64_Shdr      *sh;
    Elf64_Sym       *sym;
    Elf64_Nhdr      *nh;
    unsigned char   *p;

    static const struct {
        const char  *name;
        uint64_t     value;
        uint64_t     size;
        unsigned     bind;
        unsigned     type;
        unsigned     shndx;
    } syms[] = {
        { "outer",     0x1000, 0x100, STB_GLOBAL, STT_FUNC, 1 },
        { "inner",     0x1010, 0x10,  STB_LOCAL,  STT_FUNC, 1 },
        { "asm_entry", 0x1200, 0,     STB_GLOBAL, STT_FUNC, 1 },
        { "__x_local", 0x1300, 0x10,  STB_LOCAL,  STT_FUNC, 1 },
        { "x_weak",    0x1300, 0x10,  STB_WEAK,   STT_FUNC, 1 },
        { "__x",       0x1300, 0x20,  STB_GLOBAL, STT_FUNC, 1 },
        { "x",         0x1300, 0x10,  STB_GLOBAL, STT_FUNC, 1 },
        { "_x",        0x1300, 0x10,  STB_GLOBAL, STT_FUNC, 1 },
        { "ifn",       0x1400, 0x8,   STB_GLOBAL, STT_GNU_IFUNC, 1 },
        { "data",      0x1500, 0x100, STB_GLOBAL, STT_OBJECT, 1 },
        { "undef",     0x1600, 0x10,  STB_GLOBAL, STT_FUNC, SHN_UNDEF },
        { "abs",       0x1700, 0x10,  STB_GLOBAL, STT_FUNC, SHN_ABS },
        { "zero",      0,      0x10,  STB_GLOBAL, STT_FUNC, 1 },
        { "",          0x1800, 0x10,  STB_GLOBAL, STT_FUNC, 1 },
        { "last",      0x1900, 0x10,  STB_LOCAL,  STT_FUNC, 1 },
    };

    static const char  strs[] = "\0outer\0inner\0asm_entry\0__x_local\0"
                                "x_weak\0__x\0x\0_x\0ifn\0data\0undef\0abs\0"
                                "zero\0last";

    img->len = 8192;
    img->data = calloc(1, img->len);
    p = img->data;

    if (p == NULL) {
        abort();
    }

    eh = (Elf64_Ehdr *) p;
    memcpy(eh->e_ident, ELFMAG, SELFMAG);
    eh->e_ident[EI_CLASS] = ELFCLASS64;
    eh->e_ident[EI_DATA] = ELFDATA2LSB;
    eh->e_ident[EI_VERSION] = EV_CURRENT;
    eh->e_type = ET_DYN;
    eh->e_machine = EM_X86_64;
    eh->e_version = EV_CURRENT;
    eh->e_ehsize = sizeof(Elf64_Ehdr);
    eh->e_phoff = sizeof(Elf64_Ehdr);
    eh->e_phentsize = sizeof(Elf64_Phdr);
    eh->e_phnum = 2;
    eh->e_shentsize = sizeof(Elf64_Shdr);
    eh->e_shnum = 4;

    off = sizeof(Elf64_Ehdr) + 2 * sizeof(Elf64_Phdr);

    /* the build ID note */

    note_off = off;
    nh = (Elf64_Nhdr *) (p + off);
    nh->n_namesz = 4;
    nh->n_descsz = 20;
    nh->n_type = NT_GNU_BUILD_ID;
    memcpy(p + off + sizeof(*nh), "GNU", 4);
    memcpy(p + off + sizeof(*nh) + 4,
           "\x01\x23\x45\x67\x89\xab\xcd\xef\x01\x23"
           "\x45\x67\x89\xab\xcd\xef\x01\x23\x45\x67", 20);
    off += sizeof(*nh) + 4 + 20;

    ph = (Elf64_Phdr *) (p + eh->e_phoff);
    ph[0].p_type = PT_LOAD;
    ph[0].p_flags = PF_R | PF_X;
    ph[0].p_offset = 0;
    ph[0].p_vaddr = 0;
    ph[0].p_filesz = img->len;
    ph[0].p_memsz = img->len;
    ph[0].p_align = 0x1000;
    ph[1].p_type = PT_NOTE;
    ph[1].p_flags = PF_R;
    ph[1].p_offset = note_off;
    ph[1].p_vaddr = note_off;
    ph[1].p_filesz = off - note_off;
    ph[1].p_align = 4;

    /* strings, then symbols */

    str_off = off;
    memcpy(p + str_off, strs, sizeof(strs));
    off = (str_off + sizeof(strs) + 7) & ~(size_t) 7;

    sym_off = off;
    sym = (Elf64_Sym *) (p + sym_off) + 1;

    for (i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
        sym[i].st_name = (syms[i].name[0] == '\0')
                         ? 0
                         : (uint32_t) (memmem(strs, sizeof(strs),
                                              syms[i].name,
                                              strlen(syms[i].name) + 1)
                                       - (void *) strs);
        sym[i].st_value = syms[i].value;
        sym[i].st_size = syms[i].size;
        sym[i].st_info = ELF64_ST_INFO(syms[i].bind, syms[i].type);
        sym[i].st_shndx = syms[i].shndx;
    }

    off += (i + 1) * sizeof(Elf64_Sym);

    /* null, .text, .symtab, .strtab */

    sh_off = (off + 7) & ~(size_t) 7;
    eh->e_shoff = sh_off;
    sh = (Elf64_Shdr *) (p + sh_off);

    sh[1].sh_type = SHT_PROGBITS;
    sh[1].sh_flags = SHF_ALLOC | SHF_EXECINSTR;
    sh[1].sh_addr = 0x1000;
    sh[1].sh_offset = 0x1000;
    sh[1].sh_size = 0x1000;

    sh[2].sh_type = SHT_SYMTAB;
    sh[2].sh_offset = sym_off;
    sh[2].sh_size = (i + 1) * sizeof(Elf64_Sym);
    sh[2].sh_link = 3;
    sh[2].sh_entsize = sizeof(Elf64_Sym);

    sh[3].sh_type = SHT_STRTAB;
    sh[3].sh_offset = str_off;
    sh[3].sh_size = sizeof(strs);

    if (sh_off + 4 * sizeof(Elf64_Shdr) > 0x1000) {
        abort();
    }
}


/* one rule per symbol of make_elf() */

static void
test_rules(void)
{
    int                         map;
    char                        want[64];
    size_t                      i;
    map_t                       m;
    image_t                     elf;
    ngx_http_malloc_arena_t    *arena;
    ngx_http_malloc_symbols_t  *syms;

    static const struct {
        uint64_t     vaddr;
        const char  *name;
        const char  *why;
    } cases[] = {
        { 0x1000, "outer",     "at a function's start" },
        { 0x1050, "outer",     "inside, past a nested function" },
        { 0x10ff, "outer",     "at its last byte" },
        { 0x1100, NULL,        "one past its end" },
        { 0x1010, "inner",     "a nested function at its start" },
        { 0x101f, "inner",     "a nested function's last byte" },
        { 0x1020, "outer",     "past the nested function" },
        { 0x1200, "asm_entry", "a zero-size symbol at its address" },
        { 0x1201, NULL,        "a zero-size symbol covers nothing more" },
        { 0x1300, "x",         "aliases: global, fewest underscores" },
        { 0x131f, "x",         "aliases: the largest size of the set" },
        { 0x1320, NULL,        "aliases: past the largest" },
        { 0x1404, "ifn",       "an IFUNC resolver" },
        { 0x1510, NULL,        "an object is not a function" },
        { 0x1604, NULL,        "an undefined symbol is skipped" },
        { 0x1704, NULL,        "an absolute symbol is skipped" },
        { 0x0004, NULL,        "a symbol at 0 is skipped" },
        { 0x1804, NULL,        "a nameless symbol is skipped" },
        { 0x1904, "last",      "a local function" },
        { 0x1fff, NULL,        "end of the mapping" },
    };

    make_elf(&elf);

    syms = ngx_http_malloc_symbols_create();
    arena = ngx_http_malloc_arena_create();

    if (syms == NULL || arena == NULL) {
        abort();
    }

    memset(&m, 0, sizeof(m));
    m.start = 0x500000;
    m.limit = 0x500000 + elf.len;
    m.offset = 0;
    m.path = "/opt/lib/librules.so";

    is_int(ngx_http_malloc_symbols_load_mem(syms, arena, elf.data, elf.len,
                                            &m),
           0, "rules: image loaded");
    is_int(m.file, 0, "rules: cache entry 0");
    is_int((long) m.bias, 0x500000, "rules: bias from PT_LOAD");
    is_str(m.build_id, "0123456789abcdef0123456789abcdef01234567",
           "rules: build ID from PT_NOTE, lowercase");
    is_int(ngx_http_malloc_symbols_count(syms, 0), 6,
           "rules: 6 function addresses kept");

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        snprintf(want, sizeof(want), "librules.so+0x%" PRIx64,
                 cases[i].vaddr);

        is_str(ngx_http_malloc_symbols_lookup(syms, arena, &m, 1,
                                              0x500000 + cases[i].vaddr,
                                              &map),
               cases[i].name ? cases[i].name : want,
               "rules: 0x%" PRIx64 ", %s", cases[i].vaddr, cases[i].why);
    }

    /* the same image mapped at a file offset of its segment */

    m.start = 0x600000;
    m.offset = 0x1000;
    m.limit = 0x601000;
    m.path = "/opt/lib/librules2.so";

    ngx_http_malloc_symbols_load_mem(syms, arena, elf.data, elf.len, &m);
    is_int((long) m.bias, 0x600000 - 0x1000,
           "rules: bias of a mapping at offset 0x1000");
    is_str(ngx_http_malloc_symbols_lookup(syms, arena, &m, 1, 0x600050,
                                          &map),
           "outer", "rules: named through that mapping");

    /* no section headers: the headers still give bias and build ID */

    ((Elf64_Ehdr *) elf.data)->e_shoff = 0;
    m.path = "/opt/lib/noshdr.so";
    ngx_http_malloc_symbols_load_mem(syms, arena, elf.data, elf.len, &m);
    ok(m.build_id != NULL && m.bias == 0x600000 - 0x1000,
       "rules: no section headers, still bias and build ID");
    is_int(ngx_http_malloc_symbols_count(syms, m.file), 0,
           "rules: no section headers, no symbols");

    is_int(ngx_http_malloc_symbols_verify(syms), 0, "rules: cache is sound");

    free(elf.data);
    ngx_http_malloc_arena_destroy(arena);
    ngx_http_malloc_symbols_destroy(syms);
}


int
main(void)
{
    unit_symbol_exported();
    unit_symbol_keep();

    test_self();
    test_cache_stable();
    test_lines();
    test_deleted();
    test_nginx();
    test_stripped();
    test_garbage();
    test_mutations();
    test_bounds();
    test_reload();
    test_unreachable();
    test_truncated();
    test_debug_file();
    test_rules();

    return done_testing();
}
