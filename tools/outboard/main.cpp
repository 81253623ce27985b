#include <cstdio>
#include <map>
#include <string_view>

#include "backends/cpu/openblas_core.hpp"
#include "common/error.hpp"
#include "tools/outboard/commands.hpp"
#include "tools/outboard/serve_restarts.hpp"

int main(int argc, char** argv) {
  outboard::tool::remember_arguments(argc, argv);  // a supervised server runs them again
  // OpenBLAS picked its kernels as it loaded: a server given its generic ones runs again with the
  // CPU's (backends/cpu/openblas_core.hpp).
  if (argc > 1 && std::string_view(argv[1]) == "serve") outboard::backends::reexec_with_better_openblas_core(argv);
  CLI::App app{"outboard: use accelerators on other machines of the cluster", "outboard"};
  app.set_version_flag("--version", OUTBOARD_VERSION);
  app.require_subcommand(1);
  std::map<CLI::App*, outboard::tool::Runner> runners;
  for (auto add : {outboard::tool::add_serve, outboard::tool::add_token, outboard::tool::add_run,
                   outboard::tool::add_status, outboard::tool::add_bench, outboard::tool::add_dcuda}) {
    size_t before = app.get_subcommands({}).size();
    auto runner = add(app);
    runners[app.get_subcommands({})[before]] = runner;
  }
  CLI11_PARSE(app, argc, argv);
  try {
    for (auto* sub : app.get_subcommands()) return runners.at(sub)();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "outboard: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
