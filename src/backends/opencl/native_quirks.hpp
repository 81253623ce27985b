// Native bugs that would take the server down, refused before they are reached: a native crash is
// not contained (every session of the server would go with it), so where a platform is known to
// crash on some input, that input gets an OpenCL error and a log saying why instead.
#pragma once
#include <string>
#include <string_view>

namespace outboard::backends::opencl {

// Why a build of the OpenCL C `source` on the platform named `platform` must not run; empty where
// it may. Known: NVIDIA's OpenCL (driver 580) corrupts its process's heap building a kernel whose
// name is over 256 characters (OpenCL-CTS test_compiler kernel_name_size; shown without Outboard
// by bench/probes/cl_long_kernel_name.c). Names a macro makes are not seen.
// OUTBOARD_TEST_CL_QUIRK_PLATFORM (tests only): a platform name, e.g. PoCL's, treated as NVIDIA's.
std::string build_refusal(std::string_view platform, std::string_view source);

// The longest name of a kernel `source` declares (kernel or __kernel, attributes skipped), as
// written; comments and strings are not told apart.
std::string longest_kernel_name(std::string_view source);

}  // namespace outboard::backends::opencl
