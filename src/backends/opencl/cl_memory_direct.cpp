// Buffer transfers on the direct path: the server copies between the device and the client's
// memory itself (direct_transfer.hpp).
#include "backends/opencl/cl_session.hpp"
#include "backends/opencl/direct_transfer.hpp"

namespace outboard::backends::opencl {

template <class Op>
void ClSession::direct(const wire::ClRequest& r, const Op& d, bool write, ClId& event) {
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

void ClSession::read_in_pieces(const wire::ClRequest& r, const wire::ClRead& rd, cl_command_queue q, Object& o,
                               uint64_t bytes) {
  DirectTransfer t;
  t.queue = q;
  check(clGetCommandQueueInfo(q, CL_QUEUE_CONTEXT, sizeof t.context, &t.context, nullptr), "the queue's context");
  t.mem = static_cast<cl_mem>(o.handle);
  t.offset = rd.at.origin[0];
  t.bytes = bytes;
  t.wait = wait_list(rd.cmd.wait);
  t.region.key = r.call_id;  // the pieces' call (reply_pieces.hpp); their offsets from 0
  t.call_id = r.call_id;
  t.event = rd.cmd.event;
  t.pieces = true;
  t.mover = mover(q);
  cl_event end = nullptr;
  try {
    end = direct_transfer({out_, reply_pieces_, staging_, &counters_, &waiter_, outstanding_}, t);
  } catch (const DirectFail& f) {
    throw ClFail{f.code, f.what + " failed: " + cl_error_name(f.code)};
  }
  if (rd.cmd.event) insert(rd.cmd.event, Object{Kind::event, end});
  else clReleaseEvent(end);
}

cl_command_queue ClSession::mover(cl_command_queue q) {
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

void ClSession::handle(const wire::ClRequest& r, const wire::ClDirectRead& d, transport::Buffer&, ClId&, ClId& event) {
  direct(r, d, false, event);
}

void ClSession::handle(const wire::ClRequest& r, const wire::ClDirectWrite& d, transport::Buffer&, ClId&, ClId& event) {
  direct(r, d, true, event);
}

}  // namespace outboard::backends::opencl
