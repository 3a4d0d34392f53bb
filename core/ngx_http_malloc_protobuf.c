
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * Protocol buffers written by hand.
 *
 * Owns: nothing.  Calls: arena (pure C).
 */


#include "ngx_http_malloc_protobuf.h"


size_t
ngx_http_malloc_protobuf_varint_len(uint64_t v)
{
    size_t  n;

    for (n = 1; v >= 0x80; n++) {
        v >>= 7;
    }

    return n;
}


unsigned char *
ngx_http_malloc_protobuf_varint(unsigned char *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (unsigned char) (v | 0x80);
        v >>= 7;
    }

    *p++ = (unsigned char) v;

    return p;
}


unsigned char *
ngx_http_malloc_protobuf_uint(unsigned char *p, unsigned field, uint64_t v)
{
    if (v == 0) {
        return p;
    }

    p = ngx_http_malloc_protobuf_varint(p, field << 3
                                           | NGX_HTTP_MALLOC_PB_VARINT);

    return ngx_http_malloc_protobuf_varint(p, v);
}


unsigned char *
ngx_http_malloc_protobuf_head(unsigned char *p, unsigned field, size_t len)
{
    p = ngx_http_malloc_protobuf_varint(p, field << 3
                                           | NGX_HTTP_MALLOC_PB_BYTES);

    return ngx_http_malloc_protobuf_varint(p, len);
}


void
ngx_http_malloc_protobuf_message(ngx_http_malloc_mbuf_t *b, unsigned field,
    const void *msg, size_t len)
{
    unsigned char   head[NGX_HTTP_MALLOC_PB_FIELD_MAX];
    unsigned char  *p;

    p = ngx_http_malloc_protobuf_head(head, field, len);

    ngx_http_malloc_mbuf_append(b, head, p - head);
    ngx_http_malloc_mbuf_append(b, msg, len);
}
