#include "tools/outboard/soak_clients.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "common/clock.hpp"
#include "common/error.hpp"

extern char** environ;

namespace outboard::tool {
namespace {

constexpr size_t kMaxMessages = 200;  // distinct texts kept; the rest are counted together
constexpr double kMinSeconds = 5;     // a slot is not restarted for less than this

// The ways a call travels, by slot: the direct path with CMA, the direct path through UCX, chunks.
const char* direct_setting(int slot) { return slot % 3 == 0 ? "1" : slot % 3 == 1 ? "ucx" : "0"; }

std::string pipe_error(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

}  // namespace

uint64_t SoakTotals::calls() const {
  uint64_t n = 0;
  for (const auto& r : routines) n += r.calls;
  return n;
}
uint64_t SoakTotals::wrong() const {
  uint64_t n = 0;
  for (const auto& r : routines) n += r.wrong;
  return n;
}
uint64_t SoakTotals::failures() const {
  uint64_t n = problems;
  for (const auto& r : routines) n += r.failed + r.local + r.fell_back;
  return n;
}

SoakClients::SoakClients(SoakOptions o) : o_(std::move(o)), slots_(o_.clients) {
  self_ = std::filesystem::read_symlink("/proc/self/exe").string();
  // Beside bin/outboard in the build tree; in lib/outboard/ once installed (not a user command).
  const std::filesystem::path bin = std::filesystem::path(self_).parent_path();
  client_ = (bin / "outboard-soak-client").string();
  if (!std::filesystem::exists(client_)) client_ = (bin.parent_path() / "lib/outboard/outboard-soak-client").string();
  if (!std::filesystem::exists(client_))
    throw Error("cannot find outboard-soak-client beside " + self_ + " or in its ../lib/outboard/");
  std::filesystem::create_directories(o_.logs);
  if (::pipe2(results_, O_CLOEXEC) != 0) throw Error(pipe_error("pipe"));
  ::fcntl(results_[0], F_SETFL, O_NONBLOCK);
  ::fcntl(results_[0], F_SETPIPE_SZ, 1 << 20);  // room for many records while this process samples
}

SoakClients::~SoakClients() {
  for (Slot& s : slots_)
    if (s.pid > 0) {
      ::kill(s.pid, SIGKILL);
      ::waitpid(s.pid, nullptr, 0);
    }
  for (int fd : results_)
    if (fd >= 0) ::close(fd);
}

void SoakClients::start(uint64_t end_ns) {
  end_ns_ = end_ns;
  int release[2];
  if (::pipe2(release, O_CLOEXEC) != 0) throw Error(pipe_error("pipe"));
  for (int i = 0; i < o_.clients; ++i) spawn(i, release[0]);
  ::close(release[0]);
  ::close(release[1]);  // EOF: every client of the burst goes at once
}

void SoakClients::spawn(int index, int release_fd) {
  Slot& s = slots_[index];
  ++s.generation;
  s.last_record = false;
  s.log = o_.logs + "/slot-" + std::to_string(index) + "-" + std::to_string(s.generation) + ".log";
  // Lifetimes spread over 0.75..1.25 of the setting, so the slots do not all restart together.
  std::mt19937_64 rng(o_.seed * 31 + index * 1009 + s.generation);
  const double life = o_.lifetime > 0 ? o_.lifetime * std::uniform_real_distribution<double>(0.75, 1.25)(rng) : 0;
  const uint64_t until = life > 0 ? std::min(end_ns_, now_ns() + static_cast<uint64_t>(life * 1e9)) : end_ns_;
  s.killed = false;
  s.kill_at_ns = 0;
  if (std::uniform_int_distribution<int>(0, 99)(rng) < o_.kill_percent) {
    const double span = (until - std::min(until, now_ns())) / 1e9;
    s.kill_at_ns = now_ns() + static_cast<uint64_t>(std::uniform_real_distribution<double>(0, span)(rng) * 1e9);
  }

  std::vector<std::string> args = {self_, "run", "--offload", "always", "--fallback", "fail"};
  if (!o_.server.empty()) args.insert(args.end(), {"--server", o_.server});
  if (!o_.token.empty()) args.insert(args.end(), {"--token-file", o_.token});
  args.insert(args.end(), {"--", client_, "--slot", std::to_string(index), "--generation", std::to_string(s.generation),
                           "--seed", std::to_string(o_.seed), "--until", std::to_string(until), "--results", "3",
                           "--large-percent", std::to_string(o_.large_percent), "--think-ms",
                           std::to_string(o_.think_ms), "--apis", o_.apis});
  if (release_fd >= 0) args.insert(args.end(), {"--release", "4"});
  // The runtime's exit report says what ran remotely and locally; one BLAS thread (the real BLAS
  // only forms Q for geqrf's check); a connect may wait its turn behind a burst on a busy server.
  std::map<std::string, std::string> set = {{"OUTBOARD_REPORT", "1"},
                                            {"OUTBOARD_CHUNK_BYTES", std::to_string(o_.chunk_bytes)},
                                            {"OUTBOARD_DIRECT", direct_setting(index)},
                                            {"OPENBLAS_NUM_THREADS", "1"},
                                            {"OMP_NUM_THREADS", "1"}};
  if (!std::getenv("OUTBOARD_CONNECT_TIMEOUT")) set["OUTBOARD_CONNECT_TIMEOUT"] = "60";
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    const std::string kv = *e;
    if (!set.count(kv.substr(0, kv.find('=')))) env.push_back(kv);
  }
  for (const auto& [k, v] : set) env.push_back(k + "=" + v);
  std::vector<char*> argv, envp;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);

  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) throw Error(pipe_error("fork"));
  if (pid == 0) {  // only async-signal-safe calls from here to the exec
    const int log = ::open(s.log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int results = ::fcntl(results_[1], F_DUPFD, 10);
    const int release = release_fd >= 0 ? ::fcntl(release_fd, F_DUPFD, 10) : -1;
    if (log < 0 || results < 0) _exit(126);
    ::dup2(log, 1);
    ::dup2(log, 2);
    ::dup2(results, 3);
    if (release >= 0) ::dup2(release, 4);
    ::close_range(release >= 0 ? 5 : 4, ~0U, 0);  // nothing else of this process (its UCX endpoints) goes along
    const int null = ::open("/dev/null", O_RDONLY);
    if (null >= 0) ::dup2(null, 0);
    if (null > 0) ::close(null);
    ::execve(self_.c_str(), argv.data(), envp.data());
    _exit(127);
  }
  s.pid = pid;
  ++t_.processes;
}

void SoakClients::note(const std::string& text) {
  auto it = t_.messages.find(text);
  if (it != t_.messages.end()) ++it->second;
  else if (t_.messages.size() < kMaxMessages) t_.messages[text] = 1;
  else ++t_.messages["(further messages not kept)"];
}

void SoakClients::drain() {
  soak::Record r;
  for (;;) {
    const ssize_t n = ::read(results_[0], &r, sizeof r);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // EAGAIN: nothing more now
    if (n != sizeof r) throw Error("short record from a soak client");  // writes are whole and atomic
    for (int i = 0; i < soak::kRoutineCount; ++i) {
      RoutineTotals& x = t_.routines[i];
      x.calls += r.calls[i];
      x.wrong += r.wrong[i];
      x.failed += r.failed[i];
      x.worst = std::max(x.worst, static_cast<double>(r.worst[i]));
    }
    t_.opencl_kernels += r.opencl_kernels;
    if (r.opencl_platforms >= 0) {
      if (t_.opencl_platforms > 0 && r.opencl_platforms == 0) note("a client found no OpenCL platform where others did");
      t_.opencl_platforms = std::max(t_.opencl_platforms, r.opencl_platforms);
    }
    r.message[sizeof r.message - 1] = 0;
    if (r.message[0]) note(r.message);
    if (r.slot >= 0 && r.slot < o_.clients && slots_[r.slot].pid == r.pid && r.last) slots_[r.slot].last_record = true;
  }
}

void SoakClients::ended(int index, int status) {
  drain();  // its final record was written before it exited
  Slot& s = slots_[index];
  if (s.killed && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) {  // on purpose: what it recorded counts
    ++t_.killed;
    std::filesystem::remove(s.log);
    return replace(index);
  }
  std::string problem;
  if (WIFSIGNALED(status)) problem = "killed by signal " + std::to_string(WTERMSIG(status));
  else if (WEXITSTATUS(status) != 0) problem = "exit status " + std::to_string(WEXITSTATUS(status));
  else if (!s.last_record) problem = "no final record";
  // The runtime's exit report: "outboard: ROUTINE REMOTE LOCAL FALLBACK ..." under its header;
  // and any warning or error of the runtime or the client.
  std::ifstream in(s.log);
  bool table = false;
  std::string said;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("outboard: routine ", 0) == 0) {
      table = true;
      continue;
    }
    char name[64];
    unsigned long long remote, local, fell_back;
    if (table && std::sscanf(line.c_str(), "outboard: %63s %llu %llu %llu", name, &remote, &local, &fell_back) == 4) {
      const int r = soak::routine_index(name);
      if (r < 0) {
        note(std::string("the runtime reports a routine the soak does not call: ") + name);
        continue;
      }
      t_.routines[r].remote += remote;
      t_.routines[r].local += local;
      t_.routines[r].fell_back += fell_back;
      if (local || fell_back)
        note(std::string(name) + ": calls ran locally (" + std::to_string(local) + ") or fell back (" +
             std::to_string(fell_back) + ")");
      continue;
    }
    if (!o_.expected_warning.empty() && line.rfind(o_.expected_warning, 0) == 0) {
      ++t_.expected_warnings;
      continue;
    }
    if (!o_.under_test_warning.empty() && line.rfind(o_.under_test_warning, 0) == 0) {
      ++t_.under_test_warnings;
      continue;
    }
    if (line.rfind("outboard: warning", 0) == 0 || line.rfind("outboard: error", 0) == 0 ||
        line.rfind("outboard-soak-client:", 0) == 0 || line.rfind("outboard:", 0) != 0) {
      if (said.empty()) said = line;
    }
  }
  if (problem.empty() && !said.empty()) problem = "said";
  if (!problem.empty()) {
    ++t_.problems;
    note("client process " + problem + (said.empty() ? "" : ": " + said) + " (log " + s.log + ")");
  } else {
    ++t_.clean;
    std::filesystem::remove(s.log);
  }
  replace(index);
}

void SoakClients::replace(int index) {
  slots_[index].pid = -1;
  if (static_cast<double>(end_ns_) - static_cast<double>(now_ns()) > kMinSeconds * 1e9) spawn(index, -1);
}

void SoakClients::poll(int timeout_ms) {
  pollfd p{results_[0], POLLIN, 0};
  if (::poll(&p, 1, timeout_ms) < 0 && errno != EINTR) throw Error(pipe_error("poll"));
  drain();
  const uint64_t now = now_ns();
  for (int i = 0; i < o_.clients; ++i) {
    if (slots_[i].pid <= 0) continue;
    if (slots_[i].kill_at_ns && now >= slots_[i].kill_at_ns && !slots_[i].killed) {
      ::kill(slots_[i].pid, SIGKILL);
      slots_[i].killed = true;
    }
    int status = 0;
    const pid_t r = ::waitpid(slots_[i].pid, &status, WNOHANG);
    if (r == slots_[i].pid) ended(i, status);
  }
}

size_t SoakClients::running() const {
  return std::count_if(slots_.begin(), slots_.end(), [](const Slot& s) { return s.pid > 0; });
}

void SoakClients::kill_all(const std::string& why) {
  for (Slot& s : slots_) {
    if (s.pid <= 0) continue;
    ::kill(s.pid, SIGKILL);
    ::waitpid(s.pid, nullptr, 0);
    s.pid = -1;
    ++t_.problems;
    note("client process " + why + " (log " + s.log + ")");
  }
  drain();
}

}  // namespace outboard::tool
