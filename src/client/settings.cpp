#include "client/settings.hpp"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <optional>

#include "common/error.hpp"
#include "common/secret.hpp"
#include "wire/messages.hpp"

namespace outboard::client {
namespace {

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

void number(const char* name, double& out, double lo, std::vector<std::string>& problems) {
  const char* v = env(name);
  if (!v) return;
  char* end = nullptr;
  double d = std::strtod(v, &end);
  if (end == v || *end != '\0' || !(d >= lo))
    problems.push_back(std::string(name) + "='" + v + "' is not a number >= " + std::to_string(lo));
  else
    out = d;
}

}  // namespace

std::string ServerAddress::text() const {
  return (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

ServerAddress parse_server_address(const std::string& t) {
  std::string host = t, port;
  bool has_port = false;
  if (!t.empty() && t.front() == '[') {
    size_t close = t.find(']');
    if (close == std::string::npos) throw Error("server address '" + t + "': missing ']'");
    host = t.substr(1, close - 1);
    if (close + 1 < t.size()) {
      if (t[close + 1] != ':') throw Error("server address '" + t + "': expected ':' after ']'");
      port = t.substr(close + 2);
      has_port = true;
    }
  } else if (size_t colon = t.find(':'); colon != std::string::npos) {
    if (t.find(':', colon + 1) != std::string::npos)
      throw Error("server address '" + t + "': write IPv6 addresses in brackets, e.g. [::1]:7700");
    host = t.substr(0, colon);
    port = t.substr(colon + 1);
    has_port = true;
  }
  if (host.empty()) throw Error("server address '" + t + "': empty host");
  uint16_t p = kDefaultPort;
  if (has_port) {
    bool digits = !port.empty() && port.size() <= 5 &&
                  port.find_first_not_of("0123456789") == std::string::npos;
    long v = digits ? std::strtol(port.c_str(), nullptr, 10) : 0;
    if (v < 1 || v > 65535) throw Error("server address '" + t + "': bad port '" + port + "'");
    p = static_cast<uint16_t>(v);
  }
  return {host, p};
}

// A hostfile: one server address per line; blank lines and text after '#' are ignored. The
// addresses as one comma-separated list, or nothing when the file cannot be read.
std::optional<std::string> read_hostfile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::string list, line;
  while (std::getline(in, line)) {
    line = line.substr(0, line.find('#'));
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    list += (list.empty() ? "" : ",") + line;
  }
  return list;
}

Settings settings_from_environment() {
  Settings s;
  std::string list;
  const char* home = env("HOME");
  if (const char* v = env("OUTBOARD_SERVERS")) list = v;
  else if (const char* r = env("RCPU_SERVER")) list = r;
  else if (auto user = home ? read_hostfile(std::string(home) + "/.config/outboard/hosts") : std::nullopt) list = *user;
  else if (auto system = read_hostfile("/etc/outboard/hosts")) list = *system;
  size_t pos = 0;
  while (pos <= list.size() && !list.empty()) {
    size_t comma = list.find(',', pos);
    std::string item = list.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    while (!item.empty() && std::isspace(static_cast<unsigned char>(item.front()))) item.erase(item.begin());
    while (!item.empty() && std::isspace(static_cast<unsigned char>(item.back()))) item.pop_back();
    if (!item.empty()) {
      try {
        s.servers.push_back(parse_server_address(item));
      } catch (const Error& e) {
        s.problems.push_back(e.what());
      }
    }
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  if (s.servers.empty()) s.servers.push_back({"127.0.0.1", kDefaultPort});
  s.token_file = default_token_path();
  if (const char* v = env("OUTBOARD_IDENTITY")) s.identity = v;
  if (const char* v = env("OUTBOARD_OFFLOAD")) {
    std::string m = v;
    if (m == "auto") s.offload = OffloadMode::automatic;
    else if (m == "always") s.offload = OffloadMode::always;
    else if (m == "never") s.offload = OffloadMode::never;
    else s.problems.push_back("OUTBOARD_OFFLOAD='" + m + "' is not one of auto, always, never");
  }
  if (const char* v = env("OUTBOARD_AUTO_RULE")) {
    std::string m = v;
    if (m == "model" || m == "flops") s.auto_rule = m == "model" ? AutoRule::model : AutoRule::flops;
    else s.problems.push_back("OUTBOARD_AUTO_RULE='" + m + "' is not one of model, flops");
  }
  if (const char* v = env("OUTBOARD_FALLBACK")) {
    std::string m = v;
    if (m == "local") s.fallback = FallbackMode::local;
    else if (m == "fail") s.fallback = FallbackMode::fail;
    else s.problems.push_back("OUTBOARD_FALLBACK='" + m + "' is not one of local, fail");
  }
  if (const char* v = env("OUTBOARD_REPORT")) s.report = std::string(v) != "0";
  if (const char* v = env("OUTBOARD_CONNECT_EARLY")) {
    std::string m = v;
    if (m == "1" || m == "0") s.connect_early = m == "1";
    else s.problems.push_back("OUTBOARD_CONNECT_EARLY='" + m + "' is not 1 or 0");
  }
  if (const char* v = env("OUTBOARD_ENCRYPT")) {
    std::string m = v;
    if (m == "1" || m == "0") s.encrypt = m == "1";
    else s.problems.push_back("OUTBOARD_ENCRYPT='" + m + "' is not 1 or 0");
  }
  if (const char* v = env("OUTBOARD_TRACE")) s.trace_file = v;
  if (const char* v = env("OUTBOARD_MODEL_FILE")) s.model_file = v;
  number("OUTBOARD_MIN_FLOPS", s.min_flops, 0, s.problems);
  number("OUTBOARD_RETRY_SECONDS", s.retry_seconds, 0, s.problems);
  number("OUTBOARD_TIMEOUT", s.timeout_seconds, 0, s.problems);
  number("OUTBOARD_CONNECT_TIMEOUT", s.connect_timeout_seconds, 0.001, s.problems);
  number("OUTBOARD_CHUNK_BYTES", s.chunk_bytes, 0, s.problems);
  if (s.chunk_bytes != 0 && (s.chunk_bytes < wire::kMinChunkBytes || s.chunk_bytes != std::floor(s.chunk_bytes))) {
    s.problems.push_back("OUTBOARD_CHUNK_BYTES must be 0 or a whole number >= " + std::to_string(wire::kMinChunkBytes));
    s.chunk_bytes = Settings{}.chunk_bytes;
  }
  number("OUTBOARD_CHUNK_WINDOW", s.chunk_window, 1, s.problems);
  if (s.chunk_window > 1024 || s.chunk_window != std::floor(s.chunk_window)) {
    s.problems.push_back("OUTBOARD_CHUNK_WINDOW must be a whole number from 1 to 1024");
    s.chunk_window = Settings{}.chunk_window;
  }
  number("OUTBOARD_LANES", s.lanes, 1, s.problems);
  if (s.lanes > wire::kMaxLanes || s.lanes != std::floor(s.lanes)) {
    s.problems.push_back("OUTBOARD_LANES must be a whole number from 1 to " + std::to_string(wire::kMaxLanes));
    s.lanes = Settings{}.lanes;
  }
  if (const char* v = env("OUTBOARD_CL_LANES")) {
    const std::string m = v;
    if (m == "0") s.cl_lanes = Settings::ClLanes::none;
    else if (m == "1") s.cl_lanes = Settings::ClLanes::all;
    else if (m == "reads") s.cl_lanes = Settings::ClLanes::reads;
    else s.problems.push_back("OUTBOARD_CL_LANES='" + m + "' is not 0, 1 or reads");
  }
  number("OUTBOARD_CACHE_BYTES", s.cache_bytes, 0, s.problems);
  if (const char* v = env("OUTBOARD_DIRECT")) {
    std::string m = v;
    // remote: as a client on another host (no CMA; UCX's copies unless they run over TCP).
    if (m == "1" || m == "0" || m == "ucx" || m == "remote")
      s.direct = m != "0", s.direct_cma = m == "1", s.direct_over_tcp = m == "ucx";
    else
      s.problems.push_back("OUTBOARD_DIRECT='" + m + "' is not 1, 0, remote or ucx");
  }
  number("OUTBOARD_COPY_THREADS", s.copy_threads, 1, s.problems);
  if (s.copy_threads > 64 || s.copy_threads != std::floor(s.copy_threads)) {
    s.problems.push_back("OUTBOARD_COPY_THREADS must be a whole number from 1 to 64");
    s.copy_threads = Settings{}.copy_threads;
  }
  number("OUTBOARD_SPLIT_SERVERS", s.split_servers, 1, s.problems);
  if (s.split_servers > 64 || s.split_servers != std::floor(s.split_servers)) {
    s.problems.push_back("OUTBOARD_SPLIT_SERVERS must be a whole number from 1 to 64");
    s.split_servers = Settings{}.split_servers;
  }
  number("OUTBOARD_SPLIT_FLOPS", s.split_flops, 0, s.problems);
  number("OUTBOARD_SPLIT_FFT_BYTES", s.split_fft_bytes, 0, s.problems);
  for (auto [name, value] : {std::pair{"OUTBOARD_FFT_LOCAL_GFLOPS", &s.fft_local_gflops},
                              std::pair{"OUTBOARD_LOCAL_GFLOPS", &s.local_gflops},
                              std::pair{"OUTBOARD_SERVER_GFLOPS", &s.server_gflops},
                              std::pair{"OUTBOARD_LINK_GBYTES", &s.link_gbytes}}) {
    number(name, *value, 1e-6, s.problems);
  }
  if (const char* v = env("OUTBOARD_RESIDENT")) {
    std::string m = v;
    if (m == "1" || m == "0") s.resident = m == "1";
    else s.problems.push_back("OUTBOARD_RESIDENT='" + m + "' is not 1 or 0");
  }
  number("OUTBOARD_RESIDENT_MIN_BYTES", s.resident_min_bytes, 4096, s.problems);
  number("OUTBOARD_LINK_PROBE_BYTES", s.link_probe_bytes, 0, s.problems);
  if (s.link_probe_bytes > double(1 << 30)) {
    s.problems.push_back("OUTBOARD_LINK_PROBE_BYTES must be at most 1073741824");
    s.link_probe_bytes = Settings{}.link_probe_bytes;
  }
  return s;
}

}  // namespace outboard::client
