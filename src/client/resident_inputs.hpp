// Inputs that need not travel twice (issue 36 item 5): the client's side. A connection's mirror
// of the inputs its server keeps for the session (the same budget and the same least-recently-used
// order as the server's ResidentStore, so the two agree but for the server's other limits), and
// the plan of one call: which of its large inputs the server holds already (their digest matches:
// not sent) and which it should keep (sent; an input is kept when seen a second time unchanged). A digest of the bytes is taken at every call, so a
// changed byte, however it changed, means a different digest and the input travels again.
#pragma once
#include <cstdint>
#include <list>
#include <map>
#include <mutex>
#include <optional>
#include <vector>

#include "client/settings.hpp"
#include "common/digest.hpp"
#include "transport/transport.hpp"
#include "wire/messages.hpp"

namespace outboard::client {

class ResidentMirror {
 public:
  void set_budget(uint64_t bytes) {
    std::lock_guard lk(mu_);
    budget_ = bytes;
  }
  uint64_t budget() const {
    std::lock_guard lk(mu_);
    return budget_;
  }
  // Whether the server holds `digest` (of `bytes`); if so it is now the most recently used.
  bool held(const Digest& digest, uint64_t bytes);
  // The same, the order untouched.
  bool peek(const Digest& digest, uint64_t bytes) const;
  // Whether it holds any input of `bytes` (else no digest of that many bytes can be held).
  bool holds_size(uint64_t bytes) const;
  // Whether an input of `digest` (of `bytes`) was among the last kSeen sent and not kept; saw():
  // one is.
  bool seen(const Digest& digest, uint64_t bytes) const;
  void saw(const Digest& digest, uint64_t bytes);
  static constexpr size_t kSeen = 64;
  // The server keeps `digest` (of `bytes`) after this call, counting `footprint` (0: `bytes`)
  // against the budget, as ResidentStore::keep: the least recently used make room; none where
  // it is over the budget.
  void kept(const Digest& digest, uint64_t bytes, uint64_t footprint = 0);
  // The server said it no longer holds them.
  void forget(const std::vector<wire::ResidentInput>& inputs);

 private:
  struct Entry {
    Digest digest;
    uint64_t bytes;
    uint64_t footprint = 0;
  };
  mutable std::mutex mu_;
  uint64_t budget_ = 0, bytes_ = 0;
  std::list<Entry> entries_;  // most recently used first
  std::map<Digest, std::list<Entry>::iterator> by_digest_;
  std::list<Entry> seen_;  // most recent first
};

// The threads a digest runs on: half the cores, at most 16, or OUTBOARD_COPY_THREADS where that
// is more (`cores`: this host's). On the H200 host (16 cores) a GiB's digest took 45 ms on the 4
// copy threads and 25 on 8, where sending it across 100 Gbit/s takes 92 ms
// (bench/results/h200/link/resident/digest-threads.txt).
unsigned digest_threads(double copy_threads, unsigned cores);
unsigned digest_threads(const Settings& settings);

// One call's resident inputs: `inputs` for the request, and the payload without those in use.
struct ResidentPlan {
  std::vector<wire::ResidentInput> inputs;
  std::vector<transport::Segment> payload;
  uint64_t payload_bytes = 0;
  bool any() const { return !inputs.empty(); }
};

// The server's memory for a call, which an input kept from it holds on to (what it counts against
// the budget, wire::footprint_shares): its inputs and `output_room` after them; a whole call's
// holds the inputs sent, a chunked call's (`chunked`) all of them.
struct CallMemory {
  uint64_t output_room = 0;
  bool chunked = false;
};

// The plan for a call whose inputs travel as `segments` (one per input, in order; `shared`: the
// index of one the output shares, never resident, or -1) and which moves `call_bytes` both ways:
// inputs of at least OUTBOARD_RESIDENT_MIN_BYTES, digested on digest_threads, in use where the
// mirror has them, kept where seen unchanged since an earlier call and where the call's memory
// fits the budget (`memory`; none given: each counts its own bytes). None where OUTBOARD_RESIDENT=0,
// where the server keeps none, or, for a whole call, where they are less than half its bytes.
ResidentPlan plan_resident(ResidentMirror& mirror, const Settings& settings,
                           const std::vector<transport::Segment>& segments, int shared, uint64_t call_bytes,
                           std::optional<CallMemory> memory = std::nullopt);

}  // namespace outboard::client
