// Content digests: a 128-bit XXH3 of a memory range, computed on several threads for large ranges
// (the resident inputs of issue 36 item 5 prove a matrix unchanged by it, each call: it must cost
// far less than sending the bytes would).
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>

namespace outboard {

using Digest = std::array<uint64_t, 2>;

// The digest of `bytes` bytes at `data`: XXH3-128 of each block of kDigestBlockBytes, those
// digests digested in turn (seeded with the length); one block: its XXH3-128 seeded with the
// length. The same for any `threads` (1..64: how many blocks are digested at once).
inline constexpr size_t kDigestBlockBytes = size_t(8) << 20;
Digest content_digest(const void* data, size_t bytes, unsigned threads);

}  // namespace outboard
