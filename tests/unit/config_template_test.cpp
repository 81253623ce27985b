// The shipped /etc/outboard/outboard.toml (packaging/outboard.toml.in) against the settings the
// server reads (src/server/config.cpp), so the two cannot drift: it names every key the loader
// knows and no other, each commented-out value is that key's default, and it loads as shipped.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "server/config.hpp"

namespace outboard::server {
namespace {

namespace fs = std::filesystem;

std::string read(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in) << "cannot read " << path;
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The template as installed, with the installation's paths filled in as for the prefix /usr.
std::string shipped() {
  std::string text = read(OUTBOARD_CONFIG_TEMPLATE);
  for (size_t at; (at = text.find("@OUTBOARD_ETC@")) != std::string::npos;) text.replace(at, 14, "/etc");
  return text;
}

// Its settings: `#key = value` (a default, commented out) or `key = value` (set as shipped).
struct Lines {
  std::set<std::string> keys;
  std::string defaults;  // the commented-out settings, uncommented: a TOML document
  std::set<std::string> set_keys;
};
Lines settings_of(const std::string& text) {
  Lines l;
  static const std::regex line(R"(^(#?)([a-z_]+) = .*$)");
  std::istringstream in(text);
  std::smatch m;
  for (std::string s; std::getline(in, s);) {
    if (!std::regex_match(s, m, line)) continue;
    EXPECT_TRUE(l.keys.insert(m[2]).second) << "key " << m[2] << " appears twice";
    if (m[1].length()) l.defaults += s.substr(1) + "\n";
    else l.set_keys.insert(m[2]);
  }
  return l;
}

std::string write_temp(const std::string& text) {
  std::string path = (fs::temp_directory_path() / "outboard-template-test-XXXXXX").string();
  int fd = ::mkstemp(path.data());
  EXPECT_GE(fd, 0);
  ::close(fd);
  std::ofstream(path) << text;
  return path;
}

TEST(ConfigTemplate, NamesEveryKeyTheServerReadsAndNoOther) {
  std::set<std::string> loader;  // every `key == "..."` of load_config_file
  static const std::regex key(R"re(key == "([a-z_]+)")re");
  const std::string source = read(OUTBOARD_CONFIG_SOURCE);
  for (auto it = std::sregex_iterator(source.begin(), source.end(), key); it != std::sregex_iterator(); ++it)
    loader.insert((*it)[1]);
  ASSERT_GT(loader.size(), 20u) << "config.cpp no longer reads keys as `key == \"name\"`: update this test";
  const Lines l = settings_of(shipped());
  for (const auto& k : loader) EXPECT_TRUE(l.keys.count(k)) << "outboard.toml.in does not show the setting " << k;
  for (const auto& k : l.keys) EXPECT_TRUE(loader.count(k)) << "outboard.toml.in shows " << k << ", which the server does not read";
}

TEST(ConfigTemplate, CommentedValuesAreTheDefaults) {
  const Lines l = settings_of(shipped());
  const std::string path = write_temp(l.defaults);
  Config loaded = load_config_file(path);
  fs::remove(path);
  Config defaults;
  // Depend on the machine (three quarters of its cores; 8 or more hardware threads or not): the
  // file shows an example.
  defaults.copy_lanes = loaded.copy_lanes;
  defaults.idle_spin_ns = loaded.idle_spin_ns;
  EXPECT_TRUE(loaded == defaults) << "a commented-out value in outboard.toml.in is not its key's default:\n" << l.defaults;
}

TEST(ConfigTemplate, LoadsAsShippedWithTheServicesSecret) {
  const std::string path = write_temp(shipped());
  Config c = load_config_file(path);
  fs::remove(path);
  EXPECT_NO_THROW(validate(c));
  EXPECT_EQ(c.token_file, "/etc/outboard/token");
  EXPECT_EQ(settings_of(shipped()).set_keys, std::set<std::string>{"token_file"});
}

}  // namespace
}  // namespace outboard::server
