// The dcuda GPU tests skip where there is no GPU (they are built and listed on the CI machine).
#pragma once
#include <cuda_runtime.h>
#include <gtest/gtest.h>

inline bool have_gpu() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}
#define NEED_GPU() \
  if (!have_gpu()) GTEST_SKIP() << "no GPU"
