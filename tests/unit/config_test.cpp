// Unit tests of the daemon's configuration file and its validation.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "common/error.hpp"
#include "server/config.hpp"

namespace outboard::server {
namespace {

namespace fs = std::filesystem;

// Each test gets a fresh directory for its TOML files, removed afterwards.
class ConfigFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string templ = (fs::temp_directory_path() / "outboard-config-test-XXXXXX").string();
    ASSERT_NE(::mkdtemp(templ.data()), nullptr);
    dir_ = templ;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string write(const std::string& text, const std::string& name = "outboard.toml") {
    fs::path p = dir_ / name;
    std::ofstream(p) << text;
    return p.string();
  }
  // Loads the text and returns the Error's message; fails the test if it loads.
  std::string error_of(const std::string& text) {
    path_ = write(text);
    try {
      load_config_file(path_);
      ADD_FAILURE() << "accepted:\n" << text;
    } catch (const Error& e) {
      return e.what();
    }
    return {};
  }
  fs::path dir_;
  std::string path_;
};

bool contains(const std::string& s, const std::string& fragment) { return s.find(fragment) != std::string::npos; }

TEST_F(ConfigFileTest, AllKeys) {
  std::string path = write(R"(# every setting
host = "0.0.0.0"
port = 7800
token_file = "/etc/outboard/token"
compute_threads = 16
max_request_bytes = 1073741824
max_client_bytes = 4294967296
max_clients = 32
lanes = 3
auth_timeout_seconds = 2.5
log_level = "debug"
log_format = "json"
gpu_min_flops = 5e8
host_block_columns = 256
gpus = 2
gpu_memory_bytes = 1073741824
buffer_cache_bytes = 1048576
copy_lanes = 3
direct_chunk_bytes = 65536
idle_spin_ns = 0
pinned_reserve_bytes = 0
fft_batch_slices = 1
)");
  Config c = load_config_file(path);
  EXPECT_EQ(c.pinned_reserve_bytes, 0);
  EXPECT_EQ(c.fft_batch_slices, 1);
  EXPECT_EQ(Config{}.pinned_reserve_bytes, -1);  // the default: sized from the RAM
  EXPECT_EQ(c.gpu_min_flops, 5e8);
  EXPECT_EQ(c.host_block_columns, 256u);
  EXPECT_EQ(c.gpus, 2u);
  EXPECT_EQ(c.gpu_memory_bytes, 1u << 30);
  EXPECT_EQ(c.buffer_cache_bytes, 1u << 20);
  EXPECT_EQ(c.copy_lanes, 3u);
  EXPECT_EQ(c.direct_chunk_bytes, 65536u);
  EXPECT_EQ(c.idle_spin_ns, 0u);
  EXPECT_EQ(c.host, "0.0.0.0");
  EXPECT_EQ(c.port, 7800);
  EXPECT_EQ(c.token_file, "/etc/outboard/token");
  EXPECT_EQ(c.compute_threads, 16u);
  EXPECT_EQ(c.max_request_bytes, 1ull << 30);
  EXPECT_EQ(c.max_client_bytes, 4ull << 30);
  EXPECT_EQ(c.max_clients, 32u);
  EXPECT_EQ(c.lanes, 3u);
  EXPECT_EQ(c.auth_timeout_seconds, 2.5);
  EXPECT_EQ(c.log_level, "debug");
  EXPECT_EQ(c.log_format, "json");
  EXPECT_NO_THROW(validate(c));
}

TEST_F(ConfigFileTest, EmptyFileKeepsTheBase) {
  Config base;
  base.host = "10.0.0.1";
  base.port = 7999;
  base.compute_threads = 3;
  Config c = load_config_file(write(""), base);
  EXPECT_EQ(c.host, "10.0.0.1");
  EXPECT_EQ(c.port, 7999);
  EXPECT_EQ(c.compute_threads, 3u);
  EXPECT_EQ(c.max_clients, Config{}.max_clients);
  EXPECT_EQ(c.log_level, "info");
}

TEST_F(ConfigFileTest, FileOverridesOnlyItsKeys) {
  Config base;
  base.host = "10.0.0.1";
  base.log_format = "json";
  Config c = load_config_file(write("port = 7001\n"), base);
  EXPECT_EQ(c.port, 7001);
  EXPECT_EQ(c.host, "10.0.0.1");
  EXPECT_EQ(c.log_format, "json");
}

TEST_F(ConfigFileTest, OpenclDirectStaging) {
  EXPECT_EQ(Config{}.opencl_direct_staging_bytes, 256u << 20);
  EXPECT_EQ(Config{}.opencl_write_bytes_in_flight, 512u << 20);
  EXPECT_EQ(load_config_file(write("opencl_write_bytes_in_flight = 0\n")).opencl_write_bytes_in_flight, 0u);
  EXPECT_TRUE(contains(error_of("opencl_write_bytes_in_flight = -1\n"), "opencl_write_bytes_in_flight"));
  EXPECT_EQ(Config{}.opencl_stuck_seconds, 60u);
  EXPECT_EQ(load_config_file(write("opencl_stuck_seconds = 0\n")).opencl_stuck_seconds, 0u);
  EXPECT_TRUE(contains(error_of("opencl_stuck_seconds = 86401\n"), "opencl_stuck_seconds"));
  EXPECT_EQ(load_config_file(write("opencl_direct_staging_bytes = 4194304\n")).opencl_direct_staging_bytes, 4u << 20);
  // Less than four of the smallest pieces: refused, from the file or set directly.
  EXPECT_TRUE(contains(error_of("opencl_direct_staging_bytes = 4194303\n"), "opencl_direct_staging_bytes"));
  Config c;
  c.opencl_direct_staging_bytes = 1 << 20;
  EXPECT_THROW(validate(c), Error);
}

TEST_F(ConfigFileTest, OpenclEventPolling) {
  EXPECT_EQ(Config{}.opencl_event_polling, "auto");
  EXPECT_EQ(load_config_file(write("opencl_event_polling = \"poll\"\n")).opencl_event_polling, "poll");
  Config c;
  c.opencl_event_polling = "sometimes";
  EXPECT_THROW(validate(c), Error);
  EXPECT_TRUE(contains(error_of("opencl_event_polling = 1\n"), "opencl_event_polling"));
}

TEST_F(ConfigFileTest, IntegerTimeoutIsAccepted) {
  EXPECT_EQ(load_config_file(write("auth_timeout_seconds = 3\n")).auth_timeout_seconds, 3.0);
}

TEST_F(ConfigFileTest, LimitsAtTheirBounds) {
  Config c = load_config_file(write("port = 65535\ncompute_threads = 1024\nmax_clients = 1048576\n"
                                    "max_request_bytes = 9223372036854775807\nmax_client_bytes = 1\n"));
  EXPECT_EQ(c.port, 65535);
  EXPECT_EQ(c.compute_threads, 1024u);
  EXPECT_EQ(c.max_clients, 1u << 20);
  EXPECT_EQ(c.max_request_bytes, uint64_t(INT64_MAX));
  EXPECT_EQ(c.max_client_bytes, 1u);
  c = load_config_file(write("compute_threads = 1\nmax_clients = 1\n"));
  EXPECT_EQ(c.compute_threads, 1u);
}

TEST_F(ConfigFileTest, UnknownKeyNamesKeyFileAndLine) {
  std::string e = error_of("host = \"h\"\nport = 7700\ncolour = \"blue\"\n");
  EXPECT_TRUE(contains(e, "unknown setting 'colour'")) << e;
  EXPECT_TRUE(contains(e, path_ + ":3:")) << e;
}

TEST_F(ConfigFileTest, TableIsAnUnknownKey) {
  std::string e = error_of("port = 7700\n\n[server]\nhost = \"h\"\n");
  EXPECT_TRUE(contains(e, "unknown setting 'server'")) << e;
  EXPECT_TRUE(contains(e, path_ + ":")) << e;
}

TEST_F(ConfigFileTest, WrongTypes) {
  struct Case {
    const char* text;
    const char* key;
  };
  const Case cases[] = {
      {"port = \"7700\"", "port"},
      {"port = 7700.0", "port"},
      {"host = 5", "host"},
      {"host = [\"a\", \"b\"]", "host"},
      {"token_file = true", "token_file"},
      {"compute_threads = 1.5", "compute_threads"},
      {"max_request_bytes = \"8G\"", "max_request_bytes"},
      {"max_client_bytes = false", "max_client_bytes"},
      {"max_clients = {}", "max_clients"},
      {"auth_timeout_seconds = \"10\"", "auth_timeout_seconds"},
      {"log_level = 3", "log_level"},
      {"log_format = 1979-05-27", "log_format"},
  };
  for (const auto& k : cases) {
    std::string e = error_of(std::string("\n") + k.text + "\n");  // on line 2
    EXPECT_TRUE(contains(e, "'" + std::string(k.key) + "'")) << k.text << " -> " << e;
    EXPECT_TRUE(contains(e, path_ + ":2:")) << k.text << " -> " << e;
  }
}

TEST_F(ConfigFileTest, OutOfRange) {
  struct Case {
    const char* text;
    const char* key;
  };
  const Case cases[] = {
      {"port = 65536", "port"},
      {"port = 70000", "port"},
      {"port = -1", "port"},
      {"compute_threads = 0", "compute_threads"},
      {"compute_threads = 1025", "compute_threads"},
      {"compute_threads = -4", "compute_threads"},
      {"max_clients = 0", "max_clients"},
      {"max_clients = 1048577", "max_clients"},
      {"lanes = 0", "lanes"},
      {"lanes = 65", "lanes"},
      {"max_request_bytes = 0", "max_request_bytes"},
      {"max_client_bytes = -1", "max_client_bytes"},
      {"auth_timeout_seconds = 0", "auth_timeout_seconds"},
      {"auth_timeout_seconds = -2.5", "auth_timeout_seconds"},
      {"idle_spin_ns = -1", "idle_spin_ns"},
      {"idle_spin_ns = 1000001", "idle_spin_ns"},
      {"pinned_reserve_bytes = -2", "pinned_reserve_bytes"},
      {"fft_batch_slices = 0", "fft_batch_slices"},
  };
  for (const auto& k : cases) {
    std::string e = error_of(std::string("host = \"h\"\n") + k.text + "\n");
    EXPECT_TRUE(contains(e, "'" + std::string(k.key) + "'")) << k.text << " -> " << e;
    EXPECT_TRUE(contains(e, path_ + ":2:")) << k.text << " -> " << e;
  }
  EXPECT_TRUE(contains(error_of("port = 70000\n"), "[0, 65535]"));
}

// BUG (reported, not fixed here): load_config_file() accepts `auth_timeout_seconds = nan`
// although the setting "must be a positive number": its check is `*v <= 0`, which is false for
// NaN. Expected: Error "config <file>:1: setting 'auth_timeout_seconds' must be a positive number".
// Actual: loads, auth_timeout_seconds = NaN. Enable this test once fixed.
TEST_F(ConfigFileTest, NanTimeoutIsRejected) {
  std::string e = error_of("auth_timeout_seconds = nan\n");
  EXPECT_TRUE(contains(e, "auth_timeout_seconds")) << e;
}

TEST_F(ConfigFileTest, MalformedTomlNamesFileAndLine) {
  std::string e = error_of("host = \"h\"\nport = = 3\n");
  EXPECT_TRUE(contains(e, "config " + path_ + ":2:")) << e;

  e = error_of("# comment\n\nhost = \"unterminated\n");
  EXPECT_TRUE(contains(e, path_ + ":3:")) << e;

  e = error_of("port = 1\nport = 2\n");  // a redefinition is a TOML error too
  EXPECT_TRUE(contains(e, path_ + ":2:")) << e;
}

TEST_F(ConfigFileTest, MissingFile) {
  std::string path = (dir_ / "does-not-exist.toml").string();
  try {
    load_config_file(path);
    ADD_FAILURE() << "a missing file was accepted";
  } catch (const Error& e) {
    EXPECT_TRUE(contains(e.what(), path)) << e.what();
  }
}

// ---------------------------------------------------------------------------------------------
// validate

std::string validate_error(const Config& c) {
  try {
    validate(c);
    ADD_FAILURE() << "validate accepted the configuration";
  } catch (const Error& e) {
    return e.what();
  }
  return {};
}

TEST(ConfigValidate, DefaultsAreValid) { EXPECT_NO_THROW(validate(Config{})); }

TEST(ConfigValidate, EmptyHost) {
  Config c;
  c.host = "";
  EXPECT_TRUE(contains(validate_error(c), "'host'"));
}

TEST(ConfigValidate, ZeroComputeThreads) {
  Config c;
  c.compute_threads = 0;
  EXPECT_TRUE(contains(validate_error(c), "'compute_threads'"));
}

TEST(ConfigValidate, LanePortLeavesRoomForEveryLaneThread) {
  Config c;
  c.lane_threads = 4;
  c.lane_port = 65533;
  EXPECT_TRUE(contains(validate_error(c), "'lane_port'"));
  c.lane_port = 65532;  // 65532 .. 65535
  EXPECT_NO_THROW(validate(c));
  c.lane_threads = 0;  // no lane threads: any port
  c.lane_port = 65535;
  EXPECT_NO_THROW(validate(c));
}

TEST(ConfigValidate, RequestLargerThanClientBudget) {
  Config c;
  c.max_request_bytes = 2000;
  c.max_client_bytes = 1999;
  EXPECT_TRUE(contains(validate_error(c), "'max_request_bytes'"));
  c.max_client_bytes = 2000;  // equal is fine
  EXPECT_NO_THROW(validate(c));
}

TEST_F(ConfigFileTest, FileValuesAreValidatedSeparately) {
  // load_config_file checks types and ranges per key; cross-key rules are validate()'s job.
  Config c = load_config_file(write("max_request_bytes = 100\nmax_client_bytes = 10\n"));
  EXPECT_TRUE(contains(validate_error(c), "'max_request_bytes'"));
}

}  // namespace
}  // namespace outboard::server
