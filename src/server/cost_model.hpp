// Where a Level-3 call runs, from rates measured on earlier calls: on the GPU backend when its
// compute plus the copies to and from the device beat the CPU backend's compute. Calls below
// min_device_flops never go to the device (launch and copy latency dominate them); above it, until
// both backends have been measured, the device is tried (which measures it).
#pragma once
#include <cstdint>
#include <mutex>

#include "server/pipeline.hpp"

namespace outboard::server {

class CostModel {
 public:
  explicit CostModel(double min_device_flops) : min_device_flops_(min_device_flops) {}

  bool prefer_device(double flops, double device_bytes) const;

  // Observations, from any thread. Calls too small to say much about a rate are ignored.
  void host_call(double flops, uint64_t compute_ns);
  void device_call(double flops, uint64_t compute_ns, double copied_bytes, uint64_t copy_ns);
  void link(double bytes, uint64_t ns);  // a pipelined call's input arriving

  // What pipelined calls size their blocks by (zeros while unknown).
  MeasuredRates pipeline_rates() const;

  static constexpr double kMinObservedFlops = 1e8;  // below: mostly overhead, not a rate
  static constexpr double kLaunchSeconds = 20e-6;   // a device call's fixed cost

 private:
  static void blend(double& rate, double sample);  // exponential moving average
  double min_device_flops_;
  mutable std::mutex mu_;
  double host_flops_ = 0, device_flops_ = 0, copy_bytes_ = 0, link_bytes_ = 0;  // per second
};

}  // namespace outboard::server
