
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * OpenTelemetry's profiles signal: an ExportProfilesServiceRequest
 * (opentelemetry-proto, opentelemetry/proto/collector/profiles/
 * v1development) from a named profile, one Profile per sample type, the
 * names, files and stacks in the shared dictionary.  Pure C; memory
 * from an arena.
 */


#ifndef _NGX_HTTP_MALLOC_OTLP_H_INCLUDED_
#define _NGX_HTTP_MALLOC_OTLP_H_INCLUDED_


#include <stddef.h>
#include <stdint.h>

#include "ngx_http_malloc_arena.h"
#include "ngx_http_malloc_named.h"


#define NGX_HTTP_MALLOC_OTLP_ERR_LEN  256

/* the attribute a mapping's GNU build id goes in (semantic conventions) */
#define NGX_HTTP_MALLOC_OTLP_BUILD_ID  "process.executable.build_id.gnu"


typedef struct {
    const char                 *key;
    const char                 *str;        /* NULL: the integer */
    int64_t                     num;
} ngx_http_malloc_otlp_attr_t;


/* what the encoder made of the profile's stacks */
typedef struct {
    size_t                      stacks;     /* with a value sent */
    size_t                      folded;     /* of them, folded into one
                                               stack; 0: none */
} ngx_http_malloc_otlp_result_t;


typedef struct {
    const ngx_http_malloc_named_t      *np;
    const ngx_http_malloc_otlp_attr_t  *resource;
    size_t                              nresource;
    const char                         *scope_name;
    const char                         *scope_version;
    const ngx_http_malloc_otlp_attr_t  *attrs;      /* every profile's */
    size_t                              nattrs;
    int64_t                             time_nanos;
    int64_t                             duration_nanos;
    size_t                              max_samples;    /* of a profile,
                                                           0: no limit,
                                                           else 2 or more */
    const unsigned char                *original;   /* the same profile as
                                                       pprof, NULL: none */
    size_t                              original_len;
    ngx_http_malloc_arena_t            *arena;
    ngx_http_malloc_otlp_result_t      *result;     /* NULL: not wanted */
} ngx_http_malloc_otlp_t;


/*
 * The request, not compressed, onto "out": one ResourceProfiles with the
 * resource's attributes and one ScopeProfiles, whose Profiles are
 * inuse_space/bytes and inuse_objects/count, each with period_type
 * space/bytes, the period, the time and the attributes; the pprof bytes
 * go with the first Profile only.  alloc_* are not sent: they count
 * from when sampling started in each worker, which a profile of one
 * moment cannot say.  Functions carry the readable name and the symbol
 * (system_name); a stack's first location is its leaf.  With more
 * stacks than max_samples, those that hold the fewest bytes go as one
 * stack of one function, "(N smaller stacks folded)", so the totals
 * stay.  Every table holds only what something refers to, each string
 * once, and every string is UTF-8 (see below).  0, or -1 with a reason
 * in err.
 */
int ngx_http_malloc_otlp_encode(const ngx_http_malloc_otlp_t *ot,
    ngx_http_malloc_mbuf_t *out, char *err);

/*
 * s as valid UTF-8 into out, each ill-formed sequence (its maximal
 * subpart, as Unicode's chapter 3 counts them) replaced by U+FFFD; out
 * NULL: measures.  The length written.
 */
size_t ngx_http_malloc_otlp_utf8(const char *s, size_t len, char *out);

/* the length of the valid UTF-8 that s starts with: len if all is */
size_t ngx_http_malloc_otlp_utf8_valid(const char *s, size_t len);


#endif /* _NGX_HTTP_MALLOC_OTLP_H_INCLUDED_ */
