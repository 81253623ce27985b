#include "backends/cuda/gpu_health.hpp"

#include <spdlog/spdlog.h>

#include "common/clock.hpp"
#include "server/backend.hpp"

namespace outboard::backends {
namespace {

const char* state_name(GpuHealth::State s) {
  switch (s) {
    case GpuHealth::State::serving: return "serving";
    case GpuHealth::State::faulted: return "out of service (fault)";
    case GpuHealth::State::rebuilding: return "out of service (rebuilding)";
    default: return "out of service (rebuild failed)";
  }
}

}  // namespace

GpuHealth::GpuHealth(const cuda::CudaPlugin& plugin, int device, std::function<void()> rebuild,
                     std::function<void(const std::string&)> lost, uint64_t fault_at)
    : plugin_(plugin),
      device_(device),
      rebuild_(std::move(rebuild)),
      lost_(std::move(lost)),
      fault_at_(fault_at),
      thread_([this] { run(); }) {}

GpuHealth::~GpuHealth() {
  {
    std::lock_guard lk(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

GpuHealth::Use GpuHealth::enter() {
  bool trap = false;
  {
    std::lock_guard lk(mu_);
    if (state_ != State::serving)
      throw server::DeviceFault("GPU " + std::to_string(device_) + " is " + state_name(state_) + ": " + reason_, true);
    ++uses_;
    ++entered_;
    trap = fault_at_ && entered_ == fault_at_;
  }
  Use use(nullptr, [this](void*) { leave(); });
  if (trap) inject_fault();
  return use;
}

void GpuHealth::leave() {
  std::lock_guard lk(mu_);
  if (--uses_ == 0 && state_ == State::faulted) cv_.notify_all();
}

void GpuHealth::inject_fault() {
  spdlog::warn("gpu.test_fault device={} (OUTBOARD_TEST_GPU_FAULT)", device_);
  try {
    cuda::CudaPlugin::OnDevice on(plugin_, device_);
    plugin_.check(plugin_.api().inject_fault(nullptr), "test fault");
  } catch (const std::exception& e) {
    spdlog::warn("gpu.test_fault device={} error=\"{}\"", device_, e.what());
  }
}

void GpuHealth::failed(const std::exception& e, bool rerunnable) {
  if (dynamic_cast<const server::DeviceFault*>(&e)) throw server::DeviceFault(e.what(), rerunnable);
  const int rc = plugin_.api().device_health(device_);
  if (rc == OUTBOARD_CUDA_OK) throw Error(e.what());
  const std::string health = plugin_.error(rc);
  {
    std::lock_guard lk(mu_);
    if (state_ == State::serving) {
      state_ = State::faulted;
      ++faults_;
      reason_ = health + " (found by: " + e.what() + ")";
      spdlog::error("gpu.fault device={} error=\"{}\" (out of service until rebuilt)", device_, reason_);
    }
  }
  cv_.notify_all();
  throw server::DeviceFault("GPU " + std::to_string(device_) + " faulted: " + e.what(), rerunnable);
}

bool GpuHealth::serving() const {
  std::lock_guard lk(mu_);
  return state_ == State::serving;
}

server::Backend::Health GpuHealth::counts() const {
  std::lock_guard lk(mu_);
  return {state_ == State::serving, faults_, recoveries_};
}

nlohmann::json GpuHealth::describe() const {
  std::lock_guard lk(mu_);
  nlohmann::json j{{"state", state_name(state_)}, {"in_service", state_ == State::serving},
                   {"uses", entered_}, {"faults", faults_}, {"recoveries", recoveries_}};
  if (!reason_.empty()) j["last_fault"] = reason_;
  if (rebuild_ns_) j["last_rebuild_seconds"] = rebuild_ns_ / 1e9;
  return j;
}

// The health thread: rebuilds a faulted GPU once nothing runs on it.
void GpuHealth::run() {
  std::unique_lock lk(mu_);
  for (;;) {
    cv_.wait(lk, [&] { return stop_ || (state_ == State::faulted && uses_ == 0); });
    if (stop_) return;
    state_ = State::rebuilding;
    lk.unlock();
    spdlog::info("gpu.rebuild device={} (resetting the GPU and making its state again)", device_);
    const uint64_t t0 = now_ns();
    std::string error;
    try {
      rebuild_();
    } catch (const std::exception& e) {
      error = e.what();
    }
    lk.lock();
    rebuild_ns_ = now_ns() - t0;
    if (error.empty()) {
      state_ = State::serving;
      ++recoveries_;
      spdlog::info("gpu.back_in_service device={} seconds={:.3f}", device_, rebuild_ns_ / 1e9);
    } else {
      state_ = State::out;
      reason_ += "; rebuilding failed: " + error;
      spdlog::error("gpu.rebuild_failed device={} error=\"{}\" (stays out of service)", device_, error);
      if (lost_) {
        const std::string why = "GPU " + std::to_string(device_) + ": " + reason_;
        lk.unlock();
        lost_(why);
        lk.lock();
      }
    }
  }
}

namespace {

class WatchedPipeline final : public server::Pipeline {
 public:
  WatchedPipeline(std::unique_ptr<server::Pipeline> pipe, GpuHealth& health, GpuHealth::Use use)
      : pipe_(std::move(pipe)), health_(health), use_(std::move(use)) {}
  ~WatchedPipeline() override { pipe_.reset(); }  // before the Use goes: the rebuild waits for it

  void input(uint64_t prefix) override {
    try {
      pipe_->input(prefix);
    } catch (const std::exception& e) {
      health_.failed(e, false);
    }
  }
  std::vector<size_t> finished() override {
    try {
      return pipe_->finished();
    } catch (const std::exception& e) {
      health_.failed(e, false);
    }
  }
  int64_t info() const override { return pipe_->info(); }
  uint64_t to_device_ns() const override { return pipe_->to_device_ns(); }
  uint64_t compute_ns() const override { return pipe_->compute_ns(); }
  uint64_t from_device_ns() const override { return pipe_->from_device_ns(); }
  bool needs_polling() const override { return pipe_->needs_polling(); }

 private:
  std::unique_ptr<server::Pipeline> pipe_;
  GpuHealth& health_;
  GpuHealth::Use use_;
};

}  // namespace

std::unique_ptr<server::Pipeline> watched(std::unique_ptr<server::Pipeline> pipe, GpuHealth& health, GpuHealth::Use use) {
  if (!pipe) return nullptr;
  return std::make_unique<WatchedPipeline>(std::move(pipe), health, std::move(use));
}

}  // namespace outboard::backends
