
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * libFuzzer target for the symbolizer.
 *
 * Input: one mode byte, then the data.
 *
 * Even mode byte: the data is an ELF image, read from memory as file
 * "/fuzz/image.so" mapped at 0x10000000 from file offset 0x1000 times the
 * second byte.  The cache must stay sound, every address in the mapping
 * must get a name, and an address no symbol covers must be named
 * "image.so+0x<vaddr>".
 *
 * Odd mode byte: the data is maps text.  The parser opens the files that
 * the text names, so the text names only these: every "/" becomes "_",
 * and "@0" to "@4" become this program, a missing file, /dev/null, /bin/sh
 * and /tmp.  The mappings must come out sorted, disjoint and executable,
 * and every address in them must get a name.
 */


#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ngx_http_malloc_symbol.h"
#include "ngx_http_malloc_symbol_fuzz.h"


#define IMAGE_PATH   "/fuzz/image.so"
#define IMAGE_START  ((uint64_t) 0x10000000)
#define IMAGE_SIZE   ((uint64_t) 0x01000000)


int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
static void check(int cond, const char *what);
static void fuzz_image(const uint8_t *data, size_t size);
static void fuzz_maps(const uint8_t *data, size_t size);
static char *sanitize(const uint8_t *data, size_t size, size_t *len);
static void check_name(ngx_http_malloc_symbols_t *syms,
    ngx_http_malloc_arena_t *arena, const ngx_http_malloc_map_t *maps,
    size_t n, uint64_t addr, size_t want);


static const char  *paths[] = {
    "/proc/self/exe",
    "/nonexistent/libfuzz.so",
    "/dev/null",
    "/bin/sh",
    "/tmp",
};


/* files stay put during a run: one cache for all inputs, as in a worker */
static ngx_http_malloc_symbols_t  *maps_cache;


static void
check(int cond, const char *what)
{
    if (!cond) {
        fprintf(stderr, "fuzz_symbol: invariant broken: %s\n", what);
        abort();
    }
}


int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) {
        return 0;
    }

    if (data[0] & 1) {
        fuzz_maps(data + 1, size - 1);

    } else {
        fuzz_image(data + 1, size - 1);
    }

    return 0;
}


static void
fuzz_image(const uint8_t *data, size_t size)
{
    int                         map;
    char                        anon[64];
    size_t                      i;
    uint8_t                    *image;
    uint64_t                    addr, step;
    const char                 *name;
    ngx_http_malloc_map_t       m;
    ngx_http_malloc_arena_t    *arena;
    ngx_http_malloc_symbols_t  *syms;

    if (size < 1) {
        return;
    }

    memset(&m, 0, sizeof(m));
    m.start = IMAGE_START;
    m.limit = IMAGE_START + IMAGE_SIZE;
    m.offset = (uint64_t) data[0] * 0x1000;
    m.path = IMAGE_PATH;

    data++;
    size--;

    /* exactly the image's size, so that ASan sees any read past it */

    image = malloc(size ? size : 1);
    syms = ngx_http_malloc_symbols_create();
    arena = ngx_http_malloc_arena_create();

    if (image == NULL || syms == NULL || arena == NULL) {
        abort();
    }

    memcpy(image, data, size);

    if (ngx_http_malloc_symbols_load_mem(syms, arena, image, size, &m) == 0)
    {
        check(m.file == 0, "the first image is entry 0");
        check(ngx_http_malloc_symbols_count(syms, 0) >= 0, "a count");
    }

    check(ngx_http_malloc_symbols_verify(syms) == 0, "the cache is sound");

    if (m.build_id != NULL) {
        for (i = 0; m.build_id[i] != '\0'; i++) {
            check((m.build_id[i] >= '0' && m.build_id[i] <= '9')
                  || (m.build_id[i] >= 'a' && m.build_id[i] <= 'f'),
                  "the build ID is lowercase hex");
        }

        check(i > 0 && i % 2 == 0 && i <= 128, "the build ID has whole bytes");
    }

    /* the mapping's ends, and addresses spread through the image */

    step = (size / 32) + 1;

    for (addr = 0; addr < IMAGE_SIZE; addr = (addr < size) ? addr + step
                                                            : IMAGE_SIZE)
    {
        name = ngx_http_malloc_symbols_lookup(syms, arena, &m, 1,
                                              IMAGE_START + addr, &map);

        check(name != NULL && map == 0, "an address in the mapping");

        snprintf(anon, sizeof(anon), "image.so+0x%" PRIx64,
                 IMAGE_START + addr - m.bias);

        check(m.file >= 0 || strcmp(name, anon) == 0,
              "an uncached image names file+0xvaddr");
    }

    name = ngx_http_malloc_symbols_lookup(syms, arena, &m, 1,
                                          IMAGE_START + IMAGE_SIZE - 1, &map);
    check(name != NULL && map == 0, "the mapping's last byte");

    name = ngx_http_malloc_symbols_lookup(syms, arena, &m, 1,
                                          IMAGE_START + IMAGE_SIZE, &map);
    check(name == NULL && map == -1, "the mapping's limit");

    name = ngx_http_malloc_symbols_lookup(syms, arena, &m, 1,
                                          IMAGE_START - 1, &map);
    check(name == NULL && map == -1, "below the mapping");

    ngx_http_malloc_arena_destroy(arena);
    ngx_http_malloc_symbols_destroy(syms);
    free(image);
}


static void
fuzz_maps(const uint8_t *data, size_t size)
{
    char                     *text;
    size_t                    i, len, n;
    ngx_http_malloc_map_t    *maps;
    ngx_http_malloc_arena_t  *arena;

    if (maps_cache == NULL) {
        maps_cache = ngx_http_malloc_symbols_create();
        if (maps_cache == NULL) {
            abort();
        }
    }

    text = sanitize(data, size, &len);
    arena = ngx_http_malloc_arena_create();

    if (arena == NULL) {
        abort();
    }

    check(ngx_http_malloc_symbols_maps(maps_cache, arena, text, len, &maps,
                                       &n)
          == 0, "maps text parses");

    for (i = 0; i < n; i++) {
        check(maps[i].start < maps[i].limit, "a mapping is not empty");
        check(i == 0 || maps[i - 1].limit <= maps[i].start,
              "mappings are sorted and disjoint");
        check(maps[i].path != NULL && maps[i].path[0] == '/',
              "a mapping has an absolute path");
        check(strchr(maps[i].path, '\n') == NULL, "a path is one line");
        check(maps[i].file < 0
              || ngx_http_malloc_symbols_count(maps_cache, maps[i].file) >= 0,
              "a mapping's file is in the cache");

        check_name(maps_cache, arena, maps, n, maps[i].start, i);
        check_name(maps_cache, arena, maps, n, maps[i].limit - 1, i);
        check_name(maps_cache, arena, maps, n,
                   maps[i].start + (maps[i].limit - maps[i].start) / 2, i);
    }

    check(ngx_http_malloc_symbols_verify(maps_cache) == 0,
          "the cache is sound");

    ngx_http_malloc_arena_destroy(arena);
    free(text);
}


/* the fuzzer's text with only the paths of the fixed set */

static char *
sanitize(const uint8_t *data, size_t size, size_t *len)
{
    char    *text;
    size_t   i, k, room, plen;

    room = 0;

    for (i = 0; i < size; i++) {
        if (data[i] == '@' && i + 1 < size && data[i + 1] >= '0'
            && data[i + 1] < '0' + sizeof(paths) / sizeof(paths[0]))
        {
            room += strlen(paths[data[i + 1] - '0']);
            i++;

        } else {
            room++;
        }
    }

    text = malloc(room ? room : 1);
    if (text == NULL) {
        abort();
    }

    k = 0;

    for (i = 0; i < size; i++) {
        if (data[i] == '@' && i + 1 < size && data[i + 1] >= '0'
            && data[i + 1] < '0' + sizeof(paths) / sizeof(paths[0]))
        {
            plen = strlen(paths[data[i + 1] - '0']);
            memcpy(text + k, paths[data[i + 1] - '0'], plen);
            k += plen;
            i++;

        } else {
            text[k++] = (data[i] == '/') ? '_' : (char) data[i];
        }
    }

    *len = k;

    return text;
}


static void
check_name(ngx_http_malloc_symbols_t *syms, ngx_http_malloc_arena_t *arena,
    const ngx_http_malloc_map_t *maps, size_t n, uint64_t addr, size_t want)
{
    int          map;
    const char  *name;

    name = ngx_http_malloc_symbols_lookup(syms, arena, maps, n, addr, &map);

    check(name != NULL, "an address in a mapping has a name");
    check(map == (int) want, "the lookup finds the mapping");
}
