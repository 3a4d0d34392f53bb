
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * ngx_http_malloc_module: heap profiling of nginx itself, driven from an
 * admin location.  This file holds the module object, the directives and
 * the start-up hooks; the rest lives beside it (see docs/ and design.md).
 *
 * Owns: the configuration.  Calls: board, threads, wait, apply,
 * schedule, export (start-up; malloc_export's directive), handler (the
 * location's handler), profile (the symbols preloaded by the master),
 * walk (malloc_traffic's log phase handler), origin (directive checks).
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_malloc_module.h"
#include "ngx_http_malloc_board.h"
#include "ngx_http_malloc_apply.h"
#include "ngx_http_malloc_wait.h"
#include "ngx_http_malloc_threads.h"
#include "ngx_http_malloc_schedule.h"
#include "ngx_http_malloc_export.h"
#include "ngx_http_malloc_profile.h"
#include "ngx_http_malloc_origin.h"
#include "ngx_http_malloc_walk.h"


static void *ngx_http_malloc_create_main_conf(ngx_conf_t *cf);
static char *ngx_http_malloc_init_main_conf(ngx_conf_t *cf, void *conf);
static void ngx_http_malloc_shared_servers(ngx_conf_t *cf);
static void ngx_http_malloc_find_locations(ngx_queue_t *locations,
    ngx_http_location_queue_t **admin, ngx_http_location_queue_t **other);
static ngx_str_t *ngx_http_malloc_listen_text(
    ngx_http_core_main_conf_t *cmcf, ngx_http_core_srv_conf_t *cscf);
static void *ngx_http_malloc_create_loc_conf(ngx_conf_t *cf);
static char *ngx_http_malloc_merge_loc_conf(ngx_conf_t *cf, void *parent,
    void *child);
static char *ngx_http_malloc_admin(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);
static char *ngx_http_malloc_trusted_origin(ngx_conf_t *cf,
    ngx_command_t *cmd, void *conf);
static char *ngx_http_malloc_dump_dir(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);
static char *ngx_http_malloc_snapshot(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);
static ngx_int_t ngx_http_malloc_snapshot_param(
    ngx_http_malloc_snapshot_conf_t *sc, ngx_str_t *value);
static char *ngx_http_malloc_threads(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);
static char *ngx_http_malloc_watch(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);
static ngx_int_t ngx_http_malloc_watch_param(
    ngx_http_malloc_watch_conf_t *wc, ngx_str_t *value, ngx_uint_t *outside);
static ngx_int_t ngx_http_malloc_watch_size(ngx_str_t *value, size_t skip,
    off_t *size);
static ngx_int_t ngx_http_malloc_postconfiguration(ngx_conf_t *cf);
static ngx_http_malloc_main_conf_t *ngx_http_malloc_used(ngx_cycle_t *cycle);
static ngx_int_t ngx_http_malloc_init_module(ngx_cycle_t *cycle);
static ngx_int_t ngx_http_malloc_init_process(ngx_cycle_t *cycle);
static void ngx_http_malloc_exit_process(ngx_cycle_t *cycle);


static ngx_command_t  ngx_http_malloc_directives[] = {

    { ngx_string("malloc_admin"),
      NGX_HTTP_LOC_CONF|NGX_CONF_NOARGS|NGX_CONF_TAKE12,
      ngx_http_malloc_admin,
      NGX_HTTP_LOC_CONF_OFFSET,
      0,
      NULL },

    { ngx_string("malloc_trusted_origin"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_1MORE,
      ngx_http_malloc_trusted_origin,
      NGX_HTTP_LOC_CONF_OFFSET,
      0,
      NULL },

    { ngx_string("malloc_dump_dir"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_TAKE12,
      ngx_http_malloc_dump_dir,
      NGX_HTTP_MAIN_CONF_OFFSET,
      0,
      NULL },

    { ngx_string("malloc_snapshot"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_1MORE,
      ngx_http_malloc_snapshot,
      NGX_HTTP_MAIN_CONF_OFFSET,
      0,
      NULL },

    { ngx_string("malloc_threads"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_TAKE1,
      ngx_http_malloc_threads,
      NGX_HTTP_MAIN_CONF_OFFSET,
      0,
      NULL },

    { ngx_string("malloc_watch"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_1MORE,
      ngx_http_malloc_watch,
      NGX_HTTP_MAIN_CONF_OFFSET,
      0,
      NULL },

    { ngx_string("malloc_traffic"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_FLAG,
      ngx_conf_set_flag_slot,
      NGX_HTTP_MAIN_CONF_OFFSET,
      offsetof(ngx_http_malloc_main_conf_t, traffic),
      NULL },

    { ngx_string("malloc_export"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_1MORE,
      ngx_http_malloc_export_conf,
      NGX_HTTP_MAIN_CONF_OFFSET,
      0,
      NULL },

      ngx_null_command
};


static ngx_http_module_t  ngx_http_malloc_module_ctx = {
    NULL,                                  /* preconfiguration */
    ngx_http_malloc_postconfiguration,     /* postconfiguration */

    ngx_http_malloc_create_main_conf,      /* create main configuration */
    ngx_http_malloc_init_main_conf,        /* init main configuration */

    NULL,                                  /* create server configuration */
    NULL,                                  /* merge server configuration */

    ngx_http_malloc_create_loc_conf,       /* create location configuration */
    ngx_http_malloc_merge_loc_conf         /* merge location configuration */
};


ngx_module_t  ngx_http_malloc_module = {
    NGX_MODULE_V1,
    &ngx_http_malloc_module_ctx,           /* module context */
    ngx_http_malloc_directives,            /* module directives */
    NGX_HTTP_MODULE,                       /* module type */
    NULL,                                  /* init master */
    ngx_http_malloc_init_module,           /* init module */
    ngx_http_malloc_init_process,          /* init process */
    NULL,                                  /* init thread */
    NULL,                                  /* exit thread */
    ngx_http_malloc_exit_process,          /* exit process */
    NULL,                                  /* exit master */
    NGX_MODULE_V1_PADDING
};


static void *
ngx_http_malloc_create_main_conf(ngx_conf_t *cf)
{
    ngx_http_malloc_main_conf_t  *mmcf;

    mmcf = ngx_pcalloc(cf->pool, sizeof(ngx_http_malloc_main_conf_t));
    if (mmcf == NULL) {
        return NULL;
    }

    /*
     * set by ngx_pcalloc():
     *
     *     mmcf->dump_dir = NULL;
     *     mmcf->shm_zone = NULL;
     *     mmcf->admin = 0;
     *     mmcf->nlocs = 0;
     */

    mmcf->dump_max_size = NGX_CONF_UNSET;
    mmcf->threads = NGX_CONF_UNSET_UINT;
    mmcf->traffic = NGX_CONF_UNSET;

    return mmcf;
}


/*
 * The default dump directory sits beside nginx's client body temp
 * directory (/var/lib/nginx/malloc on Debian), where the worker user
 * already owns its files; a build with a relative temp path uses
 * "malloc" under the prefix.
 */

static char *
ngx_http_malloc_init_main_conf(ngx_conf_t *cf, void *conf)
{
    ngx_http_malloc_main_conf_t *mmcf = conf;

    u_char      *p, *last;
    ngx_str_t    temp;
    ngx_path_t  *path;

    /* repeated dumps must not fill the disk: 2 GiB unless told */
    if (mmcf->dump_max_size == NGX_CONF_UNSET) {
        mmcf->dump_max_size = (off_t) 2 * 1024 * 1024 * 1024;
    }

    /* a dump and a profile's build at once; each thread has its caches */
    ngx_conf_init_uint_value(mmcf->threads, 2);
    ngx_conf_init_value(mmcf->traffic, 0);

    if (ngx_http_malloc_export_check(cf, mmcf) != NGX_CONF_OK) {
        return NGX_CONF_ERROR;
    }

    if (mmcf->admin) {
        ngx_http_malloc_shared_servers(cf);
    }

    if (mmcf->dump_dir != NULL) {
        return NGX_CONF_OK;
    }

    path = ngx_pcalloc(cf->pool, sizeof(ngx_path_t));
    if (path == NULL) {
        return NGX_CONF_ERROR;
    }

    ngx_str_set(&temp, NGX_HTTP_CLIENT_TEMP_PATH);

    last = temp.data + temp.len;
    p = ngx_strlchr(temp.data, last, '/');

    if (p == NULL) {
        ngx_str_set(&path->name, "malloc");

    } else {
        while (last > temp.data && *(last - 1) != '/') {
            last--;
        }

        /* with its NUL: an absolute name is used as it is, as a C string */

        path->name.len = (last - temp.data) + sizeof("malloc") - 1;
        path->name.data = ngx_pnalloc(cf->pool, path->name.len + 1);
        if (path->name.data == NULL) {
            return NGX_CONF_ERROR;
        }

        p = ngx_cpymem(path->name.data, temp.data, last - temp.data);
        ngx_memcpy(p, "malloc", sizeof("malloc"));
    }

    if (ngx_conf_full_name(cf->cycle, &path->name, 0) != NGX_OK) {
        return NGX_CONF_ERROR;
    }

    mmcf->dump_dir = path;

    return NGX_CONF_OK;
}


/*
 * A page that another location of the admin location's server serves is
 * of the same origin: the browser calls its requests "same-origin" and
 * the guard (ngx_http_malloc_origin.c) lets them through, so a proxied
 * application or a script injected there drives the admin location.
 * Said once per server at each reading of the configuration, in the
 * master and at nginx -t (the signaller's copy would say it twice).
 * Here the locations are still in their queues, as they were written;
 * the location trees are built after the merges.
 *
 * Counted: every other location block at any depth, exact, prefix,
 * regex and named.  Not counted: "if" blocks and limit_except, which
 * belong to their location, and the server's own root, which serves
 * only the files the operator put there when no location matches.
 */

static void
ngx_http_malloc_shared_servers(ngx_conf_t *cf)
{
    ngx_str_t                   *listen;
    ngx_uint_t                   s;
    ngx_http_core_loc_conf_t    *clcf;
    ngx_http_core_srv_conf_t   **cscfp;
    ngx_http_location_queue_t   *admin, *other;
    ngx_http_core_main_conf_t   *cmcf;

    if (ngx_process == NGX_PROCESS_SIGNALLER) {
        return;
    }

    cmcf = ngx_http_conf_get_module_main_conf(cf, ngx_http_core_module);
    cscfp = cmcf->servers.elts;

    for (s = 0; s < cmcf->servers.nelts; s++) {
        clcf = cscfp[s]->ctx->loc_conf[ngx_http_core_module.ctx_index];

        admin = NULL;
        other = NULL;

        ngx_http_malloc_find_locations(clcf->locations, &admin, &other);

        if (admin == NULL || other == NULL) {
            continue;
        }

        listen = ngx_http_malloc_listen_text(cmcf, cscfp[s]);

        ngx_log_error(NGX_LOG_NOTICE, cf->log, 0,
                      "the admin location \"%V\" shares its server "
                      "(server_name \"%V\", listen %V) with location "
                      "\"%V\" at %s:%ui, which serves other content: "
                      "its pages, or a script injected into them, are of "
                      "the same origin and can drive the admin location; "
                      "give the admin location a server of its own "
                      "(another port, or a server_name of its own on "
                      "loopback) in %s:%ui",
                      admin->name, &cscfp[s]->server_name, listen,
                      other->name, other->file_name, other->line,
                      admin->file_name, admin->line);
    }
}


/* the first admin location and the first other one, in the order read */

static void
ngx_http_malloc_find_locations(ngx_queue_t *locations,
    ngx_http_location_queue_t **admin, ngx_http_location_queue_t **other)
{
    ngx_queue_t                 *q;
    ngx_http_core_loc_conf_t    *clcf;
    ngx_http_location_queue_t   *lq;
    ngx_http_malloc_loc_conf_t  *mlcf;

    if (locations == NULL) {
        return;
    }

    for (q = ngx_queue_head(locations);
         q != ngx_queue_sentinel(locations);
         q = ngx_queue_next(q))
    {
        lq = (ngx_http_location_queue_t *) q;
        clcf = (lq->exact != NULL) ? lq->exact : lq->inclusive;

        if (clcf->noname) {
            continue;
        }

        /* not merged yet: 1 where malloc_admin was written */

        mlcf = clcf->loc_conf[ngx_http_malloc_module.ctx_index];

        if (mlcf->admin == 1) {
            if (*admin == NULL) {
                *admin = lq;
            }

        } else if (*other == NULL) {
            *other = lq;
        }

        ngx_http_malloc_find_locations(clcf->locations, admin, other);
    }
}


/* the first address the server listens on, as nginx prints it */

static ngx_str_t *
ngx_http_malloc_listen_text(ngx_http_core_main_conf_t *cmcf,
    ngx_http_core_srv_conf_t *cscf)
{
    ngx_uint_t                  p, a, i;
    ngx_http_conf_port_t       *port;
    ngx_http_conf_addr_t       *addr;
    ngx_http_core_srv_conf_t  **server;

    static ngx_str_t            none = ngx_string("(none)");

    if (cmcf->ports == NULL) {
        return &none;
    }

    port = cmcf->ports->elts;

    for (p = 0; p < cmcf->ports->nelts; p++) {
        addr = port[p].addrs.elts;

        for (a = 0; a < port[p].addrs.nelts; a++) {
            server = addr[a].servers.elts;

            for (i = 0; i < addr[a].servers.nelts; i++) {
                if (server[i] == cscf) {
                    return &addr[a].opt.addr_text;
                }
            }
        }
    }

    return &none;
}


static void *
ngx_http_malloc_create_loc_conf(ngx_conf_t *cf)
{
    ngx_http_malloc_loc_conf_t  *mlcf;

    mlcf = ngx_pcalloc(cf->pool, sizeof(ngx_http_malloc_loc_conf_t));
    if (mlcf == NULL) {
        return NULL;
    }

    mlcf->traffic_row = -1;
    mlcf->admin = NGX_CONF_UNSET;
    mlcf->write = NGX_CONF_UNSET;
    mlcf->timeout = NGX_CONF_UNSET_MSEC;
    mlcf->trusted = NGX_CONF_UNSET_PTR;

    return mlcf;
}


static char *
ngx_http_malloc_merge_loc_conf(ngx_conf_t *cf, void *parent, void *child)
{
    ngx_http_malloc_loc_conf_t *prev = parent;
    ngx_http_malloc_loc_conf_t *conf = child;

    ngx_http_malloc_main_conf_t  *mmcf;

    /* each server and location may be a row of the traffic view */

    mmcf = ngx_http_conf_get_module_main_conf(cf, ngx_http_malloc_module);
    mmcf->nlocs++;

    ngx_conf_merge_ptr_value(conf->trusted, prev->trusted, NULL);

    /*
     * malloc_admin is a handler, like stub_status, and its parameters
     * belong to it: a nested "malloc_admin;" must not inherit write=on
     */

    ngx_conf_init_value(conf->admin, 0);
    ngx_conf_init_value(conf->write, 0);
    ngx_conf_init_msec_value(conf->timeout, 5000);

    return NGX_CONF_OK;
}


static char *
ngx_http_malloc_admin(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_malloc_loc_conf_t *mlcf = conf;

    ngx_str_t                    *value, s;
    ngx_uint_t                    i;
    ngx_http_core_loc_conf_t     *clcf;
    ngx_http_malloc_main_conf_t  *mmcf;

    if (mlcf->admin != NGX_CONF_UNSET) {
        return "is duplicate";
    }

    clcf = ngx_http_conf_get_module_loc_conf(cf, ngx_http_core_module);

#if (NGX_PCRE)
    if (clcf->regex != NULL) {
        return "cannot be used in a regex location: use a prefix location, "
               "e.g. \"location /malloc/\"";
    }
#endif

    if (clcf->named) {
        return "cannot be used in a named location";
    }

    value = cf->args->elts;

    for (i = 1; i < cf->args->nelts; i++) {

        if (ngx_strcmp(value[i].data, "write=on") == 0) {
            mlcf->write = 1;
            continue;
        }

        if (ngx_strcmp(value[i].data, "write=off") == 0) {
            mlcf->write = 0;
            continue;
        }

        if (ngx_strncmp(value[i].data, "timeout=", 8) == 0) {
            s.data = value[i].data + 8;
            s.len = value[i].len - 8;

            mlcf->timeout = ngx_parse_time(&s, 0);
            if (mlcf->timeout == (ngx_msec_t) NGX_ERROR
                || mlcf->timeout == 0)
            {
                ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                                   "invalid timeout \"%V\"", &value[i]);
                return NGX_CONF_ERROR;
            }

            continue;
        }

        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "invalid parameter \"%V\": expected "
                           "write=on, write=off or timeout=<time>",
                           &value[i]);
        return NGX_CONF_ERROR;
    }

    mlcf->admin = 1;
    clcf->handler = ngx_http_malloc_handler;

    mmcf = ngx_http_conf_get_module_main_conf(cf, ngx_http_malloc_module);
    mmcf->admin = 1;

    return NGX_CONF_OK;
}


/*
 * The origins whose pages may use the admin location, kept as one string
 * for the pure check; repeated directives add to it.
 */

static char *
ngx_http_malloc_trusted_origin(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf)
{
    ngx_http_malloc_loc_conf_t *mlcf = conf;

    u_char      *p, *start;
    size_t       len;
    ngx_str_t   *value;
    ngx_uint_t   i;
    char         err[NGX_HTTP_MALLOC_ORIGIN_ERR_LEN];

    value = cf->args->elts;

    len = (mlcf->trusted == NGX_CONF_UNSET_PTR)
          ? 0 : ngx_strlen(mlcf->trusted) + 1;

    for (i = 1; i < cf->args->nelts; i++) {
        if (ngx_http_malloc_origin_valid(value[i].data, value[i].len, err)
            != 0)
        {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                               "invalid origin \"%V\": %s", &value[i], err);
            return NGX_CONF_ERROR;
        }

        len += value[i].len + 1;
    }

    start = ngx_pnalloc(cf->pool, len);
    if (start == NULL) {
        return NGX_CONF_ERROR;
    }

    p = start;

    if (mlcf->trusted != NGX_CONF_UNSET_PTR) {
        p = ngx_cpymem(p, mlcf->trusted, ngx_strlen(mlcf->trusted));
        *p++ = ' ';
    }

    for (i = 1; i < cf->args->nelts; i++) {
        p = ngx_cpymem(p, value[i].data, value[i].len);
        *p++ = (i + 1 < cf->args->nelts) ? ' ' : '\0';
    }

    mlcf->trusted = (char *) start;

    return NGX_CONF_OK;
}


static char *
ngx_http_malloc_dump_dir(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_malloc_main_conf_t *mmcf = conf;

    ngx_str_t   *value, s;
    ngx_path_t  *path;

    if (mmcf->dump_dir != NULL) {
        return "is duplicate";
    }

    value = cf->args->elts;

    if (cf->args->nelts == 3) {
        if (ngx_strncmp(value[2].data, "max_size=", 9) != 0) {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                               "invalid parameter \"%V\": expected "
                               "max_size=size", &value[2]);
            return NGX_CONF_ERROR;
        }

        s.data = value[2].data + 9;
        s.len = value[2].len - 9;

        mmcf->dump_max_size = ngx_parse_offset(&s);
        if (mmcf->dump_max_size == NGX_ERROR) {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                               "invalid max_size \"%V\"", &value[2]);
            return NGX_CONF_ERROR;
        }
    }

    path = ngx_pcalloc(cf->pool, sizeof(ngx_path_t));
    if (path == NULL) {
        return NGX_CONF_ERROR;
    }

    path->name = value[1];

    /* the path rules compare names against "<dir>/" */

    while (path->name.len > 1
           && path->name.data[path->name.len - 1] == '/')
    {
        path->name.len--;
    }

    if (path->name.len == 0) {
        return "must not be empty";
    }

    /* the name is used as a C string too: it ends where its length does */
    path->name.data[path->name.len] = '\0';

    if (ngx_conf_full_name(cf->cycle, &path->name, 0) != NGX_OK) {
        return NGX_CONF_ERROR;
    }

    if (path->name.len + 1 + 255 + 1 > NGX_MAX_PATH) {
        return "is too long";
    }

    path->conf_file = cf->conf_file->file.name.data;
    path->line = cf->conf_file->line;

    mmcf->dump_dir = path;

    return NGX_CONF_OK;
}


/*
 * malloc_snapshot interval=time [keep=N] [format=pprof|heap]
 * [max_size=size];
 */

static char *
ngx_http_malloc_snapshot(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_malloc_main_conf_t *mmcf = conf;

    ngx_str_t                        *value;
    ngx_uint_t                        i;
    ngx_http_malloc_snapshot_conf_t  *sc;

    if (mmcf->snapshot != NULL) {
        return "is duplicate";
    }

    sc = ngx_pcalloc(cf->pool, sizeof(ngx_http_malloc_snapshot_conf_t));
    if (sc == NULL) {
        return NGX_CONF_ERROR;
    }

    /* a day of hourly snapshots, in at most a gigabyte, merged */

    sc->keep = 24;
    sc->max_size = 1024 * 1024 * 1024;
    sc->pprof = 1;

    value = cf->args->elts;

    for (i = 1; i < cf->args->nelts; i++) {
        if (ngx_http_malloc_snapshot_param(sc, &value[i]) != NGX_OK) {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                               "invalid parameter \"%V\": expected "
                               "interval=time, keep=number, "
                               "format=pprof|heap or max_size=size",
                               &value[i]);
            return NGX_CONF_ERROR;
        }
    }

    if (sc->interval == 0) {
        return "needs interval=<time>";
    }

    mmcf->snapshot = sc;

    return NGX_CONF_OK;
}


/* one parameter of malloc_snapshot into sc, or NGX_ERROR if invalid */

static ngx_int_t
ngx_http_malloc_snapshot_param(ngx_http_malloc_snapshot_conf_t *sc,
    ngx_str_t *value)
{
    ngx_int_t  n;
    ngx_str_t  s;

    if (ngx_strncmp(value->data, "interval=", 9) == 0) {
        s.data = value->data + 9;
        s.len = value->len - 9;

        n = ngx_parse_time(&s, 1);
        if (n == NGX_ERROR || n < 1) {
            return NGX_ERROR;
        }

        sc->interval = n;
        return NGX_OK;
    }

    if (ngx_strncmp(value->data, "keep=", 5) == 0) {
        n = ngx_atoi(value->data + 5, value->len - 5);
        if (n == NGX_ERROR || n < 1) {
            return NGX_ERROR;
        }

        sc->keep = n;
        return NGX_OK;
    }

    if (ngx_strncmp(value->data, "max_size=", 9) == 0) {
        s.data = value->data + 9;
        s.len = value->len - 9;

        sc->max_size = ngx_parse_offset(&s);
        if (sc->max_size == NGX_ERROR) {
            return NGX_ERROR;
        }

        return NGX_OK;
    }

    if (ngx_strcmp(value->data, "format=pprof") == 0) {
        sc->pprof = 1;
        return NGX_OK;
    }

    if (ngx_strcmp(value->data, "format=heap") == 0) {
        sc->pprof = 0;
        return NGX_OK;
    }

    return NGX_ERROR;
}


/*
 * The zone and the directory exist only when some location uses
 * malloc_admin: loaded and unused, the module adds nothing to nginx.
 */

static ngx_int_t
ngx_http_malloc_postconfiguration(ngx_conf_t *cf)
{
    ngx_file_info_t               fi;
    ngx_http_malloc_main_conf_t  *mmcf;

    mmcf = ngx_http_conf_get_module_main_conf(cf, ngx_http_malloc_module);

    if (!mmcf->admin) {
        return NGX_OK;
    }

    if (ngx_file_info(mmcf->dump_dir->name.data, &fi) != NGX_FILE_ERROR
        && !ngx_is_dir(&fi))
    {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "malloc_dump_dir \"%V\" exists and is not "
                           "a directory", &mmcf->dump_dir->name);
        return NGX_ERROR;
    }

    /* created by the master and given to the worker user, as temp paths */

    if (ngx_add_path(cf, &mmcf->dump_dir) != NGX_OK) {
        return NGX_ERROR;
    }

    if (ngx_http_malloc_walk_init(cf, mmcf) != NGX_OK) {
        return NGX_ERROR;
    }

    return ngx_http_malloc_board_add(cf, mmcf);
}


/* the main conf of a cycle that has an admin location, or NULL */

static ngx_http_malloc_main_conf_t *
ngx_http_malloc_used(ngx_cycle_t *cycle)
{
    ngx_http_malloc_main_conf_t  *mmcf;

    if (ngx_get_conf(cycle->conf_ctx, ngx_http_module) == NULL) {
        return NULL;
    }

    mmcf = ngx_http_cycle_get_module_main_conf(cycle, ngx_http_malloc_module);

    if (mmcf == NULL || mmcf->shm_zone == NULL) {
        return NULL;
    }

    return mmcf;
}


static ngx_int_t
ngx_http_malloc_init_module(ngx_cycle_t *cycle)
{
    ngx_http_malloc_main_conf_t  *mmcf;

    mmcf = ngx_http_malloc_used(cycle);

    if (mmcf == NULL) {
        return NGX_OK;
    }

    ngx_http_malloc_profile_preload(cycle->log);

    if (ngx_http_malloc_board_init_module(cycle, mmcf) != NGX_OK) {
        return NGX_ERROR;
    }

    ngx_http_malloc_apply_init_module(cycle, mmcf);

    return NGX_OK;
}


static ngx_int_t
ngx_http_malloc_init_process(ngx_cycle_t *cycle)
{
    ngx_http_malloc_main_conf_t  *mmcf;

    if (ngx_process != NGX_PROCESS_WORKER
        && ngx_process != NGX_PROCESS_SINGLE)
    {
        return NGX_OK;
    }

    mmcf = ngx_http_malloc_used(cycle);

    if (mmcf == NULL) {
        return NGX_OK;
    }

    /* the board first: the others hook into it */

    if (ngx_http_malloc_board_init_process(cycle, mmcf) != NGX_OK
        || ngx_http_malloc_threads_init(cycle, mmcf->threads) != NGX_OK)
    {
        return NGX_ERROR;
    }

    ngx_http_malloc_wait_init_process();
    ngx_http_malloc_export_init_process(mmcf);
    ngx_http_malloc_schedule_init_process(mmcf);

    return ngx_http_malloc_apply_init_process(cycle, mmcf);
}


/* malloc_threads number | off; */

static char *
ngx_http_malloc_threads(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_malloc_main_conf_t *mmcf = conf;

    ngx_int_t   n;
    ngx_str_t  *value;

    if (mmcf->threads != NGX_CONF_UNSET_UINT) {
        return "is duplicate";
    }

    value = cf->args->elts;

    if (ngx_strcmp(value[1].data, "off") == 0) {
        mmcf->threads = 0;
        return NGX_CONF_OK;
    }

    n = ngx_atoi(value[1].data, value[1].len);

    if (n < 1 || n > 16) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "invalid value \"%V\": expected a number of "
                           "threads from 1 to 16, or off", &value[1]);
        return NGX_CONF_ERROR;
    }

    mmcf->threads = n;

    return NGX_CONF_OK;
}


/* the module's threads run its code: they stop before it is unloaded */

static void
ngx_http_malloc_exit_process(ngx_cycle_t *cycle)
{
    ngx_http_malloc_threads_exit();
    ngx_http_malloc_export_exit_process();
}


/*
 * malloc_watch [growth=size] [sample=time] [peak=on|off]
 *              [outside=size|off];
 */

static char *
ngx_http_malloc_watch(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_malloc_main_conf_t *mmcf = conf;

    ngx_str_t                     *value;
    ngx_uint_t                     i, outside;
    ngx_http_malloc_watch_conf_t  *wc;

    if (mmcf->watch != NULL) {
        return "is duplicate";
    }

    wc = ngx_pcalloc(cf->pool, sizeof(ngx_http_malloc_watch_conf_t));
    if (wc == NULL) {
        return NGX_CONF_ERROR;
    }

    /* long enough for a leak to show, short enough to cost little */
    wc->sample = 5 * 60 * 1000;

    /* more than a library's own pools at the start, less than a leak's */
    wc->outside = NGX_HTTP_MALLOC_WATCH_OUTSIDE;
    outside = 0;

    value = cf->args->elts;

    for (i = 1; i < cf->args->nelts; i++) {
        if (ngx_http_malloc_watch_param(wc, &value[i], &outside) != NGX_OK) {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                               "invalid parameter \"%V\": expected "
                               "growth=size, sample=time (1s to 30d), "
                               "peak=on|off or outside=size|off",
                               &value[i]);
            return NGX_CONF_ERROR;
        }
    }

    if (wc->growth == 0 && !wc->peak && !outside) {
        return "needs growth=<size>, peak=on or outside=<size>";
    }

    mmcf->watch = wc;

    return NGX_CONF_OK;
}


/*
 * One parameter of malloc_watch into wc, or NGX_ERROR if invalid;
 * *outside is set when the parameter asks for the outside check.
 */

static ngx_int_t
ngx_http_malloc_watch_param(ngx_http_malloc_watch_conf_t *wc,
    ngx_str_t *value, ngx_uint_t *outside)
{
    ngx_str_t  s;

    if (ngx_strncmp(value->data, "growth=", 7) == 0) {
        return ngx_http_malloc_watch_size(value, 7, &wc->growth);
    }

    if (ngx_strncmp(value->data, "sample=", 7) == 0) {
        s.data = value->data + 7;
        s.len = value->len - 7;

        wc->sample = ngx_parse_time(&s, 0);
        if (wc->sample == (ngx_msec_t) NGX_ERROR || wc->sample < 1000
            || wc->sample > (ngx_msec_t) NGX_HTTP_MALLOC_DURATION_MAX * 1000)
        {
            return NGX_ERROR;
        }

        return NGX_OK;
    }

    if (ngx_strncmp(value->data, "outside=", 8) == 0) {
        *outside = (ngx_strcmp(value->data + 8, "off") != 0);

        if (!*outside) {
            wc->outside = 0;
            return NGX_OK;
        }

        return ngx_http_malloc_watch_size(value, 8, &wc->outside);
    }

    if (ngx_strcmp(value->data, "peak=on") == 0
        || ngx_strcmp(value->data, "peak=off") == 0)
    {
        wc->peak = (value->data[6] == 'n');
        return NGX_OK;
    }

    return NGX_ERROR;
}


/* a size parameter's value after its "name=", more than 0 */

static ngx_int_t
ngx_http_malloc_watch_size(ngx_str_t *value, size_t skip, off_t *size)
{
    ngx_str_t  s;

    s.data = value->data + skip;
    s.len = value->len - skip;

    *size = ngx_parse_offset(&s);

    return (*size == NGX_ERROR || *size == 0) ? NGX_ERROR : NGX_OK;
}
