#include "client/opencl.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <future>
#include <mutex>
#include <optional>
#include <thread>

#include "client/call_trace.hpp"
#include "client/runtime_internal.hpp"
#include "common/call_log.hpp"
#include "common/clock.hpp"
#include "common/error.hpp"

namespace outboard::client::opencl {
namespace {

std::vector<transport::Segment> segments(Bytes b) {
  if (!b.data || b.size == 0) return {};
  return {{b.data, static_cast<size_t>(b.size)}};
}

Answer lost(const std::string& why) {
  Answer a;
  a.status = kLost;
  a.failure = why;
  return a;
}

class ChannelImpl final : public Channel {
 public:
  ChannelImpl(const ServerAddress& server, const Settings& settings, const Secret& secret)
      : address_(server.text()),
        host_(server.host),
        timeout_(settings.timeout_seconds),
        lanes_for_reads_(settings.cl_lanes != Settings::ClLanes::none),
        lanes_for_writes_(settings.cl_lanes == Settings::ClLanes::all) {
    conn_ = std::make_unique<Connection>(server, secret, Runtime::client_name(), settings.connect_timeout_seconds,
                                         settings.identity, settings.encrypt);
    conn_->set_ucx_copies_over_tcp(settings.direct_over_tcp);
    conn_->set_link_lanes(static_cast<unsigned>(settings.lanes));
    // Part of connecting: a server that stops answering meanwhile costs the connect timeout.
    Answer a = call_within(wire::ClGetPlatforms{}, settings.connect_timeout_seconds);
    if (a.status != 0) throw Error("server " + address_ + " did not describe its OpenCL platforms" +
                                   (a.failure.empty() ? "" : ": " + a.failure));
    snapshot_ = wire::decode_cl_snapshot(a.payload);
    if (call_trace::enabled()) {
      const Connection::ConnectSteps& t = conn_->connect_steps();
      call_trace::connected(address_, t.began, t.transport_ready, t.challenged, t.accepted, now_ns());
    }
    // Asked now, answered while the program sets up: its first large transfer finds the answer.
    if (settings.direct) {
      direct_cma_ = settings.direct_cma;
      conn_->ask_direct_lanes(*direct_cma_);
    }
    // Keeps notices and answers coming while no application thread waits on the channel (an
    // event callback must run even when the program only sleeps).
    std::thread([this] { drive(); }).detach();  // the channel lives as long as the process
  }

  const std::string& address() const override { return address_; }
  // The server's other processes (a worker per GPU), which show their platforms too.
  std::vector<ServerAddress> siblings() const {
    std::vector<ServerAddress> out;
    for (uint16_t port : conn_->siblings()) out.push_back({host_, port});
    return out;
  }
  const wire::ClSnapshot& platforms() const override { return snapshot_; }
  bool alive() const override { return conn_->alive(); }
  std::string failure() const override {
    std::lock_guard lk(mu_);
    return failure_;
  }
  double timeout() const override { return timeout_; }

  bool answers() override {
    try {
      probe(timeout_ > 0 ? timeout_ : kProbeSeconds);
      return true;
    } catch (const Error& e) {
      note_failure(e.what());
      return false;
    }
  }

  bool post(const wire::ClOp& op, Bytes data, bool wait_sent) override {
    try {
      in_order();
      if (lanes_for_writes_ && over_lanes(data.size)) {
        auto sent = std::make_shared<std::atomic<int>>(0);  // 0 pending, 1 sent, 2 failed
        auto send = [&](wire::ClRequest& r) { conn_->notify(std::move(r)); };
        send_over_lanes(wire::ClRequest{0, op}, data, send, [sent](bool ok) { *sent = ok ? 1 : 2; });
        if (!wait_sent) return true;  // the server runs the command once all of it is there
        await([&] { return sent->load() != 0; }, timeout_, "sending an OpenCL operation's data");
        return sent->load() == 1;
      }
      if (!wait_sent && data.size) {
        ++payloads_in_flight_;
        conn_->notify(wire::ClRequest{0, op, data.size}, segments(data), [this](bool) { --payloads_in_flight_; });
        return true;
      }
      if (!wait_sent) {
        conn_->notify(wire::ClRequest{0, op, data.size}, segments(data));
        return true;
      }
      auto sent = std::make_shared<std::atomic<int>>(0);  // 0 pending, 1 sent, 2 failed
      conn_->notify(wire::ClRequest{0, op, data.size}, segments(data), [sent](bool ok) { *sent = ok ? 1 : 2; });
      await([&] { return sent->load() != 0; }, timeout_, "sending an OpenCL operation");
      return sent->load() == 1;
    } catch (const Error& e) {
      note_failure(e.what());
      return false;
    }
  }

  Answer call(const wire::ClOp& op, Bytes data, void* into, uint64_t into_size) override {
    return call_within(op, timeout_, data, into, into_size);
  }

  void call_async(const wire::ClOp& op, Bytes data, void* into, uint64_t into_size,
                  std::function<void(Answer&)> done) override {
    // Shared: a send refused at once still has `done` to answer with.
    auto answer = std::make_shared<std::function<void(Answer&)>>(std::move(done));
    try {
      in_order();
      send_async(op, data, into, into_size, [answer](Answer& a) { (*answer)(a); });
    } catch (const Error& e) {
      note_failure(e.what());
      Answer a = lost(e.what());
      (*answer)(a);
    }
  }

  bool direct() override {
    if (!direct_cma_.has_value()) return false;
    std::lock_guard lk(direct_mu_);
    if (!lanes_) {
      try {
        lanes_ = conn_->direct_lanes(timeout_ > 0 ? timeout_ : kProbeSeconds, *direct_cma_);
      } catch (const Error& e) {
        note_failure(e.what());
        lanes_ = 0;
      }
    }
    return *lanes_ > 0;
  }

  std::shared_ptr<const std::vector<std::byte>> register_memory(void* data, uint64_t bytes) override {
    // The key lives as long as the registration: one object holds both.
    struct Held {
      transport::Registration registration;
      std::vector<std::byte> key;
    };
    try {
      auto held = std::make_shared<Held>();
      held->registration = conn_->register_memory(data, static_cast<size_t>(bytes));
      held->key = held->registration.key();
      return std::shared_ptr<const std::vector<std::byte>>(held, &held->key);
    } catch (const Error&) {
      return nullptr;
    }
  }

  void set_notice_handler(std::function<void(const wire::ClNotice&)> handler) override {
    // Kept by the connection, under its lock: the progress thread may be delivering notices.
    conn_->set_notice_handler([handler = std::move(handler)](const wire::Message& m) {
      handler(std::get<wire::ClNotice>(m));
    });
  }

  void on_failure(std::function<void(const std::string&)> done) override {
    std::unique_lock lk(mu_);
    if (!failure_.empty()) {
      std::string why = failure_;
      lk.unlock();
      done(why);
      return;
    }
    failure_handlers_.push_back(std::move(done));
  }

 private:
  // How long answers() waits where no timeout is set.
  static constexpr double kProbeSeconds = 30;

  // call(), the server silent for at most `silence` seconds (await()).
  Answer call_within(const wire::ClOp& op, double silence, Bytes data = {}, void* into = nullptr,
                     uint64_t into_size = 0) {
    struct Slot {
      bool done = false;
      Answer answer;
      call_trace::CallTimes times;
    };
    auto slot = std::make_shared<Slot>();
    const bool traced = call_trace::enabled();
    try {
      in_order();
      if (traced) slot->times.sent_ns = now_ns();
      send_async(op, data, into, into_size, [slot, traced](Answer& a) {
        if (traced) {
          slot->times.received_ns = now_ns();
          slot->times.arrived_ns = trace::last_arrival_ns;
          slot->times.call_id = a.call_id;
        }
        slot->answer = std::move(a);
        slot->done = true;
      });
      if (traced) slot->times.posted_ns = now_ns();
      await([&] { return slot->done; }, silence, "waiting for an OpenCL answer");
      if (traced) call_trace::record(wire::op_name(op), slot->times);
    } catch (const Error& e) {
      note_failure(e.what());
      if (!slot->done) return lost(e.what());
    }
    return std::move(slot->answer);
  }

  // Waits until done(). Each time `silence` seconds (0: no limit) pass, the server is asked
  // whether it still answers, with a ping its core answers at once (not the session's thread,
  // which may be waiting for the device): an operation may take long, but a server that does not
  // answer the ping within `silence` is lost (the connection fails). Throws Error when it fails.
  void await(const std::function<bool()>& done, double silence, const char* what) {
    if (silence <= 0) return conn_->wait_until(done, 0, what);
    for (;;) {
      const uint64_t deadline = now_ns() + static_cast<uint64_t>(silence * 1e9);
      bool expired = false;
      // The condition is checked after every event and at least every 50 ms while idle.
      conn_->wait_until([&] { return done() || (expired = now_ns() > deadline); }, 0, what);
      if (!expired) return;
      probe(silence);
    }
  }

  // Keeps the server's order of operations the order they were posted in. The server's transport
  // hands over a message whose payload comes by rendezvous only once the payload has landed, so a
  // later message without payload would overtake it (a kernel would run before the write ahead of
  // it): nothing is sent while such a payload is on its way. Its send is complete once the server
  // has taken it, before anything sent later can reach the server.
  void in_order() {
    if (payloads_in_flight_.load() == 0) return;
    await([&] { return payloads_in_flight_.load() == 0; }, timeout_, "sending an earlier OpenCL operation's data");
  }

  // A round trip the server's core answers; no answer within `silence` fails the connection.
  void probe(double silence) {
    wire::Message pong = conn_->request(wire::Ping{}, {}, nullptr, 0, silence);
    if (!std::holds_alternative<wire::Pong>(pong)) throw Error("the server answered a ping with something else");
  }

  // Large data across a link travels over the session's lanes (Connection::bulk_over_lanes), a
  // few connections at once, not in the queue's order on this one: the server holds the command
  // until all of it has come. Below kLaneMinBytes one message is quicker.
  static constexpr uint64_t kLaneMinBytes = 1 << 20;
  bool over_lanes(uint64_t bytes) {
    if (bytes < kLaneMinBytes) return false;
    std::call_once(lanes_asked_, [&] { bulk_over_lanes_ = conn_->bulk_over_lanes(); });
    return bulk_over_lanes_;
  }
  // Chunks spread over the lanes: about one per lane, 256 KiB to 4 MiB each.
  uint64_t lane_chunk_bytes(uint64_t bytes) {
    const uint64_t lanes = std::max(1u, conn_->link_lanes_in_use() - 1);
    return std::clamp<uint64_t>((bytes + lanes - 1) / lanes, 256 << 10, 4 << 20);
  }
  // Sends `r` (by send(), naming its data as a transfer) and `data` over the lanes; sent(ok) once
  // the data has left. Transfer ids must reach the server increasing: a number and its request
  // go out together.
  void send_over_lanes(wire::ClRequest r, Bytes data, const std::function<void(wire::ClRequest&)>& send,
                       std::function<void(bool)> sent) {
    std::lock_guard lk(transfer_mu_);
    const uint64_t transfer = ++last_transfer_;
    r.payload_bytes = 0;
    r.lane_transfer = transfer;
    r.lane_bytes = data.size;
    send(r);
    conn_->send_lane_data(transfer, data.data, data.size, lane_chunk_bytes(data.size), std::move(sent));
  }

  // The caller keeps `data` until `done` runs (the answer comes after the server has all of it).
  void send_async(const wire::ClOp& op, Bytes data, void* into, uint64_t into_size,
                  std::function<void(Answer&)> done) {
    wire::ClRequest request{0, op, data.size};
    request.reply_over_lanes = into && lanes_for_reads_ && over_lanes(into_size);
    auto answered = [done = std::move(done), into](wire::Message* m, transport::Buffer* payload,
                                                   const std::string& why) {
      if (!m) {
        Answer a = lost(why);
        done(a);
        return;
      }
      auto* r = std::get_if<wire::ClReply>(m);
      Answer a;
      if (!r) {
        a = lost("the server answered an OpenCL operation with something else");
      } else {
        a.status = r->status;
        a.call_id = r->call_id;
        a.data = std::move(r->data);
        if (payload && r->payload_bytes && !into) a.payload.assign(payload->data(), payload->data() + r->payload_bytes);
      }
      done(a);
    };
    if (lanes_for_writes_ && over_lanes(data.size)) {
      auto send = [&](wire::ClRequest& r) {
        conn_->request_async(std::move(r), {}, into, into_size, std::move(answered));
      };
      return send_over_lanes(request, data, send, {});
    }
    conn_->request_async(request, segments(data), into, into_size, std::move(answered));
  }

  void drive() {
    try {
      conn_->drive_in_background("serving OpenCL notices");
    } catch (const Error& e) {
      note_failure(e.what());
    }
  }

  void note_failure(const std::string& why) {
    std::vector<std::function<void(const std::string&)>> handlers;
    {
      std::lock_guard lk(mu_);
      if (!failure_.empty()) return;
      failure_ = why.empty() ? "connection lost" : why;
      handlers.swap(failure_handlers_);
    }
    for (auto& h : handlers) h(failure_);
  }

  const std::string address_;
  const std::string host_;  // as the program named it: the server's siblings are found there
  const double timeout_;
  const bool lanes_for_reads_, lanes_for_writes_;  // Settings::cl_lanes
  std::atomic<uint64_t> payloads_in_flight_{0};
  std::once_flag lanes_asked_;
  bool bulk_over_lanes_ = false;  // set once, at the first large transfer (over_lanes)
  std::mutex transfer_mu_;
  uint64_t last_transfer_ = 0;  // the last transfer id sent (ClRequest::lane_transfer)
  std::optional<bool> direct_cma_;  // set: lanes were asked for (with CMA or not)
  std::mutex direct_mu_;
  std::optional<uint32_t> lanes_;  // the answer, once taken  // posted without waiting, send not complete (in_order)
  std::unique_ptr<Connection> conn_;
  wire::ClSnapshot snapshot_;
  mutable std::mutex mu_;
  std::string failure_;
  std::vector<std::function<void(const std::string&)>> failure_handlers_;
};

}  // namespace

const std::vector<std::shared_ptr<Channel>>& opencl_channels(std::vector<std::string>* errors) {
  // Made once, never destroyed: OpenCL objects may be released from other libraries' destructors.
  static std::vector<std::string>* first_errors = new std::vector<std::string>();
  static auto* channels = [] {
    auto* out = new std::vector<std::shared_ptr<Channel>>();
    const Settings& settings = runtime().settings();
    Secret secret;
    try {
      secret = read_secret(settings.token_file);
    } catch (const Error& e) {
      first_errors->push_back(e.what());
      return out;
    }
    // In parallel: an unreachable server costs the connect timeout once, not once per server.
    // Then the servers' other processes they named (a worker per GPU), once each.
    auto connect_all = [&](const std::vector<ServerAddress>& servers) {
      std::vector<std::future<std::shared_ptr<ChannelImpl>>> pending;
      for (const ServerAddress& s : servers)
        pending.push_back(std::async(std::launch::async, [&settings, &secret, s] {
          return std::make_shared<ChannelImpl>(s, settings, secret);
        }));
      std::vector<std::shared_ptr<ChannelImpl>> made;
      for (auto& f : pending) {
        try {
          made.push_back(f.get());
        } catch (const std::exception& e) {
          first_errors->push_back(e.what());
        }
      }
      return made;
    };
    std::vector<std::string> known;
    for (const ServerAddress& s : settings.servers) known.push_back(s.text());
    std::vector<ServerAddress> siblings;
    for (auto& c : connect_all(settings.servers)) {
      for (const ServerAddress& s : c->siblings())
        if (std::find(known.begin(), known.end(), s.text()) == known.end()) {
          known.push_back(s.text());
          siblings.push_back(s);
        }
      out->push_back(std::move(c));
    }
    for (auto& c : connect_all(siblings)) out->push_back(std::move(c));
    return out;
  }();
  if (errors) *errors = *first_errors;
  return *channels;
}

}  // namespace outboard::client::opencl
