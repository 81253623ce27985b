// Who may use the server: named secrets, one per client group (Config::identities_dir), or the one
// secret of token_file as the identity "default". Reread on SIGHUP; failed authentications slow
// their address down.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/secret.hpp"

namespace outboard::server {

struct Config;

class Identities {
 public:
  // Reads them as `config` says. Throws Error when a secret cannot be read, or the folder holds
  // none: a server nobody can use is a configuration mistake.
  explicit Identities(const Config& config);

  // Reads them again (SIGHUP). Returns the identities no longer there or whose secret changed:
  // their sessions end. On an error, the identities stay as they were and `error` says why.
  std::vector<std::string> reload(std::string& error);

  // The secret of `name` ("" is "default"); none when there is no such identity.
  std::optional<Secret> secret(const std::string& name) const;
  size_t size() const { return secrets_.size(); }
  std::vector<std::string> names() const;

  // Failed authentications from `address` (a host, without port): each doubles how long its next
  // refusal is held back, from 100 ms to 5 s; a success clears them.
  uint64_t refusal_delay_ns(const std::string& address);
  void succeeded(const std::string& address) { failures_.erase(address); }

  static constexpr const char* kDefault = "default";

 private:
  std::map<std::string, Secret> load() const;
  std::string dir_, token_file_;
  std::map<std::string, Secret> secrets_;
  std::map<std::string, unsigned> failures_;  // by address
};

// Whether `name` may name an identity: 1-64 of [A-Za-z0-9._-], not starting with a dot.
bool valid_identity_name(const std::string& name);

}  // namespace outboard::server
