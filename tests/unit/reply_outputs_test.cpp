// A LAPACK reply's outputs copied into the application's arrays (client/reply_outputs.hpp): what a
// routine sizes itself (syevr's eigenvectors, gesvdx's VT rows) is copied only up to the reply's
// count, and a count beyond the room the call has, or below zero, is refused with nothing copied:
// a server is a network peer, and a lying one must not write past the application's arrays.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "client/reply_outputs.hpp"

namespace outboard::client {
namespace {

using wire::LapackCall;
using wire::LapackRoutine;
using wire::Scalar;

// The index of the output whose extent the routine decides by columns (syevr's Z; its w is sized
// by rows).
size_t counted_columns(const wire::LapackLayout& l) {
  for (size_t i = 0; i < l.outputs.size(); ++i)
    if (l.outputs[i].count_from >= 0 && !l.outputs[i].count_rows) return i;
  ADD_FAILURE() << "no counted output";
  return 0;
}

struct Reply {
  wire::LapackLayout layout;
  std::vector<std::vector<double>> app;  // the application's arrays, each column padded to ld
  std::vector<MatrixRef> refs;
  int64_t ld = 0;
  explicit Reply(const LapackCall& c, int64_t pad) : layout(wire::layout(c)) {
    for (const auto& a : layout.outputs) {
      const int64_t rows = a.rows + (a.cols > 1 ? pad : 0);
      app.emplace_back(static_cast<size_t>(std::max<int64_t>(rows * a.cols, 1)) + 8, -7.0);  // -7: never written
      refs.push_back({app.back().data(), rows});
    }
  }
  // The packed output `i` as the server would send it: element (r, c) = 100 c + r.
  std::vector<double> packed(size_t i) const {
    const auto& a = layout.outputs[i];
    std::vector<double> p(static_cast<size_t>(a.rows * a.cols));
    for (int64_t c = 0; c < a.cols; ++c)
      for (int64_t r = 0; r < a.rows; ++r) p[size_t(c * a.rows + r)] = 100.0 * c + r;
    return p;
  }
  void set_count(size_t i, int32_t count) {
    std::memcpy(app[size_t(layout.outputs[i].count_from)].data(), &count, sizeof count);
  }
  // How many elements of output i differ from -7 (were written), padding included.
  int64_t written(size_t i) const {
    int64_t n = 0;
    for (double v : app[i]) n += v != -7.0;
    return n;
  }
};

LapackCall syevr_range_i(int64_t n, int64_t il, int64_t iu) {
  LapackCall c;
  c.routine = LapackRoutine::syevr, c.scalar = Scalar::d, c.n = n, c.jobz = 'V', c.uplo = 'U', c.range = 'I';
  c.il = il, c.iu = iu;
  return c;
}

TEST(ReplyOutputs, CountedColumnsCopiedUpToTheCountOnly) {
  Reply r(syevr_range_i(6, 1, 4), 3);
  const size_t z = counted_columns(r.layout);
  r.set_count(z, 2);
  const auto p = r.packed(z);
  ASSERT_TRUE(unpack_lapack_output(r.layout, z, reinterpret_cast<const std::byte*>(p.data()), Scalar::d, r.refs.data()));
  const auto& a = r.layout.outputs[z];
  const int64_t ld = r.refs[z].ld;
  for (int64_t c = 0; c < a.cols; ++c)
    for (int64_t row = 0; row < ld; ++row) {
      const double got = r.app[z][size_t(c * ld + row)];
      if (c < 2 && row < a.rows) EXPECT_EQ(got, 100.0 * c + row) << "(" << row << ", " << c << ")";
      else EXPECT_EQ(got, -7.0) << "(" << row << ", " << c << ") was written";
    }
}

TEST(ReplyOutputs, ACountBeyondTheRoomOrBelowZeroIsRefusedAndNothingCopied) {
  for (int32_t lie : {5, 1000, 1 << 30, -1, INT32_MIN}) {
    Reply r(syevr_range_i(6, 1, 4), 2);
    const size_t z = counted_columns(r.layout);
    ASSERT_LT(r.layout.outputs[z].cols, 5) << "the call's room: iu - il + 1 columns";
    r.set_count(z, lie);
    EXPECT_FALSE(count_fits(r.layout.outputs[z], lie)) << lie;
    const auto p = r.packed(z);
    EXPECT_FALSE(unpack_lapack_output(r.layout, z, reinterpret_cast<const std::byte*>(p.data()), Scalar::d, r.refs.data()))
        << "count " << lie;
    EXPECT_EQ(r.written(z), 0) << "count " << lie << ": the refused output was written";
  }
}

TEST(ReplyOutputs, CountedRowsOfGesvdxVT) {
  LapackCall c;
  c.routine = LapackRoutine::gesvdx, c.scalar = Scalar::d, c.m = 7, c.n = 5, c.jobu = 'N', c.jobvt = 'V', c.range = 'I';
  c.il = 1, c.iu = 3;
  Reply r(c, 2);
  size_t vt = r.layout.outputs.size();
  for (size_t i = 0; i < r.layout.outputs.size(); ++i)
    if (r.layout.outputs[i].count_from >= 0 && r.layout.outputs[i].count_rows) vt = i;
  ASSERT_LT(vt, r.layout.outputs.size()) << "gesvdx's VT is sized by rows";
  const auto& a = r.layout.outputs[vt];
  EXPECT_FALSE(count_fits(a, int32_t(a.rows) + 1));
  EXPECT_TRUE(count_fits(a, int32_t(a.rows)));
  r.set_count(vt, 2);
  const auto p = r.packed(vt);
  ASSERT_TRUE(unpack_lapack_output(r.layout, vt, reinterpret_cast<const std::byte*>(p.data()), Scalar::d, r.refs.data()));
  const int64_t ld = r.refs[vt].ld;
  for (int64_t col = 0; col < a.cols; ++col)
    for (int64_t row = 0; row < ld; ++row) {
      const double got = r.app[vt][size_t(col * ld + row)];
      if (row < 2) EXPECT_EQ(got, 100.0 * col + row);
      else EXPECT_EQ(got, -7.0) << "(" << row << ", " << col << ") was written";
    }
}

TEST(ReplyOutputs, WholeOutputsIntoALeadingDimension) {
  LapackCall c;
  c.routine = LapackRoutine::getrf, c.scalar = Scalar::d, c.m = 4, c.n = 3;
  Reply r(c, 2);
  const auto p = r.packed(0);
  ASSERT_TRUE(unpack_lapack_output(r.layout, 0, reinterpret_cast<const std::byte*>(p.data()), Scalar::d, r.refs.data()));
  for (int64_t col = 0; col < 3; ++col)
    for (int64_t row = 0; row < 6; ++row)
      EXPECT_EQ(r.app[0][size_t(col * 6 + row)], row < 4 ? 100.0 * col + row : -7.0);
}

}  // namespace
}  // namespace outboard::client
