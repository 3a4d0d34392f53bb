
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * Request bodies -> commands: pure C over jansson, no nginx types.
 */


#ifndef _NGX_HTTP_MALLOC_JSON_H_INCLUDED_
#define _NGX_HTTP_MALLOC_JSON_H_INCLUDED_


#include <stddef.h>


#define NGX_HTTP_MALLOC_ERR_LEN       256
#define NGX_HTTP_MALLOC_DURATION_LEN  32


typedef struct {
    int                         active;
    char                        duration[NGX_HTTP_MALLOC_DURATION_LEN];
                                /* nginx time syntax, "" when absent */
} ngx_http_malloc_active_t;


/*
 * Parses a prof_active body: true, false, {"active": bool} or
 * {"active": true, "duration": "10m"}.  Returns 0, or -1 with a reason in
 * err.  The duration is checked for its form only: the shell parses it.
 */
int ngx_http_malloc_parse_active(const unsigned char *body, size_t len,
    ngx_http_malloc_active_t *cmd, char *err);

/*
 * Parses a prof_reset body: nothing, {}, {"lg_sample": N} with N in
 * 0..63, and "force": bool.  *lg_sample is -1 when absent.
 */
int ngx_http_malloc_parse_reset(const unsigned char *body, size_t len,
    int *lg_sample, int *force, char *err);

/* 0 for an empty body, {} or null; -1 with a reason in err otherwise */
int ngx_http_malloc_parse_empty(const unsigned char *body, size_t len,
    char *err);

/*
 * Parses a prof_dump body: "name", null, nothing, {} or {"path": ...}.
 * On success returns the name's length (0: no name), copied to name
 * (name_size bytes at most, not NUL-terminated, NUL bytes kept so the path
 * rules can refuse them); -1 with a reason in err otherwise.
 */
int ngx_http_malloc_parse_dump(const unsigned char *body, size_t len,
    unsigned char *name, size_t name_size, char *err);


#endif /* _NGX_HTTP_MALLOC_JSON_H_INCLUDED_ */
