// Unit tests of the client runtime's settings: server addresses and environment variables.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <optional>
#include <string>

#include "client/settings.hpp"
#include "common/error.hpp"

namespace outboard::client {
namespace {

// Saves the variables settings_from_environment() reads, clears them for the test, and restores
// them afterwards, so that neither the caller's environment nor one test leaks into another.
class EnvironmentTest : public ::testing::Test {
 protected:
  static constexpr const char* kVariables[] = {
      "OUTBOARD_SERVERS", "RCPU_SERVER",          "OUTBOARD_TOKEN_FILE", "OUTBOARD_OFFLOAD",
      "OUTBOARD_FALLBACK", "OUTBOARD_MIN_FLOPS", "OUTBOARD_RETRY_SECONDS", "OUTBOARD_TIMEOUT",
      "OUTBOARD_CONNECT_TIMEOUT", "OUTBOARD_CACHE_BYTES", "OUTBOARD_DIRECT", "OUTBOARD_COPY_THREADS",
      "OUTBOARD_SPLIT_SERVERS", "OUTBOARD_SPLIT_FLOPS", "OUTBOARD_SPLIT_FFT_BYTES", "OUTBOARD_AUTO_RULE",
      "OUTBOARD_LOCAL_GFLOPS", "OUTBOARD_FFT_LOCAL_GFLOPS", "OUTBOARD_SERVER_GFLOPS", "OUTBOARD_LINK_GBYTES",
      "OUTBOARD_LINK_PROBE_BYTES", "OUTBOARD_LANES", "OUTBOARD_CL_LANES"};

  void SetUp() override {
    for (const char* name : kVariables) {
      if (const char* v = std::getenv(name)) saved_[name] = std::string(v);
      else saved_[name] = std::nullopt;
      ::unsetenv(name);
    }
  }
  void TearDown() override {
    for (const auto& [name, value] : saved_) {
      if (value) ::setenv(name.c_str(), value->c_str(), 1);
      else ::unsetenv(name.c_str());
    }
  }
  static void set(const char* name, const char* value) { ASSERT_EQ(::setenv(name, value, 1), 0); }

 private:
  std::map<std::string, std::optional<std::string>> saved_;
};

bool mentions(const std::vector<std::string>& problems, const std::string& fragment) {
  for (const auto& p : problems)
    if (p.find(fragment) != std::string::npos) return true;
  return false;
}

std::string error_of(const std::string& address) {
  try {
    ServerAddress a = parse_server_address(address);
    ADD_FAILURE() << "'" << address << "' was accepted as host '" << a.host << "' port " << a.port;
  } catch (const Error& e) {
    return e.what();
  }
  return {};
}

// ---------------------------------------------------------------------------------------------
// parse_server_address

TEST(ServerAddress, HostAndPort) {
  ServerAddress a = parse_server_address("compute-3.example.org:8000");
  EXPECT_EQ(a.host, "compute-3.example.org");
  EXPECT_EQ(a.port, 8000);
  EXPECT_EQ(a.text(), "compute-3.example.org:8000");

  a = parse_server_address("10.1.2.3:1");
  EXPECT_EQ(a.host, "10.1.2.3");
  EXPECT_EQ(a.port, 1);
  a = parse_server_address("h:65535");
  EXPECT_EQ(a.port, 65535);
}

TEST(ServerAddress, HostOnlyUsesDefaultPort) {
  ServerAddress a = parse_server_address("gpu-node");
  EXPECT_EQ(a.host, "gpu-node");
  EXPECT_EQ(a.port, kDefaultPort);
  EXPECT_EQ(kDefaultPort, 7700);
  EXPECT_EQ(a.text(), "gpu-node:7700");
}

TEST(ServerAddress, BracketedIpv6) {
  ServerAddress a = parse_server_address("[::1]:7701");
  EXPECT_EQ(a.host, "::1");
  EXPECT_EQ(a.port, 7701);
  EXPECT_EQ(a.text(), "[::1]:7701");  // text() brackets it again

  a = parse_server_address("[fe80::1:2]");
  EXPECT_EQ(a.host, "fe80::1:2");
  EXPECT_EQ(a.port, kDefaultPort);
  // text() and parse_server_address() are inverses.
  ServerAddress back = parse_server_address(a.text());
  EXPECT_EQ(back.host, a.host);
  EXPECT_EQ(back.port, a.port);
}

TEST(ServerAddress, BadPort) {
  for (const char* bad : {"h:0", "h:65536", "h:99999999999999999999", "h:-1", "h:abc", "h:80x", "h:8 0", "h:0x50",
                          "[::1]:0", "[::1]:70000", "[::1]:http"}) {
    SCOPED_TRACE(bad);
    EXPECT_NE(error_of(bad).find("bad port"), std::string::npos);
  }
}

TEST(ServerAddress, EmptyHost) {
  for (const char* bad : {"", ":7700", "[]:7700", "[]"}) {
    SCOPED_TRACE(bad);
    EXPECT_NE(error_of(bad).find("empty host"), std::string::npos);
  }
}

TEST(ServerAddress, MissingClosingBracket) {
  for (const char* bad : {"[::1", "[::1:7700", "["}) {
    SCOPED_TRACE(bad);
    EXPECT_NE(error_of(bad).find("missing ']'"), std::string::npos);
  }
}

TEST(ServerAddress, JunkAfterBracket) {
  EXPECT_NE(error_of("[::1]7700").find("expected ':' after ']'"), std::string::npos);
  EXPECT_NE(error_of("[::1]x:7700").find("expected ':' after ']'"), std::string::npos);
}

// BUG (reported, not fixed here): an IPv6 address without brackets is silently split at its last
// ':' instead of being rejected as malformed (settings.hpp: "host:port", "[v6addr]:port" or
// "host"; "Throws Error when malformed").
//   parse_server_address("::1")     expected: Error;  actual: host ":"     port 1
//   parse_server_address("fe80::1") expected: Error;  actual: host "fe80:" port 1
// Enable this test once fixed.
TEST(ServerAddress, UnbracketedIpv6IsRejected) {
  for (const char* bad : {"::1", "fe80::1", "::1:7700", "2001:db8::5:7700"}) {
    SCOPED_TRACE(bad);
    EXPECT_FALSE(error_of(bad).empty());
  }
}

// BUG (reported, not fixed here; minor): a ':' with nothing after it falls back to the default
// port instead of being rejected.
//   parse_server_address("host:")   expected: Error "bad port ''";  actual: host "host" port 7700
//   parse_server_address("[::1]:")  expected: Error "bad port ''";  actual: host "::1"  port 7700
// Enable this test once fixed.
TEST(ServerAddress, EmptyPortIsRejected) {
  for (const char* bad : {"host:", "[::1]:"}) {
    SCOPED_TRACE(bad);
    EXPECT_NE(error_of(bad).find("bad port"), std::string::npos);
  }
}

TEST(ServerAddress, ErrorNamesTheAddress) {
  EXPECT_NE(error_of("node:abc").find("'node:abc'"), std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// settings_from_environment

TEST_F(EnvironmentTest, Defaults) {
  Settings s = settings_from_environment();
  ASSERT_EQ(s.servers.size(), 1u);
  EXPECT_EQ(s.servers[0].host, "127.0.0.1");
  EXPECT_EQ(s.servers[0].port, 7700);
  EXPECT_EQ(s.offload, OffloadMode::automatic);
  EXPECT_EQ(s.fallback, FallbackMode::local);
  EXPECT_EQ(s.min_flops, 1e9);
  EXPECT_EQ(s.retry_seconds, 10);
  EXPECT_EQ(s.timeout_seconds, 0);
  EXPECT_EQ(s.connect_timeout_seconds, 5);
  EXPECT_TRUE(s.problems.empty());
  EXPECT_FALSE(s.token_file.empty());
}

TEST_F(EnvironmentTest, ServerListWithSpaces) {
  set("OUTBOARD_SERVERS", "  alpha:7001 ,beta , [::1]:7002,, gamma:7003  ,");
  Settings s = settings_from_environment();
  EXPECT_TRUE(s.problems.empty()) << s.problems.front();
  ASSERT_EQ(s.servers.size(), 4u);
  EXPECT_EQ(s.servers[0].host, "alpha");
  EXPECT_EQ(s.servers[0].port, 7001);
  EXPECT_EQ(s.servers[1].host, "beta");
  EXPECT_EQ(s.servers[1].port, 7700);
  EXPECT_EQ(s.servers[2].host, "::1");
  EXPECT_EQ(s.servers[2].port, 7002);
  EXPECT_EQ(s.servers[3].host, "gamma");
  EXPECT_EQ(s.servers[3].port, 7003);
}

TEST_F(EnvironmentTest, SingleServer) {
  set("OUTBOARD_SERVERS", "solo");
  Settings s = settings_from_environment();
  ASSERT_EQ(s.servers.size(), 1u);
  EXPECT_EQ(s.servers[0].host, "solo");
  EXPECT_EQ(s.servers[0].port, 7700);
}

TEST_F(EnvironmentTest, BadEntriesAreReportedAndSkipped) {
  set("OUTBOARD_SERVERS", "good:7005, bad:99999, [::1");
  Settings s = settings_from_environment();
  ASSERT_EQ(s.servers.size(), 1u);
  EXPECT_EQ(s.servers[0].host, "good");
  EXPECT_EQ(s.problems.size(), 2u);
  EXPECT_TRUE(mentions(s.problems, "bad:99999"));
  EXPECT_TRUE(mentions(s.problems, "missing ']'"));
}

TEST_F(EnvironmentTest, LanesAreAWholeNumberUpToTheWireLimit) {
  EXPECT_EQ(settings_from_environment().lanes, 8);  // eight where the data crosses TCP, unless asked
  set("OUTBOARD_LANES", "1");
  EXPECT_EQ(settings_from_environment().lanes, 1);
  set("OUTBOARD_LANES", "64");
  EXPECT_EQ(settings_from_environment().lanes, 64);
  for (const char* bad : {"0", "65", "2.5", "-1", "many"}) {
    set("OUTBOARD_LANES", bad);
    Settings s = settings_from_environment();
    EXPECT_EQ(s.lanes, 8) << bad;
    EXPECT_TRUE(mentions(s.problems, "OUTBOARD_LANES")) << bad;
  }
}

TEST_F(EnvironmentTest, OpenClDataOverTheLanesIsAskedFor) {
  EXPECT_EQ(settings_from_environment().cl_lanes, Settings::ClLanes::reads);
  set("OUTBOARD_CL_LANES", "0");
  EXPECT_EQ(settings_from_environment().cl_lanes, Settings::ClLanes::none);
  set("OUTBOARD_CL_LANES", "1");
  EXPECT_EQ(settings_from_environment().cl_lanes, Settings::ClLanes::all);
  set("OUTBOARD_CL_LANES", "reads");
  EXPECT_EQ(settings_from_environment().cl_lanes, Settings::ClLanes::reads);
  set("OUTBOARD_CL_LANES", "yes");
  Settings s = settings_from_environment();
  EXPECT_EQ(s.cl_lanes, Settings::ClLanes::reads);
  EXPECT_TRUE(mentions(s.problems, "OUTBOARD_CL_LANES"));
}

TEST_F(EnvironmentTest, AllEntriesBadFallsBackToDefault) {
  set("OUTBOARD_SERVERS", ":1,h:0");
  Settings s = settings_from_environment();
  ASSERT_EQ(s.servers.size(), 1u);
  EXPECT_EQ(s.servers[0].host, "127.0.0.1");
  EXPECT_EQ(s.servers[0].port, 7700);
  EXPECT_EQ(s.problems.size(), 2u);
}

TEST_F(EnvironmentTest, RcpuServerFallback) {
  set("RCPU_SERVER", "192.168.7.9:9000");
  Settings s = settings_from_environment();
  ASSERT_EQ(s.servers.size(), 1u);
  EXPECT_EQ(s.servers[0].host, "192.168.7.9");
  EXPECT_EQ(s.servers[0].port, 9000);
  EXPECT_TRUE(s.problems.empty());
}

TEST_F(EnvironmentTest, OutboardServersWinsOverRcpuServer) {
  set("RCPU_SERVER", "192.168.7.9:9000");
  set("OUTBOARD_SERVERS", "primary:7100");
  Settings s = settings_from_environment();
  ASSERT_EQ(s.servers.size(), 1u);
  EXPECT_EQ(s.servers[0].host, "primary");
  EXPECT_EQ(s.servers[0].port, 7100);
}

TEST_F(EnvironmentTest, EmptyOutboardServersCountsAsUnset) {
  set("OUTBOARD_SERVERS", "");
  set("RCPU_SERVER", "legacy:9001");
  Settings s = settings_from_environment();
  ASSERT_EQ(s.servers.size(), 1u);
  EXPECT_EQ(s.servers[0].host, "legacy");
}

TEST_F(EnvironmentTest, TokenFile) {
  set("OUTBOARD_TOKEN_FILE", "/some/where/token");
  EXPECT_EQ(settings_from_environment().token_file, "/some/where/token");
}

TEST_F(EnvironmentTest, OffloadModes) {
  const std::pair<const char*, OffloadMode> cases[] = {
      {"auto", OffloadMode::automatic}, {"always", OffloadMode::always}, {"never", OffloadMode::never}};
  for (const auto& [text, mode] : cases) {
    set("OUTBOARD_OFFLOAD", text);
    Settings s = settings_from_environment();
    EXPECT_EQ(s.offload, mode) << text;
    EXPECT_TRUE(s.problems.empty()) << text;
  }
}

TEST_F(EnvironmentTest, BadOffloadModeKeepsDefault) {
  for (const char* bad : {"sometimes", "ALWAYS", "always ", "1"}) {
    set("OUTBOARD_OFFLOAD", bad);
    Settings s = settings_from_environment();
    EXPECT_EQ(s.offload, OffloadMode::automatic) << bad;
    ASSERT_EQ(s.problems.size(), 1u) << bad;
    EXPECT_TRUE(mentions(s.problems, "OUTBOARD_OFFLOAD='" + std::string(bad) + "'"));
  }
}

TEST_F(EnvironmentTest, FallbackModes) {
  set("OUTBOARD_FALLBACK", "fail");
  EXPECT_EQ(settings_from_environment().fallback, FallbackMode::fail);
  set("OUTBOARD_FALLBACK", "local");
  EXPECT_EQ(settings_from_environment().fallback, FallbackMode::local);
  EXPECT_TRUE(settings_from_environment().problems.empty());
}

TEST_F(EnvironmentTest, BadFallbackModeKeepsDefault) {
  set("OUTBOARD_FALLBACK", "crash");
  Settings s = settings_from_environment();
  EXPECT_EQ(s.fallback, FallbackMode::local);
  ASSERT_EQ(s.problems.size(), 1u);
  EXPECT_TRUE(mentions(s.problems, "OUTBOARD_FALLBACK='crash'"));
}

TEST_F(EnvironmentTest, MinFlops) {
  const std::pair<const char*, double> cases[] = {{"0", 0}, {"5e6", 5e6}, {"123456", 123456}, {"2.5E10", 2.5e10}};
  for (const auto& [text, value] : cases) {
    set("OUTBOARD_MIN_FLOPS", text);
    Settings s = settings_from_environment();
    EXPECT_EQ(s.min_flops, value) << text;
    EXPECT_TRUE(s.problems.empty()) << text;
  }
}

TEST_F(EnvironmentTest, BadMinFlopsKeepsDefault) {
  for (const char* bad : {"lots", "12x", "1e9 ", "-1", "nan", " "}) {
    set("OUTBOARD_MIN_FLOPS", bad);
    Settings s = settings_from_environment();
    EXPECT_EQ(s.min_flops, 1e9) << bad;
    ASSERT_EQ(s.problems.size(), 1u) << bad;
    EXPECT_TRUE(mentions(s.problems, "OUTBOARD_MIN_FLOPS")) << bad;
  }
}

TEST_F(EnvironmentTest, CacheBytes) {
  EXPECT_EQ(settings_from_environment().cache_bytes, -1) << "default: an eighth of physical memory";
  set("OUTBOARD_CACHE_BYTES", "0");
  EXPECT_EQ(settings_from_environment().cache_bytes, 0);
  set("OUTBOARD_CACHE_BYTES", "4294967296");
  EXPECT_EQ(settings_from_environment().cache_bytes, 4294967296.0);
  set("OUTBOARD_CACHE_BYTES", "-5");
  Settings s = settings_from_environment();
  EXPECT_EQ(s.cache_bytes, -1);
  EXPECT_TRUE(mentions(s.problems, "OUTBOARD_CACHE_BYTES"));
}

TEST_F(EnvironmentTest, DirectPath) {
  Settings d = settings_from_environment();
  EXPECT_TRUE(d.direct);
  EXPECT_EQ(d.copy_threads, 4);
  set("OUTBOARD_DIRECT", "0");
  set("OUTBOARD_COPY_THREADS", "8");
  Settings s = settings_from_environment();
  EXPECT_FALSE(s.direct);
  EXPECT_EQ(s.copy_threads, 8);
  set("OUTBOARD_DIRECT", "ucx");
  EXPECT_TRUE(settings_from_environment().direct);
  EXPECT_FALSE(settings_from_environment().direct_cma);
  EXPECT_TRUE(settings_from_environment().direct_over_tcp);
  set("OUTBOARD_DIRECT", "remote");  // as a client on another host: no CMA, no UCX copies over TCP
  EXPECT_TRUE(settings_from_environment().direct);
  EXPECT_FALSE(settings_from_environment().direct_cma);
  EXPECT_FALSE(settings_from_environment().direct_over_tcp);
  EXPECT_TRUE(s.problems.empty());
  set("OUTBOARD_DIRECT", "yes");
  set("OUTBOARD_COPY_THREADS", "65");
  s = settings_from_environment();
  EXPECT_TRUE(s.direct);
  EXPECT_EQ(s.copy_threads, 4);
  EXPECT_TRUE(mentions(s.problems, "OUTBOARD_DIRECT"));
  EXPECT_TRUE(mentions(s.problems, "OUTBOARD_COPY_THREADS"));
}

TEST_F(EnvironmentTest, SpreadingLargeCalls) {
  Settings d = settings_from_environment();
  EXPECT_EQ(d.split_servers, 16);
  EXPECT_EQ(d.split_flops, 4e12);
  EXPECT_EQ(d.split_fft_bytes, 256 << 20);
  set("OUTBOARD_SPLIT_SERVERS", "1");
  set("OUTBOARD_SPLIT_FLOPS", "1e9");
  set("OUTBOARD_SPLIT_FFT_BYTES", "0");
  Settings s = settings_from_environment();
  EXPECT_EQ(s.split_servers, 1);
  EXPECT_EQ(s.split_flops, 1e9);
  EXPECT_EQ(s.split_fft_bytes, 0);
  EXPECT_TRUE(s.problems.empty());
  for (const char* bad : {"0", "65", "2.5", "many"}) {
    set("OUTBOARD_SPLIT_SERVERS", bad);
    s = settings_from_environment();
    EXPECT_EQ(s.split_servers, 16) << bad;
    EXPECT_TRUE(mentions(s.problems, "OUTBOARD_SPLIT_SERVERS")) << bad;
  }
  set("OUTBOARD_SPLIT_FLOPS", "-1");
  EXPECT_TRUE(mentions(settings_from_environment().problems, "OUTBOARD_SPLIT_FLOPS"));
}

TEST_F(EnvironmentTest, OtherNumbers) {
  set("OUTBOARD_RETRY_SECONDS", "2.5");
  set("OUTBOARD_TIMEOUT", "30");
  set("OUTBOARD_CONNECT_TIMEOUT", "0.5");
  Settings s = settings_from_environment();
  EXPECT_EQ(s.retry_seconds, 2.5);
  EXPECT_EQ(s.timeout_seconds, 30);
  EXPECT_EQ(s.connect_timeout_seconds, 0.5);
  EXPECT_TRUE(s.problems.empty());

  set("OUTBOARD_RETRY_SECONDS", "-3");
  set("OUTBOARD_TIMEOUT", "soon");
  set("OUTBOARD_CONNECT_TIMEOUT", "0");  // must be at least 1 ms
  s = settings_from_environment();
  EXPECT_EQ(s.retry_seconds, 10);
  EXPECT_EQ(s.timeout_seconds, 0);
  EXPECT_EQ(s.connect_timeout_seconds, 5);
  EXPECT_EQ(s.problems.size(), 3u);
}

TEST_F(EnvironmentTest, CostModel) {
  Settings s = settings_from_environment();
  EXPECT_EQ(s.auto_rule, AutoRule::model);
  EXPECT_EQ(s.local_gflops, 0);  // derived from the cores
  EXPECT_EQ(s.link_probe_bytes, 8 << 20);
  set("OUTBOARD_AUTO_RULE", "flops");
  set("OUTBOARD_LOCAL_GFLOPS", "500");
  set("OUTBOARD_SERVER_GFLOPS", "40000");
  set("OUTBOARD_FFT_LOCAL_GFLOPS", "12.5");
  set("OUTBOARD_LINK_GBYTES", "3");
  set("OUTBOARD_LINK_PROBE_BYTES", "0");
  s = settings_from_environment();
  EXPECT_TRUE(s.problems.empty());
  EXPECT_EQ(s.auto_rule, AutoRule::flops);
  EXPECT_EQ(s.local_gflops, 500);
  EXPECT_EQ(s.server_gflops, 40000);
  EXPECT_EQ(s.fft_local_gflops, 12.5);
  EXPECT_EQ(s.link_gbytes, 3);
  EXPECT_EQ(s.link_probe_bytes, 0);

  set("OUTBOARD_AUTO_RULE", "cheapest");
  set("OUTBOARD_LOCAL_GFLOPS", "0");  // a rate must be > 0
  set("OUTBOARD_LINK_PROBE_BYTES", "2000000000");
  s = settings_from_environment();
  EXPECT_EQ(s.problems.size(), 3u);
  EXPECT_EQ(s.auto_rule, AutoRule::model);
  EXPECT_EQ(s.local_gflops, 0);
  EXPECT_EQ(s.link_probe_bytes, 8 << 20);
}

TEST_F(EnvironmentTest, ProblemsAccumulate) {
  set("OUTBOARD_SERVERS", "x:0");
  set("OUTBOARD_OFFLOAD", "maybe");
  set("OUTBOARD_FALLBACK", "maybe");
  set("OUTBOARD_MIN_FLOPS", "many");
  Settings s = settings_from_environment();
  EXPECT_EQ(s.problems.size(), 4u);
  EXPECT_EQ(s.servers.size(), 1u);
  EXPECT_EQ(s.offload, OffloadMode::automatic);
  EXPECT_EQ(s.fallback, FallbackMode::local);
  EXPECT_EQ(s.min_flops, 1e9);
}

}  // namespace
}  // namespace outboard::client
