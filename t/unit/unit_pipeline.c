
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * Unit tests for the profile pipeline (ngx_http_malloc_pipeline.c),
 * through its public API only: workers' dumps written to a directory of
 * our own, read (and removed), merged, subtracted, trimmed of the
 * allocator's frames, encoded in the three formats; the symbol protocol
 * on this program's own functions; the profile written to a file; the
 * symbols preloaded; and each failure with its result code.
 */


#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "tap.h"
#include "ngx_http_malloc_pipeline.h"


#define STR(s)  (s), sizeof(s) - 1

/*
 * The maps of a worker: nginx, and jemalloc at a place of its own whose
 * file does not exist (its frames are dropped all the same)
 */
#define MAPS                                                                  \
    "00400000-00452000 r-xp 00000000 08:02 173521      /usr/sbin/nginx\n"    \
    "7f0000000000-7f0000100000 r-xp 00000000 08:02 4242        "             \
    "/nonexistent/libjemalloc.so.2\n"

/* the allocator's two frames, then nginx's */
#define JE_STACK  "@ 0x7f0000000100 0x7f0000000200 0x401000 0x402000\n"

/* worker 0: a named thread, two stacks */
#define DUMP_A                                                                \
    "heap_v2/524288\n"                                                        \
    "  t*: 6: 3072 [10: 5120]\n"                                              \
    "  t0: 6: 3072 [10: 5120] nginx: worker process\n"                        \
    JE_STACK                                                                  \
    "  t*: 4: 2048 [6: 3072]\n"                                               \
    "  t0: 4: 2048 [6: 3072]\n"                                               \
    "@ 0x401100\n"                                                            \
    "  t*: 2: 1024 [4: 2048]\n"                                               \
    "  t0: 2: 1024 [4: 2048]\n"                                               \
    "\n"                                                                      \
    "MAPPED_LIBRARIES:\n"                                                     \
    MAPS

/* worker 1: shares the first stack of worker 0, has one of its own */
#define DUMP_B                                                                \
    "heap_v2/524288\n"                                                        \
    "  t*: 3: 1536 [3: 1536]\n"                                               \
    JE_STACK                                                                  \
    "  t*: 1: 512 [1: 512]\n"                                                 \
    "@ 0x403000\n"                                                            \
    "  t*: 2: 1024 [2: 1024]\n"                                               \
    "\n"                                                                      \
    "MAPPED_LIBRARIES:\n"                                                     \
    MAPS

/* A and B merged, as heap.c writes heap_v2: the frames untouched */
#define MERGED_V2                                                             \
    "heap_v2/524288\n"                                                        \
    "  t*: 9: 4608 [13: 6656]\n"                                              \
    JE_STACK                                                                  \
    "  t*: 5: 2560 [7: 3584]\n"                                               \
    "@ 0x401100\n"                                                            \
    "  t*: 2: 1024 [4: 2048]\n"                                               \
    "@ 0x403000\n"                                                            \
    "  t*: 2: 1024 [2: 1024]\n"                                               \
    "\n"                                                                      \
    "MAPPED_LIBRARIES:\n"                                                     \
    MAPS

/* the same in gperftools' text, jemalloc's frames dropped */
#define MERGED_LEGACY                                                         \
    "heap profile: 9: 4608 [13: 6656] @ heap_v2/524288\n"                     \
    "5: 2560 [7: 3584] @ 0x401000 0x402000\n"                                 \
    "2: 1024 [4: 2048] @ 0x401100\n"                                          \
    "2: 1024 [2: 1024] @ 0x403000\n"                                          \
    "\n"                                                                      \
    "MAPPED_LIBRARIES:\n"                                                     \
    MAPS

/*
 * A + B - B, judged to be sampling noise: no stack, and the comparison
 * in comments that jeprof passes over
 */
#define NOISE_V2                                                              \
    "heap_v2/524288\n"                                                        \
    "  t*: 0: 0 [0: 0]\n"                                                     \
    "# growth: only the stacks that grew beyond sampling noise (99% "         \
    "confidence for all at once; 0 of 3 stacks, |z| >= 2.58), resting on 9 "  \
    "samples now and 3 in the base; a stack is its functions' names, as "     \
    "pprof/heap.json has it\n"                                                \
    "# empty: no stack grew beyond the sampling noise, of 3 compared (0 of "  \
    "them with samples enough to show a change at this level): a growth "    \
    "under the detection limit that follows cannot be told from noise\n"     \
    "# every stack, noise included, nets +3147264 bytes; shown: 0 bytes "     \
    "grown; not shown: 0 bytes shrunk beyond the noise\n"                     \
    "# detection: with 9 samples now and 3 in the base, a change of small "   \
    "blocks under 4.3 MiB cannot be told from noise; growth is seen from "    \
    "4.3 MiB in a stack that held nothing, from 8.0 MiB in one that held "    \
    "them all\n"                                                              \
    "\n"                                                                      \
    "MAPPED_LIBRARIES:\n"                                                     \
    MAPS

/* sampled at every byte: does not subtract from DUMP_A */
#define DUMP_P1                                                               \
    "heap_v2/1\n"                                                             \
    "  t*: 1: 16 [1: 16]\n"                                                   \
    "@ 0x401100\n"                                                            \
    "  t*: 1: 16 [1: 16]\n"


typedef ngx_http_malloc_pipe_t  pipe_t;


typedef struct {
    int          calls;
    int          mine;      /* calls for the file of test_preload */
    const char  *path;
} preload_t;


void unit_pipeline_exported(void);
static char *at(char *buf, const char *name);
static void put(const char *path, const char *text, size_t len);
static int exists(const char *path);
static int mapped(const char *path);
static char *text_of(const ngx_http_malloc_mbuf_t *b);
static int has(const void *data, size_t len, const char *s);
static unsigned char *gunzip(const unsigned char *data, size_t len,
    size_t *olen);
static unsigned char *slurp(const char *path, size_t *len);
static void fresh(pipe_t *pl);
static void unreadable(void *data, const char *path);
static void test_read(void);
static void test_formats(void);
static void test_proto_names(void);
static void sites(const char *path, const unsigned char *maps, size_t mlen,
    unsigned each, unsigned churn);
static void judged(int format, const unsigned char *maps, size_t mlen,
    pipe_t *pl);
static void test_one_judgement(void);
static void test_growth(void);
static void test_errors(void);
static void test_rate(void);
static void test_codes(void);
static void test_symbols(void);
static void test_write(void);
static void test_write_base(void);
static void test_write_short(void);
static void test_preload(void);


static volatile int  unit_pipeline_calls;
static char          dir[64];


/* a global function of the program, named by its .symtab */

void __attribute__((noinline))
unit_pipeline_exported(void)
{
    unit_pipeline_calls++;
    unit_pipeline_calls *= 7;
}


/* "name" in our directory, into buf of PATH_MAX */

static char *
at(char *buf, const char *name)
{
    snprintf(buf, PATH_MAX, "%s/%s", dir, name);

    return buf;
}


static void
put(const char *path, const char *text, size_t len)
{
    int  fd;

    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

    if (fd == -1 || write(fd, text, len) != (ssize_t) len || close(fd) != 0)
    {
        fprintf(stderr, "cannot write %s: %s\n", path, strerror(errno));
        abort();
    }
}


/* whether this process maps the file once at path (removed or not) */

static int
mapped(const char *path)
{
    int    found;
    FILE  *f;
    char   line[PATH_MAX + 128];

    f = fopen("/proc/self/maps", "r");
    if (f == NULL) {
        return -1;
    }

    found = 0;

    while (fgets(line, sizeof(line), f) != NULL) {
        if (strstr(line, path) != NULL) {
            found = 1;
        }
    }

    fclose(f);

    return found;
}


static int
exists(const char *path)
{
    struct stat  st;

    return lstat(path, &st) == 0;
}


/* the mbuf's bytes as a string; free() it */

static char *
text_of(const ngx_http_malloc_mbuf_t *b)
{
    char  *s;

    s = malloc(b->len + 1);
    if (s == NULL) {
        abort();
    }

    if (b->len != 0) {
        memcpy(s, b->data, b->len);
    }

    s[b->len] = '\0';

    return s;
}


static int
has(const void *data, size_t len, const char *s)
{
    return data != NULL && memmem(data, len, s, strlen(s)) != NULL;
}


/* a gzip stream inflated whole; NULL when it is not one; free() it */

static unsigned char *
gunzip(const unsigned char *data, size_t len, size_t *olen)
{
    int             rc;
    size_t          cap;
    z_stream        zs;
    unsigned char  *buf, *p;

    cap = 64 * 1024;
    buf = malloc(cap);
    if (buf == NULL) {
        abort();
    }

    memset(&zs, 0, sizeof(z_stream));

    if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) {
        abort();
    }

    zs.next_in = (unsigned char *) data;
    zs.avail_in = len;
    *olen = 0;

    for ( ;; ) {
        zs.next_out = buf + *olen;
        zs.avail_out = cap - *olen;

        rc = inflate(&zs, Z_NO_FLUSH);
        *olen = cap - zs.avail_out;

        if (rc == Z_STREAM_END) {
            break;
        }

        if (rc != Z_OK || zs.avail_in == 0) {
            inflateEnd(&zs);
            free(buf);
            return NULL;
        }

        if (zs.avail_out == 0) {
            cap *= 2;
            p = realloc(buf, cap);
            if (p == NULL) {
                abort();
            }

            buf = p;
        }
    }

    inflateEnd(&zs);

    return buf;
}


/* a whole file, /proc's too; NULL when it cannot be read; free() it */

static unsigned char *
slurp(const char *path, size_t *len)
{
    int             fd;
    size_t          cap;
    ssize_t         n;
    unsigned char  *buf, *p;

    fd = open(path, O_RDONLY);
    if (fd == -1) {
        return NULL;
    }

    cap = 64 * 1024;
    buf = malloc(cap);
    *len = 0;

    for ( ;; ) {
        if (buf == NULL) {
            abort();
        }

        n = read(fd, buf + *len, cap - *len);

        if (n <= 0) {
            break;
        }

        *len += n;

        if (*len == cap) {
            cap *= 2;
            p = realloc(buf, cap);
            if (p == NULL) {
                free(buf);
            }

            buf = p;
        }
    }

    close(fd);

    if (n == -1) {
        free(buf);
        return NULL;
    }

    return buf;
}


static void
fresh(pipe_t *pl)
{
    if (ngx_http_malloc_pipe_init(pl) != 0) {
        abort();
    }
}


static void
test_read(void)
{
    char    a[PATH_MAX], b[PATH_MAX], *paths[3], *text;
    pipe_t  pl;

    fresh(&pl);

    put(at(a, "a.heap"), STR(DUMP_A));
    put(at(b, "b.heap"), STR(DUMP_B));

    paths[0] = a;
    paths[1] = b;
    paths[2] = NULL;

    if (!is_int(ngx_http_malloc_pipe_read(&pl, paths, 0),
                NGX_HTTP_MALLOC_PIPE_OK, "read: two dumps"))
    {
        diag("%s", pl.error);
    }

    is_str(pl.error, "", "read: no error");
    ok(!exists(a) && !exists(b), "read: both dumps removed");
    is_int(mapped(a), 1, "read: a dump mapped, not copied, while it is used");
    is_int((long) pl.heap.nstacks, 3, "read: stacks merged into the heap");
    is_int((long) pl.base.nstacks, 0, "read: the base untouched");
    is_int((long) pl.heap.period, 524288, "read: the period");

    is_int(ngx_http_malloc_pipe_encode(&pl), NGX_HTTP_MALLOC_PIPE_OK,
           "read: encoded");

    /* the build's memory given back where it ran: the answer stays */

    ngx_http_malloc_pipe_release(&pl);
    ok(pl.arena == NULL, "read: released");
    is_int(mapped(a) + mapped(b), 0, "read: the dumps unmapped when released");
    is_int(pl.rc, NGX_HTTP_MALLOC_PIPE_OK, "read: released, still a success");

    text = text_of(&pl.out);
    is_str(text, MERGED_V2, "read: the merged heap_v2, counts added");
    free(text);

    ngx_http_malloc_pipe_free(&pl);
    ngx_http_malloc_pipe_free(&pl);
    ok(pl.arena == NULL && pl.out.data == NULL, "read: freed, twice");

    /* no paths at all: nothing read, an empty profile */

    fresh(&pl);

    paths[0] = NULL;

    is_int(ngx_http_malloc_pipe_read(&pl, paths, 0),
           NGX_HTTP_MALLOC_PIPE_OK, "read: no dumps");
    is_int(ngx_http_malloc_pipe_encode(&pl), NGX_HTTP_MALLOC_PIPE_OK,
           "read: no dumps encoded");

    text = text_of(&pl.out);
    is_str(text, "heap_v2/1\n  t*: 0: 0 [0: 0]\n",
           "read: no dumps, an empty heap_v2");
    free(text);

    ngx_http_malloc_pipe_free(&pl);
}


static void
test_formats(void)
{
    char            a[PATH_MAX], b[PATH_MAX], *paths[3], *text;
    size_t          len;
    pipe_t          pl;
    unsigned char  *proto;

    paths[0] = a;
    paths[1] = b;
    paths[2] = NULL;

    /* gperftools' legacy text: jemalloc's frames dropped */

    fresh(&pl);

    put(at(a, "a.heap"), STR(DUMP_A));
    put(at(b, "b.heap"), STR(DUMP_B));

    pl.format = NGX_HTTP_MALLOC_PIPE_LEGACY;

    ngx_http_malloc_pipe_read(&pl, paths, 0);

    is_int(ngx_http_malloc_pipe_encode(&pl), NGX_HTTP_MALLOC_PIPE_OK,
           "legacy: encoded");

    text = text_of(&pl.out);
    ok(strncmp(text, "heap profile: ", 14) == 0, "legacy: header");
    is_str(text, MERGED_LEGACY, "legacy: the allocator's frames dropped");
    free(text);

    ngx_http_malloc_pipe_free(&pl);

    /* profile.proto, gzipped */

    fresh(&pl);

    put(a, STR(DUMP_A));
    put(b, STR(DUMP_B));

    pl.format = NGX_HTTP_MALLOC_PIPE_PROTO;

    ngx_http_malloc_pipe_read(&pl, paths, 0);

    if (!is_int(ngx_http_malloc_pipe_encode(&pl), NGX_HTTP_MALLOC_PIPE_OK,
                "proto: encoded"))
    {
        diag("%s", pl.error);
    }

    ok(pl.out.len > 2 && pl.out.data[0] == 0x1f && pl.out.data[1] == 0x8b,
       "proto: gzip magic");

    proto = gunzip(pl.out.data, pl.out.len, &len);

    ok(proto != NULL, "proto: inflates");
    ok(has(proto, len, "inuse_space") && has(proto, len, "alloc_space"),
       "proto: the sample types, alloc_* too");
    ok(has(proto, len, "/usr/sbin/nginx"), "proto: the mapping's file");

    free(proto);
    ngx_http_malloc_pipe_free(&pl);
}


/*
 * A dump whose maps are this process's: the profile names the frames
 * (return addresses, one past the call) by this program's symbols.
 */

static void
test_proto_names(void)
{
    char            a[PATH_MAX], *paths[2], *text, *p;
    size_t          len, mlen;
    pipe_t          pl;
    unsigned char  *maps, *proto;

    maps = slurp("/proc/self/maps", &mlen);
    if (maps == NULL) {
        abort();
    }

    text = malloc(mlen + 256);
    if (text == NULL) {
        abort();
    }

    p = text + sprintf(text, "heap_v2/524288\n  t*: 1: 64 [1: 64]\n"
                       "@ 0x%llx\n  t*: 1: 64 [1: 64]\n\n"
                       "MAPPED_LIBRARIES:\n",
                       (unsigned long long) (uintptr_t)
                           unit_pipeline_exported + 1);
    memcpy(p, maps, mlen);

    put(at(a, "self.heap"), text, p - text + mlen);

    paths[0] = a;
    paths[1] = NULL;

    fresh(&pl);

    pl.format = NGX_HTTP_MALLOC_PIPE_PROTO;

    if (!is_int(ngx_http_malloc_pipe_read(&pl, paths, 0),
                NGX_HTTP_MALLOC_PIPE_OK, "names: a dump with our maps"))
    {
        diag("%s", pl.error);
    }

    is_int(ngx_http_malloc_pipe_encode(&pl), NGX_HTTP_MALLOC_PIPE_OK,
           "names: encoded");

    proto = gunzip(pl.out.data, pl.out.len, &len);

    ok(has(proto, len, "unit_pipeline_exported"),
       "names: the frame named after our function");

    free(proto);
    free(text);
    free(maps);
    ngx_http_malloc_pipe_free(&pl);
}


/*
 * A dump of this process: one function reached from two call sites
 * (return addresses 1 and 9 bytes into unit_pipeline_exported), "each"
 * samples of 128-byte blocks each, and "churn" samples of a stack at an
 * address nothing maps
 */

static void
sites(const char *path, const unsigned char *maps, size_t mlen,
    unsigned each, unsigned churn)
{
    char       *text, *p;
    uintptr_t   f;

    text = malloc(mlen + 512);
    if (text == NULL) {
        abort();
    }

    f = (uintptr_t) unit_pipeline_exported;

    p = text + sprintf(text, "heap_v2/524288\n  t*: %u: %u [0: 0]\n"
                       "@ 0x%llx\n  t*: %u: %u [0: 0]\n"
                       "@ 0x%llx\n  t*: %u: %u [0: 0]\n"
                       "@ 0x10\n  t*: %u: %u [0: 0]\n\n"
                       "MAPPED_LIBRARIES:\n",
                       2 * each + churn, 128 * (2 * each + churn),
                       (unsigned long long) f + 1, each, 128 * each,
                       (unsigned long long) f + 9, each, 128 * each,
                       churn, 128 * churn);
    memcpy(p, maps, mlen);

    put(path, text, p - text + mlen);

    free(text);
}


/* the sites' growth, 8 samples to 32, beside a churn of 32 to 40 */

static void
judged(int format, const unsigned char *maps, size_t mlen, pipe_t *pl)
{
    char   a[PATH_MAX], b[PATH_MAX], *paths[2];

    sites(at(a, "sites.heap"), maps, mlen, 16, 40);
    sites(at(b, "sites-base.heap"), maps, mlen, 4, 32);

    fresh(pl);

    pl->format = format;
    pl->seconds = 30;

    paths[1] = NULL;
    paths[0] = b;
    (void) ngx_http_malloc_pipe_read(pl, paths, 1);
    paths[0] = a;
    (void) ngx_http_malloc_pipe_read(pl, paths, 0);

    if (ngx_http_malloc_pipe_encode(pl) != NGX_HTTP_MALLOC_PIPE_OK) {
        diag("%s", pl->error);
    }
}


/*
 * Each call site alone rests on too few samples to be told from noise
 * (4 to 16); their function does (8 to 32).  The JSON, the legacy text,
 * profile.proto and heap_v2 say the same: one stack grew, by the same
 * bytes, with the same detection limit, and the text forms keep both
 * call sites with the growth between them.
 */

static void
test_one_judgement(void)
{
    char            *text, site[32];
    size_t           mlen, len, i;
    pipe_t           json, legacy, proto, v2;
    uint64_t         samples;
    unsigned char   *maps, *gz;
    const char      *p;

    maps = slurp("/proc/self/maps", &mlen);
    if (maps == NULL) {
        abort();
    }

    judged(NGX_HTTP_MALLOC_PIPE_JSON, maps, mlen, &json);
    judged(NGX_HTTP_MALLOC_PIPE_LEGACY, maps, mlen, &legacy);
    judged(NGX_HTTP_MALLOC_PIPE_PROTO, maps, mlen, &proto);
    judged(NGX_HTTP_MALLOC_PIPE_V2, maps, mlen, &v2);

    ok(json.rc == 0 && legacy.rc == 0 && proto.rc == 0 && v2.rc == 0,
       "one judgement: every form encoded");
    is_int((long) json.noise.grew, 1, "one judgement: the function grew");
    ok(json.noise.compared == 2 && json.noise.shrank == 0,
       "one judgement: two stacks by name, the function and the churn");
    ok(legacy.noise.grew == json.noise.grew
       && proto.noise.grew == json.noise.grew
       && v2.noise.grew == json.noise.grew
       && legacy.noise.compared == json.noise.compared,
       "one judgement: every form counts the same");
    ok(legacy.noise.grown == json.noise.grown
       && proto.noise.grown == json.noise.grown
       && legacy.noise.net == json.noise.net
       && legacy.noise.limit == json.noise.limit
       && legacy.noise.floor == json.noise.floor
       && json.noise.limit > json.noise.floor && json.noise.floor > 0,
       "one judgement: the same bytes grown, net and detection limit");

    /* the JSON's verdict, and the legacy text's stacks */

    text = text_of(&json.out);
    ok(strstr(text, "\"significant\":[1,0]") != NULL
       || strstr(text, "\"significant\":[0,1]") != NULL,
       "one judgement: the JSON's verdicts");
    ok(strstr(text, "\"detection\":\"with 72 samples now and 40 in the "
              "base, a change of small blocks under ") != NULL,
       "one judgement: the JSON's detection limit in words");
    free(text);

    text = text_of(&legacy.out);
    samples = 0;

    for (i = 0; i < 2; i++) {
        snprintf(site, sizeof(site), "] @ 0x%llx\n",
                 (unsigned long long) (uintptr_t) unit_pipeline_exported
                 + (i ? 9 : 1));
        p = strstr(text, site);
        ok(p != NULL, "one judgement: call site %zu kept", i + 1);

        while (p != NULL && p > text && p[-1] != '\n') {
            p--;
        }

        samples += (p != NULL) ? strtoull(p, NULL, 10) : 0;
    }

    is_int((long) samples, 24, "one judgement: the growth between them");
    ok(strstr(text, "@ 0x10\n") == NULL, "one judgement: not the churn");
    ok(strstr(text, "\n# detection: with 72 samples now and 40 in the "
              "base") != NULL, "one judgement: the text says its limit");
    ok(strstr(text, "\n# grew: unit_pipeline_exported: +") != NULL,
       "one judgement: and the function's interval");
    free(text);

    text = text_of(&v2.out);
    ok(strstr(text, "\n# detection: ") != NULL
       && strstr(text, "  t*: 24: 3072 [0: 0]\n# ") != NULL,
       "one judgement: heap_v2 too, its totals the growth");
    free(text);

    gz = gunzip(proto.out.data, proto.out.len, &len);
    ok(has(gz, len, "grew: unit_pipeline_exported: +")
       && has(gz, len, "detection: with 72 samples now"),
       "one judgement: profile.proto's comments");
    free(gz);

    ngx_http_malloc_pipe_free(&json);
    ngx_http_malloc_pipe_free(&legacy);
    ngx_http_malloc_pipe_free(&proto);
    ngx_http_malloc_pipe_free(&v2);
    free(maps);
}


static void
test_growth(void)
{
    char    a[PATH_MAX], b[PATH_MAX], c[PATH_MAX], *paths[3], *text;
    pipe_t  pl;

    /* the start of the window: B; its end: A and B */

    fresh(&pl);

    put(at(a, "a.heap"), STR(DUMP_A));
    put(at(b, "b.heap"), STR(DUMP_B));
    put(at(c, "base.heap"), STR(DUMP_B));

    paths[0] = c;
    paths[1] = NULL;

    is_int(ngx_http_malloc_pipe_read(&pl, paths, 1), NGX_HTTP_MALLOC_PIPE_OK,
           "growth: base read");
    ok(!exists(c), "growth: base dump removed");
    is_int((long) pl.base.nstacks, 2, "growth: into the base");
    is_int((long) pl.heap.nstacks, 0, "growth: not into the heap");

    paths[0] = a;
    paths[1] = b;
    paths[2] = NULL;

    is_int(ngx_http_malloc_pipe_read(&pl, paths, 0), NGX_HTTP_MALLOC_PIPE_OK,
           "growth: heap read");

    pl.seconds = 30;

    is_int(ngx_http_malloc_pipe_encode(&pl), NGX_HTTP_MALLOC_PIPE_OK,
           "growth: encoded");

    /*
     * A grew by 6 samples at the default rate: within the noise, so the
     * growth profile is empty, and the comparison says what it rests on
     */

    text = text_of(&pl.out);
    is_str(text, NOISE_V2, "growth: a few samples more is sampling noise");
    free(text);

    ok(pl.noise.compared == 3 && pl.noise.grew == 0
       && fabs(pl.noise.samples - 9) < 1e-6
       && fabs(pl.noise.base_samples - 3) < 1e-6,
       "growth: the comparison's samples counted");

    ngx_http_malloc_pipe_free(&pl);

    /* without seconds the base is not subtracted */

    fresh(&pl);

    put(a, STR(DUMP_A));
    put(b, STR(DUMP_B));
    put(c, STR(DUMP_B));

    paths[0] = c;
    paths[1] = NULL;
    ngx_http_malloc_pipe_read(&pl, paths, 1);

    paths[0] = a;
    paths[1] = b;
    ngx_http_malloc_pipe_read(&pl, paths, 0);

    is_int(ngx_http_malloc_pipe_encode(&pl), NGX_HTTP_MALLOC_PIPE_OK,
           "growth: no seconds, encoded");

    text = text_of(&pl.out);
    is_str(text, MERGED_V2, "growth: no seconds, the whole heap");
    free(text);

    ngx_http_malloc_pipe_free(&pl);
}


static void
test_errors(void)
{
    char         a[PATH_MAX], b[PATH_MAX], g[PATH_MAX], m[PATH_MAX];
    char         d[PATH_MAX], l[PATH_MAX], e[PATH_MAX], *paths[4];
    pipe_t       pl;
    const char  *garbage = "not a heap profile\n";

    /* a missing dump: the later ones are still removed */

    fresh(&pl);

    put(at(a, "a.heap"), STR(DUMP_A));
    put(at(b, "b.heap"), STR(DUMP_B));
    at(m, "missing.heap");

    paths[0] = m;
    paths[1] = a;
    paths[2] = b;
    paths[3] = NULL;

    is_int(ngx_http_malloc_pipe_read(&pl, paths, 0),
           NGX_HTTP_MALLOC_PIPE_READ, "missing: read fails");
    is_int(pl.rc, NGX_HTTP_MALLOC_PIPE_READ, "missing: kept in rc");

    if (!ok(strstr(pl.error, m) != NULL
            && strstr(pl.error, "No such file") != NULL,
            "missing: the error names the path and why"))
    {
        diag("error: %s", pl.error);
    }

    ok(!exists(a) && !exists(b), "missing: the later dumps removed");
    is_str(ngx_http_malloc_pipe_code(pl.rc), "dump_failed",
           "missing: dump_failed");

    is_int(ngx_http_malloc_pipe_encode(&pl), NGX_HTTP_MALLOC_PIPE_READ,
           "missing: encode keeps the failure");
    is_int((long) pl.out.len, 0, "missing: no answer");

    ngx_http_malloc_pipe_free(&pl);

    /* not heap_v2 */

    fresh(&pl);

    put(at(g, "garbage.heap"), garbage, strlen(garbage));

    paths[0] = g;
    paths[1] = NULL;

    is_int(ngx_http_malloc_pipe_read(&pl, paths, 0),
           NGX_HTTP_MALLOC_PIPE_PARSE, "garbage: refused");

    if (!ok(strstr(pl.error, g) != NULL
            && strstr(pl.error, "not a heap_v2 dump") != NULL,
            "garbage: the error names the path and the parser's reason"))
    {
        diag("error: %s", pl.error);
    }

    ok(!exists(g), "garbage: removed");

    ngx_http_malloc_pipe_free(&pl);

    /* an empty file is no dump either */

    fresh(&pl);

    put(at(e, "empty.heap"), "", 0);

    paths[0] = e;
    paths[1] = NULL;

    is_int(ngx_http_malloc_pipe_read(&pl, paths, 0),
           NGX_HTTP_MALLOC_PIPE_PARSE, "empty: refused");
    ok(!exists(e), "empty: removed");

    ngx_http_malloc_pipe_free(&pl);

    /* two workers sampling at different rates do not merge */

    fresh(&pl);

    put(a, STR(DUMP_A));
    put(b, STR(DUMP_P1));

    paths[0] = a;
    paths[1] = b;
    paths[2] = NULL;

    is_int(ngx_http_malloc_pipe_read(&pl, paths, 0),
           NGX_HTTP_MALLOC_PIPE_PARSE, "periods: refused while merging");
    ok(!exists(a) && !exists(b), "periods: both removed");

    ngx_http_malloc_pipe_free(&pl);

    /* the first failure is the one kept, over reads and encode */

    fresh(&pl);

    put(g, garbage, strlen(garbage));
    put(a, STR(DUMP_A));
    put(b, STR(DUMP_B));

    paths[0] = g;
    paths[1] = m;
    paths[2] = a;
    paths[3] = NULL;

    is_int(ngx_http_malloc_pipe_read(&pl, paths, 1),
           NGX_HTTP_MALLOC_PIPE_PARSE, "first: the garbage fails first");
    ok(strstr(pl.error, g) != NULL && strstr(pl.error, m) == NULL,
       "first: the error is the garbage's");

    paths[0] = b;
    paths[1] = NULL;

    is_int(ngx_http_malloc_pipe_read(&pl, paths, 0),
           NGX_HTTP_MALLOC_PIPE_PARSE, "first: a later read reports it");
    ok(!exists(g) && !exists(a) && !exists(b),
       "first: every dump removed all the same");
    is_int((long) pl.heap.nstacks, 0, "first: nothing read after it");

    pl.format = NGX_HTTP_MALLOC_PIPE_PROTO;

    is_int(ngx_http_malloc_pipe_encode(&pl), NGX_HTTP_MALLOC_PIPE_PARSE,
           "first: encode reports it");
    ok(strstr(pl.error, g) != NULL, "first: with its error");
    is_int((long) pl.out.len, 0, "first: no answer");

    ngx_http_malloc_pipe_free(&pl);

    /* a directory is no dump, and is not removed */

    fresh(&pl);

    at(d, "dir.heap");

    if (mkdir(d, 0700) != 0) {
        abort();
    }

    paths[0] = d;
    paths[1] = NULL;

    is_int(ngx_http_malloc_pipe_read(&pl, paths, 0),
           NGX_HTTP_MALLOC_PIPE_READ, "directory: refused");
    ok(strstr(pl.error, d) != NULL, "directory: named");
    ok(exists(d), "directory: not removed");

    rmdir(d);
    ngx_http_malloc_pipe_free(&pl);

    /* a FIFO in a dump's place neither blocks the reader nor is read */

    fresh(&pl);

    at(d, "fifo.heap");

    if (mkfifo(d, 0600) != 0) {
        abort();
    }

    paths[0] = d;
    paths[1] = NULL;

    is_int(ngx_http_malloc_pipe_read(&pl, paths, 0),
           NGX_HTTP_MALLOC_PIPE_READ, "fifo: refused at once");
    ok(strstr(pl.error, "not a regular file") != NULL, "fifo: says why");
    ok(!exists(d), "fifo: removed as any dump of the profile");

    unlink(d);
    ngx_http_malloc_pipe_free(&pl);

    /* a symbolic link is not followed: the link goes, its target stays */

    fresh(&pl);

    put(a, STR(DUMP_A));
    at(l, "link.heap");

    if (symlink(a, l) != 0) {
        abort();
    }

    paths[0] = l;
    paths[1] = NULL;

    is_int(ngx_http_malloc_pipe_read(&pl, paths, 0),
           NGX_HTTP_MALLOC_PIPE_READ, "symlink: not followed");
    ok(!exists(l) && exists(a), "symlink: the link removed, not its target");

    unlink(a);
    ngx_http_malloc_pipe_free(&pl);
}


static void
test_rate(void)
{
    char    a[PATH_MAX], c[PATH_MAX], *paths[2];
    pipe_t  pl;

    fresh(&pl);

    put(at(c, "base.heap"), STR(DUMP_P1));
    put(at(a, "a.heap"), STR(DUMP_A));

    paths[1] = NULL;

    paths[0] = c;
    is_int(ngx_http_malloc_pipe_read(&pl, paths, 1), NGX_HTTP_MALLOC_PIPE_OK,
           "rate: a base sampled at every byte");

    paths[0] = a;
    is_int(ngx_http_malloc_pipe_read(&pl, paths, 0), NGX_HTTP_MALLOC_PIPE_OK,
           "rate: a heap sampled at 512 KiB");

    pl.seconds = 10;

    is_int(ngx_http_malloc_pipe_encode(&pl), NGX_HTTP_MALLOC_PIPE_RATE,
           "rate: they do not subtract");
    ok(strstr(pl.error, "sampling interval changed") != NULL,
       "rate: the error says why");
    is_int((long) pl.out.len, 0, "rate: no answer");
    is_str(ngx_http_malloc_pipe_code(pl.rc), "dump_failed",
           "rate: dump_failed");

    ngx_http_malloc_pipe_free(&pl);

    /* the same without a window: the base is not used */

    fresh(&pl);

    put(c, STR(DUMP_P1));
    put(a, STR(DUMP_A));

    paths[0] = c;
    ngx_http_malloc_pipe_read(&pl, paths, 1);
    paths[0] = a;
    ngx_http_malloc_pipe_read(&pl, paths, 0);

    is_int(ngx_http_malloc_pipe_encode(&pl), NGX_HTTP_MALLOC_PIPE_OK,
           "rate: no window, no subtraction");

    ngx_http_malloc_pipe_free(&pl);
}


static void
test_codes(void)
{
    is_str(ngx_http_malloc_pipe_code(NGX_HTTP_MALLOC_PIPE_READ),
           "dump_failed", "code: read");
    is_str(ngx_http_malloc_pipe_code(NGX_HTTP_MALLOC_PIPE_PARSE),
           "dump_failed", "code: parse");
    is_str(ngx_http_malloc_pipe_code(NGX_HTTP_MALLOC_PIPE_RATE),
           "dump_failed", "code: rate");
    is_str(ngx_http_malloc_pipe_code(NGX_HTTP_MALLOC_PIPE_WRITE),
           "dump_failed", "code: write");
    is_str(ngx_http_malloc_pipe_code(NGX_HTTP_MALLOC_PIPE_NOMEM),
           "out_of_memory", "code: nomem");
    is_str(ngx_http_malloc_pipe_code(NGX_HTTP_MALLOC_PIPE_ENCODE),
           "encode_failed", "code: encode");
    is_str(ngx_http_malloc_pipe_code(NGX_HTTP_MALLOC_PIPE_SYMBOLS),
           "symbols_unavailable", "code: symbols");
}


static void
test_symbols(void)
{
    char                 body[512], want[512], *text;
    void                *libc;
    pipe_t               pl;
    unsigned long long   fn, pf;

    fn = (unsigned long long) (uintptr_t) unit_pipeline_exported;

    /* jeprof's request: an address, then what is none */

    fresh(&pl);

    snprintf(body, sizeof(body), "0x%llx+0xzz+garbage+0x0", fn + 1);

    is_int(ngx_http_malloc_pipe_symbols(&pl, (unsigned char *) body,
                                        strlen(body)),
           NGX_HTTP_MALLOC_PIPE_OK, "symbols: garbage does not fail");
    is_int(pl.rc, NGX_HTTP_MALLOC_PIPE_OK, "symbols: no failure kept");

    snprintf(want, sizeof(want), "0x%016llx\tunit_pipeline_exported\n",
             fn + 1);

    text = text_of(&pl.out);
    is_str(text, want, "symbols: our function named, the rest skipped");
    free(text);

    ngx_http_malloc_pipe_free(&pl);

    /*
     * the other separators, upper case and no 0x; more than 16 digits,
     * a digit glued to a name and an address nothing maps are no names
     */

    fresh(&pl);

    snprintf(body, sizeof(body), "0X%llX\r\n%llx 0x0%016llx 0x%llxg+0x10"
             "+0x123456789abcdef01234\n", fn, fn + 2, fn, fn);

    is_int(ngx_http_malloc_pipe_symbols(&pl, (unsigned char *) body,
                                        strlen(body)),
           NGX_HTTP_MALLOC_PIPE_OK, "symbols: separators");

    snprintf(want, sizeof(want),
             "0x%016llx\tunit_pipeline_exported\n"
             "0x%016llx\tunit_pipeline_exported\n", fn, fn + 2);

    text = text_of(&pl.out);
    is_str(text, want, "symbols: two addresses, in order");
    free(text);

    ngx_http_malloc_pipe_free(&pl);

    /* nothing asked, nothing answered */

    fresh(&pl);

    is_int(ngx_http_malloc_pipe_symbols(&pl, (unsigned char *) "", 0),
           NGX_HTTP_MALLOC_PIPE_OK, "symbols: an empty body");
    is_int((long) pl.out.len, 0, "symbols: an empty answer");

    is_int(ngx_http_malloc_pipe_symbols(&pl, (unsigned char *) "+ 0x", 4),
           NGX_HTTP_MALLOC_PIPE_OK, "symbols: separators and 0x alone");
    is_int((long) pl.out.len, 0, "symbols: still an empty answer");

    ngx_http_malloc_pipe_free(&pl);

    /* a shared library's function */

    libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
    ok(libc != NULL, "symbols: libc is loaded");

    if (libc == NULL) {
        return;
    }

    pf = (unsigned long long) (uintptr_t) dlsym(libc, "printf");

    fresh(&pl);

    snprintf(body, sizeof(body), "0x%llx", pf);

    ngx_http_malloc_pipe_symbols(&pl, (unsigned char *) body, strlen(body));

    snprintf(want, sizeof(want), "0x%016llx\tprintf\n", pf);

    text = text_of(&pl.out);
    is_str(text, want, "symbols: libc's printf");
    free(text);

    ngx_http_malloc_pipe_free(&pl);
    dlclose(libc);
}


/* a written growth: against a base of the same dumps nothing grew */

static void
test_write_base(void)
{
    int                           rc;
    char                          a[PATH_MAX], b[PATH_MAX], o[PATH_MAX];
    char                         *paths[2], *bases[2];
    char                          err[NGX_HTTP_MALLOC_PIPE_ERR_LEN];
    size_t                        len, plen;
    unsigned char                *data, *proto;
    ngx_http_malloc_pipe_base_t   base;

    put(at(a, "now.heap"), STR(DUMP_A));
    put(at(b, "then.heap"), STR(DUMP_A));
    at(o, "growth.pb.gz");

    paths[0] = a;
    paths[1] = NULL;
    bases[0] = b;
    bases[1] = NULL;

    base.paths = bases;
    base.exact_of = "the test's bytes";
    base.exact_change = 4096;

    rc = ngx_http_malloc_pipe_write(paths, &base, o, err, sizeof(err));

    if (!is_int(rc, NGX_HTTP_MALLOC_PIPE_OK, "write base: written")) {
        diag("%s", err);
    }

    ok(!exists(a) && !exists(b), "write base: both dumps removed");

    data = slurp(o, &len);
    proto = (data != NULL) ? gunzip(data, len, &plen) : NULL;

    ok(has(proto, plen, "all at once; 0 of 2 stacks"),
       "write base: nothing grew of the two stacks");
    ok(has(proto, plen, "growth: only the stacks that grew beyond "
           "sampling noise"), "write base: the comparison in a comment");
    ok(has(proto, plen, "the test's bytes changed by +4096 bytes (exact)"),
       "write base: the exact figure beside it");

    free(proto);
    free(data);
    (void) unlink(o);
}


static void
test_write(void)
{
    int             rc;
    char            a[PATH_MAX], b[PATH_MAX], o[PATH_MAX], x[PATH_MAX];
    char            l[PATH_MAX], t[PATH_MAX], m[PATH_MAX], *paths[3];
    char            err[NGX_HTTP_MALLOC_PIPE_ERR_LEN];
    size_t          len, plen;
    struct stat     st;
    unsigned char  *data, *proto, *again;

    put(at(a, "a.heap"), STR(DUMP_A));
    put(at(b, "b.heap"), STR(DUMP_B));
    at(o, "profile.pb.gz");

    paths[0] = a;
    paths[1] = b;
    paths[2] = NULL;

    err[0] = '\0';

    rc = ngx_http_malloc_pipe_write(paths, NULL, o, err, sizeof(err));

    if (!is_int(rc, NGX_HTTP_MALLOC_PIPE_OK, "write: written")) {
        diag("%s", err);
    }

    is_str(err, "", "write: no error");
    ok(!exists(a) && !exists(b), "write: the dumps removed");

    data = slurp(o, &len);

    ok(data != NULL && len > 2 && data[0] == 0x1f && data[1] == 0x8b,
       "write: a gzip file");

    proto = (data != NULL) ? gunzip(data, len, &plen) : NULL;
    ok(has(proto, plen, "inuse_space"), "write: a profile.proto in it");

    ok(stat(o, &st) == 0 && (st.st_mode & 0777) == 0600,
       "write: readable by its owner only");

    free(proto);

    /* never over a file that is there */

    put(a, STR(DUMP_A));
    put(b, STR(DUMP_B));

    rc = ngx_http_malloc_pipe_write(paths, NULL, o, err, sizeof(err));

    is_int(rc, NGX_HTTP_MALLOC_PIPE_WRITE, "write: an existing file refused");

    if (!ok(strstr(err, o) != NULL && strstr(err, "File exists") != NULL,
            "write: the error names it"))
    {
        diag("error: %s", err);
    }

    ok(!exists(a) && !exists(b), "write: refused, the dumps removed");

    again = slurp(o, &plen);
    ok(data != NULL && again != NULL && plen == len
       && memcmp(again, data, len) == 0, "write: the file there untouched");

    free(again);
    free(data);

    /* nor through a symbolic link */

    put(a, STR(DUMP_A));
    at(t, "target");
    at(l, "link.pb.gz");

    if (symlink(t, l) != 0) {
        abort();
    }

    paths[1] = NULL;

    is_int(ngx_http_malloc_pipe_write(paths, NULL, l, err, sizeof(err)),
           NGX_HTTP_MALLOC_PIPE_WRITE, "write: a symbolic link refused");
    ok(!exists(t), "write: nothing created where it points");

    unlink(l);

    /* a dump that fails: its error, no file */

    put(b, STR(DUMP_B));
    at(m, "missing.heap");
    at(x, "never.pb.gz");

    paths[0] = m;
    paths[1] = b;

    is_int(ngx_http_malloc_pipe_write(paths, NULL, x, err, sizeof(err)),
           NGX_HTTP_MALLOC_PIPE_READ, "write: a missing dump");
    ok(strstr(err, m) != NULL, "write: the error names the dump");
    ok(!exists(x), "write: no file");
    ok(!exists(b), "write: the other dump removed");

    /* the error cut to the buffer */

    paths[0] = m;
    paths[1] = NULL;

    memset(err, 'x', sizeof(err));

    is_int(ngx_http_malloc_pipe_write(paths, NULL, x, err, 16),
           NGX_HTTP_MALLOC_PIPE_READ, "write: a short error buffer");
    is_int((long) strlen(err), 15, "write: the error cut, NUL-terminated");
    ok(err[16] == 'x', "write: nothing past the buffer");

    unlink(o);
}


/*
 * A disk that fills in the middle of the file: a file size limit gives
 * the same short write, then an error, without a full file system.
 */

static void
test_write_short(void)
{
    int             rc;
    char            a[PATH_MAX], o[PATH_MAX], *paths[2];
    char            err[NGX_HTTP_MALLOC_PIPE_ERR_LEN];
    void          (*was)(int);
    struct rlimit   rl, low;

    put(at(a, "short.heap"), STR(DUMP_A));
    at(o, "short.pb.gz");

    paths[0] = a;
    paths[1] = NULL;

    if (getrlimit(RLIMIT_FSIZE, &rl) != 0) {
        abort();
    }

    /* beyond the limit, write() fails with EFBIG and raises SIGXFSZ */

    was = signal(SIGXFSZ, SIG_IGN);

    low = rl;
    low.rlim_cur = 100;

    if (setrlimit(RLIMIT_FSIZE, &low) != 0) {
        abort();
    }

    err[0] = '\0';
    rc = ngx_http_malloc_pipe_write(paths, NULL, o, err, sizeof(err));

    (void) setrlimit(RLIMIT_FSIZE, &rl);
    (void) signal(SIGXFSZ, was);

    is_int(rc, NGX_HTTP_MALLOC_PIPE_WRITE, "short write: an error");

    if (!ok(strstr(err, "(100 of ") != NULL
            && strstr(err, "File too large") != NULL,
            "short write: the error says how much and why"))
    {
        diag("error: %s", err);
    }

    ok(!exists(o), "short write: no file cut short left");
    ok(!exists(a), "short write: the dump removed");
}


static void
unreadable(void *data, const char *path)
{
    preload_t  *pr = data;

    pr->calls++;

    if (pr->path != NULL && strcmp(path, pr->path) == 0) {
        pr->mine++;

    } else {
        diag("preload: unreadable %s", path);
    }
}


/*
 * Every file this program maps is readable, but for one that it maps
 * here: the kernel writes the newline in its name as "\012", and no file
 * has the name that the maps show.
 */

static void
test_preload(void)
{
    int          fd;
    char         f[PATH_MAX], real[PATH_MAX], shown[PATH_MAX + 16];
    void        *p;
    preload_t    pr;
    const char  *text = "no ELF here\n";

    memset(&pr, 0, sizeof(preload_t));

    put(at(f, "code\nbin"), text, strlen(text));

    p = MAP_FAILED;
    fd = open(f, O_RDONLY);

    /* the maps name the file by its real path */

    if (fd != -1 && realpath(dir, real) != NULL) {
        p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
    }

    if (p == MAP_FAILED) {
        diag("cannot map %s executable: %s", f, strerror(errno));

    } else {
        snprintf(shown, sizeof(shown), "%s/code\\012bin", real);
        pr.path = shown;
    }

    ngx_http_malloc_pipe_preload(unreadable, &pr);

    if (pr.path != NULL) {
        is_int(pr.mine, 1, "preload: the file of another name, once");

    } else {
        ok(1, "preload: no executable mapping here, skipped");
    }

    is_int(pr.calls - pr.mine, 0, "preload: every other file read");

    /* again: the cache changes nothing */

    pr.calls = 0;
    pr.mine = 0;

    ngx_http_malloc_pipe_preload(unreadable, &pr);

    ok(pr.mine == (pr.path != NULL) && pr.calls == pr.mine,
       "preload: again, the same");

    if (p != MAP_FAILED) {
        munmap(p, 4096);
    }

    if (fd != -1) {
        close(fd);
    }

    unlink(f);
}


int
main(void)
{
    const char  *tmp;

    tmp = getenv("TMPDIR");

    snprintf(dir, sizeof(dir), "%s/unit_pipeline.XXXXXX",
             (tmp != NULL && strlen(tmp) < 32) ? tmp : "/tmp");

    if (mkdtemp(dir) == NULL) {
        fprintf(stderr, "mkdtemp(%s): %s\n", dir, strerror(errno));
        return 1;
    }

    test_read();
    test_formats();
    test_proto_names();
    test_growth();
    test_one_judgement();
    test_errors();
    test_rate();
    test_codes();
    test_symbols();
    test_write();
    test_write_base();
    test_write_short();
    test_preload();

    if (!ok(rmdir(dir) == 0, "every file removed")) {
        diag("rmdir(%s): %s", dir, strerror(errno));
    }

    return done_testing();
}
