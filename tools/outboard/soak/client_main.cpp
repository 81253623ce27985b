// outboard-soak-client: one client process of `outboard bench soak`. An ordinary program linked
// with the system's BLAS, LAPACK, FFTW and OpenCL loader; `outboard bench soak` starts it through
// `outboard run`, so its calls take the real offload path (the shims and the client runtime).
// It waits for the release, then makes calls picked at random (by weight) from every API until
// its time is up, checking each result, and writes a Record of its tallies to the results pipe
// every two seconds and as it ends.
//
// outboard-soak-client --slot I --generation G --seed S --until NS --results FD [--release FD]
//                      [--large-percent P] [--think-ms M] [--apis blas,lapack,fft,opencl]
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>

#include "tools/outboard/soak/cases.hpp"

namespace outboard::soak {

void Tally::note(const std::string& text) {
  if (!r_.message[0]) std::snprintf(r_.message, sizeof r_.message, "%s", text.c_str());
}

void Tally::checked(int routine, double q, const std::string& what) {
  if (q <= 1) {
    r_.worst[routine] = std::max(r_.worst[routine], static_cast<float>(q));
    return;
  }
  ++r_.wrong[routine];
  r_.worst[routine] = std::max(r_.worst[routine], static_cast<float>(std::isnan(q) ? INFINITY : q));
  char s[64];
  std::snprintf(s, sizeof s, " (error %.3g x the tolerance)", q);
  note("wrong result: " + what + s);
}

void Tally::failed(int routine, const std::string& why) {
  ++r_.failed[routine];
  note(std::string("failed: ") + kRoutines[routine] + ": " + why);
}

Record Tally::take(int slot, int generation, bool last) {
  Record out = r_;
  out.slot = slot;
  out.generation = generation;
  out.pid = static_cast<int32_t>(getpid());
  out.last = last;
  r_ = Record{};
  r_.opencl_platforms = out.opencl_platforms;
  return out;
}

std::vector<int> Context::sample(int n, int count) {
  std::vector<int> out;
  if (n <= count) {
    for (int i = 0; i < n; ++i) out.push_back(i);
    return out;
  }
  out.push_back(n - 1);  // the last column: where blocks and chunks end
  while (static_cast<int>(out.size()) < count) {
    int i = uniform(0, n - 2);
    if (std::find(out.begin(), out.end(), i) == out.end()) out.push_back(i);
  }
  return out;
}

namespace {

uint64_t monotonic_ns() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return uint64_t(t.tv_sec) * 1000000000u + uint64_t(t.tv_nsec);
}

void send(int fd, const Record& r) {
  ssize_t n;
  while ((n = ::write(fd, &r, sizeof r)) < 0 && errno == EINTR) {
  }
  if (n != static_cast<ssize_t>(sizeof r)) {
    std::fprintf(stderr, "outboard-soak-client: cannot write a record: %s\n", std::strerror(errno));
    std::exit(3);
  }
}

struct Options {
  int slot = 0, generation = 0, results = -1, release = -1, large_percent = 5, think_ms = 0;
  uint64_t seed = 1, until_ns = 0;
  std::string apis = "blas,lapack,fft,opencl";
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--slot") o.slot = std::stoi(v);
    else if (k == "--generation") o.generation = std::stoi(v);
    else if (k == "--seed") o.seed = std::stoull(v);
    else if (k == "--until") o.until_ns = std::stoull(v);
    else if (k == "--results") o.results = std::stoi(v);
    else if (k == "--release") o.release = std::stoi(v);
    else if (k == "--large-percent") o.large_percent = std::stoi(v);
    else if (k == "--think-ms") o.think_ms = std::stoi(v);
    else if (k == "--apis") o.apis = v;
    else throw std::runtime_error("unknown option " + k);
  }
  if (o.results < 0 || !o.until_ns) throw std::runtime_error("--results and --until are required");
  return o;
}

int run(int argc, char** argv) {
  const Options o = parse(argc, argv);
  if (o.release >= 0) {  // EOF: the parent let every client of the first burst go at once
    char byte;
    while (::read(o.release, &byte, 1) < 0 && errno == EINTR) {
    }
    ::close(o.release);
  }
  Context c;
  c.rng.seed(o.seed * 1000003u + static_cast<uint64_t>(o.slot) * 7919u + static_cast<uint64_t>(o.generation));
  c.large_percent = o.large_percent;
  std::vector<Case> cases;
  auto add = [&](std::vector<Case> more) { cases.insert(cases.end(), more.begin(), more.end()); };
  if (o.apis.find("blas") != std::string::npos) add(blas3_cases());
  if (o.apis.find("lapack") != std::string::npos) add(lapack_cases());
  if (o.apis.find("fft") != std::string::npos) add(fft_cases());
  if (o.apis.find("opencl") != std::string::npos) add(opencl_cases(c));
  int total = 0;
  for (const Case& k : cases) total += k.weight;
  uint64_t flushed = monotonic_ns();
  while (total > 0 && monotonic_ns() < o.until_ns) {
    int pick = c.uniform(0, total - 1);
    const Case* k = cases.data();
    while (pick >= k->weight) pick -= (k++)->weight;
    try {
      k->run(c);
    } catch (const std::exception& e) {
      const int r = routine_index(k->name);
      c.tally.failed(r >= 0 ? r : routine_index(std::string(k->name).substr(0, std::string(k->name).find('+'))), e.what());
    }
    if (monotonic_ns() - flushed >= 2000000000u) {
      send(o.results, c.tally.take(o.slot, o.generation, false));
      flushed = monotonic_ns();
    }
    if (o.think_ms > 0) {
      timespec t{o.think_ms / 1000, (o.think_ms % 1000) * 1000000L};
      while (nanosleep(&t, &t) < 0 && errno == EINTR) {
      }
    }
  }
  opencl_finish();
  send(o.results, c.tally.take(o.slot, o.generation, true));
  return 0;
}

}  // namespace
}  // namespace outboard::soak

int main(int argc, char** argv) {
  try {
    return outboard::soak::run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "outboard-soak-client: %s\n", e.what());
    return 2;
  }
}
