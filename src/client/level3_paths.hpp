// The ways a Level-3 call runs remotely, as blas3.cpp (one server) and level3_split.cpp (a large
// GEMM spread over several servers) share them.
#pragma once
#include <memory>
#include <optional>
#include <string>

#include "client/runtime_internal.hpp"
#include "wire/level3.hpp"

namespace outboard::client {

// One attempt at a validated call (layout `l`) on the server of `conn`: whole, in chunks, or on
// the direct path. True when it ran there and `output` holds the result; otherwise
// fall_back(why), with `output` as it was.
bool level3_on(Runtime& rt, const std::shared_ptr<Connection>& conn, const FallBack& fall_back,
               const wire::Level3Call& call, const wire::Layout& l, const MatrixRef* inputs, MatrixRef output,
               const std::string& name);

// A large GEMM spread over several idle servers (the workers of a host's GPUs, or several
// servers): C's columns dealt out in blocks, one block's call per server, all at once; a block no
// server could run is computed by `local`. nullopt when the call is not spread (not a GEMM, below
// OUTBOARD_SPLIT_FLOPS, no `local`, or fewer than two idle servers): the caller goes on as usual.
std::optional<bool> split_level3(Runtime& rt, const wire::Level3Call& call, const MatrixRef* inputs, MatrixRef output,
                                 LocalLevel3 local, const std::string& name);

}  // namespace outboard::client
