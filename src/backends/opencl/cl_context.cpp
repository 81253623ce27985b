// Contexts and queues: made, finished, flushed (the ICD's context.cpp).
#include "backends/opencl/cl_session.hpp"
#include "common/clock.hpp"

namespace outboard::backends::opencl {

namespace {

void CL_CALLBACK context_notify(const char* errinfo, const void*, size_t, void* arg) {
  auto* c = static_cast<Callback*>(arg);
  wire::ClNotice n;
  n.kind = static_cast<uint8_t>(wire::ClNoticeKind::context_error);
  n.object = c->event;  // the context's id
  n.message = errinfo ? std::string(errinfo).substr(0, 1024) : std::string();
  c->out->notice(std::move(n));
}

}  // namespace

void ClSession::handle(const wire::ClRequest&, const wire::ClCreateContext& c, transport::Buffer&, ClId& created,
                       ClId&) {
  created = c.id;
  check_new(c.id);
  if (c.devices.empty()) throw ClFail{CL_INVALID_VALUE, "a context needs devices"};
  if (c.properties.size() % 2) throw ClFail{CL_INVALID_PROPERTY, "properties come in pairs"};
  std::vector<cl_context_properties> props;
  for (size_t i = 0; i < c.properties.size(); i += 2) {
    const uint64_t name = c.properties[i], value = c.properties[i + 1];
    if (name == CL_CONTEXT_PLATFORM) {
      if (value == 0 || value > natives_.platforms.size()) throw ClFail{CL_INVALID_PLATFORM, "no such platform"};
      props.push_back(CL_CONTEXT_PLATFORM);
      props.push_back(reinterpret_cast<cl_context_properties>(natives_.platforms[value - 1]));
    } else if (name == CL_CONTEXT_INTEROP_USER_SYNC) {
      props.push_back(CL_CONTEXT_INTEROP_USER_SYNC);
      props.push_back(static_cast<cl_context_properties>(value));
    } else {
      throw ClFail{CL_INVALID_PROPERTY, "context property " + std::to_string(name) + " is not served"};
    }
  }
  props.push_back(0);
  std::vector<cl_device_id> ds = devices(c.devices);
  const ClId platform = enter_platform(platform_of(c.devices[0]));
  // Called for the context's whole life: kept until the session ends.
  auto persistent = std::make_unique<Callback>();
  persistent->out = out_;
  persistent->counters = &counters_;
  persistent->event = c.id;
  persistent->one_shot = false;
  Callback* cb = persistent.get();
  callbacks_.push_back(std::move(persistent));
  cl_int rc = CL_SUCCESS;
  cl_context ctx = clCreateContext(props.data(), static_cast<cl_uint>(ds.size()), ds.data(), context_notify, cb, &rc);
  check(rc, "clCreateContext");
  Object made{Kind::context, ctx};
  made.platform = platform;
  insert(c.id, made);
}

void ClSession::handle(const wire::ClRequest&, const wire::ClCreateQueue& c, transport::Buffer&, ClId& created, ClId&) {
  created = c.id;
  check_new(c.id);
  const Object& context = find(c.context, {Kind::context});
  cl_context ctx = static_cast<cl_context>(context.handle);
  const ClId platform = enter_platform(context.platform);
  if (c.properties.size() % 2) throw ClFail{CL_INVALID_VALUE, "properties come in pairs"};
  std::vector<cl_queue_properties> props(c.properties.begin(), c.properties.end());
  props.push_back(0);
  cl_int rc = CL_SUCCESS;
  cl_command_queue q = clCreateCommandQueueWithProperties(ctx, device(c.device), props.data(), &rc);
  if (rc == CL_INVALID_OPERATION || rc == CL_INVALID_VALUE) {  // a 1.2 platform: the older call
    cl_command_queue_properties bits = 0;
    for (size_t i = 0; i + 1 < c.properties.size(); i += 2)
      if (c.properties[i] == CL_QUEUE_PROPERTIES) bits = c.properties[i + 1];
    q = clCreateCommandQueue(ctx, device(c.device), bits, &rc);
  }
  check(rc, "clCreateCommandQueue");
  Object made{Kind::queue, q, 0, 0, c.context};
  made.platform = platform;
  insert(c.id, made);
}

void ClSession::handle(const wire::ClRequest& r, const wire::ClFinish& f, transport::Buffer&, ClId&, ClId&) {
  if (!r.call_id) throw ClFail{CL_INVALID_VALUE, "a finish is answered"};
  cl_command_queue q = handle_of<cl_command_queue>(f.queue, Kind::queue);
  cl_event e = nullptr;
  cl_command_queue_properties props = 0;
  if (auto it = last_kernel_.find(q);
      it != last_kernel_.end() &&
      clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES, sizeof props, &props, nullptr) == CL_SUCCESS &&
      !(props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE)) {
    e = it->second;
    last_kernel_.erase(it);  // its reference is ours now
  } else {
    // A barrier, not clFinish: this thread must stay free for the session's next operations (a
    // user event the queue waits for is set by one of them).
    check(clEnqueueBarrierWithWaitList(q, 0, nullptr, &e), "clFinish");
  }
  const bool tracing = stage_trace::enabled();
  const uint64_t t0 = tracing ? now_ns() : 0;
  Callback cb;
  cb.call_id = r.call_id;
  register_done(e, callback(std::move(cb)), /*watch=*/true);
  const uint64_t t1 = tracing ? now_ns() : 0;
  clReleaseEvent(e);
  const uint64_t t2 = tracing ? now_ns() : 0;
  // Once watched, as a read's. Left out on NVIDIA's OpenCL (H200 host), a kernel + clFinish loop
  // took 24.9 us a round trip against 23.0-24.7 with it: the flush costs this thread 1.2-1.3 us but
  // not the answer (bench/results/h200/opencl-launch, run 6).
  clFlush(q);
  if (tracing) {
    const uint64_t t3 = now_ns();
    stage_trace::record_part("finish.watch", t1 - t0);
    stage_trace::record_part("finish.release", t2 - t1);
    stage_trace::record_part("finish.flush", t3 - t2);
  }
}

void ClSession::handle(const wire::ClRequest& r, const wire::ClFlush& f, transport::Buffer&, ClId&, ClId&) {
  check(clFlush(handle_of<cl_command_queue>(f.queue, Kind::queue)), "clFlush");
  if (r.call_id) out_->reply(r.call_id, CL_SUCCESS, {});
}

}  // namespace outboard::backends::opencl
