#include "transport/arena.hpp"

#include <iterator>

namespace outboard::transport {

Arena::Arena(std::byte* base, size_t bytes) : base_(base), bytes_(bytes / kGrain * kGrain) {
  if (bytes_ > 0) add_free(0, bytes_);
}

void Arena::add_free(size_t offset, size_t size) {
  free_by_offset_.emplace(offset, size);
  free_by_size_.emplace(size, offset);
}

void Arena::remove_free(std::map<size_t, size_t>::iterator it) {
  auto [first, last] = free_by_size_.equal_range(it->second);
  for (auto s = first; s != last; ++s)
    if (s->second == it->first) {
      free_by_size_.erase(s);
      break;
    }
  free_by_offset_.erase(it);
}

void* Arena::take(size_t bytes) {
  if (bytes == 0 || bytes > bytes_) return nullptr;
  const size_t size = (bytes + kGrain - 1) / kGrain * kGrain;
  std::lock_guard lk(mu_);
  auto best = free_by_size_.lower_bound(size);
  if (best == free_by_size_.end()) return nullptr;
  const size_t offset = best->second, piece = best->first;
  remove_free(free_by_offset_.find(offset));
  if (piece > size) add_free(offset + size, piece - size);  // the rest stays free
  taken_.emplace(offset, size);
  in_use_ += size;
  return base_ + offset;
}

bool Arena::give(void* p) {
  if (!owns(p)) return false;
  const size_t offset = static_cast<size_t>(static_cast<std::byte*>(p) - base_);
  std::lock_guard lk(mu_);
  auto t = taken_.find(offset);
  if (t == taken_.end()) return false;
  size_t start = offset, size = t->second;
  taken_.erase(t);
  in_use_ -= size;
  // Merge with the free neighbours on either side.
  auto next = free_by_offset_.lower_bound(offset);
  if (next != free_by_offset_.end() && next->first == offset + size) {
    size += next->second;
    remove_free(next);
  }
  auto after = free_by_offset_.lower_bound(offset);
  if (after != free_by_offset_.begin()) {
    auto prev = std::prev(after);
    if (prev->first + prev->second == start) {
      start = prev->first;
      size += prev->second;
      remove_free(prev);
    }
  }
  add_free(start, size);
  return true;
}

size_t Arena::in_use() const {
  std::lock_guard lk(mu_);
  return in_use_;
}

size_t Arena::largest_free() const {
  std::lock_guard lk(mu_);
  return free_by_size_.empty() ? 0 : free_by_size_.rbegin()->first;
}

}  // namespace outboard::transport
