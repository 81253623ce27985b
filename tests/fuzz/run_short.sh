#!/usr/bin/env bash
# A short libFuzzer session of the wire decoder, run by ctest as `fuzz_request_short`.
#
# Configures the `fuzz` preset (clang, OUTBOARD_FUZZ=ON) in <source>/build-fuzz, builds only the
# fuzz_request target there, and fuzzes for OUTBOARD_FUZZ_SECONDS (default 30) seconds with a fixed
# seed, starting from a scratch copy of tests/fuzz/corpus (the committed seeds are never modified).
# Exit status: 0 when nothing was found; otherwise the failing input is kept under
# build-fuzz/fuzz-findings/ and its path printed.
#
# Environment: OUTBOARD_FUZZ_CC / OUTBOARD_FUZZ_CXX (compilers, default clang / clang++),
# OUTBOARD_FUZZ_SECONDS, OUTBOARD_FUZZ_BUILD_DIR (default <source>/build-fuzz).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=$(cd "$here/../.." && pwd)
build=${OUTBOARD_FUZZ_BUILD_DIR:-$src/build-fuzz}
seconds=${OUTBOARD_FUZZ_SECONDS:-30}
cc=${OUTBOARD_FUZZ_CC:-clang}
cxx=${OUTBOARD_FUZZ_CXX:-clang++}

cd "$src"
echo "== configuring the fuzz preset in $build"
mkdir -p "$build"
cmake --preset fuzz -B "$build" -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" >"$build/configure.log" 2>&1 || {
  cat "$build/configure.log"
  exit 1
}
echo "== building fuzz_request"
cmake --build "$build" --target fuzz_request

work=$(mktemp -d "${TMPDIR:-/tmp}/outboard-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT
cp -R "$here/corpus" "$work/corpus"
mkdir "$work/artifacts"

echo "== fuzzing for ${seconds}s"
rc=0
(cd "$work" && "$build/bin/fuzz_request" \
  -max_total_time="$seconds" -seed=1 -timeout=10 -rss_limit_mb=2048 -max_len=8192 \
  -artifact_prefix="$work/artifacts/" -print_final_stats=1 "$work/corpus") || rc=$?

if [ "$rc" -ne 0 ] || [ -n "$(ls -A "$work/artifacts")" ]; then
  mkdir -p "$build/fuzz-findings"
  cp "$work/artifacts/"* "$build/fuzz-findings/" 2>/dev/null || true
  echo "fuzz_request found a problem (exit status $rc); inputs kept in $build/fuzz-findings:" >&2
  ls -l "$build/fuzz-findings" >&2 || true
  echo "reproduce with: $build/bin/fuzz_request $build/fuzz-findings/<file>" >&2
  exit 1
fi
echo "== no findings"
