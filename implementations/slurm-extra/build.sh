#!/bin/sh
# Build Slurm's --extra evaluator behind the flux-conformance protocol.
#
#   implementations/slurm-extra/build.sh SLURM_SOURCE OUT
#
# SLURM_SOURCE is a Slurm source tree (a checkout or an unpacked release tarball) or a
# release tarball (.tar.bz2, .tar.gz); OUT is a directory outside the repository.  The
# script configures Slurm with its own default compiler flags (it adds only
# --without-munge: no authentication plugin is involved), builds libslurmfull (src/common
# and src/interfaces, which hold extra_constraints.c, data.c and the serializer interface)
# and the serializer/json plugin, and links slurm_extra_conformance.c (this directory's
# protocol driver, our own code) against them.  Nothing from Slurm is copied into it.
#
# Result: OUT/slurm_extra_conformance and OUT/plugins/serializer_json.so.  Run the suite:
#
#   SLURM_EXTRA_BUILD=OUT flux-conformance run --impl slurm-extra
#
# Debian 12 packages: gcc make pkg-config libjson-c-dev (json-c 0.16), plus what Slurm's
# configure needs by default on Debian: python3 (build scripts), perl, bzip2/gzip for a
# tarball.  Two jobs by default (MAKE_JOBS overrides); 3 to 7 minutes on two cores.
set -eu

if [ $# -ne 2 ]; then
    echo "usage: $0 SLURM_SOURCE OUT" >&2
    exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
src=$1
mkdir -p "$2"
out=$(cd "$2" && pwd)
jobs=${MAKE_JOBS:-2}

if [ -f "$src" ]; then
    mkdir -p "$out/src"
    tar -xf "$src" -C "$out/src" --strip-components=1
    src=$out/src
fi
src=$(cd "$src" && pwd)
if [ ! -f "$src/src/common/extra_constraints.c" ]; then
    echo "$src is not a Slurm source tree with src/common/extra_constraints.c" >&2
    exit 2
fi
pkg-config --exists json-c || {
    echo "json-c's development files are missing (Debian: apt-get install libjson-c-dev)" >&2
    exit 2
}

mkdir -p "$out/build" "$out/plugins"
cd "$out/build"
if [ ! -f Makefile ]; then
    "$src/configure" --prefix="$out/install" --without-munge > configure.log 2>&1 || {
        tail -20 configure.log >&2
        exit 1
    }
fi
make -j"$jobs" -C src/api full_version.map libslurmfull.la > make-api.log 2>&1 || {
    tail -20 make-api.log >&2
    exit 1
}
make -j"$jobs" -C src/plugins/serializer/json > make-json.log 2>&1 || {
    tail -20 make-json.log >&2
    exit 1
}
cp src/plugins/serializer/json/.libs/serializer_json.so "$out/plugins/"

# The flags Slurm's configure chose for its own objects (e.g. -g -O2 ... -O1).
cflags=$(sed -n 's/^CFLAGS = //p' Makefile)
commit=unknown
if git -C "$src" rev-parse --short=12 HEAD > /dev/null 2>&1; then
    commit=$(git -C "$src" rev-parse --short=12 HEAD)
elif [ -n "${SLURM_COMMIT:-}" ]; then
    commit=$SLURM_COMMIT
fi
# shellcheck disable=SC2086 # cflags is a list of flags
gcc $cflags -DHAVE_CONFIG_H -DSLURM_COMMIT="\"${SLURM_COMMIT:-$commit}\"" \
    -I"$out/build" -I"$out/build/slurm" -I"$src" \
    $(pkg-config --cflags json-c) \
    -o "$out/slurm_extra_conformance" "$here/slurm_extra_conformance.c" \
    -L"$out/build/src/api/.libs" -Wl,-rpath,"$out/build/src/api/.libs" -lslurmfull \
    $(pkg-config --libs json-c)

printf '{"cmd":"hello","protocol":1}\n{"cmd":"stop"}\n' \
    | "$out/slurm_extra_conformance" "$out/plugins"
echo "built $out/slurm_extra_conformance; run with SLURM_EXTRA_BUILD=$out"
