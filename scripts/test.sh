#!/usr/bin/env bash
# Sets up and builds Outboard (as scripts/demo.sh does), then runs the whole test suite.
#
# The integration tests run real servers, clients and network namespaces on what is often a shared
# two-core machine, so a test that fails is run once more (ctest --repeat until-pass:2). A test that
# fails twice fails the suite. Either way the end of the output names the tests that needed the
# second run and repeats the last lines each failed run printed, so that the reason is where a CI
# log's tail shows it rather than hundreds of lines above (ctest's summary does not say a test was
# retried).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-debian.sh
status=0
ctest --preset default -j "${OUTBOARD_TEST_JOBS:-2}" --repeat until-pass:2 "$@" || status=$?
log=build/Testing/Temporary/LastTest.log
[ -f "$log" ] && { scripts/test_report.py "$log" || true; }
exit "$status"
