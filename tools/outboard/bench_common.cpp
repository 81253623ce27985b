#include "tools/outboard/bench_common.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "bench/results.hpp"
#include "common/error.hpp"

namespace outboard::tool {

void add_server_flags(CLI::App* cmd, BenchFlags& f) {
  cmd->add_option("--server", f.server, "host:port (default: OUTBOARD_SERVERS's first, or 127.0.0.1:7700)");
  cmd->add_option("--token-file", f.token, "Secret file (default: OUTBOARD_TOKEN_FILE or outboard token's path)");
}

void add_output_flags(CLI::App* cmd, BenchFlags& f, const std::string& default_prefix) {
  f.output = default_prefix;
  cmd->add_option("--output", f.output, "Result files prefix: PREFIX.json, PREFIX-<series>.np (NetPIPE format)")
      ->capture_default_str();
  cmd->add_flag("--plot", f.plot, "Also write PNG plots (needs python3 with matplotlib)");
}

void add_sweep_flags(CLI::App* cmd, BenchFlags& f, uint64_t default_max_bytes) {
  f.sweep.max_bytes = default_max_bytes;
  cmd->add_option("--min-bytes", f.sweep.min_bytes, "Smallest message")->check(CLI::PositiveNumber)->capture_default_str();
  cmd->add_option("--max-bytes", f.sweep.max_bytes, "Largest message")->check(CLI::PositiveNumber)->capture_default_str();
  cmd->add_option("--perturbation", f.sweep.perturbation, "Bytes below and above each size also measured (NetPIPE's -p)")
      ->capture_default_str();
  cmd->add_option("--steps-per-octave", f.sweep.steps_per_octave, "Sizes per doubling")
      ->check(CLI::Range(1, 64))->capture_default_str();
  cmd->add_option("--target-seconds", f.sweep.target_seconds, "Time one trial of a point should take")
      ->check(CLI::PositiveNumber)->capture_default_str();
  cmd->add_option("--trials", f.sweep.trials, "Trials per point; the minimum is kept (NTRIALS)")
      ->check(CLI::Range(1, 1000))->capture_default_str();
}

void show_progress(const std::string& series, const bench::Point& p, size_t index, size_t count) {
  std::fprintf(stderr, "\r%-28s [%3zu/%3zu] %12llu B %12.2f MiB/s %12.3f us   ", series.c_str(), index + 1, count,
               (unsigned long long)p.bytes, p.mib_per_s(), p.seconds * 1e6);
  if (index + 1 == count) std::fprintf(stderr, "\n");
}

std::string command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(in)), {}), out;
  for (char c : all) out += c ? c : ' ';
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

namespace {

// The plot script sits in ../share/outboard beside this executable (build tree and install).
void plot(const std::string& json_path) {
  std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe");
  std::string script = (exe.parent_path().parent_path() / "share" / "outboard" / "outboard_plot.py").string();
  if (!std::filesystem::exists(script)) throw Error("cannot find the plot script " + script);
  pid_t pid = fork();
  if (pid == 0) {
    execl("/usr/bin/python3", "python3", script.c_str(), json_path.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw Error("plotting failed (python3 with matplotlib is needed: apt-get install python3-matplotlib)");
}

}  // namespace

void finish(const nlohmann::json& doc, const BenchFlags& f) {
  for (const auto& file : bench::write_results(f.output, doc)) std::printf("wrote %s\n", file.c_str());
  if (f.plot) plot(f.output + ".json");
}

}  // namespace outboard::tool
