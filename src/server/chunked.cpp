#include "server/chunked.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "common/clock.hpp"
#include "server/direct.hpp"

namespace outboard::server {

using transport::Buffer;

ChunkedCall::ChunkedCall() = default;
ChunkedCall::~ChunkedCall() = default;

transport::Landing ChunkedCalls::land(Session& s, uint64_t call_id, uint64_t index, std::vector<std::byte> shape_bytes,
                                      uint64_t payload_bytes, uint64_t chunk_bytes, uint64_t offset, uint64_t bytes,
                                      const SetUp& set_up) {
  std::shared_ptr<ChunkedCall> cc;
  if (auto it = s.chunked.find(call_id); it != s.chunked.end()) {
    if (it->second->shape_bytes != shape_bytes) throw ProtocolError("chunk does not match the rest of its call");
    cc = it->second;
  } else {
    if (s.chunked.size() >= kMaxPerSession) throw ProtocolError("too many chunked calls in progress");
    cc = create(s, call_id, payload_bytes, chunk_bytes);
    set_up(*cc);
    cc->shape_bytes = std::move(shape_bytes);
    admit(s, cc);
  }
  if (index >= cc->chunk_state.size()) throw ProtocolError("chunk " + std::to_string(index) + " is past its call's end");
  uint8_t& state = cc->chunk_state[index];
  if (state != 0) throw ProtocolError("chunk " + std::to_string(index) + " sent twice");
  state = 1;
  return transport::Landing::receive(Buffer::borrow(cc->staging.data() + offset, bytes, cc));
}

std::shared_ptr<ChunkedCall> ChunkedCalls::create(Session& s, uint64_t call_id, uint64_t payload_bytes,
                                                  uint64_t chunk_bytes) {
  auto cc = std::make_shared<ChunkedCall>();
  cc->peer = s.peer;
  cc->call_id = call_id;
  cc->payload_bytes = payload_bytes;
  cc->chunk_bytes = chunk_bytes;
  cc->chunk_state.assign(wire::chunk_count(payload_bytes, chunk_bytes), 0);
  cc->first_ns = now_ns();
  return cc;
}

void ChunkedCalls::admit(Session& s, const std::shared_ptr<ChunkedCall>& cc) {
  s.held_bytes += cc->staging_bytes;
  s.chunked[cc->call_id] = cc;
  ++active_;
}

void ChunkedCalls::stage(Session& s, ChunkedCall& cc, uint64_t bytes, const Backend& backend) {
  core_.check_limits(s, bytes);
  core_.admit_call(s);
  cc.staging = Buffer::allocate(bytes, backend.staging());
  cc.staging_bytes = bytes;
  cc.setup_ns = now_ns() - cc.first_ns;
}

std::unique_ptr<Pipeline> ChunkedCalls::offered(const Backend& backend,
                                                const std::function<std::unique_ptr<Pipeline>()>& make) {
  try {
    return make();
  } catch (const std::exception& e) {
    spdlog::warn("call.pipeline_unavailable backend={} error=\"{}\"", backend.name(), e.what());
    return nullptr;
  }
}

std::function<void()> ChunkedCalls::wake() {
  return [&worker = core_.worker()] { worker.signal(); };
}

void ChunkedCalls::on_chunk(Session& s, uint64_t call_id, uint64_t index) {
  auto it = s.chunked.find(call_id);
  if (it == s.chunked.end()) return core_.reject(s.peer, "chunk of an unknown call");
  ChunkedCall& cc = *it->second;
  // The index is the message's: a chunk of another kind of call with this id (an FFT chunk naming a
  // Level-3 call's id, say) may name one past this call's chunks (found by fuzz_session: a read
  // past chunk_state).
  if (cc.direct || index >= cc.chunk_state.size() || cc.chunk_state[index] != 1)
    return core_.reject(s.peer, "chunk arrived without being announced");
  chunk_arrived(s, cc, index);
}

void ChunkedCalls::chunk_arrived(Session& s, ChunkedCall& cc, uint64_t index) {
  cc.chunk_state[index] = 2;
  ++cc.arrived;
  while (cc.prefix_chunks < cc.chunk_state.size() && cc.chunk_state[cc.prefix_chunks] == 2) ++cc.prefix_chunks;
  if (cc.arrived == cc.chunk_state.size()) {
    cc.last_ns = now_ns();
    s.bytes_in += cc.payload_bytes - cc.held_bytes;
  }
  if (!cc.error.empty()) return;
  try {
    cc.pipe->input(std::min(cc.prefix_chunks * cc.chunk_bytes, cc.payload_bytes));
  } catch (const std::exception& e) {
    fail(cc, e.what());
  }
}

void ChunkedCalls::fail(ChunkedCall& cc, const std::string& why) {
  if (cc.error.empty()) cc.error = why.empty() ? "call failed" : why;
  cc.pipe.reset();  // waits for work still using the staging buffer
  if (cc.direct) core_.direct().drop_held(cc);
}

bool ChunkedCalls::progress(std::unordered_map<PeerId, Session>& sessions) {
  bool polling = false;
  for (auto& [peer, s] : sessions) {
    for (auto it = s.chunked.begin(); it != s.chunked.end();) {
      ChunkedCall& cc = *it->second;
      if (cc.fill && cc.fill->done()) {  // its held chunks are in
        cc.fill.reset();
        for (uint64_t index : cc.held) chunk_arrived(s, cc, index);
        cc.held.clear();
      }
      if (cc.pipe) {
        try {
          for (size_t index : cc.pipe->finished()) send_piece(s, it->second, index);
        } catch (const std::exception& e) {
          fail(cc, e.what());
        }
      }
      const bool all_in = cc.arrived == cc.chunk_state.size();
      const bool computed = cc.error.empty() && cc.pieces_done == cc.pieces.size();
      if (all_in && cc.sends_in_flight == 0 && (computed || !cc.error.empty())) {
        finish(s, cc);
        it = s.chunked.erase(it);
        --active_;
        continue;
      }
      if (cc.pipe && cc.pipe->needs_polling()) polling = true;
      ++it;
    }
  }
  return polling;
}

void ChunkedCalls::send_piece(Session& s, const std::shared_ptr<ChunkedCall>& call, size_t index) {
  ChunkedCall& cc = *call;
  const ResultPiece& p = cc.pieces.at(index);
  ++cc.pieces_done;
  if (p.bytes == 0 || s.state == State::closing) return;
  if (cc.direct) return core_.direct().send_piece(s, call, index);
  ++cc.sends_in_flight;
  s.bytes_out += p.bytes;
  const transport::Segment piece{cc.staging.data() + p.staging_offset, p.bytes};
  core_.worker().send(core_.bulk_peer(s), wire::encode(wire::ReplyChunk{cc.call_id, p.result_offset, p.bytes}), {&piece, 1},
                      [call](bool) { --call->sends_in_flight; });
}

void ChunkedCalls::finish(Session& s, ChunkedCall& cc) {
  CallOutcome o;
  o.ok = cc.error.empty();
  o.error = cc.error;
  if (cc.direct) core_.direct().finished(cc);
  o.setup_ns = cc.setup_ns;
  o.receive_ns = cc.last_ns - cc.first_ns;
  if (cc.pipe) {
    o.to_device_ns = cc.pipe->to_device_ns();
    o.compute_ns = cc.pipe->compute_ns();
    o.from_device_ns = cc.pipe->from_device_ns();
    o.info = cc.pipe->info();
  }
  const wire::Message reply = cc.answer(o);
  cc.pipe.reset();
  if (o.ok) keep_inputs(s, cc);
  spdlog::debug("call.pipelined peer={} call={} routine={} bytes_in={} pieces={} setup_ms={:.3f} receive_ms={:.3f} "
                "to_device_ms={:.3f} compute_ms={:.3f} from_device_ms={:.3f} total_ms={:.3f}",
                s.peer, cc.call_id, cc.name, cc.payload_bytes, cc.pieces.size(), cc.setup_ns / 1e6,
                o.receive_ns / 1e6, o.to_device_ns / 1e6, o.compute_ns / 1e6, o.from_device_ns / 1e6,
                (now_ns() - cc.first_ns) / 1e6);
  ++pipelined_calls_;
  core_.count_call(&s, s.peer, cc.call_id, cc.name, o.ok, cc.error);
  s.held_bytes -= std::min(s.held_bytes, cc.staging_bytes);
  if (s.state != State::closing) core_.send(s.peer, reply);
}

void ChunkedCalls::hold_inputs(Session& s, ChunkedCall& cc) {
  std::vector<uint64_t> start(cc.input_bytes.size() + 1, 0);  // each input's offset in the payload
  for (size_t i = 0; i < cc.input_bytes.size(); ++i) start[i + 1] = start[i] + cc.input_bytes[i];
  auto input_at = [&](uint64_t offset) {
    return static_cast<size_t>(std::upper_bound(start.begin(), start.end(), offset) - start.begin()) - 1;
  };
  const std::vector<bool> chunks = wire::held_chunks(cc.resident, cc.input_bytes, cc.payload_bytes, cc.chunk_bytes);
  std::vector<uint64_t> not_sent(cc.input_bytes.size(), 0);
  for (uint64_t k = 0; k < chunks.size(); ++k)
    if (chunks[k]) not_sent[input_at(k * cc.chunk_bytes)] += cc.chunk_bytes;
  std::vector<std::shared_ptr<const Buffer>> held(cc.input_bytes.size());
  bool missing = false;
  for (const wire::ResidentInput& x : cc.resident)
    if (x.use && !(held[x.input] = core_.resident(s).find(x.digest, cc.input_bytes[x.input], not_sent[x.input])))
      missing = true;
  std::vector<ResidentFill::Copy> copies;
  for (uint64_t k = 0; k < chunks.size(); ++k) {
    if (!chunks[k]) continue;
    cc.chunk_state[k] = 3;  // neither announced nor sent: filled here
    cc.held.push_back(k);
    cc.held_bytes += cc.chunk_bytes;
    const uint64_t offset = k * cc.chunk_bytes;
    const size_t i = input_at(offset);
    if (missing) continue;
    std::byte* to = cc.staging.data() + offset;
    const std::byte* from = held[i]->data() + (offset - start[i]);
    if (!copies.empty() && copies.back().to + copies.back().bytes == to && copies.back().from + copies.back().bytes == from)
      copies.back().bytes += cc.chunk_bytes;
    else
      copies.push_back({to, from, cc.chunk_bytes});
  }
  if (missing) {  // answered so once the chunks sent are in; the client sends the call again
    fail(cc, wire::kResidentMissing);
    for (uint64_t k : cc.held) chunk_arrived(s, cc, k);
    cc.held.clear();
    return;
  }
  if (copies.empty()) return;
  std::vector<std::shared_ptr<const Buffer>> sources;
  for (auto& h : held)
    if (h) sources.push_back(std::move(h));
  cc.fill = std::make_unique<ResidentFill>(std::move(copies), std::move(sources), wake());
}

void ChunkedCalls::keep_inputs(Session& s, ChunkedCall& cc) {
  std::vector<ResidentStore::Part> parts;
  uint64_t offset = 0;
  for (size_t i = 0; i < cc.input_bytes.size(); ++i) {
    for (const wire::ResidentInput& x : cc.resident)
      if (x.input == i && !x.use) parts.push_back({x.digest, offset, cc.input_bytes[i]});
    offset += cc.input_bytes[i];
  }
  if (parts.empty() || !cc.staging.data()) return;
  for (KeptInput& k : ResidentStore::parts_of(std::make_shared<Buffer>(std::move(cc.staging)), parts))
    core_.resident(s).keep(std::move(k));
}

}  // namespace outboard::server
