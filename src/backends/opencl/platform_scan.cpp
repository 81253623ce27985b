// The host's platforms and devices, and every info value a client answers its programs from.
// Rather than a list of parameter names (which grows with every OpenCL version and vendor
// extension), the scan asks each platform and device for every name in the ranges OpenCL and the
// vendors use; what an implementation does not know it refuses, and is left out.
#include <cstring>

#include "backends/opencl/native.hpp"
#include "wire/opencl.hpp"

namespace outboard::backends {
namespace {

struct Range {
  cl_uint first, end;
};
constexpr Range kPlatformParams[] = {{0x0900, 0x0910}, {0x0920, 0x0921}};
// Core and Khronos names (0x1000.., 0x2000.. for external memory and semaphores), then the
// vendors' (0x4000.. NVIDIA, AMD, Intel, ARM, PoCL).
constexpr Range kDeviceParams[] = {{0x1000, 0x1300}, {0x2000, 0x2100}, {0x4000, 0x4400}};

template <class Query>
std::vector<wire::ClInfoValue> scan(const Range* ranges, size_t count, Query query) {
  std::vector<wire::ClInfoValue> out;
  for (size_t r = 0; r < count; ++r)
    for (cl_uint p = ranges[r].first; p < ranges[r].end; ++p) {
      size_t size = 0;
      if (query(p, 0, nullptr, &size) != CL_SUCCESS || size > wire::kMaxClBlob) continue;
      wire::ClInfoValue v{p, wire::ClBlob(size)};
      if (query(p, size, v.value.data(), nullptr) != CL_SUCCESS) continue;
      out.push_back(std::move(v));
    }
  return out;
}

template <class T>
void set_value(wire::ClInfoValue& v, T x) {
  v.value.resize(sizeof x);
  std::memcpy(v.value.data(), &x, sizeof x);
}

}  // namespace

std::vector<wire::ClInfoValue> describe_device(cl_device_id d, wire::ClId platform, wire::ClId parent) {
  auto info = scan(kDeviceParams, std::size(kDeviceParams), [d](cl_uint param, size_t s, void* v, size_t* r) {
    return clGetDeviceInfo(d, param, s, v, r);
  });
  for (wire::ClInfoValue& v : info) {
    if (v.param == CL_DEVICE_PLATFORM) set_value<uint64_t>(v, platform);
    if (v.param == CL_DEVICE_PARENT_DEVICE) set_value<uint64_t>(v, parent);
    // Native kernels would run host code of the client's on the server: not offered.
    if (v.param == CL_DEVICE_EXECUTION_CAPABILITIES) set_value<cl_device_exec_capabilities>(v, CL_EXEC_KERNEL);
    // Shared virtual memory would share the client's address space with the server's: not offered.
    if (v.param == CL_DEVICE_SVM_CAPABILITIES) set_value<cl_device_svm_capabilities>(v, 0);
  }
  return info;
}

std::string platform_text(cl_platform_id p, cl_platform_info what) {
  size_t n = 0;
  if (clGetPlatformInfo(p, what, 0, nullptr, &n) != CL_SUCCESS || n == 0) return {};
  std::string s(n, '\0');
  clGetPlatformInfo(p, what, n, s.data(), nullptr);
  if (s.back() == '\0') s.pop_back();
  return s;
}

NativePlatforms scan_platforms(bool gpu_platforms_only) {
  NativePlatforms n;
  cl_uint count = 0;
  if (clGetPlatformIDs(0, nullptr, &count) != CL_SUCCESS || count == 0) return n;
  n.platforms.resize(count);
  if (clGetPlatformIDs(count, n.platforms.data(), nullptr) != CL_SUCCESS) {
    n.platforms.clear();
    return n;
  }
  if (gpu_platforms_only) {
    std::erase_if(n.platforms, [](cl_platform_id p) {
      cl_uint gpus = 0;
      return clGetDeviceIDs(p, CL_DEVICE_TYPE_GPU, 0, nullptr, &gpus) != CL_SUCCESS || gpus == 0;
    });
    count = static_cast<cl_uint>(n.platforms.size());
  }
  wire::ClSnapshot snap;
  wire::ClId next_device = count + 1;
  for (cl_uint i = 0; i < count; ++i) {
    cl_platform_id p = n.platforms[i];
    wire::ClPlatformEntry pe;
    pe.id = i + 1;
    pe.info = scan(kPlatformParams, std::size(kPlatformParams), [p](cl_uint param, size_t s, void* v, size_t* r) {
      return clGetPlatformInfo(p, param, s, v, r);
    });
    cl_uint devices = 0;
    std::vector<cl_device_id> ds;
    if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &devices) == CL_SUCCESS && devices > 0) {
      ds.resize(devices);
      if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, devices, ds.data(), nullptr) != CL_SUCCESS) ds.clear();
    }
    for (cl_device_id d : ds) {
      wire::ClDeviceEntry de;
      de.id = next_device++;
      de.info = describe_device(d, pe.id, 0);
      n.devices[de.id] = d;
      n.device_platform[de.id] = p;
      pe.devices.push_back(std::move(de));
    }
    snap.platforms.push_back(std::move(pe));
  }
  n.snapshot = wire::encode_cl(snap);
  return n;
}

const char* cl_error_name(cl_int code) {
  switch (code) {
#define OB_CL_ERROR(name) \
  case name:              \
    return #name;
    OB_CL_ERROR(CL_SUCCESS) OB_CL_ERROR(CL_DEVICE_NOT_FOUND) OB_CL_ERROR(CL_DEVICE_NOT_AVAILABLE)
    OB_CL_ERROR(CL_COMPILER_NOT_AVAILABLE) OB_CL_ERROR(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    OB_CL_ERROR(CL_OUT_OF_RESOURCES) OB_CL_ERROR(CL_OUT_OF_HOST_MEMORY)
    OB_CL_ERROR(CL_PROFILING_INFO_NOT_AVAILABLE) OB_CL_ERROR(CL_MEM_COPY_OVERLAP) OB_CL_ERROR(CL_IMAGE_FORMAT_MISMATCH)
    OB_CL_ERROR(CL_IMAGE_FORMAT_NOT_SUPPORTED) OB_CL_ERROR(CL_BUILD_PROGRAM_FAILURE) OB_CL_ERROR(CL_MAP_FAILURE)
    OB_CL_ERROR(CL_MISALIGNED_SUB_BUFFER_OFFSET) OB_CL_ERROR(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
    OB_CL_ERROR(CL_COMPILE_PROGRAM_FAILURE) OB_CL_ERROR(CL_LINKER_NOT_AVAILABLE) OB_CL_ERROR(CL_LINK_PROGRAM_FAILURE)
    OB_CL_ERROR(CL_DEVICE_PARTITION_FAILED) OB_CL_ERROR(CL_KERNEL_ARG_INFO_NOT_AVAILABLE)
    OB_CL_ERROR(CL_INVALID_VALUE) OB_CL_ERROR(CL_INVALID_DEVICE_TYPE) OB_CL_ERROR(CL_INVALID_PLATFORM)
    OB_CL_ERROR(CL_INVALID_DEVICE) OB_CL_ERROR(CL_INVALID_CONTEXT) OB_CL_ERROR(CL_INVALID_QUEUE_PROPERTIES)
    OB_CL_ERROR(CL_INVALID_COMMAND_QUEUE) OB_CL_ERROR(CL_INVALID_HOST_PTR) OB_CL_ERROR(CL_INVALID_MEM_OBJECT)
    OB_CL_ERROR(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR) OB_CL_ERROR(CL_INVALID_IMAGE_SIZE) OB_CL_ERROR(CL_INVALID_SAMPLER)
    OB_CL_ERROR(CL_INVALID_BINARY) OB_CL_ERROR(CL_INVALID_BUILD_OPTIONS) OB_CL_ERROR(CL_INVALID_PROGRAM)
    OB_CL_ERROR(CL_INVALID_PROGRAM_EXECUTABLE) OB_CL_ERROR(CL_INVALID_KERNEL_NAME)
    OB_CL_ERROR(CL_INVALID_KERNEL_DEFINITION) OB_CL_ERROR(CL_INVALID_KERNEL) OB_CL_ERROR(CL_INVALID_ARG_INDEX)
    OB_CL_ERROR(CL_INVALID_ARG_VALUE) OB_CL_ERROR(CL_INVALID_ARG_SIZE) OB_CL_ERROR(CL_INVALID_KERNEL_ARGS)
    OB_CL_ERROR(CL_INVALID_WORK_DIMENSION) OB_CL_ERROR(CL_INVALID_WORK_GROUP_SIZE)
    OB_CL_ERROR(CL_INVALID_WORK_ITEM_SIZE) OB_CL_ERROR(CL_INVALID_GLOBAL_OFFSET)
    OB_CL_ERROR(CL_INVALID_EVENT_WAIT_LIST) OB_CL_ERROR(CL_INVALID_EVENT) OB_CL_ERROR(CL_INVALID_OPERATION)
    OB_CL_ERROR(CL_INVALID_GL_OBJECT) OB_CL_ERROR(CL_INVALID_BUFFER_SIZE) OB_CL_ERROR(CL_INVALID_MIP_LEVEL)
    OB_CL_ERROR(CL_INVALID_GLOBAL_WORK_SIZE) OB_CL_ERROR(CL_INVALID_PROPERTY)
    OB_CL_ERROR(CL_INVALID_IMAGE_DESCRIPTOR) OB_CL_ERROR(CL_INVALID_COMPILER_OPTIONS)
    OB_CL_ERROR(CL_INVALID_LINKER_OPTIONS) OB_CL_ERROR(CL_INVALID_DEVICE_PARTITION_COUNT)
#undef OB_CL_ERROR
    default:
      return "CL error";
  }
}

}  // namespace outboard::backends
