
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * Shared by the OTLP unit tests and the folded fuzz target: whether bytes
 * are valid UTF-8, decoded code point by code point (shortest forms, no
 * surrogates, at most U+10FFFF), apart from the encoder's own way of it.
 */


#ifndef _UTF8_STRICT_H_INCLUDED_
#define _UTF8_STRICT_H_INCLUDED_


#include <stddef.h>
#include <stdint.h>


static int
utf8_strict(const unsigned char *p, size_t len)
{
    size_t    i, n, k;
    uint32_t  cp;

    static const uint32_t  least[] = { 0, 0, 0x80, 0x800, 0x10000 };

    for (i = 0; i < len; i += n) {
        if (p[i] < 0x80) {
            n = 1;
            continue;
        }

        if ((p[i] & 0xe0) == 0xc0) {
            n = 2;
            cp = p[i] & 0x1f;
        } else if ((p[i] & 0xf0) == 0xe0) {
            n = 3;
            cp = p[i] & 0x0f;
        } else if ((p[i] & 0xf8) == 0xf0) {
            n = 4;
            cp = p[i] & 0x07;
        } else {
            return 0;
        }

        if (i + n > len) {
            return 0;
        }

        for (k = 1; k < n; k++) {
            if ((p[i + k] & 0xc0) != 0x80) {
                return 0;
            }

            cp = cp << 6 | (p[i + k] & 0x3f);
        }

        if (cp < least[n] || cp > 0x10ffff
            || (cp >= 0xd800 && cp <= 0xdfff))
        {
            return 0;
        }
    }

    return 1;
}


#endif /* _UTF8_STRICT_H_INCLUDED_ */
