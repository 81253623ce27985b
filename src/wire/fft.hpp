// An FFT as it travels: the dense problem a server plans and computes, shared by client
// (packing), server (validation, plan cache) and backends (cuFFT, FFTW).
//
// Layout. The program's arrays may be strided, split or batched in any way FFTW's guru interface
// allows; the client packs them into this dense canonical form and the server never sees strides.
// A problem is `batch` transforms of the row-major shape n[0] x ... x n[rank-1], one after another:
//
//   kind  input per transform                     output per transform
//   c2c   prod(n) complex                         prod(n) complex
//   r2c   prod(n) real                            prod(n[0..rank-2]) * (n[rank-1]/2 + 1) complex
//   c2r   prod(n[0..rank-2]) * (n[rank-1]/2 + 1)  prod(n) real
//   r2r   prod(n) real                            prod(n) real
//
// Complex numbers are interleaved (re, im) in the precision's real type. Transforms are FFTW's:
// unnormalised, sign -1 forward and +1 backward (r2c is always -1, c2r +1, r2r has no sign).
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "wire/load.hpp"
#include "wire/resident.hpp"

namespace outboard::wire {

class Reader;
class Writer;

enum class FftPrecision : uint8_t { f32, f64, count_ };
enum class FftKind : uint8_t { c2c, r2c, c2r, r2r, count_ };

inline constexpr size_t kMaxFftRank = 8;           // FFTW's guru interface has no limit; cuFFT stops at 3
inline constexpr int64_t kMaxFftElements = int64_t(1) << 40;  // per array (of one whole problem)
inline constexpr uint8_t kMaxR2rKind = 10;         // FFTW_RODFT11

struct FftShape {
  FftPrecision precision = FftPrecision::f64;
  FftKind kind = FftKind::c2c;
  int8_t sign = -1;                 // c2c: -1 or +1; r2c -1; c2r +1; r2r 0
  std::vector<int64_t> n;           // 1 .. kMaxFftRank sizes, each >= 1
  int64_t batch = 1;                // >= 1
  std::vector<uint8_t> r2r_kinds;   // r2r: one fftw_r2r_kind (0 .. kMaxR2rKind) per dimension; else empty
  bool operator==(const FftShape&) const = default;
};

// Throws ProtocolError unless the shape is valid: known precision and kind, the sign the kind
// takes, rank and sizes in range, r2r kinds only for r2r, and element counts that do not overflow.
void validate(const FftShape& s);

size_t fft_real_bytes(FftPrecision p);      // 4 or 8
int64_t input_elements(const FftShape& s);  // real or complex elements of the whole problem's input
int64_t output_elements(const FftShape& s);
uint64_t input_bytes(const FftShape& s);
uint64_t output_bytes(const FftShape& s);
// Bytes of one transform's input and output (batch slices are these sizes apart).
uint64_t input_bytes_per_transform(const FftShape& s);
uint64_t output_bytes_per_transform(const FftShape& s);
// FFTW's customary estimate: 5 N log2 N per complex transform of N points, half that for real
// transforms, times the batch. For the offload policy and reports.
double flops(const FftShape& s);
// "dft c2c f64 1048576x2" style label for reports and logs: kind, precision, sizes, batch.
std::string shape_name(const FftShape& s);

void encode(Writer& w, const FftShape& s);
FftShape decode_fft_shape(Reader& r);  // validates

// ---- messages (wire/messages.hpp lists them in its Message variant) ----
//
// A plan is a per-session object named by an id the client picks (opaque to the server, scoped to
// the session: one session can never name another's). FftPlan is sent at plan time without
// waiting for an answer: the server prepares the plan (a cuFFT plan and its device memory, or an
// FFTW plan) while the program goes on. Executions name the plan and repeat its shape (their
// payload lands before the plan message is handled, and is sized by it; the server then checks
// that the session has that plan); their payload is the dense input (above), and the reply's the
// dense output. A plan that could not be made fails its executions (the client then runs them
// locally).
struct FftPlan {
  uint64_t plan_id = 0;  // non-zero
  FftShape shape;
};
struct FftRelease {  // the client destroyed the plan; no answer
  uint64_t plan_id = 0;
};
struct FftExecute {  // one execution; payload = input_bytes(shape), answered with an FftReply and the output
  uint64_t call_id = 0;
  uint64_t plan_id = 0;
  FftShape shape;              // the plan's
  uint64_t payload_bytes = 0;  // input_bytes(shape), or 0 where the input is resident and in use
  std::vector<ResidentInput> resident;  // at most the one input
  // The digest (common/digest.hpp) of the program's output array as the call began, sent with a
  // held input (the same execution again): where the result's digest is the same, the program
  // holds the result already and it is not sent back (FftReply::output_unchanged).
  bool output_known = false;
  std::array<uint64_t, 2> output_digest{};
};
// A large execution's input in chunks (as wire::CallChunk): whichever arrives first sets the call
// up; the output comes back in ReplyChunks, then an FftReply without payload.
struct FftChunk {
  uint64_t call_id = 0;
  uint64_t plan_id = 0;
  FftShape shape;              // the plan's
  uint64_t payload_bytes = 0;  // of the whole input: must equal input_bytes(shape)
  uint64_t chunk_bytes = 0;    // at least kMinChunkBytes
  uint64_t chunk_index = 0;    // below chunk_count(payload_bytes, chunk_bytes)
};
struct FftReply {
  uint64_t call_id = 0;
  bool ok = false;
  std::string message;         // why it failed, when !ok
  uint64_t payload_bytes = 0;  // output_bytes(shape) when ok and not chunked, else 0
  // As CallReply's, plus the time the execution waited for its plan to be ready.
  uint64_t receive_ns = 0, queue_ns = 0, to_device_ns = 0, compute_ns = 0, from_device_ns = 0, plan_wait_ns = 0;
  std::string backend;         // where it ran ("cuda:0", "cpu"), for reports and tests
  ServerLoad load;             // the server's, as the reply left
  // The result has FftExecute::output_digest: the program's output array holds it already, and
  // it was not sent (payload_bytes 0).
  bool output_unchanged = false;
};

void encode_body(Writer& w, const FftPlan& m);
void encode_body(Writer& w, const FftRelease& m);
void encode_body(Writer& w, const FftExecute& m);
void encode_body(Writer& w, const FftChunk& m);
void encode_body(Writer& w, const FftReply& m);
// Bounds-checked, as wire::decode: throw ProtocolError.
FftPlan decode_fft_plan(Reader& r);
FftRelease decode_fft_release(Reader& r);
FftExecute decode_fft_execute(Reader& r);
FftChunk decode_fft_chunk(Reader& r);
FftReply decode_fft_reply(Reader& r);

}  // namespace outboard::wire
