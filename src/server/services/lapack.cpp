#include "server/services/lapack.hpp"

#include <algorithm>
#include <cstring>

#include "common/clock.hpp"
#include "server/chunked.hpp"
#include "server/device_load.hpp"
#include "server/direct.hpp"
#include "server/lapack_pipeline.hpp"
#include "server/services/lapack_executor.hpp"

namespace outboard::server {
namespace {

using transport::Buffer;

class LapackService final : public Service {
 public:
  explicit LapackService(Core& core) : core_(core) {
    std::vector<const Backend*> gpus;
    for (const auto& b : core.backends()) {
      if (!b->executor<LapackExecutor>()) continue;
      Backend*& slot = b->has_device_memory() ? device_ : host_;
      if (!slot) slot = b.get();
      if (b->has_device_memory()) {
        devices_.push_back(b.get());
        gpus.push_back(b.get());
      }
    }
    load_ = std::make_unique<DeviceLoad>(std::move(gpus));
  }

  const char* name() const override { return "lapack"; }
  std::vector<wire::Type> messages() const override {
    return {wire::Type::lapack_call, wire::Type::lapack_chunk, wire::Type::direct_lapack};
  }

  // A whole call's memory: its inputs as they arrive, then room for its outputs.
  transport::Landing on_payload(Session& s, const wire::Message& m, uint64_t bytes) override {
    if (auto* chunk = std::get_if<wire::LapackChunk>(&m))
      return core_.chunked().landing(s, *chunk, bytes, [&](ChunkedCall& cc) { set_up(s, cc, chunk->call); });
    const auto* q = std::get_if<wire::LapackRequest>(&m);
    if (!q) return Service::on_payload(s, m, bytes);
    Core::check_payload(q->payload_bytes, bytes);
    Backend* backend = backend_for(q->call);
    if (!backend) throw ProtocolError("this server has no backend that serves LAPACK");
    return transport::Landing::receive(
        core_.receive_call(s, q->call_id, bytes + wire::reply_bytes(q->call), *backend));
  }

  void on_message(Session& s, const wire::Message& m, Buffer payload) override {
    if (auto* c = std::get_if<wire::LapackChunk>(&m)) return core_.chunked().on_chunk(s, c->call_id, c->chunk_index);
    if (auto* d = std::get_if<wire::DirectLapack>(&m))
      return core_.direct().start(s, *d, wire::request_bytes(d->call),
                                  [&](ChunkedCall& cc) { set_up(s, cc, d->call); });
    on_call(s, std::get<wire::LapackRequest>(m), std::move(payload));
  }

 private:
  // Large calls on a device backend that serves them (while one is in service), the rest on the
  // host. The device backend named here gives the staging memory; the GPU is chosen by load.
  Backend* backend_for(const wire::LapackCall& c) const {
    if (device_ && wire::flops(c) >= core_.config().gpu_min_flops &&
        device_->executor<LapackExecutor>()->serves_lapack(c) && load_->any_in_service())
      return device_;
    return host_;
  }

  // A whole call's executor: the least loaded GPU in service (counted in `on_device` while the
  // call runs), else the host.
  LapackExecutor* place(Backend* backend, std::shared_ptr<const void>& on_device) {
    on_device.reset();
    if (!backend->has_device_memory()) return backend->executor<LapackExecutor>();
    const std::vector<size_t> order = load_->by_load();
    if (order.empty()) return host_ ? host_->executor<LapackExecutor>() : nullptr;
    on_device = load_->hold(order.front());
    return devices_[order.front()]->executor<LapackExecutor>();
  }

  // A whole call, on the compute pool. The buffer holds the inputs, then the outputs (reply payload).
  void on_call(Session& s, const wire::LapackRequest& req, Buffer payload) {
    const uint64_t received = now_ns();
    const Session::Arrival a = core_.take_arrival(s, req.call_id, received);
    const uint64_t arrived = a.ns;
    const wire::LapackCall& c = req.call;
    Backend* backend = a.backend ? a.backend : backend_for(c);
    if (!backend) return core_.reject(s.peer, "this server has no backend that serves LAPACK");
    const uint64_t in_bytes = req.payload_bytes;
    const uint64_t total = in_bytes + wire::reply_bytes(c);
    if (!core_.whole_payload(s, payload, in_bytes, total, backend->staging())) return;
    s.bytes_in += in_bytes;
    auto buf = std::make_shared<Buffer>(std::move(payload));
    // The inputs the client did not send, held here from earlier calls (as blas3's).
    CallInputs in{wire::input_bytes(c)};
    if (!in.find(core_.resident(s), req.resident)) {
      wire::LapackReply missing{req.call_id, false, wire::kResidentMissing};
      core_.complete({s.peer, missing, buf, 0, 0, wire::call_name(c), req.call_id, false, wire::kResidentMissing});
      return;
    }
    std::shared_ptr<const void> on_device;  // the GPU's count of running calls, while this one runs
    LapackExecutor* executor = place(backend, on_device);
    if (!executor) return core_.reject(s.peer, "this server has no backend that serves LAPACK");
    PeerId peer = s.peer;
    uint64_t call_id = req.call_id;
    core_.pool().submit([this, executor, on_device, c, buf, in, peer, call_id, in_bytes, arrived, received]() mutable {
      wire::LapackReply reply{call_id, true, "", 0, 0, received - arrived, now_ns() - received};
      const uint64_t out_bytes = wire::reply_bytes(c);
      CallInputs::Kept kept;
      try {
        const wire::LapackLayout l = wire::layout(c);
        const std::vector<const std::byte*> inputs = in.lay_out(buf, kept);
        std::vector<std::byte*> outputs;
        uint64_t offset = in_bytes;  // the outputs' room follows the inputs sent
        for (const auto& a : l.outputs) {
          outputs.push_back(buf->data() + offset);
          offset += wire::array_bytes(a, c.scalar);
        }
        wire::check_inputs(c, inputs.data());
        DeviceTiming device;
        uint64_t t0 = now_ns();
        for (size_t attempt = 0;; ++attempt) {
          for (size_t i = 0; i < l.outputs.size(); ++i) {  // in-place outputs start as their input
            const uint64_t n = wire::array_bytes(l.outputs[i], c.scalar);
            if (l.outputs[i].from_input >= 0) std::memcpy(outputs[i], inputs[l.outputs[i].from_input], n);
            else std::memset(outputs[i], 0, n);
          }
          try {
            reply.info = executor->lapack(c, inputs, outputs, device);
            break;
          } catch (const DeviceFault& f) {
            // Its GPU faulted (and is out of service now): again on another, else on the host.
            if (!f.rerunnable || attempt >= devices_.size()) throw;
            executor = place(device_, on_device);
            if (!executor) throw;
            t0 = now_ns();
          }
        }
        reply.compute_ns = now_ns() - t0;
        if (device.compute_ns) {
          reply.to_device_ns = device.to_device_ns;
          reply.compute_ns = device.compute_ns;
          reply.from_device_ns = device.from_device_ns;
        }
        reply.payload_bytes = out_bytes;
      } catch (const std::exception& e) {
        reply.ok = false;
        reply.message = e.what();
        reply.info = 0;
      }
      on_device.reset();  // free before the answer leaves (as blas3's)
      core_.complete({peer, reply, buf, in_bytes, reply.ok ? out_bytes : 0, wire::call_name(c), call_id, reply.ok,
                      reply.message, true, std::move(kept)});
    });
  }

  // A pipelined or direct call: its result leaves in pieces of the chunk size.
  void set_up(Session& s, ChunkedCall& cc, const wire::LapackCall& call) {
    // The GPU's count of running calls holds until the call is answered or dropped.
    auto on_device = std::make_shared<std::shared_ptr<const void>>();
    cc.answer = [id = cc.call_id, on_device](const CallOutcome& o) {
      on_device->reset();
      return wire::Message(wire::LapackReply{id, o.ok, o.error, o.ok ? o.info : 0, 0, o.receive_ns, 0,
                                             o.to_device_ns, o.compute_ns, o.from_device_ns});
    };
    cc.name = wire::call_name(call);
    Backend* backend = backend_for(call);
    if (!backend) throw ProtocolError("this server has no backend that serves LAPACK");
    const LapackPlan plan = plan_lapack(call, cc.chunk_bytes);
    core_.chunked().stage(s, cc, plan.staging_bytes, *backend);
    // On GPUs: a pipeline on the least loaded one that has one free, else whole on the least loaded.
    cc.pipe = ChunkedCalls::offered(*backend, [&]() -> std::unique_ptr<Pipeline> {
      if (!backend->has_device_memory()) return backend->executor<LapackExecutor>()->lapack_pipeline(plan, cc.staging.data());
      for (size_t d : load_->by_load())
        if (auto pipe = devices_[d]->executor<LapackExecutor>()->lapack_pipeline(plan, cc.staging.data())) {
          *on_device = load_->hold(d);
          return pipe;
        }
      return nullptr;
    });
    if (!cc.pipe) {
      LapackExecutor* executor = place(backend, *on_device);
      if (!executor) throw ProtocolError("this server has no backend that serves LAPACK");
      cc.pipe = make_pool_lapack_pipeline(*executor, plan, cc.staging.data(), core_.pool(), core_.chunked().wake());
    }
    cc.pieces = plan.pieces;
  }

  Core& core_;
  Backend* host_ = nullptr;    // the first host backend that serves LAPACK
  Backend* device_ = nullptr;  // the first device backend that does, for large calls
  std::vector<Backend*> devices_;     // every device backend that does: calls placed by load
  std::unique_ptr<DeviceLoad> load_;  // this service's calls running on each of devices_
};

}  // namespace

std::unique_ptr<Service> make_lapack_service(Core& core) { return std::make_unique<LapackService>(core); }

}  // namespace outboard::server
