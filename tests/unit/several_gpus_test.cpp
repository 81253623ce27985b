// Where the blas3, lapack and fft services run calls when the server has several GPUs
// (services/blas3.cpp, services/lapack.cpp, services/fft.cpp, server/device_load.hpp): a call
// that runs whole goes to the GPU with the fewest of the service's calls running, the first on a
// tie, and a GPU's count drops when its call is done; an FFT plan is made ahead on every GPU; a
// GPU out of service after a fault gets no call, and a call whose GPU faulted under it runs again
// on another. The GPUs are stand-ins
// (backends that say they have device memory and count the calls they start, gated so that calls
// overlap); the services, core and compute pool are the server's own. The real GPUs run the same
// paths in bench/gpu/multi_gpu.sh.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "quiet_core.hpp"
#include "server/services/blas3.hpp"
#include "server/services/blas3_executor.hpp"
#include "server/services/fft.hpp"
#include "server/services/fft_executor.hpp"
#include "server/services/lapack.hpp"
#include "server/services/lapack_executor.hpp"
#include "server/services/service.hpp"

namespace outboard::server {
namespace {

class StandInGpu final : public Backend, public Blas3Executor, public FftExecutor, public LapackExecutor {
 public:
  explicit StandInGpu(std::string name) : name_(std::move(name)) {
    provide<Blas3Executor>(this);
    provide<FftExecutor>(this);
    provide<LapackExecutor>(this);
  }
  Health health() const override { return {serving, 0, 0}; }
  std::atomic<bool> serving{true};
  // The next call here faults as a poisoned GPU does: the GPU goes out of service and the call
  // throws a rerunnable DeviceFault.
  std::atomic<bool> fault_next{false};
  std::string name() const override { return name_; }
  nlohmann::json describe() const override { return {{"name", name_}}; }
  bool has_device_memory() const override { return true; }

  DeviceTiming level3(const wire::Level3Call&, std::span<const std::byte* const>, std::byte*, const LeadingDims&) override {
    fault_if_asked();
    run();
    return {};
  }
  int64_t lapack(const wire::LapackCall&, std::span<const std::byte* const>, std::span<std::byte* const>,
                 DeviceTiming&) override {
    fault_if_asked();
    run();
    return 0;
  }
  std::string where() const override { return name_; }
  bool serves(const wire::FftShape&) const override { return true; }
  void prepare(const wire::FftShape&) override { ++prepared; }
  FftTiming execute(const wire::FftShape&, const std::byte*, std::byte*) override {
    fault_if_asked();
    run();
    return {};
  }
  // Lets every call (running or to come) finish.
  void open() {
    std::lock_guard lk(mu_);
    open_ = true;
    cv_.notify_all();
  }
  // Waits (at most 10 s) until `n` calls have started here.
  bool started_at_least(int n) {
    std::unique_lock lk(mu_);
    return cv_.wait_for(lk, std::chrono::seconds(10), [&] { return started >= n; });
  }
  std::atomic<int> prepared{0};
  int count() {
    std::lock_guard lk(mu_);
    return started;
  }

 private:
  void fault_if_asked() {
    if (!fault_next.exchange(false)) return;
    serving = false;
    ++faulted;
    throw DeviceFault(name_ + " faulted", true);
  }

 public:
  std::atomic<int> faulted{0};

 private:
  int started = 0;
  void run() {  // counts the call, then waits for the gate
    std::unique_lock lk(mu_);
    ++started;
    cv_.notify_all();
    cv_.wait(lk, [&] { return open_; });
  }
  std::string name_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
};

wire::Blas3Call gemm(uint64_t id) {
  wire::Blas3Call c;
  c.call_id = id;
  c.call.routine = wire::Routine::gemm;
  c.call.scalar = wire::Scalar::d;
  c.call.m = c.call.n = c.call.k = 1024;  // 2.1 GFLOP: above gpu_min_flops, so a GPU's call
  c.call.alpha = {1, 0};
  c.call.beta = {1, 0};
  c.call.output_sent = true;
  wire::validate(c.call);
  c.payload_bytes = wire::request_bytes(c.call);
  return c;
}

struct TwoGpus {
  TwoGpus() {
    std::vector<std::unique_ptr<Backend>> backends;
    backends.push_back(std::make_unique<StandInGpu>("gpu0"));
    backends.push_back(std::make_unique<StandInGpu>("gpu1"));
    gpu0 = static_cast<StandInGpu*>(backends[0].get());
    gpu1 = static_cast<StandInGpu*>(backends[1].get());
    core = std::make_unique<QuietCore>(std::move(backends), 4);
    service = make_blas3_service(*core);
    fft = make_fft_service(*core);
    lapack = make_lapack_service(*core);
  }
  void call(uint64_t id) {
    const wire::Blas3Call c = gemm(id);
    service->on_message(session, wire::Message(c), transport::Buffer::allocate(c.payload_bytes));
  }
  // A plan (id 7) for a batch of 64 FFTs of 4096 points; returns its shape.
  wire::FftShape plan_fft() {
    wire::FftShape shape;
    shape.n = {4096};
    shape.batch = 64;
    wire::validate(shape);
    fft->on_message(session, wire::Message(wire::FftPlan{7, shape}), {});
    return shape;
  }
  void execute_fft(uint64_t id, const wire::FftShape& shape) {
    const uint64_t bytes = wire::input_bytes(shape), total = bytes + wire::output_bytes(shape);
    fft->on_message(session, wire::Message(wire::FftExecute{id, 7, shape, bytes, {}}), transport::Buffer::allocate(total));
  }
  // The calls started on g, a moment after the last was sent (one sent there would have started).
  int started(StandInGpu* g) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    return g->count();
  }
  ~TwoGpus() {
    gpu0->open();
    gpu1->open();
  }
  StandInGpu *gpu0, *gpu1;
  std::unique_ptr<QuietCore> core;
  std::unique_ptr<Service> service, fft, lapack;
  Session session;
};

TEST(SeveralGpus, Blas3CallsAtOnceGoToTheLeastBusyGpu) {
  TwoGpus t;
  t.call(1);
  ASSERT_TRUE(t.gpu0->started_at_least(1));  // both idle: the first GPU
  t.call(2);
  ASSERT_TRUE(t.gpu1->started_at_least(1));  // the first is busy: the second
  t.call(3);
  ASSERT_TRUE(t.gpu0->started_at_least(2));  // one each: the first again
  EXPECT_EQ(t.started(t.gpu1), 1);
  t.gpu0->open();
  t.gpu1->open();
  const auto done = t.core->completions(3);
  ASSERT_EQ(done.size(), 3u);
  for (const auto& c : done) EXPECT_TRUE(c.ok) << c.error;
}

TEST(SeveralGpus, AGpuIsFreeAgainOnceItsCallIsDone) {
  TwoGpus t;
  t.gpu0->open();  // the first GPU's calls finish at once, the second's wait
  t.call(1);
  ASSERT_EQ(t.core->completions(1).size(), 1u);
  t.call(2);  // the first GPU is idle again: its call
  ASSERT_EQ(t.core->completions(2).size(), 2u);
  EXPECT_EQ(t.gpu0->count(), 2);
  EXPECT_EQ(t.started(t.gpu1), 0);
}

TEST(SeveralGpus, FftPlansAreMadeOnEveryGpuAndExecutionsGoToTheLeastBusy) {
  TwoGpus t;
  const wire::FftShape shape = t.plan_fft();
  for (int i = 0; i < 1000 && (t.gpu0->prepared < 1 || t.gpu1->prepared < 1); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(t.gpu0->prepared, 1);  // made ahead on both
  EXPECT_EQ(t.gpu1->prepared, 1);
  t.execute_fft(1, shape);
  ASSERT_TRUE(t.gpu0->started_at_least(1));
  t.execute_fft(2, shape);
  ASSERT_TRUE(t.gpu1->started_at_least(1));  // the first is busy: the second
  t.gpu0->open();
  t.gpu1->open();
  const auto done = t.core->completions(2);
  ASSERT_EQ(done.size(), 2u);
  for (const auto& c : done) EXPECT_TRUE(c.ok) << c.error;
  EXPECT_TRUE(t.core->rejected.empty()) << t.core->rejected;
}

TEST(SeveralGpus, AGpuOutOfServiceGetsNoCall) {
  TwoGpus t;
  t.gpu0->serving = false;
  t.gpu1->open();
  t.call(1);
  t.call(2);
  const auto done = t.core->completions(2);
  ASSERT_EQ(done.size(), 2u);
  for (const auto& c : done) EXPECT_TRUE(c.ok) << c.error;
  EXPECT_EQ(t.gpu0->count(), 0);
  EXPECT_EQ(t.gpu1->count(), 2);
}

TEST(SeveralGpus, ABlas3CallWhoseGpuFaultsRunsAgainOnAnother) {
  TwoGpus t;
  t.gpu0->fault_next = true;
  t.gpu1->open();
  t.call(1);  // both idle: the first GPU, which faults; then the second
  const auto done = t.core->completions(1);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_TRUE(done[0].ok) << done[0].error;
  EXPECT_EQ(t.gpu0->faulted, 1);
  EXPECT_EQ(t.gpu1->count(), 1);
  t.call(2);  // the faulted GPU is out of service: the second again
  ASSERT_EQ(t.core->completions(2).size(), 2u);
  EXPECT_EQ(t.gpu0->count(), 0);
  EXPECT_EQ(t.gpu1->count(), 2);
}

TEST(SeveralGpus, LapackCallsSpreadOverTheGpusAndRunAgainAfterAFault) {
  TwoGpus t;
  auto call = [&](uint64_t id) {
    wire::LapackRequest q;
    q.call_id = id;
    q.call.routine = wire::LapackRoutine::gesv;
    q.call.scalar = wire::Scalar::d;
    q.call.n = 2048;  // 5.7 GFLOP: above gpu_min_flops
    q.call.nrhs = 1;
    wire::validate(q.call);
    q.payload_bytes = wire::request_bytes(q.call);
    // What on_payload gives a whole call: room for its inputs, then its outputs.
    t.lapack->on_message(t.session, wire::Message(q),
                         transport::Buffer::allocate(q.payload_bytes + wire::reply_bytes(q.call)));
  };
  call(1);
  ASSERT_TRUE(t.gpu0->started_at_least(1));
  call(2);
  ASSERT_TRUE(t.gpu1->started_at_least(1));  // the first is busy: the second
  t.gpu0->open();
  t.gpu1->open();
  ASSERT_EQ(t.core->completions(2).size(), 2u);
  t.gpu1->fault_next = true;
  t.gpu0->serving = false;  // only the second serves, and it faults: no GPU is left
  call(3);
  const auto done = t.core->completions(3);
  ASSERT_EQ(done.size(), 3u);
  EXPECT_EQ(t.gpu1->faulted, 1);
  EXPECT_FALSE(done[2].ok);  // nowhere to run it again (no host backend here): an error the client handles
}

TEST(SeveralGpus, AnFftExecutionWhoseGpuFaultsRunsAgainOnAnother) {
  TwoGpus t;
  const wire::FftShape shape = t.plan_fft();
  t.gpu0->fault_next = true;
  t.gpu1->open();
  t.execute_fft(1, shape);
  const auto done = t.core->completions(1);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_TRUE(done[0].ok) << done[0].error;
  EXPECT_EQ(t.gpu0->faulted, 1);
  EXPECT_EQ(t.gpu1->count(), 1);
}

}  // namespace
}  // namespace outboard::server
