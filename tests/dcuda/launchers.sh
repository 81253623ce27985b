#!/usr/bin/env bash
# dcuda launched by the cluster's own launchers (issue 34, item 3): Open MPI's mpirun, and Slurm's
# srun under a real slurmctld + slurmd + munged that this script starts with a one-node
# configuration of its own (in a temporary directory, on free ports) and stops after. Each
# launches dcuda_proxy_check (host threads as ranks, the real bootstrap and proxies over UCX) as 2
# and as 4 processes: they find each other from the launcher's variables (OMPI_COMM_WORLD_*,
# SLURM_PROCID/NTASKS/LOCALID and the job's id for the rendezvous directory) and run the
# `order` and `barrier` scenarios, which check every byte and notification they exchanged.
#   launchers.sh mpirun|srun PROXY_CHECK     exit 77 (skipped) where the launcher is not installed
set -uo pipefail
LAUNCHER=${1:?usage: launchers.sh mpirun|srun PROXY_CHECK}
CHECK=${2:?usage: launchers.sh mpirun|srun PROXY_CHECK}
DIR=$(mktemp -d /tmp/outboard-launchers.XXXXXX)
chmod 755 "$DIR"
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
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

# free_port: a TCP port nothing listens on now.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

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
  for d in slurmctld slurmd srun munged; do
    command -v "$d" >/dev/null || [ -x "/usr/sbin/$d" ] || { echo "skipped: $d (slurm-wlm, munge) is not installed"; exit 77; }
  done
  [ "$(id -u)" = 0 ] || { echo "skipped: starting slurmd needs root"; exit 77; }
  PATH=$PATH:/usr/sbin
  # munge: a key and a socket of our own; munged runs as root here (--force).
  mkdir -p "$DIR/munge"
  dd if=/dev/urandom of="$DIR/munge/munge.key" bs=1024 count=1 status=none
  chmod 400 "$DIR/munge/munge.key"
  chmod 700 "$DIR/munge"
  munged --force --key-file="$DIR/munge/munge.key" --socket="$DIR/munge/munge.socket" \
    --pid-file="$DIR/munge/munged.pid" --log-file="$DIR/munge/munged.log" --seed-file="$DIR/munge/munge.seed" ||
    { cat "$DIR/munge/munged.log"; echo "FAILED: munged did not start"; exit 1; }
  PIDS+=("$(cat "$DIR/munge/munged.pid")")
  host=$(hostname -s)
  ctld_port=$(free_port)
  slurmd_port=$(free_port)
  mkdir -p "$DIR/state" "$DIR/spool"
  cat >"$DIR/slurm.conf" <<EOF
ClusterName=outboardtest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$DIR/munge/munge.socket
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.pid
SlurmctldLogFile=$DIR/slurmctld.log
SlurmdLogFile=$DIR/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
SlurmdParameters=config_overrides
NodeName=$host NodeAddr=127.0.0.1 CPUs=4 State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
EOF
  export SLURM_CONF=$DIR/slurm.conf
  slurmctld -D -i >"$DIR/slurmctld.out" 2>&1 &
  PIDS+=($!)
  slurmd -D >"$DIR/slurmd.out" 2>&1 &
  PIDS+=($!)
  up=""
  for _ in $(seq 120); do
    sinfo -h -N -o "%t" 2>/dev/null | grep -qE "^idle" && up=1 && break
    sleep 0.5
  done
  if [ -z "$up" ]; then
    echo "FAILED: the one-node Slurm did not come up"
    sinfo -N -l 2>&1 | tail -5
    tail -n 20 "$DIR/slurmctld.log" "$DIR/slurmd.log" "$DIR/slurmctld.out" "$DIR/slurmd.out" 2>/dev/null
    exit 1
  fi
  echo "ok: slurmctld and slurmd up ($(sinfo -h -N -o '%N %t %c CPUs'))"
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
