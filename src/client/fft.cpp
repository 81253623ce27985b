// The FFT path of the client runtime (fft.hpp): plans made remote at plan time by the cost model
// and announced to the server at once (plan ahead); executions gather the program's arrays into
// the dense problem (or send them as they are), send it whole or in chunks, and land the result
// straight in the program's output where it is dense and not the input, else aside and scattered.
#include "client/fft.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <system_error>

#include "client/fft_layout.hpp"
#include "client/runtime_internal.hpp"
#include "common/clock.hpp"
#include "common/digest.hpp"
#include "common/error.hpp"

namespace outboard::client {

class RemoteFft {
 public:
  RemoteFft(FftLayout l, uint64_t id, std::string routine)
      : layout(std::move(l)), id(id), routine(std::move(routine)), label(this->routine + " " + shape_label()) {}
  const FftLayout layout;
  const uint64_t id;  // this process's name for the plan; the server keeps it per session
  const std::string routine, label;
  // Its last execution named a resident input: the next is likely the same execution again.
  std::atomic<bool> resident_last{false};

  // The server of `conn` knows this plan (it is told again after a reconnection).
  void announce(Connection& conn, const std::shared_ptr<Connection>& ptr) {
    std::lock_guard lk(mu_);
    if (known_by_.lock() == ptr) return;
    conn.notify(wire::FftPlan{id, layout.shape});
    known_by_ = ptr;
  }
  // The connection whose server knows the plan (null if none, or it died).
  std::shared_ptr<Connection> server() {
    std::lock_guard lk(mu_);
    auto c = known_by_.lock();
    return c && c->alive() ? c : nullptr;
  }
  // Tells the server the plan is gone, where it knows it on a live connection (never connects:
  // a server drops a session's plans when the session ends anyway).
  void release() {
    for (auto& part : parts) part->release();
    std::lock_guard lk(mu_);
    if (auto c = known_by_.lock(); c && c->alive()) c->notify(wire::FftRelease{id});
  }

  // A large batch spread over several servers (spread_plan): the plans of its shares, share i
  // holding transforms [first[i], first[i + 1]) of the batch. Empty: not spread.
  std::vector<std::unique_ptr<RemoteFft>> parts;
  std::vector<int64_t> first;

 private:
  std::string shape_label() const {
    std::string s;
    for (size_t i = 0; i < layout.shape.n.size(); ++i) s += (i ? "x" : "") + std::to_string(layout.shape.n[i]);
    if (layout.shape.batch > 1) s += "*" + std::to_string(layout.shape.batch);
    return s;
  }
  std::mutex mu_;
  std::weak_ptr<Connection> known_by_;
};

namespace {

std::atomic<uint64_t> g_next_plan{1};

// Below this a transform always stays local: it takes microseconds here.
constexpr double kMinRemoteFlops = 1e6;

// "fftw_c2c", "fftwf_r2c": the family of calls, as the report and the server's counters name it.
std::string routine_name(wire::FftPrecision p, wire::FftKind k) {
  static const char* kinds[] = {"c2c", "r2c", "c2r", "r2r"};
  return std::string(p == wire::FftPrecision::f32 ? "fftwf_" : "fftw_") +
         (k < wire::FftKind::count_ ? kinds[static_cast<int>(k)] : "?");
}

// A transform's work as the cost model counts it (link_model.hpp: sizes with large prime factors
// cost more than 5 N log2 N).
double model_flops(const wire::FftShape& shape) {
  return fft_work_flops(shape.n, double(shape.batch), shape.kind != wire::FftKind::c2c);
}

// OUTBOARD_OFFLOAD=auto's choice for a plan (its executions all go its way): the cost model
// (link_model.hpp) on one execution's flops and bytes both ways.
bool worth_remote(Runtime& rt, const std::string& family, const wire::FftShape& shape) {
  const double flops = model_flops(shape);
  if (flops < kMinRemoteFlops) return false;
  const double bytes = double(wire::input_bytes(shape) + wire::output_bytes(shape));
  const Settings& s = rt.settings();
  if (s.auto_rule == AutoRule::model) return rt.model_chooses_remote({family, flops, bytes, /*sticky=*/true});
  // OUTBOARD_AUTO_RULE=flops: the fixed rule of before the model (the link at
  // OUTBOARD_LINK_GBYTES, FFTW at OUTBOARD_FFT_LOCAL_GFLOPS or 4).
  const double local_gflops = s.fft_local_gflops > 0 ? s.fft_local_gflops : 4;
  return 2 * s.latency_seconds + bytes / (s.link_gbytes * 1e9) < flops / (local_gflops * 1e9);
}

// Executions this large go in pieces: on the direct path where the server offers copy lanes,
// else in chunks.
bool goes_in_pieces(const Settings& s, const wire::FftShape& shape) {
  const uint64_t chunk = static_cast<uint64_t>(s.chunk_bytes);
  return chunk && wire::input_bytes(shape) >= 2 * chunk;
}

// A batch of transforms of at least OUTBOARD_SPLIT_FFT_BYTES of input, dense on both sides, goes
// over several idle servers (the workers of a host's GPUs, or several servers): a plan for each
// server's share of the batch, announced there now, so that each is ready by the first execution
// (as any plan). One server process moves data at a bounded rate; the shares move at once.
bool spread_plan(Runtime& rt, RemoteFft& p) {
  const Settings& s = rt.settings();
  const FftLayout& l = p.layout;
  if (s.split_servers < 2 || l.shape.batch < 2 || !l.in.dense || !l.out.dense || l.in.split || l.out.split ||
      double(wire::input_bytes(l.shape)) < s.split_fft_bytes)
    return false;
  std::string why;
  std::vector<Runtime::Lease> leases =
      rt.spread(std::min<size_t>(static_cast<size_t>(s.split_servers), static_cast<size_t>(l.shape.batch)), why);
  if (leases.size() < 2) return false;
  const int64_t parts = static_cast<int64_t>(leases.size()), batch = l.shape.batch;
  const uint64_t next_id = g_next_plan.fetch_add(uint64_t(parts));  // the shares' plan ids
  for (int64_t i = 0; i < parts; ++i) {
    FftLayout share = l;
    const int64_t first = batch * i / parts, count = batch * (i + 1) / parts - first;
    share.shape.batch = count;
    share.in.elements = l.in.elements / batch * count;
    share.out.elements = l.out.elements / batch * count;
    auto part = std::make_unique<RemoteFft>(std::move(share), next_id + uint64_t(i), p.routine);
    try {
      part->announce(*leases[i].conn, leases[i].conn);
      if (s.direct && goes_in_pieces(s, part->layout.shape)) leases[i].conn->ask_direct_lanes(s.direct_cma);
    } catch (const Error&) {
      for (auto& made : p.parts) made->release();
      p.parts.clear(), p.first.clear();
      return false;  // the plan goes the usual way
    }
    p.parts.push_back(std::move(part));
    p.first.push_back(first);
  }
  p.first.push_back(batch);
  return true;
}

}  // namespace

RemoteFft* fft_plan(const FftGuru& g) noexcept {
  std::string name = routine_name(g.precision, g.kind);
  RemoteFft* plan = nullptr;
  guarded(name, [&] {
    Runtime& rt = runtime();
    const Settings& s = rt.settings();
    if (s.offload == OffloadMode::never) return false;
    std::optional<FftLayout> layout = fft_layout(g);
    if (!layout) return false;  // a problem no server runs (rank 0, say): local
    if (s.offload == OffloadMode::automatic && !worth_remote(rt, name, layout->shape)) return false;
    auto p = std::make_unique<RemoteFft>(std::move(*layout), g_next_plan.fetch_add(1), name);
    // Spread: the shares' plans are made; the whole plan is announced where an execution that is
    // not spread first goes.
    if (spread_plan(rt, *p)) {
      plan = p.release();
      return true;
    }
    return on_servers(rt, name, [&](const std::shared_ptr<Connection>& conn, const FallBack& fall_back) {
      try {
        p->announce(*conn, conn);
        if (s.direct && goes_in_pieces(s, p->layout.shape)) conn->ask_direct_lanes(s.direct_cma);
      } catch (const Error& e) {
        return fall_back(e.what());
      }
      plan = p.release();
      return true;
    });
  });
  return plan;
}

namespace {

// The shares of a spread plan, each on its server at once, where the arrays allow (the output not
// the input: a failed share leaves the input intact for the local rerun of the whole) and every
// share's server is alive and idle; nullopt where not (the whole execution goes the usual way).
// False when a share could not run anywhere: the caller runs the whole transform locally.
std::optional<bool> execute_parts(RemoteFft& p, const FftArrays& a) {
  const bool in_place = a.out_re == a.in_re;
  if (p.parts.empty() || in_place) return std::nullopt;
  for (auto& part : p.parts) {
    const std::shared_ptr<Connection> c = part->server();
    if (!c || !c->idle_but_for_us()) return std::nullopt;
  }
  const uint64_t in_each = wire::input_bytes_per_transform(p.layout.shape);
  const uint64_t out_each = wire::output_bytes_per_transform(p.layout.shape);
  std::vector<char> ran(p.parts.size(), 0);
  auto run = [&](size_t i) {
    const uint64_t first = uint64_t(p.first[i]);
    FftArrays share{static_cast<const std::byte*>(a.in_re) + first * in_each, nullptr,
                    static_cast<std::byte*>(a.out_re) + first * out_each, nullptr};
    ran[i] = fft_execute(p.parts[i].get(), share);
  };
  run_at_once(p.parts.size(), run);
  return std::all_of(ran.begin(), ran.end(), [](char r) { return r != 0; });
}

}  // namespace

bool fft_execute(RemoteFft* p, const FftArrays& a) noexcept {
  if (!p) return false;
  if (!p->parts.empty()) {
    try {
      if (std::optional<bool> spread = execute_parts(*p, a)) return *spread;
    } catch (const std::exception&) {  // a thread could not be started, say: the usual way
    }
  }
  std::string name = p->routine;
  return guarded(name, [&] {
    Runtime& rt = runtime();
    const Settings& settings = rt.settings();
    // On the server that knows the plan while it is healthy; elsewhere it is announced first.
    const std::shared_ptr<Connection> known = p->server();
    return on_servers(rt, name, [&](const std::shared_ptr<Connection>& conn, const FallBack& fall_back) {
      const FftLayout& l = p->layout;
      const uint64_t in_bytes = wire::input_bytes(l.shape), out_bytes = wire::output_bytes(l.shape);
      const uint64_t t0 = now_ns();
      try {
        p->announce(*conn, conn);
      } catch (const Error& e) {
        return fall_back(e.what());
      }
      // The input as it travels: the program's array itself where it is dense.
      transport::Buffer packed;
      const void* input = a.in_re;
      if (!l.in.dense) {
        packed = transport::Buffer::allocate(in_bytes);
        gather_input(l, a, packed.data(), 0, l.in.elements);
        input = packed.data();
      }
      // The result lands in the program's output where that is dense and not the input (which a
      // local rerun after a failure still needs); otherwise aside, scattered on success.
      const bool in_place = a.out_re == a.in_re || (a.out_im && a.out_im == a.in_im);
      const bool straight = l.out.dense && !in_place;
      transport::Buffer result = straight ? transport::Buffer::borrow(a.out_re, out_bytes) : transport::Buffer::allocate(out_bytes);
      // Large executions: on the direct path where the server offers copy lanes (it copies the input
      // out of this process's memory and the result into it, in parallel), else in chunks.
      const uint64_t chunk = static_cast<uint64_t>(settings.chunk_bytes);
      const bool large = goes_in_pieces(settings, l.shape);
      bool direct = false;
      std::vector<transport::Registration> registered;
      wire::Message reply;
      uint64_t t1 = 0;
      try {
        direct = large && settings.direct && conn->direct_lanes(settings.timeout_seconds, settings.direct_cma) > 0;
        t1 = now_ns();
        if (direct) {
          registered.push_back(conn->register_memory(const_cast<void*>(input), in_bytes));
          registered.push_back(conn->register_memory(result.data(), out_bytes));
          reply = conn->request(wire::DirectFft{0, p->id, l.shape, {registered[0].key(), registered[1].key()},
                                                {{reinterpret_cast<uint64_t>(input), in_bytes, 0}},
                                                {{reinterpret_cast<uint64_t>(result.data()), out_bytes, 1}}},
                                {}, nullptr, 0, settings.timeout_seconds);
        }
      } catch (const Error& e) {
        return fall_back(e.what());
      }
      // An input the server holds from an earlier execution (the same bytes) is not sent again;
      // such an execution goes whole.
      const std::vector<transport::Segment> input_segment{{input, in_bytes}};
      auto plan = [&] {
        return direct ? ResidentPlan{} : plan_resident(conn->resident(), settings, input_segment, -1, in_bytes + out_bytes);
      };
      // The output's digest (FftExecute::output_digest) is taken beside the input's where the
      // plan's last execution named a resident input, and after it otherwise, once the input
      // proves held. Either way before the request leaves: the result may land in the output.
      std::optional<Digest> output_digest;
      const unsigned threads = digest_threads(settings);
      std::future<Digest> output_digest_beside;
      if (straight && !direct && settings.resident && p->resident_last.load(std::memory_order_relaxed)) try {
          output_digest_beside = std::async(std::launch::async, [&] { return content_digest(a.out_re, out_bytes, threads); });
        } catch (const std::system_error&) {  // no thread to be had: taken after the input's, if needed
        }
      ResidentPlan resident = plan();
      if (output_digest_beside.valid()) output_digest = output_digest_beside.get();
      p->resident_last.store(resident.any(), std::memory_order_relaxed);
      const bool chunked = large && !direct && !resident.any();
      bool output_known = false;
      auto* r = static_cast<wire::FftReply*>(nullptr);
      try {
        if (direct)
          ;  // answered above
        else if (chunked)
          reply = conn->chunked_request(
              wire::FftChunk{0, p->id, l.shape, in_bytes, chunk, 0}, input_segment,
              [&result](uint64_t offset, uint64_t) { return result.data() + offset; }, out_bytes,
              settings.timeout_seconds, static_cast<unsigned>(settings.chunk_window));
        else
          for (bool again = true;; again = false) {
            wire::FftExecute q{0, p->id, l.shape, resident.payload_bytes, resident.inputs};
            // The same execution again on a held input: the program's output likely holds its
            // result already, which then need not come back (its digest is the proof, as the
            // input's is).
            if (straight && resident.any() && resident.inputs[0].use) {
              if (!output_digest) output_digest = content_digest(a.out_re, out_bytes, threads);
              q.output_known = true;
              q.output_digest = *output_digest;
            }
            output_known = q.output_known;
            reply = conn->request(std::move(q), resident.payload, result.data(), out_bytes, settings.timeout_seconds);
            r = std::get_if<wire::FftReply>(&reply);
            // The server no longer holds the input (its other limits evicted it): once more, sent.
            if (!again || !r || r->ok || r->message != wire::kResidentMissing) break;
            conn->resident().forget(resident.inputs);
            resident = plan();
          }
      } catch (const Error& e) {
        return fall_back(e.what());
      }
      const uint64_t t2 = now_ns();
      r = std::get_if<wire::FftReply>(&reply);
      const bool unchanged = r && r->output_unchanged;  // the output holds the result already
      if (!r || !r->ok || r->payload_bytes != (chunked || direct || unchanged ? 0 : out_bytes) || (unchanged && !output_known))
        return fall_back(r && !r->ok ? "server: " + r->message : std::string("unexpected reply"));
      if (!straight) scatter_output(l, result.data(), a, 0, l.out.elements);
      rt.remote_succeeded(t0);
      account(rt, name, p->label, *r, {t0, t1, t2, now_ns()}, chunked || direct ? in_bytes : resident.payload_bytes,
              unchanged ? 0 : out_bytes, model_flops(l.shape));
      return true;
    }, known.get());
  });
}

void fft_destroy(RemoteFft* p) noexcept {
  if (!p) return;
  try {
    p->release();
  } catch (...) {
  }
  delete p;
}

void fft_ran_locally(const FftGuru& g) noexcept {
  try {
    Runtime& rt = runtime();
    const std::string name = routine_name(g.precision, g.kind);
    const Settings& s = rt.settings();
    if (s.offload == OffloadMode::automatic && s.auto_rule == AutoRule::model) {
      // The execution the shim runs next is timed for the model, its work counted as a remote
      // one's (model_flops).
      std::vector<int64_t> sizes;
      double batch = 1;
      for (const FftIoDim& d : g.dims) sizes.push_back(d.n);
      for (const FftIoDim& d : g.howmany) batch *= double(d.n);
      const double flops = fft_work_flops(sizes, batch, g.kind != wire::FftKind::c2c);
      if (flops >= kMinRemoteFlops) LocalTiming::expect(name, flops);
    }
    rt.ran_locally(name);
  } catch (...) {
  }
}

}  // namespace outboard::client
