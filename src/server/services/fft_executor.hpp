// What the FFT service needs from a backend: plans for dense problems (wire/fft.hpp), made ahead
// of the data and cached by shape, and executions on dense host arrays. Executors keep their own
// plan caches (bounded, least recently used first out) shared by all sessions.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "server/pipeline.hpp"
#include "wire/fft.hpp"

namespace outboard::server {

struct FftTiming {
  uint64_t plan_wait_ns = 0;  // waiting for the plan (zero when it was made ahead)
  uint64_t to_device_ns = 0, compute_ns = 0, from_device_ns = 0;
};

// The dense result's pieces, sent (wire::ReplyChunk) as each is complete in the staging buffer,
// which holds the input (offset 0) and then the output (offset input_bytes).
struct FftPlanPieces {
  wire::FftShape shape;
  uint64_t input_bytes = 0, output_bytes = 0, staging_bytes = 0;
  std::vector<ResultPiece> pieces;
};
// Pieces of at most `piece_bytes` (whole batch slices where the output has several).
FftPlanPieces plan_fft_pieces(const wire::FftShape& s, uint64_t piece_bytes);

class FftExecutor {
 public:
  virtual ~FftExecutor() = default;
  // "cpu", "cuda:0": where executions ran, for replies and status.
  virtual std::string where() const = 0;
  // Whether this executor runs the shape (cuFFT: rank <= 3 and no r2r, and memory for it).
  virtual bool serves(const wire::FftShape& s) const = 0;
  // Plans ahead: makes the shape's plan (and reserves its memory) unless one is cached. May take
  // long (run it on a compute thread). Throws Error.
  virtual void prepare(const wire::FftShape& s) = 0;
  // One execution, out of place, on dense host arrays; waits for a plan being prepared for the
  // shape rather than making a second. Thread-safe. Throws Error.
  virtual FftTiming execute(const wire::FftShape& s, const std::byte* in, std::byte* out) = 0;
  // Whether execute() leaves `in` as it was (FFTW's plans may overwrite it; a GPU copies it).
  virtual bool preserves_input() const { return false; }
  // A pipelined execution whose input arrives in `staging` (the device copies it as it lands);
  // nullptr where the executor has none (the service then runs execute() once the input is in).
  virtual std::unique_ptr<Pipeline> pipeline(const FftPlanPieces&, std::byte* /*staging*/) { return nullptr; }
  // The plan cache: plans, hits, misses, evictions.
  virtual nlohmann::json describe() const = 0;
};

}  // namespace outboard::server
