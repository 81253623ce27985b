#!/usr/bin/env bash
# Issue 32 on a machine of several GPUs, from the files bench/gpu/pack.sh carried. Steps (STEPS, in
# this order; each bounded, a failing one logged and the rest go on):
#   probe    bench/probes/gpu_reset_probe (carried in CARRY/bin): what a fault does to a process's
#            GPUs and whether cudaDeviceReset brings one back
#   before   the mixed-clients test against the server built before the fix (CARRY/before, made
#            by hand from the older commit): it must fail there
#   mixed    tests/gpu/servers/mixed_clients.sh: eight mixed clients, one server owning every GPU
#   fault    tests/gpu/servers/gpu_fault.sh on every GPU, then on GPU 0 alone
#   workers  tests/gpu/servers/gpu_fault_workers.sh: a process per GPU, the last one's GPU faults
#   tests    the GPU unit tests (gpu_tests)
#   scaling  bench/gpu/scaling.sh: throughput over 1, 2 (4) GPUs
#   bench/gpu/servers.sh OUT_DIR [CARRY_DIR]     STEPS="probe before mixed fault workers tests scaling"
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/steps.sh"
carried_setup servers.sh "$@"
results_on_exit servers-results.tgz
STEPS=${STEPS:-probe before mixed fault workers tests scaling}
want() { [[ " $STEPS " == *" $1 "* ]]; }
T=$HERE/../../tests/gpu/servers
step "GPUs and their links" nvidia-smi topo -m
if want probe && [ -x "$CARRY/bin/gpu_reset_probe" ]; then
  for args in "1 0 trap reg" "1 0 illegal noreg" "0 1 trap noreg"; do
    # shellcheck disable=SC2086
    step "gpu_reset_probe $args" timeout 60 "$CARRY/bin/gpu_reset_probe" $args
  done
  step "gpu_reset_probe 0 -1 trap reg (GPU 0 alone)" env CUDA_VISIBLE_DEVICES=0 timeout 60 "$CARRY/bin/gpu_reset_probe" 0 -1 trap reg
fi
if want before && [ -x "$CARRY/before/bin/outboard" ]; then
  step "mixed clients, the server before the fix (expected to fail)" env SERVER_OUTBOARD="$CARRY/before/bin/outboard" \
    KEEP="$R" timeout 400 "$T/mixed_clients.sh" "$CARRY/bin" "$CARRY/testers" 1
  mv "$R/server.log" "$R/server-before.log" 2>/dev/null
fi
want mixed && step "mixed clients, every GPU" env KEEP="$R" timeout 500 "$T/mixed_clients.sh" "$CARRY/bin" "$CARRY/testers" "${MIXED_ROUNDS:-2}"
want fault && step "GPU fault, every GPU" env KEEP="$R" timeout 500 "$T/gpu_fault.sh" "$CARRY/bin" "$CARRY/testers"
want fault && step "GPU fault, GPU 0 alone" env CUDA_VISIBLE_DEVICES=0 timeout 500 "$T/gpu_fault.sh" "$CARRY/bin" "$CARRY/testers"
want workers && step "GPU fault, a process per GPU" env KEEP="$R" timeout 500 "$T/gpu_fault_workers.sh" "$CARRY/bin" "$CARRY/testers"
want tests && step "gpu_tests" timeout 300 "$CARRY/bin/gpu_tests"
want scaling && step "scaling" timeout 590 "$HERE/scaling.sh" "$OUT" "$CARRY"
exit 0
