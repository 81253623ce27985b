// The target side of the proxy: checks every command another process sends to our ranks, lands
// its payload in host memory, and applies it through the device link: the data into the window
// (copy_in), then for notifications the tag's network counter (write_u32 of the proxy's own
// running count, which the link orders behind the data). A small payload (DeviceLink::
// small_write_fits) goes with its counter in one write_small instead: value writes on CUDA, no
// copy engine, no host buffer to keep until the copy is done.
//
// Order: each (source rank -> this process) stream is applied strictly in its sequence order,
// whatever order the transport completes payloads in (a large rendezvous put followed by a small
// eager notify: the notify waits for the put's data). Once applied (issued to the link, which
// orders everything later behind it) or refused, a command is acknowledged; the
// acknowledgements of one round of progress go out as one cumulative answer per stream.
//
// Nothing from the network is trusted: a command names a rank of ours, a window that rank has
// registered (our host mirror of its windows), a range inside that window, a tag below kTags, a
// known op, and a payload of exactly its size; otherwise it is refused with a reason and
// touches nothing.
#pragma once
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "dcuda/runtime/proxy_context.hpp"

namespace dcuda::runtime::proxy_detail {

class Incoming {
 public:
  // Most commands of one stream held ahead of one still missing (a well-behaved sender has at
  // most Outgoing::kMaxInFlight in flight).
  static constexpr uint32_t kMaxAhead = 4096;

  // Reads our ranks' current network counters through the link (they only grow, from any value).
  explicit Incoming(Context& c);

  // Where the payload of a message lands: a fresh host buffer, or refused when the message is
  // not a valid command (on_put says why). The sender is checked on delivery (on_put).
  tp::Landing landing(std::span<const std::byte> header, uint64_t bytes);
  // Process p's hello was accepted: its streams start at 0.
  void open(uint32_t p);
  // A command from process p. Throws ProtocolError for what breaks the stream itself (a rank not
  // of p, a sequence number out of range): the connection is closed.
  void on_put(uint32_t p, const msg::Put& m, tp::Buffer payload, bool payload_refused);
  // Sends the acknowledgements gathered since the last call.
  void flush_acks();

  uint64_t applied() const { return applied_; }
  uint64_t refused() const { return refused_; }

 private:
  struct Entry {
    msg::Put put;
    tp::Buffer data;
    std::string refusal;  // empty: valid
    uint64_t arrived = 0;  // when on_put saw it (ProxyTrace::start(): 0 unless tracing)
  };
  struct Stream {
    uint32_t next = 0;                // sequence number to apply next
    std::map<uint32_t, Entry> early;  // arrived ahead of `next`
    bool moved = false;               // applied something since the last acknowledgement
  };

  // Why the command cannot be applied, or empty.
  std::string check(const msg::Put& m, uint64_t payload_bytes) const;
  void apply(uint32_t p, Entry& e);

  Context& c_;
  std::vector<std::vector<Stream>> streams_;     // [process][source rank - its first rank]
  std::vector<std::vector<uint32_t>> shadow_;    // [local rank][tag]: what we last wrote to network_notes
  std::vector<uint32_t> moved_;                  // processes with streams to acknowledge
  uint64_t applied_ = 0;
  uint64_t refused_ = 0;
};

}  // namespace dcuda::runtime::proxy_detail
