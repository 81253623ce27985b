// A session's operations run (each by its family's file) and its end: every native object released.
#include <chrono>
#include <cstring>
#include <thread>
#include <spdlog/spdlog.h>

#include "backends/opencl/cl_session.hpp"
#include "backends/opencl/native_watch.hpp"
#include "backends/opencl/reply_pieces.hpp"
#include "common/clock.hpp"

namespace outboard::backends::opencl {

ClSession::ClSession(const NativePlatforms& n, std::shared_ptr<ClOutput> out, const server::ClLimits& limits,
                     std::shared_ptr<server::ClClientMemory> memory, SharedCounters& counters, NativeWatch& watch)
    : natives_(n),
      out_(std::move(out)),
      memory_(std::move(memory)),
      reply_pieces_(std::make_shared<ReplyPieces>(out_)),
      limits_(limits),
      counters_(counters),
      staging_(std::make_shared<StagingBudget>(limits.direct_staging_bytes, counters.staging)),
      write_gate_(std::make_shared<WriteGate>(limits.write_bytes_in_flight, counters.write_waits)),
      watch_(watch),
      watched_(watch.open(std::chrono::seconds(limits.stuck_seconds))),
      waiter_(limits.event_polling == "poll"   ? EventWaiter::Mode::polling
              : limits.event_polling == "wait" ? EventWaiter::Mode::blocking
                                               : EventWaiter::automatic(),
              [this] { return commands_pending(); }) {}

ClSession::~ClSession() {
  // Nothing may wait forever: user events never set fail their commands, then every queue drains.
  for (auto& [id, o] : objects_)
    if (o.kind == Kind::user_event && !o.user_status_set) clSetUserEventStatus(static_cast<cl_event>(o.handle), -1);
  for (auto& [id, o] : objects_)
    if (o.kind == Kind::queue) clFinish(static_cast<cl_command_queue>(o.handle));
  for (auto& [q, m] : movers_) {
    clFinish(m);
    clReleaseCommandQueue(m);
  }
  movers_.clear();
  pinned_.clear();
  forget_last_kernels();
  // Dependants first: what a kernel or a command holds keeps its native parents alive anyway.
  for (Kind k : {Kind::event, Kind::user_event, Kind::kernel, Kind::program, Kind::sampler, Kind::image, Kind::pipe,
                 Kind::mem, Kind::queue, Kind::context, Kind::device})
    for (auto& [id, o] : objects_)
      if (o.kind == k) release_native(o);
  objects_.clear();
  // Completion callbacks may still be on their way from the implementation's threads.
  for (int i = 0; i < 5000 && *outstanding_ > 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  if (*outstanding_ > 0) spdlog::warn("opencl.callbacks_missing count={}", outstanding_->load());
  if (stage_trace::enabled()) stage_trace::report();
}

void ClSession::run(const wire::ClRequest& r, transport::Buffer payload, uint64_t arrived_ns) {
  counters_.operations++;
  traced_ = {};
  const bool tracing = stage_trace::enabled();
  const uint64_t started = tracing ? now_ns() : 0;
  if (r.call_id && tracing) traced_ = {arrived_ns, started, 0, r.call_id}, traced_op_ = wire::op_name(r.op);
  ClId created = 0, event = 0;
  // A build may take minutes: not counted as stuck.
  NativeWatch::Running running(*watched_, wire::op_name(r.op), !std::holds_alternative<wire::ClBuildProgram>(r.op));
  try {
    std::visit([&](const auto& op) { handle(r, op, payload, created, event); }, r.op);
  } catch (const ClFail& f) {
    counters_.failures++;
    spdlog::debug("opencl.failed op={} error=\"{}\"", wire::op_name(r.op), f.why);
    auto notify_failed = [&](ClId object) {  // object 0: the call's answer follows, by code alone
      wire::ClNotice n;
      n.kind = static_cast<uint8_t>(wire::ClNoticeKind::failed);
      n.object = object;
      n.status = f.code;
      n.message = std::string(wire::op_name(r.op)) + ": " + f.why;
      out_->notice(std::move(n));
    };
    if (r.call_id) {
      if (f.tell) notify_failed(0);
      out_->reply(r.call_id, f.code, {});
    } else {  // nobody waits: the client learns it as the created object's or the event's failure
      notify_failed(created ? created : event);
    }
  }
  if (tracing) stage_trace::record_run(wire::op_name(r.op), arrived_ns, started);
}

void ClSession::reply_data(uint64_t call_id, const wire::ClBlob& value) {
  if (value.size() <= 1024) {
    out_->reply(call_id, CL_SUCCESS, value);
    return;
  }
  auto data = std::make_shared<transport::Buffer>(transport::Buffer::allocate(value.size()));
  std::memcpy(data->data(), value.data(), value.size());
  out_->reply(call_id, CL_SUCCESS, {}, data, value.size());
}

void ClSession::reply_payload(uint64_t call_id, const std::vector<std::byte>& bytes) {
  auto data = std::make_shared<transport::Buffer>(transport::Buffer::allocate(std::max<size_t>(bytes.size(), 1)));
  std::memcpy(data->data(), bytes.data(), bytes.size());
  out_->reply(call_id, CL_SUCCESS, {}, data, bytes.size());
}

}  // namespace outboard::backends::opencl

namespace outboard::backends {

std::unique_ptr<server::ClSessionObjects> make_cl_session(const NativePlatforms& natives,
                                                          std::shared_ptr<server::ClOutput> out,
                                                          const server::ClLimits& limits,
                                                          std::shared_ptr<server::ClClientMemory> memory,
                                                          SharedCounters& counters, opencl::NativeWatch& watch) {
  return std::make_unique<opencl::ClSession>(natives, std::move(out), limits, std::move(memory), counters, watch);
}

}  // namespace outboard::backends
