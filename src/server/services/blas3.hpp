// The Level-3 BLAS service: wire::Blas3Call (whole calls) and wire::CallChunk (pipelined calls).
// A call runs on the host or on a GPU as the cost model (cost_model.hpp) says; a pipelined call
// on several GPUs has its blocks spread over them (spread_pipeline.hpp).
#pragma once
#include <memory>

#include "server/services/service.hpp"

namespace outboard::server {

// Throws Error when no backend serves Level-3 BLAS.
std::unique_ptr<Service> make_blas3_service(Core& core);

}  // namespace outboard::server
