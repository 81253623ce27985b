// FFTW cases in double and single precision, through the process's FFTW API (the FFTW shim
// catches it): c2c plans of rank 1 to 3, batched (plan_many) or not, in place or not, executed on
// their arrays and on new arrays (new-array execute), then destroyed; r2c plans (in place with the
// padded layout, or not) whose output a c2r plan turns back. Checked as
// tests/programs/fftw_check.c checks them, within 30 eps (log2(N + 1) + 1): c2c and r2c on
// sampled bins against a DFT summed in long double, relative to the input's 2-norm (the root mean
// square of the bins); c2r(r2c(x)) against N x, relative to N max |x|. Large transforms travel in
// chunks or on the direct path.
#include <fftw3.h>

#include <cmath>
#include <cstring>
#include <numbers>
#include <stdexcept>

#include "tools/outboard/soak/numeric.hpp"

namespace outboard::soak {
namespace {

// The FFTW API of one precision.
template <class R> struct Fftw;
template <> struct Fftw<double> {
  using C = fftw_complex;
  using Plan = fftw_plan;
  static constexpr const char* prefix = "fftw_";
  static Plan many(int rank, const int* n, int howmany, C* in, C* out, int sign, int dist) {
    return fftw_plan_many_dft(rank, n, howmany, in, nullptr, 1, dist, out, nullptr, 1, dist, sign, FFTW_ESTIMATE);
  }
  static Plan r2c(int rank, const int* n, double* in, C* out) { return fftw_plan_dft_r2c(rank, n, in, out, FFTW_ESTIMATE); }
  static Plan c2r(int rank, const int* n, C* in, double* out) { return fftw_plan_dft_c2r(rank, n, in, out, FFTW_ESTIMATE); }
  static void execute(Plan p) { fftw_execute(p); }
  static void execute_dft(Plan p, C* in, C* out) { fftw_execute_dft(p, in, out); }
  static void destroy(Plan p) { fftw_destroy_plan(p); }
  static void* alloc(size_t bytes) { return fftw_malloc(bytes); }
  static void release(void* p) { fftw_free(p); }
};
template <> struct Fftw<float> {
  using C = fftwf_complex;
  using Plan = fftwf_plan;
  static constexpr const char* prefix = "fftwf_";
  static Plan many(int rank, const int* n, int howmany, C* in, C* out, int sign, int dist) {
    return fftwf_plan_many_dft(rank, n, howmany, in, nullptr, 1, dist, out, nullptr, 1, dist, sign, FFTW_ESTIMATE);
  }
  static Plan r2c(int rank, const int* n, float* in, C* out) { return fftwf_plan_dft_r2c(rank, n, in, out, FFTW_ESTIMATE); }
  static Plan c2r(int rank, const int* n, C* in, float* out) { return fftwf_plan_dft_c2r(rank, n, in, out, FFTW_ESTIMATE); }
  static void execute(Plan p) { fftwf_execute(p); }
  static void execute_dft(Plan p, C* in, C* out) { fftwf_execute_dft(p, in, out); }
  static void destroy(Plan p) { fftwf_destroy_plan(p); }
  static void* alloc(size_t bytes) { return fftwf_malloc(bytes); }
  static void release(void* p) { fftwf_free(p); }
};

// FFTW-aligned memory of `count` elements, freed with the object.
template <class R, class E> struct Array {
  explicit Array(size_t count) : n(count), p(static_cast<E*>(Fftw<R>::alloc(sizeof(E) * std::max<size_t>(count, 1)))) {
    if (!p) throw std::bad_alloc();
    std::memset(static_cast<void*>(p), 0, sizeof(E) * std::max<size_t>(count, 1));
  }
  ~Array() { Fftw<R>::release(p); }
  Array(const Array&) = delete;
  Array& operator=(const Array&) = delete;
  size_t n;
  E* p;
};

long product(const std::vector<int>& n) {
  long p = 1;
  for (int d : n) p *= d;
  return p;
}
double tol_for(long total, double eps) { return 30 * eps * (std::log2(double(total) + 1) + 1); }

std::vector<int> dims(Context& c, bool big, int big_1d) {
  static const int one[] = {16, 60, 64, 100, 128, 243, 256, 360, 512, 1000, 1009, 1024, 2048, 4093, 4096, 8192};
  static const int two[] = {8, 12, 16, 17, 32, 45, 64, 100, 128};
  static const int three[] = {4, 6, 8, 12, 16};
  if (big) return {big_1d};
  const int rank = c.uniform(0, 9) < 6 ? 1 : c.uniform(0, 2) < 2 ? 2 : 3;
  std::vector<int> n(rank);
  for (int& d : n)
    d = rank == 1 ? one[c.uniform(0, int(std::size(one)) - 1)] : rank == 2 ? two[c.uniform(0, int(std::size(two)) - 1)]
                                                                           : three[c.uniform(0, int(std::size(three)) - 1)];
  return n;
}

std::string label(const std::string& routine, const std::vector<int>& n, int howmany, const char* more) {
  std::string s = routine + " ";
  for (size_t i = 0; i < n.size(); ++i) s += (i ? "x" : "") + std::to_string(n[i]);
  if (howmany > 1) s += "*" + std::to_string(howmany);
  return s + more;
}

// cos and sin of 2 pi j / N for every j, so a bin's DFT costs one lookup per element.
struct Twiddles {
  explicit Twiddles(long n) : n(n), cs(n) {
    for (long j = 0; j < n; ++j) {
      const long double a = 2 * std::numbers::pi_v<long double> * j / n;
      cs[j] = {std::cos(a), std::sin(a)};
    }
  }
  long n;
  std::vector<std::pair<long double, long double>> cs;
};

// Bin `k` (row-major multi-index of dims `nd`; the input has dims `n`) of the DFT of `x` (n
// complex values row-major) with `sign`: the sum of x[e] exp(sign 2 pi i sum_d k_d e_d / n_d).
CL dft_bin(const Twiddles& t, const std::vector<int>& n, const std::vector<int>& k, const std::vector<CL>& x, int sign) {
  const long total = product(n);
  CL s = 0;
  std::vector<int> e(n.size(), 0);
  for (long flat = 0; flat < total; ++flat) {
    long p = 0;
    for (size_t d = 0; d < n.size(); ++d) p += (static_cast<long>(k[d]) * e[d] % n[d]) * (total / n[d]);
    const auto& [co, si] = t.cs[p % total];
    s += x[flat] * CL(co, sign * si);
    for (int d = static_cast<int>(n.size()) - 1; d >= 0 && ++e[d] == n[d]; --d) e[d] = 0;  // the next element
  }
  return s;
}

// A random output bin of dims `nd` as a multi-index and its row-major offset.
std::pair<std::vector<int>, long> random_bin(Context& c, const std::vector<int>& nd) {
  std::vector<int> k(nd.size());
  long off = 0;
  for (size_t d = 0; d < nd.size(); ++d) {
    k[d] = c.uniform(0, nd[d] - 1);
    off = off * nd[d] + k[d];
  }
  return {k, off};
}

// Error over tolerance of `bins` sampled bins of a DFT: `got(batch, offset)` is the output.
template <class R, class Got> double check_bins(Context& c, const std::vector<int>& n, const std::vector<int>& nd,
                                                const std::vector<std::vector<CL>>& x, int sign, Got got) {
  const long total = product(n);
  Twiddles t(total);
  long double err = 0, norm = 0;
  bool nan = false;
  for (int s = 0; s < 8; ++s) {
    const int b = c.uniform(0, static_cast<int>(x.size()) - 1);
    auto [k, off] = random_bin(c, nd);
    const long double e = mag(got(b, off) - dft_bin(t, n, k, x[b], sign));
    if (std::isnan(e)) nan = true;
    err = std::max(err, e);
  }
  for (const auto& xb : x) {
    long double ss = 0;
    for (const CL& v : xb) ss += std::norm(v);
    norm = std::max(norm, std::sqrt(ss));
  }
  return nan ? NAN : ratio(err, norm, tol_for(total, eps<R>()));
}

template <class R> void c2c_case(Context& c) {
  using F = Fftw<R>;
  const int r = routine_index(std::string(F::prefix) + "c2c");
  const bool big = c.large();
  const std::vector<int> n = dims(c, big, std::is_same_v<R, float> ? 1 << 18 : 1 << 17);
  const long total = product(n);
  const int howmany = !big && c.uniform(0, 3) == 0 ? c.uniform(2, 4) : 1;
  const bool in_place = c.uniform(0, 3) == 0;
  const int sign = c.uniform(0, 1) ? FFTW_FORWARD : FFTW_BACKWARD;
  const size_t count = static_cast<size_t>(total) * howmany;
  Array<R, typename F::C> a(count), b(in_place ? 0 : count);
  typename F::C* out = in_place ? a.p : b.p;
  auto plan = F::many(static_cast<int>(n.size()), n.data(), howmany, a.p, out, sign, static_cast<int>(total));
  if (!plan) throw std::runtime_error(label(std::string(F::prefix) + "c2c", n, howmany, ": no plan"));
  // Fills `in`, runs `run`, checks `out`; several executions of the plan.
  auto round = [&](typename F::C* in, typename F::C* o, auto run, const char* how) {
    std::vector<std::vector<CL>> x(howmany, std::vector<CL>(total));
    for (int h = 0; h < howmany; ++h)
      for (long e = 0; e < total; ++e) {
        in[h * total + e][0] = static_cast<R>(c.real());
        in[h * total + e][1] = static_cast<R>(c.real());
        x[h][e] = CL(in[h * total + e][0], in[h * total + e][1]);
      }
    c.tally.call(r);
    run();
    const double q = check_bins<R>(c, n, n, x, sign, [&](int h, long off) {
      return CL(o[h * total + off][0], o[h * total + off][1]);
    });
    c.tally.checked(r, q, label(std::string(F::prefix) + "c2c", n, howmany, how));
  };
  round(a.p, out, [&] { F::execute(plan); }, in_place ? " in place" : "");
  if (c.uniform(0, 1)) {  // new-array execute: the same plan on other arrays
    Array<R, typename F::C> a2(count), b2(in_place ? 0 : count);
    typename F::C* out2 = in_place ? a2.p : b2.p;
    round(a2.p, out2, [&] { F::execute_dft(plan, a2.p, out2); }, in_place ? " in place, new arrays" : ", new arrays");
  }
  if (c.uniform(0, 2) == 0) round(a.p, out, [&] { F::execute(plan); }, in_place ? " in place, again" : ", again");
  F::destroy(plan);
}

// r2c, then c2r of its output: both checked. In place one time in four (the real array padded to
// 2 (n_last / 2 + 1) per row, FFTW's layout).
template <class R> void r2c_c2r_case(Context& c) {
  using F = Fftw<R>;
  const int rf = routine_index(std::string(F::prefix) + "r2c"), rb = routine_index(std::string(F::prefix) + "c2r");
  const bool big = c.large();
  const std::vector<int> n = dims(c, big, std::is_same_v<R, float> ? 1 << 19 : 1 << 18);
  const int rank = static_cast<int>(n.size()), last = n.back(), half = last / 2 + 1;
  const long total = product(n), rows = total / last;
  std::vector<int> nd = n;
  nd.back() = half;
  const bool in_place = c.uniform(0, 3) == 0;
  const long row = in_place ? 2L * half : last;  // reals per row of the input array
  Array<R, typename F::C> spectrum(static_cast<size_t>(rows) * half);
  Array<R, R> separate(in_place ? 0 : static_cast<size_t>(total));
  R* in = in_place ? reinterpret_cast<R*>(spectrum.p) : separate.p;
  auto forward = F::r2c(rank, n.data(), in, spectrum.p);
  if (!forward) throw std::runtime_error(label(std::string(F::prefix) + "r2c", n, 1, ": no plan"));
  std::vector<std::vector<CL>> x(1, std::vector<CL>(total));
  long double xmax = 0;
  for (long i = 0; i < rows; ++i)
    for (int j = 0; j < last; ++j) {
      in[i * row + j] = static_cast<R>(c.real());
      x[0][i * last + j] = in[i * row + j];
      xmax = std::max(xmax, std::abs(x[0][i * last + j].real()));
    }
  c.tally.call(rf);
  F::execute(forward);
  F::destroy(forward);
  const char* how = in_place ? " in place" : "";
  c.tally.checked(rf, check_bins<R>(c, n, nd, x, FFTW_FORWARD, [&](int, long off) {
    return CL(spectrum.p[off][0], spectrum.p[off][1]);
  }), label(std::string(F::prefix) + "r2c", n, 1, how));
  // Back: c2r of the spectrum is N x.
  Array<R, R> back(static_cast<size_t>(total));
  auto backward = F::c2r(rank, n.data(), spectrum.p, back.p);
  if (!backward) throw std::runtime_error(label(std::string(F::prefix) + "c2r", n, 1, ": no plan"));
  c.tally.call(rb);
  F::execute(backward);
  F::destroy(backward);
  long double err = 0;
  bool nan = false;
  for (long e = 0; e < total; ++e) {
    const long double d = std::abs(back.p[e] - total * x[0][e].real());
    if (std::isnan(d)) nan = true;
    err = std::max(err, d);
  }
  c.tally.checked(rb, nan ? NAN : ratio(err, total * xmax, tol_for(total, eps<R>())),
                  label(std::string(F::prefix) + "c2r", n, 1, " of the r2c's output"));
}

}  // namespace

std::vector<Case> fft_cases() {
  return {
      {"fftw_c2c", 5, c2c_case<double>},
      {"fftwf_c2c", 3, c2c_case<float>},
      {"fftw_r2c+c2r", 4, r2c_c2r_case<double>},
      {"fftwf_r2c+c2r", 3, r2c_c2r_case<float>},
  };
}

}  // namespace outboard::soak
