#!/usr/bin/env bash
# OpenCL over several servers (issue 32, item 5): cl_multi (examples/cl_multi.c, an ordinary
# program linked with -lOpenCL) splits a hash search over every device it sees. Through
# Outboard's ICD with two servers in OUTBOARD_SERVERS, each serving its host's PoCL device, it
# must see two devices (one platform per server), find the answer it finds natively on one
# device, and each server must have run a kernel for it. (bench/gpu/opencl_multi_gpu.sh runs the
# same program over GPUs: one server owning two, and two servers with one each.)
BUILD=$1
PROGRAMS=$2
source "$(dirname "$0")/lib.sh"
opencl_vendors
start_named() {  # NAME: a server on a free port, seeing PoCL alone; NAME_PID, NAME_PORT
  local name=$1
  OCL_ICD_VENDORS=$DIRECT "$OUTBOARD" serve --token-file "$TOKEN" --port 0 --port-file "$WORK/$name.port" \
    >>"$WORK/$name.log" 2>&1 &
  eval "${name}_PID=$!"
  for _ in $(seq 300); do [ -s "$WORK/$name.port" ] && break; sleep 0.05; done
  [ -s "$WORK/$name.port" ] || { cat "$WORK/$name.log"; fail "server $name did not start"; }
  eval "${name}_PORT=$(cat "$WORK/$name.port")"
}
kernels_at() {  # PORT: kernels that server ran
  OUTBOARD_SERVERS="127.0.0.1:$1" "$OUTBOARD" status --json | python3 -c "import json,sys; print(json.load(sys.stdin)['opencl']['kernels'])"
}
stop_pid() { kill "$1" 2>/dev/null || true; wait "$1" 2>/dev/null || true; }
trap 'stop_pid "${A_PID:-}"; stop_pid "${B_PID:-}"; cleanup' EXIT
start_named A
start_named B
export OUTBOARD_TOKEN_FILE="$TOKEN" OUTBOARD_SERVERS="127.0.0.1:$A_PORT,127.0.0.1:$B_PORT"
JOB=(--type all --items 300000 --rounds 32)
native=$(OCL_ICD_VENDORS=$DIRECT "$PROGRAMS/cl_multi" "${JOB[@]}") || fail "cl_multi natively: $native"
echo "native: $native"
devices=$(OCL_ICD_VENDORS=$REMOTE "$PROGRAMS/cl_multi" --type all --list)
echo "$devices"
[ "$(grep -c '^device ' <<<"$devices")" = 2 ] || fail "the ICD does not show one device per server"
a=$(kernels_at "$A_PORT") b=$(kernels_at "$B_PORT")
remote=$(OCL_ICD_VENDORS=$REMOTE "$PROGRAMS/cl_multi" "${JOB[@]}") || fail "cl_multi through two servers: $remote"
echo "two servers: $remote"
grep -q "devices=2 " <<<"$remote" || fail "the job was not split over both servers' devices"
answer() { grep -o 'best=[0-9a-f]* index=[0-9]*' <<<"$1"; }
[ "$(answer "$remote")" = "$(answer "$native")" ] || fail "a different answer: $(answer "$remote") against $(answer "$native")"
[ "$(kernels_at "$A_PORT")" -gt "$a" ] && [ "$(kernels_at "$B_PORT")" -gt "$b" ] || fail "a server ran no kernel of the job"
ok "cl_multi over two servers' devices: the native answer, each server ran its share"
