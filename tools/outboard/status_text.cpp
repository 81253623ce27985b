#include "tools/outboard/status_text.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace outboard::tool {
namespace {

using nlohmann::json;

// A member's value, or `fallback` where it is missing or of another type (a server of another
// version).
template <class T>
T get(const json& j, const char* key, T fallback) {
  if (!j.is_object()) return fallback;
  auto it = j.find(key);
  if (it == j.end()) return fallback;
  try {
    return it->get<T>();
  } catch (const json::exception&) {
    return fallback;
  }
}
uint64_t count(const json& j, const char* key) { return get<uint64_t>(j, key, 0); }
std::string text(const json& j, const char* key) { return get<std::string>(j, key, ""); }

std::string format(const char* fmt, auto... args) {
  char buf[512];
  std::snprintf(buf, sizeof buf, fmt, args...);
  return buf;
}

// One "  label   value" line of a section, labels aligned.
void line(std::string& out, const std::string& label, const std::string& value) {
  out += format("  %-13s %s\n", label.c_str(), value.c_str());
}

// "dgemm 3, dtrsm 1", most called first.
std::string routines(const json& by_routine) {
  std::vector<std::pair<std::string, uint64_t>> v;
  if (by_routine.is_object())
    for (auto it = by_routine.begin(); it != by_routine.end(); ++it)
      if (it->is_number_unsigned()) v.emplace_back(it.key(), it->get<uint64_t>());
  std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string s;
  for (const auto& [name, n] : v) s += (s.empty() ? "" : ", ") + name + " " + std::to_string(n);
  return s.empty() ? "none yet" : s;
}

std::string fft_text(const json& f) {
  std::string s = text(f, "library");
  if (s.empty()) s = text(f, "executor");
  std::string planner = text(f, "planner");
  s += format(" (%s%s%llu plans, %llu hits)", planner.c_str(), planner.empty() ? "" : " planner, ",
              (unsigned long long)count(f, "plans"), (unsigned long long)count(f, "hits"));
  return s;
}

void backend(std::string& out, const json& b) {
  std::string name = text(b, "name");
  if (name.empty()) name = b.contains("platforms") ? "opencl" : "backend";
  if (name == "cuda") {
    const json& health = b.contains("health") ? b["health"] : json::object();
    const std::string state = text(health, "state");
    std::string s = format("%s, %s, compute %s, PCIe %s: %s; %llu uses, %llu faults, %llu recoveries",
                           text(b, "gpu").c_str(), human_bytes(count(b, "memory_bytes")).c_str(),
                           text(b, "compute_capability").c_str(), text(b, "pcie").c_str(),
                           state.empty() ? "state unknown" : state.c_str(), (unsigned long long)count(health, "uses"),
                           (unsigned long long)count(health, "faults"), (unsigned long long)count(health, "recoveries"));
    if (health.contains("last_fault")) s += "; last fault: " + text(health, "last_fault");
    line(out, format("cuda %d", get<int>(b, "device", 0)), s);
    if (b.contains("fft")) line(out, "", "cuFFT " + fft_text(b["fft"]));
    return;
  }
  if (name == "opencl") {
    std::string s;
    if (b.contains("platforms") && b["platforms"].is_array())
      for (const auto& p : b["platforms"]) s += (s.empty() ? "" : "; ") + text(p, "name") + " (" + text(p, "version") + ")";
    const uint64_t devices = count(b, "devices");
    line(out, "opencl", format("%s; %llu device%s", s.c_str(), (unsigned long long)devices, devices == 1 ? "" : "s"));
    return;
  }
  std::string s = text(b, "library");
  if (b.contains("threads")) s += format(" (%llu threads)", (unsigned long long)count(b, "threads"));
  line(out, name, s.empty() ? b.dump() : s);
  if (b.contains("fft")) line(out, "", "FFTW " + fft_text(b["fft"]));
}

}  // namespace

std::string human_bytes(uint64_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + " B";
  static const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = static_cast<double>(bytes) / 1024;
  int u = 0;
  while (v >= 1024 && u < 5) v /= 1024, ++u;
  return format(v < 10 ? "%.2f %s" : v < 100 ? "%.1f %s" : "%.0f %s", v, kUnits[u]);
}

std::string human_seconds(double seconds) {
  if (!(seconds >= 0)) return "?";
  if (seconds < 10) return format("%.2f s", seconds);
  if (seconds < 60) return format("%.0f s", seconds);
  const auto s = static_cast<uint64_t>(std::llround(seconds));
  if (s < 3600) return format("%llu min %02llu s", (unsigned long long)(s / 60), (unsigned long long)(s % 60));
  if (s < 86400) return format("%llu h %02llu min", (unsigned long long)(s / 3600), (unsigned long long)(s % 3600 / 60));
  return format("%llu d %llu h", (unsigned long long)(s / 86400), (unsigned long long)(s % 86400 / 3600));
}

std::string status_text(const json& doc) {
  std::string out;
  out += format("Server %s at %s (outboard %s, pid %llu)\n", text(doc, "server").c_str(), text(doc, "listen").c_str(),
                text(doc, "version").c_str(), (unsigned long long)count(doc, "pid"));
  line(out, "up", human_seconds(get<double>(doc, "uptime_seconds", -1)));
  if (doc.contains("worker") && count(doc["worker"], "of") > 1) {
    std::string others;
    if (doc["worker"].contains("sibling_ports"))
      for (const auto& p : doc["worker"]["sibling_ports"]) others += (others.empty() ? "" : ", ") + p.dump();
    line(out, "worker",
         format("%llu of %llu (a process per GPU; the others on ports %s: --server HOST:PORT)",
                (unsigned long long)count(doc["worker"], "index"), (unsigned long long)count(doc["worker"], "of"),
                others.empty() ? "not yet known" : others.c_str()));
  }
  line(out, "encryption", get<bool>(doc, "encrypt", false) ? "required" : "off");
  const json& restarts = doc.contains("restarts") ? doc["restarts"] : json::object();
  std::string r = std::to_string(count(restarts, "count"));
  if (!text(restarts, "last_reason").empty()) r += " (last: " + text(restarts, "last_reason") + ")";
  line(out, "restarts", r);
  const json& load = doc.contains("load") ? doc["load"] : json::object();
  line(out, "calls", format("%llu, errors %llu, in progress %llu", (unsigned long long)count(doc, "calls"),
                            (unsigned long long)count(doc, "errors"), (unsigned long long)count(load, "calls")));
  line(out, "connections", format("%llu, refused authentications %llu, sessions now %llu",
                                  (unsigned long long)count(doc, "connections"),
                                  (unsigned long long)count(doc, "refused_authentications"),
                                  (unsigned long long)count(load, "sessions")));
  line(out, "memory held", format("%s for calls, %s of buffers", human_bytes(count(doc, "held_bytes")).c_str(),
                                  human_bytes(count(doc, "buffer_bytes")).c_str()));

  out += "\nBackends\n";
  if (doc.contains("backends") && doc["backends"].is_array())
    for (const auto& b : doc["backends"]) backend(out, b);

  out += "\nServices\n";
  line(out, "routines", routines(doc.contains("calls_by_routine") ? doc["calls_by_routine"] : json()));
  line(out, "pipelined", format("%llu calls; %llu on the direct path", (unsigned long long)count(doc, "pipelined_calls"),
                                (unsigned long long)count(doc, "direct_calls")));
  if (doc.contains("fft"))
    line(out, "FFT plans", format("%llu made ahead, %llu of sessions, %llu over the limit",
                                  (unsigned long long)count(doc["fft"], "plans_made_ahead"),
                                  (unsigned long long)count(doc["fft"], "session_plans"),
                                  (unsigned long long)count(doc["fft"], "plans_over_limit")));
  if (doc.contains("resident")) {
    const json& res = doc["resident"];
    line(out, "resident", format("%s kept of %s; %llu hits, %llu misses; %s not sent again; %llu results (%s) not sent back",
                                 human_bytes(count(res, "bytes")).c_str(), human_bytes(count(res, "limit")).c_str(),
                                 (unsigned long long)count(res, "hits"), (unsigned long long)count(res, "misses"),
                                 human_bytes(count(res, "bytes_not_sent")).c_str(),
                                 (unsigned long long)count(res, "results_not_sent"),
                                 human_bytes(count(res, "result_bytes_not_sent")).c_str()));
  }
  if (doc.contains("lanes"))
    line(out, "lanes", format("%llu offered, %llu open, %llu joined", (unsigned long long)count(doc["lanes"], "offered"),
                              (unsigned long long)count(doc["lanes"], "open"),
                              (unsigned long long)count(doc["lanes"], "joined")));
  if (doc.contains("opencl")) {
    const json& cl = doc["opencl"];
    line(out, "OpenCL", format("%llu sessions, %llu objects, %llu operations, %llu kernels, %llu failures",
                               (unsigned long long)count(cl, "sessions"), (unsigned long long)count(cl, "objects"),
                               (unsigned long long)count(cl, "operations"), (unsigned long long)count(cl, "kernels"),
                               (unsigned long long)count(cl, "failures")));
    line(out, "", format("%s written, %s read (%s and %s on the direct path)",
                         human_bytes(count(cl, "bytes_written")).c_str(), human_bytes(count(cl, "bytes_read")).c_str(),
                         human_bytes(count(cl, "direct_bytes_written")).c_str(),
                         human_bytes(count(cl, "direct_bytes_read")).c_str()));
    // A native call that has not returned: its platform refuses new work until it does.
    if (cl.contains("stuck") && cl["stuck"].is_array())
      for (const auto& s : cl["stuck"])
        line(out, "", format("STUCK: %s on \"%s\" has not returned for %s (session %llu); new work there is refused",
                             text(s, "operation").c_str(), text(s, "platform").c_str(),
                             human_seconds(get<double>(s, "seconds", -1)).c_str(),
                             (unsigned long long)count(s, "session")));
  }

  const json& clients = doc.contains("clients") && doc["clients"].is_array() ? doc["clients"] : json::array();
  out += format("\nClients (%zu)\n", clients.size());
  if (!clients.empty()) {
    out += format("  %-5s %-22s %-30s %-10s %11s %8s %6s %10s %10s\n", "ID", "ADDRESS", "CLIENT", "IDENTITY",
                  "CONNECTED", "CALLS", "ERRORS", "IN", "OUT");
    for (const auto& c : clients)
      out += format("  %-5llu %-22s %-30s %-10s %11s %8llu %6llu %10s %10s\n", (unsigned long long)count(c, "id"),
                    text(c, "address").c_str(), text(c, "client").c_str(), text(c, "identity").c_str(),
                    human_seconds(get<double>(c, "connected_seconds", -1)).c_str(), (unsigned long long)count(c, "calls"),
                    (unsigned long long)count(c, "errors"), human_bytes(count(c, "bytes_in")).c_str(),
                    human_bytes(count(c, "bytes_out")).c_str());
  }
  if (count(doc, "clients_not_listed") > 0)
    out += format("  (%llu more not listed)\n", (unsigned long long)count(doc, "clients_not_listed"));
  return out;
}

}  // namespace outboard::tool
