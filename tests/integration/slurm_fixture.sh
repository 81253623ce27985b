# shellcheck shell=bash
# A real Slurm for tests, on this host: munged, slurmctld and slurmd (Debian's slurm-wlm and munge)
# with a configuration of their own in a directory the caller gives (free ports, state and logs
# there), stopped after. Shared by the dcuda launcher test (tests/dcuda/launchers.sh) and the Slurm
# job test (slurm_job.sh). Source it (set -e or not), then:
#   slurm_fixture_require            exit 77 (skipped) without slurm-wlm and munge, or without root
#   slurm_fixture_start DIR [NODES]  start the daemons (DIR/munge, DIR/slurm.conf, DIR/*.log ...) and
#                                    export SLURM_CONF; returns 1, saying why, if Slurm did not come up
#   slurm_fixture_stop               cancel the jobs left, stop the daemons (idempotent: call it from
#                                    the caller's EXIT trap)
#   slurm_submit_wait SECONDS SBATCH_ARGS...   submit with sbatch and wait until the job has ended;
#                                    sets SLURM_TEST_JOB (its id), SLURM_TEST_STATE (the JobState of
#                                    each component, e.g. "COMPLETED COMPLETED") and SLURM_TEST_EXIT
#                                    (the first component's ExitCode, e.g. 0:0); returns 1 when sbatch
#                                    failed or the job did not end in time (it is cancelled then)
# The nodes, all on this host (NodeAddr 127.0.0.1), each with 4 CPUs whatever the machine has
# (SlurmdParameters=config_overrides). The first, named as the host, has 2 GPUs of a fake GRES of
# type gpu: DIR/dev/nvidia0 and 1 (links to /dev/null), which Slurm hands out, setting
# CUDA_VISIBLE_DEVICES for them. NODES-1 more (default none), HOST-cpu1 ..., have no GPU:
# a heterogeneous job needs two nodes, since Slurm 22.05's backfill scheduler (the only one that
# starts heterogeneous jobs) reserves whole nodes and so plans a second component on the first's
# node only after the first has ended, which is never (a limitation its documentation states).

SLURM_FIXTURE_PIDS=()
SLURM_FIXTURE_DIR=""

slurm_fixture_require() {
  local d
  for d in slurmctld slurmd srun sbatch munged; do
    command -v "$d" >/dev/null || [ -x "/usr/sbin/$d" ] || { echo "skipped: $d (slurm-wlm, munge) is not installed"; exit 77; }
  done
  [ "$(id -u)" = 0 ] || { echo "skipped: starting slurmd needs root"; exit 77; }
}

# _slurm_free_port: a TCP port nothing listens on now.
_slurm_free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

slurm_fixture_start() {
  local dir=${1:?slurm_fixture_start DIR [NODES]} nodes=${2:-1} host ctld_port port up="" i names
  SLURM_FIXTURE_DIR=$dir
  case ":$PATH:" in *:/usr/sbin:*) ;; *) PATH=$PATH:/usr/sbin ;; esac
  # munge: a key and a socket of our own; munged runs as root here (--force).
  mkdir -p "$dir/munge"
  dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
  chmod 400 "$dir/munge/munge.key"
  chmod 700 "$dir/munge"
  munged --force --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.socket" \
    --pid-file="$dir/munge/munged.pid" --log-file="$dir/munge/munged.log" --seed-file="$dir/munge/munge.seed" ||
    { cat "$dir/munge/munged.log"; echo "FAILED: munged did not start"; return 1; }
  SLURM_FIXTURE_PIDS+=("$(cat "$dir/munge/munged.pid")")
  host=$(hostname -s)
  ctld_port=$(_slurm_free_port)
  port=$(_slurm_free_port)
  mkdir -p "$dir/state"
  {
    echo "ClusterName=outboardtest"
    echo "SlurmctldHost=$host(127.0.0.1)"
    echo "SlurmctldPort=$ctld_port"
    echo "SlurmdPort=$port"
    echo "SlurmUser=root"
    echo "SlurmdUser=root"
    echo "AuthType=auth/munge"
    echo "CredType=cred/munge"
    echo "AuthInfo=socket=$dir/munge/munge.socket"
    echo "StateSaveLocation=$dir/state"
    echo "SlurmdSpoolDir=$dir/spool-%n"
    echo "SlurmctldPidFile=$dir/slurmctld.pid"
    echo "SlurmdPidFile=$dir/slurmd-%n.pid"
    echo "SlurmctldLogFile=$dir/slurmctld.log"
    echo "SlurmdLogFile=$dir/slurmd-%n.log"
    echo "ProctrackType=proctrack/linuxproc"
    echo "TaskPlugin=task/none"
    echo "MpiDefault=none"
    # Heterogeneous jobs are refused without the backfill scheduler; it runs every second here.
    echo "SchedulerType=sched/backfill"
    echo "SchedulerParameters=bf_interval=1"
    echo "SelectType=select/cons_tres"
    echo "SelectTypeParameters=CR_Core"
    echo "ReturnToService=2"
    echo "SlurmdParameters=config_overrides"
    echo "GresTypes=gpu"
    echo "NodeName=$host NodeAddr=127.0.0.1 CPUs=4 Gres=gpu:2 State=UNKNOWN"
    names=$host
    for ((i = 1; i < nodes; i++)); do
      port=$(_slurm_free_port)
      echo "NodeName=$host-cpu$i NodeHostname=$host-cpu$i NodeAddr=127.0.0.1 Port=$port CPUs=4 State=UNKNOWN"
      names+=",$host-cpu$i"
    done
    echo "PartitionName=test Nodes=$names Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES"
  } >"$dir/slurm.conf"
  # gres.conf sits beside slurm.conf (slurmd reads it from SLURM_CONF's directory). Slurm 22.05
  # drops a GPU without a device file ("Removing file-less GPU"), and sets no CUDA_VISIBLE_DEVICES
  # for one whose file is not a character or block device: links to /dev/null stand in.
  mkdir -p "$dir/dev"
  for i in 0 1; do ln -s /dev/null "$dir/dev/nvidia$i"; done
  echo "NodeName=$host Name=gpu Count=2 File=$dir/dev/nvidia[0-1]" >"$dir/gres.conf"
  export SLURM_CONF=$dir/slurm.conf
  slurmctld -D -i >"$dir/slurmctld.out" 2>&1 &
  SLURM_FIXTURE_PIDS+=($!)
  # The first node's slurmd finds itself by the host's name; the others are named (-N) and listen
  # on ports of their own. Slurm built without multiple-slurmd accepts several on one host where
  # each node has a host name of its own (NodeHostname: never resolved, NodeAddr is used).
  mkdir -p "$dir/spool-$host"
  slurmd -D >"$dir/slurmd.out" 2>&1 &
  SLURM_FIXTURE_PIDS+=($!)
  for ((i = 1; i < nodes; i++)); do
    mkdir -p "$dir/spool-$host-cpu$i"
    slurmd -D -N "$host-cpu$i" >"$dir/slurmd-cpu$i.out" 2>&1 &
    SLURM_FIXTURE_PIDS+=($!)
  done
  for _ in $(seq 120); do
    [ "$(sinfo -h -N -o "%t" 2>/dev/null | grep -c "^idle")" = "$nodes" ] && up=1 && break
    sleep 0.5
  done
  if [ -z "$up" ]; then
    echo "FAILED: Slurm ($nodes node(s)) did not come up"
    sinfo -N -l 2>&1 | tail -5
    tail -n 20 "$dir/slurmctld.log" "$dir"/slurmd-*.log "$dir/slurmctld.out" "$dir"/slurmd*.out 2>/dev/null || true
    return 1
  fi
  echo "ok: slurmctld and slurmd up ($(sinfo -h -N -o '%N %t %c CPUs, %G' | paste -sd ';' | sed 's/;/; /g'))"
}

slurm_fixture_stop() {
  local p jobs
  # The jobs first: their steps run under slurmstepd, which outlives a stopped slurmd.
  if [ -n "$SLURM_FIXTURE_DIR" ] && [ ${#SLURM_FIXTURE_PIDS[@]} -gt 1 ]; then
    jobs=$(squeue -h -o %A 2>/dev/null | sort -u) || true
    if [ -n "$jobs" ]; then
      # shellcheck disable=SC2086
      scancel $jobs 2>/dev/null || true
      for _ in $(seq 60); do
        [ -z "$(squeue -h -o %A 2>/dev/null)" ] && break
        sleep 0.5
      done
    fi
  fi
  for p in "${SLURM_FIXTURE_PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${SLURM_FIXTURE_PIDS[@]}"; do
    # munged is not our child (it forks itself away): wait for it by its pid.
    wait "$p" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
  done
  SLURM_FIXTURE_PIDS=()
  return 0
}

# _slurm_job_states JOB: the JobState of each of the job's components.
_slurm_job_states() { scontrol show job "$1" 2>/dev/null | grep -oE 'JobState=[A-Z_]+' | cut -d= -f2 | xargs || true; }

slurm_submit_wait() {
  local seconds=$1 out until states
  shift
  SLURM_TEST_JOB="" SLURM_TEST_STATE="" SLURM_TEST_EXIT=""
  out=$(sbatch --parsable "$@" 2>&1) || { echo "sbatch failed: $out"; return 1; }
  SLURM_TEST_JOB=${out%%;*}
  until=$((SECONDS + seconds))
  # Ended: every component in a final state (the record stays in slurmctld for MinJobAge, 300 s).
  while :; do
    states=$(_slurm_job_states "$SLURM_TEST_JOB")
    [ -n "$states" ] && ! grep -qwE 'PENDING|RUNNING|CONFIGURING|COMPLETING|SUSPENDED|REQUEUED|RESIZING|SIGNALING|STAGE_OUT' <<<"$states" && break
    if [ $SECONDS -ge $until ]; then
      echo "job $SLURM_TEST_JOB did not end within $seconds s (state: ${states:-unknown}; $(scontrol show job "$SLURM_TEST_JOB" 2>&1 | grep -oE 'Reason=[^ ]+' | xargs))"
      scancel "$SLURM_TEST_JOB" 2>/dev/null || true
      return 1
    fi
    sleep 1
  done
  # shellcheck disable=SC2034  # for the caller
  SLURM_TEST_STATE=$states
  # shellcheck disable=SC2034
  SLURM_TEST_EXIT=$(scontrol show job "$SLURM_TEST_JOB" 2>/dev/null | grep -oE '(^|[[:space:]])ExitCode=[0-9]+:[0-9]+' | head -1 | cut -d= -f2) || true
  return 0
}
