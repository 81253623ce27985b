// The UCX instances of a process: the linked libraries, and in a process forked after UCX was
// in use, a fresh copy of its own (ucx.hpp says why).
#include "transport/ucx.hpp"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>

#include <cstring>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "common/error.hpp"

#if defined(__SANITIZE_ADDRESS__)  // gcc; clang tells through __has_feature
#define OUTBOARD_ASAN 1
#elif defined(__has_feature)
#define OUTBOARD_ASAN __has_feature(address_sanitizer)
#else
#define OUTBOARD_ASAN 0
#endif

namespace outboard::transport {
namespace {

Ucx linked_instance() {
  Ucx u;
#define OUTBOARD_UCX_LINKED(f) u.f = &::f;
  OUTBOARD_UCX_FUNCTIONS(OUTBOARD_UCX_LINKED)
#undef OUTBOARD_UCX_LINKED
  u.setenv = &::setenv;
  u.open_memstream = &::open_memstream;
  u.fclose = &::fclose;
  u.free = &::free;
  return u;
}

// The file a symbol of this process came from (`fallback` when it cannot be told): copies come
// from the same files as the libraries the program runs on.
std::string file_of(void* symbol, const char* fallback) {
  Dl_info info{};
  if (dladdr(symbol, &info) && info.dli_fname && *info.dli_fname) return info.dli_fname;
  return fallback;
}

// A fresh copy of the UCX libraries in a new link-map namespace. Its dependencies (libucs,
// libuct, libucm, the transport modules UCX loads later, and the C library) come as copies too:
// dlmopen() shares nothing with the namespaces already loaded. Lives as long as the process.
const Ucx* load_fresh(unsigned generation) {
#if OUTBOARD_ASAN
  // Measured (gcc 12's ASan, glibc 2.36), with no Outboard code in the process: a dlmopen'd copy
  // of the C library aborts in `free(): invalid pointer` as soon as the copy of UCX starts a
  // thread (the thread's TLS block comes from ASan's allocator through the dynamic loader and
  // goes back to the copy's). A clear error instead of that abort.
  (void)generation;
  throw Error("cannot load a fresh copy of UCX for this forked process: AddressSanitizer does not support a second "
              "C library loaded with dlmopen (build without ASan to offload from forked processes)");
#endif
  // The namespace's C library first, so that the copy of UCX finds its settings in place when
  // its libraries initialise (libucs reads UCX_MEM_* then, and installs the memory hooks).
  const std::string libc_file = file_of(reinterpret_cast<void*>(&::setenv), "libc.so.6");
  void* libc = dlmopen(LM_ID_NEWLM, libc_file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!libc) throw Error(std::string("cannot load a fresh copy of UCX for this forked process: ") + dlerror());
  Lmid_t ns = 0;
  if (dlinfo(libc, RTLD_DI_LMID, &ns) != 0) throw Error(std::string("dlinfo: ") + dlerror());
  auto libc_function = [&](const char* name) {
    void* p = dlsym(libc, name);
    if (!p) throw Error(std::string("the C library loaded for a fresh copy of UCX lacks ") + name);
    return p;
  };
  // An environment of its own: the copy's C library starts on this one's array, which this C
  // library's setenv() may free or move at any time. A copy of every variable instead.
  auto copy_clearenv = reinterpret_cast<int (*)()>(libc_function("clearenv"));
  auto copy_setenv = reinterpret_cast<decltype(&::setenv)>(libc_function("setenv"));
  std::vector<std::pair<std::string, std::string>> env;
  for (char** e = environ; e && *e; ++e)
    if (const char* eq = std::strchr(*e, '=')) env.emplace_back(std::string(*e, static_cast<size_t>(eq - *e)), std::string(eq + 1));
  copy_clearenv();
  for (const auto& [name, value] : env) copy_setenv(name.c_str(), value.c_str(), 1);
  // No memory hooks in the copy. UCX learns of the program's munmap/brk/madvise (to drop cached
  // memory registrations of freed memory) by patching C library functions; the copy would patch
  // only its own C library (each namespace resolves to its own), never see the program free
  // memory, and keep stale registrations. Without memory events UCX does without its
  // registration cache (UCX_RCACHE_ENABLE=try) and registers memory per transfer. Measured
  // (UCX 1.13): with hooks, the copy's async thread recursed without end in ucm_madvise when it
  // exited (its stack given back with madvise).
  copy_setenv("UCX_MEM_EVENTS", "no", 1);
  copy_setenv("UCX_MEM_MALLOC_HOOKS", "no", 1);
  copy_setenv("UCX_MEM_MMAP_HOOK_MODE", "none", 1);

  const std::string file = file_of(reinterpret_cast<void*>(&::ucp_worker_create), "libucp.so.0");
  void* h = dlmopen(ns, file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) throw Error(std::string("cannot load a fresh copy of UCX for this forked process: ") + dlerror());
  auto resolve = [&](const char* name) {
    void* p = dlsym(h, name);
    if (!p) throw Error(std::string("the fresh copy of UCX (") + file + ") lacks " + name);
    return p;
  };
  auto* u = new Ucx;
#define OUTBOARD_UCX_RESOLVE(f) u->f = reinterpret_cast<decltype(&::f)>(resolve(#f));
  OUTBOARD_UCX_FUNCTIONS(OUTBOARD_UCX_RESOLVE)
#undef OUTBOARD_UCX_RESOLVE
  u->setenv = copy_setenv;
  u->open_memstream = reinterpret_cast<decltype(&::open_memstream)>(libc_function("open_memstream"));
  u->fclose = reinterpret_cast<decltype(&::fclose)>(libc_function("fclose"));
  u->free = reinterpret_cast<decltype(&::free)>(libc_function("free"));
  u->generation = generation;
  return u;
}

struct State {
  std::mutex mu;
  const Ucx* current = nullptr;  // the instance this process makes contexts with
  pid_t used_by = 0;             // the process that made a context with `current`; 0: none yet
  std::string failed;            // why no fresh copy could be loaded in process failed_in
  pid_t failed_in = 0;
};

State& state() {
  static State* const s = [] {
    auto* st = new State;  // never destroyed: contexts may be made during static destruction
    st->current = new Ucx(linked_instance());
    // fork() waits for a choice under way: a child must not inherit the lock held by a thread
    // it does not have.
    pthread_atfork([] { state().mu.lock(); }, [] { state().mu.unlock(); }, [] { state().mu.unlock(); });
    return st;
  }();
  return *s;
}

}  // namespace

void Ucx::default_setting(const char* name, const char* value) const {
  setenv((std::string("UCX_") + name).c_str(), value, 0);
}

const Ucx& ucx_for_new_context() {
  State& s = state();
  std::lock_guard lk(s.mu);
  const pid_t self = getpid();
  if (s.used_by != 0 && s.used_by != self) {
    if (s.failed_in == self) throw Error(s.failed);  // dlmopen again would only fail again
    try {
      s.current = load_fresh(s.current->generation + 1);
    } catch (const Error& e) {
      s.failed = e.what();
      s.failed_in = self;
      throw;
    }
  }
  s.used_by = self;
  return *s.current;
}

}  // namespace outboard::transport
