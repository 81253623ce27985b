// Connecting from the tool: the same settings as the client runtime, with --server and
// --token-file overriding the environment.
#pragma once
#include <memory>
#include <string>

#include "client/connection.hpp"

namespace outboard::tool {

std::unique_ptr<client::Connection> connect_from_flags(const std::string& server, const std::string& token_file,
                                                       const std::string& client_name);

}  // namespace outboard::tool
