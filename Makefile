# ngx_http_malloc_module: build against Debian's nginx-dev, test, demo.
#
#   make          build build/ngx_http_malloc_module.so
#   make test     install what is missing, build, run every test
#   make demo     build and run a real nginx on jemalloc with the module

SHELL     := /bin/bash
NGX_SRC   ?= /usr/share/nginx/src
BUILD     := $(CURDIR)/build
MODULE    := $(BUILD)/ngx_http_malloc_module.so
TESTMOD   := $(BUILD)/ngx_http_malloc_test_module.so
SRCS      := $(wildcard ngx_http_malloc_module/*.c ngx_http_malloc_module/*.h)
CORE      := ngx_http_malloc_module/ngx_http_malloc_path.c \
	         ngx_http_malloc_module/ngx_http_malloc_json.c
UNIT      := $(BUILD)/unit_path $(BUILD)/unit_json
CC        ?= cc
CFLAGS_T  := -g -O1 -Wall -Wextra -Werror -fsanitize=address,undefined \
	         -fno-omit-frame-pointer -Ingx_http_malloc_module

DEB_PKGS  := nginx nginx-dev libjemalloc2 libjemalloc-dev libjansson-dev \
	         libtest-simple-perl libhttp-tiny-perl libjson-pp-perl \
	         golang-go curl gcc make

.PHONY: all deps test unit demo clean

all: $(MODULE)

deps:
	@sh .ci/deps.sh $(DEB_PKGS)

$(BUILD)/Makefile: config t/testmod/config
	@mkdir -p $(BUILD)
	cd $(NGX_SRC) && . ./conf_flags && ./configure "$${NGX_CONF_FLAGS[@]}" \
	    --add-dynamic-module=$(CURDIR) \
	    --add-dynamic-module=$(CURDIR)/t/testmod \
	    --builddir=$(BUILD) > $(BUILD)/configure.log 2>&1 \
	    || { tail -20 $(BUILD)/configure.log; exit 1; }

$(MODULE) $(TESTMOD) &: $(BUILD)/Makefile $(SRCS) \
	                  t/testmod/ngx_http_malloc_test_module.c
	$(MAKE) -f $(BUILD)/Makefile -C $(NGX_SRC) modules

$(BUILD)/unit_%: t/unit/unit_%.c $(CORE) ngx_http_malloc_module/*.h
	@mkdir -p $(BUILD)
	$(CC) $(CFLAGS_T) -o $@ $< $(CORE) -ljansson

unit: $(UNIT)

test: deps $(MODULE) $(UNIT)
	prove -r t

demo: deps $(MODULE)
	sh t/demo.sh

clean:
	rm -rf $(BUILD)
