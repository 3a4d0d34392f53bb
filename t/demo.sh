#!/bin/sh

# Copyright (C) 2026 ngx_http_malloc_module maintainers
# BSD 2-Clause licence: see LICENSE.

# make demo: a real nginx on jemalloc with the module, on loopback, and the
# operator's loop: profiling on, traffic, dump, jeprof.  Ctrl-C stops it.

set -e

ROOT=$(cd "$(dirname "$0")/.." && pwd)
PORT=${PORT:-8080}
# the traffic's own server: the admin location has a server of its own
APP=$((PORT + 1))
PREFIX=$ROOT/build/demo-$PORT
NGINX=${NGINX:-/usr/sbin/nginx}
JEMALLOC=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
URL=http://127.0.0.1:$PORT/malloc

# whether other users may pass through every directory above $1
reachable() {
    d=$1
    while [ "$d" != / ]; do
        case $(stat -c %A "$d") in
            *x|*t) ;;
            *) return 1 ;;
        esac
        d=$(dirname "$d")
    done
}

# workers started by root run as nobody and must reach the prefix: a
# checkout in a private home (/root is 0700) gets a prefix in /tmp
if [ "$(id -u)" = 0 ] && ! reachable "$(dirname "$ROOT")"; then
    PREFIX=/tmp/ngx-malloc-demo-$PORT
    echo "== $ROOT is private to its owner: the demo runs in $PREFIX"
else
    mkdir -p "$ROOT/build"
    chmod 0755 "$ROOT/build"
    chmod o+x "$ROOT" 2>/dev/null || true
fi

mkdir -p "$PREFIX/conf" "$PREFIX/logs" "$PREFIX/html"
chmod 0755 "$PREFIX" "$PREFIX/html"
echo "hello from nginx" > "$PREFIX/html/index.html"

cat > "$PREFIX/conf/nginx.conf" <<CONF
load_module $ROOT/build/ngx_http_malloc_module.so;
# a test-only module: /leak keeps 1 MiB per request, so there is
# something to find
load_module $ROOT/build/ngx_http_malloc_test_module.so;

worker_processes 2;
error_log $PREFIX/logs/error.log notice;
pid $PREFIX/logs/nginx.pid;

env LD_PRELOAD;
env MALLOC_CONF;

events {
    worker_connections 1024;
}

http {
    access_log off;
    client_body_temp_path $PREFIX/body;
    proxy_temp_path $PREFIX/proxy;
    fastcgi_temp_path $PREFIX/fastcgi;
    uwsgi_temp_path $PREFIX/uwsgi;
    scgi_temp_path $PREFIX/scgi;

    malloc_dump_dir $PREFIX/dumps;

    # any other Host (a DNS rebinding page in a browser): 421
    server {
        listen 127.0.0.1:$PORT default_server reuseport;
        return 421;
    }

    # the admin location in a server of its own, as the README has it
    server {
        listen 127.0.0.1:$PORT;
        server_name 127.0.0.1 localhost;

        location /malloc/ {
            malloc_admin write=on;
            allow 127.0.0.1;
            deny all;
        }
    }

    # the traffic
    server {
        listen 127.0.0.1:$APP;
        root $PREFIX/html;

        location /leak {
            malloc_test;
        }
    }
}
CONF

stop() {
    [ -f "$PREFIX/logs/nginx.pid" ] && \
        kill "$(cat "$PREFIX/logs/nginx.pid")" 2>/dev/null || true
}

stop
sleep 0.3
rm -rf "$PREFIX/dumps"

echo "== starting nginx on jemalloc: the admin location on port $PORT (PORT= to"
echo "== change), the traffic on $APP"
LD_PRELOAD=$JEMALLOC MALLOC_CONF=prof:true,prof_active:false \
    "$NGINX" -p "$PREFIX/" -c "$PREFIX/conf/nginx.conf"
trap 'echo; echo "== stopping nginx"; stop; exit 0' INT TERM
sleep 0.5

# prints a command as an operator would type it, then runs it
run() {
    echo "\$ $1"
    sh -c "$1"
    echo
}

echo "== the module's view of nginx"
run "curl -s $URL/"

echo "== turn heap profiling on in every worker"
run "curl -s -X POST -d true $URL/prof_active"

echo "== traffic: static requests, and 48 MiB kept by /leak"
if command -v wrk > /dev/null; then
    wrk -t 1 -c 8 -d 2s "http://127.0.0.1:$APP/" | grep "requests in"
else
    i=0
    while [ $i -lt 200 ]; do
        curl -s -o /dev/null "http://127.0.0.1:$APP/"
        i=$((i + 1))
    done
fi
i=0
while [ $i -lt 48 ]; do
    curl -s -o /dev/null "http://127.0.0.1:$APP/leak?mb=1"
    i=$((i + 1))
done

echo "== dump every worker's heap"
run "curl -s -X POST -d '\"demo.heap\"' $URL/prof_dump"

echo "== jeprof --text, straight from the admin location (both workers merged,"
echo "== names resolved by the module: static code shows as nginx+0x...)"
echo "\$ jeprof --text $URL/pprof/heap"
HOME=$PREFIX jeprof --text "$URL/pprof/heap" 2>/dev/null | head -15
echo

cat <<EOF2
== nginx keeps serving on 127.0.0.1:$PORT (admin) and :$APP (traffic); try:

  curl -s $URL/
  curl -s -X POST -d true $URL/prof_active
  curl -s "http://127.0.0.1:$APP/leak?mb=16"
  curl -s -X POST -d '"mine.heap"' $URL/prof_dump
  jeprof --text $NGINX $PREFIX/dumps/mine.*.heap
  jeprof --text $URL/pprof/heap
  go tool pprof -top $URL/pprof/heap.pb.gz
  curl -s $URL/metrics
  curl -s -X POST -d false $URL/prof_active

Press Ctrl-C to stop nginx.
EOF2

while :; do
    sleep 1
done
