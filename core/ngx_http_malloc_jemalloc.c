
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * mallctl is resolved with dlsym(RTLD_DEFAULT): a jemalloc that is only
 * loaded by some library, but is not what malloc() resolves to, would
 * profile an empty heap, so its malloc must be the process's malloc.
 *
 * Owns: the resolved mallctl.  Calls: nothing of the module (pure C).
 */


#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ngx_http_malloc_jemalloc.h"


#define NGX_HTTP_MALLOC_PRELOAD                                               \
    "LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"
#define NGX_HTTP_MALLOC_CONF  "MALLOC_CONF=prof:true,prof_active:false"


typedef int (*ngx_http_malloc_mallctl_pt)(const char *name, void *oldp,
    size_t *oldlenp, void *newp, size_t newlen);
typedef void (*ngx_http_malloc_stats_print_pt)(
    void (*write_cb)(void *, const char *), void *cbopaque,
    const char *opts);


static ngx_http_malloc_mallctl_pt  ngx_http_malloc_mallctl;
static ngx_http_malloc_je_info_t   ngx_http_malloc_je_info;
static int                         ngx_http_malloc_je_probed;


static int ngx_http_malloc_je_read_bool(const char *name, int *value);
static int ngx_http_malloc_je_read_size(const char *name, size_t *value);
static void ngx_http_malloc_je_write_fd(void *data, const char *text);


const ngx_http_malloc_je_info_t *
ngx_http_malloc_je_probe(void)
{
    void                       *sym, *lib, *own;
    size_t                      len;
    Dl_info                     dli;
    const char                 *version;
    ngx_http_malloc_je_info_t  *info;

    info = &ngx_http_malloc_je_info;

    if (ngx_http_malloc_je_probed) {
        return info;
    }

    ngx_http_malloc_je_probed = 1;
    info->state = NGX_HTTP_MALLOC_JE_NOT_FOUND;

    sym = dlsym(RTLD_DEFAULT, "mallctl");
    if (sym == NULL) {
        return info;
    }

    if (dladdr(sym, &dli) == 0 || dli.dli_fname == NULL) {
        return info;
    }

    info->library = dli.dli_fname;

    lib = dlopen(dli.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
    if (lib == NULL) {
        return info;
    }

    own = dlsym(lib, "malloc");
    dlclose(lib);

    if (own == NULL || own != dlsym(RTLD_DEFAULT, "malloc")) {
        info->state = NGX_HTTP_MALLOC_JE_NOT_ALLOCATOR;
        return info;
    }

    ngx_http_malloc_mallctl = (ngx_http_malloc_mallctl_pt) sym;

    len = sizeof(version);
    if (ngx_http_malloc_mallctl("version", &version, &len, NULL, 0) == 0) {
        info->version = version;
    }

    (void) ngx_http_malloc_je_read_bool("config.prof", &info->config_prof);

    if (!info->config_prof) {
        info->state = NGX_HTTP_MALLOC_JE_NO_CONFIG_PROF;
        return info;
    }

    (void) ngx_http_malloc_je_read_bool("opt.prof", &info->opt_prof);

    len = sizeof(info->lg_prof_sample);
    (void) ngx_http_malloc_mallctl("opt.lg_prof_sample", &info->lg_prof_sample,
                                   &len, NULL, 0);

    info->state = info->opt_prof ? NGX_HTTP_MALLOC_JE_OK
                                 : NGX_HTTP_MALLOC_JE_NO_OPT_PROF;

    return info;
}


const char *
ngx_http_malloc_je_code(ngx_http_malloc_je_state_e state)
{
    switch (state) {

    case NGX_HTTP_MALLOC_JE_NOT_FOUND:
        return "jemalloc_not_found";

    case NGX_HTTP_MALLOC_JE_NOT_ALLOCATOR:
        return "jemalloc_not_allocator";

    case NGX_HTTP_MALLOC_JE_NO_CONFIG_PROF:
        return "prof_not_compiled";

    case NGX_HTTP_MALLOC_JE_NO_OPT_PROF:
        return "prof_not_enabled";

    default:
        return "ok";
    }
}


const char *
ngx_http_malloc_je_text(ngx_http_malloc_je_state_e state)
{
    switch (state) {

    case NGX_HTTP_MALLOC_JE_NOT_FOUND:
        return "nginx is not running on jemalloc: start it with "
               NGX_HTTP_MALLOC_PRELOAD " and " NGX_HTTP_MALLOC_CONF
               " in its environment (see docs/operations.md)";

    case NGX_HTTP_MALLOC_JE_NOT_ALLOCATOR:
        return "jemalloc is loaded but malloc() is not jemalloc's (it was "
               "linked or dlopen()ed, not preloaded): start nginx with "
               NGX_HTTP_MALLOC_PRELOAD " and " NGX_HTTP_MALLOC_CONF;

    case NGX_HTTP_MALLOC_JE_NO_CONFIG_PROF:
        return "this jemalloc was built without profiling "
               "(--enable-prof): use a build with config.prof, such as "
               "Debian's libjemalloc2";

    case NGX_HTTP_MALLOC_JE_NO_OPT_PROF:
        return "jemalloc profiling is off (opt.prof is false): restart "
               "nginx with " NGX_HTTP_MALLOC_CONF " in its environment; "
               "prof:true cannot be turned on at run time";

    default:
        return "jemalloc is the allocator and profiling is available";
    }
}


static int
ngx_http_malloc_je_read_bool(const char *name, int *value)
{
    int     rc;
    bool    b;
    size_t  len;

    len = sizeof(b);
    rc = ngx_http_malloc_mallctl(name, &b, &len, NULL, 0);

    if (rc == 0) {
        *value = b;
    }

    return rc;
}


int
ngx_http_malloc_je_get_active(int *active)
{
    if (ngx_http_malloc_mallctl == NULL) {
        return ENOENT;
    }

    return ngx_http_malloc_je_read_bool("prof.active", active);
}


int
ngx_http_malloc_je_set_active(int active)
{
    bool  b;

    if (ngx_http_malloc_mallctl == NULL) {
        return ENOENT;
    }

    b = active ? true : false;

    return ngx_http_malloc_mallctl("prof.active", NULL, NULL, &b, sizeof(b));
}


int
ngx_http_malloc_je_lg_sample(size_t *lg)
{
    size_t  len;

    if (ngx_http_malloc_mallctl == NULL) {
        return ENOENT;
    }

    len = sizeof(*lg);

    return ngx_http_malloc_mallctl("prof.lg_sample", lg, &len, NULL, 0);
}


int
ngx_http_malloc_je_dump(const char *path)
{
    if (ngx_http_malloc_mallctl == NULL) {
        return ENOENT;
    }

    return ngx_http_malloc_mallctl("prof.dump", NULL, NULL, &path,
                                   sizeof(path));
}


/*
 * jemalloc 5.3 moves every sampled small object into an extent of the
 * smallest large size class, to keep its record: 16 KiB with 4 KiB pages.
 */

int
ngx_http_malloc_je_sampled_size(size_t *size)
{
    int          major, minor, patch;
    const char  *version;

    if (ngx_http_malloc_mallctl == NULL) {
        return ENOENT;
    }

    /*
     * 5.3.0 promotes a sampled small object to the smallest large extent;
     * 5.3.1 leaves it in its slab: Debian testing's 5.3.1 grew by nothing
     * where 5.3.0 grew by the estimate (t/generations.t)
     */

    version = ngx_http_malloc_je_probe()->version;

    if (version != NULL
        && sscanf(version, "%d.%d.%d", &major, &minor, &patch) == 3
        && (major > 5 || (major == 5 && (minor > 3
                                         || (minor == 3 && patch >= 1)))))
    {
        *size = 0;
        return 0;
    }

    return ngx_http_malloc_je_read_size("arenas.lextent.0.size", size);
}


static int
ngx_http_malloc_je_read_size(const char *name, size_t *value)
{
    size_t  len;

    len = sizeof(*value);

    return ngx_http_malloc_mallctl(name, value, &len, NULL, 0);
}


int
ngx_http_malloc_je_stats(ngx_http_malloc_je_stats_t *st)
{
    int       rc;
    size_t    len;
    uint64_t  epoch;

    if (ngx_http_malloc_mallctl == NULL) {
        return ENOENT;
    }

    /* the stats.* values are a snapshot taken at the last epoch */

    epoch = 1;
    len = sizeof(epoch);

    rc = ngx_http_malloc_mallctl("epoch", &epoch, &len, &epoch, len);

    if (rc == 0) {
        rc = ngx_http_malloc_je_read_size("stats.allocated", &st->allocated);
    }

    if (rc == 0) {
        rc = ngx_http_malloc_je_read_size("stats.active", &st->active);
    }

    if (rc == 0) {
        rc = ngx_http_malloc_je_read_size("stats.resident", &st->resident);
    }

    if (rc == 0) {
        rc = ngx_http_malloc_je_read_size("stats.mapped", &st->mapped);
    }

    if (rc == 0) {
        rc = ngx_http_malloc_je_read_size("stats.retained", &st->retained);
    }

    if (rc == 0) {
        rc = ngx_http_malloc_je_read_size("stats.metadata", &st->metadata);
    }

    /* all arenas (4096 is MALLCTL_ARENAS_ALL); else all of it, at most */

    if (rc == 0
        && ngx_http_malloc_je_read_size("stats.arenas.4096.small.allocated",
                                        &st->small) != 0)
    {
        st->small = st->allocated;
    }

    return rc;
}


int
ngx_http_malloc_je_purge(void)
{
    if (ngx_http_malloc_mallctl == NULL) {
        return ENOENT;
    }

    /* 4096 is MALLCTL_ARENAS_ALL */

    return ngx_http_malloc_mallctl("arena.4096.purge", NULL, NULL, NULL, 0);
}


int
ngx_http_malloc_je_reset(int lg_sample)
{
    size_t  lg;

    if (ngx_http_malloc_mallctl == NULL) {
        return ENOENT;
    }

    if (lg_sample < 0) {
        return ngx_http_malloc_mallctl("prof.reset", NULL, NULL, NULL, 0);
    }

    if (lg_sample > NGX_HTTP_MALLOC_LG_SAMPLE_MAX) {
        return EINVAL;
    }

    lg = (size_t) lg_sample;

    return ngx_http_malloc_mallctl("prof.reset", NULL, NULL, &lg, sizeof(lg));
}


static void
ngx_http_malloc_je_write_fd(void *data, const char *text)
{
    int     *fd = data;
    size_t   len;
    ssize_t  n;

    len = strlen(text);

    while (len > 0 && *fd != -1) {
        n = write(*fd, text, len);

        if (n <= 0) {
            /* the caller sees a short file and reports it */
            *fd = -1;
            return;
        }

        text += n;
        len -= n;
    }
}


int
ngx_http_malloc_je_stats_json(int fd)
{
    ngx_http_malloc_stats_print_pt  print;

    if (ngx_http_malloc_mallctl == NULL) {
        return ENOENT;
    }

    print = (ngx_http_malloc_stats_print_pt) dlsym(RTLD_DEFAULT,
                                                   "malloc_stats_print");
    if (print == NULL) {
        return ENOENT;
    }

    /* "J": JSON; the rest leaves out the per-size-class tables */

    print(ngx_http_malloc_je_write_fd, &fd, "Jbla");

    return (fd == -1) ? EIO : 0;
}
