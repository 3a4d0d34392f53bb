
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * malloc_export: heap profiles pushed to an OpenTelemetry collector over
 * OTLP/HTTP, every interval while sampling is on, and the snapshots as
 * they are taken.
 */


#ifndef _NGX_HTTP_MALLOC_EXPORT_H_INCLUDED_
#define _NGX_HTTP_MALLOC_EXPORT_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include <jansson.h>

#include "ngx_http_malloc_module.h"
#include "ngx_http_malloc_board.h"


/* the longest reason of an export's failure kept */
#define NGX_HTTP_MALLOC_EXPORT_REASON  160


/* malloc_export's counts, for every worker to read; kept across reloads */
typedef struct {
    uint64_t                    sent;       /* requests accepted */
    uint64_t                    failed;     /* attempts that failed */
    uint64_t                    dropped;    /* requests given up */
    uint64_t                    bytes;      /* of the requests sent */
    ngx_int_t                   queued;     /* waiting, every process */
    time_t                      last_success;   /* 0: never */
    time_t                      last_error;     /* 0: never */
    u_char                      reason[NGX_HTTP_MALLOC_EXPORT_REASON];
    uint64_t                    capped;     /* requests built with more
                                               stacks than a profile may
                                               have samples */
    time_t                      last_capped;    /* 0: never */
    uint64_t                    capped_stacks;  /* the last one's stacks */
    uint64_t                    capped_folded;  /* and those folded */
} ngx_http_malloc_export_state_t;


/* the directive: malloc_export URL [interval=] [timeout=] ... */
char *ngx_http_malloc_export_conf(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);

/* once the whole configuration is read: NGX_CONF_OK or a reason */
char *ngx_http_malloc_export_check(ngx_conf_t *cf,
    ngx_http_malloc_main_conf_t *mmcf);

void ngx_http_malloc_export_init_process(ngx_http_malloc_main_conf_t *mmcf);

/*
 * A snapshot of kind "source" (NGX_HTTP_MALLOC_EXPORT_*) was written to
 * these files (NULL-ended): pushed if sources= asks for it.
 */
void ngx_http_malloc_export_snapshot(ngx_http_malloc_main_conf_t *mmcf,
    ngx_uint_t source, char **paths, ngx_log_t *log);

/* the requests still waiting are dropped with the process */
void ngx_http_malloc_export_exit_process(void);

/* GET <loc>/'s "export": null without malloc_export */
json_t *ngx_http_malloc_export_json(ngx_http_malloc_main_conf_t *mmcf);


/* the counts every worker reads (stats, metrics, GET /) */
void ngx_http_malloc_export_state(ngx_http_malloc_main_conf_t *mmcf,
    ngx_http_malloc_export_state_t *state);


#endif /* _NGX_HTTP_MALLOC_EXPORT_H_INCLUDED_ */
