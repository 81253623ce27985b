#!/usr/bin/env bash
# Large buffer transfers through the ICD: opencl_bulk (an ordinary program linked with -lOpenCL)
# moves several MiB at a time (odd sizes and offsets, sub-buffers, non-blocking transfers with
# events behind a kernel, fresh pages, maps, a rectangle) on PoCL directly and through Outboard;
# the output must be the same line for line, and the server must have moved the data through its
# copy lanes (the direct path). Then with OUTBOARD_DIRECT=0 the same data travels as messages.
BUILD=$1
PROGRAMS=$2
source "$(dirname "$0")/lib.sh"
opencl_vendors
start_server
counter() { status_field "s['opencl']['$1']"; }

OCL_ICD_VENDORS="$DIRECT" "$PROGRAMS/opencl_bulk" >"$WORK/pocl.txt" 2>&1 || { cat "$WORK/pocl.txt"; fail "opencl_bulk on PoCL"; }
read0=$(counter direct_bytes_read) written0=$(counter direct_bytes_written) failures=$(counter failures)
run_checked opencl_bulk timeout -s KILL 300 env OCL_ICD_VENDORS="$REMOTE" "$PROGRAMS/opencl_bulk"
diff "$WORK/pocl.txt" "$WORK/opencl_bulk.log" || fail "results differ between PoCL and Outboard"
read=$(($(counter direct_bytes_read) - read0)) written=$(($(counter direct_bytes_written) - written0))
# The program reads about 125 MiB and writes 93 MiB in linear transfers of 1 MiB or more,
# blocking or not, maps included: all of it takes the lanes.
[ "$read" -ge $((120 << 20)) ] || fail "the lanes read only $read bytes into the program's memory"
[ "$written" -ge $((90 << 20)) ] || fail "the lanes fetched only $written bytes from the program's memory"
[ "$(counter failures)" = "$failures" ] || fail "the server counted failures: $failures -> $(counter failures)"
ok "opencl_bulk: $(wc -l <"$WORK/pocl.txt") identical lines; the copy lanes moved $((read >> 20)) MiB to the program, $((written >> 20)) MiB from it"

# Without the direct path: the same results, nothing through the lanes.
read0=$(counter direct_bytes_read) written0=$(counter direct_bytes_written)
OUTBOARD_DIRECT=0 OCL_ICD_VENDORS="$REMOTE" timeout -s KILL 300 "$PROGRAMS/opencl_bulk" >"$WORK/messages.txt" 2>&1 ||
  { cat "$WORK/messages.txt"; fail "opencl_bulk with OUTBOARD_DIRECT=0"; }
diff "$WORK/pocl.txt" "$WORK/messages.txt" || fail "results differ with OUTBOARD_DIRECT=0"
[ "$(counter direct_bytes_read)" = "$read0" ] && [ "$(counter direct_bytes_written)" = "$written0" ] ||
  fail "OUTBOARD_DIRECT=0 still used the lanes"
ok "OUTBOARD_DIRECT=0: identical results as messages, the lanes unused"
