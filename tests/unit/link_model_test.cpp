// Unit tests of the cost model of OUTBOARD_OFFLOAD=auto (client/link_model.hpp): its priors, what
// the measurements teach it, and the one try of a side never measured.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "client/link_model.hpp"
#include "client/model_memory.hpp"
#include "common/error.hpp"

namespace outboard::client {
namespace {

// A host of 100 GF/s (double GEMM) and a GPU server of 20 TF/s, 1 GB/s between, 1 ms per call.
Settings priors() {
  Settings s;
  s.local_gflops = 100;
  s.server_gflops = 20000;
  s.fft_local_gflops = 10;
  s.link_gbytes = 1;
  return s;
}

CallCost gemm(double n) { return {"dgemm", 2 * n * n * n, 4 * 8 * n * n}; }

TEST(LinkModel, PriorsWeighFlopsAgainstBytes) {
  const Settings s = priors();
  LinkModel m(s);
  // n = 512: 0.27 GFLOP (2.7 ms here) against 8 MB (8 ms over the link): here.
  LinkModel::Estimate e = m.estimate(gemm(512));
  EXPECT_FALSE(e.remote);
  EXPECT_NEAR(e.local_seconds, 2 * 512.0 * 512 * 512 / 100e9, 1e-9);
  // n = 4096: 137 GFLOP (1.4 s here) against 537 MB (0.54 s): remote.
  EXPECT_TRUE(m.estimate(gemm(4096)).remote);
  // Single precision runs at twice the rate on both sides; a factorization at half, an
  // eigensolver at a tenth of a GEMM's.
  EXPECT_NEAR(m.estimate({"sgemm", 1e11, 0}).local_seconds, 0.5, 1e-9);
  EXPECT_NEAR(m.estimate({"dgetrf", 1e11, 0}).local_seconds, 2, 1e-9);
  EXPECT_NEAR(m.estimate({"zheevd", 1e11, 0}).local_seconds, 10, 1e-9);
  EXPECT_NEAR(m.estimate({"fftw_c2c", 1e10, 0}).local_seconds, 1, 1e-9);
  EXPECT_NEAR(m.estimate({"fftwf_r2c", 1e10, 0}).local_seconds, 0.5, 1e-9);
  EXPECT_DOUBLE_EQ(local_rate_factor("dsyr2k"), 1);
  EXPECT_DOUBLE_EQ(local_rate_factor("cpotrs"), 0.5);
  EXPECT_DOUBLE_EQ(local_rate_factor("dgesdd"), 0.1);
}

TEST(LinkModel, TheProbedLinkDecides) {
  const Settings s = priors();
  LinkModel m(s);
  EXPECT_FALSE(m.probed());
  // 10 GB/s measured: n = 1024 (21 ms here; 3.4 ms of bytes and a fixed ms remote) goes remote.
  EXPECT_FALSE(m.estimate(gemm(1024)).remote);
  m.probed(20e-6, 10e9, true);
  EXPECT_TRUE(m.probed());
  EXPECT_TRUE(m.estimate(gemm(1024)).remote);
  // A later probe (another connection) does not undo what calls have measured since.
  for (int i = 0; i < 10; ++i) m.remote_ran("dgemm", 1.7e10, 134e6, 0.5, 0.001);  // 134 MB in 0.5 s: 0.27 GB/s
  m.probed(20e-6, 10e9, true);
  EXPECT_FALSE(m.estimate(gemm(1024)).remote);
}

TEST(LinkModel, ServerWithoutAGpuRunsAtOurRateUntilMeasured) {
  Settings s = priors();
  s.server_gflops = 0;
  LinkModel m(s);
  m.probed(20e-6, 100e9, false);
  // Nothing to gain on a server as fast as this host: the bytes and the fixed cost make it lose.
  const LinkModel::Estimate e = m.estimate(gemm(4096));
  EXPECT_FALSE(e.remote);
  EXPECT_GT(e.remote_seconds, e.local_seconds);
  // Measured four times faster there: remote.
  m.remote_ran("dgemm", 2 * 4096.0 * 4096 * 4096, 4 * 8 * 4096.0 * 4096, 0.4, 2 * 4096.0 * 4096 * 4096 / 400e9);
  EXPECT_TRUE(m.estimate(gemm(4096)).remote);
}

TEST(LinkModel, LocalTimingsTeachThisHostsRate) {
  const Settings s = priors();
  LinkModel m(s);
  m.probed(20e-6, 1e9, true);
  EXPECT_TRUE(m.estimate(gemm(4096)).remote);
  // This host turns out ten times faster than assumed: n = 4096 takes 0.14 s here, less than its
  // bytes take to cross.
  m.local_ran("dgemm", 2 * 2048.0 * 2048 * 2048, 2 * 2048.0 * 2048 * 2048 / 1000e9);
  EXPECT_FALSE(m.estimate(gemm(4096)).remote);
  // A faster run is taken at once; a slower one pulls the estimate gradually.
  m.local_ran("dgemm", 1e10, 1e10 / 2000e9);
  EXPECT_NEAR(m.estimate({"dgemm", 1e10, 0}).local_seconds, 1e10 / 2000e9, 1e-12);
  m.local_ran("dgemm", 1e10, 1e10 / 1000e9);
  EXPECT_NEAR(m.estimate({"dgemm", 1e10, 0}).local_seconds, 1e10 / 1700e9, 1e-12);
  // A first run slower than the prior is a warm-up: ignored.
  LinkModel cold(s);
  cold.local_ran("dgemm", 1e10, 1.0);
  EXPECT_NEAR(cold.estimate({"dgemm", 1e10, 0}).local_seconds, 0.1, 1e-12);
  cold.local_ran("dgemm", 1e10, 1.0);
  EXPECT_NEAR(cold.estimate({"dgemm", 1e10, 0}).local_seconds, 1.0, 1e-12);
  // Too small to teach anything (timer noise, fixed costs).
  LinkModel other(s);
  other.local_ran("dgemm", 1e5, 1e-9);
  EXPECT_NEAR(other.estimate(gemm(4096)).local_seconds, 2 * 4096.0 * 4096 * 4096 / 100e9, 1e-9);
}

TEST(LinkModel, SmallRemoteCallsTeachTheFixedCost) {
  const Settings s = priors();
  LinkModel m(s);
  m.probed(20e-6, 10e9, true);
  const double before = m.estimate(gemm(1024)).remote_seconds;
  // 5 ms per call beyond bytes and flops (say, the server allocates device memory each time).
  for (int i = 0; i < 20; ++i) m.remote_ran("dgemm", 2e8, 1e6, 0.0051 + 1e6 / 10e9, 0);
  EXPECT_NEAR(m.estimate(gemm(1024)).remote_seconds - before, 0.0051 - (20e-6 + 1e-3), 2e-4);
  // Kept per family: another family still has the prior.
  EXPECT_NEAR(m.estimate({"dgetrf", 0, 0}).remote_seconds, 20e-6 + 1e-3, 1e-9);
}

TEST(LinkModel, TriesTheUnmeasuredSideWhenClose) {
  const Settings s = priors();
  LinkModel m(s);
  m.probed(20e-6, 1e9, true);
  // n = 2048: 0.17 s here, ~0.14 s remote by the priors: remote, measured slower than expected.
  LinkModel::Estimate e = m.choose(gemm(2048));
  EXPECT_TRUE(e.remote);
  EXPECT_FALSE(e.explore);
  m.remote_ran("dgemm", 2 * 2048.0 * 2048 * 2048, 4 * 8 * 2048.0 * 2048, 0.15, 0.001);
  // Still remote by the estimates, but within a factor of two of a side never measured: tried there.
  e = m.choose(gemm(2048));
  EXPECT_FALSE(e.remote);
  EXPECT_TRUE(e.explore);
  // Slower here than assumed. The first run is taken for a warm-up (OpenBLAS starting its
  // threads) and ignored; so the side is tried again, and the second run counts; never two tries
  // in a row (the chosen side gets a call between).
  m.local_ran("dgemm", 2 * 2048.0 * 2048 * 2048, 0.5);
  e = m.choose(gemm(2048));
  EXPECT_TRUE(e.remote);
  EXPECT_FALSE(e.explore);
  e = m.choose(gemm(2048));
  EXPECT_FALSE(e.remote);
  EXPECT_TRUE(e.explore);
  m.local_ran("dgemm", 2 * 2048.0 * 2048 * 2048, 0.5);
  e = m.choose(gemm(2048));
  EXPECT_TRUE(e.remote);
  EXPECT_FALSE(e.explore);
  // Far apart: no try (a call 100x slower here is never run here to find out).
  LinkModel far(s);
  far.probed(20e-6, 100e9, true);
  far.remote_ran("dgemm", 1e12, 1e8, 0.06, 0.05);
  e = far.choose({"dgemm", 1e12, 1e8});
  EXPECT_TRUE(e.remote);
  EXPECT_FALSE(e.explore);
  // A plan's choice binds its executions: never a try.
  LinkModel plans(s);
  plans.probed(20e-6, 1e9, true);
  plans.remote_ran("fftw_c2c", 1e9, 1e8, 0.1, 0.001);
  for (int i = 0; i < 4; ++i) EXPECT_FALSE(plans.choose({"fftw_c2c", 1e9, 1e8, /*sticky=*/true}).explore);
}

TEST(LinkModel, FirstCallsOnEachSideMayBeWarmUps) {
  const Settings s = priors();
  LinkModel m(s);
  m.probed(20e-6, 100e9, true);
  // The server's first call ran at 100 GF/s (a GPU library starting): ignored; the next counts.
  m.remote_ran("dgesdd", 1e10, 1e6, 0.1, 0.1);
  EXPECT_NEAR(m.estimate({"dgesdd", 1e10, 0}).remote_seconds - m.estimate({"dgesdd", 0, 0}).remote_seconds,
              1e10 / 2000e9, 1e-9);
  m.remote_ran("dgesdd", 1e10, 1e6, 0.1, 0.01);
  EXPECT_NEAR(m.estimate({"dgesdd", 1e10, 0}).remote_seconds - m.estimate({"dgesdd", 0, 0}).remote_seconds, 0.01, 1e-9);
  // A first call faster than the prior counts at once.
  LinkModel fast(s);
  fast.remote_ran("dgemm", 1e12, 1e6, 0.03, 0.025);
  EXPECT_NEAR(fast.estimate({"dgemm", 1e12, 0}).remote_seconds - fast.estimate({"dgemm", 0, 0}).remote_seconds, 0.025, 1e-9);
}

TEST(LinkModel, TriesAtMostSixTimes) {
  const Settings s = priors();
  LinkModel m(s);
  m.probed(20e-6, 1e9, true);
  m.remote_ran("dgemm", 2 * 2048.0 * 2048 * 2048, 4 * 8 * 2048.0 * 2048, 0.15, 0.001);
  // The local timing never arrives (the call ran where the shim could not time it): the model
  // stops trying after six tries (every other call).
  int tries = 0;
  for (int i = 0; i < 20; ++i) tries += m.choose(gemm(2048)).explore;
  EXPECT_EQ(tries, 6);
}

TEST(LinkModel, SummaryNamesEveryFamily) {
  const Settings s = priors();
  LinkModel m(s);
  m.probed(30e-6, 3e9, true);
  m.choose(gemm(4096));
  m.local_ran("zgetrf", 1e9, 0.02);
  const std::string text = m.summary();
  EXPECT_NE(text.find("link 3.00 GB/s (measured), round trip 30 us; server with a GPU"), std::string::npos) << text;
  EXPECT_NE(text.find("dgemm"), std::string::npos);
  EXPECT_NE(text.find("zgetrf       here 50 GF/s (1)"), std::string::npos) << text;
}

// What one process measured, recalled by the next (OUTBOARD_MODEL_FILE): the same estimates, no
// tries left for a settled family, the link's figures until a probe measures it; values that are
// not rates are left out, and a document of another shape is refused.
TEST(LinkModel, MemoryCarriesMeasurementsToTheNextProcess) {
  const Settings s = priors();
  LinkModel first(s);
  first.probed(20e-6, 3e9, true);
  for (int i = 0; i < 4; ++i) {
    first.remote_ran("dgemm", 2e11, 64e6, 0.05, 0.01);  // 20 TF/s on the server
    first.local_ran("dgemm", 2e11, 1.0);                // 200 GF/s here
  }
  LinkModel next(s);
  EXPECT_EQ(next.recall(first.memory()), 1u);
  const LinkModel::Estimate a = first.estimate(gemm(2048)), b = next.estimate(gemm(2048));
  EXPECT_NEAR(b.local_seconds, a.local_seconds, 1e-12);
  EXPECT_NEAR(b.remote_seconds, a.remote_seconds, 1e-12);
  EXPECT_FALSE(next.choose(gemm(2048)).explore);  // settled: nothing left to try
  EXPECT_NE(next.summary().find("(earlier runs)"), std::string::npos);
  next.probed(20e-6, 1e9, true);  // this connection's probe wins over the recalled link
  EXPECT_NE(next.summary().find("1.00 GB/s (measured)"), std::string::npos);

  LinkModel odd(s);
  EXPECT_EQ(odd.recall(R"({"families": {"dgemm": {"local_flops_per_second": -5, "server_flops_per_second": "fast"},
                                         "dgetrf": {"local_flops_per_second": 1e11, "local_samples": 1e30}}})"),
            1u);
  EXPECT_NEAR(odd.estimate(gemm(1000)).local_seconds, 2e9 / 100e9, 1e-12);  // dgemm: still the prior
  EXPECT_NEAR(odd.estimate({"dgetrf", 1e11, 0}).local_seconds, 1, 1e-12);
  // Fields of the wrong type are left out, never thrown as anything but Error.
  EXPECT_EQ(odd.recall(R"({"link": {"measured": "yes", "bytes_per_second": [1]}, "families": {"zgemm": [],
                                                                                          "cgemm": {"fixed_seconds": "0"}}})"),
            0u);
  EXPECT_THROW(odd.recall("[1, 2]"), Error);
  EXPECT_THROW(odd.recall("not json"), Error);
}

// The memory's file: entries written and read back by key, at most kMaxModelEntries (the least
// recently written go), a file that is not one refused either way and left as it was.
TEST(ModelMemory, FileKeepsEntriesPerKeyAndRefusesOthers) {
  const std::string dir = ::testing::TempDir() + "outboard-model-" + std::to_string(::getpid());
  const std::string path = dir + "/sub/model.json";
  std::filesystem::remove_all(dir);
  EXPECT_FALSE(read_model_memory(path, "a"));  // no file: nothing, no error
  for (size_t i = 0; i <= kMaxModelEntries; ++i)
    write_model_memory(path, "host" + std::to_string(i), R"({"families": {"dgemm": {"fixed_seconds": 0.001}}})");
  EXPECT_FALSE(read_model_memory(path, "host0"));  // the least recently written went
  ASSERT_TRUE(read_model_memory(path, "host1"));
  EXPECT_NE(read_model_memory(path, "host1")->find("dgemm"), std::string::npos);
  for (const char* other : {"not json", R"({"version": "1", "entries": {}})", R"([1])"}) {
    std::ofstream(path) << other;
    EXPECT_THROW(read_model_memory(path, "host1"), Error) << other;
    EXPECT_THROW(write_model_memory(path, "host1", "{}"), Error) << other;
    std::ifstream in(path);
    EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), other);
  }
  std::filesystem::remove_all(dir);
}

// An FFT's work: 5 N log2 N for sizes of small primes (as before); a size with a large prime factor
// as three transforms of the power of two at least twice its length (Bluestein's way).
TEST(FftWork, SmoothSizesAreFiveNLogN) {
  EXPECT_DOUBLE_EQ(fft_work_flops({4096}, 1, false), 5.0 * 4096 * 12);
  EXPECT_DOUBLE_EQ(fft_work_flops({64, 64, 64}, 1, false), 5.0 * 262144 * 18);
  EXPECT_DOUBLE_EQ(fft_work_flops({1000, 3}, 4, true), 5.0 * 3000 * std::log2(3000.0) * 4 / 2);
  EXPECT_DOUBLE_EQ(fft_work_flops({127 * 2}, 1, false), 5.0 * 254 * std::log2(254.0));
  EXPECT_DOUBLE_EQ(fft_work_flops({1, 1}, 1, false), 0);
}

TEST(FftWork, LargePrimeFactorsCostMore) {
  // 1000003 is prime: three transforms of 2^21 points.
  EXPECT_DOUBLE_EQ(fft_work_flops({1000003}, 1, false), 3 * 5.0 * 2097152 * 21);
  // 3 x 131: the smooth part over every point, then three transforms of 2^9 for each of 3.
  EXPECT_DOUBLE_EQ(fft_work_flops({393}, 1, false), 5.0 * 393 * std::log2(3.0) + 3 * 3 * 5.0 * 512 * 9);
}

// The 25 Gbit/s sweep's case: FFTW's times on the H200 host's 16 cores for a prime size and a power
// of two. Counted as 5 N log2 N, the prime size ran at 2.9 GF/s and made the power of two look
// 5x slower here than it is, so the model sent it remote.
TEST(FftWork, APrimeSizeDoesNotMakeItsFamilySlow) {
  Settings s = priors();
  LinkModel m(s);
  auto fft = [](int64_t n) { return CallCost{"fftw_c2c", fft_work_flops({n}, 1, false), 32.0 * double(n)}; };
  for (int i = 0; i < 3; ++i) m.local_ran("fftw_c2c", fft(4194304).flops, 0.0155);
  for (int i = 0; i < 3; ++i) m.local_ran("fftw_c2c", fft(1000003).flops, 0.034);
  EXPECT_LT(m.estimate(fft(4194304)).local_seconds, 2 * 0.0155);
  EXPECT_LT(m.estimate(fft(1000003)).local_seconds, 2 * 0.034);
}

// A GEMM of beta 0 does not read C: the model weighs two matrices out and one back, as the call
// sends them (it weighed C going out too until the thirty-third session).
TEST(Level3Cost, CountsTheOutputOnlyWhereRead) {
  wire::Level3Call gemm;
  gemm.m = gemm.n = gemm.k = 1000;
  gemm.beta = {0, 0};
  EXPECT_DOUBLE_EQ(level3_cost("dgemm", gemm).bytes, 3 * 8e6);
  EXPECT_DOUBLE_EQ(level3_cost("dgemm", gemm).flops, 2e9);
  gemm.beta = {1, 0};
  EXPECT_DOUBLE_EQ(level3_cost("dgemm", gemm).bytes, 4 * 8e6);
  wire::Level3Call trsm;
  trsm.routine = wire::Routine::trsm;
  trsm.side = 'L', trsm.uplo = 'U';
  trsm.m = trsm.n = 1000;
  EXPECT_DOUBLE_EQ(level3_cost("dtrsm", trsm).bytes, 3 * 8e6);  // A, and B both ways
  EXPECT_TRUE(output_read(trsm));
}

}  // namespace
}  // namespace outboard::client
