// Contexts and command queues. Both are made without waiting: the ICD checks what OpenCL requires
// at once (devices of one platform, known properties), the server makes its twin when the
// operation arrives, and a failure there shows at the next wait on the queue.
#include "shims/opencl/api.hpp"
#include "shims/opencl/registry.hpp"

namespace outboard::opencl {
namespace {

std::mutex contexts_mu;
std::unordered_map<ClId, cl_context>& contexts() {  // for the server's context error notices
  static auto* m = new std::unordered_map<ClId, cl_context>();
  return *m;
}

}  // namespace

void report_context_error(ClId id, const std::string& message) {
  std::lock_guard lk(contexts_mu);
  auto it = contexts().find(id);
  if (it == contexts().end() || !it->second->notify) return;
  auto fn = it->second->notify;
  void* data = it->second->notify_data;
  run_callback([fn, data, message] { fn(message.c_str(), nullptr, 0, data); });
}

cl_context CL_API_CALL Api::clCreateContext(const cl_context_properties* properties, cl_uint num_devices,
                                            const cl_device_id* devices,
                                            void(CL_CALLBACK* pfn_notify)(const char*, const void*, size_t, void*),
                                            void* user_data, cl_int* errcode_ret) {
  if (num_devices == 0 || !devices || (!pfn_notify && user_data)) return fail_with<cl_context>(CL_INVALID_VALUE, errcode_ret);
  cl_platform_id platform = nullptr;
  wire::ClWords props;
  std::vector<cl_context_properties> given;
  for (const cl_context_properties* p = properties; p && *p; p += 2) {
    given.push_back(p[0]);
    given.push_back(p[1]);
    if (p[0] == CL_CONTEXT_PLATFORM) {
      auto* pl = reinterpret_cast<cl_platform_id>(p[1]);
      if (!valid(pl) || platform) return fail_with<cl_context>(CL_INVALID_PLATFORM, errcode_ret);
      platform = pl;
      props.push_back(CL_CONTEXT_PLATFORM);
      props.push_back(pl->id);
    } else if (p[0] == CL_CONTEXT_INTEROP_USER_SYNC) {
      props.push_back(static_cast<uint64_t>(p[0]));
      props.push_back(static_cast<uint64_t>(p[1]));
    } else {
      return fail_with<cl_context>(CL_INVALID_PROPERTY, errcode_ret);  // window-system sharing is not served
    }
  }
  if (properties) given.push_back(0);
  wire::ClIds ids;
  for (cl_uint i = 0; i < num_devices; ++i) {
    if (!valid(devices[i])) return fail_with<cl_context>(CL_INVALID_DEVICE, errcode_ret);
    if (!platform) platform = devices[i]->platform;
    if (devices[i]->platform != platform) return fail_with<cl_context>(CL_INVALID_DEVICE, errcode_ret);
    ids.push_back(devices[i]->id);
  }
  auto* c = new _cl_context;
  c->platform = platform;
  c->id = new_id();
  c->devices.assign(devices, devices + num_devices);
  c->properties = std::move(given);
  c->notify = pfn_notify;
  c->notify_data = user_data;
  if (!platform->channel->post(wire::ClCreateContext{c->id, ids, props})) {
    delete c;
    return fail_with<cl_context>(CL_OUT_OF_RESOURCES, errcode_ret);
  }
  {
    std::lock_guard lk(contexts_mu);
    contexts()[c->id] = c;
  }
  for (cl_device_id d : c->devices) retain_device(d);  // a context keeps its sub-devices
  registry_add(c);
  return fail_with<cl_context>(CL_SUCCESS, errcode_ret, c);
}

cl_context CL_API_CALL Api::clCreateContextFromType(const cl_context_properties* properties, cl_device_type device_type,
                                                    void(CL_CALLBACK* pfn_notify)(const char*, const void*, size_t, void*),
                                                    void* user_data, cl_int* errcode_ret) {
  cl_platform_id platform = nullptr;
  for (const cl_context_properties* p = properties; p && *p; p += 2)
    if (p[0] == CL_CONTEXT_PLATFORM) platform = reinterpret_cast<cl_platform_id>(p[1]);
  if (!platform) {  // the ICD loader passes the platform; a direct caller may not
    if (platforms().empty()) return fail_with<cl_context>(CL_INVALID_PLATFORM, errcode_ret);
    platform = platforms().front();
  }
  if (!valid(platform)) return fail_with<cl_context>(CL_INVALID_PLATFORM, errcode_ret);
  cl_uint n = 0;
  cl_int rc = clGetDeviceIDs(platform, device_type, 0, nullptr, &n);
  if (rc != CL_SUCCESS) return fail_with<cl_context>(rc, errcode_ret);
  std::vector<cl_device_id> ds(n);
  clGetDeviceIDs(platform, device_type, n, ds.data(), nullptr);
  return clCreateContext(properties, n, ds.data(), pfn_notify, user_data, errcode_ret);
}

cl_int CL_API_CALL Api::clRetainContext(cl_context context) {
  if (!valid(context)) return CL_INVALID_CONTEXT;
  context->retain();
  return CL_SUCCESS;
}

void release_context(cl_context c) {
  if (!c->release()) return;
  registry_remove(c);
  {
    std::lock_guard lk(contexts_mu);
    contexts().erase(c->id);
  }
  c->channel().post(wire::ClRelease{c->id});
  for (cl_device_id d : c->devices) release_device(d);
  if (c->destructors.empty()) {
    delete c;
    return;
  }
  // Destructor callbacks in reverse order of registration (OpenCL 3.0, 4.4), then the handle goes.
  for (auto it = c->destructors.rbegin(); it != c->destructors.rend(); ++it) {
    auto fn = it->first;
    void* data = it->second;
    run_callback([fn, c, data] { fn(c, data); });
  }
  run_callback([c] { delete c; });
}

cl_int CL_API_CALL Api::clSetContextDestructorCallback(cl_context context,
                                                       void(CL_CALLBACK* pfn_notify)(cl_context, void*),
                                                       void* user_data) {
  if (!valid(context)) return CL_INVALID_CONTEXT;
  if (!pfn_notify) return CL_INVALID_VALUE;
  std::lock_guard lk(context->mu);
  context->destructors.push_back({pfn_notify, user_data});
  return CL_SUCCESS;
}

cl_int CL_API_CALL Api::clReleaseContext(cl_context context) {
  if (!valid(context)) return CL_INVALID_CONTEXT;
  release_context(context);
  return CL_SUCCESS;
}

cl_int CL_API_CALL Api::clGetContextInfo(cl_context context, cl_context_info param_name, size_t param_value_size,
                                         void* param_value, size_t* param_value_size_ret) {
  if (!valid(context)) return CL_INVALID_CONTEXT;
  auto n = param_value_size;
  auto p = param_value;
  auto r = param_value_size_ret;
  switch (param_name) {
    case CL_CONTEXT_REFERENCE_COUNT: return answer_value(context->refs.load(), n, p, r);
    case CL_CONTEXT_NUM_DEVICES: return answer_value(static_cast<cl_uint>(context->devices.size()), n, p, r);
    case CL_CONTEXT_DEVICES:
      return answer(context->devices.data(), context->devices.size() * sizeof(cl_device_id), n, p, r);
    case CL_CONTEXT_PROPERTIES:
      return answer(context->properties.data(), context->properties.size() * sizeof(cl_context_properties), n, p, r);
    default: return CL_INVALID_VALUE;
  }
}

// ---- command queues ----

namespace {

cl_command_queue make_queue(cl_context context, cl_device_id device, cl_command_queue_properties bits,
                            std::vector<cl_queue_properties> list, cl_int* errcode_ret) {
  if (!valid(context)) return fail_with<cl_command_queue>(CL_INVALID_CONTEXT, errcode_ret);
  if (!valid(device) || std::find(context->devices.begin(), context->devices.end(), device) == context->devices.end())
    return fail_with<cl_command_queue>(CL_INVALID_DEVICE, errcode_ret);
  const cl_command_queue_properties known = CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE | CL_QUEUE_PROFILING_ENABLE;
  if (bits & ~known) return fail_with<cl_command_queue>(CL_INVALID_VALUE, errcode_ret);
  const auto supported = device->value<cl_command_queue_properties>(CL_DEVICE_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE);
  if (bits & ~supported) return fail_with<cl_command_queue>(CL_INVALID_QUEUE_PROPERTIES, errcode_ret);
  auto* q = new _cl_command_queue;
  q->context = context;
  q->device = device;
  q->id = new_id();
  q->properties = bits;
  q->property_list = std::move(list);
  q->reads = std::make_shared<QueueReads>();
  if (!context->channel().post(wire::ClCreateQueue{q->id, context->id, device->id, {CL_QUEUE_PROPERTIES, bits}})) {
    delete q;
    return fail_with<cl_command_queue>(CL_OUT_OF_RESOURCES, errcode_ret);
  }
  context->retain();
  registry_add(q);
  return fail_with<cl_command_queue>(CL_SUCCESS, errcode_ret, q);
}

}  // namespace

cl_command_queue CL_API_CALL Api::clCreateCommandQueue(cl_context context, cl_device_id device,
                                                       cl_command_queue_properties properties, cl_int* errcode_ret) {
  return make_queue(context, device, properties, {}, errcode_ret);
}

cl_command_queue CL_API_CALL Api::clCreateCommandQueueWithProperties(cl_context context, cl_device_id device,
                                                                     const cl_queue_properties* properties,
                                                                     cl_int* errcode_ret) {
  cl_command_queue_properties bits = 0;
  std::vector<cl_queue_properties> list;
  for (const cl_queue_properties* p = properties; p && *p; p += 2) {
    list.push_back(p[0]);
    list.push_back(p[1]);
    if (p[0] == CL_QUEUE_PROPERTIES) bits = p[1];
    else return fail_with<cl_command_queue>(CL_INVALID_VALUE, errcode_ret);  // on-device queues and sizes: not served
  }
  if (properties) list.push_back(0);
  return make_queue(context, device, bits, std::move(list), errcode_ret);
}

// On-device queues are not served (make_queue refuses them), so there is never one to make the
// default; a device that cannot replace its default queue says so first (OpenCL 3.0).
cl_int CL_API_CALL Api::clSetDefaultDeviceCommandQueue(cl_context context, cl_device_id device,
                                                       cl_command_queue command_queue) {
  if (!valid(context)) return CL_INVALID_CONTEXT;
  if (!valid(device) || !has_device(context->devices, device)) return CL_INVALID_DEVICE;
  const auto caps = device->value<cl_device_device_enqueue_capabilities>(CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES, 0);
  if (!(caps & CL_DEVICE_QUEUE_REPLACEABLE_DEFAULT)) return CL_INVALID_OPERATION;
  (void)command_queue;
  return CL_INVALID_COMMAND_QUEUE;
}

cl_int CL_API_CALL Api::clRetainCommandQueue(cl_command_queue q) {
  if (!valid(q)) return CL_INVALID_COMMAND_QUEUE;
  q->retain();
  return CL_SUCCESS;
}

void release_queue(cl_command_queue q) {
  if (!q->release()) return;
  registry_remove(q);
  q->channel().post(wire::ClFlush{q->id});  // OpenCL: releasing a queue flushes it
  q->channel().post(wire::ClRelease{q->id});
  release_context(q->context);
  delete q;
}

cl_int CL_API_CALL Api::clReleaseCommandQueue(cl_command_queue q) {
  if (!valid(q)) return CL_INVALID_COMMAND_QUEUE;
  release_queue(q);
  return CL_SUCCESS;
}

cl_int CL_API_CALL Api::clGetCommandQueueInfo(cl_command_queue q, cl_command_queue_info param_name,
                                              size_t param_value_size, void* param_value, size_t* param_value_size_ret) {
  if (!valid(q)) return CL_INVALID_COMMAND_QUEUE;
  auto n = param_value_size;
  auto p = param_value;
  auto r = param_value_size_ret;
  switch (param_name) {
    case CL_QUEUE_CONTEXT: return answer_value(q->context, n, p, r);
    case CL_QUEUE_DEVICE: return answer_value(q->device, n, p, r);
    case CL_QUEUE_REFERENCE_COUNT: return answer_value(q->refs.load(), n, p, r);
    case CL_QUEUE_PROPERTIES: return answer_value(q->properties, n, p, r);
    case CL_QUEUE_PROPERTIES_ARRAY:
      return answer(q->property_list.data(), q->property_list.size() * sizeof(cl_queue_properties), n, p, r);
    // Host queues only (device queues are not served): what OpenCL 2.0 and later answer for one.
    case CL_QUEUE_SIZE: return CL_INVALID_COMMAND_QUEUE;
    case CL_QUEUE_DEVICE_DEFAULT: return answer_value(cl_command_queue{nullptr}, n, p, r);
    default: return CL_INVALID_VALUE;
  }
}

cl_int CL_API_CALL Api::clFlush(cl_command_queue q) {
  if (!valid(q)) return CL_INVALID_COMMAND_QUEUE;
  return q->channel().post(wire::ClFlush{q->id}) ? CL_SUCCESS : CL_OUT_OF_RESOURCES;
}

cl_int CL_API_CALL Api::clFinish(cl_command_queue q) {
  if (!valid(q)) return CL_INVALID_COMMAND_QUEUE;
  const auto events = pending_events_of(q->id);
  client::opencl::Answer a = q->channel().call(wire::ClFinish{q->id});
  if (a.status == client::opencl::kLost) return CL_OUT_OF_RESOURCES;
  if (a.status == CL_SUCCESS) wait_final(events);
  // Reads enqueued before the finish have their data here before it returns.
  uint64_t before;
  {
    std::lock_guard lk(q->reads->mu);
    before = q->reads->next;
  }
  wait_reads(*q->reads, before);
  if (cl_int late = take_failure(q->id); late != CL_SUCCESS) return CL_OUT_OF_RESOURCES;
  return a.status == CL_SUCCESS ? CL_SUCCESS : CL_OUT_OF_RESOURCES;
}

}  // namespace outboard::opencl
