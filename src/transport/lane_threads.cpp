#include "transport/lane_threads.hpp"

#include <pthread.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <iterator>

#include "common/clock.hpp"
#include "common/error.hpp"

namespace outboard::transport {
namespace {

// After work, a lane's thread polls this long before it sleeps in its worker's wait: a bulk
// stream's next message is usually that close, and a wake-up costs tens of microseconds.
constexpr uint64_t kSpinNs = 200'000;
constexpr int kIdleWaitMs = 100;
// A lane's peer ids below its index: a worker numbers its peers from 1, one per connection.
constexpr unsigned kInnerBits = 40;
constexpr PeerId kInnerMask = (PeerId(1) << kInnerBits) - 1;
// How long close() waits for the lane's thread (it runs only our code: a bound, not a timeout
// expected to pass).
constexpr auto kCloseWait = std::chrono::seconds(5);

}  // namespace

// What the owner asks of a lane's thread.
struct LaneThreads::Command {
  enum class Kind : uint8_t { send, land, close };
  Kind kind = Kind::send;
  PeerId peer = 0;  // the lane worker's id
  std::vector<std::byte> header;
  std::vector<Segment> payload;
  std::function<void(bool)> done;
  SendDone plain;
  uint64_t ticket = 0;
  Landing landing;
  bool force = true;
};

// What a lane's thread tells the owner.
struct LaneThreads::Posted {
  enum class Kind : uint8_t { connected, disconnected, message, landing, sent };
  Kind kind = Kind::message;
  PeerId peer = 0;   // the owner's id
  std::string text;  // connected: the address; disconnected: why
  std::vector<std::byte> header;
  Buffer payload;
  bool flag = false;  // message: payload refused; sent: ok
  uint64_t bytes = 0, ticket = 0;
  std::function<void(bool)> done;
  SendDone plain;
};

struct LaneThreads::Lane {
  unsigned index = 0;
  bool connected_one = false;  // made by connect(): its one connection closed, the lane goes too
  bool gone = false;           // its thread joined and its worker destroyed
  std::unique_ptr<Worker> worker;
  std::thread thread;
  std::atomic<bool> stop{false};
  std::mutex mu;
  std::vector<Command> commands;  // under mu
  uint64_t queued = 0, ran = 0;   // commands posted and run, under mu
  std::condition_variable ran_cv;
};

LaneThreads::LaneThreads(std::function<void()> wake, Options options) : wake_(std::move(wake)), options_(options) {}

LaneThreads::~LaneThreads() { stop(); }

PeerId LaneThreads::owner_id(unsigned lane, PeerId inner) {
  if (inner > kInnerMask) throw Error("a lane's worker ran out of peer ids");
  return kLaneBit | (PeerId(lane) << kInnerBits) | inner;
}

PeerId LaneThreads::inner_id(PeerId peer) { return peer & kInnerMask; }

LaneThreads::Lane* LaneThreads::lane_of(PeerId peer) const {
  const PeerId index = (peer & ~kLaneBit) >> kInnerBits;
  Lane* lane = index < lanes_.size() ? lanes_[index].get() : nullptr;
  return lane && !lane->gone ? lane : nullptr;
}

Events LaneThreads::lane_events(unsigned lane) {
  Events e;
  auto post_text = [this, lane](Posted::Kind kind, PeerId inner, const std::string& text) {
    Posted p;
    p.kind = kind;
    p.peer = owner_id(lane, inner);
    p.text = text;
    post(std::move(p));
  };
  e.on_connect = [post_text](PeerId inner, const std::string& addr) { post_text(Posted::Kind::connected, inner, addr); };
  e.on_disconnect = [post_text](PeerId inner, const std::string& why) {
    post_text(Posted::Kind::disconnected, inner, why);
  };
  e.on_payload_later = [this, lane](PeerId inner, std::span<const std::byte> header, uint64_t bytes, uint64_t ticket) {
    Posted p;
    p.kind = Posted::Kind::landing;
    p.peer = owner_id(lane, inner);
    p.header.assign(header.begin(), header.end());
    p.bytes = bytes;
    p.ticket = ticket;
    landings_asked_.fetch_add(1, std::memory_order_relaxed);
    post(std::move(p));
  };
  e.on_message = [this, lane](PeerId inner, std::vector<std::byte> header, Buffer payload, bool refused) {
    Posted p;
    p.kind = Posted::Kind::message;
    p.peer = owner_id(lane, inner);
    p.header = std::move(header);
    p.payload = std::move(payload);
    p.flag = refused;
    post(std::move(p));
  };
  return e;
}

std::vector<uint16_t> LaneThreads::listen(const std::string& host, unsigned count, uint16_t first_port) {
  if (first_port && uint32_t(first_port) + count > 65536)
    throw Error("lane ports from " + std::to_string(first_port) + ": no room for " + std::to_string(count));
  std::vector<uint16_t> ports;
  for (unsigned i = 0; i < count; ++i) {
    auto lane = std::make_unique<Lane>();
    lane->index = static_cast<unsigned>(lanes_.size());
    lane->worker = std::make_unique<Worker>(lane_events(lane->index), options_);
    ports.push_back(lane->worker->listen(host, first_port ? static_cast<uint16_t>(first_port + i) : 0));
    Lane& l = *lane;
    lanes_.push_back(std::move(lane));
    l.thread = std::thread([this, &l] { run(l); });
  }
  return ports;
}

PeerId LaneThreads::connect(const std::string& host, uint16_t port) {
  auto lane = std::make_unique<Lane>();
  lane->index = static_cast<unsigned>(lanes_.size());
  lane->worker = std::make_unique<Worker>(lane_events(lane->index), options_);
  const PeerId id = owner_id(lane->index, lane->worker->connect(host, port));
  lane->connected_one = true;
  Lane& l = *lane;
  lanes_.push_back(std::move(lane));
  l.thread = std::thread([this, &l] { run(l); });
  live_.insert(id);
  return id;
}

void LaneThreads::send(PeerId peer, std::span<const std::byte> header, std::span<const Segment> payload,
                       std::function<void(bool)> done, SendDone plain) {
  Lane* lane = lane_of(peer);
  if (!lane || stopped_ || !live_.count(peer)) {  // as a Worker fails a send to a peer it lacks: later
    post_sent(std::move(done), plain, false);
    return;
  }
  Command c;
  c.kind = Command::Kind::send;
  c.peer = inner_id(peer);
  c.header.assign(header.begin(), header.end());
  c.payload.assign(payload.begin(), payload.end());
  c.done = std::move(done);
  c.plain = plain;
  command(*lane, std::move(c));
}

void LaneThreads::close(PeerId peer, bool force) {
  if (!live_.erase(peer)) return;
  Lane* lane = lane_of(peer);
  if (!lane || stopped_) return;
  Command c;
  c.kind = Command::Kind::close;
  c.peer = inner_id(peer);
  c.force = force;
  command(*lane, std::move(c));
  {
    std::unique_lock lk(lane->mu);
    const uint64_t mine = lane->queued;
    if (!lane->ran_cv.wait_for(lk, kCloseWait, [&] { return lane->ran >= mine; }))
      spdlog::warn("transport.lane_close_slow peer={} (the lane's thread did not close it within 5 s)", peer);
  }
  if (lane->connected_one) retire(*lane);  // a client's lane: its thread has nothing left to serve
}

void LaneThreads::retire(Lane& lane) {
  lane.stop.store(true, std::memory_order_release);
  lane.worker->signal();
  lane.thread.join();
  lane.worker.reset();  // fails what it still had in flight: posted, delivered by deliver()
  lane.gone = true;
  std::vector<Command> left;
  {
    std::lock_guard lk(lane.mu);
    left.swap(lane.commands);
  }
  for (Command& c : left)  // sends its thread never reached fail too
    if (c.kind == Command::Kind::send) post_sent(std::move(c.done), c.plain, false);
}

void LaneThreads::post_sent(std::function<void(bool)> done, SendDone plain, bool ok) {
  if (!done && !plain.fn) return;
  Posted p;
  p.kind = Posted::Kind::sent;
  p.flag = ok;
  p.done = std::move(done);
  p.plain = plain;
  post(std::move(p));
}

void LaneThreads::command(Lane& lane, Command c) {
  {
    std::lock_guard lk(lane.mu);
    lane.commands.push_back(std::move(c));
    ++lane.queued;
  }
  lane.worker->signal();
}

void LaneThreads::post(Posted p) {
  {
    std::lock_guard lk(inbox_mu_);
    inbox_.push_back(std::move(p));
    posted_.store(inbox_.size(), std::memory_order_release);
  }
  wake_();
}

void LaneThreads::run(Lane& lane) {
  pthread_setname_np(pthread_self(), "outboard-lane");
  std::vector<Command> batch;
  uint64_t spin_until = 0;
  while (!lane.stop.load(std::memory_order_acquire)) {
    {
      std::lock_guard lk(lane.mu);
      batch.swap(lane.commands);
    }
    bool worked = !batch.empty();
    for (Command& c : batch) execute(lane, c);
    if (!batch.empty()) {
      std::lock_guard lk(lane.mu);
      lane.ran += batch.size();
      lane.ran_cv.notify_all();
    }
    batch.clear();
    try {
      worked = lane.worker->progress() || worked;
    } catch (const std::exception& e) {  // only posting runs here: out of memory
      spdlog::error("transport.lane_progress_failed error=\"{}\"", e.what());
    }
    const uint64_t now = now_ns();
    if (worked) spin_until = now + kSpinNs;
    else if (now >= spin_until) lane.worker->wait(kIdleWaitMs);  // a command's signal wakes it
  }
}

void LaneThreads::execute(Lane& lane, Command& c) {
  try {
    switch (c.kind) {
      case Command::Kind::send: {
        std::function<void(bool)> done;
        if (c.done || c.plain.fn)
          done = [this, d = std::move(c.done), plain = c.plain](bool ok) mutable { post_sent(std::move(d), plain, ok); };
        lane.worker->send(c.peer, c.header, c.payload, std::move(done));
        break;
      }
      case Command::Kind::land:
        landings_run_.fetch_add(1, std::memory_order_relaxed);
        lane.worker->land(c.ticket, std::move(c.landing));
        break;
      case Command::Kind::close:
        lane.worker->close(c.peer, c.force);
        break;
    }
  } catch (const std::exception& e) {  // the header's length is checked before it is posted: memory
    spdlog::error("transport.lane_command_failed error=\"{}\"", e.what());
  }
}

LaneThreads::Waiting LaneThreads::waiting() const {
  Waiting w;
  w.events = posted_.load(std::memory_order_acquire);
  for (const auto& lane : lanes_) {
    if (lane->gone) continue;
    std::lock_guard lk(lane->mu);
    w.commands += lane->queued - lane->ran;
  }
  const uint64_t run = landings_run_.load(std::memory_order_relaxed);
  const uint64_t asked = landings_asked_.load(std::memory_order_relaxed);
  w.landings = asked > run ? asked - run : 0;
  return w;
}

bool LaneThreads::deliver(const Events& events) {
  if (!pending()) return false;
  std::vector<Posted> batch;
  {
    std::lock_guard lk(inbox_mu_);
    batch.swap(inbox_);
    posted_.store(0, std::memory_order_release);
  }
  size_t i = 0;
  try {
    for (; i < batch.size(); ++i) handle(events, batch[i]);
  } catch (...) {
    std::lock_guard lk(inbox_mu_);
    inbox_.insert(inbox_.begin(), std::make_move_iterator(batch.begin() + static_cast<long>(i) + 1),
                  std::make_move_iterator(batch.end()));
    posted_.store(inbox_.size(), std::memory_order_release);
    throw;
  }
  return !batch.empty();
}

void LaneThreads::handle(const Events& events, Posted& p) {
  switch (p.kind) {
    case Posted::Kind::connected:
      if (stopped_) return;
      live_.insert(p.peer);
      if (events.on_connect) events.on_connect(p.peer, p.text);
      return;
    case Posted::Kind::disconnected:
      if (live_.erase(p.peer) && events.on_disconnect) events.on_disconnect(p.peer, p.text);
      return;
    case Posted::Kind::message:
      if (live_.count(p.peer) && events.on_message)
        events.on_message(p.peer, std::move(p.header), std::move(p.payload), p.flag);
      return;
    case Posted::Kind::landing: {
      Landing landing = Landing::refuse();
      if (live_.count(p.peer) && events.on_payload) {
        try {
          landing = events.on_payload(p.peer, p.header, p.bytes);
        } catch (...) {
          landing = Landing::refuse();
        }
      }
      Lane* lane = lane_of(p.peer);
      if (!lane || stopped_) {  // the lane's worker is gone, and the arrival with it
        landings_run_.fetch_add(1, std::memory_order_relaxed);
        return;
      }
      Command c;
      c.kind = Command::Kind::land;
      c.peer = inner_id(p.peer);
      c.ticket = p.ticket;
      c.landing = std::move(landing);
      command(*lane, std::move(c));
      return;
    }
    case Posted::Kind::sent:
      if (p.done) p.done(p.flag);
      else if (p.plain.fn) p.plain.fn(p.plain.arg, p.flag);
      return;
  }
}

void LaneThreads::stop() {
  if (stopped_) return;
  stopped_ = true;
  for (auto& lane : lanes_)  // every thread told first, then each joined
    if (!lane->gone) {
      lane->stop.store(true, std::memory_order_release);
      lane->worker->signal();
    }
  for (auto& lane : lanes_)
    if (!lane->gone) retire(*lane);
  live_.clear();
  // Only the sends' completions matter now; they run here, once each.
  std::vector<Posted> left;
  {
    std::lock_guard lk(inbox_mu_);
    left.swap(inbox_);
    posted_.store(0, std::memory_order_release);
  }
  for (Posted& p : left) {
    if (p.kind != Posted::Kind::sent) continue;
    try {
      if (p.done) p.done(p.flag);
      else if (p.plain.fn) p.plain.fn(p.plain.arg, p.flag);
    } catch (...) {
    }
  }
}

}  // namespace outboard::transport
