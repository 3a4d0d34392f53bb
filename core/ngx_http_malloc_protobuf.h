
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * Protocol buffers written by hand: varints, tags and length-delimited
 * fields, for profile.proto and OTLP.  Pure C.
 */


#ifndef _NGX_HTTP_MALLOC_PROTOBUF_H_INCLUDED_
#define _NGX_HTTP_MALLOC_PROTOBUF_H_INCLUDED_


#include <stddef.h>
#include <stdint.h>

#include "ngx_http_malloc_arena.h"


/* wire types */
#define NGX_HTTP_MALLOC_PB_VARINT      0
#define NGX_HTTP_MALLOC_PB_FIXED64     1
#define NGX_HTTP_MALLOC_PB_BYTES       2

/* a varint takes at most 10 bytes, a tag of a field below 16 one */
#define NGX_HTTP_MALLOC_PB_VARINT_MAX  10
#define NGX_HTTP_MALLOC_PB_FIELD_MAX   (1 + NGX_HTTP_MALLOC_PB_VARINT_MAX)


size_t ngx_http_malloc_protobuf_varint_len(uint64_t v);
unsigned char *ngx_http_malloc_protobuf_varint(unsigned char *p, uint64_t v);

/* a varint field; zero is the default and is left out */
unsigned char *ngx_http_malloc_protobuf_uint(unsigned char *p,
    unsigned field, uint64_t v);

/* the tag and length of a length-delimited field */
unsigned char *ngx_http_malloc_protobuf_head(unsigned char *p,
    unsigned field, size_t len);

/* a length-delimited field (a message, a string, packed values) onto b */
void ngx_http_malloc_protobuf_message(ngx_http_malloc_mbuf_t *b,
    unsigned field, const void *msg, size_t len);


#endif /* _NGX_HTTP_MALLOC_PROTOBUF_H_INCLUDED_ */
