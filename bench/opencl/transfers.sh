#!/usr/bin/env bash
# Buffer transfers through Outboard's ICD, side by side in one run: cl_bench's bandwidth test
# (examples/cl_bench.c: blocking and non-blocking reads and writes, maps for reading, unmaps after
# writing, 8 non-blocking writes queued at once) and clpeak's transfer bandwidth test, on a
# platform directly, through a BASE build (ICD and server: the figures before a change, if
# given), through this build with the direct path off (OUTBOARD_DIRECT=0: every transfer as
# messages), and through this build; alternating, ROUNDS times. Raw output and a table of ratios
# to the platform's own figures (per round) go to OUT/transfers.txt.
#   bench/opencl/transfers.sh OUT [cl_bench args...]
#   BUILD=build (or a carried tree: OUTBOARD=.../bin/outboard CL_BENCH=.../bin/cl_bench
#   ICD_DIR=.../etc/OpenCL/vendors), BASE= (a build folder or a tree bench/gpu/pack.sh carried:
#   bin/outboard and lib/liboutboard-opencl.so.0), PLATFORM=Portable (the platform's name, e.g.
#   NVIDIA), ROUNDS=2, VENDORS=/etc/OpenCL/vendors, CLPEAK=clpeak (empty: skipped)
set -uo pipefail
OUT=${1:?usage: transfers.sh OUT [cl_bench args...]}
shift
mkdir -p "$OUT"
CL_ARGS=("$@")
BUILD=${BUILD:-build}
OUTBOARD=${OUTBOARD:-$BUILD/bin/outboard}
CL_BENCH=${CL_BENCH:-$BUILD/bin/cl_bench}
ICD_DIR=${ICD_DIR:-$BUILD/etc/OpenCL/vendors}
BASE=${BASE:-}
PLATFORM=${PLATFORM:-Portable}
VENDORS=${VENDORS:-/etc/OpenCL/vendors}
CLPEAK=${CLPEAK-clpeak}
W=$(mktemp -d)
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$W"' EXIT
source "$(dirname "$0")/../../scripts/local_server.sh"

# serve NAME OUTBOARD [LD_LIBRARY_PATH]: a server (serving the native platforms only); its
# address in ADDR_NAME. Both servers share one secret (clients find it in OUTBOARD_TOKEN_FILE).
"$OUTBOARD" token --file "$W/token" >/dev/null
serve() {
  mkdir -p "$W/$1"
  cp "$W/token" "$W/$1/token"
  LD_LIBRARY_PATH=${3-${LD_LIBRARY_PATH:-}} OCL_ICD_VENDORS="$VENDORS" start_local_server "$2" "$W/$1" || exit 1
  PIDS+=("$SERVER_PID")
  eval "ADDR_$1=127.0.0.1:$PORT"
}
serve this "$OUTBOARD"
if [ -n "$BASE" ]; then
  BASE=$(cd "$BASE" && pwd)
  # Its own libraries first: a carried tree's deps/ (LD_LIBRARY_PATH) holds this build's client.
  BASE_LIBS="$BASE/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  serve base "$BASE/bin/outboard" "$BASE_LIBS"
  mkdir -p "$W/base-vendors"  # the base's ICD, registered for this run only
  echo "$BASE/lib/liboutboard-opencl.so.0" >"$W/base-vendors/outboard.icd"
fi

R="$OUT/transfers.txt"
echo "# $(date -u +%FT%TZ) $(uname -n) $(nproc) cores; cl_bench $* bandwidth; ${CLPEAK:+clpeak --transfer-bandwidth; }platform '$PLATFORM'${BASE:+; base $BASE}" >>"$R"
# run LABEL VENDORS [ENV...]: both programs, through the ICDs of VENDORS, on PLATFORM (clpeak:
# its first device).
run() {
  local label=$1 vendors=$2 index
  shift 2
  echo "## round $round: $label" | tee -a "$R"
  env OCL_ICD_VENDORS="$vendors" "$@" "$CL_BENCH" --platform "$PLATFORM" "${CL_ARGS[@]}" bandwidth 2>&1 | tee -a "$R"
  if [ -n "$CLPEAK" ]; then
    index=$(env OCL_ICD_VENDORS="$vendors" "$@" "$CL_BENCH" --list | awk -F'[ :]' -v p="$PLATFORM" 'index($0, p) {print $2; exit}')
    env OCL_ICD_VENDORS="$vendors" "$@" "$CLPEAK" -p "${index:-0}" -d 0 --transfer-bandwidth 2>&1 |
      grep -E '(enqueue|memcpy).* : ' | tee -a "$R"
  fi
}
for round in $(seq "${ROUNDS:-2}"); do
  run native "$VENDORS"
  [ -z "$BASE" ] || run base "$W/base-vendors" OUTBOARD_SERVERS="$ADDR_base" LD_LIBRARY_PATH="$BASE_LIBS"
  run messages "$ICD_DIR" OUTBOARD_SERVERS="$ADDR_this" OUTBOARD_DIRECT=0
  run direct "$ICD_DIR" OUTBOARD_SERVERS="$ADDR_this"
done
OUTBOARD_SERVERS=$ADDR_this "$OUTBOARD" status --json |
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
