#include "backends/opencl/event_waiter.hpp"

#include "common/spin.hpp"

namespace outboard::backends {

EventWaiter::EventWaiter() : thread_([this] { loop(); }) {}

EventWaiter::~EventWaiter() {
  {
    std::lock_guard lk(mu_);
    stopping_ = true;
  }
  cv_.notify_one();
  thread_.join();
}

void EventWaiter::watch(cl_event e, std::function<void(cl_int)> done) {
  clRetainEvent(e);
  {
    std::lock_guard lk(mu_);
    items_.push_back({e, std::move(done)});
    queued_.fetch_add(1, std::memory_order_release);
  }
  cv_.notify_one();
}

void EventWaiter::loop() {
  for (;;) {
    Item item;
    poll_for([&] { return queued_.load(std::memory_order_acquire) > 0; }, spare_core_poll_ns());
    {
      std::unique_lock lk(mu_);
      cv_.wait(lk, [&] { return stopping_ || !items_.empty(); });
      if (items_.empty()) return;  // stopping, nothing left
      item = std::move(items_.front());
      items_.pop_front();
      queued_.fetch_sub(1, std::memory_order_relaxed);
    }
    clWaitForEvents(1, &item.event);  // a failed command ends the wait too: its status says which
    cl_int status = CL_QUEUED;
    if (clGetEventInfo(item.event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr) == CL_SUCCESS &&
        (status == CL_COMPLETE || status < 0))
      item.done(status);
    clReleaseEvent(item.event);
  }
}

}  // namespace outboard::backends
