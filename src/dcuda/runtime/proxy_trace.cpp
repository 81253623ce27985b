#include "dcuda/runtime/proxy_trace.hpp"

#include <bit>
#include <cmath>

#include "common/trace.hpp"

namespace dcuda::runtime::proxy_detail {

uint32_t LatencyHistogram::bucket(uint64_t ns) {
  if (ns < (uint64_t(1) << kSubBits)) return static_cast<uint32_t>(ns);
  const uint32_t exponent = 63 - static_cast<uint32_t>(std::countl_zero(ns));  // >= kSubBits
  const uint32_t sub = static_cast<uint32_t>(ns >> (exponent - kSubBits)) & ((1u << kSubBits) - 1);
  return ((exponent - kSubBits + 1) << kSubBits) + sub;
}

uint64_t LatencyHistogram::bucket_floor(uint32_t b) {
  if (b < (1u << kSubBits)) return b;
  const uint32_t exponent = (b >> kSubBits) + kSubBits - 1;
  const uint64_t sub = b & ((1u << kSubBits) - 1);
  return (uint64_t(1) << exponent) | (sub << (exponent - kSubBits));
}

uint64_t LatencyHistogram::quantile(double q) const {
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

const char* ProxyTrace::name(Stage s) {
  switch (s) {
    case ring_to_send: return "out.ring_to_send";
    case send_call: return "out.send_call";
    case arrival_to_applied: return "in.arrival_to_applied";
    case copy_in: return "link.copy_in";
    case write_u32: return "link.write_u32";
    case write_small: return "link.write_small";
    case fence: return "link.fence";
    case kStages: break;
  }
  return "?";
}

ProxyTrace::ProxyTrace() : ProxyTrace(outboard::trace::env_flag("DCUDA_PROXY_TRACE")) {}

ProxyTrace::ProxyTrace(bool on) : on_(on) {
  if (on_) stages_ = std::make_unique<LatencyHistogram[]>(kStages);
}

void ProxyTrace::print(std::FILE* to, const std::string& who) const {
  if (!on_) return;
  for (uint32_t s = 0; s < kStages; ++s) {
    const LatencyHistogram& h = stages_[s];
    if (!h.count()) continue;
    std::fprintf(to, "%s: %-22s count %llu  median %.2f  p90 %.2f  p99 %.2f  max %.2f us\n", who.c_str(),
                 name(static_cast<Stage>(s)), static_cast<unsigned long long>(h.count()), h.quantile(0.5) / 1e3,
                 h.quantile(0.9) / 1e3, h.quantile(0.99) / 1e3, h.max() / 1e3);
  }
}

}  // namespace dcuda::runtime::proxy_detail
