#!/usr/bin/env bash
# Issue 32, item 3: one large call over all of a host's GPUs. blas_demo N P touched (three GEMMs of
# order N, then a triangular solve, and a checksum of the result) through `outboard run`, against:
#   one        a server of 1 GPU
#   workers    a process per GPU (worker_per_gpu), each GEMM on one worker (OUTBOARD_SPLIT_SERVERS=1)
#   split-G    a process per GPU, G of them, each GEMM spread over the G workers (level3_split.cpp)
#   process-G  one server process owning G GPUs (worker_per_gpu = false): its own spread of a
#              call's blocks over its GPUs (spread_pipeline.cpp)
# With split-GPUS, first a check that a spread GEMM is right on the GPUs: level3_check --shapes 1024
# (four blocks of 256 columns) with every GEMM spread (OUTBOARD_SPLIT_FLOPS=1e8,
# OUTBOARD_FALLBACK=fail; level3_check's own reference takes most of its minute); CHECK=0 skips it.
# Writes OUT/large_call.csv (config,gpus,precision,n,first_s,best_s,gflops_best,trsm_s,checksum,uses)
# and prints a table with each figure against `one`. The servers allow calls of up to 64 GiB (a
# DGEMM of 32768 carries 17 GB of operands; the default max_request_bytes is 8 GiB).
#   bench/gpu/large_call.sh OUT_DIR [CARRY_DIR]    SIZES="16384 32768" PRECISIONS="d s" CONFIGS="one workers split-2 split-4 process-4"
set -uo pipefail
source "$(dirname "$0")/steps.sh"
carried_setup large_call.sh "$@"
source "$(dirname "$0")/../../scripts/local_server.sh"
B=$CARRY/bin
GPUS=$(nvidia-smi -L | grep -c '^GPU')
SIZES=${SIZES:-16384 32768}
PRECISIONS=${PRECISIONS:-d s}
CONFIGS=${CONFIGS:-one workers split-2 split-$GPUS process-$GPUS}
CSV=$OUT/large_call.csv
# serve GPUS WORKERS: a server of the first GPUS GPUs, a process per GPU or one; waits for every worker.
serve() {
  {
    printf 'gpus = %d\nworker_per_gpu = %s\n' "$1" "$2"
    printf 'max_request_bytes = %d\nmax_client_bytes = %d\n' $((64 << 30)) $((128 << 30))
  } >"$R/serve.toml"
  start_local_server "$B/outboard" "$R" --compute-threads 16 --config "$R/serve.toml" || return 1
  for _ in $(seq 300); do
    [ "$(uses | wc -w)" -ge "$1" ] && return 0
    sleep 0.2
  done
  return 1
}
stop() { kill "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null; }

echo "config,gpus,precision,n,first_s,best_s,gflops_best,trsm_s,checksum,uses" >"$CSV"
for config in $CONFIGS; do
  case $config in
    one) g=1 workers=false split=1 ;;
    workers) g=$GPUS workers=true split=1 ;;
    split-*) g=${config#split-} workers=true split=$g ;;
    process-*) g=${config#process-} workers=false split=1 ;;
  esac
  [ "$g" -le "$GPUS" ] || continue
  serve "$g" "$workers" || { log "FAILED: server for $config"; stop; continue; }
  if [ "$config" = "split-$GPUS" ] && [ "${CHECK:-1}" = 1 ]; then
    step "level3_check --shapes 1024, every GEMM spread over $g workers" env OUTBOARD_SPLIT_FLOPS=1e8 timeout 300 \
      "$B/outboard" run --offload always --fallback fail -- "$CARRY/testers/level3_check" --shapes 1024
  fi
  for n in $SIZES; do
    for p in $PRECISIONS; do
      before=$(gpu_uses)
      log "$config: blas_demo $n $p ($g GPU(s), split over $split)"
      OUTBOARD_SPLIT_SERVERS=$split "$B/outboard" run --offload always --fallback fail -- \
        "$B/blas_demo" "$n" "$p" touched >"$R/$config-$n-$p.txt" 2>&1
      after=$(gpu_uses)
      cat "$R/$config-$n-$p.txt" >>"$R/run.log"
      python3 - "$R/$config-$n-$p.txt" "$config" "$g" "$p" "$n" "$before" "$after" >>"$CSV" <<'PY'
import re, sys
f, config, g, p, n, before, after = sys.argv[1:]
text = open(f).read()
gemm = [float(x) for x in re.findall(r"gemm n=\d+: ([0-9.]+) s", text)]
trsm = re.findall(r"trsm n=\d+: ([0-9.]+) s", text)
check = re.findall(r"checksum (\S+)", text)
uses = "/".join(str(int(a) - int(b)) for a, b in zip(after.split(), before.split()))
if len(gemm) < 3 or not check:
    print(f"{config},{g},{p},{n},,,,,FAILED,{uses}")
else:
    best = min(gemm[1:])
    print(f"{config},{g},{p},{n},{gemm[0]:.3f},{best:.3f},{2.0 * int(n) ** 3 / best / 1e9:.0f},"
          f"{trsm[0] if trsm else ''},{check[0]},{uses}")
PY
      tail -1 "$CSV" | tee -a "$R/run.log"
    done
  done
  stop
  cp "$R/server.log" "$OUT/server-$config.log" 2>/dev/null
done
python3 - "$CSV" <<'PY' | tee "$OUT/large_call.txt"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
base = {(r["precision"], r["n"]): r for r in rows if r["config"] == "one"}
print(f"{'config':>10} {'gpus':>4} {'p':>1} {'n':>6} {'best s':>7} {'GFLOP/s':>8} {'vs one':>6} {'sum diff':>8}  uses")
for r in rows:
    b = base.get((r["precision"], r["n"]))
    ratio = f"{float(b['best_s']) / float(r['best_s']):.2f}" if b and b["best_s"] and r["best_s"] else "-"
    # The checksum against one GPU's, relative (blocks of other widths may round differently).
    same = "-"
    if b and r["checksum"] not in ("", "FAILED") and b["checksum"] not in ("", "FAILED"):
        same = f"{abs(float(r['checksum']) - float(b['checksum'])) / abs(float(b['checksum'])):.0e}"
    print(f"{r['config']:>10} {r['gpus']:>4} {r['precision']:>1} {r['n']:>6} {r['best_s'] or '-':>7} "
          f"{r['gflops_best'] or '-':>8} {ratio:>6} {same:>8}  {r['uses']}")
PY
cp "$R/run.log" "$OUT/large_call-run.log"
exit 0
