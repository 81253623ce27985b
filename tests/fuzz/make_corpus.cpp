// Writes the seed corpus of fuzz_request: one small, valid encoded message per file, at least one
// of every message type, OpenCL operation, dcuda proxy message and OpenCL payload format (checked).
//
//   fuzz_make_corpus DIR          (re)writes the seeds into DIR (tests/fuzz/corpus in the source tree)
//   fuzz_make_corpus --check DIR  exits 1 unless DIR holds exactly these seeds, byte for byte
//
// The check runs as a ctest test, so that a change to the wire format that makes the committed
// seeds stale (they would all be rejected at the header and fuzzing would start from nothing) is
// noticed: regenerate them with the first form and commit the result.
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "common/error.hpp"
#include "wire/dcuda.hpp"
#include "wire/lapack.hpp"
#include "wire/level3.hpp"
#include "wire/messages.hpp"

namespace {

using namespace outboard;
using namespace outboard::wire;

std::array<uint8_t, 32> filled(uint8_t first) {
  std::array<uint8_t, 32> a{};
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<uint8_t>(first + 13 * i);
  return a;
}

Blas3Call blas3(uint64_t id, Level3Call c) { return Blas3Call{id, c, request_bytes(c), {}}; }

Level3Call call(Routine r, Scalar s, char side, char uplo, char transa, char transb, char diag, int64_t m, int64_t n,
                int64_t k, bool output_sent, std::array<double, 2> beta = {0, 0}) {
  Level3Call c;
  c.routine = r;
  c.scalar = s;
  c.side = side, c.uplo = uplo, c.transa = transa, c.transb = transb, c.diag = diag;
  c.m = m, c.n = n, c.k = k;
  c.alpha = {1.0, s == Scalar::c || s == Scalar::z ? 0.5 : 0.0};
  c.beta = beta;
  c.output_sent = output_sent;
  validate(c);
  return c;
}

std::map<std::string, std::vector<std::byte>> seeds() {
  std::map<std::string, std::vector<std::byte>> out;
  out["hello"] = encode(Hello{filled(1), "node1:4242:a.out"});
  out["challenge"] = encode(Challenge{filled(2), filled(3), "server"});
  out["auth"] = encode(Auth{filled(4)});
  out["auth_result"] = encode(AuthResult{true, "ok", {}, false, {7701}, 1 << 30});
  out["auth_result_lane_ports"] = encode(AuthResult{true, "ok", {}, false, {}, 0, 5, {40001, 40002, 40003, 40004}});
  {
    Level3Call g;
    g.routine = Routine::gemm, g.scalar = Scalar::d, g.m = 4, g.n = 3, g.k = 2, g.alpha = {1, 0};
    g.output_sent = false;
    validate(g);
    const uint64_t a_bytes = input_bytes(g)[0];
    out["blas3_resident"] = encode(Blas3Call{38, g, request_bytes(g) - a_bytes, {{0, true, {1, 2}}, {1, false, {3, 4}}}});
  }
  out["hello_encrypt"] = encode(Hello{filled(1), "node1:4242:a.out", "alice", true});
  out["challenge_encrypt"] = encode(Challenge{filled(2), filled(3), "server", true});
  out["auth_result_encrypted"] = encode(AuthResult{true, "welcome", {}, true});
  out["call_reply"] = encode(CallReply{7, false, "no", 0});
  out["status_request"] = encode(StatusRequest{8});
  out["status_reply"] = encode(StatusReply{9, "{}"});
  out["error"] = encode(ErrorMessage{"bye"});
  out["hold"] = encode(Hold{3});
  out["join_session"] = encode(JoinSession{filled(4), 1, filled(5)});
  out["session_joined"] = encode(SessionJoined{true, "joined"});
  out["enveloped"] = encode(Enveloped{kMaxHeaderBytes + 1, 4096});
  out["ping_fill"] = encode(Ping{12, 4096, Ping::fill});
  out["ping"] = encode(Ping{10, 64});
  out["pong"] = encode(Pong{11});
  {
    Level3Call big = call(Routine::gemm, Scalar::d, 'N', 'N', 'N', 'N', 'N', 256, 256, 256, false);
    out["call_chunk"] = encode(CallChunk{12, big, request_bytes(big), kMinChunkBytes, 2});
    // A held (its 8 chunks filled by the server), B sent and to be kept: chunk 9 is B's.
    out["call_chunk_resident"] =
        encode(CallChunk{13, big, request_bytes(big), kMinChunkBytes, 9, {{0, true, {1, 2}}, {1, false, {3, 4}}}});
    big.output_sent = true;
    out["direct_blas3"] = encode(DirectBlas3{26, big, {std::vector<std::byte>(8, std::byte{7})},
                                             {{0x10000, request_bytes(big), 0}}, {{0x900000, reply_bytes(big), 0}}, true});
  }
  out["reply_chunk"] = encode(ReplyChunk{13, 0, 4096});
  // Remote OpenCL: one of each kind of operation's shape (ids, lists, blobs, nested arguments).
  {
    const ClId first = kFirstClientId;
    out["cl_create_context"] = encode(ClRequest{0, ClCreateContext{first, {5}, {0x1084, 1}}, 0});
    out["cl_create_buffer"] = encode(ClRequest{0, ClCreateBuffer{first + 1, first, 1, 4096}, 4096});
    ClNDRange k;
    k.cmd = {first + 2, {first + 3}, first + 4};
    k.kernel = first + 5;
    k.dims = 1;
    k.global = {1024, 1, 1};
    k.args = {{0, 0, 0, 0, ClBlob(4, std::byte{1})}, {1, 1, first + 1, 0, {}}, {2, 2, 0, 256, {}}};
    out["cl_ndrange"] = encode(ClRequest{0, k, 0});
    ClRead rd;
    rd.cmd.queue = first + 2;
    rd.mem = first + 1;
    rd.at.region = {64, 2, 1};
    rd.at.row_pitch = 128;
    out["cl_read"] = encode(ClRequest{9, rd, 0});
    out["cl_build"] = encode(ClRequest{10, ClBuildProgram{0, first + 6, 0, {5}, "-cl-std=CL1.2", {}, {}}, 0});
    out["cl_reply"] = encode(ClReply{10, -11, ClBlob(8, std::byte{2}), 0});
    out["cl_write_over_lanes"] = encode(ClRequest{0, ClWrite{{first + 3, {}, 0}, first + 1, {}}, 0, 1, 3 << 20});
    out["cl_read_over_lanes"] = encode(ClRequest{11, rd, 0, 0, 0, true});
    out["cl_reply_over_lanes"] = encode(ClReply{11, 0, {}, 0, 3 << 20});
    out["cl_chunk"] = encode(ClChunk{1, 3 << 20, 1 << 20, 2});
    out["cl_notice"] = encode(ClNotice{0, first + 4, 0, {1, 2, 3, 4}, ""});
    ClCreateImage img{first + 7, first, 1, 0x10B5, 0x10DA, 0x10F1, 32, 16, 0, 0, 0};
    out["cl_create_image"] = encode(ClRequest{0, img, 32 * 16 * 4});
    ClCopy cp;
    cp.cmd.queue = first + 2;
    cp.src = first + 7;
    cp.dst = first + 1;
    cp.from.origin = {1, 2, 0};
    cp.from.region = {8, 4, 1};
    cp.to.origin = {64, 0, 0};
    out["cl_copy_image"] = encode(ClRequest{0, cp, 0});
    ClFill fill;
    fill.cmd.queue = first + 2;
    fill.mem = first + 7;
    fill.pattern = ClBlob(16, std::byte{3});
    fill.at.region = {4, 4, 1};
    out["cl_fill_image"] = encode(ClRequest{0, fill, 0});
    out["cl_create_sampler"] = encode(ClRequest{0, ClCreateSampler{first + 8, first, {0x1152, 1, 0x1153, 0x1131}}, 0});
    out["cl_create_sub_devices"] = encode(ClRequest{11, ClCreateSubDevices{first + 9, 2, 5, {0x1087, 1, 1, 0}}, 0});
    out["cl_create_pipe"] = encode(ClRequest{0, ClCreatePipe{first + 11, first, 0, 4, 64}, 0});
    out["cl_create_program_il"] = encode(ClRequest{0, ClCreateProgramIL{first + 12, first}, 20});
    out["cl_get_sub_group_info"] = encode(ClRequest{12, ClGetSubGroupInfo{first + 5, 5, 0x2033, {64}}, 0});
    out["cl_get_timers"] = encode(ClRequest{13, ClGetTimers{5, false}, 0});
    out["cl_set_spec_constant"] = encode(ClRequest{21, ClSetSpecConstant{first + 12, 3, 4, true, ClBlob(4, std::byte{5})}, 0});
    const ClBlob key(40, std::byte{7});
    out["cl_direct_read"] =
        encode(ClRequest{14, ClDirectRead{{first + 2, {first + 10}, first + 13}, first + 3, 4096, 1 << 20, key, 0x7f0000001000}, 0});
    out["cl_direct_write"] =
        encode(ClRequest{15, ClDirectWrite{{first + 2, {}, 0}, first + 3, 0, (1 << 20) + 7, key, 0x7f0000200000}, 0});
    out["cl_get_platforms"] = encode(ClRequest{16, ClGetPlatforms{}, 0});
    out["cl_get_info"] = encode(ClRequest{17, ClGetInfo{2, first + 6, 5, 0x1183, 0}, 0});
    out["cl_create_queue"] = encode(ClRequest{0, ClCreateQueue{first + 2, first, 5, {0x1093, 2}}, 0});
    out["cl_create_sub_buffer"] = encode(ClRequest{0, ClCreateSubBuffer{first + 14, first + 1, 1, 1024, 512}, 0});
    out["cl_get_image_formats"] = encode(ClRequest{18, ClGetImageFormats{first, 1, 0x10F1}, 0});
    out["cl_create_program_source"] = encode(ClRequest{0, ClCreateProgramSource{first + 6, first}, 30});
    out["cl_create_program_binary"] = encode(ClRequest{19, ClCreateProgramBinary{first + 15, first, {5}, {64}}, 64});
    out["cl_create_program_built_in"] = encode(ClRequest{0, ClCreateProgramBuiltIn{first + 16, first, {5}, "k1;k2"}, 0});
    out["cl_create_kernel"] = encode(ClRequest{0, ClCreateKernel{first + 5, first + 6, "add"}, 0});
    out["cl_clone_kernel"] = encode(ClRequest{0, ClCloneKernel{first + 17, first + 5}, 0});
    out["cl_create_user_event"] = encode(ClRequest{0, ClCreateUserEvent{first + 10, first}, 0});
    out["cl_set_user_event_status"] = encode(ClRequest{0, ClSetUserEventStatus{first + 10, 0}, 0});
    out["cl_release"] = encode(ClRequest{0, ClRelease{first + 17}, 0});
    ClWrite wr;
    wr.cmd = {first + 2, {first + 10}, first + 18};
    wr.mem = first + 1;
    wr.at.origin = {16, 0, 0};
    wr.at.region = {256, 1, 1};
    out["cl_write"] = encode(ClRequest{0, wr, 256});
    out["cl_migrate"] = encode(ClRequest{0, ClMigrate{{first + 2, {}, 0}, {first + 1, first + 7}, 1}, 0});
    out["cl_marker"] = encode(ClRequest{0, ClMarker{{first + 2, {first + 18}, first + 19}, true}, 0});
    out["cl_finish"] = encode(ClRequest{20, ClFinish{first + 2}, 0});
    out["cl_flush"] = encode(ClRequest{0, ClFlush{first + 2}, 0});
  }
  // OpenCL bulk results (reply payloads the client decodes: wire::decode_cl_*).
  {
    const ClInfoValue name{0x0902, ClBlob(5, std::byte{'p'})};
    ClDeviceEntry dev{5, {{0x1000, ClBlob(8, std::byte{4})}, {0x1031, {}}}};
    out["cl_snapshot"] = encode_cl(ClSnapshot{{ClPlatformEntry{1, {name}, {dev}}}});
    out["cl_device_list"] = encode_cl(ClDeviceList{{dev}});
    ClKernelEntry kernel{"add", {ClKernelArgInfo{0x119B, 0x11A3, 0, "float*", "a"}, ClKernelArgInfo{}}};
    out["cl_build_result"] = encode_cl(ClBuildResult{{kernel}});
  }
  out["blas3_dgemm"] = encode(blas3(1, call(Routine::gemm, Scalar::d, 'N', 'N', 'T', 'N', 'N', 8, 4, 2, true, {1, 0})));
  out["blas3_zgemm"] = encode(blas3(2, call(Routine::gemm, Scalar::z, 'N', 'N', 'C', 'T', 'N', 3, 5, 7, false)));
  out["blas3_ssymm"] = encode(blas3(3, call(Routine::symm, Scalar::s, 'R', 'U', 'N', 'N', 'N', 6, 2, 0, false)));
  out["blas3_chemm"] = encode(blas3(4, call(Routine::hemm, Scalar::c, 'L', 'L', 'N', 'N', 'N', 2, 6, 0, true, {0, 1})));
  out["blas3_dsyrk"] = encode(blas3(5, call(Routine::syrk, Scalar::d, 'N', 'L', 'T', 'N', 'N', 0, 5, 3, true, {2, 0})));
  out["blas3_zherk"] = encode(blas3(6, call(Routine::herk, Scalar::z, 'N', 'U', 'C', 'N', 'N', 0, 4, 9, false)));
  out["blas3_ssyr2k"] = encode(blas3(7, call(Routine::syr2k, Scalar::s, 'N', 'U', 'N', 'N', 'N', 0, 3, 3, true)));
  out["blas3_zher2k"] = encode(blas3(8, call(Routine::her2k, Scalar::z, 'N', 'L', 'N', 'N', 'N', 0, 2, 5, true, {1, 0})));
  out["blas3_ctrmm"] = encode(blas3(9, call(Routine::trmm, Scalar::c, 'R', 'L', 'T', 'N', 'U', 4, 4, 0, true)));
  out["blas3_dtrsm"] = encode(blas3(10, call(Routine::trsm, Scalar::d, 'L', 'U', 'N', 'N', 'N', 5, 3, 0, true)));
  auto lapack = [](uint64_t id, LapackRoutine r, Scalar s, char trans, char uplo, char jobz, char jobu, char jobvt,
                   int64_t m, int64_t n, int64_t nrhs) {
    LapackCall c;
    c.routine = r, c.scalar = s, c.trans = trans, c.uplo = uplo, c.jobz = jobz, c.jobu = jobu, c.jobvt = jobvt;
    c.m = m, c.n = n, c.nrhs = nrhs;
    validate(c);
    return encode(LapackRequest{id, c, request_bytes(c), {}});
  };
  using LR = LapackRoutine;
  out["lapack_dgesv"] = lapack(11, LR::gesv, Scalar::d, 'N', 'N', 'N', 'N', 'N', 0, 5, 2);
  out["lapack_sgetrf"] = lapack(12, LR::getrf, Scalar::s, 'N', 'N', 'N', 'N', 'N', 7, 4, 0);
  out["lapack_zgetrs"] = lapack(13, LR::getrs, Scalar::z, 'C', 'N', 'N', 'N', 'N', 0, 3, 2);
  out["lapack_cposv"] = lapack(14, LR::posv, Scalar::c, 'N', 'L', 'N', 'N', 'N', 0, 4, 1);
  out["lapack_dpotrf"] = lapack(15, LR::potrf, Scalar::d, 'N', 'U', 'N', 'N', 'N', 0, 6, 0);
  out["lapack_spotrs"] = lapack(16, LR::potrs, Scalar::s, 'N', 'U', 'N', 'N', 'N', 0, 3, 3);
  out["lapack_dgels"] = lapack(17, LR::gels, Scalar::d, 'T', 'N', 'N', 'N', 'N', 6, 3, 2);
  out["lapack_cgeqrf"] = lapack(18, LR::geqrf, Scalar::c, 'N', 'N', 'N', 'N', 'N', 3, 5, 0);
  out["lapack_zheevd"] = lapack(19, LR::syevd, Scalar::z, 'N', 'L', 'V', 'N', 'N', 0, 4, 0);
  out["lapack_dgesvd"] = lapack(20, LR::gesvd, Scalar::d, 'N', 'N', 'N', 'S', 'O', 5, 3, 0);
  {  // the drivers with ranges, itype and rcond (issue 35)
    LapackCall c;
    c.routine = LR::syevr, c.scalar = Scalar::d, c.jobz = 'V', c.range = 'I', c.uplo = 'L', c.n = 6, c.il = 2, c.iu = 4;
    c.abstol = 1e-12;
    validate(c);
    out["lapack_dsyevr"] = encode(LapackRequest{29, c, request_bytes(c), {}});
    c = LapackCall{};
    c.routine = LR::gesvdx, c.scalar = Scalar::c, c.jobu = 'V', c.jobvt = 'N', c.range = 'V', c.m = 5, c.n = 4;
    c.vl = 0.5, c.vu = 3;
    validate(c);
    out["lapack_cgesvdx"] = encode(LapackRequest{30, c, request_bytes(c), {}});
    c = LapackCall{};
    c.routine = LR::sygvd, c.scalar = Scalar::z, c.itype = 2, c.jobz = 'V', c.uplo = 'U', c.n = 3;
    validate(c);
    out["lapack_zhegvd"] = encode(LapackRequest{31, c, request_bytes(c), {}});
    c = LapackCall{};
    c.routine = LR::gelsy, c.scalar = Scalar::s, c.m = 4, c.n = 3, c.nrhs = 2, c.rcond = 1e-5;
    validate(c);
    out["lapack_sgelsy"] = encode(LapackRequest{32, c, request_bytes(c), {}});
    c = LapackCall{};
    c.routine = LR::geev, c.scalar = Scalar::d, c.jobvl = 'V', c.jobvr = 'V', c.n = 4;
    validate(c);
    out["lapack_dgeev"] = encode(LapackRequest{33, c, request_bytes(c), {}});
    c = LapackCall{};
    c.routine = LR::hetrs, c.scalar = Scalar::z, c.uplo = 'L', c.n = 3, c.nrhs = 1;
    validate(c);
    out["lapack_zhetrs"] = encode(LapackRequest{34, c, request_bytes(c), {}});
    // Resident inputs (wire::ResidentInput): A held, B sent and kept.
    const uint64_t a_bytes = input_bytes(c)[0];
    out["lapack_zhetrs_resident"] =
        encode(LapackRequest{37, c, request_bytes(c) - a_bytes, {{0, true, {11, 12}}, {2, false, {13, 14}}}});
    c = LapackCall{};  // side and k (orgqr, ormqr)
    c.routine = LR::orgqr, c.scalar = Scalar::d, c.m = 6, c.n = 4, c.k = 3;
    validate(c);
    out["lapack_dorgqr"] = encode(LapackRequest{35, c, request_bytes(c), {}});
    c = LapackCall{};
    c.routine = LR::ormqr, c.scalar = Scalar::z, c.side = 'R', c.trans = 'C', c.m = 3, c.n = 5, c.k = 2;
    validate(c);
    out["lapack_zunmqr"] = encode(LapackRequest{36, c, request_bytes(c), {}});
    c = LapackCall{};  // syev / heev (as syevd's)
    c.routine = LR::syev, c.scalar = Scalar::c, c.jobz = 'V', c.uplo = 'U', c.n = 4;
    validate(c);
    out["lapack_cheev"] = encode(LapackRequest{37, c, request_bytes(c), {}});
    c = LapackCall{};  // balanc, sense, tranb, isgn, ilo, ihi (protocol 7)
    c.routine = LR::gehrd, c.scalar = Scalar::d, c.n = 5, c.ilo = 2, c.ihi = 4;
    validate(c);
    out["lapack_dgehrd"] = encode(LapackRequest{38, c, request_bytes(c), {}});
    c = LapackCall{};
    c.routine = LR::trsyl, c.scalar = Scalar::z, c.trans = 'C', c.tranb = 'N', c.isgn = -1, c.m = 3, c.n = 2;
    validate(c);
    out["lapack_ztrsyl"] = encode(LapackRequest{39, c, request_bytes(c), {}});
    c = LapackCall{};
    c.routine = LR::geevx, c.scalar = Scalar::s, c.balanc = 'B', c.jobvl = 'V', c.jobvr = 'V', c.sense = 'B', c.n = 3;
    validate(c);
    out["lapack_sgeevx"] = encode(LapackRequest{40, c, request_bytes(c), {}});
    c = LapackCall{};
    c.routine = LR::gges, c.scalar = Scalar::c, c.jobvl = 'V', c.jobvr = 'V', c.n = 3;
    validate(c);
    out["lapack_cgges"] = encode(LapackRequest{41, c, request_bytes(c), {}});
    c = LapackCall{};
    c.routine = LR::geqp3, c.scalar = Scalar::d, c.m = 4, c.n = 3;
    validate(c);
    out["lapack_dgeqp3"] = encode(LapackRequest{42, c, request_bytes(c), {}});
  }
  out["lapack_reply"] = encode(LapackReply{21, true, "", 2, 0});
  {
    LapackCall big;
    big.routine = LR::getrf, big.scalar = Scalar::d, big.m = 128, big.n = 128;
    validate(big);
    out["lapack_chunk"] = encode(LapackChunk{27, big, request_bytes(big), kMinChunkBytes, 1});
    // getrs on factors the server holds (A, 8 chunks filled there): only the last chunk is sent.
    LapackCall solve;
    solve.routine = LR::getrs, solve.scalar = Scalar::d, solve.trans = 'N', solve.n = 256, solve.nrhs = 1;
    validate(solve);
    const uint64_t solve_bytes = request_bytes(solve);
    out["lapack_chunk_resident"] = encode(LapackChunk{28, solve, solve_bytes, kMinChunkBytes,
                                                      chunk_count(solve_bytes, kMinChunkBytes) - 1, {{0, true, {5, 6}}}});
    const std::vector<std::vector<std::byte>> keys{std::vector<std::byte>(8, std::byte{9})};
    out["direct_lapack"] = encode(DirectLapack{28, big, keys, {{0x10000, request_bytes(big), 0}},
                                               {{0x10000, request_bytes(big), 0}, {0x900000, reply_bytes(big) - request_bytes(big), 0}},
                                               true});
  }
  out["lanes_request"] = encode(LanesRequest{29, std::vector<std::byte>(24, std::byte{5}), 4242, 0x7ffd0000});
  out["lanes_reply"] = encode(LanesReply{29, 4, ""});
  out["proceed"] = encode(Proceed{28});
  out["input_taken"] = encode(InputTaken{28});
  out["sink_request"] = encode(SinkRequest{30});
  out["sink_reply"] = encode(SinkReply{30, 1, 1 << 20, ""});
  FftShape fft;
  fft.kind = FftKind::r2c;
  fft.n = {64, 30};
  fft.batch = 3;
  out["fft_plan"] = encode(FftPlan{22, fft});
  out["fft_release"] = encode(FftRelease{22});
  out["fft_execute"] = encode(FftExecute{23, 22, fft, input_bytes(fft), {}});
  out["fft_execute_resident"] = encode(FftExecute{24, 22, fft, 0, {{0, true, {5, 6}}}});
  FftExecute again{25, 22, fft, 0, {{0, true, {5, 6}}}};
  again.output_known = true, again.output_digest = {7, 8};
  out["fft_execute_output_known"] = encode(again);
  fft.n = {1 << 16};
  out["fft_chunk"] = encode(FftChunk{24, 22, fft, input_bytes(fft), kMinChunkBytes, 3});
  out["direct_fft"] = encode(DirectFft{25, 22, fft, {std::vector<std::byte>(8, std::byte{7})},
                                       {{0x10000, input_bytes(fft), 0}}, {{0x900000, output_bytes(fft), 0}}});
  out["fft_reply"] = encode(FftReply{23, true, "", output_bytes(fft), 1, 2, 3, 4, 5, 6, "cpu"});
  FftReply unchanged{25, true, "", 0, 1, 2, 3, 4, 5, 6, "cuda:0"};
  unchanged.output_unchanged = true;
  out["fft_reply_output_unchanged"] = encode(unchanged);
  // dcuda's proxy messages (their own magic; fuzz_request feeds every input to both decoders).
  auto proxy = [](const wire::dcuda::Message& m) {
    std::vector<std::byte> b;
    wire::dcuda::encode(m, b);
    return b;
  };
  namespace dc = wire::dcuda;
  out["dcuda_hello"] = proxy(dc::Hello{1, std::string(64, 'k')});
  out["dcuda_put"] = proxy(dc::Put{3, 5, 130, 17, 2, 9, 4096, 65536});
  out["dcuda_notify"] = proxy(dc::Put{2, 5, 130, 18, 0xffffffffu, 255, 0, 0});
  out["dcuda_ack"] = proxy(dc::Ack{5, 18});
  out["dcuda_refused"] = proxy(dc::Refused{5, 19, "window 2 of rank 130 is not registered"});
  out["dcuda_arrive"] = proxy(dc::Arrive{3, 2});
  dc::Window win{130, 2, 4096, 65536, 1 << 20, {}};
  for (size_t i = 0; i < win.handle.size(); ++i) win.handle[i] = static_cast<uint8_t>(i * 7);
  out["dcuda_window"] = proxy(win);
  out["dcuda_finished"] = proxy(dc::Finished{});
  out["dcuda_error"] = proxy(dc::Error{"bad key"});
  out["dcuda_welcome"] = proxy(dc::Welcome{});
  return out;
}

// Every alternative of a variant, default-constructed: what a seed must cover.
template <class V, size_t... I>
std::vector<V> alternatives(std::index_sequence<I...>) {
  return {V(std::in_place_index<I>)...};
}
template <class V>
std::vector<V> alternatives() {
  return alternatives<V>(std::make_index_sequence<std::variant_size_v<V>>());
}

// What no seed covers: message types, OpenCL operations, dcuda messages and OpenCL payload
// formats. A type added to the schema without a seed here is reported, so the corpus test fails
// until it joins (DESIGN.md: every new message type joins the fuzz target).
std::vector<std::string> uncovered(const std::map<std::string, std::vector<std::byte>>& all) {
  std::set<size_t> messages, ops, proxy;
  bool snapshot = false, device_list = false, build_result = false;
  auto decodes = [](auto&& f) {
    try {
      f();
      return true;
    } catch (const ProtocolError&) {
      return false;
    }
  };
  for (const auto& [name, bytes] : all) {
    decodes([&] {
      const Message m = decode(bytes);
      messages.insert(m.index());
      if (const auto* r = std::get_if<ClRequest>(&m)) ops.insert(r->op.index());
    });
    decodes([&] { proxy.insert(wire::dcuda::decode(bytes).index()); });
    snapshot |= decodes([&] { decode_cl_snapshot(bytes); });
    device_list |= decodes([&] { decode_cl_device_list(bytes); });
    build_result |= decodes([&] { decode_cl_build_result(bytes); });
  }
  std::vector<std::string> missing;
  const auto all_messages = alternatives<Message>();
  for (size_t i = 0; i < all_messages.size(); ++i)
    if (!messages.count(i)) missing.push_back("message type " + std::to_string(int(type_of(all_messages[i]))));
  const auto all_ops = alternatives<ClOp>();
  for (size_t i = 0; i < all_ops.size(); ++i)
    if (!ops.count(i)) missing.push_back(std::string("OpenCL operation ") + op_name(all_ops[i]));
  for (size_t i = 0; i < std::variant_size_v<wire::dcuda::Message>; ++i)
    if (!proxy.count(i)) missing.push_back("dcuda message " + std::to_string(i));
  if (!snapshot) missing.push_back("OpenCL platform snapshot");
  if (!device_list) missing.push_back("OpenCL device list");
  if (!build_result) missing.push_back("OpenCL build result");
  return missing;
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  const bool check = argc == 3 && std::string(argv[1]) == "--check";
  if (!(argc == 2 || check)) {
    std::fprintf(stderr, "usage: %s [--check] DIR\n", argv[0]);
    return 2;
  }
  const fs::path dir = argv[argc - 1];
  const auto all = seeds();
  if (const auto missing = uncovered(all); !missing.empty()) {
    for (const auto& m : missing) std::fprintf(stderr, "no seed for %s: add one to %s\n", m.c_str(), __FILE__);
    return 1;
  }
  if (!check) {
    fs::create_directories(dir);
    for (const auto& [name, bytes] : all) {
      std::ofstream out(dir / name, std::ios::binary | std::ios::trunc);
      out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
      if (!out) {
        std::fprintf(stderr, "cannot write %s\n", (dir / name).c_str());
        return 1;
      }
    }
    std::printf("wrote %zu seeds to %s\n", all.size(), dir.c_str());
    return 0;
  }
  int stale = 0;
  for (const auto& [name, bytes] : all) {
    std::string want(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    if (!fs::exists(dir / name) || slurp(dir / name) != want) {
      std::fprintf(stderr, "seed %s is missing or stale\n", (dir / name).c_str());
      ++stale;
    }
  }
  for (const auto& entry : fs::directory_iterator(dir))
    if (!all.count(entry.path().filename().string())) {
      std::fprintf(stderr, "unexpected file %s\n", entry.path().c_str());
      ++stale;
    }
  if (stale) {
    std::fprintf(stderr, "regenerate the corpus: fuzz_make_corpus %s\n", dir.c_str());
    return 1;
  }
  std::printf("%zu seeds are up to date\n", all.size());
  return 0;
}
