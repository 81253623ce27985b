// Unit tests of the native bugs refused before they are reached (backends/opencl/native_quirks.hpp).
#include <gtest/gtest.h>

#include <string>

#include "backends/opencl/native_quirks.hpp"

namespace outboard::backends::opencl {
namespace {

TEST(NativeQuirks, FindsTheLongestKernelName) {
  EXPECT_EQ(longest_kernel_name("kernel void add(global int* a) {}"), "add");
  EXPECT_EQ(longest_kernel_name("__kernel void a(int x) {}\n__kernel void longer_one(int y) {}"), "longer_one");
  // Attributes before and after the type; a function that is not a kernel.
  EXPECT_EQ(longest_kernel_name("void helper_with_a_long_name(int x) {}\n"
                                "kernel __attribute__((reqd_work_group_size(64, 1, 1))) void k(int x) {}\n"
                                "__kernel void __attribute__((vec_type_hint(float4))) kk(int x) {}"),
            "kk");
  EXPECT_EQ(longest_kernel_name("int kernels_are_not_kernel(int x);"), "");
  EXPECT_EQ(longest_kernel_name("kernel void"), "");  // cut short: no name
}

TEST(NativeQuirks, RefusesLongKernelNamesOnNvidiaOnly) {
  const std::string name(300, 'a');
  const std::string source = "kernel void " + name + "(global int* a) { a[0] = 0; }";
  const std::string refusal = build_refusal("NVIDIA CUDA", source);
  EXPECT_NE(refusal.find("over 256 characters (this one has 300)"), std::string::npos) << refusal;
  EXPECT_EQ(build_refusal("Portable Computing Language", source), "");
  EXPECT_EQ(build_refusal("NVIDIA CUDA", "kernel void " + std::string(256, 'b') + "(int x) {}"), "");
}

}  // namespace
}  // namespace outboard::backends::opencl
