// The FFT problem and messages (wire/fft.hpp): sizes of the dense layout, validation of hostile
// shapes, and encode/decode of every FFT message with every truncation refused.
#include <gtest/gtest.h>

#include "common/error.hpp"
#include "wire/codec.hpp"
#include "wire/messages.hpp"

namespace {

using namespace outboard;
using namespace outboard::wire;

FftShape shape(FftKind k, std::vector<int64_t> n, int64_t batch = 1, FftPrecision p = FftPrecision::f64) {
  FftShape s;
  s.kind = k;
  s.precision = p;
  s.sign = k == FftKind::c2r ? 1 : k == FftKind::r2r ? 0 : -1;
  s.n = std::move(n);
  s.batch = batch;
  if (k == FftKind::r2r) s.r2r_kinds.assign(s.n.size(), 5);
  return s;
}

std::string why_invalid(const FftShape& s) {
  try {
    validate(s);
  } catch (const ProtocolError& e) {
    return e.what();
  }
  return "";
}

TEST(FftShape, DenseSizes) {
  FftShape c = shape(FftKind::c2c, {8, 6}, 3);
  EXPECT_EQ(input_bytes(c), 8u * 6 * 16 * 3);
  EXPECT_EQ(output_bytes(c), input_bytes(c));
  FftShape r = shape(FftKind::r2c, {4, 7}, 2, FftPrecision::f32);
  EXPECT_EQ(input_bytes_per_transform(r), 4u * 7 * 4);
  EXPECT_EQ(output_bytes_per_transform(r), 4u * (7 / 2 + 1) * 8);
  EXPECT_EQ(output_bytes(r), 2 * output_bytes_per_transform(r));
  FftShape b = shape(FftKind::c2r, {5, 10});
  EXPECT_EQ(input_bytes(b), 5u * 6 * 16);
  EXPECT_EQ(output_bytes(b), 5u * 10 * 8);
  FftShape t = shape(FftKind::r2r, {9});
  EXPECT_EQ(input_bytes(t), 72u);
  EXPECT_EQ(output_bytes(t), 72u);
  EXPECT_EQ(shape_name(c), "dft c2c f64 8x6 *3");
  EXPECT_DOUBLE_EQ(flops(shape(FftKind::c2c, {1024})), 5.0 * 1024 * 10);
  EXPECT_DOUBLE_EQ(flops(shape(FftKind::r2c, {1024}, 2)), 5.0 * 1024 * 10);
}

TEST(FftShape, HostileShapesAreRefused) {
  EXPECT_EQ(why_invalid(shape(FftKind::c2c, {1})), "");
  EXPECT_NE(why_invalid(shape(FftKind::c2c, {})), "");
  EXPECT_NE(why_invalid(shape(FftKind::c2c, {1, 1, 1, 1, 1, 1, 1, 1, 1})), "");
  EXPECT_NE(why_invalid(shape(FftKind::c2c, {0})), "");
  EXPECT_NE(why_invalid(shape(FftKind::c2c, {-4})), "");
  EXPECT_NE(why_invalid(shape(FftKind::c2c, {8}, 0)), "");
  EXPECT_NE(why_invalid(shape(FftKind::c2c, {1 << 20, 1 << 20, 1 << 20})), "");         // 2^60 points
  EXPECT_NE(why_invalid(shape(FftKind::c2c, {1 << 20, 1 << 10}, int64_t(1) << 20)), "");  // 2^50 in all
  EXPECT_NE(why_invalid(shape(FftKind::c2c, {INT64_MAX})), "");
  FftShape s = shape(FftKind::c2c, {8});
  s.sign = 0;
  EXPECT_NE(why_invalid(s), "");
  s = shape(FftKind::r2c, {8});
  s.sign = 1;
  EXPECT_NE(why_invalid(s), "");
  s = shape(FftKind::c2c, {8});
  s.r2r_kinds = {1};
  EXPECT_NE(why_invalid(s), "");
  s = shape(FftKind::r2r, {8, 8});
  s.r2r_kinds = {1};
  EXPECT_NE(why_invalid(s), "");
  s.r2r_kinds = {1, 11};
  EXPECT_NE(why_invalid(s), "");
  s = shape(FftKind::c2c, {8});
  s.kind = FftKind::count_;
  EXPECT_NE(why_invalid(s), "");
  s = shape(FftKind::c2c, {8});
  s.precision = FftPrecision::count_;
  EXPECT_NE(why_invalid(s), "");
}

const FftShape kBig = shape(FftKind::c2c, {1 << 16});  // 1 MiB of input: 16 chunks of the minimum

std::vector<std::vector<std::byte>> samples() {
  FftReply reply{9, true, "", 4096, 1, 2, 3, 4, 5, 6, "cuda:0"};
  const FftShape small = shape(FftKind::c2c, {256});
  return {encode(FftPlan{7, shape(FftKind::r2r, {3, 5}, 2)}), encode(FftPlan{8, shape(FftKind::c2c, {1 << 20}, 1)}),
          encode(FftRelease{7}), encode(FftExecute{1, 7, small, 4096, {}}),
          encode(FftChunk{2, 7, kBig, 1 << 20, kMinChunkBytes, 15}), encode(reply), encode(FftReply{10, false, "no plan", 0}),
          encode(DirectFft{11, 7, small, {std::vector<std::byte>(8, std::byte{1})}, {{0x1000, 4096, 0}}, {{0x9000, 4096, 0}}})};
}

TEST(FftMessages, RoundTrip) {
  auto s = samples();
  for (const auto& bytes : s) EXPECT_EQ(encode(decode(bytes)), bytes);
  auto plan = std::get<FftPlan>(decode(s[0]));
  EXPECT_EQ(plan.plan_id, 7u);
  EXPECT_EQ(plan.shape, shape(FftKind::r2r, {3, 5}, 2));
  auto r = std::get<FftReply>(decode(s[5]));
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(r.plan_wait_ns, 6u);
  EXPECT_EQ(r.backend, "cuda:0");
}

TEST(FftMessages, EveryTruncationAndTrailingByteIsRefused) {
  for (const auto& msg : samples()) {
    for (size_t len = 0; len < msg.size(); ++len)
      EXPECT_THROW(decode(std::span(msg.data(), len)), ProtocolError) << len;
    auto longer = msg;
    longer.push_back(std::byte{0});
    EXPECT_THROW(decode(longer), ProtocolError);
  }
}

TEST(FftMessages, HostileFieldsAreRefused) {
  EXPECT_THROW(decode(encode(FftPlan{0, shape(FftKind::c2c, {8})})), ProtocolError);  // id 0
  EXPECT_THROW(decode(encode(FftRelease{0})), ProtocolError);
  const FftShape small = shape(FftKind::c2c, {256});
  EXPECT_THROW(decode(encode(FftExecute{1, 0, small, 4096, {}})), ProtocolError);
  EXPECT_THROW(decode(encode(FftExecute{1, 3, small, 4095, {}})), ProtocolError);  // not the shape's input
  EXPECT_THROW(decode(encode(FftChunk{1, 7, kBig, 1 << 20, kMinChunkBytes, 16})), ProtocolError);  // index past the end
  EXPECT_THROW(decode(encode(FftChunk{1, 7, kBig, 1 << 20, 1024, 0})), ProtocolError);             // chunks too small
  EXPECT_THROW(decode(encode(FftChunk{1, 7, kBig, 1 << 19, kMinChunkBytes, 0})), ProtocolError);   // not the shape's
  // Direct extents must cover exactly the shape's input and output, with known keys.
  const std::vector<std::vector<std::byte>> key{std::vector<std::byte>(8, std::byte{1})};
  EXPECT_THROW(decode(encode(DirectFft{1, 7, small, key, {{0x1000, 4095, 0}}, {{0x9000, 4096, 0}}})), ProtocolError);
  EXPECT_THROW(decode(encode(DirectFft{1, 7, small, key, {{0x1000, 4096, 0}}, {{0x9000, 4096, 1}}})), ProtocolError);
  EXPECT_THROW(decode(encode(DirectFft{1, 0, small, key, {{0x1000, 4096, 0}}, {{0x9000, 4096, 0}}})), ProtocolError);
  // A shape whose rank byte claims more dimensions than exist, or than allowed.
  auto bytes = encode(FftPlan{3, shape(FftKind::c2c, {8})});
  const size_t rank_at = 8 + 8 + 3;  // header, plan id, precision/kind/sign
  bytes[rank_at] = std::byte{9};
  EXPECT_THROW(decode(bytes), ProtocolError);
  bytes[rank_at] = std::byte{2};
  EXPECT_THROW(decode(bytes), ProtocolError);
}

}  // namespace
