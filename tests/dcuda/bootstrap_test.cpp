// The bootstrap (dcuda/runtime/bootstrap.hpp): processes played by threads over a temporary
// rendezvous directory.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "common/error.hpp"
#include "dcuda/runtime/bootstrap.hpp"

using namespace dcuda::runtime;
namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    std::string t = (fs::temp_directory_path() / "dcuda-bootstrap-test-XXXXXX").string();
    path = mkdtemp(t.data());
  }
  ~TempDir() { fs::remove_all(path); }
};

Launch launch(uint32_t p, uint32_t n) {
  Launch l;
  l.process = p, l.processes = n, l.launcher = "test";
  return l;
}

std::string address_of(uint32_t p) { return "127.0.0.1:" + std::to_string(20000 + p); }

// A record as a process writes it, with one line changed.
void write_record(const fs::path& dir, uint32_t p, const std::string& text) {
  fs::create_directories(dir);
  chmod(dir.c_str(), 0700);
  std::ofstream(dir / ("process." + std::to_string(p))) << text;
}

struct EnvGuard {
  std::vector<std::string> names;
  void set(const char* n, const char* v) {
    names.push_back(n);
    setenv(n, v, 1);
  }
  ~EnvGuard() {
    for (auto& n : names) unsetenv(n.c_str());
  }
};

}  // namespace

TEST(DcudaBootstrap, ThreadsFindEachOtherAndTheDirectoryIsRemoved) {
  TempDir t;
  const fs::path dir = t.path / "job";
  constexpr uint32_t n = 5;
  std::vector<World> worlds(n);
  std::vector<std::thread> threads;
  for (uint32_t p = 0; p < n; ++p)
    threads.emplace_back([&, p] { worlds[p] = bootstrap(launch(p, n), p + 1, address_of(p), "abc0" + std::to_string(p), dir, 20); });
  for (auto& th : threads) th.join();
  for (uint32_t p = 0; p < n; ++p) {
    EXPECT_EQ(worlds[p].self, p);
    ASSERT_EQ(worlds[p].processes.size(), n);
    uint32_t first = 0;
    for (uint32_t q = 0; q < n; ++q) {
      EXPECT_EQ(worlds[p].processes[q].first_rank, first);
      EXPECT_EQ(worlds[p].processes[q].ranks, q + 1);
      EXPECT_EQ(worlds[p].processes[q].address, address_of(q));
      EXPECT_EQ(worlds[p].processes[q].key, "abc0" + std::to_string(q));
      first += q + 1;
    }
    EXPECT_EQ(worlds[p].world_size(), 15u);
  }
  EXPECT_FALSE(fs::exists(dir));
}

TEST(DcudaBootstrap, ForkedProcessesFindEachOther) {
  TempDir t;
  const fs::path dir = t.path / "job";
  constexpr uint32_t n = 3;
  std::vector<pid_t> pids;
  for (uint32_t p = 0; p < n; ++p) {
    pid_t pid = fork();
    if (pid == 0) {
      try {
        World w = bootstrap(launch(p, n), 2, address_of(p), "0a", dir, 20);
        _exit(w.world_size() == 6 && w.processes[2].first_rank == 4 ? 0 : 1);
      } catch (...) {
        _exit(2);
      }
    }
    pids.push_back(pid);
  }
  for (pid_t pid : pids) {
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
}

TEST(DcudaBootstrap, AMissingProcessTimesOutNamingIt) {
  TempDir t;
  std::thread other([&] {
    try {
      bootstrap(launch(0, 4), 1, address_of(0), "0a", t.path / "job", 0.5);
    } catch (const outboard::Error&) {
    }
  });
  try {
    bootstrap(launch(2, 4), 1, address_of(2), "0a", t.path / "job", 0.5);
    FAIL() << "no timeout";
  } catch (const outboard::Error& e) {
    EXPECT_NE(std::string(e.what()).find("processes 1, 3 of 4 did not publish"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("DCUDA_BOOTSTRAP_TIMEOUT"), std::string::npos) << e.what();
  }
  other.join();
}

TEST(DcudaBootstrap, MalformedRecordsAreRefusedClearly) {
  const std::string good = "dcuda-bootstrap 1\nprocess 1\nprocesses 2\nranks 3\naddress 10.0.0.1:4000\nkey 00ff\n";
  const std::pair<std::string, std::string> cases[] = {
      {"garbage\n", "does not start with"},
      {"dcuda-bootstrap 1\nprocess 1\nprocesses 2\nranks 3\naddress 10.0.0.1:4000\n", "a field is missing"},
      {"dcuda-bootstrap 1\nprocess 0\nprocesses 2\nranks 3\naddress h:1\nkey 00\n", "it names process 0"},
      {"dcuda-bootstrap 1\nprocess 1\nprocesses 3\nranks 3\naddress h:1\nkey 00\n", "a run of 3 processes"},
      {"dcuda-bootstrap 1\nprocess 1\nprocesses 2\nranks 0\naddress h:1\nkey 00\n", "no ranks"},
      {"dcuda-bootstrap 1\nprocess 1\nprocesses 2\nranks 99999999999\naddress h:1\nkey 00\n", "larger than"},
      {"dcuda-bootstrap 1\nprocess 1\nprocesses 2\nranks 3\naddress nohost\nkey 00\n", "is not host:port"},
      {"dcuda-bootstrap 1\nprocess 1\nprocesses 2\nranks 3\naddress h:99999\nkey 00\n", "larger than"},
      {"dcuda-bootstrap 1\nprocess 1\nprocesses 2\nranks 3\naddress h:1\nkey xyz\n", "not hexadecimal"},
      {good + "ranks 4\n", "repeated field"},
      {std::string(5000, 'x'), "too long"},
  };
  for (const auto& [text, expect] : cases) {
    TempDir t;
    write_record(t.path / "job", 1, text);
    try {
      bootstrap(launch(0, 2), 1, address_of(0), "0a", t.path / "job", 5);
      ADD_FAILURE() << "accepted: " << text;
    } catch (const outboard::Error& e) {
      EXPECT_NE(std::string(e.what()).find(expect), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("process.1"), std::string::npos) << e.what();
    }
  }
  TempDir t;  // and the good one is accepted
  write_record(t.path / "job", 1, good);
  World w = bootstrap(launch(0, 2), 1, address_of(0), "0a", t.path / "job", 5);
  EXPECT_EQ(w.processes[1].first_rank, 1u);
  EXPECT_EQ(w.processes[1].address, "10.0.0.1:4000");
}

TEST(DcudaBootstrap, ADirectoryOthersCanReadIsRefused) {
  TempDir t;
  fs::create_directories(t.path / "job");
  chmod((t.path / "job").c_str(), 0755);
  EXPECT_THROW(bootstrap(launch(0, 2), 1, address_of(0), "0a", t.path / "job", 1), outboard::Error);
}

TEST(DcudaBootstrap, OneProcessNeedsNoDirectory) {
  World w = bootstrap(launch(0, 1), 4, "h:1", "0a", "/nonexistent/dir", 1);
  EXPECT_EQ(w.world_size(), 4u);
  EXPECT_EQ(w.self, 0u);
}

TEST(DcudaBootstrap, LaunchersEnvironments) {
  {
    EnvGuard g;
    g.set("OMPI_COMM_WORLD_RANK", "2"), g.set("OMPI_COMM_WORLD_SIZE", "4"), g.set("OMPI_COMM_WORLD_LOCAL_RANK", "1");
    g.set("OMPI_MCA_ess_base_jobid", "1234/5");
    Launch l = launch_from_env();
    EXPECT_EQ(l.process, 2u);
    EXPECT_EQ(l.processes, 4u);
    EXPECT_EQ(l.local, 1u);
    EXPECT_EQ(l.launcher, "Open MPI");
    EXPECT_EQ(l.job, "ompi-1234_5");  // one path component
    EXPECT_EQ(bootstrap_dir(l), "/tmp/outboard-dcuda-" + std::to_string(getuid()) + "/ompi-1234_5");
  }
  {
    EnvGuard g;
    g.set("SLURM_PROCID", "0"), g.set("SLURM_NTASKS", "2"), g.set("SLURM_LOCALID", "0");
    g.set("SLURM_JOB_ID", "77"), g.set("SLURM_STEP_ID", "3");
    Launch l = launch_from_env();
    EXPECT_EQ(l.launcher, "Slurm");
    EXPECT_EQ(l.job, "slurm-77.3");
  }
  {
    EnvGuard g;
    g.set("DCUDA_RANK", "1"), g.set("DCUDA_SIZE", "2"), g.set("DCUDA_BOOTSTRAP_DIR", "/x/y");
    EXPECT_EQ(bootstrap_dir(launch_from_env()), "/x/y");
  }
  {
    EnvGuard g;
    g.set("PMI_RANK", "1"), g.set("PMI_SIZE", "2");
    try {
      bootstrap_dir(launch_from_env());
      FAIL();
    } catch (const outboard::Error& e) {
      EXPECT_NE(std::string(e.what()).find("DCUDA_BOOTSTRAP_DIR"), std::string::npos);
    }
  }
  for (auto [rank, size] : {std::pair{"2", "2"}, {"x", "2"}, {"0", "0"}}) {
    EnvGuard g;
    g.set("DCUDA_RANK", rank), g.set("DCUDA_SIZE", size);
    EXPECT_THROW(launch_from_env(), outboard::Error) << rank << "/" << size;
  }
  {
    EnvGuard g;
    g.set("DCUDA_RANK", "1");
    EXPECT_THROW(launch_from_env(), outboard::Error);
  }
  Launch none = launch_from_env();
  EXPECT_EQ(none.processes, 1u);
}
