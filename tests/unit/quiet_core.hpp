// A server core that sends nothing (server/core.hpp), for tests of the core's call machinery and
// of services: replies are counted and kept, rejections remembered; backends and the number of
// compute threads are the test's.
#pragma once
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <vector>

#include "server/chunked.hpp"
#include "server/core.hpp"
#include "server/direct.hpp"

namespace outboard::server {

class QuietCore final : public Core {
 public:
  explicit QuietCore(std::vector<std::unique_ptr<Backend>> backends = {}, size_t threads = 1)
      : backends_(std::move(backends)), pool_{threads} {}
  const Config& config() const override { return config_; }
  const std::vector<std::unique_ptr<Backend>>& backends() const override { return backends_; }
  Session* session(PeerId) override { return nullptr; }
  transport::Worker& worker() override { std::abort(); }  // nothing here sends
  void send(PeerId, const wire::Message&) override { ++sent; }
  PeerId bulk_peer(Session& s) override { return s.peer; }
  void reject(PeerId, const std::string& why) override { rejected = why; }
  void check_limits(const Session& s, uint64_t total) const override {
    if (s.held_bytes + total > config_.max_client_bytes) throw ProtocolError("over the limit");
  }
  void admit_call(Session& s) override { ++s.calls_in_flight; }
  ComputePool& pool() override { return pool_; }
  void complete(Completion c) override {
    std::lock_guard lk(mu_);
    completed_.push_back(std::move(c));
    cv_.notify_all();
  }
  void count_call(Session*, PeerId, uint64_t, const std::string&, bool, const std::string&) override {}
  ChunkedCalls& chunked() override { return chunked_; }
  DirectPath& direct() override { return direct_; }
  ResidentStore& resident(Session& s) override {
    if (!s.resident) s.resident = std::make_unique<ResidentStore>(config_.resident_bytes, resident_budget_);
    return *s.resident;
  }
  ResidentBudget resident_budget_{8ull << 30};

  // Waits (at most 10 s) until `n` calls have completed; returns them.
  std::vector<Completion> completions(size_t n) {
    std::unique_lock lk(mu_);
    cv_.wait_for(lk, std::chrono::seconds(10), [&] { return completed_.size() >= n; });
    return completed_;
  }

  int sent = 0;
  std::string rejected;

 private:
  Config config_;
  std::vector<std::unique_ptr<Backend>> backends_;
  ComputePool pool_;
  ChunkedCalls chunked_{*this};
  DirectPath direct_{*this, chunked_};
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Completion> completed_;
};

}  // namespace outboard::server
