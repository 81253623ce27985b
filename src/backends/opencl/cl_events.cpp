// Events: user events, and how a command's completion reaches the client (a native callback, the
// event waiter, or both: event_waiter.hpp).
#include <spdlog/spdlog.h>

#include "backends/opencl/cl_session.hpp"
#include "common/clock.hpp"

namespace outboard::backends::opencl {

namespace {

std::array<uint64_t, 4> profile_of(cl_event e) {
  std::array<uint64_t, 4> p{};
  const cl_profiling_info names[] = {CL_PROFILING_COMMAND_QUEUED, CL_PROFILING_COMMAND_SUBMIT,
                                     CL_PROFILING_COMMAND_START, CL_PROFILING_COMMAND_END};
  for (int i = 0; i < 4; ++i) {
    cl_ulong t = 0;
    if (clGetEventProfilingInfo(e, names[i], sizeof t, &t, nullptr) != CL_SUCCESS) return {};
    p[i] = t;
  }
  return p;
}

void CL_CALLBACK command_done(cl_event e, cl_int status, void* arg) {
  auto* c = static_cast<Callback*>(arg);
  if (c->stages.arrived_ns) stage_trace::record(c->op, c->stages);
  if (status < 0) {
    c->counters->failures++;
    spdlog::debug("opencl.command_failed call={} event={} read={} error={}", c->call_id, c->event, c->read,
                  cl_error_name(status));
  }
  if (c->call_id) {
    if (status < 0) {
      c->out->reply(c->call_id, status, {});
    } else if (c->read) {
      c->counters->bytes_read += c->bytes;
      c->out->reply(c->call_id, CL_SUCCESS, {}, c->data, c->bytes);
    } else {
      c->out->reply(c->call_id, CL_SUCCESS, {});
    }
  }
  if (c->event) {
    wire::ClNotice n;
    n.kind = static_cast<uint8_t>(wire::ClNoticeKind::event_status);
    n.object = c->event;
    n.status = status < 0 ? status : CL_COMPLETE;
    if (status >= 0) n.profile = profile_of(e);
    c->out->notice(std::move(n));
  }
  c->data.reset();  // a write's source may go now
  auto outstanding = std::move(c->outstanding);
  if (c->one_shot) delete c;
  if (outstanding) --*outstanding;
}

// A completion reported by whichever comes first: the native callback or the event waiter
// (event_waiter.hpp). Each path holds its own Shot; the Callback goes with the first to fire
// (where the waiter polls, it is the only path for what it watches).
struct Shot {
  Callback* callback;
  std::shared_ptr<std::atomic<bool>> fired;
};
void fire(cl_event e, cl_int status, const Shot& s) {
  if (!s.fired->exchange(true)) command_done(e, status, s.callback);
}
void CL_CALLBACK shot_done(cl_event e, cl_int status, void* arg) {
  std::unique_ptr<Shot> s(static_cast<Shot*>(arg));
  fire(e, status, *s);
}

}  // namespace

Callback* ClSession::callback(Callback c) {
  c.out = out_;
  c.counters = &counters_;
  c.outstanding = outstanding_;
  if (traced_.arrived_ns && c.call_id) {
    c.stages = traced_;
    c.stages.enqueued_ns = now_ns();
    c.op = traced_op_;
  }
  return new Callback(std::move(c));
}

void ClSession::register_done(cl_event e, Callback* c, bool watch) {
  ++*outstanding_;
  Shot shot{c, std::make_shared<std::atomic<bool>>(false)};
  const bool host_copy = (c->read || c->data) && !c->pinned;
  if (waiter_.reports_alone(host_copy)) {
    waiter_.watch(e, [e, shot](cl_int status) { fire(e, status, shot); });
    return;
  }
  auto native = std::make_unique<Shot>(shot);
  cl_int rc = clSetEventCallback(e, CL_COMPLETE, shot_done, native.get());
  if (rc != CL_SUCCESS) {
    spdlog::warn("opencl.callback_failed error={}", cl_error_name(rc));
    fire(e, rc, shot);
    return;
  }
  native.release();  // shot_done frees it
  if (watch) waiter_.watch(e, [e, shot](cl_int status) { fire(e, status, shot); }, host_copy);
}

void ClSession::track(cl_event e, const wire::ClCommand& cmd, Callback c) {
  if (cmd.event) {
    insert(cmd.event, Object{Kind::event, e});
    c.event = cmd.event;
  }
  const bool waited_for = c.call_id || c.event;
  if (c.call_id || c.event || c.data) register_done(e, callback(std::move(c)), waited_for);
  if (!cmd.event) clReleaseEvent(e);
}

void ClSession::answer_when_done(cl_event e, const wire::ClRequest& r, const wire::ClCommand& cmd) {
  Callback cb;
  cb.call_id = r.call_id;
  track(e, cmd, std::move(cb));
}

void ClSession::handle(const wire::ClRequest&, const wire::ClCreateUserEvent& c, transport::Buffer&, ClId& created,
                       ClId&) {
  created = c.id;
  check_new(c.id);
  cl_int rc = CL_SUCCESS;
  cl_event e = clCreateUserEvent(handle_of<cl_context>(c.context, Kind::context), &rc);
  check(rc, "clCreateUserEvent");
  insert(c.id, Object{Kind::user_event, e, 0, 0, c.context});
  Callback cb;
  cb.event = c.id;
  register_done(e, callback(std::move(cb)));
}

void ClSession::handle(const wire::ClRequest&, const wire::ClSetUserEventStatus& s, transport::Buffer&, ClId& created,
                       ClId&) {
  created = s.event;
  Object& o = find(s.event, {Kind::user_event});
  if (s.status > 0 || o.user_status_set) throw ClFail{CL_INVALID_OPERATION, "a user event's status is set once, to 0 or below"};
  check(clSetUserEventStatus(static_cast<cl_event>(o.handle), s.status), "clSetUserEventStatus");
  o.user_status_set = true;
}

}  // namespace outboard::backends::opencl
