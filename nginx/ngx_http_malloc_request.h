
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * A request of the admin location, from its body to its finalization.
 * An endpoint sees only its job: what the handler's table says of it,
 * the command it posts, what to do with the answers.  Everything else of
 * the request's life (its count, its cleanup, the collection, admission,
 * the thread hand-off and "blocked", every timer, resuming, finalizing)
 * is request.c's, in a context no other file sees.
 */


#ifndef _NGX_HTTP_MALLOC_REQUEST_H_INCLUDED_
#define _NGX_HTTP_MALLOC_REQUEST_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include <jansson.h>

#include "ngx_http_malloc_board.h"


typedef struct ngx_http_malloc_job_s  ngx_http_malloc_job_t;

/* an endpoint's handler: body NULL for GET and HEAD */
typedef ngx_int_t (*ngx_http_malloc_endpoint_pt)(ngx_http_request_t *r,
    ngx_http_malloc_job_t *job, u_char *body, size_t len);

/* every worker answered, or the deadline passed: a final rc or NGX_DONE */
typedef ngx_int_t (*ngx_http_malloc_answered_pt)(ngx_http_request_t *r,
    ngx_http_malloc_job_t *job);

/* work on the module's thread, touching only "data" */
typedef void (*ngx_http_malloc_work_pt)(void *data);

/* back in the event loop (after a thread, a window): rc or NGX_DONE */
typedef ngx_int_t (*ngx_http_malloc_done_pt)(ngx_http_request_t *r,
    void *data);


/* each field has one writer, named on the right */
struct ngx_http_malloc_job_s {
    ngx_uint_t                     endpoint;    /* handler: ..._ep_e */
    ngx_uint_t                     row;         /* handler: its table's */
    ngx_str_t                      rest;        /* handler: the URI after
                                                   the endpoint's name */
    const char                    *type;        /* handler: of the data */
    const char                    *download;    /* handler: a file name,
                                                   or NULL */
    ngx_http_malloc_cmd_t          cmd;         /* endpoint: posted */
    ngx_http_malloc_answered_pt    answered;    /* endpoint */
    void                          *data;        /* endpoint */
    ngx_uint_t                     seq;         /* request: the answers'
                                                   command, 0: none */
    ngx_uint_t                     generation;  /* request: the workers
                                                   it was posted to */
};


/* the handler's: a job for the request, then its body and its endpoint */
ngx_http_malloc_job_t *ngx_http_malloc_request_create(ngx_http_request_t *r);
ngx_int_t ngx_http_malloc_request_start(ngx_http_request_t *r,
    size_t body_max, ngx_http_malloc_endpoint_pt dispatch);

/* the endpoints' */
ngx_int_t ngx_http_malloc_request_admit(ngx_http_request_t *r,
    ngx_uint_t window, ngx_int_t *rc);
ngx_int_t ngx_http_malloc_request_post(ngx_http_request_t *r,
    ngx_msec_t timeout, ngx_uint_t read);
ngx_int_t ngx_http_malloc_request_thread(ngx_http_request_t *r,
    ngx_http_malloc_work_pt work, ngx_http_malloc_done_pt done, void *data);
ngx_int_t ngx_http_malloc_request_later(ngx_http_request_t *r,
    ngx_msec_t delay, ngx_http_malloc_done_pt done, void *data);

/* the files the workers make for a read */
void ngx_http_malloc_request_file(ngx_http_request_t *r, ngx_pid_t pid,
    u_char *path);
json_t *ngx_http_malloc_request_json(ngx_http_request_t *r,
    ngx_http_malloc_worker_t *w);
void ngx_http_malloc_request_read(ngx_http_request_t *r);
void ngx_http_malloc_request_unlink(ngx_http_request_t *r);


#endif /* _NGX_HTTP_MALLOC_REQUEST_H_INCLUDED_ */
