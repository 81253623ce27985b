// The native OpenCL headers as the backend uses them, and what its files share: the platforms and
// devices the host offers (ids below wire::kFirstClientId, the same for every session).
#pragma once
#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 300
#endif
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <CL/cl_ext.h>

#include <atomic>
#include <string>
#include <unordered_map>
#include <vector>

#include "backends/opencl/staging_budget.hpp"
#include "server/services/opencl_executor.hpp"
#include "wire/opencl.hpp"

namespace outboard::backends {

struct NativePlatforms {
  std::vector<cl_platform_id> platforms;                 // id i+1 is platforms[i]
  std::unordered_map<wire::ClId, cl_device_id> devices;  // by id
  std::unordered_map<wire::ClId, cl_platform_id> device_platform;
  std::vector<std::byte> snapshot;                       // wire::ClSnapshot, encoded
};

// Finds the host's platforms and devices and describes them (platform_scan.cpp); only those with
// a GPU device where `gpu_platforms_only`.
NativePlatforms scan_platforms(bool gpu_platforms_only = false);
// A text property of a platform (CL_PLATFORM_NAME, _VERSION, ...); empty where it has none.
std::string platform_text(cl_platform_id p, cl_platform_info what);
// Every info value of a device, as clients see it (ids for CL_DEVICE_PLATFORM and
// CL_DEVICE_PARENT_DEVICE; no native kernels, no SVM).
std::vector<wire::ClInfoValue> describe_device(cl_device_id d, wire::ClId platform, wire::ClId parent);

struct SharedCounters {
  std::atomic<uint64_t> operations{0}, kernels{0}, failures{0}, bytes_written{0}, bytes_read{0};
  std::atomic<uint64_t> direct_bytes_written{0}, direct_bytes_read{0};
  std::atomic<uint64_t> pinned_bytes_read{0};
  std::atomic<uint64_t> write_waits{0};  // writes that waited for room (write_gate.hpp)
  StagingBudget::Gauge staging;  // the direct transfers' staging memory
};

namespace opencl {
class NativeWatch;
}

// A session's objects (cl_session.cpp); `watch` sees its operations (native_watch.hpp).
std::unique_ptr<server::ClSessionObjects> make_cl_session(const NativePlatforms& natives,
                                                          std::shared_ptr<server::ClOutput> out,
                                                          const server::ClLimits& limits,
                                                          std::shared_ptr<server::ClClientMemory> memory,
                                                          SharedCounters& counters, opencl::NativeWatch& watch);

// "CL_INVALID_VALUE" style name of an error code.
const char* cl_error_name(cl_int code);

}  // namespace outboard::backends
