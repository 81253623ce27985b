// Structured log lines for the daemon: "event key=value ..." in text form, or one JSON object per
// line. The client runtime inside applications does not log here; it writes warnings to stderr.
#pragma once
#include <spdlog/spdlog.h>

#include <string>

namespace outboard::log {

// level: trace|debug|info|warn|error; format: text|json. Throws Error on unknown names. `worker`
// >= 0: every line names that worker (a server process per GPU shares its supervisor's stderr).
void setup(const std::string& level, const std::string& format, int worker = -1);

}  // namespace outboard::log
