// A remote OpenCL session's way to its client's memory (ClClientMemory) over the server's copy
// lanes (server/direct.hpp): the session's thread and the native platform's callbacks copy with
// them directly, outside the chunked-call machinery the other services' direct calls use.
#pragma once
#include <atomic>
#include <memory>

#include "server/services/opencl_executor.hpp"
#include "transport/copy_lanes.hpp"

namespace outboard::server {

class ClientLanes final : public ClClientMemory {
 public:
  explicit ClientLanes(std::shared_ptr<transport::CopyLanes> lanes) : lanes_(std::move(lanes)) {}
  // The client's memory as its session knows it (Session::remote), set on the progress thread
  // before each operation is handed to the session's thread; 0: none yet.
  void set_remote(transport::CopyLanes::Remote remote) { remote_.store(remote, std::memory_order_release); }

  unsigned lanes() const override;
  bool open(const std::vector<std::byte>& packed_key, Region& out) override;
  void drop(const Region& r) override;
  void copy(unsigned lane, bool put, const Region& r, uint64_t address, std::byte* local, uint64_t bytes,
            std::function<void(bool ok)> done) override;

 private:
  const std::shared_ptr<transport::CopyLanes> lanes_;  // null: the server has none
  std::atomic<transport::CopyLanes::Remote> remote_{0};
};

}  // namespace outboard::server
