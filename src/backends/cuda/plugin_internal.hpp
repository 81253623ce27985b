// What the CUDA plugin's translation units share: error codes and the per-thread last error.
// Internal to liboutboard-cuda.so (plugin.cu, plugin_fft.cu); the outside sees plugin_api.h only.
#pragma once
#include <cuda_runtime.h>
#include <cublas_v2.h>
#include <cusolverDn.h>

#include <new>
#include <string>

#include "backends/cuda/plugin_api.h"

namespace outboard_cuda {

extern thread_local std::string t_last_error;

// Records a failure of `what` for last_error() and returns its code.
int fail(int code, const char* what) noexcept;
int check(cudaError_t e, const char* what);
int check(cublasStatus_t s, const char* what);
int check(cusolverStatus_t s, const char* what);
// The text of a code of another library the plugin uses (cuFFT), for describe_code.
std::string describe_cufft(int status);

// Runs an entry point's body: no C++ exception leaves the plugin.
template <class F>
int guarded(F&& f) {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    t_last_error.clear();
    return OUTBOARD_CUDA_ERR_HOST_MEMORY;
  } catch (...) {
    t_last_error.clear();
    return OUTBOARD_CUDA_ERR_INTERNAL;
  }
}

}  // namespace outboard_cuda
