// Events: their status arrives as server notices (or is set here, for user events); waiting for
// them, their callbacks (run on the ICD's own callback thread, never on one holding a channel),
// and queries.
#include <cstdio>
#include <deque>
#include <thread>

#include "shims/opencl/api.hpp"
#include "shims/opencl/registry.hpp"

namespace outboard::opencl {
namespace {

struct Watched {
  std::weak_ptr<EventState> state;
  Channel* channel;
};
std::mutex watch_mu;
std::unordered_map<ClId, Watched>& watched() {
  static auto* w = new std::unordered_map<ClId, Watched>();
  return *w;
}

// The callback thread: program callbacks run here, in the order they became due.
struct Callbacks {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::function<void()>> queue;
  Callbacks() {
    std::thread([this] {
      for (;;) {
        std::function<void()> fn;
        {
          std::unique_lock lk(mu);
          cv.wait(lk, [&] { return !queue.empty(); });
          fn = std::move(queue.front());
          queue.pop_front();
        }
        fn();
      }
    }).detach();
  }
};

bool reads_done(const EventState& s) {
  if (!s.reads) return true;
  std::lock_guard lk(s.reads->mu);
  return s.reads->outstanding.empty() || *s.reads->outstanding.begin() >= s.reads_before;
}

void wait_reads_of(const EventState& s) {
  if (s.reads) wait_reads(*s.reads, s.reads_before);
}

}  // namespace

void wait_reads(QueueReads& reads, uint64_t before) {
  std::unique_lock lk(reads.mu);
  reads.cv.wait(lk, [&] { return reads.outstanding.empty() || *reads.outstanding.begin() >= before; });
}

void run_callback(std::function<void()> fn) {
  static auto* c = new Callbacks();  // never destroyed: its thread outlives static destructors
  std::lock_guard lk(c->mu);
  c->queue.push_back(std::move(fn));
  c->cv.notify_one();
}

void watch_event(Channel* channel, const std::shared_ptr<EventState>& s) {
  std::lock_guard lk(watch_mu);
  watched()[s->id] = {s, channel};
}

std::vector<std::shared_ptr<EventState>> pending_events_of(ClId queue) {
  std::vector<std::shared_ptr<EventState>> out;
  std::lock_guard lk(watch_mu);
  for (auto& [id, w] : watched())
    if (auto s = w.state.lock(); s && s->queue == queue) out.push_back(std::move(s));
  return out;
}

void wait_final(const std::vector<std::shared_ptr<EventState>>& events) {
  for (const auto& s : events) {
    std::unique_lock lk(s->mu);
    s->cv.wait(lk, [&] { return s->status <= CL_COMPLETE; });  // a lost server makes it final too
  }
}

void complete_event(const std::shared_ptr<EventState>& s, cl_int status, const std::array<uint64_t, 4>& profile) {
  decltype(s->callbacks) due;
  {
    std::lock_guard lk(s->mu);
    if (s->status <= CL_COMPLETE) return;  // already final
    s->status = status < 0 ? status : CL_COMPLETE;
    s->profile = profile;
    due.swap(s->callbacks);
  }
  s->cv.notify_all();
  {
    std::lock_guard lk(watch_mu);
    watched().erase(s->id);
  }
  if (due.empty()) return;
  const cl_int final_status = status < 0 ? status : CL_COMPLETE;
  run_callback([due = std::move(due), final_status, s] {
    // Reads before it must have landed before a callback may look at their data.
    wait_reads_of(*s);
    for (const auto& cb : due) {
      cb.fn(cb.event, final_status, cb.data);
      Api::clReleaseEvent(cb.event);
    }
  });
}

void handle_notice(const wire::ClNotice& n) {
  switch (static_cast<wire::ClNoticeKind>(n.kind)) {
    case wire::ClNoticeKind::event_status:
    case wire::ClNoticeKind::failed: {
      // The server ran out of something, or keeps new work off a platform whose native OpenCL
      // has hung (native_watch.hpp): the code alone would not tell the user which.
      if (n.kind == static_cast<uint8_t>(wire::ClNoticeKind::failed) && n.status == CL_OUT_OF_RESOURCES &&
          !n.message.empty())
        std::fprintf(stderr, "outboard: OpenCL: %s\n", n.message.c_str());
      if (n.object == 0) break;  // only to say why a call that the code alone answers failed
      std::shared_ptr<EventState> s;
      {
        std::lock_guard lk(watch_mu);
        if (auto it = watched().find(n.object); it != watched().end()) s = it->second.state.lock();
      }
      if (s) {
        complete_event(s, n.status, n.profile);
      } else if (n.kind == static_cast<uint8_t>(wire::ClNoticeKind::failed)) {
        note_failure(n.object, n.status);  // an object or a queue's command: shown at the next sync
      }
      break;
    }
    case wire::ClNoticeKind::context_error:
      report_context_error(n.object, n.message);
      break;
    default:
      break;
  }
}

void channel_failed(Channel* channel, const std::string& why) {
  std::vector<std::shared_ptr<EventState>> lost;
  {
    std::lock_guard lk(watch_mu);
    for (auto& [id, w] : watched())
      if (w.channel == channel)
        if (auto s = w.state.lock()) lost.push_back(s);
  }
  for (auto& s : lost) complete_event(s, client::opencl::kLost, {});
  // Once per channel: every command of the server's platforms fails from now on, and why is
  // nowhere else for the program's user to see.
  std::fprintf(stderr, "outboard: OpenCL: the connection to %s failed: %s\n", channel->address().c_str(), why.c_str());
}

cl_event new_event(cl_command_queue queue, cl_command_type type) {
  auto* e = new _cl_event;
  e->context = queue->context;
  e->queue = queue;
  queue->retain();
  e->command = type;
  e->profiled = (queue->properties & CL_QUEUE_PROFILING_ENABLE) != 0;
  e->state = std::make_shared<EventState>();
  e->state->id = new_id();
  e->state->queue = queue->id;
  e->state->reads = queue->reads;
  {
    std::lock_guard lk(queue->reads->mu);
    e->state->reads_before = queue->reads->next;
  }
  queue->context->retain();
  watch_event(&queue->channel(), e->state);
  registry_add(e);
  return e;
}

cl_int wait_ids(cl_context context, cl_uint n, const cl_event* list, std::vector<ClId>& ids) {
  if ((n == 0) != (list == nullptr)) return CL_INVALID_EVENT_WAIT_LIST;
  for (cl_uint i = 0; i < n; ++i) {
    if (!valid(list[i])) return CL_INVALID_EVENT_WAIT_LIST;
    if (list[i]->context != context) return CL_INVALID_CONTEXT;
    ids.push_back(list[i]->state->id);
  }
  return CL_SUCCESS;
}

namespace {

// The channel whose notice completes `s`; null once it is complete.
Channel* channel_of(const EventState& s) {
  std::lock_guard lk(watch_mu);
  auto it = watched().find(s.id);
  return it == watched().end() ? nullptr : it->second.channel;
}

// Waits until `s` is complete or failed. With OUTBOARD_TIMEOUT set, each time it passes the
// server must still answer a round trip: a long kernel is no failure, a hung server is (its
// channel fails, and with it every event pending on it).
void wait_final(const std::shared_ptr<EventState>& s) {
  Channel* channel = channel_of(*s);
  const double timeout = channel ? channel->timeout() : 0;
  std::unique_lock lk(s->mu);
  auto final = [&] { return s->status <= CL_COMPLETE; };
  if (timeout <= 0) return s->cv.wait(lk, final);
  while (!s->cv.wait_for(lk, std::chrono::duration<double>(timeout), final)) {
    lk.unlock();
    const bool answers = channel->answers();
    if (!answers) complete_event(s, client::opencl::kLost, {});  // done already, unless unwatched
    lk.lock();
  }
}

}  // namespace

cl_int wait_for(const std::vector<std::shared_ptr<EventState>>& events) {
  cl_int rc = CL_SUCCESS;
  for (const auto& s : events) {
    wait_final(s);
    {
      std::lock_guard lk(s->mu);
      if (s->status < 0) rc = CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
    }
    wait_reads_of(*s);
  }
  return rc;
}

// ---- the API ----

cl_int CL_API_CALL Api::clWaitForEvents(cl_uint num_events, const cl_event* event_list) {
  if (num_events == 0 || !event_list) return CL_INVALID_VALUE;
  std::vector<std::shared_ptr<EventState>> states;
  for (cl_uint i = 0; i < num_events; ++i) {
    if (!valid(event_list[i])) return CL_INVALID_EVENT;
    if (event_list[i]->context != event_list[0]->context) return CL_INVALID_CONTEXT;
    states.push_back(event_list[i]->state);
  }
  return wait_for(states);
}

cl_int CL_API_CALL Api::clGetEventInfo(cl_event event, cl_event_info param_name, size_t param_value_size,
                                       void* param_value, size_t* param_value_size_ret) {
  if (!valid(event)) return CL_INVALID_EVENT;
  auto n = param_value_size;
  auto p = param_value;
  auto r = param_value_size_ret;
  switch (param_name) {
    case CL_EVENT_COMMAND_QUEUE: return answer_value(event->queue, n, p, r);
    case CL_EVENT_CONTEXT: return answer_value(event->context, n, p, r);
    case CL_EVENT_COMMAND_TYPE: return answer_value(event->command, n, p, r);
    case CL_EVENT_REFERENCE_COUNT: return answer_value(event->refs.load(), n, p, r);
    case CL_EVENT_COMMAND_EXECUTION_STATUS: {
      std::lock_guard lk(event->state->mu);
      cl_int st = event->state->status;
      if (st == CL_COMPLETE && !reads_done(*event->state)) st = CL_RUNNING;
      return answer_value(st, n, p, r);
    }
    default: return CL_INVALID_VALUE;
  }
}

cl_int CL_API_CALL Api::clRetainEvent(cl_event event) {
  if (!valid(event)) return CL_INVALID_EVENT;
  event->retain();
  return CL_SUCCESS;
}

cl_int CL_API_CALL Api::clReleaseEvent(cl_event event) {
  if (!valid(event)) return CL_INVALID_EVENT;
  if (!event->release()) return CL_SUCCESS;
  registry_remove(event);
  Channel& ch = event->context->channel();
  ch.post(wire::ClRelease{event->state->id});
  if (event->queue) release_queue(event->queue);
  release_context(event->context);
  delete event;
  return CL_SUCCESS;
}

cl_event CL_API_CALL Api::clCreateUserEvent(cl_context context, cl_int* errcode_ret) {
  if (!valid(context)) return fail_with<cl_event>(CL_INVALID_CONTEXT, errcode_ret);
  auto* e = new _cl_event;
  e->context = context;
  context->retain();
  e->state = std::make_shared<EventState>();
  e->state->id = new_id();
  e->state->status = CL_SUBMITTED;
  if (!context->channel().post(wire::ClCreateUserEvent{e->state->id, context->id})) {
    release_context(context);
    delete e;
    return fail_with<cl_event>(CL_OUT_OF_RESOURCES, errcode_ret);
  }
  watch_event(&context->channel(), e->state);
  registry_add(e);
  return fail_with<cl_event>(CL_SUCCESS, errcode_ret, e);
}

cl_int CL_API_CALL Api::clSetUserEventStatus(cl_event event, cl_int execution_status) {
  if (!valid(event) || event->command != CL_COMMAND_USER) return CL_INVALID_EVENT;
  if (execution_status > CL_COMPLETE) return CL_INVALID_VALUE;
  {
    std::lock_guard lk(event->state->mu);
    if (event->state->status <= CL_COMPLETE) return CL_INVALID_OPERATION;
  }
  if (!event->context->channel().post(wire::ClSetUserEventStatus{event->state->id, execution_status}))
    return CL_OUT_OF_RESOURCES;
  complete_event(event->state, execution_status, {});
  return CL_SUCCESS;
}

cl_int CL_API_CALL Api::clSetEventCallback(cl_event event, cl_int command_exec_callback_type,
                                           void(CL_CALLBACK* pfn_notify)(cl_event, cl_int, void*), void* user_data) {
  if (!valid(event)) return CL_INVALID_EVENT;
  if (!pfn_notify || (command_exec_callback_type != CL_COMPLETE && command_exec_callback_type != CL_SUBMITTED &&
                      command_exec_callback_type != CL_RUNNING))
    return CL_INVALID_VALUE;
  std::unique_lock lk(event->state->mu);
  if (event->state->status > CL_COMPLETE) {
    event->retain();  // released once the callback has run
    event->state->callbacks.push_back({pfn_notify, user_data, event});
    return CL_SUCCESS;
  }
  const cl_int status = event->state->status;
  lk.unlock();
  event->retain();
  run_callback([event, pfn_notify, user_data, status] {
    pfn_notify(event, status, user_data);
    Api::clReleaseEvent(event);
  });
  return CL_SUCCESS;
}

cl_int CL_API_CALL Api::clGetEventProfilingInfo(cl_event event, cl_profiling_info param_name, size_t param_value_size,
                                                void* param_value, size_t* param_value_size_ret) {
  if (!valid(event)) return CL_INVALID_EVENT;
  if (!event->profiled || event->command == CL_COMMAND_USER) return CL_PROFILING_INFO_NOT_AVAILABLE;
  std::lock_guard lk(event->state->mu);
  if (event->state->status != CL_COMPLETE) return CL_PROFILING_INFO_NOT_AVAILABLE;
  int i;
  switch (param_name) {
    case CL_PROFILING_COMMAND_QUEUED: i = 0; break;
    case CL_PROFILING_COMMAND_SUBMIT: i = 1; break;
    case CL_PROFILING_COMMAND_START: i = 2; break;
    case CL_PROFILING_COMMAND_END:
    case CL_PROFILING_COMMAND_COMPLETE: i = 3; break;
    default: return CL_INVALID_VALUE;
  }
  cl_ulong t = event->state->profile[i];
  return answer_value(t, param_value_size, param_value, param_value_size_ret);
}

}  // namespace outboard::opencl
