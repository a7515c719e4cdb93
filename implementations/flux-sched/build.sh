#!/bin/sh
# Build Fluxion's resource-query and flux-jobspec-validate from a flux-sched source tree, on
# top of an installed flux-core:
#
#   implementations/flux-sched/build.sh SRC PREFIX BUILD
#
# SRC     a flux-sched source tree (a git checkout, or a `git archive` of a commit; an archive
#         has no git metadata, so its version must be in SRC/flux-sched.ver or in
#         FLUX_SCHED_VERSION, without the leading v of the tag: `git describe | sed 's/^v//'`,
#         e.g. 0.54.0-8-gfd257f71; CMake refuses v0.54.0);
# PREFIX  a full flux-core install (its pkg-config files: flux-core, flux-idset, flux-hostlist,
#         flux-optparse, flux-schedutil, flux-taskmap), e.g. from flux-core's own
#         `configure --prefix=PREFIX && make && make install`;
# BUILD   the CMake build directory, outside the repository.
#
# Only two targets are built: resource-query (Fluxion's matcher behind a command line) and
# flux-jobspec-validate (its jobspec and RFC 31 constraint parser).  `cmake --install` does not
# install resource-query, so both are used where they are built:
#
#   BUILD/resource/utilities/resource-query
#   BUILD/resource/libjobspec/flux-jobspec-validate
#
# Afterwards:
#
#   FLUXION_BUILD=BUILD flux-conformance run --impl fluxion
#
# Debian 12 packages (as root), besides those flux-core's build needs:
#
#   apt-get install --no-install-recommends cmake g++ make pkg-config libboost-graph-dev \
#       libboost-system-dev libboost-filesystem-dev libboost-regex-dev libyaml-cpp-dev \
#       libedit-dev libhwloc-dev libjansson-dev uuid-dev python3-jsonschema
#
# (CMake's configure step imports Python's jsonschema.)  Environment: JOBS (default 2),
# PYTHON (default /usr/bin/python3).  How long it takes, and the disk it needs, are in
# README.md beside this script (measured there, so stated once).
set -eu

if [ $# -ne 3 ]; then
    echo "usage: $0 SRC PREFIX BUILD" >&2
    exit 2
fi
src=$(cd "$1" && pwd)
prefix=$(cd "$2" && pwd)
mkdir -p "$3"
build=$(cd "$3" && pwd)
jobs=${JOBS:-2}
python=${PYTHON:-/usr/bin/python3}

if [ ! -f "$src/resource/utilities/resource-query.cpp" ]; then
    echo "$0: $src is not a flux-sched source tree (no resource/utilities/resource-query.cpp)" >&2
    exit 2
fi
if [ ! -f "$prefix/lib/pkgconfig/flux-core.pc" ] || [ ! -f "$prefix/lib/pkgconfig/flux-schedutil.pc" ]; then
    echo "$0: $prefix holds no full flux-core install (lib/pkgconfig/flux-core.pc, flux-schedutil.pc)" >&2
    exit 2
fi
if [ ! -d "$src/.git" ] && [ ! -f "$src/flux-sched.ver" ] && [ -z "${FLUX_SCHED_VERSION:-}" ]; then
    echo "$0: $src has no git metadata: write its version (no leading v) into" \
        "$src/flux-sched.ver or set FLUX_SCHED_VERSION" >&2
    exit 2
fi
if [ -f "$src/flux-sched.ver" ] && grep -q '^v' "$src/flux-sched.ver"; then
    echo "$0: $src/flux-sched.ver starts with v; CMake wants the bare version (0.54.0-...)" >&2
    exit 2
fi

PATH=$prefix/bin:$PATH
PKG_CONFIG_PATH=$prefix/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
PYTHON=$python
export PATH PKG_CONFIG_PATH PYTHON

cmake -S "$src" -B "$build" -DFLUX_CORE_PREFIX="$prefix" -DCMAKE_INSTALL_PREFIX="$prefix" \
    > "$build/configure.log" 2>&1 || {
    tail -30 "$build/configure.log" >&2
    exit 1
}
cmake --build "$build" --target resource-query flux-jobspec-validate -j"$jobs" \
    > "$build/make.log" 2>&1 || {
    tail -30 "$build/make.log" >&2
    exit 1
}

rq=$build/resource/utilities/resource-query
validate=$build/resource/libjobspec/flux-jobspec-validate
"$rq" --help > /dev/null 2>&1 || true
[ -x "$rq" ] && [ -x "$validate" ] || {
    echo "$0: the build did not produce $rq and $validate" >&2
    exit 1
}
version=${FLUX_SCHED_VERSION:-}
if [ -z "$version" ] && [ -f "$src/flux-sched.ver" ]; then
    version=$(cat "$src/flux-sched.ver")
fi
if [ -z "$version" ]; then
    version=$(git -C "$src" describe --tags 2>/dev/null || echo unknown)
fi
echo "$version" > "$build/flux-sched.ver"
echo "built Fluxion $version:"
echo "  $rq"
echo "  $validate"
echo "use it: FLUXION_BUILD=$build flux-conformance run --impl fluxion"
