#include "client/link_model.hpp"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "common/error.hpp"

namespace outboard::client {
namespace {

// Calls below these teach nothing: their time is mostly fixed costs and timer noise.
constexpr double kMinLearnedFlops = 1e7;
// A remote call of at least this many bytes measures the link; smaller ones the fixed cost.
constexpr double kLinkSampleBytes = 16 << 20;
// A new measurement's weight against what was known (recent calls count most; one odd call
// does not flip the choice).
constexpr double kNewWeight = 0.3;
// Estimates closer than this factor leave room for a measurement to reverse the choice: the side
// not chosen is tried while it has fewer than kSettledSamples measurements.
constexpr double kExploreFactor = 2;
constexpr uint64_t kSettledSamples = 3;
constexpr uint64_t kMostTries = 6;
// Never explore locally a call expected to take longer than this here.
constexpr double kMostExploreSeconds = 2;

void blend(double& known, double measured) { known = known > 0 ? (1 - kNewWeight) * known + kNewWeight * measured : measured; }

// A compute rate: a faster run than known is what the machine can do, and is taken at once; a
// slower one (a cold start, a busy moment) only pulls the estimate down gradually.
void learn_rate(double& known, double measured) {
  if (measured > known) known = measured;
  else blend(known, measured);
}

unsigned host_cores() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return unsigned(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
}

bool is_fft(std::string_view family) { return family.starts_with("fftw"); }

// Single precision (s, c, fftwf_) runs at about twice the double rate, here and on a GPU.
double precision_factor(std::string_view family) {
  if (is_fft(family)) return family.starts_with("fftwf") ? 2 : 1;
  return !family.empty() && (family[0] == 's' || family[0] == 'c') ? 2 : 1;
}

}  // namespace

double local_rate_factor(std::string_view family) {
  if (is_fft(family) || family.size() < 2) return 1;
  const std::string_view stem = family.substr(1);
  static constexpr std::string_view level3[] = {"gemm", "symm", "hemm", "syrk", "herk", "syr2k", "her2k", "trmm", "trsm"};
  static constexpr std::string_view slow[] = {"syev", "heev", "gesvd", "gesdd", "geev", "gees", "gges", "ggev", "sygv",
                                               "hegv", "gehrd", "orghr", "unghr", "trsyl", "geqp3", "gels"};
  for (std::string_view s : level3)
    if (stem == s) return 1;
  for (std::string_view s : slow)
    if (stem.starts_with(s)) return 0.1;
  return 0.5;  // getrf, potrf, geqrf, their solvers and inverses
}

LinkModel::LinkModel(const Settings& settings)
    : settings_(settings),
      link_bytes_per_second_(settings.link_gbytes * 1e9),
      round_trip_seconds_(2 * settings.latency_seconds),
      local_gflops_(settings.local_gflops > 0 ? settings.local_gflops : 30.0 * host_cores()) {}

double LinkModel::local_rate(std::string_view family, const Family* f) const {
  if (f && f->local_flops_per_second > 0) return f->local_flops_per_second;
  if (is_fft(family)) {
    const double gflops = settings_.fft_local_gflops > 0 ? settings_.fft_local_gflops : 4 * std::sqrt(double(host_cores()));
    return gflops * 1e9 * precision_factor(family);
  }
  return local_gflops_ * 1e9 * precision_factor(family) * local_rate_factor(family);
}

double LinkModel::server_rate(std::string_view family, const Family* f) const {
  if (f && f->server_flops_per_second > 0) return f->server_flops_per_second;
  if (settings_.server_gflops > 0) return settings_.server_gflops * 1e9 * precision_factor(family) * local_rate_factor(family);
  // Without a GPU the server's rate is unknown: taken as this host's (the first call there measures it).
  if (!server_has_gpu_) return local_rate(family, f);
  // A GPU: ~20 TF/s for a double GEMM (cuBLAS on an H100/H200 reaches 50), 1 TF/s for an FFT (bound by memory).
  if (is_fft(family)) return 1e12 * precision_factor(family);
  return 20e12 * precision_factor(family) * local_rate_factor(family);
}

LinkModel::Estimate LinkModel::estimate_locked(const CallCost& c, const Family* f) const {
  Estimate e;
  e.local_seconds = c.flops / local_rate(c.family, f);
  const double fixed = f && f->fixed_seconds >= 0 ? f->fixed_seconds : round_trip_seconds_ + 1e-3;
  e.remote_seconds = fixed + c.bytes / link_bytes_per_second_ + c.flops / server_rate(c.family, f);
  e.remote = e.remote_seconds < e.local_seconds;
  return e;
}

LinkModel::Estimate LinkModel::estimate(const CallCost& c) const {
  std::lock_guard lk(mu_);
  auto it = families_.find(c.family);
  return estimate_locked(c, it == families_.end() ? nullptr : &it->second);
}

LinkModel::Estimate LinkModel::choose(const CallCost& c) {
  std::lock_guard lk(mu_);
  auto it = families_.find(c.family);
  if (it == families_.end()) it = families_.emplace(std::string(c.family), Family{}).first;
  Family& f = it->second;
  Estimate e = estimate_locked(c, &f);
  const double ratio = e.remote_seconds / e.local_seconds;
  const bool close = ratio > 1 / kExploreFactor && ratio < kExploreFactor;
  // A bounded number of tries, never two in a row (the chosen side's estimate needs its own fresh
  // measurements: a cold first call there may have made it look worse than it is); none for a
  // plan (c.sticky: all of an FFT plan's executions go where its first goes), where a wrong try
  // costs every execution.
  if (close && !c.sticky && !f.explored_last && f.explored < kMostTries) {
    // (Once the chosen side has a measurement: the first call goes where the estimates say.)
    if (e.remote && f.remote_samples && f.local_samples < kSettledSamples && e.local_seconds <= kMostExploreSeconds)
      e.remote = false, e.explore = true;
    else if (!e.remote && f.local_samples && f.remote_samples < kSettledSamples)
      e.remote = true, e.explore = true;
  }
  f.explored += e.explore;
  f.explored_last = e.explore;
  ++(e.remote ? f.chose_remote : f.chose_local);
  return e;
}

void LinkModel::probed(double round_trip_seconds, double bytes_per_second, bool server_has_gpu) {
  std::lock_guard lk(mu_);
  probed_ = true;
  server_has_gpu_ = server_has_gpu;
  if (round_trip_seconds > 0) round_trip_seconds_ = round_trip_seconds;
  if (bytes_per_second > 0 && !link_measured_)
    link_bytes_per_second_ = bytes_per_second, link_measured_ = true, link_recalled_ = false;
}

void LinkModel::remote_ran(std::string_view family, double flops, double bytes, double seconds, double compute_seconds) {
  if (seconds <= 0) return;
  std::lock_guard lk(mu_);
  auto it = families_.find(family);
  if (it == families_.end()) it = families_.emplace(std::string(family), Family{}).first;
  Family& f = it->second;
  // The family's first call on the server pays for its start there too (a GPU library's handle
  // and workspace): slower than the prior, its rate teaches nothing.
  ++f.remote_samples;
  const bool first = f.remote_runs++ == 0;
  if (flops >= kMinLearnedFlops && compute_seconds > 0) {
    const double rate = flops / compute_seconds;
    if (!first || rate >= server_rate(family, nullptr)) learn_rate(f.server_flops_per_second, rate);
  }
  const double fixed = f.fixed_seconds >= 0 ? f.fixed_seconds : round_trip_seconds_;
  if (bytes >= kLinkSampleBytes) {
    // Whatever of the call was neither computing nor its fixed cost was moving its bytes (a
    // pipelined call overlaps them: the rate comes out higher, and so predicts such calls).
    const double moving = seconds - compute_seconds - fixed;
    if (moving > 0) blend(link_bytes_per_second_, bytes / moving), link_measured_ = true, link_recalled_ = false;
  } else {
    const double rest = seconds - bytes / link_bytes_per_second_ - compute_seconds;
    if (f.fixed_seconds < 0) f.fixed_seconds = std::max(0.0, rest);
    else f.fixed_seconds = std::max(0.0, (1 - kNewWeight) * f.fixed_seconds + kNewWeight * rest);
  }
}

void LinkModel::local_ran(std::string_view family, double flops, double seconds) {
  if (flops < kMinLearnedFlops || seconds <= 0) return;
  std::lock_guard lk(mu_);
  auto it = families_.find(family);
  if (it == families_.end()) it = families_.emplace(std::string(family), Family{}).first;
  Family& f = it->second;
  const double rate = flops / seconds;
  // The family's first run here in this process pays for the library's start (OpenBLAS starts its
  // threads, FFTW its plan's buffers): slower than the prior, it teaches nothing.
  ++f.local_samples;
  if (f.local_runs++ == 0 && rate < local_rate(family, nullptr)) return;
  learn_rate(f.local_flops_per_second, rate);
}

std::string LinkModel::summary() const {
  std::lock_guard lk(mu_);
  char line[320];
  std::snprintf(line, sizeof line, "link %.2f GB/s (%s), round trip %.0f us; server %s\n", link_bytes_per_second_ / 1e9,
                link_measured_ ? "measured" : link_recalled_ ? "earlier runs" : "assumed", round_trip_seconds_ * 1e6, server_has_gpu_ ? "with a GPU" : "without a GPU");
  std::string s = line;
  for (const auto& [name, f] : families_) {
    auto rate = [](double r, uint64_t n, double prior) {
      char b[48];
      std::snprintf(b, sizeof b, n ? "%.0f GF/s (%llu)" : "%.0f GF/s (assumed)", (n ? r : prior) / 1e9,
                    static_cast<unsigned long long>(n));
      return std::string(b);
    };
    std::snprintf(line, sizeof line, "%-12s here %s, server %s, fixed %.2f ms; chose here %llu, remote %llu (%llu to measure)\n",
                  name.c_str(), rate(f.local_flops_per_second, f.local_samples, local_rate(name, nullptr)).c_str(),
                  rate(f.server_flops_per_second, f.server_flops_per_second > 0 ? f.remote_samples : 0,
                       server_rate(name, nullptr)).c_str(),
                  (f.fixed_seconds >= 0 ? f.fixed_seconds : round_trip_seconds_ + 1e-3) * 1e3,
                  static_cast<unsigned long long>(f.chose_local), static_cast<unsigned long long>(f.chose_remote),
                  static_cast<unsigned long long>(f.explored));
    s += line;
  }
  return s;
}

std::string LinkModel::memory() const {
  std::lock_guard lk(mu_);
  nlohmann::json j = {{"link", {{"bytes_per_second", link_bytes_per_second_},
                                {"round_trip_seconds", round_trip_seconds_},
                                {"measured", link_measured_ || link_recalled_},
                                {"server_has_gpu", server_has_gpu_}}},
                      {"families", nlohmann::json::object()}};
  for (const auto& [name, f] : families_) {
    if (f.local_flops_per_second <= 0 && f.server_flops_per_second <= 0 && f.fixed_seconds < 0) continue;
    j["families"][name] = {{"local_flops_per_second", f.local_flops_per_second},
                           {"local_samples", f.local_flops_per_second > 0 ? f.local_samples : 0},
                           {"server_flops_per_second", f.server_flops_per_second},
                           {"remote_samples", f.remote_samples},
                           {"fixed_seconds", f.fixed_seconds}};
  }
  return j.dump();
}

size_t LinkModel::recall(std::string_view memory) {
  const nlohmann::json j = nlohmann::json::parse(memory, nullptr, false);
  if (!j.is_object() || !j.contains("families") || !j["families"].is_object())
    throw Error("not a cost model's memory (no \"families\" object)");
  auto number = [](const nlohmann::json& o, const char* key) {
    const auto it = o.find(key);
    const double v = it != o.end() && it->is_number() ? it->get<double>() : 0;
    return std::isfinite(v) && v > 0 ? v : 0;
  };
  std::lock_guard lk(mu_);
  if (const auto link = j.find("link"); link != j.end() && link->is_object() && !link_measured_) {
    const auto measured = link->find("measured");
    if (const double rate = number(*link, "bytes_per_second");
        rate > 0 && measured != link->end() && measured->is_boolean() && measured->get<bool>())
      link_bytes_per_second_ = rate, link_recalled_ = true;
    if (const double rtt = number(*link, "round_trip_seconds"); rtt > 0) round_trip_seconds_ = rtt;
  }
  size_t brought = 0;
  for (const auto& [name, v] : j["families"].items()) {
    if (!v.is_object() || name.empty() || name.size() > 32) continue;
    const double local = number(v, "local_flops_per_second"), server = number(v, "server_flops_per_second");
    const double fixed = v.contains("fixed_seconds") && v["fixed_seconds"].is_number() ? v["fixed_seconds"].get<double>() : -1;
    if (!local && !server && !(std::isfinite(fixed) && fixed >= 0)) continue;
    Family& f = families_[name];
    auto samples = [&](const char* key) {
      const double n = number(v, key);
      return static_cast<uint64_t>(std::min<double>(n, kSettledSamples));
    };
    if (local && !f.local_flops_per_second) f.local_flops_per_second = local, f.local_samples = std::max<uint64_t>(1, samples("local_samples"));
    if (server && !f.server_flops_per_second) f.server_flops_per_second = server, f.remote_samples = std::max<uint64_t>(1, samples("remote_samples"));
    if (std::isfinite(fixed) && fixed >= 0 && fixed < 10 && f.fixed_seconds < 0) f.fixed_seconds = fixed;
    ++brought;
  }
  return brought;
}

bool output_read(const wire::Level3Call& call) {
  const bool in_place = call.routine == wire::Routine::trmm || call.routine == wire::Routine::trsm;
  return in_place || call.beta[0] != 0 || call.beta[1] != 0;
}

CallCost level3_cost(std::string_view family, const wire::Level3Call& call) {
  wire::Level3Call sent = call;
  sent.output_sent = output_read(call);
  return {family, wire::flops(sent), double(wire::request_bytes(sent) + wire::reply_bytes(sent))};
}

namespace {

// 5 n log2 n for n a power of two or smooth; the rest as described at fft_work_flops.
double one_dimension(int64_t n) {
  int64_t smooth = 1, rough = n;
  for (int64_t p = 2; p <= kSmoothPrime && rough > 1; ++p)
    while (rough % p == 0) rough /= p, smooth *= p;
  const double s = double(smooth);
  double work = smooth > 1 ? 5 * double(n) * std::log2(s) : 0;
  if (rough > 1) {
    double m = 1;
    while (m < 2 * double(rough) - 1) m *= 2;
    work += s * 3 * 5 * m * std::log2(m);
  }
  return work;
}

}  // namespace

double fft_work_flops(const std::vector<int64_t>& sizes, double batch, bool real_data) {
  double points = 1;
  for (int64_t n : sizes) points *= double(std::max<int64_t>(n, 1));
  double work = 0;  // each dimension's transforms: points / n of them
  for (int64_t n : sizes)
    if (n > 1) work += points / double(n) * one_dimension(n);
  return work * batch * (real_data ? 0.5 : 1);
}

}  // namespace outboard::client
