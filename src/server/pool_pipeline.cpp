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
  bool busy = false;       // a block is queued or running
  bool executing = false;  // a compute thread is in it (using the staging buffer)
  bool cancelled = false;
  std::vector<size_t> done;  // finished blocks not yet reported
  std::string error;
  uint64_t compute_ns = 0;
};

class PoolPipeline final : public Pipeline {
 public:
  PoolPipeline(Backend& backend, Plan plan, std::byte* staging, ComputePool& pool, std::function<void()> wake)
      : backend_(backend), plan_(std::move(plan)), staging_(staging), pool_(pool), wake_(std::move(wake)),
        shared_(std::make_shared<Shared>()) {}

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
    if (!out.empty()) submit_next();
    return out;
  }

  uint64_t compute_ns() const override {
    std::lock_guard lk(shared_->mu);
    return shared_->compute_ns;
  }

 private:
  // One block at a time: blocks of one call would only compete for the same cores.
  void submit_next() {
    if (next_ >= plan_.blocks.size() || plan_.blocks[next_].input_needed > prefix_) return;
    {
      std::lock_guard lk(shared_->mu);
      if (shared_->busy || !shared_->error.empty()) return;
      shared_->busy = true;
    }
    const size_t index = next_++;
    const Block& block = plan_.blocks[index];
    pool_.submit([this, shared = shared_, index, block, wake = wake_] {
      std::string error;
      uint64_t ns = 0;
      {
        std::lock_guard lk(shared->mu);
        if (shared->cancelled) return;  // the pipeline is gone: touch nothing of it
        shared->executing = true;
      }
      try {
        BlockOperands o = block_operands(block, staging_);
        const uint64_t t0 = now_ns();
        backend_.level3(block.call, std::span<const std::byte* const>(o.inputs, o.count), o.output);
        ns = now_ns() - t0;
      } catch (const std::exception& e) {
        error = e.what();
      }
      {
        std::lock_guard lk(shared->mu);
        shared->busy = shared->executing = false;
        shared->compute_ns += ns;
        if (error.empty()) shared->done.push_back(index);
        else shared->error = error;
        shared->idle.notify_all();
      }
      wake();
    });
  }

  Backend& backend_;
  Plan plan_;
  std::byte* staging_;
  ComputePool& pool_;
  std::function<void()> wake_;
  std::shared_ptr<Shared> shared_;
  uint64_t prefix_ = 0;
  size_t next_ = 0;
};

}  // namespace

std::unique_ptr<Pipeline> make_pool_pipeline(Backend& backend, Plan plan, std::byte* staging, ComputePool& pool,
                                             std::function<void()> wake) {
  return std::make_unique<PoolPipeline>(backend, std::move(plan), staging, pool, std::move(wake));
}

}  // namespace outboard::server
