// Bounds the bytes of a session's writes that the native platform holds at once (each write's
// host copy is kept until the device has taken it): a session whose data arrives faster than
// the device takes it (over the lanes: 10-18 GB/s against NVIDIA's 6-9 GB/s from pageable
// memory) waits before its next large write instead of queueing them all. That bounds the
// server's memory per session; it also keeps the platform's queue of pageable writes about as
// deep as one connection's pace kept it, the depth at which NVIDIA's OpenCL never hung
// (bench/results/h200/link/cl-lanes).
//
// A write may wait on a user event that only a later command of the same session sets: the
// session's thread must never wait for it for good. After kPatience without room the gate stops
// waiting until what is in flight has drained to nothing.
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>

namespace outboard::backends {

class WriteGate : public std::enable_shared_from_this<WriteGate> {
 public:
  static constexpr std::chrono::milliseconds kPatience{2000};
  // `limit`: bytes in flight at most (0: no bound); `waits` counts the admissions that waited
  // (it outlives the gate). Made with std::make_shared (tokens hold it).
  WriteGate(uint64_t limit, std::atomic<uint64_t>& waits) : limit_(limit), waits_(waits) {}

  // Waits until `bytes` more fit, nothing is in flight, or the patience ran out; returns the
  // token that holds them until it is destroyed (when the write has completed).
  std::shared_ptr<void> admit(uint64_t bytes);

  uint64_t in_flight() const;

 private:
  void release(uint64_t bytes);

  const uint64_t limit_;
  mutable std::mutex mu_;
  std::condition_variable room_;
  uint64_t in_flight_ = 0;  // under mu_
  bool impatient_ = false;  // under mu_: the patience ran out; no waiting until in_flight_ is 0
  std::atomic<uint64_t>& waits_;
};

}  // namespace outboard::backends
