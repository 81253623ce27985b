// One-sided copies between this process's memory and memory that peers registered
// (Worker::register_memory), spread over several UCX workers ("lanes"), each driven by a thread
// of its own.
//
// Why lanes: between processes of one host a copy is a CPU copy, and one thread moves ~6 GB/s;
// measured on the H200 host (bench/probes/cma_scaling.cpp), 4 threads move 21 GB/s and 8 move
// 36 GB/s. A single progress thread caps any call's data movement at one thread's rate, whatever
// the link; lanes let one large call's copies run in parallel.
//
// How: a peer on this host whose process id was verified (verify_process) is copied to and from
// with process_vm_readv/_writev (CMA) directly: UCX 1.13 uses CMA for its rendezvous protocol but
// not for ucp_get/ucp_put, which it emulates with messages that the peer's progress thread must
// serve one at a time. Other peers go through ucp_get_nbx/ucp_put_nbx (NIC reads and writes on
// an RDMA network).
//
// Thread-safe: every method may be called from any thread. Copies on one lane run in the order
// they were queued.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

namespace outboard::transport {

class CopyLanes {
 public:
  // Starts `lanes` workers and threads (at least one). Throws Error when UCX cannot.
  explicit CopyLanes(unsigned lanes);
  // Copies not yet complete end with ok = false.
  ~CopyLanes();
  // Lets the copies under way finish, ends the lanes' threads, and fails every copy asked for
  // later (done(false) at once). For an owner whose objects the completions reach, before it
  // tears them down, while others may still hold the lanes (shared). Idempotent.
  void stop();
  CopyLanes(const CopyLanes&) = delete;
  CopyLanes& operator=(const CopyLanes&) = delete;

  unsigned lanes() const;

  // A peer process, known by its Worker::address(). Each lane connects to it on first use.
  using Remote = uint64_t;
  // `pid`: the peer's process on this host, verified, for CMA copies; 0: copies through UCX.
  Remote attach(std::vector<std::byte> worker_address, int pid = 0);
  // Whether process `pid` of this host holds `expected` at `address`: proof that a peer which
  // wrote a secret there and names that pid is that process (and that CMA reaches it).
  static bool verify_process(int pid, uint64_t address, std::span<const std::byte> expected);
  // Later copies to or from it fail; copies already under way end as UCX ends them.
  void detach(Remote remote);

  // A remote memory key (Registration::key() of the peer's memory), unpacked by each lane on
  // first use. Drop it once no copy that uses it is in flight.
  using Key = uint64_t;
  Key add_key(Remote remote, std::vector<std::byte> packed_key);
  void drop_key(Key key);

  struct Copy {
    bool put = false;             // false: remote -> local (get); true: local -> remote (put)
    Remote remote = 0;
    Key key = 0;                  // covers [remote_address, remote_address + bytes)
    uint64_t remote_address = 0;
    std::byte* local = nullptr;   // must stay valid until done runs
    uint64_t bytes = 0;
  };
  // Queues `c` on lane `lane % lanes()`. done(ok) runs on that lane's thread once the copy is
  // complete: a put only once its data is in the peer's memory. done must not block.
  void copy(unsigned lane, const Copy& c, std::function<void(bool ok)> done);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace outboard::transport
