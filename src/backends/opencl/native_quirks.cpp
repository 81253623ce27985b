#include "backends/opencl/native_quirks.hpp"

#include <cctype>
#include <cstdlib>

namespace outboard::backends::opencl {
namespace {

constexpr size_t kNvidiaLongestKernelName = 256;

bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The identifier starting at `at`, or empty.
std::string_view identifier(std::string_view s, size_t at) {
  size_t end = at;
  while (end < s.size() && ident_char(s[end])) ++end;
  return s.substr(at, end - at);
}

size_t skip_space(std::string_view s, size_t at) {
  while (at < s.size() && std::isspace(static_cast<unsigned char>(s[at]))) ++at;
  return at;
}

// Past a balanced (...) group starting at `at` (which holds '('); s.size() if it never closes.
size_t skip_group(std::string_view s, size_t at) {
  int depth = 0;
  for (; at < s.size(); ++at) {
    if (s[at] == '(') ++depth;
    else if (s[at] == ')' && --depth == 0) return at + 1;
  }
  return s.size();
}

}  // namespace

std::string longest_kernel_name(std::string_view s) {
  std::string_view longest;
  for (size_t at = 0; at < s.size();) {
    if (!ident_char(s[at])) {
      ++at;
      continue;
    }
    const std::string_view word = identifier(s, at);
    at += word.size();
    if (word != "kernel" && word != "__kernel") continue;
    // kernel [__attribute__((...))]... type [__attribute__((...))]... name (
    std::string_view last;
    bool named = false;  // a '(' came: `last` is the name
    for (size_t p = skip_space(s, at); p < s.size();) {
      if (s[p] == '(') {  // the name is the identifier before it
        named = true;
        break;
      }
      if (!ident_char(s[p])) {
        ++p;
        continue;
      }
      const std::string_view w = identifier(s, p);
      p = skip_space(s, p + w.size());
      if (w == "__attribute__" || w == "__attribute") {
        if (p < s.size() && s[p] == '(') p = skip_group(s, p);
        continue;
      }
      last = w;
    }
    if (named && last.size() > longest.size()) longest = last;
  }
  return std::string(longest);
}

std::string build_refusal(std::string_view platform, std::string_view source) {
  const char* test_platform = std::getenv("OUTBOARD_TEST_CL_QUIRK_PLATFORM");
  const bool nvidia = platform.find("NVIDIA") != std::string_view::npos ||
                      (test_platform && *test_platform && platform == test_platform);
  if (!nvidia) return {};
  const std::string name = longest_kernel_name(source);
  if (name.size() <= kNvidiaLongestKernelName) return {};
  return "Outboard refused this build: NVIDIA's OpenCL corrupts its process's heap building a kernel whose name is over " +
         std::to_string(kNvidiaLongestKernelName) + " characters (this one has " + std::to_string(name.size()) +
         "), which would end the server and every program it serves";
}

}  // namespace outboard::backends::opencl
