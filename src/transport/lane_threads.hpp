// Connections served by UCX workers on threads of their own (Worker::listen_lanes,
// Worker::connect_lane). Private to the transport: the Worker that owns them routes its calls for
// their peers here and delivers their events from its progress(), so the layers above see peers
// like any other.
//
// Why: a TCP connection's bytes are copied in and out of the kernel by the thread that drives
// its UCX worker. With every connection of a session on one worker, one core per side moved all
// of them: 1, 4 or 8 connections reached the same rate across the link rig (issue 36,
// bench/results/h200/link/lanes). Here each lane has a worker, and a thread that drives it.
//
// Threads: each lane's worker is used by its thread alone. The owner's thread (the one calling
// the owning Worker's methods) posts commands to a lane (send, land, close) and the lane posts
// events back (connected, message, landing wanted, send done, disconnected), waking the owner
// with its signal. A payload's landing is asked of the owner's on_payload without holding up the
// lane's thread (Events::on_payload_later): the arrival waits in the lane's worker for the answer.
// Meanwhile later messages of the connection may be delivered before it, as on any worker a
// rendezvous payload still being pulled lets later messages overtake it; here eager ones too.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include "transport/transport.hpp"

namespace outboard::transport {

class LaneThreads {
 public:
  // `wake`: the owner's Worker::signal (thread-safe), called after each event posted.
  LaneThreads(std::function<void()> wake, Options options);
  ~LaneThreads();  // stop()
  LaneThreads(const LaneThreads&) = delete;
  LaneThreads& operator=(const LaneThreads&) = delete;

  // A lane's peers have this bit; the lane and the peer's id in the lane's worker below it.
  static constexpr PeerId kLaneBit = PeerId(1) << 63;
  static bool owns(PeerId peer) { return (peer & kLaneBit) != 0; }

  std::vector<uint16_t> listen(const std::string& host, unsigned count, uint16_t first_port);
  PeerId connect(const std::string& host, uint16_t port);
  // As Worker::send; `done` or `plain` runs from a later deliver() (ok = false for a peer closed).
  void send(PeerId peer, std::span<const std::byte> header, std::span<const Segment> payload,
            std::function<void(bool)> done, SendDone plain);
  // Returns once the lane's thread has closed it: nothing lands in memory the owner named for
  // its payloads after this.
  void close(PeerId peer, bool force);
  bool connected(PeerId peer) const { return live_.count(peer) != 0; }
  size_t peers() const { return live_.size(); }
  // Events posted and not yet delivered. Thread-safe.
  bool pending() const { return posted_.load(std::memory_order_acquire) != 0; }
  // What waits between the owner and the lanes' threads now (the server's status: where a stalled
  // transfer is held). The owner's thread.
  struct Waiting {
    uint64_t events = 0;    // posted by the lanes, not yet delivered
    uint64_t commands = 0;  // posted to the lanes, not yet run
    uint64_t landings = 0;  // arrivals asked of the owner, their landing not yet run by their lane
  };
  Waiting waiting() const;
  // Runs the events posted, on the owner's thread, with the owner's handlers. Returns whether
  // any ran. A handler that throws: the events after it stay for the next call.
  bool deliver(const Events& events);
  // Stops and joins the threads; their sends still in flight complete (ok = false) here.
  void stop();

 private:
  struct Command;
  struct Posted;
  struct Lane;
  Events lane_events(unsigned lane);
  void post(Posted p);
  void post_sent(std::function<void(bool)> done, SendDone plain, bool ok);  // a send's completion, if it has one
  void command(Lane& lane, Command c);
  void run(Lane& lane);
  void execute(Lane& lane, Command& c);
  void handle(const Events& events, Posted& p);
  void retire(Lane& lane);  // stops and joins its thread, destroys its worker
  Lane* lane_of(PeerId peer) const;
  static PeerId owner_id(unsigned lane, PeerId inner);
  static PeerId inner_id(PeerId peer);

  std::function<void()> wake_;
  Options options_;
  std::vector<std::unique_ptr<Lane>> lanes_;
  std::unordered_set<PeerId> live_;  // the owner's view: connected and not closed
  std::mutex inbox_mu_;
  std::vector<Posted> inbox_;  // under inbox_mu_
  std::atomic<size_t> posted_{0};
  std::atomic<uint64_t> landings_asked_{0}, landings_run_{0};
  bool stopped_ = false;
};

}  // namespace outboard::transport
