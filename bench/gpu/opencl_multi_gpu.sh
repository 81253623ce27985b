#!/usr/bin/env bash
# Issue 32, item 5 (seed 003's scaling experiment): one unmodified OpenCL program, cl_multi
# (examples/cl_multi.c: a hash search split over every GPU it sees, result checked), on the
# NVIDIA platform directly, then through Outboard's ICD (a) to one server owning both GPUs and
# (b) to two servers with one GPU each (CUDA_VISIBLE_DEVICES) in OUTBOARD_SERVERS; each with one
# device and with all. Prints the table; OUT/opencl_multi_gpu.txt.
#   bench/gpu/opencl_multi_gpu.sh OUT_DIR [CARRY_DIR]    ITEMS=268435456 ROUNDS=1024
set -uo pipefail
source "$(dirname "$0")/steps.sh"
carried_setup opencl_multi_gpu.sh "$@"
source "$(dirname "$0")/../../scripts/local_server.sh"
results_on_exit opencl-multi-gpu.tgz
B=$CARRY/bin
mkdir -p "$R/vendors"
echo "$CARRY/lib/liboutboard-opencl.so.0" >"$R/vendors/outboard.icd"
NATIVE=$R/native && mkdir -p "$NATIVE"
NV=$(ldconfig -p | awk '/libnvidia-opencl.so.1/ {print $NF; exit}')
[ -n "$NV" ] || NV=$(find / -xdev -name 'libnvidia-opencl.so.1' 2>/dev/null | head -1)
echo "$NV" >"$NATIVE/nvidia.icd"
JOB=(--items "${ITEMS:-268435456}" --rounds "${ROUNDS:-1024}")
printf 'pinned_reserve_bytes = 0\nworker_per_gpu = false\n' >"$R/serve.toml"
run() {  # LABEL VENDORS ARGS...: one cl_multi run, its line kept
  local label=$1 vendors=$2; shift 2
  local line
  line=$(OCL_ICD_VENDORS=$vendors timeout 120 "$B/cl_multi" "$@" "${JOB[@]}" 2>&1 | tail -1)
  printf '%s\t%s\n' "$label" "$line" | tee -a "$OUT/opencl_multi_gpu.txt"
}
step "devices natively" env OCL_ICD_VENDORS="$NATIVE" "$B/cl_multi" --list
run "native, 1 GPU" "$NATIVE" --devices 1
run "native, 2 GPUs" "$NATIVE"
OCL_ICD_VENDORS=$NATIVE start_local_server "$B/outboard" "$R" --config "$R/serve.toml" || { log "FAILED: server"; exit 1; }
step "devices through one server" env OCL_ICD_VENDORS="$R/vendors" "$B/cl_multi" --list
run "one server with 2 GPUs, 1 GPU" "$R/vendors" --devices 1
run "one server with 2 GPUs, 2 GPUs" "$R/vendors"
kill "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null
ports=()
for g in 0 1; do
  mkdir -p "$R/s$g"
  cp "$R/token" "$R/s$g/token"
  CUDA_VISIBLE_DEVICES=$g OCL_ICD_VENDORS=$NATIVE start_local_server "$B/outboard" "$R/s$g" --config "$R/serve.toml" ||
    { log "FAILED: server on GPU $g"; exit 1; }
  ports+=("$PORT")
  eval "PID$g=$SERVER_PID"
done
export OUTBOARD_SERVERS="127.0.0.1:${ports[0]},127.0.0.1:${ports[1]}" OUTBOARD_TOKEN_FILE="$R/token"
step "devices through two servers" env OCL_ICD_VENDORS="$R/vendors" "$B/cl_multi" --list
run "two servers with 1 GPU each, 1 GPU" "$R/vendors" --devices 1
run "two servers with 1 GPU each, 2 GPUs" "$R/vendors"
kill "$PID0" "$PID1"
SERVER_PID=""
python3 - "$OUT/opencl_multi_gpu.txt" <<'PY'
import re, sys
rows = [l.rstrip("\n") for l in open(sys.argv[1])]
t = {l.split("\t")[0]: float(re.search(r"seconds=([0-9.]+)", l).group(1)) for l in rows if "seconds=" in l}
answers = {re.search(r"best=\S+ index=\d+", l).group(0) for l in rows if "best=" in l}
for a, b in [("native, 1 GPU", "native, 2 GPUs"), ("one server with 2 GPUs, 1 GPU", "one server with 2 GPUs, 2 GPUs"),
             ("two servers with 1 GPU each, 1 GPU", "two servers with 1 GPU each, 2 GPUs")]:
    if a in t and b in t:
        print(f"{b}: {t[a] / t[b]:.2f}x over {a} ({t[a]:.3f} s -> {t[b]:.3f} s)")
print("answers:", "all the same" if len(answers) == 1 else f"DIFFER: {answers}")
PY
