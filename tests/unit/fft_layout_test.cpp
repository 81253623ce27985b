// Gathering FFTW arrays into the dense problem and scattering results back (client/fft_layout.hpp),
// checked element by element against index arithmetic done here independently.
#include <gtest/gtest.h>

#include <numeric>
#include <random>

#include "client/fft_layout.hpp"

namespace {

using namespace outboard;
using namespace outboard::client;
using wire::FftKind;

FftGuru guru(FftKind k, std::vector<FftIoDim> dims, std::vector<FftIoDim> howmany = {}) {
  FftGuru g;
  g.kind = k;
  g.sign = k == FftKind::c2r ? 1 : -1;
  g.dims = std::move(dims);
  g.howmany = std::move(howmany);
  return g;
}

// The program-side offset (in reals) of dense element `e` of a side, computed from its loops.
int64_t offset_of(const FftSide& s, int64_t e) {
  int64_t off = 0;
  for (size_t i = s.sizes.size(); i-- > 0;) {
    off += (e % s.sizes[i]) * s.strides[i];
    e /= s.sizes[i];
  }
  return off;
}

TEST(FftLayout, DenseArraysNeedNoCopies) {
  auto l = fft_layout(guru(FftKind::c2c, {{1024, 1, 1}}));
  ASSERT_TRUE(l);
  EXPECT_TRUE(l->in.dense && l->out.dense);
  EXPECT_EQ(l->shape.n, std::vector<int64_t>{1024});
  // Three 8x6 transforms one after another.
  l = fft_layout(guru(FftKind::c2c, {{8, 6, 6}, {6, 1, 1}}, {{3, 48, 48}}));
  ASSERT_TRUE(l);
  EXPECT_TRUE(l->in.dense && l->out.dense);
  EXPECT_EQ(l->shape.batch, 3);
  // Out-of-place r2c 2-D: real n0 x n1 in, complex n0 x (n1/2+1) out.
  l = fft_layout(guru(FftKind::r2c, {{4, 10, 6}, {10, 1, 1}}));
  ASSERT_TRUE(l);
  EXPECT_TRUE(l->in.dense && l->out.dense);
  EXPECT_EQ(l->out.elements, 4 * 6);
}

TEST(FftLayout, UnexpressibleProblemsStayLocal) {
  EXPECT_FALSE(fft_layout(guru(FftKind::c2c, {})));
  EXPECT_FALSE(fft_layout(guru(FftKind::c2c, {{0, 1, 1}})));
  EXPECT_FALSE(fft_layout(guru(FftKind::c2c, {{-3, 1, 1}})));
  EXPECT_FALSE(fft_layout(guru(FftKind::c2c, {{8, 1, 1}}, {{0, 8, 8}})));
  EXPECT_FALSE(fft_layout(guru(FftKind::c2c, {{int64_t(1) << 30, 1, 1}}, {{int64_t(1) << 20, 1, 1}})));
  std::vector<FftIoDim> nine(9, FftIoDim{2, 1, 1});
  EXPECT_FALSE(fft_layout(guru(FftKind::c2c, nine)));
}

// Fills the program's arrays with distinct values, gathers (whole and in pieces), and checks each
// dense element against its program-side place; then scatters and checks the same way.
template <class T>
void round_trip(FftGuru g, size_t in_reals, size_t out_reals) {
  g.precision = sizeof(T) == 4 ? wire::FftPrecision::f32 : wire::FftPrecision::f64;
  auto l = fft_layout(g);
  ASSERT_TRUE(l);
  std::vector<T> in_re(in_reals), in_im(in_reals), out_re(out_reals, -1), out_im(out_reals, -1);
  std::iota(in_re.begin(), in_re.end(), T(1));
  std::iota(in_im.begin(), in_im.end(), T(100000));
  FftArrays a{in_re.data(), g.split ? in_im.data() : nullptr, out_re.data(), g.split ? out_im.data() : nullptr};
  const int64_t w_in = l->in.complex ? 2 : 1, w_out = l->out.complex ? 2 : 1;
  std::vector<T> dense(size_t(l->in.elements * w_in)), pieces(dense.size());
  gather_input(*l, a, reinterpret_cast<std::byte*>(dense.data()), 0, l->in.elements);
  for (int64_t e = 0; e < l->in.elements; e += 7)
    gather_input(*l, a, reinterpret_cast<std::byte*>(pieces.data()), e, std::min(e + 7, l->in.elements));
  EXPECT_EQ(dense, pieces);
  for (int64_t e = 0; e < l->in.elements; ++e) {
    const int64_t off = offset_of(l->in, e);
    if (l->in.split) {
      EXPECT_EQ(dense[2 * e], in_re[off]);
      EXPECT_EQ(dense[2 * e + 1], in_im[off]);
    } else {
      for (int64_t k = 0; k < w_in; ++k) EXPECT_EQ(dense[w_in * e + k], in_re[off + k]) << e;
    }
  }
  std::vector<T> result(size_t(l->out.elements * w_out));
  std::iota(result.begin(), result.end(), T(7));
  for (int64_t e = 0; e < l->out.elements; e += 5)
    scatter_output(*l, reinterpret_cast<std::byte*>(result.data()), a, e, std::min(e + 5, l->out.elements));
  for (int64_t e = 0; e < l->out.elements; ++e) {
    const int64_t off = offset_of(l->out, e);
    if (l->out.split) {
      EXPECT_EQ(out_re[off], result[2 * e]);
      EXPECT_EQ(out_im[off], result[2 * e + 1]);
    } else {
      for (int64_t k = 0; k < w_out; ++k) EXPECT_EQ(out_re[off + k], result[w_out * e + k]) << e;
    }
  }
}

TEST(FftLayout, InPlaceR2cPadding) {
  // plan_dft_r2c_2d(5, 6) in place: rows of 2*(6/2+1) = 8 reals, 4 complex.
  FftGuru g = guru(FftKind::r2c, {{5, 8, 4}, {6, 1, 1}});
  auto l = fft_layout(g);
  ASSERT_TRUE(l);
  EXPECT_FALSE(l->in.dense);
  EXPECT_TRUE(l->out.dense);
  round_trip<double>(g, 5 * 8, 5 * 8);
  FftGuru back = guru(FftKind::c2r, {{5, 4, 8}, {6, 1, 1}});  // and its inverse
  l = fft_layout(back);
  ASSERT_TRUE(l);
  EXPECT_TRUE(l->in.dense);
  EXPECT_FALSE(l->out.dense);
  round_trip<float>(back, 5 * 8, 5 * 8);
}

TEST(FftLayout, StridedBatchesAndSplitArrays) {
  // plan_many: 3 transforms of 16 interleaved element by element (stride 3, dist 1).
  FftGuru g = guru(FftKind::c2c, {{16, 3, 3}}, {{3, 1, 1}});
  EXPECT_FALSE(fft_layout(g)->in.dense);
  round_trip<double>(g, 2 * 48, 2 * 48);
  // Transposed output and two loop dimensions.
  g = guru(FftKind::c2c, {{4, 5, 1}, {5, 1, 4}}, {{2, 40, 20}, {2, 20, 40}});
  round_trip<float>(g, 2 * 80, 2 * 80);
  // Split arrays (strides in reals), with a negative stride.
  g = guru(FftKind::c2c, {{6, 1, -1}}, {{2, 6, 6}});
  g.split = true;
  auto l = fft_layout(g);
  ASSERT_TRUE(l);
  EXPECT_FALSE(l->in.dense);
  // A negative output stride walks backwards from the pointer: point at the end of the array.
  std::vector<double> in_re(12), in_im(12), out_re(12), out_im(12);
  std::iota(in_re.begin(), in_re.end(), 1.0);
  std::iota(in_im.begin(), in_im.end(), 50.0);
  FftArrays a{in_re.data(), in_im.data(), out_re.data() + 5, out_im.data() + 5};
  std::vector<double> dense(24);
  gather_input(*l, a, reinterpret_cast<std::byte*>(dense.data()), 0, 12);
  EXPECT_EQ(dense[2], 2.0);
  EXPECT_EQ(dense[3], 51.0);
  scatter_output(*l, reinterpret_cast<std::byte*>(dense.data()), a, 0, 6);
  EXPECT_EQ(out_re[5], 1.0);
  EXPECT_EQ(out_re[4], 2.0);
  EXPECT_EQ(out_im[0], 55.0);
  // r2r keeps its kinds; a 4-D problem is fine (the CPU backend runs it).
  g = guru(FftKind::r2r, {{2, 30, 30}, {3, 10, 10}, {5, 2, 2}, {2, 1, 1}});
  g.sign = 0;
  g.r2r_kinds = {5, 5, 6, 7};
  l = fft_layout(g);
  ASSERT_TRUE(l);
  EXPECT_TRUE(l->in.dense);
  EXPECT_EQ(l->shape.r2r_kinds.size(), 4u);
}

}  // namespace
