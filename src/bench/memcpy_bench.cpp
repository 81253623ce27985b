#include "bench/memcpy_bench.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <optional>
#include <utility>

#include "backends/cuda/loader.hpp"
#include "bench/results.hpp"

namespace outboard::bench {
namespace {

using cuda::CudaPlugin;
using Measure = std::function<double(uint64_t, uint64_t)>;

// The plugin, loaded once per process; Unavailable (with the loader's reason) where it cannot be.
const CudaPlugin& plugin() {
  static std::once_flag once;
  static std::optional<CudaPlugin> loaded;
  static std::string why;
  std::call_once(once, [] { loaded = CudaPlugin::load(why); });
  if (!loaded) throw Unavailable(why);
  return *loaded;
}

void use_device(const CudaPlugin& p, int device) {
  if (device < 0 || device >= p.device_count())
    throw Error("CUDA device " + std::to_string(device) + " does not exist: this host has " +
                std::to_string(p.device_count()));
  p.check(p.api().set_device(device), "cudaSetDevice");
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Memory the benchmarks copy between; freed on every path out.
class Memory {
 public:
  enum Kind { device, pinned, paged };

  Memory() = default;
  Memory(const CudaPlugin& p, Kind kind, uint64_t bytes) : plugin_(&p), kind_(kind) {
    const auto& api = p.api();
    switch (kind) {
      case device:
        p.check(api.device_alloc(&ptr_, bytes), "cudaMalloc");
        p.check(api.fill(ptr_, 0, bytes, nullptr), "cudaMemset");
        break;
      case pinned:
        p.check(api.host_alloc_pinned(&ptr_, bytes), "cudaHostAlloc");
        std::memset(ptr_, 0x5a, bytes);
        break;
      case paged:
        ptr_ = std::malloc(bytes);
        if (!ptr_) throw Error("cannot allocate " + std::to_string(bytes) + " bytes of host memory");
        std::memset(ptr_, 0x5a, bytes);  // every page touched, so the copies do not fault them in
        break;
    }
  }
  Memory(Memory&& o) noexcept : plugin_(o.plugin_), kind_(o.kind_), ptr_(std::exchange(o.ptr_, nullptr)) {}
  Memory& operator=(Memory&& o) noexcept {
    if (this != &o) {
      release();
      plugin_ = o.plugin_;
      kind_ = o.kind_;
      ptr_ = std::exchange(o.ptr_, nullptr);
    }
    return *this;
  }
  Memory(const Memory&) = delete;
  Memory& operator=(const Memory&) = delete;
  ~Memory() { release(); }

  void* get() const { return ptr_; }

 private:
  void release() {
    if (!ptr_) return;
    if (kind_ == paged)
      std::free(ptr_);
    else if (kind_ == pinned)
      plugin_->api().host_free_pinned(ptr_);
    else
      plugin_->api().device_free(ptr_);
    ptr_ = nullptr;
  }

  const CudaPlugin* plugin_ = nullptr;
  Kind kind_ = device;
  void* ptr_ = nullptr;
};

const char* direction_name(int kind) {
  return kind == OUTBOARD_CUDA_H2D ? "H2D" : kind == OUTBOARD_CUDA_D2H ? "D2H" : "D2D";
}

// One-way copies back to back, each a synchronous cudaMemcpy. cudaMemcpy may return before a
// device-to-device or pageable host-to-device copy has landed, so the clock stops only after the
// default stream has drained.
Measure streaming(const CudaPlugin& p, int kind, void* dst, const void* src) {
  return [&p, kind, dst, src](uint64_t bytes, uint64_t repeats) {
    const auto& api = p.api();
    auto t0 = std::chrono::steady_clock::now();
    for (uint64_t r = 0; r < repeats; ++r)
      if (int rc = api.memcpy_sync(kind, dst, src, bytes, nullptr)) p.check(rc, "cudaMemcpy");
    p.check(api.stream_sync(nullptr), "cudaStreamSynchronize");
    return seconds_since(t0) / static_cast<double>(repeats);
  };
}

// H2D then D2H of the same buffers, each waiting for the other: seconds per one-way copy = RTT/2.
Measure host_pingpong(const CudaPlugin& p, void* dev, void* host) {
  return [&p, dev, host](uint64_t bytes, uint64_t repeats) {
    const auto& api = p.api();
    auto t0 = std::chrono::steady_clock::now();
    for (uint64_t r = 0; r < repeats; ++r) {
      if (int rc = api.memcpy_sync(OUTBOARD_CUDA_H2D, dev, host, bytes, nullptr)) p.check(rc, "cudaMemcpy");
      if (int rc = api.memcpy_sync(OUTBOARD_CUDA_D2H, host, dev, bytes, nullptr)) p.check(rc, "cudaMemcpy");
    }
    p.check(api.stream_sync(nullptr), "cudaStreamSynchronize");
    return seconds_since(t0) / (2.0 * static_cast<double>(repeats));
  };
}

// Device buffer A to B, then B to A, each waited for (a D2D cudaMemcpy does not wait by itself).
Measure device_pingpong(const CudaPlugin& p, void* a, void* b) {
  return [&p, a, b](uint64_t bytes, uint64_t repeats) {
    const auto& api = p.api();
    auto t0 = std::chrono::steady_clock::now();
    for (uint64_t r = 0; r < repeats; ++r) {
      if (int rc = api.memcpy_sync(OUTBOARD_CUDA_D2D, b, a, bytes, nullptr)) p.check(rc, "cudaMemcpy");
      if (int rc = api.stream_sync(nullptr)) p.check(rc, "cudaStreamSynchronize");
      if (int rc = api.memcpy_sync(OUTBOARD_CUDA_D2D, a, b, bytes, nullptr)) p.check(rc, "cudaMemcpy");
      if (int rc = api.stream_sync(nullptr)) p.check(rc, "cudaStreamSynchronize");
    }
    return seconds_since(t0) / (2.0 * static_cast<double>(repeats));
  };
}

std::string version_text(int v) {  // CUDA's 1000*major + 10*minor
  return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

outboard_cuda_device_info device_info(const CudaPlugin& p, int device) {
  outboard_cuda_device_info info{};
  p.check(p.api().device_describe(device, &info), "describing the CUDA device");
  return info;
}

nlohmann::json gpu_json(const outboard_cuda_device_info& i, int device) {
  return {{"index", device},
          {"name", i.name},
          {"pci_bus_id", i.pci_bus_id},
          {"memory_bytes", i.total_memory},
          {"compute_capability", std::to_string(i.compute_major) + "." + std::to_string(i.compute_minor)},
          {"multiprocessors", i.multiprocessors},
          {"copy_engines", i.async_engines},
          {"memory_bus_width_bits", i.memory_bus_width_bits},
          {"memory_clock_khz", i.memory_clock_khz},
          {"pcie",
           {{"current_generation", i.pcie_gen_current},
            {"current_width", i.pcie_width_current},
            {"max_generation", i.pcie_gen_max},
            {"max_width", i.pcie_width_max},
            {"source", "sysfs; 0 = unknown"}}}};
}

nlohmann::json software_json(const CudaPlugin& p, const outboard_cuda_device_info& i) {
  const int cb = i.cublas_version;
  return {{"cuda_driver", i.driver_version ? version_text(i.driver_version) : "none"},
          {"cuda_runtime", version_text(i.runtime_version)},
          {"cublas", std::to_string(cb / 10000) + "." + std::to_string(cb / 100 % 100) + "." + std::to_string(cb % 100)},
          {"cuda_plugin", p.path()}};
}

// PCIe bytes per second per direction for a link, 0 where the generation is not known here:
// GT/s per lane x lanes x encoding efficiency / 8 bits per byte. Gen1-2 encode 8b/10b, Gen3-5
// 128b/130b; e.g. Gen5 x16 = 32e9 x 16 x 128/130 / 8 = 63.0e9 B/s. Packet headers take a further
// few per cent, so copies top out somewhat below this.
double pcie_limit_bytes_per_s(int generation, int width, double* gts, const char** encoding) {
  static const double per_lane[] = {0, 2.5, 5, 8, 16, 32};
  if (generation < 1 || generation > 5 || width < 1) return 0;
  *gts = per_lane[generation];
  const double efficiency = generation <= 2 ? 8.0 / 10.0 : 128.0 / 130.0;
  *encoding = generation <= 2 ? "8b/10b" : "128b/130b";
  return *gts * 1e9 * width * efficiency / 8;
}

nlohmann::json pcie_json(const outboard_cuda_device_info& i, double* limit) {
  *limit = 0;
  // The negotiated link is the real limit; an idle GPU may have slowed it, so it is read right
  // after the copies, and the capability is the fallback.
  bool current = i.pcie_gen_current > 0 && i.pcie_width_current > 0;
  int gen = current ? i.pcie_gen_current : i.pcie_gen_max;
  int width = current ? i.pcie_width_current : i.pcie_width_max;
  nlohmann::json j = {{"current_generation", i.pcie_gen_current},
                      {"current_width", i.pcie_width_current},
                      {"max_generation", i.pcie_gen_max},
                      {"max_width", i.pcie_width_max}};
  double gts = 0;
  const char* encoding = "";
  *limit = pcie_limit_bytes_per_s(gen, width, &gts, &encoding);
  if (*limit == 0) {
    j["limit_gb_per_s"] = nullptr;
    j["note"] = "link generation or width unknown (sysfs)";
    return j;
  }
  j["generation"] = gen;
  j["width"] = width;
  j["from"] = current ? "current link" : "link capability";
  j["gt_per_s"] = gts;
  j["encoding"] = encoding;
  j["formula"] = "GT/s x lanes x encoding efficiency / 8";
  j["limit_gb_per_s"] = *limit / 1e9;
  if (current && i.pcie_gen_max > i.pcie_gen_current)
    j["note"] = "the link ran below its capability when read";
  return j;
}

// Pinned copies of `bytes` in one direction: the sweep's host-clock figure against CUDA events.
nlohmann::json validate_direction(const CudaPlugin& p, const SweepOptions& sweep, int kind, void* dst, const void* src,
                                  uint64_t bytes, const std::vector<Point>& series) {
  Point at;
  for (const Point& pt : series)
    if (pt.bytes == bytes) at = pt;
  const bool from_sweep = at.bytes == bytes;
  if (!from_sweep) {  // the sweep did not run this series: measure the point the same way now
    Measure m = streaming(p, kind, dst, src);
    at.bytes = bytes;
    at.repeats = repeats_for(m(bytes, 1), sweep.target_seconds, sweep.max_repeats);
    at.seconds = std::numeric_limits<double>::infinity();
    for (int t = 0; t < sweep.trials; ++t) at.seconds = std::min(at.seconds, m(bytes, at.repeats));
  }
  Point peak = at;
  for (const Point& pt : series)
    if (pt.seconds > 0 && pt.bytes / pt.seconds > peak.bytes / peak.seconds) peak = pt;

  const int repeats = static_cast<int>(std::clamp<uint64_t>(at.repeats, 1, 10000));
  float ms = 0;
  p.check(p.api().timed_copy(kind, dst, src, bytes, 1, &ms), "timed copy");  // warm-up
  double best_ms = std::numeric_limits<double>::infinity();
  for (int t = 0; t < sweep.trials; ++t) {
    p.check(p.api().timed_copy(kind, dst, src, bytes, repeats, &ms), "timed copy");
    best_ms = std::min<double>(best_ms, ms);
  }
  const double events_seconds = best_ms / 1e3 / repeats;
  const double sweep_rate = bytes / at.seconds, events_rate = bytes / events_seconds;
  const double peak_rate = peak.bytes / peak.seconds;
  return {{"sweep_point", from_sweep ? "from the sweep" : "measured for validation"},
                      {"sweep_repeats", at.repeats},
                      {"sweep_seconds", at.seconds},
                      {"sweep_gb_per_s", sweep_rate / 1e9},
                      {"sweep_peak_bytes", peak.bytes},
                      {"sweep_peak_gb_per_s", peak_rate / 1e9},
                      {"events_repeats", repeats},
                      {"events_seconds", events_seconds},
                      {"events_gb_per_s", events_rate / 1e9},
                      {"sweep_over_events", sweep_rate / events_rate}};
}

nlohmann::json options_json(const MemcpyOptions& o) {
  return {{"device", o.device},     {"h2d", o.h2d},           {"d2h", o.d2h},
          {"d2d", o.d2d},           {"roundtrip", o.roundtrip}, {"paged", o.paged},
          {"pinned", o.pinned},     {"streaming", o.streaming}, {"pingpong", o.pingpong},
          {"validate", o.validate}};
}

constexpr uint64_t kValidationCap = 256ull << 20;

struct Spec {
  std::string name, pattern, direction, memory;
  Measure measure;
};

}  // namespace

nlohmann::json describe_gpu(int device) {
  const CudaPlugin& p = plugin();
  if (device < 0 || device >= p.device_count()) throw Error("CUDA device " + std::to_string(device) + " does not exist");
  return gpu_json(device_info(p, device), device);
}

nlohmann::json describe_cuda_software() {
  const CudaPlugin& p = plugin();
  return software_json(p, device_info(p, 0));
}

nlohmann::json run_memcpy_bench(const SweepOptions& sweep, const MemcpyOptions& o, const MemcpyProgress& progress) {
  const std::vector<uint64_t> sizes = sweep_sizes(sweep);  // checks the options before the GPU is touched
  const CudaPlugin& p = plugin();
  use_device(p, o.device);
  const uint64_t max_bytes = sizes.back();

  const bool host_series = (o.streaming && (o.h2d || o.d2h)) || (o.pingpong && o.roundtrip);
  const bool d2d_series = o.d2d && (o.streaming || o.pingpong);
  Memory dev_a(p, Memory::device, max_bytes), dev_b, paged, pinned;
  if (d2d_series) dev_b = Memory(p, Memory::device, max_bytes);
  if (host_series && o.paged) paged = Memory(p, Memory::paged, max_bytes);
  if ((host_series && o.pinned) || o.validate) pinned = Memory(p, Memory::pinned, max_bytes);

  std::vector<std::pair<const char*, void*>> hosts;
  if (o.paged) hosts.emplace_back("paged", paged.get());
  if (o.pinned) hosts.emplace_back("pinned", pinned.get());

  std::vector<Spec> specs;
  if (o.streaming) {
    for (int kind : {OUTBOARD_CUDA_H2D, OUTBOARD_CUDA_D2H}) {
      if (kind == OUTBOARD_CUDA_H2D ? !o.h2d : !o.d2h) continue;
      for (auto [memory, host] : hosts) {
        void* dst = kind == OUTBOARD_CUDA_H2D ? dev_a.get() : host;
        const void* src = kind == OUTBOARD_CUDA_H2D ? host : dev_a.get();
        std::string dir = direction_name(kind);
        specs.push_back({dir + " " + memory + " streaming", "streaming", kind == OUTBOARD_CUDA_H2D ? "h2d" : "d2h", memory,
                         streaming(p, kind, dst, src)});
      }
    }
    if (o.d2d) specs.push_back({"D2D streaming", "streaming", "d2d", "device", streaming(p, OUTBOARD_CUDA_D2D, dev_b.get(), dev_a.get())});
  }
  if (o.pingpong) {
    if (o.roundtrip)
      for (auto [memory, host] : hosts)
        specs.push_back({std::string("H2D+D2H ") + memory + " pingpong", "pingpong", "roundtrip", memory,
                         host_pingpong(p, dev_a.get(), host)});
    if (o.d2d) specs.push_back({"D2D pingpong", "pingpong", "d2d", "device", device_pingpong(p, dev_a.get(), dev_b.get())});
  }

  nlohmann::json series = nlohmann::json::array();
  std::vector<Point> h2d_pinned, d2h_pinned;
  for (const Spec& spec : specs) {
    spec.measure(max_bytes, 1);  // warm-up: the copy path's first use, at the largest size
    std::function<void(const Point&, size_t, size_t)> each;
    if (progress) each = [&](const Point& pt, size_t i, size_t n) { progress(spec.name, pt, i, n); };
    std::vector<Point> points = run_sweep(sweep, spec.measure, each);
    nlohmann::json s = transfer_series(spec.name, spec.pattern, points);
    s["direction"] = spec.direction;
    s["memory"] = spec.memory;
    s["device"] = o.device;
    s["timer"] = "steady_clock";
    series.push_back(std::move(s));
    if (spec.name == "H2D pinned streaming") h2d_pinned = points;
    if (spec.name == "D2H pinned streaming") d2h_pinned = points;
  }

  const outboard_cuda_device_info info = device_info(p, o.device);
  nlohmann::json result = {{"machine", {{"gpu", gpu_json(info, o.device)}}},
                           {"software", software_json(p, info)},
                           {"options", {{"memcpy", options_json(o)}}},
                           {"series", std::move(series)}};
  if (!o.validate) return result;

  // The largest size of the sweep up to 256 MiB (the smallest if all are larger).
  uint64_t bytes = sizes.front();
  for (uint64_t s : sizes)
    if (s <= kValidationCap) bytes = s;
  nlohmann::json h2d = validate_direction(p, sweep, OUTBOARD_CUDA_H2D, dev_a.get(), pinned.get(), bytes, h2d_pinned);
  nlohmann::json d2h = validate_direction(p, sweep, OUTBOARD_CUDA_D2H, pinned.get(), dev_a.get(), bytes, d2h_pinned);
  double limit = 0;
  nlohmann::json pcie = pcie_json(device_info(p, o.device), &limit);  // read right after the copies
  if (limit > 0)
    for (nlohmann::json* d : {&h2d, &d2h}) {
      (*d)["sweep_peak_link_fraction"] = (*d)["sweep_peak_gb_per_s"].get<double>() * 1e9 / limit;
      (*d)["events_link_fraction"] = (*d)["events_gb_per_s"].get<double>() * 1e9 / limit;
    }
  result["validation"] = {
      {"method",
       "pinned copies of the same buffers at one size: the sweep's host clock (steady_clock around synchronous "
       "cudaMemcpy calls) against CUDA events around cudaMemcpyAsync calls on one stream; best of the sweep's "
       "trials each"},
      {"units", "GB/s = 1e9 bytes per second"},
      {"bytes", bytes},
      {"h2d", std::move(h2d)},
      {"d2h", std::move(d2h)},
      {"pcie", std::move(pcie)}};
  return result;
}

nlohmann::json run_gpu_gemm_series(char precision, const std::vector<int64_t>& sizes, bool include_transfers,
                                   const GpuGemmOptions& o, const std::function<void(const nlohmann::json&)>& progress) {
  uint64_t element = 0;
  bool complex = false, single = false;
  switch (precision) {
    case 's': element = 4, single = true; break;
    case 'd': element = 8; break;
    case 'c': element = 8, complex = true, single = true; break;
    case 'z': element = 16, complex = true; break;
    default: throw Error(std::string("gemm: precision must be s, d, c or z, not ") + precision);
  }
  if (sizes.empty() || *std::min_element(sizes.begin(), sizes.end()) < 1 ||
      *std::max_element(sizes.begin(), sizes.end()) > std::numeric_limits<int>::max())
    throw Error("gemm: sizes must be from 1 to INT_MAX (cuBLAS takes int)");
  if (o.trials < 1) throw Error("gemm: trials must be at least 1");
  const CudaPlugin& p = plugin();
  use_device(p, o.device);
  const auto& api = p.api();

  const uint64_t n_max = static_cast<uint64_t>(*std::max_element(sizes.begin(), sizes.end()));
  const uint64_t max_bytes = n_max * n_max * element;
  Memory a(p, Memory::device, max_bytes), b(p, Memory::device, max_bytes), c(p, Memory::device, max_bytes);
  Memory host_a(p, Memory::pinned, max_bytes), host_b(p, Memory::pinned, max_bytes), host_c(p, Memory::pinned, max_bytes);
  // Values in [-1, 1) from a fixed linear congruential sequence: real data, the same every run.
  uint64_t state = 0x9e3779b97f4a7c15ull;
  auto next = [&state] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<double>(state >> 11) / 4503599627370496.0 - 1.0;  // 2^53 / 2
  };
  for (Memory* m : {&host_a, &host_b}) {
    if (single)
      for (float *f = static_cast<float*>(m->get()), *e = f + max_bytes / 4; f != e; ++f) *f = static_cast<float>(next());
    else
      for (double *d = static_cast<double*>(m->get()), *e = d + max_bytes / 8; d != e; ++d) *d = next();
  }
  // cuBLAS handles live until the series is done, also when it fails.
  struct ReleaseHandles {
    const outboard_cuda_api_v1& api;
    ~ReleaseHandles() { api.release(); }
  } release_handles{api};

  auto gemm = [&](int n, int repeats) {
    double s = 0;
    p.check(api.gemm(precision, n, a.get(), b.get(), c.get(), repeats, &s), "cuBLAS GEMM");
    return s;
  };
  auto repeats_within = [&](double one) {
    return static_cast<int>(std::clamp(one > 0 ? o.target_seconds / one : 1.0, 1.0, 1000.0));
  };

  nlohmann::json points = nlohmann::json::array();
  for (int64_t n64 : sizes) {
    const int n = static_cast<int>(n64);
    const uint64_t bytes = static_cast<uint64_t>(n) * n * element;
    p.check(api.memcpy_sync(OUTBOARD_CUDA_H2D, a.get(), host_a.get(), bytes, nullptr), "cudaMemcpy");
    p.check(api.memcpy_sync(OUTBOARD_CUDA_H2D, b.get(), host_b.get(), bytes, nullptr), "cudaMemcpy");
    gemm(n, 1);  // warm-up: the first call of a size chooses and loads its kernels
    const int repeats = repeats_within(gemm(n, 1));
    double compute = std::numeric_limits<double>::infinity();
    for (int t = 0; t < o.trials; ++t) compute = std::min(compute, gemm(n, repeats) / repeats);

    double total = compute;
    if (include_transfers) {
      auto offload = [&] {
        p.check(api.memcpy_sync(OUTBOARD_CUDA_H2D, a.get(), host_a.get(), bytes, nullptr), "cudaMemcpy");
        p.check(api.memcpy_sync(OUTBOARD_CUDA_H2D, b.get(), host_b.get(), bytes, nullptr), "cudaMemcpy");
        gemm(n, 1);
        p.check(api.memcpy_sync(OUTBOARD_CUDA_D2H, host_c.get(), c.get(), bytes, nullptr), "cudaMemcpy");
      };
      auto t0 = std::chrono::steady_clock::now();
      offload();
      const int offloads = repeats_within(seconds_since(t0));
      total = std::numeric_limits<double>::infinity();
      for (int t = 0; t < o.trials; ++t) {
        t0 = std::chrono::steady_clock::now();
        for (int r = 0; r < offloads; ++r) offload();
        total = std::min(total, seconds_since(t0) / offloads);
      }
    }
    const double flops = (complex ? 8.0 : 2.0) * n * double(n) * n;
    nlohmann::json pt = {{"n", n},
                         {"seconds", total},
                         {"gflops", flops / total / 1e9},
                         {"compute_seconds", compute},
                         {"gflops_compute", flops / compute / 1e9}};
    if (progress) progress(pt);
    points.push_back(std::move(pt));
  }

  return {{"name", std::string(1, precision) + "gemm local-gpu" + (include_transfers ? "" : " (compute only)")},
          {"kind", "gemm"},
          {"precision", std::string(1, precision)},
          {"where", "local-gpu"},
          {"includes_transfers", include_transfers},
          {"device", o.device},
          {"library", "cuBLAS"},
          {"points", std::move(points)}};
}

}  // namespace outboard::bench
