#include "backends/cuda/gpu_pipeline.hpp"

#include "common/error.hpp"

namespace outboard::backends {

namespace {
enum Stream { in, compute, out };
}  // namespace

class GpuPipeline final : public server::Pipeline {
 public:
  GpuPipeline(GpuResources& r, server::Plan plan, std::byte* staging, std::byte* device)
      : r_(r), api_(r.plugin_.api()), plan_(std::move(plan)), staging_(staging), device_(device) {}

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
    if (prefix > uploaded_) {
      Upload u{r_.event(), r_.event()};
      uploads_.push_back(u);
      check(api_.event_record(u.start, r_.streams_[in]), "event");
      check(api_.memcpy_async(OUTBOARD_CUDA_H2D, device_ + uploaded_, staging_ + uploaded_, prefix - uploaded_,
                              r_.streams_[in]),
            "copying input to the GPU");
      check(api_.event_record(u.end, r_.streams_[in]), "event");
      uploaded_ = prefix;
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
      out.push_back(b.block);
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

  // Enqueues every block whose input is (being) copied: the compute stream waits for the last
  // upload, the out stream for the block's computation.
  void launch_ready() {
    while (next_ < plan_.blocks.size() && plan_.blocks[next_].input_needed <= uploaded_) {
      const server::Block& b = plan_.blocks[next_];
      Launched l{next_, {r_.event(), r_.event(), r_.event(), r_.event()}};
      launched_.push_back(l);
      ++next_;
      if (!uploads_.empty()) check(api_.stream_wait_event(r_.streams_[compute], uploads_.back().end), "ordering");
      check(api_.event_record(l.events[0], r_.streams_[compute]), "event");
      outboard_cuda_level3 call = plugin_call(b.call);
      server::BlockOperands o = server::block_operands(b, device_);
      const bool trmm = b.call.routine == wire::Routine::trmm;
      std::byte* out2 = trmm ? device_ + plan_.staging_bytes + b.result_offset : nullptr;
      check(api_.level3_async(&call, o.inputs[0], o.count > 1 && o.inputs[1] != o.output ? o.inputs[1] : nullptr,
                              o.output, out2, r_.streams_[compute]),
            wire::call_name(b.call).c_str());
      check(api_.event_record(l.events[1], r_.streams_[compute]), "event");
      check(api_.stream_wait_event(r_.streams_[out], l.events[1]), "ordering");
      check(api_.event_record(l.events[2], r_.streams_[out]), "event");
      const std::byte* result = trmm ? out2 : o.output;
      check(api_.memcpy_async(OUTBOARD_CUDA_D2H, staging_ + b.out_offset, result, b.out_bytes, r_.streams_[out]),
            "copying a result from the GPU");
      check(api_.event_record(l.events[3], r_.streams_[out]), "event");
    }
  }

  GpuResources& r_;
  const outboard_cuda_api_v1& api_;
  server::Plan plan_;
  std::byte* staging_;
  std::byte* device_;
  uint64_t uploaded_ = 0;
  std::vector<Upload> uploads_;
  std::vector<Launched> launched_;
  size_t next_ = 0, reported_ = 0, timed_uploads_ = 0;
  uint64_t to_device_ns_ = 0, compute_ns_ = 0, from_device_ns_ = 0;
};

GpuResources::~GpuResources() {
  const auto& api = plugin_.api();
  for (void* e : free_events_) api.event_destroy(e);
  for (void* s : streams_)
    if (s) api.stream_destroy(s);
  if (memory_) api.device_free(memory_);
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
    // separate result.
    const bool trmm = !plan.blocks.empty() && plan.blocks[0].call.routine == wire::Routine::trmm;
    const size_t bytes = plan.staging_bytes + (trmm ? plan.output_bytes : 0);
    auto* device = static_cast<std::byte*>(reserve(bytes));
    return std::make_unique<GpuPipeline>(*this, plan, staging, device);
  } catch (...) {
    busy_.store(false);
    throw;
  }
}

}  // namespace outboard::backends
