// Subcommands of the `outboard` tool. Each adds itself to the CLI app and runs when chosen.
#pragma once
#include <CLI/CLI.hpp>
#include <functional>

namespace outboard::tool {

// Registers a subcommand; the returned function runs it and gives the exit status.
using Runner = std::function<int()>;
Runner add_serve(CLI::App& app);
Runner add_token(CLI::App& app);
Runner add_run(CLI::App& app);
Runner add_status(CLI::App& app);
Runner add_bench(CLI::App& app);
Runner add_dcuda(CLI::App& app);

}  // namespace outboard::tool
