/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */

/*
 * Preloaded with the UBSan build of the modules (make test-ubsan).  The
 * UBSan runtime reads UBSAN_OPTIONS from /proc/self/environ when the first
 * report comes, in a worker, after nginx has written its process title
 * over that memory: the options would be lost.  This reads them in the
 * master, at load, and hands them to the runtime through its hook.
 */

#include <stdio.h>
#include <stdlib.h>

static char  ubsan_options[4096];

__attribute__((constructor)) static void
ubsan_options_init(void)
{
    const char  *o;

    o = getenv("UBSAN_OPTIONS");

    if (o != NULL) {
        snprintf(ubsan_options, sizeof(ubsan_options), "%s", o);
    }
}


const char *__ubsan_default_options(void);

const char *
__ubsan_default_options(void)
{
    return ubsan_options;
}
