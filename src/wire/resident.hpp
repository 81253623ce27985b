// Resident inputs (issue 36 item 5) on the wire: which of a call's inputs the server holds from
// earlier calls (by the digest of their bytes) and which it should keep; carried by Blas3Call,
// LapackRequest and FftExecute.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace outboard::wire {

class Reader;
class Writer;

// A large input that need not travel twice (issue 36 item 5), by a digest of its bytes
// (common/digest.hpp): `use`: not in the payload, the server holds it under `digest`; else sent
// in the payload as usual, and kept under `digest` afterwards. Inputs that the output shares (C
// with beta != 0, trmm/trsm's B) are never resident.
struct ResidentInput {
  uint8_t input = 0;  // its index among the call's inputs
  bool use = false;
  std::array<uint64_t, 2> digest{};
};
inline constexpr size_t kMaxResidentInputs = 4;
// A call that named an input the server no longer holds fails with this message, and nothing
// else: the client sends the call again with the input in the payload.
inline constexpr const char* kResidentMissing = "a resident input is no longer held";
// Checks a call's resident inputs against the byte sizes of its inputs (`shared`: the index of the
// input the output shares, or -1): at most kMaxResidentInputs, each a distinct, non-empty input
// the output does not share. Returns the bytes of those in use (left out of the payload); throws
// ProtocolError otherwise.
uint64_t resident_bytes_in_use(const std::vector<ResidentInput>& resident, const std::vector<uint64_t>& input_bytes,
                               int shared);

// A chunked call's chunks (wire::CallChunk, LapackChunk) that the client does not send: those
// lying wholly inside an input in use (the inputs lie in order from offset 0 of the payload), but
// for the last chunk, which always goes (the call is set up by whichever chunk comes first).
// `resident` must have passed resident_bytes_in_use.
std::vector<bool> held_chunks(const std::vector<ResidentInput>& resident, const std::vector<uint64_t>& input_bytes,
                              uint64_t payload_bytes, uint64_t chunk_bytes);
// Their bytes (each held chunk is a whole chunk: the last is never held).
uint64_t held_chunk_bytes(const std::vector<ResidentInput>& resident, const std::vector<uint64_t>& input_bytes,
                          uint64_t payload_bytes, uint64_t chunk_bytes);
// The same for chunk `index` alone (a chunk as it arrives).
bool chunk_held(const std::vector<ResidentInput>& resident, const std::vector<uint64_t>& input_bytes,
                uint64_t payload_bytes, uint64_t chunk_bytes, uint64_t index);

// What each input kept from one call's memory counts against the resident budgets, so that the
// client's mirror and the server's store agree: the call's memory (`footprint`: it stays allocated
// while any of them is kept) shared out by their sizes, the rounding in the last.
std::vector<uint64_t> footprint_shares(uint64_t footprint, const std::vector<uint64_t>& kept_bytes);

void put_resident(Writer& w, const std::vector<ResidentInput>& v);
std::vector<ResidentInput> get_resident(Reader& r);

}  // namespace outboard::wire
