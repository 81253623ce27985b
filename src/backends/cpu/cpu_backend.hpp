// The CPU executor: the server host's OpenBLAS.
#pragma once
#include <memory>

#include "server/backend.hpp"

namespace outboard::backends {

std::unique_ptr<server::Backend> make_cpu_backend();

}  // namespace outboard::backends
