// The churn soak's second server (`outboard bench soak --restart-seconds R`): a server this
// process starts on a loopback port and restarts every R seconds (SIGTERM, then a fresh one on
// the same port), while the client processes list it beside the server under test. Their calls
// on it then fail mid-way at every restart and must be served again elsewhere (the runtime tries
// the next server), with no fallback and no wrong result; the server under test is the one
// sampled. What each instance served is read from its log once it has stopped (serve.stopping).
#pragma once
#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>

namespace outboard::tool {

// What the stopped server instances whose log is `log` served, by routine (and "opencl_kernels":
// kernels enqueued), summed over their "serve.stopping ... calls_by_routine={...}" lines (each
// instance's last word). Where a line
// cannot be read, `problem` (if still empty) says so.
std::map<std::string, uint64_t> served_by_stopped_instances(const std::string& log, std::string& problem);

class RestartedServer {
 public:
  // `outboard` is the path of this program; `work` a directory for the port file and the log.
  RestartedServer(std::string outboard, std::string token, std::string work);
  ~RestartedServer();  // stops the instance running
  RestartedServer(const RestartedServer&) = delete;
  RestartedServer& operator=(const RestartedServer&) = delete;

  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  // Stops the running instance (its calls counted first) and starts a fresh one on the port.
  void restart();
  // Stops the running instance, its calls counted.
  void stop();
  uint64_t restarts() const { return restarts_; }
  uint64_t calls_served() const;  // by the instances stopped so far
  uint64_t served(const std::string& routine) const {
    auto it = by_routine_.find(routine);
    return it == by_routine_.end() ? 0 : it->second;
  }
  const std::string& problem() const { return problem_; }  // the first thing that went wrong, if any

 private:
  void start();
  void count_calls(const std::string& log);
  std::string log_of(uint64_t instance) const { return work_ + "/server-" + std::to_string(instance) + ".log"; }

  std::string outboard_, token_, work_;
  pid_t pid_ = -1;
  uint16_t port_ = 0;
  uint64_t restarts_ = 0, instance_ = 0;
  std::string problem_;
  std::map<std::string, uint64_t> by_routine_;
};

}  // namespace outboard::tool
