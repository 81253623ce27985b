#!/usr/bin/env bash
# Builds Outboard with a sanitizer, runs its tests under it and prints a summary: the check run
# before each landing (docs/architecture.md: Sanitizers and fuzzing). Too slow for CI's 30 minutes
# on two cores.
#
#   scripts/sanitize.sh asan [ctest arguments]   AddressSanitizer + UBSan, in build-asan/: every
#                                                 test but the GPU ones
#   scripts/sanitize.sh tsan [ctest arguments]   ThreadSanitizer, in build-tsan/: the unit tests and
#                                                 the client's and server's thread tests (labels
#                                                 unit and threads)
#
# Programs not built here (Python, clinfo, Fortran and Debian's test programs) load the
# instrumented libraries too, and a sanitizer's runtime must be the first library of a process
# (ASan stops otherwise): the asan test preset preloads the runtime named by
# OUTBOARD_SANITIZER_RUNTIME, set here, into every test process. The tsan one does not (bash
# crashes with TSan preloaded); its tests' programs are all built here, instrumented. Reports go to
# build-<mode>/sanitizer-reports/, also those of servers running in the background of a test.
# Under TSan, UCX's memory hooks are off in every test process (as Outboard's own UCX instances
# have them anyway): libucm's madvise, which glibc calls as a thread ends, takes a lock that TSan
# intercepts after it has let go of the thread, and the process crashes. The GoogleTest lists are
# read when the tests run (PRE_TEST), under the same environment.
#
# Environment: OUTBOARD_BUILD_JOBS (default 2), OUTBOARD_TEST_JOBS (default 1: sanitized runs are
# several times slower and some tests are timing-sensitive), OUTBOARD_SANITIZE_TARGETS (build
# only these targets, e.g. "unit_tests" for `-L unit`; default: everything).
set -euo pipefail
mode=${1:-}
case "$mode" in
  asan | tsan) shift ;;
  *) echo "usage: $0 asan|tsan [ctest arguments]" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/.."
build=build-$mode

runtime=$(readlink -f "$(g++ -print-file-name="lib$mode.so")")
[ -f "$runtime" ] || { echo "no lib$mode.so for g++: install gcc's sanitizer runtimes (libasan8, libtsan2)" >&2; exit 1; }
export OUTBOARD_SANITIZER_RUNTIME=$runtime

echo "== configuring and building the $mode preset in $build"
cmake --preset "$mode" >/dev/null
targets=()
for t in ${OUTBOARD_SANITIZE_TARGETS:-}; do targets+=(--target "$t"); done
nice -n 10 cmake --build --preset "$mode" -j "${OUTBOARD_BUILD_JOBS:-2}" "${targets[@]}"

reports=$build/sanitizer-reports
rm -rf "$reports" && mkdir -p "$reports"
echo "== testing under $mode (preloading $runtime)"
rc=0
ctest --preset "$mode" -j "${OUTBOARD_TEST_JOBS:-1}" "$@" 2>&1 | tee "$build/sanitize.log" || rc=$?

echo
echo "== summary ($mode)"
grep -E "tests passed|tests failed" "$build/sanitize.log" | tail -n 1 || true
if grep -q "The following tests did not run" "$build/sanitize.log"; then
  sed -n '/The following tests did not run/,/^$/p' "$build/sanitize.log"
fi
if grep -q "The following tests FAILED" "$build/sanitize.log"; then
  sed -n '/The following tests FAILED/,/^$/p' "$build/sanitize.log"
fi
shopt -s nullglob
found=("$reports"/*)
if [ ${#found[@]} -gt 0 ]; then
  rc=1
  echo "${#found[@]} sanitizer report(s) in $reports:"
  for f in "${found[@]}"; do
    echo "--- $f"
    grep -m 3 -E "ERROR|WARNING|SUMMARY|runtime error" "$f" || head -n 5 "$f"
  done
else
  echo "no sanitizer reports"
fi
exit "$rc"
