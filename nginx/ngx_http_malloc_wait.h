
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * The collection of the workers' answers to a command (for a request,
 * the snapshot schedule or the watch), and the per-request context of
 * the admin location that waits on one.
 */


#ifndef _NGX_HTTP_MALLOC_WAIT_H_INCLUDED_
#define _NGX_HTTP_MALLOC_WAIT_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include <jansson.h>

#include "ngx_http_malloc_board.h"


typedef struct ngx_http_malloc_collect_s  ngx_http_malloc_collect_t;
typedef struct ngx_http_malloc_ctx_s  ngx_http_malloc_ctx_t;

/*
 * Every live worker answered or the deadline passed ("busy" 0: the
 * answers are in the slots under co->seq), or the ring had no room for
 * the command within the deadline ("busy" 1: nothing was posted).  The
 * command is closed already.
 */
typedef void (*ngx_http_malloc_collected_pt)(ngx_http_malloc_collect_t *co,
    ngx_uint_t busy);

/* every worker answered, or the deadline passed: a final rc or NGX_DONE */
typedef ngx_int_t (*ngx_http_malloc_answered_pt)(ngx_http_request_t *r,
    ngx_http_malloc_ctx_t *ctx);


/* the caller fills in the fields above "seq"; the rest is wait.c's */
struct ngx_http_malloc_collect_s {
    ngx_http_malloc_main_conf_t   *mmcf;
    ngx_http_malloc_cmd_t         *cmd;
    ngx_uint_t                     reserve;     /* ring entries left free:
                                                   NGX_HTTP_MALLOC_RING_WRITES
                                                   for a read */
    ngx_msec_t                     timeout;
    ngx_http_malloc_collected_pt   collected;
    ngx_log_t                     *log;
    void                          *data;        /* the caller's */

    ngx_uint_t                     seq;         /* 0: not posted yet */
    ngx_uint_t                     generation;  /* the workers posted to */
    ngx_msec_t                     deadline;
    ngx_event_t                    ev;          /* the caller's timer too,
                                                   while not collecting */
    ngx_queue_t                    queue;       /* in the waiting list */
    unsigned                       queued:1;
    unsigned                       again:1;     /* posted anew after a
                                                   reload */
};


/* written by handler.c (endpoint to download), wait.c, and the endpoint */
struct ngx_http_malloc_ctx_s {
    ngx_http_request_t            *request;     /* wait.c */
    ngx_uint_t                     endpoint;    /* ngx_http_malloc_ep_e */
    ngx_uint_t                     row;         /* in the handler's table */
    ngx_str_t                      rest;        /* of the URI after the
                                                   endpoint's name */
    const char                    *type;        /* of the data answered */
    const char                    *download;    /* its file name, or NULL */
    ngx_http_malloc_cmd_t          cmd;         /* the endpoint's */
    ngx_http_malloc_collect_t      co;          /* wait.c's */
    ngx_http_malloc_answered_pt    answered;    /* the endpoint's */
    void                          *data;        /* the endpoint's */

    unsigned                       admitted:2;  /* wait.c: 1 build,
                                                   2 window */
    unsigned                       collecting:1;  /* wait.c */
};


/* the request context of a request's event (its timer) */
#define ngx_http_malloc_wait_ctx(ev)                                          \
    ((ngx_http_malloc_ctx_t *)                                                \
         ((u_char *) (ev) - offsetof(ngx_http_malloc_ctx_t, co.ev)))


void ngx_http_malloc_wait_init_process(void);

/* the collection itself */
void ngx_http_malloc_collect(ngx_http_malloc_collect_t *co);
void ngx_http_malloc_collect_end(ngx_http_malloc_collect_t *co);

/* a request's */
ngx_int_t ngx_http_malloc_wait_hold(ngx_http_request_t *r,
    ngx_http_malloc_ctx_t *ctx);
ngx_int_t ngx_http_malloc_wait_admit(ngx_http_request_t *r,
    ngx_http_malloc_ctx_t *ctx, ngx_uint_t window, ngx_int_t *rc);
ngx_int_t ngx_http_malloc_wait_post(ngx_http_request_t *r,
    ngx_http_malloc_ctx_t *ctx, ngx_msec_t timeout, ngx_uint_t read);
void ngx_http_malloc_wait_resume(ngx_http_request_t *r, ngx_int_t rc);
void ngx_http_malloc_wait_file(ngx_http_request_t *r,
    ngx_http_malloc_ctx_t *ctx, ngx_pid_t pid, u_char *path);
json_t *ngx_http_malloc_wait_json(ngx_http_request_t *r,
    ngx_http_malloc_ctx_t *ctx, ngx_http_malloc_worker_t *w);
void ngx_http_malloc_wait_read(ngx_http_malloc_ctx_t *ctx);
void ngx_http_malloc_wait_unlink(ngx_http_malloc_ctx_t *ctx);

/* the request's work is on a thread (1) or back (0) */
void ngx_http_malloc_wait_thread(ngx_http_malloc_ctx_t *ctx,
    ngx_uint_t running);


#endif /* _NGX_HTTP_MALLOC_WAIT_H_INCLUDED_ */
