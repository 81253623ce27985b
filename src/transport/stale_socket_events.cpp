// The stale socket event guard (stale_socket_events.hpp says what and why).
#include "transport/stale_socket_events.hpp"

#include <dlfcn.h>
#include <ucs/async/async_fwd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>

extern "C" void uct_tcp_sa_data_handler(int fd, ucs_event_set_types_t events, void* arg);

namespace outboard::transport::stale_socket_events {
namespace {

// Per fd: kTracked when the connection manager's handler is registered for it, plus the events
// it asked for. Lock-free, because UCX may call its handlers where a lock could not be taken.
// Fds from kMaxFd up are not tracked: their events pass unchanged, as without the guard.
constexpr int kMaxFd = 1 << 16;
constexpr uint16_t kTracked = 0x100;
std::atomic<uint16_t> registered[kMaxFd];
std::atomic<uint64_t> guarded{0}, dropped{0};

bool trackable(int fd) { return fd >= 0 && fd < kMaxFd; }

// The definition the program would have bound without the guard: the next one after ours.
template <class F>
F next_definition(const char* name) {
  void* p = dlsym(RTLD_NEXT, name);
  if (!p) {
    std::fprintf(stderr, "outboard: UCX calls %s, but no definition of it follows Outboard's (%s)\n", name, dlerror());
    std::abort();
  }
  return reinterpret_cast<F>(p);
}

}  // namespace

Counts counts() { return {guarded.load(), dropped.load()}; }

}  // namespace outboard::transport::stale_socket_events

namespace guard = outboard::transport::stale_socket_events;

extern "C" {

__attribute__((visibility("default"))) void uct_tcp_sa_data_handler(int fd, ucs_event_set_types_t events, void* arg) {
  static const auto real = guard::next_definition<void (*)(int, ucs_event_set_types_t, void*)>("uct_tcp_sa_data_handler");
  if (guard::trackable(fd)) {
    const uint16_t r = guard::registered[fd].load(std::memory_order_acquire);
    if (r & guard::kTracked) {
      const auto wanted = static_cast<ucs_event_set_types_t>(events & r);
      if (wanted != events) guard::dropped.fetch_add(1, std::memory_order_relaxed);
      if (wanted == 0) return;
      events = wanted;
    }
  }
  real(fd, events, arg);
}

__attribute__((visibility("default"))) ucs_status_t ucs_async_set_event_handler(ucs_async_mode_t mode, int event_fd,
                                                                                ucs_event_set_types_t events,
                                                                                ucs_async_event_cb_t cb, void* arg,
                                                                                ucs_async_context_t* async) {
  static const auto real = guard::next_definition<decltype(&ucs_async_set_event_handler)>("ucs_async_set_event_handler");
  const bool ours = cb == &uct_tcp_sa_data_handler && guard::trackable(event_fd);
  // Recorded before UCX can deliver an event for the handler.
  if (guard::trackable(event_fd))
    guard::registered[event_fd].store(ours ? static_cast<uint16_t>(guard::kTracked | events) : 0, std::memory_order_release);
  const ucs_status_t status = real(mode, event_fd, events, cb, arg, async);
  if (ours && status != UCS_OK) guard::registered[event_fd].store(0, std::memory_order_release);
  if (ours && status == UCS_OK) guard::guarded.fetch_add(1, std::memory_order_relaxed);
  return status;
}

__attribute__((visibility("default"))) ucs_status_t ucs_async_modify_handler(int fd, ucs_event_set_types_t events) {
  static const auto real = guard::next_definition<decltype(&ucs_async_modify_handler)>("ucs_async_modify_handler");
  if (guard::trackable(fd)) {
    uint16_t r = guard::registered[fd].load(std::memory_order_acquire);
    while ((r & guard::kTracked) &&
           !guard::registered[fd].compare_exchange_weak(r, static_cast<uint16_t>(guard::kTracked | events),
                                                        std::memory_order_acq_rel)) {
    }
  }
  return real(fd, events);
}

__attribute__((visibility("default"))) ucs_status_t ucs_async_remove_handler(int id, int sync) {
  static const auto real = guard::next_definition<decltype(&ucs_async_remove_handler)>("ucs_async_remove_handler");
  // Before UCX lets go of it: once it has, the fd may be closed and given to a new connection
  // whose registration must not be undone here.
  if (guard::trackable(id)) guard::registered[id].store(0, std::memory_order_release);
  return real(id, sync);
}

}  // extern "C"
