#include "server/services/blas3.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>

#include "common/clock.hpp"
#include "server/chunked.hpp"
#include "server/cost_model.hpp"
#include "server/device_load.hpp"
#include "server/direct.hpp"
#include "server/pipeline.hpp"
#include "server/pool_pipeline.hpp"
#include "server/services/blas3_executor.hpp"
#include "server/spread_pipeline.hpp"

namespace outboard::server {
namespace {

using transport::Buffer;

class Blas3Service final : public Service {
 public:
  explicit Blas3Service(Core& core) : core_(core), costs_(core.config().gpu_min_flops) {
    std::vector<const Backend*> gpus;
    for (const auto& b : core.backends()) {
      if (!b->executor<Blas3Executor>()) continue;
      Backend*& slot = b->has_device_memory() ? device_ : host_;
      if (!slot) slot = b.get();
      if (b->has_device_memory()) {
        devices_.push_back(b->executor<Blas3Executor>());
        gpus.push_back(b.get());
      }
    }
    load_ = std::make_unique<DeviceLoad>(std::move(gpus));
    if (!host_) host_ = device_;
    if (!host_) throw Error("no backend serves Level-3 BLAS");
  }

  const char* name() const override { return "blas3"; }
  std::vector<wire::Type> messages() const override {
    return {wire::Type::blas3_call, wire::Type::call_chunk, wire::Type::direct_blas3};
  }

  // How pipelined calls were split, by block order (pipeline.hpp).
  void status(nlohmann::json& doc) const override {
    nlohmann::json orders = nlohmann::json::object();
    for (size_t i = 0; i < orders_.size(); ++i)
      orders[order_name(static_cast<BlockOrder>(i))] = {
          {"calls", orders_[i].calls}, {"blocks", orders_[i].blocks}, {"pieces", orders_[i].pieces}};
    doc["blas3"] = {{"block_orders", orders}};
  }

  transport::Landing on_payload(Session& s, const wire::Message& m, uint64_t bytes) override {
    if (auto* chunk = std::get_if<wire::CallChunk>(&m))
      return core_.chunked().landing(s, *chunk, bytes, [&](ChunkedCall& cc) { set_up(s, cc, chunk->call); });
    const auto& call = std::get<wire::Blas3Call>(m);
    Core::check_payload(call.payload_bytes, bytes);
    return transport::Landing::receive(
        core_.receive_call(s, call.call_id, bytes + extra_output_bytes(call.call), *backend_for(call.call)));
  }

  void on_message(Session& s, const wire::Message& m, Buffer payload) override {
    if (auto* c = std::get_if<wire::CallChunk>(&m)) return core_.chunked().on_chunk(s, c->call_id, c->chunk_index);
    // On the direct path: the copy lanes fetch the matrices into the staging a chunked call of
    // the same shape would use, and write C's blocks back as the pipeline finishes them.
    if (auto* d = std::get_if<wire::DirectBlas3>(&m))
      return core_.direct().start(s, *d, wire::request_bytes(d->call), [&](ChunkedCall& cc) { set_up(s, cc, d->call); });
    on_call(s, std::get<wire::Blas3Call>(m), std::move(payload));
  }

 private:
  // Where the output goes when its values were not sent: after the inputs.
  static uint64_t extra_output_bytes(const wire::Level3Call& c) { return c.output_sent ? 0 : wire::reply_bytes(c); }

  // The cost model, for now: large calls on the GPU, small ones where no copies are needed; all
  // on the host while every GPU is out of service.
  Backend* backend_for(const wire::Level3Call& c) const {
    if (!device_ || !load_->any_in_service()) return host_;
    const double bytes = static_cast<double>(wire::request_bytes(c) + wire::reply_bytes(c));
    return costs_.prefer_device(wire::flops(c), bytes) ? device_ : host_;
  }

  // A whole call, on the compute pool.
  void on_call(Session& s, const wire::Blas3Call& req, Buffer payload) {
    const uint64_t received = now_ns();
    const Session::Arrival a = core_.take_arrival(s, req.call_id, received);
    const uint64_t arrived = a.ns;
    const wire::Level3Call& c = req.call;
    Backend* backend = a.backend ? a.backend : backend_for(c);  // no payload arrived (empty inputs)
    const uint64_t in_bytes = req.payload_bytes;
    const uint64_t total = in_bytes + extra_output_bytes(c);
    if (!core_.whole_payload(s, payload, in_bytes, total, backend ? backend->staging() : nullptr)) return;
    if (!c.output_sent) std::memset(payload.data() + in_bytes, 0, total - in_bytes);
    s.bytes_in += in_bytes;
    auto buf = std::make_shared<Buffer>(std::move(payload));
    // The inputs the client did not send, held here from earlier calls: all of them, or the call
    // fails with wire::kResidentMissing (and the client sends it again with them).
    CallInputs in{wire::input_bytes(c)};
    if (!in.find(core_.resident(s), req.resident)) {
      core_.complete({s.peer, wire::CallReply{req.call_id, false, wire::kResidentMissing}, buf, 0, 0,
                      wire::call_name(c), req.call_id, false, wire::kResidentMissing});
      return;
    }
    Blas3Executor* executor = backend->executor<Blas3Executor>();
    std::shared_ptr<const void> on_device;  // the GPU's count of running calls, while this one runs
    if (backend->has_device_memory()) place_whole(executor, on_device);
    PeerId peer = s.peer;
    uint64_t call_id = req.call_id;
    core_.pool().submit([this, executor, on_device, c, buf, in, peer, call_id, in_bytes, arrived, received]() mutable {
      wire::CallReply reply{call_id, true, "", 0, received - arrived, now_ns() - received};
      const size_t out_bytes = wire::reply_bytes(c);
      const size_t out_offset = c.output_sent ? in_bytes - out_bytes : in_bytes;
      CallInputs::Kept kept;
      try {
        const std::vector<const std::byte*> inputs = in.lay_out(buf, kept);
        uint64_t t0 = now_ns();
        DeviceTiming device;
        for (size_t attempt = 0;; ++attempt) {
          try {
            device = executor->level3(c, inputs, buf->data() + out_offset);
            break;
          } catch (const DeviceFault& f) {
            // Its GPU faulted (and is out of service now): again on another, else on the host.
            if (!f.rerunnable || attempt >= devices_.size()) throw;
            on_device.reset();
            place_whole(executor, on_device);
            t0 = now_ns();
          }
        }
        reply.compute_ns = now_ns() - t0;
        if (device.compute_ns) {  // a device backend says how its time divided
          reply.to_device_ns = device.to_device_ns;
          reply.compute_ns = device.compute_ns;
          reply.from_device_ns = device.from_device_ns;
          costs_.device_call(wire::flops(c), device.compute_ns, double(in_bytes + out_bytes),
                             device.to_device_ns + device.from_device_ns);
        } else {
          costs_.host_call(wire::flops(c), reply.compute_ns);
        }
        reply.payload_bytes = out_bytes;
      } catch (const std::exception& e) {
        reply.ok = false;
        reply.message = e.what();
      }
      // The GPU is free before the answer leaves: whoever sees the answer may count on it (the
      // pool drops the job's captures only later; a next call placed meanwhile went elsewhere).
      on_device.reset();
      core_.complete({peer, reply, buf, out_offset, reply.ok ? out_bytes : 0, wire::call_name(c), call_id, reply.ok,
                      reply.message, true, std::move(kept)});
    });
  }

  // A whole call's GPU: the least loaded in service (counted in `on_device` while it runs), or the
  // host where none is.
  void place_whole(Blas3Executor*& executor, std::shared_ptr<const void>& on_device) {
    const std::vector<size_t> order = load_->by_load();
    if (order.empty()) {
      executor = host_->executor<Blas3Executor>();
      return;
    }
    executor = devices_[order.front()];
    on_device = load_->hold(order.front());
  }

  // A pipelined call: blocks planned from the rates measured so far, on the backend the cost
  // model picks (spread over several GPUs where there are).
  void set_up(Session& s, ChunkedCall& cc, const wire::Level3Call& call) {
    Backend* backend = backend_for(call);
    const bool device = backend->has_device_memory();
    // Where it runs, chosen below: the GPUs' counts of running calls hold it until the call is
    // answered or dropped with its session (the token lives in `answer`).
    auto on_devices = std::make_shared<std::vector<std::shared_ptr<const void>>>();
    cc.answer = [this, call, device, id = cc.call_id, payload_bytes = cc.payload_bytes, on_devices](const CallOutcome& o) {
      if (o.ok) {
        const double flops = wire::flops(call);
        if (device && devices_.size() <= 1)  // spread: the sum is not one GPU's rate
          costs_.device_call(flops, o.compute_ns, 0, 0);
        else if (!device)
          costs_.host_call(flops, o.compute_ns);
        costs_.link(double(payload_bytes), o.receive_ns - std::min(o.receive_ns, o.setup_ns));
      }
      return wire::Message(wire::CallReply{id, o.ok, o.error, 0, o.receive_ns, 0, o.to_device_ns, o.compute_ns,
                                           o.from_device_ns});
    };
    cc.name = wire::call_name(call);
    Plan plan = plan_pipeline(call, choose_block_cols(call, costs_.pipeline_rates()));
    core_.chunked().stage(s, cc, plan.staging_bytes, *backend);
    Blas3Executor& executor = *backend->executor<Blas3Executor>();
    // Several GPUs: the call's pieces spread over all of them where none is busy; else a pipeline
    // on the least loaded one that is free; else (below) whole on the least loaded one.
    cc.pipe = ChunkedCalls::offered(*backend, [&]() -> std::unique_ptr<Pipeline> {
      if (!device || devices_.size() <= 1) return executor.pipeline(plan, cc.staging.data());
      std::vector<size_t> live = load_->by_load();
      std::sort(live.begin(), live.end());
      std::vector<Blas3Executor*> spread_over;
      for (size_t d : live) spread_over.push_back(devices_[d]);
      if (auto spread = make_spread_pipeline(spread_over, plan, cc.staging.data())) {
        for (size_t d : live) on_devices->push_back(load_->hold(d));
        return spread;
      }
      for (size_t d : load_->by_load())
        if (auto pipe = devices_[d]->pipeline(plan, cc.staging.data())) {
          on_devices->push_back(load_->hold(d));
          return pipe;
        }
      return nullptr;
    });
    if (!cc.pipe) {
      // On the compute threads with level3(). A device backend busy with another pipeline would
      // copy A again for every block: there the call runs whole once its input is in.
      const int64_t cols = device ? kWhole
                                  : std::max<int64_t>(choose_block_cols(call),
                                                      int64_t(core_.config().host_block_columns));
      plan = plan_pipeline(call, cols);
      // Host backends never read an output whose values were not sent, but keep it defined anyway.
      if (!call.output_sent) std::memset(cc.staging.data() + plan.output_offset, 0, plan.output_bytes);
      Blas3Executor* whole = &executor;
      if (device) {
        std::shared_ptr<const void> on_device;
        place_whole(whole, on_device);
        if (on_device) on_devices->push_back(std::move(on_device));
      }
      cc.pipe = make_pool_pipeline(*whole, plan, cc.staging.data(), core_.pool(), core_.chunked().wake());
    }
    cc.pieces = plan.pieces;
    OrderCount& n = orders_[static_cast<size_t>(plan.order)];
    ++n.calls;
    n.blocks += plan.blocks.size();
    n.pieces += plan.pieces.size();
  }


  Core& core_;
  CostModel costs_;                      // where calls run, and how pipelined calls are blocked
  Backend* host_ = nullptr;              // the first host backend that serves Level-3 BLAS
  Backend* device_ = nullptr;            // the first device backend that does, for large calls
  std::vector<Blas3Executor*> devices_;  // every device backend's: big calls spread over them
  std::unique_ptr<DeviceLoad> load_;     // this service's calls running on each of devices_
  struct OrderCount {
    uint64_t calls = 0, blocks = 0, pieces = 0;
  };
  std::array<OrderCount, 5> orders_{};   // by BlockOrder
};

}  // namespace

std::unique_ptr<Service> make_blas3_service(Core& core) { return std::make_unique<Blas3Service>(core); }

}  // namespace outboard::server
