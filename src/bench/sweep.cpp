#include "bench/sweep.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "common/error.hpp"

namespace outboard::bench {

std::vector<uint64_t> sweep_sizes(const SweepOptions& o) {
  if (o.min_bytes == 0 || o.max_bytes < o.min_bytes) throw Error("sweep: need 0 < min_bytes <= max_bytes");
  if (o.steps_per_octave < 1) throw Error("sweep: steps_per_octave must be at least 1");
  std::vector<uint64_t> sizes;
  auto add = [&](uint64_t s) {
    if (s >= o.min_bytes && s <= o.max_bytes) sizes.push_back(s);
  };
  const double factor = std::pow(2.0, 1.0 / o.steps_per_octave);
  for (double c = static_cast<double>(o.min_bytes); c <= static_cast<double>(o.max_bytes) * factor; c *= factor) {
    uint64_t centre = std::min<uint64_t>(static_cast<uint64_t>(std::llround(c)), o.max_bytes);
    if (o.perturbation && centre > o.perturbation) add(centre - o.perturbation);
    add(centre);
    if (o.perturbation) add(centre + o.perturbation);
    if (centre == o.max_bytes) break;
  }
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

uint64_t repeats_for(double last_seconds_per_op, double target_seconds, uint64_t max_repeats) {
  if (!(last_seconds_per_op > 0)) return 1;
  double r = target_seconds / last_seconds_per_op;
  if (r < 1) return 1;
  return std::min<uint64_t>(max_repeats, static_cast<uint64_t>(r));
}

std::vector<Point> run_sweep(const SweepOptions& o, const std::function<double(uint64_t, uint64_t)>& measure,
                             const std::function<void(const Point&, size_t, size_t)>& progress) {
  if (o.trials < 1) throw Error("sweep: trials must be at least 1");
  const std::vector<uint64_t> sizes = sweep_sizes(o);
  std::vector<Point> points;
  double last = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    Point p;
    p.bytes = sizes[i];
    if (last == 0) {  // calibrates the first point; the very first operation warms caches and paths
      measure(p.bytes, 1);
      last = measure(p.bytes, 1);
    }
    // The next size takes a little longer than the last: scale by the size ratio, at least 1.
    double expected = last * std::max(1.0, i ? double(sizes[i]) / double(sizes[i - 1]) : 1.0);
    p.repeats = repeats_for(expected, o.target_seconds, o.max_repeats);
    p.seconds = std::numeric_limits<double>::infinity();
    for (int t = 0; t < o.trials; ++t) p.seconds = std::min(p.seconds, measure(p.bytes, p.repeats));
    last = p.seconds;
    points.push_back(p);
    if (progress) progress(p, i, sizes.size());
  }
  return points;
}

void write_netpipe(const std::string& path, const std::vector<Point>& points) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) throw Error("cannot write " + path);
  for (const Point& p : points) std::fprintf(f, "%10llu %14.6f %14.9f\n", (unsigned long long)p.bytes, p.mbps(), p.seconds);
  if (std::fclose(f) != 0) throw Error("cannot write " + path);
}

}  // namespace outboard::bench
