// Element types of the soak's checks: s, d, c, z values widened to long double (complex) for the
// references, random matrices in column-major storage with padding rows, and the tolerances.
#pragma once
#include <cfloat>
#include <cmath>
#include <complex>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "tools/outboard/soak/cases.hpp"

namespace outboard::soak {

using CL = std::complex<long double>;

template <class T> struct is_cplx : std::false_type {};
template <class R> struct is_cplx<std::complex<R>> : std::true_type {};
template <class T> inline constexpr bool kComplex = is_cplx<T>::value;

template <class T> struct real_of { using type = T; };
template <class R> struct real_of<std::complex<R>> { using type = R; };
template <class T> using Real = typename real_of<T>::type;

template <class T> constexpr double eps() { return std::is_same_v<Real<T>, float> ? FLT_EPSILON : DBL_EPSILON; }

template <class T> CL wide(T v) {
  if constexpr (kComplex<T>) return {v.real(), v.imag()};
  else return {static_cast<long double>(v), 0};
}
template <class T> T narrow(CL v) {
  if constexpr (kComplex<T>) return T(static_cast<Real<T>>(v.real()), static_cast<Real<T>>(v.imag()));
  else return static_cast<T>(v.real());
}

template <class T> T random_value(Context& c) {
  if constexpr (kComplex<T>) return T(static_cast<Real<T>>(c.real()), static_cast<Real<T>>(c.real()));
  else return static_cast<T>(c.real());
}

// The padding rows (ld beyond rows) hold this: a routine must neither read nor write them.
inline constexpr double kSentinel = 777;

// A rows x cols matrix with leading dimension ld, random in [-1, 1) (both parts), padding rows
// set to kSentinel.
template <class T> std::vector<T> random_matrix(Context& c, int rows, int cols, int ld) {
  std::vector<T> m(static_cast<size_t>(ld) * std::max(cols, 1), T(kSentinel));
  for (int j = 0; j < cols; ++j)
    for (int i = 0; i < rows; ++i) m[static_cast<size_t>(j) * ld + i] = random_value<T>(c);
  return m;
}

// Padding rows still hold the sentinel.
template <class T> bool padding_intact(const std::vector<T>& m, int rows, int cols, int ld) {
  for (int j = 0; j < cols; ++j)
    for (int i = rows; i < ld; ++i)
      if (m[static_cast<size_t>(j) * ld + i] != T(kSentinel)) return false;
  return true;
}

// Element (i, j) of op(A), op 'N', 'T' or 'C', as a wide value.
template <class T> CL op_at(const std::vector<T>& a, int lda, char op, int i, int j) {
  if (op == 'N') return wide(a[static_cast<size_t>(j) * lda + i]);
  CL v = wide(a[static_cast<size_t>(i) * lda + j]);
  return op == 'C' ? std::conj(v) : v;
}

inline long double mag(CL v) { return std::abs(v); }

// The ratio the checks report: error over allowed error; a NaN error stays NaN (wrong).
inline double ratio(long double err, long double scale, double tol) {
  if (!(scale > 0)) scale = 1;
  return static_cast<double>(err / scale) / tol;
}

}  // namespace outboard::soak
