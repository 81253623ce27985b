// liboutboard-cuda.so's cuFFT entry points (plugin_api.h, version 4).
#include <cufft.h>

#include "backends/cuda/plugin_internal.hpp"

namespace outboard_cuda {

std::string describe_cufft(int status) {
  switch (status) {
    case CUFFT_INVALID_PLAN: return "CUFFT_INVALID_PLAN";
    case CUFFT_ALLOC_FAILED: return "CUFFT_ALLOC_FAILED: cuFFT could not allocate GPU or host memory";
    case CUFFT_INVALID_VALUE: return "CUFFT_INVALID_VALUE";
    case CUFFT_INTERNAL_ERROR: return "CUFFT_INTERNAL_ERROR";
    case CUFFT_EXEC_FAILED: return "CUFFT_EXEC_FAILED";
    case CUFFT_SETUP_FAILED: return "CUFFT_SETUP_FAILED";
    case CUFFT_INVALID_SIZE: return "CUFFT_INVALID_SIZE";
    case CUFFT_NOT_SUPPORTED: return "CUFFT_NOT_SUPPORTED";
    default: return "cufftResult " + std::to_string(status);
  }
}

namespace {

int check(cufftResult r, const char* what) {
  if (r == CUFFT_SUCCESS) return OUTBOARD_CUDA_OK;
  return fail(OUTBOARD_CUDA_ERR_CUFFT - static_cast<int>(r), what);
}

bool valid(const outboard_cuda_fft* f) {
  if (!f || (f->precision != 's' && f->precision != 'd') || f->kind < 0 || f->kind > 2) return false;
  if (f->rank < 1 || f->rank > 3 || f->batch < 1) return false;
  if (f->kind == 0 && f->sign != -1 && f->sign != 1) return false;
  for (int i = 0; i < f->rank; ++i)
    if (f->n[i] < 1) return false;
  return true;
}

cufftType type_of(const outboard_cuda_fft& f) {
  const bool d = f.precision == 'd';
  switch (f.kind) {
    case 0: return d ? CUFFT_Z2Z : CUFFT_C2C;
    case 1: return d ? CUFFT_D2Z : CUFFT_R2C;
    default: return d ? CUFFT_Z2D : CUFFT_C2R;
  }
}

}  // namespace
}  // namespace outboard_cuda

using namespace outboard_cuda;

extern "C" {

int ob_fft_plan_create(const outboard_cuda_fft* fft, void** plan, uint64_t* work_bytes) {
  return guarded([&] {
    if (!valid(fft) || !plan) return fail(OUTBOARD_CUDA_ERR_INVALID_ARGUMENT, "fft_plan_create: invalid FFT");
    cufftHandle h = 0;
    if (int rc = check(cufftCreate(&h), "cufftCreate")) return rc;
    long long n[3] = {fft->n[0], fft->n[1], fft->n[2]};
    size_t work = 0;
    // Null embeddings: the dense layout, each transform right after the previous one.
    if (int rc = check(cufftMakePlanMany64(h, fft->rank, n, nullptr, 1, 0, nullptr, 1, 0, type_of(*fft), fft->batch,
                                           &work),
                       "cufftMakePlanMany64")) {
      cufftDestroy(h);
      return rc;
    }
    *plan = reinterpret_cast<void*>(static_cast<uintptr_t>(h));
    if (work_bytes) *work_bytes = work;
    return OUTBOARD_CUDA_OK;
  });
}

int ob_fft_plan_destroy(void* plan) {
  return guarded([&] { return check(cufftDestroy(static_cast<cufftHandle>(reinterpret_cast<uintptr_t>(plan))), "cufftDestroy"); });
}

int ob_fft_exec(void* plan, const outboard_cuda_fft* fft, void* in, void* out, void* stream) {
  return guarded([&] {
    if (!valid(fft) || !in || !out) return fail(OUTBOARD_CUDA_ERR_INVALID_ARGUMENT, "fft_exec: invalid FFT");
    const auto h = static_cast<cufftHandle>(reinterpret_cast<uintptr_t>(plan));
    if (int rc = check(cufftSetStream(h, static_cast<cudaStream_t>(stream)), "cufftSetStream")) return rc;
    const int dir = fft->sign < 0 ? CUFFT_FORWARD : CUFFT_INVERSE;
    if (fft->precision == 'd') {
      switch (fft->kind) {
        case 0: return check(cufftExecZ2Z(h, static_cast<cufftDoubleComplex*>(in), static_cast<cufftDoubleComplex*>(out), dir), "cufftExecZ2Z");
        case 1: return check(cufftExecD2Z(h, static_cast<cufftDoubleReal*>(in), static_cast<cufftDoubleComplex*>(out)), "cufftExecD2Z");
        default: return check(cufftExecZ2D(h, static_cast<cufftDoubleComplex*>(in), static_cast<cufftDoubleReal*>(out)), "cufftExecZ2D");
      }
    }
    switch (fft->kind) {
      case 0: return check(cufftExecC2C(h, static_cast<cufftComplex*>(in), static_cast<cufftComplex*>(out), dir), "cufftExecC2C");
      case 1: return check(cufftExecR2C(h, static_cast<cufftReal*>(in), static_cast<cufftComplex*>(out)), "cufftExecR2C");
      default: return check(cufftExecC2R(h, static_cast<cufftComplex*>(in), static_cast<cufftReal*>(out)), "cufftExecC2R");
    }
  });
}

}  // extern "C"
