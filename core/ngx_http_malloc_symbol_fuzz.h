
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * Entry points of the symbolizer for the fuzzer and the unit tests only:
 * they reach the ELF reader without files on disk.  The module does not
 * include this header.
 */


#ifndef _NGX_HTTP_MALLOC_SYMBOL_FUZZ_H_INCLUDED_
#define _NGX_HTTP_MALLOC_SYMBOL_FUZZ_H_INCLUDED_


#include <stddef.h>

#include "ngx_http_malloc_symbol.h"


/*
 * As ngx_http_malloc_symbols_maps() does for one mapping, with the file
 * read from memory: the caller sets map->start, limit, offset and path;
 * this sets build_id, bias and file.  The image is keyed by path and
 * length.  0, or -1 when the image could not be cached (map->file = -1).
 */
int ngx_http_malloc_symbols_load_mem(ngx_http_malloc_symbols_t *syms,
    ngx_http_malloc_arena_t *arena, const unsigned char *data, size_t len,
    ngx_http_malloc_map_t *map);

/*
 * Checks the cache's own invariants: tables sorted by address with one
 * symbol per address, names inside their file's strings.  0 or -1.
 */
int ngx_http_malloc_symbols_verify(ngx_http_malloc_symbols_t *syms);

/* the number of symbols kept for cache entry "file", or -1 */
long ngx_http_malloc_symbols_count(ngx_http_malloc_symbols_t *syms,
    int file);


#endif /* _NGX_HTTP_MALLOC_SYMBOL_FUZZ_H_INCLUDED_ */
