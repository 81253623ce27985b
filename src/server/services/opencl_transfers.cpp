#include "server/services/opencl_transfers.hpp"

#include <string>

#include "common/error.hpp"

namespace outboard::server {

using transport::Buffer;

std::shared_ptr<ClLaneTransfers::Transfer> ClLaneTransfers::make(uint64_t id, uint64_t bytes,
                                                                 const CheckLimits &check) {
  if (open_.size() >= kMaxOpen) throw ProtocolError("too many OpenCL transfers open at once");
  check(open_bytes() + bytes);
  auto t = std::make_shared<Transfer>();
  t->data = Buffer::allocate(bytes);
  open_.emplace(id, t);
  return t;
}

uint64_t ClLaneTransfers::open_bytes() const {
  uint64_t sum = 0;
  for (const auto &[id, t] : open_) sum += t->data.size();
  return sum;
}

transport::Landing ClLaneTransfers::land(const wire::ClChunk &c, uint64_t bytes, const CheckLimits &check) {
  if (bytes != wire::chunk_length(c)) throw ProtocolError("an OpenCL chunk's size does not match its transfer");
  std::lock_guard lk(mu_);
  std::shared_ptr<Transfer> t;
  if (auto it = open_.find(c.transfer); it != open_.end()) {
    t = it->second;
  } else {
    // Announced and not open: taken already (its chunks all came), or never
    // begun by a chunk because its announcement made it; either way this one is
    // one too many.
    if (c.transfer <= last_announced_) throw ProtocolError("a chunk of an OpenCL transfer that is complete");
    t = make(c.transfer, c.payload_bytes, check);
  }
  if (t->data.size() != c.payload_bytes)
    throw ProtocolError("an OpenCL chunk's transfer size does not match its transfer");
  if (t->chunk_bytes == 0) {
    t->chunk_bytes = c.chunk_bytes;
    t->landing.assign(wire::chunk_count(c.payload_bytes, c.chunk_bytes), 0);
  }
  if (t->chunk_bytes != c.chunk_bytes) throw ProtocolError("an OpenCL chunk's size differs from its transfer's others");
  uint8_t &state = t->landing[c.chunk_index];  // the index was checked against
                                               // the count when decoded
  if (state != 0) throw ProtocolError("an OpenCL chunk sent twice");
  state = 1;
  return transport::Landing::receive(Buffer::borrow(t->data.data() + wire::chunk_offset(c), bytes, t));
}

void ClLaneTransfers::arrived(const wire::ClChunk &c) {
  std::lock_guard lk(mu_);
  auto it = open_.find(c.transfer);
  if (it == open_.end() || it->second->chunk_bytes != c.chunk_bytes || it->second->data.size() != c.payload_bytes ||
      it->second->landing[c.chunk_index] != 1)
    throw ProtocolError("an OpenCL chunk arrived without being announced");
  Transfer &t = *it->second;
  t.landing[c.chunk_index] = 2;
  t.arrived_bytes += wire::chunk_length(c);
  if (t.whole()) whole_.notify_all();
}

void ClLaneTransfers::announce(uint64_t id, uint64_t bytes, const CheckLimits &check) {
  std::lock_guard lk(mu_);
  if (id <= last_announced_) throw ProtocolError("OpenCL transfer ids must increase");
  last_announced_ = id;
  if (auto it = open_.find(id); it != open_.end()) {
    if (it->second->data.size() != bytes) throw ProtocolError("an OpenCL transfer's size differs from its chunks'");
    return;
  }
  make(id, bytes, check);
}

std::optional<Buffer> ClLaneTransfers::take(uint64_t id) {
  std::unique_lock lk(mu_);
  auto it = open_.find(id);
  if (it == open_.end()) return std::nullopt;  // not announced: the service rejected the session
  std::shared_ptr<Transfer> t = it->second;
  waiting_for_ = id;
  whole_.wait(lk, [&] { return stopped_ || t->whole(); });
  waiting_for_ = 0;
  if (stopped_) return std::nullopt;
  open_.erase(id);
  return std::move(t->data);  // whole: no chunk lands in it any more
}

ClLaneTransfers::Snapshot ClLaneTransfers::snapshot() {
  std::lock_guard lk(mu_);
  Snapshot s;
  s.open = open_.size();
  for (const auto &[id, t] : open_) {
    s.bytes += t->data.size();
    s.arrived_bytes += t->arrived_bytes;
  }
  s.waiting_for = waiting_for_;
  return s;
}

void ClLaneTransfers::stop() {
  std::lock_guard lk(mu_);
  stopped_ = true;
  whole_.notify_all();
}

}  // namespace outboard::server
