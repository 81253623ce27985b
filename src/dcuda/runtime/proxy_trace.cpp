#include "dcuda/runtime/proxy_trace.hpp"

#include "common/trace.hpp"

namespace dcuda::runtime::proxy_detail {

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
                 name(static_cast<Stage>(s)), static_cast<unsigned long long>(h.count()), h.quantile_us(0.5),
                 h.quantile_us(0.9), h.quantile_us(0.99), h.max() / 1e3);
  }
}

}  // namespace dcuda::runtime::proxy_detail
