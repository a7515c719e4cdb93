#!/bin/sh
# Build the parts of flux-core that `--impl flux-core` uses, from a source tree or a release
# tarball, and install them under a prefix:
#
#   implementations/flux-core/build.sh SOURCE PREFIX
#
# SOURCE is a flux-core source directory (a git checkout, or a `git archive` of a tag) or a
# release tarball (flux-core-X.Y.Z.tar.gz).  Only src/common (libflux-core, libflux-idset,
# libflux-hostlist and their internal libraries) and src/bindings/python (the cffi modules
# and the `flux` package) are built and installed; the broker, modules, shell and commands
# are not needed by the adapter and are skipped.
#
# Debian 12 packages it needs (install them first, as root):
#
#   apt-get install --no-install-recommends autoconf automake libtool make gcc pkg-config \
#       libzmq3-dev libjansson-dev liblz4-dev libhwloc-dev libsqlite3-dev uuid-dev \
#       libncurses-dev libarchive-dev libsodium-dev lua5.3 liblua5.3-dev lua-posix \
#       python3-dev python3-cffi python3-ply python3-yaml bash-completion
#
# (configure checks for all of these, even those whose users are not built here.)
#
# Environment:
#   PYTHON        the Python the bindings are built for (default: /usr/bin/python3; it needs
#                 cffi at build time).  The cffi modules are abi3, so any CPython of the same
#                 or a newer minor version loads them, given `cffi`, `ply` and `pyyaml`.
#   FLUX_VERSION  the version to stamp when SOURCE has no generated `configure` (a git archive
#                 has neither `configure` nor the git history `git describe` needs); by default
#                 it is read from the first line of NEWS.md.
#   JOBS          parallel make jobs (default 2).
#
# Afterwards, point the adapter at the build:
#
#   FLUX_CORE_PREFIX=PREFIX flux-conformance run --impl flux-core
set -eu

usage() {
    echo "usage: $0 SOURCE-DIR-OR-TARBALL PREFIX" >&2
    exit 2
}
[ $# -eq 2 ] || usage
source=$1
prefix=$2
jobs=${JOBS:-2}
python=${PYTHON:-/usr/bin/python3}

case $prefix in
/*) ;;
*) prefix=$(pwd)/$prefix ;;
esac

if [ -f "$source" ]; then
    # A release tarball: unpack it beside the prefix and build there.
    work=$prefix.src
    rm -rf "$work"
    mkdir -p "$work"
    tar -xf "$source" -C "$work" --strip-components=1
    source=$work
elif [ ! -d "$source" ]; then
    echo "$0: $source is neither a directory nor a tarball" >&2
    exit 2
fi
cd "$source"

if [ ! -x configure ]; then
    if [ -z "${FLUX_VERSION:-}" ]; then
        # "flux-core version 0.88.0 - 2026-08-04"
        FLUX_VERSION=$(sed -n '1s/^flux-core version \([0-9][0-9.]*\).*/\1/p' NEWS.md)
    fi
    if [ -z "$FLUX_VERSION" ]; then
        echo "$0: no configure and no version: set FLUX_VERSION=X.Y.Z" >&2
        exit 2
    fi
    export FLUX_VERSION
    ./autogen.sh
fi

# The python bindings are installed as $prefix/lib/pythonX.Y/site-packages.
./configure --prefix="$prefix" --disable-docs PYTHON="$python"

make -j"$jobs" -C src/common
make -j"$jobs" -C src/bindings/python
make -C src/common install
make -C src/bindings/python install

site=$("$python" -c 'import sys; print("lib/python%d.%d/site-packages" % sys.version_info[:2])')
echo "flux-core $(sed -n 's/^PACKAGE_VERSION = //p' Makefile) installed in $prefix"
echo "bindings: $prefix/$site"
echo "use it:   FLUX_CORE_PREFIX=$prefix flux-conformance run --impl flux-core"
