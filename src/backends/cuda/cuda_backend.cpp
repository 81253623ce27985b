#include "backends/cuda/cuda_backend.hpp"

#include <spdlog/spdlog.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <shared_mutex>
#include <thread>
#include <mutex>
#include <vector>

#include "backends/cuda/gpu_health.hpp"
#include "backends/cuda/gpu_pipeline.hpp"
#include "server/lapack_pipeline.hpp"
#include "server/pipeline.hpp"
#include "backends/cuda/loader.hpp"
#include "common/clock.hpp"
#include "common/error.hpp"
#include "transport/arena.hpp"

namespace outboard::backends {
namespace {

// Page-locked host memory from the plugin, for staging operands (the allocator interface has no
// context: the plugin's table is global, as there is one plugin per process).
const outboard_cuda_api_v1* g_api = nullptr;

// The staging reserve (CudaOptions::pinned_reserve_bytes): set once it is page-locked, never
// destroyed (cached buffers may be released at exit).
struct PinnedReserve {
  std::atomic<transport::Arena*> arena{nullptr};
  uint64_t bytes = 0;
  uint64_t lock_ns = 0;  // set before the server listens
  std::atomic<uint64_t> misses{0};
};
PinnedReserve* g_reserve = nullptr;

extern const transport::HostAllocator kPinned;
bool in_reserve(const void* p) {
  const transport::Arena* a = g_reserve->arena.load(std::memory_order_acquire);
  return a && a->owns(p);
}

void* pinned_allocate(size_t bytes) {
  if (transport::Arena* a = g_reserve ? g_reserve->arena.load(std::memory_order_acquire) : nullptr) {
    if (void* p = a->take(bytes)) return p;
    // The reserve's room may be held by released staging kept in the buffer cache for reuse:
    // that goes back to the reserve first (the cache keeps staging locked outside it).
    transport::Buffer::release_cached(&kPinned, in_reserve);
    if (void* p = a->take(bytes)) return p;
    ++g_reserve->misses;
  }
  void* p = nullptr;
  return g_api && g_api->host_alloc_pinned(&p, bytes) == OUTBOARD_CUDA_OK ? p : nullptr;
}
void pinned_release(void* p) {
  if (transport::Arena* a = g_reserve ? g_reserve->arena.load(std::memory_order_acquire) : nullptr)
    if (a->give(p)) return;
  if (g_api) g_api->host_free_pinned(p);
}
extern const transport::HostAllocator kPinned{pinned_allocate, pinned_release};

}  // namespace

outboard_cuda_level3 plugin_call(const wire::Level3Call& c, const server::LeadingDims& ld) {
  static const char precision[] = "sdcz";
  outboard_cuda_level3 call{};
  call.routine = static_cast<int>(c.routine);
  call.precision = precision[static_cast<int>(c.scalar)];
  call.side = c.side, call.uplo = c.uplo, call.transa = c.transa, call.transb = c.transb, call.diag = c.diag;
  call.m = c.m, call.n = c.n, call.k = c.k;
  for (int i = 0; i < 2; ++i) call.alpha[i] = c.alpha[i], call.beta[i] = c.beta[i];
  const wire::Layout l = wire::layout(c);
  const size_t operands = l.inputs.size() - (c.output_sent ? 1 : 0);  // A, and B where there is one
  for (size_t i = 0; i < 2; ++i) {
    call.rows[i] = i < operands ? l.inputs[i].rows : 0;
    call.cols[i] = i < operands ? l.inputs[i].cols : 0;
  }
  call.rows[2] = l.output.rows, call.cols[2] = l.output.cols;
  // level3_async reads rows[] as the leading dimensions.
  if (ld.a) call.rows[0] = ld.a;
  if (ld.b) call.rows[1] = ld.b;
  if (ld.out) call.rows[2] = ld.out;
  return call;
}

outboard_cuda_lapack plugin_call(const wire::LapackCall& c, std::span<const std::byte* const> inputs,
                                 std::span<std::byte* const> outputs) {
  static const char precision[] = "sdcz";
  outboard_cuda_lapack call{};
  call.routine = static_cast<int>(c.routine);
  call.precision = precision[static_cast<int>(c.scalar)];
  call.trans = c.trans, call.uplo = c.uplo, call.jobz = c.jobz, call.jobu = c.jobu, call.jobvt = c.jobvt;
  call.jobvl = c.jobvl, call.jobvr = c.jobvr, call.range = c.range, call.diag = c.diag;
  call.m = c.m, call.n = c.n, call.nrhs = c.nrhs;
  call.itype = c.itype, call.il = c.il, call.iu = c.iu, call.vl = c.vl, call.vu = c.vu;
  call.side = c.side, call.k = c.k;
  // The arrays by name: outputs (pre-filled where in place) take precedence over inputs.
  const wire::LapackLayout l = wire::layout(c);
  auto bind = [&](const std::string& name, void* p, bool output) {
    if (name == "A") {
      call.a = p;
      call.a_out = output;
    } else if (name == "B" || name == "C") {
      call.b = p;
    } else if (name == "ipiv") {
      call.ipiv = static_cast<int32_t*>(p);
    } else if (name == "U" || name == "VL" || name == "Z") {
      call.u = p;
    } else if (name == "VT" || name == "VR") {
      call.vt = p;
    } else if (name == "wi") {
      call.vec2 = p;
    } else if (name == "m" || name == "ns" || name == "rank") {
      call.count = static_cast<int32_t*>(p);
    } else if (name == "isuppz" || name == "ifail" || name == "jpvt") {
      call.ints = static_cast<int32_t*>(p);
    } else {  // tau, w, wr, s
      call.vec = p;
    }
  };
  for (size_t i = 0; i < l.inputs.size(); ++i) bind(l.inputs[i].name, const_cast<std::byte*>(inputs[i]), false);
  for (size_t i = 0; i < l.outputs.size(); ++i) bind(l.outputs[i].name, outputs[i], true);
  return call;
}

namespace {

// OUTBOARD_TEST_GPU_FAULT=DEVICE@N[,DEVICE@N...] (tests only): the Nth piece of work started on
// GPU DEVICE first poisons it with a trapping kernel (gpu_health.hpp). 0 where none is set.
uint64_t test_fault_at(int device) {
  const char* v = std::getenv("OUTBOARD_TEST_GPU_FAULT");
  if (!v) return 0;
  const std::string spec(v);
  for (size_t at = 0; at <= spec.size();) {
    size_t end = spec.find(',', at);
    if (end == std::string::npos) end = spec.size();
    const std::string item = spec.substr(at, end - at);
    int d = -1;
    unsigned long long n = 0;
    char tail = 0;
    if (std::sscanf(item.c_str(), "%d@%llu%c", &d, &n, &tail) != 2 || d < 0 || n == 0)
      throw Error("OUTBOARD_TEST_GPU_FAULT: \"" + item + "\" is not DEVICE@N (N >= 1)");
    if (d == device) return n;
    at = end + 1;
  }
  return 0;
}

class CudaBackend final : public server::Backend, public server::Blas3Executor, public server::LapackExecutor {
 public:
  CudaBackend(cuda::CudaPlugin plugin, int device, const CudaOptions& options)
      : plugin_(std::move(plugin)), device_(device) {
    uint64_t memory_budget = options.memory_budget, fft_memory_budget = options.fft_memory_budget;
    provide<server::Blas3Executor>(this);
    provide<server::LapackExecutor>(this);
    provide<server::FftExecutor>(&fft_front_);
    g_api = &plugin_.api();
    const uint64_t fault_at = test_fault_at(device_);
    plugin_.check(plugin_.api().set_device(device_), "selecting the GPU");
    plugin_.check(plugin_.api().device_describe(device_, &info_), "describing the GPU");
    // By default a pipelined call may use 85% of the GPU's memory (cuBLAS, cuSOLVER and the
    // non-pipelined path need the rest); larger calls are tiled.
    memory_budget_ = memory_budget ? memory_budget : info_.total_memory / 100 * 85;
    fft_options_ = {fft_memory_budget ? fft_memory_budget : info_.total_memory / 100 * 40, 16, options.fft_batch_slices};
    make_parts();
    if (options.pinned_reserve_bytes > 0 && !g_reserve) make_reserve(options.pinned_reserve_bytes);
    warm_up(false);
    health_ = std::make_unique<GpuHealth>(plugin_, device_, [this] { rebuild(); }, options.on_gpu_lost, fault_at);
  }

  ~CudaBackend() override {
    health_.reset();  // no rebuild runs from here on
    fft_.reset();     // its plans and buffers go while the device is still ours
    if (buffer_) plugin_.free_on(device_, [&] { plugin_.api().device_free(buffer_); });
  }

  server::Backend::Health health() const override { return health_->counts(); }

  std::string name() const override { return "cuda"; }

  nlohmann::json describe() const override {
    return {{"name", "cuda"},
            {"device", device_},
            {"gpu", info_.name},
            {"memory_bytes", info_.total_memory},
            {"compute_capability", std::to_string(info_.compute_major) + "." + std::to_string(info_.compute_minor)},
            {"pcie", "Gen" + std::to_string(info_.pcie_gen_current) + " x" + std::to_string(info_.pcie_width_current)},
            {"serves", "Level-3 BLAS (cuBLAS), LAPACK (cuSOLVER), FFTs (cuFFT), device transfers"},
            {"health", health_->describe()},
            {"fft", fft_front_.describe()},
            {"pinned_reserve", describe_reserve()}};
  }

  // Runs the call with cuBLAS: the operands are copied to the GPU, computed on, and the output
  // copied back (one call at a time: the plugin keeps one set of device buffers). The plugin's
  // level3 copies packed operands: sub-matrices (blocks of a plan) run in pipelines, which take
  // leading dimensions; the server runs whole calls here.
  using server::Blas3Executor::level3;
  server::DeviceTiming level3(const wire::Level3Call& c, std::span<const std::byte* const> inputs,
                              std::byte* output, const server::LeadingDims& ld) override {
    if (ld.a || ld.b || ld.out) throw Error("the GPU's level3 takes packed operands only");
    const outboard_cuda_level3 call = plugin_call(c);
    const size_t operands = wire::layout(c).inputs.size() - (c.output_sent ? 1 : 0);
    // The output is written only once the GPU's work succeeded, but a copy back cut short leaves
    // it half written: a call that reads its output values may not run again.
    return health_->guard(!c.output_sent, [&]() -> server::DeviceTiming {
      std::lock_guard lk(mu_);
      plugin_.check(plugin_.api().set_device(device_), "selecting the GPU");
      uint64_t ns[3] = {0, 0, 0};
      plugin_.check(plugin_.api().level3(&call, inputs[0], operands > 1 ? inputs[1] : nullptr, output, ns),
                    wire::call_name(c).c_str());
      return {ns[0], ns[1], ns[2]};
    });
  }
  // cuSOLVER lacks some shapes of gels, gesvd and geev, and some routines (see plugin_api.h):
  // those stay on the host.
  bool serves_lapack(const wire::LapackCall& c) const override {
    using R = wire::LapackRoutine;
    switch (c.routine) {
      case R::gels: return c.trans == 'N' && c.m >= c.n;
      case R::gesvd: return c.m >= c.n && c.jobu != 'O' && c.jobvt != 'O';
      case R::geev: return c.jobvl == 'N';  // cusolverDnXgeev computes no left eigenvectors
      case R::gesv: case R::getrf: case R::getrs: case R::posv: case R::potrf: case R::potrs: case R::geqrf:
      case R::syevd: case R::gesdd: case R::syevr: case R::syevx: case R::sygvd: case R::sysv: case R::sytrf:
      case R::sytrs: case R::getri: case R::potri: case R::trtri: case R::syev:  // syev on syevd
        return true;
      case R::orgqr: case R::ormqr: return c.k > 0;  // k = 0 (Q the identity's columns, C as it was): the host's
      // gesvdx (no selected-range SVD), gelsd and gelsy (no rank-revealing least squares), the
      // Hermitian indefinite hesv, hetrf, hetrs, and the Schur, Hessenberg, RQ, pivoted QR and
      // Sylvester drivers (gees, gges, ggev, geevx, gehrd, orghr, gerqf, orgrq, geqp3, trsyl):
      // cuSOLVER has none of them.
      default: return false;
    }
  }

  int64_t lapack(const wire::LapackCall& c, std::span<const std::byte* const> inputs,
                 std::span<std::byte* const> outputs, server::DeviceTiming& timing) override {
    outboard_cuda_lapack call = plugin_call(c, inputs, outputs);
    // The inputs are read only; the service sets the outputs up again.
    return health_->guard(true, [&] {
      std::lock_guard lk(mu_);
      plugin_.check(plugin_.api().set_device(device_), "selecting the GPU");
      uint64_t ns[3] = {0, 0, 0};
      int64_t info = 0;
      plugin_.check(plugin_.api().lapack(&call, &info, ns), wire::call_name(c).c_str());
      timing = {ns[0], ns[1], ns[2]};
      return info;
    });
  }

  bool has_device_memory() const override { return true; }
  uint64_t free_device_bytes() const override {
    uint64_t free = 0, total = 0;
    if (!health_->serving()) return 0;
    return plugin_.api().device_memory(device_, &free, &total) == OUTBOARD_CUDA_OK ? free : 0;
  }
  const transport::HostAllocator* staging() const override { return &kPinned; }

  std::unique_ptr<server::Pipeline> pipeline(const server::Plan& plan, std::byte* staging) override {
    return health_->guard_pipeline([&] { return gpu_->pipeline(plan, staging); });
  }
  std::unique_ptr<server::Pipeline> lapack_pipeline(const server::LapackPlan& plan, std::byte* staging) override {
    if (!serves_lapack(plan.call)) return nullptr;
    return health_->guard_pipeline([&] { return gpu_->lapack_pipeline(plan, staging); });
  }

  uint64_t device_round_trip(const std::byte* in, std::byte* back, size_t bytes) override {
    return health_->guard(false, [&] { return round_trip(in, back, bytes); });
  }

 private:
  // The FFT executor the service sees: the GPU's cuFFT executor (which a rebuild replaces), with
  // each use held and its failures checked for a fault.
  class FftFront final : public server::FftExecutor {
   public:
    explicit FftFront(CudaBackend& b) : b_(b) {}
    std::string where() const override { return "cuda:" + std::to_string(b_.device_); }
    bool serves(const wire::FftShape& s) const override {
      std::shared_lock lk(b_.parts_mu_);
      return b_.fft_->serves(s);
    }
    void prepare(const wire::FftShape& s) override {
      b_.health_->guard(true, [&] { b_.fft_->prepare(s); });
    }
    server::FftTiming execute(const wire::FftShape& s, const std::byte* in, std::byte* out) override {
      return b_.health_->guard(true, [&] { return b_.fft_->execute(s, in, out); });  // the input is read only
    }
    std::unique_ptr<server::Pipeline> pipeline(const server::FftPlanPieces& p, std::byte* staging) override {
      return b_.health_->guard_pipeline([&] { return b_.fft_->pipeline(p, staging); });
    }
    nlohmann::json describe() const override {
      std::shared_lock lk(b_.parts_mu_);
      return b_.fft_->describe();
    }

   private:
    CudaBackend& b_;
  };

  // What the backend makes on its GPU: the pipelines' resources and the cuFFT executor.
  void make_parts() {
    gpu_ = std::make_unique<GpuResources>(plugin_, device_, memory_budget_);
    fft_ = make_gpu_fft(plugin_, device_, fft_options_);
  }

  // GpuHealth's rebuild, once nothing runs on the faulted GPU: forget what was made on it, reset
  // it, make it all again and run the start-up calls, which must succeed.
  void rebuild() {
    {
      std::unique_lock parts(parts_mu_);
      std::lock_guard lk(mu_);
      gpu_->abandon();
      fft_->abandon();
      buffer_ = nullptr;
      capacity_ = 0;
      plugin_.check(plugin_.api().device_reset(device_), "resetting the GPU");
      make_parts();
    }
    cuda::CudaPlugin::OnDevice on(plugin_, device_);
    warm_up(true);
  }

  uint64_t round_trip(const std::byte* in, std::byte* back, size_t bytes) {
    std::lock_guard lk(mu_);  // one device buffer, reused: transfers take turns
    const auto& api = plugin_.api();
    plugin_.check(api.set_device(device_), "selecting the GPU");
    if (capacity_ < bytes) {
      if (buffer_) api.device_free(buffer_);
      buffer_ = nullptr;
      capacity_ = 0;
      plugin_.check(api.device_alloc(&buffer_, bytes), "allocating GPU memory");
      capacity_ = bytes;
    }
    const uint64_t t0 = now_ns();
    plugin_.check(api.memcpy_sync(OUTBOARD_CUDA_H2D, buffer_, in, bytes, nullptr), "copying to the GPU");
    plugin_.check(api.stream_sync(nullptr), "copying to the GPU");
    if (back) plugin_.check(api.memcpy_sync(OUTBOARD_CUDA_D2H, back, buffer_, bytes, nullptr), "copying from the GPU");
    return now_ns() - t0;
  }

  // Page-locking GiBs takes seconds and stalls the whole process meanwhile (measured on the H200
  // host: a server locking 16 GiB on a thread of its own left connecting clients unanswered for
  // over 5 s), so it happens here, before the server listens: it starts later, and then serves.
  void make_reserve(uint64_t bytes) {
    g_reserve = new PinnedReserve;
    g_reserve->bytes = bytes;
    const uint64_t t0 = now_ns();
    void* p = nullptr;
    const int rc = plugin_.api().host_alloc_pinned(&p, bytes);
    if (rc != OUTBOARD_CUDA_OK || !p) {
      spdlog::warn("serve.pinned_reserve bytes={} error=\"{}\" (staging is page-locked per call)", bytes, plugin_.error(rc));
      return;
    }
    g_reserve->lock_ns = now_ns() - t0;
    g_reserve->arena.store(new transport::Arena(static_cast<std::byte*>(p), bytes), std::memory_order_release);
    spdlog::info("serve.pinned_reserve bytes={} seconds={:.3f}", bytes, g_reserve->lock_ns / 1e9);
  }

  // A server's first GPU call paid for the pipeline's streams and device memory, the cuBLAS
  // handle and the loading of its GEMM kernels (measured on the H200 host: the first DGEMM 16384
  // against a server started right before computed for 271 ms, later ones 154 ms). Small pipelined
  // GEMMs of each precision at start pay that before the server listens. Best effort at start (a
  // failure here is the first call's to report); after a rebuild (`strict`) a failure throws.
  void warm_up(bool strict) {
    const uint64_t t0 = now_ns();
    try {
      for (wire::Scalar s : {wire::Scalar::s, wire::Scalar::d, wire::Scalar::c, wire::Scalar::z}) {
        wire::Level3Call c;
        c.routine = wire::Routine::gemm;
        c.scalar = s;
        c.transa = c.transb = 'N';
        c.m = c.n = c.k = 1024;
        c.alpha = {1, 0};
        const server::Plan plan = server::plan_pipeline(c, 256);
        auto staging = transport::Buffer::allocate(plan.staging_bytes, &kPinned);
        std::memset(staging.data(), 0, plan.staging_bytes);
        if (auto pipe = gpu_->pipeline(plan, staging.data()))
          run_whole(*pipe, plan.input_bytes, plan.pieces.size(), "a 1024 GEMM");
      }
      warm_up_lapack();
      spdlog::info("serve.gpu_warm_up device={} seconds={:.3f}", device_, (now_ns() - t0) / 1e9);
    } catch (const std::exception& e) {
      if (strict) throw;
      spdlog::warn("serve.gpu_warm_up device={} error=\"{}\"", device_, e.what());
    }
  }

  // Gives a warm-up pipeline all of its input at once and waits for its `pieces` results.
  static void run_whole(server::Pipeline& pipe, uint64_t input_bytes, size_t pieces, const std::string& what) {
    pipe.input(input_bytes);
    const uint64_t deadline = now_ns() + 30'000'000'000ull;
    for (size_t done = 0; done < pieces;) {
      done += pipe.finished().size();
      if (done < pieces) std::this_thread::yield();
      if (now_ns() > deadline) throw Error(what + " did not finish within 30 s");
    }
  }

  // The same for cuSOLVER: its handle, workspaces and the factorizations' kernels (a server's
  // first DGESV 16384 took 2.4 s against 0.27 s later). Small LU, Cholesky, QR and eigenvalue
  // solves on the identity, through the LAPACK pipeline the direct path uses.
  void warm_up_lapack() {
    using wire::LapackRoutine;
    for (wire::Scalar s : {wire::Scalar::d, wire::Scalar::s}) {
      for (LapackRoutine r : {LapackRoutine::gesv, LapackRoutine::posv, LapackRoutine::geqrf, LapackRoutine::syevd}) {
        wire::LapackCall c;
        c.routine = r;
        c.scalar = s;
        c.n = 256;
        if (r == LapackRoutine::gesv || r == LapackRoutine::posv) c.nrhs = 1;
        if (r == LapackRoutine::geqrf) c.m = c.n;
        if (r == LapackRoutine::posv || r == LapackRoutine::syevd) c.uplo = 'U';
        if (r == LapackRoutine::syevd) c.jobz = 'V';
        wire::validate(c);
        const server::LapackPlan plan = server::plan_lapack(c, plan_piece_bytes);
        auto staging = transport::Buffer::allocate(plan.staging_bytes, &kPinned);
        std::memset(staging.data(), 0, plan.staging_bytes);
        const wire::LapackLayout l = wire::layout(c);
        const size_t e = wire::element_bytes(s);
        for (size_t i = 0; i < l.inputs.size(); ++i)  // A := I
          if (std::string(l.inputs[i].name) == "A")
            for (int64_t j = 0; j < std::min(l.inputs[i].rows, l.inputs[i].cols); ++j) {
              std::byte* d = staging.data() + plan.input_offsets[i] + (j * l.inputs[i].rows + j) * e;
              if (s == wire::Scalar::d) *reinterpret_cast<double*>(d) = 1;
              else *reinterpret_cast<float*>(d) = 1;
            }
        if (auto pipe = gpu_->lapack_pipeline(plan, staging.data()))
          run_whole(*pipe, plan.input_bytes, plan.pieces.size(), wire::call_name(c) + " of order 256");
      }
    }
  }
  static constexpr uint64_t plan_piece_bytes = 1 << 20;

  static nlohmann::json describe_reserve() {
    if (!g_reserve) return {{"bytes", 0}};
    const transport::Arena* a = g_reserve->arena.load(std::memory_order_acquire);
    nlohmann::json j{{"bytes", g_reserve->bytes},
                     {"state", a ? "ready" : "failed"},
                     {"misses", g_reserve->misses.load()}};
    if (a) {
      j["lock_seconds"] = g_reserve->lock_ns / 1e9;
      j["in_use"] = a->in_use();
      j["largest_free"] = a->largest_free();
    }
    return j;
  }

  cuda::CudaPlugin plugin_;
  int device_;
  outboard_cuda_device_info info_{};
  uint64_t memory_budget_ = 0;
  GpuFftOptions fft_options_;
  // gpu_ and fft_ are replaced by a rebuild, which holds parts_mu_ (and happens only while no
  // work holds a GpuHealth::Use); what reads them without a Use (FftFront's serves and
  // describe) holds it shared.
  mutable std::shared_mutex parts_mu_;
  std::unique_ptr<GpuResources> gpu_;
  std::unique_ptr<GpuFftExecutor> fft_;
  FftFront fft_front_{*this};
  std::unique_ptr<GpuHealth> health_;
  std::mutex mu_;
  void* buffer_ = nullptr;
  size_t capacity_ = 0;
};

}  // namespace

int cuda_device_count(std::string& why) {
  auto plugin = cuda::CudaPlugin::load(why);
  return plugin ? plugin->device_count() : 0;
}

std::unique_ptr<server::Backend> make_cuda_backend(std::string& why, int device, const CudaOptions& options) {
  auto plugin = cuda::CudaPlugin::load(why);
  if (!plugin) return nullptr;
  if (device >= plugin->device_count()) {
    why = "GPU " + std::to_string(device) + " does not exist (" + std::to_string(plugin->device_count()) + " found)";
    return nullptr;
  }
  try {
    return std::make_unique<CudaBackend>(std::move(*plugin), device, options);
  } catch (const std::exception& e) {
    why = e.what();
    return nullptr;
  }
}

}  // namespace outboard::backends
