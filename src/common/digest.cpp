#include "common/digest.hpp"

#include <xxhash.h>

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

namespace outboard {
namespace {

Digest of(const XXH128_hash_t& h) { return {h.low64, h.high64}; }

}  // namespace

Digest content_digest(const void* data, size_t bytes, unsigned threads) {
  if (bytes <= kDigestBlockBytes) return of(XXH3_128bits_withSeed(data, bytes, bytes));
  const size_t blocks = (bytes + kDigestBlockBytes - 1) / kDigestBlockBytes;
  std::vector<XXH128_hash_t> digests(blocks);
  const auto* p = static_cast<const unsigned char*>(data);
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t b; (b = next.fetch_add(1)) < blocks;) {
      const size_t at = b * kDigestBlockBytes;
      digests[b] = XXH3_128bits(p + at, std::min(kDigestBlockBytes, bytes - at));
    }
  };
  const unsigned helpers = std::min<size_t>(std::clamp(threads, 1u, 64u), blocks) - 1;
  std::vector<std::thread> pool;
  pool.reserve(helpers);
  for (unsigned i = 0; i < helpers; ++i) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  return of(XXH3_128bits_withSeed(digests.data(), digests.size() * sizeof(XXH128_hash_t), bytes));
}

}  // namespace outboard
