// A reply's output arrays copied into the application's: column by column into its leading
// dimension, and for an output whose extent the routine decides (syevr's eigenvectors, gesvdx's
// singular vectors) only up to the count the reply gives, once that count is checked against the
// room the call has. A server is a network peer: a count beyond the room is refused, never copied.
#pragma once
#include <cstddef>
#include <cstdint>

#include "client/runtime.hpp"
#include "wire/lapack.hpp"

namespace outboard::client {

// The packed array at `src` (rows x cols elements of `elem` bytes) copied into `m`.
void unpack_columns(const std::byte* src, int64_t rows, int64_t cols, size_t elem, MatrixRef m);

// Whether `count`, as a reply gives it for an output whose extent the routine decides, fits the
// rows (count_rows) or columns the call has room for.
bool count_fits(const wire::LapackArray& a, int32_t count);

// Copies output `i` of a reply, packed at `src`, into the application's array: all of it, or for
// an output whose extent the routine decides (count_from), the rows or columns it found; the count
// comes earlier in the reply and is in place by then. False, with nothing copied: the count is out
// of range.
bool unpack_lapack_output(const wire::LapackLayout& l, size_t i, const std::byte* src, wire::Scalar scalar,
                          const MatrixRef* outputs);

}  // namespace outboard::client
