#!/bin/sh

# Copyright (C) 2026 ngx_http_malloc_module maintainers
# BSD 2-Clause licence: see LICENSE.

# Installs the build dependencies of the Debian source tree $1 when some
# are missing: with apt-get as root, otherwise stops and names them.

cd "$1" || exit 1
unmet=$(dpkg-checkbuilddeps 2>&1) && exit 0

if [ "$(id -u)" != 0 ]; then
    echo "$unmet" >&2
    echo "install them with: sudo apt-get build-dep $1" >&2
    exit 1
fi

echo "$unmet"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq || exit 1
apt-get build-dep -y -qq "$PWD" || exit 1
