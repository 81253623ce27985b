#include "backends/opencl/event_waiter.hpp"

#include <sys/prctl.h>

#include <algorithm>
#include <chrono>

#include "common/clock.hpp"
#include "common/spin.hpp"

namespace outboard::backends {
namespace {

// Polling: without pause for an event's first 2 ms (kCommandPollNs), then every 1% of its age,
// 20 us to 1 ms.
constexpr uint64_t kMinIntervalNs = 20'000;
constexpr uint64_t kMaxIntervalNs = 1'000'000;

uint64_t poll_interval(uint64_t age_ns) {
  if (age_ns < kCommandPollNs) return 0;
  return std::clamp(age_ns / 100, kMinIntervalNs, kMaxIntervalNs);
}

// The event's execution status; a query that fails counts as the command's failure.
cl_int status_of(cl_event e) {
  cl_int status = CL_QUEUED;
  const cl_int rc = clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr);
  return rc == CL_SUCCESS ? status : rc;
}
bool ended(cl_int status) { return status == CL_COMPLETE || status < 0; }

}  // namespace

EventWaiter::Mode EventWaiter::automatic() { return spare_core_poll_ns() > 0 ? Mode::polling : Mode::blocking; }

EventWaiter::EventWaiter(Mode mode, std::function<bool()> busy)
    : mode_(mode), busy_(busy ? std::move(busy) : [] { return false; }) {
  if (mode_ == Mode::polling) polling_thread_ = std::thread([this] { polling_loop(polled_); });
  blocking_thread_ = std::thread([this] { blocking_loop(blocked_); });
}

EventWaiter::~EventWaiter() {
  polled_.stop();
  blocked_.stop();
  if (polling_thread_.joinable()) polling_thread_.join();
  blocking_thread_.join();
}

void EventWaiter::watch(cl_event e, std::function<void(cl_int)> done, bool host_copy) {
  clRetainEvent(e);
  (reports_alone(host_copy) ? polled_ : blocked_).push({e, std::move(done)});
}

void EventWaiter::Queue::push(Item item) {
  {
    std::lock_guard lk(mu);
    items.push_back(std::move(item));
    queued.fetch_add(1, std::memory_order_release);
  }
  cv.notify_one();
}

void EventWaiter::Queue::stop() {
  {
    std::lock_guard lk(mu);
    stopping = true;
  }
  cv.notify_one();
}

bool EventWaiter::poll_for_work(Queue& q) const {
  return poll_while_busy([&] { return q.queued.load(std::memory_order_acquire) > 0; }, busy_, spare_core_poll_ns(),
                         kCommandPollNs);
}

void EventWaiter::blocking_loop(Queue& q) {
  for (;;) {
    Item item;
    poll_for_work(q);
    {
      std::unique_lock lk(q.mu);
      q.cv.wait(lk, [&] { return q.stopping || !q.items.empty(); });
      if (q.items.empty()) return;  // stopping, nothing left
      item = std::move(q.items.front());
      q.items.pop_front();
      q.queued.fetch_sub(1, std::memory_order_relaxed);
    }
    clWaitForEvents(1, &item.event);  // a failed command ends the wait too: its status says which
    const cl_int status = status_of(item.event);
    if (ended(status)) item.done(status);
    clReleaseEvent(item.event);
  }
}

bool EventWaiter::Queue::take(std::deque<Item>& into, uint64_t wake_at_ns, const std::function<bool()>& poll) {
  if (into.empty())  // the next command a client waits for usually follows within microseconds
    poll();
  else if (wake_at_ns <= now_ns() && queued.load(std::memory_order_acquire) == 0)
    return true;  // an event is due and nothing new: no lock
  std::unique_lock lk(mu);
  const auto ready = [&] { return stopping || !items.empty(); };
  if (into.empty()) {
    cv.wait(lk, ready);
  } else if (wake_at_ns > now_ns()) {
    const auto deadline = std::chrono::steady_clock::time_point(std::chrono::nanoseconds(wake_at_ns));
    cv.wait_until(lk, deadline, ready);
  }
  const uint64_t now = now_ns();
  for (Item& item : items) {
    item.since_ns = item.next_ns = now;
    into.push_back(std::move(item));
  }
  queued.fetch_sub(items.size(), std::memory_order_relaxed);
  items.clear();
  return !into.empty() || !stopping;
}

void EventWaiter::polling_loop(Queue& q) {
  // Sleeps between polls of long commands are tens of microseconds: end them on time (Linux's
  // default slack lets a sleep run 50 us over).
  prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
  std::deque<Item> watched;
  uint64_t wake_at = UINT64_MAX;
  while (q.take(watched, wake_at, [&] { return poll_for_work(q); })) {
    const uint64_t now = now_ns();
    wake_at = UINT64_MAX;
    bool any_ended = false;
    for (auto it = watched.begin(); it != watched.end();) {
      if (it->next_ns <= now) {
        const cl_int status = status_of(it->event);
        if (ended(status)) {
          it->done(status);
          clReleaseEvent(it->event);
          it = watched.erase(it);
          any_ended = true;
          continue;
        }
        it->next_ns = now + poll_interval(now - it->since_ns);
      }
      wake_at = std::min(wake_at, it->next_ns);
      ++it;
    }
    if (!any_ended && wake_at <= now_ns()) pause_core(8);  // busy polling: ease off the status query a little
  }
}

}  // namespace outboard::backends
