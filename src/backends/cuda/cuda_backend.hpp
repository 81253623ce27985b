// The server's GPU executor, through the CUDA plugin: Level-3 BLAS on cuBLAS (operands copied in
// and out per call; pipelined transfers are still to come), and the device transfers that
// `outboard bench remote` measures.
#pragma once
#include <memory>
#include <string>

#include "server/backend.hpp"

namespace outboard::backends {

// nullptr, with the reason in `why`, where no CUDA device can be used.
std::unique_ptr<server::Backend> make_cuda_backend(std::string& why, int device = 0);

}  // namespace outboard::backends
