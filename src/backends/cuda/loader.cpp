#include "backends/cuda/loader.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "common/error.hpp"

namespace outboard::cuda {
namespace {

std::string executable_directory() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "";
  buf[n] = '\0';
  return std::filesystem::path(buf).parent_path().string();
}

}  // namespace

std::string CudaPlugin::plugin_path() {
  if (const char* env = std::getenv("OUTBOARD_CUDA_PLUGIN"); env && *env) return env;
  std::string dir = executable_directory();
  if (dir.empty()) return OUTBOARD_CUDA_PLUGIN_FILE;  // let the dynamic loader search
  return (std::filesystem::path(dir).parent_path() / "lib" / OUTBOARD_CUDA_PLUGIN_FILE).string();
}

std::optional<CudaPlugin> CudaPlugin::load(std::string& why) {
  const std::string path = plugin_path();
  const bool from_env = std::getenv("OUTBOARD_CUDA_PLUGIN") && *std::getenv("OUTBOARD_CUDA_PLUGIN");
  std::error_code ec;
  if (path.find('/') != std::string::npos && !std::filesystem::exists(path, ec)) {
    why = "no CUDA plugin at " + path +
          (from_env ? " (named by OUTBOARD_CUDA_PLUGIN)"
                    : " (this build has no CUDA backend; set OUTBOARD_CUDA_PLUGIN to use one elsewhere)");
    return std::nullopt;
  }
  // Kept loaded for the life of the process: never dlclose'd, so the handle is not kept either.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* e = dlerror();
    why = "cannot load the CUDA plugin " + path + ": " + (e ? e : "unknown dlopen error") +
          " (the CUDA runtime and cuBLAS libraries must be on the loader's path)";
    return std::nullopt;
  }
  dlerror();
  auto entry = reinterpret_cast<outboard_cuda_plugin_v1_fn>(dlsym(handle, OUTBOARD_CUDA_PLUGIN_SYMBOL));
  if (!entry) {
    why = "the CUDA plugin " + path + " does not export " OUTBOARD_CUDA_PLUGIN_SYMBOL;
    return std::nullopt;
  }
  const outboard_cuda_api_v1* api = entry();
  if (!api || api->version != OUTBOARD_CUDA_API_VERSION || api->size < sizeof(outboard_cuda_api_v1)) {
    why = "the CUDA plugin " + path + " has interface version " + (api ? std::to_string(api->version) : "?") +
          ", this program needs version " + std::to_string(OUTBOARD_CUDA_API_VERSION) +
          " (rebuild the plugin with this Outboard, or point OUTBOARD_CUDA_PLUGIN at a matching one)";
    return std::nullopt;
  }
  const void* required[] = {
      reinterpret_cast<const void*>(api->error_text),       reinterpret_cast<const void*>(api->last_error),
      reinterpret_cast<const void*>(api->device_count),     reinterpret_cast<const void*>(api->device_describe),
      reinterpret_cast<const void*>(api->set_device),       reinterpret_cast<const void*>(api->device_synchronize),
      reinterpret_cast<const void*>(api->device_alloc),     reinterpret_cast<const void*>(api->device_free),
      reinterpret_cast<const void*>(api->host_alloc_pinned), reinterpret_cast<const void*>(api->host_free_pinned),
      reinterpret_cast<const void*>(api->stream_create),    reinterpret_cast<const void*>(api->stream_destroy),
      reinterpret_cast<const void*>(api->stream_sync),      reinterpret_cast<const void*>(api->memcpy_sync),
      reinterpret_cast<const void*>(api->memcpy_async),     reinterpret_cast<const void*>(api->fill),
      reinterpret_cast<const void*>(api->timed_copy),       reinterpret_cast<const void*>(api->gemm),
      reinterpret_cast<const void*>(api->release),      reinterpret_cast<const void*>(api->level3),
      reinterpret_cast<const void*>(api->lapack),       reinterpret_cast<const void*>(api->event_create),
      reinterpret_cast<const void*>(api->event_destroy), reinterpret_cast<const void*>(api->event_record),
      reinterpret_cast<const void*>(api->stream_wait_event), reinterpret_cast<const void*>(api->event_query),
      reinterpret_cast<const void*>(api->event_elapsed), reinterpret_cast<const void*>(api->level3_async),
      reinterpret_cast<const void*>(api->lapack_device), reinterpret_cast<const void*>(api->device_memory),
      reinterpret_cast<const void*>(api->get_device),    reinterpret_cast<const void*>(api->device_health),
      reinterpret_cast<const void*>(api->device_reset),  reinterpret_cast<const void*>(api->inject_fault)};
  for (const void* f : required)
    if (!f) {
      why = "the CUDA plugin " + path + " has an incomplete function table";
      return std::nullopt;
    }
  int count = 0;
  if (int rc = api->device_count(&count); rc != OUTBOARD_CUDA_OK) {
    const char* detail = api->last_error();
    why = std::string("no CUDA device: ") + (detail && *detail ? detail : api->error_text(rc));
    return std::nullopt;
  }
  if (count <= 0) {
    why = "no CUDA device: cudaGetDeviceCount found none";
    return std::nullopt;
  }
  return CudaPlugin(api, count, path);
}

std::string CudaPlugin::error(int code) const {
  const char* detail = api_->last_error();
  if (detail && *detail) return detail;
  return api_->error_text(code);
}

CudaPlugin::OnDevice::OnDevice(const CudaPlugin& plugin, int device) : api_(plugin.api()) {
  if (api_.get_device(&previous_) != OUTBOARD_CUDA_OK) previous_ = -1;
  if (previous_ != device) plugin.check(api_.set_device(device), "selecting the GPU");
}

CudaPlugin::OnDevice::~OnDevice() {
  int now = -1;
  if (previous_ >= 0 && api_.get_device(&now) == OUTBOARD_CUDA_OK && now != previous_) api_.set_device(previous_);
}

void CudaPlugin::free_on(int device, const std::function<void()>& frees) const noexcept {
  try {
    OnDevice on(*this, device);
    frees();
  } catch (...) {
  }
}

void CudaPlugin::check(int code, const char* what) const {
  if (code != OUTBOARD_CUDA_OK) throw Error(std::string(what) + ": " + error(code));
}

}  // namespace outboard::cuda
