#include "shims/common/interfaces.hpp"

#include <cstdint>

namespace outboard::shim {

bool blas_is_ilp64(void* isamax) noexcept {
  if (isamax == nullptr) return false;
  // n's low half is 2 and its high half all ones: a 32-bit isamax_ sees n = 2 and returns the
  // position of the larger element, 2; a 64-bit one sees a negative n and returns 0. incx = 1 at
  // either width. The result is an INTEGER in rax (only its low half is defined for 32 bits).
  const int64_t n = static_cast<int64_t>(0xffffffff00000002ull);
  const int64_t incx = 1;
  const float x[2] = {1.0f, 5.0f};
  auto* fn = reinterpret_cast<int64_t (*)(const int64_t*, const float*, const int64_t*)>(isamax);
  return static_cast<int32_t>(fn(&n, x, &incx)) != 2;
}

bool lapack_is_ilp64(void* ilaver) noexcept {
  if (ilaver == nullptr) return false;
  // ilaver_(major, minor, patch) stores three INTEGERs: a 64-bit build overwrites the high halves.
  constexpr int64_t kPattern = static_cast<int64_t>(0x5a5a5a5a5a5a5a5aull);
  int64_t v[3] = {kPattern, kPattern, kPattern};
  reinterpret_cast<void (*)(int64_t*, int64_t*, int64_t*)>(ilaver)(&v[0], &v[1], &v[2]);
  return (v[0] >> 32) != (kPattern >> 32);
}

}  // namespace outboard::shim
