// Platforms and devices: answered from what each server described when the channel was made (no
// network round trip).
#include "shims/opencl/api.hpp"

namespace outboard::opencl {

cl_int CL_API_CALL Api::clGetPlatformIDs(cl_uint num_entries, cl_platform_id* out, cl_uint* num_platforms) {
  if ((num_entries == 0 && out) || (!out && !num_platforms)) return CL_INVALID_VALUE;
  const auto& all = platforms();
  if (num_platforms) *num_platforms = static_cast<cl_uint>(all.size());
  for (cl_uint i = 0; out && i < num_entries && i < all.size(); ++i) out[i] = all[i];
  return CL_SUCCESS;
}

cl_int CL_API_CALL Api::clGetPlatformInfo(cl_platform_id platform, cl_platform_info param_name, size_t param_value_size,
                                          void* param_value, size_t* param_value_size_ret) {
  if (!valid(platform)) return CL_INVALID_PLATFORM;
  auto it = platform->info.find(param_name);
  if (it == platform->info.end()) return CL_INVALID_VALUE;
  return answer(it->second.data(), it->second.size(), param_value_size, param_value, param_value_size_ret);
}

cl_int CL_API_CALL Api::clGetDeviceIDs(cl_platform_id platform, cl_device_type device_type, cl_uint num_entries,
                                       cl_device_id* devices, cl_uint* num_devices) {
  if (!valid(platform)) return CL_INVALID_PLATFORM;
  if ((num_entries == 0 && devices) || (!devices && !num_devices)) return CL_INVALID_VALUE;
  const cl_device_type known = CL_DEVICE_TYPE_DEFAULT | CL_DEVICE_TYPE_CPU | CL_DEVICE_TYPE_GPU |
                               CL_DEVICE_TYPE_ACCELERATOR | CL_DEVICE_TYPE_CUSTOM;
  if (device_type == 0 || (device_type != CL_DEVICE_TYPE_ALL && (device_type & ~known))) return CL_INVALID_DEVICE_TYPE;
  std::vector<cl_device_id> match;
  for (cl_device_id d : platform->devices) {
    const bool is_default = d == platform->devices.front();  // the platform's first device is its default
    if (device_type == CL_DEVICE_TYPE_ALL || (d->type & device_type) ||
        ((device_type & CL_DEVICE_TYPE_DEFAULT) && is_default))
      match.push_back(d);
  }
  if (match.empty()) return CL_DEVICE_NOT_FOUND;
  if (num_devices) *num_devices = static_cast<cl_uint>(match.size());
  for (cl_uint i = 0; devices && i < num_entries && i < match.size(); ++i) devices[i] = match[i];
  return CL_SUCCESS;
}

cl_int CL_API_CALL Api::clGetDeviceInfo(cl_device_id device, cl_device_info param_name, size_t param_value_size,
                                        void* param_value, size_t* param_value_size_ret) {
  if (!valid(device)) return CL_INVALID_DEVICE;
  if (param_name == CL_DEVICE_REFERENCE_COUNT)
    return answer_value(device->is_sub() ? device->refs.load() : cl_uint(1), param_value_size, param_value,
                        param_value_size_ret);
  auto it = device->info.find(param_name);
  if (it == device->info.end()) return CL_INVALID_VALUE;
  return answer(it->second.data(), it->second.size(), param_value_size, param_value, param_value_size_ret);
}

// Root devices: retain and release do nothing (OpenCL 1.2); sub-devices are counted.
cl_int CL_API_CALL Api::clRetainDevice(cl_device_id device) {
  if (!valid(device)) return CL_INVALID_DEVICE;
  retain_device(device);
  return CL_SUCCESS;
}
cl_int CL_API_CALL Api::clReleaseDevice(cl_device_id device) {
  if (!valid(device)) return CL_INVALID_DEVICE;
  release_device(device);
  return CL_SUCCESS;
}

// Timers: the device's and its host's, the server's (where the device is). A platform that
// reports no host timer resolution has neither (OpenCL 2.1).
namespace {
// `want_device`: the device's timer is asked for too. A platform without timers says so before
// the pointers are looked at (OpenCL-CTS negative_get_device_and_host_timer).
cl_int timers(cl_device_id device, bool want_device, cl_ulong* device_ts, cl_ulong* host_ts) {
  if (!valid(device)) return CL_INVALID_DEVICE;
  auto it = device->platform->info.find(CL_PLATFORM_HOST_TIMER_RESOLUTION);
  cl_ulong resolution = 0;
  if (it != device->platform->info.end() && it->second.size() == sizeof resolution)
    std::memcpy(&resolution, it->second.data(), sizeof resolution);
  if (resolution == 0) return CL_INVALID_OPERATION;
  if (!host_ts || (want_device && !device_ts)) return CL_INVALID_VALUE;
  client::opencl::Answer a = device->platform->channel->call(wire::ClGetTimers{device->id, device_ts == nullptr});
  if (a.status == client::opencl::kLost) return CL_OUT_OF_RESOURCES;
  if (a.status != CL_SUCCESS) return a.status;
  if (a.data.size() != 2 * sizeof(cl_ulong)) return CL_OUT_OF_RESOURCES;
  if (device_ts) std::memcpy(device_ts, a.data.data(), sizeof(cl_ulong));
  std::memcpy(host_ts, a.data.data() + sizeof(cl_ulong), sizeof(cl_ulong));
  return CL_SUCCESS;
}
}  // namespace

cl_int CL_API_CALL Api::clGetHostTimer(cl_device_id device, cl_ulong* host_timestamp) {
  return timers(device, false, nullptr, host_timestamp);
}

cl_int CL_API_CALL Api::clGetDeviceAndHostTimer(cl_device_id device, cl_ulong* device_timestamp,
                                                cl_ulong* host_timestamp) {
  return timers(device, true, device_timestamp, host_timestamp);
}

}  // namespace outboard::opencl
