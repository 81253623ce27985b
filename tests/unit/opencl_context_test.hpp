// A fixture for the OpenCL backend's unit tests: a context on the host's first OpenCL platform
// and device (PoCL in CI); the test is skipped where there is none.
#pragma once
#include <CL/cl.h>
#include <gtest/gtest.h>

namespace outboard::backends {

class OpenClContextTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cl_platform_id platform;
    cl_uint n = 0;
    if (clGetPlatformIDs(1, &platform, &n) != CL_SUCCESS || n == 0) GTEST_SKIP() << "no OpenCL platform";
    if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device_, nullptr) != CL_SUCCESS) GTEST_SKIP() << "no device";
    cl_int rc = CL_SUCCESS;
    context_ = clCreateContext(nullptr, 1, &device_, nullptr, nullptr, &rc);
    ASSERT_EQ(rc, CL_SUCCESS);
  }
  void TearDown() override {
    if (context_) clReleaseContext(context_);
  }
  cl_device_id device_ = nullptr;
  cl_context context_ = nullptr;
};

}  // namespace outboard::backends
