// Unit tests of resident inputs (issue 36 item 5): their wire form and its checks, the server's
// store (budgets, least recently used first out), the client's mirror of it, and the digest.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "client/resident_inputs.hpp"
#include "common/digest.hpp"
#include "common/error.hpp"
#include "server/resident_store.hpp"
#include "wire/messages.hpp"

namespace outboard {
namespace {

using wire::ResidentInput;

wire::Level3Call gemm(int64_t n, bool c_sent) {
  wire::Level3Call c;
  c.routine = wire::Routine::gemm;
  c.scalar = wire::Scalar::d;
  c.m = c.n = c.k = n;
  c.alpha = {1, 0};
  c.beta = {c_sent ? 1.0 : 0.0, 0};
  c.output_sent = c_sent;
  return c;
}

TEST(ResidentWire, ACallWithResidentInputsRoundTrips) {
  const wire::Level3Call c = gemm(64, true);
  const uint64_t each = 64 * 64 * 8;
  wire::Blas3Call b{7, c, wire::request_bytes(c) - each, {{0, true, {1, 2}}, {1, false, {3, 4}}}};
  const auto d = std::get<wire::Blas3Call>(wire::decode(wire::encode(b)));
  ASSERT_EQ(d.resident.size(), 2u);
  EXPECT_EQ(d.resident[0].input, 0);
  EXPECT_TRUE(d.resident[0].use);
  EXPECT_EQ(d.resident[0].digest, (Digest{1, 2}));
  EXPECT_FALSE(d.resident[1].use);
  EXPECT_EQ(d.payload_bytes, 2 * each);
  wire::AuthResult a{true, "welcome", {}, false, {}, 12345};
  EXPECT_EQ(std::get<wire::AuthResult>(wire::decode(wire::encode(a))).resident_bytes, 12345u);
}

TEST(ResidentWire, AnFftExecutionSendsItsInputOrNone) {
  wire::FftShape s;
  s.n = {1024};
  const uint64_t in = wire::input_bytes(s);
  const auto d = std::get<wire::FftExecute>(wire::decode(wire::encode(wire::FftExecute{1, 2, s, 0, {{0, true, {8, 9}}}})));
  ASSERT_EQ(d.resident.size(), 1u);
  EXPECT_TRUE(d.resident[0].use);
  EXPECT_NO_THROW(wire::decode(wire::encode(wire::FftExecute{1, 2, s, in, {{0, false, {8, 9}}}})));
  EXPECT_THROW(wire::decode(wire::encode(wire::FftExecute{1, 2, s, in, {{0, true, {8, 9}}}})), ProtocolError);
  EXPECT_THROW(wire::decode(wire::encode(wire::FftExecute{1, 2, s, 0, {}})), ProtocolError);
  EXPECT_THROW(wire::decode(wire::encode(wire::FftExecute{1, 2, s, 0, {{1, true, {8, 9}}}})), ProtocolError);
}

// Protocol 12: an execution on a held input carries its output's digest, and the reply may say the
// result was that output (not sent); such a reply is a success without payload, nothing else.
TEST(ResidentWire, AnFftExecutionCarriesItsOutputsDigest) {
  wire::FftShape s;
  s.n = {1024};
  wire::FftExecute q{1, 2, s, 0, {{0, true, {8, 9}}}};
  q.output_known = true;
  q.output_digest = {0x1122334455667788ull, 0x99aabbccddeeff00ull};
  const auto d = std::get<wire::FftExecute>(wire::decode(wire::encode(q)));
  EXPECT_TRUE(d.output_known);
  EXPECT_EQ(d.output_digest, q.output_digest);
  EXPECT_FALSE(std::get<wire::FftExecute>(wire::decode(wire::encode(wire::FftExecute{1, 2, s, 0, {{0, true, {8, 9}}}})))
                   .output_known);
  std::vector<std::byte> bad = wire::encode(q);
  bad[bad.size() - 17] = std::byte{2};  // the flag: neither 0 nor 1
  EXPECT_THROW(wire::decode(bad), ProtocolError);

  wire::FftReply r{1, true, "", 0, 1, 2, 3, 4, 5, 6, "cuda:0"};
  r.output_unchanged = true;
  EXPECT_TRUE(std::get<wire::FftReply>(wire::decode(wire::encode(r))).output_unchanged);
  r.payload_bytes = wire::output_bytes(s);  // unchanged, yet the result sent
  EXPECT_THROW(wire::decode(wire::encode(r)), ProtocolError);
  r.payload_bytes = 0, r.ok = false;  // unchanged, yet failed
  EXPECT_THROW(wire::decode(wire::encode(r)), ProtocolError);
}

TEST(ResidentWire, BadResidentInputsAreRejected) {
  const wire::Level3Call c = gemm(64, true);  // inputs A, B, C (shared with the output)
  const uint64_t all = wire::request_bytes(c), each = 64 * 64 * 8;
  auto rejected = [](const wire::Blas3Call& b) {
    EXPECT_THROW(wire::decode(wire::encode(b)), ProtocolError);
  };
  rejected({1, c, all, {{3, false, {}}}});                      // no input 3
  rejected({1, c, all - each, {{2, true, {}}}});                // C: the output shares it
  rejected({1, c, all - 2 * each, {{0, true, {}}, {0, true, {}}}});  // named twice
  rejected({1, c, all, {{0, true, {}}}});                       // payload still counts A
  rejected({1, c, all, std::vector<ResidentInput>(5, ResidentInput{})});
  wire::Level3Call empty = gemm(0, false);
  rejected({1, empty, 0, {{0, false, {}}}});                    // an empty input
  EXPECT_EQ(wire::resident_bytes_in_use({{1, true, {}}}, {10, 20, 30}, 2), 20u);
}

std::shared_ptr<const transport::Buffer> bytes_of(size_t n, int fill) {
  auto b = std::make_shared<transport::Buffer>(transport::Buffer::allocate(n));
  std::memset(b->data(), fill, n);
  return b;
}

TEST(ResidentStore, KeepsWithinBudgetsLeastRecentlyUsedFirstOut) {
  server::ResidentBudget all{1000};
  server::ResidentStore s(300, all);
  EXPECT_TRUE(s.keep({1, 0}, bytes_of(100, 1)));
  EXPECT_TRUE(s.keep({2, 0}, bytes_of(100, 2)));
  EXPECT_TRUE(s.keep({3, 0}, bytes_of(100, 3)));
  ASSERT_NE(s.find({1, 0}, 100), nullptr);  // 1 is now the most recent: 2 goes first
  EXPECT_TRUE(s.keep({4, 0}, bytes_of(100, 4)));
  EXPECT_EQ(s.find({2, 0}, 100), nullptr);
  EXPECT_NE(s.find({1, 0}, 100), nullptr);
  EXPECT_EQ(s.find({1, 0}, 99), nullptr);  // the digest with another length is not it
  EXPECT_EQ(s.bytes(), 300u);
  EXPECT_EQ(all.used, 300u);
  EXPECT_FALSE(s.keep({5, 0}, bytes_of(301, 5)));  // larger than the session's budget
  EXPECT_FALSE(s.keep({6, 0}, nullptr));
  EXPECT_EQ(all.evicted, 1u);
  EXPECT_EQ(all.hits, 2u);
  EXPECT_EQ(all.misses, 2u);
  EXPECT_EQ(all.refused, 2u);
  EXPECT_EQ(all.bytes_not_sent, 200u);
  // The server's budget binds all sessions: another session cannot take what this one holds.
  server::ResidentStore other(1000, all);
  EXPECT_TRUE(other.keep({7, 0}, bytes_of(700, 7)));
  EXPECT_EQ(all.used, 1000u);
  EXPECT_FALSE(other.keep({8, 0}, bytes_of(800, 8)));  // its own store gave all it could
  EXPECT_EQ(all.used, 300u);
  EXPECT_NE(s.find({3, 0}, 100), nullptr);
}

// An input kept as part of its call's memory (no copy): the store finds it by its own bytes, and
// counts, and gives back on eviction, the whole memory it holds on to.
TEST(ResidentStore, APartOfACallsMemoryCountsTheWhole) {
  server::ResidentBudget all{1000};
  server::ResidentStore s(400, all);
  auto call = std::const_pointer_cast<transport::Buffer>(bytes_of(300, 0));
  std::memset(call->data() + 100, 7, 100);
  const std::weak_ptr<const transport::Buffer> alive = call;
  server::KeptInput k = server::ResidentStore::part_of({1, 0}, call, 100, 100, call->size());
  EXPECT_EQ(k.footprint, 300u);
  call.reset();
  EXPECT_TRUE(s.keep(std::move(k)));
  EXPECT_EQ(s.bytes(), 300u);
  EXPECT_EQ(all.used, 300u);
  auto found = s.find({1, 0}, 100);
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found->size(), 100u);
  EXPECT_EQ(found->data()[0], std::byte{7});
  EXPECT_EQ(found->data()[99], std::byte{7});
  found.reset();
  EXPECT_FALSE(alive.expired());  // the call's memory lives while its part is kept
  EXPECT_TRUE(s.keep({2, 0}, bytes_of(200, 2)));  // 300 + 200 > 400: the part goes
  EXPECT_EQ(s.bytes(), 200u);
  EXPECT_EQ(all.used, 200u);
  EXPECT_TRUE(alive.expired());
  EXPECT_FALSE(s.keep(server::ResidentStore::part_of({3, 0}, bytes_of(500, 3), 0, 10, 500)));  // its whole is over budget
}

TEST(ResidentStore, InputsOutliveTheirEvictionAndTheStore) {
  server::ResidentBudget all{1000};
  std::shared_ptr<const transport::Buffer> in_use;
  {
    server::ResidentStore s(100, all);
    s.keep({1, 0}, bytes_of(100, 9));
    in_use = s.find({1, 0}, 100);
    s.keep({2, 0}, bytes_of(100, 1));  // evicts 1 while a call still reads it
  }
  EXPECT_EQ(all.used, 0u);  // the ended session gave its bytes back
  EXPECT_EQ(static_cast<const unsigned char*>(static_cast<const void*>(in_use->data()))[50], 9);
}

TEST(ResidentMirror, FollowsTheServersOrder) {
  client::ResidentMirror m;
  m.set_budget(300);
  m.kept({1, 0}, 100);
  m.kept({2, 0}, 100);
  m.kept({3, 0}, 100);
  EXPECT_TRUE(m.held({1, 0}, 100));
  m.kept({4, 0}, 100);  // as the store: 2 goes
  EXPECT_FALSE(m.held({2, 0}, 100));
  EXPECT_TRUE(m.held({1, 0}, 100));
  EXPECT_FALSE(m.held({1, 0}, 50));
  m.forget({{0, true, {1, 0}}});
  EXPECT_FALSE(m.held({1, 0}, 100));
  m.kept({9, 0}, 400);  // more than the budget: the server refuses it too
  EXPECT_FALSE(m.held({9, 0}, 400));
}

TEST(ResidentMirror, APlanSendsWhatTheServerLacks) {
  client::Settings s;
  s.resident_min_bytes = 1000;
  client::ResidentMirror m;
  m.set_budget(1 << 20);
  std::vector<unsigned char> a(4000, 1), b(4000, 2), small(10, 3);
  const std::vector<transport::Segment> segs{{a.data(), a.size()}, {b.data(), b.size()}, {small.data(), small.size()}};
  const uint64_t call = 8010 + 4000;  // the inputs, and an output of 4000 back
  // First sight: sent as usual (nothing worth keeping yet: it may never come again).
  client::ResidentPlan first = client::plan_resident(m, s, segs, -1, call);
  EXPECT_FALSE(first.any());
  EXPECT_EQ(first.payload_bytes, 8010u);
  // Second sight, unchanged: sent and kept (the small one is not worth a digest).
  client::ResidentPlan second = client::plan_resident(m, s, segs, -1, call);
  ASSERT_EQ(second.inputs.size(), 2u);
  EXPECT_FALSE(second.inputs[0].use || second.inputs[1].use);
  EXPECT_EQ(second.payload_bytes, 8010u);
  client::ResidentPlan third = client::plan_resident(m, s, segs, -1, call);
  EXPECT_TRUE(third.inputs[0].use && third.inputs[1].use);
  EXPECT_EQ(third.payload_bytes, 10u);
  // One byte of B changed: A alone is not half the call's bytes, so everything travels (the
  // call keeps its chunk pipeline); B's new bytes seen again are kept with A held.
  b[3999] = 7;
  EXPECT_FALSE(client::plan_resident(m, s, segs, -1, call).any());
  client::ResidentPlan again = client::plan_resident(m, s, segs, -1, call);
  ASSERT_EQ(again.inputs.size(), 2u);
  EXPECT_TRUE(again.inputs[0].use);
  EXPECT_FALSE(again.inputs[1].use);
  EXPECT_EQ(again.payload_bytes, 4010u);
  EXPECT_EQ(client::plan_resident(m, s, segs, -1, call).payload_bytes, 10u);
  // A dominant input alone is worth it: A held, B (changing) sent, in a call of 4000 + 1000 + 1000.
  std::vector<unsigned char> thin(1000, 5);
  const std::vector<transport::Segment> dominant{{a.data(), a.size()}, {thin.data(), thin.size()}};
  client::ResidentPlan d = client::plan_resident(m, s, dominant, -1, 6000);
  ASSERT_EQ(d.inputs.size(), 1u);
  EXPECT_TRUE(d.inputs[0].use);
  EXPECT_EQ(d.payload_bytes, 1000u);
  // The shared input never; nothing where the server keeps nothing or OUTBOARD_RESIDENT=0.
  EXPECT_FALSE(client::plan_resident(m, s, dominant, 0, 6000).any());  // A shared: B alone is too little
  s.resident = false;
  EXPECT_FALSE(client::plan_resident(m, s, segs, -1, call).any());
}

// Protocol 15: a chunked call names its resident inputs; the chunks that lie wholly in one in use
// are the server's to fill, never sent, and the last chunk always goes.
TEST(ResidentWire, HeldChunksLieWhollyInInputsInUse) {
  const uint64_t K = wire::kMinChunkBytes;
  // Inputs of 2.5, 1 and 3.5 chunks: 7 chunks, input 1 spans [2.5K, 3.5K), input 2 [3.5K, 7K).
  const std::vector<uint64_t> inputs{5 * K / 2, K, 7 * K / 2};
  const uint64_t payload = 7 * K;
  auto held = [&](std::vector<ResidentInput> r) { return wire::held_chunks(r, inputs, payload, K); };
  EXPECT_EQ(held({{0, true, {1, 1}}}), (std::vector<bool>{true, true, false, false, false, false, false}));
  EXPECT_EQ(held({{1, true, {1, 1}}}), std::vector<bool>(7, false));  // no chunk wholly inside
  EXPECT_EQ(held({{2, true, {1, 1}}}), (std::vector<bool>{false, false, false, false, true, true, false}));
  EXPECT_EQ(held({{0, false, {1, 1}}, {2, false, {2, 2}}}), std::vector<bool>(7, false));  // sent, to keep
  const std::vector<ResidentInput> both{{0, true, {1, 1}}, {2, true, {2, 2}}};
  EXPECT_EQ(wire::held_chunk_bytes(both, inputs, payload, K), 4 * K);
  for (uint64_t k = 0; k < 7; ++k) EXPECT_EQ(wire::chunk_held(both, inputs, payload, K, k), held(both)[k]) << k;
  // One input that is the whole payload: all but the last chunk.
  EXPECT_EQ(wire::held_chunks({{0, true, {1, 1}}}, {3 * K}, 3 * K, K), (std::vector<bool>{true, true, false}));
}

TEST(ResidentWire, AChunkedCallWithResidentInputsRoundTripsAndNeverSendsAHeldChunk) {
  const wire::Level3Call c = gemm(256, false);  // A and B: 8 chunks of 64 KiB each
  const uint64_t payload = wire::request_bytes(c), K = wire::kMinChunkBytes;
  ASSERT_EQ(payload, 16 * K);
  const std::vector<ResidentInput> a_held{{0, true, {1, 2}}, {1, false, {3, 4}}};
  const auto d = std::get<wire::CallChunk>(wire::decode(wire::encode(wire::CallChunk{5, c, payload, K, 8, a_held})));
  ASSERT_EQ(d.resident.size(), 2u);
  EXPECT_TRUE(d.resident[0].use);
  EXPECT_EQ(d.resident[1].digest, (Digest{3, 4}));
  EXPECT_THROW(wire::decode(wire::encode(wire::CallChunk{5, c, payload, K, 7, a_held})), ProtocolError);
  // Both held: only the last chunk may come.
  const std::vector<ResidentInput> both{{0, true, {1, 2}}, {1, true, {3, 4}}};
  EXPECT_THROW(wire::decode(wire::encode(wire::CallChunk{5, c, payload, K, 14, both})), ProtocolError);
  EXPECT_NO_THROW(wire::decode(wire::encode(wire::CallChunk{5, c, payload, K, 15, both})));
  // The resident inputs are checked as a whole call's: the same input twice, one past the inputs.
  EXPECT_THROW(wire::decode(wire::encode(wire::CallChunk{5, c, payload, K, 15, {{0, true, {1, 2}}, {0, false, {1, 2}}}})),
               ProtocolError);
  EXPECT_THROW(wire::decode(wire::encode(wire::CallChunk{5, c, payload, K, 15, {{2, true, {1, 2}}}})), ProtocolError);
  // A LAPACK chunk: getrs on held factors.
  wire::LapackCall solve;
  solve.routine = wire::LapackRoutine::getrs, solve.scalar = wire::Scalar::d, solve.trans = 'N', solve.n = 256,
  solve.nrhs = 1;
  wire::validate(solve);
  const uint64_t bytes = wire::request_bytes(solve), last = wire::chunk_count(bytes, K) - 1;
  const std::vector<ResidentInput> lu{{0, true, {7, 7}}};
  EXPECT_EQ(std::get<wire::LapackChunk>(wire::decode(wire::encode(wire::LapackChunk{6, solve, bytes, K, last, lu})))
                .resident.size(),
            1u);
  EXPECT_THROW(wire::decode(wire::encode(wire::LapackChunk{6, solve, bytes, K, 0, lu})), ProtocolError);
}

// Inputs kept from one call's memory count it once between them, on both sides alike.
TEST(ResidentWire, FootprintSharesAddUpToTheCallsMemory) {
  EXPECT_EQ(wire::footprint_shares(300, {100}), (std::vector<uint64_t>{300}));
  EXPECT_EQ(wire::footprint_shares(1000, {100, 200}), (std::vector<uint64_t>{333, 667}));
  EXPECT_EQ(wire::footprint_shares(7, {}), std::vector<uint64_t>{});
  const uint64_t big = uint64_t(3) << 40;  // no overflow in the product
  EXPECT_EQ(wire::footprint_shares(big, {big / 3, big / 3})[0], big / 2);
}

// The mirror counts what the server's store counts: a kept input's share of its call's memory.
// A call whose memory is over the whole budget keeps nothing (the server would refuse it, and
// every later call naming the input would fail and be sent again).
TEST(ResidentMirror, CountsTheCallsMemoryAndKeepsNothingOverTheBudget) {
  client::Settings s;
  s.resident_min_bytes = 1000;
  client::ResidentMirror m;
  m.set_budget(20000);
  std::vector<unsigned char> a(4000, 1), b(4000, 2);
  const std::vector<transport::Segment> segs{{a.data(), a.size()}, {b.data(), b.size()}};
  const client::CallMemory chunked{4000, true};  // inputs and C's room: 12000
  client::plan_resident(m, s, segs, -1, 12000, chunked);
  client::ResidentPlan keep = client::plan_resident(m, s, segs, -1, 12000, chunked);
  ASSERT_EQ(keep.inputs.size(), 2u);
  EXPECT_FALSE(keep.inputs[0].use || keep.inputs[1].use);
  // 12000 between the two: one more such call's 12000 would be over 20000, and A and B go first.
  m.kept({9, 0}, 5000, 12000);
  EXPECT_FALSE(m.held(keep.inputs[0].digest, 4000));
  EXPECT_TRUE(m.held({9, 0}, 5000));
  // Over the budget, nothing of their sizes held: never kept, not even digested.
  client::ResidentMirror small;
  small.set_budget(10000);
  client::plan_resident(small, s, segs, -1, 12000, chunked);
  EXPECT_FALSE(client::plan_resident(small, s, segs, -1, 12000, chunked).any());
  EXPECT_FALSE(small.seen(keep.inputs[0].digest, 4000));
  // A whole call's memory holds what it sends: with A held, B's keep counts B and C's room
  // (8000), and A (4000) makes room for it, as in the server's store.
  small.kept(keep.inputs[0].digest, 4000, 4000);
  client::plan_resident(small, s, segs, -1, 12000, client::CallMemory{4000, false});  // B's first sight
  client::ResidentPlan whole = client::plan_resident(small, s, segs, -1, 12000, client::CallMemory{4000, false});
  ASSERT_EQ(whole.inputs.size(), 2u);
  EXPECT_TRUE(whole.inputs[0].use);
  EXPECT_FALSE(whole.inputs[1].use);
  EXPECT_EQ(whole.payload_bytes, 4000u);
  EXPECT_FALSE(small.held(keep.inputs[0].digest, 4000));
  EXPECT_TRUE(small.held(keep.inputs[1].digest, 4000));
}

TEST(Digest, SameBytesSameDigestAnyThreads) {
  std::vector<unsigned char> v(3 * kDigestBlockBytes + 12345);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<unsigned char>(i * 31 + 7);
  const Digest one = content_digest(v.data(), v.size(), 1);
  EXPECT_EQ(content_digest(v.data(), v.size(), 4), one);
  EXPECT_EQ(content_digest(v.data(), v.size(), 64), one);
  v[v.size() - 1] ^= 1;
  EXPECT_NE(content_digest(v.data(), v.size(), 4), one);
  // The length counts: a prefix of zeros is not the longer run of zeros.
  std::vector<unsigned char> zeros(100, 0);
  EXPECT_NE(content_digest(zeros.data(), 50, 1), content_digest(zeros.data(), 100, 1));
}

// Digests run on half the cores, at most 16, unless OUTBOARD_COPY_THREADS asks for more: on the H200
// host's 16 cores the default 4 threads took 45 ms a GiB, 8 took 25 (a send across 100 Gbit/s: 92).
TEST(DigestThreads, HalfTheCoresAtMostSixteenOrTheCopyThreads) {
  EXPECT_EQ(client::digest_threads(4, 2), 4u);    // the 2-core CI machine: as before
  EXPECT_EQ(client::digest_threads(4, 16), 8u);   // the H200 host
  EXPECT_EQ(client::digest_threads(4, 128), 16u);
  EXPECT_EQ(client::digest_threads(24, 16), 24u);  // asked for more
  EXPECT_EQ(client::digest_threads(1, 0), 1u);     // cores unknown
}

}  // namespace
}  // namespace outboard
