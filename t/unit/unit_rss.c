
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * Unit tests for the parts of RSS (ngx_http_malloc_rss.c): synthetic
 * smaps text, as Linux 6 writes it, fed whole, byte by byte and cut
 * anywhere; hostile input (cut lines, huge numbers, nonsense) must
 * saturate and never overflow.  Every buffer handed to the code under
 * test is allocated to its exact size, so that ASan reports any read past
 * the end.  The mappings that grew (ngx_http_malloc_maps.c) through the
 * same parser: no change must name none, as hard as a change names it.
 */


#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "tap.h"
#include "ngx_http_malloc_rss.h"


#define KB    1024ULL
#define MB    (1024ULL * 1024)


/* a mapping of smaps: its header, its Rss in kB, and the fields around */
#define MAP(range, perms, path, rss)                                          \
    range " " perms " 00000000 00:00 0          " path "\n"                   \
    "Size:              10240 kB\n"                                        \
    "KernelPageSize:        4 kB\n"                                        \
    "Rss:      " rss " kB\n"                                               \
    "Pss:      " rss " kB\n"                                               \
    "Anonymous:             0 kB\n"                                        \
    "THPeligible:           0\n"                                           \
    "VmFlags: rd wr mr mw me ac \n"


/* a worker: code, data, jemalloc's memory, two zones, the event shm */
static const char  *worker_smaps =
    MAP("5613406d8000-5613406fb000", "r--p", "/usr/sbin/nginx", "140")
    MAP("5613406fb000-5613407bb000", "r-xp", "/usr/sbin/nginx", "340")
    MAP("5613407f5000-56134080d000", "rw-p", "/usr/sbin/nginx", "96")
    MAP("56134080d000-56134082c000", "rw-p", "", "20")
    MAP("561341000000-561341200000", "rw-p", "[heap]", "8")
    MAP("7f79fd400000-7f79fd500000", "rw-p", "", "700")
    MAP("7f79fd600000-7f79fe000000", "rw-s", "/dev/zero (deleted)", "12")
    MAP("7f79fe000000-7f79fe800000", "rw-p", "", "916")
    MAP("7f79fea9b000-7f79feb3e000", "rw-s", "/dev/zero (deleted)", "64")
    MAP("7f79feb3e000-7f79feb4e000", "r--p",
        "/usr/lib/x86_64-linux-gnu/libm.so.6", "64")
    MAP("7f79ff819000-7f79ff81a000", "rw-s", "/dev/zero (deleted)", "4")
    MAP("7f79ff81c000-7f79ff820000", "r--p", "[vvar]", "0")
    MAP("7f79ff822000-7f79ff824000", "r-xp", "[vdso]", "8")
    MAP("7f79ff830000-7f79ff840000", "rw-s", "/var/cache/x.db", "16")
    MAP("7f79ff840000-7f79ff850000", "rw-p", "[anon:lua]", "32")
    MAP("7ffe3a83b000-7ffe3a85c000", "rw-p", "[stack]", "132")
    MAP("ffffffffff600000-ffffffffff601000", "--xp", "[vsyscall]", "0");

/* the worker's zones: the 10m one, the board */
static const ngx_http_malloc_rss_range_t  worker_zones[] = {
    { 0x7f79fd600000, 10 * MB },
    { 0x7f79fea9b000, 0xa3000 }
};


static void feed_cut(const char *text, size_t cut,
    const ngx_http_malloc_rss_range_t *ranges, size_t nranges,
    const ngx_http_malloc_je_stats_t *je, ngx_http_malloc_rss_t *out);
static uint64_t sum_parts(const ngx_http_malloc_rss_t *r);
static void test_worker(void);
static void test_pieces(void);
static void test_clamp(void);
static void test_hostile(void);
static void test_huge(void);
static void test_read(void);
static void test_outside(void);
static void test_sentence(void);
static void test_untouched(void);
static int status(const char *text, ngx_http_malloc_rss_kernel_t *k);
static void test_status(void);
static void test_rebase(void);
static void maps_feed(const char *text, size_t piece,
    const ngx_http_malloc_rss_range_t *ranges, size_t nranges,
    ngx_http_malloc_maps_base_t *base, ngx_http_malloc_maps_t *top);
static char *maps_many(size_t n, const char *extra);
static void test_maps_same(void);
static void test_maps_grown(void);
static void test_maps_merged(void);
static void test_maps_split(void);
static void test_maps_replaced(void);
static void test_maps_top(void);
static void test_maps_bounded(void);
static void test_maps_hostile(void);
static void test_maps_text(void);


/* a baseline is big: one for every test */
static ngx_http_malloc_maps_base_t  base;


/* fed in two pieces cut at "cut" (0: whole), each an exact copy */

static void
feed_cut(const char *text, size_t cut,
    const ngx_http_malloc_rss_range_t *ranges, size_t nranges,
    const ngx_http_malloc_je_stats_t *je, ngx_http_malloc_rss_t *out)
{
    char                          *a, *b;
    size_t                         len;
    ngx_http_malloc_rss_parser_t   p;

    len = strlen(text);

    if (cut > len) {
        cut = len;
    }

    a = malloc(cut + 1);
    b = malloc(len - cut + 1);
    memcpy(a, text, cut);
    memcpy(b, text + cut, len - cut);

    ngx_http_malloc_rss_init(&p, ranges, nranges);
    ngx_http_malloc_rss_feed(&p, a, cut);
    ngx_http_malloc_rss_feed(&p, b, len - cut);
    ngx_http_malloc_rss_done(&p, je, out);

    free(a);
    free(b);
}


static uint64_t
sum_parts(const ngx_http_malloc_rss_t *r)
{
    int       k;
    uint64_t  sum;

    sum = 0;

    for (k = 0; k < NGX_HTTP_MALLOC_RSS_PARTS; k++) {
        sum += ngx_http_malloc_rss_part(r, k);
    }

    return sum;
}


static void
test_worker(void)
{
    ngx_http_malloc_rss_t       r;
    ngx_http_malloc_je_stats_t  je;

    memset(&je, 0, sizeof(je));
    je.allocated = 1200 * KB;
    je.resident = 1500 * KB;

    feed_cut(worker_smaps, 0, worker_zones, 2, &je, &r);

    is_int((long) r.mappings, 17, "worker: 17 mappings");
    is_int((long) r.flawed, 0, "worker: no flawed line");
    is_int((long) r.rss, (long) (2552 * KB), "worker: rss is every Rss");
    is_int((long) sum_parts(&r), (long) r.rss, "worker: the parts add up");
    is_int((long) r.nzones, 2, "worker: two zones");
    is_int((long) r.zone[0], (long) (12 * KB), "zone 0: its 12 kB");
    is_int((long) r.zone[1], (long) (64 * KB), "zone 1: the board's 64 kB");
    is_int((long) r.shared_zones, (long) (76 * KB), "shared_zones: both");
    is_int((long) r.other_shared, (long) (4 * KB),
           "other_shared: the unnamed /dev/zero (deleted), the event shm");
    is_int((long) r.stack, (long) (132 * KB), "stack: [stack]");
    is_int((long) r.file, (long) (140 + 340 + 96 + 64 + 8 + 16) * KB,
           "file: code, data, a shared file, [vdso]");
    is_int((long) r.allocated, (long) (1200 * KB), "allocated: jemalloc's");
    is_int((long) r.allocator_overhead, (long) (300 * KB),
           "allocator_overhead: resident minus allocated");
    /* anonymous: 20 + 8 + 700 + 916 + 32 */
    is_int((long) r.other_anonymous, (long) ((1676 - 1500) * KB),
           "other_anonymous: the anonymous Rss that is not jemalloc's");

    feed_cut(worker_smaps, 0, NULL, 0, &je, &r);
    is_int((long) r.shared_zones, 0, "no ranges: no zone");
    is_int((long) r.other_shared, (long) (80 * KB),
           "no ranges: every shared anonymous mapping in other_shared");
    is_int((long) sum_parts(&r), (long) r.rss, "no ranges: parts add up");

    feed_cut(worker_smaps, 0, worker_zones, 2, NULL, &r);
    is_int((long) r.allocated + (long) r.allocator_overhead, 0,
           "no jemalloc figures: nothing is the allocator's");
    is_int((long) r.other_anonymous, (long) (1676 * KB),
           "no jemalloc figures: all anonymous is other");
}


static void
test_pieces(void)
{
    size_t                         i, len, bad;
    ngx_http_malloc_rss_t          whole, r;
    ngx_http_malloc_rss_parser_t   p;
    ngx_http_malloc_je_stats_t     je;
    char                           c;

    memset(&je, 0, sizeof(je));
    je.allocated = 1000 * KB;
    je.resident = 1400 * KB;

    feed_cut(worker_smaps, 0, worker_zones, 2, &je, &whole);

    len = strlen(worker_smaps);
    bad = 0;

    for (i = 1; i < len; i += 7) {
        feed_cut(worker_smaps, i, worker_zones, 2, &je, &r);
        bad += (memcmp(&r, &whole, sizeof(r)) != 0);
    }

    is_int((long) bad, 0, "cut anywhere: the same parts");

    ngx_http_malloc_rss_init(&p, worker_zones, 2);

    for (i = 0; i < len; i++) {
        c = worker_smaps[i];
        ngx_http_malloc_rss_feed(&p, &c, 1);
    }

    ngx_http_malloc_rss_done(&p, &je, &r);
    ok(memcmp(&r, &whole, sizeof(r)) == 0, "byte by byte: the same parts");

    /* no newline at the end: the last line still counts */
    feed_cut(MAP("1000-2000", "rw-p", "", "4") "Rss: 8 kB", 0, NULL, 0,
             NULL, &r);
    is_int((long) r.rss, (long) (12 * KB),
           "a last line without a newline counts");
}


/*
 * jemalloc's resident counts untouched pages of its extents: above what
 * the kernel holds, it is clamped, and the parts still add up to Rss.
 */

static void
test_clamp(void)
{
    ngx_http_malloc_rss_t       r;
    ngx_http_malloc_je_stats_t  je;

    memset(&je, 0, sizeof(je));
    je.allocated = 900 * MB;
    je.resident = 1000 * MB;

    feed_cut(worker_smaps, 0, worker_zones, 2, &je, &r);

    is_int((long) (r.allocated + r.allocator_overhead), (long) (1676 * KB),
           "clamp: the allocator's share is at most the anonymous Rss");
    is_int((long) r.allocator_overhead, 0,
           "clamp: allocated fills it, no overhead left");
    is_int((long) r.other_anonymous, 0, "clamp: no other anonymous");
    is_int((long) sum_parts(&r), (long) r.rss, "clamp: the parts add up");

    je.allocated = 2000 * MB;
    je.resident = 100 * KB;
    feed_cut(worker_smaps, 0, worker_zones, 2, &je, &r);
    is_int((long) r.allocated, (long) (100 * KB),
           "allocated above resident: clamped to resident");
    is_int((long) sum_parts(&r), (long) r.rss,
           "allocated above resident: the parts add up");
}


static void
test_hostile(void)
{
    ngx_http_malloc_rss_t  r;
    char                   big[2000];

    feed_cut("Rss: 100 kB\n", 0, NULL, 0, NULL, &r);
    is_int((long) r.rss, 0, "Rss before any mapping: not counted");
    is_int((long) r.flawed, 1, "and flawed");

    feed_cut("1000-\nRss: 4 kB\n", 0, NULL, 0, NULL, &r);
    is_int((long) r.rss, 0, "a cut header: its Rss is not counted");
    is_int((long) r.flawed, 2, "two flawed lines");

    feed_cut("2000-1000 rw-p 0 00:00 0\nRss: 4 kB\n", 0, NULL, 0, NULL, &r);
    is_int((long) r.rss, 0, "end before start: not a mapping");

    feed_cut("1000-2000 rw-x 0 00:00 0\nRss: 4 kB\n", 0, NULL, 0, NULL,
             &r);
    is_int((long) r.rss, 0, "no p or s: not a mapping");

    feed_cut("1000-2000 rw-p 0\nRss: 4 kB\n", 0, NULL, 0, NULL, &r);
    is_int((long) r.rss, 0, "missing fields: not a mapping");

    feed_cut("11111111111111111-2000 rw-p 0 00:00 0\nRss: 4 kB\n", 0, NULL,
             0, NULL, &r);
    is_int((long) r.rss, 0, "17 hex digits: not an address");

    feed_cut("1000-2000 rw-p 0 00:00 0\nRss: -4 kB\nRss:\nRss: x\n", 0,
             NULL, 0, NULL, &r);
    is_int((long) r.rss, 0, "Rss that is no number: not counted");
    is_int((long) r.flawed, 3, "each flawed");

    feed_cut(MAP("1000-2000", "rw-p", "", "4") "\n\n\0garbage\n", 0, NULL,
             0, NULL, &r);
    is_int((long) r.rss, (long) (4 * KB), "empty lines and garbage: ignored");

    /* a path far longer than the line buffer */
    memset(big, 'x', sizeof(big));
    memcpy(big, "1000-2000 rw-s 0 00:00 0 /dev/zero", 34);
    memcpy(big + sizeof(big) - 13, "\nRss: 8 kB\n", 12);
    feed_cut(big, 700, NULL, 0, NULL, &r);
    is_int((long) r.other_shared, (long) (8 * KB),
           "an overlong line: its start tells the kind");
    is_int((long) r.mappings, 1, "and it is one mapping");
}


static void
test_huge(void)
{
    int                            i;
    ngx_http_malloc_rss_t          r;
    ngx_http_malloc_rss_parser_t   p;
    ngx_http_malloc_je_stats_t     je;
    static const char              huge[] =
        "1000-2000 rw-p 0 00:00 0\n"
        "Rss: 99999999999999999999999999999999 kB\n";
    static const char              zone[] =
        "7000-8000 rw-s 0 00:01 1 /dev/zero (deleted)\n"
        "Rss: 18446744073709551615 kB\n";
    static const ngx_http_malloc_rss_range_t  end[] = {
        { UINTPTR_MAX - 10, 100 },
        { 0x7000, 0x1000 }
    };

    feed_cut(huge, 0, NULL, 0, NULL, &r);
    ok(r.rss == NGX_HTTP_MALLOC_RSS_MAX, "a huge Rss saturates");
    ok(r.other_anonymous == NGX_HTTP_MALLOC_RSS_MAX,
       "and so does its part");

    ngx_http_malloc_rss_init(&p, end, 2);

    for (i = 0; i < 5; i++) {
        ngx_http_malloc_rss_feed(&p, huge, sizeof(huge) - 1);
        ngx_http_malloc_rss_feed(&p, zone, sizeof(zone) - 1);
    }

    memset(&je, 0xff, sizeof(je));
    ngx_http_malloc_rss_done(&p, &je, &r);

    ok(r.rss == NGX_HTTP_MALLOC_RSS_MAX, "sums of huge figures saturate");
    ok(r.zone[1] == NGX_HTTP_MALLOC_RSS_MAX
       && r.shared_zones == NGX_HTTP_MALLOC_RSS_MAX,
       "a zone's too (and a range that wraps is harmless)");
    ok(r.allocated == NGX_HTTP_MALLOC_RSS_MAX
       && r.allocator_overhead == 0 && r.other_anonymous == 0,
       "jemalloc's figures of SIZE_MAX are clamped");
    ok(r.zone[0] == 0, "the wrapping range matches nothing here");

    ngx_http_malloc_rss_init(&p, end, 1000);
    is_int((long) p.nranges, NGX_HTTP_MALLOC_RSS_ZONES,
           "more ranges than zones: the first are told apart");
}


static void
test_read(void)
{
    int                         fds[2];
    size_t                      len;
    ngx_http_malloc_rss_t       r, whole;
    ngx_http_malloc_je_stats_t  je;

    memset(&je, 0, sizeof(je));
    je.allocated = 1000 * KB;
    je.resident = 1400 * KB;

    feed_cut(worker_smaps, 0, worker_zones, 2, &je, &whole);

    len = strlen(worker_smaps);

    if (pipe(fds) != 0 || (size_t) write(fds[1], worker_smaps, len) != len) {
        ok(0, "pipe");
        return;
    }

    close(fds[1]);

    is_int(ngx_http_malloc_rss_read(fds[0], worker_zones, 2, &je, NULL, NULL,
                                    &r),
           0, "read: returns 0");
    ok(memcmp(&r, &whole, sizeof(r)) == 0, "read: the same parts");
    close(fds[0]);

    is_int(ngx_http_malloc_rss_read(-1, NULL, 0, NULL, NULL, NULL, &r),
           EBADF, "read: a bad fd gives its errno");

    /* this very process, as the kernel writes it */
    fds[0] = open("/proc/self/smaps", O_RDONLY);
    is_int(ngx_http_malloc_rss_read(fds[0], NULL, 0, &je, NULL, NULL, &r),
           0, "read: /proc/self/smaps");
    ok(r.mappings > 10 && r.flawed == 0 && r.rss > 1 * MB && r.stack > 0
       && r.file > 0, "read: a real smaps makes sense (%u mappings)",
       (unsigned) r.mappings);
    is_int((long) sum_parts(&r), (long) r.rss, "read: the parts add up");
    close(fds[0]);
}


static void
test_outside(void)
{
    size_t                       n;
    ngx_http_malloc_rss_t        from, to;
    ngx_http_malloc_rss_grew_t   grew[NGX_HTTP_MALLOC_RSS_GREW];

    memset(&from, 0, sizeof(from));
    from.rss = 20 * MB;
    from.allocated = 5 * MB;
    from.allocator_overhead = 2 * MB;
    from.file = 8 * MB;
    from.other_anonymous = 5 * MB;
    from.nzones = 2;

    to = from;
    to.rss += 31 * MB;
    to.other_anonymous += 31 * MB;
    is_int((long) ngx_http_malloc_rss_outside(&from, &to, 1, grew), 0,
           "31 MiB of growth: under the rule's 32");

    to.rss += 1 * MB;
    to.other_anonymous += 1 * MB;
    n = ngx_http_malloc_rss_outside(&from, &to, 1, grew);
    is_int((long) n, 1, "32 MiB outside malloc: one part grew");
    is_int(grew[0].part, NGX_HTTP_MALLOC_RSS_OTHER_ANONYMOUS,
           "other_anonymous");
    is_int((long) grew[0].bytes, (long) (32 * MB), "by 32 MiB");

    to.allocated += 16 * MB;
    to.rss += 16 * MB;
    n = ngx_http_malloc_rss_outside(&from, &to, 1, grew);
    is_int((long) n, 1, "48 MiB, 16 of it the allocator's: still outside");

    to.allocated += 16 * MB;
    to.rss += 16 * MB;
    is_int((long) ngx_http_malloc_rss_outside(&from, &to, 1, grew), 0,
           "half of it or more the allocator's: not outside");

    to = from;
    to.rss = from.rss + 40 * MB;
    to.other_anonymous = from.other_anonymous + 40 * MB - MB / 2;
    to.stack = MB / 2;
    n = ngx_http_malloc_rss_outside(&from, &to, 1, grew);
    is_int((long) n, 1, "a part that grew by less than a MiB is left out");

    to = from;
    to.rss = from.rss + 100 * MB;
    to.allocated = 0;
    to.allocator_overhead = 0;
    to.zone[1] = 40 * MB;
    to.shared_zones = 40 * MB;
    to.file = from.file + 10 * MB;
    to.stack = 1 * MB;
    to.other_shared = 2 * MB;
    to.other_anonymous = from.other_anonymous + 54 * MB;
    n = ngx_http_malloc_rss_outside(&from, &to, 1, grew);
    is_int((long) n, 3, "the three biggest parts");
    ok(grew[0].part == NGX_HTTP_MALLOC_RSS_OTHER_ANONYMOUS
       && grew[1].part == NGX_HTTP_MALLOC_RSS_SHARED_ZONES
       && grew[1].zone == 1 && grew[2].part == NGX_HTTP_MALLOC_RSS_FILE,
       "in order: other_anonymous, zone 1, file");

    to.nzones = 3;
    n = ngx_http_malloc_rss_outside(&from, &to, 1, grew);
    ok(n == 3 && grew[1].zone == -1,
       "other zones than before: the zones together");

    is_int((long) ngx_http_malloc_rss_outside(&to, &from, 1, grew), 0,
           "RSS fell: not outside");

    from.rss = NGX_HTTP_MALLOC_RSS_MAX;
    from.allocated = NGX_HTTP_MALLOC_RSS_MAX;
    from.allocator_overhead = NGX_HTTP_MALLOC_RSS_MAX;
    is_int((long) ngx_http_malloc_rss_outside(&to, &from, 1, grew), 0,
           "saturated figures: no overflow");
}


static void
test_sentence(void)
{
    size_t                 n;
    ngx_http_malloc_rss_t  from, to;
    char                   text[NGX_HTTP_MALLOC_RSS_TEXT_LEN];
    const char            *names[2] = { "one", "li\"mit\n" };

    memset(&from, 0, sizeof(from));
    from.rss = 20 * MB;
    from.allocated = 5 * MB;
    from.nzones = 2;

    to = from;
    to.rss = 20 * MB + 64 * MB + 5 * MB / 10;
    to.allocated = 4 * MB;
    to.other_anonymous = 54 * MB;
    to.zone[1] = 10 * MB + 5 * MB / 10;
    to.shared_zones = to.zone[1];

    n = ngx_http_malloc_rss_sentence(&from, &to, "the worker started",
                                     names, text);
    ok(n == strlen(text), "sentence: its length");
    is_str(text,
           "RSS grew by 64.5 MiB since the worker started while the "
           "allocator's memory fell by 1.0 MiB: the growth is outside "
           "malloc, and heap profiles cannot show it. Grew most: "
           "other_anonymous +54.0 MiB, shared zone \"li?mit?\" +10.5 MiB.",
           "sentence: in words, a zone by its name, made printable");

    n = ngx_http_malloc_rss_sentence(&from, &to, "nginx started", NULL,
                                     text);
    ok(n > 0 && strstr(text, "shared_zones +10.5 MiB") != NULL,
       "without names: shared_zones together");

    n = ngx_http_malloc_rss_sentence(&from, &from, "x", names, text);
    ok(n == 0 && text[0] == '\0', "no growth: no sentence");
}


/*
 * jemalloc counts 40 MiB resident of which the kernel holds 8 (pages it
 * never touched); another library's 36 MiB lands in the same anonymous
 * memory.  The parts must give it to the allocator, as the kernel's sum
 * allows no more; the growth is told by jemalloc's own figure.
 */

static void
test_untouched(void)
{
    size_t                       n;
    ngx_http_malloc_rss_t        from, to;
    ngx_http_malloc_je_stats_t   je;
    ngx_http_malloc_rss_grew_t   grew[NGX_HTTP_MALLOC_RSS_GREW];
    char                         text[NGX_HTTP_MALLOC_RSS_TEXT_LEN];

    memset(&je, 0, sizeof(je));
    je.allocated = 6 * MB;
    je.resident = 40 * MB;

    feed_cut(MAP("7f0000000000-7f0004000000", "rw-p", "", "8192")
             MAP("7ffe3a83b000-7ffe3a85c000", "rw-p", "[stack]", "132"),
             0, NULL, 0, &je, &from);
    feed_cut(MAP("7f0000000000-7f0004000000", "rw-p", "", "45056")
             MAP("7ffe3a83b000-7ffe3a85c000", "rw-p", "[stack]", "132"),
             0, NULL, 0, &je, &to);

    is_int((long) from.resident, (long) (40 * MB),
           "untouched: jemalloc's own resident kept");
    is_int((long) (to.allocated + to.allocator_overhead), (long) (40 * MB),
           "untouched: the parts give the allocator what it counted");
    is_int((long) sum_parts(&to), (long) to.rss,
           "untouched: the parts add up");
    is_int((long) ngx_http_malloc_rss_allocator_growth(&from, &to), 0,
           "untouched: the allocator did not grow, by its own figure");
    is_int((long) ngx_http_malloc_rss_outside_bytes(&to)
           - (long) ngx_http_malloc_rss_outside_bytes(&from), (long) (36 * MB),
           "untouched: 36 MiB more outside malloc");

    n = ngx_http_malloc_rss_outside(&from, &to, 0, grew);
    ok(n == 1 && grew[0].part == NGX_HTTP_MALLOC_RSS_OTHER_ANONYMOUS
       && grew[0].bytes == 36 * MB,
       "untouched: other_anonymous grew by 36 MiB, as the library did");

    ngx_http_malloc_rss_sentence(&from, &to, "the worker started", NULL,
                                 text);
    is_str(text,
           "RSS grew by 36.0 MiB since the worker started and the "
           "allocator's memory by 0.0 MiB: the growth is outside malloc, "
           "and heap profiles cannot show it. Grew most: other_anonymous "
           "+36.0 MiB.", "untouched: in words");

    je.resident = 44 * MB;
    feed_cut(MAP("7f0000000000-7f0004000000", "rw-p", "", "45056"),
             0, NULL, 0, &je, &to);
    is_int((long) ngx_http_malloc_rss_allocator_growth(&from, &to),
           (long) (4 * MB), "untouched: jemalloc's growth is its own");

    feed_cut(MAP("7f0000000000-7f0004000000", "rw-p", "", "8192"),
             0, NULL, 0, NULL, &to);
    is_int((long) ngx_http_malloc_rss_allocator(&to), 0,
           "without jemalloc: no allocator's memory");
}


static int
status(const char *text, ngx_http_malloc_rss_kernel_t *k)
{
    return ngx_http_malloc_rss_status(text, strlen(text), k);
}


/* /proc/<pid>/status: the three totals, in bytes; one missing: -1 */

static void
test_status(void)
{
    ngx_http_malloc_rss_kernel_t  k;
    static const char             text[] =
        "Name:\tnginx\nUmask:\t0022\nVmRSS:\t   21200 kB\n"
        "RssAnon:\t    9000 kB\nRssFile:\t   12000 kB\n"
        "RssShmem:\t     200 kB\nVmData:\t  30000 kB\n";

    memset(&k, 0, sizeof(k));
    is_int(ngx_http_malloc_rss_status(text, sizeof(text) - 1, &k), 0,
           "status: read");
    ok(k.anon == 9000 * 1024 && k.file == 12000 * 1024
       && k.shmem == 200 * 1024, "status: RssAnon, RssFile, RssShmem");

    /* no trailing newline: the last line counts */
    is_int(ngx_http_malloc_rss_status(text, sizeof(text) - 1
                                      - strlen("VmData:\t  30000 kB\n") - 1,
                                      &k), 0,
           "status: the last line without its newline");

    is_int(status("RssAnon:\t1 kB\nRssFile:\t2 kB\n", &k), -1,
           "status: RssShmem missing (a kernel before 4.5)");
    is_int(status("RssAnon:\tx kB\nRssFile:\t2 kB\nRssShmem:\t3 kB\n", &k),
           -1, "status: a figure that is no number");
    is_int(ngx_http_malloc_rss_status("", 0, &k), -1, "status: empty");
}


/*
 * The master's start, read before nginx daemonized, held 12 MiB of file
 * pages that the daemon does not (fork leaves them to be faulted in):
 * the parts take the kernel's totals and still add up.
 */

static void
test_rebase(void)
{
    ngx_http_malloc_rss_t         r;
    ngx_http_malloc_rss_kernel_t  k;

    memset(&r, 0, sizeof(r));
    r.allocated = 6 * MB;
    r.allocator_overhead = 2 * MB;
    r.stack = 1 * MB;
    r.other_anonymous = 3 * MB;
    r.file = 24 * MB;
    r.shared_zones = 1 * MB;
    r.other_shared = 1 * MB;
    r.rss = sum_parts(&r);

    k.anon = 12 * MB;
    k.file = 12 * MB;
    k.shmem = 3 * MB;
    ngx_http_malloc_rss_rebase(&r, &k);

    is_int((long) r.rss, (long) (27 * MB), "rebase: rss is the kernel's");
    is_int((long) sum_parts(&r), (long) r.rss, "rebase: the parts add up");
    ok(r.allocated == 6 * MB && r.allocator_overhead == 2 * MB
       && r.stack == 1 * MB, "rebase: the allocator's parts stay");
    is_int((long) r.other_anonymous, (long) (3 * MB),
           "rebase: the anonymous rest");
    is_int((long) r.file, (long) (12 * MB), "rebase: the file part");
    is_int((long) r.other_shared, (long) (2 * MB),
           "rebase: the shared rest beside the zones");

    /* less anonymous than the allocator's parts: its overhead goes first */
    k.anon = 7 * MB;
    ngx_http_malloc_rss_rebase(&r, &k);
    ok(r.other_anonymous == 0 && r.allocator_overhead == 0
       && r.stack == 1 * MB && r.allocated == 6 * MB,
       "rebase: short of anonymous memory, the overhead gives first");
    is_int((long) sum_parts(&r), (long) r.rss, "rebase: still adds up");

    /* the daemon holds less of its zones than the first reading did */
    r.nzones = 2;
    r.zone[0] = 3 * MB;
    r.zone[1] = 1 * MB;
    r.shared_zones = 4 * MB;
    k.shmem = 2 * MB;
    ngx_http_malloc_rss_rebase(&r, &k);
    ok(r.shared_zones == 2 * MB && r.zone[0] + r.zone[1] == 2 * MB
       && r.zone[0] == 3 * MB / 2 && r.other_shared == 0,
       "rebase: the zones take their share of the shared memory");
    is_int((long) sum_parts(&r), (long) r.rss, "rebase: zones, adds up");
}


/*
 * Fed in pieces of "piece" bytes (0: whole), each an exact copy; top NULL
 * takes the baseline
 */

static void
maps_feed(const char *text, size_t piece,
    const ngx_http_malloc_rss_range_t *ranges, size_t nranges,
    ngx_http_malloc_maps_base_t *b, ngx_http_malloc_maps_t *top)
{
    char                          *a;
    size_t                         i, n, len;
    ngx_http_malloc_rss_t          r;
    ngx_http_malloc_rss_parser_t   p;

    len = strlen(text);

    ngx_http_malloc_rss_init(&p, ranges, nranges);
    ngx_http_malloc_rss_maps(&p, b, top);

    for (i = 0; i < len; i += n) {
        n = (piece == 0 || piece > len - i) ? len - i : piece;
        a = malloc(n);
        memcpy(a, text + i, n);
        ngx_http_malloc_rss_feed(&p, a, n);
        free(a);
    }

    ngx_http_malloc_rss_done(&p, NULL, &r);
}


/* n anonymous mappings of 1 to n kB, 64 kB apart, then "extra" */

static char *
maps_many(size_t n, const char *extra)
{
    char    *text, *p;
    size_t   i, size;

    size = n * 64 + strlen(extra) + 1;
    text = malloc(size);
    p = text;

    for (i = 0; i < n; i++) {
        p += sprintf(p, "%lx-%lx rw-p 0 00:00 0\nRss: %lu kB\n",
                     0x10000000UL + i * 0x10000UL,
                     0x10000000UL + i * 0x10000UL + 0x8000UL,
                     (unsigned long) (i + 1));
    }

    strcpy(p, extra);

    return text;
}


/* the same smaps again, whole or in pieces: nothing grew */

static void
test_maps_same(void)
{
    size_t                  piece;
    ngx_http_malloc_maps_t  top;

    maps_feed(worker_smaps, 0, worker_zones, 2, &base, NULL);
    ok(base.ready && base.left == 0, "baseline: taken, nothing left out");
    /* every mapping with Rss but [vvar]'s and [vsyscall]'s 0 */
    is_int((long) base.n, 15, "baseline: the 15 resident mappings");

    for (piece = 0; piece < 80; piece = piece ? piece * 3 : 1) {
        top.n = 99;
        maps_feed(worker_smaps, piece, worker_zones, 2, &base, &top);
        is_int((long) top.n, 0, "the same smaps (pieces of %zu): none grew",
               piece);
    }

    memset(&top, 0, sizeof(top));
    maps_feed(MAP("7f0000000000-7f0004000000", "rw-p", "", "65536"),
              0, NULL, 0, &base, &top);
    is_int((long) top.n, 1, "a baseline compared after it is ready");

    ngx_http_malloc_maps_begin(&base);
    maps_feed(MAP("7f0000000000-7f0004000000", "rw-p", "", "65536"),
              0, NULL, 0, &base, &top);
    is_int((long) top.n, 0, "a baseline not taken: nothing compared");

    /* shrinking is no growth */

    maps_feed(MAP("7f0000000000-7f0004000000", "rw-p", "", "65536"),
              0, NULL, 0, &base, NULL);
    maps_feed(MAP("7f0000000000-7f0004000000", "rw-p", "", "1024"),
              0, NULL, 0, &base, &top);
    is_int((long) top.n, 0, "a mapping that shrank: none grew");
}


static void
test_maps_grown(void)
{
    ngx_http_malloc_maps_t  top;
    static const char       grown[] =
        MAP("5613406d8000-5613406fb000", "r--p", "/usr/sbin/nginx", "140")
        MAP("561341000000-561341200000", "rw-p", "[heap]", "8")
        MAP("7f79fd400000-7f79fd500000", "rw-p", "", "700")
        MAP("7f79fe000000-7f79fe800000", "rw-p", "", "916")
        MAP("7ffe3a83b000-7ffe3a85c000", "rw-p", "[stack]", "132");
    static const char       more[] =
        MAP("5613406d8000-5613406fb000", "r--p", "/usr/sbin/nginx", "140")
        /* brk(): the heap's end moved up */
        MAP("561341000000-561343200000", "rw-p", "[heap]", "32776")
        MAP("7f79fd400000-7f79fd500000", "rw-p", "", "700")
        /* 4 MiB more touched in place */
        MAP("7f79fe000000-7f79fe800000", "rw-p", "", "5012")
        /* new: 64 MiB of a library's own mmap() */
        MAP("7f7a00000000-7f7a04000000", "rw-p", "", "65536")
        /* less than a MiB: no news */
        MAP("7f7b00000000-7f7b00100000", "rw-p", "", "1020")
        MAP("7ffe3a83b000-7ffe3a85c000", "rw-p", "[stack]", "1156");

    maps_feed(grown, 0, NULL, 0, &base, NULL);
    maps_feed(more, 0, NULL, 0, &base, &top);

    is_int((long) top.n, 4, "grown: four grew by a MiB or more");
    ok(top.m[0].start == 0x7f7a00000000 && top.m[0].end == 0x7f7a04000000
       && top.m[0].grew == 64 * MB && top.m[0].rss == 64 * MB
       && top.m[0].kind == NGX_HTTP_MALLOC_MAP_ANONYMOUS
       && top.m[0].name[0] == '\0' && top.m[0].zone == -1,
       "the new mapping first, its whole RSS, its range");
    ok(top.m[1].start == 0x561341000000 && top.m[1].end == 0x561343200000
       && top.m[1].grew == 32 * MB
       && top.m[1].kind == NGX_HTTP_MALLOC_MAP_HEAP
       && strcmp(top.m[1].name, "[heap]") == 0,
       "the heap, by its name though its end moved");
    ok(top.m[2].start == 0x7f79fe000000 && top.m[2].grew == 4 * MB
       && top.m[2].rss == 5012 * KB,
       "a mapping touched in place: only what it gained");
    ok(top.m[3].kind == NGX_HTTP_MALLOC_MAP_STACK && top.m[3].grew == MB
       && strcmp(top.m[3].name, "[stack]") == 0,
       "the stack, by exactly the floor");
}


/*
 * The kernel merges a new anonymous mapping with its neighbour of the
 * same flags: the merged one grew by the new part
 */

static void
test_maps_merged(void)
{
    ngx_http_malloc_maps_t  top;

    maps_feed(MAP("7f79f0000000-7f79f0100000", "rw-p", "", "700")
              MAP("7f79fe000000-7f79fe800000", "rw-p", "", "916"),
              0, NULL, 0, &base, NULL);

    /* mapped just below, top-down as mmap() places it: merged */

    maps_feed(MAP("7f79f0000000-7f79f0100000", "rw-p", "", "700")
              MAP("7f79fa000000-7f79fe800000", "rw-p", "", "66452"),
              0, NULL, 0, &base, &top);
    ok(top.n == 1 && top.m[0].start == 0x7f79fa000000
       && top.m[0].end == 0x7f79fe800000 && top.m[0].grew == 64 * MB,
       "merged below: the merged range, grown by the new part");

    /* two remembered mappings and the gap between, merged */

    maps_feed(MAP("7f79f0000000-7f79fe800000", "rw-p", "", "3664"),
              0, NULL, 0, &base, &top);
    ok(top.n == 1 && top.m[0].grew == 2048 * KB,
       "two merged with a gap: grown by the gap's 2 MiB");

    /* the same merge, but less in all: none */

    maps_feed(MAP("7f79f0000000-7f79fe800000", "rw-p", "", "1616"),
              0, NULL, 0, &base, &top);
    is_int((long) top.n, 0, "merged, no more RSS: none grew");
}


/* mprotect() on part of a mapping splits it */

static void
test_maps_split(void)
{
    ngx_http_malloc_maps_t  top;

    maps_feed(MAP("7f0000000000-7f0000800000", "rw-p", "", "8192"),
              0, NULL, 0, &base, NULL);

    maps_feed(MAP("7f0000000000-7f0000400000", "rw-p", "", "4096")
              MAP("7f0000400000-7f0000800000", "rw-p", "", "4096"),
              0, NULL, 0, &base, &top);
    is_int((long) top.n, 0, "split in two, no more RSS: none grew");

    maps_feed(MAP("7f0000000000-7f0000400000", "rw-p", "", "4096")
              MAP("7f0000400000-7f0000800000", "rw-p", "", "4096")
              MAP("7f0000800000-7f0001000000", "rw-p", "", "6144"),
              0, NULL, 0, &base, &top);
    ok(top.n == 1 && top.m[0].start == 0x7f0000800000
       && top.m[0].grew == 6 * MB,
       "split, and grown past its old end: the new part");

    /* a half that holds it all: by length, half of the old RSS is its */

    maps_feed(MAP("7f0000000000-7f0000400000", "rw-p", "", "8192")
              MAP("7f0000400000-7f0000800000", "rw-p", "", "0"),
              0, NULL, 0, &base, &top);
    ok(top.n == 1 && top.m[0].grew == 4 * MB,
       "split unevenly: told by the share of length (%llu)",
       (unsigned long long) (top.n ? top.m[0].grew : 0));
}


/* another mapping at the address of one remembered is new */

static void
test_maps_replaced(void)
{
    ngx_http_malloc_maps_t                    top;
    static const ngx_http_malloc_rss_range_t  replaced_zone[] = {
        { 0x7f0001000000, 8 * MB }
    };

    maps_feed(MAP("7f0000000000-7f0000800000", "r--p", "/var/x.db", "8192")
              MAP("7f0001000000-7f0001800000", "rw-s",
                  "/dev/zero (deleted)", "2048"),
              0, NULL, 0, &base, NULL);

    maps_feed(MAP("7f0000000000-7f0000800000", "rw-p", "", "8192")
              MAP("7f0001000000-7f0001800000", "rw-s",
                  "/dev/zero (deleted)", "2048"),
              0, NULL, 0, &base, &top);
    ok(top.n == 1 && top.m[0].grew == 8 * MB
       && top.m[0].kind == NGX_HTTP_MALLOC_MAP_ANONYMOUS,
       "anonymous memory where a file was: all of it new");

    maps_feed(MAP("7f0000000000-7f0000800000", "r--p", "/var/y.db", "8192")
              MAP("7f0001000000-7f0001800000", "rw-s",
                  "/dev/zero (deleted)", "3072"),
              0, NULL, 0, &base, &top);
    ok(top.n == 2 && top.m[0].grew == 8 * MB
       && top.m[0].kind == NGX_HTTP_MALLOC_MAP_FILE
       && strcmp(top.m[0].name, "/var/y.db") == 0
       && top.m[1].grew == MB && top.m[1].kind == NGX_HTTP_MALLOC_MAP_SHARED,
       "another file there: new; the shared mapping: what it gained");

    /* the kind is part of the name: a zone is not the mapping it was */

    maps_feed(MAP("7f0000000000-7f0000800000", "r--p", "/var/x.db", "8192")
              MAP("7f0001000000-7f0001800000", "rw-s",
                  "/dev/zero (deleted)", "5120"),
              0, replaced_zone, 1, &base, &top);
    ok(top.n == 1 && top.m[0].kind == NGX_HTTP_MALLOC_MAP_ZONE
       && top.m[0].zone == 0 && top.m[0].grew == 5 * MB,
       "a range known as a zone now: another mapping, all of it new");
}


/* the most first, five at most */

static void
test_maps_top(void)
{
    int                     i, sorted;
    char                   *text, *p;
    ngx_http_malloc_maps_t  top;

    maps_feed("", 0, NULL, 0, &base, NULL);
    is_int((long) base.n, 0, "an empty baseline");

    text = malloc(8 * 64);
    p = text;

    for (i = 0; i < 8; i++) {
        /* 2 to 9 MiB, in an order that is not theirs */
        p += sprintf(p, "7f%02x00000000-7f%02x04000000 rw-p 0 00:00 0\n"
                     "Rss: %d kB\n", i, i, ((i * 5) % 8 + 2) * 1024);
    }

    maps_feed(text, 0, NULL, 0, &base, &top);
    free(text);

    is_int((long) top.n, NGX_HTTP_MALLOC_MAPS_TOP, "eight grew: five named");

    sorted = 1;

    for (i = 0; i < (int) top.n; i++) {
        sorted &= (top.m[i].grew == (uint64_t) (9 - i) * MB);
    }

    ok(sorted, "the five that grew most, most first");
}


/* more resident mappings than a baseline keeps */

static void
test_maps_bounded(void)
{
    char                    *text;
    uint32_t                 i, least;
    ngx_http_malloc_maps_t   top;

    text = maps_many(2000, "");
    maps_feed(text, 0, NULL, 0, &base, NULL);

    is_int((long) base.n, NGX_HTTP_MALLOC_MAPS_BASE,
           "2000 mappings: the table is full");
    is_int((long) base.left, 2000 - NGX_HTTP_MALLOC_MAPS_BASE,
           "and says how many it left out");
    is_int((long) base.left_max, (long) ((2000 - NGX_HTTP_MALLOC_MAPS_BASE)
                                         * KB),
           "and the most RSS of those");

    least = UINT32_MAX;

    for (i = 0; i < base.n; i++) {
        if (base.e[i].rss / KB < least) {
            least = base.e[i].rss / KB;
        }
    }

    is_int((long) least, 2000 - NGX_HTTP_MALLOC_MAPS_BASE + 1,
           "it kept the largest");

    for (i = 1; i < base.n && base.e[i - 1].start < base.e[i].start; i++) {
        /* void */
    }

    is_int((long) i, (long) base.n, "in address order");

    maps_feed(text, 0, NULL, 0, &base, &top);
    is_int((long) top.n, 0, "the same 2000: none grew, left out or not");
    free(text);

    text = maps_many(2000, MAP("7f7a00000000-7f7a04000000", "rw-p", "",
                               "65536"));
    maps_feed(text, 0, NULL, 0, &base, &top);
    ok(top.n == 1 && top.m[0].start == 0x7f7a00000000
       && top.m[0].grew == 64 * MB - base.left_max,
       "a new 64 MiB among them: found, short by the most left out");
    free(text);
}


static void
test_maps_hostile(void)
{
    size_t                  i;
    int                     printable;
    char                   *text;
    ngx_http_malloc_maps_t  top;
    char                    path[600];

    /* out of order, overlapping, a header with no Rss, two Rss lines */

    maps_feed("7f0000400000-7f0000800000 rw-p 0 00:00 0\nRss: 4096 kB\n"
              "7f0000000000-7f0000600000 rw-p 0 00:00 0\nRss: 1024 kB\n"
              "7f0001000000-7f0002000000 rw-p 0 00:00 0\n"
              "7f0003000000-7f0004000000 rw-p 0 00:00 0\n"
              "Rss: 1024 kB\nRss: 1024 kB\n"
              "7f0005000000-7f0004000000 rw-p 0 00:00 0\nRss: 9 kB\n",
              0, NULL, 0, &base, NULL);
    ok(base.ready && base.n == 3, "nonsense: a baseline all the same (%u)",
       base.n);

    maps_feed("7f0003000000-7f0004000000 rw-p 0 00:00 0\n"
              "Rss: 1024 kB\nRss: 1024 kB\n",
              0, NULL, 0, &base, &top);
    is_int((long) top.n, 0, "a mapping's Rss lines add up");

    maps_feed("1000-2000 rw-p 0 00:00 0\n"
              "Rss: 99999999999999999999999999999999 kB\n",
              0, NULL, 0, &base, &top);
    ok(top.n == 1 && top.m[0].grew == NGX_HTTP_MALLOC_RSS_MAX,
       "a huge Rss saturates");

    /* the three remembered held 7168 kB */

    maps_feed("0-ffffffffffffffff rw-p 0 00:00 0\nRss: 9216 kB\n",
              0, NULL, 0, &base, &top);
    ok(top.n == 1 && top.m[0].grew == 2 * MB,
       "a range over everything: less all it covers (%llu)",
       (unsigned long long) (top.n ? top.m[0].grew : 0));

    /* a long name keeps its end; every byte printable */

    memset(path, 'a', sizeof(path));
    memcpy(path, "/x\001\"q\\", 6);
    memcpy(path + 590, "/lib.so\n", 9);
    path[sizeof(path) - 1] = '\0';

    text = malloc(sizeof(path) + 128);
    sprintf(text, "1000-200000 r--p 0 00:00 0 %s"
            "Rss: 2000 kB\n7000-8000 rw-p 0 00:00 0 /a\"\\\001\n"
            "Rss: 1500 kB\n", path);

    maps_feed("", 0, NULL, 0, &base, NULL);
    maps_feed(text, 1, NULL, 0, &base, &top);
    free(text);

    printable = 1;

    for (i = 0; top.n == 2 && top.m[1].name[i] != '\0'; i++) {
        printable &= (top.m[1].name[i] >= 0x20 && top.m[1].name[i] < 0x7f
                      && top.m[1].name[i] != '"'
                      && top.m[1].name[i] != '\\');
    }

    ok(top.n == 2 && strcmp(top.m[1].name, "/a???") == 0 && printable,
       "quotes, backslashes and control bytes: '?' (%s)",
       top.n == 2 ? top.m[1].name : "");
    ok(top.n == 2 && strlen(top.m[0].name) == NGX_HTTP_MALLOC_MAPS_NAME - 1
       && strncmp(top.m[0].name, "...", 3) == 0,
       "an overlong name: its end, marked (%s)",
       top.n == 2 ? top.m[0].name : "");
}


static void
test_maps_text(void)
{
    size_t                  n;
    ngx_http_malloc_maps_t  top;
    char                    text[NGX_HTTP_MALLOC_MAPS_TEXT_LEN];
    static const char      *names[] = { "one", "t\"wo" };

    maps_feed(worker_smaps, 0, worker_zones, 2, &base, NULL);
    maps_feed(worker_smaps, 0, worker_zones, 2, &base, &top);

    n = ngx_http_malloc_maps_text(&top, "the worker started", names, 2,
                                  text);
    ok(n == 0 && text[0] == '\0', "none grew: no words");

    maps_feed(MAP("5613406d8000-5613406fb000", "r--p", "/usr/sbin/nginx",
                  "2188")
              MAP("7f79fd600000-7f79fe000000", "rw-s", "/dev/zero (deleted)",
                  "2060")
              MAP("7f79fea9b000-7f79feb3e000", "rw-s", "/dev/zero (deleted)",
                  "3136")
              MAP("7f79ff840000-7f79ff850000", "rw-p", "[anon:lua]", "1056")
              MAP("7f7a00000000-7f7a0b600000", "rw-p", "", "186368"),
              0, worker_zones, 2, &base, &top);

    n = ngx_http_malloc_maps_text(&top, "the worker started", names, 2,
                                  text);

    is_int((long) n, (long) strlen(text), "words: their length");
    is_str(text, "Mappings that grew most since the worker started: "
           "anonymous 7f7a00000000-7f7a0b600000 +182.0 MiB, "
           "shared zone \"t?wo\" 7f79fea9b000-7f79feb3e000 +3.0 MiB, "
           "/usr/sbin/nginx 5613406d8000-5613406fb000 +2.0 MiB, "
           "shared zone \"one\" 7f79fd600000-7f79fe000000 +2.0 MiB, "
           "anonymous [anon:lua] 7f79ff840000-7f79ff850000 +1.0 MiB.",
           "words: each mapping, named as an operator finds it");
    ok(top.m[1].kind == NGX_HTTP_MALLOC_MAP_ZONE && top.m[1].zone == 1,
       "a zone by its range");

    n = ngx_http_malloc_maps_text(&top, "x", NULL, 0, text);
    ok(n > 0 && strstr(text, "shared zone /dev/zero (deleted) 7f79fe")
       != NULL, "zones without names: the mapping's");

    is_str(ngx_http_malloc_maps_kind(NGX_HTTP_MALLOC_MAP_FILE), "file",
           "kinds: file");
    is_str(ngx_http_malloc_maps_kind(-1), "", "kinds: none for nonsense");
}


int
main(void)
{
    test_worker();
    test_pieces();
    test_clamp();
    test_hostile();
    test_huge();
    test_read();
    test_outside();
    test_sentence();
    test_untouched();
    test_status();
    test_rebase();
    test_maps_same();
    test_maps_grown();
    test_maps_merged();
    test_maps_split();
    test_maps_replaced();
    test_maps_top();
    test_maps_bounded();
    test_maps_hostile();
    test_maps_text();

    return done_testing();
}
