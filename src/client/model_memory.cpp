#include "client/model_memory.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/error.hpp"

namespace outboard::client {
namespace {

// The whole file: {"version": 1, "entries": {KEY: {"written": UNIX seconds, "model": {...}}}}.
nlohmann::json read_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    if (errno == ENOENT) return nlohmann::json::object();
    throw Error("cannot read the cost model's memory " + path + ": " + std::strerror(errno));
  }
  std::stringstream text;
  text << in.rdbuf();
  if (text.str().empty()) return nlohmann::json::object();  // made by a writer that died: as none
  nlohmann::json j = nlohmann::json::parse(text.str(), nullptr, false);
  const auto version = j.is_object() ? j.find("version") : j.end();
  if (!j.is_object() || version == j.end() || !version->is_number_integer() || *version != 1 || !j.contains("entries") ||
      !j["entries"].is_object())
    throw Error(path + " is not a cost model's memory (OUTBOARD_MODEL_FILE): not a JSON object of version 1 with \"entries\"");
  return j;
}

double written(const nlohmann::json& entry) {
  const auto it = entry.find("written");
  return it != entry.end() && it->is_number() ? it->get<double>() : 0;
}

// Holds FILE.lock's advisory lock while it lives.
class FileLock {
 public:
  explicit FileLock(const std::string& path) : fd_(::open((path + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600)) {
    if (fd_ < 0) throw Error("cannot open " + path + ".lock: " + std::strerror(errno));
    while (::flock(fd_, LOCK_EX) != 0)
      if (errno != EINTR) {
        ::close(fd_);
        throw Error("cannot lock " + path + ".lock: " + std::strerror(errno));
      }
  }
  ~FileLock() { ::close(fd_); }  // releases the lock
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_;
};

}  // namespace

std::string model_memory_key(const Settings& s) {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) std::strcpy(host, "?");
  std::string key = std::string(host) + " ->";
  for (const ServerAddress& a : s.servers) key += " " + a.text();
  return key;
}

std::optional<std::string> read_model_memory(const std::string& path, const std::string& key) {
  const nlohmann::json j = read_file(path);
  if (!j.contains("entries")) return std::nullopt;
  const auto it = j["entries"].find(key);
  if (it == j["entries"].end() || !it->is_object() || !it->contains("model")) return std::nullopt;
  return (*it)["model"].dump();
}

void write_model_memory(const std::string& path, const std::string& key, const std::string& memory) {
  const nlohmann::json model = nlohmann::json::parse(memory, nullptr, false);
  if (!model.is_object()) throw Error("internal error: the cost model's memory is not a JSON object");
  std::error_code ec;
  if (const auto dir = std::filesystem::path(path).parent_path(); !dir.empty()) {
    std::filesystem::create_directories(dir, ec);
    if (ec) throw Error("cannot make " + dir.string() + " for the cost model's memory: " + ec.message());
  }
  FileLock lock(path);
  nlohmann::json j = read_file(path);  // a file that is not one is left alone (it may be someone's)
  if (!j.contains("entries")) j = {{"version", 1}, {"entries", nlohmann::json::object()}};
  auto& entries = j["entries"];
  const auto now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  entries[key] = {{"written", now}, {"model", model}};
  while (entries.size() > kMaxModelEntries) {  // the least recently written goes
    auto oldest = entries.begin();
    for (auto it = entries.begin(); it != entries.end(); ++it)
      if (written(*it) < written(*oldest)) oldest = it;
    entries.erase(oldest);
  }
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << j.dump(1) << "\n";
    out.close();
    if (!out) {
      std::filesystem::remove(tmp, ec);
      throw Error("cannot write " + tmp + ": " + std::strerror(errno));
    }
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    throw Error("cannot replace " + path + ": " + ec.message());
  }
}

}  // namespace outboard::client
