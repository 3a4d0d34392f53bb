
/*
 * A request that waits for the workers' answers to a command it posted:
 * the per-request context of the admin location.
 */


#ifndef _NGX_HTTP_MALLOC_WAIT_H_INCLUDED_
#define _NGX_HTTP_MALLOC_WAIT_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_malloc_board.h"


typedef struct ngx_http_malloc_ctx_s  ngx_http_malloc_ctx_t;

/* every worker answered, or the deadline passed: a final rc or NGX_DONE */
typedef ngx_int_t (*ngx_http_malloc_answered_pt)(ngx_http_request_t *r,
    ngx_http_malloc_ctx_t *ctx);

/* the request ends while it waits (its client went away) */
typedef void (*ngx_http_malloc_abandoned_pt)(ngx_http_malloc_ctx_t *ctx);


struct ngx_http_malloc_ctx_s {
    ngx_http_request_t            *request;
    ngx_uint_t                     endpoint;    /* ngx_http_malloc_ep_e */
    ngx_uint_t                     row;         /* in the handler's table */
    ngx_str_t                      rest;        /* of the URI after the
                                                   endpoint's name */
    ngx_http_malloc_cmd_t          cmd;         /* as posted */
    ngx_uint_t                     seq;         /* 0: none posted */
    ngx_uint_t                     reserve;     /* entries left free */
    ngx_msec_t                     timeout;
    ngx_msec_t                     deadline;
    ngx_event_t                    wait;
    ngx_queue_t                    queue;       /* in the waiting list */
    ngx_http_malloc_answered_pt    answered;
    ngx_http_malloc_abandoned_pt   abandoned;
    void                          *data;        /* the endpoint's */

    unsigned                       admitted:2;  /* 1 build, 2 window */
    unsigned                       queued:1;
    unsigned                       done:1;
};


/* the request context of a waiting request's timer event */
#define ngx_http_malloc_wait_ctx(ev)                                          \
    ((ngx_http_malloc_ctx_t *)                                                \
         ((u_char *) (ev) - offsetof(ngx_http_malloc_ctx_t, wait)))


void ngx_http_malloc_wait_init_process(void);
ngx_int_t ngx_http_malloc_wait_hold(ngx_http_request_t *r,
    ngx_http_malloc_ctx_t *ctx);
ngx_int_t ngx_http_malloc_wait_admit(ngx_http_request_t *r,
    ngx_http_malloc_ctx_t *ctx, ngx_uint_t window, ngx_int_t *rc);
ngx_int_t ngx_http_malloc_wait_post(ngx_http_request_t *r,
    ngx_http_malloc_ctx_t *ctx, ngx_msec_t timeout, ngx_uint_t read);
void ngx_http_malloc_wait_resume(ngx_http_request_t *r, ngx_int_t rc);

void ngx_http_malloc_wait_file(ngx_http_request_t *r,
    ngx_http_malloc_ctx_t *ctx, ngx_pid_t pid, u_char *path);
void ngx_http_malloc_wait_unlink(ngx_http_malloc_ctx_t *ctx);

/* the request's work is on a thread (1) or back (0) */
void ngx_http_malloc_wait_thread(ngx_http_malloc_ctx_t *ctx,
    ngx_uint_t running);


#endif /* _NGX_HTTP_MALLOC_WAIT_H_INCLUDED_ */
