// Unit tests of the LAPACK part of the wire schema: LapackRequest / LapackReply round trips,
// rejection of malformed messages (truncation, trailing bytes, bad ids, options and dimensions,
// mismatched payload sizes, random mutations), and the array layout and sizes of every routine.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "common/error.hpp"
#include "wire/lapack.hpp"
#include "wire/messages.hpp"

namespace outboard::wire {
namespace {

using Bytes = std::vector<std::byte>;
using R = LapackRoutine;
constexpr size_t kCallOffset = 8 + 8;  // header, call_id

// A valid call of each routine and precision, with distinct dimensions.
LapackCall make(R r, Scalar s) {
  LapackCall c;
  c.routine = r;
  c.scalar = s;
  switch (r) {
    case R::gesv: c.n = 5, c.nrhs = 3; break;
    case R::getrf: c.m = 7, c.n = 4; break;
    case R::getrs: c.trans = is_complex(s) ? 'C' : 'T', c.n = 6, c.nrhs = 2; break;
    case R::posv: c.uplo = 'L', c.n = 4, c.nrhs = 5; break;
    case R::potrf: c.uplo = 'U', c.n = 9; break;
    case R::potrs: c.uplo = 'L', c.n = 3, c.nrhs = 1; break;
    case R::gels: c.trans = is_complex(s) ? 'C' : 'T', c.m = 8, c.n = 3, c.nrhs = 2; break;
    case R::geqrf: c.m = 3, c.n = 8; break;
    case R::syevd: c.jobz = 'V', c.uplo = 'U', c.n = 6; break;
    case R::gesvd: c.jobu = 'S', c.jobvt = 'A', c.m = 7, c.n = 5; break;
    case R::gesdd: c.jobz = 'S', c.m = 5, c.n = 7; break;
    case R::gesvdx: c.jobu = 'V', c.jobvt = 'V', c.range = 'I', c.il = 2, c.iu = 4, c.m = 6, c.n = 5; break;
    case R::geev: c.jobvl = 'N', c.jobvr = 'V', c.n = 5; break;
    case R::gelsd: c.m = 9, c.n = 4, c.nrhs = 2, c.rcond = -1; break;
    case R::gelsy: c.m = 4, c.n = 6, c.nrhs = 3, c.rcond = 1e-8; break;
    case R::syevr: c.jobz = 'V', c.range = 'A', c.uplo = 'L', c.n = 7, c.abstol = 0; break;
    case R::syevx: c.jobz = 'V', c.range = 'V', c.uplo = 'U', c.n = 6, c.vl = -1, c.vu = 2.5, c.abstol = 1e-9; break;
    case R::sygvd: c.itype = 2, c.jobz = 'V', c.uplo = 'U', c.n = 5; break;
    case R::sysv:
    case R::hesv: c.uplo = 'L', c.n = 6, c.nrhs = 2; break;
    case R::sytrf:
    case R::hetrf: c.uplo = 'U', c.n = 5; break;
    case R::sytrs:
    case R::hetrs: c.uplo = 'U', c.n = 4, c.nrhs = 3; break;
    case R::getri: c.n = 5; break;
    case R::potri: c.uplo = 'L', c.n = 6; break;
    case R::trtri: c.uplo = 'U', c.diag = 'U', c.n = 7; break;
    case R::orgqr: c.m = 9, c.n = 6, c.k = 4; break;
    case R::ormqr: c.side = 'R', c.trans = is_complex(s) ? 'C' : 'T', c.m = 5, c.n = 8, c.k = 3; break;
    case R::syev: c.jobz = 'V', c.uplo = 'L', c.n = 8; break;
    case R::gehrd:
    case R::orghr: c.n = 9, c.ilo = 2, c.ihi = 7; break;
    case R::geqp3: c.m = 7, c.n = 5; break;
    case R::gerqf: c.m = 4, c.n = 9; break;
    case R::orgrq: c.m = 4, c.n = 7, c.k = 3; break;
    case R::gees: c.jobz = 'V', c.n = 6; break;
    case R::gges: c.jobvl = 'V', c.jobvr = 'N', c.n = 5; break;
    case R::ggev: c.jobvl = 'N', c.jobvr = 'V', c.n = 4; break;
    case R::trsyl: c.trans = 'N', c.tranb = is_complex(s) ? 'C' : 'T', c.isgn = -1, c.m = 5, c.n = 3; break;
    case R::geevx: c.balanc = 'B', c.jobvl = 'V', c.jobvr = 'V', c.sense = 'B', c.n = 6; break;
    default: break;
  }
  return c;
}

bool exists(R r, Scalar s) { return is_complex(s) || (r != R::hesv && r != R::hetrf && r != R::hetrs); }

std::vector<LapackCall> all_calls() {
  std::vector<LapackCall> v;
  for (int r = 0; r < int(R::count_); ++r)
    for (int s = 0; s < int(Scalar::count_); ++s)
      if (exists(R(r), Scalar(s))) v.push_back(make(R(r), Scalar(s)));
  return v;
}

LapackRequest request(const LapackCall& c, uint64_t id = 5) { return {id, c, request_bytes(c), {}}; }

template <class F>
std::string protocol_error_of(F&& f) {
  try {
    f();
  } catch (const ProtocolError& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected ProtocolError, got: " << e.what();
    return {};
  }
  ADD_FAILURE() << "expected ProtocolError, nothing was thrown";
  return {};
}

TEST(LapackWire, RequestRoundTripEveryRoutineAndPrecision) {
  for (const auto& c : all_calls()) {
    auto b = encode(request(c, 77));
    uint16_t type;
    std::memcpy(&type, b.data() + 6, 2);
    EXPECT_EQ(type, uint16_t(Type::lapack_call));
    auto m = decode(b);
    ASSERT_TRUE(std::holds_alternative<LapackRequest>(m)) << call_name(c);
    const auto& d = std::get<LapackRequest>(m);
    EXPECT_EQ(d.call_id, 77u);
    EXPECT_EQ(d.payload_bytes, request_bytes(c));
    EXPECT_EQ(d.call.routine, c.routine);
    EXPECT_EQ(d.call.scalar, c.scalar);
    EXPECT_EQ(d.call.trans, c.trans);
    EXPECT_EQ(d.call.uplo, c.uplo);
    EXPECT_EQ(d.call.jobz, c.jobz);
    EXPECT_EQ(d.call.jobu, c.jobu);
    EXPECT_EQ(d.call.jobvt, c.jobvt);
    EXPECT_EQ(d.call.m, c.m);
    EXPECT_EQ(d.call.n, c.n);
    EXPECT_EQ(d.call.nrhs, c.nrhs);
    EXPECT_EQ(d.call.jobvr, c.jobvr);
    EXPECT_EQ(d.call.range, c.range);
    EXPECT_EQ(d.call.diag, c.diag);
    EXPECT_EQ(d.call.itype, c.itype);
    EXPECT_EQ(d.call.il, c.il);
    EXPECT_EQ(d.call.iu, c.iu);
    EXPECT_EQ(d.call.vl, c.vl);
    EXPECT_EQ(d.call.vu, c.vu);
    EXPECT_EQ(d.call.abstol, c.abstol);
    EXPECT_EQ(d.call.rcond, c.rcond);
    EXPECT_EQ(d.call.side, c.side);
    EXPECT_EQ(d.call.k, c.k);
    EXPECT_EQ(type_of(m), Type::lapack_call);
  }
}

TEST(LapackWire, ReplyRoundTrip) {
  LapackReply r{9, true, "", 17, 1234, 1, 2, 3, 4, 5};
  auto b = encode(r);
  uint16_t type;
  std::memcpy(&type, b.data() + 6, 2);
  EXPECT_EQ(type, uint16_t(Type::lapack_reply));
  auto d = std::get<LapackReply>(decode(b));
  EXPECT_EQ(d.call_id, 9u);
  EXPECT_TRUE(d.ok);
  EXPECT_EQ(d.info, 17);
  EXPECT_EQ(d.payload_bytes, 1234u);
  EXPECT_EQ(d.receive_ns, 1u);
  EXPECT_EQ(d.from_device_ns, 5u);
  auto f = std::get<LapackReply>(decode(encode(LapackReply{3, false, "pivot out of range", -1})));
  EXPECT_FALSE(f.ok);
  EXPECT_EQ(f.message, "pivot out of range");
  EXPECT_EQ(f.info, -1);
}

TEST(LapackWire, TypeIds) {
  EXPECT_EQ(uint16_t(Type::lapack_call), 12);
  EXPECT_EQ(uint16_t(Type::lapack_reply), 15);
  EXPECT_EQ(type_of(Message{LapackReply{}}), Type::lapack_reply);
  EXPECT_EQ(type_of(Message{Pong{}}), Type::pong);
  EXPECT_EQ(uint16_t(Type::lapack_chunk), 16);
  EXPECT_EQ(type_of(Message{LapackChunk{}}), Type::lapack_chunk);
}

TEST(LapackWire, ChunkRoundTripAndRejects) {
  LapackCall c = make(R::gesv, Scalar::d);
  c.n = 300, c.nrhs = 2;  // 724800 payload bytes: 12 chunks of 64 KiB
  const uint64_t total = request_bytes(c);
  auto m = decode(encode(LapackChunk{9, c, total, kMinChunkBytes, 11}));
  ASSERT_TRUE(std::holds_alternative<LapackChunk>(m));
  const auto& d = std::get<LapackChunk>(m);
  EXPECT_EQ(d.call_id, 9u);
  EXPECT_EQ(d.call.n, 300);
  EXPECT_EQ(d.call.nrhs, 2);
  EXPECT_EQ(d.payload_bytes, total);
  EXPECT_EQ(chunk_offset(d), 11 * kMinChunkBytes);
  EXPECT_EQ(chunk_length(d), total - 11 * kMinChunkBytes);
  auto error_of = [](const Message& msg) { return protocol_error_of([&] { decode(encode(msg)); }); };
  EXPECT_NE(error_of(LapackChunk{1, c, total - 8, kMinChunkBytes, 0}).find("payload bytes"), std::string::npos);
  EXPECT_NE(error_of(LapackChunk{1, c, total, kMinChunkBytes / 2, 0}).find("minimum"), std::string::npos);
  EXPECT_NE(error_of(LapackChunk{1, c, total, kMinChunkBytes, 12}).find("range"), std::string::npos);
  const Bytes b = encode(LapackChunk{1, c, total, kMinChunkBytes, 3});
  for (size_t n = 0; n < b.size(); ++n) protocol_error_of([&] { decode(Bytes(b.begin(), b.begin() + long(n))); });
}

TEST(LapackWire, DirectPathRoundTripAndRejects) {
  EXPECT_EQ(uint16_t(Type::lanes_request), 17);
  EXPECT_EQ(uint16_t(Type::proceed), 20);
  EXPECT_EQ(type_of(Message{DirectLapack{}}), Type::direct_lapack);
  LapackCall c = make(R::gesv, Scalar::d);  // in: A 200, B 120 bytes; out: A 200, ipiv, B 120
  const uint64_t in = request_bytes(c), out = reply_bytes(c);
  const Bytes key0(40, std::byte{1}), key1(7, std::byte{2});
  DirectLapack d{5, c, {key0, key1}, {{0x1000, 200, 0}, {0x9000, in - 200, 1}}, {{0x1000, 200, 0}, {0x5000, out - 200, 1}}, true};
  auto m = decode(encode(d));
  ASSERT_TRUE(std::holds_alternative<DirectLapack>(m));
  const auto& e = std::get<DirectLapack>(m);
  EXPECT_EQ(e.call_id, 5u);
  EXPECT_EQ(e.keys, d.keys);
  EXPECT_EQ(e.input, d.input);
  EXPECT_EQ(e.output, d.output);
  EXPECT_TRUE(e.gated);
  auto error_of = [](const Message& msg) { return protocol_error_of([&] { decode(encode(msg)); }); };
  DirectLapack bad = d;
  bad.input[1].bytes -= 8;  // does not cover the input
  EXPECT_NE(error_of(bad).find("extents cover"), std::string::npos);
  bad = d;
  bad.output[0].key = 2;  // no such key
  EXPECT_NE(error_of(bad).find("invalid output extent"), std::string::npos);
  bad = d;
  bad.input[0].address = UINT64_MAX - 10;  // wraps
  EXPECT_NE(error_of(bad).find("invalid input extent"), std::string::npos);
  bad = d;
  bad.input = {{0x1000, in, 0}, {0x2000, 8, 0}};  // more than the input
  EXPECT_NE(error_of(bad).find("invalid input extent"), std::string::npos);
  bad = d;
  bad.keys.clear();
  EXPECT_NE(error_of(bad).find("memory keys"), std::string::npos);
  bad = d;
  bad.keys[1] = Bytes(kMaxKeyBytes + 1);
  EXPECT_NE(error_of(bad).find("memory key"), std::string::npos);
  bad = d;
  bad.input.assign(kMaxExtents + 1, Extent{0x1000, 1, 0});
  EXPECT_NE(error_of(bad).find("number of input extents"), std::string::npos);
  EXPECT_NE(error_of(LanesRequest{1, {}}).find("worker address"), std::string::npos);
  EXPECT_NE(error_of(LanesRequest{1, Bytes(kMaxAddressBytes + 1)}).find("worker address"), std::string::npos);
  for (const Message& msg : {Message{d}, Message{LanesRequest{2, Bytes(100), 4242, 0x7fff0000}}, Message{LanesReply{3, 4, "x"}},
                             Message{Proceed{4}}, Message{InputTaken{5}}}) {
    const Bytes b = encode(msg);
    EXPECT_EQ(encode(decode(b)), b);
    for (size_t n = 0; n < b.size(); ++n) protocol_error_of([&] { decode(Bytes(b.begin(), b.begin() + long(n))); });
    Bytes longer = b;
    longer.push_back(std::byte{0});
    protocol_error_of([&] { decode(longer); });
  }
}

TEST(LapackWire, EveryTruncationAndTrailingByte) {
  std::vector<Bytes> msgs = {encode(request(make(R::gesvd, Scalar::z))), encode(request(make(R::getrs, Scalar::s))),
                             encode(LapackReply{1, false, "x", 2, 0})};
  for (const auto& b : msgs) {
    for (size_t n = 0; n < b.size(); ++n) {
      Bytes t(b.begin(), b.begin() + static_cast<long>(n));
      protocol_error_of([&] { decode(t); });
    }
    Bytes longer = b;
    longer.push_back(std::byte{0});
    protocol_error_of([&] { decode(longer); });
  }
}

TEST(LapackWire, RejectsBadIdsOptionsAndDimensions) {
  auto base = encode(request(make(R::posv, Scalar::d)));
  auto with = [&](size_t offset, uint8_t v) {
    Bytes b = base;
    b[offset] = std::byte{v};
    return protocol_error_of([&] { decode(b); });
  };
  EXPECT_NE(with(kCallOffset, 10).find("routine"), std::string::npos);
  EXPECT_NE(with(kCallOffset, 255).find("routine"), std::string::npos);
  EXPECT_NE(with(kCallOffset + 1, 4).find("scalar"), std::string::npos);
  EXPECT_NE(with(kCallOffset + 2, 'T').find("trans"), std::string::npos);  // posv takes no trans
  EXPECT_NE(with(kCallOffset + 3, 'X').find("uplo"), std::string::npos);
  EXPECT_NE(with(kCallOffset + 3, 'u').find("uplo"), std::string::npos);   // upper case only
  EXPECT_NE(with(kCallOffset + 4, 'V').find("jobz"), std::string::npos);
  EXPECT_NE(with(kCallOffset + 9, 'A').find("range"), std::string::npos);  // posv takes no range
  EXPECT_NE(with(kCallOffset + 10, 'U').find("diag"), std::string::npos);
  // Dimension n (second i64) negative; m (unused by posv) nonzero.
  constexpr size_t kDims = kCallOffset + 2 + 9;  // routine, scalar, nine options
  Bytes b = base;
  int64_t neg = -1, big = int64_t(1) << 40;
  std::memcpy(b.data() + kDims + 8, &neg, 8);
  EXPECT_NE(protocol_error_of([&] { decode(b); }).find("out of range"), std::string::npos);
  b = base;
  std::memcpy(b.data() + kDims + 8, &big, 8);
  EXPECT_NE(protocol_error_of([&] { decode(b); }).find("out of range"), std::string::npos);
  b = base;
  int64_t one = 1;
  std::memcpy(b.data() + kDims, &one, 8);
  EXPECT_NE(protocol_error_of([&] { decode(b); }).find("must be 0"), std::string::npos);
  // rcond (the fourth f64) is not posv's; a NaN is nobody's.
  constexpr size_t kReals = kDims + 6 * 8;
  b = base;
  const double nan = std::nan(""), half = 0.5;
  std::memcpy(b.data() + kReals + 3 * 8, &half, 8);
  EXPECT_NE(protocol_error_of([&] { decode(b); }).find("rcond"), std::string::npos);
  b = base;
  std::memcpy(b.data() + kReals, &nan, 8);
  EXPECT_NE(protocol_error_of([&] { decode(b); }).find("finite"), std::string::npos);

  LapackCall c = make(R::gels, Scalar::d);
  c.trans = 'C';  // real gels takes N or T
  protocol_error_of([&] { validate(c); });
  c = make(R::gels, Scalar::z);
  c.trans = 'T';  // complex gels takes N or C
  protocol_error_of([&] { validate(c); });
  c = make(R::gesvd, Scalar::d);
  c.jobu = c.jobvt = 'O';
  EXPECT_NE(protocol_error_of([&] { validate(c); }).find("both"), std::string::npos);
  c = make(R::syevd, Scalar::c);
  c.nrhs = 2;
  protocol_error_of([&] { validate(c); });
  // The ranges of values asked for, as LAPACK requires them.
  c = make(R::syevr, Scalar::d);  // n 7
  c.range = 'I', c.il = 3, c.iu = 8;
  EXPECT_NE(protocol_error_of([&] { validate(c); }).find("il <= iu <= 7"), std::string::npos);
  c.il = 4, c.iu = 3;
  protocol_error_of([&] { validate(c); });
  c.range = 'V', c.il = c.iu = 0, c.vl = 2, c.vu = 2;
  EXPECT_NE(protocol_error_of([&] { validate(c); }).find("vl < vu"), std::string::npos);
  c.range = 'A', c.vl = 1, c.vu = 3;  // bounds of another range
  protocol_error_of([&] { validate(c); });
  c = make(R::gesvdx, Scalar::z);  // 6 x 5: at most 5 singular values
  c.iu = 6;
  protocol_error_of([&] { validate(c); });
  c = make(R::sygvd, Scalar::s);
  c.itype = 4;
  EXPECT_NE(protocol_error_of([&] { validate(c); }).find("itype"), std::string::npos);
  c = make(R::hesv, Scalar::d);  // the Hermitian routines are complex
  EXPECT_NE(protocol_error_of([&] { validate(c); }).find("complex"), std::string::npos);
  c = make(R::gesdd, Scalar::c);
  c.jobz = 'V';  // gesdd's jobz is A, S, O or N
  protocol_error_of([&] { validate(c); });
  // orgqr: m >= n >= k >= 0, as LAPACK requires; side and k belong to orgqr and ormqr only.
  c = make(R::orgqr, Scalar::d);  // 9 x 6, k 4
  c.k = 7;
  EXPECT_NE(protocol_error_of([&] { validate(c); }).find("m >= n >= k"), std::string::npos);
  c.k = 4, c.n = 10;
  EXPECT_NE(protocol_error_of([&] { validate(c); }).find("m >= n >= k"), std::string::npos);
  c.n = 6, c.k = -1;
  EXPECT_NE(protocol_error_of([&] { validate(c); }).find("out of range"), std::string::npos);
  c.k = 4, c.side = 'L';
  EXPECT_NE(protocol_error_of([&] { validate(c); }).find("side"), std::string::npos);
  c = make(R::gesv, Scalar::d);
  c.k = 2;
  EXPECT_NE(protocol_error_of([&] { validate(c); }).find("must be 0"), std::string::npos);
  c = make(R::ormqr, Scalar::d);  // side R: 5 x 8, k 3 <= n
  c.k = 8;
  validate(c);
  c.k = 9;
  EXPECT_NE(protocol_error_of([&] { validate(c); }).find("k <= n"), std::string::npos);
  c.k = 3, c.side = 'L';  // k <= m
  validate(c);
  c.k = 6;
  EXPECT_NE(protocol_error_of([&] { validate(c); }).find("k <= m"), std::string::npos);
  c.k = 3, c.side = 'X';
  EXPECT_NE(protocol_error_of([&] { validate(c); }).find("side"), std::string::npos);
  c.side = 'N';  // side is not optional here
  protocol_error_of([&] { validate(c); });
  c.side = 'L', c.trans = 'C';  // real ormqr takes N or T
  EXPECT_NE(protocol_error_of([&] { validate(c); }).find("trans"), std::string::npos);
  c.scalar = Scalar::z;  // complex unmqr takes N or C
  validate(c);
  c.trans = 'T';
  EXPECT_NE(protocol_error_of([&] { validate(c); }).find("trans"), std::string::npos);
}

TEST(LapackWire, PayloadBytesMustMatch) {
  auto q = request(make(R::gesv, Scalar::c));
  q.payload_bytes += 8;
  auto msg = protocol_error_of([&] { decode(encode(q)); });
  EXPECT_NE(msg.find("payload"), std::string::npos);
}

TEST(LapackWire, HugeDimensionsDoNotOverflow) {
  LapackCall c = make(R::gesvd, Scalar::z);
  c.m = c.n = kMaxDimension;
  c.jobu = c.jobvt = 'A';
  protocol_error_of([&] { validate(c); });  // 2^31 * 2^31 * 16 bytes
  c = make(R::gesv, Scalar::d);
  c.n = 100000, c.nrhs = 10;
  EXPECT_EQ(request_bytes(c), 8ull * (100000ull * 100000 + 100000 * 10));
}

TEST(LapackWire, Layouts) {
  LapackCall c = make(R::gesv, Scalar::d);  // n 5, nrhs 3
  auto l = layout(c);
  ASSERT_EQ(l.inputs.size(), 2u);
  ASSERT_EQ(l.outputs.size(), 3u);
  EXPECT_STREQ(l.outputs[1].name, "ipiv");
  EXPECT_EQ(l.outputs[1].from_input, -1);
  EXPECT_EQ(l.outputs[2].from_input, 1);
  EXPECT_EQ(request_bytes(c), 8u * (25 + 15));
  EXPECT_EQ(reply_bytes(c), 8u * (25 + 15) + 4 * 5);

  c = make(R::getrf, Scalar::s);  // 7 x 4
  EXPECT_EQ(reply_bytes(c), 4u * 28 + 4 * 4);
  c = make(R::gels, Scalar::z);  // 8 x 3, nrhs 2: B is 8 x 2
  EXPECT_EQ(request_bytes(c), 16u * (24 + 16));
  c = make(R::geqrf, Scalar::c);  // 3 x 8: tau 3
  EXPECT_EQ(reply_bytes(c), 8u * (24 + 3));
  c = make(R::syevd, Scalar::z);  // n 6, V: A and w (real)
  EXPECT_EQ(reply_bytes(c), 16u * 36 + 8 * 6);
  EXPECT_EQ(call_name(c), "zheevd");
  c.jobz = 'N';  // eigenvalues only: A does not come back
  EXPECT_EQ(reply_bytes(c), 8u * 6);
  EXPECT_EQ(call_name(make(R::syevd, Scalar::s)), "ssyevd");
  c = make(R::gesvd, Scalar::d);  // 7 x 5, U 'S' 7x5, VT 'A' 5x5, s 5
  EXPECT_EQ(reply_bytes(c), 8u * (5 + 35 + 25));
  c.jobu = 'O', c.jobvt = 'N';  // A comes back, no U, no VT
  EXPECT_EQ(reply_bytes(c), 8u * (35 + 5));
  for (const auto& call : all_calls()) EXPECT_GT(flops(call), 0) << call_name(call);
}

// The drivers of issue 35: outputs in LAPACK's shapes, and those whose extent the routine decides
// counted by the output that holds the count.
TEST(LapackWire, DriverLayouts) {
  LapackCall c = make(R::syevr, Scalar::z);  // n 7, all eigenvalues, vectors: isuppz too
  auto l = layout(c);
  EXPECT_EQ(call_name(c), "zheevr");
  ASSERT_EQ(l.outputs.size(), 4u);
  EXPECT_STREQ(l.outputs[0].name, "m");
  EXPECT_STREQ(l.outputs[1].name, "w");
  EXPECT_EQ(l.outputs[1].count_from, 0);
  EXPECT_TRUE(l.outputs[1].count_rows);
  EXPECT_STREQ(l.outputs[2].name, "Z");
  EXPECT_EQ(l.outputs[2].count_from, 0);
  EXPECT_FALSE(l.outputs[2].count_rows);
  EXPECT_STREQ(l.outputs[3].name, "isuppz");
  EXPECT_EQ(reply_bytes(c), 4u + 8 * 7 + 16 * 49 + 4 * 14);
  c.range = 'I', c.il = 2, c.iu = 4;  // some: Z has 3 columns, and isuppz is not written
  l = layout(c);
  ASSERT_EQ(l.outputs.size(), 3u);
  EXPECT_EQ(l.outputs[2].cols, 3);
  c.il = 1, c.iu = 7;  // all, by index
  EXPECT_EQ(layout(c).outputs.size(), 4u);
  c = make(R::syevx, Scalar::d);  // range V: up to n columns, ifail
  l = layout(c);
  ASSERT_EQ(l.outputs.size(), 4u);
  EXPECT_EQ(l.outputs[2].cols, 6);
  EXPECT_STREQ(l.outputs[3].name, "ifail");
  EXPECT_TRUE(l.outputs[3].count_rows);
  c = make(R::geev, Scalar::d);  // wr, wi, VR
  l = layout(c);
  ASSERT_EQ(l.outputs.size(), 3u);
  EXPECT_STREQ(l.outputs[1].name, "wi");
  EXPECT_EQ(reply_bytes(c), 8u * (5 + 5 + 25));
  c.scalar = Scalar::c;  // w complex, VR
  EXPECT_EQ(reply_bytes(c), 8u * (5 + 25));
  c = make(R::gesdd, Scalar::d);  // 5 x 7, S: U 5x5, VT 5x7
  EXPECT_EQ(reply_bytes(c), 8u * (5 + 25 + 35));
  c.jobz = 'O';  // m < n: A (holds VT), U 5x5
  EXPECT_EQ(reply_bytes(c), 8u * (35 + 5 + 25));
  c = make(R::gesvdx, Scalar::s);  // 6 x 5, values 2..4: U 6x3, VT 3x5 by rows
  l = layout(c);
  ASSERT_EQ(l.outputs.size(), 4u);
  EXPECT_EQ(l.outputs[2].cols, 3);
  EXPECT_EQ(l.outputs[3].rows, 3);
  EXPECT_TRUE(l.outputs[3].count_rows);
  c = make(R::gelsd, Scalar::c);  // 9 x 4, nrhs 2: A does not come back
  EXPECT_EQ(request_bytes(c), 8u * (36 + 18));
  EXPECT_EQ(reply_bytes(c), 8u * 18 + 4 * 4 + 4);
  c = make(R::gelsy, Scalar::d);  // 4 x 6: jpvt in and out
  l = layout(c);
  EXPECT_EQ(l.inputs.size(), 3u);
  EXPECT_EQ(l.outputs[2].from_input, 2);
  c = make(R::sygvd, Scalar::z);
  EXPECT_EQ(call_name(c), "zhegvd");
  c.jobz = 'N';  // w and B's factor
  EXPECT_EQ(reply_bytes(c), 8u * 5 + 16 * 25);
  EXPECT_EQ(call_name(make(R::hetrf, Scalar::c)), "chetrf");
  EXPECT_EQ(call_name(make(R::sytrf, Scalar::c)), "csytrf");
}

// orgqr / ormqr: the reflectors and tau travel in; A (orgqr) or C (ormqr) comes back updated in place.
TEST(LapackWire, OrthogonalFactorLayouts) {
  LapackCall c = make(R::orgqr, Scalar::d);  // 9 x 6, k 4
  EXPECT_EQ(call_name(c), "dorgqr");
  auto l = layout(c);
  ASSERT_EQ(l.inputs.size(), 2u);
  EXPECT_STREQ(l.inputs[1].name, "tau");
  EXPECT_EQ(l.inputs[1].rows, 4);
  ASSERT_EQ(l.outputs.size(), 1u);
  EXPECT_STREQ(l.outputs[0].name, "A");
  EXPECT_EQ(l.outputs[0].from_input, 0);
  EXPECT_EQ(request_bytes(c), 8u * (54 + 4));
  EXPECT_EQ(reply_bytes(c), 8u * 54);
  EXPECT_DOUBLE_EQ(flops(c), 4.0 * 9 * 6 * 4 - 2.0 * 15 * 16 + 4.0 * 64 / 3);
  c.scalar = Scalar::z;
  EXPECT_EQ(call_name(c), "zungqr");
  EXPECT_EQ(request_bytes(c), 16u * (54 + 4));
  c = make(R::ormqr, Scalar::c);  // side R: A is n x k = 8 x 3, C 5 x 8
  EXPECT_EQ(call_name(c), "cunmqr");
  l = layout(c);
  ASSERT_EQ(l.inputs.size(), 3u);
  EXPECT_EQ(l.inputs[0].rows, 8);
  EXPECT_EQ(l.inputs[0].cols, 3);
  EXPECT_STREQ(l.inputs[2].name, "C");
  ASSERT_EQ(l.outputs.size(), 1u);
  EXPECT_STREQ(l.outputs[0].name, "C");
  EXPECT_EQ(l.outputs[0].from_input, 2);
  EXPECT_EQ(request_bytes(c), 8u * (24 + 3 + 40));
  EXPECT_EQ(reply_bytes(c), 8u * 40);
  c.side = 'L';  // A is m x k = 5 x 3
  EXPECT_EQ(layout(c).inputs[0].rows, 5);
  EXPECT_EQ(request_bytes(c), 8u * (15 + 3 + 40));
  c.scalar = Scalar::s, c.trans = 'N';
  EXPECT_EQ(call_name(c), "sormqr");
  EXPECT_DOUBLE_EQ(flops(c), 4.0 * 5 * 8 * 3 - 2.0 * 8 * 9);
  // New routine ids come after the old ones: the ids travel.
  EXPECT_EQ(int(R::orgqr), 27);
  EXPECT_EQ(int(R::ormqr), 28);
}

// The drivers after syev (issue 35's survey): their arrays, ids, options and dimensions.
TEST(LapackWire, SchurHessenbergAndPivotedLayouts) {
  auto names = [](const std::vector<LapackArray>& arrays) {
    std::string v;
    for (const auto& a : arrays) v += std::string(v.empty() ? "" : " ") + a.name;
    return v;
  };
  LapackCall c = make(R::gehrd, Scalar::d);  // n 9, rows and columns 2..7
  EXPECT_EQ(names(layout(c).outputs), "A tau");
  EXPECT_EQ(layout(c).outputs[1].rows, 8);
  EXPECT_EQ(call_name(make(R::orghr, Scalar::z)), "zunghr");
  EXPECT_EQ(names(layout(make(R::orghr, Scalar::d)).inputs), "A tau");
  c = make(R::geqp3, Scalar::c);  // 7 x 5: jpvt in and out, tau 5
  EXPECT_EQ(names(layout(c).inputs), "A jpvt");
  EXPECT_EQ(names(layout(c).outputs), "A jpvt tau");
  EXPECT_EQ(layout(c).outputs[1].from_input, 1);
  EXPECT_EQ(layout(make(R::gerqf, Scalar::s)).outputs[1].rows, 4);  // 4 x 9: tau 4
  EXPECT_EQ(call_name(make(R::orgrq, Scalar::c)), "cungrq");
  c = make(R::gees, Scalar::d);  // Schur vectors: wr, wi, VS
  EXPECT_EQ(names(layout(c).outputs), "A wr wi VS");
  c.scalar = Scalar::z;
  EXPECT_EQ(names(layout(c).outputs), "A w VS");
  c.jobz = 'N';
  EXPECT_EQ(names(layout(c).outputs), "A w");
  c = make(R::gges, Scalar::d);  // left vectors only
  EXPECT_EQ(names(layout(c).outputs), "A B alphar alphai beta VSL");
  c = make(R::ggev, Scalar::c);  // A and B are destroyed: not sent back
  EXPECT_EQ(names(layout(c).outputs), "alpha beta VR");
  EXPECT_EQ(layout(c).outputs[1].elem, Elem::data);  // a complex beta
  c = make(R::trsyl, Scalar::d);  // A 5x5, B 3x3, C 5x3
  EXPECT_EQ(names(layout(c).inputs), "A B C");
  EXPECT_EQ(names(layout(c).outputs), "C scale");
  EXPECT_EQ(request_bytes(c), 8u * (25 + 9 + 15));
  EXPECT_EQ(reply_bytes(c), 8u * (15 + 1));
  c = make(R::geevx, Scalar::s);  // both sides' vectors, sense B
  EXPECT_EQ(names(layout(c).outputs), "A wr wi VL VR ilo ihi scale abnrm rconde rcondv");
  c.sense = 'N', c.jobvl = 'N', c.jobvr = 'N';  // A destroyed, no condition numbers
  EXPECT_EQ(names(layout(c).outputs), "wr wi ilo ihi scale abnrm");
  EXPECT_EQ(int(R::gehrd), 30);
  EXPECT_EQ(int(R::geevx), 39);
  // Options and dimensions as LAPACK checks them.
  c = make(R::gehrd, Scalar::d);
  c.ilo = 0;
  EXPECT_NE(protocol_error_of([&] { validate(c); }).find("ilo"), std::string::npos);
  c.ilo = 2, c.ihi = 10;
  EXPECT_NE(protocol_error_of([&] { validate(c); }).find("ihi"), std::string::npos);
  c = make(R::geqrf, Scalar::d);
  c.ilo = 1;  // not used by geqrf
  EXPECT_NE(protocol_error_of([&] { validate(c); }).find("must be 0"), std::string::npos);
  c = make(R::orgrq, Scalar::d);
  c.k = 5;  // k <= m = 4
  EXPECT_NE(protocol_error_of([&] { validate(c); }).find("orgrq needs"), std::string::npos);
  c = make(R::trsyl, Scalar::z);
  c.isgn = 2;
  EXPECT_NE(protocol_error_of([&] { validate(c); }).find("isgn"), std::string::npos);
  c.isgn = 1, c.tranb = 'T';  // the complex trsyl takes N or C
  EXPECT_NE(protocol_error_of([&] { validate(c); }).find("tranb"), std::string::npos);
  c = make(R::geevx, Scalar::d);
  c.jobvl = 'N';  // sense B needs both sides' vectors
  EXPECT_NE(protocol_error_of([&] { validate(c); }).find("sense"), std::string::npos);
  c.sense = 'V';
  validate(c);
  c.balanc = 'X';
  EXPECT_NE(protocol_error_of([&] { validate(c); }).find("balanc"), std::string::npos);
  c = make(R::gees, Scalar::d);
  c.sense = 'E';  // only geevx takes sense
  EXPECT_NE(protocol_error_of([&] { validate(c); }).find("sense"), std::string::npos);
}

// syev / heev: laid out as syevd (A back only for jobz V, w real), with syevd's options and flops.
TEST(LapackWire, SyevLayoutsAndValidation) {
  LapackCall c = make(R::syev, Scalar::d);  // n 8, V, L
  EXPECT_EQ(call_name(c), "dsyev");
  auto l = layout(c);
  ASSERT_EQ(l.inputs.size(), 1u);
  EXPECT_STREQ(l.inputs[0].name, "A");
  ASSERT_EQ(l.outputs.size(), 2u);
  EXPECT_STREQ(l.outputs[0].name, "A");
  EXPECT_EQ(l.outputs[0].from_input, 0);
  EXPECT_STREQ(l.outputs[1].name, "w");
  EXPECT_EQ(l.outputs[1].elem, Elem::real);
  EXPECT_EQ(l.outputs[1].rows, 8);
  EXPECT_EQ(request_bytes(c), 8u * 64);
  EXPECT_EQ(reply_bytes(c), 8u * (64 + 8));
  LapackCall d = make(R::syevd, Scalar::d);
  d.n = 8, d.uplo = 'L';
  EXPECT_DOUBLE_EQ(flops(c), flops(d));
  c.jobz = 'N';  // eigenvalues only: A does not come back
  EXPECT_EQ(reply_bytes(c), 8u * 8);
  d.jobz = 'N';
  EXPECT_DOUBLE_EQ(flops(c), flops(d));
  c.scalar = Scalar::z;
  EXPECT_EQ(call_name(c), "zheev");
  EXPECT_EQ(request_bytes(c), 16u * 64);
  EXPECT_EQ(reply_bytes(c), 8u * 8);  // w is real
  c.scalar = Scalar::c, c.jobz = 'V';
  EXPECT_EQ(call_name(c), "cheev");
  EXPECT_EQ(reply_bytes(c), 8u * 64 + 4 * 8);
  c.scalar = Scalar::s;
  EXPECT_EQ(call_name(c), "ssyev");
  validate(c);
  // jobz N or V, uplo U or L; no other option or dimension.
  c.jobz = 'A';
  EXPECT_NE(protocol_error_of([&] { validate(c); }).find("jobz"), std::string::npos);
  c.jobz = 'V', c.uplo = 'N';
  EXPECT_NE(protocol_error_of([&] { validate(c); }).find("uplo"), std::string::npos);
  c.uplo = 'U', c.m = 8;
  EXPECT_NE(protocol_error_of([&] { validate(c); }).find("must be 0"), std::string::npos);
  c.m = 0, c.k = 1;
  EXPECT_NE(protocol_error_of([&] { validate(c); }).find("must be 0"), std::string::npos);
  c.k = 0, c.range = 'A';
  EXPECT_NE(protocol_error_of([&] { validate(c); }).find("range"), std::string::npos);
  c.range = 'N', c.n = -1;
  EXPECT_NE(protocol_error_of([&] { validate(c); }).find("out of range"), std::string::npos);
  c.n = 0;  // an empty problem is a valid call
  validate(c);
  EXPECT_EQ(int(R::syev), 29);
  // The first id past the last routine is refused: a server without syev turns the call away.
  Bytes b = encode(request(make(R::syev, Scalar::d)));
  b[kCallOffset] = std::byte{uint8_t(R::count_)};
  EXPECT_NE(protocol_error_of([&] { decode(b); }).find("unknown LAPACK routine id"), std::string::npos);
}

TEST(LapackWire, PivotsAreChecked) {
  LapackCall c = make(R::getrs, Scalar::d);  // n 6
  std::vector<std::byte> a(8 * 36), ipiv(4 * 6), b(8 * 12);
  const std::byte* in[3] = {a.data(), ipiv.data(), b.data()};
  int32_t good[6] = {1, 6, 3, 4, 6, 6};
  std::memcpy(ipiv.data(), good, sizeof good);
  check_inputs(c, in);
  for (int32_t bad : {0, -1, 7, 1 << 30}) {
    int32_t p[6] = {1, 2, 3, bad, 5, 6};
    std::memcpy(ipiv.data(), p, sizeof p);
    EXPECT_NE(protocol_error_of([&] { check_inputs(c, in); }).find("ipiv(4)"), std::string::npos);
  }
  c = make(R::getri, Scalar::d);  // n 5: the same rule
  int32_t beyond[5] = {1, 2, 6, 4, 5};
  std::memcpy(ipiv.data(), beyond, sizeof beyond);
  EXPECT_NE(protocol_error_of([&] { check_inputs(c, in); }).find("ipiv(3)"), std::string::npos);
  c = make(R::sytrs, Scalar::z);  // n 4: a 2x2 block's rows come negative, zero is no pivot
  const std::byte* in3[3] = {a.data(), ipiv.data(), b.data()};
  int32_t blocks[4] = {1, -3, -3, 4};
  std::memcpy(ipiv.data(), blocks, sizeof blocks);
  check_inputs(c, in3);
  for (int32_t bad : {0, -5, 5}) {
    int32_t p[4] = {1, bad, 3, 4};
    std::memcpy(ipiv.data(), p, sizeof p);
    EXPECT_NE(protocol_error_of([&] { check_inputs(c, in3); }).find("ipiv(2)"), std::string::npos);
  }
  c = make(R::gelsy, Scalar::d);  // n 6: jpvt in 0..n (0: a free column)
  std::vector<std::byte> jpvt(4 * 6);
  const std::byte* in_gelsy[3] = {a.data(), b.data(), jpvt.data()};
  check_inputs(c, in_gelsy);
  int32_t far[6] = {0, 0, 7, 0, 0, 0};
  std::memcpy(jpvt.data(), far, sizeof far);
  EXPECT_NE(protocol_error_of([&] { check_inputs(c, in_gelsy); }).find("jpvt(3)"), std::string::npos);
}

TEST(LapackWire, MutatedMessagesNeverCrash) {
  std::mt19937 rng(12345);
  std::vector<Bytes> seeds;
  for (const auto& c : all_calls()) seeds.push_back(encode(request(c)));
  seeds.push_back(encode(LapackReply{1, true, "", 0, 64}));
  int accepted = 0;
  for (int i = 0; i < 20000; ++i) {
    Bytes b = seeds[rng() % seeds.size()];
    const int flips = 1 + rng() % 4;
    for (int f = 0; f < flips; ++f) b[rng() % b.size()] = std::byte(rng() & 0xff);
    try {
      auto m = decode(b);
      ++accepted;
      if (auto* q = std::get_if<LapackRequest>(&m)) {  // whatever decodes is consistent
        validate(q->call);
        EXPECT_EQ(q->payload_bytes, request_bytes(q->call));
      }
    } catch (const ProtocolError&) {
    }
  }
  EXPECT_GT(accepted, 0);
}

}  // namespace
}  // namespace outboard::wire
