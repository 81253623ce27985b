#include "common/error.hpp"

#include <cstring>

namespace outboard {

std::string errno_text(int err) {
  char buf[256];
  // GNU strerror_r may return a static string instead of filling buf.
  const char* s = strerror_r(err, buf, sizeof buf);
  return s ? std::string(s) : std::string("errno ") + std::to_string(err);
}

}  // namespace outboard
