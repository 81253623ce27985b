// A GPU as a unit of failure. A sticky CUDA error (an illegal address, a trap, an uncorrectable
// ECC error) poisons the GPU's whole context: every later call on it fails. GpuHealth notices it
// (after any failed call it asks the plugin whether the context still runs work), takes the GPU
// out of service so no new work starts there, and once the work that was running on it has
// ended (each holds a Use) rebuilds it on a thread of its own: the backend drops what it made on
// the GPU, resets it and makes its state again. A GPU that cannot be rebuilt stays out.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "backends/cuda/loader.hpp"
#include "common/error.hpp"
#include "server/backend.hpp"
#include "server/pipeline.hpp"

namespace outboard::backends {

class GpuHealth {
 public:
  enum class State { serving, faulted, rebuilding, out };

  // rebuild: run on the health thread once the GPU is faulted and idle; throws where the GPU
  // cannot be made to serve again. lost: told why, where it cannot (may be empty). fault_at
  // (tests only): the Nth use from now (1 = the next) first poisons the GPU with a trapping
  // kernel; 0: never.
  GpuHealth(const cuda::CudaPlugin& plugin, int device, std::function<void()> rebuild,
            std::function<void(const std::string&)> lost, uint64_t fault_at = 0);
  ~GpuHealth();
  GpuHealth(const GpuHealth&) = delete;
  GpuHealth& operator=(const GpuHealth&) = delete;

  // Work on the GPU holds one while it runs. Throws server::DeviceFault where the GPU is out of
  // service.
  using Use = std::shared_ptr<void>;
  Use enter();

  // Runs `work` on the GPU holding a Use; a failure goes through failed() (`rerunnable` as there).
  template <class F>
  auto guard(bool rerunnable, F&& work) -> decltype(work()) {
    Use use = enter();
    try {
      return work();
    } catch (const std::exception& e) {
      failed(e, rerunnable);
    }
  }
  // The pipeline `make` returns (nullptr: none free), watched for as long as it lives.
  template <class F>
  std::unique_ptr<server::Pipeline> guard_pipeline(F&& make);

  // After an operation on the GPU threw `e`: where the GPU's context is poisoned, the GPU goes out
  // of service (the first fault's reason is kept) and a server::DeviceFault takes e's place;
  // otherwise e is rethrown as it is. `rerunnable`: whether the operation left its inputs as they
  // were, so the call may run again elsewhere. Never returns.
  [[noreturn]] void failed(const std::exception& e, bool rerunnable);

  bool serving() const;
  server::Backend::Health counts() const;
  // state, uses (work started on the GPU), reason of the last fault, faults, recoveries, last
  // rebuild's seconds.
  nlohmann::json describe() const;

 private:
  void leave();
  void run();
  void inject_fault();

  const cuda::CudaPlugin& plugin_;
  const int device_;
  std::function<void()> rebuild_;
  std::function<void(const std::string&)> lost_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  State state_ = State::serving;
  int64_t uses_ = 0;
  uint64_t entered_ = 0, fault_at_ = 0;
  uint64_t faults_ = 0, recoveries_ = 0, rebuild_ns_ = 0;
  std::string reason_;
  bool stop_ = false;
  std::thread thread_;  // last: starts once everything above exists
};

// A pipeline on a GPU that holds the GPU's Use while it lives and reports a poisoned context
// through GpuHealth::failed.
std::unique_ptr<server::Pipeline> watched(std::unique_ptr<server::Pipeline> pipe, GpuHealth& health, GpuHealth::Use use);

template <class F>
std::unique_ptr<server::Pipeline> GpuHealth::guard_pipeline(F&& make) {
  Use use = enter();
  try {
    return watched(make(), *this, use);
  } catch (const std::exception& e) {
    failed(e, false);
  }
}

}  // namespace outboard::backends
