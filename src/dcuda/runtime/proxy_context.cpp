#include "dcuda/runtime/proxy_context.hpp"

#include <cstdio>

#include "dcuda/detail/sync.hpp"

namespace dcuda::runtime::proxy_detail {

std::string Context::rank_range(uint32_t process) const {
  const ProcessInfo& p = world.processes.at(process);
  return "process " + std::to_string(process) + " (ranks " + std::to_string(p.first_rank) + ".." +
         std::to_string(p.first_rank + p.ranks - 1) + ")";
}

void Context::send(tp::PeerId to, const msg::Message& m, const void* payload, size_t bytes,
                   std::function<void(bool)> done) {
  msg::encode(m, header_);
  tp::Segment seg{payload, bytes};
  worker->send(to, header_, bytes ? std::span<const tp::Segment>(&seg, 1) : std::span<const tp::Segment>(),
               std::move(done));
}

void Context::fail(const std::string& what) {
  {
    std::lock_guard lock(error_mutex_);
    if (first_error_.empty()) first_error_ = what;
  }
  if (failures_.fetch_add(1, std::memory_order_relaxed) < 10) std::fprintf(stderr, "dcuda proxy: %s\n", what.c_str());
  for (uint32_t r = 0; host && r < ranks(); ++r) detail::store_release(&host[r].proxy.failed, 1u);
}

std::string Context::error() const {
  std::lock_guard lock(error_mutex_);
  return first_error_;
}

}  // namespace dcuda::runtime::proxy_detail
