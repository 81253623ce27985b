// Pipelined LAPACK calls on a GPU (server/lapack_pipeline.hpp): each chunk of input is copied to
// the device as soon as it has landed in page-locked staging memory; once the last one is there a
// thread of the pipeline's own runs the call with cuSOLVER on the device copies (the server's
// progress thread never waits for the GPU) and queues the result's pieces back, each sent as soon
// as its copy has ended.
#include <algorithm>
#include <atomic>
#include <mutex>
#include <string>
#include <thread>

#include "backends/cuda/gpu_pipeline.hpp"
#include "common/error.hpp"

namespace outboard::backends {

namespace {

enum Stream { in, compute, out };

// Where the arrays sit in device memory: in staging order, but each at a 256-byte boundary (the
// packed staging layout puts B right after ipiv, at any multiple of 4 bytes, which cuSOLVER's
// double and complex arrays must not be).
struct DeviceMap {
  std::vector<uint64_t> inputs, outputs;
  uint64_t bytes = 0;
};

DeviceMap device_map(const server::LapackPlan& p) {
  const wire::LapackLayout l = wire::layout(p.call);
  DeviceMap m;
  auto place = [&](const wire::LapackArray& a) {
    const uint64_t at = m.bytes;
    m.bytes = (at + wire::array_bytes(a, p.call.scalar) + 255) / 256 * 256;
    return at;
  };
  for (const auto& a : l.inputs) m.inputs.push_back(place(a));
  for (const auto& a : l.outputs) m.outputs.push_back(place(a));
  return m;
}

}  // namespace

class GpuLapackPipeline final : public server::Pipeline {
 public:
  // `device`: device memory for the arrays as `map` places them.
  GpuLapackPipeline(GpuResources& r, server::LapackPlan plan, std::byte* staging, std::byte* device, DeviceMap map)
      : r_(r), api_(r.plugin_.api()), plan_(std::move(plan)), staging_(staging), device_(device), map_(std::move(map)) {}

  ~GpuLapackPipeline() override {
    if (thread_.joinable()) thread_.join();
    // The copies use the staging buffer: let them end before it goes.
    api_.set_device(r_.device_);
    for (void* s : r_.streams_) api_.stream_sync(s);
    for (auto& u : uploads_) r_.recycle(u.start), r_.recycle(u.end);
    r_.recycle(out_start_);
    for (void* e : piece_done_) r_.recycle(e);
    r_.busy_.store(false);
  }

  void input(uint64_t prefix) override {
    check(api_.set_device(r_.device_), "selecting the GPU");  // one progress thread serves every GPU
    if (prefix > uploaded_) {
      Upload u{r_.event(), r_.event()};
      uploads_.push_back(u);
      void* s = r_.streams_[in];
      check(api_.event_record(u.start, s), "event");
      // The new bytes, array by array.
      for (size_t i = 0; i < map_.inputs.size(); ++i) {
        const uint64_t begin = plan_.input_offsets[i];
        const uint64_t end = i + 1 < map_.inputs.size() ? plan_.input_offsets[i + 1] : plan_.input_bytes;
        const uint64_t lo = std::max(begin, uploaded_), hi = std::min(end, prefix);
        if (lo < hi)
          check(api_.memcpy_async(OUTBOARD_CUDA_H2D, device_ + map_.inputs[i] + (lo - begin), staging_ + lo, hi - lo, s),
                "copying input to the GPU");
      }
      check(api_.event_record(u.end, s), "event");
      uploaded_ = prefix;
    }
    if (uploaded_ == plan_.input_bytes && !thread_.joinable()) {
      // Events for the thread, taken here: the free list is the progress thread's.
      out_start_ = r_.event();
      for (size_t i = 0; i < plan_.pieces.size(); ++i) piece_done_.push_back(r_.event());
      thread_ = std::thread([this] { run(); });
    }
  }

  std::vector<size_t> finished() override {
    std::vector<size_t> done;
    if (failed_.load(std::memory_order_acquire)) throw Error(error_);
    check(api_.set_device(r_.device_), "selecting the GPU");
    while (timed_uploads_ < uploads_.size()) {  // uploads end in order; time those done
      Upload& u = uploads_[timed_uploads_];
      int finished = 0;
      check(api_.event_query(u.end, &finished), "waiting for a copy");
      if (!finished) break;
      float ms = 0;
      check(api_.event_elapsed(u.start, u.end, &ms), "timing");
      to_device_ns_ += static_cast<uint64_t>(ms * 1e6);
      ++timed_uploads_;
    }
    if (!queued_.load(std::memory_order_acquire)) return done;
    while (reported_ < piece_done_.size()) {
      int finished = 0;
      check(api_.event_query(piece_done_[reported_], &finished), "waiting for a result copy");
      if (!finished) break;
      done.push_back(reported_++);
    }
    if (reported_ == piece_done_.size() && !piece_done_.empty() && from_device_ns_ == 0) {
      float ms = 0;
      check(api_.event_elapsed(out_start_, piece_done_.back(), &ms), "timing");
      from_device_ns_ = static_cast<uint64_t>(ms * 1e6);
    }
    return done;
  }

  uint64_t to_device_ns() const override { return to_device_ns_; }
  uint64_t compute_ns() const override { return queued_.load(std::memory_order_acquire) ? compute_ns_ : 0; }
  uint64_t from_device_ns() const override { return from_device_ns_; }
  int64_t info() const override { return queued_.load(std::memory_order_acquire) ? info_ : 0; }
  bool needs_polling() const override { return reported_ < plan_.pieces.size() && !failed_.load(); }

 private:
  struct Upload {
    void* start;
    void* end;
  };

  void check(int code, const char* what) const { r_.plugin_.check(code, what); }

  // The pipeline's thread: the call on the device copies, then the result's copies queued.
  void run() {
    try {
      check(api_.set_device(r_.device_), "selecting the GPU");
      check(api_.stream_sync(r_.streams_[in]), "copying input to the GPU");
      server::LapackArrays host = server::lapack_arrays(plan_, staging_);
      wire::check_inputs(plan_.call, host.inputs.data());
      // Outputs updated in place start from their input (on the device); the others from zeros.
      server::LapackArrays dev;
      for (uint64_t off : map_.inputs) dev.inputs.push_back(device_ + off);
      for (uint64_t off : map_.outputs) dev.outputs.push_back(device_ + off);
      const wire::LapackLayout l = wire::layout(plan_.call);
      for (size_t i = 0; i < l.outputs.size(); ++i) {
        const uint64_t bytes = wire::array_bytes(l.outputs[i], plan_.call.scalar);
        if (l.outputs[i].from_input >= 0)
          check(api_.memcpy_sync(OUTBOARD_CUDA_D2D, dev.outputs[i], dev.inputs[l.outputs[i].from_input], bytes, nullptr),
                "copying on the GPU");
        else
          check(api_.fill(dev.outputs[i], 0, bytes, nullptr), "clearing GPU memory");
      }
      check(api_.stream_sync(nullptr), "copying on the GPU");
      const outboard_cuda_lapack call = plugin_call(plan_.call, dev.inputs, dev.outputs);
      check(api_.lapack_device(&call, &info_, &compute_ns_), wire::call_name(plan_.call).c_str());
      void* s = r_.streams_[out];
      check(api_.event_record(out_start_, s), "event");
      for (size_t i = 0, array = 0; i < plan_.pieces.size(); ++i) {
        const server::ResultPiece& p = plan_.pieces[i];
        while (array + 1 < map_.outputs.size() && plan_.output_offsets[array + 1] <= p.staging_offset) ++array;
        const std::byte* from = device_ + map_.outputs[array] + (p.staging_offset - plan_.output_offsets[array]);
        check(api_.memcpy_async(OUTBOARD_CUDA_D2H, staging_ + p.staging_offset, from, p.bytes, s),
              "copying a result from the GPU");
        check(api_.event_record(piece_done_[i], s), "event");
      }
      queued_.store(true, std::memory_order_release);
    } catch (const std::exception& e) {
      error_ = e.what();
      failed_.store(true, std::memory_order_release);
    }
  }

  GpuResources& r_;
  const outboard_cuda_api_v1& api_;
  const server::LapackPlan plan_;
  std::byte* staging_;
  std::byte* device_;
  const DeviceMap map_;
  uint64_t uploaded_ = 0;
  std::vector<Upload> uploads_;
  size_t timed_uploads_ = 0, reported_ = 0;
  uint64_t to_device_ns_ = 0, from_device_ns_ = 0;
  // Written by the thread before it sets queued_ (or failed_), read after.
  void* out_start_ = nullptr;
  std::vector<void*> piece_done_;
  int64_t info_ = 0;
  uint64_t compute_ns_ = 0;
  std::string error_;
  std::atomic<bool> queued_{false}, failed_{false};
  std::thread thread_;
};

std::unique_ptr<server::Pipeline> GpuResources::lapack_pipeline(const server::LapackPlan& plan, std::byte* staging) {
  DeviceMap map = device_map(plan);
  if (map.bytes > budget_) return nullptr;  // the whole call on the compute threads, or on the host
  if (busy_.exchange(true)) return nullptr;
  try {
    plugin_.check(plugin_.api().set_device(device_), "selecting the GPU");
    for (void*& s : streams_)
      if (!s) plugin_.check(plugin_.api().stream_create(&s), "creating a CUDA stream");
    auto* device = static_cast<std::byte*>(reserve(map.bytes));
    return std::make_unique<GpuLapackPipeline>(*this, plan, staging, device, std::move(map));
  } catch (...) {
    busy_.store(false);
    throw;
  }
}

}  // namespace outboard::backends
