// Buffers and pipes, and the transfers, copies, fills and migrations of memory objects on the
// message path (the ICD's memory.cpp and pipe.cpp).
#include "backends/opencl/cl_session.hpp"

namespace outboard::backends::opencl {

void ClSession::handle(const wire::ClRequest& r, const wire::ClCreateBuffer& c, transport::Buffer& payload,
                       ClId& created, ClId&) {
  created = c.id;
  check_new(c.id);
  const Object& context = find(c.context, {Kind::context});
  enter_platform(context.platform);
  cl_context ctx = static_cast<cl_context>(context.handle);
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

void ClSession::handle(const wire::ClRequest&, const wire::ClCreateSubBuffer& c, transport::Buffer&, ClId& created,
                       ClId&) {
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

uint64_t ClSession::transfer_bytes(const Object& o, const wire::ClRegion& at) {
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

bool ClSession::is_linear(const wire::ClRegion& at) {
  return at.region[1] == 1 && at.region[2] == 1 && at.origin[1] == 0 && at.origin[2] == 0;
}

cl_event ClSession::enqueue_transfer(bool write, cl_command_queue q, const wire::ClCommand& cmd, Object& o,
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

void ClSession::handle(const wire::ClRequest& r, const wire::ClWrite& w, transport::Buffer& payload, ClId&,
                       ClId& event) {
  cl_command_queue q = begin_command(w.cmd, event);
  Object& o = find(w.mem, {Kind::mem, Kind::image});
  const uint64_t bytes = transfer_bytes(o, w.at);
  if (r.payload_bytes != bytes || payload.size() != bytes) throw ClFail{CL_INVALID_VALUE, "the data is not the region's size"};
  auto data = std::make_shared<transport::Buffer>(std::move(payload));
  std::shared_ptr<void> held = write_gate_->admit(bytes);  // given back once the write has completed
  cl_event e = enqueue_transfer(true, q, w.cmd, o, w.at, data->data());
  counters_.bytes_written += bytes;
  Callback c;
  c.call_id = r.call_id;
  c.data = std::move(data);
  c.held = std::move(held);
  track(e, w.cmd, std::move(c));
}

void ClSession::handle(const wire::ClRequest& r, const wire::ClRead& rd, transport::Buffer&, ClId&, ClId& event) {
  cl_command_queue q = begin_command(rd.cmd, event);
  if (!r.call_id) throw ClFail{CL_INVALID_VALUE, "a read is answered"};
  Object& o = find(rd.mem, {Kind::mem, Kind::image});
  const uint64_t bytes = transfer_bytes(o, rd.at);
  if (r.reply_over_lanes && o.kind == Kind::mem && is_linear(rd.at) && bytes >= kReadInPiecesBytes)
    return read_in_pieces(r, rd, q, o, bytes);
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

std::optional<transport::Buffer> ClSession::pinned_slot(cl_command_queue q, uint64_t bytes) {
  if (bytes > PinnedReads::kSlotBytes) return std::nullopt;
  auto it = pinned_.find(q);
  if (it == pinned_.end()) it = pinned_.emplace(q, PinnedReads::make(q)).first;  // null: not to be had
  return it->second ? it->second->take(bytes) : std::nullopt;
}

void ClSession::release_queue_helpers(cl_command_queue q) {
  pinned_.erase(q);  // reads in flight keep their slots' memory
  if (auto it = movers_.find(q); it != movers_.end()) {
    clReleaseCommandQueue(it->second);  // its commands in flight keep it until they are done
    movers_.erase(it);
  }
}

void ClSession::handle(const wire::ClRequest& r, const wire::ClCopy& c, transport::Buffer&, ClId&, ClId& event) {
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

void ClSession::handle(const wire::ClRequest& r, const wire::ClFill& f, transport::Buffer&, ClId&, ClId& event) {
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

void ClSession::handle(const wire::ClRequest& r, const wire::ClMigrate& m, transport::Buffer&, ClId&, ClId& event) {
  cl_command_queue q = begin_command(m.cmd, event);
  std::vector<cl_mem> mems;
  for (ClId id : m.mems) mems.push_back(static_cast<cl_mem>(find(id, {Kind::mem, Kind::image, Kind::pipe}).handle));
  auto wait = wait_list(m.cmd.wait);
  cl_event e = nullptr;
  check(clEnqueueMigrateMemObjects(q, static_cast<cl_uint>(mems.size()), mems.data(), m.flags, n(wait), p(wait), &e),
        "clEnqueueMigrateMemObjects");
  answer_when_done(e, r, m.cmd);
}

void ClSession::handle(const wire::ClRequest&, const wire::ClCreatePipe& c, transport::Buffer&, ClId& created, ClId&) {
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

}  // namespace outboard::backends::opencl
