#include "tools/outboard/serve_restarts.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <linux/close_range.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <thread>
#include <vector>

#include "common/error.hpp"

namespace outboard::tool {
namespace {

// What a child reads from its environment.
constexpr const char* kChild = "OUTBOARD_SERVE_CHILD";             // the fd of the pipe to the parent
constexpr const char* kFromParent = "OUTBOARD_SERVE_FROM_PARENT";  // the fd of the pipe from it
constexpr const char* kCount = "OUTBOARD_SERVE_RESTARTS";
constexpr const char* kPort = "OUTBOARD_SERVE_PORT";
constexpr const char* kReason = "OUTBOARD_SERVE_RESTART_REASON";
constexpr const char* kWorker = "OUTBOARD_SERVE_WORKER";
constexpr const char* kWorkers = "OUTBOARD_SERVE_WORKERS";
constexpr const char* kWorkerGpu = "OUTBOARD_SERVE_WORKER_GPU";
constexpr unsigned kMaxWorkers = 64;

std::vector<std::string> g_arguments;
// The children's pids, for the signal handler (which may not take locks).
volatile sig_atomic_t g_pids[kMaxWorkers];
volatile sig_atomic_t g_stopping = 0;

void send_all(int sig) {
  for (unsigned i = 0; i < kMaxWorkers; ++i)
    if (g_pids[i] > 0) kill(g_pids[i], sig);
}

void stop_all(int sig) {
  g_stopping = 1;
  send_all(sig);
}

// The parent logs in the server's text format, on stderr (its own logger is the children's).
void say(const char* level, const std::string& text) {
  char when[32];
  const time_t now = time(nullptr);
  struct tm tm {};
  localtime_r(&now, &tm);
  strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
  std::fprintf(stderr, "%s %s %s\n", when, level, text.c_str());
}

int env_fd(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::atoi(v) : -1;
}

bool write_all(int fd, const std::string& text) {
  for (size_t at = 0; at < text.size();) {
    const ssize_t n = write(fd, text.data() + at, text.size() - at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    at += static_cast<size_t>(n);
  }
  return true;
}

void write_line(const std::string& line) {
  const int fd = env_fd(kChild);
  if (fd >= 0) write_all(fd, line + "\n");
}

double seconds_now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// OUTBOARD_TEST_GPU_FAULT=DEVICE@N names a GPU of the whole server; in worker i (whose one GPU is
// its device 0) it becomes 0@N where DEVICE is i, and goes away elsewhere.
void aim_test_fault(unsigned worker) {
  const char* v = std::getenv("OUTBOARD_TEST_GPU_FAULT");
  if (!v) return;
  const std::string spec = v;
  const size_t at = spec.find('@');
  if (at != std::string::npos && spec.substr(0, at) == std::to_string(worker))
    setenv("OUTBOARD_TEST_GPU_FAULT", ("0" + spec.substr(at)).c_str(), 1);
  else
    unsetenv("OUTBOARD_TEST_GPU_FAULT");
}

// One child as the parent sees it, across its restarts.
struct Child {
  unsigned index = 0;
  std::string devices;        // its CUDA_VISIBLE_DEVICES, or empty
  pid_t pid = 0;              // 0: not running
  int from = -1, to = -1;     // the pipes' parent ends
  std::string pending;        // a line not yet ended
  uint16_t port = 0;
  int restarts = 0, quick_deaths = 0;
  std::string reason;
  double started = 0, start_at = 0;
  bool ended = false;         // for good
};

class Supervisor {
 public:
  explicit Supervisor(const Supervision& plan) {
    for (unsigned i = 0; i < plan.workers; ++i) {
      Child c;
      c.index = i;
      if (i < plan.devices.size()) c.devices = plan.devices[i];
      if (plan.workers > 1 && plan.port) c.port = static_cast<uint16_t>(plan.port + i);
      children_.push_back(c);
    }
  }

  int run() {
    for (;;) {
      const double now = seconds_now();
      for (Child& c : children_) {
        if (c.ended || c.pid) continue;
        if (g_stopping) c.ended = true;  // stopped while waiting to start again
        else if (now >= c.start_at && !start(c)) return 1;
      }
      if (std::all_of(children_.begin(), children_.end(), [](const Child& c) { return c.ended; })) return status_;
      wait_and_read();
      reap();
    }
  }

 private:
  bool start(Child& c) {
    int up[2], down[2];
    if (pipe2(up, O_CLOEXEC) != 0) return say("error", "serve.supervise error=\"pipe\""), false;
    if (pipe2(down, O_CLOEXEC) != 0) {
      close(up[0]), close(up[1]);
      return say("error", "serve.supervise error=\"pipe\""), false;
    }
    const pid_t pid = fork();
    if (pid < 0) {
      for (int fd : {up[0], up[1], down[0], down[1]}) close(fd);
      return say("error", "serve.supervise error=\"fork\""), false;
    }
    if (pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGTERM);  // no server outlives its supervisor
      signal(SIGPIPE, SIG_DFL);
      fcntl(up[1], F_SETFD, 0);  // the child keeps its ends across exec
      fcntl(down[0], F_SETFD, 0);
      setenv(kChild, std::to_string(up[1]).c_str(), 1);
      setenv(kFromParent, std::to_string(down[0]).c_str(), 1);
      setenv(kCount, std::to_string(c.restarts).c_str(), 1);
      setenv(kWorker, std::to_string(c.index).c_str(), 1);
      setenv(kWorkers, std::to_string(children_.size()).c_str(), 1);
      if (c.port) setenv(kPort, std::to_string(c.port).c_str(), 1);
      if (!c.reason.empty()) setenv(kReason, c.reason.c_str(), 1);
      if (!c.devices.empty()) {
        setenv("CUDA_VISIBLE_DEVICES", c.devices.c_str(), 1);
        setenv(kWorkerGpu, c.devices.c_str(), 1);
      }
      if (c.restarts > 0) unsetenv("OUTBOARD_TEST_GPU_FAULT");  // a test's fault happens once
      if (children_.size() > 1) aim_test_fault(c.index);
      std::vector<char*> argv;
      for (auto& a : g_arguments) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv("/proc/self/exe", argv.data());
      _exit(127);
    }
    close(up[1]);
    close(down[0]);
    c.pid = pid;
    c.from = up[0];
    c.to = down[1];
    c.pending.clear();
    c.started = seconds_now();
    g_pids[c.index] = pid;
    if (g_stopping) kill(pid, SIGTERM);  // a signal came while it was being started
    return true;
  }

  // Waits up to 200 ms for lines from the children; handles those that came.
  void wait_and_read() {
    std::vector<pollfd> fds;
    for (const Child& c : children_)
      if (c.from >= 0) fds.push_back({c.from, POLLIN, 0});
    if (fds.empty()) {
      usleep(100000);
      return;
    }
    if (poll(fds.data(), fds.size(), 200) <= 0) return;
    for (Child& c : children_) {
      auto f = std::find_if(fds.begin(), fds.end(), [&c](const pollfd& p) { return p.fd == c.from; });
      if (c.from < 0 || f == fds.end() || !f->revents) continue;
      char buf[512];
      const ssize_t n = read(c.from, buf, sizeof buf);
      if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (n <= 0) {  // the child is gone (or going): reap() collects it
        close(c.from);
        c.from = -1;
        continue;
      }
      c.pending.append(buf, static_cast<size_t>(n));
      for (size_t end; (end = c.pending.find('\n')) != std::string::npos;) {
        handle_line(c, c.pending.substr(0, end));
        c.pending.erase(0, end + 1);
      }
    }
  }

  void handle_line(Child& c, const std::string& line) {
    if (line.rfind("port ", 0) == 0) {
      c.port = static_cast<uint16_t>(std::atoi(line.c_str() + 5));
      announce_ports();
    } else if (line.rfind("lost ", 0) == 0) {
      c.reason = line.substr(5);
    }
  }

  // Every worker learns every worker's port (its own included; it leaves it out).
  void announce_ports() {
    if (children_.size() < 2) return;
    std::string line = "siblings ";
    for (const Child& c : children_)
      if (c.port) line += std::to_string(c.port) + ",";
    line.back() = '\n';
    for (Child& c : children_)
      if (c.to >= 0 && !write_all(c.to, line)) {
        close(c.to);
        c.to = -1;
      }
  }

  void reap() {
    for (;;) {
      int status = 0;
      const pid_t pid = waitpid(-1, &status, WNOHANG);
      if (pid <= 0) return;
      auto it = std::find_if(children_.begin(), children_.end(), [pid](const Child& c) { return c.pid == pid; });
      if (it != children_.end()) ended(*it, status);
    }
  }

  void ended(Child& c, int status) {
    if (c.from >= 0) {  // lines it wrote before it ended
      char buf[512];
      ssize_t n;
      while ((n = read(c.from, buf, sizeof buf)) > 0) c.pending.append(buf, static_cast<size_t>(n));
      for (size_t end; (end = c.pending.find('\n')) != std::string::npos;) {
        handle_line(c, c.pending.substr(0, end));
        c.pending.erase(0, end + 1);
      }
      close(c.from);
      c.from = -1;
    }
    if (c.to >= 0) close(c.to), c.to = -1;
    c.pid = 0;
    g_pids[c.index] = 0;
    const std::string who = children_.size() > 1 ? "worker=" + std::to_string(c.index) + " " : "";
    const bool lost = WIFEXITED(status) && WEXITSTATUS(status) == kExitStartAgain;
    const bool killed = WIFSIGNALED(status);
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (g_stopping || (!lost && !killed)) {
      c.ended = true;
      if (!g_stopping && code != 0 && children_.size() > 1) {
        // A worker that cannot run (a port taken, a bad setting) would fail again: all stop.
        say("error", "serve.worker_failed " + who + "status=" + std::to_string(code) + " (every worker stops)");
        stop_all(SIGTERM);
      }
      if (!(g_stopping && killed && WTERMSIG(status) == SIGTERM)) status_ = std::max(status_, code);
      return;
    }
    if (killed) c.reason = std::string("killed by signal ") + strsignal(WTERMSIG(status));
    // One that dies soon after starting waits longer each time (at most 30 s): no restart storm.
    const double lived = seconds_now() - c.started;
    c.quick_deaths = lived < 10 ? c.quick_deaths + 1 : 0;
    const double delay = std::min(30.0, c.quick_deaths > 1 ? double(1 << std::min(c.quick_deaths - 1, 5)) : 1.0);
    ++c.restarts;
    c.start_at = seconds_now() + delay;  // for a lost GPU: the driver tears the old contexts down
    say("warning", "serve.restart " + who + "count=" + std::to_string(c.restarts) + " port=" + std::to_string(c.port) +
                       " reason=\"" + c.reason + "\" (the server starts again in a new process in " +
                       std::to_string(int(delay)) + " s)");
  }

  std::vector<Child> children_;
  int status_ = 0;
};

}  // namespace

void remember_arguments(int argc, char** argv) { g_arguments.assign(argv, argv + argc); }

bool is_supervised_child() { return env_fd(kChild) >= 0; }

unsigned workers_for_test() {
  const char* v = std::getenv("OUTBOARD_TEST_WORKERS");
  if (!v || !*v) return 0;
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  if (*end || n < 2 || n > long(kMaxWorkers))
    throw Error(std::string("OUTBOARD_TEST_WORKERS=") + v + ": expected a number of workers from 2 to 64");
  return static_cast<unsigned>(n);
}

bool should_supervise(bool enabled) {
  if (is_supervised_child() || g_arguments.empty()) return false;
  return workers_for_test() > 0 || (enabled && access("/dev/nvidiactl", F_OK) == 0);
}

Restart restart_state() {
  Restart r;
  if (const char* v = std::getenv(kCount)) r.count = std::atoi(v);
  if (const char* v = std::getenv(kPort)) r.port = static_cast<uint16_t>(std::atoi(v));
  if (const char* v = std::getenv(kReason)) r.reason = v;
  if (const char* v = std::getenv(kWorker)) r.worker = static_cast<unsigned>(std::atoi(v));
  if (const char* v = std::getenv(kWorkers)) r.workers = std::max(1, std::atoi(v));
  if (const char* v = std::getenv(kWorkerGpu)) r.gpu = v;
  return r;
}

void report_port(uint16_t port) { write_line("port " + std::to_string(port)); }

void report_lost(const std::string& why) {
  std::string one_line = why;
  for (char& c : one_line)
    if (c == '\n') c = ' ';
  write_line("lost " + one_line);
}

void start_again_in_place(uint16_t port, const std::string& why) {
  const Restart before = restart_state();
  setenv(kCount, std::to_string(before.count + 1).c_str(), 1);
  setenv(kPort, std::to_string(port).c_str(), 1);
  setenv(kReason, why.c_str(), 1);
  close_range(3, ~0u, CLOSE_RANGE_CLOEXEC);
  std::vector<char*> argv;
  for (auto& a : g_arguments) argv.push_back(a.data());
  argv.push_back(nullptr);
  execv("/proc/self/exe", argv.data());
}

void follow_siblings(std::function<void(std::vector<uint16_t>)> update) {
  const int fd = env_fd(kFromParent);
  if (fd < 0) return;
  std::thread([fd, update = std::move(update)] {
    std::string pending;
    char buf[512];
    for (;;) {
      const ssize_t n = read(fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;  // the supervisor is gone
      pending.append(buf, static_cast<size_t>(n));
      for (size_t end; (end = pending.find('\n')) != std::string::npos;) {
        const std::string line = pending.substr(0, end);
        pending.erase(0, end + 1);
        if (line.rfind("siblings ", 0) != 0) continue;
        std::vector<uint16_t> ports;
        for (size_t at = 9; at < line.size();) {
          size_t comma = line.find(',', at);
          if (comma == std::string::npos) comma = line.size();
          const int p = std::atoi(line.substr(at, comma - at).c_str());
          if (p > 0 && p < 65536) ports.push_back(static_cast<uint16_t>(p));
          at = comma + 1;
        }
        update(std::move(ports));
      }
    }
  }).detach();
}

int supervise(const Supervision& plan) {
  if (plan.workers < 1 || plan.workers > kMaxWorkers) return say("error", "serve.supervise error=\"workers\""), 1;
  struct sigaction stop {};
  stop.sa_handler = stop_all;
  for (int sig : {SIGINT, SIGTERM}) sigaction(sig, &stop, nullptr);
  struct sigaction hup {};
  hup.sa_handler = send_all;  // the servers reread their identities
  sigaction(SIGHUP, &hup, nullptr);
  signal(SIGPIPE, SIG_IGN);  // a worker gone while its ports are written
  if (plan.workers > 1)
    say("info", "serve.workers count=" + std::to_string(plan.workers) + " (a server process per GPU)");
  return Supervisor(plan).run();
}

}  // namespace outboard::tool
