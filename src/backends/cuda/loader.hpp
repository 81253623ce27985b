// Finds and loads the CUDA plugin (liboutboard-cuda.so) with dlopen. This library has no CUDA
// dependency: on a host without CUDA, load() just says why there is no CUDA backend.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <utility>

#include "backends/cuda/plugin_api.h"

namespace outboard::cuda {

class CudaPlugin {
 public:
  // Loads the plugin from $OUTBOARD_CUDA_PLUGIN if set, else from <directory of the running
  // executable>/../lib/liboutboard-cuda.so; checks its table version and that it sees at least one
  // device. On any failure returns nullopt and says why in `why`, e.g. "no CUDA device:
  // cudaGetDeviceCount: cudaErrorNoDevice: no CUDA-capable device is detected".
  // The library stays loaded for the life of the process (unloading the CUDA runtime is unsafe).
  static std::optional<CudaPlugin> load(std::string& why);

  // Where load() looks for the plugin.
  static std::string plugin_path();

  const outboard_cuda_api_v1& api() const { return *api_; }
  int device_count() const { return device_count_; }
  const std::string& path() const { return path_; }

  // What went wrong in a call that returned `code`: the plugin's last error on this thread (with
  // the failing CUDA call) or, failing that, the code's text.
  std::string error(int code) const;
  // Throws outboard::Error("<what>: <error(code)>") when code is not 0.
  void check(int code, const char* what) const;

  // Runs `frees` (releasing what was made on `device`) with `device` current, the thread's GPU put
  // back after; not at all where the GPU cannot be selected (its context poisoned by a fault: a
  // reset or the process's end frees it). For destructors: throws nothing.
  void free_on(int device, const std::function<void()>& frees) const noexcept;

  // Makes `device` the calling thread's current GPU for a scope (throws Error where it cannot)
  // and puts the thread's previous one back at its end: code that frees or makes things on one
  // GPU never leaves a thread pointed at another GPU than the one its caller chose.
  class OnDevice {
   public:
    OnDevice(const CudaPlugin& plugin, int device);
    ~OnDevice();
    OnDevice(const OnDevice&) = delete;
    OnDevice& operator=(const OnDevice&) = delete;

   private:
    const outboard_cuda_api_v1& api_;
    int previous_ = -1;
  };

 private:
  CudaPlugin(const outboard_cuda_api_v1* api, int device_count, std::string path)
      : api_(api), device_count_(device_count), path_(std::move(path)) {}

  const outboard_cuda_api_v1* api_;
  int device_count_;
  std::string path_;
};

}  // namespace outboard::cuda
