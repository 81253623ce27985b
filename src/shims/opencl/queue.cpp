// Commands: each is checked here as OpenCL requires, given an event id when the program asked for
// an event, and streamed to the server without waiting. Kernel launches, markers and barriers.
#include <cstdio>
#include <string>

#include "shims/opencl/api.hpp"
#include "shims/opencl/registry.hpp"

namespace outboard::opencl {

cl_int begin_command(cl_command_queue q, cl_uint n, const cl_event* wait, cl_event* event, cl_command_type type,
                     Command& out) {
  if (!valid(q)) return CL_INVALID_COMMAND_QUEUE;
  out.cmd.queue = q->id;
  if (cl_int rc = wait_ids(q->context, n, wait, out.cmd.wait); rc != CL_SUCCESS) return rc;
  if (event) {
    out.event = new_event(q, type);
    out.cmd.event = out.event->state->id;
  }
  return CL_SUCCESS;
}

void command_lost(Command& c, cl_event* event) {
  if (!c.event) return;
  complete_event(c.event->state, client::opencl::kLost, {});
  if (event) *event = c.event;
}

cl_int wait_command(const std::shared_ptr<EventState>& state) { return wait_for({state}); }

cl_int send_command(cl_command_queue q, const wire::ClOp& op, Command& c, cl_event* event, client::opencl::Bytes data,
                    bool wait_sent) {
  if (!q->channel().post(op, data, wait_sent)) {
    command_lost(c, event);
    return CL_OUT_OF_RESOURCES;
  }
  if (event) *event = c.event;
  return CL_SUCCESS;
}

namespace {
// Whether the device speaks OpenCL 2.1 or later (its CL_DEVICE_VERSION, "OpenCL <major>.<minor>
// ..."), where an empty NDRange is a no-op that still orders the queue, not an error.
bool empty_ranges_allowed(cl_device_id d) {
  auto it = d->info.find(CL_DEVICE_VERSION);
  if (it == d->info.end()) return false;
  const std::string v(reinterpret_cast<const char*>(it->second.data()), it->second.size());
  int major = 0, minor = 0;
  if (std::sscanf(v.c_str(), "OpenCL %d.%d", &major, &minor) != 2) return false;
  return major > 2 || (major == 2 && minor >= 1);
}
}  // namespace

cl_int CL_API_CALL Api::clEnqueueNDRangeKernel(cl_command_queue q, cl_kernel kernel, cl_uint work_dim,
                                               const size_t* global_work_offset, const size_t* global_work_size,
                                               const size_t* local_work_size, cl_uint n, const cl_event* wait,
                                               cl_event* event) {
  if (!valid(q)) return CL_INVALID_COMMAND_QUEUE;
  if (!valid(kernel)) return CL_INVALID_KERNEL;
  if (kernel->program->context != q->context) return CL_INVALID_CONTEXT;
  if (work_dim < 1 || work_dim > 3) return CL_INVALID_WORK_DIMENSION;
  static constexpr size_t kNone[3] = {0, 0, 0};
  const bool empty_allowed = empty_ranges_allowed(q->device);
  if (!global_work_size) {
    if (!empty_allowed) return CL_INVALID_GLOBAL_WORK_SIZE;
    global_work_size = kNone;
  }
  wire::ClNDRange k;
  k.kernel = kernel->id;
  k.dims = work_dim;
  size_t group = 1;
  const auto max_items = q->device->info.count(CL_DEVICE_MAX_WORK_ITEM_SIZES)
                             ? q->device->info.at(CL_DEVICE_MAX_WORK_ITEM_SIZES)
                             : wire::ClBlob{};
  for (cl_uint i = 0; i < work_dim; ++i) {
    if (global_work_size[i] == 0 && !empty_allowed) return CL_INVALID_GLOBAL_WORK_SIZE;
    k.global[i] = global_work_size[i];
    k.offset[i] = global_work_offset ? global_work_offset[i] : 0;
    if (local_work_size) {
      if (local_work_size[i] == 0 || global_work_size[i] % local_work_size[i]) return CL_INVALID_WORK_GROUP_SIZE;
      size_t max_i = 0;
      if (max_items.size() >= (i + 1) * sizeof(size_t)) std::memcpy(&max_i, max_items.data() + i * sizeof(size_t), sizeof max_i);
      if (max_i && local_work_size[i] > max_i) return CL_INVALID_WORK_ITEM_SIZE;
      k.local[i] = local_work_size[i];
      group *= local_work_size[i];
    }
  }
  const size_t max_group = q->device->value<size_t>(CL_DEVICE_MAX_WORK_GROUP_SIZE, 0);
  if (local_work_size && max_group && group > max_group) return CL_INVALID_WORK_GROUP_SIZE;
  k.local_given = local_work_size != nullptr;
  {
    std::lock_guard lk(kernel->mu);
    for (const auto& a : kernel->args)
      if (a.kind == static_cast<uint8_t>(wire::ClArgKind::none)) return CL_INVALID_KERNEL_ARGS;
    k.args = kernel->args;
  }
  Command c;
  if (cl_int rc = begin_command(q, n, wait, event, CL_COMMAND_NDRANGE_KERNEL, c); rc != CL_SUCCESS) return rc;
  k.cmd = c.cmd;
  return send_command(q, k, c, event);
}

cl_int CL_API_CALL Api::clEnqueueTask(cl_command_queue q, cl_kernel kernel, cl_uint n, const cl_event* wait,
                                      cl_event* event) {
  const size_t one = 1;
  cl_int rc = clEnqueueNDRangeKernel(q, kernel, 1, nullptr, &one, &one, n, wait, event);
  if (rc == CL_SUCCESS && event && *event) (*event)->command = CL_COMMAND_TASK;
  return rc;
}

// Devices report no native-kernel capability (CL_DEVICE_EXECUTION_CAPABILITIES): the client's
// host code cannot run on the server.
cl_int CL_API_CALL Api::clEnqueueNativeKernel(cl_command_queue q, void(CL_CALLBACK*)(void*), void*, size_t, cl_uint,
                                              const cl_mem*, const void**, cl_uint, const cl_event*, cl_event*) {
  return valid(q) ? CL_INVALID_OPERATION : CL_INVALID_COMMAND_QUEUE;
}

namespace {

cl_int marker(cl_command_queue q, cl_uint n, const cl_event* wait, cl_event* event, bool barrier, cl_command_type type) {
  Command c;
  if (cl_int rc = begin_command(q, n, wait, event, type, c); rc != CL_SUCCESS) return rc;
  return send_command(q, wire::ClMarker{c.cmd, barrier}, c, event);
}

}  // namespace

cl_int CL_API_CALL Api::clEnqueueMarkerWithWaitList(cl_command_queue q, cl_uint n, const cl_event* wait, cl_event* event) {
  return marker(q, n, wait, event, false, CL_COMMAND_MARKER);
}
cl_int CL_API_CALL Api::clEnqueueBarrierWithWaitList(cl_command_queue q, cl_uint n, const cl_event* wait,
                                                     cl_event* event) {
  return marker(q, n, wait, event, true, CL_COMMAND_BARRIER);
}
cl_int CL_API_CALL Api::clEnqueueMarker(cl_command_queue q, cl_event* event) {
  if (!event) return CL_INVALID_VALUE;
  return marker(q, 0, nullptr, event, false, CL_COMMAND_MARKER);
}
cl_int CL_API_CALL Api::clEnqueueBarrier(cl_command_queue q) { return marker(q, 0, nullptr, nullptr, true, CL_COMMAND_BARRIER); }
cl_int CL_API_CALL Api::clEnqueueWaitForEvents(cl_command_queue q, cl_uint n, const cl_event* events) {
  if (n == 0 || !events) return CL_INVALID_VALUE;
  return marker(q, n, events, nullptr, true, CL_COMMAND_BARRIER);
}

}  // namespace outboard::opencl
