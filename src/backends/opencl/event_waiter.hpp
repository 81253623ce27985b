// Completion of the commands a client is waiting for, reported as soon as the implementation
// knows. Completion callbacks alone came late on NVIDIA's OpenCL: a clFinish (a barrier's
// callback) after a 0.14 ms kernel answered 1 to 20 ms later, 16 ms on average (cl_bench's stream
// kernels on the H200 host). Two ways, chosen by the cores there are:
// - polling (spare cores): a thread polls the status of every watched event, without pause for
//   the first 2 ms of each, then at intervals of 1% of its age (at least 20 us, at most 1 ms), so
//   a long command costs little of a core and is reported at most ~1% late. No native callback is
//   registered: on NVIDIA's OpenCL a callback on an event delays its completion, to any waiter
//   (an empty kernel's barrier: 15 us without, 24-30 us with; bench/probes/cl_wait_probe.c).
//   Events are polled side by side, so one that waits for a user event holds up no other.
//   Transfers between the device and the client's data on the message path (`host_copy`) are
//   the exception: polled, a 4-byte read answered 77 us after its request where a blocking wait
//   took 43-48 (cl_bench on the H200 host, side by side; bench/results/h200/opencl): they take
//   the blocking way. Reads into page-locked memory are not host copies (pinned_reads.hpp), nor
//   are the direct path's pieces, through staging memory: both are polled.
// - blocking (few cores, where polling takes the core the implementation's worker needs): a
//   thread blocks in clWaitForEvents on each in turn, and the caller registers the native
//   callback as well, which reports whatever that wait is not yet at (reports_alone() is false).
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

#include "backends/opencl/native.hpp"

namespace outboard::backends {

class EventWaiter {
 public:
  enum class Mode { polling, blocking };
  // Polling where there are spare cores (common/spin.hpp), else blocking.
  static Mode automatic();
  // `busy`: whether the session has commands under way, after which more are likely to follow:
  // the threads poll for work until 100 us after it was last true (spin.hpp), then sleep.
  explicit EventWaiter(Mode mode = automatic(), std::function<bool()> busy = {});
  ~EventWaiter();  // waits for the events still watched (the session has drained its queues)
  EventWaiter(const EventWaiter&) = delete;
  EventWaiter& operator=(const EventWaiter&) = delete;

  // Whether the waiter alone reports such an event soon: no native callback is needed (nor
  // wanted: on NVIDIA's OpenCL one delays the event).
  bool reports_alone(bool host_copy) const { return mode_ == Mode::polling && !host_copy; }

  // Calls done(execution status) on a waiter's thread once `e` has completed or failed; `e` is
  // retained until then. `host_copy`: the command copies into or out of host memory.
  void watch(cl_event e, std::function<void(cl_int)> done, bool host_copy = false);

 private:
  struct Item {
    cl_event event;
    std::function<void(cl_int)> done;
    uint64_t since_ns = 0;  // polling: when it was watched, and when to look next
    uint64_t next_ns = 0;
  };
  // Events handed to one thread.
  struct Queue {
    std::mutex mu;
    std::condition_variable cv;
    std::deque<Item> items;
    std::atomic<size_t> queued{0};  // items.size(), for polling without the lock
    bool stopping = false;
    void push(Item item);
    void stop();
    // Moves newly watched items to `into` (polling: returns at once if one of `into` is due at
    // wake_at_ns), or, with none watched, polls (`poll`) and then waits for them; false:
    // stopping, none left.
    bool take(std::deque<Item>& into, uint64_t wake_at_ns, const std::function<bool()>& poll);
  };
  // Polls `q` for work while the session is busy (or briefly); whether some came.
  bool poll_for_work(Queue& q) const;
  void blocking_loop(Queue& q);
  void polling_loop(Queue& q);

  const Mode mode_;
  const std::function<bool()> busy_;
  Queue polled_, blocked_;
  std::thread polling_thread_, blocking_thread_;  // last: they start once the rest is ready
};

}  // namespace outboard::backends
