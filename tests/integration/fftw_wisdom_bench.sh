#!/usr/bin/env bash
# FFTW's own verifier of its wisdom (tests/bench and check.pl from FFTW 3.3.10's release sources,
# built here against Debian's libfftw3 and libfftw3_threads, never committed): check.pl
# --validate-wisdom plans every problem with `-o wisdom` (FFTW_MEASURE, wisdom written to wis.dat
# at exit), then runs the same problems again in a new process with `-o wisdom-only`, which
# asserts that every plan is granted from the imported wisdom, and verifies every transform
# (bench --verify: impulse, linearity and shift tests). Run plain, then through `outboard run
# --offload always` with every transform served remotely (the server's counters).
#
# The sources: $OUTBOARD_TEST_CACHE (default BUILD/test-cache) keeps the tarball and the build.
# Fetched from the Debian archive (the orig tarball of Debian's fftw3 3.3.10-1, which is FFTW's
# release tarball: its SHA-256 is checked), else with `apt-get source` where deb-src is enabled.
# The test skips (77) only when neither works.
BUILD=$(realpath "$1")
source "$(dirname "$0")/lib.sh"
CACHE=${OUTBOARD_TEST_CACHE:-$BUILD/test-cache}
VERSION=3.3.10
SHA256=56c932549852cddcfafdab3820b0200c7742675be92179e59e6215b340e26467
TARBALL="$CACHE/fftw3_$VERSION.orig.tar.gz"
SRC="$CACHE/fftw-$VERSION"
BENCH="$SRC/tests/bench"
# check.pl's problem sets, ';' between them: its 1-d set on SIZES_1D ("1d"), and RANDOM_ROUNDS
# (default 10) rounds of its random problems (ranks 1-4, strided, batched, r2r kinds; seeded: the
# same every run). "-1d" is check.pl's whole 1-d set (sizes 1-100 and powers of two to 4096).
# "1d" runs check.pl's own do_size on each of SIZES_1D (and its size-0 can-do check), so each size
# gets every kind and layout -1d gives it (c2c and r2c/c2r, forward and backward, in and out of
# place, interleaved and split: 16 problems). What Outboard does with a 1-d problem does not depend
# on its size under --offload always (the wisdom key, the wire layout and the served execution are
# the same code for every n; chunking starts at megabytes), so sizes 1-16, primes (17, 31, 97),
# composites (60, 100) and the powers of two to 1024 check the same paths as all 106 sizes (2048 and
# 4096 cost most of the rest: FFTW_MEASURE planning), in a third of the time (432 problems instead
# of 1696; the test took 200 s of CI's 35 minutes). SETS='-1d;-r -c=10' runs check.pl's whole set.
SIZES_1D=${SIZES_1D:-"1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,31,32,60,64,97,100,128,256,512,1024"}
SETS=${SETS:-"1d;-r -c=${RANDOM_ROUNDS:-10}"}
SEED=${SEED:-2024}
mkdir -p "$CACHE"

verified() { [ -f "$1" ] && echo "$SHA256  $1" | sha256sum -c --quiet - >/dev/null 2>&1; }

fetch_sources() {
  verified "$TARBALL" && return 0
  local url
  for url in "http://deb.debian.org/debian/pool/main/f/fftw3/fftw3_$VERSION.orig.tar.gz" \
             "https://deb.debian.org/debian/pool/main/f/fftw3/fftw3_$VERSION.orig.tar.gz" \
             "https://www.fftw.org/fftw-$VERSION.tar.gz"; do
    command -v curl >/dev/null || break
    curl -fsSL --retry 2 --connect-timeout 20 --max-time 300 -o "$TARBALL.part" "$url" 2>/dev/null &&
      verified "$TARBALL.part" && mv "$TARBALL.part" "$TARBALL" && return 0
  done
  rm -f "$TARBALL.part"
  # Where deb-src lines are enabled: Debian's own source package (its orig tarball is the same file).
  if command -v apt-get >/dev/null; then
    (cd "$CACHE" && apt-get source --download-only -qq "fftw3=$VERSION-1" >/dev/null 2>&1) || true
    verified "$TARBALL" && return 0
  fi
  return 1
}

build_bench() {
  [ -x "$BENCH" ] && [ "$BENCH" -nt "$TARBALL" ] && return 0
  rm -rf "$SRC"
  tar -xzf "$TARBALL" -C "$CACHE" || return 1
  # configure only for config.h; the library is Debian's, not built here. libbench2 is FFTW's
  # benchmark harness; bench's three files link against -lfftw3 -lfftw3_threads (hook.c uses the
  # planner's hook, which Debian's libfftw3 exports like every internal symbol).
  (cd "$SRC" && ./configure -q --enable-threads --disable-fortran >"$CACHE/configure.log" 2>&1) || return 1
  make -C "$SRC/libbench2" -j2 >"$CACHE/libbench2.log" 2>&1 || return 1
  (cd "$SRC/tests" && cc -O2 -pthread -I.. -I../kernel -I../api -I../dft -I../rdft -I../libbench2 -DHAVE_CONFIG_H \
     bench.c hook.c fftw-bench.c ../libbench2/libbench2.a -o bench.tmp -lfftw3 -lfftw3_threads -lm) \
     >"$CACHE/bench-build.log" 2>&1 || return 1
  mv "$SRC/tests/bench.tmp" "$BENCH"
}

{
  flock 9
  if ! fetch_sources; then
    echo "skip: FFTW $VERSION's sources could not be obtained (Debian archive, fftw.org, apt-get source)"
    exit 77
  fi
  build_bench || { tail -30 "$CACHE"/*.log; fail "could not build FFTW's tests/bench from $TARBALL"; }
} 9>"$CACHE/.fftw-bench.lock"
ldd "$BENCH" >"$WORK/bench.ldd"
grep -q "libfftw3.so.3 => /" "$WORK/bench.ldd" || fail "bench is not linked against the system's libfftw3"
ok "FFTW $VERSION's tests/bench built against Debian's libfftw3 ($BENCH)"

# check.pl with a seeded random generator, so that both runs verify the same problems. With
# SIZES (a comma-separated list), check.pl's main program has no set to run; its do_size then runs
# on each size as small_1d would (size 0 as "not doable"), and its flush_problems validates them.
check_pl() {  # run directory, sizes or "", then check.pl's arguments
  local dir=$1 sizes=$2; shift 2
  mkdir -p "$dir"
  (cd "$dir" && perl -we 'srand(shift); my $s = shift; my $sizes = shift; $0 = $s; do $s; die $@ if $@;
                          if ($sizes) { do_size(0, 0); do_size($_, 1) for split /,/, $sizes; flush_problems(make_options()); }' \
     "$SEED" "$SRC/tests/check.pl" "$sizes" "$@")
}
validate() {  # name: bench-NAME is the program
  local set
  IFS=';' read -ra sets <<<"$SETS"
  for set in "${sets[@]}"; do
    if [ "$set" = 1d ]; then
      check_pl "$WORK/$1" "$SIZES_1D" --validate-wisdom -v "$WORK/bench-$1" || return 1
    else
      # shellcheck disable=SC2086
      check_pl "$WORK/$1" "" --validate-wisdom -v $set "$WORK/bench-$1" || return 1
    fi
  done
}
# bench through a wrapper: check.pl runs "$program $options" via the shell.
cat >"$WORK/bench-plain" <<EOF
#!/bin/sh
exec "$BENCH" "\$@"
EOF
cat >"$WORK/bench-outboard" <<EOF
#!/bin/sh
exec "$OUTBOARD" run --offload always -- "$BENCH" "\$@"
EOF
chmod +x "$WORK/bench-plain" "$WORK/bench-outboard"

# Problems verified in wisdom-only mode: the lines check.pl -v prints for each problem of a
# wisdom-only batch ("<problem> <errors...>" after "Executing again in wisdom-only mode").
wisdom_only_problems() {
  awk '/^Executing again in wisdom-only mode/ {w = 1; next} /^Executing / && !/-owisdom-only/ {w = 0}
       w && NF == 4 && $1 !~ /^Executing/ {n++} END {print n + 0}' "$1"
}

validate plain >"$WORK/plain.log" 2>&1 || { tail -30 "$WORK/plain.log"; fail "check.pl --validate-wisdom fails without Outboard"; }
plain=$(wisdom_only_problems "$WORK/plain.log")
[ "$plain" -gt 100 ] || { tail -30 "$WORK/plain.log"; fail "only $plain problems validated without Outboard"; }
ok "check.pl --validate-wisdom without Outboard: $plain problems planned with -o wisdom, then granted and verified with -o wisdom-only"

start_server
fft_calls() { status_field "sum(v for k, v in s['calls_by_routine'].items() if k.startswith('fftw'))"; }
before=$(fft_calls)
validate outboard >"$WORK/outboard.log" 2>&1 ||
  { grep -E "FAILED|assertion|outboard:" "$WORK/outboard.log" | head -20; tail -20 "$WORK/outboard.log"; fail "check.pl --validate-wisdom fails through Outboard"; }
! grep -q "outboard: warning" "$WORK/outboard.log" || { grep "outboard:" "$WORK/outboard.log" | head; fail "bench fell back to local execution"; }
remote=$(wisdom_only_problems "$WORK/outboard.log")
served=$(( $(fft_calls) - before ))
[ "$remote" = "$plain" ] || fail "$remote problems validated through Outboard, $plain without"
# bench --verify runs dozens of transforms per problem and plan, in both runs.
[ "$served" -ge $((20 * remote)) ] || fail "only $served transforms served remotely for $remote problems"
for r in fftw_c2c fftw_r2c fftw_c2r fftw_r2r; do
  [ "$(status_field "s['calls_by_routine'].get('$r', 0)")" -gt 0 ] || fail "no $r served remotely"
done
ok "check.pl --validate-wisdom through outboard run --offload always: $remote problems (as without), $served transforms served remotely"
