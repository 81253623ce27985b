// outboard bench soak --clients N --seconds S: N client processes for S seconds making mixed,
// checked calls of every offloaded API through the real offload path (soak_clients.hpp), while
// this process samples the server: its status document and, where it runs on this host, its
// resident memory, open file descriptors and threads (/proc). Reports calls per routine, wrong
// results, failures, what the server counted as served, and the samples' trend after a warm-up;
// fails on any wrong result or failure, on a call the server did not serve, on state the server
// still holds once every client has ended, on growth beyond the stated limits, and on a server
// that, left alone afterwards, does not go back to sleep (--idle-seconds). Churn: short lifetimes
// (--lifetime 2: a few calls each) and processes killed at random points (--kill-percent).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <thread>

#include "bench/results.hpp"
#include "bench/server_samples.hpp"
#include "client/settings.hpp"
#include "common/clock.hpp"
#include "common/error.hpp"
#include "tools/outboard/bench_common.hpp"
#include "tools/outboard/connect.hpp"
#include "tools/outboard/soak_clients.hpp"
#include "tools/outboard/soak_restarted_server.hpp"

namespace outboard::tool {
namespace {

constexpr const char* kName = "outboard-bench-soak";  // this process's session, left out of the leftovers

struct SoakFlags {
  SoakOptions clients;
  double sample_seconds = 5;
  double warmup_seconds = -1;  // -1: a fifth of the run, at most 300 s
  double max_rss_growth_mib = 64;
  double max_fd_growth = 16;
  double max_thread_growth = 8;
  int server_pid = 0;
  double settle_seconds = 30;
  double idle_seconds = 10;          // the server's CPU time measured over this, left alone after the run
  double max_idle_cpu_percent = 1;   // of a core
  double restart_seconds = 0;        // a second server, restarted this often (0: none)
  std::string server_log;            // the server under test's log: what its instances served before starting again
};

// The server the clients are given first: --server, else the runtime's first (OUTBOARD_SERVERS's or
// the default), as connect_from_flags picks it.
std::string main_server(const std::string& flag) {
  return flag.empty() ? client::settings_from_environment().servers.front().text() : flag;
}

// What the server holds of ended sessions, from its status: sessions other than this one, OpenCL
// objects and sessions still ending, FFT plans of sessions.
nlohmann::json leftovers(const nlohmann::json& s) {
  int64_t sessions = s.value("clients_not_listed", int64_t(0));  // a long list is cut short (this session is the oldest)
  for (const auto& c : s.value("clients", nlohmann::json::array()))
    if (c.value("client", "") != kName) ++sessions;
  nlohmann::json out = {{"sessions", sessions}};
  if (s.contains("opencl"))
    out["opencl_objects"] = s["opencl"].value("objects", 0), out["opencl_sessions"] = s["opencl"].value("sessions", 0),
    out["opencl_sessions_ending"] = s["opencl"].value("sessions_ending", 0);
  if (s.contains("fft")) out["fft_session_plans"] = s["fft"].value("session_plans", 0);
  // The transport's connections other than this one's. (Its `retiring` peers, whose endpoint
  // close UCX has not finished, are reported beside, not counted: after a client died with its
  // shared-memory queue full, UCX 1.13 never finishes it; Worker::wait says why.)
  if (s.contains("transport")) out["transport_peers"] = std::max<int64_t>(0, s["transport"].value("peers", int64_t(0)) - 1);
  return out;
}
bool none_left(const nlohmann::json& l) {
  for (const auto& [k, v] : l.items())
    if (v.get<int64_t>() != 0) return false;
  return true;
}

uint64_t counter(const nlohmann::json& s, const std::string& section, const std::string& name) {
  if (!s.is_object()) return 0;
  if (section.empty()) return s.value(name, uint64_t(0));
  return s.contains(section) ? s[section].value(name, uint64_t(0)) : 0;
}

class Soak {
 public:
  Soak(const SoakFlags& g, const BenchFlags& f) : g_(g), f_(f) {}

  int run() {
    const double seconds = g_.clients.seconds;
    const double warmup = g_.warmup_seconds >= 0 ? g_.warmup_seconds : std::min(seconds / 5, 300.0);
    before_ = status_or_throw();
    restarts_before_ = restarts_seen_ = restart_count(before_);
    if (!g_.server_log.empty()) stopped_before_ = served_by_stopped_instances(g_.server_log, log_problem_);
    pid_ = server_pid(before_);
    std::fprintf(stderr, "soak: %d client processes for %.0f s against %s (%s); server process %s\n",
                 g_.clients.clients, seconds, before_.value("listen", "?").c_str(), before_.value("server", "?").c_str(),
                 pid_ ? std::to_string(pid_).c_str() : "not on this host: /proc not sampled");
    SoakOptions options = g_.clients;
    options.under_test_warning = "outboard: warning: server " + main_server(f_.server) + " failed";
    if (g_.restart_seconds > 0) {
      restarted_ = std::make_unique<RestartedServer>(std::filesystem::read_symlink("/proc/self/exe").string(), f_.token,
                                                     f_.output + "-restarted-server");
      options.server = main_server(f_.server) + "," + restarted_->address();
      options.expected_warning = "outboard: warning: server " + restarted_->address() + " failed";
      std::fprintf(stderr, "soak: a second server at %s, restarted every %.0f s\n", restarted_->address().c_str(),
                   g_.restart_seconds);
    }
    SoakClients clients(options);
    t0_ = now_ns();
    const uint64_t end = t0_ + static_cast<uint64_t>(seconds * 1e9);
    clients.start(end);
    uint64_t next_sample = t0_, next_progress = t0_ + 30'000'000'000ull;
    uint64_t next_restart = t0_ + static_cast<uint64_t>(g_.restart_seconds * 1e9);
    bool killed = false;
    while (clients.running()) {
      const uint64_t now = now_ns();
      if (restarted_ && now >= next_restart && now < end) {
        restarted_->restart();
        next_restart += static_cast<uint64_t>(g_.restart_seconds * 1e9);
      }
      if (now >= next_sample) {
        sample(clients.totals());
        next_sample += static_cast<uint64_t>(g_.sample_seconds * 1e9);
      }
      if (now >= next_progress) {
        progress(clients.totals(), clients.running());
        next_progress += 30'000'000'000ull;
      }
      if (!killed && now > end + static_cast<uint64_t>(g_.clients.grace * 1e9)) {
        clients.kill_all("still running " + std::to_string(int(g_.clients.grace)) + " s after the end");
        killed = true;
      }
      clients.poll(static_cast<int>(std::clamp<int64_t>((int64_t(next_sample) - int64_t(now_ns())) / 1000000, 1, 1000)));
    }
    sample(clients.totals());
    progress(clients.totals(), 0);
    if (restarted_) restarted_->stop();
    const double ran = (now_ns() - t0_) / 1e9;
    // Once every client has ended, the server must let go of their sessions and objects.
    nlohmann::json after, left;
    for (uint64_t until = now_ns() + static_cast<uint64_t>(g_.settle_seconds * 1e9);;) {
      after = status_or_null();
      if (after.is_null() || none_left(left = leftovers(after)) || now_ns() > until) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
    idle_cpu_percent_ = idle_cpu_percent();
    return report(clients.totals(), after, left, warmup, ran);
  }

 private:
  nlohmann::json status_or_throw() {
    if (!conn_ || !conn_->alive()) conn_ = connect_from_flags(f_.server, f_.token, kName);
    auto reply = conn_->request(wire::StatusRequest{}, {}, nullptr, 0, 60);
    auto* s = std::get_if<wire::StatusReply>(&reply);
    if (!s) throw Error("unexpected answer to a status request");
    return nlohmann::json::parse(s->json);
  }
  // A status; a request that fails is tried again for up to kStatusRetrySeconds, and is no failure
  // where the server answers with a higher restart count (cut by the server starting again).
  nlohmann::json status_or_null() {
    std::string error;
    try {
      return noting_restarts(status_or_throw());
    } catch (const std::exception& e) {
      error = e.what();
      conn_.reset();
    }
    for (uint64_t until = now_ns() + kStatusRetrySeconds * 1'000'000'000ull; now_ns() < until;) {
      std::this_thread::sleep_for(std::chrono::seconds(1));
      try {
        const int64_t seen = restarts_seen_;
        nlohmann::json s = noting_restarts(status_or_throw());
        if (restarts_seen_ > seen) ++status_cut_by_restart_;
        else ++status_failures_, status_error_ = status_error_.empty() ? error : status_error_;
        return s;
      } catch (const std::exception&) {
        conn_.reset();
      }
    }
    ++status_failures_;
    if (status_error_.empty()) status_error_ = error;
    return nullptr;
  }
  static constexpr uint64_t kStatusRetrySeconds = 30;

  static int64_t restart_count(const nlohmann::json& s) {
    return s.contains("restarts") ? s["restarts"].value("count", int64_t(0)) : 0;
  }
  // The server under test started again (a stalled transport: it does so on its own): counted,
  // with why.
  nlohmann::json noting_restarts(nlohmann::json s) {
    const int64_t n = restart_count(s);
    if (n > restarts_seen_) {
      restarts_seen_ = n;
      const std::string why = s["restarts"].value("last_reason", "");
      restart_reasons_.push_back(why);
      std::fprintf(stderr, "soak: the server under test started again (%lld since the run began): %s\n",
                   (long long)(n - restarts_before_), why.c_str());
    }
    return s;
  }

  // The server's CPU time over --idle-seconds with no client at all (this one's status connection
  // closed too: the server sleeps only with none open), as a share of a core; -1: not measured.
  double idle_cpu_percent() {
    if (!pid_ || g_.idle_seconds <= 0) return -1;
    conn_.reset();
    const auto a = bench::read_process(pid_);
    const uint64_t t = now_ns();
    std::this_thread::sleep_for(std::chrono::duration<double>(g_.idle_seconds));
    const auto b = bench::read_process(pid_);
    if (!a || !b) return -1;
    return 100 * (b->cpu_seconds - a->cpu_seconds) / ((now_ns() - t) / 1e9);
  }

  // --server-pid, else the status's where the server runs on this host.
  pid_t server_pid(const nlohmann::json& s) const {
    if (g_.server_pid) return g_.server_pid;
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    if (!s.contains("pid") || s.value("server", "") != host) return 0;
    const pid_t pid = s["pid"].get<pid_t>();
    return bench::read_process(pid) ? pid : 0;
  }

  void sample(const SoakTotals& t) {
    nlohmann::json x = {{"t", (now_ns() - t0_) / 1e9}, {"client_calls", t.calls()}};
    if (pid_) {
      if (auto p = bench::read_process(pid_)) {
        x["rss_bytes"] = p->rss_bytes, x["fds"] = p->fds, x["threads"] = p->threads;
      } else {
        ++process_gone_;
      }
    }
    const nlohmann::json s = status_or_null();
    if (!s.is_null()) {
      x["calls"] = s.value("calls", 0), x["errors"] = s.value("errors", 0), x["connections"] = s.value("connections", 0);
      if (s.contains("load")) x["load_calls"] = s["load"].value("calls", 0);
      x.update(leftovers(s));
    }
    samples_.push_back(x);
  }

  void progress(const SoakTotals& t, size_t running) const {
    const nlohmann::json& x = samples_.back();
    std::fprintf(stderr, "soak: %6.0f s  %3zu running  %9llu calls  %llu wrong  %llu failures", x["t"].get<double>(),
                 running, (unsigned long long)t.calls(), (unsigned long long)t.wrong(),
                 (unsigned long long)t.failures());
    if (x.contains("rss_bytes"))
      std::fprintf(stderr, "  server: %.1f MiB, %lld fds, %lld threads", x["rss_bytes"].get<double>() / 1048576,
                   (long long)x["fds"], (long long)x["threads"]);
    std::fprintf(stderr, "\n");
  }

  // The first-vs-last-third trend of one /proc figure over the samples after the warm-up and
  // before the end (when the clients leave, their sessions' descriptors and threads go too).
  nlohmann::json trend(const char* key, double warmup, double limit, double scale, std::vector<std::string>& reasons,
                       const char* unit) const {
    std::vector<double> v;
    for (const auto& x : samples_)
      if (const double t = x["t"].get<double>(); t >= warmup && t <= g_.clients.seconds && x.contains(key))
        v.push_back(x[key].get<double>() / scale);
    auto t = bench::thirds_trend(v);
    if (!t) return {{"checked", false}, {"why", pid_ ? "fewer than 3 samples after the warm-up" : "server not on this host"}};
    const bool over = t->growth() > limit;
    if (over) {
      char s[200];
      std::snprintf(s, sizeof s, "server %s grew by %.1f %s (median of the first third %.1f, of the last %.1f; limit %.1f)",
                    key, t->growth(), unit, t->first, t->last, limit);
      reasons.push_back(s);
    }
    return {{"checked", true}, {"first_third_median", t->first}, {"last_third_median", t->last},
            {"growth", t->growth()}, {"limit", limit}, {"unit", unit}, {"samples", t->values}, {"over", over}};
  }

  int report(const SoakTotals& t, const nlohmann::json& after, const nlohmann::json& left, double warmup, double ran) {
    std::vector<std::string> reasons;
    const nlohmann::json by_before = before_.value("calls_by_routine", nlohmann::json::object());
    const nlohmann::json by_after =
        after.is_null() ? nlohmann::json::object() : after.value("calls_by_routine", nlohmann::json::object());
    // The server under test's instances that ended during the run (it started again): what they
    // served, from its log.
    const int64_t under_test_restarts = restarts_seen_ - restarts_before_;
    std::map<std::string, uint64_t> stopped_during;
    if (under_test_restarts > 0) {
      if (g_.server_log.empty()) {
        reasons.push_back("the server under test started again " + std::to_string(under_test_restarts) +
                          " times: what its earlier instances served needs --server-log");
      } else {
        for (const auto& [routine, n] : served_by_stopped_instances(g_.server_log, log_problem_)) {
          const auto before = stopped_before_.find(routine);
          stopped_during[routine] = n - (before == stopped_before_.end() ? 0 : std::min(n, before->second));
        }
      }
    }
    if (!log_problem_.empty()) reasons.push_back(log_problem_);
    // What the server under test's instances served (the earlier ones' totals, the current one's
    // since `before_`; without a restart the earlier part is 0), and the second server's calls.
    // OpenCL: the kernels the server counted (its stopped instances log them as "opencl_kernels").
    auto served = [&](int r) -> uint64_t {
      const bool cl = r == soak::kOpenCl;
      const char* name = cl ? "opencl_kernels" : soak::kRoutines[r];
      const uint64_t now = cl ? counter(after, "opencl", "kernels") : by_after.value(name, uint64_t(0));
      const uint64_t before = cl ? counter(before_, "opencl", "kernels") : by_before.value(name, uint64_t(0));
      const uint64_t earlier = stopped_during.count(name) ? stopped_during[name] : 0;
      const uint64_t elsewhere = restarted_ && !cl ? restarted_->served(name) : 0;  // calls the second server took
      return earlier + now - before + elsewhere;
    };
    static const char* kApis[] = {"blas", "lapack", "fft", "opencl"};
    auto api_of = [](int r) {
      return r < soak::routine_index("dgesv") ? 0 : r < soak::kFirstFft ? 1 : r < soak::kOpenCl ? 2 : 3;
    };
    nlohmann::json routines = nlohmann::json::object(), apis = nlohmann::json::object();
    for (const char* a : kApis) apis[a] = {{"calls", 0}, {"served", 0}, {"wrong", 0}, {"failed", 0}};
    std::printf("%-7s %-10s %10s %10s %7s %7s %13s\n", "api", "routine", "calls", "served", "wrong", "failed",
                "worst err/tol");
    for (int r = 0; r < soak::kRoutineCount; ++r) {
      const RoutineTotals& x = t.routines[r];
      const uint64_t by_server = after.is_null() ? 0 : served(r);
      const uint64_t failed = x.failed + x.local + x.fell_back;
      // Kernels: the server counts each enqueue; the client counts one per round (the same).
      const uint64_t client_calls = r == soak::kOpenCl ? t.opencl_kernels : x.calls;
      if (!after.is_null() && by_server < client_calls)
        reasons.push_back(std::string(soak::kRoutines[r]) + ": " + std::to_string(client_calls) + " calls, the server served " +
                          std::to_string(by_server));
      routines[soak::kRoutines[r]] = {{"calls", x.calls}, {"served", by_server}, {"wrong", x.wrong}, {"failed", x.failed},
                                      {"ran_locally", x.local}, {"fell_back", x.fell_back}, {"runtime_remote", x.remote},
                                      {"worst_error_over_tolerance", x.worst}};
      auto& a = apis[kApis[api_of(r)]];
      a["calls"] = a["calls"].get<uint64_t>() + x.calls, a["served"] = a["served"].get<uint64_t>() + by_server;
      a["wrong"] = a["wrong"].get<uint64_t>() + x.wrong, a["failed"] = a["failed"].get<uint64_t>() + failed;
      std::printf("%-7s %-10s %10llu %10llu %7llu %7llu %13.3g\n", kApis[api_of(r)], soak::kRoutines[r],
                  (unsigned long long)x.calls, (unsigned long long)by_server, (unsigned long long)x.wrong,
                  (unsigned long long)failed, x.worst);
    }
    for (const char* a : kApis)
      std::printf("%-7s %-10s %10llu %10llu %7llu %7llu\n", a, "(all)", (unsigned long long)apis[a]["calls"],
                  (unsigned long long)apis[a]["served"], (unsigned long long)apis[a]["wrong"],
                  (unsigned long long)apis[a]["failed"]);
    if (t.calls() == 0) reasons.push_back("no calls were made");
    if (t.wrong()) reasons.push_back(std::to_string(t.wrong()) + " wrong results");
    if (t.failures()) reasons.push_back(std::to_string(t.failures()) + " failures");
    if (t.opencl_platforms <= 0 && g_.clients.apis.find("opencl") != std::string::npos)
      std::printf("OpenCL: the server offers no platform: not exercised\n");
    const uint64_t errors = counter(after, "", "errors") - counter(before_, "", "errors");
    const uint64_t cl_failures = counter(after, "opencl", "failures") - counter(before_, "opencl", "failures");
    if (after.is_null()) reasons.push_back("the server did not answer after the run: " + status_error_);
    if (errors) reasons.push_back("the server counted " + std::to_string(errors) + " failed calls");
    if (cl_failures) reasons.push_back("the server counted " + std::to_string(cl_failures) + " failed OpenCL operations");
    if (status_failures_) reasons.push_back(std::to_string(status_failures_) + " status requests failed: " + status_error_);
    if (t.under_test_warnings && under_test_restarts == 0)
      reasons.push_back(std::to_string(t.under_test_warnings) +
                        " client processes saw the server under test fail, and it did not start again");
    if (process_gone_) reasons.push_back("the server process could not be read " + std::to_string(process_gone_) + " times");
    nlohmann::json restarted = nullptr;
    if (restarted_) {
      restarted = {{"restarts", restarted_->restarts()}, {"calls_served", restarted_->calls_served()},
                   {"failures_noticed_by_clients", t.expected_warnings},
                   {"problem", restarted_->problem()}};
      if (!restarted_->problem().empty()) reasons.push_back(restarted_->problem());
      if (restarted_->calls_served() == 0) reasons.push_back("the restarted server served no call");
    }
    if (idle_cpu_percent_ > g_.max_idle_cpu_percent)
      reasons.push_back("left alone after the run, the server used " + std::to_string(idle_cpu_percent_) +
                        "% of a core");
    if (!left.is_null() && !none_left(left))
      reasons.push_back("once every client had ended, the server still held " + left.dump());
    nlohmann::json trends = {
        {"rss_mib", trend("rss_bytes", warmup, g_.max_rss_growth_mib, 1048576.0, reasons, "MiB")},
        {"fds", trend("fds", warmup, g_.max_fd_growth, 1, reasons, "fds")},
        {"threads", trend("threads", warmup, g_.max_thread_growth, 1, reasons, "threads")}};
    std::printf("%llu client processes (%llu clean), %d at a time, %.0f s; %llu calls, %llu wrong, %llu failures\n",
                (unsigned long long)t.processes, (unsigned long long)t.clean, g_.clients.clients, ran,
                (unsigned long long)t.calls(), (unsigned long long)t.wrong(), (unsigned long long)t.failures());
    for (const auto& [key, x] : trends.items()) {
      if (!x["checked"].get<bool>()) {
        std::printf("server %-8s not checked: %s\n", key.c_str(), x["why"].get<std::string>().c_str());
        continue;
      }
      std::printf("server %-8s %10.1f -> %10.1f (%+.1f, limit %+.1f) medians of the first and last third after %.0f s\n",
                  key.c_str(), x["first_third_median"].get<double>(), x["last_third_median"].get<double>(),
                  x["growth"].get<double>(), x["limit"].get<double>(), warmup);
    }
    if (restarted_)
      std::printf("a second server restarted %llu times; its instances served %llu calls; %llu client processes "
                  "noticed it fail and went on with the first\n",
                  (unsigned long long)restarted_->restarts(), (unsigned long long)restarted_->calls_served(),
                  (unsigned long long)t.expected_warnings);
    if (under_test_restarts > 0) {
      std::printf("the server under test started again %lld times (%llu client processes noticed it fail; %llu status "
                  "requests were cut), for:\n",
                  (long long)under_test_restarts, (unsigned long long)t.under_test_warnings,
                  (unsigned long long)status_cut_by_restart_);
      for (const auto& why : restart_reasons_) std::printf("  %s\n", why.c_str());
    }
    if (t.killed) std::printf("%llu client processes killed on purpose (--kill-percent)\n", (unsigned long long)t.killed);
    if (idle_cpu_percent_ >= 0)
      std::printf("server left alone %.0f s after the run: %.2f%% of a core (limit %.2f%%)\n", g_.idle_seconds,
                  idle_cpu_percent_, g_.max_idle_cpu_percent);
    for (const auto& [text, n] : t.messages) std::printf("  %llu x %s\n", (unsigned long long)n, text.c_str());
    for (const auto& r : reasons) std::printf("FAIL: %s\n", r.c_str());
    std::printf("soak: %s\n", reasons.empty() ? "PASS" : "FAIL");

    auto doc = bench::new_document("soak", command_line());
    const auto& c = g_.clients;
    doc["options"] = {{"clients", c.clients}, {"seconds", c.seconds}, {"lifetime_seconds", c.lifetime},
                      {"think_ms", c.think_ms}, {"large_percent", c.large_percent}, {"kill_percent", c.kill_percent}, {"apis", c.apis},
                      {"seed", c.seed}, {"chunk_bytes", c.chunk_bytes}, {"sample_seconds", g_.sample_seconds},
                      {"warmup_seconds", warmup}, {"max_rss_growth_mib", g_.max_rss_growth_mib},
                      {"max_fd_growth", g_.max_fd_growth}, {"max_thread_growth", g_.max_thread_growth},
                      {"idle_seconds", g_.idle_seconds}, {"max_idle_cpu_percent", g_.max_idle_cpu_percent},
                      {"restart_seconds", g_.restart_seconds}};
    nlohmann::json messages = nlohmann::json::object();
    for (const auto& [text, n] : t.messages) messages[text] = n;
    doc["results"] = {{"verdict", reasons.empty() ? "pass" : "fail"},
                      {"reasons", reasons},
                      {"seconds", ran},
                      {"processes", {{"started", t.processes}, {"clean", t.clean}, {"killed", t.killed}, {"problems", t.problems}}},
                      {"idle_cpu_percent", idle_cpu_percent_},
                      {"restarted_server", restarted},
                      {"server_under_test_restarts", {{"count", under_test_restarts}, {"reasons", restart_reasons_},
                                                      {"failures_noticed_by_clients", t.under_test_warnings},
                                                      {"status_requests_cut", status_cut_by_restart_}}},
                      {"calls", t.calls()},
                      {"wrong", t.wrong()},
                      {"failures", t.failures()},
                      {"apis", apis},
                      {"routines", routines},
                      {"opencl", {{"platforms", t.opencl_platforms}, {"kernels", t.opencl_kernels}}},
                      {"server", {{"pid", pid_}, {"before", before_}, {"after", after}, {"errors", errors},
                                  {"opencl_failures", cl_failures}, {"left_after_run", left}}},
                      {"trend", trends},
                      {"messages", messages}};
    doc["samples"] = samples_;
    finish(doc, f_);
    return reasons.empty() ? 0 : 1;
  }

  const SoakFlags& g_;
  const BenchFlags& f_;
  std::unique_ptr<client::Connection> conn_;
  nlohmann::json before_;
  pid_t pid_ = 0;
  uint64_t t0_ = 0;
  std::vector<nlohmann::json> samples_;
  uint64_t status_failures_ = 0, process_gone_ = 0, status_cut_by_restart_ = 0;
  int64_t restarts_before_ = 0, restarts_seen_ = 0;  // the server under test's restart count
  std::vector<std::string> restart_reasons_;
  std::map<std::string, uint64_t> stopped_before_;  // served by its instances stopped before the run (--server-log)
  std::string log_problem_;
  double idle_cpu_percent_ = -1;
  std::unique_ptr<RestartedServer> restarted_;
  std::string status_error_;
};

}  // namespace

void add_bench_soak_mode(CLI::App* bench, BenchModes& modes) {
  auto f = std::make_shared<BenchFlags>();
  auto g = std::make_shared<SoakFlags>();
  auto* cmd = bench->add_subcommand(
      "soak", "N client processes for S seconds of checked BLAS, LAPACK, FFTW and OpenCL calls; the server's memory, "
              "descriptors and threads sampled: wrong results, failures, growth");
  add_server_flags(cmd, *f);
  add_output_flags(cmd, *f, "outboard-soak");
  SoakOptions& c = g->clients;
  cmd->add_option("--clients", c.clients, "Client processes at a time")->check(CLI::Range(1, 1024))->capture_default_str();
  cmd->add_option("--seconds", c.seconds, "Length of the run")->check(CLI::Range(1.0, 7.0 * 86400))->capture_default_str();
  cmd->add_option("--lifetime", c.lifetime, "Seconds a client process runs (0.75..1.25 of it) before a fresh one takes its slot; 0: the whole run")
      ->check(CLI::Range(0.0, 7.0 * 86400))->capture_default_str();
  cmd->add_option("--think-ms", c.think_ms, "Pause between a client's calls")->check(CLI::Range(0, 60000))->capture_default_str();
  cmd->add_option("--large-percent", c.large_percent, "Calls made large enough for the chunked and direct paths")
      ->check(CLI::Range(0, 100))->capture_default_str();
  cmd->add_option("--kill-percent", c.kill_percent, "Client processes killed (SIGKILL) at a random point of their life: churn")
      ->check(CLI::Range(0, 100))->capture_default_str();
  cmd->add_option("--apis", c.apis, "Comma-separated: blas, lapack, fft, opencl")->capture_default_str();
  cmd->add_option("--seed", c.seed, "Random seed of the calls")->capture_default_str();
  cmd->add_option("--chunk-bytes", c.chunk_bytes, "The clients' OUTBOARD_CHUNK_BYTES: calls of two chunks or more travel in chunks or on the direct path")
      ->check(CLI::Range(wire::kMinChunkBytes, uint64_t(1) << 40))->capture_default_str();
  cmd->add_option("--grace", c.grace, "Seconds the clients may take past the end before they are killed (a failure)")
      ->check(CLI::Range(1.0, 86400.0))->capture_default_str();
  cmd->add_option("--sample-seconds", g->sample_seconds, "Interval of the server samples")
      ->check(CLI::Range(0.1, 3600.0))->capture_default_str();
  cmd->add_option("--warmup-seconds", g->warmup_seconds, "Samples before this are left out of the trend (default: a fifth of the run, at most 300)");
  cmd->add_option("--max-rss-growth-mib", g->max_rss_growth_mib, "Limit of the server's resident memory growth after the warm-up")
      ->capture_default_str();
  cmd->add_option("--max-fd-growth", g->max_fd_growth, "Limit of the server's open descriptors growth")->capture_default_str();
  cmd->add_option("--max-thread-growth", g->max_thread_growth, "Limit of the server's thread count growth")->capture_default_str();
  cmd->add_option("--server-pid", g->server_pid, "The server's process id (default: its status's, where it runs on this host)");
  cmd->add_option("--settle-seconds", g->settle_seconds, "How long the server may take to release ended sessions")
      ->capture_default_str();
  cmd->add_option("--restart-seconds", g->restart_seconds,
                  "A second server on loopback, listed to the clients after the first, restarted this often (0: none)")
      ->check(CLI::Range(0.0, 86400.0))->capture_default_str();
  cmd->add_option("--idle-seconds", g->idle_seconds, "After the run, the server's CPU time is measured over this long with no client (0: not)")
      ->check(CLI::Range(0.0, 3600.0))->capture_default_str();
  cmd->add_option("--max-idle-cpu-percent", g->max_idle_cpu_percent, "Limit of that, in percent of a core")
      ->capture_default_str();
  cmd->add_option("--server-log", g->server_log,
                  "The server under test's log: where it starts again during the run (a stalled transport), what its "
                  "earlier instances served is read there")
      ->check(CLI::ExistingFile);
  cmd->add_option("--logs", c.logs, "Where logs of client processes with problems are kept (default: PREFIX-logs)");
  modes.emplace_back(cmd, [=]() -> int {
    if (g->clients.logs.empty()) g->clients.logs = f->output + "-logs";
    g->clients.server = f->server;
    g->clients.token = f->token;
    return Soak(*g, *f).run();
  });
}

}  // namespace outboard::tool
