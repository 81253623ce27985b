# Shared by the GPU-machine scripts (run_h200.sh, fft_h200.sh, blas_h200.sh); source it after setting R, the
# results folder. log TEXT: a heading in run.log. step NAME COMMAND...: runs a step, its output to
# run.log and its progress (stderr) to progress.log; a failing step is logged and the rest go on.
log() { echo "== $*" | tee -a "$R/run.log"; }
step() {
  local name=$1; shift
  log "$name"
  "$@" 2>>"$R/progress.log" | tee -a "$R/run.log"
  local status=${PIPESTATUS[0]}
  [ "$status" = 0 ] || { log "FAILED: $name (exit $status)"; tail -5 "$R/progress.log" | tee -a "$R/run.log"; }
}
# results_on_exit TARBALL [PID...]: at exit, stops the servers (SERVER_PID and PID...), packs R
# (server.log kept as server-log.txt; no secrets) into OUT/TARBALL and copies run.log to OUT; and
# records the machine now.
results_on_exit() {
  RESULTS_TARBALL=$1; shift
  RESULTS_PIDS="$*"
  trap '_results_finish' EXIT
  { nvidia-smi; nproc; free -g; lscpu; } >"$R/machine.txt" 2>&1 || true
}
_results_finish() {
  kill "${SERVER_PID:-}" ${RESULTS_PIDS:-} 2>/dev/null || true
  cp "$R/server.log" "$R/server-log.txt" 2>/dev/null || true
  tar -C "$R" -czf "$OUT/$RESULTS_TARBALL" --exclude=token --exclude=port .
  cp "$R/run.log" "$OUT/run.log"
}
# What pack.sh compressed, restored once.
if [ -n "${CARRY:-}" ] && [ -x "$CARRY/unpack.sh" ]; then "$CARRY/unpack.sh"; fi
# carried_setup SCRIPT OUT_DIR [CARRY_DIR]: for the scripts that source this file before anything
# else: OUT and CARRY as absolute paths (OUT made), NVLink multicast off, the carried libraries
# and OpenBLAS's kernels for this CPU in the environment, R a fresh folder, the carry unpacked.
carried_setup() {
  local script=$1
  OUT=${2:?usage: $script OUT_DIR [CARRY_DIR]}
  mkdir -p "$OUT"
  OUT=$(cd "$OUT" && pwd)
  CARRY=$(cd "${3:-.gpu-carry}" && pwd)
  export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
  export LD_LIBRARY_PATH=$CARRY/lib:$CARRY/openblas-as-lapack:$CARRY/deps
  local core=Haswell
  grep -q avx512f /proc/cpuinfo && core=SkylakeX
  export OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-$core}
  R=$(mktemp -d)
  [ -x "$CARRY/unpack.sh" ] && "$CARRY/unpack.sh"
  return 0
}
# build_nvshmem_probe NAME: builds bench/dcuda/NAME.cu into $R/NAME against the NVSHMEM of the
# machine's Python environment (its headers and libraries; NV is set to its folder). Fails where
# there is none.
build_nvshmem_probe() {
  NV=$(dirname "$(dirname "$(find / -path '*nvshmem/include/nvshmem.h' 2>/dev/null | head -1)")")
  [ -d "$NV/lib" ] || { log "no NVSHMEM headers found"; return 1; }
  ln -sf "$(ls "$NV"/lib/libnvshmem_host.so.* | head -1)" "$R/libnvshmem_host.so"
  step "build $1 against $NV" nvcc -O2 -rdc=true -arch=sm_90 -I"$NV/include" \
    "$(dirname "${BASH_SOURCE[0]}")/../dcuda/$1.cu" -L"$R" -L"$NV/lib" -lnvshmem_device -lnvshmem_host -lcuda -o "$R/$1"
  [ -x "$R/$1" ]
}
# gpu_uses: every worker's GPU uses, in worker order (one server process: its GPUs'), from the
# status of the server OUTBOARD_SERVERS names and its siblings; CARRY/bin/outboard asks.
gpu_uses() {
  "$CARRY/bin/outboard" status --json | python3 -c "
import json, subprocess, sys
d = json.load(sys.stdin)
docs = [d] + [json.loads(subprocess.run(['$CARRY/bin/outboard', 'status', '--json', '--server', f'127.0.0.1:{p}'],
                                        capture_output=True, text=True).stdout)
              for p in d.get('worker', {}).get('sibling_ports', [])]
docs.sort(key=lambda x: x.get('worker', {}).get('index', 0))
print(' '.join(str(b['health']['uses']) for x in docs for b in x['backends'] if b.get('name') == 'cuda'))"
}
# wait_for_gpus N: until the server and its workers show N GPUs (at most a minute); status 1 if not.
wait_for_gpus() {
  for _ in $(seq 300); do
    [ "$(gpu_uses | wc -w)" -ge "$1" ] && return 0
    sleep 0.2
  done
  return 1
}
# opencl_icds: NATIVE, a vendors folder with NVIDIA's ICD where its library is installed but not
# registered (as on the GPU machines' image); $R/outboard-icd, one with Outboard's (from CARRY).
opencl_icds() {
  NATIVE=/etc/OpenCL/vendors
  if ! grep -qs nvidia /etc/OpenCL/vendors/*.icd; then
    NATIVE=$R/native-icd && mkdir -p "$NATIVE" && cp /etc/OpenCL/vendors/*.icd "$NATIVE/" 2>/dev/null
    ldconfig -p | awk '/libnvidia-opencl.so.1/ {print $NF; exit}' >"$NATIVE/nvidia.icd"
  fi
  mkdir -p "$R/outboard-icd" && echo "$CARRY/lib/liboutboard-opencl.so.0" >"$R/outboard-icd/outboard.icd"
}
