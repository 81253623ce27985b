// A sub-allocator over one region of memory that was expensive to get (page-locked memory, say):
// pieces are handed out and given back without asking the system again. Best fit by size, free
// neighbours merged, so the calls of a program (a few sizes, over and over) do not fragment it.
// Thread-safe.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <unordered_map>

namespace outboard::transport {

class Arena {
 public:
  // [base, base + bytes): memory the caller owns and keeps alive for as long as the arena.
  Arena(std::byte* base, size_t bytes);
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  // `bytes` (rounded up to kGrain) from the region, or nullptr when no free piece is that large.
  void* take(size_t bytes);
  // Gives back a piece that take() returned; false (nothing done) for any other pointer.
  bool give(void* p);
  bool owns(const void* p) const { return p >= base_ && p < base_ + bytes_; }

  size_t bytes() const { return bytes_; }
  size_t in_use() const;
  size_t largest_free() const;

  static constexpr size_t kGrain = 4096;

 private:
  std::byte* const base_;
  const size_t bytes_;
  mutable std::mutex mu_;
  std::map<size_t, size_t> free_by_offset_;        // offset -> size
  std::multimap<size_t, size_t> free_by_size_;     // size -> offset
  std::unordered_map<size_t, size_t> taken_;       // offset -> size
  size_t in_use_ = 0;

  void add_free(size_t offset, size_t size);
  void remove_free(std::map<size_t, size_t>::iterator it);
};

}  // namespace outboard::transport
