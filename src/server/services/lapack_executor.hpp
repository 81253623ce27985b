// What the lapack service needs from a backend that serves LAPACK (Backend::executor).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "server/backend.hpp"
#include "server/pipeline.hpp"
#include "wire/lapack.hpp"

namespace outboard::server {

struct LapackPlan;  // lapack_pipeline.hpp

class LapackExecutor {
 public:
  virtual ~LapackExecutor() = default;
  // Runs a validated LAPACK call (wire/lapack.hpp) on densely packed column-major arrays:
  // `inputs` in wire::layout(call).inputs order (read only); `outputs` in layout(call).outputs
  // order, those with from_input >= 0 already holding that input's values (updated in place).
  // Returns LAPACK's INFO (>= 0: the server never passes invalid arguments). Throws Error on failure.
  virtual int64_t lapack(const wire::LapackCall& call, std::span<const std::byte* const> inputs,
                         std::span<std::byte* const> outputs, DeviceTiming& timing) = 0;
  // A pipelined run of a LAPACK call whose input arrives in `staging` (lapack_pipeline.hpp), for
  // executors that copy it to their device as it arrives; nullptr (the default, or while busy):
  // the service runs lapack() on the compute threads once the input is in.
  virtual std::unique_ptr<Pipeline> lapack_pipeline(const LapackPlan&, std::byte* /*staging*/) { return nullptr; }
  // Whether lapack() serves this call (a device may leave some shapes to the host).
  virtual bool serves_lapack(const wire::LapackCall&) const { return true; }
};

}  // namespace outboard::server
