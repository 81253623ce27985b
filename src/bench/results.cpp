#include "bench/results.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "common/error.hpp"

namespace outboard::bench {
namespace {

std::string first_line_with(const char* path, const std::string& key) {
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(key, 0) == 0) {
      auto colon = line.find(':');
      std::string v = colon == std::string::npos ? line : line.substr(colon + 1);
      while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.erase(v.begin());
      return v;
    }
  return "";
}

std::string slug(const std::string& name) {
  std::string s;
  for (char c : name) s += std::isalnum(static_cast<unsigned char>(c)) ? static_cast<char>(std::tolower(c)) : '-';
  return s;
}

}  // namespace

nlohmann::json describe_machine() {
  char host[256] = "?";
  gethostname(host, sizeof host - 1);
  utsname u{};
  uname(&u);
  return {{"hostname", host},
          {"cpu", first_line_with("/proc/cpuinfo", "model name")},
          {"cores", sysconf(_SC_NPROCESSORS_ONLN)},
          {"memory", first_line_with("/proc/meminfo", "MemTotal")},
          {"os", first_line_with("/etc/os-release", "PRETTY_NAME=")},
          {"kernel", std::string(u.release)}};
}

nlohmann::json describe_software() {
  return {{"outboard", OUTBOARD_VERSION}};
}

nlohmann::json transfer_series(const std::string& name, const std::string& pattern, const std::vector<Point>& points) {
  nlohmann::json pts = nlohmann::json::array();
  for (const Point& p : points)
    pts.push_back({{"bytes", p.bytes}, {"repeats", p.repeats}, {"seconds", p.seconds}, {"mib_per_s", p.mib_per_s()},
                   {"mbps", p.mbps()}});
  return {{"name", name}, {"kind", "transfer"}, {"pattern", pattern}, {"points", pts}};
}

nlohmann::json new_document(const std::string& mode, const std::string& command) {
  return {{"outboard_bench", 1},
          {"mode", mode},
          {"command", command},
          {"machine", describe_machine()},
          {"software", describe_software()},
          {"series", nlohmann::json::array()}};
}

std::vector<std::string> write_results(const std::string& prefix, const nlohmann::json& doc) {
  std::vector<std::string> files;
  std::string json_path = prefix + ".json";
  {
    std::ofstream out(json_path);
    out << doc.dump(2) << "\n";
    if (!out) throw Error("cannot write " + json_path);
  }
  files.push_back(json_path);
  for (const auto& s : doc["series"]) {
    if (s.value("kind", "") != "transfer") continue;
    std::vector<Point> pts;
    for (const auto& p : s["points"]) pts.push_back({p["bytes"], p["repeats"], p["seconds"]});
    std::string path = prefix + "-" + slug(s["name"].get<std::string>()) + ".np";
    write_netpipe(path, pts);
    files.push_back(path);
  }
  return files;
}

}  // namespace outboard::bench
