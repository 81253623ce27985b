#include "tools/outboard/soak_restarted_server.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/clock.hpp"
#include "common/error.hpp"

namespace outboard::tool {
namespace {

constexpr uint64_t kStartNs = 30'000'000'000;  // a server reports its port within this
constexpr uint64_t kStopNs = 30'000'000'000;   // and ends within this after SIGTERM

}  // namespace

RestartedServer::RestartedServer(std::string outboard, std::string token, std::string work)
    : outboard_(std::move(outboard)), token_(std::move(token)), work_(std::move(work)) {
  std::filesystem::create_directories(work_);
  start();
}

RestartedServer::~RestartedServer() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
}

void RestartedServer::start() {
  const std::string port_file = work_ + "/port";
  std::filesystem::remove(port_file);
  ++instance_;
  const std::string log = log_of(instance_);
  std::vector<std::string> args = {outboard_, "serve", "--port", std::to_string(port_), "--port-file", port_file};
  if (!token_.empty()) args.insert(args.end(), {"--token-file", token_});
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) throw Error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {  // async-signal-safe calls only until the exec
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) _exit(126);
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    ::close_range(3, ~0U, 0);
    ::execv(outboard_.c_str(), argv.data());
    _exit(127);
  }
  pid_ = pid;
  for (const uint64_t until = now_ns() + kStartNs; now_ns() < until;) {
    std::ifstream in(port_file);
    unsigned port = 0;
    if (in >> port && port > 0 && port < 65536) {
      port_ = static_cast<uint16_t>(port);
      return;
    }
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      throw Error("the restarted server did not start (log " + log + ")");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  throw Error("the restarted server did not report its port within 30 s (log " + log + ")");
}

std::map<std::string, uint64_t> served_by_stopped_instances(const std::string& log, std::string& problem) {
  std::map<std::string, uint64_t> out;
  std::ifstream in(log);
  for (std::string line; std::getline(in, line);) {
    const size_t at = line.find("serve.stopping ");
    const size_t json = line.find("calls_by_routine=");
    if (at == std::string::npos || json == std::string::npos) continue;
    try {
      const nlohmann::json counts = nlohmann::json::parse(line.substr(json + 17));
      for (auto it = counts.begin(); it != counts.end(); ++it) out[it.key()] += it.value().get<uint64_t>();
    } catch (const std::exception& e) {
      if (problem.empty()) problem = "unreadable serve.stopping line in " + log + ": " + e.what();
    }
  }
  return out;
}

// The stopped instance's last word: "serve.stopping ... calls=N errors=E calls_by_routine={...}".
void RestartedServer::count_calls(const std::string& log) {
  {
    std::ifstream in(log);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (text.find("serve.stopping ") == std::string::npos) {
      if (problem_.empty()) problem_ = "the restarted server did not log what it served (" + log + ")";
      return;
    }
  }
  for (const auto& [routine, n] : served_by_stopped_instances(log, problem_)) by_routine_[routine] += n;
}

void RestartedServer::stop() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGTERM);
  int status = 0;
  bool ended = false;
  for (const uint64_t until = now_ns() + kStopNs; !ended && now_ns() < until;) {
    ended = ::waitpid(pid_, &status, WNOHANG) == pid_;
    if (!ended) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (!ended) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, &status, 0);
    if (problem_.empty()) problem_ = "the restarted server did not end within 30 s of SIGTERM";
  } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    if (problem_.empty()) problem_ = "the restarted server ended with status " + std::to_string(status) + " on SIGTERM";
  }
  pid_ = -1;
  count_calls(log_of(instance_));
}

uint64_t RestartedServer::calls_served() const {
  uint64_t n = 0;
  for (const auto& [routine, calls] : by_routine_)
    if (routine != "opencl_kernels") n += calls;  // enqueues, not calls
  return n;
}

void RestartedServer::restart() {
  stop();
  ++restarts_;
  start();
}

}  // namespace outboard::tool
