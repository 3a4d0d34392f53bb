#!/bin/bash

# Copyright (C) 2026 ngx_http_malloc_module maintainers
# BSD 2-Clause licence: see LICENSE.

# make test's run of the suite.  The test files mostly wait on nginx, so
# TEST_JOBS of them (4 by default) run at once, each on a nginx and ports
# of its own; those that load the machine on purpose (wrk at full rate,
# RSS bounds) run after them, alone.  Prints the ten slowest files with
# their times, and exits 1 if any file failed.  The whole output is kept
# in build/prove.log (or $PROVE_LOG); TEST_EXCLUDE names files to leave
# out (nginx.org's build has no Debian package for t/deb.t).

set -o pipefail

cd "$(dirname "$0")/.." || exit 1

jobs=${TEST_JOBS:-4}

# One Go build cache for every file: the tests give each client a HOME of
# its own, and a Go without a prebuilt pprof (Debian testing's 1.27)
# builds "go tool pprof" into the cache on first use: about 90 s of CPU
# in every file that runs it, without a shared cache.
export GOCACHE="${GOCACHE:-$PWD/build/go-cache}"
log=${PROVE_LOG:-build/prove.log}
alone="t/soak.t t/day.t"
others=$(ls t/*.t | grep -v -x -e t/soak.t -e t/day.t \
         $(for f in ${TEST_EXCLUDE:-}; do echo "-e $f"; done))

mkdir -p "$(dirname "$log")"
: > "$log"

rc=0
# shellcheck disable=SC2086
prove --timer -j "$jobs" $others 2>&1 | tee -a "$log" || rc=1
# shellcheck disable=SC2086
prove --timer $alone 2>&1 | tee -a "$log" || rc=1

{
    echo "the ten slowest test files:"
    sed -n 's/^\[[^]]*\] \(t\/[^ ]*\) \.* ok *\([0-9][0-9]*\) ms.*/\2 \1/p' \
        "$log" | sort -rn | head -n 10 \
        | awk '{ printf "  %6.1f s  %s\n", $1 / 1000, $2 }'
} > "$log.slowest"
cat "$log.slowest" | tee -a "$log"
rm -f "$log.slowest"

exit $rc
