#!/bin/sh
# Link flux-core's librlist, the C library of R and RFC 31 constraints that flux-core's own
# modules use, into one shared object for `--impl flux-core-librlist`:
#
#   implementations/flux-core/build_librlist.sh BUILD PREFIX [OUT]
#
# BUILD   a flux-core source tree configured and built with `make` (librlist is a libtool
#         convenience library: BUILD/src/common/librlist/.libs/librlist.a; it is never
#         installed, so it is taken from the build tree);
# PREFIX  where that tree was installed (`make install`: PREFIX/lib/libflux-core.so);
# OUT     the shared object to write (default: BUILD/librlist-conformance.so).
#
# The object holds librlist whole, the internal libraries it calls (libjob, libutil, the czmq
# containers, libccan, libidset, libhostlist, libmissing), and librlist_glue.c beside this
# script (the project's own code: jansson's inline json_decref and the starttime/expiration
# fields of struct rlist, which ctypes cannot reach).  It links against PREFIX's libflux-core
# and Debian's libjansson.  Afterwards:
#
#   FLUX_CORE_LIBRLIST=OUT flux-conformance run --impl flux-core-librlist
#
# Debian 12 packages: gcc and libjansson-dev, besides those flux-core's own build needs (see
# README.md beside this script).
set -eu

if [ $# -lt 2 ] || [ $# -gt 3 ]; then
    echo "usage: $0 BUILD PREFIX [OUT]" >&2
    exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
tree=$(cd "$1" && pwd)
prefix=$(cd "$2" && pwd)
out=${3:-$tree/librlist-conformance.so}
c=$tree/src/common

for lib in librlist/.libs/librlist.a libjob/.libs/libjob.a libutil/.libs/libutil.a \
    libczmqcontainers/.libs/libczmqcontainers.a libccan/.libs/libccan.a \
    libidset/.libs/libidset.a libhostlist/.libs/libhostlist.a libmissing/.libs/libmissing.a; do
    if [ ! -f "$c/$lib" ]; then
        echo "$0: $c/$lib is missing: build flux-core in $tree with make first" >&2
        exit 2
    fi
done
if [ ! -f "$prefix/lib/libflux-core.so" ]; then
    echo "$0: $prefix/lib/libflux-core.so is missing: run make install in $tree" >&2
    exit 2
fi

mkdir -p "$(dirname "$out")"
gcc -shared -fPIC -O2 -o "$out" \
    -DHAVE_CONFIG_H -I"$tree" -I"$tree/config" -I"$tree/src/include" \
    -I"$c/libccan" -I"$tree/src/common/libflux" \
    "$here/librlist_glue.c" \
    -Wl,--whole-archive "$c/librlist/.libs/librlist.a" -Wl,--no-whole-archive \
    "$c/libjob/.libs/libjob.a" "$c/libutil/.libs/libutil.a" \
    "$c/libczmqcontainers/.libs/libczmqcontainers.a" "$c/libccan/.libs/libccan.a" \
    -Wl,--whole-archive "$c/libidset/.libs/libidset.a" "$c/libhostlist/.libs/libhostlist.a" \
    -Wl,--no-whole-archive "$c/libmissing/.libs/libmissing.a" \
    -L"$prefix/lib" -Wl,-rpath,"$prefix/lib" -lflux-core -ljansson -lm -Wl,--no-undefined

version=$(sed -n 's/^PACKAGE_VERSION = //p' "$tree/Makefile")
echo "built $out (flux-core $version)"
echo "use it: FLUX_CORE_LIBRLIST=$out flux-conformance run --impl flux-core-librlist"
