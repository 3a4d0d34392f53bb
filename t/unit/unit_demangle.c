
/*
 * Unit tests for the demangler (ngx_http_malloc_demangle.c).  The C++
 * expectations are c++filt's output (binutils), the Rust ones those of
 * rustc-demangle's "{:#}" from its documentation and RFC 2603, written
 * out here.  t/unit/demangle.txt holds real symbols of Debian's
 * libstdc++ and other libraries with c++filt's output: each must come
 * out the same or be refused.  Every symbol is copied to a block of its
 * exact size, so that ASan reports a read past its NUL.
 */


#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "ngx_http_malloc_demangle.h"
#include "ngx_http_malloc_symbol.h"


#define BUF_LEN  4096


static size_t run(const char *sym, char *buf, size_t size);
static void expect(const char *sym, const char *want);
static void refuse(const char *desc, const char *sym);
static void test_cxx(void);
static void test_rust_legacy(void);
static void test_rust_v0(void);
static void test_refused(void);
static void test_sizes(void);
static void test_bulk(const char *argv0);
static void test_process(void);
static void test_full(void);


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

    n = ngx_http_malloc_demangle(copy, out, size);

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
    refuse("an unknown legacy escape",
           "_ZN5$XX$a3foo17h0123456789abcdefE");
    refuse("a legacy escape of a control byte",
           "_ZN6$u07$a3foo17h0123456789abcdefE");
    refuse("an unclosed legacy escape", "_ZN3$LT3foo17h0123456789abcdefE");
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
    refuse("a v0 Punycode name", "_RNvC3foou3bar");
    refuse("a v0 backref forwards", "_RNvB9_3foo");
    refuse("a v0 fn pointer type", "_RINtC3foo3BarFEuE");
    refuse("a v0 dyn type", "_RINtC3foo3BarDEL_E");
    refuse("a v0 suffix", "_RNvC3foo3bar.llvm.1234");
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
    refuse("a function type", "_Z1fPFviE");
    refuse("an array type", "_Z1fA10_i");
    refuse("a pack expansion", "_Z1fIJiEEvDpT_");
    refuse("an expression", "_Z1fIXadL_Z1gvEEEvv");
    refuse("a clone suffix of capitals", "_Z3foov.COLD");
    refuse("trailing bytes", "_Z3foovv)");
    refuse("a const T_ that c++filt folds", "_Z1fIKiEvPKT_");
    refuse("a name over 1000 bytes", "_Z1001aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
           "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
           "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
           "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
           "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
           "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
           "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
           "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
           "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
           "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
           "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
           "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
           "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
           "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
           "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
           "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
           "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
           "av");
    refuse("nested names deeper than the limit",
           "_Z1fPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPP"
           "PPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPP"
           "i");
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

    is_int(ngx_http_malloc_demangle(NULL, buf, sizeof(buf)), 0,
           "a NULL symbol: refused");
}


/* t/unit/demangle.txt: symbol TAB c++filt's output, one a line */

static void
test_bulk(const char *argv0)
{
    char         line[8192], path[4096], buf[BUF_LEN];
    FILE        *f;
    char        *tab, *nl;
    size_t       n, k, lines, done, wrong;
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
    done = 0;
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

        if (n == 0) {
            continue;
        }

        if (n == (size_t) -1 || strcmp(buf, tab + 1) != 0) {
            wrong++;
            diag("%s: got \"%s\", c++filt \"%s\"", line,
                 n == (size_t) -1 ? "" : buf, tab + 1);
            continue;
        }

        done++;
    }

    fclose(f);

    ok(lines >= 300, "the list holds %zu symbols", lines);
    is_int(wrong, 0, "no symbol demangled otherwise than by c++filt");
    ok(done * 10 >= lines * 9, "%zu of %zu demangled", done, lines);
}


/*
 * 256 substitutions fill the table; the next one fails just before a
 * template argument list (found by fuzz_demangle: the list was then read
 * past the symbol's end)
 */

static void
test_full(void)
{
    char    sym[512];
    size_t  i, n;

    n = 0;
    memcpy(sym, "_Z1f", 4);
    n += 4;

    for (i = 0; i < 128; i++) {
        memcpy(sym + n, "P1a", 3);
        n += 3;
    }

    memcpy(sym + n, "1bIiE", sizeof("1bIiE"));

    refuse("a full substitution table before template arguments", sym);
}


/* the process's demangler: libstdc++'s when loaded, else ours */

static void
test_process(void)
{
    char                         buf[BUF_LEN];
    ngx_http_malloc_demangle_pt  dm;

    dm = ngx_http_malloc_symbols_demangle;

    dm("_ZN11modsecurity15RuleWithActions8evaluateEPNS_11TransactionE", buf,
       sizeof(buf));
    is_str(buf, "modsecurity::RuleWithActions::evaluate(modsecurity::"
           "Transaction*)", "the process's: a C++ name");

    dm("_ZN4core3ptr13drop_in_place17h0123456789abcdefE", buf, sizeof(buf));
    is_str(buf, "core::ptr::drop_in_place",
           "the process's: a Rust legacy name without its hash");

    dm("_RNvCs15kBYyAo9fc_7mycrate7example", buf, sizeof(buf));
    is_str(buf, "mycrate::example", "the process's: a Rust v0 name");

    is_int(dm("ngx_http_init_connection", buf, sizeof(buf)), 0,
           "the process's: a C name stays");
    is_int(dm("i", buf, sizeof(buf)), 0,
           "the process's: a type code is not a symbol");
    is_int(dm("_ZN11modsecurity15RuleWithActions8evaluateEPNS_11TransactionE",
              buf, 8), 0, "the process's: too long for buf");
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
    test_bulk(argv[0]);
    test_process();
    test_full();

    return done_testing();
}
