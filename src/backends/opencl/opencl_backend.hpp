// The OpenCL backend: forwards remote OpenCL sessions to the platforms the server host's ICD
// loader finds (PoCL, NVIDIA's OpenCL, ...). Outboard's own ICD is kept out of the server's
// platform list (OUTBOARD_ICD_DISABLE, set before the loader is first asked).
#pragma once
#include <memory>

#include "server/backend.hpp"
#include "server/services/opencl_executor.hpp"

namespace outboard::backends {

// Serves server::ClExecutor. Returns nullptr (with `why` set) when the host has no OpenCL platform.
// `gpu_platforms_only`: only the platforms with a GPU (a server process per GPU shows the CPU
// platforms once, in its first worker).
std::unique_ptr<server::Backend> make_opencl_backend(std::string& why, bool gpu_platforms_only = false);

}  // namespace outboard::backends
