#include "client/resident_inputs.hpp"

namespace outboard::client {

bool ResidentMirror::held(const Digest& digest, uint64_t bytes) {
  std::lock_guard lk(mu_);
  auto it = by_digest_.find(digest);
  if (it == by_digest_.end() || it->second->bytes != bytes) return false;
  entries_.splice(entries_.begin(), entries_, it->second);
  return true;
}

void ResidentMirror::kept(const Digest& digest, uint64_t bytes) {
  std::lock_guard lk(mu_);
  if (auto it = by_digest_.find(digest); it != by_digest_.end()) {
    bytes_ -= it->second->bytes;
    entries_.erase(it->second);
    by_digest_.erase(it);
  }
  if (bytes == 0 || bytes > budget_) return;  // the server refuses it too
  while (!entries_.empty() && bytes_ + bytes > budget_) {
    bytes_ -= entries_.back().bytes;
    by_digest_.erase(entries_.back().digest);
    entries_.pop_back();
  }
  entries_.push_front({digest, bytes});
  by_digest_[digest] = entries_.begin();
  bytes_ += bytes;
}

void ResidentMirror::forget(const std::vector<wire::ResidentInput>& inputs) {
  std::lock_guard lk(mu_);
  for (const wire::ResidentInput& x : inputs) {
    auto it = by_digest_.find(x.digest);
    if (it == by_digest_.end()) continue;
    bytes_ -= it->second->bytes;
    entries_.erase(it->second);
    by_digest_.erase(it);
  }
}

ResidentPlan plan_resident(ResidentMirror& mirror, const Settings& settings,
                           const std::vector<transport::Segment>& segments, int shared) {
  ResidentPlan plan;
  const bool on = settings.resident && mirror.budget() > 0;
  for (size_t i = 0; i < segments.size(); ++i) {
    const transport::Segment& seg = segments[i];
    if (on && int(i) != shared && seg.bytes >= settings.resident_min_bytes && plan.inputs.size() < wire::kMaxResidentInputs) {
      wire::ResidentInput x;
      x.input = static_cast<uint8_t>(i);
      x.digest = content_digest(seg.data, seg.bytes, static_cast<unsigned>(settings.copy_threads));
      x.use = mirror.held(x.digest, seg.bytes);
      plan.inputs.push_back(x);
      if (x.use) continue;
    }
    plan.payload.push_back(seg);
    plan.payload_bytes += seg.bytes;
  }
  // Kept once sent: the mirror counts them now, in the order the server will.
  for (const wire::ResidentInput& x : plan.inputs)
    if (!x.use) mirror.kept(x.digest, segments[x.input].bytes);
  return plan;
}

}  // namespace outboard::client
