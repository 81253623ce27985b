// `outboard dcuda run -n N -- PROGRAM ARGS`: a dcuda run of N processes on this host.
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <memory>

#include "common/error.hpp"
#include "tools/outboard/commands.hpp"
#include "tools/outboard/spawn.hpp"

namespace outboard::tool {

Runner add_dcuda(CLI::App& app) {
  auto* cmd = app.add_subcommand("dcuda", "dcuda: distributed CUDA programs (outboard dcuda run -n N -- PROGRAM ARGS)");
  cmd->require_subcommand(1);
  auto* run = cmd->add_subcommand("run", "Run N processes of a dcuda program on this host (one per GPU)");
  struct Args {
    uint32_t n = 1;
    double grace = 5;
    std::vector<std::string> command;
  };
  auto a = std::make_shared<Args>();
  run->add_option("-n,--processes", a->n, "How many processes")->required()->check(CLI::Range(1u, 1u << 16));
  run->add_option("--grace", a->grace, "Seconds the others get to end on their own after one failed")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  run->add_option("command", a->command, "Program and its arguments")->required();
  return [=]() -> int {
    // A fresh private rendezvous directory for this run (mkdtemp makes it 0700).
    std::string base = (std::filesystem::temp_directory_path() / "outboard-dcuda-run-XXXXXX").string();
    if (!mkdtemp(base.data())) throw Error("cannot create a directory in " + base + ": " + errno_text(errno));
    const std::string job = "run-" + std::to_string(getpid());
    std::vector<EnvVars> envs;
    for (uint32_t i = 0; i < a->n; ++i)
      envs.push_back({{"DCUDA_RANK", std::to_string(i)},
                      {"DCUDA_SIZE", std::to_string(a->n)},
                      {"DCUDA_LOCAL_RANK", std::to_string(i)},
                      {"DCUDA_JOB", job},
                      {"DCUDA_BOOTSTRAP_DIR", base + "/rendezvous"}});
    int status = 0;
    try {
      status = run_group(a->command, envs, a->grace);
    } catch (...) {
      std::filesystem::remove_all(base);
      throw;
    }
    std::error_code ignored;
    std::filesystem::remove_all(base, ignored);
    return status;
  };
}

}  // namespace outboard::tool
