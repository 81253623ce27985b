// The cost model's memory between processes (OUTBOARD_MODEL_FILE): what a process's LinkModel
// measured (LinkModel::memory()) is kept in a JSON file, one entry per host and list of servers (a
// home shared by several hosts keeps each host's own), so a new process of a program decides
// from its first call as the last one had learned to, as FFTW's wisdom spares its planning. Read
// when the runtime starts; written at exit under an advisory lock (flock on FILE.lock), replacing
// only this process's entry, through a temporary file renamed over the old one, so a reader never
// sees half a file. At most kMaxModelEntries entries, the least recently written dropped.
#pragma once
#include <optional>
#include <string>

#include "client/settings.hpp"

namespace outboard::client {

inline constexpr size_t kMaxModelEntries = 64;

// This process's entry's name: the host and the servers it uses.
std::string model_memory_key(const Settings& s);
// The entry `key` of the file at `path`; nullopt when the file or the entry does not exist.
// Throws Error when the file cannot be read or is not such a file.
std::optional<std::string> read_model_memory(const std::string& path, const std::string& key);
// Writes `memory` (LinkModel::memory()'s document) as the entry `key`, creating the file and its
// folder where they do not exist. Throws Error on failure, or where the file is not such a file;
// it is then as it was.
void write_model_memory(const std::string& path, const std::string& key, const std::string& memory);

}  // namespace outboard::client
