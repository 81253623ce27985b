// The source side of the proxy: reads the commands our ranks post into their rings, fetches the
// payloads that are not staged from the device, sends each command to the target's process, and
// tells the rank what it is done with (ProxyCounters::consumed and ::completed).
//
// Order: a rank's commands are sent in ring order (a command whose payload is still being copied
// out holds back the rank's later ones), numbered per (rank, target process) stream; the target
// applies each stream in that order and acknowledges it cumulatively. Both counters are
// published for the longest finished prefix of the ring, never past an unfinished command, so a
// flush that sees `completed` reach its count knows every earlier source is free.
#pragma once
#include <cstdint>
#include <deque>
#include <functional>
#include <utility>
#include <vector>

#include "dcuda/runtime/proxy_context.hpp"

namespace dcuda::runtime::proxy_detail {

class Outgoing {
 public:
  // Commands of one rank in flight at most (read from its ring, not yet finished), and payload
  // bytes copied out and not yet sent, over all ranks (one larger put still goes alone).
  static constexpr size_t kMaxInFlight = 2 * detail::kRingSlots;
  static constexpr uint64_t kMaxBufferedBytes = uint64_t(256) << 20;

  explicit Outgoing(Context& c);
  // Reads what the ranks posted, sends what is ready, publishes the counters; true if anything moved.
  bool poll();
  // A rank posted a world barrier (called from poll()).
  std::function<void(uint32_t local_rank, uint32_t generation)> on_barrier;

  // Answers from process p. Throw ProtocolError when they name nothing we sent.
  void on_ack(uint32_t p, const msg::Ack& a);
  void on_refused(uint32_t p, const msg::Refused& f);
  // Our connection to p is gone: what awaits its answer fails; returns how many commands did.
  size_t on_peer_lost(uint32_t p);

  // Every command posted so far is delivered (the rings hold nothing unread).
  bool all_delivered() const;
  // Nothing unread, nothing in flight at all.
  bool drained() const;
  uint64_t sent() const { return sent_; }

 private:
  struct Item {
    detail::Command cmd{};
    uint32_t process = 0;      // target process
    tp::Buffer data;           // a payload that was not staged, copied out of the device
    bool ready = false;        // may be sent (its payload is here, or it has none)
    bool sends = false;        // goes to a peer (else handled here: barrier, or refused at once)
    bool sent = false;
    bool send_done = true;     // no send of it in flight
    bool staging_free = true;  // its ring slot's staging is no longer read
    bool source_free = true;   // its source is no longer read (dcuda_win_flush)
    bool delivered = true;     // the target has applied or refused it
    uint64_t seen = 0;         // when read from the ring (ProxyTrace::start(): 0 unless tracing)
  };
  struct Rank {
    uint32_t head = 0;       // next ring position to read
    uint32_t next_send = 0;  // next ring position to send
    std::deque<Item> ops;      // positions head - ops.size() .. head - 1
    uint32_t consumed = 0, completed = 0;                                // as published
    std::vector<uint32_t> next_seq;                                      // per process
    std::vector<std::deque<std::pair<uint32_t, uint32_t>>> awaiting;    // per process: (seq, position)
  };

  // The ring position of the oldest command in flight (positions wrap modulo 2^32).
  static uint32_t front(const Rank& k) { return k.head - static_cast<uint32_t>(k.ops.size()); }
  Item& item(Rank& k, uint32_t position) { return k.ops[position - front(k)]; }
  bool read_ring(uint32_t r);
  void start(uint32_t r, uint32_t position, Item& o);
  bool send_ready(uint32_t r);
  bool publish(uint32_t r);
  void mark_delivered(Item& o);
  void refuse_locally(Item& o, const std::string& why);
  Rank& rank_of_answer(uint32_t p, uint32_t source);

  Context& c_;
  std::vector<Rank> ranks_;
  uint64_t undelivered_ = 0;
  uint64_t buffered_ = 0;  // bytes of copied-out payloads held
  uint64_t sent_ = 0;
};

}  // namespace dcuda::runtime::proxy_detail
