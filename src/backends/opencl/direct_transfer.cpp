#include "backends/opencl/direct_transfer.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <string>

namespace outboard::backends {
namespace {

using server::ClClientMemory;

cl_uint count(const std::vector<cl_event>& w) { return static_cast<cl_uint>(w.size()); }
const cl_event* list(const std::vector<cl_event>& w) { return w.empty() ? nullptr : w.data(); }

// Runs fn(status) once `e` has completed or failed: from the native callback or the event
// waiter, whichever is first (NVIDIA's callbacks come milliseconds late: event_waiter.hpp).
struct Once {
  std::function<void(cl_int)> fn;
  std::atomic<bool> fired{false};
  std::atomic<int> holders{2};
};
void fire(Once* o, cl_int status) {
  if (!o->fired.exchange(true)) o->fn(status);
  if (--o->holders == 0) delete o;
}
void CL_CALLBACK once_done(cl_event, cl_int status, void* arg) { fire(static_cast<Once*>(arg), status); }
void when_done(EventWaiter& waiter, cl_event e, std::function<void(cl_int)> fn) {
  auto* o = new Once{std::move(fn)};
  if (clSetEventCallback(e, CL_COMPLETE, once_done, o) != CL_SUCCESS) --o->holders;  // the waiter alone
  waiter.watch(e, [o](cl_int status) { fire(o, status); });
}

std::array<uint64_t, 4> profile_of(const std::vector<cl_event>& pieces) {
  std::array<uint64_t, 4> p{};
  const cl_profiling_info first[] = {CL_PROFILING_COMMAND_QUEUED, CL_PROFILING_COMMAND_SUBMIT,
                                     CL_PROFILING_COMMAND_START};
  if (pieces.empty()) return p;
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

// How a piece of `bytes` is split over the lanes: parts of `part` bytes (the last shorter).
struct Split {
  uint64_t part = 0, parts = 0;
};
Split split(uint64_t bytes, unsigned lanes) {
  const uint64_t parts = std::clamp<uint64_t>(bytes / kMinLaneCopyBytes, 1, std::max(1u, lanes));
  const uint64_t part = (bytes + parts - 1) / parts;
  return {part, (bytes + part - 1) / part};
}

// Queues the copies of transfer bytes [at, at + bytes) between the staging memory and the
// client's, split as `sp` says, on lanes from `lane` on; done(ok) runs once per part.
void copy_piece(const DirectSession& s, const DirectTransfer& t, bool put, std::byte* staging, uint64_t at,
                uint64_t bytes, Split sp, unsigned lane, const std::function<void(bool)>& done) {
  for (uint64_t from = at; from < at + bytes; from += sp.part) {
    const uint64_t len = std::min(sp.part, at + bytes - from);
    s.memory->copy(lane++, put, t.region, t.address + from, staging + from, len, done);
  }
}

// A read in flight: every piece's device read, then its copy into the client's memory.
struct Read : std::enable_shared_from_this<Read> {
  DirectSession s;
  DirectTransfer t;
  std::shared_ptr<transport::Buffer> staging;
  std::vector<cl_event> pieces;  // retained until the end
  std::atomic<int64_t> left{1};  // reads and copies not yet complete, and the session's hold
  std::atomic<int32_t> status{CL_SUCCESS};
  std::atomic<unsigned> next_lane{0};

  void failed(cl_int code) {
    int32_t ok = CL_SUCCESS;
    status.compare_exchange_strong(ok, code);
  }
  void one_done() {
    if (--left == 0) finish();
  }
  // Everything is in the client's memory, or the read failed: answered, and its event reported.
  void finish() {
    s.memory->drop(t.region);
    const cl_int st = status.load();
    if (st == CL_SUCCESS) {
      s.counters->bytes_read += t.bytes;
      s.counters->direct_bytes_read += t.bytes;
    } else {
      s.counters->failures++;
    }
    s.out->reply(t.call_id, st, {});
    if (t.event) {
      wire::ClNotice n;
      n.kind = static_cast<uint8_t>(wire::ClNoticeKind::event_status);
      n.object = t.event;
      n.status = st == CL_SUCCESS ? CL_COMPLETE : st;
      if (st == CL_SUCCESS) n.profile = profile_of(pieces);
      s.out->notice(std::move(n));
    }
    for (cl_event e : pieces) clReleaseEvent(e);
    pieces.clear();
    staging.reset();
    --*s.outstanding;
  }
  // A piece is in host memory: its copies into the client's go out now.
  void piece_read(cl_int st, uint64_t at, uint64_t len) {
    if (st < 0) failed(st);
    if (status.load() == CL_SUCCESS) {
      const Split sp = split(len, s.memory->lanes());
      left += static_cast<int64_t>(sp.parts);
      copy_piece(s, t, true, staging->data(), at, len, sp, next_lane.fetch_add(static_cast<unsigned>(sp.parts)),
                 [self = shared_from_this()](bool ok) {
                   if (!ok) self->failed(CL_OUT_OF_RESOURCES);
                   self->one_done();
                 });
    }
    one_done();  // the piece's device read
  }
};

// The host memory of a write's pieces: kept until each device write has completed.
void CL_CALLBACK release_staging(cl_event, cl_int, void* arg) {
  delete static_cast<std::shared_ptr<transport::Buffer>*>(arg);
}

// A write's fetch from the client's memory: answered once every piece is here (or failed).
struct Fetch {
  DirectSession s;
  DirectTransfer t;
  std::shared_ptr<transport::Buffer> staging;  // the lanes write into it
  std::atomic<int64_t> left{0};  // pieces not fetched yet
  std::atomic<int32_t> status{CL_SUCCESS};

  void piece_fetched(cl_int st) {
    if (st != CL_SUCCESS) {
      int32_t ok = CL_SUCCESS;
      status.compare_exchange_strong(ok, st);
    }
    if (--left > 0) return;
    s.memory->drop(t.region);
    if (status.load() == CL_SUCCESS) s.counters->direct_bytes_written += t.bytes;
    s.out->reply(t.call_id, status.load(), {});
    staging.reset();
    --*s.outstanding;
  }
};

// One piece of a write: its parts' copies, then its device write's gate opens.
struct Gate {
  std::shared_ptr<Fetch> fetch;
  cl_event event = nullptr;  // the user event the device write waits for
  std::byte* piece = nullptr;  // its staging memory (the fetch keeps it)
  uint64_t bytes = 0;
  std::atomic<int64_t> left{0};
  std::atomic<bool> ok{true};

  void part_done(bool part_ok) {
    if (!part_ok) ok = false;
    if (--left > 0) return;
    const bool good = ok.load();
    // A failed fetch still opens the gate, on zeros: PoCL 3.1 aborts when a user event that
    // commands wait for fails (pocl_update_event_failed), and reused staging memory may hold
    // another session's bytes. The command fails all the same: the answer says so first.
    if (!good) std::memset(piece, 0, bytes);
    // Answered before the device write can complete: the answer reaches the client first.
    fetch->piece_fetched(good ? CL_SUCCESS : CL_OUT_OF_RESOURCES);
    clSetUserEventStatus(event, CL_COMPLETE);
    clReleaseEvent(event);
  }
};

// Gates no command waits for (every enqueue failed): opened, as failing them may abort PoCL.
void fail_gates(std::vector<cl_event>& gates) {
  for (cl_event g : gates) {
    clSetUserEventStatus(g, CL_COMPLETE);
    clReleaseEvent(g);
  }
  gates.clear();
}

}  // namespace

uint64_t piece_bytes(uint64_t bytes) {
  const uint64_t p = std::clamp(bytes / kPieces, kMinPieceBytes, kMaxPieceBytes);
  return (p + 4095) / 4096 * 4096;  // whole pages: each piece's copy starts on a page
}

cl_event direct_read(const DirectSession& s, const DirectTransfer& t) {
  auto r = std::make_shared<Read>();
  r->s = s;
  r->t = t;
  try {
    r->staging = std::make_shared<transport::Buffer>(transport::Buffer::allocate(t.bytes));
  } catch (const std::bad_alloc&) {
    s.memory->drop(t.region);
    throw DirectFail{CL_OUT_OF_HOST_MEMORY, "no host memory for the read's staging"};
  }
  const uint64_t piece = piece_bytes(t.bytes);
  std::byte* host = r->staging->data();
  for (uint64_t at = 0; at < t.bytes; at += piece) {
    const uint64_t len = std::min(piece, t.bytes - at);
    cl_event e = nullptr;
    const cl_int rc = clEnqueueReadBuffer(t.queue, t.mem, CL_FALSE, t.offset + at, len, host + at, count(t.wait),
                                          list(t.wait), &e);
    if (rc != CL_SUCCESS) {
      if (at == 0) {  // nothing started: the session answers the failure
        s.memory->drop(t.region);
        throw DirectFail{rc, "the read"};
      }
      r->failed(rc);
      break;
    }
    if (at == 0) ++*s.outstanding;  // from now on the read answers for itself (Read::finish)
    r->pieces.push_back(e);
    ++r->left;
    when_done(*s.waiter, e, [r, at, len](cl_int st) { r->piece_read(st, at, len); });
  }
  clFlush(t.queue);  // the client is waiting for it
  cl_event whole = nullptr;
  if (t.event && r->status.load() == CL_SUCCESS &&
      clEnqueueMarkerWithWaitList(t.queue, count(r->pieces), list(r->pieces), &whole) != CL_SUCCESS)
    whole = nullptr;
  if (r->status.load() != CL_SUCCESS)
    spdlog::warn("opencl.direct_read_failed error={}", cl_error_name(r->status.load()));
  r->one_done();  // the session's hold: the read may finish now
  return whole;
}

cl_event direct_write(const DirectSession& s, const DirectTransfer& t) {
  std::shared_ptr<transport::Buffer> staging;
  try {
    staging = std::make_shared<transport::Buffer>(transport::Buffer::allocate(t.bytes));
  } catch (const std::bad_alloc&) {
    s.memory->drop(t.region);
    throw DirectFail{CL_OUT_OF_HOST_MEMORY, "no host memory for the write's staging"};
  }
  const uint64_t piece = piece_bytes(t.bytes);
  // Each piece's device write waits for its own data: a user event set once the lanes have it.
  std::vector<cl_event> gates;
  for (uint64_t at = 0; at < t.bytes; at += piece) {
    cl_int rc = CL_SUCCESS;
    cl_event u = clCreateUserEvent(t.context, &rc);
    if (rc != CL_SUCCESS) {
      fail_gates(gates);
      s.memory->drop(t.region);
      throw DirectFail{rc, "clCreateUserEvent"};
    }
    gates.push_back(u);
  }
  std::vector<cl_event> writes;
  cl_int rc = CL_SUCCESS;
  for (size_t i = 0; i < gates.size(); ++i) {
    const uint64_t at = i * piece, len = std::min(piece, t.bytes - at);
    std::vector<cl_event> wait = t.wait;
    wait.push_back(gates[i]);
    cl_event e = nullptr;
    rc = clEnqueueWriteBuffer(t.queue, t.mem, CL_FALSE, t.offset + at, len, staging->data() + at, count(wait),
                              list(wait), &e);
    if (rc != CL_SUCCESS) break;
    writes.push_back(e);
    if (clSetEventCallback(e, CL_COMPLETE, release_staging, new std::shared_ptr<transport::Buffer>(staging)) !=
        CL_SUCCESS) {
      clWaitForEvents(1, &e);  // unlikely; never let the device read freed memory
    }
  }
  if (writes.empty()) {  // nothing waits for the data: the session answers the failure
    fail_gates(gates);
    s.memory->drop(t.region);
    throw DirectFail{rc, "the write"};
  }
  cl_event whole = nullptr;
  if (rc == CL_SUCCESS) rc = clEnqueueMarkerWithWaitList(t.queue, count(writes), list(writes), &whole);
  for (cl_event e : writes) clReleaseEvent(e);
  if (rc != CL_SUCCESS) {
    whole = nullptr;
    spdlog::warn("opencl.direct_write_failed error={}", cl_error_name(rc));
  }
  clFlush(t.queue);
  // The lanes fetch every piece at once.
  auto f = std::make_shared<Fetch>();
  f->s = s;
  f->t = t;
  f->staging = staging;
  f->status = rc;
  f->left = static_cast<int64_t>(gates.size());
  ++*s.outstanding;
  unsigned lane = 0;
  for (size_t i = 0; i < gates.size(); ++i) {
    const uint64_t at = i * piece, len = std::min(piece, t.bytes - at);
    auto g = std::make_shared<Gate>();
    g->fetch = f;
    g->event = gates[i];
    g->piece = staging->data() + at;
    g->bytes = len;
    const Split sp = split(len, s.memory->lanes());
    g->left = static_cast<int64_t>(sp.parts);
    copy_piece(s, t, false, staging->data(), at, len, sp, lane, [g](bool ok) { g->part_done(ok); });
    lane += static_cast<unsigned>(sp.parts);
  }
  return whole;
}

}  // namespace outboard::backends
