#include "backends/cuda/cuda_backend.hpp"

#include <mutex>

#include "backends/cuda/loader.hpp"
#include "common/clock.hpp"

namespace outboard::backends {
namespace {

class CudaBackend final : public server::Backend {
 public:
  CudaBackend(cuda::CudaPlugin plugin, int device) : plugin_(std::move(plugin)), device_(device) {
    plugin_.check(plugin_.api().set_device(device_), "selecting the GPU");
    plugin_.check(plugin_.api().device_describe(device_, &info_), "describing the GPU");
  }

  ~CudaBackend() override {
    if (buffer_) plugin_.api().device_free(buffer_);
  }

  std::string name() const override { return "cuda"; }

  nlohmann::json describe() const override {
    return {{"name", "cuda"},
            {"device", device_},
            {"gpu", info_.name},
            {"memory_bytes", info_.total_memory},
            {"compute_capability", std::to_string(info_.compute_major) + "." + std::to_string(info_.compute_minor)},
            {"pcie", "Gen" + std::to_string(info_.pcie_gen_current) + " x" + std::to_string(info_.pcie_width_current)},
            {"serves", "device transfers (Level-3 BLAS runs on the cpu backend)"}};
  }

  void level3(const wire::Level3Call&, std::span<const std::byte* const>, std::byte*) override {
    throw Error("Level-3 BLAS on the GPU is not available yet");
  }
  bool serves_level3() const override { return false; }
  bool has_device_memory() const override { return true; }

  uint64_t device_round_trip(const std::byte* in, std::byte* back, size_t bytes) override {
    std::lock_guard lk(mu_);  // one device buffer, reused: transfers take turns
    const auto& api = plugin_.api();
    plugin_.check(api.set_device(device_), "selecting the GPU");
    if (capacity_ < bytes) {
      if (buffer_) api.device_free(buffer_);
      buffer_ = nullptr;
      capacity_ = 0;
      plugin_.check(api.device_alloc(&buffer_, bytes), "allocating GPU memory");
      capacity_ = bytes;
    }
    const uint64_t t0 = now_ns();
    plugin_.check(api.memcpy_sync(OUTBOARD_CUDA_H2D, buffer_, in, bytes, nullptr), "copying to the GPU");
    plugin_.check(api.stream_sync(nullptr), "copying to the GPU");
    if (back) plugin_.check(api.memcpy_sync(OUTBOARD_CUDA_D2H, back, buffer_, bytes, nullptr), "copying from the GPU");
    return now_ns() - t0;
  }

 private:
  cuda::CudaPlugin plugin_;
  int device_;
  outboard_cuda_device_info info_{};
  std::mutex mu_;
  void* buffer_ = nullptr;
  size_t capacity_ = 0;
};

}  // namespace

std::unique_ptr<server::Backend> make_cuda_backend(std::string& why, int device) {
  auto plugin = cuda::CudaPlugin::load(why);
  if (!plugin) return nullptr;
  if (device >= plugin->device_count()) {
    why = "GPU " + std::to_string(device) + " does not exist (" + std::to_string(plugin->device_count()) + " found)";
    return nullptr;
  }
  try {
    return std::make_unique<CudaBackend>(std::move(*plugin), device);
  } catch (const std::exception& e) {
    why = e.what();
    return nullptr;
  }
}

}  // namespace outboard::backends
