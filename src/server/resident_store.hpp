// The inputs a session keeps between calls, so that its client need not send them again (issue 36
// item 5, wire::ResidentInput): by the digest of their bytes, the least recently used going first
// when the session's budget (resident_bytes) is full; all sessions together stay within the
// server's (resident_total_bytes). Used from the server's thread only; the inputs themselves are
// shared with the calls that read them, which may outlive their eviction.
#pragma once
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "common/digest.hpp"
#include "transport/buffer.hpp"
#include "wire/resident.hpp"

namespace outboard::server {

// What all sessions' stores hold together, and what they did (the server's thread only).
struct ResidentBudget {
  uint64_t limit = 0;
  uint64_t used = 0;
  uint64_t hits = 0, misses = 0, kept = 0, evicted = 0, refused = 0;
  uint64_t bytes_not_sent = 0;  // by the hits
  // Results the client held already (an FFT re-executed on a held input), not sent back.
  uint64_t results_not_sent = 0, result_bytes_not_sent = 0;
};

// An input to keep once its call ran: its bytes, and what holding them costs the budgets (a part
// of the call's own memory holds all of it).
struct KeptInput {
  Digest digest;
  std::shared_ptr<const transport::Buffer> data;
  uint64_t footprint = 0;  // 0: data's size
};

class ResidentStore {
 public:
  ResidentStore(uint64_t limit, ResidentBudget& all) : limit_(limit), all_(all) {}
  ~ResidentStore();
  ResidentStore(const ResidentStore&) = delete;
  ResidentStore& operator=(const ResidentStore&) = delete;

  // The input kept under `digest`, if it has `bytes` bytes (then the most recently used); null
  // otherwise.
  // `not_sent`: what the client left out for it (all of it but for a chunked call's partial
  // chunks, wire::held_chunks), counted in bytes_not_sent.
  std::shared_ptr<const transport::Buffer> find(const Digest& digest, uint64_t bytes,
                                                std::optional<uint64_t> not_sent = std::nullopt);
  // Keeps `input` under `digest`, counting `footprint` bytes (0: its size) against the budgets and
  // making room by evicting the least recently used; false where it cannot (null, empty, or
  // larger than what the budgets leave).
  bool keep(const Digest& digest, std::shared_ptr<const transport::Buffer> input, uint64_t footprint = 0);
  bool keep(KeptInput k) { return keep(k.digest, std::move(k.data), k.footprint); }
  // A copy of `bytes` bytes at `data` for keep(), in memory of `from` where it has room (a GPU
  // backend's page-locked staging: a held input is copied to the GPU with every call that names
  // it, at several times the rate of pageable memory), else of the heap; null when neither has.
  static std::shared_ptr<const transport::Buffer> copy_of(const std::byte* data, uint64_t bytes,
                                                          const transport::HostAllocator* from = nullptr);
  // `bytes` bytes at `offset` of `whole`, without a copy: `whole` stays allocated while they are
  // kept (its size is their footprint). For an input the call does not write: allocating
  // page-locked memory and copying into it cost a 512 MiB input 0.4 s on the H200 machine.
  // `footprint`: its share of the whole (wire::footprint_shares) where several parts are kept.
  static KeptInput part_of(const Digest& digest, const std::shared_ptr<const transport::Buffer>& whole,
                           uint64_t offset, uint64_t bytes, uint64_t footprint);
  // Several parts of one call's memory, kept together: the whole counted once between them.
  struct Part {
    Digest digest;
    uint64_t offset = 0, bytes = 0;
  };
  static std::vector<KeptInput> parts_of(const std::shared_ptr<const transport::Buffer>& whole,
                                         const std::vector<Part>& parts);

  uint64_t bytes() const { return bytes_; }
  size_t count() const { return entries_.size(); }

 private:
  struct Entry {
    Digest digest;
    std::shared_ptr<const transport::Buffer> data;
    uint64_t footprint;
  };
  void evict_oldest();

  uint64_t limit_;
  ResidentBudget& all_;
  uint64_t bytes_ = 0;
  std::list<Entry> entries_;  // most recently used first
  std::map<Digest, std::list<Entry>::iterator> by_digest_;
};

// A whole call's inputs as its payload and the session's store give them (blas3's and lapack's).
struct CallInputs {
  std::vector<uint64_t> sizes;                                 // of each input, in order
  std::vector<std::shared_ptr<const transport::Buffer>> held;  // per input: held here, not sent
  std::vector<wire::ResidentInput> keep;                       // sent, to keep once the call ran
  using Kept = std::vector<KeptInput>;

  // The inputs `resident` names in use, from `store` (the server's thread); false when one is not
  // held: the call fails with wire::kResidentMissing.
  bool find(ResidentStore& store, const std::vector<wire::ResidentInput>& resident);
  // Each input's address: held ones in the store, the others in order in `payload`; those to keep
  // go to `kept` as parts of `payload` (executors never write an input the output does not
  // share: held inputs are read where they are kept too).
  std::vector<const std::byte*> lay_out(const std::shared_ptr<const transport::Buffer>& payload, Kept& kept) const;
};

}  // namespace outboard::server
