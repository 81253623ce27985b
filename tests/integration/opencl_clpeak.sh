#!/usr/bin/env bash
# Debian's clpeak, unmodified, through the ICD against PoCL behind a real server: a short subset
# (kernel launch latency, global memory bandwidth, transfer bandwidth: blocking and non-blocking
# reads and writes, maps and unmaps, each repeated, the non-blocking ones queued without waiting)
# must complete and print its figures for the remote platform, and the server must have run its
# kernels and moved the transfers through its copy lanes, with no failure and no objects left
# once it ended. The figures themselves are not checked (tests do not judge speed).
BUILD=$1
source "$(dirname "$0")/lib.sh"
opencl_vendors
command -v clpeak >/dev/null || { echo "skip: clpeak is not installed"; exit 77; }
start_server

counter() { status_field "s['opencl']['$1']"; }
kernels=$(counter kernels) failures=$(counter failures) direct=$(counter direct_bytes_written)
log="$WORK/clpeak.log"
rc=0
OCL_ICD_VENDORS="$BUILD/etc/OpenCL/vendors" timeout -s KILL 300 clpeak --kernel-latency --global-bandwidth --transfer-bandwidth >"$log" 2>&1 || rc=$?
[ $rc = 0 ] || { cat "$log"; fail "clpeak ended with status $rc"; }
number='[0-9]+(\.[0-9]+)?'
grep -qE "^Platform: .*\[127\.0\.0\.1:$PORT\]$" "$log" || { cat "$log"; fail "clpeak did not use the remote platform"; }
grep -qE "Kernel launch latency : $number us" "$log" || { cat "$log"; fail "no kernel launch latency"; }
grep -q "Global memory bandwidth (GBPS)" "$log" || { cat "$log"; fail "no global memory bandwidth"; }
for width in float float2 float4 float8 float16; do
  grep -qE "^ +$width +: $number$" "$log" || { cat "$log"; fail "no global memory bandwidth for $width"; }
done
for t in "enqueueWriteBuffer" "enqueueReadBuffer" "enqueueWriteBuffer non-blocking" "enqueueReadBuffer non-blocking" \
  "enqueueMapBuffer\(for read\)" "enqueueUnmap\(after write\)"; do
  grep -qE "^ +$t +: $number$" "$log" || { cat "$log"; fail "no transfer bandwidth for $t"; }
done
[ "$(counter direct_bytes_written)" -gt "$direct" ] || fail "clpeak's transfers did not take the direct path"
served=$(($(counter kernels) - kernels))
[ "$served" -gt 0 ] || fail "the server ran none of clpeak's kernels"
[ "$(counter failures)" = "$failures" ] || fail "the server counted failures: $failures -> $(counter failures)"
for _ in $(seq 100); do [ "$(counter objects)" = 0 ] && break; sleep 0.1; done
[ "$(counter objects)" = 0 ] || fail "objects left behind by clpeak's session"
ok "clpeak: kernel latency, global and transfer bandwidth figures for [127.0.0.1:$PORT]; $served kernels run by the server"
