#!/usr/bin/env bash
# Builds the Debian packages from a build directory (configured with `cmake --preset default` or
# any other): outboard_<version>_amd64.deb and, where the CUDA plugin or dcuda was built,
# outboard-cuda_<version>_amd64.deb. Needs dpkg-dev (dpkg-shlibdeps fills in Depends).
# Usage: scripts/package.sh [--no-build] [BUILD_DIR (the checkout's build)] [OUTPUT_DIR (BUILD_DIR/packages)]
# It builds first (OUTBOARD_BUILD_JOBS: parallel jobs, default ninja's choice) unless --no-build.
set -euo pipefail
build_first=1
if [ "${1:-}" = --no-build ]; then build_first=0; shift; fi
build=$(realpath "${1:-$(dirname "$0")/../build}")
out=$(realpath -m "${2:-$build/packages}")
[ -f "$build/CPackConfig.cmake" ] || { echo "package.sh: $build is not a configured build directory" >&2; exit 1; }
[ $build_first = 0 ] || cmake --build "$build" ${OUTBOARD_BUILD_JOBS:+-j "$OUTBOARD_BUILD_JOBS"}
mkdir -p "$out"
rm -f "$out"/*.deb
cpack --config "$build/CPackConfig.cmake" -G DEB -B "$out" >"$out/cpack.log" 2>&1 || { cat "$out/cpack.log" >&2; exit 1; }
rm -rf "$out/_CPack_Packages"  # the staging trees
ls "$out"/*.deb
