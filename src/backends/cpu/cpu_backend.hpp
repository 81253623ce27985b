// The CPU executor: the server host's OpenBLAS.
#pragma once
#include <memory>

#include "server/backend.hpp"
#include "backends/cpu/cpu_fft.hpp"
#include "server/services/blas3_executor.hpp"
#include "server/services/lapack_executor.hpp"

namespace outboard::backends {

// Serves Level-3 BLAS (server::Blas3Executor), LAPACK (server::LapackExecutor) and FFTs
// (server::FftExecutor: FFTW, cpu_fft.hpp).
std::unique_ptr<server::Backend> make_cpu_backend(const CpuFftOptions& fft = {});

// LAPACK on the host's OpenBLAS, as server::LapackExecutor::lapack() describes (cpu_lapack.cpp).
int64_t cpu_lapack(const wire::LapackCall& call, std::span<const std::byte* const> inputs,
                   std::span<std::byte* const> outputs);

}  // namespace outboard::backends
