#!/bin/sh
# Link flux-core's librlist (a static convenience library, never installed) into a shared
# object the benchmarks can load with ctypes, so R.union/diff/intersect/decode and constraint
# matching can be timed in C on the same inputs as the reference.
#
# usage: build_rlist_probe.sh BUILD_TREE PREFIX [OUT]
#   BUILD_TREE  a flux-core source tree already built with `make` (src/common/*/.libs/*.a)
#   PREFIX      where that build was installed (lib/libflux-core.so)
#   OUT         the shared object to write (default PREFIX/lib/librlist-probe.so, where the
#               benchmarks look when FLUX_RLIST_PROBE is unset)
# Needs the Debian packages gcc and libjansson-dev (flux-core's own build needs them too).
# Nothing is written inside this repository.
set -eu
tree=$1
prefix=$2
out=${3:-$prefix/lib/librlist-probe.so}
c="$tree/src/common"
mkdir -p "$(dirname "$out")"
gcc -shared -o "$out" \
    -Wl,--whole-archive "$c/librlist/.libs/librlist.a" -Wl,--no-whole-archive \
    "$c/libjob/.libs/libjob.a" "$c/libutil/.libs/libutil.a" \
    "$c/libczmqcontainers/.libs/libczmqcontainers.a" "$c/libccan/.libs/libccan.a" \
    "$c/libidset/.libs/libidset.a" "$c/libhostlist/.libs/libhostlist.a" \
    "$c/libmissing/.libs/libmissing.a" \
    -L"$prefix/lib" -Wl,-rpath,"$prefix/lib" -lflux-core -ljansson -lm -Wl,--no-undefined
echo "$out"
