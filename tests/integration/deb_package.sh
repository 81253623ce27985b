#!/usr/bin/env bash
# The Debian packages (scripts/package.sh: cpack -G DEB): their control fields (Depends from
# dpkg-shlibdeps, the maintainer scripts, the configuration as conffiles), their contents (the
# files at /usr and /etc, naming /usr and /etc), the packaged, stripped binaries at work (extracted
# into a throw-away directory, the packaged server serves a program run by the packaged `outboard
# run`), then a real `dpkg -i` and `dpkg --purge` in a throw-away overlay of this system (where
# root may mount): the maintainer scripts make the user and the secret, the service's ExecStart
# serves a client of another user, the purge leaves nothing. The system itself is never touched
# (its OpenCL vendor file would reach the other tests running at the same time).
BUILD=$1
PROGRAMS=$2
source "$(dirname "$0")/lib.sh"
command -v dpkg-shlibdeps >/dev/null || { echo "skip: dpkg-shlibdeps (dpkg-dev) is not installed"; exit 77; }
OUT="$WORK/packages"
"$(dirname "$0")/../../scripts/package.sh" --no-build "$BUILD" "$OUT" >"$WORK/package.log" 2>&1 ||
  { cat "$WORK/package.log"; fail "scripts/package.sh"; }
DEB=$(ls "$OUT"/outboard_*_amd64.deb) || fail "no outboard_*_amd64.deb"

# ---- control ----
field() { dpkg-deb -f "$DEB" "$1"; }
[ "$(field Package)" = outboard ] && [ "$(field Architecture)" = amd64 ] || fail "package $(field Package) $(field Architecture)"
depends=$(field Depends)
for d in adduser libucx0 libsodium23 libmicrohttpd12 libopenblas0 libfftw3-double3 libfftw3-single3 ocl-icd-libopencl1 \
         "libblas3 | libblas.so.3" "liblapack3 | liblapack.so.3" libc6; do
  grep -qF "$d" <<<"$depends" || fail "Depends lacks $d: $depends"
done
! grep -q "outboard" <<<"$depends" || fail "Depends names the package's own libraries: $depends"
dpkg-deb -e "$DEB" "$WORK/control"
for s in postinst prerm postrm; do
  [ -x "$WORK/control/$s" ] || fail "no executable $s"
  sh -n "$WORK/control/$s" || fail "$s: syntax"
done
grep -q "/usr/lib/outboard/service-setup" "$WORK/control/postinst" || fail "postinst does not set up the service"
[ "$(sort "$WORK/control/conffiles" | tr '\n' ' ')" = "/etc/OpenCL/vendors/outboard.icd /etc/outboard/outboard.toml " ] ||
  fail "conffiles: $(cat "$WORK/control/conffiles")"
ok "control: $(field Package) $(field Version), Depends: $depends"

# ---- contents ----
dpkg-deb -c "$DEB" | awk '{print $6}' | sed 's|^\./||' >"$WORK/contents.txt"
for f in usr/bin/outboard usr/bin/outboard-slurm usr/lib/liboutboard-client.so.0 usr/lib/liboutboard-blas.so usr/lib/liboutboard-lapack.so \
         usr/lib/liboutboard-fftw3.so usr/lib/liboutboard-opencl.so.0 usr/lib/outboard/compat/libblas.so.3 \
         usr/lib/outboard/compat/liblapack.so.3 usr/lib/outboard/compat/libfftw3.so.3 usr/lib/outboard/service-setup \
         usr/lib/systemd/system/outboard.service usr/share/outboard/outboard_plot.py etc/outboard/outboard.toml \
         usr/share/outboard/grafana/outboard-dashboard.json \
         etc/OpenCL/vendors/outboard.icd; do
  grep -qx "$f" "$WORK/contents.txt" || fail "the package lacks /$f"
done
! grep -vE '^((usr|etc)/?|(usr/(bin|lib|share)|etc/(outboard|OpenCL))(/.*)?)$' "$WORK/contents.txt" | grep . || fail "files outside /usr and /etc"
X="$WORK/extracted"
dpkg-deb -x "$DEB" "$X"
[ "$(cat "$X/etc/OpenCL/vendors/outboard.icd")" = /usr/lib/liboutboard-opencl.so.0 ] || fail "the vendor file names $(cat "$X/etc/OpenCL/vendors/outboard.icd")"
grep -qx "ExecStart=/usr/bin/outboard serve --config /etc/outboard/outboard.toml" "$X/usr/lib/systemd/system/outboard.service" ||
  fail "the unit's ExecStart: $(grep ExecStart= "$X/usr/lib/systemd/system/outboard.service")"
grep -qx 'token_file = "/etc/outboard/token"' "$X/etc/outboard/outboard.toml" || fail "the configuration's token_file"
grep -qx 'ETC="/etc"' "$X/usr/lib/outboard/service-setup" || fail "service-setup's paths"
[[ "$(readelf -S "$X/usr/bin/outboard")" != *.symtab* ]] || fail "the packaged outboard is not stripped"
if ls "$OUT"/outboard-cuda_*_amd64.deb >/dev/null 2>&1; then  # built where CUDA is
  CUDA_DEB=$(ls "$OUT"/outboard-cuda_*_amd64.deb)
  dpkg-deb -c "$CUDA_DEB" >"$WORK/cuda-contents.txt"
  grep -qE '\./usr/lib/(liboutboard-cuda|libdcuda)\.so' "$WORK/cuda-contents.txt" || fail "outboard-cuda lacks its libraries"
  [ "$(dpkg-deb -f "$CUDA_DEB" Depends)" = "outboard (= $(field Version))" ] || fail "outboard-cuda's Depends"
  ok "outboard-cuda: $(grep -c '\.so' "$WORK/cuda-contents.txt") libraries, Depends: $(dpkg-deb -f "$CUDA_DEB" Depends)"
fi
ok "contents: $(wc -l <"$WORK/contents.txt") entries under /usr and /etc, naming /usr and /etc; stripped"

# ---- the packaged binaries at work (extracted: they find each other relative to themselves) ----
sed "s|^token_file = .*|token_file = \"$TOKEN\"|" "$X/etc/outboard/outboard.toml" >"$WORK/packaged.toml"
"$X/usr/bin/outboard" serve --config "$WORK/packaged.toml" --port 0 --port-file "$WORK/port" >"$WORK/server.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 600); do [ -s "$WORK/port" ] && break; kill -0 $SERVER_PID 2>/dev/null || { cat "$WORK/server.log"; fail "the packaged server did not start"; }; sleep 0.1; done
PORT=$(cat "$WORK/port")
export OUTBOARD_SERVERS="127.0.0.1:$PORT" OUTBOARD_TOKEN_FILE="$TOKEN"
run_checked packaged-run "$X/usr/bin/outboard" run --offload always -- "$PROGRAMS/blas_lapack_check"
OUTBOARD_OFFLOAD=always LD_LIBRARY_PATH="$X/usr/lib/outboard/compat" run_checked packaged-compat "$PROGRAMS/fftw_check"
calls=$("$X/usr/bin/outboard" status --json | python3 -c "import json,sys; s=json.load(sys.stdin); print(s['calls_by_routine'].get('dgemm', 0))")
[ "$calls" -ge 4 ] || fail "the packaged server served dgemm $calls times"
ok "the packaged server served the packaged outboard run's program (dgemm $calls times) and the compat directory's FFTW"

# ---- installed for real: dpkg -i and --purge in a throw-away overlay of this system ----
# A private mount namespace, / overlaid with a tmpfs and chrooted into: the maintainer scripts run
# as on a real installation, and the system itself is never touched. Needs root and mounts.
if [ "$(id -u)" != 0 ] || ! unshare -m --propagation private true 2>/dev/null; then
  echo "skip: the real installation (needs root and a mount namespace)"
  exit 0
fi
T="$WORK/overlay"
mkdir -p "$T"
cp "$DEB" "$T/outboard.deb"
cp "$PROGRAMS/blas_lapack_check" "$T/"
cat >"$T/inside.sh" <<'INSIDE'
# Runs in the chroot: install, serve as the unit would, a client as root, purge.
set -eu
fail() { echo "FAIL: $*"; exit 1; }
dpkg -i /root/outboard.deb >/root/dpkg.log 2>&1 || { cat /root/dpkg.log; fail "dpkg -i"; }
getent passwd outboard >/dev/null || fail "postinst made no user outboard"
[ "$(stat -c '%a %U' /etc/outboard/token)" = "600 outboard" ] || fail "the secret: $(stat -c '%a %U' /etc/outboard/token)"
[ -L /etc/systemd/system/multi-user.target.wants/outboard.service ] || fail "the service is not enabled"
echo "ok: dpkg -i: user outboard, its secret, the service enabled"
unit=/usr/lib/systemd/system/outboard.service
start=$(sed -n 's/^ExecStart=//p' $unit)
mkdir -p /run/outboard-test && chown outboard /run/outboard-test
env $(sed -n 's/^Environment=//p' $unit) setpriv --reuid=outboard --regid=outboard --clear-groups \
  $start --port 0 --port-file /run/outboard-test/port >/root/server.log 2>&1 &
server=$!
for _ in $(seq 300); do [ -s /run/outboard-test/port ] && break; sleep 0.1; done
[ -s /run/outboard-test/port ] || { cat /root/server.log; fail "the service's server did not start"; }
install -m 600 /etc/outboard/token /root/token
OUTBOARD_SERVERS=127.0.0.1:$(cat /run/outboard-test/port) OUTBOARD_TOKEN_FILE=/root/token OUTBOARD_FALLBACK=fail \
  outboard run --offload always -- /root/blas_lapack_check >/root/run.log 2>&1 || { cat /root/run.log /root/server.log; fail "outboard run"; }
echo "ok: the installed service's server (user outboard) served root's program: $(tail -n 1 /root/run.log)"
kill $server; wait $server || true
dpkg --purge outboard >/root/purge.log 2>&1 || { cat /root/purge.log; fail "dpkg --purge"; }
for f in /usr/bin/outboard /etc/outboard /etc/OpenCL/vendors/outboard.icd /usr/lib/outboard /var/lib/outboard \
         /etc/systemd/system/multi-user.target.wants/outboard.service; do
  [ ! -e "$f" ] || fail "$f is left after the purge"
done
echo "ok: dpkg --purge removed the files, the secret and the service's links"
INSIDE
cat >"$T/namespace.sh" <<'NS'
# In a private mount namespace: / overlaid (writes go to a tmpfs), then chrooted into.
set -eu
T=$1
mkdir -p "$T/fs" && mount -t tmpfs tmpfs "$T/fs"
mkdir -p "$T/fs/upper" "$T/fs/work" "$T/fs/root"
mount -t overlay overlay -o "lowerdir=/,upperdir=$T/fs/upper,workdir=$T/fs/work" "$T/fs/root"
R="$T/fs/root"
mount --rbind /proc "$R/proc"; mount --rbind /dev "$R/dev"; mount --rbind /sys "$R/sys"
mount -t tmpfs tmpfs "$R/run"
cp "$T/outboard.deb" "$T/blas_lapack_check" "$T/inside.sh" "$R/root/"
chroot "$R" sh /root/inside.sh
NS
unshare -m --propagation private sh "$T/namespace.sh" "$T" >"$WORK/real.log" 2>&1 || { cat "$WORK/real.log"; fail "the real installation"; }
sed -n 's/^ok: /ok: /p' "$WORK/real.log"
