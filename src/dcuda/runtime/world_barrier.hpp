// The world barrier, as the proxy runs it. One block per process posts `barrier` with the
// generation g once all the process's blocks have passed a device-wide barrier, so no rank posts
// anything more until g is released. Then:
//   1. once every command our ranks posted before it is delivered (acknowledged by its target,
//      i.e. applied there), we send the processes of this host our changed windows
//      (peer_windows.hpp) and tell every other process "arrived at g" (with how many windows
//      it has been sent: its arrival counts once they are all there and mapped);
//   2. once every process has arrived, every put sent before the barrier anywhere has been
//      issued to its target's device link; a fence on our link waits for what was issued to
//      ours to take effect;
//   3. then ProxyCounters::released = g for each of our ranks (release store).
// Arrivals may come before our own (a faster process), never twice for one generation.
#pragma once
#include <cstdint>
#include <vector>

#include "dcuda/runtime/peer_windows.hpp"
#include "dcuda/runtime/proxy_context.hpp"

namespace dcuda::runtime::proxy_detail {

class WorldBarrier {
 public:
  WorldBarrier(Context& c, PeerWindows& windows);
  // A rank of ours posted barrier `generation`.
  void local(uint32_t rank, uint32_t generation);
  // Process p arrived at `generation`. Throws ProtocolError when it goes backwards.
  void on_arrive(uint32_t p, uint32_t generation, uint32_t windows);
  // Moves the barrier on: `delivered` says every command posted so far is delivered. True if it moved.
  bool poll(bool delivered);
  bool pending() const { return state_ != State::idle; }
  uint32_t released() const { return released_; }

 private:
  enum class State { idle, draining, arrived, fencing };
  Context& c_;
  PeerWindows& windows_;
  State state_ = State::idle;
  uint32_t generation_ = 0;           // the pending one
  uint32_t released_ = 0;             // the last released
  std::vector<uint32_t> arrived_;     // per process: the last generation it arrived at
  std::vector<uint32_t> announced_;   // per process: the window messages it had sent us then
  bool reported_loss_ = false;
};

}  // namespace dcuda::runtime::proxy_detail
