
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * The snapshots' endpoints: GET snapshots lists them with the schedule,
 * GET snapshots/<name> downloads one.  Both read the dump directory and
 * the board; neither waits for a worker.
 *
 * Owns: what a snapshot's name may be.  Calls: reply, board, schedule
 * (the listing), and the pure core (path: the names the schedule writes).
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include <jansson.h>

#include "ngx_http_malloc_module.h"
#include "ngx_http_malloc_board.h"
#include "ngx_http_malloc_request.h"
#include "ngx_http_malloc_reply.h"
#include "ngx_http_malloc_schedule.h"
#include "ngx_http_malloc_snapshot.h"
#include "ngx_http_malloc_path.h"


static ngx_fd_t ngx_http_malloc_snapshot_open(u_char *path,
    ngx_file_info_t *fi);
static ngx_int_t ngx_http_malloc_snapshot_send(ngx_http_request_t *r,
    ngx_str_t *name, ngx_buf_t *b, ngx_file_info_t *fi);


ngx_int_t
ngx_http_malloc_snapshot_index(ngx_http_request_t *r,
    ngx_http_malloc_job_t *job, u_char *body, size_t len)
{
    u_char                       *p;
    json_t                       *json, *list, *f, *sched;
    time_t                        next;
    ngx_uint_t                    i, n;
    ngx_uint_t                    active;
    ngx_http_malloc_snap_file_t  *files;
    ngx_http_malloc_main_conf_t  *mmcf;
    char                         *ts;
    u_char                        time[32], path[NGX_MAX_PATH];

    mmcf = ngx_http_get_module_main_conf(r, ngx_http_malloc_module);

    json = json_object();
    list = json_array();

    if (json == NULL || list == NULL
        || ngx_http_malloc_schedule_list(mmcf, r->pool, &files, &n,
                                         r->connection->log)
           != NGX_OK)
    {
        json_decref(json);
        json_decref(list);
        return ngx_http_malloc_error(r, NGX_HTTP_INTERNAL_SERVER_ERROR,
                                     "dump_dir_unusable",
                                     "cannot list malloc_dump_dir \"%V\"",
                                     &mmcf->dump_dir->name);
    }

    for (i = 0; i < n; i++) {
        ts = files[i].ts;

        /* 20261130T105000Z -> 2026-11-30T10:50:00Z */
        p = ngx_snprintf(time, sizeof(time) - 1, "%*s-%*s-%*sT%*s:%*s:%*sZ",
                         (size_t) 4, ts, (size_t) 2, ts + 4, (size_t) 2,
                         ts + 6, (size_t) 2, ts + 9, (size_t) 2, ts + 11,
                         (size_t) 2, ts + 13);
        *p = '\0';

        p = ngx_snprintf(path, sizeof(path) - 1, "%V/%s",
                         &mmcf->dump_dir->name, files[i].name);
        *p = '\0';

        f = json_pack("{s:s, s:s, s:s, s:s, s:I}", "name", files[i].name,
                      "time", (char *) time, "reason", files[i].reason,
                      "path", (char *) path,
                      "bytes", (json_int_t) files[i].size);

        /* what fired a watch's snapshot */

        if (f != NULL && files[i].figure >= 0) {
            json_object_set_new(f, ngx_strcmp(files[i].reason,
                                               NGX_HTTP_MALLOC_SNAP_PEAK) == 0
                                   ? "allocated" : "grew",
                                json_integer((json_int_t) files[i].figure));
        }

        json_array_append_new(list, f);
    }

    sched = json_null();

    if (mmcf->snapshot != NULL) {
        next = ngx_http_malloc_schedule_next(mmcf);
        active = ngx_http_malloc_board_desired(mmcf, NULL);

        sched = json_pack("{s:I, s:I, s:I, s:s, s:o}",
                          "interval", (json_int_t) mmcf->snapshot->interval,
                          "keep", (json_int_t) mmcf->snapshot->keep,
                          "max_size", (json_int_t) mmcf->snapshot->max_size,
                          "format", mmcf->snapshot->pprof ? "pprof" : "heap",
                          "next_in",
                          (next && active)
                          ? json_integer((json_int_t) ngx_max(next
                                                              - ngx_time(), 0))
                          : json_null());
    }

    json_object_set_new(json, "schedule", sched);
    json_object_set_new(json, "snapshots", list);

    return ngx_http_malloc_send_json(r, NGX_HTTP_OK, json);
}


/* only names that the schedule writes, opened without following links */

ngx_int_t
ngx_http_malloc_snapshot_file(ngx_http_request_t *r, ngx_http_malloc_job_t *job,
    u_char *body, size_t len)
{
    u_char                       *p;
    ngx_fd_t                      fd;
    ngx_buf_t                    *b;
    ngx_file_info_t               fi;
    ngx_pool_cleanup_t           *cln;
    ngx_pool_cleanup_file_t      *clnf;
    ngx_http_malloc_main_conf_t  *mmcf;
    ngx_str_t                    *name;
    u_char                       *path;

    mmcf = ngx_http_get_module_main_conf(r, ngx_http_malloc_module);
    name = &job->rest;

    if (!ngx_http_malloc_path_snapshot(name->data, name->len)) {
        return ngx_http_malloc_error(r, NGX_HTTP_NOT_FOUND,
                                     "no_such_snapshot",
                                     "no snapshot by that name: GET "
                                     "snapshots lists them");
    }

    /* the file's name outlives this call: the cleanup logs it */

    path = ngx_pnalloc(r->pool, mmcf->dump_dir->name.len + name->len + 2);
    if (path == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    p = ngx_sprintf(path, "%V/%V", &mmcf->dump_dir->name, name);
    *p = '\0';

    fd = ngx_http_malloc_snapshot_open(path, &fi);

    if (fd == NGX_INVALID_FILE) {
        return ngx_http_malloc_error(r, NGX_HTTP_NOT_FOUND,
                                     "no_such_snapshot",
                                     "no snapshot by that name: GET "
                                     "snapshots lists them");
    }

    cln = ngx_pool_cleanup_add(r->pool, sizeof(ngx_pool_cleanup_file_t));
    b = ngx_calloc_buf(r->pool);

    if (cln == NULL || b == NULL) {
        (void) ngx_close_file(fd);
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    cln->handler = ngx_pool_cleanup_file;
    clnf = cln->data;
    clnf->fd = fd;
    clnf->name = path;
    clnf->log = r->connection->log;

    b->file = ngx_pcalloc(r->pool, sizeof(ngx_file_t));

    if (b->file == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    b->file->fd = fd;
    b->file->name.data = path;
    b->file->name.len = p - path;
    b->file->log = r->connection->log;
    b->file_pos = 0;
    b->file_last = ngx_file_size(&fi);
    b->in_file = 1;
    b->last_buf = 1;
    b->last_in_chain = 1;

    return ngx_http_malloc_snapshot_send(r, name, b, &fi);
}


/* a regular file by that path, or NGX_INVALID_FILE: links are not followed */

static ngx_fd_t
ngx_http_malloc_snapshot_open(u_char *path, ngx_file_info_t *fi)
{
    ngx_fd_t  fd;

    fd = open((char *) path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

    if (fd == NGX_INVALID_FILE) {
        return NGX_INVALID_FILE;
    }

    if (ngx_fd_info(fd, fi) == NGX_FILE_ERROR || !ngx_is_file(fi)) {
        (void) ngx_close_file(fd);
        return NGX_INVALID_FILE;
    }

    return fd;
}


/* the download's headers, h among them, then b, the file's buffer */

static ngx_int_t
ngx_http_malloc_snapshot_send(ngx_http_request_t *r, ngx_str_t *name,
    ngx_buf_t *b, ngx_file_info_t *fi)
{
    ngx_int_t    rc;
    ngx_chain_t  out;

    if (ngx_http_malloc_attachment(r, name) != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    r->headers_out.status = NGX_HTTP_OK;
    r->headers_out.content_length_n = ngx_file_size(fi);
    ngx_str_set(&r->headers_out.content_type, "application/octet-stream");
    r->headers_out.content_type_len = r->headers_out.content_type.len;

    rc = ngx_http_send_header(r);

    if (rc == NGX_ERROR || rc > NGX_OK || r->header_only) {
        return rc;
    }

    /* an empty file has no buffer to be the last: the end, alone */

    if (ngx_file_size(fi) == 0) {
        return ngx_http_send_special(r, NGX_HTTP_LAST);
    }

    out.buf = b;
    out.next = NULL;

    return ngx_http_output_filter(r, &out);
}
