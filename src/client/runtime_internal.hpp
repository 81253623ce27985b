// The runtime core as the API files (blas3.cpp, lapack.cpp, fft.cpp) see it: the process's one
// Runtime (settings, connection with retry, fallback warnings, report, trace), the accounting of a
// remote call, and the staging helpers they share. Internal to liboutboard-client.so: nothing here
// is exported, and no shim includes it (the shims include runtime.hpp and fft.hpp).
//
// An API function follows one pattern:
//
//   bool offload_x(...) noexcept {
//     std::string name;
//     return guarded(name, [&] {
//       Runtime& rt = runtime();
//       name = ...;                                      // the routine, for reports and warnings
//       if (!rt.wants_remote({name, flops, bytes})) return rt.ran_locally(name);
//       FallBack fall_back{rt, name};                    // fall_back(why): warn once, count, false
//       std::string why;
//       std::shared_ptr<Connection> conn = rt.connection(why);
//       if (!conn) return fall_back(why);
//       ... t0 = now_ns(); pack; t1; conn->request(...) (catch Error: return fall_back(e.what()));
//       t2; check the reply (else fall_back); unpack; rt.remote_succeeded(t0);
//       account(rt, name, label, reply, {t0, t1, t2, now_ns()}, sent, back, flops);
//       return true;
//     });
//   }
#pragma once
#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "client/connection.hpp"
#include "client/link_model.hpp"
#include "client/runtime.hpp"
#include "client/settings.hpp"
#include "transport/buffer.hpp"

namespace outboard::client {

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

// Where the server says its share of a call went (every reply type carries these fields).
struct ServerTimes {
  uint64_t receive_ns = 0, queue_ns = 0, to_device_ns = 0, compute_ns = 0, from_device_ns = 0;
};

// The process's one runtime: every shim's calls, all threads, one connection per server.
class Runtime {
 public:
  Runtime();

  const Settings& settings() const { return settings_; }

  // Whether a call of `flops` floating-point operations may go remote under the offload policy
  // (never, always, or auto: at least OUTBOARD_MIN_FLOPS): the cheap first test.
  bool may_go_remote(double flops) const;
  // Whether the call goes remote: may_go_remote, then in auto mode the cost model (unless
  // OUTBOARD_AUTO_RULE=flops). A call the model keeps here is timed by the shim (LocalTiming).
  bool wants_remote(const CallCost& c);
  // The cost model's choice alone (auto mode, model rule), once the link has been measured.
  bool model_chooses_remote(const CallCost& c);
  LinkModel& link_model() { return model_; }

  // One server of OUTBOARD_SERVERS as this process sees it: its connection once made, its
  // health, and how many of this process's calls run there now.
  struct Server {
    ServerAddress address;
    std::shared_ptr<Connection> conn;
    uint64_t retry_after_ns = 0;  // it failed: not tried again before (OUTBOARD_RETRY_SECONDS)
    std::string last_error;
    std::atomic<uint32_t> calls{0};
  };
  // A call's hold on a server: counted among its calls while held.
  class Lease {
   public:
    Lease() = default;
    Lease(Server* s, std::shared_ptr<Connection> c) : server(s), conn(std::move(c)) { if (server) ++server->calls; }
    ~Lease() { if (server) --server->calls; }
    Lease(Lease&& o) noexcept : server(std::exchange(o.server, nullptr)), conn(std::move(o.conn)) {}
    Lease& operator=(Lease&&) = delete;
    Server* server = nullptr;
    std::shared_ptr<Connection> conn;
  };

  // The server for the next call, connecting if needed: among the servers not in `tried` that are
  // healthy (never failed, or failed more than OUTBOARD_RETRY_SECONDS ago), `prefer`'s if it is
  // one of them, else the least loaded — the calls its last answer reported plus this process's
  // calls there now; a server not yet connected counts as half a call (none for the process's
  // home server, the first of its rotation, which it so returns to once recovered), so an idle
  // connected one is kept and a busy one makes way; ties go to a server not yet connected, then to
  // more free device memory, then to the list order rotated by the process id (clients of one job
  // start on different servers). An empty lease
  // (and `why`) when none is left. An `early` attempt (early_connect.cpp) that fails leaves the
  // next call to try again.
  Lease lease(std::string& why, const std::vector<const Server*>& tried = {}, const Connection* prefer = nullptr,
              bool early = false);
  // Leases on at most `most` distinct servers for one call spread over them: the first as lease()
  // gives it, then more while the next best is idle (none of this process's calls there, and
  // Connection::idle_but_for_us). Empty, with `why`, when no server can be had.
  std::vector<Lease> spread(size_t most, std::string& why);
  // The live connection to the best server (as lease()), for callers that hold no lease.
  std::shared_ptr<Connection> connection(std::string& why, bool early = false) { return lease(why, {}, nullptr, early).conn; }
  // A call failed on the lease's server: if its connection died, the server is marked failed
  // until OUTBOARD_RETRY_SECONDS pass (with a warning naming it while other servers remain).
  void attempt_failed(const Lease& lease, const std::string& why);

  // A call that could not run remotely: one warning per failure episode, not one per call; with
  // OUTBOARD_FALLBACK=fail, ends the process with a message instead.
  void remote_failed(const std::string& routine, const std::string& why);
  // A call that started at `started_ns` (now_ns()) ran remotely: the next failure warns again —
  // unless a failure came after the call started (calls of other threads in flight when the
  // connection was lost may still complete: they do not end the episode that loss began).
  void remote_succeeded(uint64_t started_ns) {
    if (started_ns > last_failure_ns_.load()) warned_.store(false);
  }

  // Updates `routine`'s line of the exit report (nothing unless OUTBOARD_REPORT is set).
  void record(const std::string& routine, const std::function<void(RoutineStats&)>& update);
  // Counts a call that runs locally by the policy; returns false (the caller runs it locally).
  bool ran_locally(const std::string& routine);

  // OUTBOARD_TRACE: whether calls are traced, and the trace's clock.
  bool tracing() const { return !settings_.trace_file.empty(); }
  double seconds_since_start(uint64_t ns) const { return (ns - started_ns_) / 1e9; }
  void trace(TraceEntry e);
  // "host:pid:program", how the server names this process's sessions.
  static std::string client_name();

 private:
  void print_report();
  void write_trace();
  // At exit (auto mode, OUTBOARD_MODEL_FILE): what the model measured, for the next process.
  void remember_model();
  // The server processes `s` named as its siblings (a worker per GPU) join the list, once each.
  void add_siblings(const Server& s);

  // The connect-time probe of the cost model: a few round trips, then a burst of bulk messages.
  void probe_link(Connection& conn);

  Settings settings_;
  LinkModel model_{settings_};
  size_t model_recalled_ = 0;  // families the model brought from OUTBOARD_MODEL_FILE
  std::mutex mu_;
  std::vector<std::unique_ptr<Server>> servers_;
  std::atomic<bool> warned_{false};
  std::atomic<uint64_t> last_failure_ns_{0};
  std::mutex stats_mu_;
  std::map<std::string, RoutineStats> stats_;
  uint64_t started_ns_;
  std::vector<TraceEntry> trace_;
  uint64_t trace_dropped_ = 0;
};

// The runtime of this process, created at the first use and never destroyed (calls may arrive
// from other libraries' destructors). A child after fork() gets a fresh one at its first use: it
// must not use its parent's connection.
Runtime& runtime();

// The fallback of one call of `routine`: fall_back(why) warns (or ends the process, with
// OUTBOARD_FALLBACK=fail), counts the call as fallen back and returns false, so that a failure
// path reads `return fall_back(e.what());`.
//
// Inside on_servers() a FallBack records the failure of the attempt on one server instead
// (`attempt` set): on_servers then tries the next server, and falls back only when none is left.
struct Attempt {
  bool failed = false;
  std::string why;
};
struct FallBack {
  Runtime& rt;
  const std::string& routine;
  Attempt* attempt = nullptr;
  bool operator()(const std::string& why) const;
};

// Runs a call on the servers: `body(conn, fall_back)` makes the call through `conn` and returns
// true when it ran remotely; where it fails (it returns fall_back(why)), it runs again on the next
// server (its inputs are as they were: each path restores what it changed before failing), and
// when no server is left the call falls back to local execution. A body that returns false
// without calling fall_back chose local execution: that stands. `prefer`: a connection to keep
// the call on while its server is healthy (the server that knows an FFT plan).
template <class Body>
bool on_servers(Runtime& rt, const std::string& routine, Body&& body, const Connection* prefer = nullptr) {
  std::vector<const Runtime::Server*> tried;
  std::string why;
  for (;;) {
    Runtime::Lease lease = rt.lease(why, tried, prefer);
    if (!lease.conn) return FallBack{rt, routine}(why);
    Attempt attempt;
    if (body(lease.conn, FallBack{rt, routine, &attempt})) return true;
    if (!attempt.failed) return false;
    why = attempt.why;
    rt.attempt_failed(lease, why);
    tried.push_back(lease.server);
  }
}

// Runs an API function's body, which sets `routine` as soon as it knows it. An exception the body
// lets out is a remote failure of `routine` (out of memory, a malformed call...): false, after
// remote_failed. For the noexcept entry points.
template <class Body>
bool guarded(std::string& routine, Body&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    runtime().remote_failed(routine, "out of memory for staging buffers");
  } catch (const std::exception& e) {
    runtime().remote_failed(routine, e.what());
  }
  return false;
}

// A remote call's times, for the report and the trace: `t` = start, packed, answered, unpacked;
// `server` where the server says its share went; `sent` and `back` the bytes each way; `flops`
// the call's (the cost model learns the link and the server's rate from them).
void account(Runtime& rt, const std::string& routine, const std::string& label, const ServerTimes& server,
             const std::array<uint64_t, 4>& t, uint64_t sent, uint64_t back, double flops);
// The same from a reply that carries the server's times (CallReply, LapackReply, ...).
template <class Reply>
void account(Runtime& rt, const std::string& routine, const std::string& label, const Reply& r,
             const std::array<uint64_t, 4>& t, uint64_t sent, uint64_t back, double flops) {
  account(rt, routine, label, ServerTimes{r.receive_ns, r.queue_ns, r.to_device_ns, r.compute_ns, r.from_device_ns},
          t, sent, back, flops);
}

// Staging of column-major arrays of `rows` x `cols` elements of `elem` bytes. pack_columns: the
// payload segment for `m`, which travels as it is where it is contiguous (the leading dimension
// equals the rows, or one column), else packed into a buffer added to `scratch`.
transport::Segment pack_columns(int64_t rows, int64_t cols, size_t elem, MatrixRef m,
                                std::vector<transport::Buffer>& scratch);
// unpack_columns, its counterpart: reply_outputs.hpp.

// Runs run(i) for every i < n at once: i >= 1 on threads of their own, 0 on the caller's (and,
// where no thread can be had, the rest after it); returns when all have.
void run_at_once(size_t n, const std::function<void(size_t)>& run);

// Copies `bytes` from src to dst with `threads` threads (the caller's among them): one thread
// copies memory at a fraction of what the machine can.
void parallel_copy(std::byte* dst, const std::byte* src, uint64_t bytes, unsigned threads);

// Faults in, writable, the pages of [data, data + bytes) on background threads (at most
// `threads`) without changing their contents, until destroyed: a result that lands in a matrix the
// program never touched would otherwise take a page fault per page as it arrives, on the path of
// the call's last block (a fresh process's first DGEMM 16384 on the H200 host spent its extra time
// writing back into a C the program had never touched). Best effort: where the kernel lacks
// MADV_POPULATE_WRITE nothing happens.
class Prefault {
 public:
  Prefault(void* data, uint64_t bytes, unsigned threads);
  ~Prefault();
  Prefault(const Prefault&) = delete;
  Prefault& operator=(const Prefault&) = delete;

 private:
  std::vector<std::thread> threads_;
};

}  // namespace outboard::client
