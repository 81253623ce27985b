#include "backends/cuda/gpu_pipeline.hpp"

#include "common/error.hpp"

namespace outboard::backends {

namespace {
enum Stream { in, compute, out };
}  // namespace

// How the call's operands sit in device memory: a mirror of the staging buffer, or, for calls
// larger than the device memory the server may use, A followed by a ring of `slots` block slots
// (a block's B columns, its C columns, and trmm's separate result), reused once their result has
// been copied out.
struct DeviceLayout {
  bool tiled = false;
  uint64_t a_bytes = 0;
  size_t slots = 0;
  uint64_t slot_bytes = 0;
};

namespace {
// cuBLAS's trmm writes its result aside (faster than in place), into room after the mirror; the
// blocks of a substitution order work in place, as the plan reads them.
bool trmm_aside(const server::Plan& p) {
  return !p.blocks.empty() && p.blocks[0].call.routine == wire::Routine::trmm &&
         p.order != server::BlockOrder::substitution;
}
// Tiling gives each block a slot with its own B and C columns: for independent column blocks on
// packed operands only.
bool tileable(const server::Plan& p) {
  if (p.order != server::BlockOrder::columns) return false;
  for (const auto& b : p.blocks)
    if (b.ld.a || b.ld.b || b.ld.out || b.piece < 0) return false;
  return true;
}
bool has_b(const wire::Level3Call& c) {
  return wire::layout(c).inputs.size() - (c.output_sent ? 1 : 0) > 1;
}
// Bytes of a block's B columns.
uint64_t b_bytes(const server::Block& b) {
  if (!has_b(b.call)) return 0;
  const wire::Operand o = wire::layout(b.call).inputs[1];
  return static_cast<uint64_t>(o.rows) * static_cast<uint64_t>(o.cols) * wire::element_bytes(b.call.scalar);
}
}  // namespace

class GpuPipeline final : public server::Pipeline {
 public:
  GpuPipeline(GpuResources& r, server::Plan plan, std::byte* staging, std::byte* device, DeviceLayout layout)
      : r_(r), api_(r.plugin_.api()), plan_(std::move(plan)), staging_(staging), device_(device), layout_(layout) {
    // An output that is not sent starts as zeros, as in the staging buffer: the rank updates
    // write one triangle, and the rest of the mirror must not carry back what an earlier call
    // (perhaps another client's) left in this device memory.
    if (!layout_.tiled && plan_.output_offset >= plan_.input_bytes && plan_.output_bytes)
      check(api_.fill(device_ + plan_.output_offset, 0, plan_.output_bytes, r_.streams_[compute]),
            "clearing the result's GPU memory");
  }

  ~GpuPipeline() override {
    // The copies use the staging buffer: let them end before it goes.
    api_.set_device(r_.device_);
    for (void* s : r_.streams_) api_.stream_sync(s);
    for (auto& u : uploads_) r_.recycle(u.start), r_.recycle(u.end);
    for (auto& b : launched_)
      for (void* e : b.events) r_.recycle(e);
    r_.busy_.store(false);
  }

  void input(uint64_t prefix) override {
    check(api_.set_device(r_.device_), "selecting the GPU");  // one progress thread serves every GPU
    arrived_ = prefix;
    // Mirrored: all that arrived; tiled: A as it arrives (blocks upload their own columns).
    const uint64_t upto = layout_.tiled ? std::min(prefix, layout_.a_bytes) : prefix;
    if (upto > uploaded_) {
      upload(device_ + uploaded_, staging_ + uploaded_, upto - uploaded_);
      uploaded_ = upto;
    }
    launch_ready();
  }

  std::vector<size_t> finished() override {
    std::vector<size_t> out;
    if (reported_ == launched_.size() && timed_uploads_ == uploads_.size()) return out;
    check(api_.set_device(r_.device_), "selecting the GPU");
    while (reported_ < launched_.size()) {
      Launched& b = launched_[reported_];
      int done = 0;
      check(api_.event_query(b.events[3], &done), "waiting for a block");
      if (!done) break;
      float ms = 0;
      check(api_.event_elapsed(b.events[0], b.events[1], &ms), "timing");
      compute_ns_ += static_cast<uint64_t>(ms * 1e6);
      check(api_.event_elapsed(b.events[2], b.events[3], &ms), "timing");
      from_device_ns_ += static_cast<uint64_t>(ms * 1e6);
      if (const int64_t piece = plan_.blocks[b.block].piece; piece >= 0) out.push_back(static_cast<size_t>(piece));
      ++reported_;
    }
    // Uploads end in order; time those done.
    while (timed_uploads_ < uploads_.size()) {
      Upload& u = uploads_[timed_uploads_];
      int done = 0;
      check(api_.event_query(u.end, &done), "waiting for a copy");
      if (!done) break;
      float ms = 0;
      check(api_.event_elapsed(u.start, u.end, &ms), "timing");
      to_device_ns_ += static_cast<uint64_t>(ms * 1e6);
      ++timed_uploads_;
    }
    return out;
  }

  uint64_t to_device_ns() const override { return to_device_ns_; }
  uint64_t compute_ns() const override { return compute_ns_; }
  uint64_t from_device_ns() const override { return from_device_ns_; }
  bool needs_polling() const override { return reported_ < plan_.blocks.size(); }

 private:
  struct Upload {
    void* start;
    void* end;
  };
  struct Launched {
    size_t block;
    void* events[4];  // compute start, compute end, copy-out start, copy-out end
  };

  void check(int code, const char* what) const { r_.plugin_.check(code, what); }

  void upload(std::byte* to, const std::byte* from, uint64_t bytes) {
    Upload u{r_.event(), r_.event()};
    uploads_.push_back(u);
    check(api_.event_record(u.start, r_.streams_[in]), "event");
    check(api_.memcpy_async(OUTBOARD_CUDA_H2D, to, from, bytes, r_.streams_[in]), "copying input to the GPU");
    check(api_.event_record(u.end, r_.streams_[in]), "event");
  }

  // Device operands of block `index`: in the mirror, or in its slot (its columns copied there once
  // the slot's previous block has been copied out). out2: where trmm writes (its output if in place).
  server::BlockOperands device_operands(size_t index, std::byte** out2) {
    const server::Block& b = plan_.blocks[index];
    const bool trmm = b.call.routine == wire::Routine::trmm, aside = trmm_aside(plan_);
    if (!layout_.tiled) {
      server::BlockOperands o = server::block_operands(b, device_);
      *out2 = !trmm ? nullptr : aside ? device_ + plan_.staging_bytes + plan_.pieces[b.piece].result_offset : o.output;
      return o;
    }
    const uint64_t out_bytes = plan_.pieces[b.piece].bytes;
    std::byte* slot = device_ + layout_.a_bytes + (index % layout_.slots) * layout_.slot_bytes;
    if (index >= layout_.slots)
      check(api_.stream_wait_event(r_.streams_[in], launched_[index - layout_.slots].events[3]), "ordering");
    const uint64_t bb = b_bytes(b);
    if (bb) upload(slot, staging_ + b.b_offset, bb);
    if (b.call.output_sent) upload(slot + bb, staging_ + b.out_offset, out_bytes);
    *out2 = trmm ? slot + bb + out_bytes : nullptr;
    server::BlockOperands o{{device_, nullptr, nullptr}, 1, slot + bb, {}};
    if (bb) o.inputs[o.count++] = slot;
    if (b.call.output_sent) o.inputs[o.count++] = o.output;
    return o;
  }

  // Enqueues every block whose input is (being) copied: the compute stream waits for the last
  // upload, the out stream for the block's computation.
  void launch_ready() {
    const uint64_t ready = layout_.tiled ? arrived_ : uploaded_;
    while (next_ < plan_.blocks.size() && plan_.blocks[next_].input_needed <= ready) {
      const server::Block& b = plan_.blocks[next_];
      std::byte* out2 = nullptr;
      server::BlockOperands o = device_operands(next_, &out2);
      Launched l{next_, {r_.event(), r_.event(), r_.event(), r_.event()}};
      launched_.push_back(l);
      ++next_;
      if (!uploads_.empty()) check(api_.stream_wait_event(r_.streams_[compute], uploads_.back().end), "ordering");
      check(api_.event_record(l.events[0], r_.streams_[compute]), "event");
      outboard_cuda_level3 call = plugin_call(b.call, o.ld);
      check(api_.level3_async(&call, o.inputs[0], o.count > 1 && o.inputs[1] != o.output ? o.inputs[1] : nullptr,
                              o.output, out2, r_.streams_[compute]),
            wire::call_name(b.call).c_str());
      check(api_.event_record(l.events[1], r_.streams_[compute]), "event");
      check(api_.stream_wait_event(r_.streams_[out], l.events[1]), "ordering");
      check(api_.event_record(l.events[2], r_.streams_[out]), "event");
      if (b.piece >= 0) {  // the piece is complete: all blocks before ran on the compute stream
        const server::ResultPiece& p = plan_.pieces[b.piece];
        const std::byte* result = out2 && trmm_aside(plan_) ? out2 : layout_.tiled ? o.output : device_ + p.staging_offset;
        check(api_.memcpy_async(OUTBOARD_CUDA_D2H, staging_ + p.staging_offset, result, p.bytes, r_.streams_[out]),
              "copying a result from the GPU");
      }
      check(api_.event_record(l.events[3], r_.streams_[out]), "event");
    }
  }

  GpuResources& r_;
  const outboard_cuda_api_v1& api_;
  server::Plan plan_;
  std::byte* staging_;
  std::byte* device_;
  DeviceLayout layout_;
  uint64_t uploaded_ = 0, arrived_ = 0;
  std::vector<Upload> uploads_;
  std::vector<Launched> launched_;
  size_t next_ = 0, reported_ = 0, timed_uploads_ = 0;
  uint64_t to_device_ns_ = 0, compute_ns_ = 0, from_device_ns_ = 0;
};

void GpuResources::abandon() {
  free_events_.clear();
  for (void*& s : streams_) s = nullptr;
  memory_ = nullptr;
  capacity_ = 0;
}

GpuResources::~GpuResources() {
  if (!memory_ && !streams_[0] && free_events_.empty()) return;
  plugin_.free_on(device_, [&] {  // on this GPU, whichever thread ends us
    const auto& api = plugin_.api();
    for (void* e : free_events_) api.event_destroy(e);
    for (void* s : streams_)
      if (s) api.stream_destroy(s);
    if (memory_) api.device_free(memory_);
  });
}

void* GpuResources::event() {
  if (!free_events_.empty()) {
    void* e = free_events_.back();
    free_events_.pop_back();
    return e;
  }
  void* e = nullptr;
  plugin_.check(plugin_.api().event_create(&e), "creating a CUDA event");
  return e;
}

void GpuResources::recycle(void* event) {
  if (event) free_events_.push_back(event);
}

void* GpuResources::reserve(size_t bytes) {
  const auto& api = plugin_.api();
  if (capacity_ < bytes) {
    if (memory_) api.device_free(memory_);
    memory_ = nullptr;
    capacity_ = 0;
    plugin_.check(api.device_alloc(&memory_, bytes), "allocating GPU memory for a pipelined call");
    capacity_ = bytes;
  }
  return memory_;
}

std::unique_ptr<server::Pipeline> GpuResources::pipeline(const server::Plan& plan, std::byte* staging) {
  if (busy_.exchange(true)) return nullptr;
  try {
    plugin_.check(plugin_.api().set_device(device_), "selecting the GPU");
    for (void*& s : streams_)
      if (!s) plugin_.check(plugin_.api().stream_create(&s), "creating a CUDA stream");
    // Device memory mirrors the staging buffer (inputs, then the output), plus room for trmm's
    // separate result; a call too large for that is tiled (DeviceLayout).
    const bool trmm = trmm_aside(plan);
    DeviceLayout layout;
    size_t bytes = plan.staging_bytes + (trmm ? plan.output_bytes : 0);
    if (bytes > budget_) {
      if (plan.blocks.size() < 2 || !tileable(plan))
        throw Error("the call needs " + std::to_string(bytes) + " bytes of GPU memory, more than the " +
                    std::to_string(budget_) + " this server uses, and cannot be tiled");
      layout.tiled = true;
      const wire::Level3Call& c = plan.blocks[0].call;
      const wire::Operand a = wire::layout(c).inputs[0];
      layout.a_bytes = static_cast<uint64_t>(a.rows) * static_cast<uint64_t>(a.cols) * wire::element_bytes(c.scalar);
      for (const auto& b : plan.blocks)
        layout.slot_bytes = std::max<uint64_t>(layout.slot_bytes, b_bytes(b) + plan.pieces[b.piece].bytes * (trmm ? 2 : 1));
      layout.slot_bytes = (layout.slot_bytes + 255) / 256 * 256;  // keep every slot aligned
      const uint64_t room = budget_ > layout.a_bytes ? budget_ - layout.a_bytes : 0;
      layout.slots = std::min<size_t>(plan.blocks.size(), room / layout.slot_bytes);
      if (layout.slots < 2)
        throw Error("the call's A (" + std::to_string(layout.a_bytes) + " bytes) and two blocks do not fit the " +
                    std::to_string(budget_) + " bytes of GPU memory this server uses");
      bytes = layout.a_bytes + layout.slots * layout.slot_bytes;
    }
    auto* device = static_cast<std::byte*>(reserve(bytes));
    return std::make_unique<GpuPipeline>(*this, plan, staging, device, layout);
  } catch (...) {
    busy_.store(false);
    throw;
  }
}

}  // namespace outboard::backends
