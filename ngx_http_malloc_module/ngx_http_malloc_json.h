
/*
 * Request bodies -> commands: pure C over jansson, no nginx types.
 */


#ifndef _NGX_HTTP_MALLOC_JSON_H_INCLUDED_
#define _NGX_HTTP_MALLOC_JSON_H_INCLUDED_


#include <stddef.h>


#define NGX_HTTP_MALLOC_ERR_LEN   256


/*
 * Parses a prof_active body: true, false or {"active": bool}.
 * Returns 0 and sets *active, or -1 with a reason in err.
 */
int ngx_http_malloc_parse_active(const unsigned char *body, size_t len,
    int *active, char *err);

/*
 * Parses a prof_dump body: "name", null, nothing, {} or {"path": ...}.
 * On success returns the name's length (0: no name), copied to name
 * (name_size bytes at most, not NUL-terminated, NUL bytes kept so the path
 * rules can refuse them); -1 with a reason in err otherwise.
 */
int ngx_http_malloc_parse_dump(const unsigned char *body, size_t len,
    unsigned char *name, size_t name_size, char *err);


#endif /* _NGX_HTTP_MALLOC_JSON_H_INCLUDED_ */
