// outboard bench connect --clients N: N client processes released at once (as the ranks of an MPI
// job start), each connecting and authenticating under the default settings and making one round
// trip; the spread of their times and every failure, as a burst of clients meets one server.
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>

#include "bench/results.hpp"
#include "common/clock.hpp"
#include "common/error.hpp"
#include "tools/outboard/bench_common.hpp"
#include "tools/outboard/connect.hpp"

namespace outboard::tool {
namespace {

// What one client process reports; one write of it is atomic on a pipe (it is below PIPE_BUF).
struct Record {
  int32_t index;
  int32_t ok;
  double start_us;     // from the release to the first instruction of its own (scheduling)
  double connect_us;   // from its start to authenticated: UCX set-up, connection, challenge, proof
  double round_trip_us;  // the first request once authenticated
  char error[400];
};
static_assert(sizeof(Record) <= PIPE_BUF);

// Runs in a child once released: t0 is when its read of the release returned.
[[noreturn]] void client_process(int index, int results, const BenchFlags& f, uint64_t released_ns, uint64_t t0) {
  Record r{};
  r.index = index;
  r.start_us = (t0 > released_ns ? t0 - released_ns : 0) / 1e3;
  try {
    auto conn = connect_from_flags(f.server, f.token, "outboard-bench-connect");
    const uint64_t t1 = now_ns();
    r.connect_us = (t1 - t0) / 1e3;
    auto reply = conn->request(wire::Ping{}, {}, nullptr, 0, 30);
    if (!std::holds_alternative<wire::Pong>(reply)) throw Error("unexpected answer to a ping");
    r.round_trip_us = (now_ns() - t1) / 1e3;
    r.ok = 1;
  } catch (const std::exception& e) {
    std::snprintf(r.error, sizeof r.error, "%s", e.what());
  }
  ssize_t n;
  while ((n = ::write(results, &r, sizeof r)) < 0 && errno == EINTR) {
  }
  std::fflush(nullptr);
  _exit(r.ok ? 0 : 1);
}

double at(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(q * (v.size() - 1) + 0.5))];
}

int run_connect(const BenchFlags& f, int clients) {
  int go[2], results[2];
  if (::pipe(go) != 0 || ::pipe(results) != 0) throw Error(std::string("pipe: ") + std::strerror(errno));
  // The release time is shared through memory every child inherits: read after the pipe says go.
  auto* released = static_cast<volatile uint64_t*>(
      mmap(nullptr, sizeof(uint64_t), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  if (released == MAP_FAILED) throw Error(std::string("mmap: ") + std::strerror(errno));
  std::fflush(nullptr);
  std::vector<pid_t> pids;
  for (int i = 0; i < clients; ++i) {
    pid_t pid = ::fork();
    if (pid < 0) {
      for (pid_t p : pids) ::kill(p, SIGKILL);
      throw Error("cannot start client process " + std::to_string(i) + ": " + std::strerror(errno));
    }
    if (pid == 0) {
      ::close(go[1]);
      ::close(results[0]);
      char byte;
      while (::read(go[0], &byte, 1) < 0 && errno == EINTR) {
      }  // EOF: the parent let every client go at once
      const uint64_t t0 = now_ns();
      client_process(i, results[1], f, *released, t0);
    }
    pids.push_back(pid);
  }
  ::close(go[0]);
  ::close(results[1]);
  *released = now_ns();
  ::close(go[1]);  // every child's read returns at once
  std::vector<Record> records;
  Record r;
  for (;;) {
    ssize_t n = ::read(results[0], &r, sizeof r);
    if (n == 0) break;
    if (n < 0 && errno == EINTR) continue;
    if (n != sizeof r) throw Error("short record from a client process");
    records.push_back(r);
  }
  ::close(results[0]);
  int crashed = 0;
  for (pid_t p : pids) {
    int status = 0;
    while (::waitpid(p, &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status)) ++crashed;
  }
  munmap(const_cast<uint64_t*>(released), sizeof(uint64_t));
  // The clients' CPU time, all of them together: a burst that outruns its cores shows here (it
  // found clients polling hot while shared memory was wired up).
  rusage children{};
  getrusage(RUSAGE_CHILDREN, &children);
  auto seconds = [](const timeval& t) { return double(t.tv_sec) + t.tv_usec / 1e6; };
  const double user_s = seconds(children.ru_utime), system_s = seconds(children.ru_stime);

  std::vector<double> connect, total, rtt;
  std::map<std::string, int> errors;
  for (const Record& x : records) {
    if (!x.ok) {
      ++errors[x.error];
      continue;
    }
    connect.push_back(x.connect_us / 1e3);
    total.push_back((x.start_us + x.connect_us) / 1e3);
    rtt.push_back(x.round_trip_us / 1e3);
  }
  const int served = static_cast<int>(connect.size());
  const int failed = clients - served;
  std::printf("%d client processes released at once: %d authenticated and served, %d failed%s\n", clients, served,
              failed, crashed ? (" (" + std::to_string(crashed) + " died without a record)").c_str() : "");
  std::printf("%-38s %9s %9s %9s\n", "milliseconds", "p50", "p99", "max");
  auto row = [](const char* what, const std::vector<double>& v) {
    std::printf("%-38s %9.1f %9.1f %9.1f\n", what, at(v, 0.5), at(v, 0.99), v.empty() ? 0 : *std::max_element(v.begin(), v.end()));
  };
  row("connect and authenticate", connect);
  row("release to authenticated", total);
  row("first round trip", rtt);
  std::printf("clients' CPU time, all together: %.2f s user, %.2f s system\n", user_s, system_s);
  for (const auto& [why, n] : errors) std::printf("  %d x %s\n", n, why.c_str());

  auto doc = bench::new_document("connect", command_line());
  auto summary = [](const std::vector<double>& v) {
    return nlohmann::json{{"p50_ms", at(v, 0.5)}, {"p99_ms", at(v, 0.99)},
                          {"max_ms", v.empty() ? 0 : *std::max_element(v.begin(), v.end())}};
  };
  nlohmann::json errs = nlohmann::json::object();
  for (const auto& [why, n] : errors) errs[why] = n;
  doc["results"] = {{"clients", clients},
                    {"served", served},
                    {"failed", failed},
                    {"connect_and_authenticate", summary(connect)},
                    {"release_to_authenticated", summary(total)},
                    {"first_round_trip", summary(rtt)},
                    {"clients_cpu_seconds", {{"user", user_s}, {"system", system_s}}},
                    {"errors", errs}};
  finish(doc, f);
  return failed ? 1 : 0;
}

}  // namespace

void add_bench_connect_mode(CLI::App* bench, BenchModes& modes) {
  auto f = std::make_shared<BenchFlags>();
  auto clients = std::make_shared<int>(64);
  auto* cmd = bench->add_subcommand(
      "connect", "A burst of client processes connecting at once: connect-and-authenticate p50/p99/max, failures");
  add_server_flags(cmd, *f);
  add_output_flags(cmd, *f, "outboard-connect");
  cmd->add_option("--clients", *clients, "Client processes released at once")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  modes.emplace_back(cmd, [=] { return run_connect(*f, *clients); });
}

}  // namespace outboard::tool
