// What liboutboard-client.so exports: it is built with hidden visibility, and only the
// declarations marked OUTBOARD_CLIENT_API (runtime.hpp, fft.hpp) are visible to the shims that
// link it. Everything else in it (the runtime core, the transport, UCX, libsodium) stays inside.
#pragma once

#define OUTBOARD_CLIENT_API __attribute__((visibility("default")))
