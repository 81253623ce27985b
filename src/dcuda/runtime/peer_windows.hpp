// dcuda host proxy, part 5: windows shared with the other processes of this host. Ranks of a
// process whose rank state we mapped (CUDA IPC, at start) put into its ranks' windows directly;
// for that each proxy tells those processes where its ranks' windows are, as memory they can map.
// Windows change only in dcuda_win_create/free, each ended by a world barrier: when our ranks
// arrive at one, before our `arrive` we send every window that changed since the last barrier to
// every process of this host (`export_changes`); a receiver maps it and writes it into the table
// its ranks read (`on_window`), and counts an arrival only once it has every window the sender
// announced with it (`Arrive::windows`), so no rank leaves the barrier before the windows made
// in it are mapped. Checks everything a peer sends: its own ranks, window ids, extents.
#pragma once
#include <cstdint>
#include <vector>

#include "dcuda/detail/counters.hpp"
#include "dcuda/runtime/proxy_context.hpp"

namespace dcuda::runtime::proxy_detail {

class PeerWindows {
 public:
  explicit PeerWindows(Context& c);
  // Sends our ranks' changed windows to the processes of this host; returns, per process, how
  // many window messages it has been sent in all (for its Arrive).
  const std::vector<uint32_t>& export_changes();
  // A window of process p's rank (throws ProtocolError for one that is not p's, or malformed).
  void on_window(uint32_t p, const msg::Window& m);
  // Process p's windows up to its arrival's count have all come.
  bool complete(uint32_t p, uint32_t announced) const { return detail::reached(received_[p], announced); }

 private:
  Context& c_;
  std::vector<detail::WindowEntry> exported_;  // per local rank and window: what peers were told
  std::vector<uint32_t> sent_, received_;      // per process
};

}  // namespace dcuda::runtime::proxy_detail
