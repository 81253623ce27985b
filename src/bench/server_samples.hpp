// What a long run (`outboard bench soak`) watches of a server: its process's resident memory,
// open file descriptors and threads, read from /proc where the server runs on this host, and
// whether they grow: the median of the first third of the samples taken after a warm-up against
// the median of the last third (a leak grows steadily; a cache that fills once and a burst do not
// move the medians of whole thirds much).
#pragma once
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <vector>

namespace outboard::bench {

struct ProcessSample {
  int64_t rss_bytes = 0;
  int64_t fds = 0;
  int64_t threads = 0;
  double cpu_seconds = 0;  // user + system time so far (/proc/<pid>/stat)
};

// /proc/<pid>/status (VmRSS, Threads), /proc/<pid>/stat (CPU time) and the entries of
// /proc/<pid>/fd; nothing where the process is gone or not ours to read.
std::optional<ProcessSample> read_process(pid_t pid);

struct Trend {
  double first = 0;  // median of the first third of the values
  double last = 0;   // median of the last third
  double growth() const { return last - first; }
  size_t values = 0;  // how many values the thirds were taken from
};

// The trend of `values` (in sampling order); nothing with fewer than three.
std::optional<Trend> thirds_trend(const std::vector<double>& values);

}  // namespace outboard::bench
