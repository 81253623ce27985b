// Runs UCX's own ucx_perftest (server and client on loopback) as the yardstick for our
// throughput: the same library and transports, with no Outboard protocol on top.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "bench/placement.hpp"

namespace outboard::bench {

struct PerftestResult {
  double mib_per_s;  // ucx_perftest's "MB/s" is 2^20 bytes per second
  std::string command;
};

// ucp_am_bw with `bytes` per message. With peer_failure, endpoints ask for error handling as
// Outboard's do (ucx_perftest -e, shared memory allowed to handle errors): the same transports
// Outboard can use. nullopt (and why, in `error`) if ucx_perftest is missing or fails.
// With `placement`, ucx_perftest's server runs on its server_cpu and its client on client_cpu.
std::optional<PerftestResult> run_ucx_perftest(uint64_t bytes, int iterations, uint16_t port, bool peer_failure,
                                               const std::optional<Placement>& placement, std::string& error);

}  // namespace outboard::bench
