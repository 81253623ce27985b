// The interfaces one BLAS or LAPACK routine is exported under: its standard name and the renamed
// ones that ILP64 builds (64-bit INTEGER) and the OpenBLAS copies bundled in Python wheels use. One
// table (the X-macros below) stamps out every entry point of a routine for every interface, so the
// shims' routine tables (level3_fortran.cpp, level3_cblas.cpp, lapack_fortran.cpp) stay one list.
//
//   interface   Fortran            CBLAS                    integers  where
//   standard    dgemm_             cblas_dgemm              the real library's: 32-bit (reference,
//                                                           OpenBLAS), 64-bit where it is an ILP64
//                                                           build of the same names (Debian's
//                                                           libblas64.so.3, liblapack64.so.3,
//                                                           libopenblas64.so.0)
//   suffix64    dgemm_64_          cblas_dgemm64_           64-bit    OpenBLAS built with SYMBOLSUFFIX=64_
//                                  cblas_dgemm_64                     (Julia, libopenblas64_.so); reference
//                                                                     LAPACK/CBLAS's INDEX64_EXT_API
//   scipy32     scipy_dgemm_       scipy_cblas_dgemm        32-bit    scipy-openblas32 (scipy's wheels)
//   scipy64     scipy_dgemm_64_    scipy_cblas_dgemm64_     64-bit    scipy-openblas64 (numpy 2.x wheels)
//
// The renamed interfaces live in libraries a program loads with its own names (e.g. numpy.libs/
// libscipy_openblas64_-<hash>.so, loaded by numpy's extension modules with RTLD_LOCAL): preloaded,
// the shim's definition comes first in the global scope and catches the call, and the real
// implementation is the next definition among the loaded libraries (real_library.hpp,
// find_loaded_symbol).
#pragma once
#include <cstdint>

namespace outboard::shim {

// The integer type of an interface's INTEGER arguments.
enum class Ints : uint8_t {
  standard,  // that of the real library behind the standard names (probed once, see below)
  lp64,      // 32-bit
  ilp64,     // 64-bit
};

// X(NAME, INTS, ...): every exported name of the Fortran routine `base` (e.g. dgemm), with the
// integer type of its interface; the trailing arguments are passed on to X.
#define OUTBOARD_FORTRAN_INTERFACES(X, base, ...)        \
  X(base##_, standard, __VA_ARGS__)                      \
  X(base##_64_, ilp64, __VA_ARGS__)                      \
  X(scipy_##base##_, lp64, __VA_ARGS__)                  \
  X(scipy_##base##_64_, ilp64, __VA_ARGS__)

// The same for the CBLAS routine cblas_`base`.
#define OUTBOARD_CBLAS_INTERFACES(X, base, ...)          \
  X(cblas_##base, standard, __VA_ARGS__)                 \
  X(cblas_##base##64_, ilp64, __VA_ARGS__)               \
  X(cblas_##base##_64, ilp64, __VA_ARGS__)               \
  X(scipy_cblas_##base, lp64, __VA_ARGS__)               \
  X(scipy_cblas_##base##64_, ilp64, __VA_ARGS__)

// An INTEGER argument passed by reference (Fortran), read as its interface's width. Values are
// widened to 64 bits; nothing is truncated, so an ILP64 value beyond the 32-bit range reaches the
// range checks (and then the real library) as it is.
class IntRef {
 public:
  explicit IntRef(bool wide) noexcept : wide_(wide) {}
  int64_t operator()(const void* p) const noexcept {
    return wide_ ? *static_cast<const int64_t*>(p) : *static_cast<const int32_t*>(p);
  }
  void set(void* p, int64_t v) const noexcept {
    if (wide_)
      *static_cast<int64_t*>(p) = v;
    else
      *static_cast<int32_t*>(p) = static_cast<int32_t>(v);
  }
  bool wide() const noexcept { return wide_; }

 private:
  bool wide_;
};

// An INTEGER argument passed by value (CBLAS). Entry points declare them int64_t, which on x86-64
// reads the whole register or stack slot the argument arrived in; a 32-bit int argument occupies
// only its low half (the upper half is undefined), so narrow interfaces keep the low 32 bits. The
// raw value goes on unchanged to the real function, which reads it at its own width.
inline int64_t int_value(int64_t raw, bool wide) noexcept { return wide ? raw : static_cast<int32_t>(raw); }

// The width of the real library behind the standard names, probed once by calling it: a BLAS
// through isamax_, a LAPACK through ilaver_. Both calls have no side effects and no error exits.
// `isamax` / `ilaver`: the real library's function, or nullptr (then: 32-bit).
bool blas_is_ilp64(void* isamax) noexcept;
bool lapack_is_ilp64(void* ilaver) noexcept;

}  // namespace outboard::shim
