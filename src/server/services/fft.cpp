#include "server/services/fft.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <optional>
#include <thread>
#include <unordered_map>

#include "common/clock.hpp"
#include "common/digest.hpp"
#include "server/chunked.hpp"
#include "server/device_load.hpp"
#include "server/direct.hpp"
#include "server/services/fft_executor.hpp"
#include "server/pool_pipeline.hpp"

namespace outboard::server {
namespace {

using transport::Buffer;

// Threads for digesting a result (FftExecute::output_digest): XXH3 reads about 10 GB/s per core.
unsigned digest_threads() { return std::clamp(std::thread::hardware_concurrency(), 1u, 16u); }

// "fftw_c2c", "fftwf_r2c": the family of calls, as counters and reports name it.
std::string routine_name(const wire::FftShape& s) {
  static const char* kinds[] = {"c2c", "r2c", "c2r", "r2r"};
  return std::string(s.precision == wire::FftPrecision::f32 ? "fftwf_" : "fftw_") + kinds[static_cast<int>(s.kind)];
}

struct Where {
  Backend* backend = nullptr;
  FftExecutor* executor = nullptr;
};

struct SessionPlan {
  wire::FftShape shape;
};

class FftService final : public Service {
 public:
  explicit FftService(Core& core) : core_(core), planner_(2) {
    std::vector<const Backend*> gpus;
    for (const auto& b : core.backends()) {
      FftExecutor* e = b->executor<FftExecutor>();
      if (!e) continue;
      (b->has_device_memory() ? devices_ : hosts_).push_back({b.get(), e});
      if (b->has_device_memory()) gpus.push_back(b.get());
    }
    load_ = std::make_unique<DeviceLoad>(std::move(gpus));
  }

  const char* name() const override { return "fft"; }
  std::vector<wire::Type> messages() const override {
    return {wire::Type::fft_plan, wire::Type::fft_release, wire::Type::fft_execute, wire::Type::fft_chunk,
            wire::Type::direct_fft};
  }

  // An execution's payload lands before the messages ahead of it are handled (the plan among
  // them), so it is sized by the shape it repeats; on_message then checks the plan.
  transport::Landing on_payload(Session& s, const wire::Message& m, uint64_t bytes) override {
    if (auto* chunk = std::get_if<wire::FftChunk>(&m))
      return core_.chunked().landing(s, *chunk, bytes, [&](ChunkedCall& cc) { set_up(s, cc, chunk->shape); });
    const auto* q = std::get_if<wire::FftExecute>(&m);
    if (!q) return Service::on_payload(s, m, bytes);
    Core::check_payload(q->payload_bytes, bytes);
    const Where w = where_for(q->shape);
    if (!w.backend) throw ProtocolError("this server has no backend that serves FFTs");
    return transport::Landing::receive(core_.receive_call(s, q->call_id, bytes + wire::output_bytes(q->shape), *w.backend));
  }

  void on_message(Session& s, const wire::Message& m, Buffer payload) override {
    if (auto* p = std::get_if<wire::FftPlan>(&m)) return on_plan(s, *p);
    if (auto* r = std::get_if<wire::FftRelease>(&m)) {
      if (auto it = plans_.find(s.peer); it != plans_.end()) it->second.erase(r->plan_id);
      return;
    }
    if (auto* d = std::get_if<wire::DirectFft>(&m)) {
      if (!matches(s.peer, d->plan_id, d->shape)) return refuse(s, d->call_id, why_not(s.peer, d->plan_id, d->shape));
      return core_.direct().start(s, *d, wire::input_bytes(d->shape), [&](ChunkedCall& cc) { set_up(s, cc, d->shape); });
    }
    if (auto* c = std::get_if<wire::FftChunk>(&m)) {
      // A call on a plan the session does not have fails (answered once all of it is in); its
      // pipeline may have started, on the shape the chunks gave, but nothing goes back.
      if (auto it = s.chunked.find(c->call_id); it != s.chunked.end() && !matches(s.peer, c->plan_id, c->shape)) {
        core_.chunked().fail(*it->second, why_not(s.peer, c->plan_id, c->shape));
        it->second->name = "fft";  // counted as a refusal (as a whole one is), not as a transform of its shape
      }
      return core_.chunked().on_chunk(s, c->call_id, c->chunk_index);
    }
    const auto& q = std::get<wire::FftExecute>(m);
    if (!matches(s.peer, q.plan_id, q.shape)) {
      core_.take_arrival(s, q.call_id, now_ns());
      s.held_bytes -= std::min<uint64_t>(s.held_bytes, payload.size());
      return refuse(s, q.call_id, why_not(s.peer, q.plan_id, q.shape));
    }
    on_execute(s, q, std::move(payload));
  }

  void on_session_end(PeerId peer) override { plans_.erase(peer); }

  void status(nlohmann::json& doc) const override {
    nlohmann::json executors = nlohmann::json::array();
    for (const auto& w : devices_) executors.push_back(w.executor->describe());
    for (const auto& w : hosts_) executors.push_back(w.executor->describe());
    size_t plans = 0;
    for (const auto& [peer, table] : plans_) plans += table.size();
    doc["fft"] = {{"session_plans", plans}, {"plans_made_ahead", prepared_.load()},
                 {"plans_over_limit", over_limit_}, {"executors", executors}};
  }

 private:
  // Plans one session may hold at once; the next FftPlan ends the session ("too many FFT plans in
  // one session"). A plan here is a shape (tens of bytes) and one prepare on the planner thread
  // (the executors' caches, bounded by fft_max_plans and GPU memory, hold the made plans, shared
  // by shape), so the limit bounds a session's table and planner work, not memory of its size;
  // programs that keep thousands of distinct plans alive stay well inside it.
  static constexpr size_t kMaxPlansPerSession = 4096;
  static constexpr size_t kMaxQueuedPlans = 64;

  const SessionPlan* find(PeerId peer, uint64_t id) const {
    auto it = plans_.find(peer);
    if (it == plans_.end()) return nullptr;
    auto p = it->second.find(id);
    return p == it->second.end() ? nullptr : &p->second;
  }
  // Whether the session has plan `id`, of this shape.
  bool matches(PeerId peer, uint64_t id, const wire::FftShape& shape) const {
    const SessionPlan* plan = find(peer, id);
    return plan && plan->shape == shape;
  }

  std::string why_not(PeerId peer, uint64_t plan_id, const wire::FftShape& shape) const {
    const SessionPlan* plan = find(peer, plan_id);
    if (!plan) return "unknown FFT plan " + std::to_string(plan_id) + " (not made in this session)";
    std::string mine = wire::shape_name(plan->shape), theirs = wire::shape_name(shape);
    if (mine == theirs) {  // the names leave out the direction and the r2r kinds
      mine += describe_extra(plan->shape);
      theirs += describe_extra(shape);
    }
    return "FFT plan " + std::to_string(plan_id) + " is " + mine + ", not " + theirs;
  }

  static std::string describe_extra(const wire::FftShape& shape) {
    std::string out = " sign " + std::to_string(int(shape.sign));
    if (!shape.r2r_kinds.empty()) {
      out += " r2r kinds";
      for (uint8_t k : shape.r2r_kinds) out += " " + std::to_string(int(k));
    }
    return out;
  }

  void refuse(Session& s, uint64_t call_id, const std::string& why) {
    core_.count_call(&s, s.peer, call_id, "fft", false, why);
    core_.send(s.peer, wire::FftReply{call_id, false, why, 0, 0, 0, 0, 0, 0, 0, ""});
  }

  // Several GPUs: the ones that serve the shape (indices into devices_), those with the fewest of
  // this service's executions running first (the first on a tie); empty where none does.
  std::vector<size_t> devices_for(const wire::FftShape& shape) const {
    std::vector<size_t> serving;
    for (size_t d = 0; d < devices_.size(); ++d)
      if (devices_[d].executor->serves(shape)) serving.push_back(d);
    return load_->by_load(std::move(serving));
  }

  // cuFFT where it expresses the problem, else FFTW on the host (with several GPUs: the first that
  // serves it, whose page-locked staging every GPU uses; executions are placed by devices_for).
  Where where_for(const wire::FftShape& shape) const {
    for (const auto& w : devices_)
      if (w.backend->in_service() && w.executor->serves(shape)) return w;
    for (const auto& w : hosts_)
      if (w.executor->serves(shape)) return w;
    return {};
  }

  void on_plan(Session& s, const wire::FftPlan& p) {
    auto& table = plans_[s.peer];
    if (table.count(p.plan_id)) return core_.reject(s.peer, "FFT plan id " + std::to_string(p.plan_id) + " already in use");
    if (table.size() >= kMaxPlansPerSession) return core_.reject(s.peer, "too many FFT plans in one session");
    const Where w = where_for(p.shape);
    if (!w.executor) return core_.reject(s.peer, "this server has no backend that serves FFTs");
    table[p.plan_id] = {p.shape};
    // A plan whose executions can never be accepted (input and output above max_request_bytes:
    // Core::check_limits refuses them as any call over the limits) is kept, so that they fail
    // that way, but never prepared: a peer must not make the executors plan what it cannot run
    // (FFTW measuring on scratch arrays of the problem's size, cuFFT holding device memory for it
    // and evicting the plans of sessions that can).
    if (wire::input_bytes(p.shape) + wire::output_bytes(p.shape) > core_.config().max_request_bytes) {
      ++over_limit_;
      spdlog::info("fft.plan_over_limit peer={} plan={} shape=\"{}\" (not prepared)", s.peer, p.plan_id,
                   wire::shape_name(p.shape));
      return;
    }
    // A backlog of plans to make (a peer planning and releasing in a loop) is not added to: the
    // execution makes its plan itself then.
    if (planner_.queued() >= kMaxQueuedPlans) return;
    // Made ready while the data travels: on a planner thread of the service's own, so a plan never
    // waits behind calls on the compute pool. A device backend's page-locked staging memory (the
    // input and the output, seconds to lock for GiBs) is readied too: allocated and released into
    // the buffer cache, where the execution finds it.
    // With several GPUs, on each that serves the shape: its executions go to the least loaded.
    std::vector<Where> where{w};
    if (const auto order = devices_for(p.shape); order.size() > 1) {
      where.clear();
      for (size_t d : order) where.push_back(devices_[d]);
    }
    for (const Where& at : where)
      planner_.submit([this, e = at.executor, backend = at.backend, shape = p.shape, first = &at == &where.front()] {
        try {
          e->prepare(shape);
          if (first && backend->has_device_memory())  // one staging buffer serves every GPU
            Buffer::allocate(wire::input_bytes(shape) + wire::output_bytes(shape), backend->staging());
          ++prepared_;
        } catch (const std::exception& ex) {
          spdlog::warn("fft.plan_failed shape=\"{}\" executor={} error=\"{}\"", wire::shape_name(shape), e->where(), ex.what());
        }
      });
  }

  // A whole execution on the compute pool; the buffer holds the input, then the output.
  void on_execute(Session& s, const wire::FftExecute& q, Buffer payload) {
    const uint64_t received = now_ns();
    const Session::Arrival a = core_.take_arrival(s, q.call_id, received);
    const uint64_t in_bytes = wire::input_bytes(q.shape), out_bytes = wire::output_bytes(q.shape);
    // Its GPU out of service since the plan was made, and no host backend: nothing runs it.
    const Where w = where_for(q.shape);
    if (!w.executor) return core_.reject(s.peer, "this server has no backend that serves FFTs");
    // The input held from an earlier execution (not sent); missing, the execution fails as
    // wire::kResidentMissing.
    std::shared_ptr<const Buffer> held;
    if (!q.resident.empty() && q.resident[0].use) {
      held = core_.resident(s).find(q.resident[0].digest, in_bytes);
      if (held && !core_.whole_payload(s, payload, 0, in_bytes + out_bytes, w.backend->staging())) return;
    }
    if (!held && !q.resident.empty() && q.resident[0].use) {
      core_.complete({s.peer, wire::FftReply{q.call_id, false, wire::kResidentMissing}, nullptr, 0, 0,
                      routine_name(q.shape), q.call_id, false, wire::kResidentMissing, false});
      return;
    }
    if (payload.size() != in_bytes + out_bytes) return core_.reject(s.peer, "payload size does not match the FFT");
    s.bytes_in += q.payload_bytes;
    auto buf = std::make_shared<Buffer>(std::move(payload));
    const bool keep = !q.resident.empty() && !q.resident[0].use;
    const Digest digest = q.resident.empty() ? Digest{} : q.resident[0].digest;
    FftExecutor* e = w.executor;
    std::shared_ptr<const void> on_device;  // the GPU's count of running executions, while this one runs
    if (const auto order = devices_for(q.shape); !order.empty()) {
      e = devices_[order.front()].executor;
      on_device = load_->hold(order.front());
    }
    const std::optional<Digest> output_digest = q.output_known ? std::optional<Digest>(q.output_digest) : std::nullopt;
    core_.pool().submit([this, e, on_device, shape = q.shape, buf, held, keep, digest, output_digest, peer = s.peer,
                         id = q.call_id, in_bytes, out_bytes, arrived = a.ns, received]() mutable {
      wire::FftReply r{id, true, "", 0, received - arrived, now_ns() - received, 0, 0, 0, 0, ""};
      // An input to keep: a copy before an executor that may overwrite it runs, else (a GPU's) where
      // it is, once it ran (below).
      std::vector<KeptInput> kept;
      if (keep && !e->preserves_input()) kept.push_back({digest, ResidentStore::copy_of(buf->data(), in_bytes, buf->allocator())});
      // A held input is read where it is kept by an executor that leaves its input alone (a GPU's
      // copies it to the device); one that may overwrite it (FFTW) gets a copy in the call's memory.
      bool copied = false;
      auto input_for = [&](const FftExecutor& x) -> const std::byte* {
        if (!held) return buf->data();
        if (x.preserves_input()) return held->data();
        if (!copied) std::memcpy(buf->data(), held->data(), in_bytes), copied = true;
        return buf->data();
      };
      uint64_t result_bytes_not_sent = 0;
      try {
        FftTiming t;
        for (size_t attempt = 0;; ++attempt) {
          try {
            t = e->execute(shape, input_for(*e), buf->data() + in_bytes);
            break;
          } catch (const DeviceFault& f) {
            // Its GPU faulted (and is out of service now): again on another, else on the host.
            if (!f.rerunnable || attempt >= devices_.size()) throw;
            on_device.reset();
            e = where_for(shape).executor;
            if (!e) throw;
            if (const auto order = devices_for(shape); !order.empty()) {
              e = devices_[order.front()].executor;
              on_device = load_->hold(order.front());
            }
          }
        }
        r.plan_wait_ns = t.plan_wait_ns, r.to_device_ns = t.to_device_ns, r.compute_ns = t.compute_ns;
        r.from_device_ns = t.from_device_ns;
        r.payload_bytes = out_bytes;
        r.backend = e->where();
        if (keep && kept.empty() && e->preserves_input()) kept.push_back(ResidentStore::part_of(digest, buf, 0, in_bytes, buf->size()));
        // The program's output holds this result already (the same execution on the same input):
        // not sent again.
        if (output_digest && content_digest(buf->data() + in_bytes, out_bytes, digest_threads()) == *output_digest) {
          r.output_unchanged = true;
          r.payload_bytes = 0;
          result_bytes_not_sent = out_bytes;
        }
      } catch (const std::exception& ex) {
        r.ok = false;
        r.message = ex.what();
      }
      on_device.reset();  // free before the answer leaves (as blas3's)
      Completion c{peer, r, buf, in_bytes, r.payload_bytes, routine_name(shape), id, r.ok, r.message, true, std::move(kept)};
      c.result_bytes_not_sent = result_bytes_not_sent;
      core_.complete(std::move(c));
    });
  }

  // A pipelined execution: the executor's own pipeline (a GPU copies each chunk as it lands), else
  // one step on the compute pool once the input is in. The result leaves in pieces of whole
  // transforms where they fit in a chunk.
  void set_up(Session& s, ChunkedCall& cc, const wire::FftShape& shape) {
    const Where w = where_for(shape);
    if (!w.executor) throw ProtocolError("this server has no backend that serves FFTs");
    // Where it ran, for the reply: settled below, but the answer must exist before anything here
    // can fail (a direct call that cannot be set up is answered with it).
    struct Placed {
      FftExecutor* executor;
      std::shared_ptr<const void> on_device;  // the GPU's count of running executions, while this one runs
    };
    auto placed = std::make_shared<Placed>(Placed{w.executor, nullptr});
    cc.answer = [id = cc.call_id, placed](const CallOutcome& o) {
      return wire::Message(wire::FftReply{id, o.ok, o.error, 0, o.receive_ns, 0, o.to_device_ns, o.compute_ns,
                                          o.from_device_ns, 0, placed->executor->where()});
    };
    cc.name = routine_name(shape);
    const FftPlanPieces p = plan_fft_pieces(shape, cc.chunk_bytes);
    core_.chunked().stage(s, cc, p.staging_bytes, *w.backend);  // (page-locked for every GPU)
    // On GPUs: a pipeline on the least loaded one that has one free, else whole on the least loaded.
    const std::vector<size_t> order = devices_for(shape);
    auto place = [&](size_t d) { *placed = {devices_[d].executor, load_->hold(d)}; };
    cc.pipe = ChunkedCalls::offered(*w.backend, [&]() -> std::unique_ptr<Pipeline> {
      if (order.empty()) return w.executor->pipeline(p, cc.staging.data());
      for (size_t d : order)
        if (auto pipe = devices_[d].executor->pipeline(p, cc.staging.data())) {
          place(d);
          return pipe;
        }
      return nullptr;
    });
    if (!cc.pipe && !order.empty()) place(order.front());
    FftExecutor& e = *placed->executor;
    if (!cc.pipe) {
      std::vector<size_t> all(p.pieces.size());
      for (size_t i = 0; i < all.size(); ++i) all[i] = i;
      std::byte* staging = cc.staging.data();
      PoolStep step{p.input_bytes, [&e, shape, staging, in = p.input_bytes] {
                      e.execute(shape, staging, staging + in);
                      return int64_t(0);
                    },
                    std::move(all)};
      std::vector<PoolStep> steps;
      steps.push_back(std::move(step));
      cc.pipe = make_pool_pipeline(std::move(steps), core_.pool(), core_.chunked().wake());
    }
    cc.pieces = p.pieces;
  }

  Core& core_;
  std::vector<Where> devices_, hosts_;
  std::unique_ptr<DeviceLoad> load_;  // this service's executions running on each of devices_
  std::unordered_map<PeerId, std::unordered_map<uint64_t, SessionPlan>> plans_;
  std::atomic<uint64_t> prepared_{0};
  uint64_t over_limit_ = 0;  // plans never prepared: their executions are over max_request_bytes
  ComputePool planner_;  // last: its threads end before the rest goes
};

}  // namespace

std::unique_ptr<Service> make_fft_service(Core& core) { return std::make_unique<FftService>(core); }

}  // namespace outboard::server
