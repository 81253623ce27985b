// The cost model of OUTBOARD_OFFLOAD=auto: whether a call finishes sooner here or on the server,
// from what it costs each way. Remote: a fixed cost per call, its bytes over the link, and its
// flops at the server's rate; local: its flops at this machine's rate. Every rate is a prior at
// first (settings, the host's cores, whether the server has a GPU), then measured: the link by a
// probe when a connection is made and by every large remote call, the server's rate per routine
// family from the compute time its replies report, the fixed cost from small remote calls, and
// the local rate per family from timed local calls (LocalTiming); a faster run than known is taken
// at once, a slower one pulls gradually (cold starts and busy moments are transient), and the
// first local run of a family, if slower than the prior, is a warm-up and ignored. Where the
// estimates are within a factor of two, the side not chosen is tried until it has three
// measurements (six tries at most per family, never two in a row, none for an FFT plan): a few
// calls per family may run on the slower side, after which the choice rests on measurements. The
// first remote call of a family, if slower than the prior, is the server's warm-up and ignored too.
#pragma once
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "client/settings.hpp"
#include "wire/level3.hpp"

namespace outboard::client {

// What a call costs, for the model: its family ("dgemm", "zgetrf", "fftw_c2c": rates are kept per
// family), floating-point operations and bytes over the link both ways.
struct CallCost {
  std::string_view family;
  double flops = 0;
  double bytes = 0;
  bool sticky = false;  // the choice binds later calls too (an FFT plan's executions): no tries
};

class LinkModel {
 public:
  explicit LinkModel(const Settings& settings);

  struct Estimate {
    double local_seconds = 0, remote_seconds = 0;
    bool remote = false;   // the side chosen
    bool explore = false;  // chosen to measure a side never measured for this family
  };
  // The side for `c` (and the estimates behind the choice); counts the decision.
  Estimate choose(const CallCost& c);
  // The estimates alone, nothing counted.
  Estimate estimate(const CallCost& c) const;

  // A connection was made: its round trip and bulk rate as the connect-time probe measured them.
  // `server_has_gpu` sets the server's prior rate.
  void probed(double round_trip_seconds, double bytes_per_second, bool server_has_gpu);
  // A remote call of `family` moved `bytes` and took `seconds` in all, of which the server
  // computed `compute_seconds`.
  void remote_ran(std::string_view family, double flops, double bytes, double seconds, double compute_seconds);
  // A call of `family` ran locally in `seconds`.
  void local_ran(std::string_view family, double flops, double seconds);

  // Whether a connect-time probe has run (or could not run: the choices then go on the assumed
  // rate until calls measure it).
  bool probed() const {
    std::lock_guard lk(mu_);
    return probed_;
  }
  void probe_failed() {
    std::lock_guard lk(mu_);
    probed_ = true;
  }

  // For OUTBOARD_REPORT: the link and each family's rates and decisions, a line each.
  std::string summary() const;

  // What this process knows beyond its priors, as a JSON document (model_memory.hpp keeps it
  // between processes): the link, and each family's measured rates and fixed cost with their
  // sample counts.
  std::string memory() const;
  // What earlier processes measured (memory()'s document), taken as measured here: a family's
  // samples count up to kSettledSamples (its tries are then done), and this process's calls still
  // move the rates. The link's figures hold until this connection's probe measures it. Values
  // that are not finite and positive are left out. Returns how many families it brought; throws
  // Error on a document that is not memory()'s shape.
  size_t recall(std::string_view memory);

 private:
  struct Family {
    double local_flops_per_second = 0;   // measured; 0 until then
    double server_flops_per_second = 0;  // measured
    double fixed_seconds = -1;           // a remote call's cost beyond bytes and flops; < 0 unknown
    uint64_t local_samples = 0, remote_samples = 0;  // with those recalled from earlier processes
    uint64_t local_runs = 0, remote_runs = 0;        // this process's (its first of each is a warm-up)
    uint64_t chose_local = 0, chose_remote = 0, explored = 0;
    bool explored_last = false;
  };
  Estimate estimate_locked(const CallCost& c, const Family* f) const;
  double local_rate(std::string_view family, const Family* f) const;
  double server_rate(std::string_view family, const Family* f) const;

  const Settings& settings_;
  mutable std::mutex mu_;
  std::map<std::string, Family, std::less<>> families_;
  double link_bytes_per_second_;
  double round_trip_seconds_;
  bool link_measured_ = false;
  bool link_recalled_ = false;  // the link's figures are an earlier process's
  bool probed_ = false;
  bool server_has_gpu_ = true;
  double local_gflops_;  // this host's prior for a double-precision GEMM
};

// Whether a Level-3 call reads its output operand, which must then travel: beta = 0 means C is not
// read (trmm and trsm's B always is).
bool output_read(const wire::Level3Call& call);
// A Level-3 call's cost: its flops and the bytes it moves both ways, its output counted going out
// only where it is read (a GEMM of beta 0 moves A and B out and C back: the model counted C going
// out too until the thirty-third session, a third more bytes, and kept such calls here where
// they were faster remote).
CallCost level3_cost(std::string_view family, const wire::Level3Call& call);

// The floating-point work of an FFT of `sizes` (one per dimension), `batch` times, for the model:
// 5 N log2 N where each size factors into primes up to kSmoothPrime (half for real data). A size's
// factor of larger primes is done as FFTW and cuFFT do it (Bluestein's or Rader's way): about
// three transforms of the power of two at least twice its length. On the H200 host's 16 cores
// FFTW took 34 ms for 1000003 points (a prime) and 15.5 ms for 4194304: 10x the time per 5 N log2 N,
// 1.5x with the work counted so. Counted as 5 N log2 N, one prime size's rate made every size of
// its family look 10x slower here (four misses in 21 of the 25 Gbit/s sweep).
double fft_work_flops(const std::vector<int64_t>& sizes, double batch, bool real_data);
constexpr int64_t kSmoothPrime = 127;

// The family's prior local rate relative to a GEMM of its precision: factorizations run at about
// half of it, eigen- and singular-value drivers (and their reductions) at about a tenth.
double local_rate_factor(std::string_view family);

}  // namespace outboard::client
