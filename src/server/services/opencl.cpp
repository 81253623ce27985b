#include "server/services/opencl.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "common/call_log.hpp"
#include "common/spin.hpp"
#include "server/direct.hpp"
#include "server/services/opencl_executor.hpp"
#include "server/services/opencl_lanes.hpp"
#include "server/services/opencl_transfers.hpp"

namespace outboard::server {
namespace {

using transport::Buffer;

// When answers were handed to the transport (OUTBOARD_CL_TRACE_CALLS), written at each OpenCL
// session's end: the server's side of an answer's way back (bench/opencl/trace_join.py).
trace::CallLog& handed_log() {
  static trace::CallLog log("sent");
  return log;
}

// A session's answers, sent through the core from whichever thread has them.
class Output final : public ClOutput {
 public:
  Output(Core& core, PeerId peer) : core_(core), peer_(peer) {}
  void reply(uint64_t call_id, int32_t status, wire::ClBlob data, std::shared_ptr<Buffer> payload,
             uint64_t bytes) override {
    if (!payload) bytes = 0;
    const bool over_lanes = asked_over_lanes(call_id) && bytes >= kLaneReplyMinBytes;
    wire::ClReply r{call_id, status, std::move(data), over_lanes ? 0 : bytes, over_lanes ? bytes : 0};
    send(wire::Message{std::move(r)}, std::move(payload), bytes, over_lanes, call_id);
  }
  void notice(wire::ClNotice n) override { send(wire::Message{std::move(n)}, nullptr, 0, false); }
  void piece(uint64_t call_id, uint64_t offset, std::byte* data, uint64_t bytes,
             std::function<void(bool ok)> sent) override {
    Completion c{peer_, wire::ReplyChunk{call_id, offset, bytes},
                 std::make_shared<Buffer>(Buffer::borrow(data, bytes)), 0, bytes};
    c.held = false;
    c.bulk = true;
    c.sent = std::move(sent);
    std::unique_lock lk(mu_);
    if (closed_) {
      lk.unlock();
      return c.sent(false);
    }
    core_.complete(std::move(c));
  }
  void reply_pieces(uint64_t call_id, int32_t status, uint64_t lane_bytes) override {
    asked_over_lanes(call_id);  // answered here, not by reply()
    send(wire::ClReply{call_id, status, {}, 0, lane_bytes}, nullptr, 0, false);
  }
  void close() {
    std::lock_guard lk(mu_);
    closed_ = true;
  }
  // The answer to `call_id` sends its payload over the session's lanes (ClRequest::reply_over_lanes)
  // where it is large enough to gain from them. Set on the progress thread before the operation
  // reaches the session's thread.
  void reply_over_lanes(uint64_t call_id) {
    std::lock_guard lk(mu_);
    over_lanes_.push_back(call_id);
  }
  // Below this a result goes in its reply: one message is quicker than pieces on several connections.
  static constexpr uint64_t kLaneReplyMinBytes = 2 * wire::kMinChunkBytes;

 private:
  // Whether the answer to `call_id` was asked over the lanes (asked once: forgotten here).
  bool asked_over_lanes(uint64_t call_id) {
    std::lock_guard lk(mu_);
    auto it = std::find(over_lanes_.begin(), over_lanes_.end(), call_id);
    if (it == over_lanes_.end()) return false;
    over_lanes_.erase(it);
    return true;
  }
  // `call_id`: the answer's, when it is one (logged when handed to the transport, where calls are).
  void send(wire::Message m, std::shared_ptr<Buffer> payload, uint64_t bytes, bool over_lanes, uint64_t call_id = 0) {
    std::lock_guard lk(mu_);  // after close() the core may be gone: nothing reaches it
    if (closed_) return;
    Completion c{peer_, std::move(m), std::move(payload), 0, bytes};
    c.held = false;  // OpenCL results are not counted in the session's held memory
    c.pieces_over_lanes = over_lanes;
    if (call_id && trace::CallLog::enabled()) c.handed = [call_id] { handed_log().add("sent", call_id, {now_ns()}); };
    core_.complete(std::move(c));
  }
  Core& core_;
  const PeerId peer_;
  std::mutex mu_;
  bool closed_ = false;
  std::vector<uint64_t> over_lanes_;  // answers asked over the lanes, not yet given (a few at most)
};

// One session's thread and its queue of operations.
class Runner {
 public:
  Runner(ClExecutor& executor, std::shared_ptr<Output> out, const ClLimits& limits,
         std::shared_ptr<ClientLanes> lanes)
      : out_(std::move(out)),
        lanes_(std::move(lanes)),
        objects_(executor.open_session(out_, limits, lanes_)),
        thread_([this] { loop(); }) {}
  ~Runner() {
    stop();
    thread_.join();
  }
  // Write data over the lanes (ClChunk): landed by the progress thread, waited for by this one.
  ClLaneTransfers& transfers() { return transfers_; }
  void reply_over_lanes(uint64_t call_id) { out_->reply_over_lanes(call_id); }
  void push(wire::ClRequest r, Buffer payload) {
    std::lock_guard lk(mu_);
    queue_.push_back({std::move(r), std::move(payload), now_ns()});
    queued_.fetch_add(1, std::memory_order_release);
    cv_.notify_one();
  }
  // The session ended: queued operations are dropped, the objects released on the runner's own
  // thread (waiting for the device may take long: not on the progress thread).
  void stop() {
    out_->close();
    transfers_.stop();
    std::lock_guard lk(mu_);
    stopping_ = true;
    queue_.clear();
    cv_.notify_one();
  }
  bool finished() const { return done_.load(); }
  size_t queued() const { return queued_.load(std::memory_order_relaxed); }
  ClientLanes& lanes() { return *lanes_; }
  uint64_t objects() const { return objects_count_.load(); }

 private:
  struct Item {
    wire::ClRequest request;
    Buffer payload;
    uint64_t arrived_ns;
  };
  void loop() {
    for (;;) {
      Item item;
      // The next operation usually follows within microseconds of the last, or of the end of a
      // command the program waits for (spin.hpp): polled until 100 us after both, 2 ms at most
      // (as the event waiter's busy polling). Asleep past 100 us after the last operation, the
      // runner cost each of stream's 0.15-0.25 ms kernels a wake-up (bench/results/h200/opencl).
      poll_while_busy([&] { return queued_.load(std::memory_order_acquire) > 0; },
                      [&] { return objects_->commands_pending(); }, spare_core_poll_ns(), kCommandPollNs);
      {
        std::unique_lock lk(mu_);
        cv_.wait(lk, [&] { return stopping_ || !queue_.empty(); });
        if (stopping_) break;
        item = std::move(queue_.front());
        queue_.pop_front();
        queued_.fetch_sub(1, std::memory_order_relaxed);
      }
      if (item.request.lane_transfer) {  // its data comes over the lanes: the session waits for it
        std::optional<Buffer> data = transfers_.take(item.request.lane_transfer);
        if (!data) break;  // the session ended meanwhile
        item.payload = std::move(*data);
        item.request.payload_bytes = item.request.lane_bytes;  // the command sees it as its payload
      }
      objects_->run(item.request, std::move(item.payload), item.arrived_ns);
      objects_count_ = objects_->objects();
    }
    objects_.reset();
    objects_count_ = 0;
    done_ = true;
  }

  std::shared_ptr<Output> out_;
  std::shared_ptr<ClientLanes> lanes_;
  ClLaneTransfers transfers_;
  std::unique_ptr<ClSessionObjects> objects_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Item> queue_;
  std::atomic<size_t> queued_{0};  // queue_.size(), for polling without the lock
  bool stopping_ = false;
  std::atomic<bool> done_{false};
  std::atomic<uint64_t> objects_count_{0};
  std::thread thread_;  // last: starts once the rest is ready
};

class OpenClService final : public Service {
 public:
  OpenClService(Core& core, ClExecutor& executor) : core_(core), executor_(executor) {
    limits_.max_objects = core.config().opencl_max_objects;
    limits_.max_memory_bytes = core.config().opencl_max_memory_bytes;
    limits_.direct_staging_bytes = core.config().opencl_direct_staging_bytes;
    limits_.write_bytes_in_flight = core.config().opencl_write_bytes_in_flight;
    limits_.stuck_seconds = core.config().opencl_stuck_seconds;
    limits_.event_polling = core.config().opencl_event_polling;
  }
  ~OpenClService() override {
    for (auto& [peer, r] : runners_) r->stop();
  }

  const char* name() const override { return "opencl"; }
  std::vector<wire::Type> messages() const override { return {wire::Type::cl_request, wire::Type::cl_chunk}; }

  transport::Landing on_payload(Session& s, const wire::Message& m, uint64_t bytes) override {
    if (const auto* c = std::get_if<wire::ClChunk>(&m))
      return runner(s).transfers().land(*c, bytes, [&](uint64_t open) { core_.check_limits(s, open); });
    const auto* r = std::get_if<wire::ClRequest>(&m);
    if (!r) return Service::on_payload(s, m, bytes);
    Core::check_payload(r->payload_bytes, bytes);
    core_.check_limits(s, bytes);
    return transport::Landing::receive(Buffer::allocate(bytes));
  }

  void on_message(Session& s, const wire::Message& m, Buffer payload) override {
    if (const auto* c = std::get_if<wire::ClChunk>(&m)) return on_chunk(s, *c);
    const auto& r = std::get<wire::ClRequest>(m);
    if (r.payload_bytes && payload.size() != r.payload_bytes) {
      core_.reject(s.peer, "OpenCL operation without the data it announced");
      return;
    }
    reap();
    Runner& runner_of_s = runner(s);
    if (r.lane_transfer) {
      try {
        runner_of_s.transfers().announce(r.lane_transfer, r.lane_bytes,
                                         [&](uint64_t open) { core_.check_limits(s, open); });
      } catch (const ProtocolError& e) {
        return core_.reject(s.peer, e.what());
      }
      ++lane_transfers_;
    }
    // Only where lanes joined: without them the result comes in the reply, as the client expects too.
    wire::ClRequest request = r;
    if (r.reply_over_lanes && !s.lanes.empty()) runner_of_s.reply_over_lanes(r.call_id);
    else request.reply_over_lanes = false;
    s.bytes_in += payload.size();
    // Before the operation reaches the session's thread: a direct transfer copies with it.
    if (s.remote) runner_of_s.lanes().set_remote(*s.remote);
    runner_of_s.push(std::move(request), std::move(payload));
  }

  void on_chunk(Session& s, const wire::ClChunk& c) {
    try {
      runner(s).transfers().arrived(c);
    } catch (const ProtocolError& e) {
      return core_.reject(s.peer, e.what());
    }
    s.bytes_in += wire::chunk_length(c);
    ++lane_chunks_;
  }

  void on_session_end(PeerId peer) override {
    auto it = runners_.find(peer);
    if (it == runners_.end()) return;
    handed_log().write();
    it->second->stop();
    retiring_.push_back(std::move(it->second));
    runners_.erase(it);
    reap();
  }

  void status(nlohmann::json& j) const override {
    ClCounters c = executor_.counters();
    uint64_t objects = 0, queued = 0, waiting = 0;
    ClLaneTransfers::Snapshot open;  // summed over the sessions
    for (const auto& [peer, r] : runners_) {
      objects += r->objects();
      queued += r->queued();
      const ClLaneTransfers::Snapshot t = r->transfers().snapshot();
      open.open += t.open;
      open.bytes += t.bytes;
      open.arrived_bytes += t.arrived_bytes;
      waiting += t.waiting_for != 0;
    }
    // Ended sessions whose objects are still being released (the rest wait to be joined).
    const auto ending = std::count_if(retiring_.begin(), retiring_.end(), [](const auto& r) { return !r->finished(); });
    j["opencl"] = {{"sessions", runners_.size()},  {"objects", objects},           {"operations", c.operations},
                   {"kernels", c.kernels},         {"failures", c.failures},       {"bytes_written", c.bytes_written},
                   {"bytes_read", c.bytes_read},   {"sessions_ending", ending},
                   {"direct_bytes_written", c.direct_bytes_written},
                   {"direct_bytes_read", c.direct_bytes_read},
                   {"direct_staging_bytes", c.direct_staging_bytes},
                   {"direct_staging_peak_bytes", c.direct_staging_peak_bytes},
                   {"pinned_bytes_read", c.pinned_bytes_read},
                   {"write_waits", c.write_waits},
                   {"lane_transfers", lane_transfers_},
                   {"lane_chunks", lane_chunks_},
                   {"queued", queued},  // operations received, not yet taken by their session's thread
                   // Write data over the lanes not yet taken, and the sessions waiting for theirs.
                   {"lane_open", {{"transfers", open.open}, {"bytes", open.bytes}, {"arrived_bytes", open.arrived_bytes},
                                  {"sessions_waiting", waiting}}},
                   {"direct_staging_budget", limits_.direct_staging_bytes}};
    // Native calls that have not returned (a hung platform): new work on their platform is refused.
    nlohmann::json stuck = nlohmann::json::array();
    for (const ClStuckCall& s : executor_.stuck())
      stuck.push_back({{"platform", s.platform}, {"operation", s.operation}, {"session", s.session}, {"seconds", s.seconds}});
    j["opencl"]["stuck"] = std::move(stuck);
  }

 private:
  // The session's runner, made at its first message.
  Runner& runner(Session& s) {
    auto it = runners_.find(s.peer);
    if (it == runners_.end()) {
      auto out = std::make_shared<Output>(core_, s.peer);
      auto lanes = std::make_shared<ClientLanes>(core_.direct().copy_lanes());
      it = runners_.emplace(s.peer, std::make_unique<Runner>(executor_, out, limits_, std::move(lanes))).first;
      spdlog::info("opencl.session peer={} client=\"{}\"", s.peer, s.client_name);
    }
    return *it->second;
  }

  // Joins the runners of ended sessions whose objects are released by now.
  void reap() {
    std::erase_if(retiring_, [](const std::unique_ptr<Runner>& r) { return r->finished(); });
  }

  Core& core_;
  ClExecutor& executor_;
  ClLimits limits_;
  std::unordered_map<PeerId, std::unique_ptr<Runner>> runners_;
  std::vector<std::unique_ptr<Runner>> retiring_;
  uint64_t lane_transfers_ = 0, lane_chunks_ = 0;  // write data over the lanes: transfers announced, chunks landed
};

}  // namespace

std::unique_ptr<Service> make_opencl_service(Core& core) {
  for (const auto& b : core.backends())
    if (ClExecutor* e = b->executor<ClExecutor>()) return std::make_unique<OpenClService>(core, *e);
  return nullptr;
}

}  // namespace outboard::server
