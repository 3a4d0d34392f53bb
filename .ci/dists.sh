#!/bin/sh
# make test-dists: "make test" on a fresh minimal system of each Debian
# release, as a new user would run it: debootstrap's minimal root plus
# build-essential, git and curl, the committed checkout cloned into /root,
# "make test" there as root.  Then the suite against nginx.org's own
# source of the newest nginx on the mirror, built with --with-compat.
#
#   .ci/dists.sh [release ...]     default: bookworm trixie forky nginx.org
#
# The mirror is the host's, read from its apt sources.  A root is kept as
# a tarball in build/dists/ and made again when the mirror's InRelease of
# that release changes; every run unpacks a fresh copy.  Prints one line
# per release (nginx, jemalloc, PASS or FAIL, minutes) and then what
# failed; the logs stay in build/dists/<release>.log.  Exits 1 if any
# release fails, a root that cannot be built included.

set -u

ROOT=$(cd "$(dirname "$0")/.." && pwd)
DISTS=$ROOT/build/dists
RELEASES=${*:-bookworm trixie forky nginx.org}
CHECKOUT=/root/ngx_http_malloc_module

if [ "$(id -u)" != 0 ]; then
    echo "make test-dists needs root: it runs debootstrap and chroot" >&2
    exit 1
fi

sh "$ROOT/.ci/deps.sh" debootstrap xz-utils || exit 1

mkdir -p "$DISTS"

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

# build/dists/<release>.tar: the minimal root, made when missing or
# when the mirror's release file has changed
minimal_root() {
    rel=$1
    tar=$DISTS/$rel.tar
    key=$(curl -fsS "$MIRROR/dists/$rel/InRelease" | sha256sum | cut -c1-64)

    if [ -z "$key" ] || [ "$key" = "$(echo -n | sha256sum | cut -c1-64)" ]
    then
        echo "cannot read $MIRROR/dists/$rel/InRelease"
        return 1
    fi

    if [ -f "$tar" ] && [ "$(cat "$DISTS/$rel.key" 2>/dev/null)" = "$key" ]
    then
        return 0
    fi

    # bookworm's debootstrap knows no later suites: they bootstrap as sid
    script=
    [ -f "/usr/share/debootstrap/scripts/$rel" ] \
        || script=/usr/share/debootstrap/scripts/sid

    new=$DISTS/$rel.new
    remove_root "$new" || return 1
    rm -f "$tar"

    echo "debootstrap $rel from $MIRROR"
    debootstrap --variant=minbase \
        --include=build-essential,git,curl,ca-certificates \
        "$rel" "$new" "$MIRROR" $script > "$DISTS/$rel.debootstrap.log" 2>&1 \
        || { tail -n 5 "$DISTS/$rel.debootstrap.log"; return 1; }

    # the mirror's copy of testing may be past its Valid-Until date
    echo 'Acquire::Check-Valid-Until "false";' \
        > "$new/etc/apt/apt.conf.d/99valid-until"

    tar -C "$new" -cf "$tar" . || return 1
    remove_root "$new"
    echo "$key" > "$DISTS/$rel.key"
}

# make test in a fresh copy of the root; the log in build/dists/<rel>.log
run_release() {
    rel=$1
    dir=$DISTS/$rel
    log=$DISTS/$rel.log

    minimal_root "$rel" > "$log" 2>&1 || return 1

    remove_root "$dir" || return 1
    mkdir -p "$dir"
    tar -C "$dir" -xf "$DISTS/$rel.tar" || return 1

    cp /etc/resolv.conf "$dir/etc/resolv.conf"
    git clone -q "$ROOT" "$dir$CHECKOUT" || return 1

    mount_root "$dir" || { umount_root "$dir"; return 1; }

    # TEST_LONG=0: the long runs of make test (t/export.t's 100 intervals)
    # are this machine's; the roots run their short form
    chroot "$dir" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb \
        TEST_LONG=0 \
        PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        sh -c "cd $CHECKOUT && make test" >> "$log" 2>&1
    rc=$?

    VERSIONS=$(chroot "$dir" dpkg-query -W -f '${Package} ${Version}\n' \
                   nginx libjemalloc2 2>/dev/null \
               | awk '{ v[$1] = $2 } END {
                          printf "nginx %s, jemalloc %s",
                                 v["nginx"], v["libjemalloc2"] }')

    umount_root "$dir"

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

    # t/deb.t is about Debian's package and its nginx: not this one
    (cd "$ROOT" && TEST_NGINX_BINARY=$src/nginx TEST_MODULE_DIR=$src/modules \
         prove $(ls t/*.t | grep -v '^t/deb\.t$')) >> "$log" 2>&1
}

results=
failed=0

for rel in $RELEASES; do
    start=$(date +%s)
    VERSIONS=

    if [ "$rel" = nginx.org ]; then
        run_nginx_org
    else
        run_release "$rel"
    fi

    rc=$?
    mins=$(( ($(date +%s) - start + 30) / 60 ))

    if [ $rc = 0 ]; then
        verdict=PASS
    else
        verdict=FAIL
        failed=1
    fi

    line=$(printf '%-10s %-52s %s  %d min' "$rel" "${VERSIONS:-?}" \
               "$verdict" "$mins")
    echo "$line"
    results="$results$line
"
done

echo
echo "== make test-dists"
printf '%s' "$results"

for rel in $RELEASES; do
    log=$DISTS/$rel.log
    grep -q '^Result: PASS' "$log" 2>/dev/null && continue
    echo
    echo "== $rel: $log"
    grep -E '^(t/\S+ +\(Wstat|  Failed tests?:|#   Failed test)' "$log" \
        | head -n 40
    tail -n 15 "$log"
done

exit $failed
