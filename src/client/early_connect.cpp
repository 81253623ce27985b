// The first connection, made while the program starts rather than in its first remote call
// (connecting, UCX's set-up, authenticating and the server's copy lanes took part of a first
// DGEMM's time on the H200 host). When liboutboard-client.so is loaded into a process that has a
// BLAS, LAPACK or FFTW library among its libraries, a thread connects in the background and asks
// for the copy lanes; the first call that needs them waits for that instead of doing it itself. Other processes (a shell or a
// compiler under `outboard run`, whose LD_PRELOAD reaches them too) connect at their first call,
// as before. OUTBOARD_CONNECT_EARLY=0 turns it off.
#include <link.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "client/runtime_internal.hpp"
#include "common/clock.hpp"
#include "transport/ucx.hpp"

namespace outboard::client {
namespace {

// Library names (the file name's start) whose presence says the program does numerical work.
bool numerical_library(const char* path) {
  const char* base = std::strrchr(path, '/');
  base = base ? base + 1 : path;
  for (const char* prefix : {"libblas", "libcblas", "liblapack", "libopenblas", "libblis", "libflexiblas", "libmkl_rt",
                             "libfftw3"})
    if (std::strncmp(base, prefix, std::strlen(prefix)) == 0) return true;
  return false;
}

bool links_numerical_library() {
  bool found = false;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        if (info->dlpi_name && numerical_library(info->dlpi_name)) *static_cast<bool*>(data) = true;
        return 0;
      },
      &found);
  return found;
}

// The background connect, and the process it belongs to: exit() waits for it to end (UCX's
// libraries must not be torn down under it), unless this is a forked child, which has no such
// thread.
std::atomic<bool> connecting{false};
pid_t connecting_pid = 0;
double connect_seconds = 0;

void wait_for_early_connect() {
  if (getpid() != connecting_pid) return;
  const uint64_t deadline = now_ns() + static_cast<uint64_t>((connect_seconds + 1) * 1e9);
  while (connecting.load(std::memory_order_acquire) && now_ns() < deadline) usleep(1000);
}

__attribute__((constructor)) void connect_early() {
  try {
    if (!links_numerical_library()) return;
    Runtime& rt = runtime();
    if (!rt.settings().connect_early || !rt.may_go_remote(HUGE_VAL)) return;  // or OUTBOARD_OFFLOAD=never
    connect_seconds = Connection::kHandshakePatience * rt.settings().connect_timeout_seconds;
    connecting_pid = getpid();
    connecting.store(true);
    std::atexit(wait_for_early_connect);
    // UCX's settings go into the environment now, on this thread: when the connecting thread did
    // it, its setenv could move the environment under the program's own getenv (found under ASan:
    // a program's first BLAS call crashed in getenv).
    transport::prepare_environment(transport::ucx_for_new_context());
    std::thread([] {
      std::string why;
      Runtime& rt = runtime();
      // The copy lanes too: the direct path's first call would wait for the server to set them up.
      if (auto conn = rt.connection(why, /*early=*/true); conn && rt.settings().direct) try {
          conn->direct_lanes(rt.settings().timeout_seconds, rt.settings().direct_cma);
        } catch (const std::exception&) {  // the first large call asks again, and reports
        }
      connecting.store(false, std::memory_order_release);
    }).detach();
  } catch (...) {
    connecting.store(false);  // no thread: calls connect as before
  }
}

}  // namespace
}  // namespace outboard::client
