// The direct path: for a call on it (wire::DirectLapack, ...) the server copies the input out of
// the client's memory in chunks and the result pieces into it, over the copy lanes
// (transport/copy_lanes.hpp), rather than receiving chunk messages and sending ReplyChunks. The
// call is otherwise a chunked call (chunked.hpp), set up by its service.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "server/chunked.hpp"
#include "server/core.hpp"
#include "transport/copy_lanes.hpp"
#include "wire/messages.hpp"

namespace outboard::server {

struct DirectCopies {
  transport::CopyLanes::Remote remote = 0;
  std::vector<transport::CopyLanes::Key> keys;  // by wire::Extent::key
  std::vector<wire::Extent> input, output;
  std::vector<uint32_t> copies_left;  // per chunk: copies not yet complete
  bool gated = false, proceeded = false;
  std::vector<size_t> held;  // finished pieces waiting for the client's Proceed
};

class DirectPath {
 public:
  DirectPath(Core& core, ChunkedCalls& calls) : core_(core), calls_(calls) {}
  ~DirectPath() { close(); }

  // Starts `lanes` copy lanes (0: the direct path is off; failing: logged, and off).
  void open(unsigned lanes);
  // Copies in flight end (their completions signal the worker).
  void close() { lanes_.reset(); }
  // Ends the lanes for every holder (services' sessions share them): the copies under way finish
  // and signal the worker, later ones fail. Before the worker goes (Server's destructor).
  void stop_lanes() {
    if (lanes_) lanes_->stop();
  }
  unsigned lanes() const { return lanes_ ? lanes_->lanes() : 0; }
  // The lanes themselves, for services that copy on their own threads (opencl); null when off.
  // Shared: a service's threads may still hold them while the server closes.
  std::shared_ptr<transport::CopyLanes> copy_lanes() const { return lanes_; }
  uint64_t calls() const { return calls_done_; }

  void on_lanes(Session& s, const wire::LanesRequest& q);
  void on_proceed(Session& s, const wire::Proceed& q);
  // A service's direct call message (with call_id, keys, input, output, gated): set up by
  // `set_up` like a chunked call of `payload_bytes`, then its input is copied in chunks. A call
  // the server cannot take is answered with its failed reply (the client runs it locally).
  template <class Direct>
  void start(Session& s, const Direct& d, uint64_t payload_bytes, const ChunkedCalls::SetUp& set_up) {
    start(s, d.call_id, payload_bytes, d.keys, d.input, d.output, d.gated, set_up);
  }
  // Copies that ended, from the copy lanes' threads.
  void deliver();

  // For ChunkedCalls: a finished result piece goes out (or waits for the client's Proceed).
  void send_piece(Session& s, const std::shared_ptr<ChunkedCall>& call, size_t index);
  // The call failed: pieces held for the client's Proceed are not written now.
  void drop_held(ChunkedCall& cc);
  // The call is answered: no copy uses its keys now.
  void finished(ChunkedCall& cc);
  void session_ended(const Session& s);

 private:
  void start(Session& s, uint64_t call_id, uint64_t payload_bytes, const std::vector<std::vector<std::byte>>& keys,
             const std::vector<wire::Extent>& input, const std::vector<wire::Extent>& output, bool gated,
             const ChunkedCalls::SetUp& set_up);
  void copy_range(const std::shared_ptr<ChunkedCall>& call, const std::vector<wire::Extent>& extents, uint64_t begin,
                  uint64_t end, std::byte* local, bool put, uint64_t index);
  void put_piece(Session& s, const std::shared_ptr<ChunkedCall>& call, size_t index);

  // A copy that ended, handed from a copy lane's thread to the progress thread.
  struct CopyDone {
    std::shared_ptr<ChunkedCall> call;
    bool put = false;
    uint64_t index = 0;  // get: the chunk
    bool ok = false;
  };

  // The lane the next copy goes to: copies are dealt to the lanes in turn, across calls.
  std::atomic<unsigned> next_lane_{0};
  Core& core_;
  ChunkedCalls& calls_;
  std::shared_ptr<transport::CopyLanes> lanes_;  // null when off
  std::string unavailable_;                      // why, when null
  std::mutex copies_mu_;                         // guards `copies_done_`: filled by copy lanes
  std::vector<CopyDone> copies_done_;
  std::atomic<bool> any_copies_{false};
  uint64_t calls_done_ = 0;
};

}  // namespace outboard::server
