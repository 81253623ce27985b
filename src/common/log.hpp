// Structured log lines for the daemon: "event key=value ..." in text form, or one JSON object per
// line. The client runtime inside applications does not log here; it writes warnings to stderr.
#pragma once
#include <spdlog/spdlog.h>

#include <string>

namespace outboard::log {

// level: trace|debug|info|warn|error; format: text|json. Throws Error on unknown names.
void setup(const std::string& level, const std::string& format);

}  // namespace outboard::log
