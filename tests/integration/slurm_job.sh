#!/usr/bin/env bash
# Outboard servers inside a Slurm job (issue 38, item 4), under a real slurmctld + slurmd + munged
# that the test starts (slurm_fixture.sh: a node with two fake GPUs of a GRES and a node without)
# and stops: a heterogeneous job whose component 0 (--gres=gpu:1) runs `outboard-slurm serve` and
# whose component 1 runs unmodified programs under `outboard-slurm run` (OUTBOARD_OFFLOAD=always,
# OUTBOARD_FALLBACK=fail: every call served, none run locally). Checked: the job completes, the
# programs' BLAS, LAPACK and FFT results are right and their calls were counted by the job's server
# (its status, taken by the batch script before the job ended, with the job's secret), the server
# owned the GPU Slurm gave the step (CUDA_VISIBLE_DEVICES in its environment), the job's directory
# and secret were private while the job ran and are gone after it, with no server of the job left.
# Then a job whose batch script has no cleanup trap: its server removes them as it stops. The
# helper's refusals (no job, a directory others can write, servers that never come) first.
#   slurm_job.sh BUILD PROGRAMS     exit 77 (skipped) without slurm-wlm and munge, or without root
BUILD=$1
PROGRAMS=$2
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/slurm_fixture.sh"
HELPER=$(cd "$(dirname "$0")/../../scripts" && pwd)/outboard-slurm
slurm_fixture_require
# The test's own Slurm only, even when it runs inside some other job.
unset "${!SLURM_@}"
trap 'slurm_fixture_stop; cleanup' EXIT
for p in blas_lapack_check lapack_check fftw_check; do
  [ -x "$PROGRAMS/$p" ] || fail "$PROGRAMS/$p is not built"
done
[ -x "$HELPER" ] || fail "$HELPER is missing or not executable"
export OUTBOARD

# ---- the helper's refusals, outside Slurm ----
JOBS=$WORK/jobs
mkdir -m 700 "$JOBS"
# refused WHAT [VAR=VALUE | -u VAR]... COMMAND...: COMMAND (run by env) fails, saying WHAT (grep -E).
refused() {
  local what=$1
  shift
  if env "$@" >"$WORK/refused.log" 2>&1; then cat "$WORK/refused.log"; fail "accepted: $*"; fi
  grep -qE "$what" "$WORK/refused.log" || { cat "$WORK/refused.log"; fail "no message '$what' from: $*"; }
}
refused "not inside a Slurm job" -u SLURM_JOB_ID -u SLURM_JOB_ID_HET_GROUP_0 OUTBOARD_SLURM_DIR="$JOBS" "$HELPER" run -- true
mkdir -m 777 "$WORK/open"
refused "writable by others" SLURM_JOB_ID=1 OUTBOARD_SLURM_DIR="$WORK/open" "$HELPER" cleanup
mkdir -m 755 "$JOBS/2"
refused "has mode 755, not 700" SLURM_JOB_ID=2 OUTBOARD_SLURM_DIR="$JOBS" "$HELPER" cleanup
rmdir "$JOBS/2"
refused "0 of 1 servers of job 3 reported within 1 s" SLURM_JOB_ID=3 OUTBOARD_SLURM_SERVERS=1 OUTBOARD_SLURM_TIMEOUT=1 \
  OUTBOARD_SLURM_DIR="$JOBS" "$HELPER" run -- true
ok "outboard-slurm refuses to run outside a job, with a directory others can write or of another mode, and says when servers never come"

# ---- Slurm ----
chmod 755 "$WORK"
slurm_fixture_start "$WORK/slurm" 2 || fail "Slurm did not start"
OUT=$WORK/out
mkdir "$OUT"
# The batch script a user writes (docs/servers.md, "Slurm"), plus what the test looks at while the
# job runs: each program's output, the server's status and environment, the job directory's modes.
cat >"$WORK/job.sh" <<EOF
#!/bin/bash
#SBATCH --job-name=outboard-slurm-test
#SBATCH --output=$OUT/job-%j.out
#SBATCH --time=15
#SBATCH --nodes=1 --gres=gpu:1
#SBATCH hetjob
#SBATCH --nodes=1 --ntasks=1
set -uo pipefail
trap 'outboard-slurm cleanup' EXIT
srun --het-group=0 --ntasks-per-node=1 outboard-slurm serve >$WORK/server.log 2>&1 &
rc=0
for p in blas_lapack_check lapack_check fftw_check; do
  srun --het-group=1 outboard-slurm run -- $PROGRAMS/\$p >$OUT/\$p.log 2>&1 || rc=1
done
outboard-slurm status --json >$OUT/status.json || rc=1
JOBDIR=$JOBS/\$SLURM_JOB_ID
stat -c '%n %a %u' \$JOBDIR \$JOBDIR/token >$OUT/modes.txt || rc=1
# The server runs on this same host here: its environment says which GPUs it was given.
[ -s $OUT/status.json ] && pid=\$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["pid"])' $OUT/status.json) &&
  tr '\\0' '\\n' </proc/\$pid/environ | grep -E '^(CUDA_VISIBLE_DEVICES|SLURM_STEP_GPUS)=' >$OUT/server-env.txt
echo "\$SLURM_JOB_ID" >$OUT/jobid
exit \$rc
EOF
chmod +x "$WORK/job.sh"
# What the job's steps inherit from sbatch (--export=ALL): the helper on PATH, the build's outboard,
# the jobs' directory, and every call served (a call that could not be fails the program).
PATH="$(dirname "$HELPER"):$PATH"
export PATH OUTBOARD_SLURM_DIR="$JOBS" OUTBOARD_OFFLOAD=always OUTBOARD_FALLBACK=fail
unset OUTBOARD_SERVERS OUTBOARD_TOKEN_FILE
# The servers listen on the host's name, as by default on a cluster, where it resolves here.
getent hosts "$(hostname)" >/dev/null || export OUTBOARD_SLURM_HOST=127.0.0.1
started=$SECONDS
if ! slurm_submit_wait 420 "$WORK/job.sh"; then
  tail -n 30 "$OUT"/*.log "$OUT"/job-*.out 2>/dev/null || true
  fail "the heterogeneous job did not run to its end"
fi
JOB=$SLURM_TEST_JOB
show_job() {  # (fail adds the serve step's log, WORK/server.log)
  local f
  for f in "$OUT"/job-*.out; do
    if [ -f "$f" ]; then echo "--- $f"; tail -n 30 "$f"; fi
  done
  echo "--- slurmctld.log"
  tail -n 15 "$WORK/slurm/slurmctld.log" || true
}
if [ "$SLURM_TEST_STATE" != "COMPLETED COMPLETED" ] || [ "$SLURM_TEST_EXIT" != 0:0 ]; then
  show_job
  for p in blas_lapack_check lapack_check fftw_check; do
    if [ -f "$OUT/$p.log" ]; then echo "--- $p"; tail -n 20 "$OUT/$p.log"; fi
  done
  fail "job $JOB ended $SLURM_TEST_STATE, exit code $SLURM_TEST_EXIT (both components COMPLETED and 0:0 expected)"
fi
ok "heterogeneous job $JOB completed in $((SECONDS - started)) s ($(scontrol show job "$JOB" | grep -oE ' NodeList=[^ ]+' | xargs))"

# The programs' own verdicts: every check passed, nothing ran locally.
for p in blas_lapack_check lapack_check fftw_check; do
  log=$OUT/$p.log
  grep -qE "^$p: [0-9]+ passed, 0 failed$" "$log" || { cat "$log"; fail "$p: no clean verdict"; }
  ! grep -q "outboard: warning" "$log" || { cat "$log"; fail "$p fell back to local execution"; }
  ok "$p under outboard-slurm run: $(tail -n 1 "$log")"
done

# The server's counters (its status, taken within the job with the job's secret).
field() { python3 -c "import json,sys; s=json.load(open(sys.argv[1])); print($1)" "$OUT/status.json"; }
[ -s "$OUT/status.json" ] || { show_job; fail "no status of the job's server"; }
[ -s "$OUT/server-env.txt" ] || { show_job; fail "the batch script did not read the server's environment"; }
blas=$(field "sum(s['calls_by_routine'].get(r, 0) for r in ('dgemm', 'sgemm', 'cgemm', 'zgemm'))")
lapack=$(field "sum(s['calls_by_routine'].get(r, 0) for r in ('dgesv', 'dpotrf', 'dgetrf', 'dgeqrf', 'zheevd'))")
fft=$(field "sum(v for k, v in s['calls_by_routine'].items() if k.startswith('fftw'))")
errors=$(field "s['errors']")
[ "$blas" -gt 0 ] && [ "$lapack" -gt 0 ] && [ "$fft" -gt 0 ] ||
  fail "the job's server did not serve every kind of call (GEMM $blas, LAPACK $lapack, FFT $fft)"
[ "$errors" = 0 ] || fail "the job's server counted $errors errors"
ok "the job's server served them: $(field "s['calls']") calls (GEMM $blas, LAPACK factorizations and solves $lapack, FFTs $fft), 0 errors"

# The GPUs: Slurm gave the serve step one of the node's two; the server had exactly that one.
grep -qE "CUDA_VISIBLE_DEVICES='[01]'" "$WORK/server.log" || { cat "$WORK/server.log"; fail "the serve step did not report the GPU Slurm gave it"; }
gpu=$(sed -n 's/^CUDA_VISIBLE_DEVICES=//p' "$OUT/server-env.txt")
step_gpus=$(sed -n 's/^SLURM_STEP_GPUS=//p' "$OUT/server-env.txt")
[[ "$gpu" =~ ^[01]$ ]] && [ "$gpu" = "$step_gpus" ] ||
  { cat "$OUT/server-env.txt"; fail "the server's CUDA_VISIBLE_DEVICES ('$gpu') is not the step's GPU from the GRES ('$step_gpus')"; }
ok "the server owned the GPU from the GRES: CUDA_VISIBLE_DEVICES=$gpu (SLURM_STEP_GPUS=$step_gpus)"

# The job's directory and secret: private while the job ran, gone after it, and no server left.
[ "$(wc -l <"$OUT/modes.txt")" = 2 ] || { cat "$OUT/modes.txt"; fail "the batch script did not see the job's directory and secret"; }
read -r _ dmode downer < <(grep -v '/token ' "$OUT/modes.txt")
read -r _ tmode towner < <(grep '/token ' "$OUT/modes.txt")
[ "$dmode $tmode $downer $towner" = "700 600 $(id -u) $(id -u)" ] ||
  { cat "$OUT/modes.txt"; fail "the job's directory and secret were not the user's alone (0700, 0600)"; }
[ "$(cat "$OUT/jobid")" = "$JOB" ] || fail "the batch script saw job id $(cat "$OUT/jobid"), not $JOB"
[ ! -e "$JOBS/$JOB" ] || { ls -la "$JOBS/$JOB"; fail "the job's directory $JOBS/$JOB (and its secret) outlived the job"; }
left=$(pgrep -f -- "--token-file $JOBS/$JOB/token" || true)
if [ -n "$left" ]; then
  ps -o pid,args -p "$(echo "$left" | paste -sd,)"
  for p in $left; do kill "$p" 2>/dev/null || true; done
  fail "servers of job $JOB outlived it"
fi
grep -q "server stopped" "$WORK/server.log" || { cat "$WORK/server.log"; fail "the serve step did not stop its server"; }
ok "the job's directory (0700) and secret (0600) are gone after it; its server stopped with it"

# Without the cleanup trap (a batch script killed before it could run it), the job's last server
# removes the directory and secret when it stops at the job's end. This job's components are given
# on sbatch's command line (separated by ":"), and its component 1 has two tasks, each running the
# program under outboard-slurm run.
cat >"$WORK/job-notrap.sh" <<EOF
#!/bin/bash
srun --het-group=0 --ntasks-per-node=1 outboard-slurm serve >$OUT/notrap-serve.log 2>&1 &
srun --het-group=1 outboard-slurm run -- $PROGRAMS/blas_lapack_check >$OUT/notrap-blas_lapack_check.log 2>&1 &&
  test -f $JOBS/\$SLURM_JOB_ID/token
EOF
chmod +x "$WORK/job-notrap.sh"
slurm_submit_wait 420 --job-name=outboard-slurm-notrap --output="$OUT/notrap-%j.out" --time=15 --nodes=1 --gres=gpu:1 \
  : --nodes=1 --ntasks=2 "$WORK/job-notrap.sh" || fail "the job without a cleanup trap did not run to its end"
JOB=$SLURM_TEST_JOB
[ "$SLURM_TEST_STATE $SLURM_TEST_EXIT" = "COMPLETED COMPLETED 0:0" ] ||
  { tail -n 20 "$OUT"/notrap-*; fail "job $JOB (no cleanup trap) ended $SLURM_TEST_STATE, exit code $SLURM_TEST_EXIT"; }
[ "$(grep -cx "blas_lapack_check: 8 passed, 0 failed" "$OUT/notrap-blas_lapack_check.log")" = 2 ] &&
  ! grep -q "outboard: warning" "$OUT/notrap-blas_lapack_check.log" ||
  { cat "$OUT/notrap-blas_lapack_check.log"; fail "job $JOB: the two tasks' blas_lapack_check did not both pass, served"; }
[ ! -e "$JOBS/$JOB" ] || { ls -la "$JOBS/$JOB"; cat "$OUT/notrap-serve.log"; fail "without the cleanup trap, the job's directory $JOBS/$JOB outlived the job"; }
! pgrep -f -- "--token-file $JOBS/$JOB/token" >/dev/null || fail "the server of job $JOB (no cleanup trap) outlived it"
ok "job $JOB (sbatch A : B, two tasks): both served; without the cleanup trap its server removed the directory and secret as it stopped"
