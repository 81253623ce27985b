// Sealing of messages for encrypted sessions (Worker::protect): every header and payload between
// two peers is encrypted and authenticated with an AEAD, keyed per direction, numbered per
// direction. Pure computation, no UCX: the Worker calls it for every message of a protected peer,
// and unit tests call it directly.
//
// Cipher: ChaCha20-Poly1305 (IETF, libsodium's crypto_aead_chacha20poly1305_ietf, detached tags).
// Chosen over AES-256-GCM because it is constant-time in software on every CPU, so both ends
// always have it and no cipher needs negotiating (libsodium offers AES-GCM only where the CPU has
// AES-NI and PCLMUL, and an ARM server would then speak a different cipher than an x86 client);
// its 96-bit nonce is built from the message counter, never random, so it never repeats within
// a key, and every session has keys of its own (common/secret.hpp: session_keys).
//
// A sealed header, what travels as the active message's header:
//   magic "OBSL" (u32) | counter (u64) | payload_bytes (u64, plaintext) | header ciphertext | tag (16)
// The first 20 bytes are the additional data of every AEAD of the message. The payload travels
// as its ciphertext, in pieces of kSealPiece bytes (the last shorter), followed by one tag per
// piece: sealed_payload_bytes(payload_bytes) bytes in all. Nonce of the header: counter (8 bytes,
// little-endian) | 0xffffffff; of piece i: counter | i. Pieces let large payloads be sealed and
// opened in parallel (payloads of 1 MiB and more are spread over a small pool of threads,
// OUTBOARD_SEAL_THREADS, default up to 4), and bound what is decrypted before its tag is checked.
//
// Order: the receiver accepts only the counter it expects next (0, 1, 2, ...), so a replayed,
// dropped or reordered message ends the session; a sealed header is opened (and its counter
// checked) when it arrives, which is the order the sender sent in (transport.hpp: Worker).
// Why arrival is send order: UCX sends an endpoint's eager messages and rendezvous requests (RTS)
// on its one active-message lane (UCX_MAX_EAGER_LANES is 1 by default), a lane is a FIFO (a
// shared-memory queue, a TCP stream, an RC queue pair), and UCT answers "no resource" to a send
// while earlier ones wait in the lane's pending queue, so none overtakes another. Rendezvous data
// may use several lanes, but a payload is opened only once it has all landed, by the counter its
// header had. What is NOT in send order is delivery to the layer above: a rendezvous message is
// delivered when its data has landed, after eager messages sent later (Worker does that with or
// without encryption, and the services already allow for it), so order is decided at arrival,
// where on_payload first sees the header, not at on_message.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "transport/transport.hpp"

namespace outboard::transport {

using SealKey = std::array<uint8_t, 32>;
struct SealKeys {
  SealKey send{}, receive{};  // this side's sending and receiving direction
};

inline constexpr uint32_t kSealMagic = 0x4C53424F;  // "OBSL"
inline constexpr size_t kSealPrefix = 20;             // magic, counter, payload_bytes
inline constexpr size_t kSealTag = 16;
inline constexpr size_t kSealHeaderOverhead = kSealPrefix + kSealTag;
inline constexpr uint64_t kSealPiece = 256 * 1024;
// Largest payload a sealed message carries: piece indices stay below 2^32 - 1.
inline constexpr uint64_t kSealMaxPayload = kSealPiece * 0xfffffffeull;

inline uint64_t seal_pieces(uint64_t payload_bytes) { return (payload_bytes + kSealPiece - 1) / kSealPiece; }
inline uint64_t sealed_payload_bytes(uint64_t payload_bytes) {
  return payload_bytes + kSealTag * seal_pieces(payload_bytes);
}

// What is wrong with a sealed message; the session ends with what().
class SealError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One peer's sealing state: both keys and both counters. Not thread-safe (the Worker's thread),
// except that seal_payload and open_payload only read the keys.
class Seal {
 public:
  explicit Seal(const SealKeys& keys);
  ~Seal();
  Seal(const Seal&) = delete;
  Seal& operator=(const Seal&) = delete;

  // Seals the next message's header into `out` (replaced; header.size() + kSealHeaderOverhead
  // bytes) and returns its counter.
  uint64_t seal_header(std::span<const std::byte> header, uint64_t payload_bytes, std::vector<std::byte>& out);
  // Seals message `counter`'s payload, the concatenation of `payload` (payload_bytes in all), into
  // `out` (sealed_payload_bytes(payload_bytes)). Independent of the counters: may run on any
  // thread, and its pieces [first, last) apart (see seal_pieces).
  void seal_payload(uint64_t counter, std::span<const Segment> payload, uint64_t payload_bytes, std::byte* out,
                    uint64_t first = 0, uint64_t last = UINT64_MAX) const;

  struct Opened {
    uint64_t counter = 0;
    uint64_t payload_bytes = 0;
  };
  // Opens the next arriving header into `header` (its plaintext). Throws SealError when it is not
  // a sealed message, fails authentication, or is not the one expected next (replayed or out
  // of order); nothing changes then.
  Opened open_header(std::span<const std::byte> sealed, std::vector<std::byte>& header);
  // Opens message `counter`'s payload: `sealed` (must be sealed_payload_bytes(payload_bytes))
  // into `out` (payload_bytes; may be sealed.data(): in place). Throws SealError.
  void open_payload(uint64_t counter, std::span<const std::byte> sealed, uint64_t payload_bytes, std::byte* out) const;

  uint64_t sent() const { return sent_; }
  uint64_t received() const { return received_; }

 private:
  SealKeys keys_;
  uint64_t sent_ = 0, received_ = 0;
};

}  // namespace outboard::transport
