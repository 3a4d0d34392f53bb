
/*
 * ExportProfilesServiceRequest by hand, as profile.proto is: each message
 * is written into its own buffer and appended, with its length, to the
 * one that holds it.  The dictionary's tables are indexed by what the
 * named profile already numbers: location and function i + 1 are name i,
 * mapping j + 1 is file j, stack s + 1 is stack s; every table starts
 * with the zero entry the specification asks for.  The string table is
 * fixed strings, then the names, the symbols and the files' paths, each
 * list distinct already, so no string is looked up.
 *
 * Owns: nothing past a call.  Calls: arena, folded's types, protobuf
 * (pure C).
 */


#include <stdio.h>
#include <string.h>

#include "ngx_http_malloc_otlp.h"
#include "ngx_http_malloc_protobuf.h"


/* ExportProfilesServiceRequest */
#define NGX_HTTP_MALLOC_OT_RESOURCE_PROFILES  1
#define NGX_HTTP_MALLOC_OT_DICTIONARY         2

/* ProfilesDictionary */
#define NGX_HTTP_MALLOC_OT_MAPPING            1
#define NGX_HTTP_MALLOC_OT_LOCATION           2
#define NGX_HTTP_MALLOC_OT_FUNCTION           3
#define NGX_HTTP_MALLOC_OT_LINK               4
#define NGX_HTTP_MALLOC_OT_STRING             5
#define NGX_HTTP_MALLOC_OT_ATTRIBUTE          6
#define NGX_HTTP_MALLOC_OT_STACK              7

/* Profile */
#define NGX_HTTP_MALLOC_OT_SAMPLE_TYPE        1
#define NGX_HTTP_MALLOC_OT_SAMPLE             2
#define NGX_HTTP_MALLOC_OT_TIME               3
#define NGX_HTTP_MALLOC_OT_DURATION           4
#define NGX_HTTP_MALLOC_OT_PERIOD_TYPE        5
#define NGX_HTTP_MALLOC_OT_PERIOD             6
#define NGX_HTTP_MALLOC_OT_PAYLOAD_FORMAT     9
#define NGX_HTTP_MALLOC_OT_PAYLOAD            10
#define NGX_HTTP_MALLOC_OT_ATTRIBUTES         11

/* the indexes must fit an int32 */
#define NGX_HTTP_MALLOC_OT_MAX                (INT32_MAX / 4)


/* the fixed strings, in the string table's order after "" */
enum {
    NGX_HTTP_MALLOC_OS_INUSE_SPACE = 1,
    NGX_HTTP_MALLOC_OS_INUSE_OBJECTS,
    NGX_HTTP_MALLOC_OS_ALLOC_SPACE,
    NGX_HTTP_MALLOC_OS_ALLOC_OBJECTS,
    NGX_HTTP_MALLOC_OS_BYTES,
    NGX_HTTP_MALLOC_OS_COUNT,
    NGX_HTTP_MALLOC_OS_SPACE,
    NGX_HTTP_MALLOC_OS_BUILD_ID,
    NGX_HTTP_MALLOC_OS_KEYS                 /* then the attributes' keys */
};


static const char  *ngx_http_malloc_otlp_fixed[] = {
    "", "inuse_space", "inuse_objects", "alloc_space", "alloc_objects",
    "bytes", "count", "space", NGX_HTTP_MALLOC_OTLP_BUILD_ID
};


/* the sample types in the order of the named profile's values */
static const int  ngx_http_malloc_otlp_types[][2] = {
    { NGX_HTTP_MALLOC_OS_INUSE_SPACE, NGX_HTTP_MALLOC_OS_BYTES },
    { NGX_HTTP_MALLOC_OS_INUSE_OBJECTS, NGX_HTTP_MALLOC_OS_COUNT },
    { NGX_HTTP_MALLOC_OS_ALLOC_SPACE, NGX_HTTP_MALLOC_OS_BYTES },
    { NGX_HTTP_MALLOC_OS_ALLOC_OBJECTS, NGX_HTTP_MALLOC_OS_COUNT }
};


typedef struct {
    const ngx_http_malloc_otlp_t    *ot;
    const ngx_http_malloc_named_t   *np;
    uint32_t                        *raw_s;    /* string of each symbol,
                                                  0: none */
    uint32_t                         file_s;   /* the first file's string */
    uint32_t                        *build_a;  /* attribute of each file's
                                                  build id, 0: none */
    unsigned char                   *scratch;  /* one stack's message */
} ngx_http_malloc_otlp_ctx_t;


static void ngx_http_malloc_otlp_error(char *err, const char *msg);
static int ngx_http_malloc_otlp_numbers(ngx_http_malloc_otlp_ctx_t *ctx);
static void ngx_http_malloc_otlp_attr(ngx_http_malloc_mbuf_t *b,
    unsigned field, const ngx_http_malloc_otlp_attr_t *a, uint32_t key_s);
static void ngx_http_malloc_otlp_any(ngx_http_malloc_mbuf_t *b,
    const ngx_http_malloc_otlp_attr_t *a);
static void ngx_http_malloc_otlp_resource(ngx_http_malloc_otlp_ctx_t *ctx,
    ngx_http_malloc_mbuf_t *out);
static void ngx_http_malloc_otlp_profile(ngx_http_malloc_otlp_ctx_t *ctx,
    unsigned type, ngx_http_malloc_mbuf_t *out);
static void ngx_http_malloc_otlp_dictionary(ngx_http_malloc_otlp_ctx_t *ctx,
    ngx_http_malloc_mbuf_t *out);
static void ngx_http_malloc_otlp_tables(ngx_http_malloc_otlp_ctx_t *ctx,
    ngx_http_malloc_mbuf_t *d);
static void ngx_http_malloc_otlp_names(ngx_http_malloc_otlp_ctx_t *ctx,
    ngx_http_malloc_mbuf_t *d);
static void ngx_http_malloc_otlp_stacks(ngx_http_malloc_otlp_ctx_t *ctx,
    ngx_http_malloc_mbuf_t *d);
static void ngx_http_malloc_otlp_strings(ngx_http_malloc_otlp_ctx_t *ctx,
    ngx_http_malloc_mbuf_t *d);
static void ngx_http_malloc_otlp_string(ngx_http_malloc_mbuf_t *b,
    unsigned field, const char *s);
static void ngx_http_malloc_otlp_nested(ngx_http_malloc_mbuf_t *out,
    unsigned field, ngx_http_malloc_mbuf_t *msg);


static void
ngx_http_malloc_otlp_error(char *err, const char *msg)
{
    if (err != NULL) {
        snprintf(err, NGX_HTTP_MALLOC_OTLP_ERR_LEN, "%s", msg);
    }
}


int
ngx_http_malloc_otlp_encode(const ngx_http_malloc_otlp_t *ot,
    ngx_http_malloc_mbuf_t *out, char *err)
{
    unsigned                     t, ntypes;
    ngx_http_malloc_mbuf_t       rp, sp, scope, prof;
    ngx_http_malloc_otlp_ctx_t   ctx;

    memset(&ctx, 0, sizeof(ngx_http_malloc_otlp_ctx_t));
    ctx.ot = ot;
    ctx.np = ot->np;

    if (ctx.np->nnames > NGX_HTTP_MALLOC_OT_MAX
        || ctx.np->nstacks > NGX_HTTP_MALLOC_OT_MAX
        || ot->nattrs > 64)
    {
        ngx_http_malloc_otlp_error(err, "the profile is too large");
        return -1;
    }

    if (ngx_http_malloc_otlp_numbers(&ctx) != 0) {
        ngx_http_malloc_otlp_error(err, "out of memory");
        return -1;
    }

    memset(&rp, 0, sizeof(ngx_http_malloc_mbuf_t));
    memset(&sp, 0, sizeof(ngx_http_malloc_mbuf_t));
    memset(&scope, 0, sizeof(ngx_http_malloc_mbuf_t));

    ngx_http_malloc_otlp_resource(&ctx, &rp);

    /* ScopeProfiles: scope 1 (InstrumentationScope: name 1, version 2) */

    ngx_http_malloc_otlp_string(&scope, 1, ot->scope_name);
    ngx_http_malloc_otlp_string(&scope, 2, ot->scope_version);
    ngx_http_malloc_otlp_nested(&sp, 1, &scope);

    ntypes = ctx.np->alloc ? 4 : 2;

    for (t = 0; t < ntypes; t++) {
        memset(&prof, 0, sizeof(ngx_http_malloc_mbuf_t));
        ngx_http_malloc_otlp_profile(&ctx, t, &prof);
        ngx_http_malloc_otlp_nested(&sp, 2, &prof);
    }

    /* ResourceProfiles: scope_profiles 2 */

    ngx_http_malloc_otlp_nested(&rp, 2, &sp);
    ngx_http_malloc_otlp_nested(out, NGX_HTTP_MALLOC_OT_RESOURCE_PROFILES,
                                &rp);

    ngx_http_malloc_otlp_dictionary(&ctx, out);

    if (out->failed) {
        ngx_http_malloc_otlp_error(err, "out of memory");
        return -1;
    }

    return 0;
}


/* the string of each symbol and file, the attribute of each build id */

static int
ngx_http_malloc_otlp_numbers(ngx_http_malloc_otlp_ctx_t *ctx)
{
    size_t                          i;
    uint32_t                        s, a;
    const ngx_http_malloc_named_t  *np;

    np = ctx->np;

    ctx->raw_s = ngx_http_malloc_arena_alloc(ctx->ot->arena,
                                     (np->nnames + 1) * sizeof(uint32_t));
    ctx->build_a = ngx_http_malloc_arena_alloc(ctx->ot->arena,
                                     (np->nfiles + 1) * sizeof(uint32_t));
    if (ctx->raw_s == NULL || ctx->build_a == NULL) {
        return -1;
    }

    s = NGX_HTTP_MALLOC_OS_KEYS + ctx->ot->nattrs + np->nnames;

    for (i = 0; i < np->nnames; i++) {
        if (np->raws[i] != NULL) {
            ctx->raw_s[i] = s++;
        }
    }

    ctx->file_s = s;

    a = 1 + ctx->ot->nattrs;

    for (i = 0; i < np->nfiles; i++) {
        if (np->files[i].build_id != NULL) {
            ctx->build_a[i] = a++;
        }
    }

    return 0;
}


/* KeyValue (key 1, value 2) or, with a key's string, KeyValueAndUnit */

static void
ngx_http_malloc_otlp_attr(ngx_http_malloc_mbuf_t *b, unsigned field,
    const ngx_http_malloc_otlp_attr_t *a, uint32_t key_s)
{
    unsigned char           buf[NGX_HTTP_MALLOC_PB_FIELD_MAX], *p;
    ngx_http_malloc_mbuf_t  kv, any;

    memset(&kv, 0, sizeof(ngx_http_malloc_mbuf_t));
    memset(&any, 0, sizeof(ngx_http_malloc_mbuf_t));

    if (key_s != 0) {
        p = ngx_http_malloc_protobuf_uint(buf, 1, key_s);
        ngx_http_malloc_mbuf_append(&kv, buf, p - buf);

    } else {
        ngx_http_malloc_otlp_string(&kv, 1, a->key);
    }

    ngx_http_malloc_otlp_any(&any, a);
    ngx_http_malloc_otlp_nested(&kv, 2, &any);
    ngx_http_malloc_otlp_nested(b, field, &kv);
}


/* AnyValue: string_value 1 or int_value 3 */

static void
ngx_http_malloc_otlp_any(ngx_http_malloc_mbuf_t *b,
    const ngx_http_malloc_otlp_attr_t *a)
{
    unsigned char   buf[NGX_HTTP_MALLOC_PB_FIELD_MAX], *p;

    if (a->str != NULL) {
        ngx_http_malloc_protobuf_message(b, 1, a->str, strlen(a->str));
        return;
    }

    p = ngx_http_malloc_protobuf_varint(buf, 3 << 3
                                             | NGX_HTTP_MALLOC_PB_VARINT);
    p = ngx_http_malloc_protobuf_varint(p, (uint64_t) a->num);

    ngx_http_malloc_mbuf_append(b, buf, p - buf);
}


/* ResourceProfiles: resource 1 (Resource: attributes 1) */

static void
ngx_http_malloc_otlp_resource(ngx_http_malloc_otlp_ctx_t *ctx,
    ngx_http_malloc_mbuf_t *out)
{
    size_t                  i;
    ngx_http_malloc_mbuf_t  res;

    memset(&res, 0, sizeof(ngx_http_malloc_mbuf_t));

    for (i = 0; i < ctx->ot->nresource; i++) {
        ngx_http_malloc_otlp_attr(&res, 1, &ctx->ot->resource[i], 0);
    }

    /* an empty Resource is still sent: the field says there is one */

    ngx_http_malloc_protobuf_message(out, 1, res.data, res.len);
    ngx_http_malloc_mbuf_free(&res);

    if (res.failed) {
        out->failed = 1;
    }
}


/* one Profile: the samples of one value of every stack that has it */

static void
ngx_http_malloc_otlp_profile(ngx_http_malloc_otlp_ctx_t *ctx, unsigned type,
    ngx_http_malloc_mbuf_t *out)
{
    size_t                           s;
    int64_t                          v;
    unsigned char                    buf[4 * NGX_HTTP_MALLOC_PB_FIELD_MAX];
    unsigned char                    sample[6 * NGX_HTTP_MALLOC_PB_FIELD_MAX];
    unsigned char                   *p, *q;
    const ngx_http_malloc_otlp_t    *ot;
    const ngx_http_malloc_named_t   *np;

    ot = ctx->ot;
    np = ctx->np;

    /* ValueType: type_strindex 1, unit_strindex 2 */

    p = ngx_http_malloc_protobuf_uint(buf, 1,
                                      ngx_http_malloc_otlp_types[type][0]);
    p = ngx_http_malloc_protobuf_uint(p, 2,
                                      ngx_http_malloc_otlp_types[type][1]);
    ngx_http_malloc_protobuf_message(out, NGX_HTTP_MALLOC_OT_SAMPLE_TYPE,
                                     buf, p - buf);

    /* Sample: stack_index 1, values 4 (packed) */

    for (s = 0; s < np->nstacks; s++) {
        v = np->stacks[s].v[type];

        if (v == 0) {
            continue;
        }

        q = ngx_http_malloc_protobuf_varint(buf, (uint64_t) v);

        p = ngx_http_malloc_protobuf_uint(sample, 1, s + 1);
        p = ngx_http_malloc_protobuf_head(p, 4, q - buf);
        memcpy(p, buf, q - buf);
        p += q - buf;

        ngx_http_malloc_protobuf_message(out, NGX_HTTP_MALLOC_OT_SAMPLE,
                                         sample, p - sample);
    }

    /* time_unix_nano 3 is a fixed64 */

    p = buf;

    if (ot->time_nanos != 0) {
        p = ngx_http_malloc_protobuf_varint(p, NGX_HTTP_MALLOC_OT_TIME << 3
                                               | NGX_HTTP_MALLOC_PB_FIXED64);
        for (s = 0; s < 8; s++) {
            *p++ = (unsigned char) ((uint64_t) ot->time_nanos >> (8 * s));
        }
    }

    p = ngx_http_malloc_protobuf_uint(p, NGX_HTTP_MALLOC_OT_DURATION,
                                      (uint64_t) ot->duration_nanos);
    ngx_http_malloc_mbuf_append(out, buf, p - buf);

    p = ngx_http_malloc_protobuf_uint(buf, 1, NGX_HTTP_MALLOC_OS_SPACE);
    p = ngx_http_malloc_protobuf_uint(p, 2, NGX_HTTP_MALLOC_OS_BYTES);
    ngx_http_malloc_protobuf_message(out, NGX_HTTP_MALLOC_OT_PERIOD_TYPE,
                                     buf, p - buf);

    p = ngx_http_malloc_protobuf_uint(buf, NGX_HTTP_MALLOC_OT_PERIOD,
                                      np->period);
    ngx_http_malloc_mbuf_append(out, buf, p - buf);

    if (type == 0 && ot->original != NULL) {
        ngx_http_malloc_otlp_string(out, NGX_HTTP_MALLOC_OT_PAYLOAD_FORMAT,
                                    "pprof");
        ngx_http_malloc_protobuf_message(out, NGX_HTTP_MALLOC_OT_PAYLOAD,
                                         ot->original, ot->original_len);
    }

    /* attribute_indices 11 (packed): the attributes 1 to nattrs */

    p = sample;

    for (s = 1; s <= ot->nattrs; s++) {
        p = ngx_http_malloc_protobuf_varint(p, s);
    }

    if (p != sample) {
        ngx_http_malloc_protobuf_message(out, NGX_HTTP_MALLOC_OT_ATTRIBUTES,
                                         sample, p - sample);
    }
}


static void
ngx_http_malloc_otlp_dictionary(ngx_http_malloc_otlp_ctx_t *ctx,
    ngx_http_malloc_mbuf_t *out)
{
    ngx_http_malloc_mbuf_t  d;

    memset(&d, 0, sizeof(ngx_http_malloc_mbuf_t));

    ngx_http_malloc_otlp_tables(ctx, &d);
    ngx_http_malloc_otlp_stacks(ctx, &d);
    ngx_http_malloc_otlp_strings(ctx, &d);

    ngx_http_malloc_otlp_nested(out, NGX_HTTP_MALLOC_OT_DICTIONARY, &d);
}


/* the zero entries, the link, mappings and the attributes */

static void
ngx_http_malloc_otlp_tables(ngx_http_malloc_otlp_ctx_t *ctx,
    ngx_http_malloc_mbuf_t *d)
{
    size_t                          i;
    unsigned char                   buf[4 * NGX_HTTP_MALLOC_PB_FIELD_MAX];
    unsigned char                   zero[28], *p, *q;
    const ngx_http_malloc_named_t  *np;
    ngx_http_malloc_otlp_attr_t     build;

    np = ctx->np;

    ngx_http_malloc_protobuf_message(d, NGX_HTTP_MALLOC_OT_MAPPING, "", 0);
    ngx_http_malloc_protobuf_message(d, NGX_HTTP_MALLOC_OT_LOCATION, "", 0);
    ngx_http_malloc_protobuf_message(d, NGX_HTTP_MALLOC_OT_FUNCTION, "", 0);
    ngx_http_malloc_protobuf_message(d, NGX_HTTP_MALLOC_OT_ATTRIBUTE, "", 0);

    /* Link: trace_id 1 and span_id 2 of zero bytes, as codecs expect */

    memset(zero, 0, sizeof(zero));
    p = ngx_http_malloc_protobuf_head(zero, 1, 16);
    p = ngx_http_malloc_protobuf_head(p + 16, 2, 8);
    ngx_http_malloc_protobuf_message(d, NGX_HTTP_MALLOC_OT_LINK, zero,
                                     p + 8 - zero);

    /* Mapping: filename_strindex 4, attribute_indices 5 (packed) */

    for (i = 0; i < np->nfiles; i++) {
        p = ngx_http_malloc_protobuf_uint(buf, 4, ctx->file_s + i);

        if (ctx->build_a[i] != 0) {
            q = ngx_http_malloc_protobuf_head(p, 5,
                    ngx_http_malloc_protobuf_varint_len(ctx->build_a[i]));
            p = ngx_http_malloc_protobuf_varint(q, ctx->build_a[i]);
        }

        ngx_http_malloc_protobuf_message(d, NGX_HTTP_MALLOC_OT_MAPPING, buf,
                                         p - buf);
    }

    ngx_http_malloc_otlp_names(ctx, d);

    /* KeyValueAndUnit: key_strindex 1, value 2 */

    for (i = 0; i < ctx->ot->nattrs; i++) {
        ngx_http_malloc_otlp_attr(d, NGX_HTTP_MALLOC_OT_ATTRIBUTE,
                                  &ctx->ot->attrs[i],
                                  NGX_HTTP_MALLOC_OS_KEYS + i);
    }

    for (i = 0; i < np->nfiles; i++) {
        if (ctx->build_a[i] == 0) {
            continue;
        }

        build.key = NGX_HTTP_MALLOC_OTLP_BUILD_ID;
        build.str = np->files[i].build_id;
        build.num = 0;

        ngx_http_malloc_otlp_attr(d, NGX_HTTP_MALLOC_OT_ATTRIBUTE, &build,
                                  NGX_HTTP_MALLOC_OS_BUILD_ID);
    }
}


/*
 * Location: mapping_index 1, lines 3 (Line: function_index 1);
 * Function: name_strindex 1, system_name_strindex 2
 */

static void
ngx_http_malloc_otlp_names(ngx_http_malloc_otlp_ctx_t *ctx,
    ngx_http_malloc_mbuf_t *d)
{
    size_t                          i;
    uint32_t                        name_s;
    unsigned char                   buf[4 * NGX_HTTP_MALLOC_PB_FIELD_MAX];
    unsigned char                   line[NGX_HTTP_MALLOC_PB_FIELD_MAX];
    unsigned char                  *p, *q;
    const ngx_http_malloc_named_t  *np;

    np = ctx->np;

    for (i = 0; i < np->nnames; i++) {
        q = ngx_http_malloc_protobuf_uint(line, 1, i + 1);

        p = ngx_http_malloc_protobuf_uint(buf, 1, np->name_files[i] + 1);
        p = ngx_http_malloc_protobuf_head(p, 3, q - line);
        memcpy(p, line, q - line);
        p += q - line;

        ngx_http_malloc_protobuf_message(d, NGX_HTTP_MALLOC_OT_LOCATION, buf,
                                         p - buf);
    }

    for (i = 0; i < np->nnames; i++) {
        name_s = NGX_HTTP_MALLOC_OS_KEYS + ctx->ot->nattrs + i;

        p = ngx_http_malloc_protobuf_uint(buf, 1, name_s);
        p = ngx_http_malloc_protobuf_uint(p, 2, ctx->raw_s[i] ? ctx->raw_s[i]
                                                              : name_s);

        ngx_http_malloc_protobuf_message(d, NGX_HTTP_MALLOC_OT_FUNCTION, buf,
                                         p - buf);
    }
}


/* Stack: location_indices 1 (packed), the leaf first */

static void
ngx_http_malloc_otlp_stacks(ngx_http_malloc_otlp_ctx_t *ctx,
    ngx_http_malloc_mbuf_t *d)
{
    size_t                           s, k, len, max;
    unsigned char                   *p;
    const ngx_http_malloc_nstack_t  *st;

    ngx_http_malloc_protobuf_message(d, NGX_HTTP_MALLOC_OT_STACK, "", 0);

    max = 0;

    for (s = 0; s < ctx->np->nstacks; s++) {
        if (ctx->np->stacks[s].n > max) {
            max = ctx->np->stacks[s].n;
        }
    }

    ctx->scratch = ngx_http_malloc_arena_alloc(ctx->ot->arena,
                               (max + 2) * NGX_HTTP_MALLOC_PB_FIELD_MAX);
    if (ctx->scratch == NULL) {
        d->failed = 1;
        return;
    }

    for (s = 0; s < ctx->np->nstacks; s++) {
        st = &ctx->np->stacks[s];

        len = 0;

        for (k = 0; k < st->n; k++) {
            len += ngx_http_malloc_protobuf_varint_len(st->ids[k]);
        }

        p = ctx->scratch;

        if (len != 0) {
            p = ngx_http_malloc_protobuf_head(p, 1, len);

            for (k = st->n; k > 0; k--) {
                p = ngx_http_malloc_protobuf_varint(p, st->ids[k - 1]);
            }
        }

        ngx_http_malloc_protobuf_message(d, NGX_HTTP_MALLOC_OT_STACK,
                                         ctx->scratch, p - ctx->scratch);
    }
}


/* in the order the numbers above gave them */

static void
ngx_http_malloc_otlp_strings(ngx_http_malloc_otlp_ctx_t *ctx,
    ngx_http_malloc_mbuf_t *d)
{
    size_t                          i;
    const ngx_http_malloc_named_t  *np;

    np = ctx->np;

    for (i = 0; i < NGX_HTTP_MALLOC_OS_KEYS; i++) {
        ngx_http_malloc_otlp_string(d, NGX_HTTP_MALLOC_OT_STRING,
                                    ngx_http_malloc_otlp_fixed[i]);
    }

    for (i = 0; i < ctx->ot->nattrs; i++) {
        ngx_http_malloc_otlp_string(d, NGX_HTTP_MALLOC_OT_STRING,
                                    ctx->ot->attrs[i].key);
    }

    for (i = 0; i < np->nnames; i++) {
        ngx_http_malloc_otlp_string(d, NGX_HTTP_MALLOC_OT_STRING,
                                    np->names[i]);
    }

    for (i = 0; i < np->nnames; i++) {
        if (np->raws[i] != NULL) {
            ngx_http_malloc_otlp_string(d, NGX_HTTP_MALLOC_OT_STRING,
                                        np->raws[i]);
        }
    }

    for (i = 0; i < np->nfiles; i++) {
        ngx_http_malloc_otlp_string(d, NGX_HTTP_MALLOC_OT_STRING,
                                    np->files[i].path);
    }
}


/* a string field; a repeated one keeps its empty strings */

static void
ngx_http_malloc_otlp_string(ngx_http_malloc_mbuf_t *b, unsigned field,
    const char *s)
{
    if (s == NULL) {
        s = "";
    }

    ngx_http_malloc_protobuf_message(b, field, s, strlen(s));
}


/* msg appended as a field of out, then freed */

static void
ngx_http_malloc_otlp_nested(ngx_http_malloc_mbuf_t *out, unsigned field,
    ngx_http_malloc_mbuf_t *msg)
{
    ngx_http_malloc_protobuf_message(out, field, msg->data, msg->len);

    if (msg->failed) {
        out->failed = 1;
    }

    ngx_http_malloc_mbuf_free(msg);
}
