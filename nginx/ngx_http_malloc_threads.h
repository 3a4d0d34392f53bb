
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * The module's own small thread pool: dumps, profiles and snapshots run
 * beside the event loop on one or two threads per worker, never on
 * nginx's default pool.
 */


#ifndef _NGX_HTTP_MALLOC_THREADS_H_INCLUDED_
#define _NGX_HTTP_MALLOC_THREADS_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>


typedef struct ngx_http_malloc_task_s  ngx_http_malloc_task_t;

/* "work" runs in a thread: no logging, no nginx pools, no events */
typedef void (*ngx_http_malloc_task_pt)(void *data);

struct ngx_http_malloc_task_s {
    ngx_http_malloc_task_pt     work;
    ngx_http_malloc_task_pt     done;     /* back in the event loop */
    void                       *data;
    ngx_http_malloc_task_t     *next;
    ngx_uint_t                  build;    /* a profile's build or merge:
                                             never on the last thread */
};


/* in a worker: how many threads it may start (0: run tasks in place) */
ngx_int_t ngx_http_malloc_threads_init(ngx_cycle_t *cycle,
    ngx_uint_t threads);

void ngx_http_malloc_threads_exit(void);

/*
 * NGX_OK: "done" runs later in the event loop; NGX_DECLINED: no thread
 * can take it, the caller runs the work in place.
 */
ngx_int_t ngx_http_malloc_threads_post(ngx_http_malloc_task_t *task,
    ngx_log_t *log);


#endif /* _NGX_HTTP_MALLOC_THREADS_H_INCLUDED_ */
