// Threads that execute calls, so a long call never stalls the progress thread or other clients.
#pragma once
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace outboard::server {

class ComputePool {
 public:
  explicit ComputePool(unsigned threads);
  ~ComputePool();  // finishes the jobs already running, drops the queued ones
  void submit(std::function<void()> job);
  size_t queued() const;
  size_t busy() const;  // jobs queued or running

 private:
  void run();
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  size_t running_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace outboard::server
