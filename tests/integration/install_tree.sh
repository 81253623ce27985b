#!/usr/bin/env bash
# `cmake --install` into a throw-away prefix, then used as an administrator and a user would: the
# files in place and none naming the build tree, the installed server started by the systemd
# unit's own ExecStartPre and ExecStart lines (as this user, on a free port), unmodified programs
# through the installed `outboard run` and through the installed compat directory (BLAS, LAPACK,
# FFTW; OpenCL through the installed vendor file) served by it, seen in its counters and metrics.
# The unit is checked with systemd-analyze verify: systemd is not PID 1 where the tests run, so
# `systemctl start` is not exercised here.
BUILD=$1
PROGRAMS=$2
source "$(dirname "$0")/lib.sh"
ROOT="$WORK/root"
BUILD=$(realpath "$BUILD")
cmake --install "$BUILD" --prefix "$ROOT" >"$WORK/install.log" 2>&1 || { cat "$WORK/install.log"; fail "cmake --install"; }

# ---- what is in place ----
for f in bin/outboard lib/outboard/outboard-soak-client lib/liboutboard-client.so.0 lib/liboutboard-blas.so lib/liboutboard-blas-compat.so \
         lib/liboutboard-lapack.so lib/liboutboard-fftw3.so lib/liboutboard-opencl.so.0 share/outboard/outboard_plot.py \
         share/outboard/grafana/outboard-dashboard.json \
         etc/outboard/outboard.toml etc/OpenCL/vendors/outboard.icd lib/systemd/system/outboard.service \
         lib/outboard/service-setup; do
  [ -e "$ROOT/$f" ] || fail "not installed: $f"
done
[ "$(ls "$ROOT/bin" | xargs)" = "outboard outboard-slurm" ] ||
  fail "bin/ holds more than the outboard command and its Slurm helper: $(ls "$ROOT/bin" | xargs)"
[ -x "$ROOT/bin/outboard-slurm" ] || fail "bin/outboard-slurm is not executable"
COMPAT="$ROOT/lib/outboard/compat"
for n in libblas.so.3 libcblas.so.3 liblapack.so.3 libfftw3.so.3 libfftw3f.so.3 libfftw3_threads.so.3 \
         libfftw3f_threads.so.3 libfftw3_omp.so.3 libfftw3f_omp.so.3; do
  [ -L "$COMPAT/$n" ] && [ -e "$COMPAT/$n" ] || fail "compat: $n is missing or dangling"
done
# Found relative to themselves, never through the build tree.
while read -r f; do
  [[ "$(readelf -d "$f")" != *"$BUILD"* ]] || fail "$f: its RUNPATH names the build tree"
  [[ "$(ldd "$f")" != *"not found"* ]] || { ldd "$f"; fail "$f: libraries not found"; }
done < <(find "$ROOT/bin" "$ROOT/lib" -maxdepth 1 -type f \( -name outboard -o -name '*.so.*' \))
! grep -rlF "$BUILD" "$ROOT/etc" "$ROOT/lib/systemd" "$ROOT/lib/outboard/service-setup" || fail "files name the build tree"
[ "$(cat "$ROOT/etc/OpenCL/vendors/outboard.icd")" = "$ROOT/lib/liboutboard-opencl.so.0" ] || fail "the vendor file names $(cat "$ROOT/etc/OpenCL/vendors/outboard.icd")"
for p in blas_lapack_check fftw_check; do  # the compat directory stands in for the system's libraries
  [[ "$(LD_LIBRARY_PATH="$COMPAT" ldd "$PROGRAMS/$p")" != *"not found"* ]] ||
    { LD_LIBRARY_PATH="$COMPAT" ldd "$PROGRAMS/$p"; fail "$p through the compat directory: libraries not found"; }
done
ok "installed: $(find "$ROOT" -type f | wc -l) files, $(find "$ROOT" -type l | wc -l) links; no build-tree path; the compat links resolve"

# ---- the unit ----
UNIT="$ROOT/lib/systemd/system/outboard.service"
if command -v systemd-analyze >/dev/null; then
  systemd-analyze verify "$UNIT" >"$WORK/verify.log" 2>&1 || { cat "$WORK/verify.log"; fail "systemd-analyze verify"; }
  ok "systemd-analyze verify: the unit is valid $(tr '\n' ' ' <"$WORK/verify.log")"
else
  fail "systemd-analyze is missing (Debian package systemd)"
fi
pre=$(sed -n 's/^ExecStartPre=+//p' "$UNIT")
start=$(sed -n 's/^ExecStart=//p' "$UNIT")
[ "$start" = "$ROOT/bin/outboard serve --config $ROOT/etc/outboard/outboard.toml" ] || fail "ExecStart=$start"
grep -q '^User=outboard$' "$UNIT" && grep -q '^Restart=on-failure$' "$UNIT" || fail "the unit's user or restart policy"

# The unit's ExecStartPre, ExecStart and Environment, as the unit runs them: as root, the server
# as a user of its own and local clients as another (its UCX settings make that work). There is no
# user outboard here: nobody stands in; not root, this user does.
SERVICE_USER=$(id -un) AS_SERVICE=()
if [ "$(id -u)" = 0 ] && getent passwd nobody >/dev/null && command -v setpriv >/dev/null; then
  SERVICE_USER=nobody AS_SERVICE=(setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups)
  chmod 755 "$WORK"  # the installation in it is the service user's to read
fi
OUTBOARD_SERVICE_USER=$SERVICE_USER $pre >"$WORK/setup.log" 2>&1 || { cat "$WORK/setup.log"; fail "$pre"; }
SECRET="$ROOT/etc/outboard/token"
[ "$(stat -c '%a %U' "$SECRET")" = "600 $SERVICE_USER" ] || fail "the secret is $(stat -c '%a %U' "$SECRET")"
sum=$(md5sum <"$SECRET")
OUTBOARD_SERVICE_USER=$SERVICE_USER $pre >/dev/null || fail "$pre, again"
[ "$(md5sum <"$SECRET")" = "$sum" ] || fail "a second start replaced the secret"
ok "ExecStartPre made the secret once (mode 600, owned by $SERVICE_USER): $(cat "$WORK/setup.log")"
install -m 600 "$SECRET" "$WORK/client-token"  # the clients' copy

# The server: ExecStart (then a free port), metrics on.
MPORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
sed -i "s/^#metrics_port = 0$/metrics_port = $MPORT/" "$ROOT/etc/outboard/outboard.toml"
mapfile -t unit_env < <(sed -n 's/^Environment=//p' "$UNIT")
mkdir -p "$WORK/service" && chown "$SERVICE_USER" "$WORK/service"
env "${unit_env[@]}" "${AS_SERVICE[@]}" $start --port 0 --port-file "$WORK/service/port" >"$WORK/server.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 600); do [ -s "$WORK/service/port" ] && break; kill -0 $SERVER_PID 2>/dev/null || { cat "$WORK/server.log"; fail "the installed server did not start"; }; sleep 0.1; done
PORT=$(cat "$WORK/service/port")
export OUTBOARD_SERVERS="127.0.0.1:$PORT" OUTBOARD_TOKEN_FILE="$WORK/client-token"
ok "the installed server listens on 127.0.0.1:$PORT as $SERVICE_USER with ${unit_env[*]}"

# ---- programs through the installed tree ----
INSTALLED="$ROOT/bin/outboard"
"$INSTALLED" run -- sh -c 'echo "$LD_PRELOAD"; echo "$OCL_ICD_VENDORS"' >"$WORK/env.txt"
preloaded=$(head -n 1 "$WORK/env.txt")
if [ -n "${OUTBOARD_SANITIZER_RUNTIME:-}" ]; then  # scripts/sanitize.sh: its runtime comes first, and stays after
  preloaded=${preloaded#"$OUTBOARD_SANITIZER_RUNTIME:"} preloaded=${preloaded%":$OUTBOARD_SANITIZER_RUNTIME"}
fi
[ "$preloaded" = "$ROOT/lib/liboutboard-blas.so:$ROOT/lib/liboutboard-lapack.so:$ROOT/lib/liboutboard-fftw3.so" ] ||
  { cat "$WORK/env.txt"; fail "outboard run does not preload the installed libraries"; }
grep -qx "$ROOT/etc/OpenCL/vendors" "$WORK/env.txt" || { cat "$WORK/env.txt"; fail "outboard run does not use the installed vendor file"; }
run_checked run-blas-lapack "$INSTALLED" run --offload always -- "$PROGRAMS/blas_lapack_check"
run_checked run-fftw "$INSTALLED" run --offload always -- "$PROGRAMS/fftw_check"
OUTBOARD_OFFLOAD=always LD_LIBRARY_PATH="$COMPAT" run_checked compat-blas-lapack "$PROGRAMS/blas_lapack_check"
OUTBOARD_OFFLOAD=always LD_LIBRARY_PATH="$COMPAT" run_checked compat-fftw "$PROGRAMS/fftw_check"
# Every Outboard library those programs loaded came from the installation.
OUTBOARD_OFFLOAD=always LD_DEBUG=files "$INSTALLED" run -- "$PROGRAMS/blas_lapack_check" >/dev/null 2>"$WORK/ld.log"
grep -qF "$ROOT/lib/liboutboard-client.so.0" "$WORK/ld.log" || fail "the installed liboutboard-client.so was not loaded"
! grep -qF "file=$BUILD/lib/" "$WORK/ld.log" || fail "a library of the build tree was loaded"
if [ -f /etc/OpenCL/vendors/pocl.icd ] && command -v clinfo >/dev/null; then
  "$INSTALLED" run -- clinfo -l >"$WORK/clinfo.txt" 2>&1 || { cat "$WORK/clinfo.txt"; fail "clinfo through the installed ICD"; }
  grep -q "\[127.0.0.1:$PORT\]" "$WORK/clinfo.txt" || { cat "$WORK/clinfo.txt"; fail "clinfo does not list the server's platform"; }
  ok "clinfo through the installed vendor file lists $(grep -c "\[127.0.0.1:$PORT\]" "$WORK/clinfo.txt") platform(s) of the server"
fi

# The installed server served them: its counters, through the installed status command and metrics.
"$INSTALLED" status --json >"$WORK/status.json" || fail "the installed outboard status"
routine() {  # routine PREFIX: calls of the routines named so
  python3 -c "import json,sys; print(sum(n for r, n in json.load(open(sys.argv[1]))['calls_by_routine'].items() if r.startswith('$1')))" "$WORK/status.json"
}
# Three runs of blas_lapack_check (4 dgemm each), two of fftw_check.
[ "$(routine dgemm)" -ge 12 ] || fail "dgemm served $(routine dgemm) times, not 12"
[ "$(routine dgesv)" -ge 6 ] || fail "dgesv served $(routine dgesv) times, not 6"
[ "$(routine fftw)" -ge 2 ] || fail "FFTs not served"
calls=0
for _ in $(seq 50); do
  calls=$(curl -sf "http://127.0.0.1:$MPORT/metrics" | awk '/^outboard_calls_total\{service="blas3"/ {n += $2} END {print n + 0}')
  [ "$calls" -ge 12 ] && break; sleep 0.1
done
[ "$calls" -ge 12 ] || fail "the metrics count $calls blas3 calls"
ok "the installed server served dgemm $(routine dgemm), dgesv $(routine dgesv), FFTs $(routine fftw) times; metrics: $calls blas3 calls"

# ---- a reinstallation keeps an administrator's configuration ----
cmake --install "$BUILD" --prefix "$ROOT" >"$WORK/reinstall.log" 2>&1 || { cat "$WORK/reinstall.log"; fail "cmake --install again"; }
grep -q "^metrics_port = $MPORT$" "$ROOT/etc/outboard/outboard.toml" || fail "reinstalling replaced the edited outboard.toml"
[ -f "$ROOT/etc/outboard/outboard.toml.new" ] || fail "reinstalling did not put the shipped outboard.toml beside it"
ok "reinstalling kept the edited outboard.toml (the shipped one: outboard.toml.new)"
