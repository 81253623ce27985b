#!/usr/bin/env bash
# Sets up and builds Outboard (as scripts/demo.sh does), then runs the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-debian.sh
ctest --preset default -j "${OUTBOARD_TEST_JOBS:-2}" "$@"
