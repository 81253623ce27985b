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

# The program reads about 125 MiB and writes 93 MiB in linear transfers of 1 MiB or more,
# blocking or not, maps included: all of it takes the lanes.
opencl_side_by_side opencl_bulk $((120 << 20)) $((90 << 20))
ok "opencl_bulk: $(wc -l <"$WORK/opencl_bulk.pocl.txt") identical lines; the copy lanes moved $((LANES_READ >> 20)) MiB to the program, $((LANES_WRITTEN >> 20)) MiB from it"

# Without the direct path: the same results, nothing through the lanes.
read0=$(cl_counter direct_bytes_read) written0=$(cl_counter direct_bytes_written)
OUTBOARD_DIRECT=0 OCL_ICD_VENDORS="$REMOTE" timeout -s KILL 300 "$PROGRAMS/opencl_bulk" >"$WORK/messages.txt" 2>&1 ||
  { cat "$WORK/messages.txt"; fail "opencl_bulk with OUTBOARD_DIRECT=0"; }
diff "$WORK/opencl_bulk.pocl.txt" "$WORK/messages.txt" || fail "results differ with OUTBOARD_DIRECT=0"
[ "$(cl_counter direct_bytes_read)" = "$read0" ] && [ "$(cl_counter direct_bytes_written)" = "$written0" ] ||
  fail "OUTBOARD_DIRECT=0 still used the lanes"
ok "OUTBOARD_DIRECT=0: identical results as messages, the lanes unused"
