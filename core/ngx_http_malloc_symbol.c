
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * The in-process symbolizer.
 *
 * Why an ELF reader of our own rather than libelf or libdw (elfutils):
 * both allocate with malloc, and inside a worker that memory would show up
 * in the very profile being symbolized and stay in the worker's heap after
 * the response.  libdw also brings DWARF, inlining and debuginfod, where a
 * profile needs one symbol table per file.  What we read -- the program
 * headers for the load bias, one note for the build ID, one symbol table
 * and its strings -- takes a few hundred lines over <elf.h>, with every
 * offset and size checked against the file size.
 *
 * A file is read with pread, part by part into anonymous memory, and that
 * copy is dropped at once; the function symbols kept are copied into the
 * cache's arena, one per address, sorted.  A lookup names an address only
 * when a symbol's size covers it: jeprof credits a static function of a
 * stripped nginx to the exported function below it, we say
 * "nginx+0x<vaddr>" instead.
 *
 * Names are demangled by libiberty, linked in statically (Debian's
 * libiberty-dev): its callback demanglers write into a buffer of the
 * caller's and allocate nothing (but a Rust Punycode name's buffer, freed
 * at once), and the name is c++filt's (and so jeprof's) whatever
 * libraries the process loaded.
 *
 * Owns: the symbol cache's layout.  Calls: arena, libiberty's
 * demanglers.
 */


#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libiberty/demangle.h>

#include "ngx_http_malloc_symbol.h"
#include "ngx_http_malloc_symbol_fuzz.h"


/* a worker maps a few dozen files; after that addresses go unnamed */
#define NGX_HTTP_MALLOC_SYMBOL_FILES  64

/* loadable segments kept per file: real files have four or five */
#define NGX_HTTP_MALLOC_SYMBOL_LOADS  8

/* SHA-1 build IDs are 20 bytes; room for longer hashes */
#define NGX_HTTP_MALLOC_BUILD_ID_MAX  64

/* how many symbols a lookup looks back for one that encloses others */
#define NGX_HTTP_MALLOC_SYMBOL_NEST   8

#define NGX_HTTP_MALLOC_PATH_MAX      4096
#define NGX_HTTP_MALLOC_ELF_PAGE      4096
#define NGX_HTTP_MALLOC_DEBUG_DIR     "/usr/lib/debug/.build-id/"
#define NGX_HTTP_MALLOC_DELETED       " (deleted)"

/* c++filt's options: parameters, const and volatile, std:: spelled out */
#define NGX_HTTP_MALLOC_CXX_OPTIONS   (DMGL_PARAMS | DMGL_ANSI | DMGL_VERBOSE)

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define NGX_HTTP_MALLOC_ELF_DATA      ELFDATA2LSB
#else
#define NGX_HTTP_MALLOC_ELF_DATA      ELFDATA2MSB
#endif


typedef struct {
    uint64_t                    start;       /* ELF virtual address */
    uint32_t                    size;
    uint32_t                    name;        /* offset in file->names */
} ngx_http_malloc_sym_t;


typedef struct {
    uint64_t                    offset;
    uint64_t                    filesz;
    uint64_t                    vaddr;
} ngx_http_malloc_load_t;


typedef struct {
    const char                 *path;
    ngx_http_malloc_sym_t      *syms;
    const char                 *names;
    size_t                      nsyms;
    size_t                      names_len;
    uint64_t                    size;        /* the key: path, size, mtime */
    struct timespec             mtime;
    uint64_t                    inode;       /* the key where the process
                                                may not stat the path */
    ngx_http_malloc_load_t      loads[NGX_HTTP_MALLOC_SYMBOL_LOADS];
    unsigned                    nloads;
    char                        build_id[2 * NGX_HTTP_MALLOC_BUILD_ID_MAX
                                         + 1];
} ngx_http_malloc_file_t;


struct ngx_http_malloc_symbols_s {
    ngx_http_malloc_arena_t    *arena;
    uint64_t                    page;
    int                         nfiles;
    ngx_http_malloc_file_t      files[NGX_HTTP_MALLOC_SYMBOL_FILES];
};


/*
 * An ELF image: a file, read into memory of our own part by part as the
 * reader asks for it, or a buffer of the fuzzer.  A file mapped instead
 * would kill the worker with SIGBUS if it were truncated while being read
 * (a library rewritten in place by a careless upgrade); read, it is only
 * short, and the reader gives up on it.
 */

typedef struct {
    const unsigned char        *data;
    size_t                      len;
    Elf64_Ehdr                  ehdr;
    unsigned                    shnum;
    unsigned                    mapped;      /* data and have are ours */
    int                         fd;          /* the file, when mapped */
    unsigned char              *have;        /* a bit per page read */
} ngx_http_malloc_elf_t;


/* a symbol while its table is sorted: lower rank is the preferred name */

typedef struct {
    uint64_t                    start;
    uint32_t                    size;
    uint32_t                    name;        /* st_name */
    uint32_t                    rank;
} ngx_http_malloc_cand_t;


/* what a demangler wrote so far, into the caller's buffer */

typedef struct {
    char                       *buf;
    size_t                      size;
    size_t                      len;
    unsigned                    rust;        /* the Rust demangler runs */
    unsigned                    refused;     /* a byte that is not
                                                printable ASCII */
    jmp_buf                     out;         /* out of the demangler */
} ngx_http_malloc_demangled_t;


/* one maps line */

typedef struct {
    uint64_t                    start;
    uint64_t                    limit;
    uint64_t                    offset;
    uint64_t                    inode;
    const char                 *path;
    size_t                      path_len;
    unsigned                    exec;
    unsigned                    deleted;
} ngx_http_malloc_line_t;


static int ngx_http_malloc_symbols_line(const char *p, const char *end,
    ngx_http_malloc_line_t *line);
static const char *ngx_http_malloc_symbols_field(const char *p,
    const char *end, uint64_t *value, char sep);
static const char *ngx_http_malloc_symbols_inode(const char *p,
    const char *end, uint64_t *inode);
static int ngx_http_malloc_symbols_path(const char *p, const char *end,
    ngx_http_malloc_line_t *line);
static const char *ngx_http_malloc_symbols_hex(const char *p,
    const char *end, uint64_t *value);
static int ngx_http_malloc_symbols_insert(ngx_http_malloc_map_t *maps,
    size_t n, uint64_t start, uint64_t limit, size_t *pos);
static void ngx_http_malloc_symbols_resolve(ngx_http_malloc_symbols_t *syms,
    ngx_http_malloc_arena_t *arena, ngx_http_malloc_map_t *map,
    uint64_t inode, unsigned deleted);
static int ngx_http_malloc_symbols_add(ngx_http_malloc_symbols_t *syms,
    ngx_http_malloc_arena_t *arena, ngx_http_malloc_map_t *map,
    ngx_http_malloc_elf_t *elf, uint64_t size, struct timespec *mtime,
    uint64_t inode);
static int ngx_http_malloc_symbols_known(ngx_http_malloc_symbols_t *syms,
    ngx_http_malloc_map_t *map, uint64_t inode);
static void ngx_http_malloc_symbols_use(ngx_http_malloc_symbols_t *syms,
    ngx_http_malloc_map_t *map, int i);
static void ngx_http_malloc_symbols_unmapped(ngx_http_malloc_map_t *map);
static uint64_t ngx_http_malloc_symbols_bias(ngx_http_malloc_symbols_t *syms,
    ngx_http_malloc_file_t *file, uint64_t start, uint64_t offset);
static void ngx_http_malloc_symbols_table(ngx_http_malloc_symbols_t *syms,
    ngx_http_malloc_file_t *file, ngx_http_malloc_elf_t *elf);
static long ngx_http_malloc_symbols_debug(ngx_http_malloc_symbols_t *syms,
    ngx_http_malloc_file_t *file);
static long ngx_http_malloc_symbols_read(ngx_http_malloc_symbols_t *syms,
    ngx_http_malloc_file_t *file, ngx_http_malloc_elf_t *elf,
    uint32_t type);
static int ngx_http_malloc_symbols_section(ngx_http_malloc_elf_t *elf,
    uint32_t type, Elf64_Shdr *symtab, Elf64_Shdr *strtab);
static size_t ngx_http_malloc_symbols_unique(ngx_http_malloc_cand_t *cands,
    size_t n, const char *str, size_t *total);
static void ngx_http_malloc_symbols_copy(ngx_http_malloc_file_t *file,
    const ngx_http_malloc_cand_t *cands, size_t kept, const char *str,
    ngx_http_malloc_sym_t *out, char *names);
static size_t ngx_http_malloc_symbols_collect(ngx_http_malloc_elf_t *elf,
    Elf64_Shdr *symtab, const char *str, uint64_t str_len,
    ngx_http_malloc_cand_t *cands);
static uint32_t ngx_http_malloc_symbols_rank(const Elf64_Sym *sym,
    const char *name, size_t len);
static int ngx_http_malloc_cand_less(const ngx_http_malloc_cand_t *a,
    const ngx_http_malloc_cand_t *b);
static void ngx_http_malloc_cand_sift(ngx_http_malloc_cand_t *c, size_t i,
    size_t n);
static void ngx_http_malloc_cand_sort(ngx_http_malloc_cand_t *c, size_t n);
static const ngx_http_malloc_sym_t *ngx_http_malloc_symbols_find(
    const ngx_http_malloc_file_t *file, uint64_t vaddr);
static const char *ngx_http_malloc_symbols_anon(
    ngx_http_malloc_arena_t *arena, const char *path, uint64_t vaddr);
static int ngx_http_malloc_elf_map(ngx_http_malloc_elf_t *elf,
    const char *path, struct stat *st);
static void ngx_http_malloc_elf_unmap(ngx_http_malloc_elf_t *elf);
static int ngx_http_malloc_elf_fetch(ngx_http_malloc_elf_t *elf,
    uint64_t off, uint64_t size);
static int ngx_http_malloc_elf_init(ngx_http_malloc_elf_t *elf);
static int ngx_http_malloc_elf_read(ngx_http_malloc_elf_t *elf,
    uint64_t off, size_t size, void *dst);
static int ngx_http_malloc_elf_phdr(ngx_http_malloc_elf_t *elf, unsigned i,
    Elf64_Phdr *ph);
static int ngx_http_malloc_elf_shdr(ngx_http_malloc_elf_t *elf, unsigned i,
    Elf64_Shdr *sh);
static int ngx_http_malloc_elf_within(ngx_http_malloc_elf_t *elf,
    uint64_t off, uint64_t size);
static void ngx_http_malloc_elf_headers(ngx_http_malloc_elf_t *elf,
    ngx_http_malloc_file_t *file);
static void ngx_http_malloc_elf_build_id(ngx_http_malloc_elf_t *elf,
    char *out);
static int ngx_http_malloc_elf_notes(ngx_http_malloc_elf_t *elf,
    uint64_t off, uint64_t size, uint64_t align, char *out);
static void ngx_http_malloc_demangled_put(const char *s, size_t n,
    void *data);


ngx_http_malloc_symbols_t *
ngx_http_malloc_symbols_create(void)
{
    long                        page;
    ngx_http_malloc_arena_t    *arena;
    ngx_http_malloc_symbols_t  *syms;

    arena = ngx_http_malloc_arena_create();
    if (arena == NULL) {
        return NULL;
    }

    syms = ngx_http_malloc_arena_alloc(arena, sizeof(*syms));
    if (syms == NULL) {
        ngx_http_malloc_arena_destroy(arena);
        return NULL;
    }

    page = sysconf(_SC_PAGESIZE);

    syms->arena = arena;
    syms->page = (page > 0) ? (uint64_t) page : 4096;

    return syms;
}


void
ngx_http_malloc_symbols_destroy(ngx_http_malloc_symbols_t *syms)
{
    if (syms != NULL) {
        /* syms itself lives in the arena */
        ngx_http_malloc_arena_destroy(syms->arena);
    }
}


size_t
ngx_http_malloc_symbols_mapped(ngx_http_malloc_symbols_t *syms)
{
    return ngx_http_malloc_arena_mapped(syms->arena);
}


int
ngx_http_malloc_symbols_maps(ngx_http_malloc_symbols_t *syms,
    ngx_http_malloc_arena_t *arena, const char *text, size_t len,
    ngx_http_malloc_map_t **maps, size_t *nmaps)
{
    size_t                   n, max, pos;
    const char              *p, *end, *eol;
    ngx_http_malloc_map_t   *m, map;
    ngx_http_malloc_line_t   line;

    max = 1;

    for (p = text; p < text + len; p++) {
        if (*p == '\n') {
            max++;
        }
    }

    m = ngx_http_malloc_arena_alloc(arena, max * sizeof(*m));
    if (m == NULL) {
        return -1;
    }

    n = 0;
    end = text + len;

    for (p = text; p < end; p = eol + 1) {
        eol = memchr(p, '\n', end - p);
        if (eol == NULL) {
            eol = end;
        }

        if (ngx_http_malloc_symbols_line(p, eol, &line) != 0
            || !line.exec || line.path == NULL)
        {
            continue;
        }

        /* the kernel lists mappings sorted and disjoint; so must we */

        if (ngx_http_malloc_symbols_insert(m, n, line.start, line.limit, &pos)
            != 0)
        {
            continue;
        }

        map.start = line.start;
        map.limit = line.limit;
        map.offset = line.offset;
        map.path = ngx_http_malloc_arena_strndup(arena, line.path,
                                                 line.path_len);
        if (map.path == NULL) {
            return -1;
        }

        ngx_http_malloc_symbols_resolve(syms, arena, &map, line.inode,
                                        line.deleted);

        memmove(&m[pos + 1], &m[pos], (n - pos) * sizeof(*m));
        m[pos] = map;
        n++;
    }

    *maps = m;
    *nmaps = n;

    return 0;
}


/*
 * "start-limit perms offset major:minor inode   path": 0 for a well-formed
 * line, whatever the mapping, -1 otherwise.
 */

static int
ngx_http_malloc_symbols_line(const char *p, const char *end,
    ngx_http_malloc_line_t *line)
{
    uint64_t     dev;
    const char  *perms;

    p = ngx_http_malloc_symbols_field(p, end, &line->start, '-');
    if (p == NULL) {
        return -1;
    }

    p = ngx_http_malloc_symbols_field(p, end, &line->limit, ' ');
    if (p == NULL || end - p < 5) {
        return -1;
    }

    if (line->start >= line->limit) {
        return -1;
    }

    perms = p;
    p += 4;

    if ((perms[0] != 'r' && perms[0] != '-')
        || (perms[1] != 'w' && perms[1] != '-')
        || (perms[2] != 'x' && perms[2] != '-')
        || (perms[3] != 'p' && perms[3] != 's')
        || *p++ != ' ')
    {
        return -1;
    }

    line->exec = (perms[2] == 'x');

    p = ngx_http_malloc_symbols_field(p, end, &line->offset, ' ');
    if (p == NULL) {
        return -1;
    }

    p = ngx_http_malloc_symbols_field(p, end, &dev, ':');
    if (p == NULL) {
        return -1;
    }

    p = ngx_http_malloc_symbols_field(p, end, &dev, ' ');
    if (p == NULL) {
        return -1;
    }

    p = ngx_http_malloc_symbols_inode(p, end, &line->inode);
    if (p == NULL) {
        return -1;
    }

    /* the kernel pads before the path; an anonymous mapping has none */

    if (p < end && *p != ' ') {
        return -1;
    }

    while (p < end && *p == ' ') {
        p++;
    }

    return ngx_http_malloc_symbols_path(p, end, line);
}


/* a hex number of the line and the byte "sep" after it: the next field */

static const char *
ngx_http_malloc_symbols_field(const char *p, const char *end, uint64_t *value,
    char sep)
{
    p = ngx_http_malloc_symbols_hex(p, end, value);
    if (p == NULL || p == end || *p != sep) {
        return NULL;
    }

    return p + 1;
}


/* the inode, a decimal that fits in 64 bits: what follows it, or NULL */

static const char *
ngx_http_malloc_symbols_inode(const char *p, const char *end,
    uint64_t *inode)
{
    uint64_t  digit;

    if (p == end || *p < '0' || *p > '9') {
        return NULL;
    }

    *inode = 0;

    while (p < end && *p >= '0' && *p <= '9') {
        digit = *p++ - '0';

        if (*inode > (UINT64_MAX - digit) / 10) {
            return NULL;
        }

        *inode = *inode * 10 + digit;
    }

    return p;
}


/*
 * From p to the end of the line: the file's path, without " (deleted)",
 * or NULL for a mapping of none ("", "[heap]"); -1 for a path that no
 * file can have
 */

static int
ngx_http_malloc_symbols_path(const char *p, const char *end,
    ngx_http_malloc_line_t *line)
{
    line->path = NULL;
    line->path_len = end - p;
    line->deleted = 0;

    if (line->path_len == 0 || *p != '/') {
        return 0;
    }

    if (line->path_len > sizeof(NGX_HTTP_MALLOC_DELETED) - 1
        && memcmp(end - (sizeof(NGX_HTTP_MALLOC_DELETED) - 1),
                  NGX_HTTP_MALLOC_DELETED,
                  sizeof(NGX_HTTP_MALLOC_DELETED) - 1) == 0)
    {
        line->path_len -= sizeof(NGX_HTTP_MALLOC_DELETED) - 1;
        line->deleted = 1;
    }

    if (line->path_len >= NGX_HTTP_MALLOC_PATH_MAX
        || memchr(p, '\0', line->path_len) != NULL)
    {
        return -1;
    }

    line->path = p;

    return 0;
}


/* 1 to 16 hex digits */

static const char *
ngx_http_malloc_symbols_hex(const char *p, const char *end, uint64_t *value)
{
    size_t    n;
    uint64_t  v;

    v = 0;

    for (n = 0; p < end; n++, p++) {
        if (*p >= '0' && *p <= '9') {
            v = (v << 4) | (uint64_t) (*p - '0');

        } else if (*p >= 'a' && *p <= 'f') {
            v = (v << 4) | (uint64_t) (*p - 'a' + 10);

        } else if (*p >= 'A' && *p <= 'F') {
            v = (v << 4) | (uint64_t) (*p - 'A' + 10);

        } else {
            break;
        }

        if (n == 16) {
            return NULL;
        }
    }

    if (n == 0) {
        return NULL;
    }

    *value = v;

    return p;
}


/* where [start, limit) goes in the sorted maps; -1 if it overlaps one */

static int
ngx_http_malloc_symbols_insert(ngx_http_malloc_map_t *maps, size_t n,
    uint64_t start, uint64_t limit, size_t *pos)
{
    size_t  i;

    /* maps text comes sorted: look from the end */

    for (i = n; i > 0 && maps[i - 1].start > start; i--) {
        /* void */
    }

    if (i > 0 && maps[i - 1].limit > start) {
        return -1;
    }

    if (i < n && limit > maps[i].start) {
        return -1;
    }

    *pos = i;

    return 0;
}


/*
 * Sets map->file, bias and build_id.  A mapping of a deleted file is read
 * through /proc/self/map_files, and only when that is the very inode of
 * the maps line: the file now at the path is another build (a package
 * upgrade under a running nginx), and its names would be wrong.
 */

static void
ngx_http_malloc_symbols_resolve(ngx_http_malloc_symbols_t *syms,
    ngx_http_malloc_arena_t *arena, ngx_http_malloc_map_t *map,
    uint64_t inode, unsigned deleted)
{
    int                      i;
    char                     self[64];
    uint64_t                 size;
    const char              *path;
    struct stat              st;
    ngx_http_malloc_elf_t    elf;
    ngx_http_malloc_file_t  *file;

    path = map->path;

    if (deleted) {
        snprintf(self, sizeof(self), "/proc/self/map_files/%" PRIx64 "-%"
                 PRIx64, map->start, map->limit);
        path = self;
    }

    /*
     * stat() first: opening a device or a FIFO named in the text may act.
     * A worker may not be allowed to reach a file that the master, as
     * root, loaded and read before it forked: the master's entry, by
     * path and inode, still names its code.
     */

    if (stat(path, &st) == -1) {
        if (deleted || ngx_http_malloc_symbols_known(syms, map, inode) != 0) {
            ngx_http_malloc_symbols_unmapped(map);
        }

        return;
    }

    if (!S_ISREG(st.st_mode) || (deleted && (uint64_t) st.st_ino != inode)) {
        ngx_http_malloc_symbols_unmapped(map);
        return;
    }

    size = (uint64_t) st.st_size;

    for (i = 0; i < syms->nfiles; i++) {
        file = &syms->files[i];

        if (file->size == size
            && file->mtime.tv_sec == st.st_mtim.tv_sec
            && file->mtime.tv_nsec == st.st_mtim.tv_nsec
            && strcmp(file->path, map->path) == 0)
        {
            ngx_http_malloc_symbols_use(syms, map, i);
            return;
        }
    }

    if (ngx_http_malloc_elf_map(&elf, path, &st) != 0) {
        ngx_http_malloc_symbols_unmapped(map);
        return;
    }

    (void) ngx_http_malloc_symbols_add(syms, arena, map, &elf,
                                       (uint64_t) st.st_size, &st.st_mtim,
                                       (uint64_t) st.st_ino);

    ngx_http_malloc_elf_unmap(&elf);
}


/* the newest entry of the path with that inode; -1 if none */

static int
ngx_http_malloc_symbols_known(ngx_http_malloc_symbols_t *syms,
    ngx_http_malloc_map_t *map, uint64_t inode)
{
    int  i;

    if (inode == 0) {
        return -1;
    }

    for (i = syms->nfiles - 1; i >= 0; i--) {
        if (syms->files[i].inode == inode
            && strcmp(syms->files[i].path, map->path) == 0)
        {
            ngx_http_malloc_symbols_use(syms, map, i);
            return 0;
        }
    }

    return -1;
}


static void
ngx_http_malloc_symbols_use(ngx_http_malloc_symbols_t *syms,
    ngx_http_malloc_map_t *map, int i)
{
    ngx_http_malloc_file_t  *file;

    file = &syms->files[i];

    map->file = i;
    map->bias = ngx_http_malloc_symbols_bias(syms, file, map->start,
                                             map->offset);
    map->build_id = file->build_id[0] ? file->build_id : NULL;
}


/*
 * Reads an image into a new cache entry; with the cache full, only its
 * headers, for the bias and the build ID of this mapping.
 */

static int
ngx_http_malloc_symbols_add(ngx_http_malloc_symbols_t *syms,
    ngx_http_malloc_arena_t *arena, ngx_http_malloc_map_t *map,
    ngx_http_malloc_elf_t *elf, uint64_t size, struct timespec *mtime,
    uint64_t inode)
{
    size_t                   len;
    ngx_http_malloc_file_t  *file, tmp;

    file = NULL;

    if (syms->nfiles < NGX_HTTP_MALLOC_SYMBOL_FILES) {
        file = &syms->files[syms->nfiles];
        memset(file, 0, sizeof(*file));

        file->path = ngx_http_malloc_arena_strndup(syms->arena, map->path,
                                                   strlen(map->path));
        if (file->path == NULL) {
            file = NULL;
        }
    }

    if (file == NULL) {
        memset(&tmp, 0, sizeof(tmp));
        file = &tmp;
    }

    if (ngx_http_malloc_elf_init(elf) == 0) {
        ngx_http_malloc_elf_headers(elf, file);

        if (file != &tmp) {
            ngx_http_malloc_symbols_table(syms, file, elf);
        }
    }

    map->bias = ngx_http_malloc_symbols_bias(syms, file, map->start,
                                             map->offset);
    map->build_id = NULL;

    if (file == &tmp) {
        map->file = -1;

        /* the entry is on the stack: the caller's arena keeps the ID */

        len = strlen(tmp.build_id);

        if (len > 0) {
            map->build_id = ngx_http_malloc_arena_strndup(arena, tmp.build_id,
                                                          len);
        }

        return -1;
    }

    /*
     * A file changed on disk gets an entry of its own: the entry of the
     * old version stays for maps parsed before, and for mappings of it
     * that processes still hold.
     */

    file->size = size;
    file->mtime = *mtime;
    file->inode = inode;

    map->file = syms->nfiles++;

    if (file->build_id[0] != '\0') {
        map->build_id = file->build_id;
    }

    return 0;
}


/* an unreadable file: all we can do is take vaddr == file offset */

static void
ngx_http_malloc_symbols_unmapped(ngx_http_malloc_map_t *map)
{
    map->file = -1;
    map->bias = map->start - map->offset;
    map->build_id = NULL;
}


/*
 * The segment that the mapping's file offset falls in gives its virtual
 * address; the kernel maps from the page that holds p_offset.  Unsigned
 * arithmetic wraps as the bias may be "negative" for ET_EXEC files.
 */

static uint64_t
ngx_http_malloc_symbols_bias(ngx_http_malloc_symbols_t *syms,
    ngx_http_malloc_file_t *file, uint64_t start, uint64_t offset)
{
    unsigned                 i;
    uint64_t                 lo;
    ngx_http_malloc_load_t  *ld;

    for (i = 0; i < file->nloads; i++) {
        ld = &file->loads[i];
        lo = ld->offset & ~(syms->page - 1);

        if (offset >= lo && offset < ld->offset + ld->filesz) {
            return start - (ld->vaddr + (offset - ld->offset));
        }
    }

    return start - offset;
}


/*
 * The first table with function symbols: the debug file of the build ID,
 * then .symtab, then .dynsym.  A malformed table of the file itself gives
 * no symbols at all rather than a guess from the other one.
 */

static void
ngx_http_malloc_symbols_table(ngx_http_malloc_symbols_t *syms,
    ngx_http_malloc_file_t *file, ngx_http_malloc_elf_t *elf)
{
    long  n;

    if (file->build_id[0] != '\0') {
        n = ngx_http_malloc_symbols_debug(syms, file);

        if (n > 0) {
            return;
        }
    }

    n = ngx_http_malloc_symbols_read(syms, file, elf, SHT_SYMTAB);

    if (n == 0) {
        (void) ngx_http_malloc_symbols_read(syms, file, elf, SHT_DYNSYM);
    }
}


static long
ngx_http_malloc_symbols_debug(ngx_http_malloc_symbols_t *syms,
    ngx_http_malloc_file_t *file)
{
    long                    n;
    char                    path[sizeof(NGX_HTTP_MALLOC_DEBUG_DIR)
                                 + 2 * NGX_HTTP_MALLOC_BUILD_ID_MAX + 16];
    char                    id[2 * NGX_HTTP_MALLOC_BUILD_ID_MAX + 1];
    struct stat             st;
    ngx_http_malloc_elf_t   elf;

    /* "ab/cdef....debug": at least one byte after the directory's */

    if (strlen(file->build_id) < 4) {
        return 0;
    }

    snprintf(path, sizeof(path), NGX_HTTP_MALLOC_DEBUG_DIR "%.2s/%s.debug",
             file->build_id, file->build_id + 2);

    if (stat(path, &st) == -1 || !S_ISREG(st.st_mode)) {
        return 0;
    }

    if (ngx_http_malloc_elf_map(&elf, path, &st) != 0) {
        return 0;
    }

    n = 0;

    if (ngx_http_malloc_elf_init(&elf) == 0) {
        ngx_http_malloc_elf_build_id(&elf, id);

        /* a debug file left behind by another build must not name ours */

        if (strcmp(id, file->build_id) == 0) {
            n = ngx_http_malloc_symbols_read(syms, file, &elf, SHT_SYMTAB);
        }
    }

    ngx_http_malloc_elf_unmap(&elf);

    return n;
}


/*
 * Copies the function symbols of the first section of "type" into the
 * file's entry.  The number kept, 0 when there is no such table, or -1
 * when the table is malformed or memory ran out.
 */

static long
ngx_http_malloc_symbols_read(ngx_http_malloc_symbols_t *syms,
    ngx_http_malloc_file_t *file, ngx_http_malloc_elf_t *elf, uint32_t type)
{
    int                      rc;
    char                    *names;
    size_t                   n, kept, total, room;
    uint64_t                 count;
    Elf64_Shdr               symtab, strtab;
    const char              *str;
    ngx_http_malloc_sym_t   *out;
    ngx_http_malloc_cand_t  *cands;

    rc = ngx_http_malloc_symbols_section(elf, type, &symtab, &strtab);
    if (rc != 1) {
        return rc;
    }

    count = symtab.sh_size / sizeof(Elf64_Sym);

    if (count < 2) {
        return 0;
    }

    /* a scratch table, given back at once; count is bounded by the file */

    room = count * sizeof(ngx_http_malloc_cand_t);

    cands = mmap(NULL, room, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (cands == MAP_FAILED) {
        return -1;
    }

    str = (const char *) elf->data + strtab.sh_offset;

    n = ngx_http_malloc_symbols_collect(elf, &symtab, str, strtab.sh_size,
                                        cands);

    ngx_http_malloc_cand_sort(cands, n);

    kept = ngx_http_malloc_symbols_unique(cands, n, str, &total);

    if (kept == 0 || total > UINT32_MAX) {
        munmap(cands, room);
        return (kept == 0) ? 0 : -1;
    }

    out = ngx_http_malloc_arena_alloc(syms->arena,
                                      kept * sizeof(ngx_http_malloc_sym_t));
    names = ngx_http_malloc_arena_alloc(syms->arena, total);

    if (out == NULL || names == NULL) {
        munmap(cands, room);
        return -1;
    }

    ngx_http_malloc_symbols_copy(file, cands, kept, str, out, names);

    munmap(cands, room);

    return (long) kept;
}


/*
 * The first section of "type" and the string table it links to: 1, or 0
 * when there is no such section, or -1 when either is malformed
 */

static int
ngx_http_malloc_symbols_section(ngx_http_malloc_elf_t *elf, uint32_t type,
    Elf64_Shdr *symtab, Elf64_Shdr *strtab)
{
    unsigned  s;

    for (s = 1; s < elf->shnum; s++) {
        if (ngx_http_malloc_elf_shdr(elf, s, symtab) != 0) {
            return -1;
        }

        if (symtab->sh_type == type) {
            break;
        }
    }

    if (s >= elf->shnum) {
        return 0;
    }

    if (symtab->sh_entsize != sizeof(Elf64_Sym)
        || (symtab->sh_flags & SHF_COMPRESSED)
        || ngx_http_malloc_elf_within(elf, symtab->sh_offset, symtab->sh_size)
           != 0
        || symtab->sh_link == 0 || symtab->sh_link >= elf->shnum
        || ngx_http_malloc_elf_shdr(elf, symtab->sh_link, strtab) != 0
        || strtab->sh_type != SHT_STRTAB
        || (strtab->sh_flags & SHF_COMPRESSED)
        || ngx_http_malloc_elf_within(elf, strtab->sh_offset, strtab->sh_size)
           != 0)
    {
        return -1;
    }

    return 1;
}


/*
 * One symbol per address, the preferred name (it sorts first) with the
 * largest size, kept at the front of the sorted cands; how many, and in
 * *total the bytes of their names with a NUL each
 */

static size_t
ngx_http_malloc_symbols_unique(ngx_http_malloc_cand_t *cands, size_t n,
    const char *str, size_t *total)
{
    size_t  i, kept;

    kept = 0;
    *total = 0;

    for (i = 0; i < n; i++) {
        if (kept > 0 && cands[kept - 1].start == cands[i].start) {
            if (cands[i].size > cands[kept - 1].size) {
                cands[kept - 1].size = cands[i].size;
            }

            continue;
        }

        cands[kept++] = cands[i];
        *total += strlen(str + cands[i].name) + 1;
    }

    return kept;
}


/* the kept symbols and their names into the file's entry */

static void
ngx_http_malloc_symbols_copy(ngx_http_malloc_file_t *file,
    const ngx_http_malloc_cand_t *cands, size_t kept, const char *str,
    ngx_http_malloc_sym_t *out, char *names)
{
    size_t  i, len, total;

    total = 0;

    for (i = 0; i < kept; i++) {

        /* .symtab names carry their version: "malloc@@GLIBC_2.2.5" */

        len = strcspn(str + cands[i].name, "@");

        if (len == 0) {
            len = strlen(str + cands[i].name);
        }

        out[i].start = cands[i].start;
        out[i].size = cands[i].size;
        out[i].name = (uint32_t) total;

        memcpy(names + total, str + cands[i].name, len);
        names[total + len] = '\0';
        total += len + 1;
    }

    file->syms = out;
    file->nsyms = kept;
    file->names = names;
    file->names_len = total;
}


/* functions with an address in a section of the file and a proper name */

static size_t
ngx_http_malloc_symbols_collect(ngx_http_malloc_elf_t *elf,
    Elf64_Shdr *symtab, const char *str, uint64_t str_len,
    ngx_http_malloc_cand_t *cands)
{
    size_t       i, n, count;
    unsigned     type;
    Elf64_Sym    sym;
    const char  *name, *nul;

    count = symtab->sh_size / sizeof(Elf64_Sym);
    n = 0;

    /* symbol 0 is the reserved null symbol */

    for (i = 1; i < count; i++) {
        memcpy(&sym, elf->data + symtab->sh_offset + i * sizeof(Elf64_Sym),
               sizeof(Elf64_Sym));

        type = ELF64_ST_TYPE(sym.st_info);

        if ((type != STT_FUNC && type != STT_GNU_IFUNC)
            || sym.st_value == 0
            || sym.st_shndx == SHN_UNDEF
            || (sym.st_shndx >= SHN_LORESERVE && sym.st_shndx != SHN_XINDEX)
            || sym.st_name == 0
            || sym.st_name >= str_len)
        {
            continue;
        }

        name = str + sym.st_name;

        nul = memchr(name, '\0', str_len - sym.st_name);
        if (nul == NULL || nul == name) {
            continue;
        }

        cands[n].start = sym.st_value;
        cands[n].size = (sym.st_size > UINT32_MAX) ? UINT32_MAX
                                                   : (uint32_t) sym.st_size;
        cands[n].name = sym.st_name;
        cands[n].rank = ngx_http_malloc_symbols_rank(&sym, name, nul - name);
        n++;
    }

    return n;
}


/*
 * Aliases abound in libc ("malloc", "__libc_malloc", "__GI___libc_malloc"
 * at one address): global before weak before local, then the fewest
 * leading underscores, then the shortest.
 */

static uint32_t
ngx_http_malloc_symbols_rank(const Elf64_Sym *sym, const char *name,
    size_t len)
{
    uint32_t  bind, under;

    switch (ELF64_ST_BIND(sym->st_info)) {

    case STB_GLOBAL:
        bind = 0;
        break;

    case STB_WEAK:
    case STB_GNU_UNIQUE:
        bind = 1;
        break;

    case STB_LOCAL:
        bind = 2;
        break;

    default:
        bind = 3;
    }

    for (under = 0; under < len && under < 15 && name[under] == '_'; under++)
    {
        /* void */
    }

    if (len > 0xffffff) {
        len = 0xffffff;
    }

    return (bind << 28) | (under << 24) | (uint32_t) len;
}


static int
ngx_http_malloc_cand_less(const ngx_http_malloc_cand_t *a,
    const ngx_http_malloc_cand_t *b)
{
    if (a->start != b->start) {
        return a->start < b->start;
    }

    if (a->rank != b->rank) {
        return a->rank < b->rank;
    }

    return a->name < b->name;
}


static void
ngx_http_malloc_cand_sift(ngx_http_malloc_cand_t *c, size_t i, size_t n)
{
    size_t                  child;
    ngx_http_malloc_cand_t  tmp;

    for ( ;; ) {
        child = 2 * i + 1;

        if (child >= n) {
            return;
        }

        if (child + 1 < n && ngx_http_malloc_cand_less(&c[child],
                                                       &c[child + 1]))
        {
            child++;
        }

        if (!ngx_http_malloc_cand_less(&c[i], &c[child])) {
            return;
        }

        tmp = c[i];
        c[i] = c[child];
        c[child] = tmp;
        i = child;
    }
}


/* heapsort: qsort() may call malloc, which a worker must not do here */

static void
ngx_http_malloc_cand_sort(ngx_http_malloc_cand_t *c, size_t n)
{
    size_t                  i;
    ngx_http_malloc_cand_t  tmp;

    if (n < 2) {
        return;
    }

    for (i = n / 2; i > 0; i--) {
        ngx_http_malloc_cand_sift(c, i - 1, n);
    }

    for (i = n - 1; i > 0; i--) {
        tmp = c[0];
        c[0] = c[i];
        c[i] = tmp;
        ngx_http_malloc_cand_sift(c, 0, i);
    }
}


const char *
ngx_http_malloc_symbols_lookup(ngx_http_malloc_symbols_t *syms,
    ngx_http_malloc_arena_t *arena, const ngx_http_malloc_map_t *maps,
    size_t nmaps, uint64_t addr, int *map)
{
    size_t                         lo, hi, mid;
    uint64_t                       vaddr;
    const ngx_http_malloc_sym_t   *sym;
    const ngx_http_malloc_map_t   *m;
    const ngx_http_malloc_file_t  *file;

    *map = -1;

    /* the last mapping starting at or below addr */

    lo = 0;
    hi = nmaps;

    while (lo < hi) {
        mid = lo + (hi - lo) / 2;

        if (maps[mid].start <= addr) {
            lo = mid + 1;

        } else {
            hi = mid;
        }
    }

    if (lo == 0 || addr >= maps[lo - 1].limit) {
        return NULL;
    }

    m = &maps[lo - 1];
    *map = (int) (lo - 1);
    vaddr = addr - m->bias;

    if (m->file >= 0 && m->file < syms->nfiles) {
        file = &syms->files[m->file];

        sym = ngx_http_malloc_symbols_find(file, vaddr);
        if (sym != NULL) {
            return file->names + sym->name;
        }
    }

    return ngx_http_malloc_symbols_anon(arena, m->path, vaddr);
}


/*
 * The symbol whose [start, start + size) holds vaddr; a zero-size one
 * only at its start.  A symbol that nests inside a bigger one (assembly
 * entry points) hides the bigger one from the binary search: a few
 * symbols back are checked as well.
 */

static const ngx_http_malloc_sym_t *
ngx_http_malloc_symbols_find(const ngx_http_malloc_file_t *file,
    uint64_t vaddr)
{
    size_t                        lo, hi, mid, k;
    const ngx_http_malloc_sym_t  *s;

    lo = 0;
    hi = file->nsyms;

    while (lo < hi) {
        mid = lo + (hi - lo) / 2;

        if (file->syms[mid].start <= vaddr) {
            lo = mid + 1;

        } else {
            hi = mid;
        }
    }

    for (k = 0; lo > 0 && k < NGX_HTTP_MALLOC_SYMBOL_NEST; lo--, k++) {
        s = &file->syms[lo - 1];

        if (vaddr - s->start < s->size || vaddr == s->start) {
            return s;
        }
    }

    return NULL;
}


static const char *
ngx_http_malloc_symbols_anon(ngx_http_malloc_arena_t *arena,
    const char *path, uint64_t vaddr)
{
    char        *name;
    size_t       len;
    const char  *base;

    base = "";

    if (path != NULL) {
        base = strrchr(path, '/');
        base = (base != NULL) ? base + 1 : path;
    }

    len = strlen(base);

    /* "+0x" and 16 digits */

    name = ngx_http_malloc_arena_alloc(arena, len + 20);
    if (name == NULL) {
        return NULL;
    }

    memcpy(name, base, len);
    snprintf(name + len, 20, "+0x%" PRIx64, vaddr);

    return name;
}


int
ngx_http_malloc_symbols_load_mem(ngx_http_malloc_symbols_t *syms,
    ngx_http_malloc_arena_t *arena, const unsigned char *data, size_t len,
    ngx_http_malloc_map_t *map)
{
    int                      i;
    struct timespec          mtime;
    ngx_http_malloc_elf_t    elf;
    ngx_http_malloc_file_t  *file;

    for (i = 0; i < syms->nfiles; i++) {
        file = &syms->files[i];

        if (file->size == len && strcmp(file->path, map->path) == 0) {
            ngx_http_malloc_symbols_use(syms, map, i);
            return 0;
        }
    }

    memset(&elf, 0, sizeof(elf));
    elf.data = data;
    elf.len = len;

    mtime.tv_sec = 0;
    mtime.tv_nsec = 0;

    return ngx_http_malloc_symbols_add(syms, arena, map, &elf, len, &mtime,
                                       0);
}


int
ngx_http_malloc_symbols_verify(ngx_http_malloc_symbols_t *syms)
{
    int                      i;
    size_t                   k;
    ngx_http_malloc_file_t  *file;

    for (i = 0; i < syms->nfiles; i++) {
        file = &syms->files[i];

        if (file->path == NULL) {
            return -1;
        }

        if (file->nsyms > 0
            && (file->names_len == 0
                || file->names[file->names_len - 1] != '\0'))
        {
            return -1;
        }

        for (k = 0; k < file->nsyms; k++) {
            if (file->syms[k].name >= file->names_len
                || file->names[file->syms[k].name] == '\0')
            {
                return -1;
            }

            if (k > 0 && file->syms[k - 1].start >= file->syms[k].start) {
                return -1;
            }
        }
    }

    return 0;
}


long
ngx_http_malloc_symbols_count(ngx_http_malloc_symbols_t *syms, int file)
{
    if (file < 0 || file >= syms->nfiles) {
        return -1;
    }

    return (long) syms->files[file].nsyms;
}


/*
 * Opens the file and reserves anonymous memory of its size; only the
 * pages of the headers and tables the reader asks for are read into it
 * (ngx_http_malloc_elf_fetch).  A file that shrinks meanwhile reads
 * short, and the reader gives up on it: never a SIGBUS.
 */

static int
ngx_http_malloc_elf_map(ngx_http_malloc_elf_t *elf, const char *path,
    struct stat *st)
{
    int    fd;
    void  *p;

    memset(elf, 0, sizeof(*elf));

    fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd == -1) {
        return -1;
    }

    if (fstat(fd, st) == -1 || !S_ISREG(st->st_mode) || st->st_size < 0
        || (uint64_t) st->st_size > SIZE_MAX)
    {
        close(fd);
        return -1;
    }

    /* too short for an ELF header: an image with nothing in it */

    if ((size_t) st->st_size < sizeof(Elf64_Ehdr)) {
        close(fd);
        return 0;
    }

    /* untouched pages of the copy cost nothing */

    elf->len = (size_t) st->st_size;

    p = mmap(NULL, elf->len, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

    if (p == MAP_FAILED) {
        close(fd);
        return -1;
    }

    elf->have = mmap(NULL, elf->len / NGX_HTTP_MALLOC_ELF_PAGE / 8 + 1,
                     PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                     -1, 0);

    if (elf->have == MAP_FAILED) {
        munmap(p, elf->len);
        close(fd);
        return -1;
    }

    elf->data = p;
    elf->fd = fd;
    elf->mapped = 1;

    return 0;
}


static void
ngx_http_malloc_elf_unmap(ngx_http_malloc_elf_t *elf)
{
    if (elf->mapped) {
        munmap((void *) elf->data, elf->len);
        munmap(elf->have, elf->len / NGX_HTTP_MALLOC_ELF_PAGE / 8 + 1);
        close(elf->fd);
        elf->mapped = 0;
    }
}


/* reads the pages of [off, off + size) that are not read yet */

static int
ngx_http_malloc_elf_fetch(ngx_http_malloc_elf_t *elf, uint64_t off,
    uint64_t size)
{
    size_t          i, last, run;
    ssize_t         n;
    uint64_t        start, end;
    unsigned char  *dst;

    last = (off + size - 1) / NGX_HTTP_MALLOC_ELF_PAGE;

    for (i = off / NGX_HTTP_MALLOC_ELF_PAGE; i <= last; i = run) {

        for (run = i;
             run <= last && !(elf->have[run / 8] & (1 << (run % 8)));
             run++)
        {
            /* void */
        }

        if (run == i) {
            run++;
            continue;
        }

        start = (uint64_t) i * NGX_HTTP_MALLOC_ELF_PAGE;
        end = (uint64_t) run * NGX_HTTP_MALLOC_ELF_PAGE;
        end = (end < elf->len) ? end : elf->len;
        dst = (unsigned char *) elf->data + start;

        while (start < end) {
            n = pread(elf->fd, dst, end - start, (off_t) start);

            if (n == -1 && errno == EINTR) {
                continue;
            }

            if (n <= 0) {
                return -1;      /* shorter than it was: truncated */
            }

            start += n;
            dst += n;
        }

        for ( /* void */ ; i < run; i++) {
            elf->have[i / 8] |= 1 << (i % 8);
        }
    }

    return 0;
}


/* a 64-bit ELF file of our byte order, or -1 */

static int
ngx_http_malloc_elf_init(ngx_http_malloc_elf_t *elf)
{
    Elf64_Shdr  sh0;

    if (ngx_http_malloc_elf_read(elf, 0, sizeof(Elf64_Ehdr), &elf->ehdr) != 0
        || memcmp(elf->ehdr.e_ident, ELFMAG, SELFMAG) != 0
        || elf->ehdr.e_ident[EI_CLASS] != ELFCLASS64
        || elf->ehdr.e_ident[EI_DATA] != NGX_HTTP_MALLOC_ELF_DATA
        || elf->ehdr.e_ident[EI_VERSION] != EV_CURRENT)
    {
        return -1;
    }

    /* a header table that does not fit is no table at all */

    if (elf->ehdr.e_phnum > 0
        && (elf->ehdr.e_phentsize != sizeof(Elf64_Phdr)
            || ngx_http_malloc_elf_within(elf, elf->ehdr.e_phoff,
                                          (uint64_t) elf->ehdr.e_phnum
                                          * sizeof(Elf64_Phdr))
               != 0))
    {
        elf->ehdr.e_phnum = 0;
    }

    elf->shnum = 0;

    if (elf->ehdr.e_shoff == 0
        || elf->ehdr.e_shentsize != sizeof(Elf64_Shdr))
    {
        return 0;
    }

    elf->shnum = elf->ehdr.e_shnum;

    /* more than SHN_LORESERVE sections: the count is in section 0 */

    if (elf->shnum == 0) {
        elf->shnum = 1;

        if (ngx_http_malloc_elf_shdr(elf, 0, &sh0) != 0
            || sh0.sh_size > UINT32_MAX)
        {
            elf->shnum = 0;
            return 0;
        }

        elf->shnum = (unsigned) sh0.sh_size;
    }

    if (ngx_http_malloc_elf_within(elf, elf->ehdr.e_shoff,
                                   (uint64_t) elf->shnum * sizeof(Elf64_Shdr))
        != 0)
    {
        elf->shnum = 0;
    }

    return 0;
}


/* copies, so that no header is read through a misaligned pointer */

static int
ngx_http_malloc_elf_read(ngx_http_malloc_elf_t *elf, uint64_t off,
    size_t size, void *dst)
{
    if (ngx_http_malloc_elf_within(elf, off, size) != 0) {
        return -1;
    }

    memcpy(dst, elf->data + off, size);

    return 0;
}


static int
ngx_http_malloc_elf_phdr(ngx_http_malloc_elf_t *elf, unsigned i,
    Elf64_Phdr *ph)
{
    uint64_t  off;

    off = elf->ehdr.e_phoff + (uint64_t) i * sizeof(Elf64_Phdr);

    if (off < elf->ehdr.e_phoff) {
        return -1;
    }

    return ngx_http_malloc_elf_read(elf, off, sizeof(Elf64_Phdr), ph);
}


static int
ngx_http_malloc_elf_shdr(ngx_http_malloc_elf_t *elf, unsigned i,
    Elf64_Shdr *sh)
{
    uint64_t  off;

    off = elf->ehdr.e_shoff + (uint64_t) i * sizeof(Elf64_Shdr);

    if (off < elf->ehdr.e_shoff) {
        return -1;
    }

    return ngx_http_malloc_elf_read(elf, off, sizeof(Elf64_Shdr), sh);
}


static int
ngx_http_malloc_elf_within(ngx_http_malloc_elf_t *elf, uint64_t off,
    uint64_t size)
{
    if (off > elf->len || size > elf->len - off) {
        return -1;
    }

    if (elf->mapped && size > 0) {
        return ngx_http_malloc_elf_fetch(elf, off, size);
    }

    return 0;
}


/* the loadable segments, executable ones first, and the build ID */

static void
ngx_http_malloc_elf_headers(ngx_http_malloc_elf_t *elf,
    ngx_http_malloc_file_t *file)
{
    unsigned                 i, pass;
    Elf64_Phdr               ph;
    ngx_http_malloc_load_t  *ld;

    file->nloads = 0;

    /* ngx_http_malloc_elf_init() made sure that the table fits */

    for (pass = 0; pass < 2; pass++) {
        for (i = 0; i < elf->ehdr.e_phnum; i++) {
            if (ngx_http_malloc_elf_phdr(elf, i, &ph) != 0
                || ph.p_type != PT_LOAD
                || ((ph.p_flags & PF_X) ? pass != 0 : pass != 1)
                || ngx_http_malloc_elf_within(elf, ph.p_offset, ph.p_filesz)
                   != 0
                || file->nloads == NGX_HTTP_MALLOC_SYMBOL_LOADS)
            {
                continue;
            }

            ld = &file->loads[file->nloads++];
            ld->offset = ph.p_offset;
            ld->filesz = ph.p_filesz;
            ld->vaddr = ph.p_vaddr;
        }
    }

    ngx_http_malloc_elf_build_id(elf, file->build_id);
}


/* NT_GNU_BUILD_ID from a PT_NOTE segment, else from a SHT_NOTE section */

static void
ngx_http_malloc_elf_build_id(ngx_http_malloc_elf_t *elf, char *out)
{
    unsigned    i;
    Elf64_Phdr  ph;
    Elf64_Shdr  sh;

    out[0] = '\0';

    for (i = 0; i < elf->ehdr.e_phnum; i++) {
        if (ngx_http_malloc_elf_phdr(elf, i, &ph) != 0) {
            break;
        }

        if (ph.p_type == PT_NOTE
            && ngx_http_malloc_elf_notes(elf, ph.p_offset, ph.p_filesz,
                                         ph.p_align, out)
               == 0)
        {
            return;
        }
    }

    for (i = 1; i < elf->shnum; i++) {
        if (ngx_http_malloc_elf_shdr(elf, i, &sh) != 0) {
            return;
        }

        if (sh.sh_type == SHT_NOTE
            && ngx_http_malloc_elf_notes(elf, sh.sh_offset, sh.sh_size,
                                         sh.sh_addralign, out)
               == 0)
        {
            return;
        }
    }
}


static int
ngx_http_malloc_elf_notes(ngx_http_malloc_elf_t *elf, uint64_t off,
    uint64_t size, uint64_t align, char *out)
{
    size_t                i;
    uint64_t              end, namesz, descsz;
    Elf64_Nhdr            nh;
    const unsigned char  *name, *desc;

    static const char     hex[] = "0123456789abcdef";

    if (ngx_http_malloc_elf_within(elf, off, size) != 0) {
        return -1;
    }

    /* notes are padded to 4 bytes, or to 8 in 8-aligned sections */

    align = (align == 8) ? 8 : 4;
    end = off + size;

    while (end - off >= sizeof(Elf64_Nhdr)) {
        memcpy(&nh, elf->data + off, sizeof(Elf64_Nhdr));
        off += sizeof(Elf64_Nhdr);

        namesz = ((uint64_t) nh.n_namesz + align - 1) & ~(align - 1);
        descsz = ((uint64_t) nh.n_descsz + align - 1) & ~(align - 1);

        if (namesz > end - off) {
            return -1;
        }

        name = elf->data + off;
        off += namesz;

        if (nh.n_descsz > end - off) {
            return -1;
        }

        desc = elf->data + off;

        if (nh.n_type == NT_GNU_BUILD_ID
            && nh.n_namesz == sizeof("GNU")
            && memcmp(name, "GNU", sizeof("GNU")) == 0
            && nh.n_descsz > 0
            && nh.n_descsz <= NGX_HTTP_MALLOC_BUILD_ID_MAX)
        {
            for (i = 0; i < nh.n_descsz; i++) {
                out[2 * i] = hex[desc[i] >> 4];
                out[2 * i + 1] = hex[desc[i] & 0xf];
            }

            out[2 * i] = '\0';

            return 0;
        }

        if (descsz > end - off) {
            return -1;
        }

        off += descsz;
    }

    return -1;
}


size_t
ngx_http_malloc_symbols_demangle(const char *sym, char *buf, size_t size)
{
    int                          done;
    ngx_http_malloc_demangled_t  dm;

    if (buf == NULL || size == 0) {
        return 0;
    }

    buf[0] = '\0';

    if (sym == NULL || sym[0] != '_' || (sym[1] != 'Z' && sym[1] != 'R')) {
        return 0;
    }

    dm.buf = buf;
    dm.size = size;
    dm.len = 0;
    dm.rust = 1;
    dm.refused = 0;

    /*
     * The callback jumps back here when the name cannot be shown.  The
     * callback demanglers hold nothing but their stack when they call it
     * (but see the callback), so that leaving them halfway is safe, and
     * it bounds their time by a buffer's worth of name: substitutions of
     * substitutions name a tree of 2^n nodes in a symbol of about 7n
     * bytes (C++'s f(p<p<...<a, a>...>>): 290 bytes, a tebibyte of
     * name; Rust v0's backrefs alike).
     */

    if (setjmp(dm.out) != 0) {
        buf[0] = '\0';
        return 0;
    }

    /*
     * Rust first, as c++filt does: a legacy Rust name ("_ZN...17h<16 hex
     * digits>E") is also a C++ one.  Without DMGL_VERBOSE the Rust
     * demangler leaves out the legacy hash and v0's crate disambiguators.
     */

    done = rust_demangle_callback(sym, 0, ngx_http_malloc_demangled_put,
                                  &dm);

    if (!done) {
        /* what the Rust demangler printed before it failed */
        dm.len = 0;
        dm.rust = 0;
        dm.refused = 0;

        done = cplus_demangle_v3_callback(sym, NGX_HTTP_MALLOC_CXX_OPTIONS,
                                          ngx_http_malloc_demangled_put,
                                          &dm);
    }

    if (!done || dm.refused || dm.len == 0) {
        buf[0] = '\0';
        return 0;
    }

    buf[dm.len] = '\0';

    return dm.len;
}


/*
 * The demanglers' callback.  The name goes into JSON, pprof's and OTLP's
 * strings and the comment lines of the text profiles: a byte that is not
 * printable ASCII (a C++ source name holds any byte; Rust v0 decodes
 * Punycode to UTF-8) refuses it, and so does a name that would not fit.
 */

static void
ngx_http_malloc_demangled_put(const char *s, size_t n, void *data)
{
    size_t                        i;
    ngx_http_malloc_demangled_t  *dm;

    dm = data;

    /* an empty identifier comes as NULL, 0 */

    if (n == 0) {
        return;
    }

    for (i = 0; i < n; i++) {
        if ((unsigned char) s[i] >= 0x20 && (unsigned char) s[i] <= 0x7e) {
            continue;
        }

        if (dm->rust) {
            /*
             * The one time a demangler calls back holding memory: the
             * Rust one prints a Punycode name (always a byte over 0x7f)
             * from a buffer it mallocs and frees when this returns.  The
             * name is refused at its next piece or at the end.
             */

            dm->refused = 1;
            return;
        }

        longjmp(dm->out, 1);
    }

    if (dm->refused || n >= dm->size - dm->len) {
        longjmp(dm->out, 1);
    }

    memcpy(dm->buf + dm->len, s, n);
    dm->len += n;
}
