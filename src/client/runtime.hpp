// The runtime every shim uses: decides local or remote, moves the matrices, and falls back to
// local execution when the remote path fails. Created lazily at the first call that may go
// remote; one per process (liboutboard-client.so, which every shim links), shared by all threads
// and all shims.
#pragma once
#include <cstdint>
#include <string_view>

#include "client/export.hpp"
#include "wire/lapack.hpp"
#include "wire/level3.hpp"

namespace outboard::client {

// A column-major matrix in the application's memory.
struct MatrixRef {
  const void* data;
  int64_t ld;  // leading dimension in elements
};

// Runs a Level-3 call on this process's own BLAS: the shim's way to compute a block of a call that
// was spread over several servers (split_level3) when no server could run that block.
using LocalLevel3 = void (*)(const wire::Level3Call& call, const MatrixRef* inputs, MatrixRef output);

// Offers a valid Level-3 call (argument checking is the caller's job). `inputs` follow
// wire::layout(call).inputs without the output matrix; `output` is the matrix updated in place.
// Returns true when the call ran remotely and `output` holds the result; false when the caller
// must run it locally (too small, offload off, or the remote path failed and fallback is
// allowed: a warning was printed). Never throws; with OUTBOARD_FALLBACK=fail a remote failure ends
// the process with a message. With `local`, a large GEMM may be spread over several servers
// (OUTBOARD_SPLIT_SERVERS), and a block of it that no server could run is computed by `local`.
OUTBOARD_CLIENT_API bool offload_level3(wire::Level3Call call, const MatrixRef* inputs, MatrixRef output,
                                        LocalLevel3 local = nullptr) noexcept;

// Offers a valid LAPACK call (argument checking, quick returns and workspace queries are the
// caller's job). `inputs` and `outputs` follow wire::layout(call): each array in the application's
// memory with its leading dimension (vectors: their length); an output updated in place is the same
// memory as its input. Returns true when the call ran remotely: the outputs are written and *info
// holds LAPACK's INFO. False: the caller must run the real LAPACK (nothing was written), as for
// offload_level3. Never throws.
OUTBOARD_CLIENT_API bool offload_lapack(const wire::LapackCall& call, const MatrixRef* inputs, const MatrixRef* outputs,
                                        int64_t* info) noexcept;

// Whether a call of `flops` floating-point operations may go remote at all under the offload
// policy: a cheap first test, so small calls reach the local BLAS with little added cost.
OUTBOARD_CLIENT_API bool offload_considered(double flops) noexcept;

// Times the real routine's run of a call the cost model kept here (OUTBOARD_OFFLOAD=auto), so the
// model learns this machine's rate: a shim holds one around each call of a real routine named
// `function` (nullptr: any). Nothing is timed unless the model just kept a call of that name's
// family local on this thread.
class OUTBOARD_CLIENT_API LocalTiming {
 public:
  explicit LocalTiming(const char* function) noexcept;
  ~LocalTiming();
  LocalTiming(const LocalTiming&) = delete;
  LocalTiming& operator=(const LocalTiming&) = delete;
  // The model kept a call of `family` and `flops` here (Runtime::wants_remote).
  static void expect(std::string_view family, double flops) noexcept;

 private:
  char family_[24] = {};
  double flops_ = 0;
  uint64_t start_ns_ = 0;
};

}  // namespace outboard::client
