
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * Bodies are tiny (the handler bounds them), so jansson's allocations are
 * short-lived and freed before the request ends.
 *
 * Owns: the request bodies' grammar.  Calls: nothing of the module
 * (pure C).
 */


#include <stdio.h>
#include <string.h>
#include <jansson.h>

#include "ngx_http_malloc_json.h"


static json_t *ngx_http_malloc_load(const unsigned char *body, size_t len,
    int *empty, char *err);
static int ngx_http_malloc_only_keys(json_t *obj, const char *keys,
    char *err);


static json_t *
ngx_http_malloc_load(const unsigned char *body, size_t len, int *empty,
    char *err)
{
    size_t        i;
    json_t       *json;
    json_error_t  error;

    *empty = 1;

    for (i = 0; i < len; i++) {
        if (body[i] != ' ' && body[i] != '\t' && body[i] != '\r'
            && body[i] != '\n')
        {
            *empty = 0;
            break;
        }
    }

    if (*empty) {
        return NULL;
    }

    /*
     * JSON text never holds a raw NUL, but jansson stops at one after a
     * complete value: "true\0" would pass
     */

    if (memchr(body, '\0', len) != NULL) {
        snprintf(err, NGX_HTTP_MALLOC_ERR_LEN,
                 "the body is not valid JSON: it contains a NUL byte");
        return NULL;
    }

    json = json_loadb((const char *) body, len,
                      JSON_DECODE_ANY | JSON_ALLOW_NUL | JSON_REJECT_DUPLICATES,
                      &error);

    if (json == NULL) {
        snprintf(err, NGX_HTTP_MALLOC_ERR_LEN,
                 "the body is not valid JSON: %.100s at line %d, column %d",
                 error.text, error.line, error.column);
    }

    return json;
}


/* "keys" lists the fields allowed, as "a" or "a, b" */

static int
ngx_http_malloc_only_keys(json_t *obj, const char *keys, char *err)
{
    size_t       n, klen;
    json_t      *v;
    const char  *k, *p, *end;

    json_object_foreach(obj, k, v) {
        klen = strlen(k);

        for (p = keys; *p != '\0'; p = end + (*end != '\0' ? 2 : 0)) {
            end = strchr(p, ',');

            if (end == NULL) {
                end = p + strlen(p);
            }

            n = end - p;

            if (n == klen && memcmp(p, k, n) == 0) {
                break;
            }
        }

        if (*p == '\0') {
            snprintf(err, NGX_HTTP_MALLOC_ERR_LEN,
                     "unknown field \"%.64s\": the fields are %s", k, keys);
            return -1;
        }
    }

    return 0;
}


int
ngx_http_malloc_parse_empty(const unsigned char *body, size_t len,
    char *err)
{
    int      empty, rc;
    json_t  *json;

    json = ngx_http_malloc_load(body, len, &empty, err);

    if (json == NULL) {
        return empty ? 0 : -1;
    }

    rc = 0;

    if (!json_is_null(json)
        && !(json_is_object(json) && json_object_size(json) == 0))
    {
        snprintf(err, NGX_HTTP_MALLOC_ERR_LEN,
                 "this endpoint takes no body (or {})");
        rc = -1;
    }

    json_decref(json);

    return rc;
}


int
ngx_http_malloc_parse_active(const unsigned char *body, size_t len,
    ngx_http_malloc_active_t *cmd, char *err)
{
    int          empty, rc;
    size_t       n;
    json_t      *json, *v, *d;
    const char  *p;

    cmd->duration[0] = '\0';

    json = ngx_http_malloc_load(body, len, &empty, err);

    if (json == NULL) {
        if (empty) {
            snprintf(err, NGX_HTTP_MALLOC_ERR_LEN,
                     "the body is empty: send true, false "
                     "or {\"active\": true|false}");
        }

        return -1;
    }

    rc = -1;
    v = json;
    d = NULL;

    if (json_is_object(json)) {
        if (ngx_http_malloc_only_keys(json, "active, duration", err) != 0) {
            goto done;
        }

        v = json_object_get(json, "active");
        d = json_object_get(json, "duration");

        if (v == NULL) {
            snprintf(err, NGX_HTTP_MALLOC_ERR_LEN,
                     "the field \"active\" is missing");
            goto done;
        }
    }

    if (!json_is_boolean(v)) {
        snprintf(err, NGX_HTTP_MALLOC_ERR_LEN,
                 "expected true, false or {\"active\": true|false}");
        goto done;
    }

    cmd->active = json_is_true(v);

    if (d != NULL && !json_is_null(d)) {
        n = json_is_string(d) ? json_string_length(d) : 0;
        p = json_is_string(d) ? json_string_value(d) : NULL;

        if (p == NULL || n == 0 || n >= NGX_HTTP_MALLOC_DURATION_LEN
            || strspn(p, "0123456789 smhdwyM") != n || !cmd->active)
        {
            snprintf(err, NGX_HTTP_MALLOC_ERR_LEN,
                     "\"duration\" takes a time such as \"90s\", \"10m\" "
                     "or \"1h 30m\", with \"active\": true");
            goto done;
        }

        memcpy(cmd->duration, p, n + 1);
    }

    rc = 0;

done:

    json_decref(json);

    return rc;
}


int
ngx_http_malloc_parse_reset(const unsigned char *body, size_t len,
    int *lg_sample, int *force, char *err)
{
    int          empty, rc;
    json_t      *json, *v;
    json_int_t   n;

    *lg_sample = -1;
    *force = 0;

    json = ngx_http_malloc_load(body, len, &empty, err);

    if (json == NULL) {
        return empty ? 0 : -1;
    }

    rc = -1;

    if (!json_is_object(json)) {
        snprintf(err, NGX_HTTP_MALLOC_ERR_LEN,
                 "expected nothing, or {\"lg_sample\": N, \"force\": bool}");
        goto done;
    }

    if (ngx_http_malloc_only_keys(json, "lg_sample, force", err) != 0) {
        goto done;
    }

    v = json_object_get(json, "force");

    if (v != NULL) {
        if (!json_is_boolean(v)) {
            snprintf(err, NGX_HTTP_MALLOC_ERR_LEN,
                     "\"force\" takes true or false");
            goto done;
        }

        *force = json_is_true(v);
    }

    v = json_object_get(json, "lg_sample");

    if (v != NULL) {
        n = json_is_integer(v) ? json_integer_value(v) : -1;

        if (n < 0 || n > 63) {
            snprintf(err, NGX_HTTP_MALLOC_ERR_LEN,
                     "\"lg_sample\" takes an integer from 0 to 63 "
                     "(one sample per 2^N bytes allocated)");
            goto done;
        }

        *lg_sample = (int) n;
    }

    rc = 0;

done:

    json_decref(json);

    return rc;
}


int
ngx_http_malloc_parse_dump(const unsigned char *body, size_t len,
    unsigned char *name, size_t name_size, char *err)
{
    int      empty, rc;
    size_t   n;
    json_t  *json, *v;

    json = ngx_http_malloc_load(body, len, &empty, err);

    if (json == NULL) {
        return empty ? 0 : -1;
    }

    rc = -1;
    v = json;

    if (json_is_object(json)) {
        if (ngx_http_malloc_only_keys(json, "path", err) != 0) {
            goto done;
        }

        v = json_object_get(json, "path");

        if (v == NULL) {
            rc = 0;
            goto done;
        }
    }

    if (json_is_null(v)) {
        rc = 0;
        goto done;
    }

    if (!json_is_string(v)) {
        snprintf(err, NGX_HTTP_MALLOC_ERR_LEN,
                 "expected a file name as a JSON string, null, "
                 "or {\"path\": \"...\"}");
        goto done;
    }

    n = json_string_length(v);

    if (n > name_size) {
        snprintf(err, NGX_HTTP_MALLOC_ERR_LEN,
                 "the path is longer than %zu bytes", name_size);
        goto done;
    }

    memcpy(name, json_string_value(v), n);
    rc = (int) n;

done:

    json_decref(json);

    return rc;
}
