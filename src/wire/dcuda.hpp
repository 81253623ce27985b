// The messages dcuda's host proxies exchange: one connection from every process to every other
// (its outgoing connection; the peer answers on it). A message is a fixed header (magic, version,
// kind) and a body of fixed size per kind (strings excepted), encoded with wire::Writer and
// decoded with the bounds-checked wire::Reader: what decodes has exactly its kind's size.
// Whether the values make sense (ranks, windows, offsets, tags) is the receiving proxy's check.
#pragma once
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <variant>
#include <vector>

namespace outboard::wire::dcuda {

inline constexpr uint32_t kMagic = 0x41554344;  // "DCUA"
inline constexpr uint16_t kVersion = 2;
inline constexpr size_t kMaxReason = 1024;      // longest text in refused/error
inline constexpr size_t kMaxKey = 128;          // longest hello key

enum class Kind : uint16_t {
  hello = 1,     // first message on a connection: who I am, and the key you published
  put = 2,       // a rank's put / notify / put_notify; payload = the data
  ack = 3,       // answer: every command of a stream up to `seq` is handled
  refused = 4,   // answer: one command was refused (nothing was touched), and why
  arrive = 5,    // this process has arrived at world barrier `generation`
  finished = 6,  // this process's kernel has ended and all its commands are delivered (answered
                 // with `finished` on the same connection: received)
  error = 7,     // the connection is about to be closed, and why
  welcome = 8,   // answer to hello: the connection is set up, commands may follow
  window = 9,    // to a process of the same host: where one of the sender's ranks has a window,
                 // as memory it can map (CUDA IPC), so its ranks put there without the proxies
};

struct Hello {
  uint32_t process = 0;  // the sender's process index
  std::string key;       // the receiver's key, as the bootstrap published it
  bool operator==(const Hello&) const = default;
};

// One command of the stream from world rank `source` to the receiving process. `seq` counts the
// stream's commands from 0; the receiver applies them in that order.
struct Put {
  uint32_t op = 0;      // dcuda::detail::Op
  uint32_t source = 0;  // world rank
  uint32_t target = 0;  // world rank
  uint32_t seq = 0;
  uint32_t window = 0;
  uint32_t tag = 0;
  uint64_t offset = 0;
  uint64_t bytes = 0;   // the payload's size (0 for notify)
  bool operator==(const Put&) const = default;
};

struct Ack {
  uint32_t source = 0;  // the stream (world rank of its sender)
  uint32_t seq = 0;     // every command up to and including this one is handled
  bool operator==(const Ack&) const = default;
};

struct Refused {
  uint32_t source = 0;
  uint32_t seq = 0;
  std::string reason;
  bool operator==(const Refused&) const = default;
};

struct Arrive {
  uint32_t generation = 0;
  uint32_t windows = 0;  // window messages sent on this connection so far: count them all before the arrival counts
  bool operator==(const Arrive&) const = default;
};

struct Finished {
  bool operator==(const Finished&) const = default;
};

struct Error {
  std::string reason;
  bool operator==(const Error&) const = default;
};

struct Welcome {
  bool operator==(const Welcome&) const = default;
};

// A window of world rank `rank`: `bytes` at `offset` into the allocation `handle` names (of
// `allocation_bytes`); bytes == 0: the window is gone.
struct Window {
  uint32_t rank = 0;
  uint32_t window = 0;
  uint64_t offset = 0;
  uint64_t bytes = 0;
  uint64_t allocation_bytes = 0;
  std::array<uint8_t, 64> handle{};
  bool operator==(const Window&) const = default;
};

using Message = std::variant<Hello, Put, Ack, Refused, Arrive, Finished, Error, Welcome, Window>;

// Replaces `out` with the encoding of `m` (keeps its capacity: no allocation in steady state).
void encode(const Message& m, std::vector<std::byte>& out);
// Throws ProtocolError unless `in` is exactly one well-formed message.
Message decode(std::span<const std::byte> in);

}  // namespace outboard::wire::dcuda
