// The LAPACK routines on the GPU backend (cuSOLVER) against the CPU backend (LAPACK in OpenBLAS)
// on the same packed arrays, every precision: residual checks (|A X - B|, Q R = A, orthogonality,
// A V = V W, U S VT = A), the same eigen- and singular values, and the same INFO for singular and
// non-positive-definite matrices. Every GPU case runs twice: as one call (LapackExecutor::lapack) and
// pipelined (LapackExecutor::lapack_pipeline: input fed in pieces, result reported in pieces), as the
// server runs chunked calls. Skips where no GPU can be used.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <random>

#include "backends/cpu/cpu_backend.hpp"
#include "backends/cuda/cuda_backend.hpp"
#include "server/lapack_pipeline.hpp"
#include "transport/buffer.hpp"
#include "wire/lapack.hpp"

using namespace outboard;
using wire::LapackCall;
using wire::LapackRoutine;
using wire::Scalar;
using Z = std::complex<double>;
using Bytes = std::vector<std::byte>;

namespace {

struct Backends {
  std::unique_ptr<server::Backend> cpu = backends::make_cpu_backend();
  std::unique_ptr<server::Backend> gpu;
  std::string why;
  Backends() { gpu = backends::make_cuda_backend(why); }
};
Backends& backends_once() {
  static Backends b;
  return b;
}
server::LapackExecutor& lapack(server::Backend& b) { return *b.executor<server::LapackExecutor>(); }

// Element access in the call's precision (data) or its real type (w, s).
Z get(const Bytes& b, size_t i, Scalar s) {
  switch (s) {
    case Scalar::s: return reinterpret_cast<const float*>(b.data())[i];
    case Scalar::d: return reinterpret_cast<const double*>(b.data())[i];
    case Scalar::c: return Z(reinterpret_cast<const std::complex<float>*>(b.data())[i]);
    default: return reinterpret_cast<const Z*>(b.data())[i];
  }
}
void set(Bytes& b, size_t i, Scalar s, Z v) {
  switch (s) {
    case Scalar::s: reinterpret_cast<float*>(b.data())[i] = float(v.real()); break;
    case Scalar::d: reinterpret_cast<double*>(b.data())[i] = v.real(); break;
    case Scalar::c: reinterpret_cast<std::complex<float>*>(b.data())[i] = std::complex<float>(v); break;
    default: reinterpret_cast<Z*>(b.data())[i] = v;
  }
}
double real_at(const Bytes& b, size_t i, Scalar s) {
  return (s == Scalar::s || s == Scalar::c) ? reinterpret_cast<const float*>(b.data())[i]
                                            : reinterpret_cast<const double*>(b.data())[i];
}
double eps(Scalar s) {
  return (s == Scalar::s || s == Scalar::c) ? std::numeric_limits<float>::epsilon() : std::numeric_limits<double>::epsilon();
}

struct Result {
  int64_t info = 0;
  std::vector<Bytes> out;  // layout(call).outputs order
};

// Runs the call on a backend as the server does: outputs that are updated in place start as
// copies of their inputs.
Result run(server::Backend& backend, const LapackCall& c, const std::vector<Bytes>& in) {
  wire::validate(c);
  const auto l = wire::layout(c);
  Result r;
  std::vector<const std::byte*> ip;
  for (const auto& b : in) ip.push_back(b.data());
  std::vector<std::byte*> op;
  for (const auto& a : l.outputs) {
    r.out.emplace_back(wire::array_bytes(a, c.scalar) + 16);
    if (a.from_input >= 0) std::memcpy(r.out.back().data(), in[a.from_input].data(), wire::array_bytes(a, c.scalar));
    op.push_back(r.out.back().data());
  }
  server::DeviceTiming t;
  r.info = lapack(backend).lapack(c, ip, op, t);
  return r;
}

// The same through the backend's LAPACK pipeline, as the server runs a chunked call: the inputs
// land in staging memory in three steps, the result is taken piece by piece (small pieces: many
// of them, some ending inside an element).
Result run_pipelined(server::Backend& backend, const LapackCall& c, const std::vector<Bytes>& in) {
  wire::validate(c);
  const server::LapackPlan plan = server::plan_lapack(c, 1000);
  transport::Buffer staging = transport::Buffer::allocate(plan.staging_bytes, backend.staging());
  for (size_t i = 0; i < in.size(); ++i)
    std::memcpy(staging.data() + plan.input_offsets[i], in[i].data(),
                wire::array_bytes(wire::layout(c).inputs[i], c.scalar));
  auto pipe = lapack(backend).lapack_pipeline(plan, staging.data());
  EXPECT_TRUE(pipe) << "the GPU backend pipelines " << wire::call_name(c);
  if (!pipe) return {};
  for (uint64_t prefix : {plan.input_bytes / 3, plan.input_bytes / 2, plan.input_bytes}) pipe->input(prefix);
  std::vector<bool> seen(plan.pieces.size());
  size_t left = plan.pieces.size();
  while (left) {
    for (size_t i : pipe->finished()) {
      EXPECT_FALSE(seen.at(i)) << "piece " << i << " reported twice";
      seen[i] = true;
      --left;
    }
  }
  Result r;
  r.info = pipe->info();
  pipe.reset();
  const auto l = wire::layout(c);
  for (size_t i = 0; i < l.outputs.size(); ++i) {
    const uint64_t bytes = wire::array_bytes(l.outputs[i], c.scalar);
    r.out.emplace_back(bytes + 16);
    std::memcpy(r.out.back().data(), staging.data() + plan.output_offsets[i], bytes);
  }
  return r;
}

class GpuLapack : public ::testing::TestWithParam<std::tuple<Scalar, bool>> {
 protected:
  void SetUp() override {
    if (!backends_once().gpu) GTEST_SKIP() << "no GPU: " << backends_once().why;
  }
  Scalar s() const { return std::get<0>(GetParam()); }
  // The GPU backend, whole or pipelined (the test's second parameter).
  Result run_gpu(const LapackCall& c, const std::vector<Bytes>& in) {
    server::Backend& gpu = *backends_once().gpu;
    return std::get<1>(GetParam()) && lapack(gpu).serves_lapack(c) ? run_pipelined(gpu, c, in) : run(gpu, c, in);
  }
  std::mt19937 rng{11};
  Bytes random(int64_t rows, int64_t cols) {
    std::uniform_real_distribution<double> u(-1, 1);
    Bytes b(static_cast<size_t>(rows * cols) * wire::element_bytes(s()) + 16);
    for (int64_t i = 0; i < rows * cols; ++i)
      set(b, i, s(), wire::is_complex(s()) ? Z(u(rng), u(rng)) : Z(u(rng)));
    return b;
  }
  Bytes spd(int64_t n) {  // M^H M + n I
    Bytes m = random(n, n), a = random(n, n);
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i < n; ++i) {
        Z v = i == j ? Z(double(n)) : Z(0);
        for (int64_t l = 0; l < n; ++l) v += std::conj(get(m, i * n + l, s())) * get(m, j * n + l, s());
        set(a, j * n + i, s(), v);
      }
    return a;
  }
  LapackCall call(LapackRoutine r) {
    LapackCall c;
    c.routine = r;
    c.scalar = s();
    return c;
  }
  // What a triangular routine does not reference (the other triangle; the diagonal too where it is
  // unit), which LAPACK leaves as it was: `mark` sets it to 7.25, `changed` counts what differs.
  static bool unreferenced(int64_t i, int64_t j, char uplo, bool unit) {
    return (uplo == 'U' ? i > j : i < j) || (unit && i == j);
  }
  Bytes mark(Bytes a, int64_t n, char uplo, bool unit) {
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i < n; ++i)
        if (unreferenced(i, j, uplo, unit)) set(a, j * n + i, s(), Z(7.25));
    return a;
  }
  int64_t changed(const Bytes& out, const Bytes& in, int64_t n, char uplo, bool unit) {
    int64_t count = 0;
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i < n; ++i)
        count += unreferenced(i, j, uplo, unit) && get(out, j * n + i, s()) != get(in, j * n + i, s());
    return count;
  }
  // max |op(A) X - B| / (max|A| max|X| k eps); A lda = rows of A.
  double residual(const Bytes& a, int64_t arows, char op, int64_t m, int64_t k, const Bytes& x, int64_t ldx,
                  const Bytes& b, int64_t ldb, int64_t nrhs) {
    auto at = [&](int64_t i, int64_t j) {
      if (op == 'N') return get(a, j * arows + i, s());
      Z v = get(a, i * arows + j, s());
      return op == 'C' ? std::conj(v) : v;
    };
    double an = 0, xn = 0, r = 0;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t l = 0; l < k; ++l) an = std::max(an, std::abs(at(i, l)));
    for (int64_t j = 0; j < nrhs; ++j)
      for (int64_t l = 0; l < k; ++l) xn = std::max(xn, std::abs(get(x, j * ldx + l, s())));
    for (int64_t j = 0; j < nrhs; ++j)
      for (int64_t i = 0; i < m; ++i) {
        Z v = 0;
        for (int64_t l = 0; l < k; ++l) v += at(i, l) * get(x, j * ldx + l, s());
        r = std::max(r, std::abs(v - get(b, j * ldb + i, s())));
      }
    return r / (std::max(an * xn, 1e-300) * double(k) * eps(s()));
  }
};

constexpr double kTol = 100;

TEST_P(GpuLapack, GesvAndSingularInfo) {
  const int64_t n = 67, nrhs = 3;
  auto c = call(LapackRoutine::gesv);
  c.n = n, c.nrhs = nrhs;
  Bytes a = random(n, n), b = random(n, nrhs);
  auto g = run_gpu(c, {a, b});
  EXPECT_EQ(g.info, 0);
  EXPECT_LT(residual(a, n, 'N', n, n, g.out[2], n, b, n, nrhs), kTol);
  for (int64_t i = 0; i < n; ++i) {
    int32_t p;
    std::memcpy(&p, g.out[1].data() + 4 * i, 4);
    EXPECT_TRUE(p >= i + 1 && p <= n);
  }
  for (int64_t i = 0; i < n; ++i) set(a, 4 * n + i, s(), 0);  // column 5 zero
  auto gs = run_gpu(c, {a, b});
  auto cs = run(*backends_once().cpu, c, {a, b});
  EXPECT_EQ(cs.info, 5);
  EXPECT_EQ(gs.info, cs.info);
  EXPECT_EQ(std::memcmp(gs.out[2].data(), b.data(), wire::array_bytes(wire::layout(c).outputs[2], s())), 0)
      << "a singular system leaves B as it was";
}

TEST_P(GpuLapack, GetrfRectangularThenGetrs) {
  for (auto [m, n] : {std::pair<int64_t, int64_t>{50, 31}, {31, 50}}) {
    auto c = call(LapackRoutine::getrf);
    c.m = m, c.n = n;
    Bytes a = random(m, n);
    auto g = run_gpu(c, {a});
    EXPECT_EQ(g.info, 0);
    // P L U = A: apply the row swaps to a copy of A.
    Bytes pa = a;
    const int64_t k = std::min(m, n);
    for (int64_t i = 0; i < k; ++i) {
      int32_t p;
      std::memcpy(&p, g.out[1].data() + 4 * i, 4);
      ASSERT_TRUE(p >= 1 && p <= m);
      for (int64_t j = 0; j < n; ++j) {
        Z t = get(pa, j * m + i, s());
        set(pa, j * m + i, s(), get(pa, j * m + p - 1, s()));
        set(pa, j * m + p - 1, s(), t);
      }
    }
    double r = 0, an = 0;
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i < m; ++i) {
        Z v = 0;
        for (int64_t l = 0; l <= std::min(i, j) && l < k; ++l)
          v += (l == i ? Z(1) : get(g.out[0], l * m + i, s())) * get(g.out[0], j * m + l, s());
        r = std::max(r, std::abs(v - get(pa, j * m + i, s())));
        an = std::max(an, std::abs(get(a, j * m + i, s())));
      }
    EXPECT_LT(r / (an * double(k) * eps(s())), kTol) << m << "x" << n;
  }
  const int64_t n = 45, nrhs = 4;
  auto f = call(LapackRoutine::getrf);
  f.m = f.n = n;
  Bytes a = random(n, n);
  auto lu = run(*backends_once().cpu, f, {a});
  for (char trans : {'N', 'T', 'C'}) {
    auto c = call(LapackRoutine::getrs);
    c.trans = trans, c.n = n, c.nrhs = nrhs;
    Bytes b = random(n, nrhs);
    auto g = run_gpu(c, {lu.out[0], lu.out[1], b});
    EXPECT_EQ(g.info, 0);
    EXPECT_LT(residual(a, n, trans, n, n, g.out[0], n, b, n, nrhs), kTol) << "trans " << trans;
  }
}

TEST_P(GpuLapack, PosvPotrfPotrsAndNotPositiveDefinite) {
  const int64_t n = 53, nrhs = 2;
  for (char uplo : {'U', 'L'}) {
    Bytes a = spd(n), b = random(n, nrhs);
    auto c = call(LapackRoutine::posv);
    c.uplo = uplo, c.n = n, c.nrhs = nrhs;
    auto g = run_gpu(c, {a, b});
    EXPECT_EQ(g.info, 0);
    EXPECT_LT(residual(a, n, 'N', n, n, g.out[1], n, b, n, nrhs), kTol);
    auto f = call(LapackRoutine::potrf);
    f.uplo = uplo, f.n = n;
    auto gf = run_gpu(f, {a});
    EXPECT_EQ(gf.info, 0);
    const Bytes marked = mark(a, n, uplo, false);
    EXPECT_EQ(changed(run_gpu(f, {marked}).out[0], marked, n, uplo, false), 0) << "potrf's other triangle, uplo " << uplo;
    auto t = call(LapackRoutine::potrs);
    t.uplo = uplo, t.n = n, t.nrhs = nrhs;
    auto gt = run_gpu(t, {gf.out[0], b});
    EXPECT_EQ(gt.info, 0);
    EXPECT_LT(residual(a, n, 'N', n, n, gt.out[0], n, b, n, nrhs), kTol);
    // Identity with a(3,3) = -1: not positive definite at order 3.
    Bytes bad = random(n, n);
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i < n; ++i) set(bad, j * n + i, s(), i == j ? (i == 2 ? -1 : 1) : 0);
    EXPECT_EQ(run(*backends_once().cpu, f, {bad}).info, 3);
    EXPECT_EQ(run_gpu(f, {bad}).info, 3);
    EXPECT_EQ(run_gpu(c, {bad, b}).info, 3);
  }
}

TEST_P(GpuLapack, GelsLeastSquaresAndRankDeficient) {
  const int64_t m = 71, n = 40, nrhs = 3;
  auto c = call(LapackRoutine::gels);
  c.trans = 'N', c.m = m, c.n = n, c.nrhs = nrhs;
  ASSERT_TRUE(lapack(*backends_once().gpu).serves_lapack(c));
  Bytes a = random(m, n), b = random(m, nrhs);
  auto g = run_gpu(c, {a, b});
  EXPECT_EQ(g.info, 0);
  // Normal equations: A^H (A x - b) = 0.
  double worst = 0, an = 0;
  for (int64_t j = 0; j < nrhs; ++j)
    for (int64_t col = 0; col < n; ++col) {
      Z v = 0;
      for (int64_t i = 0; i < m; ++i) {
        Z r = -get(b, j * m + i, s());
        for (int64_t l = 0; l < n; ++l) r += get(a, l * m + i, s()) * get(g.out[1], j * m + l, s());
        v += std::conj(get(a, col * m + i, s())) * r;
        an = std::max(an, std::abs(get(a, col * m + i, s())));
      }
      worst = std::max(worst, std::abs(v));
    }
  EXPECT_LT(worst / (an * an * double(m) * 10 * eps(s())), kTol);
  for (int64_t i = 0; i < m; ++i) set(a, 6 * m + i, s(), 0);  // column 7 zero: R(7,7) = 0
  EXPECT_EQ(run(*backends_once().cpu, c, {a, b}).info, 7);
  EXPECT_EQ(run_gpu(c, {a, b}).info, 7);
  c.trans = wire::is_complex(s()) ? 'C' : 'T';
  EXPECT_FALSE(lapack(*backends_once().gpu).serves_lapack(c)) << "left to the CPU backend";
}

TEST_P(GpuLapack, GeqrfReflectorsReproduceA) {
  for (auto [m, n] : {std::pair<int64_t, int64_t>{60, 35}, {35, 60}}) {
    auto c = call(LapackRoutine::geqrf);
    c.m = m, c.n = n;
    Bytes a = random(m, n);
    auto g = run_gpu(c, {a});
    EXPECT_EQ(g.info, 0);
    const int64_t k = std::min(m, n);
    // Q R, with Q = H(1) ... H(k) applied to R from the left: H(i) = I - tau v v^H.
    std::vector<Z> qr(static_cast<size_t>(m * n));
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i <= std::min(j, m - 1); ++i) qr[j * m + i] = get(g.out[0], j * m + i, s());
    for (int64_t r = k - 1; r >= 0; --r) {
      const Z tau = get(g.out[1], r, s());
      for (int64_t j = 0; j < n; ++j) {
        Z dot = qr[j * m + r];
        for (int64_t i = r + 1; i < m; ++i) dot += std::conj(get(g.out[0], r * m + i, s())) * qr[j * m + i];
        qr[j * m + r] -= tau * dot;
        for (int64_t i = r + 1; i < m; ++i) qr[j * m + i] -= tau * get(g.out[0], r * m + i, s()) * dot;
      }
    }
    double d = 0, an = 0;
    for (int64_t i = 0; i < m * n; ++i) {
      d = std::max(d, std::abs(qr[i] - get(a, i, s())));
      an = std::max(an, std::abs(get(a, i, s())));
    }
    EXPECT_LT(d / (an * double(m) * eps(s())), kTol) << m << "x" << n;
  }
}

TEST_P(GpuLapack, SyevdHeevd) {
  const int64_t n = 57;
  for (char uplo : {'L', 'U'}) {
    Bytes a = spd(n);
    for (int64_t i = 0; i < n; ++i) set(a, i * n + i, s(), get(a, i * n + i, s()) - 2.0 * n);
    auto c = call(LapackRoutine::syevd);
    c.jobz = 'V', c.uplo = uplo, c.n = n;
    auto g = run_gpu(c, {a});
    auto cpu = run(*backends_once().cpu, c, {a});
    EXPECT_EQ(g.info, 0);
    const Bytes& v = g.out[0];
    const Bytes& w = g.out[1];
    double r = 0, o = 0, an = 0, dw = 0;
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i < n; ++i) an = std::max(an, std::abs(get(a, j * n + i, s())));
    auto full = [&](int64_t i, int64_t j) {  // the Hermitian matrix from the uplo triangle
      bool stored = uplo == 'U' ? i <= j : i >= j;
      return stored ? get(a, j * n + i, s()) : std::conj(get(a, i * n + j, s()));
    };
    for (int64_t j = 0; j < n; ++j) {
      dw = std::max(dw, std::abs(real_at(w, j, s()) - real_at(cpu.out[1], j, s())));
      for (int64_t i = 0; i < n; ++i) {
        Z av = 0, g2 = 0;
        for (int64_t l = 0; l < n; ++l) {
          av += full(i, l) * get(v, j * n + l, s());
          g2 += std::conj(get(v, i * n + l, s())) * get(v, j * n + l, s());
        }
        r = std::max(r, std::abs(av - real_at(w, j, s()) * get(v, j * n + i, s())));
        o = std::max(o, std::abs(g2 - Z(i == j ? 1.0 : 0.0)));
      }
    }
    EXPECT_LT(r / (an * double(n) * eps(s())), kTol);
    EXPECT_LT(o / (double(n) * eps(s())), kTol);
    EXPECT_LT(dw / (an * double(n) * eps(s())), kTol) << "eigenvalues differ from the CPU's";
    c.jobz = 'N';
    auto gn = run_gpu(c, {a});
    double dn = 0;
    for (int64_t j = 0; j < n; ++j) dn = std::max(dn, std::abs(real_at(gn.out[0], j, s()) - real_at(w, j, s())));
    EXPECT_LT(dn / (an * double(n) * eps(s())), kTol);
  }
}

TEST_P(GpuLapack, Gesvd) {
  const int64_t m = 64, n = 41, k = std::min(m, n);
  for (char job : {'A', 'S'}) {
    auto c = call(LapackRoutine::gesvd);
    c.jobu = c.jobvt = job, c.m = m, c.n = n;
    ASSERT_TRUE(lapack(*backends_once().gpu).serves_lapack(c));
    Bytes a = random(m, n);
    auto g = run_gpu(c, {a});
    auto cpu = run(*backends_once().cpu, c, {a});
    EXPECT_EQ(g.info, 0);
    const Bytes &sv = g.out[0], &u = g.out[1], &vt = g.out[2];
    const int64_t vrows = job == 'A' ? n : k;
    double r = 0, an = 0, ds = 0;
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i < m; ++i) {
        Z v = 0;
        for (int64_t l = 0; l < k; ++l) v += get(u, l * m + i, s()) * real_at(sv, l, s()) * get(vt, j * vrows + l, s());
        r = std::max(r, std::abs(v - get(a, j * m + i, s())));
        an = std::max(an, std::abs(get(a, j * m + i, s())));
      }
    for (int64_t l = 0; l < k; ++l) ds = std::max(ds, std::abs(real_at(sv, l, s()) - real_at(cpu.out[0], l, s())));
    EXPECT_LT(r / (an * double(m) * eps(s())), kTol) << "job " << job;
    EXPECT_LT(ds / (an * double(m) * eps(s())), kTol) << "singular values differ from the CPU's";
  }
  auto wide = call(LapackRoutine::gesvd);
  wide.m = 10, wide.n = 20;
  EXPECT_FALSE(lapack(*backends_once().gpu).serves_lapack(wide)) << "m < n is left to the CPU backend";
}

// ---- The drivers of issue 35 -----------------------------------------------------------------

int32_t index_at(const Bytes& b, size_t i) {
  int32_t v;
  std::memcpy(&v, b.data() + 4 * i, 4);
  return v;
}

// max |x - y| over the first `count` elements (data or real), relative to `scale`.
double differ(const Bytes& x, const Bytes& y, size_t count, Scalar s, bool real, double scale) {
  double d = 0;
  for (size_t i = 0; i < count; ++i)
    d = std::max(d, real ? std::abs(real_at(x, i, s) - real_at(y, i, s)) : std::abs(get(x, i, s) - get(y, i, s)));
  return d / std::max(scale, 1e-300);
}

// The Hermitian (or, with hermitian = false, complex symmetric) matrix held in the uplo triangle.
Z from_triangle(const Bytes& a, int64_t n, char uplo, int64_t i, int64_t j, Scalar s, bool hermitian = true) {
  const bool stored = uplo == 'U' ? i <= j : i >= j;
  if (stored) return get(a, j * n + i, s);
  Z v = get(a, i * n + j, s);
  return hermitian ? std::conj(v) : v;
}

TEST_P(GpuLapack, GesddEveryJobBothShapes) {
  for (auto [m, n] : {std::pair<int64_t, int64_t>{47, 30}, {30, 47}}) {
    const int64_t k = std::min(m, n);
    Bytes a = random(m, n);
    double an = 0;
    for (int64_t i = 0; i < m * n; ++i) an = std::max(an, std::abs(get(a, i, s())));
    for (char jobz : {'A', 'S', 'O', 'N'}) {
      auto c = call(LapackRoutine::gesdd);
      c.jobz = jobz, c.m = m, c.n = n;
      ASSERT_TRUE(lapack(*backends_once().gpu).serves_lapack(c));
      auto g = run_gpu(c, {a});
      auto cpu = run(*backends_once().cpu, c, {a});
      ASSERT_EQ(g.info, 0);
      ASSERT_EQ(cpu.info, 0);
      const size_t sv = jobz == 'O' ? 1 : 0;
      EXPECT_LT(differ(g.out[sv], cpu.out[sv], k, s(), true, an * double(m) * eps(s())), kTol)
          << m << "x" << n << " jobz " << jobz << ": singular values differ from the CPU's";
      for (int64_t l = 1; l < k; ++l) EXPECT_GE(real_at(g.out[sv], l - 1, s()), real_at(g.out[sv], l, s()));
      if (jobz == 'N') continue;
      // U (m x k used, leading dimension m) and VT (k x n used, leading dimension vrows).
      const Bytes* u = nullptr;
      const Bytes* vt = nullptr;
      int64_t vrows = 0;
      if (jobz == 'O') {
        if (m >= n) u = &g.out[0], vt = &g.out[2], vrows = n;
        else u = &g.out[2], vt = &g.out[0], vrows = m;
      } else {
        u = &g.out[1], vt = &g.out[2], vrows = jobz == 'A' ? n : k;
      }
      double r = 0;
      for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < m; ++i) {
          Z v = 0;
          for (int64_t l = 0; l < k; ++l)
            v += get(*u, l * m + i, s()) * real_at(g.out[sv], l, s()) * get(*vt, j * vrows + l, s());
          r = std::max(r, std::abs(v - get(a, j * m + i, s())));
        }
      EXPECT_LT(r / (an * double(std::max(m, n)) * eps(s())), kTol) << m << "x" << n << " jobz " << jobz << ": U S VT != A";
      if (jobz == 'A') {  // the full U and VT are unitary
        double o = 0;
        for (int64_t i = 0; i < n; ++i)
          for (int64_t j = 0; j < n; ++j) {
            Z d = 0;
            for (int64_t l = 0; l < n; ++l) d += get(*vt, j * n + l, s()) * std::conj(get(*vt, i * n + l, s()));
            o = std::max(o, std::abs(d - Z(i == j ? 1.0 : 0.0)));
          }
        EXPECT_LT(o / (double(n) * eps(s())), kTol) << m << "x" << n << ": VT is not unitary";
      }
    }
  }
}

TEST_P(GpuLapack, GeevRightVectors) {
  const int64_t n = 41;
  Bytes a = random(n, n);
  double an = 0;
  for (int64_t i = 0; i < n * n; ++i) an = std::max(an, std::abs(get(a, i, s())));
  const bool cplx = wire::is_complex(s());
  for (char jobvr : {'V', 'N'}) {
    auto c = call(LapackRoutine::geev);
    c.jobvl = 'N', c.jobvr = jobvr, c.n = n;
    ASSERT_TRUE(lapack(*backends_once().gpu).serves_lapack(c));
    auto g = run_gpu(c, {a});
    auto cpu = run(*backends_once().cpu, c, {a});
    ASSERT_EQ(g.info, 0);
    ASSERT_EQ(cpu.info, 0);
    auto eig = [&](const Result& r, int64_t j) {
      return cplx ? get(r.out[0], j, s()) : Z(real_at(r.out[0], j, s()), real_at(r.out[1], j, s()));
    };
    double dw = 0;  // each GPU eigenvalue has a CPU one close by
    for (int64_t j = 0; j < n; ++j) {
      double best = std::numeric_limits<double>::infinity();
      for (int64_t l = 0; l < n; ++l) best = std::min(best, std::abs(eig(g, j) - eig(cpu, l)));
      dw = std::max(dw, best);
    }
    EXPECT_LT(dw / (an * double(n) * eps(s())), 10 * kTol) << "eigenvalues differ from the CPU's";
    if (jobvr == 'N') continue;
    const Bytes& vr = g.out[cplx ? 1 : 2];
    double r = 0, nrm = 0, im = 0;
    for (int64_t j = 0; j < n; ++j) {
      const Z w = eig(g, j);
      // Real precisions: a conjugate pair's vectors are v(j) +- i v(j+1) in columns j and j+1.
      auto v = [&](int64_t i) {
        if (cplx || w.imag() == 0) return get(vr, j * n + i, s());
        if (w.imag() > 0) return Z(get(vr, j * n + i, s()).real(), get(vr, (j + 1) * n + i, s()).real());
        return Z(get(vr, (j - 1) * n + i, s()).real(), -get(vr, j * n + i, s()).real());
      };
      double norm2 = 0, biggest = -1;
      Z at_biggest = 0;
      for (int64_t i = 0; i < n; ++i) {
        Z av = 0;
        for (int64_t l = 0; l < n; ++l) av += get(a, l * n + i, s()) * v(l);
        r = std::max(r, std::abs(av - w * v(i)));
        norm2 += std::norm(v(i));
        if (std::abs(v(i)) > biggest) biggest = std::abs(v(i)), at_biggest = v(i);
      }
      nrm = std::max(nrm, std::abs(std::sqrt(norm2) - 1));
      im = std::max(im, std::abs(at_biggest.imag()));
    }
    EXPECT_LT(r / (an * double(n) * eps(s())), 10 * kTol) << "A v != w v";
    EXPECT_LT(nrm / (double(n) * eps(s())), kTol) << "vectors not of unit norm";
    EXPECT_LT(im / (double(n) * eps(s())), kTol) << "largest component not real";
  }
  auto left = call(LapackRoutine::geev);
  left.jobvl = 'V', left.jobvr = 'V', left.n = n;
  EXPECT_FALSE(lapack(*backends_once().gpu).serves_lapack(left)) << "left eigenvectors are left to the CPU backend";
}

TEST_P(GpuLapack, SyevrSyevxRanges) {
  const int64_t n = 52;
  for (auto routine : {LapackRoutine::syevr, LapackRoutine::syevx}) {
    for (char uplo : {'L', 'U'}) {
      Bytes a = spd(n);
      for (int64_t i = 0; i < n; ++i) set(a, i * n + i, s(), get(a, i * n + i, s()) - 2.0 * n);
      double an = 0;
      for (int64_t i = 0; i < n * n; ++i) an = std::max(an, std::abs(get(a, i, s())));
      // All eigenvalues on the CPU, to place range V's interval between two of them.
      auto all = call(routine);
      all.jobz = 'N', all.range = 'A', all.uplo = uplo, all.n = n;
      const auto ref = run(*backends_once().cpu, all, {a});
      ASSERT_EQ(ref.info, 0);
      const double lo = (real_at(ref.out[1], 9, s()) + real_at(ref.out[1], 10, s())) / 2;
      const double hi = (real_at(ref.out[1], 30, s()) + real_at(ref.out[1], 31, s())) / 2;
      for (char range : {'A', 'I', 'V'})
        for (char jobz : {'V', 'N'}) {
          auto c = call(routine);
          c.jobz = jobz, c.range = range, c.uplo = uplo, c.n = n;
          if (range == 'I') c.il = 5, c.iu = 23;
          if (range == 'V') c.vl = lo, c.vu = hi;
          ASSERT_TRUE(lapack(*backends_once().gpu).serves_lapack(c));
          auto g = run_gpu(c, {a});
          auto cpu = run(*backends_once().cpu, c, {a});
          const std::string what = wire::call_name(c) + " range " + range + " jobz " + jobz + " uplo " + uplo;
          ASSERT_EQ(g.info, 0) << what;
          const int32_t found = index_at(g.out[0], 0);
          ASSERT_EQ(found, index_at(cpu.out[0], 0)) << what;
          ASSERT_EQ(found, range == 'A' ? n : range == 'I' ? 19 : 21) << what;
          EXPECT_LT(differ(g.out[1], cpu.out[1], found, s(), true, an * double(n) * eps(s())), kTol) << what;
          for (int32_t l = 1; l < found; ++l) EXPECT_LE(real_at(g.out[1], l - 1, s()), real_at(g.out[1], l, s()));
          if (jobz == 'N') continue;
          const Bytes& z = g.out[2];
          double r = 0, o = 0;
          for (int32_t j = 0; j < found; ++j)
            for (int64_t i = 0; i < n; ++i) {
              Z av = 0;
              for (int64_t l = 0; l < n; ++l) av += from_triangle(a, n, uplo, i, l, s()) * get(z, j * n + l, s());
              r = std::max(r, std::abs(av - real_at(g.out[1], j, s()) * get(z, j * n + i, s())));
            }
          for (int32_t i = 0; i < found; ++i)
            for (int32_t j = 0; j < found; ++j) {
              Z d = 0;
              for (int64_t l = 0; l < n; ++l) d += std::conj(get(z, i * n + l, s())) * get(z, j * n + l, s());
              o = std::max(o, std::abs(d - Z(i == j ? 1.0 : 0.0)));
            }
          EXPECT_LT(r / (an * double(n) * eps(s())), kTol) << what;
          EXPECT_LT(o / (double(n) * eps(s())), kTol) << what;
          if (g.out.size() > 3)  // isuppz (1-based rows) or ifail (zeros)
            for (int32_t j = 0; j < found; ++j) {
              if (routine == LapackRoutine::syevx) {
                EXPECT_EQ(index_at(g.out[3], j), 0) << what;
              } else {
                EXPECT_GE(index_at(g.out[3], 2 * j), 1) << what;
                EXPECT_LE(index_at(g.out[3], 2 * j), index_at(g.out[3], 2 * j + 1)) << what;
                EXPECT_LE(index_at(g.out[3], 2 * j + 1), n) << what;
              }
            }
        }
    }
  }
}

TEST_P(GpuLapack, SygvdEveryItypeAndNotPositiveDefinite) {
  const int64_t n = 44;
  for (char uplo : {'U', 'L'})
    for (int64_t itype : {1, 2, 3}) {
      Bytes a = spd(n), b = spd(n);
      for (int64_t i = 0; i < n; ++i) set(a, i * n + i, s(), get(a, i * n + i, s()) - 2.0 * n);
      double an = 0;
      for (int64_t i = 0; i < n * n; ++i) an = std::max(an, std::abs(get(a, i, s())));
      for (char jobz : {'V', 'N'}) {
        auto c = call(LapackRoutine::sygvd);
        c.itype = itype, c.jobz = jobz, c.uplo = uplo, c.n = n;
        ASSERT_TRUE(lapack(*backends_once().gpu).serves_lapack(c));
        auto g = run_gpu(c, {a, b});
        auto cpu = run(*backends_once().cpu, c, {a, b});
        const std::string what = "itype " + std::to_string(itype) + " jobz " + jobz + " uplo " + uplo;
        ASSERT_EQ(g.info, 0) << what;
        ASSERT_EQ(cpu.info, 0) << what;
        const size_t w = jobz == 'V' ? 1 : 0, bf = w + 1;
        double wn = 0;
        for (int64_t j = 0; j < n; ++j) wn = std::max(wn, std::abs(real_at(cpu.out[w], j, s())));
        EXPECT_LT(differ(g.out[w], cpu.out[w], n, s(), true, wn * double(n) * eps(s())), 10 * kTol) << what;
        // B holds its Cholesky factor, in the uplo triangle, as LAPACK leaves it.
        double db = 0, bn = 0;
        for (int64_t j = 0; j < n; ++j)
          for (int64_t i = 0; i < n; ++i)
            if (uplo == 'U' ? i <= j : i >= j) {
              db = std::max(db, std::abs(get(g.out[bf], j * n + i, s()) - get(cpu.out[bf], j * n + i, s())));
              bn = std::max(bn, std::abs(get(cpu.out[bf], j * n + i, s())));
            }
        EXPECT_LT(db / (bn * double(n) * eps(s())), kTol) << what << ": B's factor differs from the CPU's";
        if (jobz == 'V' && itype == 1) {  // A z = w B z
          double r = 0;
          for (int64_t j = 0; j < n; ++j)
            for (int64_t i = 0; i < n; ++i) {
              Z az = 0, bz = 0;
              for (int64_t l = 0; l < n; ++l) {
                az += from_triangle(a, n, uplo, i, l, s()) * get(g.out[0], j * n + l, s());
                bz += from_triangle(b, n, uplo, i, l, s()) * get(g.out[0], j * n + l, s());
              }
              r = std::max(r, std::abs(az - real_at(g.out[1], j, s()) * bz));
            }
          EXPECT_LT(r / (an * double(n) * eps(s())), 10 * kTol) << what;
        }
      }
      // B with b(4,4) = -1 on the identity: not positive definite at order 4, INFO n + 4.
      Bytes bad = random(n, n);
      for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < n; ++i) set(bad, j * n + i, s(), i == j ? (i == 3 ? -1 : 1) : 0);
      auto c = call(LapackRoutine::sygvd);
      c.itype = itype, c.jobz = 'V', c.uplo = uplo, c.n = n;
      EXPECT_EQ(run(*backends_once().cpu, c, {a, bad}).info, n + 4);
      EXPECT_EQ(run_gpu(c, {a, bad}).info, n + 4);
    }
}

TEST_P(GpuLapack, SytrfSysvSytrsAndSingularInfo) {
  const int64_t n = 49, nrhs = 3;
  for (char uplo : {'U', 'L'}) {
    // Symmetric (complex symmetric for c, z) and indefinite.
    Bytes a = random(n, n);
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i < j; ++i) set(a, i * n + j, s(), get(a, j * n + i, s()));
    Bytes b = random(n, nrhs);
    auto sv = call(LapackRoutine::sysv);
    sv.uplo = uplo, sv.n = n, sv.nrhs = nrhs;
    ASSERT_TRUE(lapack(*backends_once().gpu).serves_lapack(sv));
    auto g = run_gpu(sv, {a, b});
    EXPECT_EQ(g.info, 0);
    EXPECT_LT(residual(a, n, 'N', n, n, g.out[2], n, b, n, nrhs), kTol) << "sysv uplo " << uplo;
    auto f = call(LapackRoutine::sytrf);
    f.uplo = uplo, f.n = n;
    auto gf = run_gpu(f, {a});
    auto cf = run(*backends_once().cpu, f, {a});
    EXPECT_EQ(gf.info, 0);
    const Bytes marked = mark(a, n, uplo, false);
    EXPECT_EQ(changed(run_gpu(f, {marked}).out[0], marked, n, uplo, false), 0) << "sytrf's other triangle, uplo " << uplo;
    for (int64_t i = 0; i < n; ++i) {
      const int32_t p = index_at(gf.out[1], i);
      EXPECT_TRUE(p != 0 && std::abs(p) <= n) << "pivot " << p;
    }
    auto t = call(LapackRoutine::sytrs);
    t.uplo = uplo, t.n = n, t.nrhs = nrhs;
    for (const Result* factor : {&gf, &cf}) {  // the GPU's factorization, and the CPU's
      auto gt = run_gpu(t, {factor->out[0], factor->out[1], b});
      EXPECT_EQ(gt.info, 0);
      EXPECT_LT(residual(a, n, 'N', n, n, gt.out[0], n, b, n, nrhs), kTol)
          << "sytrs uplo " << uplo << (factor == &gf ? " (GPU factor)" : " (CPU factor)");
    }
    // The identity with a(3,3) = 0: D(3,3) is exactly zero, INFO 3; sysv leaves B as it was.
    Bytes sing = random(n, n);
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i < n; ++i) set(sing, j * n + i, s(), i == j && i != 2 ? 1 : 0);
    EXPECT_EQ(run(*backends_once().cpu, f, {sing}).info, 3);
    EXPECT_EQ(run_gpu(f, {sing}).info, 3);
    auto gs = run_gpu(sv, {sing, b});
    EXPECT_EQ(gs.info, 3);
    EXPECT_EQ(std::memcmp(gs.out[2].data(), b.data(), wire::array_bytes(wire::layout(sv).outputs[2], s())), 0);
    // The reference testers' singular types: a dense symmetric matrix with one row and column zero
    // (the first, the last, one in the middle), and with its last n/2 zero: LAPACK's INFO (the
    // first zero 1 x 1 pivot in elimination order), which cuSOLVER's own INFO was not.
    for (int64_t zero : {int64_t(0), n - 1, n / 2, int64_t(-1)}) {
      Bytes z = a;
      for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < n; ++i)
          if (zero >= 0 ? (i == zero || j == zero) : (i >= n / 2 || j >= n / 2)) set(z, j * n + i, s(), 0);
      const int64_t want = run(*backends_once().cpu, f, {z}).info;
      EXPECT_GT(want, 0);
      EXPECT_EQ(run_gpu(f, {z}).info, want) << "sytrf uplo " << uplo << ", zero row and column " << zero;
      EXPECT_EQ(run_gpu(sv, {z, b}).info, want) << "sysv uplo " << uplo << ", zero row and column " << zero;
    }
  }
  if (wire::is_complex(s()))
    for (auto r : {LapackRoutine::hesv, LapackRoutine::hetrf, LapackRoutine::hetrs}) {
      auto c = call(r);
      c.uplo = 'U', c.n = 10, c.nrhs = r == LapackRoutine::hetrf ? 0 : 1;
      EXPECT_FALSE(lapack(*backends_once().gpu).serves_lapack(c)) << wire::call_name(c) << " is left to the CPU backend";
    }
}

TEST_P(GpuLapack, GetriPotriTrtriAndSingularInfo) {
  const int64_t n = 46;
  // getri on the CPU's LU: A A^-1 = I.
  {
    Bytes a = random(n, n);
    auto f = call(LapackRoutine::getrf);
    f.m = f.n = n;
    auto lu = run(*backends_once().cpu, f, {a});
    auto c = call(LapackRoutine::getri);
    c.n = n;
    ASSERT_TRUE(lapack(*backends_once().gpu).serves_lapack(c));
    auto g = run_gpu(c, {lu.out[0], lu.out[1]});
    auto cg = run(*backends_once().cpu, c, {lu.out[0], lu.out[1]});
    EXPECT_EQ(g.info, 0);
    double inv = 0;
    for (int64_t i = 0; i < n * n; ++i) inv = std::max(inv, std::abs(get(cg.out[0], i, s())));
    EXPECT_LT(differ(g.out[0], cg.out[0], n * n, s(), false, inv * double(n) * eps(s())), 100 * kTol)
        << "getri's inverse differs from the CPU's";
    Bytes sing = lu.out[0];
    set(sing, 3 * n + 3, s(), 0);  // U(4,4) = 0
    auto gs = run_gpu(c, {sing, lu.out[1]});
    EXPECT_EQ(run(*backends_once().cpu, c, {sing, lu.out[1]}).info, 4);
    EXPECT_EQ(gs.info, 4);
    EXPECT_EQ(std::memcmp(gs.out[0].data(), sing.data(), wire::array_bytes(wire::layout(c).outputs[0], s())), 0)
        << "a singular getri leaves A as it was";
  }
  for (char uplo : {'U', 'L'}) {
    auto in_triangle = [&](int64_t i, int64_t j) { return uplo == 'U' ? i <= j : i >= j; };
    auto triangle_differs = [&](const Bytes& x, const Bytes& y) {
      double d = 0, big = 0;
      for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < n; ++i)
          if (in_triangle(i, j)) {
            d = std::max(d, std::abs(get(x, j * n + i, s()) - get(y, j * n + i, s())));
            big = std::max(big, std::abs(get(y, j * n + i, s())));
          }
      return d / (big * double(n) * eps(s()));
    };
    // potri on the CPU's Cholesky factor.
    auto pf = call(LapackRoutine::potrf);
    pf.uplo = uplo, pf.n = n;
    auto factor = run(*backends_once().cpu, pf, {spd(n)});
    auto c = call(LapackRoutine::potri);
    c.uplo = uplo, c.n = n;
    ASSERT_TRUE(lapack(*backends_once().gpu).serves_lapack(c));
    auto g = run_gpu(c, {factor.out[0]});
    EXPECT_EQ(g.info, 0);
    EXPECT_LT(triangle_differs(g.out[0], run(*backends_once().cpu, c, {factor.out[0]}).out[0]), kTol) << "potri " << uplo;
    const Bytes marked = mark(factor.out[0], n, uplo, false);
    EXPECT_EQ(changed(run_gpu(c, {marked}).out[0], marked, n, uplo, false), 0) << "potri's other triangle, uplo " << uplo;
    Bytes sing = factor.out[0];
    set(sing, 5 * n + 5, s(), 0);
    EXPECT_EQ(run(*backends_once().cpu, c, {sing}).info, 6);
    auto gs = run_gpu(c, {sing});
    EXPECT_EQ(gs.info, 6);
    EXPECT_EQ(std::memcmp(gs.out[0].data(), sing.data(), wire::array_bytes(wire::layout(c).outputs[0], s())), 0);
    // trtri, both diagonals, on a well-conditioned triangle.
    for (char diag : {'N', 'U'}) {
      Bytes t = random(n, n);
      for (int64_t i = 0; i < n; ++i) set(t, i * n + i, s(), get(t, i * n + i, s()) + Z(double(n)));
      auto tc = call(LapackRoutine::trtri);
      tc.uplo = uplo, tc.diag = diag, tc.n = n;
      ASSERT_TRUE(lapack(*backends_once().gpu).serves_lapack(tc));
      auto gt = run_gpu(tc, {t});
      auto ct = run(*backends_once().cpu, tc, {t});
      EXPECT_EQ(gt.info, 0);
      // A unit diagonal is neither referenced nor written: it stays as it was (sytri2 keeps D
      // there; cuSOLVER's trtri wrote it, which the reference SY and HE testers found).
      EXPECT_EQ(changed(gt.out[0], t, n, uplo, diag == 'U'), 0) << "trtri " << uplo << diag << " changed what it must not";
      EXPECT_EQ(changed(ct.out[0], t, n, uplo, diag == 'U'), 0) << "the CPU's trtri " << uplo << diag;
      EXPECT_LT(triangle_differs(gt.out[0], ct.out[0]), kTol) << "trtri " << uplo << diag;
      set(t, 7 * n + 7, s(), 0);
      const int64_t want = diag == 'N' ? 8 : 0;
      EXPECT_EQ(run(*backends_once().cpu, tc, {t}).info, want);
      EXPECT_EQ(run_gpu(tc, {t}).info, want) << "trtri " << uplo << diag;
    }
  }
}

// orgqr/ungqr and ormqr/unmqr on geqrf's reflectors: the same Q and the same products as the CPU
// backend. orgqr writes every element of A (LAPACK does: the columns past k come in as 7.25 and
// must be Q's too); ormqr's A (the reflectors) is read only, and C comes back whole.
TEST_P(GpuLapack, OrgqrOrmqrAgainstTheCpuBackend) {
  server::Backend& cpu = *backends_once().cpu;
  auto factor = [&](int64_t m, int64_t n) {  // geqrf on the CPU: {A with the reflectors, tau}
    auto f = call(LapackRoutine::geqrf);
    f.m = m, f.n = n;
    return run(cpu, f, {random(m, n)}).out;
  };
  const double tol = kTol * eps(s());
  for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{70, 45, 45}, {70, 45, 30}, {40, 40, 40}}) {
    auto qr = factor(m, k);
    Bytes a = random(m, n);
    std::memcpy(a.data(), qr[0].data(), static_cast<size_t>(m * k) * wire::element_bytes(s()));
    for (int64_t i = m * k; i < m * n; ++i) set(a, i, s(), Z(7.25));
    auto c = call(LapackRoutine::orgqr);
    c.m = m, c.n = n, c.k = k;
    auto g = run_gpu(c, {a, qr[1]});
    auto h = run(cpu, c, {a, qr[1]});
    EXPECT_EQ(g.info, 0);
    EXPECT_EQ(h.info, 0);
    EXPECT_LT(differ(g.out[0], h.out[0], static_cast<size_t>(m * n), s(), false, double(m)), tol) << "orgqr " << m << "x" << n << " k " << k;
    double o = 0;  // Q^H Q = I
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i < n; ++i) {
        Z v = 0;
        for (int64_t l = 0; l < m; ++l) v += std::conj(get(g.out[0], i * m + l, s())) * get(g.out[0], j * m + l, s());
        o = std::max(o, std::abs(v - Z(i == j ? 1 : 0)));
      }
    EXPECT_LT(o / (double(m) * eps(s())), kTol) << "orgqr " << m << "x" << n << " k " << k;
  }
  const char adjoint = wire::is_complex(s()) ? 'C' : 'T';
  const int64_t m = 52, n = 37;  // C is m x n
  for (char side : {'L', 'R'})
    for (char trans : {'N', adjoint}) {
      const int64_t q = side == 'L' ? m : n, k = side == 'L' ? 29 : n;
      auto qr = factor(q, k);
      auto c = call(LapackRoutine::ormqr);
      c.side = side, c.trans = trans, c.m = m, c.n = n, c.k = k;
      Bytes cm = random(m, n);
      const Bytes a = qr[0];
      auto g = run_gpu(c, {qr[0], qr[1], cm});
      auto h = run(cpu, c, {qr[0], qr[1], cm});
      EXPECT_EQ(g.info, 0);
      EXPECT_EQ(h.info, 0);
      EXPECT_LT(differ(g.out[0], h.out[0], static_cast<size_t>(m * n), s(), false, double(q)), tol)
          << "ormqr side " << side << " trans " << trans;
      EXPECT_EQ(std::memcmp(qr[0].data(), a.data(), a.size()), 0) << "ormqr's A is read only";
    }
  auto none = call(LapackRoutine::ormqr);  // no reflectors: the host's
  none.side = 'L', none.trans = 'N', none.m = 5, none.n = 4, none.k = 0;
  EXPECT_FALSE(lapack(*backends_once().gpu).serves_lapack(none));
}

// syev/heev on cuSOLVER's syevd/heevd against the CPU backend's syev/heev (QR iteration): the same
// eigenvalues, ascending; for jobz V, A V = V W and V^H V = I; both triangles, both jobs.
TEST_P(GpuLapack, SyevHeevAgainstTheCpuBackend) {
  const int64_t n = 61;
  for (char uplo : {'L', 'U'}) {
    Bytes a = spd(n);
    for (int64_t i = 0; i < n; ++i) set(a, i * n + i, s(), get(a, i * n + i, s()) - 2.0 * n);  // indefinite
    double an = 0;
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i < n; ++i) an = std::max(an, std::abs(get(a, j * n + i, s())));
    const double scale = an * double(n) * eps(s());
    for (char jobz : {'V', 'N'}) {
      const std::string what = std::string("uplo ") + uplo + " jobz " + jobz;
      auto c = call(LapackRoutine::syev);
      c.jobz = jobz, c.uplo = uplo, c.n = n;
      EXPECT_TRUE(lapack(*backends_once().gpu).serves_lapack(c)) << what;
      auto g = run_gpu(c, {a});
      auto h = run(*backends_once().cpu, c, {a});
      EXPECT_EQ(g.info, 0) << what;
      EXPECT_EQ(h.info, 0) << what;
      const size_t w = jobz == 'V' ? 1 : 0;
      ASSERT_EQ(g.out.size(), w + 1) << what;
      EXPECT_LT(differ(g.out[w], h.out[w], static_cast<size_t>(n), s(), true, scale), kTol)
          << what << ": eigenvalues differ from the CPU's";
      for (int64_t j = 1; j < n; ++j)
        EXPECT_LE(real_at(g.out[w], j - 1, s()), real_at(g.out[w], j, s())) << what << ": not ascending at " << j;
      if (jobz != 'V') continue;
      const Bytes& v = g.out[0];
      double r = 0, o = 0;
      for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < n; ++i) {
          Z av = 0, g2 = 0;
          for (int64_t l = 0; l < n; ++l) {
            av += from_triangle(a, n, uplo, i, l, s()) * get(v, j * n + l, s());
            g2 += std::conj(get(v, i * n + l, s())) * get(v, j * n + l, s());
          }
          r = std::max(r, std::abs(av - real_at(g.out[w], j, s()) * get(v, j * n + i, s())));
          o = std::max(o, std::abs(g2 - Z(i == j ? 1.0 : 0.0)));
        }
      EXPECT_LT(r / scale, kTol) << what << ": residual";
      EXPECT_LT(o / (double(n) * eps(s())), kTol) << what << ": orthogonality";
    }
  }
}

TEST_P(GpuLapack, LeftToTheHost) {
  auto d = call(LapackRoutine::gelsd);
  d.m = 20, d.n = 10, d.nrhs = 1;
  EXPECT_FALSE(lapack(*backends_once().gpu).serves_lapack(d));
  auto y = call(LapackRoutine::gelsy);
  y.m = 20, y.n = 10, y.nrhs = 1;
  EXPECT_FALSE(lapack(*backends_once().gpu).serves_lapack(y));
  auto x = call(LapackRoutine::gesvdx);
  x.jobu = x.jobvt = 'V', x.range = 'A', x.m = 20, x.n = 10;
  EXPECT_FALSE(lapack(*backends_once().gpu).serves_lapack(x));
  // The Schur, Hessenberg, RQ, pivoted QR and Sylvester drivers: the host's LAPACK.
  for (LapackRoutine r : {LapackRoutine::gehrd, LapackRoutine::orghr, LapackRoutine::geqp3, LapackRoutine::gerqf,
                          LapackRoutine::orgrq, LapackRoutine::gees, LapackRoutine::gges, LapackRoutine::ggev,
                          LapackRoutine::trsyl, LapackRoutine::geevx}) {
    auto c = call(r);
    EXPECT_FALSE(lapack(*backends_once().gpu).serves_lapack(c)) << wire::call_name(c);
  }
}

INSTANTIATE_TEST_SUITE_P(AllPrecisions, GpuLapack,
                         ::testing::Combine(::testing::Values(Scalar::s, Scalar::d, Scalar::c, Scalar::z),
                                            ::testing::Bool()),
                         [](const auto& info) {
                           return std::string(1, "sdcz"[static_cast<int>(std::get<0>(info.param))]) +
                                  (std::get<1>(info.param) ? "_pipelined" : "_whole");
                         });

}  // namespace
