// Sub-devices: a partition is made on the server (its native platform decides what is possible
// and answers with the native error otherwise) and described back like a root device, so their
// info is answered here afterwards. They are counted objects; contexts retain theirs.
#include <algorithm>

#include "shims/opencl/api.hpp"
#include "shims/opencl/registry.hpp"

namespace outboard::opencl {
namespace {

using client::opencl::Answer;

// The partition properties as OpenCL lays them out (a count list runs to its own end marker),
// without the final 0; false when the list is malformed or too long.
bool partition_list(const cl_device_partition_property* p, wire::ClWords& out) {
  for (; *p; ++p) {
    if (out.size() + 2 > wire::kMaxClList) return false;
    const cl_device_partition_property name = *p;
    out.push_back(static_cast<uint64_t>(name));
    if (name == CL_DEVICE_PARTITION_BY_COUNTS) {
      for (++p; *p != CL_DEVICE_PARTITION_BY_COUNTS_LIST_END; ++p) {
        if (out.size() + 2 > wire::kMaxClList) return false;
        out.push_back(static_cast<uint64_t>(*p));
      }
      out.push_back(CL_DEVICE_PARTITION_BY_COUNTS_LIST_END);
    } else {
      out.push_back(static_cast<uint64_t>(*++p));
    }
  }
  return true;
}

cl_device_id make_sub_device(cl_device_id parent, const wire::ClDeviceEntry& e) {
  auto* d = new _cl_device_id;
  d->platform = parent->platform;
  d->id = e.id;
  for (const auto& v : e.info) d->info[v.param] = v.value;
  // Values naming devices hold ids on the wire; here they are handles.
  d->info[CL_DEVICE_PLATFORM] = wire::ClBlob(sizeof(cl_platform_id));
  std::memcpy(d->info[CL_DEVICE_PLATFORM].data(), &d->platform, sizeof(cl_platform_id));
  d->info[CL_DEVICE_PARENT_DEVICE] = wire::ClBlob(sizeof(cl_device_id));
  std::memcpy(d->info[CL_DEVICE_PARENT_DEVICE].data(), &parent, sizeof(cl_device_id));
  d->type = d->value<cl_device_type>(CL_DEVICE_TYPE);
  d->parent = parent;
  if (parent->is_sub()) parent->refs.fetch_add(1);
  registry_add(d);
  return d;
}

}  // namespace

cl_int CL_API_CALL Api::clCreateSubDevices(cl_device_id in_device, const cl_device_partition_property* properties,
                                           cl_uint num_devices, cl_device_id* out_devices, cl_uint* num_devices_ret) {
  if (!valid(in_device)) return CL_INVALID_DEVICE;
  wire::ClWords list;
  if (!properties || !partition_list(properties, list)) return CL_INVALID_VALUE;
  if (out_devices && num_devices == 0) return CL_INVALID_VALUE;
  // Ids for as many sub-devices as the device could ever give.
  const auto most = std::max<uint64_t>({in_device->value<cl_uint>(CL_DEVICE_PARTITION_MAX_SUB_DEVICES, 0),
                                        in_device->value<cl_uint>(CL_DEVICE_MAX_COMPUTE_UNITS, 0), 1});
  const auto reserve = static_cast<uint32_t>(std::min<uint64_t>(most, wire::kMaxClList));
  const ClId first = new_ids(reserve);
  Channel& ch = *in_device->platform->channel;
  Answer a = ch.call(wire::ClCreateSubDevices{first, reserve, in_device->id, list});
  if (a.status == client::opencl::kLost) return CL_OUT_OF_RESOURCES;
  if (a.status != CL_SUCCESS) return a.status;
  wire::ClDeviceList made;
  try {
    made = wire::decode_cl_device_list(a.payload);
  } catch (const std::exception&) {
    return CL_OUT_OF_RESOURCES;
  }
  if (made.devices.empty()) return CL_OUT_OF_RESOURCES;
  const auto count = static_cast<cl_uint>(made.devices.size());
  // Only counted, or too many for the program's array: the server's are released again.
  if (!out_devices || num_devices < count) {
    for (const auto& e : made.devices) ch.post(wire::ClRelease{e.id});
    if (out_devices) return CL_INVALID_VALUE;
    if (num_devices_ret) *num_devices_ret = count;
    return CL_SUCCESS;
  }
  for (cl_uint i = 0; i < count; ++i) out_devices[i] = make_sub_device(in_device, made.devices[i]);
  if (num_devices_ret) *num_devices_ret = count;
  return CL_SUCCESS;
}

void retain_device(cl_device_id d) {
  if (d->is_sub()) d->refs.fetch_add(1);
}

void release_device(cl_device_id d) {
  if (!d->is_sub() || d->refs.fetch_sub(1) != 1) return;
  registry_remove(d);
  d->platform->channel->post(wire::ClRelease{d->id});
  cl_device_id parent = d->parent;
  delete d;
  release_device(parent);
}

}  // namespace outboard::opencl
