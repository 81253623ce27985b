#include "server/identities.hpp"

#include <dirent.h>

#include <algorithm>
#include <memory>

#include "common/error.hpp"
#include "server/config.hpp"

namespace outboard::server {

bool valid_identity_name(const std::string& name) {
  if (name.empty() || name.size() > 64 || name[0] == '.') return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
  });
}

Identities::Identities(const Config& config)
    : dir_(config.identities_dir),
      token_file_(config.token_file.empty() ? default_token_path() : config.token_file),
      secrets_(load()) {}

std::map<std::string, Secret> Identities::load() const {
  std::map<std::string, Secret> out;
  if (dir_.empty()) {
    out[kDefault] = read_secret(token_file_);
    return out;
  }
  std::unique_ptr<DIR, int (*)(DIR*)> d(::opendir(dir_.c_str()), ::closedir);
  if (!d) throw Error("cannot read the identities folder " + dir_ + " (identities_dir)");
  while (dirent* e = ::readdir(d.get())) {
    const std::string name = e->d_name;
    if (name.empty() || name[0] == '.') continue;  // ., .., and hidden files (editors' leftovers)
    if (!valid_identity_name(name))
      throw Error("identities folder " + dir_ + ": '" + name + "' is not a valid identity name ([A-Za-z0-9._-], at most 64)");
    out[name] = read_secret(dir_ + "/" + name);  // also refuses files others may read
  }
  if (out.empty()) throw Error("the identities folder " + dir_ + " holds no secret: nobody could connect");
  return out;
}

std::vector<std::string> Identities::reload(std::string& error) {
  std::vector<std::string> gone;
  try {
    auto fresh = load();
    for (const auto& [name, secret] : secrets_) {
      auto it = fresh.find(name);
      if (it == fresh.end() || it->second != secret) gone.push_back(name);
    }
    secrets_ = std::move(fresh);
  } catch (const Error& e) {
    error = e.what();
  }
  return gone;
}

std::optional<Secret> Identities::secret(const std::string& name) const {
  auto it = secrets_.find(name.empty() ? kDefault : name);
  if (it == secrets_.end()) return std::nullopt;
  return it->second;
}

std::vector<std::string> Identities::names() const {
  std::vector<std::string> out;
  for (const auto& [name, _] : secrets_) out.push_back(name);
  return out;
}

uint64_t Identities::refusal_delay_ns(const std::string& address) {
  const unsigned n = ++failures_[address];
  const uint64_t delay = 100'000'000ull << std::min(n - 1, 6u);
  if (failures_.size() > 100000) failures_.clear();  // a flood of addresses must not grow it forever
  return std::min<uint64_t>(delay, 5'000'000'000ull);
}

}  // namespace outboard::server
