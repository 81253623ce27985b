// A server that fails every FFT execution after part of its result has landed in the client, for
// the failure tests: it authenticates clients as a real server does, then answers a whole
// FftExecute with ok=false and a full-size payload of garbage, and a chunked one (FftChunks) with
// ReplyChunks of garbage over the first half of the output, then ok=false. A client must run the
// transform locally on its untouched input: in-place transforms too (their remote result lands
// aside, never in the array that is also the input).
//
//   half_reply_server SECRET_FILE PORT_FILE
// Listens on 127.0.0.1 (a free port, written to PORT_FILE) until killed.
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <string>

#include "common/secret.hpp"
#include "transport/transport.hpp"
#include "wire/messages.hpp"

using namespace outboard;

namespace {

struct Peer {
  Nonce client_nonce{}, server_nonce{};
  bool ready = false;
  std::map<uint64_t, uint64_t> chunks_in;  // call id -> chunks arrived
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: half_reply_server SECRET_FILE PORT_FILE\n");
    return 2;
  }
  const Secret secret = read_secret(argv[1]);
  std::map<transport::PeerId, Peer> peers;
  std::unique_ptr<transport::Worker> worker;
  auto send = [&](transport::PeerId id, const wire::Message& m, std::shared_ptr<std::vector<std::byte>> data = nullptr,
                  size_t offset = 0, size_t bytes = 0) {
    std::vector<transport::Segment> payload;
    if (data && bytes) payload.push_back({data->data() + offset, bytes});
    worker->send(id, wire::encode(m), std::move(payload), [data](bool) {});
  };
  auto garbage = [](uint64_t bytes) { return std::make_shared<std::vector<std::byte>>(bytes, std::byte{0x41}); };

  transport::Events ev;
  ev.on_connect = [&](transport::PeerId id, const std::string&) { peers[id] = Peer{}; };
  ev.on_disconnect = [&](transport::PeerId id, const std::string&) { peers.erase(id); };
  ev.on_payload = [](transport::PeerId, std::span<const std::byte>, uint64_t n) {
    return transport::Landing::receive(transport::Buffer::allocate(n));
  };
  ev.on_message = [&](transport::PeerId id, std::vector<std::byte> h, transport::Buffer, bool) {
    Peer& p = peers[id];
    wire::Message m;
    try {
      m = wire::decode(h);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "half_reply_server: undecodable message: %s\n", e.what());
      return;
    }
    if (auto* hello = std::get_if<wire::Hello>(&m)) {
      p.client_nonce = hello->client_nonce;
      p.server_nonce = random_nonce();
      send(id, wire::Challenge{p.server_nonce, wire::server_proof(secret, p.client_nonce, p.server_nonce), "half_reply_server"});
    } else if (auto* auth = std::get_if<wire::Auth>(&m)) {
      p.ready = macs_equal(auth->client_proof, wire::client_proof(secret, p.server_nonce, p.client_nonce));
      send(id, wire::AuthResult{p.ready, p.ready ? "welcome" : "wrong secret"});
    } else if (!p.ready) {
      send(id, wire::ErrorMessage{"not authenticated"});
    } else if (auto* q = std::get_if<wire::FftExecute>(&m)) {
      const uint64_t out = wire::output_bytes(q->shape);
      std::printf("half_reply_server: whole %s: failing with %llu bytes of garbage\n", wire::shape_name(q->shape).c_str(),
                  (unsigned long long)out);
      send(id, wire::FftReply{q->call_id, false, "half_reply_server fails every execution", out, 0, 0, 0, 0, 0, 0, ""},
           garbage(out), 0, out);
    } else if (auto* c = std::get_if<wire::FftChunk>(&m)) {
      if (++p.chunks_in[c->call_id] < wire::chunk_count(c->payload_bytes, c->chunk_bytes)) return;
      p.chunks_in.erase(c->call_id);
      const uint64_t out = wire::output_bytes(c->shape), half = out / 2;
      std::printf("half_reply_server: chunked %s: failing after %llu of %llu result bytes\n",
                  wire::shape_name(c->shape).c_str(), (unsigned long long)half, (unsigned long long)out);
      auto junk = garbage(half);
      for (uint64_t at = 0; at < half; at += c->chunk_bytes) {
        const uint64_t n = std::min(c->chunk_bytes, half - at);
        send(id, wire::ReplyChunk{c->call_id, at, n}, junk, at, n);
      }
      send(id, wire::FftReply{c->call_id, false, "half_reply_server fails every execution after half its result", 0, 0, 0,
                              0, 0, 0, 0, ""});
    } else if (auto* s = std::get_if<wire::StatusRequest>(&m)) {
      send(id, wire::StatusReply{s->call_id, "{}"});
    } else if (auto* l = std::get_if<wire::LanesRequest>(&m)) {  // no direct path: large calls come in chunks
      send(id, wire::LanesReply{l->call_id, 0, "half_reply_server has no copy lanes"});
    }  // plans and releases need no answer
    std::fflush(stdout);
  };
  worker = std::make_unique<transport::Worker>(std::move(ev));
  const uint16_t port = worker->listen("127.0.0.1", 0);
  std::ofstream(argv[2]) << port << "\n";
  for (;;)
    if (!worker->progress()) worker->wait(100);
}
