#include "backends/opencl/direct_transfer.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <functional>
#include <mutex>

namespace outboard::backends {
namespace {

using Piece = StagingBudget::Piece;

cl_uint count(const std::vector<cl_event>& w) { return static_cast<cl_uint>(w.size()); }
const cl_event* list(const std::vector<cl_event>& w) { return w.empty() ? nullptr : w.data(); }

// Runs fn(status) once `e` has completed or failed: from the native callback or the event
// waiter, whichever is first (NVIDIA's callbacks come milliseconds late: event_waiter.hpp), or
// from the waiter alone where it polls.
struct Once {
  std::function<void(cl_int)> fn;
  std::atomic<bool> fired{false};
  std::atomic<int> holders{2};
};
void fire(Once* o, cl_int status) {
  if (!o->fired.exchange(true)) {
    o->fn(status);
    o->fn = nullptr;  // what it holds (a piece's memory) goes now, not when the later path fires
  }
  if (--o->holders == 0) delete o;
}
void CL_CALLBACK once_done(cl_event, cl_int status, void* arg) { fire(static_cast<Once*>(arg), status); }
// `e` is held here until its callback is registered: fn, run by whichever path fires first (the
// waiter may before the registration), may release the caller's hold, and the waiter lets go of
// its own once it has fired (the event freed under clSetEventCallback crashed the server, once
// in ~30 runs of opencl_queued).
void when_done(EventWaiter& waiter, cl_event e, std::function<void(cl_int)> fn) {
  auto* o = new Once{std::move(fn)};
  // Pieces between the device and staging memory are polled like kernels where the waiter polls:
  // with them polled, non-blocking 256 MiB transfers on the H200 host ran at 0.96-0.97x NVIDIA's
  // own, against 0.76-0.82x with blocking waits (run 8 against run 7, bench/results/h200/opencl).
  if (waiter.reports_alone(/*host_copy=*/false)) {
    o->holders = 1;
    waiter.watch(e, [o](cl_int status) { fire(o, status); });
    return;
  }
  clRetainEvent(e);
  waiter.watch(e, [o](cl_int status) { fire(o, status); });
  if (clSetEventCallback(e, CL_COMPLETE, once_done, o) != CL_SUCCESS && --o->holders == 0) delete o;  // the waiter alone
  clReleaseEvent(e);
}

std::array<uint64_t, 4> profile_of(const std::vector<cl_event>& pieces) {
  std::array<uint64_t, 4> p{};
  if (pieces.empty()) return p;
  const cl_profiling_info first[] = {CL_PROFILING_COMMAND_QUEUED, CL_PROFILING_COMMAND_SUBMIT,
                                     CL_PROFILING_COMMAND_START};
  for (int i = 0; i < 3; ++i) {
    cl_ulong t = 0;
    if (clGetEventProfilingInfo(pieces.front(), first[i], sizeof t, &t, nullptr) != CL_SUCCESS) return {};
    p[i] = t;
  }
  for (cl_event e : pieces) {
    cl_ulong t = 0;
    if (clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_END, sizeof t, &t, nullptr) != CL_SUCCESS) return {};
    p[3] = std::max<uint64_t>(p[3], t);
  }
  return p;
}

// One transfer in flight, from its start marker's completion to its last piece.
class Transfer final : public StagingBudget::Taker, public std::enable_shared_from_this<Transfer> {
 public:
  Transfer(const DirectSession& s, const DirectTransfer& t, cl_event end_gate) : s_(s), t_(t), gate_(end_gate) {
    const uint64_t piece = s.staging->piece_bytes(t.bytes);
    left_ = unfetched_ = static_cast<int64_t>((t.bytes + piece - 1) / piece);
  }

  // The command's turn has come (or what it waited for failed): its pieces are asked for.
  void begin(cl_int start_status) {
    if (start_status < 0) {
      failed(start_status);
      if (t_.write) answer();
      finish();
      return;
    }
    s_.staging->ask(shared_from_this(), t_.bytes);
  }

  void take(std::shared_ptr<Piece> piece) override {
    if (!piece->memory.data()) failed(CL_OUT_OF_HOST_MEMORY);
    if (failed()) {  // the rest of a failed transfer is only counted
      if (t_.write) one_fetched();
      piece_done();
      return;
    }
    if (t_.write) {
      copy(false, std::move(piece), [self = shared_from_this()](std::shared_ptr<Piece> p) { self->fetched(std::move(p)); });
    } else {
      device(std::move(piece), [self = shared_from_this()](std::shared_ptr<Piece> p) { self->read(std::move(p)); });
    }
  }

 private:
  bool failed() const { return status_.load() != CL_SUCCESS; }
  void failed(cl_int code) {
    int32_t ok = CL_SUCCESS;
    status_.compare_exchange_strong(ok, code);
  }

  // A read's piece is in host memory: the lanes copy it into the client's.
  void read(std::shared_ptr<Piece> p) {
    if (failed()) return piece_done();
    copy(true, std::move(p), [self = shared_from_this()](std::shared_ptr<Piece>) { self->piece_done(); });
  }
  // A write's piece is here: the device writes it (the client's memory is free once all are).
  void fetched(std::shared_ptr<Piece> p) {
    one_fetched();
    if (failed()) return piece_done();
    device(std::move(p), [self = shared_from_this()](std::shared_ptr<Piece>) { self->piece_done(); });
  }

  // The piece's device read or write on the mover; then(piece) once it has completed.
  void device(std::shared_ptr<Piece> p, std::function<void(std::shared_ptr<Piece>)> then) {
    cl_event e = nullptr;
    std::byte* host = p->memory.data();
    const uint64_t at = t_.offset + p->at;
    const cl_int rc = t_.write ? clEnqueueWriteBuffer(t_.mover, t_.mem, CL_FALSE, at, p->bytes, host, 0, nullptr, &e)
                               : clEnqueueReadBuffer(t_.mover, t_.mem, CL_FALSE, at, p->bytes, host, 0, nullptr, &e);
    if (rc != CL_SUCCESS) {
      failed(rc);
      return piece_done();
    }
    clFlush(t_.mover);
    {
      std::lock_guard lk(mu_);
      events_.push_back(e);  // released at the end, after its profile is read
    }
    when_done(*s_.waiter, e, [self = shared_from_this(), p = std::move(p), then = std::move(then)](cl_int st) mutable {
      if (st < 0) self->failed(st);
      then(std::move(p));
    });
  }

  // The lanes' copies of a piece between its memory and the client's (put: to the client), split
  // over the lanes; then(piece) once every part is done.
  void copy(bool put, std::shared_ptr<Piece> p, std::function<void(std::shared_ptr<Piece>)> then) {
    const uint64_t lanes = std::max(1u, s_.memory->lanes());
    const uint64_t parts = std::clamp<uint64_t>(p->bytes / kMinLaneCopyBytes, 1, lanes);
    const uint64_t part = (p->bytes + parts - 1) / parts;
    struct Parts {
      std::shared_ptr<Piece> piece;
      std::function<void(std::shared_ptr<Piece>)> then;
      std::atomic<int64_t> left;
      std::atomic<bool> ok{true};
    };
    auto all = std::make_shared<Parts>();
    all->left = static_cast<int64_t>((p->bytes + part - 1) / part);
    all->then = std::move(then);
    std::byte* local = p->memory.data();
    const uint64_t at = p->at, bytes = p->bytes;
    all->piece = std::move(p);
    for (uint64_t from = 0; from < bytes; from += part) {
      const unsigned lane = next_lane_.fetch_add(1);
      s_.memory->copy(lane, put, t_.region, t_.address + at + from, local + from, std::min(part, bytes - from),
                      [self = shared_from_this(), all](bool ok) {
                        if (!ok) all->ok = false;
                        if (--all->left > 0) return;
                        if (!all->ok.load()) self->failed(CL_OUT_OF_RESOURCES);
                        auto then = std::move(all->then);
                        then(std::move(all->piece));
                      });
    }
  }

  // A write's pieces are all here (or the write failed): answered, the client's memory is free.
  void one_fetched() {
    if (--unfetched_ == 0) answer();
  }
  void answer() {
    if (!failed()) s_.counters->direct_bytes_written += t_.bytes;
    s_.out->reply(t_.call_id, status_.load(), {});
  }

  void piece_done() {
    if (--left_ == 0) finish();
  }
  // Every piece has moved, or the transfer failed and nothing of it is in flight any more.
  void finish() {
    s_.memory->drop(t_.region);
    const cl_int st = status_.load();
    if (st != CL_SUCCESS) {
      s_.counters->failures++;
      spdlog::debug("opencl.direct_failed write={} error={}", t_.write, cl_error_name(st));
    } else if (!t_.write) {
      s_.counters->bytes_read += t_.bytes;
      if (!t_.pieces) s_.counters->direct_bytes_read += t_.bytes;
    }
    if (t_.pieces) s_.out->reply_pieces(t_.call_id, st, st == CL_SUCCESS ? t_.bytes : 0);
    else if (!t_.write) s_.out->reply(t_.call_id, st, {});
    std::vector<cl_event> events;
    {
      std::lock_guard lk(mu_);
      events.swap(events_);
    }
    if (t_.event) {
      wire::ClNotice n;
      n.kind = static_cast<uint8_t>(wire::ClNoticeKind::event_status);
      n.object = t_.event;
      n.status = st == CL_SUCCESS ? CL_COMPLETE : st;
      if (st == CL_SUCCESS) n.profile = profile_of(events);
      s_.out->notice(std::move(n));
    }
    for (cl_event e : events) clReleaseEvent(e);
    // Reported first: the commands after it in the program's queue may complete from now on. The
    // end never fails (PoCL 3.1 aborts when a user event that commands wait for fails): the
    // program learns a failure from its event or the answer.
    clSetUserEventStatus(gate_, CL_COMPLETE);
    clReleaseEvent(gate_);
    clReleaseMemObject(t_.mem);
    clReleaseCommandQueue(t_.mover);
    --*s_.outstanding;
  }

  const DirectSession s_;
  const DirectTransfer t_;
  cl_event gate_;
  std::atomic<int64_t> left_{0};       // pieces not through yet
  std::atomic<int64_t> unfetched_{0};  // a write's pieces not fetched yet
  std::atomic<int32_t> status_{CL_SUCCESS};
  std::atomic<unsigned> next_lane_{0};
  std::mutex mu_;
  std::vector<cl_event> events_;  // the pieces' device commands
};

}  // namespace

cl_event direct_transfer(const DirectSession& s, const DirectTransfer& t) {
  auto give_up = [&](cl_int rc, const char* what) {
    s.memory->drop(t.region);
    throw DirectFail{rc, what};
  };
  cl_event start = nullptr, end = nullptr;
  cl_int rc = clEnqueueMarkerWithWaitList(t.queue, count(t.wait), list(t.wait), &start);
  if (rc != CL_SUCCESS) give_up(rc, "the transfer's start");
  cl_event gate = clCreateUserEvent(t.context, &rc);
  if (rc != CL_SUCCESS) {
    clReleaseEvent(start);
    give_up(rc, "clCreateUserEvent");
  }
  rc = clEnqueueMarkerWithWaitList(t.queue, 1, &gate, &end);
  if (rc != CL_SUCCESS) {
    clSetUserEventStatus(gate, CL_COMPLETE);
    clReleaseEvent(gate);
    clReleaseEvent(start);
    give_up(rc, "the transfer's end");
  }
  clFlush(t.queue);
  // The program may release the buffer and the queue while the pieces still move.
  clRetainMemObject(t.mem);
  clRetainCommandQueue(t.mover);
  ++*s.outstanding;
  auto x = std::make_shared<Transfer>(s, t, gate);
  when_done(*s.waiter, start, [x](cl_int st) { x->begin(st); });
  clReleaseEvent(start);
  return end;
}

}  // namespace outboard::backends
