
/*
 * Test-only module: lets the tests look inside the worker that serves a
 * request, without going through ngx_http_malloc_module.
 *
 *     location /t/state { malloc_test; }   {"pid": N, "prof_active": bool}
 *     location /t/alloc { malloc_test; }   ?mb=N keeps N MiB allocated by
 *                                          ngx_http_malloc_test_hold()
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include <dlfcn.h>
#include <stdbool.h>


typedef int (*ngx_http_malloc_test_mallctl_pt)(const char *name, void *oldp,
    size_t *oldlenp, void *newp, size_t newlen);


static char *ngx_http_malloc_test(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);
static ngx_int_t ngx_http_malloc_test_handler(ngx_http_request_t *r);
void *ngx_http_malloc_test_hold(size_t size);


static ngx_command_t  ngx_http_malloc_test_commands[] = {

    { ngx_string("malloc_test"),
      NGX_HTTP_LOC_CONF|NGX_CONF_NOARGS,
      ngx_http_malloc_test,
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


/* chunks kept live for the life of the worker */
static void   *ngx_http_malloc_test_kept[4096];
static size_t   ngx_http_malloc_test_nkept;


static char *
ngx_http_malloc_test(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_core_loc_conf_t  *clcf;

    clcf = ngx_http_conf_get_module_loc_conf(cf, ngx_http_core_module);
    clcf->handler = ngx_http_malloc_test_handler;

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


static ngx_int_t
ngx_http_malloc_test_handler(ngx_http_request_t *r)
{
    bool                              active;
    size_t                            len;
    ngx_int_t                         rc, mb, i;
    ngx_str_t                         arg;
    ngx_buf_t                        *b;
    ngx_chain_t                       out;
    ngx_http_malloc_test_mallctl_pt   mallctl;

    rc = ngx_http_discard_request_body(r);
    if (rc != NGX_OK) {
        return rc;
    }

    if (ngx_http_arg(r, (u_char *) "mb", 2, &arg) == NGX_OK) {
        mb = ngx_atoi(arg.data, arg.len);

        for (i = 0; i < mb && ngx_http_malloc_test_nkept < 4096; i++) {
            ngx_http_malloc_test_kept[ngx_http_malloc_test_nkept++] =
                ngx_http_malloc_test_hold(1024 * 1024);
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

    b = ngx_create_temp_buf(r->pool, 128);
    if (b == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    b->last = ngx_sprintf(b->last,
                          "{\"pid\": %P, \"prof_active\": %s, \"kept\": %uz}\n",
                          ngx_pid, active ? "true" : "false",
                          ngx_http_malloc_test_nkept);
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
