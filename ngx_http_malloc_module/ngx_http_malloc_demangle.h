
/*
 * Readable names for mangled C++ and Rust symbols, for the heap viewer:
 * pure C, no nginx types, no allocation, so that unit tests and fuzzers
 * drive it without a server.
 */


#ifndef _NGX_HTTP_MALLOC_DEMANGLE_H_INCLUDED_
#define _NGX_HTTP_MALLOC_DEMANGLE_H_INCLUDED_


#include <stddef.h>


/* what a caller takes: this demangler or one that prefers the process's */
typedef size_t (*ngx_http_malloc_demangle_pt)(const char *sym, char *buf,
    size_t size);


/*
 * Writes the readable form of a mangled C++ (Itanium ABI, "_Z...") or Rust
 * (legacy "_ZN...17h<16 hex>E", v0 "_R...") symbol into buf (NUL-ended, at
 * most size bytes) and returns its length; 0 when sym is not mangled, or
 * in a form this demangler does not know, or does not fit: the caller then
 * shows the symbol as it is.  Never reads past sym's NUL, never writes
 * past size, bounded recursion and time on any input.
 */
size_t ngx_http_malloc_demangle(const char *sym, char *buf, size_t size);


#endif /* _NGX_HTTP_MALLOC_DEMANGLE_H_INCLUDED_ */
