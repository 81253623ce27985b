// What the opencl service needs from a backend that forwards to OpenCL platforms
// (backends/opencl): the platforms' description, and a session's native objects.
#pragma once
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
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
};

struct ClLimits {
  uint64_t max_objects = 1 << 16;         // objects a session holds at once
  uint64_t max_memory_bytes = 0;          // buffer and image bytes a session holds (0: no limit)
};

// Totals over all sessions, for `outboard status` and the tests' proof that work was served.
struct ClCounters {
  uint64_t operations = 0, kernels = 0, failures = 0, bytes_written = 0, bytes_read = 0;
};

// A session's objects on the native platforms. Used by one thread at a time (the session's).
class ClSessionObjects {
 public:
  // Waits for the session's commands to finish and releases every object it holds.
  virtual ~ClSessionObjects() = default;
  // Runs one operation: checks every id, size and offset against what the session holds, then
  // calls the native platform. Answers through the session's ClOutput (now or from a callback).
  virtual void run(const wire::ClRequest& r, transport::Buffer payload) = 0;
  virtual uint64_t objects() const = 0;
};

class ClExecutor {
 public:
  virtual ~ClExecutor() = default;
  // The platforms and devices every session sees (wire::ClSnapshot, encoded), made once.
  virtual const std::vector<std::byte>& snapshot() const = 0;
  virtual std::unique_ptr<ClSessionObjects> open_session(std::shared_ptr<ClOutput> out, const ClLimits& limits) = 0;
  virtual ClCounters counters() const = 0;
};

}  // namespace outboard::server
