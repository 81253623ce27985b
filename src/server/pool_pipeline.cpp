#include "server/pool_pipeline.hpp"

#include <condition_variable>
#include <mutex>
#include <string>

#include "common/clock.hpp"
#include "common/error.hpp"

namespace outboard::server {
namespace {

// What a compute thread and the progress thread share; outlives the pipeline if a job is late.
struct Shared {
  std::mutex mu;
  std::condition_variable idle;
  bool busy = false;       // a step is queued or running
  bool executing = false;  // a compute thread is in it (using the staging buffer)
  bool cancelled = false;
  std::vector<size_t> done;  // finished pieces not yet reported
  std::string error;
  uint64_t compute_ns = 0;
  int64_t info = 0;
};

class PoolPipeline final : public Pipeline {
 public:
  PoolPipeline(std::vector<PoolStep> steps, ComputePool& pool, std::function<void()> wake)
      : steps_(std::move(steps)), pool_(pool), wake_(std::move(wake)), shared_(std::make_shared<Shared>()) {}

  ~PoolPipeline() override {
    std::unique_lock lk(shared_->mu);
    shared_->cancelled = true;
    shared_->idle.wait(lk, [&] { return !shared_->executing; });  // the staging buffer is in use until then
  }

  void input(uint64_t prefix) override {
    prefix_ = prefix;
    submit_next();
  }

  std::vector<size_t> finished() override {
    std::vector<size_t> out;
    {
      std::lock_guard lk(shared_->mu);
      if (!shared_->error.empty()) throw Error(shared_->error);
      out.swap(shared_->done);
    }
    submit_next();  // a step may have ended without finishing a piece
    return out;
  }

  uint64_t compute_ns() const override {
    std::lock_guard lk(shared_->mu);
    return shared_->compute_ns;
  }

  int64_t info() const override {
    std::lock_guard lk(shared_->mu);
    return shared_->info;
  }

 private:
  // One step at a time: steps of one call would only compete for the same cores, and a Level-3
  // plan's blocks may read what the blocks before them wrote (pipeline.hpp).
  void submit_next() {
    if (next_ >= steps_.size() || steps_[next_].input_needed > prefix_) return;
    {
      std::lock_guard lk(shared_->mu);
      if (shared_->busy || !shared_->error.empty()) return;
      shared_->busy = true;
    }
    const PoolStep& step = steps_[next_++];
    pool_.submit([shared = shared_, run = step.run, finishes = step.finishes, wake = wake_] {
      std::string error;
      uint64_t ns = 0;
      int64_t info = 0;
      {
        std::lock_guard lk(shared->mu);
        if (shared->cancelled) return;  // the pipeline is gone: touch nothing of it
        shared->executing = true;
      }
      try {
        const uint64_t t0 = now_ns();
        info = run();
        ns = now_ns() - t0;
      } catch (const std::exception& e) {
        error = e.what();
        if (error.empty()) error = "call failed";
      }
      {
        std::lock_guard lk(shared->mu);
        shared->busy = shared->executing = false;
        shared->compute_ns += ns;
        shared->info = info;
        if (error.empty()) shared->done.insert(shared->done.end(), finishes.begin(), finishes.end());
        else shared->error = error;
        shared->idle.notify_all();
      }
      wake();
    });
  }

  std::vector<PoolStep> steps_;
  ComputePool& pool_;
  std::function<void()> wake_;
  std::shared_ptr<Shared> shared_;
  uint64_t prefix_ = 0;
  size_t next_ = 0;
};

}  // namespace

std::unique_ptr<Pipeline> make_pool_pipeline(std::vector<PoolStep> steps, ComputePool& pool,
                                             std::function<void()> wake) {
  return std::make_unique<PoolPipeline>(std::move(steps), pool, std::move(wake));
}

std::unique_ptr<Pipeline> make_pool_pipeline(Blas3Executor& executor, const Plan& plan, std::byte* staging,
                                             ComputePool& pool, std::function<void()> wake) {
  std::vector<PoolStep> steps;
  for (const Block& block : plan.blocks) {
    steps.push_back({block.input_needed,
                     [&executor, block, staging]() -> int64_t {
                       BlockOperands o = block_operands(block, staging);
                       executor.level3(block.call, std::span<const std::byte* const>(o.inputs, o.count), o.output,
                                       o.ld);
                       return 0;
                     },
                     {}});
    if (block.piece >= 0) steps.back().finishes.push_back(static_cast<size_t>(block.piece));
  }
  return make_pool_pipeline(std::move(steps), pool, std::move(wake));
}

}  // namespace outboard::server
