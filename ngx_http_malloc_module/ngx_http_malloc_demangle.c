
/*
 * The heap viewer names frames after their ELF symbols; C++ and Rust
 * modules give names like _ZN11modsecurity15RuleWithActions8evaluate...
 * that an operator cannot read.  This turns the common forms into what
 * c++filt and rustc-demangle print, written straight into the caller's
 * buffer: substitutions and template parameters are kept as ranges of
 * that buffer, so that nothing is allocated.  What it does not know, it
 * refuses (0), so that a name is either right or shown as it is.
 *
 * Owns: the grammars of Itanium C++ and Rust (legacy, v0) names.
 * Calls: nothing of the module (pure C).
 */


#include <stdint.h>
#include <string.h>

#include "ngx_http_malloc_demangle.h"


/* enough for the names of real programs, small enough for a stack */
#define NGX_HTTP_MALLOC_DM_SUBS    256
#define NGX_HTTP_MALLOC_DM_ARGS    64
#define NGX_HTTP_MALLOC_DM_DEPTH   64
#define NGX_HTTP_MALLOC_DM_STEPS   100000

/*
 * c++filt gives up on some names over 1000 bytes that it could read;
 * rather than guess which, those are left as they are
 */
#define NGX_HTTP_MALLOC_DM_MAXLEN  1000

/* return types c++filt leaves out, cut from the output at the end */
#define NGX_HTTP_MALLOC_DM_HIDDEN  8

/* the qualifiers of a type or of a method, in the order c++filt prints */
#define NGX_HTTP_MALLOC_DM_CONST     1
#define NGX_HTTP_MALLOC_DM_VOLATILE  2
#define NGX_HTTP_MALLOC_DM_RESTRICT  4


/*
 * A piece of the output: a substitution, a template argument, a type
 * just printed.  name is the last unqualified name inside it (what a
 * constructor of it is called), nlen 0 when there is none; ref says
 * whether it is a reference (1 "&", 2 "&&"), for reference collapsing.
 */
typedef struct {
    size_t                      start;
    size_t                      len;
    size_t                      name;
    size_t                      nlen;
    int                         ref;
    int                         cv;         /* const or volatile */
} ngx_http_malloc_dm_text_t;


typedef struct {
    const char                 *p;          /* the next byte of sym */
    const char                 *start;      /* v0: what backrefs count */
    char                       *buf;
    size_t                      size;
    size_t                      len;
    unsigned                    steps;
    unsigned                    depth;
    unsigned                    nsubs;
    unsigned                    nargs;
    unsigned                    nhidden;
    int                         have_args;  /* T_ has a list to name */
    int                         record;     /* a name's args are T_'s */
    int                         failed;
    int                         silent;     /* v0: parse, print nothing */
    ngx_http_malloc_dm_text_t   last;       /* the last name printed */
    ngx_http_malloc_dm_text_t   subs[NGX_HTTP_MALLOC_DM_SUBS];
    ngx_http_malloc_dm_text_t   args[NGX_HTTP_MALLOC_DM_ARGS];
    ngx_http_malloc_dm_text_t   hidden[NGX_HTTP_MALLOC_DM_HIDDEN];
} ngx_http_malloc_dm_t;


/* what the parse of a name tells the encoding around it */
typedef struct {
    int                         templ;      /* ends in template args */
    int                         cdtor;      /* ctor, dtor, conversion */
    unsigned                    quals;      /* a method's cv-qualifiers */
    int                         ref;        /* its ref-qualifier, 1 or 2 */
} ngx_http_malloc_dm_name_t;


typedef struct {
    const char                 *code;
    const char                 *name;
} ngx_http_malloc_dm_pair_t;


static int ngx_http_malloc_dm_enter(ngx_http_malloc_dm_t *dm);
static void ngx_http_malloc_dm_fail(ngx_http_malloc_dm_t *dm);
static void ngx_http_malloc_dm_put(ngx_http_malloc_dm_t *dm, const char *s,
    size_t n);
static void ngx_http_malloc_dm_puts(ngx_http_malloc_dm_t *dm, const char *s);
static char ngx_http_malloc_dm_lastc(ngx_http_malloc_dm_t *dm);
static void ngx_http_malloc_dm_copy(ngx_http_malloc_dm_t *dm,
    const ngx_http_malloc_dm_text_t *from, ngx_http_malloc_dm_text_t *to);
static void ngx_http_malloc_dm_add(ngx_http_malloc_dm_t *dm, size_t start,
    int ref, int cv);
static void ngx_http_malloc_dm_hide(ngx_http_malloc_dm_t *dm, size_t start,
    size_t len);
static void ngx_http_malloc_dm_cut(ngx_http_malloc_dm_t *dm);
static void ngx_http_malloc_dm_rotate(ngx_http_malloc_dm_t *dm, size_t a,
    size_t m);
static void ngx_http_malloc_dm_reverse(char *p, size_t a, size_t b);
static void ngx_http_malloc_dm_move(ngx_http_malloc_dm_text_t *t, size_t a,
    size_t m, size_t b);
static int ngx_http_malloc_dm_number(ngx_http_malloc_dm_t *dm, size_t *n);
static void ngx_http_malloc_dm_special(ngx_http_malloc_dm_t *dm);
static void ngx_http_malloc_dm_thunk(ngx_http_malloc_dm_t *dm, char c);
static int ngx_http_malloc_dm_offset(ngx_http_malloc_dm_t *dm);
static void ngx_http_malloc_dm_encoding(ngx_http_malloc_dm_t *dm, char end);
static void ngx_http_malloc_dm_params(ngx_http_malloc_dm_t *dm, char end);
static void ngx_http_malloc_dm_quals(ngx_http_malloc_dm_t *dm,
    unsigned quals);
static unsigned ngx_http_malloc_dm_cv(ngx_http_malloc_dm_t *dm);
static void ngx_http_malloc_dm_name(ngx_http_malloc_dm_t *dm,
    ngx_http_malloc_dm_name_t *info);
static void ngx_http_malloc_dm_nested(ngx_http_malloc_dm_t *dm,
    ngx_http_malloc_dm_name_t *info);
static void ngx_http_malloc_dm_local(ngx_http_malloc_dm_t *dm,
    ngx_http_malloc_dm_name_t *info);
static void ngx_http_malloc_dm_discriminator(ngx_http_malloc_dm_t *dm);
static void ngx_http_malloc_dm_unqualified(ngx_http_malloc_dm_t *dm,
    ngx_http_malloc_dm_name_t *info);
static void ngx_http_malloc_dm_source(ngx_http_malloc_dm_t *dm);
static void ngx_http_malloc_dm_operator(ngx_http_malloc_dm_t *dm,
    ngx_http_malloc_dm_name_t *info);
static void ngx_http_malloc_dm_lambda(ngx_http_malloc_dm_t *dm);
static void ngx_http_malloc_dm_subst(ngx_http_malloc_dm_t *dm,
    ngx_http_malloc_dm_text_t *t);
static void ngx_http_malloc_dm_tparam(ngx_http_malloc_dm_t *dm,
    ngx_http_malloc_dm_text_t *t);
static void ngx_http_malloc_dm_targs(ngx_http_malloc_dm_t *dm, int record);
static void ngx_http_malloc_dm_targ(ngx_http_malloc_dm_t *dm,
    ngx_http_malloc_dm_text_t *t);
static void ngx_http_malloc_dm_literal(ngx_http_malloc_dm_t *dm);
static void ngx_http_malloc_dm_integer(ngx_http_malloc_dm_t *dm, char c,
    const char *digits, size_t n);
static const char *ngx_http_malloc_dm_builtin(ngx_http_malloc_dm_t *dm);
static void ngx_http_malloc_dm_type(ngx_http_malloc_dm_t *dm,
    ngx_http_malloc_dm_text_t *t);
static void ngx_http_malloc_dm_compound(ngx_http_malloc_dm_t *dm,
    ngx_http_malloc_dm_text_t *t);
static void ngx_http_malloc_dm_qualified(ngx_http_malloc_dm_t *dm,
    ngx_http_malloc_dm_text_t *t);
static void ngx_http_malloc_dm_pointer(ngx_http_malloc_dm_t *dm,
    ngx_http_malloc_dm_text_t *t);
static void ngx_http_malloc_dm_recalled(ngx_http_malloc_dm_t *dm,
    ngx_http_malloc_dm_text_t *t);
static void ngx_http_malloc_dm_class(ngx_http_malloc_dm_t *dm,
    ngx_http_malloc_dm_text_t *t);
static void ngx_http_malloc_dm_clones(ngx_http_malloc_dm_t *dm);
static int ngx_http_malloc_dm_is_legacy(const char *sym);
static void ngx_http_malloc_dm_legacy(ngx_http_malloc_dm_t *dm);
static void ngx_http_malloc_dm_legacy_part(ngx_http_malloc_dm_t *dm,
    const char *s, size_t n);
static void ngx_http_malloc_dm_legacy_escape(ngx_http_malloc_dm_t *dm,
    const char *s, size_t n);
static int ngx_http_malloc_dm_v0_b62(ngx_http_malloc_dm_t *dm,
    uint64_t *v);
static uint64_t ngx_http_malloc_dm_v0_dis(ngx_http_malloc_dm_t *dm);
static const char *ngx_http_malloc_dm_v0_ident(ngx_http_malloc_dm_t *dm,
    uint64_t *dis, size_t *n);
static void ngx_http_malloc_dm_v0_path(ngx_http_malloc_dm_t *dm,
    int in_value);
static void ngx_http_malloc_dm_v0_nested(ngx_http_malloc_dm_t *dm,
    int in_value);
static void ngx_http_malloc_dm_v0_impl(ngx_http_malloc_dm_t *dm, char tag);
static void ngx_http_malloc_dm_v0_arg(ngx_http_malloc_dm_t *dm);
static void ngx_http_malloc_dm_v0_type(ngx_http_malloc_dm_t *dm);
static unsigned ngx_http_malloc_dm_v0_list(ngx_http_malloc_dm_t *dm,
    void (*item)(ngx_http_malloc_dm_t *dm));
static void ngx_http_malloc_dm_v0_tuple(ngx_http_malloc_dm_t *dm);
static void ngx_http_malloc_dm_v0_ref(ngx_http_malloc_dm_t *dm);
static void ngx_http_malloc_dm_v0_const(ngx_http_malloc_dm_t *dm);
static int ngx_http_malloc_dm_v0_hex(ngx_http_malloc_dm_t *dm,
    uint64_t *v);
static void ngx_http_malloc_dm_v0_value(ngx_http_malloc_dm_t *dm, char c,
    int neg, uint64_t v);
static void ngx_http_malloc_dm_v0_backref(ngx_http_malloc_dm_t *dm,
    int what, int in_value);
static void ngx_http_malloc_dm_decimal(ngx_http_malloc_dm_t *dm,
    uint64_t v);


/* the two-letter operator codes; a name that is a word gets a space */
static const ngx_http_malloc_dm_pair_t  ngx_http_malloc_dm_operators[] = {
    { "nw", "new" }, { "na", "new[]" }, { "dl", "delete" },
    { "da", "delete[]" }, { "ps", "+" }, { "ng", "-" }, { "ad", "&" },
    { "de", "*" }, { "co", "~" }, { "pl", "+" }, { "mi", "-" },
    { "ml", "*" }, { "dv", "/" }, { "rm", "%" }, { "an", "&" },
    { "or", "|" }, { "eo", "^" }, { "aS", "=" }, { "pL", "+=" },
    { "mI", "-=" }, { "mL", "*=" }, { "dV", "/=" }, { "rM", "%=" },
    { "aN", "&=" }, { "oR", "|=" }, { "eO", "^=" }, { "ls", "<<" },
    { "rs", ">>" }, { "lS", "<<=" }, { "rS", ">>=" }, { "eq", "==" },
    { "ne", "!=" }, { "lt", "<" }, { "gt", ">" }, { "le", "<=" },
    { "ge", ">=" }, { "ss", "<=>" }, { "nt", "!" }, { "aa", "&&" },
    { "oo", "||" }, { "pp", "++" }, { "mm", "--" }, { "cm", "," },
    { "pm", "->*" }, { "pt", "->" }, { "cl", "()" }, { "ix", "[]" },
    { "qu", "?" }, { NULL, NULL }
};


/* c++filt spells the std abbreviations out (its DMGL_VERBOSE) */
static const ngx_http_malloc_dm_pair_t  ngx_http_malloc_dm_std[] = {
    { "a", "std::allocator" },
    { "b", "std::basic_string" },
    { "s", "std::basic_string<char, std::char_traits<char>, "
           "std::allocator<char> >" },
    { "i", "std::basic_istream<char, std::char_traits<char> >" },
    { "o", "std::basic_ostream<char, std::char_traits<char> >" },
    { "d", "std::basic_iostream<char, std::char_traits<char> >" },
    { NULL, NULL }
};


/* C++ builtin types by their letter, "" where the letter is not one */
static const char  *ngx_http_malloc_dm_builtins[26] = {
    "signed char", "bool", "char", "double", "long double", "float",
    "__float128", "unsigned char", "int", "unsigned int", "", "long",
    "unsigned long", "__int128", "unsigned __int128", "", "", "", "short",
    "unsigned short", "", "void", "wchar_t", "long long",
    "unsigned long long", "..."
};


/* Rust v0 basic types by their letter */
static const char  *ngx_http_malloc_dm_v0_basic[26] = {
    "i8", "bool", "char", "f64", "str", "f32", "", "u8", "isize", "usize",
    "", "i32", "u32", "i128", "u128", "_", "", "", "i16", "u16", "()",
    "...", "", "i64", "u64", "!"
};


size_t
ngx_http_malloc_demangle(const char *sym, char *buf, size_t size)
{
    size_t                n;
    ngx_http_malloc_dm_t  dm;

    if (buf == NULL || size == 0) {
        return 0;
    }

    buf[0] = '\0';

    if (sym == NULL || sym[0] != '_' || (sym[1] != 'Z' && sym[1] != 'R')) {
        return 0;
    }

    for (n = 0; sym[n] != '\0'; n++) {
        if (n == NGX_HTTP_MALLOC_DM_MAXLEN) {
            return 0;
        }
    }

    dm.p = sym + 2;
    dm.start = dm.p;
    dm.buf = buf;
    dm.size = size;
    dm.len = 0;
    dm.steps = 0;
    dm.depth = 0;
    dm.nsubs = 0;
    dm.nargs = 0;
    dm.nhidden = 0;
    dm.have_args = 0;
    dm.record = 0;
    dm.failed = 0;
    dm.silent = 0;
    dm.last.nlen = 0;

    if (sym[1] == 'R') {

        /* rustc-demangle too knows only the first version, unnumbered */

        if (*dm.p < 'A' || *dm.p > 'Z') {
            return 0;
        }

        ngx_http_malloc_dm_v0_path(&dm, 1);

        /* the instantiating crate: not printed */

        if (*dm.p >= 'A' && *dm.p <= 'Z') {
            dm.silent++;
            ngx_http_malloc_dm_v0_path(&dm, 0);
            dm.silent--;
        }

    } else if (ngx_http_malloc_dm_is_legacy(sym)) {
        ngx_http_malloc_dm_legacy(&dm);

    } else if (*dm.p == 'T' || (*dm.p == 'G' && dm.p[1] == 'V')) {
        ngx_http_malloc_dm_special(&dm);
        ngx_http_malloc_dm_clones(&dm);

    } else {
        ngx_http_malloc_dm_encoding(&dm, '\0');
        ngx_http_malloc_dm_clones(&dm);
    }

    ngx_http_malloc_dm_cut(&dm);

    if (dm.failed || *dm.p != '\0' || dm.len == 0) {
        buf[0] = '\0';
        return 0;
    }

    buf[dm.len] = '\0';

    return dm.len;
}


/*
 * Every recursive step passes here: a depth that a stack of a few pages
 * holds, and a count of steps that keeps hostile input (backrefs to
 * backrefs) linear.  The caller undoes depth when it returns.
 */

static int
ngx_http_malloc_dm_enter(ngx_http_malloc_dm_t *dm)
{
    if (dm->failed
        || dm->depth >= NGX_HTTP_MALLOC_DM_DEPTH
        || ++dm->steps > NGX_HTTP_MALLOC_DM_STEPS)
    {
        ngx_http_malloc_dm_fail(dm);
        return -1;
    }

    dm->depth++;

    return 0;
}


/*
 * Whatever parse is under way reads only this NUL from now on: no step
 * after a failure can run past the symbol.
 */

static void
ngx_http_malloc_dm_fail(ngx_http_malloc_dm_t *dm)
{
    dm->failed = 1;
    dm->p = "";
}


/* the output always keeps a byte for the NUL; too long fails the whole */

static void
ngx_http_malloc_dm_put(ngx_http_malloc_dm_t *dm, const char *s, size_t n)
{
    if (dm->failed || dm->silent) {
        return;
    }

    if (n >= dm->size - dm->len) {
        ngx_http_malloc_dm_fail(dm);
        return;
    }

    memmove(dm->buf + dm->len, s, n);
    dm->len += n;
}


static void
ngx_http_malloc_dm_puts(ngx_http_malloc_dm_t *dm, const char *s)
{
    ngx_http_malloc_dm_put(dm, s, strlen(s));
}


static char
ngx_http_malloc_dm_lastc(ngx_http_malloc_dm_t *dm)
{
    return dm->len > 0 ? dm->buf[dm->len - 1] : '\0';
}


/* prints an earlier piece again, as the piece "to" */

static void
ngx_http_malloc_dm_copy(ngx_http_malloc_dm_t *dm,
    const ngx_http_malloc_dm_text_t *from, ngx_http_malloc_dm_text_t *to)
{
    unsigned                   i;
    ngx_http_malloc_dm_text_t  t, *h;

    t = *from;

    /* c++filt would print it without the hidden part: not known here */

    for (i = 0; i < dm->nhidden; i++) {
        h = &dm->hidden[i];

        if (h->start >= t.start && h->start < t.start + t.len
            && !(t.start >= h->start && t.start + t.len <= h->start + h->len))
        {
            ngx_http_malloc_dm_fail(dm);
            return;
        }
    }

    to->start = dm->len;
    to->len = t.len;
    to->name = dm->len + (t.name - t.start);
    to->nlen = t.nlen;
    to->ref = t.ref;
    to->cv = t.cv;

    ngx_http_malloc_dm_put(dm, dm->buf + t.start, t.len);

    dm->last = *to;
}


/* what was printed since start becomes the next substitution */

static void
ngx_http_malloc_dm_add(ngx_http_malloc_dm_t *dm, size_t start, int ref,
    int cv)
{
    ngx_http_malloc_dm_text_t  *t;

    if (dm->failed) {
        return;
    }

    if (dm->nsubs == NGX_HTTP_MALLOC_DM_SUBS) {
        ngx_http_malloc_dm_fail(dm);
        return;
    }

    t = &dm->subs[dm->nsubs++];

    t->start = start;
    t->len = dm->len - start;
    t->ref = ref;
    t->cv = cv;
    t->name = dm->last.name;
    t->nlen = 0;

    if (dm->last.nlen > 0 && dm->last.name >= start) {
        t->nlen = dm->last.nlen;
    }
}


/*
 * A template function's return type comes after its name in the symbol
 * and before it in print: [a, m) (the name) and [m, len) (the type) swap
 * places, and so do the pieces recorded inside them.
 */

static void
ngx_http_malloc_dm_rotate(ngx_http_malloc_dm_t *dm, size_t a, size_t m)
{
    size_t  i, b;

    if (dm->failed) {
        return;
    }

    b = dm->len;

    ngx_http_malloc_dm_reverse(dm->buf, a, m);
    ngx_http_malloc_dm_reverse(dm->buf, m, b);
    ngx_http_malloc_dm_reverse(dm->buf, a, b);

    for (i = 0; i < dm->nsubs; i++) {
        ngx_http_malloc_dm_move(&dm->subs[i], a, m, b);
    }

    for (i = 0; i < dm->nargs; i++) {
        ngx_http_malloc_dm_move(&dm->args[i], a, m, b);
    }

    for (i = 0; i < dm->nhidden; i++) {
        ngx_http_malloc_dm_move(&dm->hidden[i], a, m, b);
    }

    ngx_http_malloc_dm_move(&dm->last, a, m, b);
}


/*
 * The return type of a function inside a local name: c++filt leaves it
 * out, but substitutions may name its text, so it stays until the end.
 */

static void
ngx_http_malloc_dm_hide(ngx_http_malloc_dm_t *dm, size_t start, size_t len)
{
    if (dm->nhidden == NGX_HTTP_MALLOC_DM_HIDDEN) {
        ngx_http_malloc_dm_fail(dm);
        return;
    }

    dm->hidden[dm->nhidden].start = start;
    dm->hidden[dm->nhidden].len = len;
    dm->nhidden++;
}


/* hidden ranges nest or follow one another: the last starting first */

static void
ngx_http_malloc_dm_cut(ngx_http_malloc_dm_t *dm)
{
    size_t                     i, j, best;
    ngx_http_malloc_dm_text_t  h;

    while (dm->nhidden > 0 && !dm->failed) {
        best = 0;

        for (i = 1; i < dm->nhidden; i++) {
            if (dm->hidden[i].start > dm->hidden[best].start) {
                best = i;
            }
        }

        h = dm->hidden[best];
        dm->hidden[best] = dm->hidden[--dm->nhidden];

        if (h.start + h.len > dm->len) {
            ngx_http_malloc_dm_fail(dm);
            return;
        }

        memmove(dm->buf + h.start, dm->buf + h.start + h.len,
                dm->len - h.start - h.len);
        dm->len -= h.len;

        /* an enclosing range shrinks with what it held */

        for (j = 0; j < dm->nhidden; j++) {
            if (dm->hidden[j].start <= h.start
                && dm->hidden[j].start + dm->hidden[j].len > h.start)
            {
                dm->hidden[j].len -= h.len;
            }
        }
    }
}


static void
ngx_http_malloc_dm_reverse(char *p, size_t a, size_t b)
{
    char  c;

    while (b > a + 1) {
        c = p[a];
        p[a++] = p[--b];
        p[b] = c;
    }
}


static void
ngx_http_malloc_dm_move(ngx_http_malloc_dm_text_t *t, size_t a, size_t m,
    size_t b)
{
    if (t->start >= a && t->start < m) {
        t->start += b - m;
        t->name += b - m;

    } else if (t->start >= m && t->start < b) {
        t->start -= m - a;
        t->name -= m - a;
    }
}


/* a decimal <number>, small enough to be a length; -1 if none */

static int
ngx_http_malloc_dm_number(ngx_http_malloc_dm_t *dm, size_t *n)
{
    size_t  v;

    if (*dm->p < '0' || *dm->p > '9') {
        ngx_http_malloc_dm_fail(dm);
        return -1;
    }

    v = 0;

    while (*dm->p >= '0' && *dm->p <= '9') {
        v = v * 10 + (*dm->p++ - '0');

        if (v > 100000) {
            ngx_http_malloc_dm_fail(dm);
            return -1;
        }
    }

    *n = v;

    return 0;
}


/* vtables, typeinfo, guard variables, thunks */

static void
ngx_http_malloc_dm_special(ngx_http_malloc_dm_t *dm)
{
    char                       c;
    ngx_http_malloc_dm_text_t  t;
    ngx_http_malloc_dm_name_t  info;

    memset(&info, 0, sizeof(info));

    c = dm->p[1];

    if (c == '\0') {
        ngx_http_malloc_dm_fail(dm);
        return;
    }

    dm->p += 2;

    /* the name of a guard variable or a TLS function is an entity's */

    dm->record = 1;

    if (dm->p[-2] == 'G') {
        ngx_http_malloc_dm_puts(dm, "guard variable for ");
        ngx_http_malloc_dm_name(dm, &info);
        return;
    }

    switch (c) {

    case 'V':
        ngx_http_malloc_dm_puts(dm, "vtable for ");
        ngx_http_malloc_dm_type(dm, &t);
        return;

    case 'T':
        ngx_http_malloc_dm_puts(dm, "VTT for ");
        ngx_http_malloc_dm_type(dm, &t);
        return;

    case 'I':
        ngx_http_malloc_dm_puts(dm, "typeinfo for ");
        ngx_http_malloc_dm_type(dm, &t);
        return;

    case 'S':
        ngx_http_malloc_dm_puts(dm, "typeinfo name for ");
        ngx_http_malloc_dm_type(dm, &t);
        return;

    case 'H':
        ngx_http_malloc_dm_puts(dm, "TLS init function for ");
        ngx_http_malloc_dm_name(dm, &info);
        return;

    case 'W':
        ngx_http_malloc_dm_puts(dm, "TLS wrapper function for ");
        ngx_http_malloc_dm_name(dm, &info);
        return;

    default:
        ngx_http_malloc_dm_thunk(dm, c);
        return;
    }
}


/* c++filt names the function a thunk calls, not the offsets it adds */

static void
ngx_http_malloc_dm_thunk(ngx_http_malloc_dm_t *dm, char c)
{
    switch (c) {

    case 'h':
        ngx_http_malloc_dm_puts(dm, "non-virtual thunk to ");
        break;

    case 'v':
        ngx_http_malloc_dm_puts(dm, "virtual thunk to ");

        if (ngx_http_malloc_dm_offset(dm) != 0) {
            return;
        }

        break;

    default:
        ngx_http_malloc_dm_fail(dm);
        return;
    }

    /* h: its only offset; v: its second one, the virtual offset */

    if (ngx_http_malloc_dm_offset(dm) != 0) {
        return;
    }

    ngx_http_malloc_dm_encoding(dm, '\0');
}


/* an offset, "n" for a negative one, ended by "_" */

static int
ngx_http_malloc_dm_offset(ngx_http_malloc_dm_t *dm)
{
    size_t  n;

    if (*dm->p == 'n') {
        dm->p++;
    }

    if (ngx_http_malloc_dm_number(dm, &n) != 0 || *dm->p++ != '_') {
        ngx_http_malloc_dm_fail(dm);
        return -1;
    }

    return 0;
}


/*
 * A name and, for a function, its parameters; end is the byte that ends
 * the encoding ('E' inside a local name, the NUL at the top, where a
 * clone suffix may follow too).
 */

static void
ngx_http_malloc_dm_encoding(ngx_http_malloc_dm_t *dm, char end)
{
    int                        record;
    size_t                     start, mid;
    ngx_http_malloc_dm_text_t  ret;
    ngx_http_malloc_dm_name_t  info;

    if (ngx_http_malloc_dm_enter(dm) != 0) {
        return;
    }

    memset(&info, 0, sizeof(info));

    start = dm->len;

    record = dm->record;
    dm->record = 1;
    ngx_http_malloc_dm_name(dm, &info);
    dm->record = record;

    if (dm->failed || *dm->p == end || (end == '\0' && *dm->p == '.')) {
        goto done;
    }

    if (info.templ && !info.cdtor) {
        mid = dm->len;
        ngx_http_malloc_dm_type(dm, &ret);
        ngx_http_malloc_dm_put(dm, " ", 1);
        ngx_http_malloc_dm_rotate(dm, start, mid);

        if (end == 'E') {
            ngx_http_malloc_dm_hide(dm, start, dm->len - mid);
        }
    }

    ngx_http_malloc_dm_params(dm, end);

    ngx_http_malloc_dm_quals(dm, info.quals);

    if (info.ref) {
        ngx_http_malloc_dm_puts(dm, info.ref == 1 ? " &" : " &&");
    }

done:

    dm->depth--;
}


static void
ngx_http_malloc_dm_params(ngx_http_malloc_dm_t *dm, char end)
{
    unsigned                   n;
    ngx_http_malloc_dm_text_t  t;

    ngx_http_malloc_dm_put(dm, "(", 1);

    if (*dm->p == 'v'
        && (dm->p[1] == end || (end == '\0' && dm->p[1] == '.')))
    {
        dm->p++;
        ngx_http_malloc_dm_put(dm, ")", 1);
        return;
    }

    for (n = 0; !dm->failed; n++) {

        if (*dm->p == end || (end == '\0' && *dm->p == '.')) {
            break;
        }

        if (*dm->p == '\0') {
            ngx_http_malloc_dm_fail(dm);
            return;
        }

        if (n > 0) {
            ngx_http_malloc_dm_put(dm, ", ", 2);
        }

        ngx_http_malloc_dm_type(dm, &t);
    }

    if (n == 0) {
        ngx_http_malloc_dm_fail(dm);
    }

    ngx_http_malloc_dm_put(dm, ")", 1);
}


static void
ngx_http_malloc_dm_quals(ngx_http_malloc_dm_t *dm, unsigned quals)
{
    if (quals & NGX_HTTP_MALLOC_DM_CONST) {
        ngx_http_malloc_dm_puts(dm, " const");
    }

    if (quals & NGX_HTTP_MALLOC_DM_VOLATILE) {
        ngx_http_malloc_dm_puts(dm, " volatile");
    }

    if (quals & NGX_HTTP_MALLOC_DM_RESTRICT) {
        ngx_http_malloc_dm_puts(dm, " restrict");
    }
}


static unsigned
ngx_http_malloc_dm_cv(ngx_http_malloc_dm_t *dm)
{
    unsigned  quals;

    quals = 0;

    if (*dm->p == 'r') {
        quals |= NGX_HTTP_MALLOC_DM_RESTRICT;
        dm->p++;
    }

    if (*dm->p == 'V') {
        quals |= NGX_HTTP_MALLOC_DM_VOLATILE;
        dm->p++;
    }

    if (*dm->p == 'K') {
        quals |= NGX_HTTP_MALLOC_DM_CONST;
        dm->p++;
    }

    return quals;
}


/*
 * Template parameters (T_) name the arguments of the name's last
 * component only, the function template's own: anything else refuses.
 */

static void
ngx_http_malloc_dm_name(ngx_http_malloc_dm_t *dm,
    ngx_http_malloc_dm_name_t *info)
{
    size_t                     start;
    ngx_http_malloc_dm_text_t  t;

    if (ngx_http_malloc_dm_enter(dm) != 0) {
        return;
    }

    start = dm->len;

    switch (*dm->p) {

    case 'N':
        ngx_http_malloc_dm_nested(dm, info);
        break;

    case 'Z':

        /*
         * inside a template argument, a local name's function brings
         * template parameters of its own: not followed here
         */

        if (!dm->record) {
            ngx_http_malloc_dm_fail(dm);
            break;
        }

        ngx_http_malloc_dm_local(dm, info);
        break;

    case 'S':
        if (dm->p[1] != 't') {
            ngx_http_malloc_dm_subst(dm, &t);

            if (*dm->p != 'I') {
                ngx_http_malloc_dm_fail(dm);
                break;
            }

            ngx_http_malloc_dm_targs(dm, 1);
            info->templ = 1;
            break;
        }

        dm->p += 2;
        ngx_http_malloc_dm_puts(dm, "std::");

        /* fall through */

    default:
        ngx_http_malloc_dm_unqualified(dm, info);

        if (*dm->p == 'I') {
            ngx_http_malloc_dm_add(dm, start, 0, 0);
            ngx_http_malloc_dm_targs(dm, 1);
            info->templ = 1;
        }

        break;
    }

    if (dm->record && !info->templ) {
        dm->have_args = 0;
    }

    dm->depth--;
}


static void
ngx_http_malloc_dm_nested(ngx_http_malloc_dm_t *dm,
    ngx_http_malloc_dm_name_t *info)
{
    char                       c;
    size_t                     start;
    unsigned                   n;
    ngx_http_malloc_dm_text_t  t;

    dm->p++;

    info->quals = ngx_http_malloc_dm_cv(dm);

    if (*dm->p == 'R' || *dm->p == 'O') {
        info->ref = (*dm->p++ == 'R') ? 1 : 2;
    }

    start = dm->len;

    for (n = 0; !dm->failed; n++) {
        c = *dm->p;

        if (c == 'E') {
            dm->p++;

            if (n == 0) {
                ngx_http_malloc_dm_fail(dm);
            }

            return;
        }

        if (n > 0 && c != 'I') {
            ngx_http_malloc_dm_put(dm, "::", 2);
        }

        if (c == 'S' && n == 0) {

            if (dm->p[1] == 't') {
                dm->p += 2;
                ngx_http_malloc_dm_put(dm, "std", 3);
                dm->last.nlen = 0;
                continue;
            }

            ngx_http_malloc_dm_subst(dm, &t);
            continue;

        } else if (c == 'T' && n == 0) {
            ngx_http_malloc_dm_tparam(dm, &t);

        } else if (c == 'I' && n > 0) {
            ngx_http_malloc_dm_targs(dm, 1);
            info->templ = 1;

        } else {

            /* operator T_'s T_ is its own argument: not yet known */

            if (dm->record) {
                dm->have_args = 0;
            }

            info->templ = 0;
            info->cdtor = 0;
            ngx_http_malloc_dm_unqualified(dm, info);
        }

        if (*dm->p != 'E') {
            ngx_http_malloc_dm_add(dm, start, 0, 0);
        }
    }
}


static void
ngx_http_malloc_dm_local(ngx_http_malloc_dm_t *dm,
    ngx_http_malloc_dm_name_t *info)
{
    dm->p++;

    ngx_http_malloc_dm_encoding(dm, 'E');

    if (dm->failed || *dm->p++ != 'E') {
        ngx_http_malloc_dm_fail(dm);
        return;
    }

    ngx_http_malloc_dm_put(dm, "::", 2);

    if (*dm->p == 's') {
        dm->p++;
        ngx_http_malloc_dm_puts(dm, "string literal");
        ngx_http_malloc_dm_discriminator(dm);
        return;
    }

    if (*dm->p == 'd') {
        ngx_http_malloc_dm_fail(dm);
        return;
    }

    ngx_http_malloc_dm_name(dm, info);
    ngx_http_malloc_dm_discriminator(dm);
}


/* _N or __N_: which of several same-named locals; not printed */

static void
ngx_http_malloc_dm_discriminator(ngx_http_malloc_dm_t *dm)
{
    size_t  n;

    if (*dm->p != '_') {
        return;
    }

    dm->p++;

    if (*dm->p >= '0' && *dm->p <= '9') {
        dm->p++;
        return;
    }

    if (*dm->p++ != '_' || ngx_http_malloc_dm_number(dm, &n) != 0
        || *dm->p++ != '_')
    {
        ngx_http_malloc_dm_fail(dm);
    }
}


static void
ngx_http_malloc_dm_unqualified(ngx_http_malloc_dm_t *dm,
    ngx_http_malloc_dm_name_t *info)
{
    char                       c;
    ngx_http_malloc_dm_text_t  name;

    c = *dm->p;

    if (c == 'L') {
        dm->p++;
        c = *dm->p;

        if (c < '0' || c > '9') {
            ngx_http_malloc_dm_fail(dm);
            return;
        }
    }

    if (c >= '0' && c <= '9') {
        ngx_http_malloc_dm_source(dm);

    } else if ((c == 'C' && dm->p[1] >= '1' && dm->p[1] <= '5')
               || (c == 'D' && (dm->p[1] == '0' || dm->p[1] == '1'
                                || dm->p[1] == '2' || dm->p[1] == '4'
                                || dm->p[1] == '5')))
    {
        /* a constructor or destructor is called after its class */

        if (dm->last.nlen == 0) {
            ngx_http_malloc_dm_fail(dm);
            return;
        }

        name = dm->last;
        dm->p += 2;

        if (c == 'D') {
            ngx_http_malloc_dm_put(dm, "~", 1);
        }

        ngx_http_malloc_dm_put(dm, dm->buf + name.name, name.nlen);
        info->cdtor = 1;

    } else if (c == 'U') {
        ngx_http_malloc_dm_lambda(dm);

    } else if (c >= 'a' && c <= 'z') {
        ngx_http_malloc_dm_operator(dm, info);

    } else {
        ngx_http_malloc_dm_fail(dm);
        return;
    }

    /* ABI tags, as in std::locale::name[abi:cxx11]() */

    name = dm->last;

    while (*dm->p == 'B' && !dm->failed) {
        dm->p++;
        ngx_http_malloc_dm_puts(dm, "[abi:");
        ngx_http_malloc_dm_source(dm);
        ngx_http_malloc_dm_put(dm, "]", 1);
    }

    dm->last = name;
}


static void
ngx_http_malloc_dm_source(ngx_http_malloc_dm_t *dm)
{
    char         c;
    size_t       n, i;
    const char  *s;

    if (ngx_http_malloc_dm_number(dm, &n) != 0 || n == 0) {
        ngx_http_malloc_dm_fail(dm);
        return;
    }

    /*
     * identifiers only: c++filt would copy any other byte, the viewer
     * would show it garbled
     */

    for (i = 0; i < n; i++) {
        c = dm->p[i];

        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
              || (c >= '0' && c <= '9') || c == '_' || c == '$' || c == '.'))
        {
            ngx_http_malloc_dm_fail(dm);
            return;
        }
    }

    s = dm->p;
    dm->p += n;

    dm->last.start = dm->len;
    dm->last.name = dm->len;

    /* GCC names the anonymous namespace _GLOBAL__N_1 */

    if (n >= 10 && memcmp(s, "_GLOBAL_", 8) == 0
        && (s[8] == '.' || s[8] == '_' || s[8] == '$') && s[9] == 'N')
    {
        ngx_http_malloc_dm_puts(dm, "(anonymous namespace)");

    } else {
        ngx_http_malloc_dm_put(dm, s, n);
    }

    dm->last.nlen = dm->len - dm->last.start;
    dm->last.len = dm->last.nlen;
}


static void
ngx_http_malloc_dm_operator(ngx_http_malloc_dm_t *dm,
    ngx_http_malloc_dm_name_t *info)
{
    const char                       *name;
    ngx_http_malloc_dm_text_t         t;
    const ngx_http_malloc_dm_pair_t  *op;

    if (dm->p[0] == 'c' && dm->p[1] == 'v') {
        dm->p += 2;
        ngx_http_malloc_dm_puts(dm, "operator ");
        ngx_http_malloc_dm_type(dm, &t);
        info->cdtor = 1;
        dm->last.nlen = 0;
        return;
    }

    if (dm->p[0] == 'l' && dm->p[1] == 'i') {
        dm->p += 2;
        ngx_http_malloc_dm_puts(dm, "operator\"\" ");
        ngx_http_malloc_dm_source(dm);
        dm->last.nlen = 0;
        return;
    }

    for (op = ngx_http_malloc_dm_operators; op->code != NULL; op++) {
        if (dm->p[0] == op->code[0] && dm->p[1] == op->code[1]) {
            break;
        }
    }

    if (op->code == NULL) {
        ngx_http_malloc_dm_fail(dm);
        return;
    }

    dm->p += 2;
    name = op->name;

    ngx_http_malloc_dm_puts(dm, "operator");

    if (name[0] >= 'a' && name[0] <= 'z') {
        ngx_http_malloc_dm_put(dm, " ", 1);
    }

    ngx_http_malloc_dm_puts(dm, name);
    dm->last.nlen = 0;
}


/* closures {lambda(int)#2} and unnamed types {unnamed type#1} */

static void
ngx_http_malloc_dm_lambda(ngx_http_malloc_dm_t *dm)
{
    size_t                     n;
    int                        have_args;
    ngx_http_malloc_dm_text_t  t;

    n = 0;

    if (dm->p[1] == 't') {
        dm->p += 2;
        ngx_http_malloc_dm_puts(dm, "{unnamed type#");

    } else if (dm->p[1] == 'l') {
        dm->p += 2;
        ngx_http_malloc_dm_puts(dm, "{lambda(");

        /* a generic lambda's auto parameters are template parameters */

        have_args = dm->have_args;
        dm->have_args = 0;

        if (*dm->p == 'v' && dm->p[1] == 'E') {
            dm->p++;

        } else {
            while (*dm->p != 'E' && !dm->failed) {
                if (n++ > 0) {
                    ngx_http_malloc_dm_put(dm, ", ", 2);
                }

                ngx_http_malloc_dm_type(dm, &t);
            }
        }

        dm->have_args = have_args;

        if (dm->failed || *dm->p++ != 'E') {
            ngx_http_malloc_dm_fail(dm);
            return;
        }

        ngx_http_malloc_dm_puts(dm, ")#");

    } else {
        ngx_http_malloc_dm_fail(dm);
        return;
    }

    n = 1;

    if (*dm->p != '_') {
        if (ngx_http_malloc_dm_number(dm, &n) != 0) {
            return;
        }

        n += 2;
    }

    if (*dm->p++ != '_') {
        ngx_http_malloc_dm_fail(dm);
        return;
    }

    ngx_http_malloc_dm_decimal(dm, n);
    ngx_http_malloc_dm_put(dm, "}", 1);
    dm->last.nlen = 0;
}


/* S_, S<base 36>_, or a std abbreviation; St is the callers' */

static void
ngx_http_malloc_dm_subst(ngx_http_malloc_dm_t *dm,
    ngx_http_malloc_dm_text_t *t)
{
    char                              c;
    size_t                            i;
    const char                       *s;
    const ngx_http_malloc_dm_pair_t  *std;

    dm->p++;
    c = *dm->p;

    if (c == '_' || (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z')) {
        i = 0;

        if (c != '_') {
            while (*dm->p != '_') {
                c = *dm->p++;

                if (c >= '0' && c <= '9') {
                    i = i * 36 + (c - '0');

                } else if (c >= 'A' && c <= 'Z') {
                    i = i * 36 + (c - 'A' + 10);

                } else {
                    ngx_http_malloc_dm_fail(dm);
                    return;
                }

                if (i > NGX_HTTP_MALLOC_DM_SUBS) {
                    ngx_http_malloc_dm_fail(dm);
                    return;
                }
            }

            i++;
        }

        dm->p++;

        if (i >= dm->nsubs) {
            ngx_http_malloc_dm_fail(dm);
            return;
        }

        ngx_http_malloc_dm_copy(dm, &dm->subs[i], t);
        return;
    }

    for (std = ngx_http_malloc_dm_std; std->code != NULL; std++) {
        if (c == std->code[0]) {
            break;
        }
    }

    if (std->code == NULL) {
        ngx_http_malloc_dm_fail(dm);
        return;
    }

    dm->p++;

    /* the name of the class, for its constructors: after "std::" */

    s = std->name + 5;

    for (i = 0; s[i] != '\0' && s[i] != '<'; i++) { /* void */ }

    t->start = dm->len;
    t->name = dm->len + 5;
    t->nlen = i;
    t->ref = 0;
    t->cv = 0;

    ngx_http_malloc_dm_puts(dm, std->name);

    t->len = dm->len - t->start;
    dm->last = *t;
}


static void
ngx_http_malloc_dm_tparam(ngx_http_malloc_dm_t *dm,
    ngx_http_malloc_dm_text_t *t)
{
    size_t  i;

    dm->p++;
    i = 0;

    if (*dm->p != '_') {
        if (ngx_http_malloc_dm_number(dm, &i) != 0) {
            return;
        }

        i++;
    }

    if (*dm->p++ != '_' || !dm->have_args || i >= dm->nargs) {
        ngx_http_malloc_dm_fail(dm);
        return;
    }

    ngx_http_malloc_dm_copy(dm, &dm->args[i], t);
}


/*
 * <...>; record: the list of a name, which T_ then names.  c++filt keeps
 * "> >" and "operator< <" apart.
 */

static void
ngx_http_malloc_dm_targs(ngx_http_malloc_dm_t *dm, int record)
{
    unsigned                   n, i;
    ngx_http_malloc_dm_text_t  name;
    ngx_http_malloc_dm_text_t  list[NGX_HTTP_MALLOC_DM_ARGS];

    /* a substitution just added may have failed: the 'I' is gone */

    if (dm->failed) {
        return;
    }

    /* A<int>'s constructors are called A, not int */

    name = dm->last;

    dm->p++;

    if (ngx_http_malloc_dm_lastc(dm) == '<') {
        ngx_http_malloc_dm_put(dm, " ", 1);
    }

    ngx_http_malloc_dm_put(dm, "<", 1);

    for (n = 0; *dm->p != 'E' && !dm->failed; n++) {

        if (n == NGX_HTTP_MALLOC_DM_ARGS) {
            ngx_http_malloc_dm_fail(dm);
            return;
        }

        if (n > 0) {
            ngx_http_malloc_dm_put(dm, ", ", 2);
        }

        ngx_http_malloc_dm_targ(dm, &list[n]);
    }

    if (dm->failed || n == 0) {
        ngx_http_malloc_dm_fail(dm);
        return;
    }

    dm->p++;

    if (ngx_http_malloc_dm_lastc(dm) == '>') {
        ngx_http_malloc_dm_put(dm, " ", 1);
    }

    ngx_http_malloc_dm_put(dm, ">", 1);

    dm->last = name;

    if (record && dm->record) {
        for (i = 0; i < n; i++) {
            dm->args[i] = list[i];
        }

        dm->nargs = n;
        dm->have_args = 1;
    }
}


static void
ngx_http_malloc_dm_targ(ngx_http_malloc_dm_t *dm,
    ngx_http_malloc_dm_text_t *t)
{
    unsigned                   n;
    ngx_http_malloc_dm_text_t  e;

    if (ngx_http_malloc_dm_enter(dm) != 0) {
        return;
    }

    t->start = dm->len;
    t->name = dm->len;
    t->nlen = 0;
    t->ref = 0;
    t->cv = 0;

    switch (*dm->p) {

    case 'L':
        ngx_http_malloc_dm_literal(dm);
        break;

    case 'J':

        /* a pack: its arguments in a row; an empty one is refused */

        dm->p++;

        for (n = 0; *dm->p != 'E' && !dm->failed; n++) {
            if (n > 0) {
                ngx_http_malloc_dm_put(dm, ", ", 2);
            }

            ngx_http_malloc_dm_targ(dm, &e);
        }

        if (n == 0 || dm->failed) {
            ngx_http_malloc_dm_fail(dm);
            break;
        }

        dm->p++;
        break;

    default:
        ngx_http_malloc_dm_type(dm, t);
        break;
    }

    t->len = dm->len - t->start;

    dm->depth--;
}


/* integer and bool literals, as c++filt prints them */

static void
ngx_http_malloc_dm_literal(ngx_http_malloc_dm_t *dm)
{
    char         c;
    size_t       n;
    const char  *digits;

    dm->p++;
    c = *dm->p;

    if (c < 'a' || c > 'y') {
        ngx_http_malloc_dm_fail(dm);
        return;
    }

    dm->p++;

    if (*dm->p == 'n' && c != 'b' && c != 'j' && c != 'm' && c != 'y'
        && c != 'h' && c != 't')
    {
        dm->p++;
        ngx_http_malloc_dm_put(dm, "-", 1);
    }

    digits = dm->p;

    for (n = 0; dm->p[n] >= '0' && dm->p[n] <= '9'; n++) {
        if (n == 40) {
            ngx_http_malloc_dm_fail(dm);
            return;
        }
    }

    if (n == 0 || dm->p[n] != 'E') {
        ngx_http_malloc_dm_fail(dm);
        return;
    }

    dm->p += n + 1;

    if (c == 'b') {
        if (n == 1 && (digits[0] == '0' || digits[0] == '1')) {
            ngx_http_malloc_dm_puts(dm, digits[0] == '1' ? "true"
                                                         : "false");
            return;
        }

        ngx_http_malloc_dm_fail(dm);
        return;
    }

    ngx_http_malloc_dm_integer(dm, c, digits, n);
}


/*
 * The types with a literal suffix get it, the others a cast: there is
 * no suffix for a char, a short or a wchar_t.
 */

static void
ngx_http_malloc_dm_integer(ngx_http_malloc_dm_t *dm, char c,
    const char *digits, size_t n)
{
    const char  *suffix;

    suffix = NULL;

    switch (c) {

    case 'i':
        suffix = "";
        break;

    case 'j':
        suffix = "u";
        break;

    case 'l':
        suffix = "l";
        break;

    case 'm':
        suffix = "ul";
        break;

    case 'x':
        suffix = "ll";
        break;

    case 'y':
        suffix = "ull";
        break;

    case 'a': case 'c': case 'h': case 's': case 't': case 'w':
        break;

    default:
        ngx_http_malloc_dm_fail(dm);
        return;
    }

    if (suffix == NULL) {

        /* the minus sign, if any, belongs after the cast */

        if (ngx_http_malloc_dm_lastc(dm) == '-') {
            dm->len--;
            suffix = "-";

        } else {
            suffix = "";
        }

        ngx_http_malloc_dm_put(dm, "(", 1);
        ngx_http_malloc_dm_puts(dm, ngx_http_malloc_dm_builtins[c - 'a']);
        ngx_http_malloc_dm_put(dm, ")", 1);
        ngx_http_malloc_dm_puts(dm, suffix);
        suffix = "";
    }

    ngx_http_malloc_dm_put(dm, digits, n);
    ngx_http_malloc_dm_puts(dm, suffix);
}


/* a builtin type's name, consumed; NULL (nothing consumed) if not one */

static const char *
ngx_http_malloc_dm_builtin(ngx_http_malloc_dm_t *dm)
{
    char         c;
    const char  *name;

    c = *dm->p;

    if (c >= 'a' && c <= 'z' && c != 'r' && c != 'u') {
        name = ngx_http_malloc_dm_builtins[c - 'a'];

        if (name[0] != '\0') {
            dm->p++;
            return name;
        }

        return NULL;
    }

    if (c != 'D') {
        return NULL;
    }

    switch (dm->p[1]) {

    case 'n':
        name = "decltype(nullptr)";
        break;

    case 'i':
        name = "char32_t";
        break;

    case 's':
        name = "char16_t";
        break;

    case 'u':
        name = "char8_t";
        break;

    case 'a':
        name = "auto";
        break;

    case 'c':
        name = "decltype(auto)";
        break;

    default:
        return NULL;
    }

    dm->p += 2;

    return name;
}


/*
 * Every type but a builtin one and a substitution itself becomes a
 * substitution, in the order its parse ends.
 */

static void
ngx_http_malloc_dm_type(ngx_http_malloc_dm_t *dm,
    ngx_http_malloc_dm_text_t *t)
{
    int          record;
    size_t       start;
    const char  *name;

    start = dm->len;

    t->start = start;
    t->name = start;
    t->nlen = 0;
    t->ref = 0;
    t->cv = 0;

    if (ngx_http_malloc_dm_enter(dm) != 0) {
        return;
    }

    /* a type's own template arguments are not T_'s */

    record = dm->record;
    dm->record = 0;

    name = ngx_http_malloc_dm_builtin(dm);

    if (name != NULL) {
        ngx_http_malloc_dm_puts(dm, name);

    } else {
        ngx_http_malloc_dm_compound(dm, t);
    }

    dm->record = record;

    t->len = dm->len - start;
    t->name = dm->last.name;

    if (dm->last.nlen > 0 && dm->last.name >= start) {
        t->nlen = dm->last.nlen;
    }

    dm->depth--;
}


/* any type but a builtin one: what it is built from picks the parse */

static void
ngx_http_malloc_dm_compound(ngx_http_malloc_dm_t *dm,
    ngx_http_malloc_dm_text_t *t)
{
    switch (*dm->p) {

    case 'r':
    case 'V':
    case 'K':
        ngx_http_malloc_dm_qualified(dm, t);
        break;

    case 'P':
    case 'R':
    case 'O':
        ngx_http_malloc_dm_pointer(dm, t);
        break;

    case 'S':

        /* St is a name in std::, the other S's are substitutions */

        if (dm->p[1] == 't') {
            ngx_http_malloc_dm_class(dm, t);
            break;
        }

        ngx_http_malloc_dm_recalled(dm, t);
        break;

    case 'T':
        ngx_http_malloc_dm_recalled(dm, t);
        break;

    case 'N':
    case 'Z':
    case '0': case '1': case '2': case '3': case '4':
    case '5': case '6': case '7': case '8': case '9':
        ngx_http_malloc_dm_class(dm, t);
        break;

    default:
        ngx_http_malloc_dm_fail(dm);
        break;
    }
}


static void
ngx_http_malloc_dm_qualified(ngx_http_malloc_dm_t *dm,
    ngx_http_malloc_dm_text_t *t)
{
    unsigned                   quals;
    ngx_http_malloc_dm_text_t  in;

    quals = ngx_http_malloc_dm_cv(dm);
    ngx_http_malloc_dm_type(dm, &in);

    /* c++filt does not repeat a const that T_ holds: refused */

    if (in.ref || in.cv) {
        ngx_http_malloc_dm_fail(dm);
        return;
    }

    ngx_http_malloc_dm_quals(dm, quals);
    t->cv = 1;
    ngx_http_malloc_dm_add(dm, t->start, 0, 1);
}


/* a pointer to a reference is refused, a reference to one collapses */

static void
ngx_http_malloc_dm_pointer(ngx_http_malloc_dm_t *dm,
    ngx_http_malloc_dm_text_t *t)
{
    char                       c;
    ngx_http_malloc_dm_text_t  in;

    c = *dm->p++;
    ngx_http_malloc_dm_type(dm, &in);

    if (c == 'P') {
        if (in.ref) {
            ngx_http_malloc_dm_fail(dm);
            return;
        }

        ngx_http_malloc_dm_put(dm, "*", 1);
        ngx_http_malloc_dm_add(dm, t->start, 0, 0);
        return;
    }

    /* reference collapsing: T& of T = int&& is int& */

    if (in.ref == 0) {
        t->ref = (c == 'R') ? 1 : 2;
        ngx_http_malloc_dm_puts(dm, c == 'R' ? "&" : "&&");

    } else if (in.ref == 2 && c == 'R') {
        dm->len--;
        t->ref = 1;

    } else {
        t->ref = in.ref;
    }

    ngx_http_malloc_dm_add(dm, t->start, t->ref, 0);
}


/*
 * A substitution (S_) or a template parameter (T_) as a type: it is a
 * reference or cv-qualified as what it stands for is, until template
 * arguments of its own make a new type of it.
 */

static void
ngx_http_malloc_dm_recalled(ngx_http_malloc_dm_t *dm,
    ngx_http_malloc_dm_text_t *t)
{
    ngx_http_malloc_dm_text_t  in;

    if (*dm->p == 'S') {
        ngx_http_malloc_dm_subst(dm, &in);

    } else {

        /* unlike a substitution, T_ is a substitution candidate */

        ngx_http_malloc_dm_tparam(dm, &in);
        ngx_http_malloc_dm_add(dm, t->start, in.ref, in.cv);
    }

    t->ref = in.ref;
    t->cv = in.cv;

    if (*dm->p == 'I') {
        ngx_http_malloc_dm_targs(dm, 0);
        t->ref = 0;
        t->cv = 0;
        ngx_http_malloc_dm_add(dm, t->start, 0, 0);
    }
}


/* a class or enum by its name: St, N, Z, or a source name */

static void
ngx_http_malloc_dm_class(ngx_http_malloc_dm_t *dm,
    ngx_http_malloc_dm_text_t *t)
{
    ngx_http_malloc_dm_name_t  info;

    memset(&info, 0, sizeof(info));

    if (*dm->p < '0' || *dm->p > '9') {
        ngx_http_malloc_dm_name(dm, &info);

    } else {
        ngx_http_malloc_dm_source(dm);

        /* an unscoped template name is a candidate before its args */

        if (*dm->p == 'I') {
            ngx_http_malloc_dm_add(dm, t->start, 0, 0);
            ngx_http_malloc_dm_targs(dm, 0);
        }
    }

    ngx_http_malloc_dm_add(dm, t->start, 0, 0);
}


/* .cold, .isra.0, .constprop.0.isra.0: " [clone .cold]" and so on */

static void
ngx_http_malloc_dm_clones(ngx_http_malloc_dm_t *dm)
{
    char         c;
    const char  *s;

    while (!dm->failed && dm->p[0] == '.') {
        c = dm->p[1];

        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'))
        {
            ngx_http_malloc_dm_fail(dm);
            return;
        }

        s = dm->p;
        dm->p += 2;

        while ((*dm->p >= 'a' && *dm->p <= 'z')
               || (*dm->p >= '0' && *dm->p <= '9') || *dm->p == '_')
        {
            dm->p++;
        }

        while (dm->p[0] == '.' && dm->p[1] >= '0' && dm->p[1] <= '9') {
            dm->p += 2;

            while (*dm->p >= '0' && *dm->p <= '9') {
                dm->p++;
            }
        }

        ngx_http_malloc_dm_puts(dm, " [clone ");
        ngx_http_malloc_dm_put(dm, s, dm->p - s);
        ngx_http_malloc_dm_put(dm, "]", 1);
    }
}


/*
 * Rust's legacy names are C++ nested names whose last part is the hash,
 * "17h" and 16 hex digits, with "E" the last byte: "_ZN" <len><part>...
 */

static int
ngx_http_malloc_dm_is_legacy(const char *sym)
{
    size_t       n, i;
    const char  *p, *last;

    if (sym[2] != 'N') {
        return 0;
    }

    p = sym + 3;
    last = NULL;

    while (*p >= '1' && *p <= '9') {
        n = 0;

        while (*p >= '0' && *p <= '9') {
            n = n * 10 + (*p++ - '0');

            if (n > 10000) {
                return 0;
            }
        }

        for (i = 0; i < n; i++) {
            if (p[i] == '\0') {
                return 0;
            }
        }

        last = p - 2;
        p += n;
    }

    if (last == NULL || p[0] != 'E' || p[1] != '\0' || p - last != 19
        || memcmp(last, "17h", 3) != 0)
    {
        return 0;
    }

    for (i = 3; i < 19; i++) {
        if (!((last[i] >= '0' && last[i] <= '9')
              || (last[i] >= 'a' && last[i] <= 'f')))
        {
            return 0;
        }
    }

    return 1;
}


/* the parts joined by "::", the hash left out, as rustc-demangle's {:#} */

static void
ngx_http_malloc_dm_legacy(ngx_http_malloc_dm_t *dm)
{
    size_t       n, len;
    const char  *part;

    dm->p++;

    for (n = 0; *dm->p != 'E' && !dm->failed; n++) {

        if (ngx_http_malloc_dm_number(dm, &len) != 0) {
            return;
        }

        part = dm->p;
        dm->p += len;

        if (*dm->p == 'E') {
            break;
        }

        if (n > 0) {
            ngx_http_malloc_dm_put(dm, "::", 2);
        }

        ngx_http_malloc_dm_legacy_part(dm, part, len);
    }

    dm->p++;
}


static void
ngx_http_malloc_dm_legacy_part(ngx_http_malloc_dm_t *dm, const char *s,
    size_t n)
{
    char    c;
    size_t  i, j;

    i = (n >= 2 && s[0] == '_' && s[1] == '$') ? 1 : 0;

    while (i < n && !dm->failed) {
        c = s[i];

        if (c == '.') {
            if (i + 1 < n && s[i + 1] == '.') {
                ngx_http_malloc_dm_put(dm, "::", 2);
                i += 2;

            } else {
                ngx_http_malloc_dm_put(dm, ".", 1);
                i++;
            }

            continue;
        }

        if (c != '$') {
            if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
                  || (c >= '0' && c <= '9') || c == '_'))
            {
                ngx_http_malloc_dm_fail(dm);
                return;
            }

            ngx_http_malloc_dm_put(dm, &s[i++], 1);
            continue;
        }

        for (j = i + 1; j < n && s[j] != '$'; j++) { /* void */ }

        if (j == n) {
            ngx_http_malloc_dm_fail(dm);
            return;
        }

        ngx_http_malloc_dm_legacy_escape(dm, s + i + 1, j - i - 1);
        i = j + 1;
    }
}


/* the n bytes between two '$': a character a symbol cannot hold */

static void
ngx_http_malloc_dm_legacy_escape(ngx_http_malloc_dm_t *dm, const char *s,
    size_t n)
{
    char                              c;
    size_t                            k, v;
    const ngx_http_malloc_dm_pair_t  *e;

    static const ngx_http_malloc_dm_pair_t  escapes[] = {
        { "SP", "@" }, { "BP", "*" }, { "RF", "&" }, { "LT", "<" },
        { "GT", ">" }, { "LP", "(" }, { "RP", ")" }, { "C", "," },
        { NULL, NULL }
    };

    for (e = escapes; e->code != NULL; e++) {
        if (strlen(e->code) == n && memcmp(e->code, s, n) == 0) {
            ngx_http_malloc_dm_puts(dm, e->name);
            return;
        }
    }

    /* $u7e$: a character by its code, printable ASCII only here */

    if (s[0] != 'u' || n < 2 || n > 3) {
        ngx_http_malloc_dm_fail(dm);
        return;
    }

    v = 0;

    for (k = 1; k < n; k++) {
        c = s[k];

        if (c >= '0' && c <= '9') {
            v = v * 16 + (c - '0');

        } else if (c >= 'a' && c <= 'f') {
            v = v * 16 + (c - 'a' + 10);

        } else {
            ngx_http_malloc_dm_fail(dm);
            return;
        }
    }

    if (v < 0x20 || v > 0x7e) {
        ngx_http_malloc_dm_fail(dm);
        return;
    }

    c = (char) v;
    ngx_http_malloc_dm_put(dm, &c, 1);
}


/* "_" is 0, "<base 62 digits>_" their value plus 1 */

static int
ngx_http_malloc_dm_v0_b62(ngx_http_malloc_dm_t *dm, uint64_t *v)
{
    char      c;
    uint64_t  x;

    x = 0;

    if (*dm->p == '_') {
        dm->p++;
        *v = 0;
        return 0;
    }

    while (*dm->p != '_') {
        c = *dm->p++;

        if (x > (UINT64_MAX - 62) / 62) {
            ngx_http_malloc_dm_fail(dm);
            return -1;
        }

        if (c >= '0' && c <= '9') {
            x = x * 62 + (c - '0');

        } else if (c >= 'a' && c <= 'z') {
            x = x * 62 + (c - 'a' + 10);

        } else if (c >= 'A' && c <= 'Z') {
            x = x * 62 + (c - 'A' + 36);

        } else {
            ngx_http_malloc_dm_fail(dm);
            return -1;
        }
    }

    dm->p++;
    *v = x + 1;

    return 0;
}


static uint64_t
ngx_http_malloc_dm_v0_dis(ngx_http_malloc_dm_t *dm)
{
    uint64_t  v;

    if (*dm->p != 's') {
        return 0;
    }

    dm->p++;

    if (ngx_http_malloc_dm_v0_b62(dm, &v) != 0) {
        return 0;
    }

    return v + 1;
}


/* [s<dis>] <len> [_] <bytes>; Punycode ("u") is refused */

static const char *
ngx_http_malloc_dm_v0_ident(ngx_http_malloc_dm_t *dm, uint64_t *dis,
    size_t *n)
{
    char         c;
    size_t       i, len;
    const char  *s;

    *dis = ngx_http_malloc_dm_v0_dis(dm);

    if (dm->failed) {
        return NULL;
    }

    /* no leading zeros: "00" is two empty names */

    if (*dm->p == '0') {
        dm->p++;
        len = 0;

    } else if (ngx_http_malloc_dm_number(dm, &len) != 0) {
        return NULL;
    }

    if (*dm->p == '_') {
        dm->p++;
    }

    s = dm->p;

    for (i = 0; i < len; i++) {
        c = s[i];

        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
              || (c >= '0' && c <= '9') || c == '_'))
        {
            ngx_http_malloc_dm_fail(dm);
            return NULL;
        }
    }

    dm->p += len;
    *n = len;

    return s;
}


static void
ngx_http_malloc_dm_v0_path(ngx_http_malloc_dm_t *dm, int in_value)
{
    char         c;
    size_t       n;
    uint64_t     dis;
    const char  *s;

    if (ngx_http_malloc_dm_enter(dm) != 0) {
        return;
    }

    c = *dm->p;

    if (c != '\0') {
        dm->p++;
    }

    switch (c) {

    case 'C':

        /* the crate's disambiguator is its hash: left out, as by {:#} */

        s = ngx_http_malloc_dm_v0_ident(dm, &dis, &n);

        if (s != NULL) {
            ngx_http_malloc_dm_put(dm, s, n);
        }

        break;

    case 'N':
        ngx_http_malloc_dm_v0_nested(dm, in_value);
        break;

    case 'M':
    case 'X':
    case 'Y':
        ngx_http_malloc_dm_v0_impl(dm, c);
        break;

    case 'I':
        ngx_http_malloc_dm_v0_path(dm, in_value);

        if (in_value) {
            ngx_http_malloc_dm_put(dm, "::", 2);
        }

        ngx_http_malloc_dm_put(dm, "<", 1);
        (void) ngx_http_malloc_dm_v0_list(dm, ngx_http_malloc_dm_v0_arg);

        if (dm->failed) {
            break;
        }

        ngx_http_malloc_dm_put(dm, ">", 1);
        break;

    case 'B':
        ngx_http_malloc_dm_v0_backref(dm, 'p', in_value);
        break;

    default:
        ngx_http_malloc_dm_fail(dm);
        break;
    }

    dm->depth--;
}


/* N<ns><path><ident>: "::name", or "::{closure#0}" for a special ns */

static void
ngx_http_malloc_dm_v0_nested(ngx_http_malloc_dm_t *dm, int in_value)
{
    char         ns;
    size_t       n;
    uint64_t     dis;
    const char  *s;

    ns = *dm->p++;

    if (!((ns >= 'a' && ns <= 'z') || (ns >= 'A' && ns <= 'Z'))) {
        ngx_http_malloc_dm_fail(dm);
        return;
    }

    ngx_http_malloc_dm_v0_path(dm, in_value);

    s = ngx_http_malloc_dm_v0_ident(dm, &dis, &n);

    if (s == NULL) {
        return;
    }

    if (ns >= 'a' && ns <= 'z') {
        if (n > 0) {
            ngx_http_malloc_dm_put(dm, "::", 2);
            ngx_http_malloc_dm_put(dm, s, n);
        }

        return;
    }

    ngx_http_malloc_dm_put(dm, "::{", 3);

    if (ns == 'C') {
        ngx_http_malloc_dm_puts(dm, "closure");

    } else if (ns == 'S') {
        ngx_http_malloc_dm_puts(dm, "shim");

    } else {
        ngx_http_malloc_dm_put(dm, &ns, 1);
    }

    if (n > 0) {
        ngx_http_malloc_dm_put(dm, ":", 1);
        ngx_http_malloc_dm_put(dm, s, n);
    }

    ngx_http_malloc_dm_put(dm, "#", 1);
    ngx_http_malloc_dm_decimal(dm, dis);
    ngx_http_malloc_dm_put(dm, "}", 1);
}


/* <T>, <T as Trait>: an impl's own path is parsed, not printed */

static void
ngx_http_malloc_dm_v0_impl(ngx_http_malloc_dm_t *dm, char tag)
{
    if (tag != 'Y') {
        (void) ngx_http_malloc_dm_v0_dis(dm);

        dm->silent++;
        ngx_http_malloc_dm_v0_path(dm, 0);
        dm->silent--;
    }

    ngx_http_malloc_dm_put(dm, "<", 1);
    ngx_http_malloc_dm_v0_type(dm);

    if (tag != 'M') {
        ngx_http_malloc_dm_puts(dm, " as ");
        ngx_http_malloc_dm_v0_path(dm, 0);
    }

    ngx_http_malloc_dm_put(dm, ">", 1);
}


static void
ngx_http_malloc_dm_v0_arg(ngx_http_malloc_dm_t *dm)
{
    uint64_t  lt;

    if (*dm->p == 'L') {

        /* a named lifetime needs the binders this does not follow */

        dm->p++;

        if (ngx_http_malloc_dm_v0_b62(dm, &lt) != 0 || lt != 0) {
            ngx_http_malloc_dm_fail(dm);
            return;
        }

        ngx_http_malloc_dm_puts(dm, "'_");
        return;
    }

    if (*dm->p == 'K') {
        dm->p++;
        ngx_http_malloc_dm_v0_const(dm);
        return;
    }

    ngx_http_malloc_dm_v0_type(dm);
}


static void
ngx_http_malloc_dm_v0_type(ngx_http_malloc_dm_t *dm)
{
    char  c;

    if (ngx_http_malloc_dm_enter(dm) != 0) {
        return;
    }

    c = *dm->p;

    if (c >= 'a' && c <= 'z' && ngx_http_malloc_dm_v0_basic[c - 'a'][0]) {
        dm->p++;
        ngx_http_malloc_dm_puts(dm, ngx_http_malloc_dm_v0_basic[c - 'a']);
        goto done;
    }

    switch (c) {

    case 'A':
    case 'S':
        dm->p++;
        ngx_http_malloc_dm_put(dm, "[", 1);
        ngx_http_malloc_dm_v0_type(dm);

        if (c == 'A') {
            ngx_http_malloc_dm_put(dm, "; ", 2);
            ngx_http_malloc_dm_v0_const(dm);
        }

        ngx_http_malloc_dm_put(dm, "]", 1);
        break;

    case 'T':
        ngx_http_malloc_dm_v0_tuple(dm);
        break;

    case 'R':
    case 'Q':
        ngx_http_malloc_dm_v0_ref(dm);
        break;

    case 'P':
    case 'O':
        dm->p++;
        ngx_http_malloc_dm_puts(dm, c == 'P' ? "*const " : "*mut ");
        ngx_http_malloc_dm_v0_type(dm);
        break;

    case 'B':
        dm->p++;
        ngx_http_malloc_dm_v0_backref(dm, 't', 0);
        break;

    case 'C':
    case 'M':
    case 'X':
    case 'Y':
    case 'N':
    case 'I':
        ngx_http_malloc_dm_v0_path(dm, 0);
        break;

    default:
        ngx_http_malloc_dm_fail(dm);
        break;
    }

done:

    dm->depth--;
}


/* generic arguments and tuple fields: items up to "E", how many */

static unsigned
ngx_http_malloc_dm_v0_list(ngx_http_malloc_dm_t *dm,
    void (*item)(ngx_http_malloc_dm_t *dm))
{
    unsigned  n;

    for (n = 0; *dm->p != 'E' && !dm->failed; n++) {
        if (n > 0) {
            ngx_http_malloc_dm_put(dm, ", ", 2);
        }

        item(dm);
    }

    if (!dm->failed) {
        dm->p++;
    }

    return n;
}


static void
ngx_http_malloc_dm_v0_tuple(ngx_http_malloc_dm_t *dm)
{
    unsigned  n;

    dm->p++;
    ngx_http_malloc_dm_put(dm, "(", 1);
    n = ngx_http_malloc_dm_v0_list(dm, ngx_http_malloc_dm_v0_type);

    if (dm->failed) {
        return;
    }

    /* a tuple of one: (u8,) */

    if (n == 1) {
        ngx_http_malloc_dm_put(dm, ",", 1);
    }

    ngx_http_malloc_dm_put(dm, ")", 1);
}


/* rustc-demangle leaves out the erased lifetime ('_), and so do we */

static void
ngx_http_malloc_dm_v0_ref(ngx_http_malloc_dm_t *dm)
{
    char      c;
    uint64_t  lt;

    c = *dm->p++;
    ngx_http_malloc_dm_put(dm, "&", 1);

    if (*dm->p == 'L') {
        dm->p++;

        /* a named lifetime, 'a, is refused */

        if (ngx_http_malloc_dm_v0_b62(dm, &lt) != 0 || lt != 0) {
            ngx_http_malloc_dm_fail(dm);
            return;
        }
    }

    if (c == 'Q') {
        ngx_http_malloc_dm_puts(dm, "mut ");
    }

    ngx_http_malloc_dm_v0_type(dm);
}


/* integers, bools and plain ASCII chars; other constants are refused */

static void
ngx_http_malloc_dm_v0_const(ngx_http_malloc_dm_t *dm)
{
    char      c;
    int       neg, sign;
    uint64_t  v;

    if (ngx_http_malloc_dm_enter(dm) != 0) {
        return;
    }

    c = *dm->p++;

    if (c == 'p') {
        ngx_http_malloc_dm_put(dm, "_", 1);
        goto done;
    }

    if (c == 'B') {
        ngx_http_malloc_dm_v0_backref(dm, 'k', 0);
        goto done;
    }

    if (c == '\0' || strchr("htmyojaslxnibc", c) == NULL) {
        dm->p--;
        ngx_http_malloc_dm_fail(dm);
        goto done;
    }

    sign = (strchr("aslxni", c) != NULL);
    neg = 0;

    if (*dm->p == 'n') {
        if (!sign) {
            ngx_http_malloc_dm_fail(dm);
            goto done;
        }

        neg = 1;
        dm->p++;
    }

    if (ngx_http_malloc_dm_v0_hex(dm, &v) == 0) {
        ngx_http_malloc_dm_v0_value(dm, c, neg, v);
    }

done:

    dm->depth--;
}


/* a constant's value: up to 16 hex digits and "_" */

static int
ngx_http_malloc_dm_v0_hex(ngx_http_malloc_dm_t *dm, uint64_t *v)
{
    char      ch;
    unsigned  n;

    *v = 0;

    for (n = 0; *dm->p != '_'; n++) {
        ch = *dm->p++;

        if (n == 16) {
            ngx_http_malloc_dm_fail(dm);
            return -1;
        }

        if (ch >= '0' && ch <= '9') {
            *v = *v * 16 + (ch - '0');

        } else if (ch >= 'a' && ch <= 'f') {
            *v = *v * 16 + (ch - 'a' + 10);

        } else {
            dm->p--;
            ngx_http_malloc_dm_fail(dm);
            return -1;
        }
    }

    dm->p++;

    return 0;
}


/* c is the constant's type tag; neg its "n", only for a signed one */

static void
ngx_http_malloc_dm_v0_value(ngx_http_malloc_dm_t *dm, char c, int neg,
    uint64_t v)
{
    char  ch;

    if (c == 'b') {
        if (v > 1) {
            ngx_http_malloc_dm_fail(dm);
            return;
        }

        ngx_http_malloc_dm_puts(dm, v ? "true" : "false");
        return;
    }

    /* a quote or a backslash would need the escapes rustc-demangle adds */

    if (c == 'c') {
        if (v < 0x20 || v > 0x7e || v == '\'' || v == '\\') {
            ngx_http_malloc_dm_fail(dm);
            return;
        }

        ch = (char) v;
        ngx_http_malloc_dm_put(dm, "'", 1);
        ngx_http_malloc_dm_put(dm, &ch, 1);
        ngx_http_malloc_dm_put(dm, "'", 1);
        return;
    }

    if (neg) {
        ngx_http_malloc_dm_put(dm, "-", 1);
    }

    ngx_http_malloc_dm_decimal(dm, v);
}


/*
 * B<pos>: the path, type or const at pos bytes after "_R", which must be
 * before this one.  Not followed while nothing prints: its text is not
 * needed, and skipping keeps the time linear.
 */

static void
ngx_http_malloc_dm_v0_backref(ngx_http_malloc_dm_t *dm, int what,
    int in_value)
{
    size_t       at;
    uint64_t     pos;
    const char  *saved;

    at = dm->p - 1 - dm->start;

    if (ngx_http_malloc_dm_v0_b62(dm, &pos) != 0) {
        return;
    }

    if (pos >= at) {
        ngx_http_malloc_dm_fail(dm);
        return;
    }

    if (dm->silent) {
        return;
    }

    saved = dm->p;
    dm->p = dm->start + pos;

    if (what == 'p') {
        ngx_http_malloc_dm_v0_path(dm, in_value);

    } else if (what == 't') {
        ngx_http_malloc_dm_v0_type(dm);

    } else {
        ngx_http_malloc_dm_v0_const(dm);
    }

    dm->p = saved;
}


static void
ngx_http_malloc_dm_decimal(ngx_http_malloc_dm_t *dm, uint64_t v)
{
    char   digits[24];
    char  *p;

    p = digits + sizeof(digits);

    do {
        *--p = (char) ('0' + v % 10);
        v /= 10;
    } while (v != 0);

    ngx_http_malloc_dm_put(dm, p, digits + sizeof(digits) - p);
}
