#!/usr/bin/env bash
# The link rig (bench/link/link_rig.sh) in CI, for correctness at small sizes: a run at one shaped
# rate with a delay (1 Gbit/s, 5 us; where the kernel has no netem the delay is recorded as not
# applied) and unshaped, `outboard bench put` across the veth beside ucx_perftest (and iperf3
# where installed). Checks that the bench ran and wrote its results, that the server really served
# it (its counters) over the link (the link's byte counters, a TCP connection to the server), that
# the shaping held and was lifted, and that no namespace or process is left: after a clean run,
# after a failing bench, and after the rig is interrupted.
#
#   link_rig.sh BUILD     exit 77 (skipped) without root or `ip netns`
set -uo pipefail
BUILD=${1:?usage: link_rig.sh BUILD}
RIG=$(cd "$(dirname "$0")/../../bench/link" && pwd)/link_rig.sh
if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null || ! command -v tc >/dev/null; then
  echo "skipped: needs root and iproute2 (network namespaces, tc)"
  exit 77
fi
WORK=$(mktemp -d /tmp/outboard-link-rig.XXXXXX)
RIG_PID=""
# A rig this test started and left running (a failed check mid-way) is stopped: its own trap
# removes its namespaces.
trap '[ -n "$RIG_PID" ] && kill -TERM "$RIG_PID" 2>/dev/null && sleep 3; rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok: $*"; }

# namespaces_of DIR: the two namespaces a rig's run named in DIR/rig.txt.
namespaces_of() { sed -n 's/^namespaces: \([^ ]*\) (client.* and \([^ ]*\) (server.*/\1 \2/p' "$1/rig.txt"; }
# gone DIR: none of the rig's namespaces is left.
gone() {
  local n names
  names=$(namespaces_of "$1")
  [ -n "$names" ] || fail "$1/rig.txt names no namespaces"
  for n in $names; do
    ip netns list | awk "{print \$1}" | grep -qx "$n" && fail "namespace $n is left after the rig ended"
  done
  return 0
}

# ---- a clean run: shaped (1 Gbit/s, 5 us) and unshaped ----------------------------------------
EXTRA=()
command -v iperf3 >/dev/null && EXTRA+=(--iperf 1 --iperf-seconds 1)
command -v ucx_perftest >/dev/null && EXTRA+=(--perftest 1048576 --perftest-bytes 33554432)
t0=$SECONDS
timeout -s TERM 150 "$RIG" --build "$BUILD" --out "$WORK/run" --points 1gbit:5us,none:none --no-netem rate-only \
  --timeout 60 "${EXTRA[@]}" -- put --sizes 65536 1048576 --bytes-per-point 33554432 >"$WORK/run.log" 2>&1
rc=$?
if [ $rc = 77 ]; then cat "$WORK/run.log"; echo "skipped: the rig cannot make network namespaces here"; exit 77; fi
cat "$WORK/run.log"
[ $rc = 0 ] || fail "the rig exited $rc"
[ -s "$WORK/run/summary.json" ] && [ -s "$WORK/run/summary.txt" ] || fail "no summary written"
gone "$WORK/run"
ok "the rig ran both points in $((SECONDS - t0)) s and left no namespace"

python3 - "$WORK/run" <<'EOF' || fail "the results do not hold (above)"
import json, os, sys
out = sys.argv[1]
rows = {r["point"]: r for r in json.load(open(os.path.join(out, "summary.json")))["points"]}
bad = []
def check(cond, what):
    if not cond: bad.append(what)
check(set(rows) == {"1gbit-5us", "unshaped"}, f"points {sorted(rows)}")
for name, r in rows.items():
    check(r.get("bench_exit") == 0, f"{name}: bench exit {r.get('bench_exit')}")
    check(os.path.exists(os.path.join(out, name, "bench.json")), f"{name}: no bench.json")
    check(len(r.get("put", [])) == 2 and all(p["gbit"] > 0 for p in r["put"]), f"{name}: put points {r.get('put')}")
    # Served by the server, not locally: every timed message counted (3 trials of 32 MiB at each size).
    pings = (r.get("served") or {}).get("pings") or 0
    check(pings >= 3 * (512 + 32), f"{name}: the server counted {pings} messages")
    # Over the link: the server's end of the veth received the bench's bytes (3 trials x 2 sizes x 32 MiB).
    check((r.get("link_bytes_to_server") or 0) >= 6 * 33554432, f"{name}: {r.get('link_bytes_to_server')} bytes crossed")
    # Counted from both ends' tables after the bench too (a fast run can open and close its
    # connections between two samples: CI's unshaped point did).
    check((r.get("tcp_connections_opened") or 0) >= 1, f"{name}: no TCP connection to the server seen")
shaped, free = rows.get("1gbit-5us", {}), rows.get("unshaped", {})
# The shaping held (tbf at 1 Gbit/s: nothing faster) and was lifted (the 2-core veth runs at several Gbit/s).
check(0 < (shaped.get("put_best_gbit") or 0) <= 1.1, f"1 Gbit/s link: put {shaped.get('put_best_gbit')} Gbit/s")
check((free.get("put_best_gbit") or 0) > 1.3, f"unshaped link: put {free.get('put_best_gbit')} Gbit/s")
for k, v in (shaped.get("ucx_perftest_am_bw_gbit") or {}).items():
    check(v <= 1.1, f"1 Gbit/s link: ucx_perftest {k} B at {v} Gbit/s")
for k, v in (shaped.get("iperf3_gbit") or {}).items():
    check(v <= 1.05, f"1 Gbit/s link: iperf3 -P {k} at {v} Gbit/s")
# The delay: applied (netem), or said not to be.
qdisc = open(os.path.join(out, "1gbit-5us", "qdisc.txt")).read()
if shaped.get("delay_applied") == "5us":
    check("netem" in qdisc and "delay 5us" in qdisc, f"netem delay not on the link: {qdisc}")
else:
    check("NOT applied" in shaped.get("note", "") and "netem" in shaped.get("note", ""), f"delay neither applied nor said not to be: {shaped}")
check("tbf" in qdisc and "rate 1Gbit" in qdisc, f"tbf not on the link: {qdisc}")
check("tbf" not in open(os.path.join(out, "unshaped", "qdisc.txt")).read(), "the unshaped link has a tbf")
for b in bad: print("  " + b)
sys.exit(1 if bad else 0)
EOF
ok "shaped: $(grep '^1gbit-5us' "$WORK/run/summary.txt")"
ok "unshaped: $(grep '^unshaped' "$WORK/run/summary.txt")"

# ---- held inputs across the link, in chunks over the lanes -------------------------------------
# resident_check's DGEMMs and getrs as chunked calls (64 KiB) over TCP and the lanes: the chunks of
# held inputs are not sent but filled from the server's store, and every result is still right.
timeout -s TERM 120 "$RIG" --build "$BUILD" --out "$WORK/resident" --timeout 90 --env OUTBOARD_CHUNK_BYTES=65536 \
  --env OUTBOARD_OFFLOAD=always --env OUTBOARD_FALLBACK=fail -- run "$BUILD/bin/resident_check" >"$WORK/resident.log" 2>&1 ||
  { cat "$WORK/resident.log"; fail "resident_check across the link"; }
grep -q "resident_check: 39 passed, 0 failed" "$WORK/resident/unshaped/bench.log" ||
  { cat "$WORK/resident/unshaped/bench.log"; fail "resident_check across the link: results"; }
python3 - "$WORK/resident/unshaped/status.json" <<'EOF' || fail "resident inputs across the link (above)"
import json, sys
s = json.load(open(sys.argv[1]))
r = s["resident"]
# As in resident_inputs: 21 calls held their input; those of the DGEMMs and getrs left out 43 whole
# chunks of A each, the FFT executions (whole calls) their 2 MiB.
good = r["hits"] == 21 and r["bytes_not_sent"] == 15 * 43 * 65536 + 6 * 2097152 and s["pipelined_calls"] >= 30
if not good: print("  resident counters:", r, "pipelined calls:", s.get("pipelined_calls"))
sys.exit(0 if good else 1)
EOF
gone "$WORK/resident"
ok "held inputs across the link in chunks: $(grep -o 'resident_check: .*' "$WORK/resident/unshaped/bench.log")"

# ---- a failing bench: the rig says so, exits 1, and cleans up ----------------------------------
timeout -s TERM 60 "$RIG" --build "$BUILD" --out "$WORK/fails" -- false >"$WORK/fails.log" 2>&1
rc=$?
[ $rc = 1 ] || { cat "$WORK/fails.log"; fail "a failing bench: the rig exited $rc, not 1"; }
grep -q "the bench failed" "$WORK/fails/rig.txt" || fail "a failing bench: not reported in rig.txt"
gone "$WORK/fails"
ok "a failing bench: exit 1, reported, no namespace left"

# ---- interrupted mid-bench: everything goes ----------------------------------------------------
"$RIG" --build "$BUILD" --out "$WORK/stopped" --timeout 120 -- sleep 100 >"$WORK/stopped.log" 2>&1 &
RIG_PID=$!
for _ in $(seq 300); do [ -s "$WORK/stopped/unshaped/bench.command" ] && break; sleep 0.1; done
[ -s "$WORK/stopped/unshaped/bench.command" ] || { cat "$WORK/stopped.log"; fail "the rig did not reach its bench"; }
pids=""
for n in $(namespaces_of "$WORK/stopped"); do pids+=" $(ip netns pids "$n" | tr '\n' ' ')"; done
[ -n "${pids// /}" ] || fail "no process in the rig's namespaces while its bench runs"
kill -TERM "$RIG_PID"
for _ in $(seq 200); do kill -0 "$RIG_PID" 2>/dev/null || break; sleep 0.1; done
kill -0 "$RIG_PID" 2>/dev/null && fail "the rig still runs 20 s after SIGTERM"
wait "$RIG_PID"
rc=$?
RIG_PID=""
[ $rc = 130 ] || { cat "$WORK/stopped.log"; fail "interrupted: exit $rc, not 130"; }
gone "$WORK/stopped"
# A process the rig killed as it ended may stay a moment as a zombie, until init reaps it (kill -0
# still finds one: the clean-clone run of 6c3872a failed so once): gone means gone or a zombie,
# within 5 s.
alive() { [ -e "/proc/$1" ] && ! grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null; }
for p in $pids; do
  for _ in $(seq 50); do alive "$p" || break; sleep 0.1; done
  alive "$p" && fail "process $p (server or bench) outlived the interrupted rig"
done
ok "interrupted mid-bench: exit 130, its processes ($pids ) and namespaces gone"
