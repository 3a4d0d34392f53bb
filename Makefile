# ngx_http_malloc_module: build against Debian's nginx-dev, test, demo.
#
#   make          build build/ngx_http_malloc_module.so
#   make test     install what is missing, build, run every test
#   make demo     build and run a real nginx on jemalloc with the module
#   make deb      build the Debian package into build/
#   make bench    measure on this machine, rewrite docs/benchmarks.md
#   make test-dists   make test on fresh Debian 12, 13 and testing roots,
#                 and against nginx.org's source (root; about 45 min)

SHELL     := /bin/bash
NGX_SRC   ?= /usr/share/nginx/src
BUILD     := $(CURDIR)/build
MODULE    := $(BUILD)/ngx_http_malloc_module.so
TESTMOD   := $(BUILD)/ngx_http_malloc_test_module.so
# the layout is the architecture: core/ is the pure core (no file there
# includes an nginx header; unit-tested and fuzzed), nginx/ the nginx layer
SRCS      := $(sort $(wildcard core/*.c core/*.h nginx/*.c nginx/*.h) \
	             core/ngx_http_malloc_assets.c)
CORE      := $(sort $(wildcard core/*.c) core/ngx_http_malloc_assets.c)
# libiberty.a (libiberty-dev): symbol.c's demanglers, linked in statically
CORE_LIBS := -ljansson -lz -lm -liberty
UNIT      := $(addprefix $(BUILD)/unit_, path json heap pprof symbol origin \
	             named pipeline rss demangle otlp ring tally)
FUZZ      := $(addprefix $(BUILD)/fuzz_, path body heap pprof symbol named \
	             origin rss demangle ring tally)
FUZZ_TIME ?= 60
CC        ?= cc
CFLAGS_T  := -g -O1 -Wall -Wextra -Werror -fsanitize=address,undefined \
	         -fno-omit-frame-pointer -Icore
CFLAGS_F  := -g -O1 -fsanitize=fuzzer-no-link,address,undefined \
	         -Icore
# the pure core compiled once for the unit programs, once for the fuzzers
CORE_T    := $(patsubst core/%.c,$(BUILD)/core-unit/%.o,$(CORE))
CORE_F    := $(patsubst core/%.c,$(BUILD)/core-fuzz/%.o,$(CORE))
NPROC     := $(shell nproc 2>/dev/null || echo 2)
.SECONDARY: $(CORE_T) $(CORE_F)

DEB_PKGS  := nginx nginx-dev libjemalloc2 libjemalloc-dev libjansson-dev \
	         libtest-simple-perl libhttp-tiny-perl libjson-pp-perl \
	         zlib1g-dev binutils curl wrk gcc make clang \
	         libclang-rt-dev golang-go prometheus patchelf chromium nodejs \
	         protobuf-compiler openssl libiberty-dev
# make deb: the tools; the package's own build dependencies come from
# debian/control
DEB_TOOLS := dpkg-dev debhelper fakeroot lintian
# for make bench's plot only: four small packages
BENCH_PKGS := gnuplot-nox

.PHONY: all deps deps-all print-packages test unit fuzz fuzz-build fuzz-smoke demo clean bench \
        bench-quick bench-deps soak test-ubsan test-asan deb test-dists

all: $(MODULE)

deps:
	@sh .ci/deps.sh $(DEB_PKGS)

# everything make test, make deb and the tests install (test-dists puts
# them in its cached roots), and the list of it, the key of that cache
deps-all: deps
	@sh .ci/deps.sh $(DEB_TOOLS)
	@sh .ci/builddeps.sh $(CURDIR)

print-packages:
	@echo $(DEB_PKGS) $(DEB_TOOLS)
	@sed -n '/^Build-Depends/,/^[^ ]/p' debian/control

$(BUILD)/Makefile: config t/testmod/config
	@mkdir -p $(BUILD)
	cd $(NGX_SRC) && . ./conf_flags && ./configure "$${NGX_CONF_FLAGS[@]}" \
	    --add-dynamic-module=$(CURDIR) \
	    --add-dynamic-module=$(CURDIR)/t/testmod \
	    --builddir=$(BUILD) > $(BUILD)/configure.log 2>&1 \
	    || { tail -20 $(BUILD)/configure.log; exit 1; }

# the heap viewer's files, built into the module
core/ngx_http_malloc_assets.c: ui/embed.pl \
	    $(wildcard ui/*.html ui/*.js ui/*.css)
	perl ui/embed.pl $@

$(MODULE) $(TESTMOD) &: $(BUILD)/Makefile $(SRCS) \
	                  t/testmod/ngx_http_malloc_test_module.c
	$(MAKE) -j$(NPROC) -f $(BUILD)/Makefile -C $(NGX_SRC) modules

$(BUILD)/core-unit/%.o: core/%.c core/*.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_T) -c -o $@ $<

$(BUILD)/core-fuzz/%.o: core/%.c core/*.h
	@mkdir -p $(@D)
	clang $(CFLAGS_F) -c -o $@ $<

$(BUILD)/unit_%: t/unit/unit_%.c $(CORE_T) t/unit/*.h
	$(CC) $(CFLAGS_T) -o $@ $< $(CORE_T) $(CORE_LIBS)

# the programs build side by side; make test runs them through t/unit.t
unit:
	@$(MAKE) -s --no-print-directory -j$(NPROC) $(UNIT)

$(BUILD)/fuzz_%: fuzz/fuzz_%.c $(CORE_F) t/unit/*.h
	clang $(CFLAGS_F) -fsanitize=fuzzer -o $@ $< $(CORE_F) $(CORE_LIBS)

fuzz-build:
	@$(MAKE) -s --no-print-directory -j$(NPROC) $(FUZZ)

# Each target runs on build/corpus/NAME: the seeds of fuzz/corpus/NAME plus
# what earlier runs found; crashes go to build/fuzz_NAME-crash-*.
# FUZZ_TIME=0 replays the corpus once and explores nothing (test-dists'
# roots: the core and its fuzzing are the same on every release).
fuzz: fuzz-build
	@failed=""; \
	for f in $(FUZZ); do \
	    t=$${f##*/}; n=$${t#fuzz_}; c=$(BUILD)/corpus/$$n; \
	    mkdir -p $$c && cp fuzz/corpus/$$n/* $$c/ || exit 1; \
	    echo "$$t: $(FUZZ_TIME)s on $$c, log in $(BUILD)/$$t.log"; \
	    UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	    $$f $$([ $(FUZZ_TIME) = 0 ] && echo -runs=0 \
	               || echo -max_total_time=$(FUZZ_TIME)) \
	        -max_len=4096 -timeout=10 \
	        -print_final_stats=1 -artifact_prefix=$(BUILD)/$$t- \
	        $$c > $(BUILD)/$$t.log 2>&1; \
	    rc=$$?; \
	    sed -n 's/^stat::number_of_executed_units: */  executions: /p' \
	        $(BUILD)/$$t.log; \
	    echo "  corpus: $$(ls $$c | wc -l) inputs"; \
	    if [ $$rc != 0 ]; then \
	        tail -n 40 $(BUILD)/$$t.log; failed="$$failed $$t"; \
	    fi; \
	done; \
	if [ -n "$$failed" ]; then echo "fuzzing failed:$$failed"; exit 1; fi

fuzz-smoke:
	@$(MAKE) --no-print-directory fuzz FUZZ_TIME=5

# FUZZ_SMOKE: fuzz-smoke's seconds per target
FUZZ_SMOKE ?= 5

test: deps $(MODULE) unit deb
	@$(MAKE) --no-print-directory fuzz FUZZ_TIME=$(FUZZ_SMOKE)
	@$(MAKE) --no-print-directory test-asan
	TEST_LONG=$${TEST_LONG:-1} .ci/prove.sh

# build/dists/: a debootstrap root per release, its logs; .ci/dists.sh
# says what it does
test-dists:
	sh .ci/dists.sh $(DISTS)

# dpkg-buildpackage writes next to the source tree, so it builds a copy
# in build/deb/ (the working tree stays clean); the packages land in
# build/.  t/deb.t installs, drives and purges the result.
DEB_DIR := $(BUILD)/deb
DEB_SRC := $(DEB_DIR)/libnginx-mod-http-malloc

deb:
	@sh .ci/deps.sh $(DEB_TOOLS)
	@rm -rf $(DEB_DIR) $(BUILD)/libnginx-mod-http-malloc*.deb
	@mkdir -p $(DEB_SRC)
	tar -C $(CURDIR) --exclude=./build --exclude=./build-ubsan \
	    --exclude=./build-asan --exclude=./.git -cf - . \
	    | tar -C $(DEB_SRC) -xf -
	@sh .ci/builddeps.sh $(DEB_SRC)
	cd $(DEB_SRC) && dpkg-buildpackage -us -uc -b \
	    > $(DEB_DIR)/build.log 2>&1 \
	    || { tail -40 $(DEB_DIR)/build.log; exit 1; }
	cp $(DEB_DIR)/*.deb $(BUILD)/
	@ls $(BUILD)/*.deb

demo: deps $(MODULE)
	sh t/demo.sh

bench-deps:
	@sh .ci/deps.sh $(BENCH_PKGS)

# no sanitizers: it measures the symbolizer
$(BUILD)/bench_symbol: bench/bench_symbol.c core/*.h \
	    core/ngx_http_malloc_symbol.c \
	    core/ngx_http_malloc_arena.c
	@mkdir -p $(BUILD)
	$(CC) -O2 -Wall -Icore -o $@ bench/bench_symbol.c \
	    core/ngx_http_malloc_symbol.c \
	    core/ngx_http_malloc_arena.c -liberty

$(BUILD)/bench_rss: bench/bench_rss.c core/*.h \
	    core/ngx_http_malloc_rss.c core/ngx_http_malloc_maps.c
	@mkdir -p $(BUILD)
	$(CC) -O2 -Wall -Icore -o $@ bench/bench_rss.c \
	    core/ngx_http_malloc_rss.c core/ngx_http_malloc_maps.c

# about 7 minutes on 2 cores; bench-quick about 2 minutes, into build/
bench: deps bench-deps $(MODULE) $(BUILD)/bench_symbol $(BUILD)/bench_rss
	perl bench/bench.pl

bench-quick: deps bench-deps $(MODULE) $(BUILD)/bench_symbol \
	    $(BUILD)/bench_rss
	perl bench/bench.pl --quick

clean:
	rm -rf $(BUILD) $(CURDIR)/build-ubsan $(ASAN_BUILD)

# wrk at full rate while profiling is toggled, dumped, reset and read
# (t/soak.t, 15 s in make test), and a production day compressed
# (t/day.t, 180 s in make test): both for SOAK_TIME seconds
SOAK_TIME ?= 600

soak: deps $(MODULE)
	SOAK_TIME=$(SOAK_TIME) prove -v t/soak.t t/day.t

# The integration suite against a second build of the modules with UBSan
# (-fno-sanitize-recover: the first report ends the worker).  The .so
# needs libubsan.so.1, which dlopen() loads into Debian's nginx with
# jemalloc preloaded.  UBSan reads UBSAN_OPTIONS only at its first report,
# in a worker whose environment nginx has overwritten, so a preloaded shim
# (t/ubsan/ubsan_options.c) hands them over.  Reports go to
# build-ubsan/reports/ubsan.<pid> (writable by the workers' user), and any
# report fails the target.
# ASan cannot be used this way: it must be the process's first library
# and replace malloc(), which jemalloc already does in this process: two
# allocators in one nginx.  test-asan runs the files that need no
# jemalloc; the C core gets ASan in make unit and fuzz.
UBSAN_BUILD := $(CURDIR)/build-ubsan
UBSAN_MODS  := $(UBSAN_BUILD)/ngx_http_malloc_module.so \
	       $(UBSAN_BUILD)/ngx_http_malloc_test_module.so

$(UBSAN_BUILD)/Makefile: config t/testmod/config
	@mkdir -p $(UBSAN_BUILD)
	cd $(NGX_SRC) && . ./conf_flags && ./configure "$${NGX_CONF_FLAGS[@]}" \
	    --with-cc-opt='-fsanitize=undefined -fno-sanitize-recover=undefined' \
	    --with-ld-opt=-fsanitize=undefined \
	    --add-dynamic-module=$(CURDIR) \
	    --add-dynamic-module=$(CURDIR)/t/testmod \
	    --builddir=$(UBSAN_BUILD) > $(UBSAN_BUILD)/configure.log 2>&1 \
	    || { tail -20 $(UBSAN_BUILD)/configure.log; exit 1; }

$(UBSAN_MODS) &: $(UBSAN_BUILD)/Makefile $(SRCS) \
	         t/testmod/ngx_http_malloc_test_module.c
	$(MAKE) -f $(UBSAN_BUILD)/Makefile -C $(NGX_SRC) modules

$(UBSAN_BUILD)/ubsan_options.so: t/ubsan/ubsan_options.c
	@mkdir -p $(UBSAN_BUILD)
	$(CC) -shared -fPIC -O2 -Wall -Wextra -Werror -o $@ $<

test-ubsan: deps $(UBSAN_MODS) $(UBSAN_BUILD)/ubsan_options.so unit
	@rm -rf $(UBSAN_BUILD)/reports
	@mkdir -m 1777 $(UBSAN_BUILD)/reports
	TEST_MODULE_DIR=$(UBSAN_BUILD) \
	TEST_PRELOAD_EXTRA=$(UBSAN_BUILD)/ubsan_options.so \
	UBSAN_OPTIONS=print_stacktrace=1:log_path=$(UBSAN_BUILD)/reports/ubsan \
	    prove -r t; rc=$$?; \
	if ls $(UBSAN_BUILD)/reports | grep -q .; then \
	    echo "UBSan reports, in full in $(UBSAN_BUILD)/reports:"; \
	    grep -h 'runtime error' $(UBSAN_BUILD)/reports/* | sort | uniq -c; \
	    exit 1; \
	fi; \
	exit $$rc

# The test files that run on no jemalloc (ASAN_TESTS: the glibc part of
# t/nojemalloc.t, the directives and paths of t/conf.t) against a third
# build of the modules, with AddressSanitizer; make test runs it (about
# 20 s).  ASan must be the process's first library and its malloc():
# nginx, not built with it, starts with the compiler's libasan preloaded
# instead of jemalloc (TEST_ASAN: the parts of a test that need jemalloc
# are skipped).  It lies with its gcc (libasan.so.8 of gcc 12, 14 and 16
# on Debian 12, 13 and testing), which says where.
# The modules' pool allocations are each a block of their own, and the
# paths they give to open(), stat() and the like are checked
# (t/asan/asan_wrap.c, linked in with -Wl,--wrap), so that a read past
# the end of one is seen.  ASan reads ASAN_OPTIONS as the master starts,
# before nginx clears the environment; reports go to
# build-asan/reports/asan.<pid> (writable by the workers' user), and any
# report fails the target.
ASAN_BUILD := $(CURDIR)/build-asan
ASAN_MODS  := $(ASAN_BUILD)/ngx_http_malloc_module.so \
	      $(ASAN_BUILD)/ngx_http_malloc_test_module.so
ASAN_TESTS ?= t/nojemalloc.t t/conf.t
# nginx frees nothing at exit; every dynamic module defines its own
# ngx_module_order[], which ASan takes for an ODR violation; a C string
# handed to a library function (opendir, strchr, strtol) is checked up to
# its NUL, not only as far as the function read; nginx has no frame
# pointers, so an allocation's stack is unwound the slow way, to reach
# the module
ASAN_OPTS  := detect_leaks=0:detect_odr_violation=0:strict_string_checks=1
ASAN_OPTS  := $(ASAN_OPTS):fast_unwind_on_malloc=0
ASAN_LIB    = $(realpath $(shell $(CC) -print-file-name=libasan.so))
# what t/asan/asan_wrap.c takes over from the modules
ASAN_WRAP  := ngx_palloc ngx_pnalloc ngx_pcalloc open open64 openat \
	      openat64 stat stat64 lstat64 fstatat fstatat64 faccessat unlink \
	      unlinkat rename linkat
comma      := ,
ASAN_LD    := -fsanitize=address $(ASAN_BUILD)/asan_wrap.o \
	      $(addprefix -Wl$(comma)--wrap=,$(ASAN_WRAP))

$(ASAN_BUILD)/asan_wrap.o: t/asan/asan_wrap.c
	@mkdir -p $(ASAN_BUILD)
	$(CC) -c -fPIC -O2 -Wall -Wextra -Werror -o $@ $<

$(ASAN_BUILD)/Makefile: config t/testmod/config $(ASAN_BUILD)/asan_wrap.o
	cd $(NGX_SRC) && . ./conf_flags && ./configure "$${NGX_CONF_FLAGS[@]}" \
	    --with-cc-opt='-fsanitize=address -fno-omit-frame-pointer' \
	    --with-ld-opt='$(ASAN_LD)' \
	    --add-dynamic-module=$(CURDIR) \
	    --add-dynamic-module=$(CURDIR)/t/testmod \
	    --builddir=$(ASAN_BUILD) > $(ASAN_BUILD)/configure.log 2>&1 \
	    || { tail -20 $(ASAN_BUILD)/configure.log; exit 1; }

$(ASAN_MODS) &: $(ASAN_BUILD)/Makefile $(SRCS) \
	        t/testmod/ngx_http_malloc_test_module.c
	$(MAKE) -j$(NPROC) -f $(ASAN_BUILD)/Makefile -C $(NGX_SRC) modules

test-asan: deps $(ASAN_MODS)
	@if [ -z "$(ASAN_LIB)" ]; then \
	    echo "$(CC) has no libasan.so: make test-asan needs gcc" \
	         "and its libasan (libasan8 on Debian 12 to testing)"; \
	    exit 1; \
	fi
	@rm -rf $(ASAN_BUILD)/reports
	@mkdir -m 1777 $(ASAN_BUILD)/reports
	TEST_MODULE_DIR=$(ASAN_BUILD) TEST_ASAN=1 \
	TEST_PRELOAD_EXTRA=$(ASAN_LIB) \
	ASAN_OPTIONS=$(ASAN_OPTS):log_path=$(ASAN_BUILD)/reports/asan \
	    prove $(ASAN_TESTS); rc=$$?; \
	if ls $(ASAN_BUILD)/reports | grep -q .; then \
	    echo "ASan reports, in full in $(ASAN_BUILD)/reports:"; \
	    grep -h -E -e '==ERROR|^(READ|WRITE) |located|allocated by' \
	        -e ' in ngx_http_malloc|^SUMMARY' $(ASAN_BUILD)/reports/*; \
	    exit 1; \
	fi; \
	exit $$rc
