#include "common/log.hpp"

#include <spdlog/sinks/stdout_sinks.h>

#include "common/error.hpp"

namespace outboard::log {

void setup(const std::string& level, const std::string& format) {
  auto lvl = spdlog::level::from_str(level);
  if (lvl == spdlog::level::off && level != "off")
    throw Error("unknown log level '" + level + "' (trace, debug, info, warn, error, off)");
  auto logger = spdlog::stderr_logger_mt("outboard");
  if (format == "json")
    logger->set_pattern(R"({"time":"%Y-%m-%dT%H:%M:%S.%f%z","level":"%l","event":"%v"})");
  else if (format == "text")
    logger->set_pattern("%Y-%m-%dT%H:%M:%S.%f %l %v");
  else
    throw Error("unknown log format '" + format + "' (text, json)");
  logger->set_level(lvl);
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(logger);
}

}  // namespace outboard::log
