
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * What every file of the nginx layer shares: the configuration and the
 * module's limits.  The board's layout is private to its file.
 */


#ifndef _NGX_HTTP_MALLOC_MODULE_H_INCLUDED_
#define _NGX_HTTP_MALLOC_MODULE_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_malloc_jemalloc.h"


#define NGX_HTTP_MALLOC_VERSION      "0.1.0"

/* longest request body taken by any endpoint */
#define NGX_HTTP_MALLOC_BODY_MAX     4096

/*
 * A command wakes every worker through its eventfd; the timer is a safety
 * net (a poster from an older generation has no eventfds of the current
 * one) and paces what each worker publishes.  A waiting request looks at
 * the slots more often.
 */
#define NGX_HTTP_MALLOC_POLL         1000
#define NGX_HTTP_MALLOC_WAIT_POLL    5

/* a name of 255 bytes once expanded, written with "%%" and ".%p" */
#define NGX_HTTP_MALLOC_TMPL_MAX     520

/* the longest "duration" of profiling, in seconds */
#define NGX_HTTP_MALLOC_DURATION_MAX     (30 * 24 * 3600)

/* below this, prof_reset needs "force": true */
#define NGX_HTTP_MALLOC_LG_SAMPLE_FLOOR  12

/* room for an error sentence built outside a request */
#define NGX_HTTP_MALLOC_ERR_TEXT         384

/* a symbol request lists every address of a profile */
#define NGX_HTTP_MALLOC_SYMBOL_BODY_MAX  (1024 * 1024)


/* the admin location's endpoints, named in the handler's table */
typedef enum {
    NGX_HTTP_MALLOC_EP_INDEX = 0,
    NGX_HTTP_MALLOC_EP_PROF_ACTIVE,
    NGX_HTTP_MALLOC_EP_PROF_DUMP,
    NGX_HTTP_MALLOC_EP_HEAP,
    NGX_HTTP_MALLOC_EP_PPROF_HEAP,
    NGX_HTTP_MALLOC_EP_PPROF_PROTO,
    NGX_HTTP_MALLOC_EP_PPROF_SYMBOL,
    NGX_HTTP_MALLOC_EP_PPROF_CMDLINE,
    NGX_HTTP_MALLOC_EP_STATS,
    NGX_HTTP_MALLOC_EP_METRICS,
    NGX_HTTP_MALLOC_EP_TRAFFIC,
    NGX_HTTP_MALLOC_EP_PROF_RESET,
    NGX_HTTP_MALLOC_EP_PURGE,
    NGX_HTTP_MALLOC_EP_SNAPSHOTS,
    NGX_HTTP_MALLOC_EP_SNAPSHOT_FILE,
    NGX_HTTP_MALLOC_EP_PPROF_JSON,
    NGX_HTTP_MALLOC_EP_UI,
    NGX_HTTP_MALLOC_EP_UI_FILE
} ngx_http_malloc_ep_e;


typedef struct {
    time_t                      interval;      /* seconds */
    ngx_uint_t                  keep;
    off_t                       max_size;      /* 0: no limit */
    ngx_uint_t                  pprof;         /* format=pprof */
} ngx_http_malloc_snapshot_conf_t;


/* malloc_watch's outside= by default: RSS outside the allocator */
#define NGX_HTTP_MALLOC_WATCH_OUTSIDE  (256 * 1024 * 1024)


/* malloc_watch: what is watched while nobody looks */
typedef struct {
    off_t                       growth;        /* 0: no growth trigger */
    ngx_msec_t                  sample;        /* sampling after a firing */
    ngx_uint_t                  peak;          /* peak=on */
    off_t                       outside;       /* 0: outside=off */
} ngx_http_malloc_watch_conf_t;


/* what malloc_export pushes, sources=... */
#define NGX_HTTP_MALLOC_EXPORT_INTERVAL  0x01
#define NGX_HTTP_MALLOC_EXPORT_WATCH     0x02
#define NGX_HTTP_MALLOC_EXPORT_SCHEDULE  0x04
#define NGX_HTTP_MALLOC_EXPORT_RELOAD    0x08


/* malloc_export: where the profiles go */
typedef struct {
    ngx_str_t                   url;           /* with the path, for logs */
    ngx_str_t                   host;          /* the Host header */
    ngx_str_t                   server_name;   /* for SNI and the check of
                                                  the certificate */
    ngx_str_t                   path;
    ngx_addr_t                  addr;
    time_t                      interval;      /* seconds */
    ngx_msec_t                  timeout;
    ngx_array_t                 headers;       /* of ngx_keyval_t */
    ngx_array_t                 attributes;    /* of ngx_keyval_t */
    ngx_uint_t                  sources;       /* EXPORT_* */
    ngx_uint_t                  payload;       /* payload=pprof */
    ngx_str_t                   ca;            /* ca=: trusted certificates
                                                  of https, "": the
                                                  system's */
    void                       *ssl;           /* an ngx_ssl_t, NULL: http */
} ngx_http_malloc_export_conf_t;


typedef struct {
    ngx_path_t                       *dump_dir;
    off_t                             dump_max_size; /* 0: no limit */
    ngx_http_malloc_snapshot_conf_t  *snapshot;      /* NULL: none */
    ngx_http_malloc_watch_conf_t     *watch;         /* NULL: none */
    ngx_http_malloc_export_conf_t    *export;        /* NULL: none */
    ngx_shm_zone_t                   *shm_zone;
    ngx_fd_t                         *wake;          /* an eventfd per
                                                        worker */
    ngx_uint_t                        nwake;
    ngx_uint_t                        threads;       /* malloc_threads,
                                                        per worker */
    ngx_uint_t                        admin;         /* unsigned admin:1; */
    ngx_flag_t                        traffic;       /* malloc_traffic */
    ngx_uint_t                        nlocs;         /* servers' and
                                                        locations' confs
                                                        merged */
    ngx_array_t                       traffic_locs;  /* of walk_loc_t, room
                                                        for nlocs + 1 */
    void                             *traffic_outs;  /* the walk's, made
                                                        once per worker */
    void                             *traffic_table; /* the published
                                                        figures', the same */

    /* how the master sampled as it read this configuration */
    ngx_int_t                         master_lg;     /* 2^it bytes; -1:
                                                        not sampling */
    ngx_uint_t                        master_partial; /* not all of it */
} ngx_http_malloc_main_conf_t;


typedef struct {
    ngx_flag_t                  admin;
    ngx_flag_t                  write;
    ngx_msec_t                  timeout;
    char                       *trusted;   /* malloc_trusted_origin: the
                                              origins, space-separated */
    ngx_int_t                   traffic_row;   /* this worker's row of the
                                                  location, -1: not yet */
} ngx_http_malloc_loc_conf_t;


extern ngx_module_t  ngx_http_malloc_module;


ngx_int_t ngx_http_malloc_handler(ngx_http_request_t *r);


#endif /* _NGX_HTTP_MALLOC_MODULE_H_INCLUDED_ */
