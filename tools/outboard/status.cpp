#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <nlohmann/json.hpp>
#include <thread>

#include "common/error.hpp"
#include "tools/outboard/commands.hpp"
#include "tools/outboard/connect.hpp"
#include "tools/outboard/status_text.hpp"

namespace outboard::tool {
namespace {

volatile std::sig_atomic_t g_stop = 0;  // Ctrl-C or SIGTERM during --watch
extern "C" void stop_watching(int) { g_stop = 1; }

void print_status(const nlohmann::json& doc, bool json) {
  std::printf("%s", json ? (doc.dump(2) + "\n").c_str() : status_text(doc).c_str());
}

nlohmann::json fetch_status(client::Connection& conn) {
  auto reply = conn.request(wire::StatusRequest{}, {}, nullptr, 0, 10);
  auto* s = std::get_if<wire::StatusReply>(&reply);
  if (!s) throw Error("unexpected answer to a status request");
  return nlohmann::json::parse(s->json);
}

// Sleeps `seconds`, waking early when asked to stop.
void nap(double seconds) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (!g_stop && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

// Redraws the status every `seconds` on one connection (as `watch` would, without a new session
// each time) until Ctrl-C (status 0) or the server stops answering (status 1, saying so).
int watch(client::Connection& conn, const std::string& server, double seconds, bool json) {
  struct sigaction sa{};
  sa.sa_handler = stop_watching;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  const bool tty = isatty(STDOUT_FILENO);
  while (!g_stop) {
    nlohmann::json doc;
    try {
      doc = fetch_status(conn);
    } catch (const std::exception& e) {
      std::fflush(stdout);
      std::fprintf(stderr, "outboard status: the server %s went away: %s\n", server.c_str(), e.what());
      return 1;
    }
    char when[64];
    const std::time_t now = std::time(nullptr);
    std::strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", std::localtime(&now));
    // On a terminal redraw in place; into a file or pipe, one block per refresh.
    std::printf("%severy %g s: outboard status %s  %s  (Ctrl-C to stop)\n", tty ? "\033[H\033[2J" : "\n", seconds,
                server.c_str(), when);
    print_status(doc, json);
    std::fflush(stdout);
    nap(seconds);
  }
  return 0;
}

}  // namespace

Runner add_status(CLI::App& app) {
  auto* cmd = app.add_subcommand("status", "Show a server's version, backends, uptime and per-client counters");
  struct Args {
    std::string server, token, watch;
    bool json = false;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("--server", a->server, "host:port (default: OUTBOARD_SERVERS's first, or 127.0.0.1:7700)");
  cmd->add_option("--token-file", a->token, "Secret file");
  cmd->add_flag("--json", a->json, "Print the status document as JSON");
  auto* watch_opt = cmd->add_option("--watch", a->watch, "Refresh every SECONDS (default 2) until Ctrl-C")
                        ->expected(0, 1)
                        ->type_name("[SECONDS]");
  return [=] {
    double seconds = 0;
    if (watch_opt->count()) {
      seconds = 2;
      if (!a->watch.empty()) {
        char* end = nullptr;
        seconds = std::strtod(a->watch.c_str(), &end);
        if (*end || !(seconds >= 0.1 && seconds <= 86400))
          throw Error("--watch takes seconds between 0.1 and 86400, not '" + a->watch + "'");
      }
    }
    auto conn = connect_from_flags(a->server, a->token, "outboard-status");
    if (seconds > 0) {
      const std::string where =
          a->server.empty() ? client::settings_from_environment().servers.front().text() : a->server;
      return watch(*conn, where, seconds, a->json);
    }
    print_status(fetch_status(*conn), a->json);
    return 0;
  };
}

}  // namespace outboard::tool
