#include "client/resident_inputs.hpp"

#include <algorithm>
#include <thread>

namespace outboard::client {

bool ResidentMirror::peek(const Digest& digest, uint64_t bytes) const {
  std::lock_guard lk(mu_);
  auto it = by_digest_.find(digest);
  return it != by_digest_.end() && it->second->bytes == bytes;
}

bool ResidentMirror::holds_size(uint64_t bytes) const {
  std::lock_guard lk(mu_);
  for (const Entry& e : entries_)
    if (e.bytes == bytes) return true;
  return false;
}

bool ResidentMirror::seen(const Digest& digest, uint64_t bytes) const {
  std::lock_guard lk(mu_);
  for (const Entry& e : seen_)
    if (e.digest == digest && e.bytes == bytes) return true;
  return false;
}

void ResidentMirror::saw(const Digest& digest, uint64_t bytes) {
  std::lock_guard lk(mu_);
  seen_.push_front({digest, bytes});
  if (seen_.size() > kSeen) seen_.pop_back();
}

bool ResidentMirror::held(const Digest& digest, uint64_t bytes) {
  std::lock_guard lk(mu_);
  auto it = by_digest_.find(digest);
  if (it == by_digest_.end() || it->second->bytes != bytes) return false;
  entries_.splice(entries_.begin(), entries_, it->second);
  return true;
}

void ResidentMirror::kept(const Digest& digest, uint64_t bytes, uint64_t footprint) {
  std::lock_guard lk(mu_);
  if (bytes && !footprint) footprint = bytes;
  if (auto it = by_digest_.find(digest); it != by_digest_.end()) {
    bytes_ -= it->second->footprint;
    entries_.erase(it->second);
    by_digest_.erase(it);
  }
  if (bytes == 0 || footprint > budget_) return;  // the server refuses it too
  while (!entries_.empty() && bytes_ + footprint > budget_) {
    bytes_ -= entries_.back().footprint;
    by_digest_.erase(entries_.back().digest);
    entries_.pop_back();
  }
  entries_.push_front({digest, bytes, footprint});
  by_digest_[digest] = entries_.begin();
  bytes_ += footprint;
}

void ResidentMirror::forget(const std::vector<wire::ResidentInput>& inputs) {
  std::lock_guard lk(mu_);
  for (const wire::ResidentInput& x : inputs) {
    auto it = by_digest_.find(x.digest);
    if (it == by_digest_.end()) continue;
    bytes_ -= it->second->footprint;
    entries_.erase(it->second);
    by_digest_.erase(it);
  }
}

unsigned digest_threads(double copy_threads, unsigned cores) {
  return std::max(static_cast<unsigned>(copy_threads), std::min(16u, cores / 2));
}

unsigned digest_threads(const Settings& settings) {
  static const unsigned cores = std::thread::hardware_concurrency();
  return digest_threads(settings.copy_threads, cores);
}

ResidentPlan plan_resident(ResidentMirror& mirror, const Settings& settings,
                           const std::vector<transport::Segment>& segments, int shared, uint64_t call_bytes,
                           std::optional<CallMemory> memory) {
  ResidentPlan plan;
  const bool on = settings.resident && mirror.budget() > 0;
  std::vector<wire::ResidentInput> inputs;
  uint64_t worth_bytes = 0, all_bytes = 0;
  for (const transport::Segment& seg : segments) all_bytes += seg.bytes;
  // Whether the server could keep an input of `bytes` from this call (none of it in use); where
  // not, and nothing of that size is held, the digest would be for nothing (numpy's DGEMM 8192
  // across 100 Gbit/s: 25 ms of its 0.17 s).
  auto could_keep = [&](uint64_t bytes) {
    return (memory ? all_bytes + memory->output_room : bytes) <= mirror.budget();
  };
  for (size_t i = 0; on && i < segments.size() && inputs.size() < wire::kMaxResidentInputs; ++i) {
    const transport::Segment& seg = segments[i];
    if (int(i) == shared || seg.bytes < settings.resident_min_bytes) continue;
    if (!could_keep(seg.bytes) && !mirror.holds_size(seg.bytes)) continue;
    wire::ResidentInput x;
    x.input = static_cast<uint8_t>(i);
    x.digest = content_digest(seg.data, seg.bytes, digest_threads(settings));
    x.use = mirror.peek(x.digest, seg.bytes);
    // Kept only on a second sight: an input that changes every call would cost a keep each time.
    const bool again = !x.use && mirror.seen(x.digest, seg.bytes);
    if (!x.use) mirror.saw(x.digest, seg.bytes);
    if (!x.use && !again) continue;
    inputs.push_back(x);
    worth_bytes += seg.bytes;
  }
  // A whole call's worth it when what stays out (now or from the next call) is at least half the
  // call's bytes both ways: the chunk pipeline's overlap of sending and computing is worth more
  // than a smaller saving (measured across the link rig: DGEMM 1024 with one of its three
  // matrices held, 0.77x unshaped). A chunked call keeps its overlap: any saving is worth it.
  const bool chunked = memory && memory->chunked;
  if (chunked ? worth_bytes > 0 : 2 * worth_bytes >= call_bytes) plan.inputs = std::move(inputs);
  // What each kept input will count against the budget: the call's memory shared out among them.
  uint64_t in_use_bytes = 0;
  std::vector<uint64_t> kept_bytes;
  for (const wire::ResidentInput& x : plan.inputs)
    (x.use ? in_use_bytes : kept_bytes.emplace_back()) = segments[x.input].bytes;
  std::vector<uint64_t> shares = kept_bytes;
  if (memory) {
    const uint64_t footprint = (chunked ? all_bytes : all_bytes - in_use_bytes) + memory->output_room;
    shares = wire::footprint_shares(footprint, kept_bytes);
    // Memory over the whole budget: the server could not keep them (numpy's DGEMM 8192, 1.5 GiB,
    // against the default 1 GiB), so they are only sent.
    if (footprint > mirror.budget()) {
      std::erase_if(plan.inputs, [](const wire::ResidentInput& x) { return !x.use; });
      shares.clear();
    }
  }
  for (const wire::ResidentInput& x : plan.inputs)
    if (x.use) mirror.held(x.digest, segments[x.input].bytes);  // now the most recently used
  for (size_t i = 0; i < segments.size(); ++i) {
    bool in_use = false;
    for (const wire::ResidentInput& x : plan.inputs) in_use |= x.input == i && x.use;
    if (in_use) continue;
    plan.payload.push_back(segments[i]);
    plan.payload_bytes += segments[i].bytes;
  }
  // Kept once sent: the mirror counts them now, in the order the server will.
  size_t k = 0;
  for (const wire::ResidentInput& x : plan.inputs)
    if (!x.use) mirror.kept(x.digest, segments[x.input].bytes, shares[k++]);
  return plan;
}

}  // namespace outboard::client
