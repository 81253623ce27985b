// One call's blocks spread over several devices: the blocks of result piece i run on device i mod
// N, each device copying the input as it arrives and computing its own blocks. Only plans whose
// pieces do not depend on each other are spread (independent_pieces). Every device receives all of the
// input (each has its own host link, far faster than the network); tiling a call that does not fit
// one device's memory is not done (see docs/servers.md, "Pipelined calls").
#pragma once
#include <memory>
#include <vector>

#include "server/pipeline.hpp"
#include "server/services/blas3_executor.hpp"

namespace outboard::server {

// nullptr when fewer than two devices would get blocks, the pieces depend on each other, or a
// device declines (busy).
std::unique_ptr<Pipeline> make_spread_pipeline(const std::vector<Blas3Executor*>& devices, const Plan& plan,
                                               std::byte* staging);

}  // namespace outboard::server
