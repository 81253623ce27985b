// What the opencl service needs from a backend that forwards to OpenCL platforms
// (backends/opencl): the platforms' description, and a session's native objects.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "transport/buffer.hpp"
#include "wire/opencl.hpp"

namespace outboard::server {

// Where a session's answers go. Thread-safe: native callbacks call it from the OpenCL
// implementation's threads. After the session ended it drops what it is given.
class ClOutput {
 public:
  virtual ~ClOutput() = default;
  // The answer to an answered operation; `payload` (may be null) holds `bytes` of bulk result.
  virtual void reply(uint64_t call_id, int32_t status, wire::ClBlob data,
                     std::shared_ptr<transport::Buffer> payload = {}, uint64_t bytes = 0) = 0;
  virtual void notice(wire::ClNotice n) = 0;
  // Across a link, a large result may go in pieces over the session's lanes (the client asked:
  // wire::ClRequest::reply_over_lanes): piece() sends `bytes` from `data` (valid until `sent`)
  // as a wire::ReplyChunk at `offset` of the result; sent(ok) runs once it has gone (false: the
  // session has ended). reply_pieces() is then the answer, which counts `lane_bytes` of them.
  virtual void piece(uint64_t call_id, uint64_t offset, std::byte* data, uint64_t bytes,
                     std::function<void(bool ok)> sent) = 0;
  virtual void reply_pieces(uint64_t call_id, int32_t status, uint64_t lane_bytes) = 0;
};

// A session's way to the client's memory: the direct path's copy lanes (server/direct.hpp), for
// large buffer transfers (wire::ClDirectRead, ClDirectWrite). Thread-safe.
class ClClientMemory {
 public:
  virtual ~ClClientMemory() = default;
  // A region of the client's memory it registered for one transfer: valid until dropped.
  struct Region {
    uint64_t remote = 0, key = 0;
  };
  // Lanes that copy at once; 0 when the client has none (it never asked, or the server has none).
  virtual unsigned lanes() const = 0;
  // The packed remote key of a client's registration, for copies until drop(); false without lanes.
  virtual bool open(const std::vector<std::byte>& packed_key, Region& out) = 0;
  virtual void drop(const Region& r) = 0;
  // Queues a copy of `bytes` between `local` and the client's `address` in `r` (put: to the
  // client) on lane `lane` (modulo the lanes). done(ok) runs on the lane's thread once the copy is
  // complete (a put: once the data is in the client's memory); it must not block.
  virtual void copy(unsigned lane, bool put, const Region& r, uint64_t address, std::byte* local, uint64_t bytes,
                    std::function<void(bool ok)> done) = 0;
};

struct ClLimits {
  uint64_t max_objects = 1 << 16;         // objects a session holds at once
  uint64_t max_memory_bytes = 0;          // buffer and image bytes a session holds (0: no limit)
  uint64_t direct_staging_bytes = 256 << 20;  // host memory a session's direct transfers stage in at once
  uint64_t write_bytes_in_flight = 512 << 20;  // a session's writes the platform holds at once (0: no bound)
  unsigned stuck_seconds = 60;                // Config::opencl_stuck_seconds (0: never)
  std::string event_polling = "auto";         // Config::opencl_event_polling
};

// Totals over all sessions, for `outboard status` and the tests' proof that work was served.
struct ClCounters {
  uint64_t operations = 0, kernels = 0, failures = 0, bytes_written = 0, bytes_read = 0;
  // Of those bytes, the ones the copy lanes moved (wire::ClDirectRead, ClDirectWrite).
  uint64_t direct_bytes_written = 0, direct_bytes_read = 0;
  // The direct transfers' staging memory: in use now (all sessions), and the most one session
  // has used at once (never above its ClLimits::direct_staging_bytes).
  uint64_t direct_staging_bytes = 0, direct_staging_peak_bytes = 0;
  // Bytes of reads on the message path that landed in page-locked memory (pinned_reads.hpp).
  uint64_t pinned_bytes_read = 0;
  // Writes that waited for the session's earlier ones (ClLimits::write_bytes_in_flight).
  uint64_t write_waits = 0;
};

// An operation whose native call has not returned within ClLimits::stuck_seconds.
struct ClStuckCall {
  std::string platform;  // empty where the operation's platform is not known
  std::string operation;
  uint64_t session = 0;  // the backend's serial of the session
  double seconds = 0;
};

// A session's objects on the native platforms. Used by one thread at a time (the session's).
class ClSessionObjects {
 public:
  // Waits for the session's commands to finish and releases every object it holds.
  virtual ~ClSessionObjects() = default;
  // Runs one operation: checks every id, size and offset against what the session holds, then
  // calls the native platform. Answers through the session's ClOutput (now or from a callback).
  // `arrived_ns`: when the request reached the session's queue (now_ns).
  virtual void run(const wire::ClRequest& r, transport::Buffer payload, uint64_t arrived_ns) = 0;
  virtual uint64_t objects() const = 0;
  // Whether commands of the session have not ended yet (any thread may ask).
  virtual bool commands_pending() const = 0;
};

class ClExecutor {
 public:
  virtual ~ClExecutor() = default;
  // The platforms and devices every session sees (wire::ClSnapshot, encoded), made once.
  virtual const std::vector<std::byte>& snapshot() const = 0;
  // `memory`: the session's direct path to the client's memory.
  virtual std::unique_ptr<ClSessionObjects> open_session(std::shared_ptr<ClOutput> out, const ClLimits& limits,
                                                         std::shared_ptr<ClClientMemory> memory) = 0;
  virtual ClCounters counters() const = 0;
  // Operations stuck now, oldest first (new work on their platforms is refused meanwhile).
  virtual std::vector<ClStuckCall> stuck() const = 0;
};

}  // namespace outboard::server
