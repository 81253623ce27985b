// The LAPACK service: wire::LapackRequest (whole calls), wire::LapackChunk (pipelined calls) and
// wire::DirectLapack (the direct path). Large calls run on a GPU that serves their shape, the
// rest on the host.
#pragma once
#include <memory>

#include "server/services/service.hpp"

namespace outboard::server {

std::unique_ptr<Service> make_lapack_service(Core& core);

}  // namespace outboard::server
