# Shared by the GPU-machine scripts (run_h200.sh, fft_h200.sh); source it after setting R, the
# results folder. log TEXT: a heading in run.log. step NAME COMMAND...: runs a step, its output to
# run.log and its progress (stderr) to progress.log; a failing step is logged and the rest go on.
log() { echo "== $*" | tee -a "$R/run.log"; }
step() {
  local name=$1; shift
  log "$name"
  "$@" 2>>"$R/progress.log" | tee -a "$R/run.log"
  local status=${PIPESTATUS[0]}
  [ "$status" = 0 ] || { log "FAILED: $name (exit $status)"; tail -5 "$R/progress.log" | tee -a "$R/run.log"; }
}
