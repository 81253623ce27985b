// outboard bench seal: what one core seals and opens per second (encrypted sessions), beside the
// raw AEADs libsodium offers and a plain memcpy: the bound an encrypted session's throughput
// meets before the network does (docs/servers.md: Encryption).
#include <sodium.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#include "common/clock.hpp"
#include "common/error.hpp"
#include "common/secret.hpp"
#include "tools/outboard/bench_common.hpp"
#include "transport/buffer.hpp"
#include "transport/seal.hpp"

namespace outboard::tool {
namespace {

int run_seal(const std::vector<uint64_t>& sizes) {
  if (sodium_init() < 0) throw Error("libsodium could not be initialised");
  SessionKeys k = session_keys(Secret{}, random_nonce(), random_nonce());
  transport::Seal tx({k.client_to_server, k.server_to_client}), rx({k.server_to_client, k.client_to_server});
  const bool aes = crypto_aead_aes256gcm_is_available();
  std::printf("one core, GB/s (1e9 bytes/s)\n%12s %10s %10s %14s %14s %10s\n", "bytes", "seal", "open",
              "chacha20-ietf", "aes256gcm", "memcpy");
  for (uint64_t bytes : sizes) {
    transport::Buffer plain = transport::Buffer::allocate(bytes), wire = transport::Buffer::allocate(transport::sealed_payload_bytes(bytes)),
                      out = transport::Buffer::allocate(bytes);
    std::memset(plain.data(), 0x5a, bytes);
    transport::Segment seg{plain.data(), bytes};
    std::vector<std::byte> header;
    const uint64_t counter = tx.seal_header({}, bytes, header);
    tx.seal_payload(counter, {&seg, 1}, bytes, wire.data());
    std::vector<std::byte> opened;
    rx.open_header(header, opened);
    const double seal = best_gbytes(bytes, [&] { tx.seal_payload(counter, {&seg, 1}, bytes, wire.data()); });
    const double open = best_gbytes(bytes, [&] { rx.open_payload(counter, {wire.data(), wire.size()}, bytes, out.data()); });
    unsigned char tag[16], nonce[12] = {}, key[32] = {};
    auto* p = reinterpret_cast<unsigned char*>(plain.data());
    auto* c = reinterpret_cast<unsigned char*>(wire.data());
    const double chacha = best_gbytes(bytes, [&] {
      crypto_aead_chacha20poly1305_ietf_encrypt_detached(c, tag, nullptr, p, bytes, nullptr, 0, nullptr, nonce, key);
    });
    double gcm = 0;
    if (aes)
      gcm = best_gbytes(bytes, [&] {
        crypto_aead_aes256gcm_encrypt_detached(c, tag, nullptr, p, bytes, nullptr, 0, nullptr, nonce, key);
      });
    const double copy = best_gbytes(bytes, [&] { std::memcpy(out.data(), plain.data(), bytes); });
    char gcm_cell[32] = "n/a";
    if (aes) std::snprintf(gcm_cell, sizeof gcm_cell, "%.2f", gcm);
    std::printf("%12llu %10.2f %10.2f %14.2f %14s %10.2f\n", (unsigned long long)bytes, seal, open, chacha, gcm_cell, copy);
  }
  return 0;
}

}  // namespace

void add_bench_seal_mode(CLI::App* bench, BenchModes& modes) {
  auto sizes = std::make_shared<std::vector<uint64_t>>(std::vector<uint64_t>{65536, 1 << 20, 16 << 20});
  auto* cmd = bench->add_subcommand("seal", "One core's sealing and opening rate (encrypted sessions) beside libsodium's raw AEADs and memcpy");
  cmd->add_option("--sizes", *sizes, "Payload sizes in bytes")->capture_default_str();
  modes.emplace_back(cmd, [=] { return run_seal(*sizes); });
}

}  // namespace outboard::tool
