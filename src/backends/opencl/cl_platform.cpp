// Platforms, sub-devices and timers (the ICD's platform.cpp and subdevice.cpp).
#include <cstring>

#include "backends/opencl/cl_session.hpp"

namespace outboard::backends::opencl {

void ClSession::handle(const wire::ClRequest& r, const wire::ClGetPlatforms&, transport::Buffer&, ClId&, ClId&) {
  auto data = std::make_shared<transport::Buffer>(transport::Buffer::allocate(natives_.snapshot.size()));
  std::memcpy(data->data(), natives_.snapshot.data(), natives_.snapshot.size());
  out_->reply(r.call_id, CL_SUCCESS, {}, data, natives_.snapshot.size());
}

void ClSession::handle(const wire::ClRequest& r, const wire::ClCreateSubDevices& c, transport::Buffer&, ClId&, ClId&) {
  if (!r.call_id) throw ClFail{CL_INVALID_VALUE, "a partition is answered"};
  cl_device_id parent = device(c.device);
  if (c.max_count == 0 || c.max_count > wire::kMaxClList) throw ClFail{CL_INVALID_VALUE, "reserved ids out of range"};
  if (c.first_id < wire::kFirstClientId || c.first_id > std::numeric_limits<uint64_t>::max() - c.max_count)
    throw ClFail{CL_INVALID_VALUE, "sub-device ids out of range"};
  // Two zeros end the list whatever its last property was (a count list's end, then the list's).
  std::vector<cl_device_partition_property> props(c.properties.begin(), c.properties.end());
  props.push_back(0);
  props.push_back(0);
  cl_uint count = 0;
  check(clCreateSubDevices(parent, props.data(), 0, nullptr, &count), "clCreateSubDevices");
  if (count == 0 || count > c.max_count) throw ClFail{CL_INVALID_VALUE, "more sub-devices than ids reserved"};
  for (cl_uint i = 0; i < count; ++i) check_new(c.first_id + i);
  if (objects_.size() + count > limits_.max_objects)
    throw ClFail{CL_OUT_OF_RESOURCES, "the session holds its limit of " + std::to_string(limits_.max_objects) + " objects"};
  std::vector<cl_device_id> subs(count);
  check(clCreateSubDevices(parent, props.data(), count, subs.data(), nullptr), "clCreateSubDevices");
  const ClId platform = platform_of(c.device);
  wire::ClDeviceList list;
  for (cl_uint i = 0; i < count; ++i) {
    list.devices.push_back({c.first_id + i, describe_device(subs[i], platform, c.device)});
    Object o{Kind::device, subs[i]};
    o.platform = platform;
    insert(c.first_id + i, o);
  }
  reply_payload(r.call_id, wire::encode_cl(list));
}

void ClSession::handle(const wire::ClRequest& r, const wire::ClGetTimers& t, transport::Buffer&, ClId&, ClId&) {
  if (!r.call_id) throw ClFail{CL_INVALID_VALUE, "a timer query must be answered"};
  cl_device_id d = device(t.device);
  cl_ulong times[2] = {0, 0};
  if (t.host_only)
    check(clGetHostTimer(d, &times[1]), "clGetHostTimer");
  else
    check(clGetDeviceAndHostTimer(d, &times[0], &times[1]), "clGetDeviceAndHostTimer");
  wire::ClBlob value(sizeof times);
  std::memcpy(value.data(), times, sizeof times);
  reply_data(r.call_id, value);
}

}  // namespace outboard::backends::opencl
