
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * In-process symbolizer: ELF symbol tables of the mapped files (.symtab
 * when present, else .dynsym; the debug file under
 * /usr/lib/debug/.build-id/ when installed), cached per worker in memory
 * of its own (mmap, never malloc).  An address that no symbol covers is
 * named "<file>+0x<vaddr>", never after the nearest symbol below it.
 * Pure C.
 */


#ifndef _NGX_HTTP_MALLOC_SYMBOL_H_INCLUDED_
#define _NGX_HTTP_MALLOC_SYMBOL_H_INCLUDED_


#include <stddef.h>
#include <stdint.h>

#include "ngx_http_malloc_arena.h"


typedef struct {
    uint64_t                    start;       /* mapped addresses */
    uint64_t                    limit;
    uint64_t                    offset;      /* file offset of start */
    const char                 *path;        /* as in the maps line */
    const char                 *build_id;    /* lowercase hex, or NULL */
    uint64_t                    bias;        /* address - ELF vaddr */
    int                         file;        /* index in the cache, or -1
                                                when the file is unreadable */
} ngx_http_malloc_map_t;


typedef struct ngx_http_malloc_symbols_s  ngx_http_malloc_symbols_t;


/* a per-process cache; NULL when out of memory */
ngx_http_malloc_symbols_t *ngx_http_malloc_symbols_create(void);
void ngx_http_malloc_symbols_destroy(ngx_http_malloc_symbols_t *syms);

/* bytes the cache holds mapped (its tables and arena), for tests */
size_t ngx_http_malloc_symbols_mapped(ngx_http_malloc_symbols_t *syms);

/*
 * Parses maps text (/proc/PID/maps, or a dump's MAPPED_LIBRARIES) into
 * its executable, file-backed mappings, loading each file's symbols into
 * the cache on first sight (keyed by path, inode-independent: by path,
 * size and mtime).  Results are allocated from "arena".  0 or -1.
 */
int ngx_http_malloc_symbols_maps(ngx_http_malloc_symbols_t *syms,
    ngx_http_malloc_arena_t *arena, const char *text, size_t len,
    ngx_http_malloc_map_t **maps, size_t *nmaps);

/*
 * Names the code at "addr" (callers pass a return address minus 1):
 * the symbol covering it, or "<basename>+0x<vaddr>" inside a mapping that
 * no symbol covers, or NULL outside every mapping.  *map gets the mapping
 * index or -1.  The name lives in the cache or in "arena".
 */
const char *ngx_http_malloc_symbols_lookup(ngx_http_malloc_symbols_t *syms,
    ngx_http_malloc_arena_t *arena, const ngx_http_malloc_map_t *maps,
    size_t nmaps, uint64_t addr, int *map);

/*
 * Writes the readable form of a mangled C++ (Itanium ABI, "_Z...") or Rust
 * (legacy "_ZN...17h<16 hex>E", v0 "_R...") symbol into buf (NUL-ended, at
 * most size bytes) and returns its length: c++filt's name, but Rust's
 * without the legacy hash and v0's crate disambiguators.  0, with buf
 * empty, when sym is not mangled, does not demangle (a C++ symbol over
 * 1024 bytes does not, as with c++filt), would not fit or would hold a
 * byte that is not printable ASCII: the caller then shows the symbol as
 * it is.  libiberty's demanglers, the same whatever libraries the process
 * loaded; no allocation but a Rust Punycode name's, freed before the
 * return; time bounded by size.
 */
size_t ngx_http_malloc_symbols_demangle(const char *sym, char *buf,
    size_t size);


#endif /* _NGX_HTTP_MALLOC_SYMBOL_H_INCLUDED_ */
