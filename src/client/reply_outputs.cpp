#include "client/reply_outputs.hpp"

#include <cstring>

namespace outboard::client {

void unpack_columns(const std::byte* src, int64_t rows, int64_t cols, size_t elem, MatrixRef m) {
  auto* dst = static_cast<std::byte*>(const_cast<void*>(m.data));
  const size_t col = static_cast<size_t>(rows) * elem;
  if (cols <= 1 || m.ld == rows) {
    std::memcpy(dst, src, col * static_cast<size_t>(cols));
    return;
  }
  for (int64_t j = 0; j < cols; ++j) std::memcpy(dst + j * static_cast<size_t>(m.ld) * elem, src + j * col, col);
}

bool count_fits(const wire::LapackArray& a, int32_t count) {
  return count >= 0 && count <= (a.count_rows ? a.rows : a.cols);
}

bool unpack_lapack_output(const wire::LapackLayout& l, size_t i, const std::byte* src, wire::Scalar scalar,
                          const MatrixRef* outputs) {
  const wire::LapackArray& a = l.outputs[i];
  const size_t elem = wire::array_element_bytes(a, scalar);
  if (a.count_from < 0) {
    unpack_columns(src, a.rows, a.cols, elem, outputs[i]);
    return true;
  }
  int32_t count = 0;
  std::memcpy(&count, outputs[a.count_from].data, sizeof count);
  if (!count_fits(a, count)) return false;
  const int64_t rows = a.count_rows ? count : a.rows, cols = a.count_rows ? a.cols : count;
  auto* dst = static_cast<std::byte*>(const_cast<void*>(outputs[i].data));
  const size_t packed_column = static_cast<size_t>(a.rows) * elem, ld = static_cast<size_t>(outputs[i].ld) * elem;
  for (int64_t j = 0; j < cols; ++j) std::memcpy(dst + j * ld, src + j * packed_column, static_cast<size_t>(rows) * elem);
  return true;
}

}  // namespace outboard::client
