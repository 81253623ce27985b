// What the server needs from a backend (src/backends/*): what every backend shares, and its
// executors, one interface per API family (services/*_executor.hpp). The daemon hands the server
// the backends it could load; a service asks each for its family's executor.
#pragma once
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <typeindex>
#include <unordered_map>

#include "common/error.hpp"
#include "transport/buffer.hpp"

namespace outboard::server {

// Where a device backend's time went in one call (host-only backends leave it zero).
struct DeviceTiming {
  uint64_t to_device_ns = 0, compute_ns = 0, from_device_ns = 0;
};

// A call failed because its device faulted (its context poisoned: backends/cuda/gpu_health.hpp);
// the device is out of service until it is rebuilt. `rerunnable`: the call's inputs are as they
// were, so the service may run it again on another device or the host.
class DeviceFault : public Error {
 public:
  DeviceFault(const std::string& what, bool rerunnable) : Error(what), rerunnable(rerunnable) {}
  bool rerunnable;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  // Devices and libraries, for `outboard status`.
  virtual nlohmann::json describe() const = 0;
  // Where this backend's operands are best received: page-locked memory for a GPU (full-speed
  // copies), or nullptr for ordinary memory.
  virtual const transport::HostAllocator* staging() const { return nullptr; }

  // Device memory, for the data-path benchmark (`outboard bench remote`): copies `bytes` from host
  // memory into the device and, when `back` is given, from the device into `back`. Returns the
  // nanoseconds spent. Thread-safe. Backends without device memory throw Error.
  virtual bool has_device_memory() const { return false; }
  // Device memory free now (0: no device, or unknown). Cheap enough for a periodic sample.
  virtual uint64_t free_device_bytes() const { return 0; }
  // Whether the device serves (not out of service after a fault) and its faults so far, for
  // placement and metrics (host backends have none).
  struct Health {
    bool in_service = true;
    uint64_t faults = 0, recoveries = 0;
  };
  virtual Health health() const { return {}; }
  // False while the device is out of service after a fault: services place no call on it.
  bool in_service() const { return health().in_service; }
  virtual uint64_t device_round_trip(const std::byte* in, std::byte* back, size_t bytes);

  // This backend's executor of an API family (Blas3Executor, LapackExecutor, ...), or nullptr
  // where it does not serve that family. A table, so a new family needs no change here.
  template <class Executor>
  Executor* executor() const {
    auto it = executors_.find(std::type_index(typeid(Executor)));
    return it == executors_.end() ? nullptr : static_cast<Executor*>(it->second);
  }

 protected:
  // Called by the backend's constructor for each family it serves; `e` lives as long as it does.
  template <class Executor>
  void provide(Executor* e) {
    executors_[std::type_index(typeid(Executor))] = e;
  }

 private:
  std::unordered_map<std::type_index, void*> executors_;
};

inline uint64_t Backend::device_round_trip(const std::byte*, std::byte*, size_t) {
  throw Error(name() + " backend has no device memory");
}

}  // namespace outboard::server
