#include "wire/opencl.hpp"

#include <string>
#include <type_traits>

#include "common/error.hpp"
#include "wire/codec.hpp"
#include "wire/messages.hpp"

namespace outboard::wire {
namespace {

template <class T>
concept HasFields = requires(T t) { t.fields(); };

// One field's encoding, chosen by its type: the same list of types decodes it.
template <class T>
void put(Writer& w, const T& v) {
  if constexpr (std::is_same_v<T, bool>) {
    w.u8(v ? 1 : 0);
  } else if constexpr (std::is_integral_v<T> && sizeof(T) == 1) {
    w.u8(static_cast<uint8_t>(v));
  } else if constexpr (std::is_integral_v<T> && sizeof(T) == 4) {
    w.u32(static_cast<uint32_t>(v));
  } else if constexpr (std::is_integral_v<T> && sizeof(T) == 8) {
    w.u64(static_cast<uint64_t>(v));
  } else if constexpr (std::is_same_v<T, std::string>) {
    w.str(v);
  } else if constexpr (std::is_same_v<T, ClBlob>) {
    w.u32(static_cast<uint32_t>(v.size()));
    w.bytes({reinterpret_cast<const uint8_t*>(v.data()), v.size()});
  } else if constexpr (std::is_same_v<T, ClSizes>) {
    for (uint64_t x : v) w.u64(x);
  } else if constexpr (HasFields<T>) {
    std::apply([&](const auto&... f) { (put(w, f), ...); }, v.fields());
  } else {  // a vector of ids, words, strings or structs
    w.u32(static_cast<uint32_t>(v.size()));
    for (const auto& x : v) put(w, x);
  }
}

template <class T>
void get(Reader& r, T& v) {
  if constexpr (std::is_same_v<T, bool>) {
    uint8_t b = r.u8();
    if (b > 1) throw ProtocolError("a flag must be 0 or 1");
    v = b == 1;
  } else if constexpr (std::is_integral_v<T> && sizeof(T) == 1) {
    v = static_cast<T>(r.u8());
  } else if constexpr (std::is_integral_v<T> && sizeof(T) == 4) {
    v = static_cast<T>(r.u32());
  } else if constexpr (std::is_integral_v<T> && sizeof(T) == 8) {
    v = static_cast<T>(r.u64());
  } else if constexpr (std::is_same_v<T, std::string>) {
    v = r.str(kMaxClText);
  } else if constexpr (std::is_same_v<T, ClBlob>) {
    uint32_t n = r.u32();
    if (n > kMaxClBlob) throw ProtocolError("a byte string of " + std::to_string(n) + " bytes exceeds the limit");
    if (n > r.remaining()) throw ProtocolError("message truncated in a byte string");
    v.resize(n);
    r.bytes({reinterpret_cast<uint8_t*>(v.data()), n});
  } else if constexpr (std::is_same_v<T, ClSizes>) {
    for (uint64_t& x : v) x = r.u64();
  } else if constexpr (HasFields<T>) {
    std::apply([&](auto&... f) { (get(r, f), ...); }, v.fields());
  } else {
    uint32_t n = r.u32();
    if (n > kMaxClList) throw ProtocolError("a list of " + std::to_string(n) + " entries exceeds the limit");
    if (n > r.remaining()) throw ProtocolError("message truncated in a list");  // every entry takes >= 1 byte
    v.clear();
    v.resize(n);
    for (auto& x : v) get(r, x);
  }
}

template <size_t I = 0>
ClOp decode_op(Reader& r, uint16_t code) {
  if constexpr (I < std::variant_size_v<ClOp>) {
    if (code == I) {
      std::variant_alternative_t<I, ClOp> op;
      get(r, op);
      return op;
    }
    return decode_op<I + 1>(r, code);
  } else {
    throw ProtocolError("unknown OpenCL operation " + std::to_string(code));
  }
}

template <class T>
T decode_whole(std::span<const std::byte> bytes) {
  Reader r(bytes);
  T v;
  get(r, v);
  r.expect_end();
  return v;
}

template <class T>
std::vector<std::byte> encode_whole(const T& v) {
  std::vector<std::byte> out;
  Writer w(out);
  put(w, v);
  return out;
}

}  // namespace

const char* op_name(const ClOp& op) {
  static constexpr const char* kNames[] = {
      "get_platforms", "get_info", "create_context", "create_queue", "create_buffer", "create_sub_buffer",
      "create_image", "create_sampler", "get_image_formats", "create_program_source", "create_program_binary",
      "create_program_built_in", "build_program", "create_kernel", "clone_kernel", "create_user_event",
      "set_user_event_status", "release", "write", "read", "copy", "fill", "migrate", "ndrange", "marker",
      "finish", "flush", "create_sub_devices", "create_pipe", "create_program_il", "get_sub_group_info", "get_timers",
      "direct_read", "direct_write", "set_spec_constant"};
  static_assert(std::size(kNames) == std::variant_size_v<ClOp>);
  return kNames[op.index()];
}

void encode_body(Writer& w, const ClRequest& m) {
  w.u64(m.call_id);
  w.u64(m.payload_bytes);
  w.u64(m.lane_transfer);
  w.u64(m.lane_bytes);
  w.u8(m.reply_over_lanes);
  w.u16(static_cast<uint16_t>(m.op.index()));
  std::visit([&](const auto& op) { put(w, op); }, m.op);
}

void encode_body(Writer& w, const ClReply& m) {
  w.u64(m.call_id);
  w.u32(static_cast<uint32_t>(m.status));
  put(w, m.data);
  w.u64(m.payload_bytes);
  w.u64(m.lane_bytes);
}

void encode_body(Writer& w, const ClChunk& m) {
  for (uint64_t v : {m.transfer, m.payload_bytes, m.chunk_bytes, m.chunk_index}) w.u64(v);
}

void encode_body(Writer& w, const ClNotice& m) {
  w.u8(m.kind);
  w.u64(m.object);
  w.u32(static_cast<uint32_t>(m.status));
  for (uint64_t t : m.profile) w.u64(t);
  w.str(m.message);
}

// A message's data, as payload or over the lanes: each bounded, and never both.
static void check_data_sizes(uint64_t payload_bytes, uint64_t lane_bytes, const char* what) {
  if (payload_bytes > kMaxClPayload || lane_bytes > kMaxClPayload) throw ProtocolError("OpenCL payload too large");
  if (payload_bytes && lane_bytes) throw ProtocolError(std::string("an OpenCL ") + what + " comes one way, not two");
}

ClRequest decode_cl_request(Reader& r) {
  ClRequest m;
  m.call_id = r.u64();
  m.payload_bytes = r.u64();
  m.lane_transfer = r.u64();
  m.lane_bytes = r.u64();
  m.reply_over_lanes = r.boolean();
  check_data_sizes(m.payload_bytes, m.lane_bytes, "operation's data");
  if ((m.lane_transfer == 0) != (m.lane_bytes == 0))
    throw ProtocolError("an OpenCL operation's data over the lanes needs both a transfer and its size");
  if (m.reply_over_lanes && m.call_id == 0)
    throw ProtocolError("an unanswered OpenCL operation has no reply over the lanes");
  m.op = decode_op(r, r.u16());
  return m;
}

ClReply decode_cl_reply(Reader& r) {
  ClReply m;
  m.call_id = r.u64();
  m.status = static_cast<int32_t>(r.u32());
  get(r, m.data);
  m.payload_bytes = r.u64();
  m.lane_bytes = r.u64();
  check_data_sizes(m.payload_bytes, m.lane_bytes, "result");
  return m;
}

ClChunk decode_cl_chunk(Reader& r) {
  ClChunk m;
  m.transfer = r.u64();
  m.payload_bytes = r.u64();
  m.chunk_bytes = r.u64();
  m.chunk_index = r.u64();
  if (m.transfer == 0) throw ProtocolError("an OpenCL chunk names no transfer");
  if (m.payload_bytes == 0 || m.payload_bytes > kMaxClPayload)
    throw ProtocolError("an OpenCL chunk's transfer size is out of range");
  if (m.chunk_bytes < kMinChunkBytes) throw ProtocolError("chunk size below the minimum");
  if (m.chunk_index >= chunk_count(m.payload_bytes, m.chunk_bytes)) throw ProtocolError("chunk index out of range");
  return m;
}

ClNotice decode_cl_notice(Reader& r) {
  ClNotice m;
  m.kind = r.u8();
  if (m.kind >= static_cast<uint8_t>(ClNoticeKind::count_)) throw ProtocolError("unknown OpenCL notice");
  m.object = r.u64();
  m.status = static_cast<int32_t>(r.u32());
  for (uint64_t& t : m.profile) t = r.u64();
  m.message = r.str(kMaxClText);
  return m;
}

std::vector<std::byte> encode_cl(const ClSnapshot& s) { return encode_whole(s); }
std::vector<std::byte> encode_cl(const ClBuildResult& b) { return encode_whole(b); }
std::vector<std::byte> encode_cl(const ClDeviceList& d) { return encode_whole(d); }
ClDeviceList decode_cl_device_list(std::span<const std::byte> bytes) { return decode_whole<ClDeviceList>(bytes); }
ClSnapshot decode_cl_snapshot(std::span<const std::byte> bytes) { return decode_whole<ClSnapshot>(bytes); }
ClBuildResult decode_cl_build_result(std::span<const std::byte> bytes) {
  return decode_whole<ClBuildResult>(bytes);
}

}  // namespace outboard::wire
