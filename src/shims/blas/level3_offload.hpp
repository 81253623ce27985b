// Between the exported BLAS entry points and the client runtime: checks the arguments as the
// reference BLAS does and offers valid, non-trivial calls for remote execution.
#pragma once
#include <array>
#include <cstdint>

#include "shims/common/interfaces.hpp"
#include "wire/level3.hpp"

#define OUTBOARD_EXPORT extern "C" __attribute__((visibility("default")))

namespace outboard::shim {

struct Mat {
  const void* data;
  int64_t ld;
};

// `c` holds the column-major call with option characters as the caller gave them (any case).
// Returns true when the call ran remotely and the output is written. False means the caller must
// run its real BLAS with the original arguments: the arguments are invalid (the real BLAS then
// reports them through xerbla exactly as the reference does), the call is trivial (empty output,
// alpha = 0, k = 0), or the runtime chose or fell back to local execution.
bool remote_level3(wire::Level3Call c, Mat a, Mat b, Mat out) noexcept;

// alpha/beta as (re, im) from a pointer to the precision's scalar type.
std::array<double, 2> scalar_at(const void* p, wire::Scalar s, bool real_only = false) noexcept;
inline std::array<double, 2> scalar_of(double v) noexcept { return {v, 0}; }

// CBLAS enum values (the CBLAS standard's numbering), as the characters BLAS takes.
char cblas_trans(int t) noexcept;
char cblas_uplo(int u) noexcept;
char cblas_side(int s) noexcept;
char cblas_diag(int d) noexcept;
inline constexpr int kCblasRowMajor = 101, kCblasColMajor = 102;
// Row-major callers are served by the column-major call on the transposed problem; these flip
// an option for that.
char flip_uplo(char u) noexcept;
char flip_side(char s) noexcept;

// Looks up the real implementation of `name`, exported under interface `ints`: the real BLAS's
// for the standard names, the next loaded definition for renamed ones. Aborts with a message if
// none exists.
void* real_function(const char* name, Ints ints) noexcept;

// Whether the integer arguments of interface `ints` are 64 bits wide. For the standard names: the
// real BLAS's width, probed at the first call.
bool standard_blas_is_ilp64() noexcept;
inline bool wide_integers(Ints ints) noexcept {
  return ints == Ints::ilp64 || (ints == Ints::standard && standard_blas_is_ilp64());
}

}  // namespace outboard::shim
