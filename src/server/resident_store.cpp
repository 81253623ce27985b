#include "server/resident_store.hpp"

#include <cstring>
#include <new>

namespace outboard::server {

ResidentStore::~ResidentStore() { all_.used -= bytes_; }

std::shared_ptr<const transport::Buffer> ResidentStore::find(const Digest& digest, uint64_t bytes,
                                                             std::optional<uint64_t> not_sent) {
  auto it = by_digest_.find(digest);
  if (it == by_digest_.end() || it->second->data->size() != bytes) {
    ++all_.misses;
    return nullptr;
  }
  entries_.splice(entries_.begin(), entries_, it->second);
  ++all_.hits;
  all_.bytes_not_sent += not_sent.value_or(bytes);
  return it->second->data;
}

void ResidentStore::evict_oldest() {
  const Entry& e = entries_.back();
  bytes_ -= e.footprint;
  all_.used -= e.footprint;
  by_digest_.erase(e.digest);
  entries_.pop_back();
  ++all_.evicted;
}

std::shared_ptr<const transport::Buffer> ResidentStore::copy_of(const std::byte* data, uint64_t bytes,
                                                                const transport::HostAllocator* from) {
  try {
    auto copy = std::make_shared<transport::Buffer>(transport::Buffer::allocate_preferring(bytes, from));
    std::memcpy(copy->data(), data, bytes);
    return copy;
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}

KeptInput ResidentStore::part_of(const Digest& digest, const std::shared_ptr<const transport::Buffer>& whole,
                                 uint64_t offset, uint64_t bytes, uint64_t footprint) {
  auto* at = const_cast<std::byte*>(whole->data()) + offset;  // read only: the store hands out const
  return {digest, std::make_shared<const transport::Buffer>(transport::Buffer::borrow(at, bytes, std::const_pointer_cast<transport::Buffer>(whole))), footprint};
}

std::vector<KeptInput> ResidentStore::parts_of(const std::shared_ptr<const transport::Buffer>& whole,
                                               const std::vector<Part>& parts) {
  std::vector<uint64_t> bytes;
  for (const Part& p : parts) bytes.push_back(p.bytes);
  const std::vector<uint64_t> shares = wire::footprint_shares(whole->size(), bytes);
  std::vector<KeptInput> kept;
  for (size_t i = 0; i < parts.size(); ++i)
    kept.push_back(part_of(parts[i].digest, whole, parts[i].offset, parts[i].bytes, shares[i]));
  return kept;
}

bool ResidentStore::keep(const Digest& digest, std::shared_ptr<const transport::Buffer> input, uint64_t footprint) {
  const uint64_t bytes = input ? input->size() : 0;
  if (bytes && !footprint) footprint = bytes;
  if (auto it = by_digest_.find(digest); it != by_digest_.end() && it->second->data->size() == bytes) {
    entries_.splice(entries_.begin(), entries_, it->second);  // the same bytes again: kept already
    return true;
  }
  if (bytes == 0 || footprint > limit_ || footprint > all_.limit) {
    ++all_.refused;
    return false;
  }
  if (auto it = by_digest_.find(digest); it != by_digest_.end()) {  // same digest, other length
    entries_.splice(entries_.end(), entries_, it->second);
    evict_oldest();
  }
  while (!entries_.empty() && (bytes_ + footprint > limit_ || all_.used + footprint > all_.limit)) evict_oldest();
  if (all_.used + footprint > all_.limit) {  // the other sessions hold the rest
    ++all_.refused;
    return false;
  }
  entries_.push_front({digest, std::move(input), footprint});
  by_digest_[digest] = entries_.begin();
  bytes_ += footprint;
  all_.used += footprint;
  ++all_.kept;
  return true;
}

bool CallInputs::find(ResidentStore& store, const std::vector<wire::ResidentInput>& resident) {
  held.assign(sizes.size(), nullptr);
  for (const wire::ResidentInput& x : resident) {
    if (!x.use) {
      keep.push_back(x);
      continue;
    }
    held[x.input] = store.find(x.digest, sizes[x.input]);
    if (!held[x.input]) return false;
  }
  return true;
}

std::vector<const std::byte*> CallInputs::lay_out(const std::shared_ptr<const transport::Buffer>& payload_buffer,
                                                  Kept& kept) const {
  const std::byte* payload = payload_buffer->data();
  std::vector<const std::byte*> inputs;
  std::vector<ResidentStore::Part> parts;
  uint64_t offset = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (held[i]) {
      inputs.push_back(held[i]->data());
      continue;
    }
    inputs.push_back(payload + offset);
    for (const wire::ResidentInput& x : keep)
      if (x.input == i) parts.push_back({x.digest, offset, sizes[i]});
    offset += sizes[i];
  }
  for (KeptInput& k : ResidentStore::parts_of(payload_buffer, parts)) kept.push_back(std::move(k));
  return inputs;
}

}  // namespace outboard::server
