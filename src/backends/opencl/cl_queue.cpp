// Kernels and markers enqueued (the ICD's queue.cpp), and what every command begins with.
#include "backends/opencl/cl_session.hpp"

namespace outboard::backends::opencl {

cl_command_queue ClSession::begin_command(const wire::ClCommand& cmd, ClId& event) {
  event = cmd.event ? cmd.event : cmd.queue;
  if (cmd.event) check_new(cmd.event);
  const Object& queue = find(cmd.queue, {Kind::queue});
  enter_platform(queue.platform);
  cl_command_queue q = static_cast<cl_command_queue>(queue.handle);
  forget_last_kernel(q);
  return q;
}

void ClSession::forget_last_kernel(cl_command_queue q) {
  if (auto it = last_kernel_.find(q); it != last_kernel_.end()) {
    clReleaseEvent(it->second);
    last_kernel_.erase(it);
  }
}

void ClSession::forget_last_kernels() {
  for (auto& [q, e] : last_kernel_) clReleaseEvent(e);
  last_kernel_.clear();
}

void ClSession::handle(const wire::ClRequest& r, const wire::ClNDRange& k, transport::Buffer&, ClId&, ClId& event) {
  cl_command_queue q = begin_command(k.cmd, event);
  cl_kernel kernel = handle_of<cl_kernel>(k.kernel, Kind::kernel);
  if (k.dims < 1 || k.dims > 3) throw ClFail{CL_INVALID_WORK_DIMENSION, "1 to 3 dimensions"};
  for (const wire::ClArg& a : k.args) {
    cl_int rc;
    switch (static_cast<wire::ClArgKind>(a.kind)) {
      case wire::ClArgKind::value:
        rc = clSetKernelArg(kernel, a.index, a.value.size(), a.value.data());
        break;
      case wire::ClArgKind::mem: {
        cl_mem m = a.object ? static_cast<cl_mem>(find(a.object, {Kind::mem, Kind::image, Kind::pipe}).handle) : nullptr;
        rc = clSetKernelArg(kernel, a.index, sizeof m, &m);
        break;
      }
      case wire::ClArgKind::local:
        rc = clSetKernelArg(kernel, a.index, a.local_bytes, nullptr);
        break;
      case wire::ClArgKind::sampler: {
        cl_sampler s = handle_of<cl_sampler>(a.object, Kind::sampler);
        rc = clSetKernelArg(kernel, a.index, sizeof s, &s);
        break;
      }
      case wire::ClArgKind::none:
        continue;  // not set by the program: the enqueue reports CL_INVALID_KERNEL_ARGS
      default:
        throw ClFail{CL_INVALID_VALUE, "unknown argument kind"};
    }
    if (rc != CL_SUCCESS) throw ClFail{rc, "argument " + std::to_string(a.index) + ": " + cl_error_name(rc)};
  }
  auto wait = wait_list(k.cmd.wait);
  cl_event e = nullptr;
  const size_t* off = reinterpret_cast<const size_t*>(k.offset.data());
  const size_t* glob = reinterpret_cast<const size_t*>(k.global.data());
  const size_t* loc = reinterpret_cast<const size_t*>(k.local.data());
  // A native event only where something needs it (the client named one, or waits): asking for
  // one costs NVIDIA's enqueue up to 3 us, and its completion is seen later than a barrier's
  // behind it (bench/probes/cl_wait_probe.c). A finish then waits for a barrier of its own:
  // side by side on the H200 host, a kernel + clFinish loop went 26.6-28.5 -> 23.9-27.7 us a
  // round trip, 20,000 launches and one finish 1.19-1.33x -> 1.08x NVIDIA's own time.
  const bool want_event = k.cmd.event || r.call_id;
  check(clEnqueueNDRangeKernel(q, kernel, k.dims, off, glob, k.local_given ? loc : nullptr, n(wait), p(wait),
                               want_event ? &e : nullptr),
        "clEnqueueNDRangeKernel");
  counters_.kernels++;
  if (!e) return;
  clRetainEvent(e);
  last_kernel_[q] = e;  // begin_command forgot the one before
  answer_when_done(e, r, k.cmd);
}

void ClSession::handle(const wire::ClRequest& r, const wire::ClMarker& m, transport::Buffer&, ClId&, ClId& event) {
  cl_command_queue q = begin_command(m.cmd, event);
  auto wait = wait_list(m.cmd.wait);
  cl_event e = nullptr;
  if (m.barrier)
    check(clEnqueueBarrierWithWaitList(q, n(wait), p(wait), &e), "clEnqueueBarrierWithWaitList");
  else
    check(clEnqueueMarkerWithWaitList(q, n(wait), p(wait), &e), "clEnqueueMarkerWithWaitList");
  answer_when_done(e, r, m.cmd);
}

}  // namespace outboard::backends::opencl
