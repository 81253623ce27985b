#!/usr/bin/env bash
# Buffer transfers through Outboard's ICD, side by side in one run: cl_bench's bandwidth test
# (examples/cl_bench.c: blocking and non-blocking reads and writes, maps for reading, unmaps after
# writing, 8 non-blocking writes queued at once) and clpeak's transfer bandwidth test, on a
# platform directly, through a BASE build (ICD and server: the figures before a change, if
# given), through this build with the direct path off (OUTBOARD_DIRECT=0: every transfer as
# messages), and through this build; alternating, ROUNDS times. Raw output and a table of ratios
# to the platform's own figures (per round) go to OUT/transfers.txt.
#   bench/opencl/transfers.sh OUT [cl_bench args...]
#   BUILD=build, BASE= (a build folder with bin/outboard, lib/ and etc/OpenCL/vendors), PLATFORM=Portable,
#   ROUNDS=2, VENDORS=/etc/OpenCL/vendors, CLPEAK=clpeak (empty: skipped)
set -uo pipefail
OUT=${1:?usage: transfers.sh OUT [cl_bench args...]}
shift
mkdir -p "$OUT"
CL_ARGS=("$@")
BUILD=${BUILD:-build}
BASE=${BASE:-}
PLATFORM=${PLATFORM:-Portable}
VENDORS=${VENDORS:-/etc/OpenCL/vendors}
CLPEAK=${CLPEAK-clpeak}
CL_BENCH=$BUILD/bin/cl_bench
W=$(mktemp -d)
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$W"' EXIT
source "$(dirname "$0")/../../scripts/local_server.sh"

# serve NAME BUILDDIR: a server of that build (serving the native platforms only); its address
# in ADDR_NAME. Both servers share one secret (clients find it in OUTBOARD_TOKEN_FILE).
"$BUILD/bin/outboard" token --file "$W/token" >/dev/null
serve() {
  mkdir -p "$W/$1"
  cp "$W/token" "$W/$1/token"
  OCL_ICD_VENDORS="$VENDORS" start_local_server "$2/bin/outboard" "$W/$1" || exit 1
  PIDS+=("$SERVER_PID")
  eval "ADDR_$1=127.0.0.1:$PORT"
}
serve this "$BUILD"
[ -z "$BASE" ] || serve base "$BASE"

R="$OUT/transfers.txt"
echo "# $(date -u +%FT%TZ) $(uname -n) $(nproc) cores; cl_bench $* bandwidth; ${CLPEAK:+clpeak --transfer-bandwidth; }platform '$PLATFORM'${BASE:+; base $BASE}" >>"$R"
# run LABEL VENDORS [ENV...]: both programs, through the ICDs of VENDORS.
run() {
  local label=$1 vendors=$2
  shift 2
  echo "## round $round: $label" | tee -a "$R"
  env OCL_ICD_VENDORS="$vendors" "$@" "$CL_BENCH" --platform "$PLATFORM" "${CL_ARGS[@]}" bandwidth 2>&1 | tee -a "$R"
  if [ -n "$CLPEAK" ]; then
    env OCL_ICD_VENDORS="$vendors" "$@" "$CLPEAK" --transfer-bandwidth 2>&1 | grep -E '(enqueue|memcpy).* : ' | tee -a "$R"
  fi
}
for round in $(seq "${ROUNDS:-2}"); do
  run native "$VENDORS"
  [ -z "$BASE" ] || run base "$BASE/etc/OpenCL/vendors" OUTBOARD_SERVERS="$ADDR_base"
  run messages "$BUILD/etc/OpenCL/vendors" OUTBOARD_SERVERS="$ADDR_this" OUTBOARD_DIRECT=0
  run direct "$BUILD/etc/OpenCL/vendors" OUTBOARD_SERVERS="$ADDR_this"
done
OUTBOARD_SERVERS=$ADDR_this "$BUILD/bin/outboard" status --json |
  python3 -c "import json,sys; print('server opencl', json.load(sys.stdin)['opencl'])" | tee -a "$R"

# Ratios to the platform's own figure, per round.
python3 - "$R" <<'EOF' | tee -a "$R"
import re, sys
text = open(sys.argv[1]).read().split("\n# ")[-1]  # this run's block
figures = {}  # (round, label) -> {name: GB/s}
for block in re.split(r"^## ", text, flags=re.M)[1:]:
    head, *lines = block.split("\n")
    m = re.match(r"round (\d+): (\w+)", head)
    got = figures.setdefault((int(m[1]), m[2]), {})
    for line in lines:
        if (f := re.match(r"(\w+) ([\d.]+) GB/s", line)):
            got[f[1]] = float(f[2])
        elif (f := re.match(r"\s+(.+?)\s+: ([\d.]+)$", line)):
            got["clpeak " + f[1]] = float(f[2])
labels = [l for l in ("base", "messages", "direct") if any(k[1] == l for k in figures)]
for rnd in sorted({k[0] for k in figures}):
    native = figures.get((rnd, "native"), {})
    print(f"ratios to native, round {rnd}: " + " | ".join(labels))
    for name, value in native.items():
        cells = []
        for l in labels:
            v = figures.get((rnd, l), {}).get(name)
            cells.append(f"{v:.2f} GB/s ({v / value:.2f}x)" if v is not None and value > 0 else "-")
        print(f"  {name:40s} native {value:.2f} GB/s | " + " | ".join(cells))
EOF
