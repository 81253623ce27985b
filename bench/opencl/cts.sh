#!/usr/bin/env bash
# OpenCL conformance through Outboard's ICD (issue 37): a subset of the Khronos OpenCL-CTS run on
# PoCL directly and then through Outboard (the same PoCL, behind a server on loopback), test by
# test, so that one crash or hang costs one test and not its suite. It writes a summary table
# (per suite: passed/failed/skipped each way, and the tests that pass directly but fail through
# Outboard), a TSV of every test's two results, and the output of failed tests, trimmed.
#   bench/opencl/cts.sh CTS_BUILD OUTBOARD_BUILD [OUT]
#   CTS_BUILD: a CTS build tree (its test_* binaries are found under it); OUTBOARD_BUILD: an
#   Outboard build tree or a copy of one (bin/outboard, lib/, etc/OpenCL/vendors/).
#   OUT: default bench/results/debian12-2core-opencl/cts. VENDORS: the native platforms' .icd folder
#   (default: PoCL's alone). SUITES="test_api test_events" runs only
#   those; TESTS="name ..." only those tests; TEST_TIMEOUT=300 s per test directly (twice that
#   through Outboard: a test too slow directly is not run through Outboard); DEADLINE (seconds
#   since the epoch): tests not started by then are listed as not run (a time box). APPEND=1 adds
#   to OUT's results (a later run of other suites) instead of starting them afresh;
#   SUMMARY_ONLY=1 runs nothing and writes OUT's summary again from its results. SERVE_FLAGS: below.
set -uo pipefail
CTS=$(realpath "${1:?usage: cts.sh CTS_BUILD OUTBOARD_BUILD [OUT]}")
OB=$(realpath "${2:?usage: cts.sh CTS_BUILD OUTBOARD_BUILD [OUT]}")
OUT=${3:-$(dirname "$0")/../results/debian12-2core-opencl/cts}
TEST_TIMEOUT=${TEST_TIMEOUT:-300}
OUTBOARD="$OB/bin/outboard"
REMOTE="$OB/etc/OpenCL/vendors"
[ -n "${VENDORS:-}" ] || [ -f /etc/OpenCL/vendors/pocl.icd ] || { echo "PoCL (pocl-opencl-icd) is not installed" >&2; exit 1; }
[ -x "$OUTBOARD" ] && [ -d "$REMOTE" ] || { echo "$OB is not an Outboard build (bin/outboard, etc/OpenCL/vendors)" >&2; exit 1; }
# A copied build's binaries still name the original lib/ in their run path: ours first.
export LD_LIBRARY_PATH="$OB/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

# The suites, each with the arguments it runs under and the tests it runs (default: all it lists).
# Whole image suites try every format at every size: hours on a 2-core PoCL, so they run small
# images of one channel type each (integer for copies, fills and host reads and writes;
# normalized for kernel reads and writes, which sample), which still walks every image kind.
declare -A ARGS=(
  [test_cl_copy_images]="small_images CL_UNSIGNED_INT8"
  [test_cl_fill_images]="small_images CL_UNSIGNED_INT8"
  [test_cl_read_write_images]="small_images CL_UNSIGNED_INT8"
  [test_image_streams]="small_images CL_UNORM_INT8"
)
# Tests left out by name (e.g. SLOW_BASIC="prefetch imagedim_pow2"): ones a time box cannot afford.
declare -A SLOW=(
  [test_basic]="${SLOW_BASIC:-}"
)
SUITES=${SUITES:-"test_api test_basic test_buffers test_events test_profiling test_compiler test_cl_get_info test_cl_copy_images test_cl_fill_images test_cl_read_write_images test_image_streams"}

[ "${SUMMARY_ONLY:-0}" = 1 ] && SUITES="" APPEND=1
W=$(mktemp -d /tmp/outboard-cts.XXXXXX)
SERVER_PID=""
# SERVE_FLAGS: more `outboard serve` flags (e.g. --log-level debug: the server's log, which names
# each failed operation, is then kept as OUT/server.log).
trap '[ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null; wait 2>/dev/null
      [ -n "${SERVE_FLAGS:-}" ] && [ -f "$W/server.log" ] && cp "$W/server.log" "$OUT/server.log"; rm -rf "$W"' EXIT
mkdir -p "$OUT/logs" "$W/logs" "$W/json"
RESULTS="$OUT/results.tsv" COUNTERS="$OUT/counters.txt"
if [ "${APPEND:-0}" != 1 ]; then
  rm -f "$OUT"/logs/*.log "$COUNTERS"
  printf "suite\ttest\tdirect\toutboard\tdirect_s\toutboard_s\n" >"$RESULTS"
fi
# The native platform, which the programs see directly and the server serves: PoCL alone, or
# VENDORS (a folder of .icd files: NVIDIA's on the GPU machine, bench/gpu/cts_h200.sh).
DIRECT="${VENDORS:-$W/direct-vendors}"
[ -n "${VENDORS:-}" ] || { mkdir -p "$DIRECT" && ln -sf /etc/OpenCL/vendors/pocl.icd "$DIRECT/"; }

source "$(dirname "$0")/../../scripts/local_server.sh"
start_server() {
  # shellcheck disable=SC2086  # SERVE_FLAGS are words
  OCL_ICD_VENDORS="$DIRECT" start_local_server "$OUTBOARD" "$W" ${SERVE_FLAGS:-} || exit 1
  echo "server pid $SERVER_PID on 127.0.0.1:$PORT"
}
counters() {  # the server's opencl counters: operations kernels failures, and its restarts
  "$OUTBOARD" status --json | python3 -c "import json,sys; s=json.load(sys.stdin); c=s['opencl']; print(c['operations'], c['kernels'], c['failures'], s['restarts']['count'])"
}
[ -z "$SUITES" ] || start_server

# run_one WAY SUITE TEST: runs one test one way (direct | outboard); prints pass, fail, skip,
# timeout or crash(rc). The harness writes its verdict to a JSON file; a test that died has none.
run_one() {
  local way=$1 bin=$2 test=$3 vendors log json rc
  [ "$way" = direct ] && vendors=$DIRECT || vendors=$REMOTE
  log="$W/logs/$(basename "$bin").$test.$way.log" json="$W/json/r.json"
  rm -f "$json"
  local limit=$TEST_TIMEOUT
  [ "$way" = direct ] || limit=$((2 * TEST_TIMEOUT))  # the remote way's round trips cost time
  # In the binary's folder: test_compiler includes headers by paths relative to it.
  # shellcheck disable=SC2086  # ARGS are words
  (cd "$(dirname "$bin")" && OCL_ICD_VENDORS="$vendors" CL_CONFORMANCE_RESULTS_FILENAME="$json" \
    timeout -k 10 "$limit" "$bin" $4 "$test" >"$log" 2>&1)
  rc=$?
  if [ -s "$json" ]; then
    python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['results']; print(r.get(sys.argv[2], 'missing'))" "$json" "$test"
  elif [ $rc = 124 ] || [ $rc = 137 ]; then echo timeout
  else echo "crash($rc)"
  fi
}

# trim LOG: what of a failed test's output is kept: its error lines and its last 60 lines.
trim() {
  { grep -m 40 -iE "error|fail|mismatch|expected" "$1"; echo "--- last 60 lines:"; tail -n 60 "$1"; } | cut -c1-300
}

for suite in $SUITES; do
  bin=$(find "$CTS" -type f -name "$suite" -perm -u+x | head -n 1)
  [ -n "$bin" ] || { echo "$suite: not built in $CTS, skipped"; continue; }
  # The harness lists its tests under "Test names:" in its help.
  tests=${TESTS:-$("$bin" --help 2>&1 | sed -n '/^Test names:/,$p' | tail -n +2 | tr -d '\t')}
  c0=$(counters)
  echo "== $suite ($(wc -w <<<"$tests") tests) args '${ARGS[$suite]:-}' $(date +%T)"
  for t in $tests; do
    if [[ " ${SLOW[$suite]:-} " == *" $t "* ]] || [ "$(date +%s)" -ge "${DEADLINE:-9999999999}" ]; then
      printf "%s\t%s\tnot run\tnot run\t0\t0\n" "$suite" "$t" >>"$RESULTS"; continue
    fi
    s0=$SECONDS; d=$(run_one direct "$bin" "$t" "${ARGS[$suite]:-}"); s1=$SECONDS
    r="not run"
    [ "$d" = timeout ] || r=$(run_one outboard "$bin" "$t" "${ARGS[$suite]:-}")
    s2=$SECONDS
    printf "%s\t%s\t%s\t%s\t%d\t%d\n" "$suite" "$t" "$d" "$r" $((s1 - s0)) $((s2 - s1)) >>"$RESULTS"
    [ "$d" = pass ] && [ "$r" = pass ] || echo "   $t: direct $d, outboard $r"
    for way in direct outboard; do
      v=$d; [ $way = outboard ] && v=$r
      [ "$v" = pass ] || [ "$v" = skip ] || [ "$v" = "not run" ] || trim "$W/logs/$suite.$t.$way.log" >"$OUT/logs/$suite.$t.$way.log"
    done
    # A server that died takes every later test with it: say so, and start another.
    kill -0 "$SERVER_PID" 2>/dev/null || { echo "   the server died during $t"; tail -n 20 "$W/server.log" >"$OUT/logs/server-died.$suite.$t.log"; start_server; }
  done
  c1=$(counters)
  echo "$suite $c0 $c1" >>"$COUNTERS"
done

# The summary: per suite, the two ways' verdicts, what the server did for the Outboard runs (its
# operations and kernels went up: the work was served remotely), and our regressions by name.
python3 - "$RESULTS" "$COUNTERS" "$TEST_TIMEOUT" >"$OUT/summary.md" <<'PY'
import collections, csv, os, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
served = {}
for line in open(sys.argv[2]):
    f = line.split()
    if len(f) == 9:  # with the server's restarts
        s, o0, k0, f0, r0, o1, k1, f1, r1 = f
    else:
        (s, o0, k0, f0, o1, k1, f1), r0, r1 = f, 0, 0
    d = (int(o1) - int(o0), int(k1) - int(k0), int(f1) - int(f0))
    # Counters start again with a server that restarted (or died and was started again).
    served[s] = ("server restarted" if min(d) < 0 or r1 != r0 else
                 "NOTHING SERVED" if d[0] == 0 else " / ".join(map(str, d)))
# A test that timed out directly is too slow here to judge: not run through Outboard.
slow = [r for r in rows if r["direct"] == "timeout"]
rows = [r for r in rows if r["direct"] != "timeout"]
def tally(rs, way):
    c = collections.Counter("pass" if r[way] == "pass" else "skip" if r[way] == "skip" else
                            "not run" if r[way] == "not run" else "fail" for r in rs)
    return f"{c['pass']}/{c['fail']}/{c['skip']}"
print("# OpenCL-CTS on " + os.environ.get("PLATFORM_NAME", "PoCL") + ": directly and through Outboard's ICD\n")
print(f"Each test run alone, {sys.argv[3]} s at most directly (twice that through Outboard); p/f/s = passed/failed/skipped "
      "(a crash or timeout counts as failed). Server: operations, kernels and failures it counted "
      "during the suite's runs (all through Outboard).\n")
print("| suite | tests | direct p/f/s | Outboard p/f/s | server ops / kernels / failures | pass directly, fail through Outboard |")
print("|---|---|---|---|---|---|")
suites = list(dict.fromkeys(r["suite"] for r in rows))
for s in suites:
    rs = [r for r in rows if r["suite"] == s]
    ran = [r for r in rs if r["direct"] != "not run"]
    reg = [f"{r['test']} ({r['outboard']})" for r in ran if r["direct"] == "pass" and r["outboard"] not in ("pass", "skip")]
    print(f"| {s} | {len(ran)}{' (+%d not run)' % (len(rs) - len(ran)) if len(rs) > len(ran) else ''} | "
          f"{tally(ran, 'direct')} | {tally(ran, 'outboard')} | {served.get(s, '-')} | {', '.join(reg) or '-'} |")
gaps = [f"{r['suite']} {r['test']} ({r['direct']})" for r in rows if r["direct"] not in ("pass", "skip", "not run")]
better = [f"{r['suite']} {r['test']}" for r in rows if r["direct"] not in ("pass", "not run") and r["outboard"] == "pass"]
print(f"\nFail on {os.environ.get('PLATFORM_NAME', 'PoCL')} directly (its gaps, not ours): {len(gaps)}\n")
for g in gaps: print(f"- {g}")
# A test that skips itself through Outboard only: a feature the ICD does not offer (SVM, ...).
offered = [f"{r['suite']} {r['test']}" for r in rows if r["direct"] == "pass" and r["outboard"] == "skip"]
if offered:
    print("\nPass directly, skip themselves through Outboard (a feature it does not offer): " + ", ".join(offered))
if slow:
    print(f"\nToo slow directly (over the time limit; not run through Outboard): " + ", ".join(f"{r['suite']} {r['test']}" for r in slow))
if better:
    print("\nPass through Outboard but not directly:\n")
    for b in better: print(f"- {b}")
longest = sorted(rows, key=lambda r: -int(r["direct_s"]) - int(r["outboard_s"]))[:5]
print("\nLongest: " + ", ".join(f"{r['suite']} {r['test']} {r['direct_s']}+{r['outboard_s']} s" for r in longest))
PY
cat "$OUT/summary.md"
