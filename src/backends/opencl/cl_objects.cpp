// The session's table: the ids the client picked, each to its native object, and the checks every
// operation makes against it.
#include "backends/opencl/cl_session.hpp"

namespace outboard::backends::opencl {

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

Object& ClSession::find(ClId id, std::initializer_list<Kind> kinds) {
  auto it = objects_.find(id);
  Kind first = *kinds.begin();
  if (it == objects_.end()) throw ClFail{invalid_code(first), "no " + std::string(kind_name(first)) + " " + std::to_string(id)};
  for (Kind k : kinds)
    if (it->second.kind == k) return it->second;
  throw ClFail{invalid_code(first), std::to_string(id) + " is a " + kind_name(it->second.kind) + ", not a " + kind_name(first)};
}

void ClSession::check_new(ClId id) {
  if (id < wire::kFirstClientId) throw ClFail{CL_INVALID_VALUE, "object ids below 2^32 are the server's"};
  if (objects_.count(id)) throw ClFail{CL_INVALID_VALUE, "object id " + std::to_string(id) + " is in use"};
  if (objects_.size() >= limits_.max_objects)
    throw ClFail{CL_OUT_OF_RESOURCES, "the session holds its limit of " + std::to_string(limits_.max_objects) + " objects"};
}

void ClSession::check_memory(uint64_t bytes) {
  if (limits_.max_memory_bytes && add(memory_bytes_, bytes) > limits_.max_memory_bytes)
    throw ClFail{CL_MEM_OBJECT_ALLOCATION_FAILURE, "over the session's memory limit of " +
                                                       std::to_string(limits_.max_memory_bytes) + " bytes"};
}

bool ClSession::holds_memory(const Object& o) {
  return (o.kind == Kind::mem || o.kind == Kind::image || o.kind == Kind::pipe) && !o.view;
}

void ClSession::insert(ClId id, Object o) {
  if (holds_memory(o)) memory_bytes_ += o.bytes;
  objects_.emplace(id, o);
}

void ClSession::release_native(Object& o) {
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

cl_device_id ClSession::device(ClId id) {
  if (auto it = natives_.devices.find(id); it != natives_.devices.end()) return it->second;
  if (auto it = objects_.find(id); it != objects_.end() && it->second.kind == Kind::device)
    return static_cast<cl_device_id>(it->second.handle);
  throw ClFail{CL_INVALID_DEVICE, "no device " + std::to_string(id)};
}

ClId ClSession::platform_of(ClId device_id) {
  if (auto it = objects_.find(device_id); it != objects_.end() && it->second.kind == Kind::device)
    return it->second.platform;
  cl_platform_id p = natives_.device_platform.at(device_id);
  for (size_t i = 0; i < natives_.platforms.size(); ++i)
    if (natives_.platforms[i] == p) return i + 1;
  return 0;
}

ClId ClSession::enter_platform(ClId platform) {
  watched_->platform.store(platform, std::memory_order_relaxed);
  if (watch_.refusing(platform)) throw ClFail{CL_OUT_OF_RESOURCES, watch_.refusal(platform), true};
  test_stall(watched_->op.load(std::memory_order_relaxed));
  return platform;
}

std::vector<cl_device_id> ClSession::devices(const wire::ClIds& ids) {
  std::vector<cl_device_id> out;
  for (ClId id : ids) out.push_back(device(id));
  return out;
}

std::vector<cl_event> ClSession::wait_list(const wire::ClIds& ids) {
  std::vector<cl_event> out;
  for (ClId id : ids) {
    auto it = objects_.find(id);
    if (it == objects_.end() || (it->second.kind != Kind::event && it->second.kind != Kind::user_event))
      throw ClFail{CL_INVALID_EVENT_WAIT_LIST, "wait list names no event " + std::to_string(id)};
    out.push_back(static_cast<cl_event>(it->second.handle));
  }
  return out;
}

void ClSession::handle(const wire::ClRequest&, const wire::ClRelease& rel, transport::Buffer&, ClId& created, ClId&) {
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

}  // namespace outboard::backends::opencl
