// A guard against a UCX bug that aborts a process which accepts and closes connections: a stale
// socket event handed to the next connection that gets the same file descriptor.
//
// UCX's asynchronous thread takes a socket's event; when the worker's lock is held at that moment
// (the program is inside ucp_worker_progress or closing an endpoint), it queues the event as
// "missed" under the socket's fd, and the next ucp_worker_progress hands it to whatever handler is
// registered for that fd *then*. A connection closed in between frees its fd; the kernel gives the
// same number to the next connection accepted; the queued write event reaches the new connection
// before it asked to write, and UCX 1.13's TCP connection manager aborts the process on an
// assertion (`tcp_sockcm_ep.c:416`, uct_tcp_sockcm_ep_progress_send). Measured: a server that
// closes one connection and accepts the next, 60 times, aborted in 16 of 40 runs on a 2-core
// Debian 12 machine (Transport.NothingIsKeptPerConnectionOnceItIsGone; UCX_LOG_LEVEL=trace shows
// "async handler [id=33] not found", then the new endpoint on fd 33, then the abort).
//
// UCX fixed it in May 2026 (openucx/ucx#11458, after 1.20): a missed event is masked with the
// events the handler is registered for now. Debian 12 has 1.13.1. This file gives the connection
// manager's handler the same mask: it defines uct_tcp_sa_data_handler, ucs_async_set_event_handler,
// ucs_async_modify_handler and ucs_async_remove_handler with UCX's own signatures, so that libuct's
// references bind to them first (its handler address is a GLOB_DAT relocation and its calls into
// libucs are PLT calls, both resolved through the global scope, where the program and the libraries
// it loads before UCX come first). The three libucs wrappers record, per fd, the events asked for
// whenever the handler is the connection manager's, and pass every call on; the handler wrapper
// drops the events not asked for and passes the rest on. Where UCX is bound before these
// definitions are seen (a copy of UCX loaded with dlmopen, ucx.hpp), nothing changes.
//
// The definitions must be in the dynamic symbol table: transport/CMakeLists.txt exports them from
// every executable that links the transport; shared libraries list them in their version scripts.
#pragma once
#include <cstdint>

namespace outboard::transport::stale_socket_events {

struct Counts {
  uint64_t guarded = 0;  // connection-manager handlers registered through the guard
  uint64_t dropped = 0;  // events dropped as stale (in part or whole)
};

// What the guard has done in this process; guarded == 0 once a connection was made means UCX is
// not bound to it (a build that does not export the definitions).
Counts counts();

}  // namespace outboard::transport::stale_socket_events
