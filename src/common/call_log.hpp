// Per-call timestamps of OUTBOARD_CL_TRACE_CALLS=PREFIX (set with OUTBOARD_CL_TRACE=1): each side
// of remote OpenCL keeps a line per answered call (an operation's name, its call id, steady-clock
// times in ns) and writes them to PREFIX.<name>.<pid>[.<n>], to be joined by call id
// (bench/opencl/trace_join.py). On one host the two processes' clocks are one, so the join gives
// each hop between them. Off, nothing is kept.
#pragma once
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <mutex>
#include <string>
#include <vector>

#include "common/trace.hpp"

namespace outboard::trace {

// The time the transport's thread last received a message (its active-message callback), where
// calls are logged: what a handler running on that thread takes for its message's arrival.
inline thread_local uint64_t last_arrival_ns = 0;

class CallLog {
 public:
  // Lines kept at most; later ones are dropped.
  static constexpr size_t kMaxLines = 1 << 20;
  // `name`: the file's middle part ("client", "server", "sent").
  explicit CallLog(std::string name) : name_(std::move(name)) {}
  ~CallLog() { write(); }
  CallLog(const CallLog&) = delete;
  CallLog& operator=(const CallLog&) = delete;

  static bool enabled() { return calls_prefix() != nullptr; }
  // `op`: a static name.
  void add(const char* op, uint64_t call_id, std::initializer_list<uint64_t> times) {
    std::lock_guard lk(mu_);
    if (lines_.size() >= kMaxLines) return;
    Line l{op, call_id, {}};
    l.times.assign(times.begin(), times.end());
    lines_.push_back(std::move(l));
  }
  // Writes what was kept to a new file (numbered from the second) and forgets it.
  void write() {
    const char* prefix = calls_prefix();
    std::lock_guard lk(mu_);
    if (!prefix || lines_.empty()) return;
    std::string path = std::string(prefix) + "." + name_ + "." + std::to_string(getpid());
    if (files_++) path += "." + std::to_string(files_);
    if (FILE* f = std::fopen(path.c_str(), "w")) {
      for (const Line& l : lines_) {
        std::fprintf(f, "%s %llu", l.op, static_cast<unsigned long long>(l.call_id));
        for (uint64_t t : l.times) std::fprintf(f, " %llu", static_cast<unsigned long long>(t));
        std::fputc('\n', f);
      }
      std::fclose(f);
    }
    lines_.clear();
  }

 private:
  struct Line {
    const char* op;
    uint64_t call_id;
    std::vector<uint64_t> times;
  };
  const std::string name_;
  std::mutex mu_;
  std::vector<Line> lines_;
  unsigned files_ = 0;
};

}  // namespace outboard::trace
