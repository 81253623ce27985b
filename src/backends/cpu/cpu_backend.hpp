// The CPU executor: the server host's OpenBLAS.
#pragma once
#include <memory>

#include "server/backend.hpp"

namespace outboard::backends {

std::unique_ptr<server::Backend> make_cpu_backend();

// LAPACK on the host's OpenBLAS, as server::Backend::lapack() describes (cpu_lapack.cpp).
int64_t cpu_lapack(const wire::LapackCall& call, std::span<const std::byte* const> inputs,
                   std::span<std::byte* const> outputs);

}  // namespace outboard::backends
