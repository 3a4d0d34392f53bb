
/*
 * Copyright (C) 2026 ngx_http_malloc_module maintainers
 * BSD 2-Clause licence: see LICENSE.
 */


/*
 * Unit tests for the demangling of symbol.c
 * (ngx_http_malloc_symbols_demangle, libiberty's demanglers behind it).
 * The C++ expectations are c++filt's output (binutils); the Rust ones
 * those of rustc-demangle's "{:#}" (c++filt's without the legacy hash and
 * v0's crate disambiguators), from its documentation and RFC 2603.
 * t/unit/demangle.txt holds real symbols of Debian's libstdc++ and other
 * libraries with c++filt's output: each must come out the same.  Every
 * symbol is copied to a block of its exact size and every buffer is
 * allocated to its size, so that ASan sees the wrapper read past a NUL
 * or write past the end (libiberty itself is not instrumented).
 */


#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "ngx_http_malloc_symbol.h"


#define BUF_LEN  4096


/* ASan's, when the program is built with it (make unit does) */
int __sanitizer_install_malloc_and_free_hooks(
    void (*malloc_hook)(const volatile void *p, size_t size),
    void (*free_hook)(const volatile void *p)) __attribute__((weak));


static size_t run(const char *sym, char *buf, size_t size);
static void expect(const char *sym, const char *want);
static void refuse(const char *desc, const char *sym);
static void test_cxx(void);
static void test_rust_legacy(void);
static void test_rust_v0(void);
static void test_refused(void);
static void test_sizes(void);
static void test_long(void);
static void test_growth(void);
static void test_bulk(const char *argv0);
static void test_loaded(void);
static void test_no_malloc(void);
static void count_malloc(const volatile void *p, size_t size);
static void count_free(const volatile void *p);


static size_t  mallocs;
static size_t  frees;


static size_t
run(const char *sym, char *buf, size_t size)
{
    char    *copy, *out;
    size_t   n, len;

    len = strlen(sym) + 1;

    copy = malloc(len);
    out = malloc(size == 0 ? 1 : size);

    if (copy == NULL || out == NULL) {
        abort();
    }

    memcpy(copy, sym, len);
    memset(out, 0x7f, size == 0 ? 1 : size);

    n = ngx_http_malloc_symbols_demangle(copy, size == 0 ? NULL : out,
                                         size);

    if (size > 0) {
        if (memchr(out, '\0', size) == NULL || strlen(out) != n) {
            diag("%s: output not NUL-ended at its length", sym);
            n = (size_t) -1;
        }

        memcpy(buf, out, n == (size_t) -1 ? 1 : n + 1);
    }

    free(copy);
    free(out);

    return n;
}


static void
expect(const char *sym, const char *want)
{
    char    buf[BUF_LEN];
    size_t  n;

    n = run(sym, buf, sizeof(buf));

    if (n == 0 || n == (size_t) -1) {
        buf[0] = '\0';
    }

    is_str(buf, want, "%s", sym);
}


static void
refuse(const char *desc, const char *sym)
{
    char    buf[BUF_LEN];
    size_t  n;

    n = run(sym, buf, sizeof(buf));

    if (!ok(n == 0 && buf[0] == '\0', "refused: %s", desc)) {
        diag("got %zu \"%s\"", n, n == (size_t) -1 ? "" : buf);
    }
}


static void
test_cxx(void)
{
    expect("_ZN11modsecurity15RuleWithActions8evaluateEPNS_11TransactionE",
           "modsecurity::RuleWithActions::evaluate(modsecurity::"
           "Transaction*)");
    expect("_ZNK11modsecurity15RuleWithActions8evaluateEPNS_11TransactionE",
           "modsecurity::RuleWithActions::evaluate(modsecurity::"
           "Transaction*) const");
    expect("_ZN11malloc_test6Holder4growEm",
           "malloc_test::Holder::grow(unsigned long)");
    expect("_Z3foov", "foo()");
    expect("_ZL3foov", "foo()");
    expect("_ZNSt6vectorIiSaIiEE9push_backERKi",
           "std::vector<int, std::allocator<int> >::push_back(int const&)");
    expect("_ZNKSs4sizeEv",
           "std::basic_string<char, std::char_traits<char>, "
           "std::allocator<char> >::size() const");
    expect("_ZNSsC1EPKcRKSaIcE",
           "std::basic_string<char, std::char_traits<char>, "
           "std::allocator<char> >::basic_string(char const*, "
           "std::allocator<char> const&)");
    expect("_ZN1AIiEC1Ev", "A<int>::A()");
    expect("_ZN1AD2Ev", "A::~A()");
    expect("_ZN1AC2ERKS_", "A::A(A const&)");
    expect("_ZNVK1A1fEv", "A::f() const volatile");
    expect("_ZNKR1A1fEv", "A::f() const &");
    expect("_ZNO1A1fEv", "A::f() &&");
    expect("_ZlsIiEvT_", "void operator<< <int>(int)");
    expect("_ZN1AplERKS_", "A::operator+(A const&)");
    expect("_ZN1AnwEm", "A::operator new(unsigned long)");
    expect("_ZN1AdaEPv", "A::operator delete[](void*)");
    expect("_ZN1AcviEv", "A::operator int()");
    expect("_Z1fIcLc97EEvv", "void f<char, (char)97>()");
    expect("_Z1fILb1EEvv", "void f<true>()");
    expect("_Z1fILin5EEvv", "void f<-5>()");
    expect("_Z1fILm5EEvv", "void f<5ul>()");
    expect("_Z1fIJicEEvv", "void f<int, char>()");
    expect("_ZSt7forwardIRiEOT_RNSt16remove_referenceIS0_E4typeE",
           "int& std::forward<int&>(std::remove_reference<int&>::type&)");
    expect("_ZZ4mainE1x", "main::x");
    expect("_ZZ1fvE1x_0", "f()::x");
    expect("_ZZ1fIiEvvE1x", "f<int>()::x");
    expect("_ZZ4mainENKUlvE_clEv",
           "main::{lambda()#1}::operator()() const");
    expect("_ZN12_GLOBAL__N_11fEv", "(anonymous namespace)::f()");
    expect("_ZNKSt6locale4nameB5cxx11Ev",
           "std::locale::name[abi:cxx11]() const");
    expect("_Z3foov.cold", "foo() [clone .cold]");
    expect("_Z3foov.isra.0", "foo() [clone .isra.0]");
    expect("_Z3foov.constprop.0.isra.0",
           "foo() [clone .constprop.0] [clone .isra.0]");
    expect("_Z1fPKcRS_OS_PPv", "f(char const*, char const&, "
           "char const&&, void**)");
    expect("_Z1fVKi", "f(int const volatile)");
    expect("_Z1fDnDiDs", "f(decltype(nullptr), char32_t, char16_t)");
    expect("_ZTV1A", "vtable for A");
    expect("_ZTI1A", "typeinfo for A");
    expect("_ZTS1A", "typeinfo name for A");
    expect("_ZGVZ1fvE1x", "guard variable for f()::x");
    expect("_ZThn8_N1A1fEv", "non-virtual thunk to A::f()");
    expect("_ZTv0_n24_N1A1fEv", "virtual thunk to A::f()");

    /* what the hand-written demangler refused */
    expect("_Z1fPFviE", "f(void (*)(int))");
    expect("_Z1fA10_i", "f(int [10])");
    expect("_Z1fIJiEEvDpT_", "void f<int>(int)");
    expect("_Z1fIXadL_Z1gvEEEvv", "void f<&(g())>()");
    expect("_Z1fIKiEvPKT_", "void f<int const>(int const*)");
}


static void
test_rust_legacy(void)
{
    expect("_ZN4core3ptr13drop_in_place17h0123456789abcdefE",
           "core::ptr::drop_in_place");
    expect("_ZN3foo17h05af221e174051e9E", "foo");
    expect("_ZN71_$LT$Test$u20$$u2b$$u20$$u27$static$u20$as$u20$foo..Bar"
           "$LT$Test$GT$$GT$3bar17h930b740aa94f1d3aE",
           "<Test + 'static as foo::Bar<Test>>::bar");
    expect("_ZN4core3ptr85drop_in_place$LT$std..rt..lang_start$LT$$LP$$RP$"
           "$GT$..$u7b$$u7b$closure$u7d$$u7d$$GT$17h1e8b8e4f0e0c1234E",
           "core::ptr::drop_in_place<std::rt::lang_start<()>::"
           "{{closure}}>");
    expect("_ZN5alloc3oom3oom17h722648b727b8bcd0E", "alloc::oom::oom");
    expect("_ZN15$RF$$BP$$SP$$C$3foo17h0123456789abcdefE", "&*@,::foo");
    expect("_ZN4core3ptr13drop_in_place17h0123456789abcdefE.llvm.12",
           "core::ptr::drop_in_place");

    /* from an escape it does not know on, an identifier is printed as is */
    expect("_ZN5$XX$a3foo17h0123456789abcdefE", "$XX$a::foo");
    expect("_ZN6$u07$a3foo17h0123456789abcdefE", "$u07$a::foo");
    expect("_ZN3$LT3foo17h0123456789abcdefE", "$LT::foo");

    /* a hash of fewer than 5 distinct digits is not Rust's: C++ then */
    expect("_ZN3foo17h0000000000000000E", "foo::h0000000000000000");
}


static void
test_rust_v0(void)
{
    expect("_RNvCs15kBYyAo9fc_7mycrate7example", "mycrate::example");
    expect("_RNvMsr_NtCs3ssYzQotkvD_3std4pathNtB5_7PathBuf3new"
           "Cs15kBYyAo9fc_7mycrate", "<std::path::PathBuf>::new");
    expect("_RNvMs_Cs4Cv8Wi1oAIB_7mycrateNtB4_7Example3foo",
           "<mycrate::Example>::foo");
    expect("_RNvNtCs6GSVXm7oiwY_5regex4utf811decode_utf8",
           "regex::utf8::decode_utf8");
    expect("_RNCNCNgCs6DXkGYLi8lr_2cc5spawn00B5_",
           "cc::spawn::{closure#0}::{closure#0}");
    expect("_RMCs4fqI2P2rA04_13const_genericINtB0_8UnsignedKhb_E",
           "<const_generic::Unsigned<11>>");
    expect("_RINvNtC3std3mem8align_ofjEC3foo", "std::mem::align_of::<usize>");
    expect("_RINtC3foo3BarAhj4_E", "foo::Bar::<[u8; 4]>");
    expect("_RINtC3foo3BarSRhE", "foo::Bar::<[&u8]>");
    expect("_RINtC3foo3BarTuhEE", "foo::Bar::<((), u8)>");
    expect("_RINtC3foo3BarThEE", "foo::Bar::<(u8,)>");
    expect("_RINtC3foo3BarQPOlE", "foo::Bar::<&mut *const *mut i32>");
    expect("_RINtC3foo3BarKb1_Kc61_Kan5_E", "foo::Bar::<true, 'a', -5>");
    expect("_RINtC3foo3BarFEuE", "foo::Bar::<fn()>");
    expect("_RNvC3foo3bar.llvm.1234", "foo::bar");
    refuse("a v0 Punycode name (UTF-8 out)", "_RNvC3foou3bar");
    refuse("a v0 backref forwards", "_RNvB9_3foo");
    refuse("a v0 version number", "_R0NvC3foo3bar");
}


static void
test_refused(void)
{
    refuse("a C name", "ngx_http_init_connection");
    refuse("the empty string", "");
    refuse("_Z alone", "_Z");
    refuse("_R alone", "_R");
    refuse("_Z garbage", "_Z!!!");
    refuse("_Z and a letter", "_Zq");
    refuse("a truncated name", "_ZN11modsecurity15RuleWithAct");
    refuse("a truncated nested name", "_ZN3foo3bar");
    refuse("a truncated parameter list", "_ZN3foo3barEPK");
    refuse("a source name longer than the symbol", "_Z99foo");
    refuse("a substitution never made", "_Z1fS0_");
    refuse("a template parameter of nothing", "_Z1fT_");
    refuse("a clone suffix of capitals", "_Z3foov.COLD");
    refuse("trailing bytes", "_Z3foovv)");
    refuse("a type code is not a symbol", "i");
    refuse("a C++ name of a byte over 0x7e", "_Z3f\xc3\xa9v");
    refuse("a C++ name of a control byte", "_Z3f\x01\x02v");
}


static void
test_sizes(void)
{
    char         buf[BUF_LEN];
    size_t       n, need;
    const char  *sym;

    sym = "_ZN11modsecurity15RuleWithActions8evaluateEPNS_11TransactionE";
    need = strlen("modsecurity::RuleWithActions::evaluate(modsecurity::"
                  "Transaction*)");

    n = run(sym, buf, need + 1);
    is_int(n, need, "a buffer of the exact size holds the name");

    n = run(sym, buf, need);
    ok(n == 0 && buf[0] == '\0', "one byte short: refused, buf empty");

    n = run(sym, buf, 1);
    ok(n == 0 && buf[0] == '\0', "a buffer of one byte: refused");

    n = run(sym, buf, 0);
    is_int(n, 0, "a buffer of none: refused, nothing written");

    sym = "_ZN4core3ptr13drop_in_place17h0123456789abcdefE";

    n = run(sym, buf, sizeof("core::ptr::drop_in_place"));
    is_int(n, sizeof("core::ptr::drop_in_place") - 1,
           "Rust: a buffer of the exact size holds the name");

    n = run(sym, buf, sizeof("core::ptr::drop_in_place") - 1);
    ok(n == 0 && buf[0] == '\0', "Rust: one byte short: refused");

    is_int(ngx_http_malloc_symbols_demangle(NULL, buf, sizeof(buf)), 0,
           "a NULL symbol: refused");
}


/*
 * libiberty refuses a C++ symbol over 1024 bytes (its tables are on the
 * stack), as c++filt does; the Rust demangler takes any length
 */

static void
test_long(void)
{
    char    *sym, *buf;
    size_t   i, n;

    sym = malloc(2048);
    buf = malloc(BUF_LEN);

    if (sym == NULL || buf == NULL) {
        abort();
    }

    memcpy(sym, "_Z1018", 6);
    memset(sym + 6, 'a', 1018);
    sym[1024] = '\0';

    n = run(sym, buf, BUF_LEN);
    ok(n == 1018 && strspn(buf, "a") == 1018, "a C++ symbol of 1024 bytes");

    memcpy(sym, "_Z1019", 6);
    memset(sym + 6, 'a', 1019);
    sym[1025] = '\0';

    refuse("a C++ symbol of 1025 bytes", sym);

    /* "_ZN" "1a" x 600 "17h...E": a::a::...::a, 1798 bytes */

    memcpy(sym, "_ZN", 3);

    for (i = 0; i < 600; i++) {
        memcpy(sym + 3 + 2 * i, "1a", 2);
    }

    memcpy(sym + 3 + 2 * i, "17h0123456789abcdefE", 21);

    n = run(sym, buf, BUF_LEN);
    ok(strlen(sym) == 1223 && n == 1798 && strncmp(buf, "a::a::", 6) == 0
       && strcmp(buf + n - 3, "::a") == 0, "a Rust symbol of 1223 bytes");

    free(sym);
    free(buf);
}


/*
 * f(p<X, X>) with X = p<Y, Y> and so on, n deep, each second argument a
 * substitution: about 7n bytes that name a tree of 2^n nodes.  What fits
 * is c++filt's name; 40 deep (a tebibyte of name) is refused at once.
 */

static void
test_growth(void)
{
    char          sym[512], want[BUF_LEN], buf[BUF_LEN];
    size_t        n, k, len, depth;
    static char   digits[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
    static char   base62[] = "0123456789abcdefghijklmnopqrstuvwxyz"
                             "ABCDEFGHIJKLMNOPQRSTUVWXYZ";

    for (depth = 1; depth <= 40; depth++) {

        /* p is S_ and a S0_; the p<...> k levels from the inside S<k>_ */

        n = 0;
        memcpy(sym, "_Z1f1pI", 7);
        n += 7;

        for (k = 1; k < depth; k++) {
            memcpy(sym + n, "S_I", 3);
            n += 3;
        }

        memcpy(sym + n, "1aS0_E", 6);
        n += 6;

        for (k = 1; k < depth; k++) {
            sym[n++] = 'S';

            if (k >= 36) {
                sym[n++] = digits[k / 36];
            }

            sym[n++] = digits[k % 36];
            memcpy(sym + n, "_E", 2);
            n += 2;
        }

        sym[n] = '\0';

        if (depth == 9) {

            /* p<a, a>, then p<W, W > around it 8 times: 3322 bytes */

            len = 7;
            memcpy(want, "p<a, a>", len);

            for (k = 1; k < depth; k++) {
                memmove(want + 2, want, len);
                memcpy(want, "p<", 2);
                memcpy(want + 2 + len, ", ", 2);
                memcpy(want + 4 + len, want + 2, len);
                memcpy(want + 4 + 2 * len, " >", 2);
                len = 2 * len + 6;
            }

            memmove(want + 2, want, len);
            memcpy(want, "f(", 2);
            memcpy(want + 2 + len, ")", 2);

            expect(sym, want);
        }
    }

    n = run(sym, buf, sizeof(buf));
    ok(n == 0 && buf[0] == '\0',
       "refused: a symbol of %zu bytes, a tebibyte of name", strlen(sym));

    /* Rust v0: (X, X) with X = (Y, Y) and so on, each second a backref */

    expect("_RINvC3foo3barTTThBe_EBd_EBc_EE",
           "foo::bar::<(((u8, u8), (u8, u8)), ((u8, u8), (u8, u8)))>");

    n = 0;
    memcpy(sym, "_RINvC3foo3bar", 14);
    n += 14;
    memset(sym + n, 'T', 40);
    n += 40;
    sym[n++] = 'h';

    /*
     * the level k from the inside refers to what is at 52 - k after "_R"
     * (u8 at 52, the T of the level below it after), "B<k - 1 in base
     * 62>_"
     */

    for (k = 0; k < 40; k++) {
        n += sprintf(sym + n, "B%c_E", base62[51 - k]);
    }

    sym[n++] = 'E';
    sym[n] = '\0';

    n = run(sym, buf, sizeof(buf));
    ok(n == 0 && buf[0] == '\0',
       "refused: a Rust symbol of %zu bytes, a tebibyte of name",
       strlen(sym));
}


/* t/unit/demangle.txt: symbol TAB c++filt's output, one a line */

static void
test_bulk(const char *argv0)
{
    char         line[8192], path[4096], buf[BUF_LEN];
    FILE        *f;
    char        *tab, *nl;
    size_t       n, k, lines, wrong;
    const char  *slash;

    /* the program is build/unit_demangle: the list is next to its source */

    slash = strrchr(argv0, '/');
    k = (slash == NULL) ? 0 : (size_t) (slash - argv0 + 1);

    if (k + sizeof("../t/unit/demangle.txt") > sizeof(path)) {
        abort();
    }

    memcpy(path, argv0, k);
    memcpy(path + k, "../t/unit/demangle.txt",
           sizeof("../t/unit/demangle.txt"));

    f = fopen(path, "r");

    if (!ok(f != NULL, "opened %s", path)) {
        return;
    }

    lines = 0;
    wrong = 0;

    while (fgets(line, sizeof(line), f) != NULL) {
        nl = strchr(line, '\n');
        tab = strchr(line, '\t');

        if (nl == NULL || tab == NULL) {
            continue;
        }

        *nl = '\0';
        *tab = '\0';
        lines++;

        n = run(line, buf, sizeof(buf));

        if (n == 0 || n == (size_t) -1 || strcmp(buf, tab + 1) != 0) {
            wrong++;
            diag("%s: got \"%s\", c++filt \"%s\"", line,
                 (n == 0 || n == (size_t) -1) ? "" : buf, tab + 1);
        }
    }

    fclose(f);

    ok(lines >= 339, "the list holds %zu symbols", lines);
    is_int(wrong, 0, "every symbol demangled as c++filt does");
}


/*
 * libstdc++'s __cxa_demangle would print "std::string::size() const":
 * the name must not change when a C++ library is loaded
 */

static void
test_loaded(void)
{
    void  *h;

    h = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_GLOBAL);

    ok(h != NULL, "libstdc++ loaded");

    expect("_ZNKSs4sizeEv",
           "std::basic_string<char, std::char_traits<char>, "
           "std::allocator<char> >::size() const");
    expect("_ZN4core3ptr13drop_in_place17h0123456789abcdefE",
           "core::ptr::drop_in_place");

    if (h != NULL) {
        dlclose(h);
    }
}


static void
count_malloc(const volatile void *p, size_t size)
{
    (void) p;
    (void) size;

    mallocs++;
}


static void
count_free(const volatile void *p)
{
    if (p != NULL) {
        frees++;
    }
}


/*
 * The callback demanglers allocate nothing, whatever the symbol, but for
 * a Rust Punycode name's buffer, which is freed before the call returns,
 * also when the name is refused for its UTF-8 or its size (LeakSanitizer
 * checks at exit what the counts do not see)
 */

static void
test_no_malloc(void)
{
    char          buf[BUF_LEN];
    size_t        i, m, f;
    const char   *syms[] = {
        "_ZN11modsecurity15RuleWithActions8evaluateEPNS_11TransactionE",
        "_ZNSt6vectorIiSaIiEE9push_backERKi",
        "_ZN4core3ptr13drop_in_place17h0123456789abcdefE",
        "_RNvMsr_NtCs3ssYzQotkvD_3std4pathNtB5_7PathBuf3newCs15kBYyAo9fc_"
        "7mycrate",
        "_Z1fIXadL_Z1gvEEEvv",
        "_Z1f1pIS_IS_IS_IS_IS_IS_IS_IS_I1aS0_ES1_ES2_ES3_ES4_ES5_ES6_ES7_E"
        "S8_ES9_E",
        "_Z99foo",
        NULL
    };

    if (__sanitizer_install_malloc_and_free_hooks == NULL
        || __sanitizer_install_malloc_and_free_hooks(count_malloc,
                                                     count_free)
           == 0)
    {
        diag("not built with ASan: allocations not counted");
        return;
    }

    m = mallocs;

    for (i = 0; syms[i] != NULL; i++) {
        ngx_http_malloc_symbols_demangle(syms[i], buf, sizeof(buf));
        ngx_http_malloc_symbols_demangle(syms[i], buf, 8);
    }

    is_int(mallocs - m, 0, "no malloc in %zu demanglings", 2 * i);

    m = mallocs;
    f = frees;

    ngx_http_malloc_symbols_demangle("_RNvC3foou3bar", buf, sizeof(buf));
    ngx_http_malloc_symbols_demangle("_RNvC3foou3bar", buf, 4);
    ngx_http_malloc_symbols_demangle("_RNvNtC3foou3bar3baz", buf, 6);

    ok(mallocs - m > 0 && mallocs - m == frees - f,
       "Punycode: %zu mallocs, as many frees", mallocs - m);
}


int
main(int argc, char **argv)
{
    (void) argc;

    test_cxx();
    test_rust_legacy();
    test_rust_v0();
    test_refused();
    test_sizes();
    test_long();
    test_growth();
    test_bulk(argv[0]);
    test_loaded();
    test_no_malloc();

    return done_testing();
}
