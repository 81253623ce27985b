// The runtime every shim uses: decides local or remote, moves the matrices, and falls back to
// local execution when the remote path fails. Created lazily at the first call that may go
// remote; shared by all threads of the process.
#pragma once
#include <cstdint>

#include "wire/level3.hpp"

namespace outboard::client {

// A column-major matrix in the application's memory.
struct MatrixRef {
  const void* data;
  int64_t ld;  // leading dimension in elements
};

// Offers a valid Level-3 call (argument checking is the caller's job). `inputs` follow
// wire::layout(call).inputs without the output matrix; `output` is the matrix updated in place.
// Returns true when the call ran remotely and `output` holds the result; false when the caller
// must run it locally (too small, offload off, or the remote path failed and fallback is
// allowed: a warning was printed). Never throws; with OUTBOARD_FALLBACK=fail a remote failure ends
// the process with a message.
bool offload_level3(wire::Level3Call call, const MatrixRef* inputs, MatrixRef output) noexcept;

// Whether a call of `flops` floating-point operations may go remote at all under the offload
// policy: a cheap first test, so small calls reach the local BLAS with little added cost.
bool offload_considered(double flops) noexcept;

}  // namespace outboard::client
