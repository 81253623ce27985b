// Notices a native OpenCL call that does not return. On the H200 host NVIDIA's OpenCL hung inside
// clEnqueueWriteBuffer on a session's thread, and from then on every later session on that
// platform hung at its first calls, with nothing said (issue 36, bench/results/h200/link/cl-lanes).
// A hung native call cannot be interrupted; what the server can do is say so and keep new work
// away from the platform: each session's thread marks the operation it runs and on which platform;
// a monitor thread finds one that has run longer than the session's patience, logs it
// (opencl.stuck), shows it in the status, and while it lasts new contexts, queues and commands on
// that platform fail with CL_OUT_OF_RESOURCES instead of joining the hang. When the call returns,
// the platform serves again (opencl.unstuck).
// Not watched: program builds (they may take minutes) and a session's end (its clFinish waits for
// the client's kernels).
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "wire/opencl.hpp"

namespace outboard::backends::opencl {

class NativeWatch {
 public:
  // A session's marks; its thread writes them, the monitor reads them.
  struct Slot {
    std::atomic<uint64_t> since_ns{0};  // when the running operation began (0: none running)
    std::atomic<const char*> op{""};     // its name (wire::op_name: static)
    std::atomic<wire::ClId> platform{0};  // its platform, once known (0: not known)
    uint64_t patience_ns = 0;             // 0: not watched
    uint64_t session = 0;                 // a serial, for the log
    uint64_t reported_since = 0;          // the monitor's: the stuck call already logged
  };

  // Marks `slot` as running `op` for a scope (not watched where `watched` is false).
  class Running {
   public:
    Running(Slot& slot, const char* op, bool watched);
    ~Running();
    Running(const Running&) = delete;
    Running& operator=(const Running&) = delete;

   private:
    Slot& slot_;
  };

  // An operation running longer than its session's patience.
  struct Stuck {
    wire::ClId platform = 0;  // 0: not known
    std::string operation;
    uint64_t session = 0;
    double seconds = 0;
    uint64_t since_ns = 0;  // when it began (now_ns)
  };

  // `platform_names[i]` names platform id i+1 (for the log and the errors).
  explicit NativeWatch(std::vector<std::string> platform_names);
  ~NativeWatch();

  // A new session's slot; `patience`: how long an operation may run (0: never counted as stuck).
  std::shared_ptr<Slot> open(std::chrono::milliseconds patience);

  // The operations stuck now, oldest first.
  std::vector<Stuck> stuck() const;

  // Whether new work on `platform` is refused now (one atomic load: on every command's path).
  bool refusing(wire::ClId platform) const {
    return platform != 0 && platform <= refusing_.size() && refusing_[platform - 1].load(std::memory_order_relaxed);
  }
  // The refusal's text: which operation on which platform has not returned, and since when.
  std::string refusal(wire::ClId platform) const;

  // Scans the slots once (the monitor thread's step; tests call it directly).
  void scan();

  // The name of platform id `platform` ("" where there is none).
  std::string platform_name(wire::ClId platform) const;

 private:
  // The operations running past their patience now, oldest first, with their slots (under mu_).
  std::vector<std::pair<std::shared_ptr<Slot>, Stuck>> collect() const;
  void monitor();

  const std::vector<std::string> names_;
  struct Flags {  // [i]: platform i+1 is refused (atomics cannot live in a resizable vector)
    explicit Flags(size_t n) : flags(new std::atomic<bool>[n]), n(n) {
      for (size_t i = 0; i < n; ++i) flags[i] = false;
    }
    std::unique_ptr<std::atomic<bool>[]> flags;
    size_t n;
    size_t size() const { return n; }
    std::atomic<bool>& operator[](size_t i) const { return flags[i]; }
  } refusing_;

  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::vector<std::weak_ptr<Slot>> slots_;
  std::unordered_map<wire::ClId, Stuck> held_;  // per platform: what stalls it (the refusal's text)
  uint64_t next_session_ = 1;
  bool stop_ = false;
  std::thread thread_;
};

// OUTBOARD_TEST_CL_STALL=OP@N:SECONDS (tests only): the Nth operation named OP (wire::op_name,
// counted over the server's sessions) sleeps SECONDS inside its watched scope, once its platform is
// known and before its native call, as a native call that does not return would.
void test_stall(const char* op);

}  // namespace outboard::backends::opencl
