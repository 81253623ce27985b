// The runtime core: settings, the connection with retry, fallback warnings, the exit report and
// trace, and the fork handling; one per process (liboutboard-client.so, which every shim links).
// The offload paths are the API files: blas3.cpp, lapack.cpp, fft.cpp.
#include "client/runtime_internal.hpp"
#include "client/model_memory.hpp"

#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <system_error>
#include <thread>

#include "common/clock.hpp"
#include "common/error.hpp"

extern char* program_invocation_short_name;
extern char* program_invocation_name;

namespace outboard::client {
namespace {

constexpr size_t kMaxTraceEntries = 100000;  // beyond this, calls are counted but not kept
constexpr size_t kPlottedCalls = 40;         // the longest calls go to "phases", which plots draw
#ifdef MADV_POPULATE_WRITE
constexpr int kPopulateWrite = MADV_POPULATE_WRITE;
#else
constexpr int kPopulateWrite = 23;  // Linux 5.14's
#endif

}  // namespace

Runtime::Runtime() : settings_(settings_from_environment()), started_ns_(now_ns()) {
  double cache = settings_.cache_bytes;
  if (cache < 0) cache = double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGESIZE)) / 8;
  transport::Buffer::set_cache_limit(static_cast<size_t>(cache));
  static std::once_flag trace_at_exit;
  if (!settings_.trace_file.empty())
    std::call_once(trace_at_exit, [] { std::atexit([] { runtime().write_trace(); }); });
  for (const auto& p : settings_.problems) std::fprintf(stderr, "outboard: warning: %s; using the default\n", p.c_str());
  static std::once_flag report_at_exit;  // once per process, also when a forked child starts afresh
  if (settings_.report) std::call_once(report_at_exit, [] { std::atexit([] { runtime().print_report(); }); });
  if (!settings_.model_file.empty() && settings_.offload == OffloadMode::automatic && settings_.auto_rule == AutoRule::model) {
    try {
      if (auto memory = read_model_memory(settings_.model_file, model_memory_key(settings_)))
        model_recalled_ = model_.recall(*memory);
    } catch (const Error& e) {
      std::fprintf(stderr, "outboard: warning: %s; the cost model starts from its priors\n", e.what());
    }
    static std::once_flag model_at_exit;
    std::call_once(model_at_exit, [] { std::atexit([] { runtime().remember_model(); }); });
  }
}

void Runtime::remember_model() {
  try {
    write_model_memory(settings_.model_file, model_memory_key(settings_), model_.memory());
  } catch (const Error& e) {
    std::fprintf(stderr, "outboard: warning: the cost model's memory was not kept: %s\n", e.what());
  }
}

bool Runtime::may_go_remote(double flops) const {
  switch (settings_.offload) {
    case OffloadMode::never: return false;
    case OffloadMode::always: return true;
    default: return flops >= settings_.min_flops;
  }
}

bool Runtime::wants_remote(const CallCost& c) {
  if (!may_go_remote(c.flops)) return false;
  if (settings_.offload != OffloadMode::automatic || settings_.auto_rule != AutoRule::model) return true;
  if (model_chooses_remote(c)) return true;
  LocalTiming::expect(c.family, c.flops);
  return false;
}

bool Runtime::model_chooses_remote(const CallCost& c) {
  // The link is measured when a connection is made: the first choice waits for it (or for the
  // early connection under way), rather than choose on the assumed rate.
  if (!model_.probed()) {
    std::string why;
    if (!connection(why)) return false;  // no server: the call runs here anyway
  }
  return model_.choose(c).remote;
}

void Runtime::probe_link(Connection& conn) {
  if (settings_.offload != OffloadMode::automatic || settings_.auto_rule != AutoRule::model) return;
  try {
    // The fastest of a few round trips (the first may wait for the server's side to warm up).
    double round_trip = HUGE_VAL;
    for (int i = 0; i < 4; ++i) {
      const uint64_t t = now_ns();
      conn.ping_stream(nullptr, 0, 1, 1, wire::Ping::echo);
      round_trip = std::min(round_trip, (now_ns() - t) / 1e9);
    }
    uint64_t t0 = 0;
    double rate = 0;
    const uint64_t bytes = static_cast<uint64_t>(settings_.link_probe_bytes);
    if (bytes) {
      // Pieces of 1 MiB, all in flight at once: a burst such as a call's chunks make. Timed after
      // a burst of two untimed: the first bulk transfer of a connection also asks for the server's
      // sink, wires UCX's bulk protocol up and grows TCP's window, and across 25 Gbit/s on the H200
      // host one probe so measured 0.47 GB/s where calls moved 3 (bench/results/h200/link/choice).
      const uint64_t piece = std::min<uint64_t>(bytes, 1 << 20);
      const int count = static_cast<int>(std::max<uint64_t>(1, bytes / piece));
      transport::Buffer b = transport::Buffer::allocate(piece);
      std::memset(b.data(), 0, piece);
      conn.ping_stream(b.data(), piece, std::min(count, 2), std::min(count, 2));
      t0 = now_ns();
      conn.ping_stream(b.data(), piece, count, count);
      rate = double(piece) * count / ((now_ns() - t0) / 1e9);
    }
    model_.probed(round_trip, rate, conn.server_free_device_bytes() > 0);
  } catch (const Error&) {
    // The first call finds out what is wrong with the connection; the model keeps its priors.
    model_.probe_failed();
  }
}

void Runtime::record(const std::string& routine, const std::function<void(RoutineStats&)>& update) {
  if (!settings_.report) return;
  std::lock_guard lk(stats_mu_);
  update(stats_[routine]);
}

bool Runtime::ran_locally(const std::string& routine) {
  record(routine, [](RoutineStats& s) { ++s.local; });
  return false;
}

void Runtime::print_report() {
  std::lock_guard lk(stats_mu_);
  std::fflush(stdout);  // keep the program's own output first
  std::fprintf(stderr, "outboard: where the time went in remote calls (ms): pack, to server (as the server saw the "
                       "data arrive), queue (waiting for a compute thread), to GPU, compute, from GPU, back (the "
                       "rest of the round trip: request latency and the result's way back), unpack\n");
  std::fprintf(stderr, "outboard: %-7s %7s %6s %8s %9s %9s %9s %9s %9s %9s %9s %9s %9s %9s\n", "routine", "remote",
               "local", "fallback", "MB sent", "MB back", "pack", "to server", "queue", "to GPU", "compute",
               "from GPU", "back", "unpack");
  for (const auto& [name, s] : stats_) {
    const uint64_t server = s.receive_ns + s.queue_ns + s.to_device_ns + s.compute_ns + s.from_device_ns;
    std::fprintf(stderr,
                 "outboard: %-7s %7llu %6llu %8llu %9.1f %9.1f %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f\n",
                 name.c_str(), (unsigned long long)s.remote, (unsigned long long)s.local,
                 (unsigned long long)s.fell_back, s.bytes_sent / 1e6, s.bytes_received / 1e6, s.pack_ns / 1e6,
                 s.receive_ns / 1e6, s.queue_ns / 1e6, s.to_device_ns / 1e6, s.compute_ns / 1e6,
                 s.from_device_ns / 1e6, (s.round_trip_ns - std::min(s.round_trip_ns, server)) / 1e6,
                 s.unpack_ns / 1e6);
  }
  if (settings_.offload == OffloadMode::automatic && settings_.auto_rule == AutoRule::model) {
    std::fprintf(stderr, "outboard: the cost model (OUTBOARD_OFFLOAD=auto), as measured:\n");
    if (!settings_.model_file.empty())
      std::fprintf(stderr, "outboard:   recalled %zu families from %s (OUTBOARD_MODEL_FILE)\n", model_recalled_,
                   settings_.model_file.c_str());
    const std::string summary = model_.summary();
    for (size_t at = 0, nl; at < summary.size(); at = nl + 1) {
      nl = summary.find('\n', at);
      std::fprintf(stderr, "outboard:   %.*s\n", int(nl - at), summary.c_str() + at);
    }
  }
}

void Runtime::trace(TraceEntry e) {
  std::lock_guard lk(stats_mu_);
  if (trace_.size() < kMaxTraceEntries) trace_.push_back(std::move(e));
  else ++trace_dropped_;
}

// The trace as a bench result document: "calls" has every call kept, "phases" the longest few
// (what `outboard bench --plot`'s stacked bars draw).
void Runtime::write_trace() {
  std::lock_guard lk(stats_mu_);
  auto entry = [](const TraceEntry& e) {
    return nlohmann::json{{"name", e.name},       {"start", e.start},       {"pack", e.pack},
                          {"to_server", e.to_server}, {"to_gpu", e.to_gpu}, {"plan", 0},
                          {"compute", e.compute}, {"from_gpu", e.from_gpu}, {"from_server", e.from_server},
                          {"unpack", e.unpack},   {"bytes_sent", e.bytes_sent}, {"bytes_back", e.bytes_back},
                          {"total", e.total}};
  };
  nlohmann::json calls = nlohmann::json::array(), phases = nlohmann::json::array();
  for (const auto& e : trace_) calls.push_back(entry(e));
  std::vector<const TraceEntry*> longest;
  for (const auto& e : trace_) longest.push_back(&e);
  auto total = [](const TraceEntry* e) { return e->pack + e->to_server + e->to_gpu + e->compute + e->from_gpu + e->from_server + e->unpack; };
  std::sort(longest.begin(), longest.end(), [&](auto* a, auto* b) { return total(a) > total(b); });
  if (longest.size() > kPlottedCalls) longest.resize(kPlottedCalls);
  for (const auto* e : longest) phases.push_back(entry(*e));
  nlohmann::json doc = {{"outboard_bench", 1},       {"mode", "trace"},
                        {"command", program_invocation_name}, {"series", nlohmann::json::array()},
                        {"calls", calls},            {"calls_not_kept", trace_dropped_},
                        {"phases", phases}};
  FILE* f = std::fopen(settings_.trace_file.c_str(), "w");
  if (!f) {
    std::fprintf(stderr, "outboard: warning: cannot write the trace to %s\n", settings_.trace_file.c_str());
    return;
  }
  std::string text = doc.dump(1);
  std::fwrite(text.data(), 1, text.size(), f);
  std::fclose(f);
}

Runtime::Lease Runtime::lease(std::string& why, const std::vector<const Server*>& tried, const Connection* prefer,
                              bool early) {
  std::lock_guard lk(mu_);
  if (servers_.empty())
    for (const auto& address : settings_.servers) {
      servers_.push_back(std::make_unique<Server>());
      servers_.back()->address = address;
    }
  const uint64_t now = now_ns();
  const uint64_t retry_ns = static_cast<uint64_t>(settings_.retry_seconds * 1e9);
  // The healthy candidates, in the list order rotated by the process id.
  std::vector<Server*> candidates;
  const size_t n = servers_.size();
  const size_t first = n ? static_cast<size_t>(getpid()) % n : 0;
  std::string reasons;
  auto note = [&reasons](const std::string& r) {
    if (reasons.find(r) == std::string::npos) reasons += (reasons.empty() ? "" : "; ") + r;
  };
  for (size_t k = 0; k < n; ++k) {
    Server* s = servers_[(first + k) % n].get();
    if (std::find(tried.begin(), tried.end(), s) != tried.end()) continue;
    if (s->conn && !s->conn->alive()) {  // it died since the last call
      s->last_error = "connection to " + s->conn->server_name() + " (" + s->address.text() + ") lost";
      s->conn.reset();
      s->retry_after_ns = now + retry_ns;
    }
    if (!s->conn && now < s->retry_after_ns) {
      note(s->last_error);
      continue;
    }
    if (prefer && s->conn.get() == prefer) return Lease(s, s->conn);
    candidates.push_back(s);
  }
  // This process's home server (the first in its rotation) counts as idle while not connected:
  // once it recovers from a failure, the process's calls return to it.
  const Server* home = n ? servers_[first].get() : nullptr;
  auto score = [home](const Server* s) {
    return s->conn ? 2.0 * (s->conn->server_calls() + s->calls.load()) : s == home ? 0.0 : 1.0;
  };
  // Unknown until connected: a server not yet connected ties first, so that an idle connected one
  // whose free memory is known does not draw every process of a job away from its home.
  auto free_memory = [](const Server* s) { return s->conn ? s->conn->server_free_device_bytes() : UINT64_MAX; };
  std::stable_sort(candidates.begin(), candidates.end(), [&](const Server* a, const Server* b) {
    const double sa = score(a), sb = score(b);
    return sa != sb ? sa < sb : free_memory(a) > free_memory(b);
  });
  Secret secret{};
  bool have_secret = false;
  for (Server* s : candidates) {
    if (s->conn) return Lease(s, s->conn);
    try {
      if (!have_secret) secret = read_secret(settings_.token_file), have_secret = true;
      s->conn = std::make_shared<Connection>(s->address, secret, client_name(), settings_.connect_timeout_seconds,
                                                settings_.identity, settings_.encrypt);
      s->conn->set_ucx_copies_over_tcp(settings_.direct_over_tcp);
      s->conn->set_link_lanes(static_cast<unsigned>(settings_.lanes));
      probe_link(*s->conn);
      add_siblings(*s);
      return Lease(s, s->conn);
    } catch (const Error& e) {
      s->last_error = e.what();
      if (!early) s->retry_after_ns = now_ns() + retry_ns;
      note(s->last_error);
    }
  }
  // After failed attempts, the last one's reason is the call's; otherwise why none could be had.
  if (tried.empty()) why = reasons.empty() ? std::string("no server (OUTBOARD_SERVERS is empty)") : reasons;
  return {};
}

std::vector<Runtime::Lease> Runtime::spread(size_t most, std::string& why) {
  std::vector<Lease> leases;
  std::vector<const Server*> tried;
  while (leases.size() < most) {
    Lease l = lease(why, tried);
    if (!l.conn) break;
    tried.push_back(l.server);
    // Servers come least loaded first: once one is busy, so are the rest. (A block on a busy server
    // would make the whole call wait for it, and take from the others' calls: measured on 4 GPU
    // workers, spreading FFT batches cost 4 clients 11% where it gave 1 client 30%.)
    if (!leases.empty() && (l.server->calls.load() > 1 || !l.conn->idle_but_for_us())) break;
    leases.push_back(std::move(l));
  }
  return leases;
}

void Runtime::add_siblings(const Server& s) {
  for (uint16_t port : s.conn->siblings()) {
    const ServerAddress sibling{s.address.host, port};
    auto same = [&](const std::unique_ptr<Server>& k) { return k->address.text() == sibling.text(); };
    if (std::none_of(servers_.begin(), servers_.end(), same)) {
      servers_.push_back(std::make_unique<Server>());
      servers_.back()->address = sibling;
    }
  }
}

void Runtime::attempt_failed(const Lease& lease, const std::string& why) {
  std::lock_guard lk(mu_);
  Server* s = lease.server;
  if (!s || lease.conn->alive() || s->conn != lease.conn) return;  // the server answered: it is healthy
  s->last_error = why;
  s->conn.reset();
  s->retry_after_ns = now_ns() + static_cast<uint64_t>(settings_.retry_seconds * 1e9);
  if (servers_.size() > 1)
    std::fprintf(stderr, "outboard: warning: server %s failed (%s); its calls go to the other servers for %g s\n",
                 s->address.text().c_str(), why.c_str(), settings_.retry_seconds);
}

void Runtime::remote_failed(const std::string& routine, const std::string& why) {
  if (settings_.fallback == FallbackMode::fail) {
    std::fprintf(stderr, "outboard: error: %s could not run remotely: %s (OUTBOARD_FALLBACK=fail)\n",
                 routine.c_str(), why.c_str());
    std::fflush(nullptr);
    std::_Exit(1);
  }
  last_failure_ns_.store(now_ns());
  if (!warned_.exchange(true))
    std::fprintf(stderr, "outboard: warning: running %s and later calls locally: %s\n", routine.c_str(), why.c_str());
}

std::string Runtime::client_name() {
  char host[256] = "?";
  gethostname(host, sizeof host - 1);
  return std::string(host) + ":" + std::to_string(getpid()) + ":" + program_invocation_short_name;
}

namespace {

// One runtime per process, never destroyed: calls may arrive from other libraries' destructors.
// A child after fork() starts a fresh one at its first call, which connects on its own with a
// fresh instance of UCX (transport/ucx.hpp says why UCX cannot be used again in a child). The
// parent's runtime and its connection stay in the child untouched (leaked): using them there
// would use the parent's UCX objects, destroying them would tear down the parent's session, and
// their locks may be held by threads the child does not have.
std::atomic<Runtime*> the_runtime{nullptr};
std::mutex runtime_mu;

}  // namespace

Runtime& runtime() {
  if (Runtime* rt = the_runtime.load(std::memory_order_acquire)) return *rt;
  std::lock_guard lk(runtime_mu);
  if (!the_runtime.load()) {
    static std::once_flag at_fork;
    std::call_once(at_fork, [] {
      pthread_atfork([] { runtime_mu.lock(); }, [] { runtime_mu.unlock(); },
                     [] {
                       the_runtime.store(nullptr);
                       runtime_mu.unlock();
                     });
    });
    the_runtime.store(new Runtime());
  }
  return *the_runtime.load();
}

bool FallBack::operator()(const std::string& why) const {
  if (attempt) {
    attempt->failed = true;
    attempt->why = why;
    return false;
  }
  rt.remote_failed(routine, why);
  rt.record(routine, [](RoutineStats& s) { ++s.fell_back; });
  return false;
}

void account(Runtime& rt, const std::string& routine, const std::string& label, const ServerTimes& r,
             const std::array<uint64_t, 4>& t, uint64_t sent, uint64_t back, double flops) {
  rt.link_model().remote_ran(routine, flops, double(sent + back), (t[3] - t[0]) / 1e9, r.compute_ns / 1e9);
  if (rt.tracing()) {
    const double server = (r.receive_ns + r.queue_ns + r.to_device_ns + r.compute_ns + r.from_device_ns) / 1e9;
    const double round_trip = (t[2] - t[1]) / 1e9;
    rt.trace({label, rt.seconds_since_start(t[0]), (t[1] - t[0]) / 1e9, (r.receive_ns + r.queue_ns) / 1e9,
              r.to_device_ns / 1e9, r.compute_ns / 1e9, r.from_device_ns / 1e9, std::max(0.0, round_trip - server),
              (t[3] - t[2]) / 1e9, sent, back, (t[3] - t[0]) / 1e9});
  }
  rt.record(routine, [&](RoutineStats& s) {
    ++s.remote;
    s.bytes_sent += sent;
    s.bytes_received += back;
    s.pack_ns += t[1] - t[0];
    s.round_trip_ns += t[2] - t[1];
    s.receive_ns += r.receive_ns;
    s.queue_ns += r.queue_ns;
    s.to_device_ns += r.to_device_ns;
    s.compute_ns += r.compute_ns;
    s.from_device_ns += r.from_device_ns;
    s.unpack_ns += t[3] - t[2];
  });
}

transport::Segment pack_columns(int64_t rows, int64_t cols, size_t elem, MatrixRef m,
                                std::vector<transport::Buffer>& scratch) {
  const size_t col = static_cast<size_t>(rows) * elem, bytes = col * static_cast<size_t>(cols);
  if (cols <= 1 || m.ld == rows) return {m.data, bytes};
  scratch.push_back(transport::Buffer::allocate(bytes));
  std::byte* dst = scratch.back().data();
  auto* src = static_cast<const std::byte*>(m.data);
  for (int64_t j = 0; j < cols; ++j) std::memcpy(dst + j * col, src + j * static_cast<size_t>(m.ld) * elem, col);
  return {dst, bytes};
}

bool offload_considered(double flops) noexcept {
  try {
    Runtime& rt = runtime();
    if (rt.settings().report) return true;  // the API file decides, and counts the local calls too
    return rt.may_go_remote(flops);
  } catch (...) {
    return false;
  }
}

namespace {
// The call the cost model last kept on this thread, until its local execution starts.
struct ExpectedLocal {
  char family[24] = {};
  double flops = 0;
};
thread_local ExpectedLocal t_expected;
}  // namespace

void LocalTiming::expect(std::string_view family, double flops) noexcept {
  const size_t n = std::min(family.size(), sizeof t_expected.family - 1);
  std::memcpy(t_expected.family, family.data(), n);
  t_expected.family[n] = 0;
  t_expected.flops = flops;
}

LocalTiming::LocalTiming(const char* function) noexcept {
  if (t_expected.flops == 0) return;
  // The real routine of the call the model kept here ("dgemm" in "cblas_dgemm", "dgemm_64_"); a
  // nullptr function: whatever runs next (the FFT shim's execution).
  if (function && !std::strstr(function, t_expected.family)) return;
  std::memcpy(family_, t_expected.family, sizeof family_);
  flops_ = t_expected.flops;
  t_expected.flops = 0;
  start_ns_ = now_ns();
}

LocalTiming::~LocalTiming() {
  if (flops_ == 0) return;
  try {
    runtime().link_model().local_ran(family_, flops_, (now_ns() - start_ns_) / 1e9);
  } catch (...) {
  }
}

void run_at_once(size_t n, const std::function<void(size_t)>& run) {
  std::vector<std::thread> threads;
  std::vector<size_t> deferred;
  threads.reserve(n), deferred.reserve(n);
  for (size_t i = 1; i < n; ++i) {
    try {
      threads.emplace_back(run, i);
    } catch (const std::system_error&) {  // no thread to be had: this one runs it after its own
      deferred.push_back(i);
    }
  }
  if (n) run(0);
  for (size_t i : deferred) run(i);
  for (auto& t : threads) t.join();
}

void parallel_copy(std::byte* dst, const std::byte* src, uint64_t bytes, unsigned threads) {
  threads = static_cast<unsigned>(std::clamp<uint64_t>(bytes >> 24, 1, std::max(1u, threads)));  // >= 16 MiB each
  const uint64_t slice = (bytes + threads - 1) / threads;
  std::vector<std::thread> helpers;
  for (unsigned t = 1; t < threads; ++t) {
    const uint64_t lo = std::min(bytes, t * slice), hi = std::min(bytes, lo + slice);
    helpers.emplace_back([=] { std::memcpy(dst + lo, src + lo, hi - lo); });
  }
  std::memcpy(dst, src, std::min(bytes, slice));
  for (auto& h : helpers) h.join();
}

Prefault::Prefault(void* data, uint64_t bytes, unsigned threads) {
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  const uint64_t lo = reinterpret_cast<uint64_t>(data) / page * page;
  const uint64_t hi = (reinterpret_cast<uint64_t>(data) + bytes + page - 1) / page * page;
  if (bytes < (64u << 20)) return;  // small results: not worth a thread
  threads = static_cast<unsigned>(std::clamp<uint64_t>((hi - lo) >> 28, 1, std::max(1u, threads)));  // >= 256 MiB each
  const uint64_t slice = ((hi - lo) / threads + page - 1) / page * page;
  for (unsigned t = 0; t < threads; ++t) {
    const uint64_t a = lo + t * slice, b = std::min(hi, a + slice);
    if (a >= b) break;
    threads_.emplace_back([a, b] {
      // In steps, so a failure (an older kernel: EINVAL) ends it early.
      for (uint64_t p = a; p < b; p += 64u << 20)
        if (madvise(reinterpret_cast<void*>(p), std::min<uint64_t>(b - p, 64u << 20), kPopulateWrite) != 0) return;
    });
  }
}

Prefault::~Prefault() {
  for (auto& t : threads_) t.join();
}

}  // namespace outboard::client
