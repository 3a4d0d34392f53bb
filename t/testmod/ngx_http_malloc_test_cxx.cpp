
/*
 * A frame in C++ for the tests of readable names: a member of a class in
 * a namespace, so that its symbol is mangled
 * (_ZN11malloc_test6Holder4growEm), called through a C bridge by the
 * test module's /t/cxx location.  malloc(), not new[], so that the
 * module's free() may give it back.
 */


#include <cstdlib>
#include <cstring>


extern "C" void *ngx_http_malloc_test_cxx_grow(size_t size);


namespace malloc_test {

struct Holder {
    static void *grow(size_t size);
};


/* never inlined, so that profiles show it between the bridge and malloc */

__attribute__((noinline)) void *
Holder::grow(size_t size)
{
    void  *p;

    p = std::malloc(size);

    if (p != NULL) {
        std::memset(p, 0x5a, size);
    }

    return p;
}

}


__attribute__((noinline)) void *
ngx_http_malloc_test_cxx_grow(size_t size)
{
    return malloc_test::Holder::grow(size);
}
