// `outboard serve` on a host with NVIDIA GPUs runs the server in child processes and starts one
// again, with the same arguments and on the port it had, when it exits because a GPU fault left
// its GPUs unusable (or when it dies of a signal). Measured on the H100 hosts of issue 32
// (driver 580, CUDA 13): a sticky fault on one GPU (an illegal address, a kernel trap) poisons
// the contexts of every GPU of the process, and after cudaDeviceReset no context can be made in
// that process for at least 20 s (cudaErrorDevicesUnavailable; bench/probes/gpu_reset_probe.cu):
// a new process is the way back.
//
// Two shapes: one child owning every GPU (a large call may spread over all of them), or, with
// `worker_per_gpu`, one worker process per GPU (CUDA_VISIBLE_DEVICES names its GPU), worker i on
// the configured port + i: a fault then costs only its own GPU while the others keep serving.
// Each worker learns the others' ports from the supervisor and tells its clients (AuthResult),
// which spread their calls over all of them and move off one that is restarting.
//
// The parent only waits and passes signals and ports on; it never touches CUDA or UCX.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace outboard::tool {

// The exit status of a server that must start again in a new process (EX_TEMPFAIL): its GPUs are
// lost in this one, or its transport stopped receiving (src/transport/receive_probe.hpp).
constexpr int kExitStartAgain = 75;

// main() hands over its arguments, which every child runs again.
void remember_arguments(int argc, char** argv);

// What the supervisor starts.
struct Supervision {
  unsigned workers = 1;              // 1: one child owning every GPU
  std::vector<std::string> devices;  // per worker, its CUDA_VISIBLE_DEVICES (empty: left as is)
  uint16_t port = 0;                 // the configured port: worker i binds port + i (0: any free one)
};

// Whether this process should run the server under supervise(): not already a child, and the
// host has NVIDIA GPUs (/dev/nvidiactl) with `enabled` (restart_after_gpu_fault), or the
// test-only OUTBOARD_TEST_WORKERS asks for workers (see workers_for_test).
bool should_supervise(bool enabled);
// OUTBOARD_TEST_WORKERS=N (tests on hosts without GPUs): N workers with no GPU of their own;
// 0 when unset. Throws Error on a value that is not 2..64.
unsigned workers_for_test();
// The parent's loop: starts the children (this program again, each child's environment marked),
// passes SIGINT, SIGTERM and SIGHUP on to them, and starts a child again when it exits with
// kExitStartAgain or is killed by a signal it was not sent (OUTBOARD_TEST_GPU_FAULT is not passed to
// a restarted child). Returns once every child has ended: their worst status.
int supervise(const Supervision& plan);

// In a child.
struct Restart {
  int count = 0;          // times this child was started again
  uint16_t port = 0;      // the port to bind (the one it had before; a worker's first: port + i)
  std::string reason;     // why the last one ended
  unsigned worker = 0;    // which worker this is
  unsigned workers = 1;   // of how many (1: the only child)
  std::string gpu;        // a worker's GPU, as CUDA_VISIBLE_DEVICES names it (empty: none of its own)
};
Restart restart_state();
// Tells the parent the port this child listens on.
void report_port(uint16_t port);
// Tells the parent why this child is about to exit with kExitStartAgain.
void report_lost(const std::string& why);
// A server with no supervisor that must start again in a new process does so in this one's
// place: the same program and arguments (execv), on `port`, with the restart counted and its
// reason given as a supervised child's are (restart_state). Every descriptor but 0-2 is closed
// on the way (the listener and UCX's own). Returns only if execv fails.
void start_again_in_place(uint16_t port, const std::string& why);
bool is_supervised_child();
// A worker: calls `update` with the other workers' ports (as each starts listening), from a
// thread of its own, for as long as the supervisor lives.
void follow_siblings(std::function<void(std::vector<uint16_t>)> update);

}  // namespace outboard::tool
