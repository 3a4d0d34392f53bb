
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * Test-only module: lets the tests look inside the worker that serves a
 * request, without going through ngx_http_malloc_module.
 *
 *     location /t/state { malloc_test; }   {"pid": N, "prof_active": bool}
 *     location /t/alloc { malloc_test; }   ?mb=N keeps N MiB allocated by
 *                                          ngx_http_malloc_test_hold(), in
 *                                          blocks of 1 MiB, or of M MiB
 *                                          with &block=M
 *                                          ?stacks=N&size=B keeps N blocks
 *                                          of B bytes, each allocated
 *                                          through its own call stack
 *                                          ?free=1 frees what was kept
 *
 *     malloc_test_leak SIZE [BLOCK];
 *                              (http) allocates SIZE bytes in the master
 *                              at every parse of the configuration (in
 *                              blocks of BLOCK bytes, by default one) and
 *                              never frees them: a module that leaks at
 *                              each reload, by ngx_http_malloc_test_leak()
 *     malloc_test_churn SIZE [BLOCK];
 *                              (http) the same, freed with the cycle: a
 *                              module that rebuilds its state at every
 *                              read, by ngx_http_malloc_test_churn()
 *     malloc_test_rules SIZE BLOCK [kept];
 *                              (http) the same through eight call sites
 *                              of one function, as a WAF's rule parser
 *                              reaches its pattern store (libmodsecurity's
 *                              acmp_add_pattern): blocks allocated by
 *                              ngx_http_malloc_test_pattern(), called
 *                              eight times in ngx_http_malloc_test_rule();
 *                              freed with the cycle, or with "kept" never
 *                              (a leak at each read)
 *
 *     location /t/alloc        ?rotate=KB[&rblock=B] frees the blocks of
 *                              the last rotate and allocates KB KiB anew
 *                              (B bytes each, 128 by default), by
 *                              ngx_http_malloc_test_rotate(): churn that
 *                              holds steady; ?drip=KB[&dblock=B] leaks KB
 *                              KiB (B bytes each, 1024 by default), by
 *                              ngx_http_malloc_test_drip()
 *
 *     location /t/alloc        ?pool=KB&hold=MS takes KB KiB of the
 *                              request's pool and answers MS ms later
 *
 *     location /t/cxx { malloc_test_cxx; }
 *                              as /t/alloc, with ?mb=N allocated by
 *                              malloc_test::Holder::grow(unsigned long)
 *                              (its C++ symbol), for the tests of
 *                              demangled names
 *
 *     location /t/alloc        ?map=N maps N MiB (private, anonymous)
 *                              and touches them, outside malloc, as
 *                              LuaJIT does: kept for the worker's life,
 *                              by ngx_http_malloc_test_map(); "mapped"
 *                              in the answer counts them
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include <dlfcn.h>
#include <stdbool.h>
#include <sys/mman.h>


typedef int (*ngx_http_malloc_test_mallctl_pt)(const char *name, void *oldp,
    size_t *oldlenp, void *newp, size_t newlen);


static char *ngx_http_malloc_test(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);
static char *ngx_http_malloc_test_cxx(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);
static ngx_int_t ngx_http_malloc_test_handler(ngx_http_request_t *r);
static ngx_int_t ngx_http_malloc_test_cxx_handler(ngx_http_request_t *r);
static ngx_int_t ngx_http_malloc_test_pool(ngx_http_request_t *r);
static void ngx_http_malloc_test_held(ngx_event_t *ev);
static void ngx_http_malloc_test_unhold(void *data);
static ngx_inline ngx_int_t ngx_http_malloc_test_serve(ngx_http_request_t *r,
    void *(*hold)(size_t size));
static void ngx_http_malloc_test_stacks(ngx_int_t n, size_t size);
static void *ngx_http_malloc_test_tree(ngx_uint_t path, ngx_uint_t depth,
    size_t size);
static void *ngx_http_malloc_test_left(ngx_uint_t path, ngx_uint_t depth,
    size_t size);
static void *ngx_http_malloc_test_right(ngx_uint_t path, ngx_uint_t depth,
    size_t size);
static void ngx_http_malloc_test_free(void);
static char *ngx_http_malloc_test_leak_conf(ngx_conf_t *cf,
    ngx_command_t *cmd, void *conf);
static char *ngx_http_malloc_test_churn_conf(ngx_conf_t *cf,
    ngx_command_t *cmd, void *conf);
static ngx_int_t ngx_http_malloc_test_blocks_arg(ngx_conf_t *cf,
    size_t *size, size_t *block);
static void ngx_http_malloc_test_unchurn(void *data);
static char *ngx_http_malloc_test_rules_conf(ngx_conf_t *cf,
    ngx_command_t *cmd, void *conf);
ngx_int_t ngx_http_malloc_test_rule(void **blocks, size_t n, size_t size);
void *ngx_http_malloc_test_pattern(size_t size);
static void ngx_http_malloc_test_noise(ngx_http_request_t *r);
static size_t ngx_http_malloc_test_arg(ngx_http_request_t *r,
    const char *name, size_t dflt);
void *ngx_http_malloc_test_hold(size_t size);
void *ngx_http_malloc_test_cxx_grow(size_t size)
    __asm__("_ZN11malloc_test6Holder4growEm");
void *ngx_http_malloc_test_leak(size_t size);
void *ngx_http_malloc_test_churn(size_t size);
void *ngx_http_malloc_test_rotate(size_t size);
void *ngx_http_malloc_test_drip(size_t size);


static ngx_command_t  ngx_http_malloc_test_commands[] = {

    { ngx_string("malloc_test"),
      NGX_HTTP_LOC_CONF|NGX_CONF_NOARGS,
      ngx_http_malloc_test,
      0,
      0,
      NULL },

    { ngx_string("malloc_test_cxx"),
      NGX_HTTP_LOC_CONF|NGX_CONF_NOARGS,
      ngx_http_malloc_test_cxx,
      0,
      0,
      NULL },

    { ngx_string("malloc_test_leak"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_TAKE12,
      ngx_http_malloc_test_leak_conf,
      0,
      0,
      NULL },

    { ngx_string("malloc_test_churn"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_TAKE12,
      ngx_http_malloc_test_churn_conf,
      0,
      0,
      NULL },

    { ngx_string("malloc_test_rules"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_TAKE23,
      ngx_http_malloc_test_rules_conf,
      0,
      0,
      NULL },

      ngx_null_command
};


static ngx_http_module_t  ngx_http_malloc_test_module_ctx = {
    NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
};


ngx_module_t  ngx_http_malloc_test_module = {
    NGX_MODULE_V1,
    &ngx_http_malloc_test_module_ctx,
    ngx_http_malloc_test_commands,
    NGX_HTTP_MODULE,
    NULL, NULL, NULL, NULL, NULL, NULL, NULL,
    NGX_MODULE_V1_PADDING
};


/* chunks kept live for the life of the worker, and their MiB */
static void   *ngx_http_malloc_test_kept[4096];
static size_t   ngx_http_malloc_test_nkept;
static size_t   ngx_http_malloc_test_kept_mb;

/* blocks from distinct stacks, for benchmarks of big profiles */
static void  **ngx_http_malloc_test_blocks;
static size_t  ngx_http_malloc_test_nblocks;


static char *
ngx_http_malloc_test(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_core_loc_conf_t  *clcf;

    clcf = ngx_http_conf_get_module_loc_conf(cf, ngx_http_core_module);
    clcf->handler = ngx_http_malloc_test_handler;

    return NGX_CONF_OK;
}


static char *
ngx_http_malloc_test_cxx(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_core_loc_conf_t  *clcf;

    clcf = ngx_http_conf_get_module_loc_conf(cf, ngx_http_core_module);
    clcf->handler = ngx_http_malloc_test_cxx_handler;

    return NGX_CONF_OK;
}


/* exported and never inlined, so profiles can name it */

__attribute__((noinline)) void *
ngx_http_malloc_test_hold(size_t size)
{
    void  *p;

    p = malloc(size);

    if (p != NULL) {
        ngx_memset(p, 0x5a, size);
    }

    return p;
}


/*
 * A C++ function as profiles see one: its symbol,
 * _ZN11malloc_test6Holder4growEm, which demangles as
 * malloc_test::Holder::grow(unsigned long).  Written in C under that
 * symbol: a .cpp would be compiled with nginx's C flags, and Debian
 * testing's -Werror=implicit-function-declaration is refused for C++.
 */

__attribute__((noinline)) void *
ngx_http_malloc_test_cxx_grow(size_t size)
{
    void  *p;

    p = malloc(size);

    if (p != NULL) {
        ngx_memset(p, 0x5a, size);
    }

    return p;
}


/*
 * Block i is allocated through a chain of left/right calls that spells
 * i in binary, so n blocks have n distinct stacks.  The empty asm after
 * each call keeps the compiler from turning it into a jump, which would
 * drop the frame.
 */

static void
ngx_http_malloc_test_stacks(ngx_int_t n, size_t size)
{
    ngx_uint_t  i, depth;

    ngx_http_malloc_test_free();

    ngx_http_malloc_test_blocks = malloc(n * sizeof(void *));
    if (ngx_http_malloc_test_blocks == NULL) {
        return;
    }

    for (depth = 1; ((ngx_uint_t) 1 << depth) < (ngx_uint_t) n; depth++) {
        /* void */
    }

    for (i = 0; i < (ngx_uint_t) n; i++) {
        ngx_http_malloc_test_blocks[i] = ngx_http_malloc_test_tree(i, depth,
                                                                   size);
    }

    ngx_http_malloc_test_nblocks = n;
}


static void *
ngx_http_malloc_test_tree(ngx_uint_t path, ngx_uint_t depth, size_t size)
{
    if (depth == 0) {
        return ngx_http_malloc_test_hold(size);
    }

    return (path & 1) ? ngx_http_malloc_test_right(path >> 1, depth - 1, size)
                      : ngx_http_malloc_test_left(path >> 1, depth - 1, size);
}


__attribute__((noinline)) static void *
ngx_http_malloc_test_left(ngx_uint_t path, ngx_uint_t depth, size_t size)
{
    void  *p;

    p = ngx_http_malloc_test_tree(path, depth, size);
    __asm__ __volatile__ ("" ::: "memory");

    return p;
}


__attribute__((noinline)) static void *
ngx_http_malloc_test_right(ngx_uint_t path, ngx_uint_t depth, size_t size)
{
    void  *p;

    p = ngx_http_malloc_test_tree(path, depth, size);
    __asm__ __volatile__ ("" ::: "memory");

    return p;
}


static void
ngx_http_malloc_test_free(void)
{
    size_t  i;

    for (i = 0; i < ngx_http_malloc_test_nkept; i++) {
        free(ngx_http_malloc_test_kept[i]);
    }

    ngx_http_malloc_test_nkept = 0;
    ngx_http_malloc_test_kept_mb = 0;

    for (i = 0; i < ngx_http_malloc_test_nblocks; i++) {
        free(ngx_http_malloc_test_blocks[i]);
    }

    free(ngx_http_malloc_test_blocks);
    ngx_http_malloc_test_blocks = NULL;
    ngx_http_malloc_test_nblocks = 0;
}


/* memory outside malloc: ?map=N, for the parts of RSS */

static size_t  ngx_http_malloc_test_mapped_mb;


static void ngx_http_malloc_test_maparg(ngx_http_request_t *r);
void *ngx_http_malloc_test_map(size_t size);


static void
ngx_http_malloc_test_maparg(ngx_http_request_t *r)
{
    ngx_int_t  mb;
    ngx_str_t  arg;

    if (ngx_http_arg(r, (u_char *) "map", 3, &arg) != NGX_OK) {
        return;
    }

    mb = ngx_atoi(arg.data, arg.len);

    if (mb > 0 && mb <= 4096
        && ngx_http_malloc_test_map((size_t) mb * 1024 * 1024) != NULL)
    {
        ngx_http_malloc_test_mapped_mb += mb;
    }
}


/* exported and never inlined, as ngx_http_malloc_test_hold() */

__attribute__((noinline)) void *
ngx_http_malloc_test_map(size_t size)
{
    void  *p;

    p = mmap(NULL, size, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

    if (p == MAP_FAILED) {
        return NULL;
    }

    /* touched: resident, as another allocator's memory in use is */
    ngx_memset(p, 0x5a, size);

    return p;
}


static ngx_int_t
ngx_http_malloc_test_handler(ngx_http_request_t *r)
{
    ngx_int_t  rc;

    rc = ngx_http_malloc_test_pool(r);
    if (rc != NGX_DECLINED) {
        return rc;
    }

    return ngx_http_malloc_test_serve(r, ngx_http_malloc_test_hold);
}


/*
 * ?pool=KB takes KB KiB of the request's pool (ngx_palloc, written to);
 * &hold=MS answers MS ms later: a request of a known size in flight, for
 * t/traffic.t.  NGX_DECLINED: answer now.
 */

static ngx_int_t
ngx_http_malloc_test_pool(ngx_http_request_t *r)
{
    u_char              *p;
    ngx_int_t            kb, ms;
    ngx_str_t            arg;
    ngx_event_t         *ev;
    ngx_pool_cleanup_t  *cln;

    if (ngx_http_get_module_ctx(r, ngx_http_malloc_test_module) != NULL) {
        return NGX_DECLINED;
    }

    if (ngx_http_arg(r, (u_char *) "pool", 4, &arg) == NGX_OK) {
        kb = ngx_atoi(arg.data, arg.len);

        if (kb > 0 && kb <= 65536) {
            p = ngx_palloc(r->pool, kb * 1024);
            if (p == NULL) {
                return NGX_HTTP_INTERNAL_SERVER_ERROR;
            }

            ngx_memset(p, 0x5a, kb * 1024);
        }
    }

    if (ngx_http_arg(r, (u_char *) "hold", 4, &arg) != NGX_OK) {
        return NGX_DECLINED;
    }

    ms = ngx_atoi(arg.data, arg.len);
    if (ms <= 0) {
        return NGX_DECLINED;
    }

    ev = ngx_pcalloc(r->pool, sizeof(ngx_event_t));
    cln = ngx_pool_cleanup_add(r->pool, 0);
    if (ev == NULL || cln == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ev->handler = ngx_http_malloc_test_held;
    ev->data = r;
    ev->log = r->connection->log;
    cln->handler = ngx_http_malloc_test_unhold;
    cln->data = ev;

    ngx_http_set_ctx(r, ev, ngx_http_malloc_test_module);
    ngx_add_timer(ev, (ngx_msec_t) ms);

    r->main->count++;

    return NGX_DONE;
}


static void
ngx_http_malloc_test_held(ngx_event_t *ev)
{
    ngx_connection_t    *c;
    ngx_http_request_t  *r;

    r = ev->data;
    c = r->connection;

    /*
     * serve, not the handler: a handler called from here too could be
     * split by the compiler (gcc 14's "handler.part.0"), and profile.t
     * and ui.t read the handler by its name
     */

    ngx_http_finalize_request(r, ngx_http_malloc_test_serve(r,
                                     ngx_http_malloc_test_hold));
    ngx_http_run_posted_requests(c);
}


static void
ngx_http_malloc_test_unhold(void *data)
{
    ngx_event_t  *ev = data;

    if (ev->timer_set) {
        ngx_del_timer(ev);
    }
}


static ngx_int_t
ngx_http_malloc_test_cxx_handler(ngx_http_request_t *r)
{
    return ngx_http_malloc_test_serve(r, ngx_http_malloc_test_cxx_grow);
}


/*
 * ?mb=N holds its blocks through hold(): C, or C++ for /t/cxx.  Always
 * inlined: t/profile.t reads hold() called by the handler itself.
 */

static ngx_inline __attribute__((always_inline)) ngx_int_t
ngx_http_malloc_test_serve(ngx_http_request_t *r,
    void *(*hold)(size_t size))
{
    bool                              active;
    size_t                            len, size;
    ngx_int_t                         rc, mb, block, i, n;
    ngx_str_t                         arg;
    ngx_buf_t                        *b;
    ngx_chain_t                       out;
    ngx_http_malloc_test_mallctl_pt   mallctl;

    rc = ngx_http_discard_request_body(r);
    if (rc != NGX_OK) {
        return rc;
    }

    ngx_http_malloc_test_maparg(r);

    if (ngx_http_arg(r, (u_char *) "free", 4, &arg) == NGX_OK) {
        ngx_http_malloc_test_free();
    }

    ngx_http_malloc_test_noise(r);

    if (ngx_http_arg(r, (u_char *) "stacks", 6, &arg) == NGX_OK) {
        n = ngx_atoi(arg.data, arg.len);
        size = 64;

        if (ngx_http_arg(r, (u_char *) "size", 4, &arg) == NGX_OK) {
            size = ngx_atoi(arg.data, arg.len);
        }

        if (n > 0 && n <= 1000000 && size > 0) {
            ngx_http_malloc_test_stacks(n, size);
        }
    }

    if (ngx_http_arg(r, (u_char *) "mb", 2, &arg) == NGX_OK) {
        mb = ngx_atoi(arg.data, arg.len);
        block = 1;

        if (ngx_http_arg(r, (u_char *) "block", 5, &arg) == NGX_OK) {
            block = ngx_atoi(arg.data, arg.len);
        }

        if (block < 1 || block > 1024) {
            block = 1;
        }

        for (i = 0; i + block <= mb && ngx_http_malloc_test_nkept < 4096;
             i += block)
        {
            ngx_http_malloc_test_kept[ngx_http_malloc_test_nkept++] =
                hold(block * 1024 * 1024);
            ngx_http_malloc_test_kept_mb += block;
        }
    }

    active = 0;
    mallctl = (ngx_http_malloc_test_mallctl_pt) dlsym(RTLD_DEFAULT,
                                                      "mallctl");
    if (mallctl != NULL) {
        len = sizeof(active);
        if (mallctl("prof.active", &active, &len, NULL, 0) != 0) {
            active = 0;
        }
    }

    b = ngx_create_temp_buf(r->pool, 256);
    if (b == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    b->last = ngx_sprintf(b->last,
                          "{\"pid\": %P, \"prof_active\": %s, \"kept\": %uz, "
                          "\"blocks\": %uz, \"mapped\": %uz}\n",
                          ngx_pid, active ? "true" : "false",
                          ngx_http_malloc_test_kept_mb,
                          ngx_http_malloc_test_nblocks,
                          ngx_http_malloc_test_mapped_mb);
    b->last_buf = 1;

    r->headers_out.status = NGX_HTTP_OK;
    r->headers_out.content_length_n = b->last - b->pos;
    ngx_str_set(&r->headers_out.content_type, "application/json");

    rc = ngx_http_send_header(r);
    if (rc == NGX_ERROR || rc > NGX_OK || r->header_only) {
        return rc;
    }

    out.buf = b;
    out.next = NULL;

    return ngx_http_output_filter(r, &out);
}


/* a directive handler that leaks, as some modules' do at each reload */

static char *
ngx_http_malloc_test_leak_conf(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf)
{
    size_t  size, block, i;

    if (ngx_http_malloc_test_blocks_arg(cf, &size, &block) != NGX_OK) {
        return "takes a size and a block size";
    }

    for (i = 0; i < size; i += block) {
        if (ngx_http_malloc_test_leak(block) == NULL) {
            return NGX_CONF_ERROR;
        }
    }

    return NGX_CONF_OK;
}


/* SIZE [BLOCK]: BLOCK defaults to SIZE */

static ngx_int_t
ngx_http_malloc_test_blocks_arg(ngx_conf_t *cf, size_t *size, size_t *block)
{
    ssize_t     n;
    ngx_str_t  *value;

    value = cf->args->elts;

    n = ngx_parse_size(&value[1]);
    if (n == NGX_ERROR || n <= 0) {
        return NGX_ERROR;
    }

    *size = n;
    *block = n;

    if (cf->args->nelts >= 3) {
        n = ngx_parse_size(&value[2]);
        if (n == NGX_ERROR || n <= 0 || (size_t) n > *size) {
            return NGX_ERROR;
        }

        *block = n;
    }

    return NGX_OK;
}


/* the blocks of this cycle's read, freed with the cycle's pool */

typedef struct {
    void   **blocks;
    size_t   n;
} ngx_http_malloc_test_churned_t;


static char *
ngx_http_malloc_test_churn_conf(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf)
{
    size_t                           size, block, i;
    ngx_pool_cleanup_t              *cln;
    ngx_http_malloc_test_churned_t  *ch;

    if (ngx_http_malloc_test_blocks_arg(cf, &size, &block) != NGX_OK) {
        return "takes a size and a block size";
    }

    cln = ngx_pool_cleanup_add(cf->pool,
                               sizeof(ngx_http_malloc_test_churned_t));
    if (cln == NULL) {
        return NGX_CONF_ERROR;
    }

    ch = cln->data;
    ch->n = 0;
    ch->blocks = ngx_alloc((size / block + 1) * sizeof(void *), cf->log);
    if (ch->blocks == NULL) {
        return NGX_CONF_ERROR;
    }

    cln->handler = ngx_http_malloc_test_unchurn;

    for (i = 0; i < size; i += block) {
        ch->blocks[ch->n] = ngx_http_malloc_test_churn(block);
        if (ch->blocks[ch->n] == NULL) {
            return NGX_CONF_ERROR;
        }

        ch->n++;
    }

    return NGX_CONF_OK;
}


static void
ngx_http_malloc_test_unchurn(void *data)
{
    ngx_http_malloc_test_churned_t *ch = data;

    size_t  i;

    for (i = 0; i < ch->n; i++) {
        free(ch->blocks[i]);
    }

    ngx_free(ch->blocks);
}


__attribute__((noinline)) void *
ngx_http_malloc_test_churn(size_t size)
{
    u_char  *p;

    p = malloc(size);

    if (p != NULL) {
        ngx_memset(p, 0x3c, size);
    }

    return p;
}


/*
 * The blocks in multiples of eight, one from each call site in turn;
 * with "kept" the list of them goes and they stay, else the cycle's pool
 * frees them
 */

static char *
ngx_http_malloc_test_rules_conf(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf)
{
    size_t                           size, block, n;
    void                           **blocks;
    ngx_str_t                       *value;
    ngx_uint_t                       kept;
    ngx_pool_cleanup_t              *cln;
    ngx_http_malloc_test_churned_t  *ch;

    value = cf->args->elts;

    kept = (cf->args->nelts == 4 && value[3].len == 4
            && ngx_strncmp(value[3].data, "kept", 4) == 0);

    if (ngx_http_malloc_test_blocks_arg(cf, &size, &block) != NGX_OK
        || (cf->args->nelts == 4 && !kept))
    {
        return "takes a size, a block size and \"kept\"";
    }

    n = (size / block + 7) / 8 * 8;

    blocks = ngx_alloc(n * sizeof(void *), cf->log);
    if (blocks == NULL) {
        return NGX_CONF_ERROR;
    }

    if (ngx_http_malloc_test_rule(blocks, n, block) != NGX_OK) {
        return NGX_CONF_ERROR;
    }

    if (kept) {
        ngx_free(blocks);
        return NGX_CONF_OK;
    }

    cln = ngx_pool_cleanup_add(cf->pool,
                               sizeof(ngx_http_malloc_test_churned_t));
    if (cln == NULL) {
        return NGX_CONF_ERROR;
    }

    ch = cln->data;
    ch->blocks = blocks;
    ch->n = n;
    cln->handler = ngx_http_malloc_test_unchurn;

    return NGX_CONF_OK;
}


/* eight calls in a row: eight return addresses, one function's name */

__attribute__((noinline)) ngx_int_t
ngx_http_malloc_test_rule(void **blocks, size_t n, size_t size)
{
    size_t  i;

    for (i = 0; i < n; i += 8) {
        blocks[i] = ngx_http_malloc_test_pattern(size);
        blocks[i + 1] = ngx_http_malloc_test_pattern(size);
        blocks[i + 2] = ngx_http_malloc_test_pattern(size);
        blocks[i + 3] = ngx_http_malloc_test_pattern(size);
        blocks[i + 4] = ngx_http_malloc_test_pattern(size);
        blocks[i + 5] = ngx_http_malloc_test_pattern(size);
        blocks[i + 6] = ngx_http_malloc_test_pattern(size);
        blocks[i + 7] = ngx_http_malloc_test_pattern(size);
    }

    for (i = 0; i < n; i++) {
        if (blocks[i] == NULL) {
            return NGX_ERROR;
        }
    }

    return NGX_OK;
}


__attribute__((noinline)) void *
ngx_http_malloc_test_pattern(size_t size)
{
    u_char  *p;

    p = malloc(size);

    if (p != NULL) {
        ngx_memset(p, 0x4b, size);
    }

    return p;
}


/* a worker's churn that holds steady, and a worker's leak, by request */

static void    **ngx_http_malloc_test_rotated;
static size_t    ngx_http_malloc_test_nrotated;


static void
ngx_http_malloc_test_noise(ngx_http_request_t *r)
{
    size_t  kb, block, i, n;

    kb = ngx_http_malloc_test_arg(r, "rotate", 0);
    block = ngx_http_malloc_test_arg(r, "rblock", 128);

    if (kb != 0 && block != 0 && kb <= 1024 * 1024) {
        for (i = 0; i < ngx_http_malloc_test_nrotated; i++) {
            free(ngx_http_malloc_test_rotated[i]);
        }

        free(ngx_http_malloc_test_rotated);

        n = kb * 1024 / block;
        ngx_http_malloc_test_rotated = malloc((n + 1) * sizeof(void *));
        ngx_http_malloc_test_nrotated = 0;

        for (i = 0; ngx_http_malloc_test_rotated != NULL && i < n; i++) {
            ngx_http_malloc_test_rotated[i] =
                ngx_http_malloc_test_rotate(block);
            ngx_http_malloc_test_nrotated++;
        }
    }

    kb = ngx_http_malloc_test_arg(r, "drip", 0);
    block = ngx_http_malloc_test_arg(r, "dblock", 1024);

    if (kb != 0 && block != 0 && kb <= 1024 * 1024) {
        for (i = 0; i < kb * 1024 / block; i++) {
            (void) ngx_http_malloc_test_drip(block);
        }
    }
}


static size_t
ngx_http_malloc_test_arg(ngx_http_request_t *r, const char *name,
    size_t dflt)
{
    ngx_int_t  n;
    ngx_str_t  arg;

    if (ngx_http_arg(r, (u_char *) name, ngx_strlen(name), &arg) != NGX_OK) {
        return dflt;
    }

    n = ngx_atoi(arg.data, arg.len);

    return (n > 0) ? (size_t) n : 0;
}


__attribute__((noinline)) void *
ngx_http_malloc_test_rotate(size_t size)
{
    u_char  *p;

    p = malloc(size);

    if (p != NULL) {
        ngx_memset(p, 0x2d, size);
    }

    return p;
}


__attribute__((noinline)) void *
ngx_http_malloc_test_drip(size_t size)
{
    u_char  *p;

    p = malloc(size);

    if (p != NULL) {
        ngx_memset(p, 0x1e, size);
    }

    return p;
}


/* exported, so that profiles name it even in a stripped build */

__attribute__((noinline)) void *
ngx_http_malloc_test_leak(size_t size)
{
    u_char  *p;

    p = malloc(size);

    if (p != NULL) {
        /* touched: resident, as a real leak's memory is */
        ngx_memset(p, 0x5a, size);
    }

    return p;
}
