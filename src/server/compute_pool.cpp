#include "server/compute_pool.hpp"

namespace outboard::server {

ComputePool::ComputePool(unsigned threads) {
  for (unsigned i = 0; i < threads; ++i) threads_.emplace_back([this] { run(); });
}

ComputePool::~ComputePool() {
  {
    std::lock_guard lk(mu_);
    stopping_ = true;
    jobs_.clear();
  }
  cv_.notify_all();
  for (auto& t : threads_) t.join();
}

void ComputePool::submit(std::function<void()> job) {
  {
    std::lock_guard lk(mu_);
    jobs_.push_back(std::move(job));
  }
  cv_.notify_one();
}

size_t ComputePool::queued() const {
  std::lock_guard lk(mu_);
  return jobs_.size();
}

size_t ComputePool::busy() const {
  std::lock_guard lk(mu_);
  return jobs_.size() + running_;
}

void ComputePool::run() {
  for (;;) {
    std::function<void()> job;
    {
      std::unique_lock lk(mu_);
      cv_.wait(lk, [this] { return stopping_ || !jobs_.empty(); });
      if (stopping_) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
      ++running_;
    }
    job();
    std::lock_guard lk(mu_);
    --running_;
  }
}

}  // namespace outboard::server
