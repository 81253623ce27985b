// The NetPIPE measurement method: message sizes grow geometrically, each with perturbed
// neighbours (c-p, c, c+p); the repeat count of each point is chosen from the previous point's
// time so that one trial lasts about `target_seconds`; the result of a point is the minimum over
// `trials` trials (the least disturbed one on a shared machine).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace outboard::bench {

struct SweepOptions {
  uint64_t min_bytes = 1;
  uint64_t max_bytes = 1ull << 30;
  uint64_t perturbation = 3;  // bytes; 0 measures only the centres
  int steps_per_octave = 1;   // centres per doubling of the size
  double target_seconds = 0.25;
  int trials = 7;
  uint64_t max_repeats = 1'000'000;
};

// Sizes in increasing order, no duplicates, all within [min_bytes, max_bytes].
std::vector<uint64_t> sweep_sizes(const SweepOptions& o);

// Repeats for one trial, given the seconds one operation took at the last point.
uint64_t repeats_for(double last_seconds_per_op, double target_seconds, uint64_t max_repeats);

struct Point {
  uint64_t bytes = 0;
  uint64_t repeats = 0;
  double seconds = 0;  // per operation (one-way transfer), the minimum over the trials
  double mib_per_s() const { return seconds > 0 ? bytes / seconds / (1 << 20) : 0; }
  double mbps() const { return seconds > 0 ? bytes * 8 / seconds / 1e6 : 0; }
};

// Runs the sweep. `measure(bytes, repeats)` performs `repeats` operations of `bytes` and returns
// the seconds per operation. `progress` (optional) sees each finished point.
std::vector<Point> run_sweep(const SweepOptions& o, const std::function<double(uint64_t, uint64_t)>& measure,
                             const std::function<void(const Point&, size_t index, size_t count)>& progress = {});

// NetPIPE's output format: one line per point, "bytes Mbps seconds".
void write_netpipe(const std::string& path, const std::vector<Point>& points);

}  // namespace outboard::bench
