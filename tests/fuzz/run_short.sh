#!/usr/bin/env bash
# Short libFuzzer sessions of both targets, run by ctest as `fuzz_short`: the wire decoder
# (fuzz_request) and the server's sessions (fuzz_session), so that both keep building and neither
# finds something in its first seconds.
#
# Configures the `fuzz` preset (clang, OUTBOARD_FUZZ=ON) in <source>/build-fuzz, builds the two
# targets there, and fuzzes each for OUTBOARD_FUZZ_SECONDS (default 30) seconds with a fixed seed,
# starting from a scratch copy of its corpus (tests/fuzz/corpus, tests/fuzz/session_corpus; the
# committed seeds are never modified). Exit status: 0 when nothing was found; otherwise the failing
# input is kept under build-fuzz/fuzz-findings/ and its path printed.
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
echo "== building fuzz_request and fuzz_session"
cmake --build "$build" --target fuzz_request fuzz_session

work=$(mktemp -d "${TMPDIR:-/tmp}/outboard-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT

# fuzz TARGET CORPUS [libFuzzer options]: fuzzes for $seconds from a scratch copy of CORPUS.
fuzz() {
  local target=$1 corpus=$2 rc=0
  shift 2
  cp -R "$here/$corpus" "$work/$corpus"
  mkdir -p "$work/artifacts-$target"
  echo "== fuzzing $target for ${seconds}s"
  (cd "$work" && "$build/bin/$target" -max_total_time="$seconds" -seed=1 -rss_limit_mb=2048 \
    -artifact_prefix="$work/artifacts-$target/" -print_final_stats=1 "$@" "$work/$corpus") || rc=$?
  if [ "$rc" -ne 0 ] || [ -n "$(ls -A "$work/artifacts-$target")" ]; then
    mkdir -p "$build/fuzz-findings"
    cp "$work/artifacts-$target/"* "$build/fuzz-findings/" 2>/dev/null || true
    echo "$target found a problem (exit status $rc); inputs kept in $build/fuzz-findings:" >&2
    ls -l "$build/fuzz-findings" >&2 || true
    echo "reproduce with: $build/bin/$target $build/fuzz-findings/<file>" >&2
    exit 1
  fi
}

fuzz fuzz_request corpus -timeout=10 -max_len=8192
fuzz fuzz_session session_corpus -timeout=60 -max_len=4096
echo "== no findings"
