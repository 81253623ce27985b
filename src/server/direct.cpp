#include "server/direct.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <algorithm>

namespace outboard::server {

using transport::CopyLanes;

void DirectPath::open(unsigned lanes) {
  if (lanes == 0) {
    unavailable_ = "this server's direct path is off (copy_lanes = 0)";
    return;
  }
  try {
    lanes_ = std::make_shared<CopyLanes>(lanes);
  } catch (const std::exception& e) {
    unavailable_ = std::string("this server has no copy lanes: ") + e.what();
    spdlog::warn("serve.copy_lanes_unavailable error=\"{}\"", e.what());
  }
}

namespace {
// Whether process `pid` runs as this server's user (the owner of its /proc entry).
bool same_user(int pid) {
  struct stat st{};
  return ::stat(("/proc/" + std::to_string(pid)).c_str(), &st) == 0 && st.st_uid == ::geteuid();
}
}  // namespace

void DirectPath::on_lanes(Session& s, const wire::LanesRequest& q) {
  if (!lanes_) return core_.send(s.peer, wire::LanesReply{q.call_id, 0, unavailable_});
  // One-sided copies of the client's memory cannot be sealed: an encrypted session has none.
  if (s.encrypted) return core_.send(s.peer, wire::LanesReply{q.call_id, 0, "the session is encrypted"});
  if (s.remote) lanes_->detach(*s.remote);
  // A client on this host that proves its process id (it holds this session's nonce where it
  // says) is copied with CMA; any other through UCX.
  // A client running as another user gets no CMA copies unless configured (cma_other_users): a
  // server with the privilege to read other users' memory must not lend it out.
  const bool local = q.pid != 0 && CopyLanes::verify_process(static_cast<int>(q.pid), q.probe_address,
                                                             std::as_bytes(std::span(s.server_nonce))) &&
                     (core_.config().cma_other_users || same_user(static_cast<int>(q.pid)));
  s.remote = lanes_->attach(q.worker_address, local ? static_cast<int>(q.pid) : 0);
  spdlog::info("session.lanes peer={} lanes={} copies={}", s.peer, lanes_->lanes(), local ? "cma" : "ucx");
  core_.send(s.peer, wire::LanesReply{q.call_id, lanes_->lanes(), local ? "cma" : "ucx"});
}

void DirectPath::session_ended(const Session& s) {
  if (s.remote && lanes_) lanes_->detach(*s.remote);  // copies still queued fail
}

void DirectPath::start(Session& s, uint64_t call_id, uint64_t payload_bytes,
                       const std::vector<std::vector<std::byte>>& keys, const std::vector<wire::Extent>& input,
                       const std::vector<wire::Extent>& output, bool gated, const ChunkedCalls::SetUp& set_up) {
  if (!lanes_ || !s.remote) return core_.reject(s.peer, "direct call without copy lanes (no LanesRequest answered)");
  if (s.chunked.count(call_id) || s.arrivals.count(call_id)) return core_.reject(s.peer, "call id already in use");
  if (s.chunked.size() >= ChunkedCalls::kMaxPerSession)
    return core_.reject(s.peer, "too many chunked calls in progress");
  std::shared_ptr<ChunkedCall> call = calls_.create(s, call_id, payload_bytes, core_.config().direct_chunk_bytes);
  try {
    set_up(*call);
  } catch (const std::bad_alloc&) {
    return core_.send(s.peer, call->answer(CallOutcome{false, "server is out of memory for this call"}));
  } catch (const std::exception& e) {
    return core_.send(s.peer, call->answer(CallOutcome{false, e.what()}));
  }
  ChunkedCall& cc = *call;
  auto& dc = *(cc.direct = std::make_unique<DirectCopies>());
  dc.remote = *s.remote;
  for (const auto& k : keys) dc.keys.push_back(lanes_->add_key(dc.remote, k));
  dc.input = input;
  dc.output = output;
  dc.gated = gated;
  dc.copies_left.assign(cc.chunk_state.size(), 0);
  calls_.admit(s, call);
  for (uint64_t i = 0; i < cc.chunk_state.size(); ++i) {
    const uint64_t begin = i * cc.chunk_bytes, end = std::min(begin + cc.chunk_bytes, cc.payload_bytes);
    cc.chunk_state[i] = 1;
    copy_range(call, dc.input, begin, end, cc.staging.data() + begin, false, i);
  }
}

// Queues the copies of packed bytes [begin, end) of `extents` to or from `local`: one per extent
// touched, of at most the call's chunk size, each on the next lane in turn. A result piece as
// large as a whole call's output (512 MiB for DGEMM 8192) was one copy on one lane (~6 GB/s),
// and with every call's chunk i on lane i, other calls' copies queued behind it (issue 32).
void DirectPath::copy_range(const std::shared_ptr<ChunkedCall>& call, const std::vector<wire::Extent>& extents,
                            uint64_t begin, uint64_t end, std::byte* local, bool put, uint64_t index) {
  DirectCopies& dc = *call->direct;
  const uint64_t most = std::max<uint64_t>(call->chunk_bytes, 1);
  uint64_t at = 0;
  for (const wire::Extent& x : extents) {
    const uint64_t lo = std::max(begin, at), hi = std::min(end, at + x.bytes);
    for (uint64_t from = lo; from < hi;) {
      const uint64_t n = std::min(most, hi - from);
      if (put) ++call->sends_in_flight;
      else ++dc.copies_left[index];
      const CopyLanes::Copy c{put, dc.remote, dc.keys[x.key], x.address + (from - at), local + (from - begin), n};
      from += n;
      lanes_->copy(next_lane_.fetch_add(1, std::memory_order_relaxed), c, [this, call, put, index](bool ok) {
        {
          std::lock_guard lk(copies_mu_);
          copies_done_.push_back({call, put, index, ok});
          any_copies_.store(true, std::memory_order_release);
        }
        core_.worker().signal();
      });
    }
    at += x.bytes;
  }
}

void DirectPath::send_piece(Session& s, const std::shared_ptr<ChunkedCall>& call, size_t index) {
  DirectCopies& dc = *call->direct;
  if (dc.gated && !dc.proceeded) {  // counted as in flight until written
    dc.held.push_back(index);
    ++call->sends_in_flight;
    return;
  }
  put_piece(s, call, index);
}

void DirectPath::put_piece(Session& s, const std::shared_ptr<ChunkedCall>& call, size_t index) {
  const ResultPiece& p = call->pieces[index];
  s.bytes_out += p.bytes;
  copy_range(call, call->direct->output, p.result_offset, p.result_offset + p.bytes,
             call->staging.data() + p.staging_offset, true, index);
}

void DirectPath::drop_held(ChunkedCall& cc) {
  cc.sends_in_flight -= std::min<uint64_t>(cc.sends_in_flight, cc.direct->held.size());
  cc.direct->held.clear();
}

void DirectPath::finished(ChunkedCall& cc) {
  ++calls_done_;
  for (CopyLanes::Key k : cc.direct->keys) lanes_->drop_key(k);
}

void DirectPath::on_proceed(Session& s, const wire::Proceed& q) {
  auto it = s.chunked.find(q.call_id);
  if (it == s.chunked.end()) return;  // the call already failed and was answered
  ChunkedCall& cc = *it->second;
  if (!cc.direct || !cc.direct->gated || cc.direct->proceeded) return core_.reject(s.peer, "unexpected proceed");
  cc.direct->proceeded = true;
  std::vector<size_t> held = std::move(cc.direct->held);
  cc.direct->held.clear();
  cc.sends_in_flight -= std::min<uint64_t>(cc.sends_in_flight, held.size());
  for (size_t index : held) put_piece(s, it->second, index);
}

void DirectPath::deliver() {
  if (!any_copies_.load(std::memory_order_acquire)) return;
  std::vector<CopyDone> batch;
  {
    std::lock_guard lk(copies_mu_);
    batch.swap(copies_done_);
    any_copies_.store(false, std::memory_order_relaxed);
  }
  for (CopyDone& d : batch) {
    ChunkedCall& cc = *d.call;
    Session* s = core_.session(cc.peer);
    auto it = s ? s->chunked.find(cc.call_id) : decltype(s->chunked.end()){};
    if (!s || it == s->chunked.end() || it->second != d.call) continue;  // the session or call is gone
    if (d.put) {
      --cc.sends_in_flight;
      if (!d.ok) calls_.fail(cc, "copying the result into the client's memory failed");
      continue;
    }
    if (!d.ok) calls_.fail(cc, "copying the input from the client's memory failed");
    if (--cc.direct->copies_left[d.index] == 0) {
      calls_.chunk_arrived(*s, cc, d.index);
      if (cc.arrived == cc.chunk_state.size() && cc.direct->gated && s->state != State::closing)
        core_.send(s->peer, wire::InputTaken{cc.call_id});
    }
  }
}

}  // namespace outboard::server
