// The OpenCL service: remote OpenCL sessions (wire/opencl.hpp) on the platforms of the server's
// OpenCL backend. Each session gets a thread of its own that runs its operations in the order they
// came (OpenCL's order within a queue, and the order of object creation and use); commands are
// enqueued without waiting, so the device stays busy while the thread goes on, and sessions never
// wait for each other (no lock is shared between them). A session's objects are released when it
// ends, however it ends.
#pragma once
#include <memory>

#include "server/services/service.hpp"

namespace outboard::server {

// Null when no backend serves OpenCL (the host has no platform): the server runs without it.
std::unique_ptr<Service> make_opencl_service(Core& core);

}  // namespace outboard::server
