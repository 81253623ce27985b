// Calls running per GPU, for services that choose among several (blas3, lapack, fft): a call
// counts on its GPU from the moment it is placed until the token it holds is dropped — when it is
// answered, or dropped with its session — so no count outlives its call. A GPU out of service
// after a fault (Backend::in_service) is never offered.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <memory>
#include <vector>

#include "server/backend.hpp"

namespace outboard::server {

class DeviceLoad {
 public:
  // `devices`: the backends of devices 0 .. n-1, which outlive this.
  explicit DeviceLoad(std::vector<const Backend*> devices)
      : devices_(std::move(devices)), running_(std::make_shared<std::vector<std::atomic<int>>>(devices_.size())) {}

  size_t size() const { return devices_.size(); }
  bool any_in_service() const {
    return std::any_of(devices_.begin(), devices_.end(), [](const Backend* b) { return b->in_service(); });
  }

  // The devices (0 .. n-1) among `candidates` that are in service, from the fewest calls running
  // to the most, the first candidate on a tie.
  std::vector<size_t> by_load(std::vector<size_t> candidates) const {
    const auto& running = *running_;
    std::erase_if(candidates, [&](size_t d) { return !devices_[d]->in_service(); });
    std::stable_sort(candidates.begin(), candidates.end(), [&](size_t a, size_t b) { return running[a] < running[b]; });
    return candidates;
  }
  std::vector<size_t> by_load() const {
    std::vector<size_t> all(devices_.size());
    for (size_t d = 0; d < devices_.size(); ++d) all[d] = d;
    return by_load(std::move(all));
  }
  // Counts a call on device d until the returned token is dropped. The token shares the counts:
  // it may be dropped after the service is gone (a session's calls end after the services at
  // shutdown; a compute thread drops its job's captures after answering).
  std::shared_ptr<const void> hold(size_t d) {
    ++(*running_)[d];
    return std::shared_ptr<const void>(nullptr, [running = running_, d](const void*) { --(*running)[d]; });
  }

 private:
  std::vector<const Backend*> devices_;
  std::shared_ptr<std::vector<std::atomic<int>>> running_;
};

}  // namespace outboard::server
