// Unit tests of the server's metrics (server/metrics.hpp) without a server: the hooks driven as the
// progress thread drives them, the text read back.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <regex>
#include <string>
#include <unordered_map>

#include "server/metrics.hpp"

namespace outboard::server {
namespace {

uint16_t free_port() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  socklen_t n = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &n);
  close(fd);
  return ntohs(a.sin_port);
}

class MetricsTest : public ::testing::Test {
 protected:
  void SetUp() override { metrics_.serve("127.0.0.1", free_port()); }
  Session& open(PeerId peer, const std::string& name) {
    Session& s = sessions_[peer];
    s.peer = peer;
    s.client_name = "host:1:prog";
    s.identity = name;  // the label: the identity the session proved
    s.authenticated = true;
    s.state = State::ready;
    return s;
  }
  // One whole BLAS call of `bytes` in and `out` back.
  void call(Session& s, uint64_t id, uint64_t bytes, uint64_t out, bool ok = true) {
    wire::Blas3Call c;
    c.call_id = id;
    c.payload_bytes = bytes;
    metrics_.request(s, "blas3", wire::Message{c});
    wire::CallReply r;
    r.call_id = id;
    r.ok = ok;
    r.payload_bytes = out;
    metrics_.replied(s, wire::Message{r}, out);
    metrics_.call_counted(&s, id, ok);
  }
  std::string text() {
    metrics_.publish(sessions_, 0, 0);
    return metrics_.render();
  }
  Metrics metrics_;
  std::unordered_map<PeerId, Session> sessions_;
};

// The transport's per-connection tables (issue 33: nothing kept per connection once it is gone) are
// gauges that follow every publish, also when nothing else changed.
TEST_F(MetricsTest, TransportTablesAreGauges) {
  metrics_.publish(sessions_, 0, 0, {}, {3, 1, 2});
  std::string t = metrics_.render();
  EXPECT_NE(t.find("outboard_transport_peers 3\n"), std::string::npos) << t;
  EXPECT_NE(t.find("outboard_transport_retiring 1\n"), std::string::npos) << t;
  EXPECT_NE(t.find("outboard_transport_closes_in_flight 2\n"), std::string::npos) << t;
  metrics_.publish(sessions_, 0, 0, {}, {1, 0, 0});
  t = metrics_.render();
  EXPECT_NE(t.find("outboard_transport_peers 1\n"), std::string::npos) << t;
  EXPECT_NE(t.find("outboard_transport_retiring 0\n"), std::string::npos) << t;
}

TEST_F(MetricsTest, CountsCallsBytesErrorsAndDurationsPerIdentity) {
  Session& a = open(1, "host:10:prog");
  call(a, 1, 1000, 400);
  call(a, 2, 24, 0, false);
  const std::string t = text();
  const std::string l = "service=\"blas3\",identity=\"host:10:prog\"";
  EXPECT_NE(t.find("outboard_calls_total{" + l + "} 2\n"), std::string::npos) << t;
  EXPECT_NE(t.find("outboard_call_errors_total{" + l + "} 1\n"), std::string::npos) << t;
  EXPECT_NE(t.find("outboard_received_bytes_total{" + l + "} 1024\n"), std::string::npos) << t;
  EXPECT_NE(t.find("outboard_sent_bytes_total{" + l + "} 400\n"), std::string::npos) << t;
  EXPECT_NE(t.find("outboard_call_duration_seconds_count{" + l + "} 2\n"), std::string::npos) << t;
  EXPECT_NE(t.find("outboard_call_duration_seconds_bucket{" + l + ",le=\"+Inf\"} 2\n"), std::string::npos) << t;
  EXPECT_NE(t.find("outboard_open_sessions{identity=\"host:10:prog\"} 1\n"), std::string::npos) << t;
  EXPECT_NE(t.find("outboard_open_service_sessions{" + l + "} 1\n"), std::string::npos) << t;
  metrics_.session_ended(a);
  sessions_.clear();
  const std::string after = text();
  EXPECT_EQ(after.find("outboard_open_sessions{"), std::string::npos) << after;
  EXPECT_NE(after.find("outboard_calls_total{" + l + "} 2\n"), std::string::npos) << "counters outlive the session";
}

// A client names itself: its name reaches the text escaped, printable, bounded.
TEST_F(MetricsTest, AHostileClientNameCannotBreakTheText) {
  Session& s = open(1, std::string("a\"b\\c\nd\x01\xff") + std::string(500, 'x'));
  call(s, 1, 8, 8);
  const std::string t = text();
  const std::regex sample(R"(^[a-z_]+(\{([a-z_]+="([^"\\\n]|\\["\\n])*",?)*\})? [-+0-9.eInf]+$)");
  size_t samples = 0;
  for (size_t at = 0, end; at < t.size(); at = end + 1) {
    end = t.find('\n', at);
    const std::string line = t.substr(at, end - at);
    if (line.empty() || line[0] == '#') continue;
    ++samples;
    EXPECT_TRUE(std::regex_match(line, sample)) << line;
  }
  EXPECT_GT(samples, 20u);
  EXPECT_NE(t.find("identity=\"a\\\"b\\\\c\\nd??xxx"), std::string::npos) << t;
  EXPECT_EQ(t.find(std::string(201, 'x')), std::string::npos) << "label values are bounded";
}

// Identities are per process today: those of ended sessions are dropped, oldest first, past a bound.
TEST_F(MetricsTest, KeepsABoundedNumberOfIdentities) {
  for (PeerId p = 1; p <= 1100; ++p) {
    Session& s = open(p, "host:" + std::to_string(p) + ":prog");
    call(s, 1, 8, 8);
    metrics_.session_ended(s);
    sessions_.clear();
  }
  const std::string t = text();
  size_t series = 0;
  for (size_t at = 0; (at = t.find("outboard_calls_total{", at)) != std::string::npos; ++at) ++series;
  EXPECT_EQ(series, 1000u);
  EXPECT_EQ(t.find("identity=\"host:1:prog\""), std::string::npos) << "the oldest went first";
  EXPECT_NE(t.find("identity=\"host:1100:prog\""), std::string::npos);
}

TEST(MetricsOff, HooksDoNothingAndTheTextIsEmptyOfSeries) {
  Metrics m;
  m.serve("127.0.0.1", 0);  // off
  Session s;
  s.peer = 1;
  s.client_name = "x";
  s.state = State::ready;
  wire::Blas3Call c;
  c.call_id = 1;
  m.request(s, "blas3", wire::Message{c});
  m.call_counted(&s, 1, true);
  EXPECT_EQ(m.render().find("outboard_calls_total{"), std::string::npos);
}

}  // namespace
}  // namespace outboard::server
