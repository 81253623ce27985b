// The client processes of `outboard bench soak`: N slots, each running outboard-soak-client under
// `outboard run --offload always --fallback fail` (the real shims and client runtime, every call
// remote, a remote failure ends the process with a message). The first burst is released at once;
// a slot whose process ended (its lifetime is up) gets a fresh one while the run has time left, so
// sessions open and close all through the run. Each process's records, exit status and log (the
// runtime's exit report: calls run remotely, locally and fallen back, per routine; any warning)
// are folded into the totals. For churn, a share of the processes is killed at a random point of
// its life: mid-call, mid-connect or at start, as a crashing or cancelled job would leave.
#pragma once
#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tools/outboard/soak/record.hpp"

namespace outboard::tool {

struct SoakOptions {
  int clients = 8;
  double seconds = 120;
  double lifetime = 60;  // seconds a client process runs before a fresh one takes its slot; 0: the whole run
  double grace = 180;    // seconds the processes may take past the end to finish their last call
  int think_ms = 20;     // pause between a process's calls
  int large_percent = 5;
  int kill_percent = 0;  // of the processes, killed (SIGKILL) at a random point of their life
  std::string apis = "blas,lapack,fft,opencl";
  uint64_t seed = 1;
  uint64_t chunk_bytes = 1 << 20;  // the clients' OUTBOARD_CHUNK_BYTES
  std::string server, token;
  std::string logs;  // where the logs of processes with problems are kept
  std::string expected_warning;  // a warning line starting so is no problem (a server restarted on purpose)
  // A warning line starting so (the server under test failed) is counted apart: no problem where
  // that server is seen to have started again (its stalled transport, receive_probe.hpp).
  std::string under_test_warning;
};

struct RoutineTotals {
  uint64_t calls = 0, wrong = 0, failed = 0;
  double worst = 0;  // the largest error over tolerance
  uint64_t remote = 0, local = 0, fell_back = 0;  // as the runtime's exit reports count them
};

struct SoakTotals {
  RoutineTotals routines[soak::kRoutineCount];
  uint64_t processes = 0;  // started
  uint64_t killed = 0;     // on purpose (kill_percent): not a problem; what they recorded counts
  uint64_t expected_warnings = 0;  // a restarted server's failure noticed (expected_warning)
  uint64_t under_test_warnings = 0;  // the server under test's failure noticed (under_test_warning)
  uint64_t clean = 0;      // ended with status 0, a final record, no warning and nothing run locally
  uint64_t problems = 0;   // the others (each also counted as a failure)
  uint64_t opencl_kernels = 0;
  int opencl_platforms = -1;  // as the processes found them; -1: none looked
  std::map<std::string, uint64_t> messages;  // wrong results and failures, by text

  uint64_t calls() const;
  uint64_t wrong() const;
  // Failed calls, calls run locally or fallen back, and process problems.
  uint64_t failures() const;
};

class SoakClients {
 public:
  explicit SoakClients(SoakOptions o);
  ~SoakClients();  // kills any process still running
  SoakClients(const SoakClients&) = delete;
  SoakClients& operator=(const SoakClients&) = delete;

  // Starts every slot's first process and releases them at once; the run ends at `end_ns`
  // (now_ns's clock).
  void start(uint64_t end_ns);
  // Folds in the records that arrive and the processes that end within `timeout_ms`.
  void poll(int timeout_ms);
  size_t running() const;
  // Ends the processes still running (past the grace period); each is a problem.
  void kill_all(const std::string& why);
  const SoakTotals& totals() const { return t_; }

 private:
  struct Slot {
    pid_t pid = -1;
    int generation = 0;
    bool last_record = false;
    uint64_t kill_at_ns = 0;  // 0: lives out its life
    bool killed = false;
    std::string log;
  };
  void spawn(int slot, int release_fd);
  void drain();
  void ended(int slot, int status);
  void replace(int slot);  // the slot's process has ended: a fresh one while the run has time left
  void note(const std::string& text);

  SoakOptions o_;
  std::vector<Slot> slots_;
  int results_[2] = {-1, -1};
  uint64_t end_ns_ = 0;
  std::string self_, client_;
  SoakTotals t_;
};

}  // namespace outboard::tool
