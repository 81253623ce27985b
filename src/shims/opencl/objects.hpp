// The ICD's objects. Each is what a cl_* handle points at: first the dispatch table (cl_khr_icd:
// the loader calls through it), then room for a 2.0 ICD loader's per-object data, then the
// client's own state. Platforms and devices live as long as the process; the others are counted
// (clRetain*/clRelease*), and their server twin is released (wire::ClRelease) when the count
// reaches zero. The ICD names every object itself (registry.hpp: new_id), so making one never waits.
#pragma once
#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 300
#endif
#define CL_USE_DEPRECATED_OPENCL_1_0_APIS
#define CL_USE_DEPRECATED_OPENCL_1_1_APIS
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#define CL_USE_DEPRECATED_OPENCL_2_0_APIS
#include <CL/cl.h>
#include <CL/cl_ext.h>
#include <CL/cl_icd.h>

#include <atomic>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "client/opencl.hpp"

namespace outboard::opencl {

using client::opencl::Channel;
using wire::ClId;

extern const cl_icd_dispatch kDispatch;  // dispatch.cpp

// The first two fields of every object.
struct IcdHeader {
  const cl_icd_dispatch* dispatch = &kDispatch;
  void* loader_data = nullptr;  // a 2.0 ICD loader's (clSetPlatformDispatchDataKHR)
};

// clGetPlatformInfo's extra query (Outboard's own): the server's address, "host:port", as a string.
inline constexpr cl_platform_info kPlatformServerAddress = 0x4F42;  // "OB"

struct Counted {
  std::atomic<cl_uint> refs{1};
  void retain() { refs.fetch_add(1); }
  // True when this was the last reference.
  bool release() { return refs.fetch_sub(1) == 1; }
};

}  // namespace outboard::opencl

using outboard::opencl::Channel;
using outboard::opencl::ClId;

struct _cl_platform_id : outboard::opencl::IcdHeader {
  std::shared_ptr<Channel> channel;
  ClId id = 0;
  std::map<cl_uint, outboard::wire::ClBlob> info;
  std::vector<cl_device_id> devices;
};

struct _cl_device_id : outboard::opencl::IcdHeader {
  cl_platform_id platform = nullptr;
  ClId id = 0;
  std::map<cl_uint, outboard::wire::ClBlob> info;
  cl_device_type type = 0;
  // Sub-devices (clCreateSubDevices) are counted; root devices live as long as the process.
  cl_device_id parent = nullptr;  // retained
  std::atomic<cl_uint> refs{1};
  bool is_sub() const { return parent != nullptr; }
  template <class T>
  T value(cl_uint param, T fallback = T{}) const {
    auto it = info.find(param);
    if (it == info.end() || it->second.size() != sizeof(T)) return fallback;
    T v;
    std::memcpy(&v, it->second.data(), sizeof v);
    return v;
  }
};

struct _cl_context : outboard::opencl::IcdHeader, outboard::opencl::Counted {
  cl_platform_id platform = nullptr;
  ClId id = 0;
  std::vector<cl_device_id> devices;
  std::vector<cl_context_properties> properties;  // as given, with the terminating 0 (empty: none given)
  void(CL_CALLBACK* notify)(const char*, const void*, size_t, void*) = nullptr;
  void* notify_data = nullptr;
  // clSetContextDestructorCallback's, run in reverse order once the context is gone.
  std::mutex mu;
  std::vector<std::pair<void(CL_CALLBACK*)(cl_context, void*), void*>> destructors;
  // clGetSupportedImageFormats' answers by (flags, image type), asked once.
  std::map<std::pair<cl_mem_flags, cl_mem_object_type>, std::vector<cl_image_format>> image_formats;
  Channel& channel() const { return *platform->channel; }
};

// A queue's reads whose data is still on its way (numbered in enqueue order): an event of the
// queue counts as complete only once the data of every read enqueued before it has landed (the
// server's notices and read answers may overtake one another).
struct QueueReads {
  std::mutex mu;
  std::condition_variable cv;  // a read's data landed
  uint64_t next = 0;
  std::set<uint64_t> outstanding;
};

struct _cl_command_queue : outboard::opencl::IcdHeader, outboard::opencl::Counted {
  cl_context context = nullptr;
  cl_device_id device = nullptr;
  ClId id = 0;
  cl_command_queue_properties properties = 0;
  std::vector<cl_queue_properties> property_list;  // as given to ...WithProperties
  std::shared_ptr<QueueReads> reads;
  Channel& channel() const { return context->channel(); }
};

struct _cl_mem : outboard::opencl::IcdHeader, outboard::opencl::Counted {
  cl_context context = nullptr;
  ClId id = 0;
  cl_mem_object_type type = CL_MEM_OBJECT_BUFFER;
  cl_mem_flags flags = 0;
  size_t size = 0;
  void* host_ptr = nullptr;  // CL_MEM_USE_HOST_PTR's memory (kept in step at map and unmap)
  cl_mem parent = nullptr;   // a sub-buffer's buffer (retained)
  size_t origin = 0;
  // Images (desc's pitches: those of host_ptr's memory with CL_MEM_USE_HOST_PTR, else 0).
  cl_image_format format{};
  cl_image_desc desc{};
  size_t pixel = 0;
  size_t host_row_pitch = 0, host_slice_pitch = 0;  // CL_MEM_USE_HOST_PTR's layout
  // Pipes.
  cl_uint packet_size = 0, max_packets = 0;
  // As given to clCreateBufferWithProperties / clCreateImageWithProperties (with the 0).
  std::vector<cl_mem_properties> property_list;
  // Mappings: pointer handed out -> what unmapping it must write back.
  struct Mapping {
    size_t offset = 0, bytes = 0;
    size_t origin[3]{}, region[3]{};    // images: in pixels
    size_t row_pitch = 0, slice_pitch = 0;  // images: the mapped memory's layout
    bool write = false;
    bool owned = false;  // memory of the ICD's (not host_ptr)
    // A non-blocking map's read, still landing in the mapped memory when the map returned: an
    // unmap waits for it before it writes the memory back or lets it go (a reference held).
    cl_event pending = nullptr;
  };
  std::mutex mu;
  std::multimap<void*, Mapping> mappings;
  cl_uint map_count = 0;
  // The memory of the last unmapped mapping of the ICD's own, kept for the next map: a fresh
  // allocation faults every page in again as the map's data lands in it. Freed with the buffer.
  void* spare = nullptr;
  size_t spare_bytes = 0;
  std::vector<std::pair<void(CL_CALLBACK*)(cl_mem, void*), void*>> destructors;
  Channel& channel() const { return context->channel(); }
};

struct _cl_sampler : outboard::opencl::IcdHeader, outboard::opencl::Counted {
  cl_context context = nullptr;
  ClId id = 0;
  cl_bool normalized = CL_TRUE;
  cl_addressing_mode addressing = CL_ADDRESS_CLAMP;
  cl_filter_mode filter = CL_FILTER_NEAREST;
  std::vector<cl_sampler_properties> property_list;
};

struct _cl_program : outboard::opencl::IcdHeader, outboard::opencl::Counted {
  cl_context context = nullptr;
  ClId id = 0;
  std::vector<cl_device_id> devices;
  std::string source;
  std::string options;
  std::string built_in_names;
  bool from_binary = false;
  bool from_il = false;
  std::mutex mu;
  bool built = false;  // some build, compile or link succeeded
  cl_uint kernels_attached = 0;
  std::vector<outboard::wire::ClKernelEntry> kernels;
  const outboard::wire::ClKernelEntry* kernel(const std::string& name) const {
    for (const auto& k : kernels)
      if (k.name == name) return &k;
    return nullptr;
  }
};

struct _cl_kernel : outboard::opencl::IcdHeader, outboard::opencl::Counted {
  cl_program program = nullptr;  // retained
  ClId id = 0;
  outboard::wire::ClKernelEntry entry;
  std::mutex mu;
  std::vector<outboard::wire::ClArg> args;  // kind none: not set yet
};

// An event's state, shared by its handle and the notice that completes it (which may come after
// the program released the handle).
struct EventState {
  ClId id = 0;
  ClId queue = 0;  // its command queue's id; 0 for user events
  std::mutex mu;
  std::condition_variable cv;
  cl_int status = CL_QUEUED;
  std::array<uint64_t, 4> profile{};
  struct Callback {
    void(CL_CALLBACK* fn)(cl_event, cl_int, void*);
    void* data;
    cl_event event;  // retained until the callback has run
  };
  std::vector<Callback> callbacks;
  // Reads of its queue enqueued before it whose data must be here before it counts as complete.
  std::shared_ptr<QueueReads> reads;
  uint64_t reads_before = 0;
};

struct _cl_event : outboard::opencl::IcdHeader, outboard::opencl::Counted {
  cl_context context = nullptr;
  cl_command_queue queue = nullptr;  // retained; null for user events
  cl_command_type command = CL_COMMAND_USER;
  std::shared_ptr<EventState> state;
  bool profiled = false;
};

namespace outboard::opencl {

// ---- shared helpers (common.cpp) ----

// The standard answer to an info query: copies `size` bytes of `value` if there is room.
cl_int answer(const void* value, size_t size, size_t param_value_size, void* param_value, size_t* param_value_size_ret);
template <class T>
cl_int answer_value(const T& v, size_t n, void* p, size_t* ret) {
  return answer(&v, sizeof v, n, p, ret);
}
cl_int answer_text(const std::string& s, size_t n, void* p, size_t* ret);

// Object checks: a handle that is null or not one of ours fails with the standard error.
bool valid(cl_context c);
bool valid(cl_command_queue q);
bool valid(cl_mem m);
bool valid(cl_program p);
bool valid(cl_kernel k);
bool valid(cl_event e);
bool valid(cl_sampler s);
bool valid(cl_device_id d);
bool valid(cl_platform_id p);
// Devices of a context, sub-devices included: the handle is one of `devices`.
bool has_device(const std::vector<cl_device_id>& devices, cl_device_id d);

// Sets *errcode_ret (if given) and returns `result`.
template <class T>
T fail_with(cl_int code, cl_int* errcode_ret, T result = nullptr) {
  if (errcode_ret) *errcode_ret = code;
  return result;
}

// The process's platforms (connecting to the servers at the first call).
const std::vector<cl_platform_id>& platforms();

// Events (event.cpp): a new event of `queue` for a command of `type`; its id travels with the
// command. Registers it for the server's notices.
cl_event new_event(cl_command_queue queue, cl_command_type type);
// The ids of a wait list, after checking it (CL_INVALID_EVENT_WAIT_LIST, CL_INVALID_CONTEXT).
cl_int wait_ids(cl_context context, cl_uint n, const cl_event* list, std::vector<ClId>& ids);
// Marks an event complete (or failed) and runs its callbacks (on the callback thread).
void complete_event(const std::shared_ptr<EventState>& s, cl_int status, const std::array<uint64_t, 4>& profile);
// Waits until the events are complete (or failed); CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST if one failed.
cl_int wait_for(const std::vector<std::shared_ptr<EventState>>& events);
// Runs `fn` on the ICD's callback thread (never on a thread holding a channel).
void run_callback(std::function<void()> fn);
// Handles a channel's notices (event status, failures, context errors).
void handle_notice(const wire::ClNotice& n);
// A failed operation nobody waited for (object creation, a command without event): reported to
// the program at its next clFinish or wait, on the queue or object it names.
cl_int take_failure(ClId id);

// Enqueue helpers (queue.cpp).
struct Command {
  wire::ClCommand cmd;
  cl_event event = nullptr;  // the program's event, or null
};
// Checks the queue and wait list and makes the event the program asked for.
cl_int begin_command(cl_command_queue q, cl_uint n, const cl_event* wait, cl_event* event, cl_command_type type,
                     Command& out);
// The command could not be sent: its event fails.
void command_lost(Command& c, cl_event* event);
// Streams a command begun with begin_command and hands the program its event; a lost connection
// fails the event (CL_OUT_OF_RESOURCES). `data` and `wait_sent` as Channel::post takes them.
cl_int send_command(cl_command_queue q, const wire::ClOp& op, Command& c, cl_event* event,
                    client::opencl::Bytes data = {}, bool wait_sent = false);
// Waits for a command of `q` whose event is `state` (blocking transfers).
cl_int wait_command(const std::shared_ptr<EventState>& state);
// Waits until the data of the reads numbered below `before` has landed.
void wait_reads(QueueReads& reads, uint64_t before);

// Transfers (memory.cpp). A read of `at` from `mem` into `ptr` (bytes long, packed) and a write
// from it; blocking or not, as the program asked.
cl_int read_into(cl_command_queue q, cl_mem mem, const wire::ClRegion& at, void* ptr, uint64_t bytes, bool blocking,
                 cl_uint n, const cl_event* wait, cl_event* event, cl_command_type type);
cl_int write_from(cl_command_queue q, cl_mem mem, const wire::ClRegion& at, const void* ptr, uint64_t bytes,
                  bool blocking, cl_uint n, const cl_event* wait, cl_event* event, cl_command_type type);
// The checks clCreateBuffer and clCreateImage share: known flags, one access kind at most.
cl_int check_mem_flags(cl_mem_flags flags);
// Unmapping an image (image.cpp): writes a mapping back from its pitched memory.
cl_int unmap_image(cl_command_queue q, cl_mem image, void* ptr, const _cl_mem::Mapping& m, cl_uint n,
                   const cl_event* wait, cl_event* event);
// clCreateBufferWithProperties and ...ImageWithProperties accept no property (OpenCL 3.0 defines
// none for them); returns the list to keep, with its 0.
cl_int mem_properties(const cl_mem_properties* properties, std::vector<cl_mem_properties>& out);

// Sub-devices are counted (subdevice.cpp); for root devices these do nothing.
void retain_device(cl_device_id d);
void release_device(cl_device_id d);

void release_context(cl_context c);
void release_mem(cl_mem m);
void release_program(cl_program p);
void release_queue(cl_command_queue q);

}  // namespace outboard::opencl
