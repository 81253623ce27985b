// What the blas3 service needs from a backend that serves Level-3 BLAS (Backend::executor).
#pragma once
#include <cstddef>
#include <memory>
#include <span>

#include "server/backend.hpp"
#include "server/pipeline.hpp"
#include "wire/level3.hpp"

namespace outboard::server {

class Blas3Executor {
 public:
  virtual ~Blas3Executor() = default;
  // Runs a validated call on column-major operands with leading dimensions `ld` (0: packed,
  // leading dimension = rows): `inputs` in wire::layout(call).inputs order; `output` is updated in
  // place (when the output's values were sent it is the same memory as the last input). Throws
  // Error on failure.
  virtual DeviceTiming level3(const wire::Level3Call& call, std::span<const std::byte* const> inputs,
                              std::byte* output, const LeadingDims& ld) = 0;
  // Densely packed operands.
  DeviceTiming level3(const wire::Level3Call& call, std::span<const std::byte* const> inputs, std::byte* output) {
    return level3(call, inputs, output, LeadingDims{});
  }
  // A pipelined run of `plan` whose input arrives in `staging` (see pipeline.hpp), for executors
  // that overlap their own copies with the arrival; nullptr (the default, or while busy): the
  // service runs the plan's blocks with level3() on the compute threads.
  virtual std::unique_ptr<Pipeline> pipeline(const Plan&, std::byte* /*staging*/) { return nullptr; }
};

}  // namespace outboard::server
