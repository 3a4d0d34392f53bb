
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * The profile pipeline: dumps in, an answer out.  Everything built here
 * lives in mmap'ed memory (arena.c), so a profile never reports its own
 * making, and all of it is unmapped by ngx_http_malloc_pipe_free(), the
 * build's part (not the answer) by ngx_http_malloc_pipe_release().  Runs
 * in a thread or in place: it touches only its own pipe and the symbol
 * cache, under the cache's mutex.  Pure C: no nginx types.
 *
 * Owns: the symbol cache of this process.  Calls: arena, heap, noise,
 * symbol, pprof, named, otlp.
 */


#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include "ngx_http_malloc_pipeline.h"
#include "ngx_http_malloc_symbol.h"
#include "ngx_http_malloc_pprof.h"
#include "ngx_http_malloc_named.h"


/* the longest dump read back, a guard against a runaway file */
#define NGX_HTTP_MALLOC_DUMP_MAX  (256 * 1024 * 1024)

/* the stacks that grew named in a comparison's comments, at most */
#define NGX_HTTP_MALLOC_PIPE_GREW  20


typedef struct {
    ngx_http_malloc_symbols_t  *syms;
    ngx_http_malloc_arena_t    *arena;
    ngx_http_malloc_map_t      *maps;
    size_t                      nmaps;
} ngx_http_malloc_resolver_t;


/* a named stack that grew, for the comments */
typedef struct {
    double                      change;
    size_t                      stack;
} ngx_http_malloc_grew_t;


static int ngx_http_malloc_pipe_fail(ngx_http_malloc_pipe_t *pl, int rc,
    const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int ngx_http_malloc_pipe_file(ngx_http_malloc_pipe_t *pl,
    const char *path, ngx_http_malloc_heap_t *heap);
static int ngx_http_malloc_pipe_open(ngx_http_malloc_pipe_t *pl,
    const char *path, int *fd, size_t *size);
static int ngx_http_malloc_pipe_load(ngx_http_malloc_pipe_t *pl,
    const char *path, unsigned char **buf, size_t *len);
static int ngx_http_malloc_pipe_view(ngx_http_malloc_pipe_t *pl,
    const char *path, const unsigned char **buf, size_t *len);
static int ngx_http_malloc_pipe_named(ngx_http_malloc_pipe_t *pl,
    ngx_http_malloc_named_t *np, const char *path, int base);
static void ngx_http_malloc_pipe_resolver(ngx_http_malloc_pipe_t *pl,
    ngx_http_malloc_heap_t *heap, ngx_http_malloc_resolver_t *rs);
static void ngx_http_malloc_pipe_lock(void);
static void ngx_http_malloc_pipe_unlock(void);
static int ngx_http_malloc_pipe_self(ngx_http_malloc_arena_t *arena,
    ngx_http_malloc_map_t **maps, size_t *nmaps);
static void ngx_http_malloc_pipe_trim(ngx_http_malloc_heap_t *heap,
    ngx_http_malloc_map_t *maps, size_t nmaps);
static int ngx_http_malloc_pipe_proto(ngx_http_malloc_pipe_t *pl,
    ngx_http_malloc_resolver_t *rs);
static int ngx_http_malloc_pipe_otlp(ngx_http_malloc_pipe_t *pl,
    ngx_http_malloc_resolver_t *rs, ngx_http_malloc_named_t *np);
static int ngx_http_malloc_pipe_json(ngx_http_malloc_pipe_t *pl,
    ngx_http_malloc_resolver_t *rs);
static int ngx_http_malloc_pipe_compare(ngx_http_malloc_pipe_t *pl,
    ngx_http_malloc_resolver_t *rs);
static int ngx_http_malloc_pipe_base(ngx_http_malloc_pipe_t *pl,
    ngx_http_malloc_named_t *np, uint32_t *which);
static void ngx_http_malloc_pipe_comments(ngx_http_malloc_pipe_t *pl,
    const ngx_http_malloc_named_t *np);
static size_t ngx_http_malloc_pipe_summary(ngx_http_malloc_pipe_t *pl,
    const ngx_http_malloc_noise_t *nz, const char **comments);
static size_t ngx_http_malloc_pipe_grown(ngx_http_malloc_pipe_t *pl,
    const ngx_http_malloc_named_t *np, ngx_http_malloc_grew_t *grew,
    const char **comments);
static char *ngx_http_malloc_pipe_grew(ngx_http_malloc_pipe_t *pl,
    const ngx_http_malloc_named_t *np, size_t i);
static int ngx_http_malloc_pipe_larger(const void *one, const void *two);
static char *ngx_http_malloc_pipe_sprintf(ngx_http_malloc_pipe_t *pl,
    const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static const char *ngx_http_malloc_pipe_resolve(void *data, uint64_t addr,
    int *map);
static const unsigned char *ngx_http_malloc_pipe_address(
    const unsigned char *p, const unsigned char *last, uint64_t *addr);


/* one per process, for its life: symbol tables are costly to load */
static ngx_http_malloc_symbols_t  *ngx_http_malloc_symbols;
static pthread_mutex_t             ngx_http_malloc_symbols_mutex =
    PTHREAD_MUTEX_INITIALIZER;


int
ngx_http_malloc_pipe_init(ngx_http_malloc_pipe_t *pl)
{
    memset(pl, 0, sizeof(ngx_http_malloc_pipe_t));

    pl->arena = ngx_http_malloc_arena_create();
    if (pl->arena == NULL) {
        return -1;
    }

    ngx_http_malloc_arena_populate(pl->arena);

    ngx_http_malloc_heap_init(&pl->base, pl->arena);
    ngx_http_malloc_heap_init(&pl->heap, pl->arena);

    return 0;
}


void
ngx_http_malloc_pipe_free(ngx_http_malloc_pipe_t *pl)
{
    ngx_http_malloc_mbuf_free(&pl->out);
    ngx_http_malloc_pipe_release(pl);
}


void
ngx_http_malloc_pipe_release(ngx_http_malloc_pipe_t *pl)
{
    if (pl->arena != NULL) {
        ngx_http_malloc_arena_destroy(pl->arena);
        pl->arena = NULL;
    }
}


static int
ngx_http_malloc_pipe_fail(ngx_http_malloc_pipe_t *pl, int rc,
    const char *fmt, ...)
{
    va_list  args;

    if (pl->rc != NGX_HTTP_MALLOC_PIPE_OK) {
        /* the first failure is the one to tell */
        return pl->rc;
    }

    pl->rc = rc;

    va_start(args, fmt);
    (void) vsnprintf(pl->error, sizeof(pl->error), fmt, args);
    va_end(args);

    return rc;
}


int
ngx_http_malloc_pipe_read(ngx_http_malloc_pipe_t *pl, char **paths, int base)
{
    char  **path;

    for (path = paths; *path != NULL; path++) {

        if (pl->rc == NGX_HTTP_MALLOC_PIPE_OK) {
            (void) ngx_http_malloc_pipe_file(pl, *path,
                                             base ? &pl->base : &pl->heap);
        }

        if (!pl->keep) {
            (void) unlink(*path);
        }
    }

    return pl->rc;
}


static int
ngx_http_malloc_pipe_file(ngx_http_malloc_pipe_t *pl, const char *path,
    ngx_http_malloc_heap_t *heap)
{
    size_t                len;
    const unsigned char  *buf;
    char                  reason[NGX_HTTP_MALLOC_HEAP_ERR_LEN];

    if (ngx_http_malloc_pipe_view(pl, path, &buf, &len) != 0) {
        return pl->rc;
    }

    if (ngx_http_malloc_heap_add(heap, buf, len, reason) != 0) {
        return ngx_http_malloc_pipe_fail(pl, NGX_HTTP_MALLOC_PIPE_PARSE,
                                         "cannot parse the dump \"%s\": %s",
                                         path, reason);
    }

    return NGX_HTTP_MALLOC_PIPE_OK;
}


/* a regular file, opened to be read: its descriptor and size */

static int
ngx_http_malloc_pipe_open(ngx_http_malloc_pipe_t *pl, const char *path,
    int *fd, size_t *size)
{
    int          err;
    struct stat  st;

    /* a FIFO put in the dump's place must not block the reader */

    *fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

    if (*fd == -1 || fstat(*fd, &st) == -1) {
        err = errno;

        if (*fd != -1) {
            (void) close(*fd);
        }

        return ngx_http_malloc_pipe_fail(pl, NGX_HTTP_MALLOC_PIPE_READ,
                                         "cannot read back the dump \"%s\": "
                                         "%s", path, strerror(err));
    }

    if (!S_ISREG(st.st_mode)) {
        (void) close(*fd);
        return ngx_http_malloc_pipe_fail(pl, NGX_HTTP_MALLOC_PIPE_READ,
                                         "the dump \"%s\" is not a regular "
                                         "file", path);
    }

    if (st.st_size > NGX_HTTP_MALLOC_DUMP_MAX) {
        (void) close(*fd);
        return ngx_http_malloc_pipe_fail(pl, NGX_HTTP_MALLOC_PIPE_READ,
                                         "the dump \"%s\" is larger than "
                                         "%d bytes", path,
                                         NGX_HTTP_MALLOC_DUMP_MAX);
    }

    *size = st.st_size;

    return NGX_HTTP_MALLOC_PIPE_OK;
}


/* a regular file's bytes, copied into the arena */

static int
ngx_http_malloc_pipe_load(ngx_http_malloc_pipe_t *pl, const char *path,
    unsigned char **buf, size_t *len)
{
    int      fd, err;
    size_t   size;
    ssize_t  n;

    *buf = NULL;
    *len = 0;

    if (ngx_http_malloc_pipe_open(pl, path, &fd, &size) != 0) {
        return pl->rc;
    }

    *buf = ngx_http_malloc_arena_alloc(pl->arena, size + 1);
    if (*buf == NULL) {
        (void) close(fd);
        return ngx_http_malloc_pipe_fail(pl, NGX_HTTP_MALLOC_PIPE_NOMEM,
                                         "out of memory while reading "
                                         "\"%s\"", path);
    }

    n = read(fd, *buf, size);
    err = errno;

    (void) close(fd);

    if (n < 0 || (size_t) n != size) {
        return ngx_http_malloc_pipe_fail(pl, NGX_HTTP_MALLOC_PIPE_READ,
                                         "short read of the dump \"%s\": %s",
                                         path, n == -1 ? strerror(err)
                                                       : "truncated");
    }

    *len = n;

    return NGX_HTTP_MALLOC_PIPE_OK;
}


/*
 * A worker's own dump, mapped rather than copied: at 50,000 stacks it is
 * some 40 MB, read once from start to end.  Only for the hidden dumps,
 * which no one else writes (a snapshot an operator could cut short while
 * it is read is copied: pipe_load).
 */

static int
ngx_http_malloc_pipe_view(ngx_http_malloc_pipe_t *pl, const char *path,
    const unsigned char **buf, size_t *len)
{
    int     fd, err;
    size_t  size;

    *buf = NULL;
    *len = 0;

    if (ngx_http_malloc_pipe_open(pl, path, &fd, &size) != 0) {
        return pl->rc;
    }

    *len = size;
    *buf = (size == 0) ? (const unsigned char *) ""
                       : ngx_http_malloc_arena_view(pl->arena, fd, size);
    err = errno;

    (void) close(fd);

    if (*buf == NULL) {
        return ngx_http_malloc_pipe_fail(pl, NGX_HTTP_MALLOC_PIPE_NOMEM,
                                         "cannot map the dump \"%s\": %s",
                                         path, strerror(err));
    }

    return NGX_HTTP_MALLOC_PIPE_OK;
}


int
ngx_http_malloc_pipe_encode(ngx_http_malloc_pipe_t *pl)
{
    int                         compare;
    ngx_http_malloc_resolver_t  rs;

    if (pl->rc != NGX_HTTP_MALLOC_PIPE_OK) {
        return pl->rc;
    }

    compare = (pl->seconds || pl->subtract);

    /* sampled counts at different rates do not compare */

    if (compare && pl->heap.period != 0 && pl->base.period != 0
        && pl->heap.period != pl->base.period)
    {
        return ngx_http_malloc_pipe_fail(pl, NGX_HTTP_MALLOC_PIPE_RATE,
                                         "the sampling interval changed "
                                         "during the growth window");
    }

    if (pl->format == NGX_HTTP_MALLOC_PIPE_V2 && !compare) {
        ngx_http_malloc_heap_write_v2(&pl->heap, NULL, 0, &pl->out);

    } else {
        ngx_http_malloc_pipe_lock();

        ngx_http_malloc_pipe_resolver(pl, &pl->heap, &rs);

        ngx_http_malloc_pipe_trim(&pl->heap, rs.maps, rs.nmaps);

        /* the viewer's JSON has room for both sides: judged as written */

        if (compare && pl->format != NGX_HTTP_MALLOC_PIPE_JSON) {
            (void) ngx_http_malloc_pipe_compare(pl, &rs);
        }

        if (pl->rc != NGX_HTTP_MALLOC_PIPE_OK) {
            /* nothing to encode */

        } else if (pl->format == NGX_HTTP_MALLOC_PIPE_V2) {
            ngx_http_malloc_heap_write_v2(&pl->heap, pl->comments,
                                          pl->ncomments, &pl->out);

        } else if (pl->format == NGX_HTTP_MALLOC_PIPE_LEGACY) {
            ngx_http_malloc_heap_write_legacy(&pl->heap, pl->comments,
                                              pl->ncomments, &pl->out);

        } else if (pl->format == NGX_HTTP_MALLOC_PIPE_JSON
                   || pl->format == NGX_HTTP_MALLOC_PIPE_OTLP)
        {
            (void) ngx_http_malloc_pipe_json(pl, &rs);

        } else {
            (void) ngx_http_malloc_pipe_proto(pl, &rs);
        }

        ngx_http_malloc_pipe_unlock();
    }

    if (pl->out.failed) {
        return ngx_http_malloc_pipe_fail(pl, NGX_HTTP_MALLOC_PIPE_NOMEM,
                                         "out of memory while writing the "
                                         "profile");
    }

    return pl->rc;
}


/*
 * The one judgement of a comparison, for the forms that hold only what
 * grew (heap_v2, the legacy text, profile.proto, OTLP): the heap and the
 * base named as pprof/heap.json names them (the same names, renamed the
 * same way), each named stack judged once, and the heap's address stacks
 * of each named stack that grew kept with its change.  Stacks differ by
 * address where pprof/heap.json sees one (several call sites in one
 * function, a module mapped elsewhere after a reload): each alone has
 * too few samples to be judged, and its base may be under another
 * address.  With the symbol cache locked, the heap trimmed.
 */

static int
ngx_http_malloc_pipe_compare(ngx_http_malloc_pipe_t *pl,
    ngx_http_malloc_resolver_t *rs)
{
    int                        rc;
    size_t                     i;
    double                    *bytes, *objs;
    uint32_t                  *which, *bwhich;
    ngx_http_malloc_keep_t     keep;
    ngx_http_malloc_named_t    np;
    ngx_http_malloc_nstack_t  *s;
    char                       err[NGX_HTTP_MALLOC_NAMED_ERR_LEN];

    ngx_http_malloc_named_init(&np, pl->arena);
    np.rename = (pl->rename != NULL) ? pl->rename
                                     : ngx_http_malloc_symbols_demangle;

    which = ngx_http_malloc_arena_alloc(pl->arena, (pl->heap.nstacks + 1)
                                                   * sizeof(uint32_t));
    bwhich = ngx_http_malloc_arena_alloc(pl->arena, (pl->base.nstacks + 1)
                                                    * sizeof(uint32_t));
    if (which == NULL || bwhich == NULL) {
        goto nomem;
    }

    if (ngx_http_malloc_named_heap_map(&np, &pl->heap, rs->maps, rs->nmaps,
                                       ngx_http_malloc_pipe_resolve, rs, 0,
                                       which, err)
        != 0)
    {
        return ngx_http_malloc_pipe_fail(pl, NGX_HTTP_MALLOC_PIPE_NOMEM,
                                         "%s", err);
    }

    if (ngx_http_malloc_pipe_base(pl, &np, bwhich) != NGX_HTTP_MALLOC_PIPE_OK
        || ngx_http_malloc_named_judge(&np) != 0)
    {
        goto nomem;
    }

    bytes = ngx_http_malloc_arena_alloc(pl->arena,
                                        (np.nstacks + 1) * sizeof(double));
    objs = ngx_http_malloc_arena_alloc(pl->arena,
                                       (np.nstacks + 1) * sizeof(double));
    if (bytes == NULL || objs == NULL) {
        goto nomem;
    }

    for (i = 0; i < np.nstacks; i++) {
        s = &np.stacks[i];

        if (np.judged[i] == 1) {
            bytes[i] = s->side[0].bytes - s->side[1].bytes;
            objs[i] = (double) s->v[1] - (double) s->base[1];

        } else {
            bytes[i] = 0;
            objs[i] = 0;
        }
    }

    keep.group = which;
    keep.base_group = bwhich;
    keep.bytes = bytes;
    keep.objs = objs;
    keep.ngroups = np.nstacks;

    rc = ngx_http_malloc_heap_keep(&pl->heap, &pl->base, &keep);

    if (rc == -1) {
        return ngx_http_malloc_pipe_fail(pl, NGX_HTTP_MALLOC_PIPE_RATE,
                                         "the sampling interval changed "
                                         "during the growth window");
    }

    if (rc != 0) {
        goto nomem;
    }

    pl->noise = np.noise;

    ngx_http_malloc_pipe_comments(pl, &np);

    return NGX_HTTP_MALLOC_PIPE_OK;

nomem:

    return ngx_http_malloc_pipe_fail(pl, NGX_HTTP_MALLOC_PIPE_NOMEM,
                                     "out of memory while comparing the "
                                     "heaps");
}


/*
 * The base into the named profile, named by its own mappings (a reload
 * may have moved a module) and trimmed as the heap is; which: as in
 * named_heap_map().  With the symbol cache locked.
 */

static int
ngx_http_malloc_pipe_base(ngx_http_malloc_pipe_t *pl,
    ngx_http_malloc_named_t *np, uint32_t *which)
{
    ngx_http_malloc_resolver_t  brs;
    char                        err[NGX_HTTP_MALLOC_NAMED_ERR_LEN];

    ngx_http_malloc_pipe_resolver(pl, &pl->base, &brs);
    ngx_http_malloc_pipe_trim(&pl->base, brs.maps, brs.nmaps);

    if (ngx_http_malloc_named_heap_map(np, &pl->base, brs.maps, brs.nmaps,
                                       ngx_http_malloc_pipe_resolve, &brs, 1,
                                       which, err)
        != 0)
    {
        return ngx_http_malloc_pipe_fail(pl, NGX_HTTP_MALLOC_PIPE_NOMEM,
                                         "%s", err);
    }

    return NGX_HTTP_MALLOC_PIPE_OK;
}


static int
ngx_http_malloc_pipe_proto(ngx_http_malloc_pipe_t *pl,
    ngx_http_malloc_resolver_t *rs)
{
    struct timespec          ts;
    ngx_http_malloc_pprof_t  pp;
    char                     err[NGX_HTTP_MALLOC_PPROF_ERR_LEN];

    (void) clock_gettime(CLOCK_REALTIME, &ts);

    memset(&pp, 0, sizeof(ngx_http_malloc_pprof_t));

    pp.heap = &pl->heap;
    pp.maps = rs->maps;
    pp.nmaps = rs->nmaps;
    pp.resolve = ngx_http_malloc_pipe_resolve;
    pp.data = rs;
    pp.time_nanos = (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
    pp.duration_nanos = (int64_t) pl->seconds * 1000000000;
    pp.arena = pl->arena;
    pp.comments = pl->comments;
    pp.ncomments = pl->ncomments;

    if (ngx_http_malloc_pprof_encode(&pp, &pl->out, err) != 0) {
        return ngx_http_malloc_pipe_fail(pl, NGX_HTTP_MALLOC_PIPE_ENCODE,
                                         "cannot encode the heap profile: "
                                         "%s", err);
    }

    return NGX_HTTP_MALLOC_PIPE_OK;
}


/*
 * What a comparison rests on and can see, in words that go tool pprof
 * -comments prints and the text forms carry as "# " lines: the
 * judgement, the net and what is shown, the detection limit, the exact
 * change and the caveat, then the named stacks that grew, the largest
 * first, each with its interval (NGX_HTTP_MALLOC_PIPE_GREW of them; the
 * JSON has every stack's margin).  In the arena; none when out of
 * memory.
 */

static void
ngx_http_malloc_pipe_comments(ngx_http_malloc_pipe_t *pl,
    const ngx_http_malloc_named_t *np)
{
    size_t                   n;
    const char             **comments;
    ngx_http_malloc_grew_t  *grew;

    comments = ngx_http_malloc_arena_alloc(pl->arena,
                                           (NGX_HTTP_MALLOC_PIPE_GREW + 7)
                                           * sizeof(char *));
    grew = ngx_http_malloc_arena_alloc(pl->arena, (np->nstacks + 1)
                                           * sizeof(ngx_http_malloc_grew_t));
    if (comments == NULL || grew == NULL) {
        return;
    }

    n = ngx_http_malloc_pipe_summary(pl, &np->noise, comments);
    n += ngx_http_malloc_pipe_grown(pl, np, grew, comments + n);

    pl->comments = comments;
    pl->ncomments = n;
}


/*
 * The comments on the whole comparison, at most 6, into "comments": the
 * judgement, why it is empty, the net, the detection limit, the exact
 * change and the caveat; how many
 */

static size_t
ngx_http_malloc_pipe_summary(ngx_http_malloc_pipe_t *pl,
    const ngx_http_malloc_noise_t *nz, const char **comments)
{
    size_t  n;
    char    line[512];

    n = 0;

    comments[n++] = ngx_http_malloc_pipe_sprintf(pl,
                        "growth: only the stacks that grew beyond sampling "
                        "noise (%.0f%% confidence for all at once; %zu of "
                        "%zu stacks, |z| >= %.2f), resting on %.0f samples "
                        "now and %.0f in the base; a stack is its "
                        "functions' names, as pprof/heap.json has it",
                        NGX_HTTP_MALLOC_NOISE_LEVEL * 100, nz->grew,
                        nz->compared, nz->z, nz->samples, nz->base_samples);

    /* an empty comparison says so, and why, before its figures */

    if (nz->grew == 0) {
        comments[n++] = (nz->compared == 0)
            ? ngx_http_malloc_pipe_sprintf(pl,
                  "empty: neither heap holds a sample (profiling was off, "
                  "or nothing sampled was allocated), so nothing can be "
                  "compared")
            : ngx_http_malloc_pipe_sprintf(pl,
                  "empty: no stack grew beyond the sampling noise, of %zu "
                  "compared (%zu of them with samples enough to show a "
                  "change at this level): a growth under the detection "
                  "limit that follows cannot be told from noise",
                  nz->compared, nz->testable);
    }

    comments[n++] = ngx_http_malloc_pipe_sprintf(pl,
                        "every stack, noise included, nets %+.0f bytes; "
                        "shown: %.0f bytes grown; not shown: %.0f bytes "
                        "shrunk beyond the noise", nz->net, nz->grown,
                        nz->shrunk);

    (void) ngx_http_malloc_noise_detection(line, sizeof(line), nz);
    comments[n++] = ngx_http_malloc_pipe_sprintf(pl, "detection: %s", line);

    if (pl->exact_of != NULL) {
        comments[n++] = ngx_http_malloc_pipe_sprintf(pl,
                            "%s changed by %+lld bytes (exact); the samples "
                            "estimate %+.0f", pl->exact_of,
                            (long long) pl->exact_change, nz->net);
    }

    if (pl->caveat != NULL) {
        comments[n++] = pl->caveat;
    }

    return n;
}


/*
 * The named stacks judged grown, the largest first, at most
 * NGX_HTTP_MALLOC_PIPE_GREW and a line for the rest, into "comments"
 * ("grew" is room for them all); how many
 */

static size_t
ngx_http_malloc_pipe_grown(ngx_http_malloc_pipe_t *pl,
    const ngx_http_malloc_named_t *np, ngx_http_malloc_grew_t *grew,
    const char **comments)
{
    size_t  n, i, ngrew;

    ngrew = 0;

    for (i = 0; i < np->nstacks; i++) {
        if (np->judged[i] == 1) {
            grew[ngrew].change = np->stacks[i].side[0].bytes
                                 - np->stacks[i].side[1].bytes;
            grew[ngrew].stack = i;
            ngrew++;
        }
    }

    qsort(grew, ngrew, sizeof(ngx_http_malloc_grew_t),
          ngx_http_malloc_pipe_larger);

    n = 0;

    for (i = 0; i < ngrew && i < NGX_HTTP_MALLOC_PIPE_GREW; i++) {
        comments[n++] = ngx_http_malloc_pipe_grew(pl, np, grew[i].stack);
    }

    if (ngrew > NGX_HTTP_MALLOC_PIPE_GREW) {
        comments[n++] = ngx_http_malloc_pipe_sprintf(pl,
                            "and %zu more stacks grew: pprof/heap.json "
                            "gives each with its margin",
                            ngrew - NGX_HTTP_MALLOC_PIPE_GREW);
    }

    return n;
}


/*
 * "grew: leaf < caller < caller's caller: +17.5 MiB, 99%: 9.0 to 26.0 MiB
 * (+18350080 +- 8912896 bytes; 35 samples now, 0 in the base)"
 */

static char *
ngx_http_malloc_pipe_grew(ngx_http_malloc_pipe_t *pl,
    const ngx_http_malloc_named_t *np, size_t i)
{
    int                              m;
    size_t                           len;
    double                           change;
    uint32_t                         k;
    const ngx_http_malloc_nstack_t  *s;
    char                             path[256], interval[96];

    s = &np->stacks[i];
    change = s->side[0].bytes - s->side[1].bytes;

    len = 0;
    path[0] = '\0';

    for (k = s->n; k > 0 && s->n - k < 3 && len < sizeof(path); k--) {
        m = snprintf(path + len, sizeof(path) - len, "%s%s",
                     (k == s->n) ? "" : " < ", np->names[s->ids[k - 1] - 1]);
        if (m < 0) {
            break;
        }

        len += (size_t) m;
    }

    (void) ngx_http_malloc_noise_interval(interval, sizeof(interval), change,
                                          np->margins[i]);

    return ngx_http_malloc_pipe_sprintf(pl, "grew: %s%s: %s (%+.0f +- %.0f "
                                        "bytes; %.0f samples now, %.0f in "
                                        "the base)", path,
                                        (k > 0) ? " < ..." : "", interval,
                                        change, np->margins[i],
                                        s->side[0].samples,
                                        s->side[1].samples);
}


/* the larger change first, then the stack first seen */

static int
ngx_http_malloc_pipe_larger(const void *one, const void *two)
{
    const ngx_http_malloc_grew_t  *a, *b;

    a = one;
    b = two;

    if (a->change != b->change) {
        return (a->change > b->change) ? -1 : 1;
    }

    return (a->stack < b->stack) ? -1 : (a->stack > b->stack);
}


static char *
ngx_http_malloc_pipe_sprintf(ngx_http_malloc_pipe_t *pl, const char *fmt,
    ...)
{
    char     *p, buf[512];
    va_list   args;

    va_start(args, fmt);
    (void) vsnprintf(buf, sizeof(buf), fmt, args);
    va_end(args);

    p = ngx_http_malloc_arena_strndup(pl->arena, buf, strlen(buf));

    return (p != NULL) ? p : (char *) "";
}


/* the dumps read, or a snapshot; against a snapshot with a base */

static int
ngx_http_malloc_pipe_json(ngx_http_malloc_pipe_t *pl,
    ngx_http_malloc_resolver_t *rs)
{
    int                          rc;
    char                       **path;
    ngx_http_malloc_mbuf_t       json;
    ngx_http_malloc_named_t      np;
    char                         err[NGX_HTTP_MALLOC_NAMED_ERR_LEN];

    ngx_http_malloc_named_init(&np, pl->arena);
    np.rename = pl->rename;

    if (pl->snapshot != NULL) {
        for (path = pl->snapshot; *path != NULL; path++) {
            if (ngx_http_malloc_pipe_named(pl, &np, *path, 0) != 0) {
                return pl->rc;
            }
        }

    } else if (ngx_http_malloc_named_heap(&np, &pl->heap, rs->maps,
                                          rs->nmaps,
                                          ngx_http_malloc_pipe_resolve, rs,
                                          0, err)
               != 0)
    {
        return ngx_http_malloc_pipe_fail(pl, NGX_HTTP_MALLOC_PIPE_NOMEM,
                                         "%s", err);
    }

    /* OTLP's heap is what the comparison kept: it has no base left */

    if ((pl->seconds || pl->subtract)
        && pl->format == NGX_HTTP_MALLOC_PIPE_JSON
        && ngx_http_malloc_pipe_base(pl, &np, NULL) != NGX_HTTP_MALLOC_PIPE_OK)
    {
        return pl->rc;
    }

    np.exact_of = pl->exact_of;
    np.exact_change = pl->exact_change;
    np.caveat = pl->caveat;

    for (path = pl->against; path != NULL && *path != NULL; path++) {
        if (ngx_http_malloc_pipe_named(pl, &np, *path, 1) != 0) {
            return pl->rc;
        }
    }

    if (np.period == 0) {
        np.period = pl->heap.period;
    }

    if (pl->format == NGX_HTTP_MALLOC_PIPE_OTLP) {
        return ngx_http_malloc_pipe_otlp(pl, rs, &np);
    }

    if (ngx_http_malloc_named_write(&np, pl->seconds, &pl->out, err) != 0) {
        return ngx_http_malloc_pipe_fail(pl, NGX_HTTP_MALLOC_PIPE_NOMEM,
                                         "%s", err);
    }

    if (np.compared) {
        pl->noise = np.noise;
    }

    if (!pl->gzip) {
        return NGX_HTTP_MALLOC_PIPE_OK;
    }

    /* JSON of 50k stacks is some megabytes: a tenth of that gzipped */

    json = pl->out;
    memset(&pl->out, 0, sizeof(ngx_http_malloc_mbuf_t));

    rc = ngx_http_malloc_pprof_gzip(pl->arena, json.data, json.len,
                                    &pl->out);
    ngx_http_malloc_mbuf_free(&json);

    if (rc != 0) {
        return ngx_http_malloc_pipe_fail(pl, NGX_HTTP_MALLOC_PIPE_NOMEM,
                                         "out of memory while gzipping "
                                         "the profile");
    }

    return NGX_HTTP_MALLOC_PIPE_OK;
}


/*
 * The named profile as an OTLP request, gzipped; with "payload", the
 * same profile as pprof goes with it: a snapshot's own file, or the
 * heap encoded as pprof/heap.pb.gz has it
 */

static int
ngx_http_malloc_pipe_otlp(ngx_http_malloc_pipe_t *pl,
    ngx_http_malloc_resolver_t *rs, ngx_http_malloc_named_t *np)
{
    int                      rc;
    ngx_http_malloc_mbuf_t   raw, pprof;
    ngx_http_malloc_otlp_t   ot;
    char                     err[NGX_HTTP_MALLOC_OTLP_ERR_LEN];

    ot = *pl->otlp;
    ot.np = np;
    ot.arena = pl->arena;

    memset(&pprof, 0, sizeof(ngx_http_malloc_mbuf_t));

    if (pl->payload && pl->snapshot == NULL) {
        if (ngx_http_malloc_pipe_proto(pl, rs) != NGX_HTTP_MALLOC_PIPE_OK) {
            return pl->rc;
        }

        pprof = pl->out;
        memset(&pl->out, 0, sizeof(ngx_http_malloc_mbuf_t));

        ot.original = pprof.data;
        ot.original_len = pprof.len;

    } else if (pl->payload && pl->original != NULL) {
        ot.original = pl->original;
        ot.original_len = pl->original_len;
    }

    memset(&raw, 0, sizeof(ngx_http_malloc_mbuf_t));

    rc = ngx_http_malloc_otlp_encode(&ot, &raw, err);
    ngx_http_malloc_mbuf_free(&pprof);

    if (rc != 0) {
        ngx_http_malloc_mbuf_free(&raw);
        return ngx_http_malloc_pipe_fail(pl, NGX_HTTP_MALLOC_PIPE_ENCODE,
                                         "cannot encode the OTLP request: "
                                         "%s", err);
    }

    rc = ngx_http_malloc_pprof_gzip(pl->arena, raw.data, raw.len, &pl->out);
    ngx_http_malloc_mbuf_free(&raw);

    if (rc != 0) {
        return ngx_http_malloc_pipe_fail(pl, NGX_HTTP_MALLOC_PIPE_NOMEM,
                                         "out of memory while gzipping "
                                         "the request");
    }

    return NGX_HTTP_MALLOC_PIPE_OK;
}


/*
 * A snapshot's file: a profile.proto (format=pprof, named already) or a
 * worker's heap_v2 dump (format=heap), named here by the symbols of the
 * files it lists.  With the symbol cache locked.
 */

static int
ngx_http_malloc_pipe_named(ngx_http_malloc_pipe_t *pl,
    ngx_http_malloc_named_t *np, const char *path, int base)
{
    size_t                      len, plen;
    unsigned char              *buf;
    ngx_http_malloc_heap_t      heap;
    ngx_http_malloc_resolver_t  rs;
    char                        err[NGX_HTTP_MALLOC_NAMED_ERR_LEN];

    if (ngx_http_malloc_pipe_load(pl, path, &buf, &len) != 0) {
        return pl->rc;
    }

    plen = strlen(path);

    if (plen > 6 && strcmp(path + plen - 6, ".pb.gz") == 0) {

        /* OTLP's original payload: the first snapshot file as it is */

        if (pl->original == NULL) {
            pl->original = buf;
            pl->original_len = len;
        }

        if (ngx_http_malloc_named_pprof(np, buf, len, base, err) != 0) {
            return ngx_http_malloc_pipe_fail(pl, NGX_HTTP_MALLOC_PIPE_PARSE,
                                             "cannot read the snapshot "
                                             "\"%s\": %s", path, err);
        }

        return NGX_HTTP_MALLOC_PIPE_OK;
    }

    ngx_http_malloc_heap_init(&heap, pl->arena);

    if (ngx_http_malloc_heap_add(&heap, buf, len, err) != 0) {
        return ngx_http_malloc_pipe_fail(pl, NGX_HTTP_MALLOC_PIPE_PARSE,
                                         "cannot parse the snapshot "
                                         "\"%s\": %s", path, err);
    }

    ngx_http_malloc_pipe_resolver(pl, &heap, &rs);
    ngx_http_malloc_pipe_trim(&heap, rs.maps, rs.nmaps);

    if (ngx_http_malloc_named_heap(np, &heap, rs.maps, rs.nmaps,
                                   ngx_http_malloc_pipe_resolve, &rs, base,
                                   err)
        != 0)
    {
        return ngx_http_malloc_pipe_fail(pl, NGX_HTTP_MALLOC_PIPE_NOMEM,
                                         "%s", err);
    }

    return NGX_HTTP_MALLOC_PIPE_OK;
}


/* a dump's mappings, their symbols loaded into the cache (locked) */

static void
ngx_http_malloc_pipe_resolver(ngx_http_malloc_pipe_t *pl,
    ngx_http_malloc_heap_t *heap, ngx_http_malloc_resolver_t *rs)
{
    rs->syms = ngx_http_malloc_symbols;
    rs->arena = pl->arena;
    rs->maps = NULL;
    rs->nmaps = 0;

    if (rs->syms != NULL && heap->maps != NULL
        && ngx_http_malloc_symbols_maps(rs->syms, pl->arena, heap->maps,
                                        heap->maps_len, &rs->maps,
                                        &rs->nmaps)
           != 0)
    {
        rs->maps = NULL;
        rs->nmaps = 0;
    }
}


/* return addresses point after the call: name the call itself */

static const char *
ngx_http_malloc_pipe_resolve(void *data, uint64_t addr, int *map)
{
    ngx_http_malloc_resolver_t *rs = data;

    *map = -1;

    if (rs->syms == NULL || addr == 0) {
        return NULL;
    }

    return ngx_http_malloc_symbols_lookup(rs->syms, rs->arena, rs->maps,
                                          rs->nmaps, addr - 1, map);
}


/*
 * jemalloc's own frames (its backtrace and malloc internals) go, as pprof
 * drops its runtime's
 */

static void
ngx_http_malloc_pipe_trim(ngx_http_malloc_heap_t *heap,
    ngx_http_malloc_map_t *maps, size_t nmaps)
{
    size_t  i;

    for (i = 0; i < nmaps; i++) {
        if (strstr(maps[i].path, "libjemalloc") != NULL) {
            ngx_http_malloc_heap_trim(heap, maps[i].start, maps[i].limit);
        }
    }
}


static void
ngx_http_malloc_pipe_lock(void)
{
    (void) pthread_mutex_lock(&ngx_http_malloc_symbols_mutex);

    if (ngx_http_malloc_symbols == NULL) {
        ngx_http_malloc_symbols = ngx_http_malloc_symbols_create();
    }
}


static void
ngx_http_malloc_pipe_unlock(void)
{
    (void) pthread_mutex_unlock(&ngx_http_malloc_symbols_mutex);
}


/*
 * This process's executable mappings, their files' symbols loaded into
 * the cache (locked by the caller); -1 when they cannot be read.
 */

static int
ngx_http_malloc_pipe_self(ngx_http_malloc_arena_t *arena,
    ngx_http_malloc_map_t **maps, size_t *nmaps)
{
    int                      fd;
    ssize_t                  n;
    ngx_http_malloc_mbuf_t   text;
    unsigned char            buf[4096];

    memset(&text, 0, sizeof(ngx_http_malloc_mbuf_t));

    fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd == -1) {
        return -1;
    }

    for ( ;; ) {
        n = read(fd, buf, sizeof(buf));

        if (n <= 0) {
            break;
        }

        ngx_http_malloc_mbuf_append(&text, buf, n);
    }

    (void) close(fd);

    if (n == -1 || text.failed || ngx_http_malloc_symbols == NULL
        || ngx_http_malloc_symbols_maps(ngx_http_malloc_symbols, arena,
                                        (char *) text.data, text.len,
                                        maps, nmaps)
           != 0)
    {
        ngx_http_malloc_mbuf_free(&text);
        return -1;
    }

    ngx_http_malloc_mbuf_free(&text);

    return 0;
}


/*
 * The symbol protocol of jeprof and go tool pprof: names each address
 * that lies in a mapping of this process (all workers share the
 * master's).  What is not an address is skipped.
 */

int
ngx_http_malloc_pipe_symbols(ngx_http_malloc_pipe_t *pl,
    const unsigned char *body, size_t len)
{
    int                     map;
    size_t                  nmaps;
    uint64_t                addr;
    const char             *name;
    const unsigned char    *p, *last;
    ngx_http_malloc_map_t  *maps;

    ngx_http_malloc_pipe_lock();

    if (ngx_http_malloc_pipe_self(pl->arena, &maps, &nmaps) != 0) {
        ngx_http_malloc_pipe_unlock();
        return ngx_http_malloc_pipe_fail(pl, NGX_HTTP_MALLOC_PIPE_SYMBOLS,
                                         "cannot read this process's "
                                         "mappings");
    }

    p = body;
    last = body + len;

    while (p < last) {
        p = ngx_http_malloc_pipe_address(p, last, &addr);

        if (p == NULL) {
            break;
        }

        name = ngx_http_malloc_symbols_lookup(ngx_http_malloc_symbols,
                                              pl->arena, maps, nmaps, addr,
                                              &map);
        if (name != NULL) {
            ngx_http_malloc_mbuf_printf(&pl->out, "0x%016llx\t%s\n",
                                        (unsigned long long) addr, name);
        }
    }

    ngx_http_malloc_pipe_unlock();

    if (pl->out.failed) {
        return ngx_http_malloc_pipe_fail(pl, NGX_HTTP_MALLOC_PIPE_NOMEM,
                                         "out of memory while naming "
                                         "addresses");
    }

    return NGX_HTTP_MALLOC_PIPE_OK;
}


/*
 * The next address of "0x1a2b+0x3c4d ..." (separators '+', space, CR,
 * LF; at most 16 hex digits); NULL when none is left.
 */

static const unsigned char *
ngx_http_malloc_pipe_address(const unsigned char *p,
    const unsigned char *last, uint64_t *addr)
{
    int                   digit;
    const unsigned char  *start;

    while (p < last) {

        if (*p == '+' || *p == ' ' || *p == '\n' || *p == '\r') {
            p++;
            continue;
        }

        if (last - p > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
            p += 2;
        }

        start = p;
        *addr = 0;

        while (p < last && p - start < 16) {
            digit = (*p >= '0' && *p <= '9') ? *p - '0'
                    : (*p >= 'a' && *p <= 'f') ? *p - 'a' + 10
                    : (*p >= 'A' && *p <= 'F') ? *p - 'A' + 10 : -1;

            if (digit < 0) {
                break;
            }

            *addr = (*addr << 4) | (uint64_t) digit;
            p++;
        }

        if (p > start && (p == last || *p == '+' || *p == '\n'
                          || *p == '\r' || *p == ' '))
        {
            return p;
        }

        /* not an address: skip to the next separator */

        while (p < last && *p != '+' && *p != ' ' && *p != '\n'
               && *p != '\r')
        {
            p++;
        }
    }

    return NULL;
}


int
ngx_http_malloc_pipe_write(char **paths, ngx_http_malloc_pipe_base_t *base,
    const char *out, char *err, size_t len)
{
    int                      fd, rc;
    size_t                   written;
    ssize_t                  n;
    ngx_http_malloc_pipe_t   pl;

    if (ngx_http_malloc_pipe_init(&pl) != 0) {
        (void) snprintf(err, len, "out of memory");
        return NGX_HTTP_MALLOC_PIPE_NOMEM;
    }

    pl.format = NGX_HTTP_MALLOC_PIPE_PROTO;

    if (base != NULL) {
        pl.subtract = 1;
        pl.exact_of = base->exact_of;
        pl.exact_change = base->exact_change;
        (void) ngx_http_malloc_pipe_read(&pl, base->paths, 1);
    }

    if (ngx_http_malloc_pipe_read(&pl, paths, 0) != NGX_HTTP_MALLOC_PIPE_OK
        || ngx_http_malloc_pipe_encode(&pl) != NGX_HTTP_MALLOC_PIPE_OK)
    {
        (void) snprintf(err, len, "%s", pl.error);
        goto done;
    }

    fd = open(out, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd == -1) {
        (void) ngx_http_malloc_pipe_fail(&pl, NGX_HTTP_MALLOC_PIPE_WRITE,
                                         "cannot create \"%s\": %s", out,
                                         strerror(errno));
        (void) snprintf(err, len, "%s", pl.error);
        goto done;
    }

    /*
     * a short write is the file system filling up: write on until all of
     * it is written or write() says why not (ENOSPC); a file cut short is
     * never left to be named
     */

    for (written = 0; written < pl.out.len; written += n) {
        n = write(fd, pl.out.data + written, pl.out.len - written);

        if (n == -1 && errno == EINTR) {
            n = 0;
            continue;
        }

        if (n <= 0) {
            (void) ngx_http_malloc_pipe_fail(&pl, NGX_HTTP_MALLOC_PIPE_WRITE,
                                             "cannot write \"%s\" (%zu of "
                                             "%zu bytes written): %s", out,
                                             written, pl.out.len,
                                             strerror(n == 0 ? ENOSPC
                                                             : errno));
            (void) close(fd);
            (void) unlink(out);
            (void) snprintf(err, len, "%s", pl.error);
            goto done;
        }
    }

    if (close(fd) == -1) {
        (void) ngx_http_malloc_pipe_fail(&pl, NGX_HTTP_MALLOC_PIPE_WRITE,
                                         "cannot write \"%s\": %s", out,
                                         strerror(errno));
        (void) unlink(out);
        (void) snprintf(err, len, "%s", pl.error);
    }

done:

    rc = pl.rc;

    ngx_http_malloc_pipe_free(&pl);

    return rc;
}


void
ngx_http_malloc_pipe_preload(void (*unreadable)(void *data,
    const char *path), void *data)
{
    size_t                    i, nmaps;
    ngx_http_malloc_map_t    *maps;
    ngx_http_malloc_arena_t  *arena;

    arena = ngx_http_malloc_arena_create();
    if (arena == NULL) {
        return;
    }

    ngx_http_malloc_pipe_lock();

    if (ngx_http_malloc_pipe_self(arena, &maps, &nmaps) != 0) {
        unreadable(data, "/proc/self/maps");
        nmaps = 0;
    }

    for (i = 0; i < nmaps; i++) {
        if (maps[i].file == -1
            && (i == 0 || strcmp(maps[i].path, maps[i - 1].path) != 0))
        {
            unreadable(data, maps[i].path);
        }
    }

    ngx_http_malloc_pipe_unlock();

    ngx_http_malloc_arena_destroy(arena);
}


/* the API's error code for a result */

const char *
ngx_http_malloc_pipe_code(int rc)
{
    switch (rc) {

    case NGX_HTTP_MALLOC_PIPE_NOMEM:
        return "out_of_memory";

    case NGX_HTTP_MALLOC_PIPE_ENCODE:
        return "encode_failed";

    case NGX_HTTP_MALLOC_PIPE_SYMBOLS:
        return "symbols_unavailable";

    default:
        return "dump_failed";
    }
}
