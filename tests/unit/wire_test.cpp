// Unit tests of the wire schema: message round trips, rejection of malformed messages, and the
// Level-3 call arithmetic (layout, payload sizes, flop counts).
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/secret.hpp"
#include "wire/level3.hpp"
#include "wire/messages.hpp"

namespace outboard::wire {
namespace {

using Bytes = std::vector<std::byte>;

// Fixed-layout offsets of the encoding, used to corrupt single fields.
constexpr size_t kHeaderBytes = 8;                        // magic u32, version u16, type u16
constexpr size_t kCallBytes = 1 + 1 + 5 + 3 * 8 + 4 * 8 + 1;  // routine .. output_sent

template <class T>
T decode_as(const Bytes& b) {
  Message m = decode(b);
  EXPECT_TRUE(std::holds_alternative<T>(m)) << "decoded to alternative " << m.index();
  return std::get<T>(m);
}

template <size_t N>
std::array<uint8_t, N> pattern(uint8_t seed) {
  std::array<uint8_t, N> a{};
  for (size_t i = 0; i < N; ++i) a[i] = static_cast<uint8_t>(seed + 7 * i);
  return a;
}

void put_u16(Bytes& b, size_t at, uint16_t v) { std::memcpy(b.data() + at, &v, 2); }
void put_u32(Bytes& b, size_t at, uint32_t v) { std::memcpy(b.data() + at, &v, 4); }

// Runs f and requires it to throw ProtocolError (and nothing else); returns the message.
template <class F>
std::string protocol_error_of(F&& f) {
  try {
    f();
  } catch (const ProtocolError& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected ProtocolError, got another exception: " << e.what();
    return {};
  }
  ADD_FAILURE() << "expected ProtocolError, nothing was thrown";
  return {};
}

void expect_calls_equal(const Level3Call& a, const Level3Call& b) {
  EXPECT_EQ(a.routine, b.routine);
  EXPECT_EQ(a.scalar, b.scalar);
  EXPECT_EQ(a.side, b.side);
  EXPECT_EQ(a.uplo, b.uplo);
  EXPECT_EQ(a.transa, b.transa);
  EXPECT_EQ(a.transb, b.transb);
  EXPECT_EQ(a.diag, b.diag);
  EXPECT_EQ(a.m, b.m);
  EXPECT_EQ(a.n, b.n);
  EXPECT_EQ(a.k, b.k);
  EXPECT_EQ(a.alpha, b.alpha);
  EXPECT_EQ(a.beta, b.beta);
  EXPECT_EQ(a.output_sent, b.output_sent);
}

bool hermitian(Routine r) { return r == Routine::hemm || r == Routine::herk || r == Routine::her2k; }

// A valid call of the routine and scalar type, with options and dimensions that differ from one
// another so that a swapped field in the codec shows up.
Level3Call make_call(Routine r, Scalar s) {
  Level3Call c;
  c.routine = r;
  c.scalar = s;
  c.alpha = {1.5, is_complex(s) ? -0.25 : 0};
  c.beta = {0.5, is_complex(s) && !hermitian(r) ? 0.75 : 0};
  switch (r) {
    case Routine::gemm:
      c.transa = 'T';
      c.transb = is_complex(s) ? 'C' : 'N';
      c.m = 3, c.n = 4, c.k = 5;
      break;
    case Routine::symm:
    case Routine::hemm:
      c.side = 'R';
      c.uplo = 'L';
      c.m = 6, c.n = 2;
      break;
    case Routine::syrk:
    case Routine::syr2k:
      c.uplo = 'U';
      c.transa = 'T';
      c.n = 7, c.k = 3;
      break;
    case Routine::herk:
    case Routine::her2k:
      c.uplo = 'L';
      c.transa = 'C';
      c.n = 7, c.k = 3;
      break;
    case Routine::trmm:
    case Routine::trsm:
      c.side = 'L';
      c.uplo = 'U';
      c.transa = 'C';
      c.diag = 'U';
      c.m = 4, c.n = 9;
      c.beta = {0, 0};
      break;
    default:
      break;
  }
  return c;
}

std::vector<Level3Call> all_valid_combinations() {
  std::vector<Level3Call> out;
  for (int r = 0; r < int(Routine::count_); ++r)
    for (int s = 0; s < int(Scalar::count_); ++s) {
      auto routine = static_cast<Routine>(r);
      auto scalar = static_cast<Scalar>(s);
      if (hermitian(routine) && !is_complex(scalar)) continue;
      out.push_back(make_call(routine, scalar));
    }
  return out;
}

Blas3Call blas3(const Level3Call& c, uint64_t id = 42) { return Blas3Call{id, c, request_bytes(c), {}}; }

// A few valid messages of different kinds, for the truncation/trailing-byte/fuzz tests.
std::vector<Bytes> sample_messages() {
  std::vector<Bytes> v;
  v.push_back(encode(Hello{pattern<32>(1), "node7:1234:a.out"}));
  v.push_back(encode(Challenge{pattern<32>(2), pattern<32>(3), "server-1"}));
  v.push_back(encode(Auth{pattern<32>(4)}));
  v.push_back(encode(AuthResult{true, "welcome"}));
  v.push_back(encode(blas3(make_call(Routine::gemm, Scalar::z), 7)));
  v.push_back(encode(blas3(make_call(Routine::trsm, Scalar::s), 8)));
  v.push_back(encode(CallReply{9, false, "out of memory", 0}));
  v.push_back(encode(StatusRequest{10}));
  v.push_back(encode(StatusReply{11, R"({"calls": 3})"}));
  v.push_back(encode(ErrorMessage{"bye"}));
  v.push_back(encode(Ping{12, 1 << 20}));
  v.push_back(encode(Pong{13}));
  Level3Call big = make_call(Routine::gemm, Scalar::d);
  big.m = big.n = big.k = 512;
  v.push_back(encode(CallChunk{14, big, request_bytes(big), kMinChunkBytes, 3}));
  v.push_back(encode(ReplyChunk{15, 4096, 1 << 20}));
  ClNDRange launch;
  launch.cmd = {kFirstClientId, {kFirstClientId + 1}, kFirstClientId + 2};
  launch.kernel = kFirstClientId + 3;
  launch.dims = 1;
  launch.global = {256, 1, 1};
  launch.args = {{0, uint8_t(ClArgKind::value), 0, 0, ClBlob(8, std::byte{3})}};
  v.push_back(encode(ClRequest{13, launch, 0}));
  v.push_back(encode(ClReply{13, -30, ClBlob(4, std::byte{1}), 0}));
  v.push_back(encode(ClNotice{uint8_t(ClNoticeKind::failed), kFirstClientId, -38, {}, "no buffer"}));
  v.push_back(encode(Hold{37}));
  JoinSession join;
  join.server_nonce.fill(7);
  join.lane = 3;
  join.proof.fill(9);
  v.push_back(encode(join));
  v.push_back(encode(SessionJoined{false, "lane refused: no such session here"}));
  v.push_back(encode(Enveloped{kMaxHeaderBytes + 1, 64}));
  v.push_back(encode(ClRequest{16, ClFlush{1}, 0, 7, 3 << 20, true}));
  v.push_back(encode(ClReply{16, 0, {}, 0, 3 << 20}));
  v.push_back(encode(ClChunk{7, 3 << 20, 1 << 20, 2}));
  return v;
}

// ---------------------------------------------------------------------------------------------
// Round trips

TEST(WireRoundTrip, Hello) {
  Hello h{pattern<32>(11), "host:99:prog"};
  auto b = encode(h);
  auto d = decode_as<Hello>(b);
  EXPECT_EQ(d.client_nonce, h.client_nonce);
  EXPECT_EQ(d.client_name, h.client_name);
}

TEST(WireRoundTrip, HelloEmptyAndMaximalName) {
  for (size_t len : {size_t(0), size_t(1), kMaxText}) {
    Hello h{pattern<32>(5), std::string(len, 'x')};
    auto d = decode_as<Hello>(encode(h));
    EXPECT_EQ(d.client_name, h.client_name) << len;
  }
}

TEST(WireRoundTrip, Enveloped) {
  auto d = decode_as<Enveloped>(encode(Enveloped{9223, 4096}));
  EXPECT_EQ(d.header_bytes, 9223u);
  EXPECT_EQ(d.payload_bytes, 4096u);
  // What fits a header goes as one; more than the limit does not; the payload's size must not wrap.
  for (Enveloped bad : {Enveloped{kMaxHeaderBytes, 0}, Enveloped{0, 0}, Enveloped{kMaxEnvelopedHeader + 1, 0},
                        Enveloped{kMaxHeaderBytes + 1, std::numeric_limits<uint64_t>::max()}})
    EXPECT_THROW(decode(encode(bad)), ProtocolError) << bad.header_bytes << " " << bad.payload_bytes;
}

TEST(WireRoundTrip, Challenge) {
  Challenge c{pattern<32>(21), pattern<32>(22), "srv"};
  auto d = decode_as<Challenge>(encode(c));
  EXPECT_EQ(d.server_nonce, c.server_nonce);
  EXPECT_EQ(d.server_proof, c.server_proof);
  EXPECT_EQ(d.server_name, c.server_name);
}

TEST(WireRoundTrip, Auth) {
  Auth a{pattern<32>(31)};
  auto d = decode_as<Auth>(encode(a));
  EXPECT_EQ(d.client_proof, a.client_proof);
}

TEST(WireRoundTrip, AuthResult) {
  for (bool accepted : {false, true}) {
    AuthResult a{accepted, accepted ? "ok" : "bad proof"};
    auto d = decode_as<AuthResult>(encode(a));
    EXPECT_EQ(d.accepted, a.accepted);
    EXPECT_EQ(d.message, a.message);
  }
  AuthResult w{true, "welcome"};
  w.siblings = {7701, 7702, 65535};
  w.lanes = 5;
  w.lane_ports = {40001, 40002, 65535};
  const AuthResult d = decode_as<AuthResult>(encode(w));
  EXPECT_EQ(d.siblings, w.siblings);
  EXPECT_EQ(d.lanes, 5u);
  EXPECT_EQ(d.lane_ports, w.lane_ports);
}

TEST(WireReject, AuthResultWithTooManyOrZeroSiblings) {
  AuthResult many{true, "welcome"};
  many.siblings.assign(kMaxSiblings + 1, 7701);
  EXPECT_THROW(decode(encode(many)), ProtocolError);
  AuthResult zero{true, "welcome"};
  zero.siblings = {7701, 0};
  EXPECT_THROW(decode(encode(zero)), ProtocolError);
}

TEST(WireReject, AuthResultWithTooManyOrZeroLanePorts) {
  AuthResult many{true, "welcome"};
  many.lane_ports.assign(kMaxLanes + 1, 40001);
  EXPECT_THROW(decode(encode(many)), ProtocolError);
  AuthResult zero{true, "welcome"};
  zero.lane_ports = {40001, 0};
  EXPECT_THROW(decode(encode(zero)), ProtocolError);
}

TEST(WireRoundTrip, Blas3CallEveryRoutineAndPrecision) {
  auto calls = all_valid_combinations();
  // 9 routines x 4 precisions, minus hemm/herk/her2k in s and d.
  EXPECT_EQ(calls.size(), 9u * 4u - 3u * 2u);
  uint64_t id = 1000;
  for (const auto& c : calls) {
    for (bool sent : {true, false}) {
      Level3Call call = c;
      bool in_place = call.routine == Routine::trmm || call.routine == Routine::trsm;
      if (!sent && in_place) continue;  // trmm/trsm must send B (rejection tested below)
      call.output_sent = sent;
      if (!sent) call.beta = {0, 0};
      SCOPED_TRACE(call_name(call) + (sent ? " output sent" : " output not sent"));
      ASSERT_NO_THROW(validate(call));
      Blas3Call b = blas3(call, ++id);
      auto bytes = encode(b);
      EXPECT_EQ(bytes.size(), kHeaderBytes + 8 + kCallBytes + 8 + 1);  // + the count of resident inputs
      auto d = decode_as<Blas3Call>(bytes);
      EXPECT_EQ(d.call_id, b.call_id);
      EXPECT_EQ(d.payload_bytes, b.payload_bytes);
      expect_calls_equal(d.call, b.call);
      EXPECT_EQ(encode(d), bytes);
    }
  }
}

TEST(WireRoundTrip, Blas3CallSpecialScalars) {
  // alpha/beta travel bit for bit, including signed zero and infinities.
  Level3Call c = make_call(Routine::gemm, Scalar::z);
  c.alpha = {-0.0, std::numeric_limits<double>::infinity()};
  c.beta = {std::numeric_limits<double>::denorm_min(), -1e308};
  auto d = decode_as<Blas3Call>(encode(blas3(c)));
  EXPECT_TRUE(std::signbit(d.call.alpha[0]));
  expect_calls_equal(d.call, c);
}

TEST(WireRoundTrip, Blas3CallZeroDimensions) {
  Level3Call c = make_call(Routine::gemm, Scalar::d);
  c.m = c.n = c.k = 0;
  auto d = decode_as<Blas3Call>(encode(blas3(c)));
  EXPECT_EQ(d.payload_bytes, 0u);
  expect_calls_equal(d.call, c);
}

TEST(WireRoundTrip, OpenClOperationsAndTheirBounds) {
  EXPECT_EQ(uint16_t(Type::cl_request), 31);
  ClNDRange k;
  k.cmd = {kFirstClientId, {kFirstClientId + 1, kFirstClientId + 2}, kFirstClientId + 3};
  k.kernel = kFirstClientId + 4;
  k.dims = 2;
  k.global = {64, 32, 1};
  k.local = {8, 8, 1};
  k.local_given = true;
  k.args = {{0, uint8_t(ClArgKind::value), 0, 0, ClBlob(12, std::byte{9})}, {1, uint8_t(ClArgKind::local), 0, 512, {}}};
  auto r = decode_as<ClRequest>(encode(ClRequest{7, k, 0}));
  EXPECT_EQ(r.call_id, 7u);
  const auto& d = std::get<ClNDRange>(r.op);
  EXPECT_EQ(d.cmd.wait, k.cmd.wait);
  EXPECT_EQ(d.global, k.global);
  ASSERT_EQ(d.args.size(), 2u);
  EXPECT_EQ(d.args[0].value, k.args[0].value);
  EXPECT_EQ(d.args[1].local_bytes, 512u);
  EXPECT_STREQ(op_name(r.op), "ndrange");

  auto b = decode_as<ClRequest>(encode(ClRequest{1, ClBuildProgram{2, 5, 6, {1}, "-O", {7, 8}, {"a.h", "b.h"}}, 0}));
  EXPECT_EQ(std::get<ClBuildProgram>(b.op).header_names[1], "b.h");

  // A list longer than the bound, an unknown operation, a flag that is not 0/1, and truncation.
  ClCreateContext big{kFirstClientId, ClIds(kMaxClList + 1, 1), {}};
  EXPECT_THROW(decode(encode(ClRequest{0, big, 0})), ProtocolError);
  auto unknown = encode(ClRequest{0, ClFlush{1}, 0});
  unknown[8 + 8 + 8 + 8 + 8 + 1] = std::byte{0xff};  // header, call id, payload, transfer, lane bytes, flag; op code
  EXPECT_THROW(decode(unknown), ProtocolError);
  auto flag = encode(ClRequest{0, ClMarker{{1, {}, 0}, true}, 0});
  flag.back() = std::byte{2};
  EXPECT_THROW(decode(flag), ProtocolError);
  auto cut = encode(ClRequest{0, k, 0});
  cut.resize(cut.size() - 3);
  EXPECT_THROW(decode(cut), ProtocolError);

  // The operations added after the first version: codes appended, fields and bounds checked.
  EXPECT_EQ(ClOp(ClFlush{}).index(), 26u);
  EXPECT_EQ(ClOp(ClCreateSubDevices{}).index(), 27u);
  EXPECT_EQ(ClOp(ClGetTimers{}).index(), 31u);
  auto sd = decode_as<ClRequest>(encode(ClRequest{3, ClCreateSubDevices{kFirstClientId + 9, 4, 5, {0x1087, 1, 1, 0}}, 0}));
  EXPECT_EQ(std::get<ClCreateSubDevices>(sd.op).max_count, 4u);
  EXPECT_EQ(std::get<ClCreateSubDevices>(sd.op).properties, (ClWords{0x1087, 1, 1, 0}));
  EXPECT_STREQ(op_name(sd.op), "create_sub_devices");
  auto pipe = decode_as<ClRequest>(encode(ClRequest{0, ClCreatePipe{kFirstClientId, kFirstClientId + 1, 0, 16, 1024}, 0}));
  EXPECT_EQ(std::get<ClCreatePipe>(pipe.op).max_packets, 1024u);
  auto il = decode_as<ClRequest>(encode(ClRequest{0, ClCreateProgramIL{kFirstClientId + 2, kFirstClientId}, 20}));
  EXPECT_EQ(il.payload_bytes, 20u);
  EXPECT_STREQ(op_name(il.op), "create_program_il");
  auto sg = decode_as<ClRequest>(encode(ClRequest{4, ClGetSubGroupInfo{kFirstClientId, 5, 0x2033, {64, 2}}, 0}));
  EXPECT_EQ(std::get<ClGetSubGroupInfo>(sg.op).input, (ClWords{64, 2}));
  auto timers = encode(ClRequest{5, ClGetTimers{5, true}, 0});
  EXPECT_TRUE(std::get<ClGetTimers>(decode_as<ClRequest>(timers).op).host_only);
  timers.back() = std::byte{7};  // host_only is a flag
  EXPECT_THROW(decode(timers), ProtocolError);
  // The direct transfers (codes 32, 33): every field round-trips; a key longer than a blob is refused.
  EXPECT_EQ(ClOp(ClDirectRead{}).index(), 32u);
  EXPECT_EQ(ClOp(ClDirectWrite{}).index(), 33u);
  const ClBlob key(37, std::byte{9});
  auto dr = decode_as<ClRequest>(
      encode(ClRequest{6, ClDirectRead{{kFirstClientId, {kFirstClientId + 1}, kFirstClientId + 2}, kFirstClientId + 3,
                                       12345, (5 << 20) + 1, key, 0x7f00deadb000},
                       0}));
  const auto& direct = std::get<ClDirectRead>(dr.op);
  EXPECT_EQ(direct.cmd.wait, (ClIds{kFirstClientId + 1}));
  EXPECT_EQ(direct.cmd.event, kFirstClientId + 2);
  EXPECT_EQ(direct.offset, 12345u);
  EXPECT_EQ(direct.size, (5u << 20) + 1);
  EXPECT_EQ(direct.key, key);
  EXPECT_EQ(direct.address, 0x7f00deadb000u);
  EXPECT_STREQ(op_name(dr.op), "direct_read");
  auto dw = decode_as<ClRequest>(encode(ClRequest{7, ClDirectWrite{{1, {}, 0}, 2, 0, 1 << 20, key, 0x1000}, 0}));
  EXPECT_EQ(std::get<ClDirectWrite>(dw.op).size, 1u << 20);
  EXPECT_STREQ(op_name(dw.op), "direct_write");
  EXPECT_THROW(decode(encode(ClRequest{0, ClDirectWrite{{1, {}, 0}, 2, 0, 16, ClBlob(kMaxClBlob + 1), 1}, 0})),
               ProtocolError);
  // Specialization constants (code 34, protocol 11): the value's bytes and whether one was given.
  EXPECT_EQ(ClOp(ClSetSpecConstant{}).index(), 34u);
  auto sc = decode_as<ClRequest>(encode(ClRequest{8, ClSetSpecConstant{kFirstClientId + 4, 7, 4, true, ClBlob(4, std::byte{1})}, 0}));
  const auto& spec = std::get<ClSetSpecConstant>(sc.op);
  EXPECT_EQ(spec.spec_id, 7u);
  EXPECT_EQ(spec.size, 4u);
  EXPECT_TRUE(spec.given);
  EXPECT_EQ(spec.value, ClBlob(4, std::byte{1}));
  EXPECT_STREQ(op_name(sc.op), "set_spec_constant");
  EXPECT_THROW(decode(encode(ClRequest{8, ClSetSpecConstant{1, 0, 0, true, ClBlob(kMaxClBlob + 1)}, 0})), ProtocolError);
  ClCreateSubDevices long_list{kFirstClientId, 1, 5, ClWords(kMaxClList + 1, 1)};
  EXPECT_THROW(decode(encode(ClRequest{0, long_list, 0})), ProtocolError);
  for (const ClOp& op : {ClOp(ClCreateSubDevices{kFirstClientId, 2, 5, {0x1086, 1}}), ClOp(ClCreatePipe{1, 2, 0, 4, 4}),
                         ClOp(ClGetSubGroupInfo{1, 2, 3, {1, 2, 3}}), ClOp(ClDirectRead{{1, {2}, 3}, 4, 5, 6, key, 7}),
                         ClOp(ClDirectWrite{{1, {}, 0}, 4, 5, 6, key, 7}),
                         ClOp(ClSetSpecConstant{1, 2, 3, true, ClBlob(3)})}) {
    auto whole = encode(ClRequest{0, op, 0});
    for (size_t cut = 1; cut < whole.size() - 8; cut += 3) {
      auto part = whole;
      part.resize(whole.size() - cut);
      EXPECT_THROW(decode(part), ProtocolError) << op_name(op) << " cut by " << cut;
    }
  }
  // An image region travels as written, pixels or bytes.
  ClCopy cp;
  cp.cmd.queue = kFirstClientId;
  cp.src = kFirstClientId + 1;
  cp.dst = kFirstClientId + 2;
  cp.from = {{1, 2, 3}, {4, 5, 6}, 0, 0};
  cp.to = {{7, 8, 9}, {4, 5, 6}, 0, 0};
  auto copied = std::get<ClCopy>(decode_as<ClRequest>(encode(ClRequest{0, cp, 0})).op);
  EXPECT_EQ(copied.from.origin, cp.from.origin);
  EXPECT_EQ(copied.to.origin, cp.to.origin);
  ClDeviceList list;
  list.devices.push_back({kFirstClientId + 9, {{0x1042, ClBlob(8)}, {0x1044, ClBlob(4, std::byte{2})}}});
  auto devs = decode_cl_device_list(encode_cl(list));
  ASSERT_EQ(devs.devices.size(), 1u);
  EXPECT_EQ(devs.devices[0].info[1].value, ClBlob(4, std::byte{2}));
  auto bad_list = encode_cl(list);
  bad_list.push_back(std::byte{0});
  EXPECT_THROW(decode_cl_device_list(bad_list), ProtocolError);

  wire::ClSnapshot snap;
  snap.platforms.push_back({1, {{0x902, ClBlob(5, std::byte{'x'})}}, {{2, {{0x1000, ClBlob(8)}}}}});
  auto back = decode_cl_snapshot(encode_cl(snap));
  ASSERT_EQ(back.platforms.size(), 1u);
  EXPECT_EQ(back.platforms[0].devices[0].id, 2u);
}

TEST(WireRoundTrip, DirectBlas3AndItsRejects) {
  EXPECT_EQ(uint16_t(Type::direct_blas3), 30);
  EXPECT_EQ(type_of(Message{DirectBlas3{}}), Type::direct_blas3);
  Level3Call c = make_call(Routine::gemm, Scalar::d);
  c.output_sent = true;
  const uint64_t in = request_bytes(c), out = reply_bytes(c);
  const std::vector<std::byte> key0(40, std::byte{1}), key1(7, std::byte{2});
  DirectBlas3 d{9, c, {key0, key1}, {{0x1000, 64, 0}, {0x9000, in - 64, 1}}, {{0x9000 + in - out, out, 1}}, true};
  auto e = decode_as<DirectBlas3>(encode(d));
  EXPECT_EQ(e.call_id, 9u);
  expect_calls_equal(e.call, c);
  EXPECT_EQ(e.keys, d.keys);
  EXPECT_EQ(e.input, d.input);
  EXPECT_EQ(e.output, d.output);
  EXPECT_TRUE(e.gated);
  auto error_of = [](const Message& m) { return protocol_error_of([&] { decode(encode(m)); }); };
  DirectBlas3 bad = d;
  bad.output[0].bytes -= 8;  // does not cover the result
  EXPECT_NE(error_of(bad).find("extents cover"), std::string::npos);
  bad = d;
  bad.input[0].key = 5;  // no such key
  EXPECT_NE(error_of(bad).find("invalid input extent"), std::string::npos);
  bad = d;
  bad.call.m = bad.call.n = bad.call.k = 0;  // nothing to copy
  EXPECT_NE(error_of(bad).find("needs input and output"), std::string::npos);
  bad = d;
  bad.call.m = -1;
  protocol_error_of([&] { decode(encode(bad)); });
}

TEST(WireRoundTrip, CallReply) {
  for (bool ok : {false, true}) {
    CallReply r{UINT64_MAX, ok, ok ? "" : "backend failed", ok ? 123456789ull : 0, 11, 22, 33, ok ? 987654321ull : 0, 44};
    auto d = decode_as<CallReply>(encode(r));
    EXPECT_EQ(d.call_id, r.call_id);
    EXPECT_EQ(d.ok, r.ok);
    EXPECT_EQ(d.message, r.message);
    EXPECT_EQ(d.payload_bytes, r.payload_bytes);
    EXPECT_EQ(d.receive_ns, r.receive_ns);
    EXPECT_EQ(d.queue_ns, r.queue_ns);
    EXPECT_EQ(d.to_device_ns, r.to_device_ns);
    EXPECT_EQ(d.compute_ns, r.compute_ns);
    EXPECT_EQ(d.from_device_ns, r.from_device_ns);
  }
}

TEST(WireRoundTrip, Hold) {
  EXPECT_EQ(decode_as<Hold>(encode(Hold{1234})).handshakes_waiting, 1234u);
}

TEST(WireRoundTrip, StatusRequest) {
  auto d = decode_as<StatusRequest>(encode(StatusRequest{77}));
  EXPECT_EQ(d.call_id, 77u);
}

TEST(WireRoundTrip, StatusReply) {
  StatusReply s{78, std::string(kMaxText * 4, '{')};  // JSON may exceed kMaxText
  auto d = decode_as<StatusReply>(encode(s));
  EXPECT_EQ(d.call_id, s.call_id);
  EXPECT_EQ(d.json, s.json);
  StatusReply longest{79, std::string(kMaxStatusJson, ' ')};
  EXPECT_EQ(decode_as<StatusReply>(encode(longest)).json.size(), kMaxStatusJson);
}

TEST(WireRoundTrip, ErrorMessage) {
  std::string text("with\0nul and \xff bytes", 21);
  auto d = decode_as<ErrorMessage>(encode(ErrorMessage{text}));
  EXPECT_EQ(d.message, text);
}

TEST(WireRoundTrip, Ping) {
  auto d = decode_as<Ping>(encode(Ping{80, 1ull << 40, Ping::echo | Ping::via_gpu}));
  EXPECT_EQ(d.call_id, 80u);
  EXPECT_EQ(d.payload_bytes, 1ull << 40);
  EXPECT_EQ(d.flags, Ping::echo | Ping::via_gpu);
  EXPECT_EQ(decode_as<Ping>(encode(Ping{1, 0, Ping::no_reply})).flags, Ping::no_reply);
  EXPECT_EQ(decode_as<Ping>(encode(Ping{1, 4096, Ping::fill})).flags, Ping::fill);
  for (uint8_t flags : {16, Ping::no_reply | Ping::echo, Ping::no_reply | Ping::via_gpu, Ping::fill | Ping::echo,
                        Ping::fill | Ping::no_reply}) {
    auto bad = encode(Ping{1, 0, 0});
    bad.back() = std::byte{flags};
    EXPECT_NE(protocol_error_of([&] { decode(bad); }).find("flags"), std::string::npos) << int(flags);
  }
}

TEST(WireRoundTrip, PingIntoFixedStorageIsTheSameEncoding) {
  for (Ping p : {Ping{0, 0, 0}, Ping{~0ull, 1ull << 40, Ping::no_reply}, Ping{77, 4096, Ping::echo | Ping::via_gpu}}) {
    std::array<std::byte, kPingBytes> fixed;
    encode_ping(p, fixed);
    EXPECT_EQ(Bytes(fixed.begin(), fixed.end()), encode(p));
    auto d = decode_as<Ping>(Bytes(fixed.begin(), fixed.end()));
    EXPECT_EQ(d.call_id, p.call_id);
    EXPECT_EQ(d.payload_bytes, p.payload_bytes);
    EXPECT_EQ(d.flags, p.flags);
  }
}

TEST(WireRoundTrip, PingFastDecodeAcceptsExactlyWhatDecodeAcceptsAsAPing) {
  std::vector<Bytes> inputs;
  for (uint8_t flags = 0; flags < 16; ++flags) inputs.push_back(encode(Ping{5, 4096, 0})), inputs.back().back() = std::byte{flags};
  Bytes ok = encode(Ping{6, 1 << 20, Ping::no_reply});
  inputs.push_back(ok);
  Bytes shorter(ok.begin(), ok.end() - 1), longer = ok;
  longer.push_back(std::byte{0});
  inputs.push_back(shorter);
  inputs.push_back(longer);
  for (size_t at : {0, 4, 6}) {  // magic, version, type
    Bytes b = ok;
    b[at] = std::byte(uint8_t(b[at]) ^ 1);
    inputs.push_back(b);
  }
  inputs.push_back(encode(Pong{7}));
  inputs.push_back(encode(StatusRequest{8}));
  inputs.push_back({});
  for (const Bytes& b : inputs) {
    Ping fast;
    const bool accepted = decode_ping(b, fast);
    bool decodes_as_ping = false;
    try {
      decodes_as_ping = std::holds_alternative<Ping>(decode(b));
    } catch (const ProtocolError&) {
    }
    EXPECT_EQ(accepted, decodes_as_ping) << b.size();
    if (accepted) {
      Ping full = std::get<Ping>(decode(b));
      EXPECT_EQ(fast.call_id, full.call_id);
      EXPECT_EQ(fast.payload_bytes, full.payload_bytes);
      EXPECT_EQ(fast.flags, full.flags);
    }
  }
}

TEST(WireRoundTrip, Pong) {
  auto d = decode_as<Pong>(encode(Pong{81, 4096, 12345}));
  EXPECT_EQ(d.call_id, 81u);
  EXPECT_EQ(d.payload_bytes, 4096u);
  EXPECT_EQ(d.gpu_ns, 12345u);
}

TEST(WireRoundTrip, SinkRequestAndReply) {
  EXPECT_EQ(decode_as<SinkRequest>(encode(SinkRequest{7})).call_id, 7u);
  auto d = decode_as<SinkReply>(encode(SinkReply{8, 4096, 1ull << 33, "why"}));
  EXPECT_EQ(d.call_id, 8u);
  EXPECT_EQ(d.sink, 4096u);
  EXPECT_EQ(d.max_bytes, 1ull << 33);
  EXPECT_EQ(d.message, "why");
  for (const Message& m : {Message{SinkRequest{1}}, Message{SinkReply{2, 3, 4, "x"}}}) {
    const Bytes b = encode(m);
    for (size_t n = 0; n < b.size(); ++n) protocol_error_of([&] { decode(Bytes(b.begin(), b.begin() + long(n))); });
    Bytes longer = b;
    longer.push_back(std::byte{0});
    protocol_error_of([&] { decode(longer); });
  }
  protocol_error_of([&] { decode(encode(SinkReply{2, 3, 4, std::string(kMaxText + 1, 'x')})); });
}

TEST(WireRoundTrip, CallChunk) {
  Level3Call c = make_call(Routine::gemm, Scalar::s);
  c.m = 300, c.n = 200, c.k = 100;
  CallChunk ch{21, c, request_bytes(c), kMinChunkBytes, 1};
  auto d = decode_as<CallChunk>(encode(ch));
  EXPECT_EQ(d.call_id, 21u);
  EXPECT_EQ(d.call.m, 300);
  EXPECT_EQ(d.payload_bytes, request_bytes(c));
  EXPECT_EQ(d.chunk_bytes, kMinChunkBytes);
  EXPECT_EQ(d.chunk_index, 1u);
  const uint64_t total = request_bytes(c), full = total / kMinChunkBytes;
  ASSERT_NE(total % kMinChunkBytes, 0u);
  EXPECT_EQ(chunk_count(d.payload_bytes, d.chunk_bytes), full + 1);
  d.chunk_index = full;  // the last one is short
  EXPECT_EQ(chunk_offset(d), full * kMinChunkBytes);
  EXPECT_EQ(chunk_length(d), total - full * kMinChunkBytes);
  d.chunk_index = 0;
  EXPECT_EQ(chunk_length(d), kMinChunkBytes);
}

TEST(WireRoundTrip, ReplyChunk) {
  auto d = decode_as<ReplyChunk>(encode(ReplyChunk{5, 1 << 30, 12345}));
  EXPECT_EQ(d.call_id, 5u);
  EXPECT_EQ(d.offset, 1u << 30);
  EXPECT_EQ(d.bytes, 12345u);
}

// Remote OpenCL's data over the lanes (protocol 14): a request naming its transfer, chunks of it,
// a reply whose result comes in pieces; and what a peer may not say.
TEST(WireRoundTrip, OpenClDataOverTheLanes) {
  EXPECT_EQ(uint16_t(Type::cl_chunk), 38);
  auto q = decode_as<ClRequest>(encode(ClRequest{5, ClFinish{}, 0, 9, 5 << 20, true}));
  EXPECT_EQ(q.lane_transfer, 9u);
  EXPECT_EQ(q.lane_bytes, 5u << 20);
  EXPECT_TRUE(q.reply_over_lanes);
  auto r = decode_as<ClReply>(encode(ClReply{5, 0, {}, 0, 5 << 20}));
  EXPECT_EQ(r.lane_bytes, 5u << 20);
  EXPECT_EQ(r.payload_bytes, 0u);
  auto c = decode_as<ClChunk>(encode(ClChunk{9, (5 << 20) + 1, 1 << 20, 5}));
  EXPECT_EQ(c.transfer, 9u);
  EXPECT_EQ(chunk_length(c), 1u);  // the last chunk: one byte
  EXPECT_EQ(chunk_offset(c), 5u << 20);

  // A transfer without its size or a size without its transfer; data both ways; a reply over the
  // lanes to an unanswered operation; a result both ways; sizes past the bound.
  EXPECT_THROW(decode(encode(ClRequest{0, ClFlush{1}, 0, 9, 0})), ProtocolError);
  EXPECT_THROW(decode(encode(ClRequest{0, ClFlush{1}, 0, 0, 4096})), ProtocolError);
  EXPECT_THROW(decode(encode(ClRequest{0, ClFlush{1}, 16, 9, 4096})), ProtocolError);
  EXPECT_THROW(decode(encode(ClRequest{0, ClFlush{1}, 0, 0, 0, true})), ProtocolError);
  EXPECT_THROW(decode(encode(ClRequest{0, ClFlush{1}, 0, 9, kMaxClPayload + 1})), ProtocolError);
  EXPECT_THROW(decode(encode(ClReply{5, 0, {}, 16, 4096})), ProtocolError);
  EXPECT_THROW(decode(encode(ClReply{5, 0, {}, 0, kMaxClPayload + 1})), ProtocolError);
  // Chunks: no transfer, an empty or too large transfer, chunks below the minimum, an index past the end.
  EXPECT_THROW(decode(encode(ClChunk{0, 1 << 20, 1 << 20, 0})), ProtocolError);
  EXPECT_THROW(decode(encode(ClChunk{1, 0, 1 << 20, 0})), ProtocolError);
  EXPECT_THROW(decode(encode(ClChunk{1, kMaxClPayload + 1, 1 << 20, 0})), ProtocolError);
  EXPECT_THROW(decode(encode(ClChunk{1, 1 << 20, kMinChunkBytes - 1, 0})), ProtocolError);
  EXPECT_THROW(decode(encode(ClChunk{1, 1 << 20, 1 << 19, 2})), ProtocolError);
}

TEST(WireReject, BadChunks) {
  Level3Call c = make_call(Routine::gemm, Scalar::d);
  c.m = c.n = c.k = 200;  // 640000 payload bytes
  const uint64_t total = request_bytes(c);
  auto error_of = [](const Message& m) { return protocol_error_of([&] { decode(encode(m)); }); };
  EXPECT_NE(error_of(CallChunk{1, c, total + 8, kMinChunkBytes, 0}).find("payload bytes"), std::string::npos);
  EXPECT_NE(error_of(CallChunk{1, c, total, kMinChunkBytes - 1, 0}).find("minimum"), std::string::npos);
  EXPECT_NE(error_of(CallChunk{1, c, total, kMinChunkBytes, chunk_count(total, kMinChunkBytes)}).find("range"),
            std::string::npos);
  Level3Call empty = c;
  empty.k = 0;  // nothing to send
  EXPECT_NE(error_of(CallChunk{1, empty, 0, kMinChunkBytes, 0}).find("payload bytes"), std::string::npos);
  EXPECT_NE(error_of(ReplyChunk{1, 0, 0}).find("invalid"), std::string::npos);
  EXPECT_NE(error_of(ReplyChunk{1, UINT64_MAX, 2}).find("invalid"), std::string::npos);
}

TEST(WireRoundTrip, HeaderLayout) {
  auto b = encode(Pong{1});
  ASSERT_EQ(b.size(), kHeaderBytes + 24 + 16);  // call id, bytes, GPU time; the load
  uint32_t magic;
  uint16_t version, type;
  std::memcpy(&magic, b.data(), 4);
  std::memcpy(&version, b.data() + 4, 2);
  std::memcpy(&type, b.data() + 6, 2);
  EXPECT_EQ(magic, kMagic);
  EXPECT_EQ(version, kProtocolVersion);
  EXPECT_EQ(type, uint16_t(Type::pong));
  EXPECT_EQ(std::memcmp(b.data(), "OBRD", 4), 0);
}

TEST(WireRoundTrip, TypeIdsFollowTheVariant) {
  auto v = sample_messages();
  const Type expected[] = {Type::hello, Type::challenge, Type::auth, Type::auth_result, Type::blas3_call,
                           Type::blas3_call, Type::call_reply, Type::status_request, Type::status_reply,
                           Type::error, Type::ping, Type::pong, Type::call_chunk, Type::reply_chunk,
                           Type::cl_request, Type::cl_reply, Type::cl_notice, Type::hold, Type::join_session,
                           Type::session_joined, Type::enveloped, Type::cl_request, Type::cl_reply, Type::cl_chunk};
  ASSERT_EQ(v.size(), std::size(expected));
  for (size_t i = 0; i < v.size(); ++i) {
    uint16_t type;
    std::memcpy(&type, v[i].data() + 6, 2);
    EXPECT_EQ(type, uint16_t(expected[i])) << i;
  }
}

// ---------------------------------------------------------------------------------------------
// Rejection of malformed messages

TEST(WireReject, WrongMagic) {
  auto b = encode(Pong{1});
  put_u32(b, 0, kMagic ^ 1);
  EXPECT_NE(protocol_error_of([&] { decode(b); }).find("magic"), std::string::npos);
  put_u32(b, 0, 0);
  protocol_error_of([&] { decode(b); });
}

TEST(WireReject, WrongVersion) {
  for (uint16_t v : {uint16_t(0), uint16_t(kProtocolVersion + 1), uint16_t(0xffff)}) {
    auto b = encode(Pong{1});
    put_u16(b, 4, v);
    EXPECT_NE(protocol_error_of([&] { decode(b); }).find("version"), std::string::npos) << v;
  }
}

TEST(WireReject, UnknownType) {
  for (uint16_t t : {uint16_t(0), uint16_t(39), uint16_t(40), uint16_t(0x100), uint16_t(0xffff)}) {
    auto b = encode(Pong{1});
    put_u16(b, 6, t);
    EXPECT_NE(protocol_error_of([&] { decode(b); }).find("unknown message type"), std::string::npos) << t;
  }
}

TEST(WireReject, EveryTruncation) {
  for (const auto& msg : sample_messages()) {
    for (size_t len = 0; len < msg.size(); ++len) {
      SCOPED_TRACE("type " + std::to_string(std::to_integer<int>(msg[6])) + ", prefix of " +
                   std::to_string(len) + "/" + std::to_string(msg.size()) + " bytes");
      Bytes prefix(msg.begin(), msg.begin() + len);
      protocol_error_of([&] { decode(prefix); });
    }
    EXPECT_NO_THROW(decode(msg));
  }
}

TEST(WireReject, TrailingBytes) {
  for (const auto& msg : sample_messages()) {
    for (size_t extra : {1, 2, 8}) {
      Bytes b = msg;
      b.resize(b.size() + extra, std::byte{0});
      EXPECT_NE(protocol_error_of([&] { decode(b); }).find("trailing"), std::string::npos);
    }
  }
}

TEST(WireReject, OverlongStrings) {
  const std::string too_long(kMaxText + 1, 'y');
  std::vector<Bytes> v;
  v.push_back(encode(Hello{pattern<32>(1), too_long}));
  v.push_back(encode(Challenge{pattern<32>(1), pattern<32>(2), too_long}));
  v.push_back(encode(AuthResult{false, too_long}));
  v.push_back(encode(CallReply{1, false, too_long, 0}));
  v.push_back(encode(ErrorMessage{too_long}));
  v.push_back(encode(StatusReply{1, std::string(kMaxStatusJson + 1, ' ')}));
  for (const auto& b : v) EXPECT_NE(protocol_error_of([&] { decode(b); }).find("exceeds"), std::string::npos);
}

TEST(WireReject, StringLengthBeyondMessage) {
  // A length prefix within the limit but larger than what follows: truncation, not an overread.
  auto b = encode(ErrorMessage{"abc"});
  put_u32(b, kHeaderBytes, 100);
  EXPECT_NE(protocol_error_of([&] { decode(b); }).find("truncated"), std::string::npos);
  put_u32(b, kHeaderBytes, 0xffffffff);
  protocol_error_of([&] { decode(b); });
}

TEST(WireReject, InvalidBooleans) {
  for (uint8_t bad : {uint8_t(2), uint8_t(0x80), uint8_t(0xff)}) {
    auto a = encode(AuthResult{true, "x"});
    a[kHeaderBytes] = std::byte{bad};
    EXPECT_NE(protocol_error_of([&] { decode(a); }).find("boolean"), std::string::npos);

    auto r = encode(CallReply{5, true, "", 0});
    r[kHeaderBytes + 8] = std::byte{bad};
    EXPECT_NE(protocol_error_of([&] { decode(r); }).find("boolean"), std::string::npos);

    auto c = encode(blas3(make_call(Routine::gemm, Scalar::d)));
    // output_sent is the last byte of the call, just before payload_bytes and the resident count.
    c[c.size() - 10] = std::byte{bad};
    EXPECT_NE(protocol_error_of([&] { decode(c); }).find("boolean"), std::string::npos);
  }
}

// An invalid call is rejected both by validate() and, on the wire, by decode().
void expect_invalid(const Level3Call& c, const char* fragment) {
  SCOPED_TRACE(std::string("call ") + call_name(c) + ", expecting '" + fragment + "'");
  std::string direct = protocol_error_of([&] { validate(c); });
  EXPECT_NE(direct.find(fragment), std::string::npos) << direct;
  Blas3Call b{1, c, 0, {}};
  auto bytes = encode(b);
  std::string wire = protocol_error_of([&] { decode(bytes); });
  EXPECT_NE(wire.find(fragment), std::string::npos) << wire;
}

TEST(WireReject, UnknownRoutineOrScalar) {
  Level3Call c = make_call(Routine::gemm, Scalar::d);
  c.routine = Routine::count_;
  expect_invalid(c, "unknown BLAS routine");
  c.routine = static_cast<Routine>(0xff);
  expect_invalid(c, "unknown BLAS routine");
  c = make_call(Routine::gemm, Scalar::d);
  c.scalar = Scalar::count_;
  expect_invalid(c, "unknown scalar type");
  c.scalar = static_cast<Scalar>(200);
  expect_invalid(c, "unknown scalar type");
}

TEST(WireReject, HermitianRoutinesInRealPrecision) {
  for (Routine r : {Routine::hemm, Routine::herk, Routine::her2k})
    for (Scalar s : {Scalar::s, Scalar::d}) {
      Level3Call c = make_call(r, Scalar::z);
      c.scalar = s;
      c.beta = {0.5, 0};
      expect_invalid(c, "does not exist");
    }
}

TEST(WireReject, BadOptionCharacters) {
  struct Case {
    Routine r;
    Scalar s;
    char Level3Call::*field;
    char value;
  };
  const Case cases[] = {
      {Routine::gemm, Scalar::d, &Level3Call::transa, 'X'},
      {Routine::gemm, Scalar::d, &Level3Call::transa, 'n'},  // lower case is not accepted on the wire
      {Routine::gemm, Scalar::d, &Level3Call::transb, 't'},
      {Routine::gemm, Scalar::z, &Level3Call::transb, '\0'},
      {Routine::symm, Scalar::s, &Level3Call::side, 'N'},
      {Routine::symm, Scalar::s, &Level3Call::side, 'U'},
      {Routine::hemm, Scalar::c, &Level3Call::uplo, 'N'},
      {Routine::hemm, Scalar::c, &Level3Call::uplo, 'R'},
      {Routine::syrk, Scalar::d, &Level3Call::uplo, 'X'},
      {Routine::syrk, Scalar::c, &Level3Call::transa, 'C'},  // complex syrk: N or T only
      {Routine::syr2k, Scalar::z, &Level3Call::transa, 'C'},
      {Routine::herk, Scalar::z, &Level3Call::transa, 'T'},  // herk: N or C only
      {Routine::her2k, Scalar::c, &Level3Call::transa, 'T'},
      {Routine::trmm, Scalar::d, &Level3Call::side, 'X'},
      {Routine::trmm, Scalar::d, &Level3Call::uplo, 'N'},
      {Routine::trsm, Scalar::c, &Level3Call::transa, 'Q'},
      {Routine::trsm, Scalar::c, &Level3Call::diag, 'X'},
      {Routine::trsm, Scalar::c, &Level3Call::diag, char(0xff)},
  };
  for (const auto& k : cases) {
    Level3Call c = make_call(k.r, k.s);
    c.*k.field = k.value;
    expect_invalid(c, "invalid");
  }
  // The accepted sets, for contrast: real syrk takes C, gemm takes N/T/C.
  Level3Call c = make_call(Routine::syrk, Scalar::d);
  c.transa = 'C';
  EXPECT_NO_THROW(validate(c));
  c = make_call(Routine::herk, Scalar::c);
  c.transa = 'N';
  EXPECT_NO_THROW(validate(c));
}

TEST(WireReject, UnusedOptionsMustBeN) {
  struct Case {
    Routine r;
    Scalar s;
    char Level3Call::*field;
  };
  const Case cases[] = {
      {Routine::gemm, Scalar::d, &Level3Call::side},   {Routine::gemm, Scalar::d, &Level3Call::uplo},
      {Routine::gemm, Scalar::d, &Level3Call::diag},   {Routine::symm, Scalar::d, &Level3Call::transa},
      {Routine::symm, Scalar::d, &Level3Call::transb}, {Routine::hemm, Scalar::z, &Level3Call::diag},
      {Routine::syrk, Scalar::s, &Level3Call::side},   {Routine::syrk, Scalar::s, &Level3Call::transb},
      {Routine::herk, Scalar::c, &Level3Call::diag},   {Routine::syr2k, Scalar::d, &Level3Call::side},
      {Routine::her2k, Scalar::z, &Level3Call::transb}, {Routine::trmm, Scalar::d, &Level3Call::transb},
      {Routine::trsm, Scalar::z, &Level3Call::transb},
  };
  for (const auto& k : cases) {
    Level3Call c = make_call(k.r, k.s);
    c.*k.field = 'L';
    expect_invalid(c, "must be 'N'");
  }
}

TEST(WireReject, DimensionsOutOfRange) {
  for (const auto& base : all_valid_combinations()) {
    for (int64_t Level3Call::*dim : {&Level3Call::m, &Level3Call::n, &Level3Call::k}) {
      if (base.*dim == 0) continue;  // an unused dimension: covered by UnusedDimensionsMustBeZero
      for (int64_t bad : {int64_t(-1), INT64_MIN, kMaxDimension + 1, INT64_MAX}) {
        Level3Call c = base;
        c.*dim = bad;
        expect_invalid(c, "out of range");
      }
    }
  }
}

TEST(WireReject, UnusedDimensionsMustBeZero) {
  for (const auto& base : all_valid_combinations()) {
    int64_t Level3Call::*unused = nullptr;
    switch (base.routine) {
      case Routine::symm:
      case Routine::hemm:
      case Routine::trmm:
      case Routine::trsm: unused = &Level3Call::k; break;
      case Routine::syrk:
      case Routine::herk:
      case Routine::syr2k:
      case Routine::her2k: unused = &Level3Call::m; break;
      default: continue;  // gemm uses all three
    }
    Level3Call c = base;
    c.*unused = 1;
    expect_invalid(c, "must be 0");
  }
}

TEST(WireReject, OutputNotSentWithNonzeroBeta) {
  for (auto base : all_valid_combinations()) {
    if (base.routine == Routine::trmm || base.routine == Routine::trsm) continue;
    base.output_sent = false;
    for (std::array<double, 2> beta : {std::array<double, 2>{1, 0}, std::array<double, 2>{0, 1},
                                       std::array<double, 2>{-0.5, 0}, std::array<double, 2>{NAN, 0}}) {
      Level3Call c = base;
      c.beta = beta;
      expect_invalid(c, "must be sent");
    }
    Level3Call ok = base;
    ok.beta = {0, 0};
    EXPECT_NO_THROW(validate(ok));
    ok.beta = {-0.0, -0.0};  // negative zero is zero
    EXPECT_NO_THROW(validate(ok));
  }
}

TEST(WireReject, InPlaceRoutinesMustSendB) {
  for (Routine r : {Routine::trmm, Routine::trsm})
    for (Scalar s : {Scalar::s, Scalar::d, Scalar::c, Scalar::z}) {
      Level3Call c = make_call(r, s);
      c.output_sent = false;
      expect_invalid(c, "B must be sent");
    }
}

TEST(WireReject, PayloadBytesMustMatch) {
  Level3Call c = make_call(Routine::syr2k, Scalar::c);
  const uint64_t need = request_bytes(c);
  for (uint64_t wrong : {uint64_t(0), need - 1, need + 1, need * 2, UINT64_MAX}) {
    auto b = encode(Blas3Call{3, c, wrong});
    EXPECT_NE(protocol_error_of([&] { decode(b); }).find("payload bytes"), std::string::npos) << wrong;
  }
  EXPECT_NO_THROW(decode(encode(Blas3Call{3, c, need})));
}

// Decoding arbitrary bytes either yields a message or throws ProtocolError: never another
// exception (std::bad_alloc, std::length_error, ...) and never a crash.
void decode_or_protocol_error(const Bytes& b, size_t& decoded) {
  try {
    Message m = decode(b);
    ++decoded;
    // What decodes must re-encode to the same bytes (the encoding is canonical).
    EXPECT_EQ(encode(m), b);
    if (auto* call = std::get_if<Blas3Call>(&m)) {
      EXPECT_NO_THROW(validate(call->call));
      EXPECT_EQ(request_bytes(call->call), call->payload_bytes);
      EXPECT_NO_THROW(reply_bytes(call->call));
      EXPECT_GE(flops(call->call), 0);
    }
  } catch (const ProtocolError&) {
  } catch (const std::exception& e) {
    ADD_FAILURE() << "decode threw something other than ProtocolError: " << e.what();
  } catch (...) {
    ADD_FAILURE() << "decode threw a non-std exception";
  }
}

TEST(WireReject, RandomBytes) {
  std::mt19937 rng(20240601);
  size_t decoded = 0;
  for (int i = 0; i < 4000; ++i) {
    Bytes b(std::uniform_int_distribution<size_t>(0, 160)(rng));
    for (auto& x : b) x = std::byte(rng());
    // Most random strings fail at the magic; give half of them a valid header so that the bodies
    // get exercised too.
    if (i % 2 == 0 && b.size() >= kHeaderBytes) {
      put_u32(b, 0, kMagic);
      put_u16(b, 4, kProtocolVersion);
      put_u16(b, 6, uint16_t(1 + rng() % 15));
    }
    decode_or_protocol_error(b, decoded);
  }
  SUCCEED() << decoded << " random strings decoded";
}

TEST(WireReject, MutatedValidMessages) {
  std::mt19937 rng(7);
  auto samples = sample_messages();
  for (const auto& c : all_valid_combinations()) samples.push_back(encode(blas3(c)));
  size_t decoded = 0;
  for (int i = 0; i < 6000; ++i) {
    Bytes b = samples[rng() % samples.size()];
    int edits = 1 + int(rng() % 4);
    for (int e = 0; e < edits && !b.empty(); ++e) {
      size_t at = rng() % b.size();
      switch (rng() % 4) {
        case 0: b[at] = std::byte(rng()); break;                 // overwrite
        case 1: b[at] ^= std::byte(1u << (rng() % 8)); break;    // flip a bit
        case 2: b.erase(b.begin() + at); break;                  // delete
        case 3: b.insert(b.begin() + at, std::byte(rng())); break;  // insert
      }
    }
    decode_or_protocol_error(b, decoded);
  }
  EXPECT_GT(decoded, 0u);  // some single-byte edits (e.g. in ids or names) stay valid
}

// ---------------------------------------------------------------------------------------------
// Layout, payload sizes and flop counts, against hand-computed values

void expect_operand(const Operand& o, char name, int64_t rows, int64_t cols) {
  EXPECT_EQ(o.name, name);
  EXPECT_EQ(o.rows, rows);
  EXPECT_EQ(o.cols, cols);
}

TEST(WireLevel3, GemmWithTransposes) {
  Level3Call c;
  c.routine = Routine::gemm;
  c.scalar = Scalar::d;
  c.transa = 'T';
  c.transb = 'C';
  c.m = 3, c.n = 4, c.k = 5;
  c.beta = {1, 0};
  Layout l = layout(c);
  ASSERT_EQ(l.inputs.size(), 3u);
  expect_operand(l.inputs[0], 'A', 5, 3);  // op(A) = A^T is m x k, so A is k x m
  expect_operand(l.inputs[1], 'B', 4, 5);  // op(B) = B^H is k x n, so B is n x k
  expect_operand(l.inputs[2], 'C', 3, 4);
  expect_operand(l.output, 'C', 3, 4);
  EXPECT_FALSE(l.output_triangle);
  EXPECT_EQ(request_bytes(c), (15u + 20u + 12u) * 8u);
  EXPECT_EQ(reply_bytes(c), 12u * 8u);
  EXPECT_DOUBLE_EQ(flops(c), 2.0 * 3 * 4 * 5);

  c.transa = 'N';
  c.transb = 'N';
  c.output_sent = false;
  c.beta = {0, 0};
  l = layout(c);
  ASSERT_EQ(l.inputs.size(), 2u);
  expect_operand(l.inputs[0], 'A', 3, 5);
  expect_operand(l.inputs[1], 'B', 5, 4);
  EXPECT_EQ(request_bytes(c), (15u + 20u) * 8u);
  EXPECT_EQ(reply_bytes(c), 12u * 8u);

  c.scalar = Scalar::z;  // complex: 16-byte elements, 4x the real flops
  EXPECT_EQ(request_bytes(c), (15u + 20u) * 16u);
  EXPECT_DOUBLE_EQ(flops(c), 4 * 2.0 * 3 * 4 * 5);
}

TEST(WireLevel3, SymmSideRight) {
  Level3Call c;
  c.routine = Routine::symm;
  c.scalar = Scalar::s;
  c.side = 'R';
  c.uplo = 'U';
  c.m = 3, c.n = 4;
  c.output_sent = false;
  Layout l = layout(c);
  ASSERT_EQ(l.inputs.size(), 2u);
  expect_operand(l.inputs[0], 'A', 4, 4);  // side R: A is n x n
  expect_operand(l.inputs[1], 'B', 3, 4);
  expect_operand(l.output, 'C', 3, 4);
  EXPECT_EQ(request_bytes(c), (16u + 12u) * 4u);
  EXPECT_EQ(reply_bytes(c), 12u * 4u);
  EXPECT_DOUBLE_EQ(flops(c), 2.0 * 3 * 4 * 4);

  c.side = 'L';  // side L: A is m x m
  EXPECT_EQ(layout(c).inputs[0].rows, 3);
  EXPECT_EQ(request_bytes(c), (9u + 12u) * 4u);
  EXPECT_DOUBLE_EQ(flops(c), 2.0 * 3 * 4 * 3);
}

TEST(WireLevel3, SyrkTransposed) {
  Level3Call c;
  c.routine = Routine::syrk;
  c.scalar = Scalar::z;
  c.uplo = 'L';
  c.transa = 'T';
  c.n = 4, c.k = 6;
  c.beta = {2, 0};
  Layout l = layout(c);
  ASSERT_EQ(l.inputs.size(), 2u);
  expect_operand(l.inputs[0], 'A', 6, 4);  // trans T: A is k x n
  expect_operand(l.inputs[1], 'C', 4, 4);
  expect_operand(l.output, 'C', 4, 4);
  EXPECT_TRUE(l.output_triangle);
  EXPECT_EQ(request_bytes(c), (24u + 16u) * 16u);
  EXPECT_EQ(reply_bytes(c), 16u * 16u);
  EXPECT_DOUBLE_EQ(flops(c), 4.0 * 4 * 5 * 6);  // complex: 4 * n(n+1)k
}

TEST(WireLevel3, Syr2kAndHer2k) {
  Level3Call c = make_call(Routine::her2k, Scalar::c);  // n=7, k=3, trans C
  Layout l = layout(c);
  ASSERT_EQ(l.inputs.size(), 3u);
  expect_operand(l.inputs[0], 'A', 3, 7);
  expect_operand(l.inputs[1], 'B', 3, 7);
  expect_operand(l.inputs[2], 'C', 7, 7);
  EXPECT_TRUE(l.output_triangle);
  EXPECT_EQ(request_bytes(c), (21u + 21u + 49u) * 8u);
  EXPECT_DOUBLE_EQ(flops(c), 4.0 * 2 * 7 * 8 * 3);
}

TEST(WireLevel3, TrsmSideLeft) {
  Level3Call c;
  c.routine = Routine::trsm;
  c.scalar = Scalar::c;
  c.side = 'L';
  c.uplo = 'U';
  c.transa = 'N';
  c.diag = 'N';
  c.m = 5, c.n = 3;
  Layout l = layout(c);
  ASSERT_EQ(l.inputs.size(), 2u);
  expect_operand(l.inputs[0], 'A', 5, 5);  // side L: A is m x m
  expect_operand(l.inputs[1], 'B', 5, 3);  // B travels in and comes back
  expect_operand(l.output, 'B', 5, 3);
  EXPECT_FALSE(l.output_triangle);
  EXPECT_EQ(request_bytes(c), (25u + 15u) * 8u);
  EXPECT_EQ(reply_bytes(c), 15u * 8u);
  EXPECT_DOUBLE_EQ(flops(c), 4.0 * 5 * 3 * 5);

  c.side = 'R';
  c.scalar = Scalar::d;
  expect_operand(layout(c).inputs[0], 'A', 3, 3);
  EXPECT_EQ(request_bytes(c), (9u + 15u) * 8u);
  EXPECT_DOUBLE_EQ(flops(c), 5.0 * 3 * 3);
}

TEST(WireLevel3, Names) {
  EXPECT_EQ(call_name(make_call(Routine::gemm, Scalar::d)), "dgemm");
  EXPECT_EQ(call_name(make_call(Routine::her2k, Scalar::z)), "zher2k");
  EXPECT_EQ(call_name(make_call(Routine::trsm, Scalar::s)), "strsm");
  EXPECT_EQ(call_name(make_call(Routine::hemm, Scalar::c)), "chemm");
  EXPECT_EQ(element_bytes(Scalar::s), 4u);
  EXPECT_EQ(element_bytes(Scalar::d), 8u);
  EXPECT_EQ(element_bytes(Scalar::c), 8u);
  EXPECT_EQ(element_bytes(Scalar::z), 16u);
}

TEST(WireLevel3, HugeDimensionsDoNotOverflow) {
  // z gemm with every dimension at the limit: each matrix is ~2^66 bytes.
  Level3Call c;
  c.routine = Routine::gemm;
  c.scalar = Scalar::z;
  c.m = c.n = c.k = kMaxDimension;
  for (auto f : {+[](const Level3Call& x) { return request_bytes(x); }, +[](const Level3Call& x) { return reply_bytes(x); }}) {
    try {
      uint64_t bytes = f(c);
      unsigned __int128 exact = (unsigned __int128)kMaxDimension * kMaxDimension * 16;
      EXPECT_EQ((unsigned __int128)bytes, exact) << "size wrapped around";
    } catch (const ProtocolError& e) {
      EXPECT_NE(std::string(e.what()).find("matrix too large"), std::string::npos) << e.what();
    }
  }
  EXPECT_NE(protocol_error_of([&] { validate(c); }).find("matrix too large"), std::string::npos);
  // On the wire: payload_bytes cannot even be announced correctly, and decode rejects the call.
  auto b = encode(Blas3Call{1, c, 0});
  EXPECT_NE(protocol_error_of([&] { decode(b); }).find("matrix too large"), std::string::npos);

  // The largest herk and trsm are rejected the same way.
  Level3Call h = make_call(Routine::herk, Scalar::z);
  h.n = h.k = kMaxDimension;
  EXPECT_NE(protocol_error_of([&] { validate(h); }).find("matrix too large"), std::string::npos);
  Level3Call t = make_call(Routine::trsm, Scalar::s);
  t.m = t.n = kMaxDimension;
  EXPECT_NE(protocol_error_of([&] { validate(t); }).find("matrix too large"), std::string::npos);
}

TEST(WireLevel3, LargeButAcceptedSizesAreExact) {
  // A is m x k = (2^31 - 1) x 2^28 doubles: just under the 2^62-byte cap per matrix.
  Level3Call c;
  c.routine = Routine::gemm;
  c.scalar = Scalar::d;
  c.m = kMaxDimension;
  c.n = 1;
  c.k = int64_t(1) << 28;
  ASSERT_NO_THROW(validate(c));
  const uint64_t a = uint64_t(c.m) * uint64_t(c.k) * 8, b = uint64_t(c.k) * 8, out = uint64_t(c.m) * 8;
  EXPECT_EQ(request_bytes(c), a + b + out);
  EXPECT_EQ(reply_bytes(c), out);
  auto d = decode_as<Blas3Call>(encode(blas3(c)));
  EXPECT_EQ(d.payload_bytes, a + b + out);
  // Twice as many columns crosses the cap.
  c.k = int64_t(1) << 29;
  EXPECT_NE(protocol_error_of([&] { validate(c); }).find("matrix too large"), std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// Authentication proofs

TEST(WireAuth, ServerAndClientProofsDiffer) {
  Secret s = pattern<32>(100);
  Nonce a = pattern<32>(1), b = pattern<32>(2);
  EXPECT_FALSE(macs_equal(server_proof(s, a, b), client_proof(s, b, a)));
  EXPECT_FALSE(macs_equal(server_proof(s, a, b), client_proof(s, a, b)));
  // Even with equal nonces the labels keep the two directions apart (no reflection).
  EXPECT_FALSE(macs_equal(server_proof(s, a, a), client_proof(s, a, a)));
  EXPECT_TRUE(macs_equal(server_proof(s, a, b), server_proof(s, a, b)));
  EXPECT_TRUE(macs_equal(client_proof(s, b, a), client_proof(s, b, a)));
  EXPECT_FALSE(macs_equal(server_proof(s, a, b), server_proof(s, b, a)));
  Secret other = s;
  other[31] ^= 1;
  EXPECT_FALSE(macs_equal(server_proof(s, a, b), server_proof(other, a, b)));
}

}  // namespace
}  // namespace outboard::wire
