// The UCX entry points the transport calls, as one instance of the UCX libraries provides them.
// Private to src/transport. Every UCX object (a Worker's context, CopyLanes' context, a
// Registration) keeps the instance that made it and is only ever handled through it.
//
// Why there may be more than one instance in a process: fork(). UCX keeps process-wide state
// in its libraries (libucs): above all one thread for asynchronous events (connection set-up,
// socket and shared-memory wake-ups), with its epoll set and wake-up pipe, started by the first
// context that needs it and counted by every one since. fork() copies that state but not the
// thread. A context made in the child finds the count above zero, takes the thread as running,
// and adds its sockets to the inherited epoll set, which is the very same kernel object as the
// parent's: the events of the child's connection wake the *parent's* thread (which finds no
// handler of its own for them and, the events being level-triggered, spins on them), nothing in
// the child ever handles them, and the connection never gets past its first step (measured with
// UCX 1.13: the child's connect() got EINPROGRESS, its socket went into the parent's epoll set,
// the parent's async thread woke 33,000 times (under strace) in the 5 s the child waited for
// an answer, and the server never saw the client). Tearing the inherited objects down in the
// child is no way out: their endpoints' sockets are in that shared epoll set, and removing them
// there removes them for the parent too. UCX has no call that resets its process-wide state,
// and its maintainers support no UCX use in a child after fork.
//
// So a process forked after its parent (or an earlier ancestor) made a UCX context gets a fresh
// instance of the libraries: loaded with dlmopen() into a link-map namespace of its own, they
// bring their own process-wide state (async thread, handler tables, locks, configuration), and
// the C library they run on. Nothing of the inherited instance is called in the child; its
// objects are left as they are (leaked). See ucx.cpp.
#pragma once
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <ucp/api/ucp.h>
#include <unistd.h>

namespace outboard::transport {

#define OUTBOARD_UCX_FUNCTIONS(X)                                                                                   \
  X(ucp_config_read) X(ucp_config_release) X(ucp_config_modify) X(ucp_init_version) X(ucp_cleanup)                 \
  X(ucp_worker_create) X(ucp_worker_destroy) X(ucp_worker_get_efd) X(ucp_worker_arm) X(ucp_worker_progress)        \
  X(ucp_worker_get_address) X(ucp_worker_release_address) X(ucp_worker_set_am_recv_handler)                        \
  X(ucp_listener_create) X(ucp_listener_destroy) X(ucp_listener_query) X(ucp_listener_reject)                      \
  X(ucp_conn_request_query)                                                                                          \
  X(ucp_ep_create) X(ucp_ep_close_nbx) X(ucp_ep_flush_nbx) X(ucp_ep_print_info) X(ucp_ep_rkey_unpack)              \
  X(ucp_ep_query)                                                                                                    \
  X(ucp_am_send_nbx) X(ucp_am_recv_data_nbx) X(ucp_am_data_release) X(ucp_get_nbx) X(ucp_put_nbx) X(ucp_request_check_status)             \
  X(ucp_request_free) X(ucp_mem_map) X(ucp_mem_unmap) X(ucp_rkey_pack) X(ucp_rkey_buffer_release)                  \
  X(ucp_rkey_destroy) X(ucs_status_string)

struct Ucx {
#define OUTBOARD_UCX_MEMBER(f) decltype(&::f) f = nullptr;
  OUTBOARD_UCX_FUNCTIONS(OUTBOARD_UCX_MEMBER)
#undef OUTBOARD_UCX_MEMBER
  // The C library the instance runs on (a fresh instance has one of its own, with its own
  // environment and stdio): for its settings and for the streams it prints to.
  decltype(&::setenv) setenv = nullptr;
  decltype(&::open_memstream) open_memstream = nullptr;
  decltype(&::fclose) fclose = nullptr;
  decltype(&::free) free = nullptr;
  // 0: the libraries the program linked; n: the copy loaded by the n-th process of a line of
  // forks since UCX was first used.
  unsigned generation = 0;

  ucs_status_t init(const ucp_params_t* params, const ucp_config_t* config, ucp_context_h* context) const {
    return ucp_init_version(UCP_API_MAJOR, UCP_API_MINOR, params, config, context);
  }
  // Sets UCX_<name> in the instance's environment, where the user has not (read by the
  // instance's next ucp_config_read).
  void default_setting(const char* name, const char* value) const;
};

// The instance with which to make a new UCX context in this process, marked as used by it: the
// linked libraries, unless a process this one was forked from made a context with them (or
// with the instance this process inherited), then a fresh copy loaded for this process (once;
// later contexts of this process share it). Thread-safe. Throws Error when no fresh copy can be
// loaded (dlmopen's reason: the namespaces or the static TLS space of the C library may run out
// after many generations of forks).
const Ucx& ucx_for_new_context();

// Outboard's UCX defaults (peer-failure handling with shared memory, no TCP put, port reuse) put
// into the instance's environment where the user has not set them; every Worker does it first.
// setenv() may move the environment while another thread reads it (getenv has no lock): a
// process that makes its first Worker on a thread of its own calls this first, while it has
// one thread (client/early_connect.cpp), so the Worker's own call changes nothing.
void prepare_environment(const Ucx& ucx);

// Whether this process made `owner` (a getpid() kept at creation): objects made by a process
// this one was forked from are neither used nor destroyed here.
inline bool made_here(pid_t owner) { return owner == getpid(); }

}  // namespace outboard::transport
