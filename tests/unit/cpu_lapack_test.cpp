// The CPU backend's LAPACK on payloads laid out as the LAPACK service lays them (inputs, then
// outputs) that end right at an unmapped page. Debian 12's OpenBLAS reads one element past x in
// complex gemv 'N', up to a column past a matrix (cpu_lapack.cpp: gemv_reads_past_x): a server died
// of it in zheevd. Every complex routine, on sizes that took that path, must run there and give
// the results it gives on a payload with plenty of memory after it; so must every real routine,
// which runs in place.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <complex>
#include <cstring>
#include <random>
#include <type_traits>
#include <vector>

#include "backends/cpu/cpu_backend.hpp"
#include "backends/cpu/openblas_core.hpp"
#include "wire/lapack.hpp"

namespace {

using namespace outboard;
using wire::LapackCall;
using wire::LapackRoutine;
using wire::Scalar;

// `bytes` of memory whose end touches a page that cannot be read, or (guard = false) ordinary memory
// with a page to spare after it.
class Placed {
 public:
  Placed(uint64_t bytes, bool guard) {
    const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
    const uint64_t pages = (bytes + page - 1) / page;
    len_ = (pages + 1) * page;
    base_ = static_cast<std::byte*>(mmap(nullptr, len_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    if (base_ == MAP_FAILED) throw std::runtime_error("mmap failed");
    if (guard) mprotect(base_ + pages * page, page, PROT_NONE);
    data_ = guard ? base_ + pages * page - bytes : base_;
  }
  ~Placed() { munmap(base_, len_); }
  Placed(const Placed&) = delete;
  Placed& operator=(const Placed&) = delete;
  std::byte* data() { return data_; }

 private:
  uint64_t len_;
  std::byte* base_;
  std::byte* data_;
};

// A Hermitian positive definite matrix (so that every routine here succeeds) of `n` columns, `rows`
// rows, or a general one where rows != n.
template <class T> struct RealOf { using type = T; };
template <class R> struct RealOf<std::complex<R>> { using type = R; };
template <class T> using Real = typename RealOf<T>::type;
template <class T> constexpr bool kComplex = !std::is_same_v<T, Real<T>>;

template <class T>
void fill_matrix(T* a, int64_t rows, int64_t n, std::mt19937& g) {
  using R = Real<T>;
  std::uniform_real_distribution<R> u(-1, 1);
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < rows; ++i) {
      if constexpr (kComplex<T>) a[i + j * rows] = T(u(g), u(g));
      else a[i + j * rows] = u(g);
    }
  if (rows != n) return;
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t i = 0; i < j; ++i) {
      if constexpr (kComplex<T>) a[j + i * n] = std::conj(a[i + j * n]);
      else a[j + i * n] = a[i + j * n];
    }
    a[j + j * n] = T(R(n) + 2);
  }
}

// Runs `c` on a payload (inputs filled from `seed`, outputs after them) that ends at an unmapped
// page if `guard`; returns the outputs' bytes and the call's info.
template <class T>
std::pair<std::vector<std::byte>, int64_t> run(const LapackCall& c, bool guard, unsigned seed) {
  const wire::LapackLayout l = wire::layout(c);
  uint64_t total = 0;
  for (const auto& a : l.inputs) total += wire::array_bytes(a, c.scalar);
  uint64_t outputs_at = total;
  for (const auto& a : l.outputs) total += wire::array_bytes(a, c.scalar);
  Placed payload(total, guard);
  std::mt19937 g(seed);
  std::vector<const std::byte*> in;
  std::vector<std::byte*> out;
  uint64_t offset = 0;
  for (const auto& a : l.inputs) {
    std::byte* p = payload.data() + offset;
    // Filled beside and copied in: an array after an odd count of pivots is not aligned for T
    // (as in a real payload, which the backend realigns), and a typed store there is undefined.
    if (a.elem == wire::Elem::index) {
      std::vector<int32_t> pivots(static_cast<size_t>(a.rows));
      for (int64_t i = 0; i < a.rows; ++i) pivots[static_cast<size_t>(i)] = static_cast<int32_t>(i + 1);
      if (!pivots.empty()) std::memcpy(p, pivots.data(), pivots.size() * sizeof(int32_t));
    } else {
      std::vector<T> m(static_cast<size_t>(a.rows * a.cols));
      fill_matrix(m.data(), a.rows, a.cols, g);
      if (!m.empty()) std::memcpy(p, m.data(), m.size() * sizeof(T));
    }
    in.push_back(p);
    offset += wire::array_bytes(a, c.scalar);
  }
  if (c.routine == LapackRoutine::orgqr || c.routine == LapackRoutine::ormqr) {
    // tau(i) = 2 / |v_i|^2 (v_i: 1, then A's column i below the diagonal): true reflectors, whose
    // product stays bounded (random taus overflow over a hundred reflectors).
    const wire::LapackArray& a = l.inputs[0];
    std::vector<T> m(static_cast<size_t>(a.rows * a.cols)), tau(static_cast<size_t>(c.k));
    if (!m.empty()) std::memcpy(m.data(), in[0], m.size() * sizeof(T));
    for (int64_t i = 0; i < c.k; ++i) {
      Real<T> norm2 = 1;
      for (int64_t r = i + 1; r < a.rows; ++r) norm2 += std::norm(m[static_cast<size_t>(r + i * a.rows)]);
      tau[static_cast<size_t>(i)] = T(2 / norm2);
    }
    if (!tau.empty()) std::memcpy(const_cast<std::byte*>(in[1]), tau.data(), tau.size() * sizeof(T));
  }
  for (const auto& a : l.outputs) {
    std::byte* p = payload.data() + offset;
    const uint64_t n = wire::array_bytes(a, c.scalar);
    if (a.from_input >= 0) std::memcpy(p, in[static_cast<size_t>(a.from_input)], n);
    else std::memset(p, 0, n);
    out.push_back(p);
    offset += n;
  }
  const int64_t info = backends::cpu_lapack(c, in, out);
  return {std::vector<std::byte>(payload.data() + outputs_at, payload.data() + total), info};
}

LapackCall call(LapackRoutine r, Scalar s, int64_t m, int64_t n, int64_t nrhs = 0) {
  LapackCall c;
  c.routine = r;
  c.scalar = s;
  c.m = m, c.n = n, c.nrhs = nrhs;
  return c;
}

// Every routine with its options, on square and tall shapes.
std::vector<LapackCall> all_calls(Scalar s, int64_t n) {
  std::vector<LapackCall> calls;
  auto with = [&](LapackCall c, auto&& set) {
    set(c);
    calls.push_back(c);
  };
  calls.push_back(call(LapackRoutine::gesv, s, 0, n, 2));
  calls.push_back(call(LapackRoutine::getrf, s, n + 3, n));
  with(call(LapackRoutine::getrs, s, 0, n, 3), [](LapackCall& c) { c.trans = 'C'; });
  with(call(LapackRoutine::posv, s, 0, n, 1), [](LapackCall& c) { c.uplo = 'L'; });
  with(call(LapackRoutine::potrf, s, 0, n), [](LapackCall& c) { c.uplo = 'U'; });
  with(call(LapackRoutine::potrs, s, 0, n, 2), [](LapackCall& c) { c.uplo = 'U'; });
  calls.push_back(call(LapackRoutine::gels, s, n + 5, n, 2));
  calls.push_back(call(LapackRoutine::geqrf, s, n + 2, n));
  for (char jobz : {'N', 'V'})
    for (char uplo : {'U', 'L'}) with(call(LapackRoutine::syevd, s, 0, n), [&](LapackCall& c) { c.jobz = jobz, c.uplo = uplo; });
  for (char jobz : {'N', 'V'})
    for (char uplo : {'U', 'L'}) with(call(LapackRoutine::syev, s, 0, n), [&](LapackCall& c) { c.jobz = jobz, c.uplo = uplo; });
  for (auto [jobu, jobvt] : {std::pair{'N', 'N'}, {'S', 'S'}, {'A', 'A'}, {'O', 'N'}, {'N', 'O'}})
    for (int64_t m : {n, n + 4}) with(call(LapackRoutine::gesvd, s, m, n), [&](LapackCall& c) { c.jobu = jobu, c.jobvt = jobvt; });
  with(call(LapackRoutine::orgqr, s, n + 4, n), [&](LapackCall& c) { c.k = n; });
  const char adjoint = wire::is_complex(s) ? 'C' : 'T';
  for (auto [side, trans] : {std::pair{'L', adjoint}, {'R', 'N'}})
    with(call(LapackRoutine::ormqr, s, n + 3, n), [&](LapackCall& c) {
      c.side = side, c.trans = trans, c.k = side == 'L' ? n + 3 : n;
    });
  with(call(LapackRoutine::gehrd, s, 0, n), [&](LapackCall& c) { c.ilo = 1, c.ihi = n; });
  calls.push_back(call(LapackRoutine::geqp3, s, n + 3, n));
  calls.push_back(call(LapackRoutine::gerqf, s, n, n + 2));
  for (char jobvs : {'N', 'V'}) with(call(LapackRoutine::gees, s, 0, n), [&](LapackCall& c) { c.jobz = jobvs; });
  for (auto routine : {LapackRoutine::gges, LapackRoutine::ggev})
    with(call(routine, s, 0, n), [&](LapackCall& c) { c.jobvl = 'V', c.jobvr = 'V'; });
  with(call(LapackRoutine::trsyl, s, n + 2, n), [&](LapackCall& c) { c.trans = adjoint, c.tranb = 'N', c.isgn = 1; });
  with(call(LapackRoutine::geevx, s, 0, n), [&](LapackCall& c) { c.balanc = 'B', c.jobvl = c.jobvr = 'V', c.sense = 'B'; });
  return calls;
}

template <class T>
void against_unmapped_page(Scalar s) {
  using R = Real<T>;
  const R tolerance = std::numeric_limits<R>::epsilon() * 1000;
  for (int64_t n : {1, 2, 5, 6, 17, 33, 64, 157, 194}) {
    for (const LapackCall& c : all_calls(s, n)) {
      SCOPED_TRACE(wire::call_name(c) + " m=" + std::to_string(c.m) + " n=" + std::to_string(n) + " jobz=" + c.jobz +
                   " jobu=" + c.jobu + " jobvt=" + c.jobvt);
      const auto [at_edge, info_edge] = run<T>(c, true, static_cast<unsigned>(n));
      const auto [roomy, info_roomy] = run<T>(c, false, static_cast<unsigned>(n));
      ASSERT_EQ(info_edge, 0);
      ASSERT_EQ(info_roomy, 0);
      // The same numbers, to rounding: the library may split work differently between runs.
      ASSERT_EQ(at_edge.size(), roomy.size());
      const wire::LapackLayout l = wire::layout(c);
      uint64_t offset = 0;
      for (const auto& a : l.outputs) {
        const uint64_t bytes = wire::array_bytes(a, s);
        if (a.elem == wire::Elem::index) {
          EXPECT_EQ(0, std::memcmp(at_edge.data() + offset, roomy.data() + offset, bytes)) << a.name;
        } else if (bytes > 0) {
          const size_t count = bytes / sizeof(R);
          std::vector<R> x(count), y(count);  // copied out: the array need not be aligned for R
          std::memcpy(x.data(), at_edge.data() + offset, bytes);
          std::memcpy(y.data(), roomy.data() + offset, bytes);
          R scale = 1, worst = 0;
          for (size_t i = 0; i < count; ++i) scale = std::max(scale, std::abs(y[i]));
          for (size_t i = 0; i < count; ++i) worst = std::max(worst, std::abs(x[i] - y[i]));
          EXPECT_LE(worst, tolerance * scale) << a.name;
        }
        offset += bytes;
      }
    }
  }
}

TEST(CpuLapack, ComplexDoubleRoutinesOnAPayloadThatEndsAtAnUnmappedPage) { against_unmapped_page<std::complex<double>>(Scalar::z); }

TEST(CpuLapack, ComplexSingleRoutinesOnAPayloadThatEndsAtAnUnmappedPage) { against_unmapped_page<std::complex<float>>(Scalar::c); }

// The real routines run in place (no copies): the library must not read past their arrays either.
TEST(CpuLapack, RealDoubleRoutinesOnAPayloadThatEndsAtAnUnmappedPage) { against_unmapped_page<double>(Scalar::d); }

TEST(CpuLapack, RealSingleRoutinesOnAPayloadThatEndsAtAnUnmappedPage) { against_unmapped_page<float>(Scalar::s); }

}  // namespace

namespace {

// An empty problem may name a huge dimension (m = 0, n = 2^30): its arrays hold nothing, and
// neither the copies' readable tails nor the workspaces may follow the dimension (fuzz_session
// found a 31 GB allocation for a tail; geqrf's and gesvd's workspace minimums asked for 16 GiB).
TEST(CpuLapack, AnEmptyProblemWithAHugeDimensionTakesNoMemory) {
  for (LapackRoutine r : {LapackRoutine::geqrf, LapackRoutine::getrf, LapackRoutine::gesvd, LapackRoutine::gels}) {
    LapackCall c = call(r, Scalar::z, 0, int64_t(1) << 30);
    const auto [outputs, info] = run<std::complex<double>>(c, true, 1);
    EXPECT_EQ(info, 0) << wire::call_name(c);
    EXPECT_LE(outputs.size(), 64u) << wire::call_name(c);
  }
}

// syev / heev (QR iteration) against syevd / heevd (divide and conquer) on the same matrix: the
// same eigenvalues, ascending, and for jobz V vectors that agree up to sign (distinct eigenvalues).
template <class T>
void syev_as_syevd(Scalar s) {
  using R = Real<T>;
  const R tolerance = std::numeric_limits<R>::epsilon() * 2000;
  for (int64_t n : {2, 9, 40, 131}) {
    for (char jobz : {'N', 'V'}) {
      for (char uplo : {'U', 'L'}) {
        SCOPED_TRACE(std::string("n=") + std::to_string(n) + " jobz=" + jobz + " uplo=" + uplo);
        LapackCall c = call(LapackRoutine::syev, s, 0, n);
        c.jobz = jobz, c.uplo = uplo;
        LapackCall d = c;
        d.routine = LapackRoutine::syevd;
        const auto [x, info_x] = run<T>(c, true, static_cast<unsigned>(n));
        const auto [y, info_y] = run<T>(d, false, static_cast<unsigned>(n));
        ASSERT_EQ(info_x, 0);
        ASSERT_EQ(info_y, 0);
        ASSERT_EQ(x.size(), y.size());
        const size_t vectors = jobz == 'V' ? static_cast<size_t>(n * n) : 0;
        std::vector<T> vx(vectors), vy(vectors);
        std::vector<R> wx(static_cast<size_t>(n)), wy(static_cast<size_t>(n));
        if (vectors) std::memcpy(vx.data(), x.data(), vectors * sizeof(T)), std::memcpy(vy.data(), y.data(), vectors * sizeof(T));
        std::memcpy(wx.data(), x.data() + vectors * sizeof(T), wx.size() * sizeof(R));
        std::memcpy(wy.data(), y.data() + vectors * sizeof(T), wy.size() * sizeof(R));
        R scale = 1;
        for (R v : wy) scale = std::max(scale, std::abs(v));
        for (int64_t i = 0; i < n; ++i) {
          EXPECT_NEAR(wx[size_t(i)], wy[size_t(i)], tolerance * scale) << "w(" << i << ")";
          if (i > 0) {
            EXPECT_LE(wx[size_t(i - 1)], wx[size_t(i)]);
          }
        }
        // |<x_j, y_j>| = 1 where eigenvalue j is well apart from its neighbours.
        for (int64_t j = 0; j < (vectors ? n : 0); ++j) {
          const R gap = std::min(j > 0 ? wy[size_t(j)] - wy[size_t(j - 1)] : scale,
                                 j + 1 < n ? wy[size_t(j + 1)] - wy[size_t(j)] : scale);
          if (gap < R(1e-2) * scale) continue;
          T dot{};
          for (int64_t i = 0; i < n; ++i) {
            if constexpr (kComplex<T>) dot += std::conj(vx[size_t(i + j * n)]) * vy[size_t(i + j * n)];
            else dot += vx[size_t(i + j * n)] * vy[size_t(i + j * n)];
          }
          EXPECT_NEAR(std::abs(dot), R(1), R(100) * tolerance) << "vector " << j;
        }
      }
    }
  }
}

TEST(CpuLapack, SyevAndHeevAgreeWithSyevdAndHeevd) {
  syev_as_syevd<double>(Scalar::d);
  syev_as_syevd<float>(Scalar::s);
  syev_as_syevd<std::complex<double>>(Scalar::z);
  syev_as_syevd<std::complex<float>>(Scalar::c);
}

}  // namespace

// A server given OpenBLAS's generic PRESCOTT kernels runs again with the CPU's; the user's choice
// (OPENBLAS_CORETYPE set, as it is on that second run) and kernels OpenBLAS chose itself stay.
TEST(OpenblasCore, GenericKernelsGiveWayToTheCpusOwn) {
  using backends::better_openblas_core;
  const backends::CpuFeatures avx512{true, true, true}, avx2{true, true, false}, sse42{true, false, false}, old{};
  EXPECT_STREQ(better_openblas_core(nullptr, "Prescott", avx512), "SkylakeX");
  EXPECT_STREQ(better_openblas_core("", "PRESCOTT", avx2), "Haswell");
  EXPECT_STREQ(better_openblas_core(nullptr, "prescott", sse42), "Nehalem");
  EXPECT_EQ(better_openblas_core(nullptr, "Prescott", old), nullptr);
  EXPECT_EQ(better_openblas_core("Prescott", "Prescott", avx512), nullptr);
  EXPECT_EQ(better_openblas_core(nullptr, "Haswell", avx512), nullptr);
  EXPECT_EQ(better_openblas_core(nullptr, nullptr, avx512), nullptr);
  EXPECT_STRNE(backends::openblas_core(), "");
}
