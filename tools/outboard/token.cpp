#include <cstdio>

#include "common/secret.hpp"
#include "tools/outboard/commands.hpp"

namespace outboard::tool {

Runner add_token(CLI::App& app) {
  auto* cmd = app.add_subcommand("token", "Create a secret file (mode 0600) shared by a server and its clients");
  auto path = std::make_shared<std::string>(default_token_path());
  auto force = std::make_shared<bool>(false);
  cmd->add_option("--file", *path, "Where to write it")->capture_default_str();
  cmd->add_flag("--force", *force, "Replace an existing file");
  return [=] {
    write_new_secret(*path, *force);
    std::printf("wrote a new secret to %s\n", path->c_str());
    return 0;
  };
}

}  // namespace outboard::tool
