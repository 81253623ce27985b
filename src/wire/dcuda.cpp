#include "wire/dcuda.hpp"

#include "common/error.hpp"
#include "wire/codec.hpp"

namespace outboard::wire::dcuda {
namespace {

// Strings are checked against their limit on the way out too: a peer would refuse them.
std::string clipped(const std::string& s, size_t limit) { return s.size() <= limit ? s : s.substr(0, limit); }

struct Encoder {
  Writer& w;
  void operator()(const Hello& m) { w.u32(m.process), w.str(clipped(m.key, kMaxKey)); }
  void operator()(const Put& m) {
    w.u32(m.op), w.u32(m.source), w.u32(m.target), w.u32(m.seq), w.u32(m.window), w.u32(m.tag);
    w.u64(m.offset), w.u64(m.bytes);
  }
  void operator()(const Ack& m) { w.u32(m.source), w.u32(m.seq); }
  void operator()(const Refused& m) { w.u32(m.source), w.u32(m.seq), w.str(clipped(m.reason, kMaxReason)); }
  void operator()(const Arrive& m) { w.u32(m.generation), w.u32(m.windows); }
  void operator()(const Finished&) {}
  void operator()(const Error& m) { w.str(clipped(m.reason, kMaxReason)); }
  void operator()(const Welcome&) {}
  void operator()(const Window& m) {
    w.u32(m.rank), w.u32(m.window), w.u64(m.offset), w.u64(m.bytes), w.u64(m.allocation_bytes);
    w.bytes(m.handle);
  }
};

}  // namespace

void encode(const Message& m, std::vector<std::byte>& out) {
  out.clear();
  Writer w(out);
  w.u32(kMagic);
  w.u16(kVersion);
  w.u16(static_cast<uint16_t>(m.index() + 1));  // Kind follows the variant's order
  std::visit(Encoder{w}, m);
}

Message decode(std::span<const std::byte> in) {
  Reader r(in);
  if (r.u32() != kMagic) throw ProtocolError("not a dcuda proxy message (bad magic)");
  if (uint16_t v = r.u16(); v != kVersion)
    throw ProtocolError("dcuda proxy protocol version " + std::to_string(v) + ", expected " + std::to_string(kVersion));
  Message m;
  switch (static_cast<Kind>(r.u16())) {
    case Kind::hello: {
      Hello h;
      h.process = r.u32(), h.key = r.str(kMaxKey);
      m = h;
      break;
    }
    case Kind::put: {
      Put p;
      p.op = r.u32(), p.source = r.u32(), p.target = r.u32(), p.seq = r.u32(), p.window = r.u32(), p.tag = r.u32();
      p.offset = r.u64(), p.bytes = r.u64();
      m = p;
      break;
    }
    case Kind::ack: {
      Ack a;
      a.source = r.u32(), a.seq = r.u32();
      m = a;
      break;
    }
    case Kind::refused: {
      Refused f;
      f.source = r.u32(), f.seq = r.u32(), f.reason = r.str(kMaxReason);
      m = f;
      break;
    }
    case Kind::arrive: {
      Arrive a;
      a.generation = r.u32(), a.windows = r.u32();
      m = a;
      break;
    }
    case Kind::window: {
      Window v;
      v.rank = r.u32(), v.window = r.u32(), v.offset = r.u64(), v.bytes = r.u64(), v.allocation_bytes = r.u64();
      r.bytes(v.handle);
      m = v;
      break;
    }
    case Kind::finished: m = Finished{}; break;
    case Kind::error: m = Error{r.str(kMaxReason)}; break;
    case Kind::welcome: m = Welcome{}; break;
    default: throw ProtocolError("unknown dcuda proxy message kind");
  }
  r.expect_end();
  return m;
}

}  // namespace outboard::wire::dcuda
