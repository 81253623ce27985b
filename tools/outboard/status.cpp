#include <cstdio>
#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "tools/outboard/commands.hpp"
#include "tools/outboard/connect.hpp"

namespace outboard::tool {

Runner add_status(CLI::App& app) {
  auto* cmd = app.add_subcommand("status", "Show a server's version, backends, uptime and per-client counters");
  auto server = std::make_shared<std::string>();
  auto token = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  cmd->add_option("--server", *server, "host:port (default: OUTBOARD_SERVERS's first, or 127.0.0.1:7700)");
  cmd->add_option("--token-file", *token, "Secret file");
  cmd->add_flag("--json", *json, "Print the status document as JSON");
  return [=] {
    auto conn = connect_from_flags(*server, *token, "outboard-status");
    auto reply = conn->request(wire::StatusRequest{}, {}, nullptr, 0, 10);
    auto* s = std::get_if<wire::StatusReply>(&reply);
    if (!s) throw Error("unexpected answer to a status request");
    auto doc = nlohmann::json::parse(s->json);
    if (*json) {
      std::printf("%s\n", doc.dump(2).c_str());
      return 0;
    }
    std::printf("server %s (%s), outboard %s, up %.0f s\n", doc["server"].get<std::string>().c_str(),
                doc["listen"].get<std::string>().c_str(), doc["version"].get<std::string>().c_str(),
                doc["uptime_seconds"].get<double>());
    for (const auto& b : doc["backends"]) std::printf("backend %s\n", b.dump().c_str());
    std::printf("calls %llu, errors %llu, connections %llu, refused authentications %llu\n",
                (unsigned long long)doc["calls"], (unsigned long long)doc["errors"],
                (unsigned long long)doc["connections"], (unsigned long long)doc["refused_authentications"]);
    std::printf("%-6s %-22s %-36s %8s %14s %14s\n", "id", "address", "client", "calls", "bytes in", "bytes out");
    for (const auto& c : doc["clients"])
      std::printf("%-6llu %-22s %-36s %8llu %14llu %14llu\n", (unsigned long long)c["id"],
                  c["address"].get<std::string>().c_str(), c["client"].get<std::string>().c_str(),
                  (unsigned long long)c["calls"], (unsigned long long)c["bytes_in"], (unsigned long long)c["bytes_out"]);
    return 0;
  };
}

}  // namespace outboard::tool
