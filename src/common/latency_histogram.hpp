// Durations for the opt-in traces (the OpenCL server's stage_trace, the client's call_trace, the
// dcuda proxy's trace): counted in log-linear buckets, 16 per power of two (~6% wide), so a
// percentile is read to within a few percent from a fixed 8 KiB, however many samples there are;
// values below 16 ns exactly.
#pragma once
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>

namespace outboard {

class LatencyHistogram {
 public:
  static constexpr uint32_t kSubBits = 4;
  static constexpr uint32_t kBuckets = (64 - kSubBits + 1) << kSubBits;

  void add(uint64_t ns) { ++counts_[bucket(ns)], ++count_, max_ = ns > max_ ? ns : max_; }
  uint64_t count() const { return count_; }
  uint64_t max() const { return max_; }

  // The smallest value of the bucket holding the q-quantile (0 <= q <= 1); 0 when empty.
  uint64_t quantile(double q) const {
    if (!count_) return 0;
    // The rank of the quantile among the samples, 1-based (the median of 1..n is the ceil(n/2)th).
    uint64_t rank = static_cast<uint64_t>(std::ceil(q * static_cast<double>(count_)));
    if (rank < 1) rank = 1;
    if (rank > count_) rank = count_;
    uint64_t seen = 0;
    for (uint32_t b = 0; b < kBuckets; ++b)
      if ((seen += counts_[b]) >= rank) return bucket_floor(b);
    return max_;
  }
  // The same in microseconds, as the traces print it.
  double quantile_us(double q) const { return static_cast<double>(quantile(q)) / 1e3; }

  static uint32_t bucket(uint64_t ns) {
    if (ns < (uint64_t(1) << kSubBits)) return static_cast<uint32_t>(ns);
    const uint32_t exponent = 63 - static_cast<uint32_t>(std::countl_zero(ns));  // >= kSubBits
    const uint32_t sub = static_cast<uint32_t>(ns >> (exponent - kSubBits)) & ((1u << kSubBits) - 1);
    return ((exponent - kSubBits + 1) << kSubBits) + sub;
  }
  static uint64_t bucket_floor(uint32_t b) {
    if (b < (1u << kSubBits)) return b;
    const uint32_t exponent = (b >> kSubBits) + kSubBits - 1;
    const uint64_t sub = b & ((1u << kSubBits) - 1);
    return (uint64_t(1) << exponent) | (sub << (exponent - kSubBits));
  }

 private:
  std::array<uint64_t, kBuckets> counts_{};
  uint64_t count_ = 0, max_ = 0;
};

}  // namespace outboard
