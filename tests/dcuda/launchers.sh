#!/usr/bin/env bash
# dcuda launched by the cluster's own launchers (issue 34, item 3): Open MPI's mpirun, and Slurm's
# srun under a real slurmctld + slurmd + munged that this script starts with a one-node
# configuration of its own (tests/integration/slurm_fixture.sh: in a temporary directory, on free
# ports) and stops after. Each launches dcuda_proxy_check (host threads as ranks, the real
# bootstrap and proxies over UCX) as 2 and as 4 processes: they find each other from the
# launcher's variables (OMPI_COMM_WORLD_*, SLURM_PROCID/NTASKS/LOCALID and the job's id for the
# rendezvous directory) and run the `order` and `barrier` scenarios, which check every byte and
# notification they exchanged.
#   launchers.sh mpirun|srun PROXY_CHECK     exit 77 (skipped) where the launcher is not installed
set -uo pipefail
LAUNCHER=${1:?usage: launchers.sh mpirun|srun PROXY_CHECK}
CHECK=${2:?usage: launchers.sh mpirun|srun PROXY_CHECK}
DIR=$(mktemp -d /tmp/outboard-launchers.XXXXXX)
chmod 755 "$DIR"
cleanup() {
  declare -F slurm_fixture_stop >/dev/null && slurm_fixture_stop
  if [ "${KEEP_WORK:-0}" = 1 ]; then echo "work dir kept: $DIR"; else rm -rf "$DIR"; fi
}
trap cleanup EXIT
failed=0
# The rendezvous directory dcuda derives from the job's id lives under /tmp (bootstrap.cpp).
export DCUDA_BOOTSTRAP_TIMEOUT=60 DCUDA_PROXY_STOP_TIMEOUT=60

# verdict NAME STATUS LOG N SCENARIO: one line per launch; all N processes must have passed
# ("process K: SCENARIO OK"), each once; the log's tail on a failure.
verdict() {
  local passed
  passed=$(grep -cE "^process [0-9]+: $5 OK$" "$3")
  if [ "$2" = 0 ] && [ "$passed" = "$4" ] && [ "$(grep -E "^process [0-9]+: $5 OK$" "$3" | sort -u | wc -l)" = "$4" ]; then
    echo "ok: $1 ($passed processes passed)"
  else
    echo "FAILED: $1 (exit $2, $passed of $4 processes passed)"
    tail -n 30 "$3"
    failed=1
  fi
}

case "$LAUNCHER" in
mpirun)
  command -v mpirun >/dev/null || { echo "skipped: mpirun (openmpi-bin) is not installed"; exit 77; }
  # As root in CI: Open MPI refuses root unless told. --oversubscribe: 4 processes on 2 cores.
  # The bootstrap's job id comes from Open MPI's environment (OMPI_MCA_ess_base_jobid or PMIx's).
  root=()
  [ "$(id -u)" = 0 ] && root=(--allow-run-as-root)
  for n in 2 4; do
    for s in order barrier; do
      log=$DIR/mpirun-$n-$s.log
      timeout 300 mpirun "${root[@]}" --oversubscribe --mca btl self,tcp -n "$n" "$CHECK" "$s" >"$log" 2>&1
      verdict "mpirun -n $n dcuda_proxy_check $s" $? "$log" "$n" "$s"
    done
  done
  ;;
srun)
  # A one-node Slurm of our own (tests/integration/slurm_fixture.sh), stopped by cleanup.
  source "$(dirname "$0")/../integration/slurm_fixture.sh"
  slurm_fixture_require
  slurm_fixture_start "$DIR/slurm" || exit 1
  for n in 2 4; do
    for s in order barrier; do
      log=$DIR/srun-$n-$s.log
      timeout 300 srun --overcommit -n "$n" "$CHECK" "$s" >"$log" 2>&1
      verdict "srun -n $n dcuda_proxy_check $s" $? "$log" "$n" "$s"
    done
  done
  ;;
*)
  echo "unknown launcher: $LAUNCHER (mpirun or srun)"
  exit 2
  ;;
esac
exit $failed
