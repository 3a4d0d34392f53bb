
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * The collection of the workers' answers to a command, for whoever posts
 * one: a request (through request.c), the snapshot schedule, the watch,
 * the export.
 */


#ifndef _NGX_HTTP_MALLOC_WAIT_H_INCLUDED_
#define _NGX_HTTP_MALLOC_WAIT_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_malloc_board.h"


typedef struct ngx_http_malloc_collect_s  ngx_http_malloc_collect_t;

/*
 * Every live worker answered or the deadline passed ("busy" 0: the
 * answers are in the slots under co->seq), or the ring had no room for
 * the command within the deadline ("busy" 1: nothing was posted).  The
 * command is closed already.
 */
typedef void (*ngx_http_malloc_collected_pt)(ngx_http_malloc_collect_t *co,
    ngx_uint_t busy);


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
    ngx_event_t                    ev;
    ngx_queue_t                    queue;       /* in the waiting list */
    unsigned                       queued:1;
    unsigned                       again:1;     /* posted anew after a
                                                   reload */
};


void ngx_http_malloc_wait_init_process(void);

/* the collection itself */
void ngx_http_malloc_collect(ngx_http_malloc_collect_t *co);
void ngx_http_malloc_collect_end(ngx_http_malloc_collect_t *co);


#endif /* _NGX_HTTP_MALLOC_WAIT_H_INCLUDED_ */
