#include "server/config.hpp"

#include <toml++/toml.h>

#include "common/error.hpp"
#include "wire/messages.hpp"

namespace outboard::server {
namespace {

template <class T>
T integer(const toml::node& node, const std::string& key, int64_t lo, int64_t hi) {
  auto v = node.value<int64_t>();
  if (!node.is_integer() || !v || *v < lo || *v > hi)
    throw Error("setting '" + key + "' must be an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return static_cast<T>(*v);
}

std::string text(const toml::node& node, const std::string& key) {
  if (!node.is_string()) throw Error("setting '" + key + "' must be a string");
  return *node.value<std::string>();
}

bool boolean(const toml::node& node, const std::string& key) {
  if (!node.is_boolean()) throw Error("setting '" + key + "' must be true or false");
  return *node.value<bool>();
}

}  // namespace

Config load_config_file(const std::string& path, Config c) {
  toml::table t;
  try {
    t = toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    const auto& where = e.source().begin;
    throw Error("config " + path + ":" + std::to_string(where.line) + ": " + std::string(e.description()));
  }
  for (const auto& [k, node] : t) {
    std::string key(k.str());
    try {
      if (key == "host") c.host = text(node, key);
      else if (key == "port") c.port = integer<uint16_t>(node, key, 0, 65535);
      else if (key == "token_file") c.token_file = text(node, key);
      else if (key == "compute_threads") c.compute_threads = integer<unsigned>(node, key, 1, 1024);
      else if (key == "max_request_bytes") c.max_request_bytes = integer<uint64_t>(node, key, 1, INT64_MAX);
      else if (key == "max_client_bytes") c.max_client_bytes = integer<uint64_t>(node, key, 1, INT64_MAX);
      else if (key == "resident_bytes") c.resident_bytes = integer<uint64_t>(node, key, 0, INT64_MAX);
      else if (key == "resident_total_bytes") c.resident_total_bytes = integer<uint64_t>(node, key, 0, INT64_MAX);
      else if (key == "max_clients") c.max_clients = integer<unsigned>(node, key, 1, 1 << 20);
      else if (key == "lanes") c.lanes = integer<unsigned>(node, key, 1, wire::kMaxLanes);
      else if (key == "lane_threads") c.lane_threads = integer<unsigned>(node, key, 0, wire::kMaxLanes);
      else if (key == "lane_port") c.lane_port = integer<uint16_t>(node, key, 0, 65535);
      else if (key == "gpus") c.gpus = integer<unsigned>(node, key, 0, 1024);
      else if (key == "restart_after_gpu_fault") c.restart_after_gpu_fault = boolean(node, key);
      else if (key == "worker_per_gpu") c.worker_per_gpu = boolean(node, key);
      else if (key == "gpu_memory_bytes") c.gpu_memory_bytes = integer<uint64_t>(node, key, 0, INT64_MAX);
      else if (key == "host_block_columns") c.host_block_columns = integer<uint64_t>(node, key, 1, INT32_MAX);
      else if (key == "copy_lanes") c.copy_lanes = integer<unsigned>(node, key, 0, 256);
      else if (key == "direct_chunk_bytes") c.direct_chunk_bytes = integer<uint64_t>(node, key, 64 << 10, 1ll << 32);
      else if (key == "idle_spin_ns") c.idle_spin_ns = integer<uint64_t>(node, key, 0, 1'000'000);
      else if (key == "fft_threads") c.fft_threads = integer<unsigned>(node, key, 0, 1024);
      else if (key == "fft_planner") c.fft_planner = text(node, key);
      else if (key == "fft_wisdom_file") c.fft_wisdom_file = text(node, key);
      else if (key == "fft_max_plans") c.fft_max_plans = integer<unsigned>(node, key, 1, 1 << 20);
      else if (key == "fft_gpu_memory_bytes") c.fft_gpu_memory_bytes = integer<uint64_t>(node, key, 0, INT64_MAX);
      else if (key == "fft_batch_slices") c.fft_batch_slices = integer<int64_t>(node, key, 1, 64);
      else if (key == "pinned_reserve_bytes") c.pinned_reserve_bytes = integer<int64_t>(node, key, -1, INT64_MAX);
      else if (key == "opencl") c.opencl = boolean(node, key);
      else if (key == "opencl_max_objects") c.opencl_max_objects = integer<uint64_t>(node, key, 1, 1 << 30);
      else if (key == "opencl_max_memory_bytes") c.opencl_max_memory_bytes = integer<uint64_t>(node, key, 0, INT64_MAX);
      else if (key == "opencl_direct_staging_bytes")
        c.opencl_direct_staging_bytes = integer<uint64_t>(node, key, kMinOpenclStagingBytes, INT64_MAX);
      else if (key == "opencl_event_polling") c.opencl_event_polling = text(node, key);
      else if (key == "opencl_write_bytes_in_flight")
        c.opencl_write_bytes_in_flight = integer<uint64_t>(node, key, 0, INT64_MAX);
      else if (key == "opencl_stuck_seconds") c.opencl_stuck_seconds = integer<unsigned>(node, key, 0, 86400);
      else if (key == "identities_dir") c.identities_dir = text(node, key);
      else if (key == "identity_max_sessions") c.identity_max_sessions = integer<unsigned>(node, key, 0, 1 << 20);
      else if (key == "identity_max_bytes") c.identity_max_bytes = integer<uint64_t>(node, key, 0, INT64_MAX);
      else if (key == "identity_max_calls") c.identity_max_calls = integer<unsigned>(node, key, 0, 1 << 20);
      else if (key == "cma_other_users") c.cma_other_users = boolean(node, key);
      else if (key == "encrypt") c.encrypt = boolean(node, key);
      else if (key == "buffer_cache_bytes") c.buffer_cache_bytes = integer<uint64_t>(node, key, 0, INT64_MAX);
      else if (key == "auth_timeout_seconds") {
        auto v = node.value<double>();
        if (!v || !(*v > 0)) throw Error("setting 'auth_timeout_seconds' must be a positive number");
        c.auth_timeout_seconds = *v;
      } else if (key == "gpu_min_flops") {
        auto v = node.value<double>();
        if (!v || !(*v >= 0)) throw Error("setting 'gpu_min_flops' must be a number >= 0");
        c.gpu_min_flops = *v;
      } else if (key == "log_level") c.log_level = text(node, key);
      else if (key == "log_format") c.log_format = text(node, key);
      else if (key == "metrics_host") c.metrics_host = text(node, key);
      else if (key == "metrics_port") c.metrics_port = integer<uint16_t>(node, key, 0, 65535);
      else throw Error("unknown setting '" + key + "'");
    } catch (const Error& e) {
      throw Error("config " + path + ":" + std::to_string(node.source().begin.line) + ": " + e.what());
    }
  }
  return c;
}

void validate(const Config& c) {
  if (c.host.empty()) throw Error("setting 'host' must not be empty");
  if (c.metrics_port != 0 && c.metrics_host.empty()) throw Error("setting 'metrics_host' must not be empty");
  if (c.compute_threads == 0) throw Error("setting 'compute_threads' must be at least 1");
  if (c.max_request_bytes > c.max_client_bytes)
    throw Error("setting 'max_request_bytes' must not exceed 'max_client_bytes'");
  if (c.fft_planner != "estimate" && c.fft_planner != "measure" && c.fft_planner != "patient")
    throw Error("setting 'fft_planner' must be one of estimate, measure, patient");
  if (c.opencl_event_polling != "auto" && c.opencl_event_polling != "poll" && c.opencl_event_polling != "wait")
    throw Error("setting 'opencl_event_polling' must be one of auto, poll, wait");
  if (c.lane_port != 0 && uint32_t(c.lane_port) + c.lane_threads > 65536)
    throw Error("setting 'lane_port' leaves no room for its " + std::to_string(c.lane_threads) +
                " lane threads' ports (lane_port + lane_threads - 1 must not pass 65535)");
  if (c.opencl_direct_staging_bytes < kMinOpenclStagingBytes)
    throw Error("setting 'opencl_direct_staging_bytes' must be at least " + std::to_string(kMinOpenclStagingBytes));
}

}  // namespace outboard::server
