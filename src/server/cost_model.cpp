#include "server/cost_model.hpp"

namespace outboard::server {

void CostModel::blend(double& rate, double sample) {
  if (!(sample > 0)) return;
  rate = rate > 0 ? 0.7 * rate + 0.3 * sample : sample;  // follows changes within a few calls
}

bool CostModel::prefer_device(double flops, double device_bytes) const {
  if (flops < min_device_flops_) return false;
  std::lock_guard lk(mu_);
  if (host_flops_ <= 0 || device_flops_ <= 0) return true;
  const double host = flops / host_flops_;
  const double device =
      flops / device_flops_ + (copy_bytes_ > 0 ? device_bytes / copy_bytes_ : 0) + kLaunchSeconds;
  return device < host;
}

void CostModel::host_call(double flops, uint64_t compute_ns) {
  if (flops < kMinObservedFlops || compute_ns == 0) return;
  std::lock_guard lk(mu_);
  blend(host_flops_, flops / (compute_ns * 1e-9));
}

void CostModel::device_call(double flops, uint64_t compute_ns, double copied_bytes, uint64_t copy_ns) {
  if (flops < kMinObservedFlops || compute_ns == 0) return;
  std::lock_guard lk(mu_);
  blend(device_flops_, flops / (compute_ns * 1e-9));
  if (copy_ns && copied_bytes > 0) blend(copy_bytes_, copied_bytes / (copy_ns * 1e-9));
}

void CostModel::link(double bytes, uint64_t ns) {
  if (ns == 0 || bytes < (1 << 20)) return;
  std::lock_guard lk(mu_);
  blend(link_bytes_, bytes / (ns * 1e-9));
}

MeasuredRates CostModel::pipeline_rates() const {
  std::lock_guard lk(mu_);
  return {link_bytes_, device_flops_};
}

}  // namespace outboard::server
