#include "backends/cpu/cpu_fft.hpp"

#include <fftw3.h>
#include <unistd.h>

#include <cstdio>
#include <future>
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

// FFTW's planner (and destroy_plan, wisdom) is not thread-safe; executions with the new-array
// functions are. One lock for both precisions' libraries.
std::mutex g_planner;

// The FFTW entry points of one precision.
template <class Real>
struct Fftw;
#define OUTBOARD_FFTW_API(Real, P)                                                               \
  template <>                                                                                    \
  struct Fftw<Real> {                                                                            \
    using plan = P##_plan;                                                                       \
    using complex = P##_complex;                                                                 \
    static constexpr auto guru_dft = P##_plan_guru64_dft;                                        \
    static constexpr auto guru_r2c = P##_plan_guru64_dft_r2c;                                    \
    static constexpr auto guru_c2r = P##_plan_guru64_dft_c2r;                                    \
    static constexpr auto guru_r2r = P##_plan_guru64_r2r;                                        \
    static constexpr auto exec_dft = P##_execute_dft;                                            \
    static constexpr auto exec_r2c = P##_execute_dft_r2c;                                        \
    static constexpr auto exec_c2r = P##_execute_dft_c2r;                                        \
    static constexpr auto exec_r2r = P##_execute_r2r;                                            \
    static constexpr auto destroy = P##_destroy_plan;                                            \
    static constexpr auto with_threads = P##_plan_with_nthreads;                                 \
    static constexpr auto init_threads = P##_init_threads;                                       \
    static constexpr auto alloc = P##_malloc;                                                    \
    static constexpr auto release = P##_free;                                                    \
    static constexpr auto import_wisdom = P##_import_wisdom_from_filename;                       \
    static constexpr auto export_wisdom = P##_export_wisdom_to_filename;                         \
  };
OUTBOARD_FFTW_API(double, fftw)
OUTBOARD_FFTW_API(float, fftwf)
#undef OUTBOARD_FFTW_API

// The guru dimensions of a dense problem: the transform's, then one loop over the batch.
struct Dims {
  std::vector<fftw_iodim64> dims;
  fftw_iodim64 batch{};
};
Dims dense_dims(const FftShape& s) {
  Dims d;
  const size_t rank = s.n.size();
  d.dims.resize(rank);
  // Strides in each side's own units: the complex side's last dimension is halved.
  int64_t in_stride = 1, out_stride = 1;
  for (size_t i = rank; i-- > 0;) {
    const int64_t real_n = s.n[i], half_n = i + 1 == rank ? s.n[i] / 2 + 1 : s.n[i];
    d.dims[i] = {s.n[i], in_stride, out_stride};
    in_stride *= s.kind == FftKind::c2r ? half_n : real_n;
    out_stride *= s.kind == FftKind::r2c ? half_n : real_n;
  }
  d.batch = {s.batch, in_stride, out_stride};
  return d;
}

unsigned planner_flags(const std::string& planner) {
  if (planner == "measure") return FFTW_MEASURE;
  if (planner == "patient") return FFTW_PATIENT;
  return FFTW_ESTIMATE;
}

class Plan {
 public:
  virtual ~Plan() = default;
  virtual void execute(const std::byte* in, std::byte* out) const = 0;
};

template <class Real>
class TypedPlan final : public Plan {
  using F = Fftw<Real>;

 public:
  // Plans on scratch arrays of the problem's size (never touched with FFTW_ESTIMATE; written
  // while measuring), so no client's data is ever in them. Holds the planner lock.
  TypedPlan(const FftShape& s, bool aligned, unsigned flags, unsigned threads) : kind_(s.kind) {
    const Dims d = dense_dims(s);
    const uint64_t in = wire::input_bytes(s), out = wire::output_bytes(s);
    void* a = F::alloc(in);
    void* b = F::alloc(out);
    if (!a || !b) {
      F::release(a), F::release(b);
      throw Error("out of memory for FFTW's planning arrays (" + std::to_string(in + out) + " bytes)");
    }
    // Executions see staging memory: the input may be destroyed, and it may not be 16-byte aligned.
    flags |= FFTW_DESTROY_INPUT | (aligned ? 0 : FFTW_UNALIGNED);
    F::with_threads(int(threads));
    const int rank = int(d.dims.size());
    auto* re = static_cast<Real*>(a);
    auto* co = static_cast<typename F::complex*>(a);
    switch (s.kind) {
      case FftKind::c2c:
        plan_ = F::guru_dft(rank, d.dims.data(), 1, &d.batch, co, static_cast<typename F::complex*>(b), s.sign, flags);
        break;
      case FftKind::r2c:
        plan_ = F::guru_r2c(rank, d.dims.data(), 1, &d.batch, re, static_cast<typename F::complex*>(b), flags);
        break;
      case FftKind::c2r:
        plan_ = F::guru_c2r(rank, d.dims.data(), 1, &d.batch, co, static_cast<Real*>(b), flags);
        break;
      default: {
        std::vector<fftw_r2r_kind> kinds;
        for (uint8_t k : s.r2r_kinds) kinds.push_back(static_cast<fftw_r2r_kind>(k));
        plan_ = F::guru_r2r(rank, d.dims.data(), 1, &d.batch, re, static_cast<Real*>(b), kinds.data(), flags);
      }
    }
    F::release(a);
    F::release(b);
    if (!plan_) throw Error("FFTW could not plan " + wire::shape_name(s));
  }
  ~TypedPlan() override {
    std::lock_guard lk(g_planner);
    F::destroy(plan_);
  }
  void execute(const std::byte* in, std::byte* out) const override {
    auto* i = const_cast<std::byte*>(in);
    switch (kind_) {
      case FftKind::c2c:
        F::exec_dft(plan_, reinterpret_cast<typename F::complex*>(i), reinterpret_cast<typename F::complex*>(out));
        break;
      case FftKind::r2c:
        F::exec_r2c(plan_, reinterpret_cast<Real*>(i), reinterpret_cast<typename F::complex*>(out));
        break;
      case FftKind::c2r:
        F::exec_c2r(plan_, reinterpret_cast<typename F::complex*>(i), reinterpret_cast<Real*>(out));
        break;
      default:
        F::exec_r2r(plan_, reinterpret_cast<Real*>(i), reinterpret_cast<Real*>(out));
    }
  }

 private:
  FftKind kind_;
  typename F::plan plan_ = nullptr;
};

// FFTW's SIMD alignment (16 bytes) for both arrays: plans made for aligned arrays may use
// aligned loads, which unaligned arrays must not meet.
bool aligned(const void* a, const void* b) {
  return reinterpret_cast<uintptr_t>(a) % 16 == 0 && reinterpret_cast<uintptr_t>(b) % 16 == 0;
}

class CpuFft final : public server::FftExecutor {
 public:
  explicit CpuFft(CpuFftOptions o) : options_(std::move(o)) {
    if (!options_.threads) options_.threads = std::max(1u, std::thread::hardware_concurrency());
    std::lock_guard lk(g_planner);
    Fftw<double>::init_threads();
    Fftw<float>::init_threads();
    if (!options_.wisdom_file.empty()) {
      // A missing file is a first start; an unreadable one is reported and replaced later.
      for (auto p : {wire::FftPrecision::f64, wire::FftPrecision::f32}) {
        const std::string file = wisdom_file(p);
        const bool ok = p == wire::FftPrecision::f32 ? Fftw<float>::import_wisdom(file.c_str())
                                                      : Fftw<double>::import_wisdom(file.c_str());
        if (access(file.c_str(), F_OK) == 0 && !ok)
          std::fprintf(stderr, "outboard: warning: cannot read FFTW wisdom from %s\n", file.c_str());
      }
    }
  }

  std::string where() const override { return "cpu"; }
  bool serves(const FftShape&) const override { return true; }

  void prepare(const FftShape& s) override {
    uint64_t wait = 0;
    plan_for(s, true, wait);
  }

  server::FftTiming execute(const FftShape& s, const std::byte* in, std::byte* out) override {
    server::FftTiming t;
    std::shared_ptr<const Plan> plan = plan_for(s, aligned(in, out), t.plan_wait_ns);
    const uint64_t t0 = now_ns();
    plan->execute(in, out);
    t.compute_ns = now_ns() - t0;
    return t;
  }

  nlohmann::json describe() const override {
    std::lock_guard lk(mu_);
    return {{"executor", "cpu"},  {"library", std::string(fftw_version)}, {"threads", options_.threads},
            {"planner", options_.planner}, {"plans", cache_.size()}, {"hits", hits_},
            {"misses", misses_}, {"evictions", evictions_}};
  }

 private:
  using Key = std::pair<std::vector<std::byte>, bool>;  // the shape's encoding, aligned
  struct Entry {
    std::shared_future<std::shared_ptr<const Plan>> plan;
    uint64_t used = 0;
  };

  static std::vector<std::byte> key_of(const FftShape& s) {
    std::vector<std::byte> k;
    wire::Writer w(k);
    wire::encode(w, s);
    return k;
  }

  // The cached plan, or one made now (by the first caller; others wait for it).
  std::shared_ptr<const Plan> plan_for(const FftShape& s, bool is_aligned, uint64_t& wait_ns) {
    const Key key{key_of(s), is_aligned};
    std::promise<std::shared_ptr<const Plan>> made;
    std::shared_future<std::shared_ptr<const Plan>> plan;
    bool maker = false;
    {
      std::lock_guard lk(mu_);
      auto it = cache_.find(key);
      if (it != cache_.end()) {
        ++hits_;
        it->second.used = ++tick_;
        plan = it->second.plan;
      } else {
        ++misses_;
        plan = made.get_future().share();
        cache_[key] = {plan, ++tick_};
        maker = true;
        evict();
      }
    }
    const uint64_t t0 = now_ns();
    if (maker) {
      try {
        made.set_value(make(s, is_aligned));
      } catch (...) {
        made.set_exception(std::current_exception());
        std::lock_guard lk(mu_);
        cache_.erase(key);  // the next execution tries again
      }
    }
    std::shared_ptr<const Plan> p = plan.get();  // rethrows the maker's error
    wait_ns = now_ns() - t0;
    return p;
  }

  std::shared_ptr<const Plan> make(const FftShape& s, bool is_aligned) {
    const unsigned flags = planner_flags(options_.planner);
    std::lock_guard lk(g_planner);
    std::shared_ptr<const Plan> p;
    if (s.precision == wire::FftPrecision::f32)
      p = std::make_shared<TypedPlan<float>>(s, is_aligned, flags, options_.threads);
    else
      p = std::make_shared<TypedPlan<double>>(s, is_aligned, flags, options_.threads);
    if (flags != FFTW_ESTIMATE && !options_.wisdom_file.empty()) save_wisdom(s.precision);
    return p;
  }

  // FFTW keeps each precision's wisdom apart: the double one in the file named, the single one
  // beside it.
  std::string wisdom_file(wire::FftPrecision p) const {
    return p == wire::FftPrecision::f32 ? options_.wisdom_file + "-single" : options_.wisdom_file;
  }

  // Written beside and renamed, so a crash never leaves half a file. Holds the planner lock.
  void save_wisdom(wire::FftPrecision p) {
    const std::string file = wisdom_file(p), tmp = file + ".tmp";
    const bool ok = p == wire::FftPrecision::f32 ? Fftw<float>::export_wisdom(tmp.c_str())
                                                  : Fftw<double>::export_wisdom(tmp.c_str());
    if (!ok || std::rename(tmp.c_str(), file.c_str()) != 0)
      std::fprintf(stderr, "outboard: warning: cannot write FFTW wisdom to %s\n", file.c_str());
  }

  // Drops the least recently used plans that are made, down to max_plans. Holds mu_. Executions
  // still running keep theirs alive.
  void evict() {
    while (cache_.size() > options_.max_plans) {
      auto victim = cache_.end();
      for (auto it = cache_.begin(); it != cache_.end(); ++it) {
        const bool ready = it->second.plan.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
        if (ready && (victim == cache_.end() || it->second.used < victim->second.used)) victim = it;
      }
      if (victim == cache_.end()) return;
      cache_.erase(victim);
      ++evictions_;
    }
  }

  CpuFftOptions options_;
  mutable std::mutex mu_;
  std::map<Key, Entry> cache_;
  uint64_t tick_ = 0, hits_ = 0, misses_ = 0, evictions_ = 0;
};

}  // namespace

std::unique_ptr<server::FftExecutor> make_cpu_fft(const CpuFftOptions& options) {
  return std::make_unique<CpuFft>(options);
}

}  // namespace outboard::backends
