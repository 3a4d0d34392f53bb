#!/bin/sh

# Copyright (C) 2026 ngx_http_malloc_module maintainers
# BSD 2-Clause licence: see LICENSE.

# make test-dists: "make test" on a fresh minimal system of each Debian
# release, as a new user would run it: debootstrap's minimal root plus
# build-essential, git and curl, the committed checkout cloned into /root,
# "make test" there as root.  Then the suite against nginx.org's own
# source of the newest nginx on the mirror, built with --with-compat.
#
#   .ci/dists.sh [release ...]     default: bookworm trixie forky nginx.org
#   DISTS_ROOTS_ONLY=1 .ci/dists.sh  only make (or check) the cached roots
#
# The mirror is the host's, read from its apt sources.  A root, with
# every package make test installs, is kept in a cache outside the
# checkout (/var/cache/ngx_http_malloc_module, or $MALLOC_CI_CACHE), so
# that a fresh clone finds it, and made again when the mirror's InRelease
# of that release, the packages make test asks for or the way a root is
# made change; every run mounts a fresh copy on write of it.  Releases run
# in DISTS_JOBS lanes (2 by default: the tests mostly wait), each on test
# ports of its own: a lane starts its next release when its last ends,
# and the slowest come first (testing's, then 13's), so that the lanes
# end together: 2 minutes less than in batches.  Prints one line per
# release (nginx, jemalloc, PASS or FAIL, minutes) and then what failed;
# the logs stay in build/dists/<release>.log.  Exits 1 if any release fails, a root that
# cannot be built included.

set -u

ROOT=$(cd "$(dirname "$0")/.." && pwd)
DISTS=$ROOT/build/dists
CACHE=${MALLOC_CI_CACHE:-/var/cache/ngx_http_malloc_module}
RELEASES=${*:-forky trixie nginx.org bookworm}
JOBS=${DISTS_JOBS:-2}
CHECKOUT=/root/ngx_http_malloc_module

if [ "$(id -u)" != 0 ]; then
    echo "make test-dists needs root: it runs debootstrap and chroot" >&2
    exit 1
fi

sh "$ROOT/.ci/deps.sh" debootstrap xz-utils util-linux || exit 1

mkdir -p "$DISTS" "$CACHE"

# the first Debian archive (not security) of the host's apt sources
mirror() {
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] || continue
        awk '
            /^[Tt]ypes:/  { deb = ($0 ~ /deb( |$)/) }
            /^URIs:/      { uri = $2 }
            /^Suites:/    { sec = ($0 ~ /security/) }
            /^$/          { if (deb && uri != "" && !sec) { print uri; exit }
                            uri = ""; sec = 0 }
            END           { if (deb && uri != "" && !sec) print uri }
        ' "$f"
    done
    cat /etc/apt/sources.list 2>/dev/null \
        | awk '$1 == "deb" && $0 !~ /security/ {
                   for (i = 2; i <= NF; i++)
                       if ($i ~ /^[a-z]+:\/\//) { print $i; exit }
               }'
}

MIRROR=$(mirror | head -n 1)
MIRROR=${MIRROR%/}

if [ -z "$MIRROR" ]; then
    echo "no Debian mirror in /etc/apt/sources.list*" >&2
    exit 1
fi

# the chroot's mounts; rslave, so that unmounting never reaches the host
mount_root() {
    mount -t proc proc "$1/proc" &&
    mount --rbind /dev "$1/dev" && mount --make-rslave "$1/dev" &&
    mount --rbind /sys "$1/sys" && mount --make-rslave "$1/sys"
}

umount_root() {
    for m in proc dev sys; do
        if mountpoint -q "$1/$m"; then
            umount -R "$1/$m" 2>/dev/null || umount -R -l "$1/$m"
        fi
    done
}

# removes a root, never what is mounted into it (the host's /dev)
remove_root() {
    umount_root "$1"
    if grep -q " $1/" /proc/mounts; then
        echo "$1 still has mounts: not removed" >&2
        return 1
    fi
    rm -rf --one-file-system "$1"
}

# The packages a root needs, as "make test" would install them: the key of
# its cache together with the mirror's release file, and this script's
# way of making it
packages_key() {
    {
        make -s -C "$ROOT" print-packages
        cat "$ROOT/.ci/deps.sh" "$ROOT/.ci/builddeps.sh"
        sed -n '/^minimal_root()/,/^}/p' "$ROOT/.ci/dists.sh"
    } | sha256sum | cut -c1-64
}

# $CACHE/<release>: a minimal root with every package "make test" needs,
# made when missing or when its key has changed.  It is never run in: each
# run mounts a copy on write of it (overlayfs), or unpacks a copy.
minimal_root() {
    rel=$1
    root=$CACHE/$rel
    key=$(curl -fsS "$MIRROR/dists/$rel/InRelease" | sha256sum | cut -c1-64)

    if [ -z "$key" ] || [ "$key" = "$(echo -n | sha256sum | cut -c1-64)" ]
    then
        echo "cannot read $MIRROR/dists/$rel/InRelease"
        return 1
    fi

    key="$key $(packages_key)"

    if [ -d "$root" ] && [ "$(cat "$CACHE/$rel.key" 2>/dev/null)" = "$key" ]
    then
        echo "root of $rel from the cache: $root"
        return 0
    fi

    # bookworm's debootstrap knows no later suites: they bootstrap as sid
    script=
    [ -f "/usr/share/debootstrap/scripts/$rel" ] \
        || script=/usr/share/debootstrap/scripts/sid

    new=$CACHE/$rel.new
    remove_root "$new" || return 1
    rm -f "$CACHE/$rel.key"

    echo "debootstrap $rel from $MIRROR into $new"
    debootstrap --variant=minbase \
        --include=build-essential,git,curl,ca-certificates \
        "$rel" "$new" "$MIRROR" $script > "$CACHE/$rel.debootstrap.log" 2>&1 \
        || { tail -n 5 "$CACHE/$rel.debootstrap.log"; return 1; }

    # the mirror's copy of testing may be past its Valid-Until date
    echo 'Acquire::Check-Valid-Until "false";' \
        > "$new/etc/apt/apt.conf.d/99valid-until"

    # what make test, make deb and the tests install, installed now
    cp /etc/resolv.conf "$new/etc/resolv.conf"
    git clone -q "$ROOT" "$new/root/prepare" || return 1
    mount_root "$new" || { umount_root "$new"; return 1; }
    chroot "$new" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb \
        PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        sh -c "cd /root/prepare && make deps-all && apt-get clean" \
        || { umount_root "$new"; return 1; }
    umount_root "$new"
    rm -rf "$new/root/prepare"

    remove_root "$root" || return 1
    mv "$new" "$root" || return 1
    echo "$key" > "$CACHE/$rel.key"
}

# a fresh copy of the cached root at $2, to run in
copy_root() {
    rel=$1
    dir=$2
    run=$dir.layers

    drop_root "$dir" || return 1
    mkdir -p "$run/upper" "$run/work" "$dir"

    if mount -t overlay overlay \
           -o "lowerdir=$CACHE/$rel,upperdir=$run/upper,workdir=$run/work" \
           "$dir" 2>/dev/null
    then
        echo "a copy on write of $CACHE/$rel at $dir"
        return 0
    fi

    echo "no overlayfs: copying $CACHE/$rel to $dir"
    cp -a "$CACHE/$rel/." "$dir/"
}

# the copy, its mounts and its layers gone
drop_root() {
    dir=$1
    umount_root "$dir"
    if mountpoint -q "$dir"; then
        umount "$dir" || umount -l "$dir"
    fi
    remove_root "$dir"
    rm -rf "$dir.layers"
}

# make test in a fresh copy of the root; the log in build/dists/<rel>.log
run_release() {
    rel=$1
    dir=$DISTS/$rel
    log=$DISTS/$rel.log

    # one run at a time makes or takes a release's cached root
    { flock 9; minimal_root "$rel"; } 9> "$CACHE/$rel.lock" > "$log" 2>&1 \
        || return 1
    copy_root "$rel" "$dir" >> "$log" 2>&1 || return 1

    cp /etc/resolv.conf "$dir/etc/resolv.conf"
    git clone -q "$ROOT" "$dir$CHECKOUT" || { drop_root "$dir"; return 1; }

    mount_root "$dir" || { drop_root "$dir"; return 1; }

    # TEST_LONG=0: the long runs of make test (t/export.t's 100 intervals,
    # t/day.t's 3 minutes) are this machine's; the roots run their short
    # form.  FUZZ_SMOKE=0: each target replays its corpus, built with the
    # release's clang; the exploring is the same core on every release.
    # TEST_PORT_BASE: the roots run side by side, each on ports of its own.
    # TEST_EXCLUDE: bookworm's root has this host's own chromium and node,
    # whose run of the page's tests (t/ui.t) make test has just made.
    exclude=
    [ "$rel" = bookworm ] && exclude=t/ui.t
    chroot "$dir" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb \
        TEST_LONG=0 FUZZ_SMOKE=0 TEST_PORT_BASE="$2" \
        TEST_EXCLUDE="$exclude" \
        PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        sh -c "cd $CHECKOUT && make test" >> "$log" 2>&1
    rc=$?

    VERSIONS=$(chroot "$dir" dpkg-query -W -f '${Package} ${Version}\n' \
                   nginx libjemalloc2 2>/dev/null \
               | awk '{ v[$1] = $2 } END {
                          printf "nginx %s, jemalloc %s",
                                 v["nginx"], v["libjemalloc2"] }')

    drop_root "$dir"

    return $rc
}

# nginx.org's source of the newest nginx on the mirror (the .orig tarball of
# its Debian source package), built with --with-compat on this host, the
# modules built against that tree, and the suite run against it
run_nginx_org() {
    log=$DISTS/nginx.org.log
    src=$DISTS/nginx.org

    : > "$log"

    sh "$ROOT/.ci/deps.sh" libpcre2-dev zlib1g-dev libssl-dev >> "$log" 2>&1 \
        || return 1

    rm -rf "$src"
    mkdir -p "$src"

    # the mirror may lack the newest source: then the next release's
    orig=
    for suite in forky trixie; do
        name=$(curl -fsS "$MIRROR/dists/$suite/main/source/Sources.xz" \
                   2>/dev/null | xz -dc 2>/dev/null \
               | awk '/^Package: /  { p = $2 }
                      p == "nginx" && / nginx_[^ ]*\.orig\.tar\.gz$/ {
                          print $3; exit }')

        if [ -n "$name" ] \
           && curl -fsS -o "$src/$name" "$MIRROR/pool/main/n/nginx/$name" \
                  >> "$log" 2>&1
        then
            orig=$name
            break
        fi

        echo "no nginx source of $suite on the mirror (${name:-none})" \
            >> "$log"
    done

    if [ -z "$orig" ]; then
        echo "no nginx .orig tarball on the mirror" >> "$log"
        return 1
    fi

    VERSIONS="nginx.org ${orig#nginx_}"
    VERSIONS="${VERSIONS%.orig.tar.gz}, jemalloc of this host"

    tar -C "$src" -xzf "$src/$orig" || return 1

    tree=$(ls -d "$src"/nginx-*/ | head -n 1)
    tree=${tree%/}

    # --with-compat, threads for the module's pool, and the paths of a
    # prefix the tests replace with -p anyway
    (cd "$tree" && ./configure --with-compat --with-threads \
         --with-http_ssl_module --with-http_v2_module \
         --prefix=/usr/local/nginx \
         --add-dynamic-module="$ROOT" \
         --add-dynamic-module="$ROOT/t/testmod" \
         && make -j2 && make -j2 modules) >> "$log" 2>&1 || return 1

    cp "$tree/objs/nginx" "$src/nginx"
    mkdir -p "$src/modules"
    cp "$tree"/objs/*.so "$src/modules/"

    # t/deb.t is about Debian's package and its nginx: not this one; the
    # page's tests (t/ui.t) drive this host's chromium, as make test did
    (cd "$ROOT" && TEST_NGINX_BINARY=$src/nginx TEST_MODULE_DIR=$src/modules \
         TEST_LONG=0 TEST_PORT_BASE="$1" TEST_EXCLUDE="t/deb.t t/ui.t" \
         PROVE_LOG=$DISTS/nginx.org.prove.log .ci/prove.sh) >> "$log" 2>&1
}

# one release, its line in build/dists/<rel>.result; $2: its test ports
run_one() {
    rel=$1
    start=$(date +%s)
    VERSIONS=

    if [ "$rel" = nginx.org ]; then
        run_nginx_org "$2"
    else
        run_release "$rel" "$2"
    fi

    rc=$?
    mins=$(( ($(date +%s) - start + 30) / 60 ))
    verdict=$([ $rc = 0 ] && echo PASS || echo FAIL)

    printf '%-10s %-52s %s  %d min\n' "$rel" "${VERSIONS:-?}" "$verdict" \
        "$mins" > "$DISTS/$rel.result"
    cat "$DISTS/$rel.result"
}

# test ports of each release's own (make test on the host has 10000 ..)
port_base() {
    case $1 in
        nginx.org) echo 13500 ;;
        bookworm)  echo 17000 ;;
        trixie)    echo 23500 ;;
        *)         echo 27000 ;;
    esac
}

# DISTS_ROOTS_ONLY=1: the cached roots made or checked, no test run; what
# a machine does ahead of CI so that its run finds them
if [ -n "${DISTS_ROOTS_ONLY:-}" ]; then
    failed=0
    for rel in $RELEASES; do
        [ "$rel" = nginx.org ] && continue
        start=$(date +%s)
        { flock 9; minimal_root "$rel"; } 9> "$CACHE/$rel.lock" || failed=1
        echo "root of $rel: $(( $(date +%s) - start )) s"
    done
    exit $failed
fi

# lane $1 of $JOBS: the releases at $1, $1 + JOBS, ..., one after another
lane() {
    k=0
    for rel in $RELEASES; do
        if [ $((k % JOBS)) = "$1" ]; then
            run_one "$rel" "$(port_base "$rel")"
        fi
        k=$((k + 1))
    done
}

for rel in $RELEASES; do
    rm -f "$DISTS/$rel.result"
done
k=0
while [ $k -lt "$JOBS" ]; do
    lane $k &
    k=$((k + 1))
done
wait

results=
failed=0
for rel in $RELEASES; do
    line=$(cat "$DISTS/$rel.result" 2>/dev/null \
           || printf '%-10s %-52s FAIL' "$rel" '?')
    case $line in *PASS*) ;; *) failed=1 ;; esac
    results="$results$line
"
done

echo
echo "== make test-dists"
printf '%s' "$results"

for rel in $RELEASES; do
    log=$DISTS/$rel.log
    grep -q ' PASS ' "$DISTS/$rel.result" 2>/dev/null && continue
    echo
    echo "== $rel: $log"
    # each failed test with the diagnostics after it, which say why
    awk '/^#   Failed test/ { n = 12 }
         /^(t\/[^ ]+ +\(Wstat|  Failed tests?:)/ { print; next }
         n > 0 && /^#/ { print; n--; next }
         { n = 0 }' "$log" | head -n 80
    tail -n 15 "$log"
done

exit $failed
