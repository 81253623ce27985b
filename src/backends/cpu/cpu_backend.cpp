#include "backends/cpu/cpu_backend.hpp"

#include <algorithm>
#include <complex>
#include <cstring>

#include "common/error.hpp"

// OpenBLAS's Fortran interface. Every argument is a pointer, so one signature per routine serves
// all four precisions; scalars point at storage of the precision's type. Trailing size_t are the
// hidden lengths of the character arguments.
using cptr = const void*;
using ch = const char*;
using iptr = const int*;
extern "C" {
using GemmFn = void(ch, ch, iptr, iptr, iptr, cptr, cptr, iptr, cptr, iptr, cptr, void*, iptr, size_t, size_t);
using SymmFn = void(ch, ch, iptr, iptr, cptr, cptr, iptr, cptr, iptr, cptr, void*, iptr, size_t, size_t);
using SyrkFn = void(ch, ch, iptr, iptr, cptr, cptr, iptr, cptr, void*, iptr, size_t, size_t);
using Syr2kFn = void(ch, ch, iptr, iptr, cptr, cptr, iptr, cptr, iptr, cptr, void*, iptr, size_t, size_t);
using TrmmFn = void(ch, ch, ch, ch, iptr, iptr, cptr, cptr, iptr, void*, iptr, size_t, size_t, size_t, size_t);
#define OUTBOARD_DECLARE(prefix, fn, type) type prefix##fn##_;
#define OUTBOARD_ALL_TYPES(fn, type) \
  OUTBOARD_DECLARE(s, fn, type) OUTBOARD_DECLARE(d, fn, type) OUTBOARD_DECLARE(c, fn, type) OUTBOARD_DECLARE(z, fn, type)
OUTBOARD_ALL_TYPES(gemm, GemmFn)
OUTBOARD_ALL_TYPES(symm, SymmFn)
OUTBOARD_ALL_TYPES(syrk, SyrkFn)
OUTBOARD_ALL_TYPES(syr2k, Syr2kFn)
OUTBOARD_ALL_TYPES(trmm, TrmmFn)
OUTBOARD_ALL_TYPES(trsm, TrmmFn)
OUTBOARD_DECLARE(c, hemm, SymmFn) OUTBOARD_DECLARE(z, hemm, SymmFn)
OUTBOARD_DECLARE(c, herk, SyrkFn) OUTBOARD_DECLARE(z, herk, SyrkFn)
OUTBOARD_DECLARE(c, her2k, Syr2kFn) OUTBOARD_DECLARE(z, her2k, Syr2kFn)
#undef OUTBOARD_ALL_TYPES
#undef OUTBOARD_DECLARE
char* openblas_get_config(void);
int openblas_get_num_threads(void);
}

namespace outboard::backends {
namespace {

using wire::Level3Call;
using wire::Routine;
using wire::Scalar;

// A scalar in the memory representation of the call's precision.
struct ScalarArg {
  alignas(16) unsigned char bytes[16];
  ScalarArg(const std::array<double, 2>& v, Scalar s, bool real_only) {
    const bool single = s == Scalar::s || s == Scalar::c;
    const int parts = (wire::is_complex(s) && !real_only) ? 2 : 1;
    for (int i = 0; i < parts; ++i) {
      if (single) {
        float f = static_cast<float>(v[i]);
        std::memcpy(bytes + 4 * i, &f, 4);
      } else {
        std::memcpy(bytes + 8 * i, &v[i], 8);
      }
    }
  }
};

template <class Fn>
Fn* pick(Scalar s, Fn* sf, Fn* df, Fn* cf, Fn* zf) {
  Fn* table[] = {sf, df, cf, zf};
  Fn* f = table[static_cast<int>(s)];
  if (!f) throw Error("routine not defined for this precision");
  return f;
}

// Level-3 BLAS and LAPACK on the host's OpenBLAS.
class CpuBackend final : public server::Backend, public server::Blas3Executor, public server::LapackExecutor {
 public:
  explicit CpuBackend(const CpuFftOptions& fft) : fft_(make_cpu_fft(fft)) {
    provide<server::Blas3Executor>(this);
    provide<server::LapackExecutor>(this);
    provide<server::FftExecutor>(fft_.get());
  }

  std::string name() const override { return "cpu"; }

  nlohmann::json describe() const override {
    return {{"name", "cpu"},
            {"library", openblas_get_config()},
            {"threads", openblas_get_num_threads()},
            {"fft", fft_->describe()}};
  }

  int64_t lapack(const wire::LapackCall& c, std::span<const std::byte* const> in, std::span<std::byte* const> out,
                 server::DeviceTiming&) override {
    return cpu_lapack(c, in, out);
  }

  using server::Blas3Executor::level3;
  server::DeviceTiming level3(const Level3Call& c, std::span<const std::byte* const> in, std::byte* out,
                              const server::LeadingDims& lds) override {
    const wire::Layout l = wire::layout(c);
    auto ld = [](int64_t given, const wire::Operand& o) {
      return static_cast<int>(std::max<int64_t>(1, given ? given : o.rows));
    };
    const int m = static_cast<int>(c.m), n = static_cast<int>(c.n), k = static_cast<int>(c.k);
    const int lda = ld(lds.a, l.inputs[0]), ldo = ld(lds.out, l.output);
    const Scalar s = c.scalar;
    const bool hermitian_rank = c.routine == Routine::herk || c.routine == Routine::her2k;
    ScalarArg alpha(c.alpha, s, c.routine == Routine::herk);
    ScalarArg beta(c.beta, s, hermitian_rank);
    const void* a = in[0];
    switch (c.routine) {
      case Routine::gemm: {
        int ldb = ld(lds.b, l.inputs[1]);
        pick<GemmFn>(s, sgemm_, dgemm_, cgemm_, zgemm_)(&c.transa, &c.transb, &m, &n, &k, alpha.bytes, a, &lda, in[1],
                                                        &ldb, beta.bytes, out, &ldo, 1, 1);
        break;
      }
      case Routine::symm:
      case Routine::hemm: {
        int ldb = ld(lds.b, l.inputs[1]);
        auto* f = c.routine == Routine::symm ? pick<SymmFn>(s, ssymm_, dsymm_, csymm_, zsymm_)
                                             : pick<SymmFn>(s, nullptr, nullptr, chemm_, zhemm_);
        f(&c.side, &c.uplo, &m, &n, alpha.bytes, a, &lda, in[1], &ldb, beta.bytes, out, &ldo, 1, 1);
        break;
      }
      case Routine::syrk:
      case Routine::herk: {
        auto* f = c.routine == Routine::syrk ? pick<SyrkFn>(s, ssyrk_, dsyrk_, csyrk_, zsyrk_)
                                             : pick<SyrkFn>(s, nullptr, nullptr, cherk_, zherk_);
        f(&c.uplo, &c.transa, &n, &k, alpha.bytes, a, &lda, beta.bytes, out, &ldo, 1, 1);
        break;
      }
      case Routine::syr2k:
      case Routine::her2k: {
        int ldb = ld(lds.b, l.inputs[1]);
        auto* f = c.routine == Routine::syr2k ? pick<Syr2kFn>(s, ssyr2k_, dsyr2k_, csyr2k_, zsyr2k_)
                                              : pick<Syr2kFn>(s, nullptr, nullptr, cher2k_, zher2k_);
        f(&c.uplo, &c.transa, &n, &k, alpha.bytes, a, &lda, in[1], &ldb, beta.bytes, out, &ldo, 1, 1);
        break;
      }
      case Routine::trmm:
      case Routine::trsm: {
        auto* f = c.routine == Routine::trmm ? pick<TrmmFn>(s, strmm_, dtrmm_, ctrmm_, ztrmm_)
                                             : pick<TrmmFn>(s, strsm_, dtrsm_, ctrsm_, ztrsm_);
        f(&c.side, &c.uplo, &c.transa, &c.diag, &m, &n, alpha.bytes, a, &lda, out, &ldo, 1, 1, 1, 1);
        break;
      }
      default:
        throw Error("unknown routine");
    }
    return {};
  }

 private:
  std::unique_ptr<server::FftExecutor> fft_;
};

}  // namespace

std::unique_ptr<server::Backend> make_cpu_backend(const CpuFftOptions& fft) { return std::make_unique<CpuBackend>(fft); }

}  // namespace outboard::backends
