#include "common/log.hpp"

#include <spdlog/async.h>
#include <spdlog/sinks/stdout_sinks.h>

#include <cstdlib>

#include "common/error.hpp"

namespace outboard::log {
namespace {
constexpr size_t kQueuedLines = 16384;
}  // namespace

void setup(const std::string& level, const std::string& format, int worker) {
  auto lvl = spdlog::level::from_str(level);
  if (lvl == spdlog::level::off && level != "off")
    throw Error("unknown log level '" + level + "' (trace, debug, info, warn, error, off)");
  // Written by a thread of its own: the server's progress thread, which every session's messages
  // wait behind, only queues a line (a slow or blocked stderr — a pipe to a busy journal — never
  // stalls it). Lines beyond the queue replace the oldest rather than wait; the queue is drained
  // at exit.
  spdlog::init_thread_pool(kQueuedLines, 1);
  auto logger = spdlog::create_async_nb<spdlog::sinks::stderr_sink_mt>("outboard");
  std::atexit([] { spdlog::shutdown(); });
  if (format == "json")
    logger->set_pattern(R"({"time":"%Y-%m-%dT%H:%M:%S.%f%z","level":"%l",)" +
                        (worker >= 0 ? "\"worker\":" + std::to_string(worker) + "," : std::string()) + R"("event":"%v"})");
  else if (format == "text")
    logger->set_pattern("%Y-%m-%dT%H:%M:%S.%f %l " + (worker >= 0 ? "worker=" + std::to_string(worker) + " " : std::string()) + "%v");
  else
    throw Error("unknown log format '" + format + "' (text, json)");
  logger->set_level(lvl);
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(logger);
}

}  // namespace outboard::log
