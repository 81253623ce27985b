#include "tools/outboard/serve_restarts.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

namespace outboard::tool {
namespace {

// What the child reads from its environment.
constexpr const char* kChild = "OUTBOARD_SERVE_CHILD";            // the fd of the pipe to the parent
constexpr const char* kCount = "OUTBOARD_SERVE_RESTARTS";
constexpr const char* kPort = "OUTBOARD_SERVE_PORT";
constexpr const char* kReason = "OUTBOARD_SERVE_RESTART_REASON";

std::vector<std::string> g_arguments;
volatile sig_atomic_t g_child = 0;

void pass_on(int sig) {
  if (g_child > 0) kill(g_child, sig);
}

// The parent logs in the server's text format, on stderr (its own logger is the child's).
void say(const char* level, const std::string& text) {
  char when[32];
  const time_t now = time(nullptr);
  struct tm tm {};
  localtime_r(&now, &tm);
  strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
  std::fprintf(stderr, "%s %s %s\n", when, level, text.c_str());
}

int child_fd() {
  const char* v = std::getenv(kChild);
  return v ? std::atoi(v) : -1;
}

void write_line(const std::string& line) {
  const int fd = child_fd();
  if (fd < 0) return;
  const std::string l = line + "\n";
  for (size_t at = 0; at < l.size();) {
    const ssize_t n = write(fd, l.data() + at, l.size() - at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    at += static_cast<size_t>(n);
  }
}

}  // namespace

void remember_arguments(int argc, char** argv) { g_arguments.assign(argv, argv + argc); }

bool is_supervised_child() { return child_fd() >= 0; }

bool should_supervise(bool enabled) {
  return enabled && !is_supervised_child() && access("/dev/nvidiactl", F_OK) == 0 && !g_arguments.empty();
}

Restart restart_state() {
  Restart r;
  if (const char* v = std::getenv(kCount)) r.count = std::atoi(v);
  if (const char* v = std::getenv(kPort)) r.port = static_cast<uint16_t>(std::atoi(v));
  if (const char* v = std::getenv(kReason)) r.reason = v;
  return r;
}

void report_port(uint16_t port) { write_line("port " + std::to_string(port)); }

void report_gpus_lost(const std::string& why) {
  std::string one_line = why;
  for (char& c : one_line)
    if (c == '\n') c = ' ';
  write_line("lost " + one_line);
}

int supervise() {
  struct sigaction sa {};
  sa.sa_handler = pass_on;
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &sa, nullptr);
  int restarts = 0;
  uint16_t port = 0;
  std::string reason;
  for (;;) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return say("error", "serve.supervise error=\"pipe\""), 1;
    const pid_t pid = fork();
    if (pid < 0) return say("error", "serve.supervise error=\"fork\""), 1;
    if (pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGTERM);  // no server outlives its supervisor
      close(fds[0]);
      fcntl(fds[1], F_SETFD, 0);  // the child keeps the writing end across exec
      setenv(kChild, std::to_string(fds[1]).c_str(), 1);
      setenv(kCount, std::to_string(restarts).c_str(), 1);
      if (port) setenv(kPort, std::to_string(port).c_str(), 1);
      if (!reason.empty()) setenv(kReason, reason.c_str(), 1);
      if (restarts > 0) unsetenv("OUTBOARD_TEST_GPU_FAULT");  // a test's fault happens once
      std::vector<char*> argv;
      for (auto& a : g_arguments) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv("/proc/self/exe", argv.data());
      _exit(127);
    }
    g_child = pid;
    close(fds[1]);
    // The child's lines: its port once it listens, why it is about to end.
    std::string text;
    char buf[512];
    for (;;) {
      const ssize_t n = read(fds[0], buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      text.append(buf, static_cast<size_t>(n));
    }
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    g_child = 0;
    for (size_t at = 0; at < text.size();) {
      size_t end = text.find('\n', at);
      if (end == std::string::npos) end = text.size();
      const std::string line = text.substr(at, end - at);
      if (line.rfind("port ", 0) == 0) port = static_cast<uint16_t>(std::atoi(line.c_str() + 5));
      if (line.rfind("lost ", 0) == 0) reason = line.substr(5);
      at = end + 1;
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != kExitGpusLost)
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    ++restarts;
    say("warning", "serve.restart count=" + std::to_string(restarts) + " port=" + std::to_string(port) +
                       " reason=\"" + reason + "\" (the server starts again in a new process)");
    sleep(1);  // the driver tears the old process's contexts down
  }
}

}  // namespace outboard::tool
