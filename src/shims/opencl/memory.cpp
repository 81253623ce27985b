// Buffers and their transfers. Data moves straight from and into the program's memory (no staging
// copy here): a large one, blocking or not, through the server's copy lanes, which copy it in
// pieces while the device copies the others (the direct path: wire::ClDirectRead,
// ClDirectWrite), a small one, or any where the server offers no lanes, as the operation's
// payload (the transport's rendezvous path): a write's data is sent from the program's pointer,
// a read's lands in it. Mapping is emulated: a map reads the region into host memory (the
// buffer's own host_ptr for CL_MEM_USE_HOST_PTR), an unmap for writing sends it back; both take
// the direct path like any transfer.
#include <cstdlib>

#include "shims/opencl/api.hpp"
#include "shims/opencl/registry.hpp"

namespace outboard::opencl {
namespace {

using client::opencl::Answer;
using client::opencl::Bytes;

constexpr cl_mem_flags kAccess = CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY | CL_MEM_READ_ONLY;
constexpr cl_mem_flags kHostAccess = CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS;

bool one_of_at_most(cl_mem_flags f, cl_mem_flags set) {
  cl_mem_flags x = f & set;
  return (x & (x - 1)) == 0;
}

// Transfers from this size on take the direct path where the server offers it. Below it the
// registration and the lanes' hand-offs cost more than the one message that carries the data.
constexpr uint64_t kDirectBytes = 1 << 20;

// The program's memory registered for the server's lanes, when a transfer of `at` should take
// the direct path; null otherwise. Non-blocking ones too: the server streams each transfer
// through a bounded window of staging pieces, and queued ones wait for room there
// (backends/opencl/staging_budget.hpp), however many the program queues.
std::shared_ptr<const std::vector<std::byte>> direct_key(cl_command_queue q, const wire::ClRegion& at, const void* ptr,
                                                         uint64_t bytes) {
  const bool linear = at.region[1] == 1 && at.region[2] == 1 && at.origin[1] == 0 && at.origin[2] == 0;
  if (bytes < kDirectBytes || !linear || !q->channel().direct()) return nullptr;
  return q->channel().register_memory(const_cast<void*>(ptr), bytes);
}

// A direct write's answer that is not a success: its event fails, or without one its queue's
// next clFinish shows it.
void write_failed(const std::shared_ptr<EventState>& state, ClId queue, cl_int status) {
  if (state) complete_event(state, status, {});
  else note_failure(queue, status);
}

}  // namespace

cl_int check_mem_flags(cl_mem_flags flags) {
  const cl_mem_flags known = kAccess | kHostAccess | CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR;
  if ((flags & ~known) || !one_of_at_most(flags, kAccess) || !one_of_at_most(flags, kHostAccess)) return CL_INVALID_VALUE;
  if ((flags & CL_MEM_USE_HOST_PTR) && (flags & (CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR))) return CL_INVALID_VALUE;
  return CL_SUCCESS;
}

// A read blocks, or is answered later; the queue's read bookkeeping keeps later events from
// completing before its data is here.
cl_int read_into(cl_command_queue q, cl_mem mem, const wire::ClRegion& at, void* ptr, uint64_t bytes, bool blocking,
                 cl_uint n, const cl_event* wait, cl_event* event, cl_command_type type) {
  Command c;
  // A blocking read without the program's event is a call: the waiting thread receives the
  // answer itself, which comes once the read has completed (an event of the ICD's own to wait
  // on took a notice more and a wake-up from the thread that received it).
  const bool as_call = blocking && !event;
  if (cl_int rc = begin_command(q, n, wait, event, type, c); rc != CL_SUCCESS) return rc;
  std::shared_ptr<QueueReads> reads = q->reads;
  uint64_t seq;
  {
    std::lock_guard lk(reads->mu);
    seq = reads->next++;
    reads->outstanding.insert(seq);
  }
  std::shared_ptr<EventState> state = c.event ? c.event->state : nullptr;
  if (state) state->reads_before = seq + 1;  // its own data too
  auto landed = [reads, seq, state](Answer& a) {
    if (a.status != CL_SUCCESS && state) complete_event(state, a.status, {});
    std::lock_guard lk(reads->mu);
    reads->outstanding.erase(seq);
    reads->cv.notify_all();
  };
  auto key = direct_key(q, at, ptr, bytes);
  if (as_call) {
    Answer a = key ? q->channel().call(wire::ClDirectRead{c.cmd, mem->id, at.origin[0], bytes, *key,
                                                          reinterpret_cast<uint64_t>(ptr)})
                   : q->channel().call(wire::ClRead{c.cmd, mem->id, at}, {}, ptr, bytes);
    landed(a);
    wait_reads(*reads, seq);  // earlier reads' data is here too (their answers may come later)
    return a.status == CL_SUCCESS ? CL_SUCCESS : CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
  }
  if (key) {
    // Answered once the lanes have written all of it here; the key is released with the answer.
    wire::ClDirectRead rd{c.cmd, mem->id, at.origin[0], bytes, *key, reinterpret_cast<uint64_t>(ptr)};
    q->channel().call_async(rd, {}, nullptr, 0, [landed, key](Answer& a) mutable { landed(a); });
  } else {
    q->channel().call_async(wire::ClRead{c.cmd, mem->id, at}, {}, ptr, bytes, landed);
  }
  if (event) *event = c.event;
  if (!blocking) return CL_SUCCESS;
  return wait_command(state);
}

cl_int write_from(cl_command_queue q, cl_mem mem, const wire::ClRegion& at, const void* ptr, uint64_t bytes,
                  bool blocking, cl_uint n, const cl_event* wait, cl_event* event, cl_command_type type) {
  Command c;
  if (cl_int rc = begin_command(q, n, wait, event, type, c); rc != CL_SUCCESS) return rc;
  if (auto key = direct_key(q, at, ptr, bytes)) {
    // Answered once the lanes have taken all of it: the pointer is the program's again (the
    // command completes later: its event, which the server reports after the answer).
    wire::ClDirectWrite w{c.cmd, mem->id, at.origin[0], bytes, *key, reinterpret_cast<uint64_t>(ptr)};
    std::shared_ptr<EventState> state = c.event ? c.event->state : nullptr;
    if (event) *event = c.event;
    if (!blocking) {  // the program keeps its memory until the event completes; the key until the answer
      q->channel().call_async(w, {}, nullptr, 0, [key, state, queue = q->id](Answer& a) mutable {
        if (a.status != CL_SUCCESS) write_failed(state, queue, a.status);
        key.reset();
      });
      return CL_SUCCESS;
    }
    Answer a = q->channel().call(w);
    if (a.status == client::opencl::kLost) {
      command_lost(c, event);
      return CL_OUT_OF_RESOURCES;
    }
    if (a.status != CL_SUCCESS) write_failed(state, q->id, a.status);
    return CL_SUCCESS;
  }
  // Blocking: returns once the data has left the program's memory (OpenCL: the pointer may be
  // reused). Non-blocking: the program keeps it until the command completes.
  return send_command(q, wire::ClWrite{c.cmd, mem->id, at}, c, event, Bytes{ptr, bytes}, blocking);
}

cl_int mem_properties(const cl_mem_properties* properties, std::vector<cl_mem_properties>& out) {
  if (!properties) return CL_SUCCESS;
  if (*properties != 0) return CL_INVALID_PROPERTY;
  out = {0};
  return CL_SUCCESS;
}

namespace {

wire::ClRegion linear(size_t offset, size_t size) {
  wire::ClRegion r;
  r.origin = {offset, 0, 0};
  r.region = {size, 1, 1};
  return r;
}

cl_int check_queue_mem(cl_command_queue q, cl_mem m) {
  if (!valid(q)) return CL_INVALID_COMMAND_QUEUE;
  if (!valid(m) || m->type != CL_MEM_OBJECT_BUFFER) return CL_INVALID_MEM_OBJECT;
  if (m->context != q->context) return CL_INVALID_CONTEXT;
  return CL_SUCCESS;
}

bool within(size_t offset, size_t size, size_t total) { return size <= total && offset <= total - size; }

// Memory of the ICD's for a buffer's mapping of `bytes`: the buffer's spare when large enough.
void* mapping_memory(cl_mem m, size_t bytes) {
  {
    std::lock_guard lk(m->mu);
    if (m->spare && m->spare_bytes >= bytes) {
      void* p = m->spare;
      m->spare = nullptr;
      return p;
    }
  }
  return std::aligned_alloc(128, (bytes + 127) / 128 * 128);
}

// A mapping of the ICD's memory is over: its memory becomes the buffer's spare (the larger one
// is kept).
void mapping_done(cl_mem m, void* p, size_t bytes) {
  std::unique_lock lk(m->mu);
  if (m->spare && m->spare_bytes >= bytes) {
    lk.unlock();
    std::free(p);
    return;
  }
  std::swap(p, m->spare);
  m->spare_bytes = bytes;
  lk.unlock();
  std::free(p);
}

// The bytes a rectangle touches in memory of the given pitches (0: tight), for bounds checks.
bool rect_within(const size_t* origin, const size_t* region, size_t row, size_t slice, size_t total) {
  if (!origin || !region || region[0] == 0 || region[1] == 0 || region[2] == 0) return false;
  if (row == 0) row = region[0];
  if (slice == 0) slice = row * region[1];
  if (row < region[0] || slice < row * region[1]) return false;
  const size_t first = origin[2] * slice + origin[1] * row + origin[0];
  const size_t last = first + (region[2] - 1) * slice + (region[1] - 1) * row + region[0];
  return last <= total && last > first;
}

wire::ClRegion rect(const size_t* origin, const size_t* region, size_t row, size_t slice) {
  wire::ClRegion r;
  for (int i = 0; i < 3; ++i) r.origin[i] = origin[i], r.region[i] = region[i];
  r.row_pitch = row;
  r.slice_pitch = slice;
  return r;
}

}  // namespace

cl_mem CL_API_CALL Api::clCreateBuffer(cl_context context, cl_mem_flags flags, size_t size, void* host_ptr,
                                       cl_int* errcode_ret) {
  if (!valid(context)) return fail_with<cl_mem>(CL_INVALID_CONTEXT, errcode_ret);
  if (flags == 0) flags = CL_MEM_READ_WRITE;
  if (cl_int rc = check_mem_flags(flags); rc != CL_SUCCESS) return fail_with<cl_mem>(rc, errcode_ret);
  if (size == 0) return fail_with<cl_mem>(CL_INVALID_BUFFER_SIZE, errcode_ret);
  for (cl_device_id d : context->devices) {
    const auto max = d->value<cl_ulong>(CL_DEVICE_MAX_MEM_ALLOC_SIZE, 0);
    if (max && size > max) return fail_with<cl_mem>(CL_INVALID_BUFFER_SIZE, errcode_ret);
  }
  const bool with_data = (flags & (CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR)) != 0;
  if (with_data != (host_ptr != nullptr)) return fail_with<cl_mem>(CL_INVALID_HOST_PTR, errcode_ret);
  auto* m = new _cl_mem;
  m->context = context;
  m->id = new_id();
  m->flags = flags;
  m->size = size;
  if (flags & CL_MEM_USE_HOST_PTR) m->host_ptr = host_ptr;
  // The initial contents leave the program's memory before this returns (it may free them).
  if (!context->channel().post(wire::ClCreateBuffer{m->id, context->id, flags, size},
                               Bytes{with_data ? host_ptr : nullptr, with_data ? size : 0}, with_data)) {
    delete m;
    return fail_with<cl_mem>(CL_OUT_OF_RESOURCES, errcode_ret);
  }
  context->retain();
  registry_add(m);
  return fail_with<cl_mem>(CL_SUCCESS, errcode_ret, m);
}

cl_mem CL_API_CALL Api::clCreateSubBuffer(cl_mem buffer, cl_mem_flags flags, cl_buffer_create_type type,
                                          const void* info, cl_int* errcode_ret) {
  if (!valid(buffer) || buffer->type != CL_MEM_OBJECT_BUFFER || buffer->parent)
    return fail_with<cl_mem>(CL_INVALID_MEM_OBJECT, errcode_ret);
  if (type != CL_BUFFER_CREATE_TYPE_REGION || !info) return fail_with<cl_mem>(CL_INVALID_VALUE, errcode_ret);
  if (flags & (CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR))
    return fail_with<cl_mem>(CL_INVALID_VALUE, errcode_ret);
  if (cl_int rc = check_mem_flags(flags); rc != CL_SUCCESS) return fail_with<cl_mem>(rc, errcode_ret);
  // Access the parent does not allow is refused (OpenCL 1.2, 5.2.1).
  if (((buffer->flags & CL_MEM_WRITE_ONLY) && (flags & (CL_MEM_READ_WRITE | CL_MEM_READ_ONLY))) ||
      ((buffer->flags & CL_MEM_READ_ONLY) && (flags & (CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY))))
    return fail_with<cl_mem>(CL_INVALID_VALUE, errcode_ret);
  if (!(flags & kAccess)) flags |= buffer->flags & kAccess;
  if (!(flags & kHostAccess)) flags |= buffer->flags & kHostAccess;
  const auto* region = static_cast<const cl_buffer_region*>(info);
  if (region->size == 0) return fail_with<cl_mem>(CL_INVALID_BUFFER_SIZE, errcode_ret);
  if (!within(region->origin, region->size, buffer->size)) return fail_with<cl_mem>(CL_INVALID_VALUE, errcode_ret);
  bool aligned = false;
  for (cl_device_id d : buffer->context->devices) {
    const cl_uint bits = d->value<cl_uint>(CL_DEVICE_MEM_BASE_ADDR_ALIGN, 8);
    if (region->origin % std::max<cl_uint>(bits / 8, 1) == 0) aligned = true;
  }
  if (!aligned) return fail_with<cl_mem>(CL_MISALIGNED_SUB_BUFFER_OFFSET, errcode_ret);
  auto* m = new _cl_mem;
  m->context = buffer->context;
  m->id = new_id();
  m->flags = flags | (buffer->flags & (CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR));
  m->size = region->size;
  m->parent = buffer;
  m->origin = region->origin;
  if (buffer->host_ptr) m->host_ptr = static_cast<char*>(buffer->host_ptr) + region->origin;
  if (!buffer->channel().post(wire::ClCreateSubBuffer{m->id, buffer->id, flags, region->origin, region->size})) {
    delete m;
    return fail_with<cl_mem>(CL_OUT_OF_RESOURCES, errcode_ret);
  }
  buffer->retain();
  buffer->context->retain();
  registry_add(m);
  return fail_with<cl_mem>(CL_SUCCESS, errcode_ret, m);
}

cl_mem CL_API_CALL Api::clCreateBufferWithProperties(cl_context context, const cl_mem_properties* properties,
                                                     cl_mem_flags flags, size_t size, void* host_ptr,
                                                     cl_int* errcode_ret) {
  if (!valid(context)) return fail_with<cl_mem>(CL_INVALID_CONTEXT, errcode_ret);
  std::vector<cl_mem_properties> list;
  if (cl_int rc = mem_properties(properties, list); rc != CL_SUCCESS) return fail_with<cl_mem>(rc, errcode_ret);
  cl_mem m = clCreateBuffer(context, flags, size, host_ptr, errcode_ret);
  if (m) m->property_list = std::move(list);
  return m;
}

cl_int CL_API_CALL Api::clRetainMemObject(cl_mem memobj) {
  if (!valid(memobj)) return CL_INVALID_MEM_OBJECT;
  memobj->retain();
  return CL_SUCCESS;
}

void release_mem(cl_mem m) {
  if (!m->release()) return;
  registry_remove(m);
  m->channel().post(wire::ClRelease{m->id});
  // Destructor callbacks in reverse order of registration (OpenCL 1.2, 5.4.1).
  for (auto it = m->destructors.rbegin(); it != m->destructors.rend(); ++it) {
    auto fn = it->first;
    void* data = it->second;
    run_callback([fn, m, data] { fn(m, data); });
  }
  std::free(m->spare);
  cl_mem parent = m->parent;
  cl_context context = m->context;
  if (m->destructors.empty()) {
    delete m;
  } else {
    run_callback([m] { delete m; });  // after its callbacks, which receive the handle
  }
  if (parent) release_mem(parent);
  release_context(context);
}

cl_int CL_API_CALL Api::clReleaseMemObject(cl_mem memobj) {
  if (!valid(memobj)) return CL_INVALID_MEM_OBJECT;
  release_mem(memobj);
  return CL_SUCCESS;
}

cl_int CL_API_CALL Api::clGetMemObjectInfo(cl_mem m, cl_mem_info param_name, size_t param_value_size, void* param_value,
                                           size_t* param_value_size_ret) {
  if (!valid(m)) return CL_INVALID_MEM_OBJECT;
  auto n = param_value_size;
  auto p = param_value;
  auto r = param_value_size_ret;
  switch (param_name) {
    case CL_MEM_TYPE: return answer_value(m->type, n, p, r);
    case CL_MEM_FLAGS: return answer_value(m->flags, n, p, r);
    case CL_MEM_SIZE: return answer_value(m->size, n, p, r);
    case CL_MEM_HOST_PTR: return answer_value(m->host_ptr, n, p, r);
    case CL_MEM_MAP_COUNT: return answer_value(m->map_count, n, p, r);
    case CL_MEM_REFERENCE_COUNT: return answer_value(m->refs.load(), n, p, r);
    case CL_MEM_CONTEXT: return answer_value(m->context, n, p, r);
    case CL_MEM_ASSOCIATED_MEMOBJECT: return answer_value(m->parent, n, p, r);
    case CL_MEM_OFFSET: return answer_value(m->origin, n, p, r);
    case CL_MEM_USES_SVM_POINTER: return answer_value(cl_bool(CL_FALSE), n, p, r);
    case CL_MEM_PROPERTIES:
      return answer(m->property_list.data(), m->property_list.size() * sizeof(cl_mem_properties), n, p, r);
    default: return CL_INVALID_VALUE;
  }
}

cl_int CL_API_CALL Api::clSetMemObjectDestructorCallback(cl_mem m, void(CL_CALLBACK* pfn_notify)(cl_mem, void*),
                                                         void* user_data) {
  if (!valid(m)) return CL_INVALID_MEM_OBJECT;
  if (!pfn_notify) return CL_INVALID_VALUE;
  std::lock_guard lk(m->mu);
  m->destructors.push_back({pfn_notify, user_data});
  return CL_SUCCESS;
}

cl_int CL_API_CALL Api::clEnqueueReadBuffer(cl_command_queue q, cl_mem buffer, cl_bool blocking_read, size_t offset,
                                            size_t size, void* ptr, cl_uint n, const cl_event* wait, cl_event* event) {
  if (cl_int rc = check_queue_mem(q, buffer); rc != CL_SUCCESS) return rc;
  if (!ptr || size == 0 || !within(offset, size, buffer->size)) return CL_INVALID_VALUE;
  if (buffer->flags & (CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_NO_ACCESS)) return CL_INVALID_OPERATION;
  return read_into(q, buffer, linear(offset, size), ptr, size, blocking_read, n, wait, event, CL_COMMAND_READ_BUFFER);
}

cl_int CL_API_CALL Api::clEnqueueWriteBuffer(cl_command_queue q, cl_mem buffer, cl_bool blocking_write, size_t offset,
                                             size_t size, const void* ptr, cl_uint n, const cl_event* wait,
                                             cl_event* event) {
  if (cl_int rc = check_queue_mem(q, buffer); rc != CL_SUCCESS) return rc;
  if (!ptr || size == 0 || !within(offset, size, buffer->size)) return CL_INVALID_VALUE;
  if (buffer->flags & (CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS)) return CL_INVALID_OPERATION;
  return write_from(q, buffer, linear(offset, size), ptr, size, blocking_write, n, wait, event, CL_COMMAND_WRITE_BUFFER);
}

// Rectangles travel packed: the program's host pitches are applied here, on its side.
cl_int CL_API_CALL Api::clEnqueueReadBufferRect(cl_command_queue q, cl_mem buffer, cl_bool blocking_read,
                                                const size_t* buffer_origin, const size_t* host_origin,
                                                const size_t* region, size_t buffer_row_pitch,
                                                size_t buffer_slice_pitch, size_t host_row_pitch,
                                                size_t host_slice_pitch, void* ptr, cl_uint n, const cl_event* wait,
                                                cl_event* event) {
  if (cl_int rc = check_queue_mem(q, buffer); rc != CL_SUCCESS) return rc;
  if (!ptr || !host_origin || !rect_within(buffer_origin, region, buffer_row_pitch, buffer_slice_pitch, buffer->size))
    return CL_INVALID_VALUE;
  const size_t packed = region[0] * region[1] * region[2];
  const size_t hrow = host_row_pitch ? host_row_pitch : region[0];
  const size_t hslice = host_slice_pitch ? host_slice_pitch : hrow * region[1];
  if (hrow < region[0] || hslice < hrow * region[1]) return CL_INVALID_VALUE;
  // Packed results land in a buffer of the ICD's, then go to their place in the program's memory.
  auto staging = std::make_shared<std::vector<char>>(packed);
  cl_event mine = nullptr;
  cl_int rc = read_into(q, buffer, rect(buffer_origin, region, buffer_row_pitch, buffer_slice_pitch), staging->data(),
                        packed, true, n, wait, &mine, CL_COMMAND_READ_BUFFER_RECT);
  if (rc != CL_SUCCESS) return rc;
  char* out = static_cast<char*>(ptr) + host_origin[2] * hslice + host_origin[1] * hrow + host_origin[0];
  for (size_t z = 0; z < region[2]; ++z)
    for (size_t y = 0; y < region[1]; ++y)
      std::memcpy(out + z * hslice + y * hrow, staging->data() + (z * region[1] + y) * region[0], region[0]);
  if (event) *event = mine;
  else Api::clReleaseEvent(mine);
  (void)blocking_read;  // a rectangle read always completes before it returns
  return CL_SUCCESS;
}

cl_int CL_API_CALL Api::clEnqueueWriteBufferRect(cl_command_queue q, cl_mem buffer, cl_bool blocking_write,
                                                 const size_t* buffer_origin, const size_t* host_origin,
                                                 const size_t* region, size_t buffer_row_pitch,
                                                 size_t buffer_slice_pitch, size_t host_row_pitch,
                                                 size_t host_slice_pitch, const void* ptr, cl_uint n,
                                                 const cl_event* wait, cl_event* event) {
  if (cl_int rc = check_queue_mem(q, buffer); rc != CL_SUCCESS) return rc;
  if (!ptr || !host_origin || !rect_within(buffer_origin, region, buffer_row_pitch, buffer_slice_pitch, buffer->size))
    return CL_INVALID_VALUE;
  const size_t hrow = host_row_pitch ? host_row_pitch : region[0];
  const size_t hslice = host_slice_pitch ? host_slice_pitch : hrow * region[1];
  if (hrow < region[0] || hslice < hrow * region[1]) return CL_INVALID_VALUE;
  std::vector<char> packed(region[0] * region[1] * region[2]);
  const char* in = static_cast<const char*>(ptr) + host_origin[2] * hslice + host_origin[1] * hrow + host_origin[0];
  for (size_t z = 0; z < region[2]; ++z)
    for (size_t y = 0; y < region[1]; ++y)
      std::memcpy(packed.data() + (z * region[1] + y) * region[0], in + z * hslice + y * hrow, region[0]);
  (void)blocking_write;  // packed here: sent before it returns, so the program's memory is free at once
  return write_from(q, buffer, rect(buffer_origin, region, buffer_row_pitch, buffer_slice_pitch), packed.data(),
                    packed.size(), true, n, wait, event, CL_COMMAND_WRITE_BUFFER_RECT);
}

cl_int CL_API_CALL Api::clEnqueueCopyBuffer(cl_command_queue q, cl_mem src, cl_mem dst, size_t src_offset,
                                            size_t dst_offset, size_t size, cl_uint n, const cl_event* wait,
                                            cl_event* event) {
  if (cl_int rc = check_queue_mem(q, src); rc != CL_SUCCESS) return rc;
  if (cl_int rc = check_queue_mem(q, dst); rc != CL_SUCCESS) return rc;
  if (size == 0 || !within(src_offset, size, src->size) || !within(dst_offset, size, dst->size)) return CL_INVALID_VALUE;
  if (src == dst && src_offset < dst_offset + size && dst_offset < src_offset + size) return CL_MEM_COPY_OVERLAP;
  Command c;
  if (cl_int rc = begin_command(q, n, wait, event, CL_COMMAND_COPY_BUFFER, c); rc != CL_SUCCESS) return rc;
  return send_command(q, wire::ClCopy{c.cmd, src->id, dst->id, linear(src_offset, size), linear(dst_offset, size)}, c, event);
}

cl_int CL_API_CALL Api::clEnqueueCopyBufferRect(cl_command_queue q, cl_mem src, cl_mem dst, const size_t* src_origin,
                                                const size_t* dst_origin, const size_t* region, size_t src_row_pitch,
                                                size_t src_slice_pitch, size_t dst_row_pitch, size_t dst_slice_pitch,
                                                cl_uint n, const cl_event* wait, cl_event* event) {
  if (cl_int rc = check_queue_mem(q, src); rc != CL_SUCCESS) return rc;
  if (cl_int rc = check_queue_mem(q, dst); rc != CL_SUCCESS) return rc;
  if (!rect_within(src_origin, region, src_row_pitch, src_slice_pitch, src->size) ||
      !rect_within(dst_origin, region, dst_row_pitch, dst_slice_pitch, dst->size))
    return CL_INVALID_VALUE;
  Command c;
  if (cl_int rc = begin_command(q, n, wait, event, CL_COMMAND_COPY_BUFFER_RECT, c); rc != CL_SUCCESS) return rc;
  wire::ClCopy cp{c.cmd, src->id, dst->id, rect(src_origin, region, src_row_pitch, src_slice_pitch),
                  rect(dst_origin, region, dst_row_pitch, dst_slice_pitch)};
  return send_command(q, cp, c, event);
}

cl_int CL_API_CALL Api::clEnqueueFillBuffer(cl_command_queue q, cl_mem buffer, const void* pattern, size_t pattern_size,
                                            size_t offset, size_t size, cl_uint n, const cl_event* wait,
                                            cl_event* event) {
  if (cl_int rc = check_queue_mem(q, buffer); rc != CL_SUCCESS) return rc;
  if (!pattern || pattern_size == 0 || pattern_size > 128 || (pattern_size & (pattern_size - 1)) ||
      offset % pattern_size || size % pattern_size || size == 0 || !within(offset, size, buffer->size))
    return CL_INVALID_VALUE;
  Command c;
  if (cl_int rc = begin_command(q, n, wait, event, CL_COMMAND_FILL_BUFFER, c); rc != CL_SUCCESS) return rc;
  wire::ClBlob bytes(pattern_size);
  std::memcpy(bytes.data(), pattern, pattern_size);
  return send_command(q, wire::ClFill{c.cmd, buffer->id, bytes, linear(offset, size)}, c, event);
}

void* CL_API_CALL Api::clEnqueueMapBuffer(cl_command_queue q, cl_mem buffer, cl_bool blocking_map, cl_map_flags flags,
                                          size_t offset, size_t size, cl_uint n, const cl_event* wait, cl_event* event,
                                          cl_int* errcode_ret) {
  if (cl_int rc = check_queue_mem(q, buffer); rc != CL_SUCCESS) return fail_with<void*>(rc, errcode_ret);
  if (size == 0 || !within(offset, size, buffer->size)) return fail_with<void*>(CL_INVALID_VALUE, errcode_ret);
  const cl_map_flags known = CL_MAP_READ | CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION;
  if ((flags & ~known) || ((flags & CL_MAP_WRITE_INVALIDATE_REGION) && (flags & (CL_MAP_READ | CL_MAP_WRITE))))
    return fail_with<void*>(CL_INVALID_VALUE, errcode_ret);
  _cl_mem::Mapping mapping;
  mapping.offset = offset;
  mapping.bytes = size;
  mapping.write = (flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION)) != 0;
  void* ptr;
  if (buffer->host_ptr) {
    ptr = static_cast<char*>(buffer->host_ptr) + offset;
  } else {
    ptr = mapping_memory(buffer, size);
    if (!ptr) return fail_with<void*>(CL_MAP_FAILURE, errcode_ret);
    mapping.owned = true;
  }
  cl_int rc;
  if (flags & CL_MAP_WRITE_INVALIDATE_REGION) {
    rc = clEnqueueMarkerWithWaitList(q, n, wait, event);  // nothing to read: the program overwrites it
    if (rc == CL_SUCCESS && event && *event) (*event)->command = CL_COMMAND_MAP_BUFFER;
  } else {
    // A non-blocking map keeps an event of its read for the unmap (the program's, retained, or
    // one of the ICD's own).
    cl_event own = nullptr;
    cl_event* tracked = blocking_map ? event : (event ? event : &own);
    rc = read_into(q, buffer, linear(offset, size), ptr, size, blocking_map, n, wait, tracked, CL_COMMAND_MAP_BUFFER);
    if (rc == CL_SUCCESS && !blocking_map && *tracked) {
      mapping.pending = *tracked;
      if (tracked == event) clRetainEvent(*event);
    }
  }
  if (rc != CL_SUCCESS) {
    if (mapping.owned) mapping_done(buffer, ptr, size);
    return fail_with<void*>(rc, errcode_ret);
  }
  std::lock_guard lk(buffer->mu);
  buffer->mappings.emplace(ptr, mapping);
  buffer->map_count++;
  return fail_with<void*>(CL_SUCCESS, errcode_ret, ptr);
}

cl_int CL_API_CALL Api::clEnqueueUnmapMemObject(cl_command_queue q, cl_mem memobj, void* mapped_ptr, cl_uint n,
                                                const cl_event* wait, cl_event* event) {
  if (!valid(q)) return CL_INVALID_COMMAND_QUEUE;
  if (!valid(memobj)) return CL_INVALID_MEM_OBJECT;
  if (memobj->context != q->context) return CL_INVALID_CONTEXT;
  _cl_mem::Mapping mapping;
  {
    std::lock_guard lk(memobj->mu);
    auto it = memobj->mappings.find(mapped_ptr);
    if (it == memobj->mappings.end()) return CL_INVALID_VALUE;
    mapping = it->second;
    memobj->mappings.erase(it);
    memobj->map_count--;
  }
  if (memobj->type != CL_MEM_OBJECT_BUFFER) return unmap_image(q, memobj, mapped_ptr, mapping, n, wait, event);
  if (mapping.pending) {  // the map's data may still be landing in mapped_ptr
    clWaitForEvents(1, &mapping.pending);
    clReleaseEvent(mapping.pending);
  }
  cl_int rc;
  if (mapping.write) {
    // Sent before this returns, so the ICD's memory can go at once.
    rc = write_from(q, memobj, linear(mapping.offset, mapping.bytes), mapped_ptr, mapping.bytes, true, n, wait, event,
                    CL_COMMAND_UNMAP_MEM_OBJECT);
  } else {
    rc = clEnqueueMarkerWithWaitList(q, n, wait, event);
    if (rc == CL_SUCCESS && event && *event) (*event)->command = CL_COMMAND_UNMAP_MEM_OBJECT;
  }
  if (mapping.owned) mapping_done(memobj, mapped_ptr, mapping.bytes);
  return rc;
}

cl_int CL_API_CALL Api::clEnqueueMigrateMemObjects(cl_command_queue q, cl_uint num_mem_objects, const cl_mem* mem_objects,
                                                   cl_mem_migration_flags flags, cl_uint n, const cl_event* wait,
                                                   cl_event* event) {
  if (!valid(q)) return CL_INVALID_COMMAND_QUEUE;
  if (num_mem_objects == 0 || !mem_objects) return CL_INVALID_VALUE;
  if (flags & ~cl_mem_migration_flags(CL_MIGRATE_MEM_OBJECT_HOST | CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED))
    return CL_INVALID_VALUE;
  wire::ClIds ids;
  for (cl_uint i = 0; i < num_mem_objects; ++i) {
    if (!valid(mem_objects[i])) return CL_INVALID_MEM_OBJECT;
    if (mem_objects[i]->context != q->context) return CL_INVALID_CONTEXT;
    ids.push_back(mem_objects[i]->id);
  }
  Command c;
  if (cl_int rc = begin_command(q, n, wait, event, CL_COMMAND_MIGRATE_MEM_OBJECTS, c); rc != CL_SUCCESS) return rc;
  return send_command(q, wire::ClMigrate{c.cmd, ids, flags}, c, event);
}

}  // namespace outboard::opencl
