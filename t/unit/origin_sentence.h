
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * Shared by the cross-origin unit tests and fuzz target: what a refusal
 * must leave in err, a non-empty sentence of printable ASCII,
 * NUL-terminated within NGX_HTTP_MALLOC_ORIGIN_ERR_LEN bytes.
 */


#ifndef _ORIGIN_SENTENCE_H_INCLUDED_
#define _ORIGIN_SENTENCE_H_INCLUDED_


#include <stddef.h>

#include "ngx_http_malloc_origin.h"


static int
origin_sentence(const char *err)
{
    size_t         i;
    unsigned char  c;

    for (i = 0; i < NGX_HTTP_MALLOC_ORIGIN_ERR_LEN; i++) {
        c = (unsigned char) err[i];

        if (c == '\0') {
            return i > 0;
        }

        if (c < 0x20 || c > 0x7e) {
            return 0;
        }
    }

    return 0;
}


#endif /* _ORIGIN_SENTENCE_H_INCLUDED_ */
