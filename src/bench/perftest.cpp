#include "bench/perftest.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <sstream>
#include <thread>
#include <vector>

namespace outboard::bench {
namespace {

std::vector<std::string> perftest_args(uint64_t bytes, int iterations, uint16_t port, bool peer_failure) {
  std::vector<std::string> a = {"ucx_perftest", "-t", "ucp_am_bw", "-s", std::to_string(bytes), "-n",
                                std::to_string(iterations), "-w", std::to_string(std::max(1, iterations / 10)),
                                "-p", std::to_string(port), "-f"};
  if (peer_failure) a.push_back("-e");
  return a;
}

// Runs args on `cpu` if given; the child otherwise keeps this process's CPU set.
pid_t spawn(std::vector<std::string> args, int out_fd, std::optional<int> cpu) {
  pid_t pid = fork();
  if (pid == 0) {
    if (cpu && !pin_to_cpu(*cpu)) _exit(126);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    dup2(out_fd, STDOUT_FILENO);
    dup2(out_fd, STDERR_FILENO);
    execvp(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

}  // namespace

std::optional<PerftestResult> run_ucx_perftest(uint64_t bytes, int iterations, uint16_t port, bool peer_failure,
                                               const std::optional<Placement>& placement, std::string& error) {
  std::optional<int> server_cpu, client_cpu;
  if (placement) server_cpu = placement->server_cpu, client_cpu = placement->client_cpu;
  // Children inherit this; Outboard sets the same inside its UCX configuration.
  if (peer_failure) setenv("UCX_MM_ERROR_HANDLING", "y", 0);
  auto server_args = perftest_args(bytes, iterations, port, peer_failure);
  auto client_args = server_args;
  client_args.insert(client_args.begin() + 1, "127.0.0.1");
  FILE* server_out = tmpfile();
  int pipefd[2];
  if (!server_out || pipe(pipefd) != 0) {
    error = "cannot create pipes";
    return std::nullopt;
  }
  pid_t server = spawn(server_args, fileno(server_out), server_cpu);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // let it listen
  pid_t client = spawn(client_args, pipefd[1], client_cpu);
  close(pipefd[1]);
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = read(pipefd[0], buf, sizeof buf)) > 0;) text.append(buf, n);
  close(pipefd[0]);
  int st = 0;
  waitpid(client, &st, 0);
  int sst = 0;
  for (int i = 0; i < 50 && waitpid(server, &sst, WNOHANG) == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  if (waitpid(server, &sst, WNOHANG) == 0) {
    kill(server, SIGKILL);
    waitpid(server, &sst, 0);
  }
  fclose(server_out);
  if (peer_failure) unsetenv("UCX_MM_ERROR_HANDLING");
  std::string client_command;
  for (auto& a : client_args) client_command += (client_command.empty() ? "" : " ") + a;
  const std::string command =
      (peer_failure ? "UCX_MM_ERROR_HANDLING=y " : "") + pinned_command(client_cpu, client_command) +
      (server_cpu ? " (its server on CPU " + std::to_string(*server_cpu) + ")" : "");
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
    if (WIFEXITED(st) && WEXITSTATUS(st) == 126 && client_cpu)
      error = "could not pin ucx_perftest to CPU " + std::to_string(*client_cpu);
    else
      error = "ucx_perftest failed (exit " + std::to_string(WIFEXITED(st) ? WEXITSTATUS(st) : -1) + "): " + text;
    return std::nullopt;
  }
  // With -f the result is one line of numbers: iterations, latency (50th percentile, average,
  // overall), bandwidth (average, overall), message rate (average, overall).
  std::istringstream in(text);
  std::optional<PerftestResult> last;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("Final:", 0) == 0) line = line.substr(6);
    std::istringstream f(line);
    double v[8];
    int n = 0;
    while (n < 8 && f >> v[n]) ++n;
    if (n == 8) last = PerftestResult{v[5], command};
  }
  if (last) return last;
  error = "no result line in ucx_perftest output: " + text;
  return std::nullopt;
}

}  // namespace outboard::bench
