#include "bench/server_samples.hpp"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

namespace outboard::bench {
namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

std::optional<ProcessSample> read_process(pid_t pid) {
  const std::string dir = "/proc/" + std::to_string(pid);
  std::ifstream status(dir + "/status");
  if (!status) return std::nullopt;
  ProcessSample s;
  bool rss = false, threads = false;
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmRSS:", 0) == 0) s.rss_bytes = std::stoll(line.substr(6)) * 1024, rss = true;  // "VmRSS:  1234 kB"
    else if (line.rfind("Threads:", 0) == 0) s.threads = std::stoll(line.substr(8)), threads = true;
  }
  if (!rss || !threads) return std::nullopt;  // a zombie has no VmRSS
  // utime and stime are fields 14 and 15; the name (field 2) may hold spaces, not a ')'.
  std::ifstream stat(dir + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const size_t close = text.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(text.substr(close + 2));
  std::string skip;
  for (int field = 3; field < 14; ++field) fields >> skip;
  unsigned long long utime = 0, stime = 0;
  if (!(fields >> utime >> stime)) return std::nullopt;
  s.cpu_seconds = static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator(dir + "/fd", ec); !ec && it != std::filesystem::directory_iterator();
       it.increment(ec))
    ++s.fds;
  if (ec) return std::nullopt;
  return s;
}

std::optional<Trend> thirds_trend(const std::vector<double>& values) {
  const size_t n = values.size();
  if (n < 3) return std::nullopt;
  const size_t third = n / 3;
  Trend t;
  t.first = median({values.begin(), values.begin() + third});
  t.last = median({values.end() - third, values.end()});
  t.values = n;
  return t;
}

}  // namespace outboard::bench
