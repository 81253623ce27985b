// A session's native OpenCL objects: a table from the ids the client picked to native handles,
// and the operations on them. Every id, size and offset is checked against the table before the
// native platform sees it; commands are enqueued without blocking (their completion answers from
// the implementation's callback thread), so one session's thread keeps the device busy without
// waiting for its own commands.
#include <cstring>
#include <limits>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "backends/opencl/direct_transfer.hpp"
#include "backends/opencl/event_waiter.hpp"
#include "backends/opencl/native.hpp"
#include "backends/opencl/pinned_reads.hpp"
#include "backends/opencl/stage_trace.hpp"
#include "common/clock.hpp"
#include "common/error.hpp"
#include <spdlog/spdlog.h>

namespace outboard::backends {
namespace {

static_assert(sizeof(size_t) == sizeof(uint64_t), "origins and regions travel as 64-bit sizes");

using server::ClOutput;
using wire::ClId;

// A failed operation: the CL error the client sees, and why.
struct ClFail {
  cl_int code;
  std::string why;
};

void check(cl_int code, const char* what) {
  if (code != CL_SUCCESS) throw ClFail{code, std::string(what) + " failed: " + cl_error_name(code)};
}

enum class Kind : uint8_t { context, queue, mem, image, sampler, program, kernel, event, user_event, device, pipe };

const char* kind_name(Kind k) {
  static constexpr const char* kNames[] = {"context", "command queue", "buffer", "image", "sampler", "program",
                                           "kernel",  "event",         "user event", "sub-device", "pipe"};
  return kNames[static_cast<int>(k)];
}

cl_int invalid_code(Kind k) {
  switch (k) {
    case Kind::context: return CL_INVALID_CONTEXT;
    case Kind::queue: return CL_INVALID_COMMAND_QUEUE;
    case Kind::mem:
    case Kind::image:
    case Kind::pipe: return CL_INVALID_MEM_OBJECT;
    case Kind::device: return CL_INVALID_DEVICE;
    case Kind::sampler: return CL_INVALID_SAMPLER;
    case Kind::program: return CL_INVALID_PROGRAM;
    case Kind::kernel: return CL_INVALID_KERNEL;
    case Kind::event:
    case Kind::user_event: return CL_INVALID_EVENT;
  }
  return CL_INVALID_VALUE;
}

struct Object {
  Kind kind;
  void* handle;          // the native object (one reference held by the table)
  uint64_t bytes = 0;    // buffers: size; images: size of the whole image
  size_t pixel = 0;      // images: bytes per pixel
  ClId context = 0;
  bool user_status_set = false;  // user events
  bool view = false;             // a sub-buffer or an image of a buffer: its bytes are its parent's
  std::array<uint64_t, 3> extent{};  // images: the largest region, in pixels (OpenCL's region convention)
  ClId platform = 0;             // sub-devices: their platform's id
  ClId backing = 0;              // a 1D buffer image: its buffer
  uint32_t images = 0;           // buffers: the 1D buffer images made of it and still held
};

// What a native callback needs; kept until the session ends (a callback may come late).
struct Callback {
  std::shared_ptr<ClOutput> out;
  SharedCounters* counters = nullptr;
  uint64_t call_id = 0;     // answer this call when the command completes (0: none)
  ClId event = 0;           // report this event's status (0: none)
  std::shared_ptr<transport::Buffer> data;  // a read's result, or a write's source kept alive
  uint64_t bytes = 0;
  bool read = false;
  bool pinned = false;  // a read into page-locked memory (pinned_reads.hpp): no host copy to wait for
  const char* op = "";  // the operation's name and stages, when traced (stage_trace.hpp)
  StageTimes stages;
  // Callbacks not yet run, of the session (its end waits for them); one-shot ones free themselves.
  std::shared_ptr<std::atomic<int64_t>> outstanding;
  bool one_shot = true;
};

std::array<uint64_t, 4> profile_of(cl_event e) {
  std::array<uint64_t, 4> p{};
  const cl_profiling_info names[] = {CL_PROFILING_COMMAND_QUEUED, CL_PROFILING_COMMAND_SUBMIT,
                                     CL_PROFILING_COMMAND_START, CL_PROFILING_COMMAND_END};
  for (int i = 0; i < 4; ++i) {
    cl_ulong t = 0;
    if (clGetEventProfilingInfo(e, names[i], sizeof t, &t, nullptr) != CL_SUCCESS) return {};
    p[i] = t;
  }
  return p;
}

void CL_CALLBACK command_done(cl_event e, cl_int status, void* arg) {
  auto* c = static_cast<Callback*>(arg);
  if (c->stages.arrived_ns) stage_trace::record(c->op, c->stages);
  if (status < 0) c->counters->failures++;
  if (c->call_id) {
    if (status < 0) {
      c->out->reply(c->call_id, status, {});
    } else if (c->read) {
      c->counters->bytes_read += c->bytes;
      c->out->reply(c->call_id, CL_SUCCESS, {}, c->data, c->bytes);
    } else {
      c->out->reply(c->call_id, CL_SUCCESS, {});
    }
  }
  if (c->event) {
    wire::ClNotice n;
    n.kind = static_cast<uint8_t>(wire::ClNoticeKind::event_status);
    n.object = c->event;
    n.status = status < 0 ? status : CL_COMPLETE;
    if (status >= 0) n.profile = profile_of(e);
    c->out->notice(std::move(n));
  }
  c->data.reset();  // a write's source may go now
  auto outstanding = std::move(c->outstanding);
  if (c->one_shot) delete c;
  if (outstanding) --*outstanding;
}

// A completion reported by whichever comes first: the native callback or the event waiter
// (event_waiter.hpp). Each path holds its own Shot; the Callback goes with the first to fire
// (where the waiter polls, it is the only path for what it watches).
struct Shot {
  Callback* callback;
  std::shared_ptr<std::atomic<bool>> fired;
};
void fire(cl_event e, cl_int status, const Shot& s) {
  if (!s.fired->exchange(true)) command_done(e, status, s.callback);
}
void CL_CALLBACK shot_done(cl_event e, cl_int status, void* arg) {
  std::unique_ptr<Shot> s(static_cast<Shot*>(arg));
  fire(e, status, *s);
}

void CL_CALLBACK context_notify(const char* errinfo, const void*, size_t, void* arg) {
  auto* c = static_cast<Callback*>(arg);
  wire::ClNotice n;
  n.kind = static_cast<uint8_t>(wire::ClNoticeKind::context_error);
  n.object = c->event;  // the context's id
  n.message = errinfo ? std::string(errinfo).substr(0, 1024) : std::string();
  c->out->notice(std::move(n));
}

// Adds without wrapping, or fails with CL_INVALID_VALUE.
uint64_t add(uint64_t a, uint64_t b) {
  if (a > std::numeric_limits<uint64_t>::max() - b) throw ClFail{CL_INVALID_VALUE, "offset overflows"};
  return a + b;
}
uint64_t mul(uint64_t a, uint64_t b) {
  if (b != 0 && a > std::numeric_limits<uint64_t>::max() / b) throw ClFail{CL_INVALID_VALUE, "size overflows"};
  return a * b;
}

class Session final : public server::ClSessionObjects {
 public:
  Session(const NativePlatforms& n, std::shared_ptr<ClOutput> out, const server::ClLimits& limits,
          std::shared_ptr<server::ClClientMemory> memory, SharedCounters& counters)
      : natives_(n),
        out_(std::move(out)),
        memory_(std::move(memory)),
        limits_(limits),
        counters_(counters),
        staging_(std::make_shared<StagingBudget>(limits.direct_staging_bytes, counters.staging)),
        waiter_(limits.event_polling == "poll"   ? EventWaiter::Mode::polling
                : limits.event_polling == "wait" ? EventWaiter::Mode::blocking
                                                 : EventWaiter::automatic(),
                [this] { return commands_pending(); }) {}

  ~Session() override {
    // Nothing may wait forever: user events never set fail their commands, then every queue drains.
    for (auto& [id, o] : objects_)
      if (o.kind == Kind::user_event && !o.user_status_set) clSetUserEventStatus(static_cast<cl_event>(o.handle), -1);
    for (auto& [id, o] : objects_)
      if (o.kind == Kind::queue) clFinish(static_cast<cl_command_queue>(o.handle));
    for (auto& [q, m] : movers_) {
      clFinish(m);
      clReleaseCommandQueue(m);
    }
    movers_.clear();
    pinned_.clear();
    forget_last_kernels();
    // Dependants first: what a kernel or a command holds keeps its native parents alive anyway.
    for (Kind k : {Kind::event, Kind::user_event, Kind::kernel, Kind::program, Kind::sampler, Kind::image, Kind::pipe,
                   Kind::mem, Kind::queue, Kind::context, Kind::device})
      for (auto& [id, o] : objects_)
        if (o.kind == k) release_native(o);
    objects_.clear();
    // Completion callbacks may still be on their way from the implementation's threads.
    for (int i = 0; i < 5000 && *outstanding_ > 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (*outstanding_ > 0) spdlog::warn("opencl.callbacks_missing count={}", outstanding_->load());
    if (stage_trace::enabled()) stage_trace::report();
  }

  uint64_t objects() const override { return objects_.size(); }
  bool commands_pending() const override { return outstanding_->load(std::memory_order_relaxed) > 0; }

  void run(const wire::ClRequest& r, transport::Buffer payload, uint64_t arrived_ns) override {
    counters_.operations++;
    traced_ = {};
    const bool tracing = stage_trace::enabled();
    const uint64_t started = tracing ? now_ns() : 0;
    if (r.call_id && tracing) traced_ = {arrived_ns, started, 0}, traced_op_ = wire::op_name(r.op);
    ClId created = 0, event = 0;
    try {
      std::visit([&](const auto& op) { handle(r, op, payload, created, event); }, r.op);
    } catch (const ClFail& f) {
      counters_.failures++;
      spdlog::debug("opencl.failed op={} error=\"{}\"", wire::op_name(r.op), f.why);
      if (r.call_id) {
        out_->reply(r.call_id, f.code, {});
      } else {  // nobody waits: the client learns it as the created object's or the event's failure
        wire::ClNotice n;
        n.kind = static_cast<uint8_t>(wire::ClNoticeKind::failed);
        n.object = created ? created : event;
        n.status = f.code;
        n.message = std::string(wire::op_name(r.op)) + ": " + f.why;
        out_->notice(std::move(n));
      }
    }
    if (tracing) stage_trace::record_run(wire::op_name(r.op), arrived_ns, started);
  }

 private:
  // ---- the table ----
  Object& find(ClId id, std::initializer_list<Kind> kinds) {
    auto it = objects_.find(id);
    Kind first = *kinds.begin();
    if (it == objects_.end()) throw ClFail{invalid_code(first), "no " + std::string(kind_name(first)) + " " + std::to_string(id)};
    for (Kind k : kinds)
      if (it->second.kind == k) return it->second;
    throw ClFail{invalid_code(first), std::to_string(id) + " is a " + kind_name(it->second.kind) + ", not a " + kind_name(first)};
  }
  template <class T>
  T handle_of(ClId id, Kind k) {
    return static_cast<T>(find(id, {k}).handle);
  }
  void check_new(ClId id) {
    if (id < wire::kFirstClientId) throw ClFail{CL_INVALID_VALUE, "object ids below 2^32 are the server's"};
    if (objects_.count(id)) throw ClFail{CL_INVALID_VALUE, "object id " + std::to_string(id) + " is in use"};
    if (objects_.size() >= limits_.max_objects)
      throw ClFail{CL_OUT_OF_RESOURCES, "the session holds its limit of " + std::to_string(limits_.max_objects) + " objects"};
  }
  void check_memory(uint64_t bytes) {
    if (limits_.max_memory_bytes && add(memory_bytes_, bytes) > limits_.max_memory_bytes)
      throw ClFail{CL_MEM_OBJECT_ALLOCATION_FAILURE, "over the session's memory limit of " +
                                                         std::to_string(limits_.max_memory_bytes) + " bytes"};
  }
  static bool holds_memory(const Object& o) {
    return (o.kind == Kind::mem || o.kind == Kind::image || o.kind == Kind::pipe) && !o.view;
  }
  void insert(ClId id, Object o) {
    if (holds_memory(o)) memory_bytes_ += o.bytes;
    objects_.emplace(id, o);
  }
  void release_native(Object& o) {
    switch (o.kind) {
      case Kind::context: clReleaseContext(static_cast<cl_context>(o.handle)); break;
      case Kind::queue: clReleaseCommandQueue(static_cast<cl_command_queue>(o.handle)); break;
      case Kind::mem:
      case Kind::image:
      case Kind::pipe: clReleaseMemObject(static_cast<cl_mem>(o.handle)); break;
      case Kind::device: clReleaseDevice(static_cast<cl_device_id>(o.handle)); break;
      case Kind::sampler: clReleaseSampler(static_cast<cl_sampler>(o.handle)); break;
      case Kind::program: clReleaseProgram(static_cast<cl_program>(o.handle)); break;
      case Kind::kernel: clReleaseKernel(static_cast<cl_kernel>(o.handle)); break;
      case Kind::event:
      case Kind::user_event: clReleaseEvent(static_cast<cl_event>(o.handle)); break;
    }
  }
  // A root device (the server's ids) or one of the session's sub-devices.
  cl_device_id device(ClId id) {
    if (auto it = natives_.devices.find(id); it != natives_.devices.end()) return it->second;
    if (auto it = objects_.find(id); it != objects_.end() && it->second.kind == Kind::device)
      return static_cast<cl_device_id>(it->second.handle);
    throw ClFail{CL_INVALID_DEVICE, "no device " + std::to_string(id)};
  }
  // The platform id of a device that device() accepted.
  ClId platform_of(ClId device_id) {
    if (auto it = objects_.find(device_id); it != objects_.end() && it->second.kind == Kind::device)
      return it->second.platform;
    cl_platform_id p = natives_.device_platform.at(device_id);
    for (size_t i = 0; i < natives_.platforms.size(); ++i)
      if (natives_.platforms[i] == p) return i + 1;
    return 0;
  }
  std::vector<cl_device_id> devices(const wire::ClIds& ids) {
    std::vector<cl_device_id> out;
    for (ClId id : ids) out.push_back(device(id));
    return out;
  }
  std::vector<cl_event> wait_list(const wire::ClIds& ids) {
    std::vector<cl_event> out;
    for (ClId id : ids) {
      auto it = objects_.find(id);
      if (it == objects_.end() || (it->second.kind != Kind::event && it->second.kind != Kind::user_event))
        throw ClFail{CL_INVALID_EVENT_WAIT_LIST, "wait list names no event " + std::to_string(id)};
      out.push_back(static_cast<cl_event>(it->second.handle));
    }
    return out;
  }
  // A one-shot callback for a command's completion: it frees itself when it has run. Register it
  // with register_done (which counts it, so the session's end waits for it).
  Callback* callback(Callback c) {
    c.out = out_;
    c.counters = &counters_;
    c.outstanding = outstanding_;
    if (traced_.arrived_ns && c.call_id) {
      c.stages = traced_;
      c.stages.enqueued_ns = now_ns();
      c.op = traced_op_;
    }
    return new Callback(std::move(c));
  }
  // `watch`: the client waits for this command: the event waiter reports it too, sooner. Where
  // the waiter polls, it reports the command alone (a native callback would delay the event:
  // event_waiter.hpp), unless it copies into or out of host memory.
  void register_done(cl_event e, Callback* c, bool watch = false) {
    ++*outstanding_;
    Shot shot{c, std::make_shared<std::atomic<bool>>(false)};
    const bool host_copy = (c->read || c->data) && !c->pinned;
    if (waiter_.reports_alone(host_copy)) {
      waiter_.watch(e, [e, shot](cl_int status) { fire(e, status, shot); });
      return;
    }
    auto native = std::make_unique<Shot>(shot);
    cl_int rc = clSetEventCallback(e, CL_COMPLETE, shot_done, native.get());
    if (rc != CL_SUCCESS) {
      spdlog::warn("opencl.callback_failed error={}", cl_error_name(rc));
      fire(e, rc, shot);
      return;
    }
    native.release();  // shot_done frees it
    if (watch) waiter_.watch(e, [e, shot](cl_int status) { fire(e, status, shot); }, host_copy);
  }
  // After a command is enqueued with `e`: its event joins the table (if the client named one) and
  // its completion is reported as `c` says.
  void track(cl_event e, const wire::ClCommand& cmd, Callback c) {
    if (cmd.event) {
      insert(cmd.event, Object{Kind::event, e});
      c.event = cmd.event;
    }
    const bool waited_for = c.call_id || c.event;
    if (c.call_id || c.event || c.data) register_done(e, callback(std::move(c)), waited_for);
    if (!cmd.event) clReleaseEvent(e);
  }
  // A command's start: a failure from here on is reported on its event, else its queue; its
  // event id must be new. Returns its queue.
  cl_command_queue begin_command(const wire::ClCommand& cmd, ClId& event) {
    event = cmd.event ? cmd.event : cmd.queue;
    if (cmd.event) check_new(cmd.event);
    cl_command_queue q = handle_of<cl_command_queue>(cmd.queue, Kind::queue);
    forget_last_kernel(q);
    return q;
  }
  // The event of the kernel last enqueued into q, while nothing else has been since: in an
  // in-order queue a finish waits for it instead of a barrier of its own (which cost the round
  // trip of a kernel and clFinish 2-3 us more on the H200 host: stage_trace.hpp).
  void forget_last_kernel(cl_command_queue q) {
    if (auto it = last_kernel_.find(q); it != last_kernel_.end()) {
      clReleaseEvent(it->second);
      last_kernel_.erase(it);
    }
  }
  void forget_last_kernels() {
    for (auto& [q, e] : last_kernel_) clReleaseEvent(e);
    last_kernel_.clear();
  }
  // The command's completion answers the request (if asked) and reports its event (if named).
  void answer_when_done(cl_event e, const wire::ClRequest& r, const wire::ClCommand& cmd) {
    Callback cb;
    cb.call_id = r.call_id;
    track(e, cmd, std::move(cb));
  }

  // ---- operations ----
  void handle(const wire::ClRequest& r, const wire::ClGetPlatforms&, transport::Buffer&, ClId&, ClId&) {
    auto data = std::make_shared<transport::Buffer>(transport::Buffer::allocate(natives_.snapshot.size()));
    std::memcpy(data->data(), natives_.snapshot.data(), natives_.snapshot.size());
    out_->reply(r.call_id, CL_SUCCESS, {}, data, natives_.snapshot.size());
  }

  void handle(const wire::ClRequest& r, const wire::ClGetInfo& q, transport::Buffer&, ClId&, ClId&) {
    if (!r.call_id) throw ClFail{CL_INVALID_VALUE, "an info query must be answered"};
    wire::ClBlob value;
    auto ask = [&](auto fn) {
      size_t size = 0;
      check(fn(0, nullptr, &size), "the info query");
      if (size > (uint64_t(1) << 30)) throw ClFail{CL_OUT_OF_RESOURCES, "info value too large"};
      value.resize(size);
      check(fn(size, value.data(), nullptr), "the info query");
    };
    switch (static_cast<wire::ClInfo>(q.what)) {
      case wire::ClInfo::program: {
        cl_program p = handle_of<cl_program>(q.object, Kind::program);
        if (q.param == CL_PROGRAM_CONTEXT || q.param == CL_PROGRAM_DEVICES)
          throw ClFail{CL_INVALID_VALUE, "handle-valued program info is the client's"};
        if (q.param == CL_PROGRAM_BINARIES) {
          value = program_binaries(p);
          break;
        }
        ask([&](size_t s, void* v, size_t* rs) { return clGetProgramInfo(p, q.param, s, v, rs); });
        break;
      }
      case wire::ClInfo::program_build: {
        cl_program p = handle_of<cl_program>(q.object, Kind::program);
        cl_device_id d = device(q.device);
        ask([&](size_t s, void* v, size_t* rs) { return clGetProgramBuildInfo(p, d, q.param, s, v, rs); });
        break;
      }
      case wire::ClInfo::kernel: {
        cl_kernel k = handle_of<cl_kernel>(q.object, Kind::kernel);
        if (q.param == CL_KERNEL_CONTEXT || q.param == CL_KERNEL_PROGRAM)
          throw ClFail{CL_INVALID_VALUE, "handle-valued kernel info is the client's"};
        ask([&](size_t s, void* v, size_t* rs) { return clGetKernelInfo(k, q.param, s, v, rs); });
        break;
      }
      case wire::ClInfo::kernel_work_group: {
        cl_kernel k = handle_of<cl_kernel>(q.object, Kind::kernel);
        cl_device_id d = q.device ? device(q.device) : nullptr;
        ask([&](size_t s, void* v, size_t* rs) { return clGetKernelWorkGroupInfo(k, d, q.param, s, v, rs); });
        break;
      }
      case wire::ClInfo::kernel_arg: {
        cl_kernel k = handle_of<cl_kernel>(q.object, Kind::kernel);
        ask([&](size_t s, void* v, size_t* rs) { return clGetKernelArgInfo(k, q.index, q.param, s, v, rs); });
        break;
      }
      default:
        throw ClFail{CL_INVALID_VALUE, "unknown info family"};
    }
    reply_data(r.call_id, value);
  }

  void handle(const wire::ClRequest&, const wire::ClCreateContext& c, transport::Buffer&, ClId& created, ClId&) {
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
    insert(c.id, Object{Kind::context, ctx});
  }

  void handle(const wire::ClRequest&, const wire::ClCreateQueue& c, transport::Buffer&, ClId& created, ClId&) {
    created = c.id;
    check_new(c.id);
    cl_context ctx = handle_of<cl_context>(c.context, Kind::context);
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
    insert(c.id, Object{Kind::queue, q});
  }

  void handle(const wire::ClRequest& r, const wire::ClCreateBuffer& c, transport::Buffer& payload, ClId& created,
              ClId&) {
    created = c.id;
    check_new(c.id);
    cl_context ctx = handle_of<cl_context>(c.context, Kind::context);
    check_memory(c.size);
    cl_mem_flags flags = c.flags & ~cl_mem_flags(CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR);
    void* host = nullptr;
    if (c.flags & (CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR)) {
      if (r.payload_bytes != c.size || payload.size() != c.size)
        throw ClFail{CL_INVALID_HOST_PTR, "initial contents must be the buffer's size"};
      flags |= CL_MEM_COPY_HOST_PTR;
      host = payload.data();
    } else if (r.payload_bytes) {
      throw ClFail{CL_INVALID_VALUE, "contents without CL_MEM_COPY_HOST_PTR"};
    }
    cl_int rc = CL_SUCCESS;
    cl_mem m = clCreateBuffer(ctx, flags, c.size, host, &rc);
    check(rc, "clCreateBuffer");
    counters_.bytes_written += host ? c.size : 0;
    insert(c.id, Object{Kind::mem, m, c.size, 0, c.context});
  }

  void handle(const wire::ClRequest&, const wire::ClCreateSubBuffer& c, transport::Buffer&, ClId& created, ClId&) {
    created = c.id;
    check_new(c.id);
    Object& parent = find(c.parent, {Kind::mem});
    if (add(c.origin, c.size) > parent.bytes) throw ClFail{CL_INVALID_VALUE, "sub-buffer beyond its buffer"};
    cl_buffer_region region{c.origin, c.size};
    cl_int rc = CL_SUCCESS;
    cl_mem m = clCreateSubBuffer(static_cast<cl_mem>(parent.handle), c.flags, CL_BUFFER_CREATE_TYPE_REGION, &region, &rc);
    check(rc, "clCreateSubBuffer");
    Object view{Kind::mem, m, c.size, 0, parent.context};
    view.view = true;
    insert(c.id, view);
  }

  void handle(const wire::ClRequest& r, const wire::ClCreateImage& c, transport::Buffer& payload, ClId& created, ClId&) {
    created = c.id;
    check_new(c.id);
    cl_context ctx = handle_of<cl_context>(c.context, Kind::context);
    cl_image_format format{c.channel_order, c.channel_type};
    const size_t pixel = pixel_bytes(format);
    if (pixel == 0) throw ClFail{CL_INVALID_IMAGE_FORMAT_DESCRIPTOR, "unknown image format"};
    const std::array<uint64_t, 3> extent = image_extent(c);
    cl_image_desc desc{};
    desc.image_type = c.type;
    desc.image_width = c.width;
    desc.image_height = c.height;
    desc.image_depth = c.depth;
    desc.image_array_size = c.array_size;
    const uint64_t bytes = mul(mul(mul(extent[0], pixel), extent[1]), extent[2]);
    if (c.type == CL_MEM_OBJECT_IMAGE1D_BUFFER) {
      if (!c.buffer) throw ClFail{CL_INVALID_IMAGE_DESCRIPTOR, "a 1D buffer image needs its buffer"};
      Object& b = find(c.buffer, {Kind::mem});
      if (bytes > b.bytes) throw ClFail{CL_INVALID_IMAGE_SIZE, "the image is larger than its buffer"};
      desc.buffer = static_cast<cl_mem>(b.handle);
    } else if (c.buffer) {
      throw ClFail{CL_INVALID_IMAGE_DESCRIPTOR, "only 1D buffer images are made from a buffer"};
    }
    cl_mem_flags flags = c.flags & ~cl_mem_flags(CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR);
    void* host = nullptr;
    if (c.flags & (CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR)) {
      flags |= CL_MEM_COPY_HOST_PTR;
      host = payload.data();
    }
    if (!desc.buffer) check_memory(bytes);
    if (host ? (r.payload_bytes != bytes || payload.size() != bytes) : r.payload_bytes != 0)
      throw ClFail{CL_INVALID_HOST_PTR, "initial contents must be the packed image"};
    cl_int rc = CL_SUCCESS;
    cl_mem m = clCreateImage(ctx, flags, &format, &desc, host, &rc);
    check(rc, "clCreateImage");
    counters_.bytes_written += host ? bytes : 0;
    Object o{Kind::image, m, bytes, pixel, c.context};
    o.extent = extent;
    o.view = desc.buffer != nullptr;
    if (desc.buffer) {
      o.backing = c.buffer;
      find(c.buffer, {Kind::mem}).images++;
    }
    insert(c.id, o);
  }

  // The largest region of an image (pixels, rows or array layers, slices or layers), checked.
  static std::array<uint64_t, 3> image_extent(const wire::ClCreateImage& c) {
    std::array<uint64_t, 3> e;
    switch (c.type) {
      case CL_MEM_OBJECT_IMAGE1D:
      case CL_MEM_OBJECT_IMAGE1D_BUFFER: e = {c.width, 1, 1}; break;
      case CL_MEM_OBJECT_IMAGE1D_ARRAY: e = {c.width, c.array_size, 1}; break;
      case CL_MEM_OBJECT_IMAGE2D: e = {c.width, c.height, 1}; break;
      case CL_MEM_OBJECT_IMAGE2D_ARRAY: e = {c.width, c.height, c.array_size}; break;
      case CL_MEM_OBJECT_IMAGE3D: e = {c.width, c.height, c.depth}; break;
      default: throw ClFail{CL_INVALID_IMAGE_DESCRIPTOR, "unknown image type " + std::to_string(c.type)};
    }
    if (e[0] == 0 || e[1] == 0 || e[2] == 0) throw ClFail{CL_INVALID_IMAGE_SIZE, "an image of no pixels"};
    return e;
  }
  // Checks that an image region lies inside the image.
  static void check_image_region(const Object& o, const wire::ClSizes& origin, const wire::ClSizes& region) {
    for (int i = 0; i < 3; ++i)
      if (region[i] == 0 || add(origin[i], region[i]) > o.extent[i])
        throw ClFail{CL_INVALID_VALUE, "the region reaches beyond the image"};
  }

  // Bytes per pixel of a format (0: not one OpenCL defines).
  static size_t pixel_bytes(const cl_image_format& f) {
    size_t channels = 0;
    switch (f.image_channel_order) {
      case CL_R: case CL_A: case CL_INTENSITY: case CL_LUMINANCE: case CL_DEPTH: case CL_Rx: channels = 1; break;
      case CL_RG: case CL_RA: case CL_RGx: case CL_DEPTH_STENCIL: channels = 2; break;
      case CL_RGB: case CL_RGBx: channels = 3; break;
      case CL_RGBA: case CL_BGRA: case CL_ARGB: case CL_ABGR: case CL_sRGBA: case CL_sBGRA: case CL_sRGB: case CL_sRGBx:
        channels = 4; break;
      default: return 0;
    }
    switch (f.image_channel_data_type) {
      case CL_SNORM_INT8: case CL_UNORM_INT8: case CL_SIGNED_INT8: case CL_UNSIGNED_INT8: return channels;
      case CL_SNORM_INT16: case CL_UNORM_INT16: case CL_SIGNED_INT16: case CL_UNSIGNED_INT16: case CL_HALF_FLOAT:
        return 2 * channels;
      case CL_SIGNED_INT32: case CL_UNSIGNED_INT32: case CL_FLOAT: return 4 * channels;
      case CL_UNORM_SHORT_565: case CL_UNORM_SHORT_555: return 2;
      case CL_UNORM_INT_101010: case CL_UNORM_INT24: return 4;
      default: return 0;
    }
  }

  void handle(const wire::ClRequest&, const wire::ClCreateSampler& c, transport::Buffer&, ClId& created, ClId&) {
    created = c.id;
    check_new(c.id);
    cl_context ctx = handle_of<cl_context>(c.context, Kind::context);
    cl_bool normalized = CL_TRUE;
    cl_addressing_mode addressing = CL_ADDRESS_CLAMP;
    cl_filter_mode filter = CL_FILTER_NEAREST;
    if (c.properties.size() % 2) throw ClFail{CL_INVALID_VALUE, "properties come in pairs"};
    for (size_t i = 0; i < c.properties.size(); i += 2) {
      const uint64_t v = c.properties[i + 1];
      switch (c.properties[i]) {
        case CL_SAMPLER_NORMALIZED_COORDS: normalized = v ? CL_TRUE : CL_FALSE; break;
        case CL_SAMPLER_ADDRESSING_MODE: addressing = static_cast<cl_addressing_mode>(v); break;
        case CL_SAMPLER_FILTER_MODE: filter = static_cast<cl_filter_mode>(v); break;
        default: throw ClFail{CL_INVALID_VALUE, "sampler property " + std::to_string(c.properties[i]) + " is not served"};
      }
    }
    cl_int rc = CL_SUCCESS;
    cl_sampler s = clCreateSampler(ctx, normalized, addressing, filter, &rc);
    check(rc, "clCreateSampler");
    insert(c.id, Object{Kind::sampler, s, 0, 0, c.context});
  }

  void handle(const wire::ClRequest& r, const wire::ClGetImageFormats& q, transport::Buffer&, ClId&, ClId&) {
    if (!r.call_id) throw ClFail{CL_INVALID_VALUE, "a query must be answered"};
    cl_context ctx = handle_of<cl_context>(q.context, Kind::context);
    cl_uint n = 0;
    check(clGetSupportedImageFormats(ctx, q.flags, q.type, 0, nullptr, &n), "clGetSupportedImageFormats");
    std::vector<cl_image_format> formats(n);
    if (n) check(clGetSupportedImageFormats(ctx, q.flags, q.type, n, formats.data(), nullptr), "clGetSupportedImageFormats");
    wire::ClBlob data(n * sizeof(cl_image_format));
    if (n) std::memcpy(data.data(), formats.data(), data.size());
    reply_data(r.call_id, data);
  }

  void handle(const wire::ClRequest& r, const wire::ClCreateProgramSource& c, transport::Buffer& payload,
              ClId& created, ClId&) {
    created = c.id;
    check_new(c.id);
    cl_context ctx = handle_of<cl_context>(c.context, Kind::context);
    if (payload.size() != r.payload_bytes || r.payload_bytes == 0) throw ClFail{CL_INVALID_VALUE, "no source"};
    const char* text = reinterpret_cast<const char*>(payload.data());
    size_t length = payload.size();
    cl_int rc = CL_SUCCESS;
    cl_program p = clCreateProgramWithSource(ctx, 1, &text, &length, &rc);
    check(rc, "clCreateProgramWithSource");
    insert(c.id, Object{Kind::program, p, 0, 0, c.context});
  }

  void handle(const wire::ClRequest& r, const wire::ClCreateProgramBinary& c, transport::Buffer& payload,
              ClId& created, ClId&) {
    created = c.id;
    if (!r.call_id) throw ClFail{CL_INVALID_VALUE, "a program from binaries is answered"};
    check_new(c.id);
    cl_context ctx = handle_of<cl_context>(c.context, Kind::context);
    std::vector<cl_device_id> ds = devices(c.devices);
    if (ds.empty() || c.sizes.size() != ds.size()) throw ClFail{CL_INVALID_VALUE, "one binary per device"};
    std::vector<const unsigned char*> bins;
    uint64_t offset = 0;
    for (uint64_t s : c.sizes) {
      if (s == 0 || add(offset, s) > payload.size()) throw ClFail{CL_INVALID_VALUE, "binary sizes do not match the data"};
      bins.push_back(reinterpret_cast<const unsigned char*>(payload.data()) + offset);
      offset += s;
    }
    if (offset != payload.size()) throw ClFail{CL_INVALID_VALUE, "binary sizes do not match the data"};
    std::vector<size_t> sizes(c.sizes.begin(), c.sizes.end());
    std::vector<cl_int> status(ds.size(), CL_SUCCESS);
    cl_int rc = CL_SUCCESS;
    cl_program p = clCreateProgramWithBinary(ctx, static_cast<cl_uint>(ds.size()), ds.data(), sizes.data(), bins.data(),
                                             status.data(), &rc);
    wire::ClBlob data(status.size() * sizeof(cl_int));
    std::memcpy(data.data(), status.data(), data.size());
    if (rc != CL_SUCCESS) {
      out_->reply(r.call_id, rc, data);
      return;
    }
    insert(c.id, Object{Kind::program, p, 0, 0, c.context});
    out_->reply(r.call_id, CL_SUCCESS, data);
  }

  void handle(const wire::ClRequest&, const wire::ClCreateProgramBuiltIn& c, transport::Buffer&, ClId& created, ClId&) {
    created = c.id;
    check_new(c.id);
    cl_context ctx = handle_of<cl_context>(c.context, Kind::context);
    std::vector<cl_device_id> ds = devices(c.devices);
    cl_int rc = CL_SUCCESS;
    cl_program p = clCreateProgramWithBuiltInKernels(ctx, static_cast<cl_uint>(ds.size()), ds.data(), c.names.c_str(), &rc);
    check(rc, "clCreateProgramWithBuiltInKernels");
    insert(c.id, Object{Kind::program, p, 0, 0, c.context});
  }

  void handle(const wire::ClRequest& r, const wire::ClBuildProgram& b, transport::Buffer&, ClId& created, ClId&) {
    std::vector<cl_device_id> ds = devices(b.devices);
    const cl_device_id* dp = ds.empty() ? nullptr : ds.data();
    const cl_uint nd = static_cast<cl_uint>(ds.size());
    cl_program p = nullptr;
    cl_int rc = CL_SUCCESS;
    switch (static_cast<wire::ClBuildStep>(b.step)) {
      case wire::ClBuildStep::build:
        p = handle_of<cl_program>(b.program, Kind::program);
        rc = clBuildProgram(p, nd, dp, b.options.c_str(), nullptr, nullptr);
        break;
      case wire::ClBuildStep::compile: {
        p = handle_of<cl_program>(b.program, Kind::program);
        if (b.header_names.size() != b.inputs.size()) throw ClFail{CL_INVALID_VALUE, "one name per header"};
        std::vector<cl_program> headers;
        std::vector<const char*> names;
        for (size_t i = 0; i < b.inputs.size(); ++i) {
          headers.push_back(handle_of<cl_program>(b.inputs[i], Kind::program));
          names.push_back(b.header_names[i].c_str());
        }
        rc = clCompileProgram(p, nd, dp, b.options.c_str(), static_cast<cl_uint>(headers.size()),
                              headers.empty() ? nullptr : headers.data(), names.empty() ? nullptr : names.data(),
                              nullptr, nullptr);
        break;
      }
      case wire::ClBuildStep::link: {
        created = b.program;
        check_new(b.program);
        cl_context ctx = handle_of<cl_context>(b.context, Kind::context);
        std::vector<cl_program> inputs;
        for (ClId id : b.inputs) inputs.push_back(handle_of<cl_program>(id, Kind::program));
        if (inputs.empty()) throw ClFail{CL_INVALID_VALUE, "nothing to link"};
        p = clLinkProgram(ctx, nd, dp, b.options.c_str(), static_cast<cl_uint>(inputs.size()), inputs.data(), nullptr,
                          nullptr, &rc);
        if (p) insert(b.program, Object{Kind::program, p, 0, 0, b.context});
        break;
      }
      default:
        throw ClFail{CL_INVALID_VALUE, "unknown build step"};
    }
    if (!r.call_id) throw ClFail{CL_INVALID_VALUE, "a build is answered"};
    if (rc != CL_SUCCESS) {
      counters_.failures++;
      out_->reply(r.call_id, rc, {});
      return;
    }
    reply_payload(r.call_id, wire::encode_cl(kernels_of(p)));
  }

  // The kernels of a built program and their arguments, for the client's own checks.
  static wire::ClBuildResult kernels_of(cl_program p) {
    wire::ClBuildResult out;
    cl_uint n = 0;
    if (clCreateKernelsInProgram(p, 0, nullptr, &n) != CL_SUCCESS || n == 0) return out;
    std::vector<cl_kernel> ks(n);
    if (clCreateKernelsInProgram(p, n, ks.data(), nullptr) != CL_SUCCESS) return out;
    for (cl_kernel k : ks) {
      wire::ClKernelEntry e;
      size_t size = 0;
      clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, 0, nullptr, &size);
      e.name.resize(size);
      clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, size, e.name.data(), nullptr);
      if (!e.name.empty() && e.name.back() == '\0') e.name.pop_back();
      cl_uint args = 0;
      clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof args, &args, nullptr);
      for (cl_uint a = 0; a < args; ++a) {
        wire::ClKernelArgInfo ai;
        cl_kernel_arg_address_qualifier addr = 0;
        cl_kernel_arg_access_qualifier access = 0;
        cl_kernel_arg_type_qualifier tq = 0;
        if (clGetKernelArgInfo(k, a, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof addr, &addr, nullptr) == CL_SUCCESS)
          ai.address = addr;
        if (clGetKernelArgInfo(k, a, CL_KERNEL_ARG_ACCESS_QUALIFIER, sizeof access, &access, nullptr) == CL_SUCCESS)
          ai.access = access;
        if (clGetKernelArgInfo(k, a, CL_KERNEL_ARG_TYPE_QUALIFIER, sizeof tq, &tq, nullptr) == CL_SUCCESS)
          ai.type_qualifier = tq;
        for (auto [param, into] : {std::pair{CL_KERNEL_ARG_TYPE_NAME, &ai.type_name}, std::pair{CL_KERNEL_ARG_NAME, &ai.name}}) {
          size_t s = 0;
          if (clGetKernelArgInfo(k, a, param, 0, nullptr, &s) != CL_SUCCESS || s == 0 || s > 1024) continue;
          into->resize(s);
          clGetKernelArgInfo(k, a, param, s, into->data(), nullptr);
          if (into->back() == '\0') into->pop_back();
        }
        e.args.push_back(std::move(ai));
      }
      out.kernels.push_back(std::move(e));
      clReleaseKernel(k);
    }
    return out;
  }

  void handle(const wire::ClRequest&, const wire::ClCreateKernel& c, transport::Buffer&, ClId& created, ClId&) {
    created = c.id;
    check_new(c.id);
    Object& p = find(c.program, {Kind::program});
    cl_int rc = CL_SUCCESS;
    cl_kernel k = clCreateKernel(static_cast<cl_program>(p.handle), c.name.c_str(), &rc);
    check(rc, "clCreateKernel");
    insert(c.id, Object{Kind::kernel, k, 0, 0, p.context});
  }

  void handle(const wire::ClRequest&, const wire::ClCloneKernel& c, transport::Buffer&, ClId& created, ClId&) {
    created = c.id;
    check_new(c.id);
    Object& src = find(c.source, {Kind::kernel});
    cl_int rc = CL_SUCCESS;
    cl_kernel k = clCloneKernel(static_cast<cl_kernel>(src.handle), &rc);
    check(rc, "clCloneKernel");
    insert(c.id, Object{Kind::kernel, k, 0, 0, src.context});
  }

  void handle(const wire::ClRequest&, const wire::ClCreateUserEvent& c, transport::Buffer&, ClId& created, ClId&) {
    created = c.id;
    check_new(c.id);
    cl_int rc = CL_SUCCESS;
    cl_event e = clCreateUserEvent(handle_of<cl_context>(c.context, Kind::context), &rc);
    check(rc, "clCreateUserEvent");
    insert(c.id, Object{Kind::user_event, e, 0, 0, c.context});
    Callback cb;
    cb.event = c.id;
    register_done(e, callback(std::move(cb)));
  }

  void handle(const wire::ClRequest&, const wire::ClSetUserEventStatus& s, transport::Buffer&, ClId& created, ClId&) {
    created = s.event;
    Object& o = find(s.event, {Kind::user_event});
    if (s.status > 0 || o.user_status_set) throw ClFail{CL_INVALID_OPERATION, "a user event's status is set once, to 0 or below"};
    check(clSetUserEventStatus(static_cast<cl_event>(o.handle), s.status), "clSetUserEventStatus");
    o.user_status_set = true;
  }

  void handle(const wire::ClRequest&, const wire::ClRelease& rel, transport::Buffer&, ClId& created, ClId&) {
    created = rel.id;
    forget_last_kernels();  // a release may enqueue (or end a queue)
    auto it = objects_.find(rel.id);
    if (it == objects_.end()) throw ClFail{CL_INVALID_VALUE, "no object " + std::to_string(rel.id)};
    Object& o = it->second;
    // Not every implementation keeps a 1D buffer image's buffer alive (PoCL 3.1 does not): the
    // client releases its images first (its ICD does), else the buffer stays until the session ends.
    if (o.images) throw ClFail{CL_INVALID_OPERATION, "buffer " + std::to_string(rel.id) + " still backs an image"};
    if (o.backing)
      if (auto b = objects_.find(o.backing); b != objects_.end()) b->second.images--;
    if (o.kind == Kind::user_event && !o.user_status_set) {
      // The program dropped a user event it never set; commands waiting on it would wait forever.
      clSetUserEventStatus(static_cast<cl_event>(o.handle), CL_INVALID_EVENT);
    }
    if (holds_memory(o)) memory_bytes_ -= o.bytes;
    if (o.kind == Kind::queue) release_queue_helpers(static_cast<cl_command_queue>(o.handle));
    release_native(o);
    objects_.erase(it);
  }

  // ---- commands ----
  // The bytes a transfer of `at` touches, checked against a buffer of `size` bytes (with pitches)
  // or an image (pixels); returns the packed size on the client's side.
  uint64_t transfer_bytes(const Object& o, const wire::ClRegion& at) {
    const auto& org = at.origin;
    const auto& reg = at.region;
    if (reg[0] == 0 || reg[1] == 0 || reg[2] == 0) throw ClFail{CL_INVALID_VALUE, "an empty region"};
    if (o.kind == Kind::image) {
      check_image_region(o, org, reg);
      return mul(mul(mul(reg[0], o.pixel), reg[1]), reg[2]);
    }
    const uint64_t row = at.row_pitch ? at.row_pitch : reg[0];
    const uint64_t slice = at.slice_pitch ? at.slice_pitch : mul(row, reg[1]);
    if (row < reg[0] || slice < mul(row, reg[1])) throw ClFail{CL_INVALID_VALUE, "pitches smaller than the region"};
    const uint64_t first = add(add(org[0], mul(org[1], row)), mul(org[2], slice));
    const uint64_t last = add(add(add(first, mul(reg[2] - 1, slice)), mul(reg[1] - 1, row)), reg[0]);
    if (last > o.bytes) throw ClFail{CL_INVALID_VALUE, "the region reaches beyond the buffer"};
    return mul(mul(reg[0], reg[1]), reg[2]);
  }
  static bool is_linear(const wire::ClRegion& at) {
    return at.region[1] == 1 && at.region[2] == 1 && at.origin[1] == 0 && at.origin[2] == 0;
  }

  // Enqueues a buffer, rectangle or image transfer between `host` (packed) and `mem`, without
  // blocking; returns its native event.
  cl_event enqueue_transfer(bool write, cl_command_queue q, const wire::ClCommand& cmd, Object& o,
                            const wire::ClRegion& at, void* host) {
    auto wait = wait_list(cmd.wait);
    cl_mem m = static_cast<cl_mem>(o.handle);
    const size_t* org = reinterpret_cast<const size_t*>(at.origin.data());
    const size_t* reg = reinterpret_cast<const size_t*>(at.region.data());
    const size_t host0[3] = {0, 0, 0};
    cl_event e = nullptr;
    cl_int rc;
    if (o.kind == Kind::image)
      rc = write ? clEnqueueWriteImage(q, m, CL_FALSE, org, reg, 0, 0, host, n(wait), p(wait), &e)
                 : clEnqueueReadImage(q, m, CL_FALSE, org, reg, 0, 0, host, n(wait), p(wait), &e);
    else if (is_linear(at))
      rc = write ? clEnqueueWriteBuffer(q, m, CL_FALSE, at.origin[0], at.region[0], host, n(wait), p(wait), &e)
                 : clEnqueueReadBuffer(q, m, CL_FALSE, at.origin[0], at.region[0], host, n(wait), p(wait), &e);
    else
      rc = write ? clEnqueueWriteBufferRect(q, m, CL_FALSE, org, host0, reg, at.row_pitch, at.slice_pitch, 0, 0, host,
                                            n(wait), p(wait), &e)
                 : clEnqueueReadBufferRect(q, m, CL_FALSE, org, host0, reg, at.row_pitch, at.slice_pitch, 0, 0, host,
                                           n(wait), p(wait), &e);
    check(rc, write ? "the write" : "the read");
    return e;
  }

  void handle(const wire::ClRequest& r, const wire::ClWrite& w, transport::Buffer& payload, ClId&, ClId& event) {
    cl_command_queue q = begin_command(w.cmd, event);
    Object& o = find(w.mem, {Kind::mem, Kind::image});
    const uint64_t bytes = transfer_bytes(o, w.at);
    if (r.payload_bytes != bytes || payload.size() != bytes) throw ClFail{CL_INVALID_VALUE, "the data is not the region's size"};
    auto data = std::make_shared<transport::Buffer>(std::move(payload));
    cl_event e = enqueue_transfer(true, q, w.cmd, o, w.at, data->data());
    counters_.bytes_written += bytes;
    Callback c;
    c.call_id = r.call_id;
    c.data = std::move(data);
    track(e, w.cmd, std::move(c));
  }

  void handle(const wire::ClRequest& r, const wire::ClRead& rd, transport::Buffer&, ClId&, ClId& event) {
    cl_command_queue q = begin_command(rd.cmd, event);
    if (!r.call_id) throw ClFail{CL_INVALID_VALUE, "a read is answered"};
    Object& o = find(rd.mem, {Kind::mem, Kind::image});
    const uint64_t bytes = transfer_bytes(o, rd.at);
    Callback c;
    std::optional<transport::Buffer> slot = pinned_slot(q, bytes);
    c.pinned = slot.has_value();
    if (c.pinned) counters_.pinned_bytes_read += bytes;
    auto data = std::make_shared<transport::Buffer>(c.pinned ? std::move(*slot) : transport::Buffer::allocate(bytes));
    cl_event e = enqueue_transfer(false, q, rd.cmd, o, rd.at, data->data());
    c.call_id = r.call_id;
    c.data = std::move(data);
    c.bytes = bytes;
    c.read = true;
    track(e, rd.cmd, std::move(c));
    // The client is likely waiting for it. Flushed once watched: on NVIDIA's OpenCL a flush takes
    // the calling thread ~2 us (bench/probes/cl_wait_probe.c), while the waiter may already poll.
    clFlush(q);
  }

  // ---- transfers on the direct path (direct_transfer.hpp) ----
  // Checks a direct transfer as a plain one, and the client's memory it names; starts it.
  template <class Op>
  void direct(const wire::ClRequest& r, const Op& d, bool write, ClId& event) {
    DirectTransfer t;
    t.write = write;
    t.queue = begin_command(d.cmd, event);
    if (!r.call_id) throw ClFail{CL_INVALID_VALUE, "a direct transfer is answered"};
    if (r.payload_bytes) throw ClFail{CL_INVALID_VALUE, "a direct transfer carries no data"};
    Object& o = find(d.mem, {Kind::mem});
    wire::ClRegion at;
    at.origin = {d.offset, 0, 0};
    at.region = {d.size, 1, 1};
    t.bytes = transfer_bytes(o, at);
    if (d.key.empty() || d.key.size() > wire::kMaxClKeyBytes) throw ClFail{CL_INVALID_VALUE, "invalid memory key"};
    if (d.address == 0 || d.address > std::numeric_limits<uint64_t>::max() - d.size)
      throw ClFail{CL_INVALID_VALUE, "the client's memory wraps around"};
    check(clGetCommandQueueInfo(t.queue, CL_QUEUE_CONTEXT, sizeof t.context, &t.context, nullptr), "the queue's context");
    t.mem = static_cast<cl_mem>(o.handle);
    t.offset = d.offset;
    t.wait = wait_list(d.cmd.wait);
    t.address = d.address;
    t.call_id = r.call_id;
    t.event = d.cmd.event;
    t.mover = mover(t.queue);
    // Last: an opened region must be dropped (direct_transfer does, whatever happens).
    if (!memory_ || !memory_->open(d.key, t.region))
      throw ClFail{CL_INVALID_OPERATION, "a direct transfer without copy lanes (no LanesRequest answered)"};
    cl_event end = nullptr;
    try {
      end = direct_transfer({out_, memory_, staging_, &counters_, &waiter_, outstanding_}, t);
    } catch (const DirectFail& f) {
      throw ClFail{f.code, f.what + " failed: " + cl_error_name(f.code)};
    }
    if (write) counters_.bytes_written += t.bytes;
    // The transfer reports its event itself, once every piece has moved; the end marker is the
    // native event later commands wait for.
    if (d.cmd.event) insert(d.cmd.event, Object{Kind::event, end});
    else clReleaseEvent(end);
  }
  // The queue of the server's own that moves the pieces of `q`'s direct transfers (made at the
  // first; released with `q`): on q's device, profiled if q is.
  cl_command_queue mover(cl_command_queue q) {
    if (auto it = movers_.find(q); it != movers_.end()) return it->second;
    cl_context ctx = nullptr;
    cl_device_id dev = nullptr;
    cl_command_queue_properties props = 0;
    check(clGetCommandQueueInfo(q, CL_QUEUE_CONTEXT, sizeof ctx, &ctx, nullptr), "the queue's context");
    check(clGetCommandQueueInfo(q, CL_QUEUE_DEVICE, sizeof dev, &dev, nullptr), "the queue's device");
    check(clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES, sizeof props, &props, nullptr), "the queue's properties");
    cl_int rc = CL_SUCCESS;
    cl_command_queue m = clCreateCommandQueue(ctx, dev, props & CL_QUEUE_PROFILING_ENABLE, &rc);
    check(rc, "the transfers' queue");
    movers_.emplace(q, m);
    return m;
  }
  // Page-locked memory for a read of `bytes` on q's message path, when q's slots have room.
  std::optional<transport::Buffer> pinned_slot(cl_command_queue q, uint64_t bytes) {
    if (bytes > PinnedReads::kSlotBytes) return std::nullopt;
    auto it = pinned_.find(q);
    if (it == pinned_.end()) it = pinned_.emplace(q, PinnedReads::make(q)).first;  // null: not to be had
    return it->second ? it->second->take(bytes) : std::nullopt;
  }
  // What the session made for the client's queue `q`: its transfers' queue, its read slots.
  void release_queue_helpers(cl_command_queue q) {
    pinned_.erase(q);  // reads in flight keep their slots' memory
    if (auto it = movers_.find(q); it != movers_.end()) {
      clReleaseCommandQueue(it->second);  // its commands in flight keep it until they are done
      movers_.erase(it);
    }
  }

  void handle(const wire::ClRequest& r, const wire::ClDirectRead& d, transport::Buffer&, ClId&, ClId& event) {
    direct(r, d, false, event);
  }
  void handle(const wire::ClRequest& r, const wire::ClDirectWrite& d, transport::Buffer&, ClId&, ClId& event) {
    direct(r, d, true, event);
  }

  void handle(const wire::ClRequest& r, const wire::ClCopy& c, transport::Buffer&, ClId&, ClId& event) {
    cl_command_queue q = begin_command(c.cmd, event);
    Object& s = find(c.src, {Kind::mem, Kind::image});
    Object& d = find(c.dst, {Kind::mem, Kind::image});
    auto wait = wait_list(c.cmd.wait);
    cl_mem sm = static_cast<cl_mem>(s.handle), dm = static_cast<cl_mem>(d.handle);
    const size_t* so = reinterpret_cast<const size_t*>(c.from.origin.data());
    const size_t* dor = reinterpret_cast<const size_t*>(c.to.origin.data());
    const size_t* reg = reinterpret_cast<const size_t*>(c.from.region.data());
    cl_event e = nullptr;
    cl_int rc;
    const bool si = s.kind == Kind::image, di = d.kind == Kind::image;
    if (!si && !di) {
      transfer_bytes(s, c.from);
      wire::ClRegion to = c.to;
      to.region = c.from.region;
      transfer_bytes(d, to);
      if (is_linear(c.from) && is_linear(to) && c.from.row_pitch == 0 && to.row_pitch == 0)
        rc = clEnqueueCopyBuffer(q, sm, dm, c.from.origin[0], c.to.origin[0], c.from.region[0], n(wait), p(wait), &e);
      else
        rc = clEnqueueCopyBufferRect(q, sm, dm, so, dor, reg, c.from.row_pitch, c.from.slice_pitch, c.to.row_pitch,
                                     c.to.slice_pitch, n(wait), p(wait), &e);
    } else if (si && di) {  // from: the source region; to: the destination origin
      check_image_region(s, c.from.origin, c.from.region);
      check_image_region(d, c.to.origin, c.from.region);
      if (s.pixel != d.pixel) throw ClFail{CL_IMAGE_FORMAT_MISMATCH, "images of different formats"};
      rc = clEnqueueCopyImage(q, sm, dm, so, dor, reg, n(wait), p(wait), &e);
    } else if (si) {  // from: the image region; to: the buffer offset (origin[0])
      check_image_region(s, c.from.origin, c.from.region);
      const uint64_t bytes = mul(mul(mul(c.from.region[0], s.pixel), c.from.region[1]), c.from.region[2]);
      if (add(c.to.origin[0], bytes) > d.bytes) throw ClFail{CL_INVALID_VALUE, "the copy reaches beyond the buffer"};
      rc = clEnqueueCopyImageToBuffer(q, sm, dm, so, reg, c.to.origin[0], n(wait), p(wait), &e);
    } else {  // from: the buffer offset (origin[0]); to: the image region
      check_image_region(d, c.to.origin, c.to.region);
      const uint64_t bytes = mul(mul(mul(c.to.region[0], d.pixel), c.to.region[1]), c.to.region[2]);
      if (add(c.from.origin[0], bytes) > s.bytes) throw ClFail{CL_INVALID_VALUE, "the copy reaches beyond the buffer"};
      rc = clEnqueueCopyBufferToImage(q, sm, dm, c.from.origin[0], dor, reinterpret_cast<const size_t*>(c.to.region.data()),
                                      n(wait), p(wait), &e);
    }
    check(rc, "the copy");
    answer_when_done(e, r, c.cmd);
  }

  void handle(const wire::ClRequest& r, const wire::ClFill& f, transport::Buffer&, ClId&, ClId& event) {
    cl_command_queue q = begin_command(f.cmd, event);
    Object& o = find(f.mem, {Kind::mem, Kind::image});
    auto wait = wait_list(f.cmd.wait);
    cl_event e = nullptr;
    cl_int rc;
    if (o.kind == Kind::image) {
      if (f.pattern.size() != 16) throw ClFail{CL_INVALID_VALUE, "an image's fill colour is 16 bytes"};
      check_image_region(o, f.at.origin, f.at.region);
      rc = clEnqueueFillImage(q, static_cast<cl_mem>(o.handle), f.pattern.data(),
                              reinterpret_cast<const size_t*>(f.at.origin.data()),
                              reinterpret_cast<const size_t*>(f.at.region.data()), n(wait), p(wait), &e);
    } else {
      transfer_bytes(o, f.at);
      rc = clEnqueueFillBuffer(q, static_cast<cl_mem>(o.handle), f.pattern.data(), f.pattern.size(), f.at.origin[0],
                               f.at.region[0], n(wait), p(wait), &e);
    }
    check(rc, "the fill");
    answer_when_done(e, r, f.cmd);
  }

  void handle(const wire::ClRequest& r, const wire::ClMigrate& m, transport::Buffer&, ClId&, ClId& event) {
    cl_command_queue q = begin_command(m.cmd, event);
    std::vector<cl_mem> mems;
    for (ClId id : m.mems) mems.push_back(static_cast<cl_mem>(find(id, {Kind::mem, Kind::image, Kind::pipe}).handle));
    auto wait = wait_list(m.cmd.wait);
    cl_event e = nullptr;
    check(clEnqueueMigrateMemObjects(q, static_cast<cl_uint>(mems.size()), mems.data(), m.flags, n(wait), p(wait), &e),
          "clEnqueueMigrateMemObjects");
    answer_when_done(e, r, m.cmd);
  }

  void handle(const wire::ClRequest& r, const wire::ClNDRange& k, transport::Buffer&, ClId&, ClId& event) {
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
    check(clEnqueueNDRangeKernel(q, kernel, k.dims, off, glob, k.local_given ? loc : nullptr, n(wait), p(wait), &e),
          "clEnqueueNDRangeKernel");
    counters_.kernels++;
    clRetainEvent(e);
    last_kernel_[q] = e;  // begin_command forgot the one before
    answer_when_done(e, r, k.cmd);
  }

  void handle(const wire::ClRequest& r, const wire::ClMarker& m, transport::Buffer&, ClId&, ClId& event) {
    cl_command_queue q = begin_command(m.cmd, event);
    auto wait = wait_list(m.cmd.wait);
    cl_event e = nullptr;
    if (m.barrier)
      check(clEnqueueBarrierWithWaitList(q, n(wait), p(wait), &e), "clEnqueueBarrierWithWaitList");
    else
      check(clEnqueueMarkerWithWaitList(q, n(wait), p(wait), &e), "clEnqueueMarkerWithWaitList");
    answer_when_done(e, r, m.cmd);
  }

  void handle(const wire::ClRequest& r, const wire::ClFinish& f, transport::Buffer&, ClId&, ClId&) {
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
    Callback cb;
    cb.call_id = r.call_id;
    register_done(e, callback(std::move(cb)), /*watch=*/true);
    clReleaseEvent(e);
    clFlush(q);  // once watched, as a read's
  }

  void handle(const wire::ClRequest& r, const wire::ClFlush& f, transport::Buffer&, ClId&, ClId&) {
    check(clFlush(handle_of<cl_command_queue>(f.queue, Kind::queue)), "clFlush");
    if (r.call_id) out_->reply(r.call_id, CL_SUCCESS, {});
  }

  // ---- sub-devices, pipes, IL programs, sub-groups, timers ----
  void handle(const wire::ClRequest& r, const wire::ClCreateSubDevices& c, transport::Buffer&, ClId&, ClId&) {
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

  void handle(const wire::ClRequest&, const wire::ClCreatePipe& c, transport::Buffer&, ClId& created, ClId&) {
    created = c.id;
    check_new(c.id);
    cl_context ctx = handle_of<cl_context>(c.context, Kind::context);
    const uint64_t bytes = mul(c.packet_size, c.max_packets);
    check_memory(bytes);
    cl_int rc = CL_SUCCESS;
    cl_mem m = clCreatePipe(ctx, c.flags, c.packet_size, c.max_packets, nullptr, &rc);
    check(rc, "clCreatePipe");
    insert(c.id, Object{Kind::pipe, m, bytes, 0, c.context});
  }

  void handle(const wire::ClRequest& r, const wire::ClCreateProgramIL& c, transport::Buffer& payload, ClId& created,
              ClId&) {
    created = c.id;
    check_new(c.id);
    cl_context ctx = handle_of<cl_context>(c.context, Kind::context);
    if (payload.size() != r.payload_bytes || r.payload_bytes == 0) throw ClFail{CL_INVALID_VALUE, "no intermediate language"};
    cl_int rc = CL_SUCCESS;
    cl_program p = clCreateProgramWithIL(ctx, payload.data(), payload.size(), &rc);
    check(rc, "clCreateProgramWithIL");
    insert(c.id, Object{Kind::program, p, 0, 0, c.context});
  }

  void handle(const wire::ClRequest& r, const wire::ClGetSubGroupInfo& q, transport::Buffer&, ClId&, ClId&) {
    if (!r.call_id) throw ClFail{CL_INVALID_VALUE, "an info query must be answered"};
    cl_kernel k = handle_of<cl_kernel>(q.kernel, Kind::kernel);
    cl_device_id d = q.device ? device(q.device) : nullptr;
    if (q.input.size() > 3) throw ClFail{CL_INVALID_VALUE, "at most three input values"};
    std::vector<size_t> in(q.input.begin(), q.input.end());
    const void* ip = in.empty() ? nullptr : in.data();
    const size_t is = in.size() * sizeof(size_t);
    size_t size = 0;
    check(clGetKernelSubGroupInfo(k, d, q.param, is, ip, 0, nullptr, &size), "clGetKernelSubGroupInfo");
    if (size > wire::kMaxClBlob) throw ClFail{CL_OUT_OF_RESOURCES, "info value too large"};
    wire::ClBlob value(size);
    check(clGetKernelSubGroupInfo(k, d, q.param, is, ip, size, value.data(), nullptr), "clGetKernelSubGroupInfo");
    reply_data(r.call_id, value);
  }

  void handle(const wire::ClRequest& r, const wire::ClGetTimers& t, transport::Buffer&, ClId&, ClId&) {
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

  // ---- helpers ----
  static cl_uint n(const std::vector<cl_event>& w) { return static_cast<cl_uint>(w.size()); }
  static const cl_event* p(const std::vector<cl_event>& w) { return w.empty() ? nullptr : w.data(); }

  void reply_data(uint64_t call_id, const wire::ClBlob& value) {
    if (value.size() <= 1024) {
      out_->reply(call_id, CL_SUCCESS, value);
      return;
    }
    auto data = std::make_shared<transport::Buffer>(transport::Buffer::allocate(value.size()));
    std::memcpy(data->data(), value.data(), value.size());
    out_->reply(call_id, CL_SUCCESS, {}, data, value.size());
  }
  void reply_payload(uint64_t call_id, const std::vector<std::byte>& bytes) {
    auto data = std::make_shared<transport::Buffer>(transport::Buffer::allocate(std::max<size_t>(bytes.size(), 1)));
    std::memcpy(data->data(), bytes.data(), bytes.size());
    out_->reply(call_id, CL_SUCCESS, {}, data, bytes.size());
  }
  static wire::ClBlob program_binaries(cl_program p) {
    cl_uint devices = 0;
    check(clGetProgramInfo(p, CL_PROGRAM_NUM_DEVICES, sizeof devices, &devices, nullptr), "clGetProgramInfo");
    std::vector<size_t> sizes(devices);
    check(clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizes.size() * sizeof(size_t), sizes.data(), nullptr),
          "clGetProgramInfo");
    uint64_t total = 0;
    for (size_t s : sizes) total = add(total, s);
    if (total > (uint64_t(1) << 30)) throw ClFail{CL_OUT_OF_RESOURCES, "binaries too large"};
    wire::ClBlob all(total);
    std::vector<unsigned char*> ptrs;
    uint64_t off = 0;
    for (size_t s : sizes) {
      ptrs.push_back(s ? reinterpret_cast<unsigned char*>(all.data()) + off : nullptr);
      off += s;
    }
    check(clGetProgramInfo(p, CL_PROGRAM_BINARIES, ptrs.size() * sizeof(void*), ptrs.data(), nullptr), "clGetProgramInfo");
    return all;
  }

  const NativePlatforms& natives_;
  std::shared_ptr<ClOutput> out_;
  std::shared_ptr<server::ClClientMemory> memory_;  // the direct path to the client's memory
  server::ClLimits limits_;
  SharedCounters& counters_;
  std::unordered_map<ClId, Object> objects_;
  uint64_t memory_bytes_ = 0;
  // Direct transfers: the pieces' queue per program queue, and the host memory they stage in.
  std::unordered_map<cl_command_queue, cl_command_queue> movers_;
  std::unordered_map<cl_command_queue, std::shared_ptr<PinnedReads>> pinned_;  // null: none to be had
  std::unordered_map<cl_command_queue, cl_event> last_kernel_;  // retained; forget_last_kernel
  StageTimes traced_;  // the operation running now, when traced
  const char* traced_op_ = "";
  std::shared_ptr<StagingBudget> staging_;
  // Contexts' callbacks, freed with the session after every native object.
  std::vector<std::unique_ptr<Callback>> callbacks_;
  std::shared_ptr<std::atomic<int64_t>> outstanding_ = std::make_shared<std::atomic<int64_t>>(0);
  EventWaiter waiter_;  // last: its thread ends before the members it reports through go
};

}  // namespace

std::unique_ptr<server::ClSessionObjects> make_cl_session(const NativePlatforms& natives,
                                                          std::shared_ptr<server::ClOutput> out,
                                                          const server::ClLimits& limits,
                                                          std::shared_ptr<server::ClClientMemory> memory,
                                                          SharedCounters& counters) {
  return std::make_unique<Session>(natives, std::move(out), limits, std::move(memory), counters);
}

}  // namespace outboard::backends
