#!/usr/bin/env bash
# First calls against a warm server (issue 14): fresh processes of blas_demo (three DGEMMs and a
# DTRSM of order N), each traced (OUTBOARD_TRACE): per process the first and later DGEMMs' times
# and the first call's phases. VARIANTS, each run ROUNDS times in turn: EARLY:OPTION, with EARLY
# the OUTBOARD_CONNECT_EARLY value and OPTION "touched" (the program writes C before its first
# GEMM, so that call does not take C's first page faults) or nothing.
#   bench/gpu/first_calls.sh OUT_DIR [CARRY_DIR]      N=16384 ROUNDS=2 VARIANTS="1: 1:touched 0: 0:touched"
set -uo pipefail
OUT=${1:?usage: first_calls.sh OUT_DIR [CARRY_DIR]}
CARRY=$(cd "${2:-.gpu-carry}" && pwd)
export LD_LIBRARY_PATH=$CARRY/openblas-as-lapack:$CARRY/deps
B=$CARRY/bin/outboard
R=$(mktemp -d)
source "$(dirname "$0")/steps.sh"
results_on_exit first-calls.tgz
source "$(dirname "$0")/../../scripts/local_server.sh"
start_local_server "$B" "$R" --compute-threads 4 || { log "FAILED: server"; exit 1; }
sleep 3
i=0
for round in $(seq "${ROUNDS:-2}"); do for variant in ${VARIANTS:-1: 1:touched 0: 0:touched}; do
  i=$((i + 1)) early=${variant%%:*} option=${variant#*:}
  step "process $i, OUTBOARD_CONNECT_EARLY=$early $option" env OUTBOARD_CONNECT_EARLY=$early \
    OUTBOARD_TRACE="$R/trace-$i.json" "$B" run --offload always -- "$CARRY/bin/blas_demo" "${N:-16384}" d $option
  python3 - "$R/trace-$i.json" <<'PY' | tee -a "$R/run.log"
import json, sys
calls = json.load(open(sys.argv[1]))["calls"]
for c in calls[:2]:
    print("  %-24s total %.3f s: pack %.3f, to server %.3f, to GPU %.3f, compute %.3f, from GPU %.3f, back %.3f, unpack %.3f" %
          (c["name"], c["total"], c["pack"], c["to_server"], c["to_gpu"], c["compute"], c["from_gpu"], c["from_server"], c["unpack"]))
PY
done; done
log "done"
