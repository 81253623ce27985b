// The server's GPU executor, through the CUDA plugin. So far it moves data into and out of GPU
// memory (the data path that `outboard bench remote` measures); Level-3 BLAS on cuBLAS comes next.
#pragma once
#include <memory>
#include <string>

#include "server/backend.hpp"

namespace outboard::backends {

// nullptr, with the reason in `why`, where no CUDA device can be used.
std::unique_ptr<server::Backend> make_cuda_backend(std::string& why, int device = 0);

}  // namespace outboard::backends
