// The shared secret of a server and its clients, and the keyed MAC (HMAC-SHA-256, libsodium) used
// for challenge-response authentication. A secret file holds 64 hex digits and must be mode 0600.
#pragma once
#include <array>
#include <cstdint>
#include <span>
#include <string>

namespace outboard {

using Secret = std::array<uint8_t, 32>;
using Nonce = std::array<uint8_t, 32>;
using Mac = std::array<uint8_t, 32>;

// Where the secret lives unless configured: $OUTBOARD_TOKEN_FILE, else
// $XDG_CONFIG_HOME/outboard/token, else $HOME/.config/outboard/token.
std::string default_token_path();

// Creates a new random secret file with mode 0600 (and its directory with 0700). Refuses to
// replace an existing file unless overwrite is set.
void write_new_secret(const std::string& path, bool overwrite);

// Reads a secret file; throws Error with a clear message if it is missing, readable by others
// than its owner, or malformed.
Secret read_secret(const std::string& path);

Nonce random_nonce();

// MAC over the concatenation of the parts, keyed with the secret.
Mac compute_mac(const Secret& key, std::initializer_list<std::span<const uint8_t>> parts);
// Constant-time comparison.
bool macs_equal(const Mac& a, const Mac& b);

// The keys of an encrypted session, one per direction, derived once both proofs of the handshake
// are verified: BLAKE2b-256 keyed with the identity's secret over a label naming the direction,
// the client's nonce and the server's nonce. Fresh nonces on both sides make every session's keys
// new; without the secret they cannot be computed from what crossed the wire.
struct SessionKeys {
  std::array<uint8_t, 32> client_to_server{}, server_to_client{};
};
SessionKeys session_keys(const Secret& s, const Nonce& client_nonce, const Nonce& server_nonce);

}  // namespace outboard
