// The remote-OpenCL part of the client runtime, for the OpenCL ICD (shims/opencl): one session
// per configured server, over which the ICD streams its operations (wire/opencl.hpp). Operations
// of one channel reach the server in the order they were posted, from any thread.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "client/export.hpp"
#include "wire/opencl.hpp"

namespace outboard::client::opencl {

struct Bytes {
  const void* data = nullptr;
  uint64_t size = 0;
};

// An answered operation's outcome.
struct Answer {
  int32_t status = 0;              // the server's CL status; kLost when the connection failed
  wire::ClBlob data;               // small results
  std::vector<std::byte> payload;  // a bulk result, when no memory was given for it
  std::string failure;             // kLost: why
  uint64_t call_id = 0;            // the request's id, for OUTBOARD_CL_TRACE_CALLS
};
// The status of an operation whose server connection failed (CL_DEVICE_NOT_AVAILABLE's value: a
// device that is gone, as OpenCL knows the condition).
inline constexpr int32_t kLost = -2;

class OUTBOARD_CLIENT_API Channel {
 public:
  virtual ~Channel() = default;
  // "host:port", as configured.
  virtual const std::string& address() const = 0;
  // The server's platforms and devices (asked once, when the channel was made).
  virtual const wire::ClSnapshot& platforms() const = 0;
  // False once the connection failed; failure() then says why.
  virtual bool alive() const = 0;
  virtual std::string failure() const = 0;
  // OUTBOARD_TIMEOUT (0: none): how long a wait may go on before the server is asked whether it
  // still answers (see call()).
  virtual double timeout() const = 0;
  // Whether the server still answers a round trip (its core answers it, whatever its OpenCL is
  // doing) within the timeout (30 s if none is set); if not, the connection fails (on_failure).
  virtual bool answers() = 0;

  // Streams `op` unanswered. Its data must stay valid until the send is done: with wait_sent the
  // call returns only then; without, the caller keeps it (until the command's completion, which
  // comes after the server received it). Returns false when the connection has failed.
  virtual bool post(const wire::ClOp& op, Bytes data = {}, bool wait_sent = false) = 0;
  // Streams `op` and waits for its answer. A bulk result lands in `into` (which holds into_size
  // bytes) or, when into is null, in Answer::payload. An operation may take as long as it takes,
  // but with OUTBOARD_TIMEOUT set, each time that many seconds pass the server must answer a
  // round trip within as many more, or the connection fails (kLost): a hung server is found.
  // post()'s wait_sent waits the same way.
  virtual Answer call(const wire::ClOp& op, Bytes data = {}, void* into = nullptr, uint64_t into_size = 0) = 0;
  // Streams `op`; `done` runs once with its answer, on whichever thread drives the channel: it
  // must neither call the channel nor block.
  virtual void call_async(const wire::ClOp& op, Bytes data, void* into, uint64_t into_size,
                          std::function<void(Answer&)> done) = 0;
  // The direct path (connection.hpp): whether the server's copy lanes may move this channel's
  // large transfers (wire::ClDirectRead, ClDirectWrite). Asked when the channel was made; the
  // first call may wait for the answer. False where the server offers no lanes, or
  // OUTBOARD_DIRECT is off.
  virtual bool direct() = 0;
  // Lets the server's lanes copy to and from [data, data + bytes) until the returned key (what
  // travels in the operation) is released. Null when the memory cannot be registered.
  virtual std::shared_ptr<const std::vector<std::byte>> register_memory(void* data, uint64_t bytes) = 0;
  // Notices the server sends unasked (event status, failures): run like call_async's `done`.
  virtual void set_notice_handler(std::function<void(const wire::ClNotice&)> handler) = 0;
  // Runs `done` (like a notice handler) once the connection fails, at once if it has.
  virtual void on_failure(std::function<void(const std::string& why)> done) = 0;
};

// The channels to every configured server (OUTBOARD_SERVERS, else the hostfiles: settings.hpp),
// made at the first call in parallel; a server that does not connect and authenticate within
// OUTBOARD_CONNECT_TIMEOUT, or stops answering (as call() finds it, with that timeout) before it
// has described its platforms, is left out, and why is added to `errors`.
OUTBOARD_CLIENT_API const std::vector<std::shared_ptr<Channel>>& opencl_channels(std::vector<std::string>* errors);

}  // namespace outboard::client::opencl
