#include "dcuda/runtime/bootstrap.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "common/clock.hpp"
#include "common/error.hpp"

namespace dcuda::runtime {

using outboard::Error;
namespace fs = std::filesystem;

namespace {

constexpr uint32_t kMaxProcesses = 1u << 16;
constexpr uint32_t kMaxRanks = 1u << 24;  // per process
constexpr const char* kMagic = "dcuda-bootstrap 1";

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

// A decimal number of at most `max`; throws Error naming `what`.
uint64_t number(const std::string& text, uint64_t max, const std::string& what) {
  if (text.empty() || text.size() > 20 || text.find_first_not_of("0123456789") != std::string::npos)
    throw Error(what + ": not a number: '" + text + "'");
  const uint64_t v = std::strtoull(text.c_str(), nullptr, 10);
  if (v > max) throw Error(what + ": " + text + " is larger than " + std::to_string(max));
  return v;
}

// A directory of ours that nobody else may read: made 0700 if missing, checked if present.
void private_dir(const fs::path& dir) {
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    throw Error("dcuda bootstrap: cannot create " + dir.string() + ": " + outboard::errno_text(errno));
  struct stat st {};
  if (lstat(dir.c_str(), &st) != 0) throw Error("dcuda bootstrap: cannot stat " + dir.string());
  if (!S_ISDIR(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 077))
    throw Error("dcuda bootstrap: " + dir.string() + " must be a directory of this user with mode 0700");
}

fs::path record_path(const fs::path& dir, uint32_t p) { return dir / ("process." + std::to_string(p)); }
fs::path done_path(const fs::path& dir, uint32_t p) { return dir / ("done." + std::to_string(p)); }

// Writes `text` so that a reader sees it whole or not at all.
void write_atomically(const fs::path& path, const std::string& text) {
  const fs::path tmp = path.string() + ".tmp." + std::to_string(getpid());
  const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) throw Error("dcuda bootstrap: cannot write " + tmp.string() + ": " + outboard::errno_text(errno));
  const bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) && fsync(fd) == 0;
  close(fd);
  if (!ok || rename(tmp.c_str(), path.c_str()) != 0) {
    unlink(tmp.c_str());
    throw Error("dcuda bootstrap: cannot write " + path.string() + ": " + outboard::errno_text(errno));
  }
}

struct Record {
  uint32_t ranks = 0;
  std::string address, key, host, shared;
};

// Parses process p's record; throws Error saying what is wrong with it.
Record parse(const fs::path& path, uint32_t p, uint32_t processes) {
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), {});
  const std::string where = "dcuda bootstrap: malformed record " + path.string() + ": ";
  if (text.size() > 4096) throw Error(where + "too long");
  std::istringstream lines(text);
  std::string line;
  if (!std::getline(lines, line) || line != kMagic) throw Error(where + "does not start with '" + kMagic + "'");
  Record r;
  bool seen_process = false, seen_processes = false;
  while (std::getline(lines, line)) {
    const size_t space = line.find(' ');
    if (space == std::string::npos) throw Error(where + "line '" + line + "' is not 'name value'");
    const std::string name = line.substr(0, space), value = line.substr(space + 1);
    if (name == "process" && !seen_process) {
      seen_process = true;
      if (number(value, kMaxProcesses, where + "process") != p) throw Error(where + "it names process " + value);
    } else if (name == "processes" && !seen_processes) {
      seen_processes = true;
      if (number(value, kMaxProcesses, where + "processes") != processes)
        throw Error(where + "a run of " + value + " processes, this one has " + std::to_string(processes));
    } else if (name == "ranks" && !r.ranks) {
      r.ranks = static_cast<uint32_t>(number(value, kMaxRanks, where + "ranks"));
      if (!r.ranks) throw Error(where + "no ranks");
    } else if (name == "address" && r.address.empty()) {
      const size_t colon = value.rfind(':');
      if (value.empty() || value.size() > 256 || colon == std::string::npos || colon == 0 ||
          value.find_first_of(" \t") != std::string::npos)
        throw Error(where + "address '" + value + "' is not host:port");
      number(value.substr(colon + 1), 65535, where + "port");
      r.address = value;
    } else if (name == "key" && r.key.empty()) {
      if (value.empty() || value.size() > 128 || value.find_first_not_of("0123456789abcdef") != std::string::npos)
        throw Error(where + "key is not hexadecimal");
      r.key = value;
    } else if (name == "host" && r.host.empty()) {
      if (value.empty() || value.size() > 300 || value.find_first_of(" \t") != std::string::npos)
        throw Error(where + "host is not one word");
      r.host = value;
    } else if (name == "shared" && r.shared.empty()) {
      if (value.size() != 128 || value.find_first_not_of("0123456789abcdef") != std::string::npos)
        throw Error(where + "shared is not 64 bytes in hexadecimal");
      r.shared = value;
    } else {
      throw Error(where + "unexpected or repeated field '" + name + "'");
    }
  }
  if (!seen_process || !seen_processes || !r.ranks || r.address.empty() || r.key.empty())
    throw Error(where + "a field is missing");
  return r;
}

std::string list(const std::vector<uint32_t>& v) {
  std::string s;
  for (size_t i = 0; i < v.size() && i < 16; ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  if (v.size() > 16) s += ", ... (" + std::to_string(v.size()) + " in all)";
  return s;
}

}  // namespace

Launch launch_from_env() {
  struct Source {
    const char *rank, *size, *local, *name;
  };
  static const Source sources[] = {
      {"DCUDA_RANK", "DCUDA_SIZE", "DCUDA_LOCAL_RANK", "outboard dcuda run"},
      {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK", "Open MPI"},
      {"PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "PMI"},
      {"SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "Slurm"},
  };
  Launch l;
  l.launcher = "none";
  for (const Source& s : sources) {
    if (!env(s.rank) && !env(s.size)) continue;
    if (!env(s.rank) || !env(s.size))
      throw Error(std::string("dcuda: ") + s.rank + " and " + s.size + " must be set together");
    l.processes = static_cast<uint32_t>(number(env(s.size), kMaxProcesses, s.size));
    l.process = static_cast<uint32_t>(number(env(s.rank), kMaxProcesses, s.rank));
    if (l.processes == 0 || l.process >= l.processes)
      throw Error(std::string("dcuda: ") + s.rank + "=" + env(s.rank) + " is not below " + s.size + "=" + env(s.size));
    l.local = env(s.local) ? static_cast<uint32_t>(number(env(s.local), kMaxProcesses, s.local)) : 0;
    l.launcher = s.name;
    break;
  }
  if (const char* j = env("DCUDA_JOB"))
    l.job = j;
  else if (const char* o = env("OMPI_MCA_ess_base_jobid"))
    l.job = std::string("ompi-") + o;
  else if (const char* x = env("PMIX_NAMESPACE"))
    l.job = std::string("pmix-") + x;
  else if (const char* s = env("SLURM_JOB_ID"))
    l.job = std::string("slurm-") + s + "." + (env("SLURM_STEP_ID") ? env("SLURM_STEP_ID") : "0");
  // The job id names a directory: keep it to one harmless path component.
  for (char& ch : l.job)
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '-' && ch != '.' && ch != '_') ch = '_';
  if (l.job == "." || l.job == "..") l.job = "_";
  return l;
}

std::string bootstrap_dir(const Launch& launch) {
  if (const char* d = env("DCUDA_BOOTSTRAP_DIR")) return d;
  if (launch.job.empty())
    throw Error("dcuda: a run of " + std::to_string(launch.processes) + " processes under " + launch.launcher +
                " needs a rendezvous directory: set DCUDA_BOOTSTRAP_DIR (shared by all hosts) or DCUDA_JOB");
  return "/tmp/outboard-dcuda-" + std::to_string(getuid()) + "/" + launch.job;
}

double bootstrap_timeout() {
  const char* t = env("DCUDA_BOOTSTRAP_TIMEOUT");
  if (!t) return 60;
  char* end = nullptr;
  const double v = std::strtod(t, &end);
  if (*end || !(v > 0)) throw Error(std::string("DCUDA_BOOTSTRAP_TIMEOUT: not a positive number: ") + t);
  return v;
}

std::string host_identity() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) std::snprintf(name, sizeof name, "unknown");
  std::string boot;
  std::ifstream("/proc/sys/kernel/random/boot_id") >> boot;
  std::string id = std::string(name) + "/" + (boot.empty() ? "no-boot-id" : boot);
  for (char& ch : id)
    if (std::isspace(static_cast<unsigned char>(ch))) ch = '_';
  return id;
}

World bootstrap(const Launch& launch, uint32_t ranks, const std::string& address, const std::string& key,
                const std::string& dir_name, double timeout_s, const std::string& shared) {
  World world;
  world.self = launch.process;
  if (launch.processes <= 1) {
    world.processes.push_back(ProcessInfo{0, ranks, address, key, host_identity(), shared});
    return world;
  }
  const fs::path dir(dir_name);
  // The parent of the default directory is shared by this user's jobs: private too.
  if (!env("DCUDA_BOOTSTRAP_DIR")) private_dir(dir.parent_path());
  private_dir(dir);
  std::ostringstream mine;
  mine << kMagic << "\nprocess " << launch.process << "\nprocesses " << launch.processes << "\nranks " << ranks
       << "\naddress " << address << "\nkey " << key << "\nhost " << host_identity() << "\n";
  if (!shared.empty()) mine << "shared " << shared << "\n";
  write_atomically(record_path(dir, launch.process), mine.str());

  const uint64_t deadline = outboard::now_ns() + static_cast<uint64_t>(timeout_s * 1e9);
  std::vector<Record> records(launch.processes);
  std::vector<bool> have(launch.processes, false);
  for (auto pause = std::chrono::milliseconds(1);; pause = std::min(pause * 2, std::chrono::milliseconds(50))) {
    std::vector<uint32_t> missing;
    for (uint32_t p = 0; p < launch.processes; ++p) {
      if (have[p]) continue;
      if (!fs::exists(record_path(dir, p))) {
        missing.push_back(p);
        continue;
      }
      records[p] = parse(record_path(dir, p), p, launch.processes);
      have[p] = true;
    }
    if (missing.empty()) break;
    if (outboard::now_ns() > deadline)
      throw Error("dcuda bootstrap: processes " + list(missing) + " of " + std::to_string(launch.processes) +
                  " did not publish their records in " + dir.string() + " within " + std::to_string(timeout_s) +
                  " s (DCUDA_BOOTSTRAP_TIMEOUT)");
    std::this_thread::sleep_for(pause);
  }
  uint64_t first = 0;
  for (const Record& r : records) {
    if (first + r.ranks > 0x7fffffffu) throw Error("dcuda bootstrap: more than 2^31 ranks in all");
    world.processes.push_back(ProcessInfo{static_cast<uint32_t>(first), r.ranks, r.address, r.key, r.host, r.shared});
    first += r.ranks;
  }
  if (records[launch.process].address != address || records[launch.process].key != key)
    throw Error("dcuda bootstrap: " + record_path(dir, launch.process).string() +
                " was replaced by another process: two runs share the directory");

  // Read: leave a mark; whoever sees everyone's marks cleans up (more than one may try).
  write_atomically(done_path(dir, launch.process), "done\n");
  bool all_done = true;
  for (uint32_t p = 0; p < launch.processes && all_done; ++p) all_done = fs::exists(done_path(dir, p));
  if (all_done) {
    std::error_code ignored;
    fs::remove_all(dir, ignored);
  }
  return world;
}

}  // namespace dcuda::runtime
