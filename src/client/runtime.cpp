#include "client/runtime.hpp"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <algorithm>
#include <functional>
#include <nlohmann/json.hpp>
#include <map>
#include <mutex>
#include <thread>

#include "client/connection.hpp"
#include "common/clock.hpp"
#include "common/error.hpp"
#include "transport/buffer.hpp"

extern char* program_invocation_short_name;
extern char* program_invocation_name;

namespace outboard::client {
namespace {

class Runtime;
Runtime& runtime();

// Where a routine's time went, for OUTBOARD_REPORT.
struct RoutineStats {
  uint64_t remote = 0, local = 0, fell_back = 0;
  uint64_t bytes_sent = 0, bytes_received = 0;
  uint64_t pack_ns = 0, round_trip_ns = 0, unpack_ns = 0;
  uint64_t receive_ns = 0, queue_ns = 0, to_device_ns = 0, compute_ns = 0, from_device_ns = 0;  // the server's share
};

// One remote call's phases in seconds, for OUTBOARD_TRACE (the names of results.hpp's "phases").
struct TraceEntry {
  std::string name;
  double start, pack, to_server, to_gpu, compute, from_gpu, from_server, unpack;
  uint64_t bytes_sent, bytes_back;
  double total;  // the call from start to end: less than the phases' sum where they overlapped
};
constexpr size_t kMaxTraceEntries = 100000;  // beyond this, calls are counted but not kept
constexpr size_t kPlottedCalls = 40;         // the longest calls go to "phases", which plots draw

class Runtime {
 public:
  Runtime() : settings_(settings_from_environment()), started_ns_(now_ns()) {
    double cache = settings_.cache_bytes;
    if (cache < 0) cache = double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGESIZE)) / 8;
    transport::Buffer::set_cache_limit(static_cast<size_t>(cache));
    static std::once_flag trace_at_exit;
    if (!settings_.trace_file.empty())
      std::call_once(trace_at_exit, [] { std::atexit([] { runtime().write_trace(); }); });
    for (const auto& p : settings_.problems) std::fprintf(stderr, "outboard: warning: %s; using the default\n", p.c_str());
    static std::once_flag report_at_exit;  // once per process, also when a forked child starts afresh
    if (settings_.report) std::call_once(report_at_exit, [] { std::atexit([] { runtime().print_report(); }); });
  }

  void record(const std::string& name, const std::function<void(RoutineStats&)>& update) {
    if (!settings_.report) return;
    std::lock_guard lk(stats_mu_);
    update(stats_[name]);
  }

  void print_report() {
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
  }

  const Settings& settings() const { return settings_; }

  bool tracing() const { return !settings_.trace_file.empty(); }
  double seconds_since_start(uint64_t ns) const { return (ns - started_ns_) / 1e9; }

  void trace(TraceEntry e) {
    std::lock_guard lk(stats_mu_);
    if (trace_.size() < kMaxTraceEntries) trace_.push_back(std::move(e));
    else ++trace_dropped_;
  }

  // The trace as a bench result document: "calls" has every call kept, "phases" the longest few
  // (what `outboard bench --plot`'s stacked bars draw).
  void write_trace() {
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

  // The live connection, connecting if needed; nullptr while the remote path is unavailable.
  std::shared_ptr<Connection> connection(std::string& why) {
    std::lock_guard lk(mu_);
    if (conn_ && conn_->alive()) return conn_;
    if (conn_) {  // it died since the last call
      why = "connection to " + conn_->server_name() + " lost";
      conn_.reset();
      retry_after_ns_ = now_ns() + static_cast<uint64_t>(settings_.retry_seconds * 1e9);
      return nullptr;
    }
    if (now_ns() < retry_after_ns_) {
      why = last_error_;
      return nullptr;
    }
    try {
      Secret secret = read_secret(settings_.token_file);
      std::string errors;
      for (const auto& server : settings_.servers) {
        try {
          conn_ = std::make_shared<Connection>(server, secret, client_name(), settings_.connect_timeout_seconds);
          return conn_;
        } catch (const Error& e) {
          errors += (errors.empty() ? "" : "; ") + std::string(e.what());
        }
      }
      throw Error(errors);
    } catch (const Error& e) {
      last_error_ = e.what();
    }
    why = last_error_;
    retry_after_ns_ = now_ns() + static_cast<uint64_t>(settings_.retry_seconds * 1e9);
    return nullptr;
  }

  // One warning per failure episode, not one per call.
  void remote_failed(const std::string& routine, const std::string& why) {
    if (settings_.fallback == FallbackMode::fail) {
      std::fprintf(stderr, "outboard: error: %s could not run remotely: %s (OUTBOARD_FALLBACK=fail)\n",
                   routine.c_str(), why.c_str());
      std::fflush(nullptr);
      std::_Exit(1);
    }
    if (!warned_.exchange(true))
      std::fprintf(stderr, "outboard: warning: running %s and later calls locally: %s\n", routine.c_str(), why.c_str());
  }

  void remote_succeeded() { warned_.store(false); }

 private:
  static std::string client_name() {
    char host[256] = "?";
    gethostname(host, sizeof host - 1);
    return std::string(host) + ":" + std::to_string(getpid()) + ":" + program_invocation_short_name;
  }

  Settings settings_;
  std::mutex mu_;
  std::shared_ptr<Connection> conn_;
  uint64_t retry_after_ns_ = 0;
  std::string last_error_;
  std::atomic<bool> warned_{false};
  std::mutex stats_mu_;
  std::map<std::string, RoutineStats> stats_;
  uint64_t started_ns_;
  std::vector<TraceEntry> trace_;
  uint64_t trace_dropped_ = 0;
};

// One runtime per process, never destroyed: calls may arrive from other libraries' destructors.
// A child after fork() starts a fresh one: it must not use its parent's connection.
std::atomic<Runtime*> the_runtime{nullptr};
std::mutex runtime_mu;

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

size_t bytes_of(const wire::Operand& o, wire::Scalar s) {
  return static_cast<size_t>(o.rows) * static_cast<size_t>(o.cols) * wire::element_bytes(s);
}

// Contiguous when the leading dimension equals the rows: then it travels without a copy.
transport::Segment pack(const wire::Operand& o, MatrixRef m, wire::Scalar s, std::vector<transport::Buffer>& scratch) {
  const size_t col = static_cast<size_t>(o.rows) * wire::element_bytes(s);
  if (o.cols <= 1 || m.ld == o.rows) return {m.data, bytes_of(o, s)};
  scratch.push_back(transport::Buffer::allocate(bytes_of(o, s)));
  std::byte* dst = scratch.back().data();
  auto* src = static_cast<const std::byte*>(m.data);
  const size_t stride = static_cast<size_t>(m.ld) * wire::element_bytes(s);
  for (int64_t j = 0; j < o.cols; ++j) std::memcpy(dst + j * col, src + j * stride, col);
  return {dst, bytes_of(o, s)};
}

// Copies the packed result into the application's matrix: all of it, or only the uplo triangle
// for routines that define only that (the other triangle must stay untouched).
void unpack(const std::byte* src, const wire::Operand& o, MatrixRef m, const wire::Level3Call& c, bool triangle) {
  const size_t e = wire::element_bytes(c.scalar);
  auto* dst = static_cast<std::byte*>(const_cast<void*>(m.data));
  for (int64_t j = 0; j < o.cols; ++j) {
    int64_t first = 0, last = o.rows;  // rows [first, last)
    if (triangle) {
      if (c.uplo == 'U') last = std::min<int64_t>(j + 1, o.rows);
      else first = j;
    }
    if (first < last)
      std::memcpy(dst + (static_cast<size_t>(j) * m.ld + first) * e, src + (static_cast<size_t>(j) * o.rows + first) * e,
                  static_cast<size_t>(last - first) * e);
  }
}

// A remote call's times, for the report and the trace: `t` = start, packed, answered, unpacked;
// `r` the server's reply (CallReply or LapackReply), which says where its share went.
template <class Reply>
void account(Runtime& rt, const std::string& routine, const std::string& label, const Reply& r,
             const std::array<uint64_t, 4>& t, uint64_t sent, uint64_t back) {
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

bool wants_remote(const Settings& s, const wire::Level3Call& c) {
  switch (s.offload) {
    case OffloadMode::never: return false;
    case OffloadMode::always: return true;
    default: return wire::flops(c) >= s.min_flops;
  }
}

}  // namespace

bool offload_considered(double flops) noexcept {
  try {
    const Settings& s = runtime().settings();
    if (s.report) return true;  // offload_level3 decides, and counts the local calls too
    return s.offload == OffloadMode::always || (s.offload == OffloadMode::automatic && flops >= s.min_flops);
  } catch (...) {
    return false;
  }
}

bool offload_level3(wire::Level3Call call, const MatrixRef* inputs, MatrixRef output) noexcept {
  std::string name;
  try {
    Runtime& rt = runtime();
    name = wire::call_name(call);
    if (!wants_remote(rt.settings(), call)) {
      rt.record(name, [](RoutineStats& s) { ++s.local; });
      return false;
    }
    auto fall_back = [&](const std::string& why) {
      rt.remote_failed(name, why);
      rt.record(name, [](RoutineStats& s) { ++s.fell_back; });
      return false;
    };
    // beta = 0 means C is not read: it need not travel (trmm/trsm's B always does).
    const bool in_place = call.routine == wire::Routine::trmm || call.routine == wire::Routine::trsm;
    call.output_sent = in_place || call.beta[0] != 0 || call.beta[1] != 0;
    wire::validate(call);
    const wire::Layout l = wire::layout(call);
    std::string why;
    std::shared_ptr<Connection> conn = rt.connection(why);
    if (!conn) return fall_back(why);
    const uint64_t t0 = now_ns();
    std::vector<transport::Buffer> scratch;
    std::vector<transport::Segment> payload;
    for (size_t i = 0; i < l.inputs.size(); ++i) {
      bool is_output = call.output_sent && i + 1 == l.inputs.size();
      payload.push_back(pack(l.inputs[i], is_output ? output : inputs[i], call.scalar, scratch));
    }
    const uint64_t reply_bytes = wire::reply_bytes(call);
    // With beta = 0 the old C is never needed, even by a local rerun after a failure: a contiguous
    // C can take the result directly. Otherwise the result lands aside and is copied in on success.
    const bool into_c = !call.output_sent && !l.output_triangle && (l.output.cols <= 1 || output.ld == l.output.rows);
    transport::Buffer result = into_c ? transport::Buffer::borrow(const_cast<void*>(output.data), reply_bytes)
                                      : transport::Buffer::allocate(reply_bytes);

    const uint64_t chunk = static_cast<uint64_t>(rt.settings().chunk_bytes);
    const bool chunked = chunk && wire::request_bytes(call) >= 2 * chunk;  // result comes in pieces, not in the reply
    const uint64_t t1 = now_ns();
    wire::Message reply;
    try {
      if (chunked)
        reply = conn->chunked_request(
            wire::CallChunk{0, call, wire::request_bytes(call), chunk, 0}, std::move(payload),
            [&result](uint64_t offset, uint64_t) { return result.data() + offset; }, reply_bytes,
            rt.settings().timeout_seconds, static_cast<unsigned>(rt.settings().chunk_window));
      else
        reply = conn->request(wire::Blas3Call{0, call, wire::request_bytes(call)}, std::move(payload), result.data(),
                              reply_bytes, rt.settings().timeout_seconds);
    } catch (const Error& e) {
      return fall_back(e.what());
    }
    const uint64_t t2 = now_ns();
    auto* r = std::get_if<wire::CallReply>(&reply);
    if (!r || !r->ok || r->payload_bytes != (chunked ? 0 : reply_bytes))
      return fall_back(r && !r->ok ? "server: " + r->message : std::string("unexpected reply"));
    if (!into_c) unpack(result.data(), l.output, output, call, l.output_triangle);
    rt.remote_succeeded();
    const uint64_t t3 = now_ns(), sent = wire::request_bytes(call);
    account(rt, name, name + " " + std::to_string(call.m) + "x" + std::to_string(call.n) + "x" + std::to_string(call.k),
            *r, {t0, t1, t2, t3}, sent, reply_bytes);
    return true;
  } catch (const std::bad_alloc&) {
    runtime().remote_failed(name, "out of memory for staging buffers");
  } catch (const std::exception& e) {
    runtime().remote_failed(name, e.what());
  }
  return false;
}

namespace {

// One LAPACK array: contiguous ones travel as they are, others are packed column by column.
transport::Segment pack_array(int64_t rows, int64_t cols, size_t elem, MatrixRef m,
                              std::vector<transport::Buffer>& scratch) {
  const size_t col = static_cast<size_t>(rows) * elem, bytes = col * static_cast<size_t>(cols);
  if (cols <= 1 || m.ld == rows) return {m.data, bytes};
  scratch.push_back(transport::Buffer::allocate(bytes));
  std::byte* dst = scratch.back().data();
  auto* src = static_cast<const std::byte*>(m.data);
  for (int64_t j = 0; j < cols; ++j) std::memcpy(dst + j * col, src + j * static_cast<size_t>(m.ld) * elem, col);
  return {dst, bytes};
}

void unpack_array(const std::byte* src, int64_t rows, int64_t cols, size_t elem, MatrixRef m) {
  auto* dst = static_cast<std::byte*>(const_cast<void*>(m.data));
  const size_t col = static_cast<size_t>(rows) * elem;
  if (cols <= 1 || m.ld == rows) {
    std::memcpy(dst, src, col * static_cast<size_t>(cols));
    return;
  }
  for (int64_t j = 0; j < cols; ++j) std::memcpy(dst + j * static_cast<size_t>(m.ld) * elem, src + j * col, col);
}

// Where each of `arrays` starts when they are packed one after another.
std::vector<uint64_t> packed_offsets(const std::vector<wire::LapackArray>& arrays, wire::Scalar scalar) {
  std::vector<uint64_t> out;
  uint64_t at = 0;
  for (const auto& a : arrays) out.push_back(at), at += wire::array_bytes(a, scalar);
  return out;
}

// "dgesv 0x16384x1": a LAPACK call in reports and traces.
std::string lapack_label(const wire::LapackCall& c) {
  return wire::call_name(c) + " " + std::to_string(c.m) + "x" + std::to_string(c.n) + "x" + std::to_string(c.nrhs);
}

// The bytes [begin, end) of the packed arrays `arrays` (wire::layout order) copied from the
// application's arrays `refs` into `packed`.
void pack_range(const std::vector<wire::LapackArray>& arrays, const MatrixRef* refs, wire::Scalar scalar,
                uint64_t begin, uint64_t end, std::byte* packed) {
  uint64_t at = 0;
  for (size_t i = 0; i < arrays.size(); ++i) {
    const auto& a = arrays[i];
    const uint64_t elem = wire::array_element_bytes(a, scalar), col = static_cast<uint64_t>(a.rows) * elem;
    const uint64_t bytes = wire::array_bytes(a, scalar);
    const uint64_t lo = std::max(begin, at), hi = std::min(end, at + bytes);
    const auto* src = static_cast<const std::byte*>(refs[i].data);
    const uint64_t ld = static_cast<uint64_t>(refs[i].ld) * elem;
    for (uint64_t p = lo; p < hi;) {  // column by column (one copy where the array is contiguous)
      const uint64_t j = (p - at) / col, r = (p - at) % col;
      const bool contiguous = a.cols <= 1 || ld == col;
      const uint64_t n = contiguous ? hi - p : std::min(hi - p, col - r);
      std::memcpy(packed + p, contiguous ? src + (p - at) : src + j * ld + r, n);
      p += n;
    }
    at += bytes;
  }
}

// The end of a chunked or direct LAPACK call: a failed or malformed reply restores what the call
// may have overwritten and falls back; otherwise the outputs that landed aside (`direct[i]` false)
// are copied into the application's arrays. `times`: start, sent, answered.
template <class FallBack, class Restore>
bool finish_lapack(Runtime& rt, const wire::LapackCall& call, const wire::LapackLayout& l, const MatrixRef* outputs,
                   const std::vector<bool>& direct, const transport::Buffer& aside, const wire::Message& reply,
                   int64_t* info, std::array<uint64_t, 3> times, FallBack& fall_back, Restore restore) {
  auto* r = std::get_if<wire::LapackReply>(&reply);
  if (!r || !r->ok || r->payload_bytes != 0 || r->info < 0) {
    restore();
    return fall_back(r && !r->ok ? "server: " + r->message : std::string("unexpected reply"));
  }
  const std::vector<uint64_t> out_offsets = packed_offsets(l.outputs, call.scalar);
  for (size_t i = 0; i < l.outputs.size(); ++i)
    if (!direct[i] && wire::array_bytes(l.outputs[i], call.scalar))
      unpack_array(aside.data() + out_offsets[i], l.outputs[i].rows, l.outputs[i].cols,
                   wire::array_element_bytes(l.outputs[i], call.scalar), outputs[i]);
  *info = r->info;
  rt.remote_succeeded();
  account(rt, wire::call_name(call), lapack_label(call), *r, {times[0], times[1], times[2], now_ns()},
          wire::request_bytes(call), wire::reply_bytes(call));
  return true;
}

// A large LAPACK call, pipelined: the inputs travel in chunks, packed into a staging buffer a
// little ahead of the sends, and the outputs come back in pieces, each landing straight in the
// application's array where that is contiguous (else aside, copied in at the end). The staging
// buffer keeps the inputs: if the call fails after pieces of an array updated in place have
// landed, the array gets its values back from there for the local rerun.
template <class FallBack>
bool chunked_lapack(Runtime& rt, Connection& conn, const wire::LapackCall& call, const wire::LapackLayout& l,
                    const MatrixRef* inputs, const MatrixRef* outputs, uint64_t chunk, int64_t* info, uint64_t t0,
                    FallBack& fall_back) {
  const Settings& settings = rt.settings();
  const uint64_t sent = wire::request_bytes(call), reply_bytes = wire::reply_bytes(call);
  transport::Buffer staging = transport::Buffer::allocate(sent);
  const std::vector<uint64_t> out_offsets = packed_offsets(l.outputs, call.scalar);
  std::vector<bool> direct;
  bool any_aside = false;
  for (size_t i = 0; i < l.outputs.size(); ++i) {
    direct.push_back(l.outputs[i].cols <= 1 || outputs[i].ld == l.outputs[i].rows);
    any_aside = any_aside || !direct.back();
  }
  transport::Buffer aside = any_aside ? transport::Buffer::allocate(reply_bytes) : transport::Buffer();
  // A thread of its own packs the chunks in order, ahead of the sends: packing on the thread that
  // drives the transport would take turns with the transfers instead of overlapping them. No
  // result can exist before all input was packed and sent.
  std::atomic<uint64_t> packed{0};
  std::atomic<bool> stop{false};
  std::thread packer([&] {
    for (uint64_t begin = 0; begin < sent && !stop.load(std::memory_order_relaxed); begin += chunk) {
      const uint64_t end = std::min(sent, begin + chunk);
      pack_range(l.inputs, inputs, call.scalar, begin, end, staging.data());
      packed.store(end, std::memory_order_release);
    }
  });
  auto join_packer = [&] {
    stop.store(true);
    if (packer.joinable()) packer.join();
  };
  struct Joined {  // on every way out, exceptions too
    decltype(join_packer)& join;
    ~Joined() { join(); }
  } joined{join_packer};
  auto land = [&](uint64_t offset, uint64_t bytes) -> std::byte* {
    if (packed.load(std::memory_order_acquire) < sent) return nullptr;
    size_t i = l.outputs.size();
    while (i > 0 && out_offsets[i - 1] > offset) --i;  // the array the piece starts in
    if (i == 0) return nullptr;
    --i;
    const uint64_t within = offset - out_offsets[i];
    if (within + bytes > wire::array_bytes(l.outputs[i], call.scalar)) return nullptr;  // spans two arrays
    return direct[i] ? static_cast<std::byte*>(const_cast<void*>(outputs[i].data)) + within : aside.data() + offset;
  };
  auto restore = [&] {  // the arrays updated in place, as they were
    if (packed.load() < sent) return;  // nothing landed
    const std::vector<uint64_t> in_offsets = packed_offsets(l.inputs, call.scalar);
    for (size_t i = 0; i < l.outputs.size(); ++i) {
      const auto& o = l.outputs[i];
      if (o.from_input >= 0 && direct[i])
        unpack_array(staging.data() + in_offsets[o.from_input], o.rows, o.cols, wire::array_element_bytes(o, call.scalar),
                     outputs[i]);
    }
  };
  const uint64_t t1 = now_ns();
  wire::Message reply;
  try {
    reply = conn.chunked_request(
        wire::LapackChunk{0, call, sent, chunk, 0}, {{staging.data(), sent}}, land, reply_bytes, settings.timeout_seconds,
        static_cast<unsigned>(settings.chunk_window),
        [&](uint64_t, uint64_t end) {  // the chunk about to be sent must be packed
          while (packed.load(std::memory_order_acquire) < end) sched_yield();
        });
  } catch (const Error& e) {
    join_packer();
    restore();
    return fall_back(e.what());
  }
  join_packer();
  return finish_lapack(rt, call, l, outputs, direct, aside, reply, info, {t0, t1, now_ns()}, fall_back, restore);
}


// Copies `bytes` from src to dst with `threads` threads (the caller's among them): one thread
// copies memory at a fraction of what the machine can.
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

// A large LAPACK call on the direct path: the server copies the inputs out of the application's
// arrays (or out of a packed copy, for an array that is not contiguous) and the outputs into
// them, over its copy lanes, in parallel; this thread registers the memory and waits. Outputs
// that overwrite inputs in place (A, B) are gated: the server writes none of them before their
// values are kept here (copy_threads threads, while the server fetches and computes), so a failed
// call still reruns locally on the original values.
template <class FallBack>
bool direct_lapack(Runtime& rt, Connection& conn, const wire::LapackCall& call, const wire::LapackLayout& l,
                   const MatrixRef* inputs, const MatrixRef* outputs, int64_t* info, uint64_t t0,
                   FallBack& fall_back) {
  const Settings& settings = rt.settings();
  const uint64_t sent = wire::request_bytes(call), reply_bytes = wire::reply_bytes(call);
  const std::vector<uint64_t> in_offsets = packed_offsets(l.inputs, call.scalar);
  const std::vector<uint64_t> out_offsets = packed_offsets(l.outputs, call.scalar);
  auto contiguous = [](const wire::LapackArray& a, const MatrixRef& m) { return a.cols <= 1 || m.ld == a.rows; };
  wire::DirectLapack d{0, call, {}, {}, {}, false};
  std::vector<transport::Registration> registrations;
  std::map<std::pair<const void*, uint64_t>, uint32_t> key_of;  // one registration per memory range
  auto key = [&](const void* data, uint64_t bytes) {
    auto [it, fresh] = key_of.try_emplace({data, bytes}, static_cast<uint32_t>(d.keys.size()));
    if (fresh) {
      registrations.push_back(conn.register_memory(const_cast<void*>(data), bytes));
      d.keys.push_back(registrations.back().key());
    }
    return it->second;
  };
  auto extent = [&](const void* data, uint64_t bytes, const void* region, uint64_t region_bytes) {
    return wire::Extent{reinterpret_cast<uint64_t>(data), bytes, key(region, region_bytes)};
  };
  transport::Buffer packed, aside, kept;
  for (size_t i = 0; i < l.inputs.size(); ++i) {
    const uint64_t bytes = wire::array_bytes(l.inputs[i], call.scalar);
    if (bytes == 0) continue;
    if (contiguous(l.inputs[i], inputs[i])) {
      d.input.push_back(extent(inputs[i].data, bytes, inputs[i].data, bytes));
      continue;
    }
    if (!packed.data()) packed = transport::Buffer::allocate(sent);
    pack_range(l.inputs, inputs, call.scalar, in_offsets[i], in_offsets[i] + bytes, packed.data());
    d.input.push_back(extent(packed.data() + in_offsets[i], bytes, packed.data(), sent));
  }
  std::vector<bool> direct;
  std::vector<size_t> in_place;  // outputs written straight over an input: kept before they are
  uint64_t kept_bytes = 0;
  for (size_t i = 0; i < l.outputs.size(); ++i) {
    const auto& o = l.outputs[i];
    const uint64_t bytes = wire::array_bytes(o, call.scalar);
    direct.push_back(contiguous(o, outputs[i]));
    if (bytes == 0) continue;
    if (direct[i]) {
      d.output.push_back(extent(outputs[i].data, bytes, outputs[i].data, bytes));
      if (o.from_input >= 0) in_place.push_back(i), kept_bytes += bytes;
      continue;
    }
    if (!aside.data()) aside = transport::Buffer::allocate(reply_bytes);
    d.output.push_back(extent(aside.data() + out_offsets[i], bytes, aside.data(), reply_bytes));
  }
  d.gated = !in_place.empty();
  if (d.gated) kept = transport::Buffer::allocate(kept_bytes);
  auto keep = [&] {
    uint64_t at = 0;
    for (size_t i : in_place) {
      const uint64_t bytes = wire::array_bytes(l.outputs[i], call.scalar);
      parallel_copy(kept.data() + at, static_cast<const std::byte*>(outputs[i].data), bytes,
                    static_cast<unsigned>(settings.copy_threads));
      at += bytes;
    }
  };
  auto restore = [&] {
    uint64_t at = 0;
    for (size_t i : in_place) {
      const uint64_t bytes = wire::array_bytes(l.outputs[i], call.scalar);
      std::memcpy(const_cast<void*>(outputs[i].data), kept.data() + at, bytes);
      at += bytes;
    }
  };
  const uint64_t t1 = now_ns();
  bool proceeded = false;
  wire::Message reply;
  try {
    reply = conn.direct_request(std::move(d), keep, proceeded, settings.timeout_seconds);
  } catch (const Error& e) {
    if (proceeded) restore();
    return fall_back(e.what());
  }
  return finish_lapack(rt, call, l, outputs, direct, aside, reply, info, {t0, t1, now_ns()}, fall_back, [&] {
    if (proceeded) restore();
  });
}

}  // namespace

bool offload_lapack(const wire::LapackCall& call, const MatrixRef* inputs, const MatrixRef* outputs,
                    int64_t* info) noexcept {
  std::string name;
  try {
    Runtime& rt = runtime();
    name = wire::call_name(call);
    const Settings& settings = rt.settings();
    const bool remote = settings.offload == OffloadMode::always ||
                        (settings.offload == OffloadMode::automatic && wire::flops(call) >= settings.min_flops);
    if (!remote) {
      rt.record(name, [](RoutineStats& s) { ++s.local; });
      return false;
    }
    auto fall_back = [&](const std::string& why) {
      rt.remote_failed(name, why);
      rt.record(name, [](RoutineStats& s) { ++s.fell_back; });
      return false;
    };
    wire::validate(call);
    const wire::LapackLayout l = wire::layout(call);
    std::string why;
    std::shared_ptr<Connection> conn = rt.connection(why);
    if (!conn) return fall_back(why);
    const uint64_t t0 = now_ns();
    const uint64_t chunk = static_cast<uint64_t>(settings.chunk_bytes);
    if (chunk && wire::request_bytes(call) >= 2 * chunk && settings.direct) {
      uint32_t lanes = 0;
      try {
        lanes = conn->direct_lanes(settings.timeout_seconds, settings.direct_cma);
      } catch (const Error& e) {
        return fall_back(e.what());
      }
      if (lanes) return direct_lapack(rt, *conn, call, l, inputs, outputs, info, t0, fall_back);
    }
    if (chunk && wire::request_bytes(call) >= 2 * chunk)
      return chunked_lapack(rt, *conn, call, l, inputs, outputs, chunk, info, t0, fall_back);
    std::vector<transport::Buffer> scratch;
    std::vector<transport::Segment> payload;
    for (size_t i = 0; i < l.inputs.size(); ++i) {
      const auto& a = l.inputs[i];
      transport::Segment seg = pack_array(a.rows, a.cols, wire::array_element_bytes(a, call.scalar), inputs[i], scratch);
      if (seg.bytes) payload.push_back(seg);
    }
    const uint64_t sent = wire::request_bytes(call), reply_bytes = wire::reply_bytes(call);
    // The results land aside and are copied in on success: a failed call leaves the arrays as
    // they were, for the local rerun.
    transport::Buffer result = transport::Buffer::allocate(std::max<uint64_t>(reply_bytes, 1));
    const uint64_t t1 = now_ns();
    wire::Message reply;
    try {
      reply = conn->request(wire::LapackRequest{0, call, sent}, std::move(payload), result.data(), reply_bytes,
                            settings.timeout_seconds);
    } catch (const Error& e) {
      return fall_back(e.what());
    }
    const uint64_t t2 = now_ns();
    auto* r = std::get_if<wire::LapackReply>(&reply);
    if (!r || !r->ok || r->payload_bytes != reply_bytes || r->info < 0)
      return fall_back(r && !r->ok ? "server: " + r->message : std::string("unexpected reply"));
    uint64_t offset = 0;
    for (size_t i = 0; i < l.outputs.size(); ++i) {
      const auto& a = l.outputs[i];
      const size_t elem = wire::array_element_bytes(a, call.scalar);
      unpack_array(result.data() + offset, a.rows, a.cols, elem, outputs[i]);
      offset += wire::array_bytes(a, call.scalar);
    }
    *info = r->info;
    rt.remote_succeeded();
    const uint64_t t3 = now_ns();
    account(rt, name, lapack_label(call), *r, {t0, t1, t2, t3}, sent, reply_bytes);
    return true;
  } catch (const std::bad_alloc&) {
    runtime().remote_failed(name, "out of memory for staging buffers");
  } catch (const std::exception& e) {
    runtime().remote_failed(name, e.what());
  }
  return false;
}

}  // namespace outboard::client
