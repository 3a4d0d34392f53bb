
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * Dump-path rules: pure C, no nginx types, so that unit tests and fuzzers
 * can drive them without a server.
 */


#ifndef _NGX_HTTP_MALLOC_PATH_H_INCLUDED_
#define _NGX_HTTP_MALLOC_PATH_H_INCLUDED_


#include <stddef.h>


/* a file name, as the file system takes it */
#define NGX_HTTP_MALLOC_NAME_MAX   255

/* room for a pid in an expanded "%p" */
#define NGX_HTTP_MALLOC_PID_LEN    10


typedef enum {
    NGX_HTTP_MALLOC_PATH_OK = 0,
    NGX_HTTP_MALLOC_PATH_CONTROL,
    NGX_HTTP_MALLOC_PATH_OUTSIDE,
    NGX_HTTP_MALLOC_PATH_SUBDIR,
    NGX_HTTP_MALLOC_PATH_DOT,
    NGX_HTTP_MALLOC_PATH_DIR,
    NGX_HTTP_MALLOC_PATH_PERCENT,
    NGX_HTTP_MALLOC_PATH_TOO_LONG,
    NGX_HTTP_MALLOC_PATH_RESERVED
} ngx_http_malloc_path_rc_e;


/* names of scheduled snapshots, which retention deletes */
#define NGX_HTTP_MALLOC_PATH_SNAPSHOT  "snapshot-"


/*
 * Turns a requested name or absolute path into a file-name template in
 * "dir": "%p" stands for the pid and "%%" for "%".  With "multi" set and no
 * "%p" in the name, ".%p" goes before the extension.  Returns the length
 * written to "out" (NUL-terminated) or a negative ngx_http_malloc_path_rc_e.
 */
int ngx_http_malloc_path_template(const char *dir, size_t dir_len,
    const unsigned char *name, size_t len, int multi, char *out,
    size_t size);

/* expands a template for one pid; returns the length or -1 if too long */
int ngx_http_malloc_path_expand(const char *tmpl, long pid, char *out,
    size_t size);

/*
 * 1 when "name" may be a scheduled snapshot's file: "snapshot-" and more,
 * at most a file name long, no '/', no space, control byte or '"'.  What
 * the admin location serves from the dump directory.
 */
int ngx_http_malloc_path_snapshot(const unsigned char *name, size_t len);

/*
 * The hidden files the module writes into the dump directory, one list:
 * a profile's, stats'/traffic's answers (".profile-"), a snapshot's
 * dumps (".snapshot-"), an export's (".export-"), a dump before it is
 * named (".malloc-").  1 when "name" starts with one of them.
 */
#define NGX_HTTP_MALLOC_HIDDEN_PROFILE   ".profile-"
#define NGX_HTTP_MALLOC_HIDDEN_SNAPSHOT  ".snapshot-"
#define NGX_HTTP_MALLOC_HIDDEN_EXPORT    ".export-"
#define NGX_HTTP_MALLOC_HIDDEN_DUMP      ".malloc-"

int ngx_http_malloc_path_hidden(const char *name);

/* a sentence saying what is wrong with a refused name */
const char *ngx_http_malloc_path_strerror(int rc);


#endif /* _NGX_HTTP_MALLOC_PATH_H_INCLUDED_ */
