#!/usr/bin/env bash
# Issue 32, item 3: throughput of one server over its GPUs. For 1 GPU, then 2 (then 4 where the
# machine has them), one server process owning that many GPUs; against it 1, 2, 4 and 8 scale_client
# processes at once, each making the same large call again and again for SECONDS (DGEMM 8192,
# DGESV 8192, batches of 64 double complex FFTs of 2^18 points), every result checked. The
# aggregate is the sum of the clients' rates (they run side by side over the same seconds).
# Writes OUT/scaling.csv (gpus,kind,n,clients,gflops_sum,calls,per_gpu_uses) and prints a table.
# WORKERS=1: the servers of 2 and more GPUs run a process per GPU (worker_per_gpu), the clients
# naming the first; the CSV is then OUT/scaling-workers.csv.
#   bench/gpu/scaling.sh OUT_DIR [CARRY_DIR]    KINDS="gemm gesv fft" CLIENTS="1 2 4 8" SECONDS_EACH=6 GPU_COUNTS="1 2 4"
set -uo pipefail
source "$(dirname "$0")/steps.sh"
carried_setup scaling.sh "$@"
source "$(dirname "$0")/../../scripts/local_server.sh"
B=$CARRY/bin
GPUS=$(nvidia-smi -L | grep -c '^GPU')
KINDS=${KINDS:-gemm gesv fft}
CLIENTS=${CLIENTS:-1 2 4 8}
SECONDS_EACH=${SECONDS_EACH:-6}
size_of() { case $1 in gemm|gesv) echo 8192 ;; fft) echo 262144 ;; esac; }
CSV=$OUT/scaling$([ "${WORKERS:-0}" = 1 ] && echo -workers).csv
echo "gpus,kind,n,clients,gflops_sum,calls,per_gpu_uses" >"$CSV"
for g in ${GPU_COUNTS:-1 2 4}; do
  [ "$g" -le "$GPUS" ] || continue
  printf 'gpus = %d\n' "$g" >"$R/serve-$g.toml"
  echo "worker_per_gpu = $([ "${WORKERS:-0}" = 1 ] && echo true || echo false)" >>"$R/serve-$g.toml"
  start_local_server "$B/outboard" "$R" --compute-threads 16 --config "$R/serve-$g.toml" || { log "FAILED: server ($g GPUs)"; continue; }
  wait_for_gpus "$g"  # every worker listening
  for kind in $KINDS; do
    n=$(size_of "$kind")
    for c in $CLIENTS; do
      before=$(gpu_uses)
      pids=()
      for k in $(seq "$c"); do
        "$B/outboard" run --offload always -- "$B/scale_client" "$kind" "$n" "$SECONDS_EACH" >"$R/s-$g-$kind-$c-$k.txt" 2>&1 &
        pids+=($!)
      done
      wait "${pids[@]}"
      after=$(gpu_uses)
      python3 - "$R" "$g" "$kind" "$n" "$c" "$before" "$after" >>"$CSV" <<'PY'
import glob, sys
r, g, kind, n, c, before, after = sys.argv[1:]
total, calls, bad = 0.0, 0, []
for f in sorted(glob.glob(f"{r}/s-{g}-{kind}-{c}-*.txt")):
    line = [l for l in open(f) if l.startswith("scale_client")]
    if not line or "check=ok" not in line[0]:
        bad.append(f)
        continue
    w = line[0].split()
    calls += int(w[4]); total += float(w[8])
uses = "/".join(str(int(a) - int(b)) for a, b in zip(after.split(), before.split()))
print(f"{g},{kind},{n},{c},{total:.1f},{calls},{uses}" + (f",FAILED {len(bad)}" if bad else ""))
PY
      tail -1 "$CSV"
    done
  done
  "$B/outboard" status --json >"$R/status-$g.json"
  kill "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null
  cp "$R/server.log" "$OUT/server-scaling-$g.log" 2>/dev/null
done
python3 - "$CSV" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
base = {(r["kind"], r["clients"]): float(r["gflops_sum"]) for r in rows if r["gpus"] == "1"}
print(f"{'gpus':>4} {'kind':>5} {'clients':>7} {'GFLOP/s':>9} {'vs 1 GPU':>8} {'calls':>6}  uses per GPU")
for r in rows:
    b = base.get((r["kind"], r["clients"]))
    ratio = f"{float(r['gflops_sum']) / b:.2f}x" if b else "-"
    print(f"{r['gpus']:>4} {r['kind']:>5} {r['clients']:>7} {float(r['gflops_sum']):9.1f} {ratio:>8} {r['calls']:>6}  {r['per_gpu_uses']}")
PY
