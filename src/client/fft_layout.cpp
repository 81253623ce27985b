#include "client/fft_layout.hpp"

#include <cstring>

#include "common/error.hpp"

namespace outboard::client {
namespace {

using wire::FftKind;

// One side's loops from the plan: `complex` says whether this side holds complex numbers, and
// `half` whether its last dimension is the half spectrum (n/2 + 1).
FftSide make_side(const FftGuru& g, bool input, bool complex, bool half) {
  FftSide s;
  s.complex = complex;
  s.split = complex && g.split;
  s.real_bytes = wire::fft_real_bytes(g.precision);
  // FFTW's units: interleaved complex strides count complex numbers; real and split ones reals.
  const int64_t unit = complex && !g.split ? 2 : 1;
  auto add = [&](int64_t n, int64_t stride) {
    s.sizes.push_back(n);
    s.strides.push_back(stride * unit);
  };
  for (const FftIoDim& d : g.howmany) add(d.n, input ? d.is : d.os);
  for (size_t i = 0; i < g.dims.size(); ++i) {
    const FftIoDim& d = g.dims[i];
    add(half && i + 1 == g.dims.size() ? d.n / 2 + 1 : d.n, input ? d.is : d.os);
  }
  // Dense: row-major and contiguous over all loops together (loops of size 1 take any stride).
  int64_t expected = unit, elements = 1;
  bool dense = !s.split;
  for (size_t i = s.sizes.size(); i-- > 0;) {
    if (s.sizes[i] != 1 && s.strides[i] != expected) dense = false;
    expected *= s.sizes[i];
    elements *= s.sizes[i];
  }
  s.dense = dense;
  s.elements = elements;
  return s;
}

// Visits dense elements [first, last) of `s` as maximal runs along the innermost loop:
// f(dense index, offset of the run's first element in reals, elements in the run, inner stride).
template <class F>
void for_each_run(const FftSide& s, int64_t first, int64_t last, F f) {
  const size_t rank = s.sizes.size();
  if (first >= last) return;
  std::vector<int64_t> index(rank);
  int64_t rest = first, offset = 0;
  for (size_t i = rank; i-- > 0;) {
    index[i] = rest % s.sizes[i];
    rest /= s.sizes[i];
    offset += index[i] * s.strides[i];
  }
  const int64_t inner = s.sizes[rank - 1], inner_stride = s.strides[rank - 1];
  for (int64_t at = first; at < last;) {
    const int64_t count = std::min(inner - index[rank - 1], last - at);
    f(at, offset, count, inner_stride);
    at += count;
    offset += count * inner_stride;
    index[rank - 1] += count;
    for (size_t i = rank - 1; i > 0 && index[i] == s.sizes[i]; --i) {  // carry into the outer loops
      offset -= index[i] * s.strides[i];
      index[i] = 0;
      ++index[i - 1];
      offset += s.strides[i - 1];
    }
  }
}

// Copies one run between the dense form and the program's array(s). `to_dense` picks the direction.
template <class T>
void copy_run(const FftSide& s, T* re, T* im, T* dense, int64_t offset, int64_t count, int64_t stride, bool to_dense) {
  if (!s.complex || !s.split) {
    const int64_t width = s.complex ? 2 : 1;  // reals per element
    T* p = re + offset;
    if (stride == width) {
      const size_t bytes = size_t(count * width) * sizeof(T);
      to_dense ? std::memcpy(dense, p, bytes) : std::memcpy(p, dense, bytes);
      return;
    }
    for (int64_t k = 0; k < count; ++k, p += stride, dense += width)
      for (int64_t w = 0; w < width; ++w) to_dense ? void(dense[w] = p[w]) : void(p[w] = dense[w]);
    return;
  }
  T* r = re + offset;
  T* i = im + offset;
  for (int64_t k = 0; k < count; ++k, r += stride, i += stride, dense += 2) {
    if (to_dense) dense[0] = *r, dense[1] = *i;
    else *r = dense[0], *i = dense[1];
  }
}

template <class T>
void copy_side(const FftSide& s, const void* re, const void* im, std::byte* dense, int64_t first, int64_t last,
               bool to_dense) {
  auto* base_re = static_cast<T*>(const_cast<void*>(re));
  auto* base_im = static_cast<T*>(const_cast<void*>(im));
  auto* d = reinterpret_cast<T*>(dense);
  const int64_t width = s.complex ? 2 : 1;
  for_each_run(s, first, last, [&](int64_t at, int64_t offset, int64_t count, int64_t stride) {
    copy_run<T>(s, base_re, base_im, d + at * width, offset, count, stride, to_dense);
  });
}

void copy(const FftSide& s, const void* re, const void* im, std::byte* dense, int64_t first, int64_t last,
          bool to_dense) {
  if (s.real_bytes == 4) copy_side<float>(s, re, im, dense, first, last, to_dense);
  else copy_side<double>(s, re, im, dense, first, last, to_dense);
}

}  // namespace

std::optional<FftLayout> fft_layout(const FftGuru& g) {
  if (g.dims.empty() || g.dims.size() > wire::kMaxFftRank || g.howmany.size() > 16) return std::nullopt;
  FftLayout l;
  wire::FftShape& s = l.shape;
  s.precision = g.precision;
  s.kind = g.kind;
  s.sign = static_cast<int8_t>(g.kind == FftKind::c2c ? g.sign : g.kind == FftKind::r2c ? -1 : g.kind == FftKind::c2r ? 1 : 0);
  for (const FftIoDim& d : g.dims) {
    if (d.n < 1) return std::nullopt;
    s.n.push_back(d.n);
  }
  int64_t batch = 1;
  for (const FftIoDim& d : g.howmany) {
    if (d.n < 1 || d.n > wire::kMaxFftElements || batch > wire::kMaxFftElements / d.n) return std::nullopt;
    batch *= d.n;
  }
  s.batch = batch;
  for (int k : g.r2r_kinds) s.r2r_kinds.push_back(static_cast<uint8_t>(k));
  try {
    wire::validate(s);
  } catch (const Error&) {
    return std::nullopt;
  }
  const bool c2c = g.kind == FftKind::c2c;
  l.in = make_side(g, true, c2c || g.kind == FftKind::c2r, g.kind == FftKind::c2r);
  l.out = make_side(g, false, c2c || g.kind == FftKind::r2c, g.kind == FftKind::r2c);
  return l;
}

void gather_input(const FftLayout& l, const FftArrays& a, std::byte* dense, int64_t first, int64_t last) {
  copy(l.in, a.in_re, a.in_im, dense, first, last, true);
}

void scatter_output(const FftLayout& l, const std::byte* dense, const FftArrays& a, int64_t first, int64_t last) {
  copy(l.out, a.out_re, a.out_im, const_cast<std::byte*>(dense), first, last, false);
}

}  // namespace outboard::client
