#include "tools/outboard/connect.hpp"

#include "common/secret.hpp"

namespace outboard::tool {

std::unique_ptr<client::Connection> connect_from_flags(const std::string& server, const std::string& token_file,
                                                       const std::string& client_name) {
  client::Settings s = client::settings_from_environment();
  if (!server.empty()) s.servers = {client::parse_server_address(server)};
  if (!token_file.empty()) s.token_file = token_file;
  auto conn = std::make_unique<client::Connection>(s.servers.front(), read_secret(s.token_file), client_name,
                                                   s.connect_timeout_seconds, s.identity, s.encrypt);
  conn->set_link_lanes(static_cast<unsigned>(s.lanes));
  return conn;
}

}  // namespace outboard::tool
