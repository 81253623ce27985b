// `outboard serve` on a host with NVIDIA GPUs runs the server in a child process and starts it
// again, with the same arguments and on the port it had, when it exits because a GPU fault left
// its GPUs unusable. Measured on the H100 hosts of issue 32 (driver 580, CUDA 13): a sticky fault
// on one GPU (an illegal address, a kernel trap) poisons the contexts of every GPU of the process,
// and after cudaDeviceReset no context can be made in that process for at least 20 s
// (cudaErrorDevicesUnavailable; bench/probes/gpu_reset_probe.cu): a new process is the way back.
// The parent only waits and passes signals on; it never touches CUDA or UCX.
#pragma once
#include <cstdint>
#include <string>

namespace outboard::tool {

// The exit status of a server whose GPUs are lost in its process (EX_TEMPFAIL).
constexpr int kExitGpusLost = 75;

// main() hands over its arguments, which a restart runs again.
void remember_arguments(int argc, char** argv);

// Whether this process should run the server under supervise(): the host has NVIDIA GPUs
// (/dev/nvidiactl), `enabled` (restart_after_gpu_fault) and this is not already the child.
bool should_supervise(bool enabled);
// The parent's loop: starts the server as a child (this program again, the child's environment
// marked), passes SIGINT, SIGTERM and SIGHUP on to it, and starts it again when it exits with
// kExitGpusLost (OUTBOARD_TEST_GPU_FAULT is not passed to a restarted child). Returns the
// status of the child that ended otherwise.
int supervise();

// In the child.
struct Restart {
  int count = 0;        // times the server was started again
  uint16_t port = 0;    // the port the first child bound, to bind again (0: none yet)
  std::string reason;   // why the last child ended
};
Restart restart_state();
// Tells the parent the port this child listens on.
void report_port(uint16_t port);
// Tells the parent why this child is about to exit with kExitGpusLost.
void report_gpus_lost(const std::string& why);
bool is_supervised_child();

}  // namespace outboard::tool
