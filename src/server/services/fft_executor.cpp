#include "server/services/fft_executor.hpp"

#include <algorithm>

namespace outboard::server {

FftPlanPieces plan_fft_pieces(const wire::FftShape& s, uint64_t piece_bytes) {
  FftPlanPieces p;
  p.shape = s;
  p.input_bytes = wire::input_bytes(s);
  p.output_bytes = wire::output_bytes(s);
  p.staging_bytes = p.input_bytes + p.output_bytes;
  // Whole transforms per piece where one fits, so a client can scatter each piece on arrival.
  const uint64_t per = wire::output_bytes_per_transform(s);
  uint64_t bytes = std::max<uint64_t>(piece_bytes, 1);
  if (per <= bytes) bytes = bytes / per * per;
  for (uint64_t at = 0; at < p.output_bytes; at += bytes)
    p.pieces.push_back({p.input_bytes + at, std::min(bytes, p.output_bytes - at), at});
  return p;
}

}  // namespace outboard::server
