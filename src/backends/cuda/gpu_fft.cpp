#include "backends/cuda/gpu_fft.hpp"

#include <atomic>
#include <condition_variable>
#include <list>
#include <map>
#include <mutex>
#include <thread>

#include "common/clock.hpp"
#include "common/error.hpp"
#include "wire/codec.hpp"

namespace outboard::backends {
namespace {

using wire::FftKind;
using wire::FftShape;

outboard_cuda_fft plugin_fft(const FftShape& s) {
  outboard_cuda_fft f{};
  f.precision = s.precision == wire::FftPrecision::f32 ? 's' : 'd';
  f.kind = static_cast<int>(s.kind);
  f.sign = s.sign;
  f.rank = static_cast<int>(s.n.size());
  for (size_t i = 0; i < s.n.size() && i < 3; ++i) f.n[i] = s.n[i];
  f.batch = s.batch;
  return f;
}

std::vector<std::byte> key_of(const FftShape& s) {
  std::vector<std::byte> k;
  wire::Writer w(k);
  wire::encode(w, s);
  return k;
}

// Batch slices: a batched shape runs as up to GpuFftOptions::max_slices cuFFT calls of an equal
// share of the batch (each at least kMinSliceBytes of input), so that a pipelined execution
// computes the first slices, and sends their results back, while the later ones still arrive.
constexpr uint64_t kMinSliceBytes = 8u << 20;
int64_t slices_of(const FftShape& s, int64_t max_slices) {
  for (int64_t k = max_slices; k > 1; --k)
    if (s.batch % k == 0 && wire::input_bytes(s) / uint64_t(k) >= kMinSliceBytes) return k;
  return 1;
}

// A cuFFT plan (for one batch slice) with the device memory and streams one execution uses.
struct Slot {
  const cuda::CudaPlugin* plugin = nullptr;
  const outboard_cuda_api_v1* api = nullptr;
  int device = 0;
  outboard_cuda_fft fft{};  // one slice's problem
  void* plan = nullptr;
  void* in = nullptr;   // dense input on the device
  void* out = nullptr;  // dense output (the same buffer for c2c: in place)
  void* stream = nullptr;       // input copies and transforms
  void* back_stream = nullptr;  // result copies, beside the input copies of later slices
  int64_t slices = 1;
  uint64_t slice_in = 0, slice_out = 0;  // bytes of one slice's input and output
  uint64_t bytes = 0;   // device memory held, cuFFT's work area included
  // Freed on its own GPU, whichever thread evicts it; the thread's GPU is left as it was.
  ~Slot() {
    if (!plan && !in && !out && !stream && !back_stream) return;
    plugin->free_on(device, [&] {
      if (plan) api->fft_plan_destroy(plan);
      if (out && out != in) api->device_free(out);
      if (in) api->device_free(in);
      if (stream) api->stream_destroy(stream);
      if (back_stream) api->stream_destroy(back_stream);
    });
  }
  void forget() { plan = in = out = stream = back_stream = nullptr; }
  // Enqueues slice k's transform on `stream`.
  int launch(int64_t k) {
    return api->fft_exec(plan, &fft, static_cast<std::byte*>(in) + uint64_t(k) * slice_in,
                         static_cast<std::byte*>(out) + uint64_t(k) * slice_out, stream);
  }
};

class GpuFft final : public GpuFftExecutor {
 public:
  GpuFft(const cuda::CudaPlugin& plugin, int device, GpuFftOptions o)
      : plugin_(plugin), api_(plugin.api()), device_(device), options_(o) {}

  ~GpuFft() override {
    std::lock_guard lk(mu_);
    cache_.clear();  // each slot frees itself on this GPU
  }

  void abandon() override {
    std::lock_guard lk(mu_);
    for (auto& [key, e] : cache_)
      for (auto& slot : e.idle) slot->forget();
    cache_.clear();
    held_bytes_ = 0;
  }

  std::string where() const override { return "cuda:" + std::to_string(device_); }
  bool preserves_input() const override { return true; }  // copied to the device, never written

  bool serves(const FftShape& s) const override {
    if (s.kind == FftKind::r2r || s.n.size() > 3) return false;
    return device_bytes(s) <= options_.memory_budget;
  }

  void prepare(const FftShape& s) override {
    uint64_t wait = 0;
    release(s, acquire(s, wait, nullptr));
  }

  server::FftTiming execute(const FftShape& s, const std::byte* in, std::byte* out) override {
    server::FftTiming t;
    std::unique_ptr<Slot> slot = acquire(s, t.plan_wait_ns, nullptr);
    struct Back {  // the slot returns to the cache on every way out
      GpuFft& self;
      const FftShape& s;
      std::unique_ptr<Slot>& slot;
      ~Back() { self.release(s, std::move(slot)); }
    } back{*this, s, slot};
    const uint64_t in_bytes = wire::input_bytes(s), out_bytes = wire::output_bytes(s);
    cuda::CudaPlugin::OnDevice on(plugin_, device_);
    uint64_t t0 = now_ns();
    plugin_.check(api_.memcpy_sync(OUTBOARD_CUDA_H2D, slot->in, in, in_bytes, slot->stream), "copying FFT input to the GPU");
    t.to_device_ns = now_ns() - t0;
    t0 = now_ns();
    for (int64_t k = 0; k < slot->slices; ++k) plugin_.check(slot->launch(k), "cuFFT");
    plugin_.check(api_.stream_sync(slot->stream), "cuFFT");
    t.compute_ns = now_ns() - t0;
    t0 = now_ns();
    plugin_.check(api_.memcpy_sync(OUTBOARD_CUDA_D2H, out, slot->out, out_bytes, slot->stream), "copying FFT output from the GPU");
    t.from_device_ns = now_ns() - t0;
    return t;
  }

  std::unique_ptr<server::Pipeline> pipeline(const server::FftPlanPieces& p, std::byte* staging) override;

  nlohmann::json describe() const override {
    std::lock_guard lk(mu_);
    size_t idle = 0;
    for (const auto& [k, e] : cache_) idle += e.idle.size();
    return {{"executor", where()}, {"library", "cuFFT"}, {"shapes", cache_.size()}, {"idle_plans", idle},
            {"device_bytes", held_bytes_}, {"hits", hits_}, {"misses", misses_}, {"evictions", evictions_}};
  }

  // A slot for `s`: an idle cached one, else the one being prepared (waited for), else a new one.
  // nullptr only when *stop turns true while waiting.
  std::unique_ptr<Slot> acquire(const FftShape& s, uint64_t& wait_ns, const std::atomic<bool>* stop) {
    const auto key = key_of(s);
    const uint64_t t0 = now_ns();
    std::unique_lock lk(mu_);
    Entry& e = cache_[key];
    e.used = ++tick_;
    for (;;) {
      if (stop && stop->load()) return nullptr;
      if (!e.idle.empty()) {
        ++hits_;
        std::unique_ptr<Slot> slot = std::move(e.idle.back());
        e.idle.pop_back();
        wait_ns = now_ns() - t0;
        return slot;
      }
      if (e.building == 0) break;
      cv_.wait_for(lk, std::chrono::milliseconds(10));
    }
    ++misses_;
    ++e.building;
    make_room(device_bytes(s), key);
    lk.unlock();
    std::unique_ptr<Slot> slot;
    try {
      slot = build(s);
    } catch (...) {
      lk.lock();
      --e.building;
      cv_.notify_all();
      throw;
    }
    lk.lock();
    --e.building;
    held_bytes_ += slot->bytes;
    cv_.notify_all();
    wait_ns = now_ns() - t0;
    return slot;
  }

  void release(const FftShape& s, std::unique_ptr<Slot> slot) {
    if (!slot) return;
    std::lock_guard lk(mu_);
    Entry& e = cache_[key_of(s)];
    e.used = ++tick_;
    e.idle.push_back(std::move(slot));
    size_t idle = 0;
    for (const auto& [k, x] : cache_) idle += x.idle.size();
    while (idle > options_.max_idle_slots && evict_one({})) --idle;
    cv_.notify_all();
  }

 private:
  struct Entry {
    std::vector<std::unique_ptr<Slot>> idle;
    int building = 0;
    uint64_t used = 0;
  };

  // Device memory a slot of `s` needs before cuFFT's work area (about the size of the data).
  static uint64_t device_bytes(const FftShape& s) {
    const uint64_t in = wire::input_bytes(s), out = wire::output_bytes(s);
    return (s.kind == FftKind::c2c ? in : in + out) * 2;
  }

  std::unique_ptr<Slot> build(const FftShape& s) {
    auto slot = std::make_unique<Slot>();
    slot->plugin = &plugin_;
    slot->api = &api_;
    slot->device = device_;
    slot->fft = plugin_fft(s);
    const uint64_t in = wire::input_bytes(s), out = wire::output_bytes(s);
    slot->slices = slices_of(s, options_.max_slices);
    slot->fft.batch = s.batch / slot->slices;
    slot->slice_in = in / uint64_t(slot->slices), slot->slice_out = out / uint64_t(slot->slices);
    cuda::CudaPlugin::OnDevice on(plugin_, device_);
    plugin_.check(api_.stream_create(&slot->stream), "creating a CUDA stream");
    plugin_.check(api_.stream_create(&slot->back_stream), "creating a CUDA stream");
    plugin_.check(api_.device_alloc(&slot->in, in), "allocating GPU memory for an FFT");
    if (s.kind == FftKind::c2c) slot->out = slot->in;
    else plugin_.check(api_.device_alloc(&slot->out, out), "allocating GPU memory for an FFT");
    uint64_t work = 0;
    plugin_.check(api_.fft_plan_create(&slot->fft, &slot->plan, &work), ("planning " + wire::shape_name(s)).c_str());
    slot->bytes = (s.kind == FftKind::c2c ? in : in + out) + work;
    return slot;
  }

  // Evicts idle slots (least recently used shape first, never `keep`) until `bytes` more fit in
  // the budget or none is idle. Holds mu_.
  void make_room(uint64_t bytes, const std::vector<std::byte>& keep) {
    while (held_bytes_ + bytes > options_.memory_budget && evict_one(keep)) {
    }
  }

  bool evict_one(const std::vector<std::byte>& keep) {
    auto victim = cache_.end();
    for (auto it = cache_.begin(); it != cache_.end(); ++it)
      if (!it->second.idle.empty() && it->first != keep && (victim == cache_.end() || it->second.used < victim->second.used))
        victim = it;
    if (victim == cache_.end()) return false;
    held_bytes_ -= std::min(held_bytes_, victim->second.idle.back()->bytes);
    victim->second.idle.pop_back();
    ++evictions_;
    if (victim->second.idle.empty() && victim->second.building == 0) cache_.erase(victim);
    return true;
  }

  friend class GpuFftPipeline;
  const cuda::CudaPlugin& plugin_;
  const outboard_cuda_api_v1& api_;
  int device_;
  GpuFftOptions options_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::vector<std::byte>, Entry> cache_;
  uint64_t tick_ = 0, hits_ = 0, misses_ = 0, evictions_ = 0, held_bytes_ = 0;
};

// A pipelined execution: a thread of its own takes the plan (made ahead, usually), copies the
// input to the device as it lands in staging and starts each batch slice's transform once its
// input is there; a second thread copies the results back, piece by piece, on a stream of their
// own as their slices finish (beside the input copies of later slices: PCIe runs both ways at
// once). The progress thread only reads which pieces are done.
class GpuFftPipeline final : public server::Pipeline {
 public:
  GpuFftPipeline(GpuFft& gpu, server::FftPlanPieces p, std::byte* staging)
      : gpu_(gpu), p_(std::move(p)), staging_(staging), thread_([this] { run(); }) {}

  ~GpuFftPipeline() override {
    stop();
    thread_.join();  // its copies use the staging buffer
  }

  void input(uint64_t prefix) override {
    std::lock_guard lk(mu_);
    arrived_ = std::max(arrived_, prefix);
    cv_.notify_all();
  }

  std::vector<size_t> finished() override {
    std::lock_guard lk(mu_);
    if (!error_.empty()) throw Error(error_);
    std::vector<size_t> out;
    for (; reported_ < done_; ++reported_) out.push_back(reported_);
    return out;
  }

  uint64_t to_device_ns() const override { return to_device_ns_.load(); }
  uint64_t compute_ns() const override { return compute_ns_.load(); }
  uint64_t from_device_ns() const override { return from_device_ns_.load(); }
  bool needs_polling() const override { return true; }

 private:
  void stop() {
    std::lock_guard lk(mu_);
    stop_ = true;
    cv_.notify_all();
  }
  void failed(const std::exception& e) {
    std::lock_guard lk(mu_);
    if (error_.empty()) error_ = e.what();
    stop_ = true;
    cv_.notify_all();
  }

  // Events recorded around each slice's transform, destroyed on every way out.
  struct Events {
    const outboard_cuda_api_v1& api;
    std::vector<void*> begin, end;
    ~Events() {
      for (void* e : begin) if (e) api.event_destroy(e);
      for (void* e : end) if (e) api.event_destroy(e);
    }
  };

  void run() {
    try {
      uint64_t wait = 0;
      std::unique_ptr<Slot> slot = gpu_.acquire(p_.shape, wait, &stop_);
      if (!slot) return;
      struct Back {
        GpuFft& gpu;
        const FftShape& s;
        std::unique_ptr<Slot>& slot;
        ~Back() { gpu.release(s, std::move(slot)); }
      } back{gpu_, p_.shape, slot};
      const auto& api = gpu_.api_;
      const cuda::CudaPlugin& plugin = gpu_.plugin_;
      plugin.check(api.set_device(gpu_.device_), "selecting the GPU");
      const int64_t slices = slot->slices;
      Events events{api, std::vector<void*>(size_t(slices)), std::vector<void*>(size_t(slices))};
      for (int64_t k = 0; k < slices; ++k) {
        plugin.check(api.event_create(&events.begin[size_t(k)]), "creating a CUDA event");
        plugin.check(api.event_create(&events.end[size_t(k)]), "creating a CUDA event");
      }
      std::thread returner([&] { return_results(*slot, events); });
      struct Join {
        GpuFftPipeline& self;
        std::thread& t;
        ~Join() {
          if (!t.joinable()) return;
          self.stop();  // a way out by exception: the returner must not wait for slices
          t.join();
        }
      } join{*this, returner};
      auto* device_in = static_cast<std::byte*>(slot->in);
      int64_t launched = 0;
      for (uint64_t copied = 0; copied < p_.input_bytes;) {
        uint64_t ready;
        {
          std::unique_lock lk(mu_);
          cv_.wait(lk, [&] { return stop_ || arrived_ > copied; });
          if (stop_) return;
          ready = arrived_;
        }
        const uint64_t t0 = now_ns();
        plugin.check(api.memcpy_sync(OUTBOARD_CUDA_H2D, device_in + copied, staging_ + copied, ready - copied, slot->stream),
                     "copying FFT input to the GPU");
        to_device_ns_ += now_ns() - t0;
        copied = ready;
        const int64_t complete = copied == p_.input_bytes ? slices : int64_t(copied / slot->slice_in);
        for (; launched < complete; ++launched) {
          plugin.check(api.event_record(events.begin[size_t(launched)], slot->stream), "recording a CUDA event");
          plugin.check(slot->launch(launched), "cuFFT");
          plugin.check(api.event_record(events.end[size_t(launched)], slot->stream), "recording a CUDA event");
          std::lock_guard lk(mu_);
          launched_ = launched + 1;
          cv_.notify_all();
        }
      }
      returner.join();
    } catch (const std::exception& e) {
      failed(e);
    }
  }

  // The result pieces in order, each once the slices it spans are computed.
  void return_results(Slot& slot, const Events& events) {
    const std::vector<void*>& end = events.end;
    try {
      const auto& api = gpu_.api_;
      const cuda::CudaPlugin& plugin = gpu_.plugin_;
      plugin.check(api.set_device(gpu_.device_), "selecting the GPU");
      auto* device_out = static_cast<const std::byte*>(slot.out);
      int64_t waited = 0;  // slices whose transforms the back stream waits for
      for (size_t i = 0; i < p_.pieces.size(); ++i) {
        const server::ResultPiece& piece = p_.pieces[i];
        const int64_t needed =
            std::min<int64_t>(slot.slices, int64_t((piece.result_offset + piece.bytes + slot.slice_out - 1) / slot.slice_out));
        {
          std::unique_lock lk(mu_);
          cv_.wait(lk, [&] { return stop_ || launched_ >= needed; });
          if (stop_) return;
        }
        if (needed > waited) {  // one stream runs the transforms in order: the last one needed suffices
          plugin.check(api.stream_wait_event(slot.back_stream, end[size_t(needed - 1)]), "ordering CUDA streams");
          waited = needed;
        }
        const uint64_t t0 = now_ns();
        plugin.check(api.memcpy_sync(OUTBOARD_CUDA_D2H, staging_ + piece.staging_offset, device_out + piece.result_offset,
                                     piece.bytes, slot.back_stream),
                     "copying FFT output from the GPU");
        from_device_ns_ += now_ns() - t0;
        if (i + 1 == p_.pieces.size()) compute_ns_ = transform_ns(events);  // known before the call is
        std::lock_guard lk(mu_);
        done_ = i + 1;
      }
    } catch (const std::exception& e) {
      failed(e);
    }
  }

  // The transforms' GPU time, once all have run.
  uint64_t transform_ns(const Events& events) const {
    uint64_t ns = 0;
    for (size_t k = 0; k < events.begin.size(); ++k) {
      float ms = 0;
      if (gpu_.api_.event_elapsed(events.begin[k], events.end[k], &ms) == OUTBOARD_CUDA_OK) ns += uint64_t(double(ms) * 1e6);
    }
    return ns;
  }

  GpuFft& gpu_;
  server::FftPlanPieces p_;
  std::byte* staging_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::atomic<bool> stop_{false};  // set under mu_ (waits read it there); acquire() reads it without
  uint64_t arrived_ = 0;
  int64_t launched_ = 0;  // slices whose transforms are enqueued
  size_t done_ = 0, reported_ = 0;
  std::string error_;
  std::atomic<uint64_t> to_device_ns_{0}, compute_ns_{0}, from_device_ns_{0};
  std::thread thread_;  // last: starts once everything above exists
};

std::unique_ptr<server::Pipeline> GpuFft::pipeline(const server::FftPlanPieces& p, std::byte* staging) {
  return std::make_unique<GpuFftPipeline>(*this, p, staging);
}

}  // namespace

std::unique_ptr<GpuFftExecutor> make_gpu_fft(const cuda::CudaPlugin& plugin, int device, GpuFftOptions options) {
  return std::make_unique<GpuFft>(plugin, device, options);
}

}  // namespace outboard::backends
