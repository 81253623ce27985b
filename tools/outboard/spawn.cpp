#include "tools/outboard/spawn.hpp"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstring>
#include <map>
#include <thread>

#include "common/clock.hpp"
#include "common/error.hpp"

extern char** environ;

namespace outboard::tool {
namespace {

volatile std::sig_atomic_t g_signal = 0;  // a signal to pass on to the children
extern "C" void remember_signal(int s) { g_signal = s; }

// This process's environment with `extra` set (replacing what it has of those names).
std::vector<std::string> environment_with(const EnvVars& extra) {
  std::map<std::string, std::string> vars;
  for (char** e = environ; *e; ++e) {
    const char* eq = std::strchr(*e, '=');
    if (eq) vars[std::string(*e, static_cast<size_t>(eq - *e))] = eq + 1;
  }
  for (const auto& [k, v] : extra) vars[k] = v;
  std::vector<std::string> out;
  for (const auto& [k, v] : vars) out.push_back(k + "=" + v);
  return out;
}

int status_of(int wstatus) { return WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus); }

}  // namespace

int run_group(const std::vector<std::string>& argv, const std::vector<EnvVars>& envs, double grace_s) {
  std::map<pid_t, size_t> running;  // pid -> index
  auto kill_all = [&](int sig) {
    for (const auto& [pid, i] : running) kill(pid, sig);
  };
  struct sigaction sa {}, old_int {}, old_term {};
  sa.sa_handler = remember_signal;
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  for (size_t i = 0; i < envs.size(); ++i) {
    std::vector<std::string> env = environment_with(envs[i]);
    std::vector<char*> envp;
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    pid_t pid = 0;
    if (int rc = posix_spawnp(&pid, args[0], nullptr, nullptr, args.data(), envp.data()); rc != 0) {
      kill_all(SIGKILL);
      for (const auto& [p, _] : running) waitpid(p, nullptr, 0);
      sigaction(SIGINT, &old_int, nullptr);
      sigaction(SIGTERM, &old_term, nullptr);
      throw Error("cannot run " + argv[0] + ": " + errno_text(rc));
    }
    running[pid] = i;
  }

  int first_failure = 0;
  uint64_t term_at = 0, kill_at = 0;  // 0: not yet due
  while (!running.empty()) {
    int wstatus = 0;
    const pid_t pid = waitpid(-1, &wstatus, WNOHANG);
    const uint64_t now = now_ns();
    if (pid > 0 && running.count(pid)) {
      running.erase(pid);
      if (status_of(wstatus) != 0 && first_failure == 0) {
        first_failure = status_of(wstatus);
        term_at = now + static_cast<uint64_t>(grace_s * 1e9);
      }
      continue;
    }
    if (g_signal) {  // passed on at once
      kill_all(g_signal);
      g_signal = 0;
      if (!kill_at) kill_at = now + 5'000'000'000ull;
    }
    if (term_at && now >= term_at) {
      kill_all(SIGTERM);
      term_at = 0;
      kill_at = now + 1'000'000'000ull;
    }
    if (kill_at && now >= kill_at) kill_all(SIGKILL), kill_at = 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  return first_failure;
}

}  // namespace outboard::tool
