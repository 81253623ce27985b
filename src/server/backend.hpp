// What the server needs from an executor. Backends (src/backends/*) implement it; the daemon
// hands the server the backends it could load.
#pragma once
#include <cstddef>
#include <nlohmann/json.hpp>
#include <span>
#include <string>

#include "common/error.hpp"
#include "server/pipeline.hpp"
#include "transport/buffer.hpp"
#include "wire/lapack.hpp"
#include "wire/level3.hpp"

namespace outboard::server {

struct LapackPlan;  // lapack_pipeline.hpp

// Where a device backend's time went in one call (host-only backends leave it zero).
struct DeviceTiming {
  uint64_t to_device_ns = 0, compute_ns = 0, from_device_ns = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  // Devices and libraries, for `outboard status`.
  virtual nlohmann::json describe() const = 0;
  // Runs a validated call on densely packed column-major operands (leading dimension = rows):
  // `inputs` in wire::layout(call).inputs order; `output` is updated in place (when the output's
  // values were sent it is the same memory as the last input). Throws Error on failure.
  virtual DeviceTiming level3(const wire::Level3Call& call, std::span<const std::byte* const> inputs,
                              std::byte* output) = 0;
  // A pipelined run of `plan` whose input arrives in `staging` (see pipeline.hpp), for backends
  // that overlap their own copies with the arrival; nullptr (the default, or while busy): the
  // server runs the plan's blocks with level3() on its compute threads.
  virtual std::unique_ptr<Pipeline> pipeline(const Plan&, std::byte* /*staging*/) { return nullptr; }
  // Whether level3() serves calls (a device backend may only move data so far).
  virtual bool serves_level3() const { return true; }
  // Runs a validated LAPACK call (wire/lapack.hpp) on densely packed column-major arrays:
  // `inputs` in wire::layout(call).inputs order (read only); `outputs` in layout(call).outputs
  // order, those with from_input >= 0 already holding that input's values (updated in place).
  // Returns LAPACK's INFO (>= 0: the server never passes invalid arguments). Throws Error on failure.
  virtual int64_t lapack(const wire::LapackCall& call, std::span<const std::byte* const> inputs,
                         std::span<std::byte* const> outputs, DeviceTiming& timing);
  // A pipelined run of a LAPACK call whose input arrives in `staging` (lapack_pipeline.hpp), for
  // backends that copy it to their device as it arrives; nullptr (the default, or while busy):
  // the server runs lapack() on its compute threads once the input is in.
  virtual std::unique_ptr<Pipeline> lapack_pipeline(const LapackPlan&, std::byte* /*staging*/) { return nullptr; }
  // Whether lapack() serves this call (a device backend may leave some shapes to the CPU).
  virtual bool serves_lapack(const wire::LapackCall&) const { return false; }
  // Where this backend's operands are best received: page-locked memory for a GPU (full-speed
  // copies), or nullptr for ordinary memory.
  virtual const transport::HostAllocator* staging() const { return nullptr; }

  // Device memory, for the data-path benchmark (`outboard bench remote`): copies `bytes` from host
  // memory into the device and, when `back` is given, from the device into `back`. Returns the
  // nanoseconds spent. Thread-safe. Backends without device memory throw Error.
  virtual bool has_device_memory() const { return false; }
  virtual uint64_t device_round_trip(const std::byte* in, std::byte* back, size_t bytes);
};

inline int64_t Backend::lapack(const wire::LapackCall& call, std::span<const std::byte* const>,
                               std::span<std::byte* const>, DeviceTiming&) {
  throw Error(name() + " backend does not serve LAPACK (" + wire::call_name(call) + ")");
}

inline uint64_t Backend::device_round_trip(const std::byte*, std::byte*, size_t) {
  throw Error(name() + " backend has no device memory");
}

}  // namespace outboard::server
