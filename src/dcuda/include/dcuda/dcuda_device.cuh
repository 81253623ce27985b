// dcuda's device side: the reference dCUDA device API (shared/seeds/001, Listings 3.4 and 3.5),
// signature for signature. A rank is a thread block; its state, a dcuda_state, lives in the
// block's shared memory:
//
//   __global__ void kernel(dcuda_context_handle handle) {
//     __shared__ dcuda_state gst;
//     dcuda_gpu_init(handle, gst);
//     int rank, size;
//     dcuda_comm_rank(gst, DCUDA_COMM_WORLD, &rank);
//     dcuda_comm_size(gst, DCUDA_COMM_WORLD, &size);
//     ...
//     dcuda_gpu_finish(gst);
//   }
//
// Calling conventions, as the reference gives them: every call is made by all threads of the
// rank with the same arguments (collective over the block), except dcuda_comm_size and
// dcuda_comm_rank, which single threads may call. dcuda_gpu_init, dcuda_gpu_finish,
// dcuda_comm_barrier, dcuda_win_create and dcuda_win_free are collective over ranks too (the
// world, or the communicator given). The CPU timers are collective over the ranks of the device.
// A call that fails records the rank's first error (dcuda_last_error, an addition) and the host
// reports it after the run (dcuda_host_run, dcuda_host_error).
//
// Paths, by target rank: a rank of this GPU is reached directly — the block copies with 16-byte
// stores when it can and bumps the target's counter with a device-scope atomic after a fence (no
// copy when source and target are the same address, as with overlapping windows); a rank of
// another process of this host through its memory mapped here (CUDA IPC), where that could be
// mapped; any other rank through the host proxy — the block posts a command into its ring in
// page-locked host memory (a payload of up to 4 KiB copied into the command's staging, a larger
// one read by the proxy from the source until dcuda_win_flush says it is done), and the proxy
// moves it with UCX. Either way, puts and notifies from one rank to one target arrive in the
// order they were made.
//
// Where the reference leaves a choice: windows are numbered by creation, so every rank creates
// its windows in the same order (as MPI's collectives require); notifications count per rank and
// tag (no source matching, as in the reference).
#pragma once
#include <stdint.h>

#include "dcuda/dcuda.h"
#include "dcuda/detail/command_ring.hpp"
#include "dcuda/detail/counters.hpp"

using dcuda_comm = int;
#define DCUDA_COMM_WORLD 0
#define DCUDA_COMM_DEVICE 1

typedef uint32_t dcuda_win;
#define DCUDA_WIN_NONE 0xffffffffu

// A rank's state: declare it `__shared__` in the kernel and hand it to dcuda_gpu_init.
struct dcuda_state {
  dcuda::detail::Params p;
  dcuda::detail::RankHost* host;    // this rank's part of the host region (mapped)
  dcuda::detail::RankDevice* self;  // and of the device region
  uint32_t local;                   // index among this GPU's ranks
  // The last target window a put of this rank resolved on this GPU: a target's window changes
  // only in dcuda_win_create/free, which this rank takes part in and which forget it.
  uint32_t cached_target, cached_window;
  dcuda::detail::WindowEntry cached;
  uint32_t consumed_seen;  // the proxy's ring count as last read (ring_has_room)
  uint32_t device_windows;  // RankDevice::device_windows, here where a put reads it without a global load
  // Per window, RankDevice::issued after its last put through the proxy (dcuda_win_flush waits
  // for that many completed). Per run: dcuda_gpu_finish's barrier completes every put.
  uint32_t window_issued[dcuda::detail::kMaxWindows];
};

namespace dcuda::detail {
using BlockState = ::dcuda_state;
}  // namespace dcuda::detail

namespace dcuda::detail {

__device__ __forceinline__ bool leader() { return threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0; }
__device__ __forceinline__ uint32_t thread_index() {
  return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}
__device__ __forceinline__ uint32_t block_threads() { return blockDim.x * blockDim.y * blockDim.z; }

// Thread 0's yes or no, to every thread of the block: one barrier that also ORs a predicate
// (no slot in shared memory, so no second barrier to keep the next answer from overwriting it).
__device__ __forceinline__ bool broadcast(bool v) { return __syncthreads_or(leader() && v) != 0; }

__device__ __forceinline__ int fail(BlockState& s, int code, uint32_t line) {
  if (leader() && s.self->error == 0) {
    s.self->error = code;
    s.self->error_line = line;
  }
  return code;
}
// The same from any one thread (calls single threads may make): the first error wins.
__device__ __forceinline__ int fail_any_thread(BlockState& s, int code, uint32_t line) {
  if (atomicCAS(reinterpret_cast<int*>(&s.self->error), 0, code) == 0) s.self->error_line = line;
  return code;
}
#define DCUDA_FAIL(s, code) ::dcuda::detail::fail(s, code, __LINE__)

// All threads copy `bytes` from src to dst: 16-byte vectors when both are aligned alike.
__device__ __forceinline__ void block_copy(void* dst, const void* src, uint64_t bytes) {
  if (dst == src || bytes == 0) return;
  const uint32_t t = thread_index(), n = block_threads();
  auto* d = static_cast<unsigned char*>(dst);
  auto* s = static_cast<const unsigned char*>(src);
  uint64_t done = 0;
  if (((reinterpret_cast<uintptr_t>(d) ^ reinterpret_cast<uintptr_t>(s)) & 15) == 0) {
    const uint64_t head = (16 - (reinterpret_cast<uintptr_t>(d) & 15)) & 15;
    done = head < bytes ? head : bytes;
    for (uint64_t i = t; i < done; i += n) d[i] = s[i];
    const uint64_t vectors = (bytes - done) / 16;
    auto* dv = reinterpret_cast<int4*>(d + done);
    auto* sv = reinterpret_cast<const int4*>(s + done);
    // Four loads in flight per thread before their stores: one block alone then moves several
    // times what one load at a time does.
    uint64_t i = t;
    for (; i + 3 * n < vectors; i += 4 * n) {
      const int4 a = sv[i], b = sv[i + n], c = sv[i + 2 * n], e = sv[i + 3 * n];
      dv[i] = a, dv[i + n] = b, dv[i + 2 * n] = c, dv[i + 3 * n] = e;
    }
    for (; i < vectors; i += n) dv[i] = sv[i];
    done += vectors * 16;
  }
  for (uint64_t i = done + t; i < bytes; i += n) d[i] = s[i];
}

__device__ __forceinline__ uint64_t globaltimer() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// The proxy has failed (a peer lost, a command refused): a wait on it would never end, so every
// wait that depends on the proxy checks this now and then and gives up (the host reports why).
__device__ __forceinline__ bool proxy_failed(const BlockState& s) {
  return load_acquire<Scope::system>(&s.host->proxy.failed) != 0;
}
constexpr uint32_t kFailureCheckSpins = 4096;  // polls of device memory between two checks

// Thread 0 waits until `ready()` (a poll of what the proxy writes in host memory); false when
// the proxy failed first.
template <class Ready>
__device__ __forceinline__ bool wait_on_proxy(const BlockState& s, Ready&& ready) {
  while (!ready()) {
    if (proxy_failed(s)) return false;
    __nanosleep(64);
  }
  return true;
}

// The barrier of every block of this grid.
__device__ __forceinline__ void device_barrier(BlockState& s) {
  __syncthreads();
  if (leader()) {
    DeviceBarrier& b = *s.p.barrier;
    const uint32_t gen = load_acquire<Scope::device>(&b.generation);
    __threadfence();
    if (fetch_add_acq_rel<Scope::device>(&b.arrived, 1) == s.p.ranks_here - 1) {
      b.arrived = 0;
      store_release<Scope::device>(&b.generation, gen + 1);
    } else {
      while (load_acquire<Scope::device>(&b.generation) == gen) __nanosleep(32);
    }
  }
  __syncthreads();
}

// Posts a command for the proxy (thread 0 fills it; all threads stage the payload). Fails only
// when the proxy has failed while the ring was full.
__device__ __forceinline__ int post(BlockState& s, Op op, uint32_t target, uint32_t window, uint64_t offset,
                                    uint64_t bytes, const void* src, uint32_t tag, uint32_t generation) {
  RankHost& h = *s.host;
  const uint32_t position = s.self->ring_tail;  // read by every thread before thread 0 moves it
  const bool room = leader() && wait_on_proxy(s, [&] { return ring_has_room(h, position, s.consumed_seen); });
  if (!broadcast(room)) return DCUDA_FAIL(s, DCUDA_ERROR_REMOTE);
  const bool staged = (op == Op::put || op == Op::put_notify) && bytes <= kInlineBytes;
  if (staged) block_copy(ring_staging(h, position), src, bytes);
  __syncthreads();
  if (leader()) {
    Command& c = ring_slot(h, position);
    c.op = static_cast<uint32_t>(op);
    c.target = target;
    c.tag = tag;
    c.window = window;
    c.staged = staged ? 1 : 0;
    c.offset = offset;
    c.bytes = bytes;
    c.source = reinterpret_cast<uint64_t>(src);
    c.generation = generation;
    // The release is cumulative: after the barrier above it orders the block's staging and these
    // fields ahead of seq (a fence of its own before it cost another system-scope fence).
    ring_post(h, position);
    s.self->ring_tail = position + 1;
    s.self->issued++;
    if ((op == Op::put || op == Op::put_notify) && window < kMaxWindows) s.window_issued[window] = s.self->issued;
  }
  __syncthreads();
  return DCUDA_SUCCESS;
}

__device__ __forceinline__ bool is_local(const BlockState& s, uint32_t world_rank) {
  return world_rank - s.p.first_rank < s.p.ranks_here;
}

// The world barrier: this GPU's blocks, then (with other processes) the proxies'. A world
// barrier also means every put made before it is in place. With a failed proxy every rank
// leaves it with DCUDA_ERROR_REMOTE.
__device__ __forceinline__ int world_barrier(BlockState& s) {
  if (s.p.processes > 1) {  // puts into other processes' memory are seen there before the barrier ends
    __syncthreads();
    if (leader()) __threadfence_system();
  }
  device_barrier(s);
  if (s.p.processes <= 1) return DCUDA_SUCCESS;
  const uint32_t generation = s.self->world_barriers + 1;
  if (s.local == 0 && post(s, Op::barrier, 0, kNoWindow, 0, 0, nullptr, 0, generation) == DCUDA_SUCCESS && leader())
    wait_on_proxy(s, [&] { return reached(load_acquire<Scope::system>(&s.host->proxy.released), generation); });
  if (leader()) s.self->world_barriers = generation;
  device_barrier(s);
  if (broadcast(leader() && proxy_failed(s))) return DCUDA_FAIL(s, DCUDA_ERROR_REMOTE);
  return DCUDA_SUCCESS;
}

// Target rank t's window `win` as this process reaches it (remembered for the next put).
__device__ __forceinline__ WindowEntry look_up_window(BlockState& s, const RankDevice* to, uint32_t t, dcuda_win win,
                                                      bool peer) {
  WindowEntry w;
  if (peer) {  // written by our proxy in host memory: read past any cached copy
    const WindowEntry* e = &s.p.peer_windows[static_cast<uint64_t>(t) * kMaxWindows + win];
    w.bytes = load_acquire_u64(&e->bytes);
    w.base = load_acquire_u64(&e->base);
  } else {
    w = to->windows[win];
  }
  __syncthreads();
  if (leader()) s.cached_target = t, s.cached_window = win, s.cached = w;
  return w;
}

__device__ __forceinline__ int put_common(BlockState& s, dcuda_win win, int target, uint64_t offset, uint64_t bytes,
                                          const void* src, int tag, Op op) {
  const Params& p = s.p;
  if (target < 0 || static_cast<uint32_t>(target) >= p.world_size) return DCUDA_FAIL(s, DCUDA_ERROR_RANK);
  if (tag < 0 || tag >= static_cast<int>(kTags)) return DCUDA_FAIL(s, DCUDA_ERROR_ARGUMENT);
  if (op != Op::notify && (win >= kMaxWindows || (bytes && !src))) return DCUDA_FAIL(s, DCUDA_ERROR_ARGUMENT);
  const uint32_t t = static_cast<uint32_t>(target);
  // The target's rank state and, for a put, its window as this process sees them: a rank of this
  // GPU directly; a rank of another process of this host through memory mapped from it (the
  // window as the proxy mapped it at the barrier that ended dcuda_win_create); else the proxy.
  RankDevice* to;
  bool peer = false;
  if (is_local(s, t)) {
    to = &p.device[t - p.first_rank];
  } else {
    const PeerProcess* q = p.peers ? &p.peers[p.rank_process[t]] : nullptr;
    if (!q || !q->state)
      return post(s, op, t, op == Op::notify ? kNoWindow : win, offset, bytes, src, static_cast<uint32_t>(tag), 0);
    to = reinterpret_cast<RankDevice*>(q->state) + (t - q->first_rank);
    peer = true;
  }
  if (op != Op::notify) {
    const bool known = s.cached_target == t && s.cached_window == win;
    const WindowEntry w = known ? s.cached : look_up_window(s, to, t, win, peer);
    if (w.bytes == 0 || offset > w.bytes || bytes > w.bytes - offset) return DCUDA_FAIL(s, DCUDA_ERROR_WINDOW);
    unsigned char* at = reinterpret_cast<unsigned char*>(w.base) + offset;
    // A payload of up to 16 bytes a byte per thread, without block_copy's loop arithmetic: 0.12 us
    // less per notified access (runs 17-18). Here, not in block_copy, where the same branch
    // changed the register allocation of whole kernels (power iteration: 12% slower, run 21).
    if (bytes <= 16) {  // a loop only for ranks of fewer than 16 threads
      const auto* from = static_cast<const unsigned char*>(src);
      if (at != from)
        for (uint32_t i = thread_index(); i < bytes; i += block_threads()) at[i] = from[i];
    } else {
      block_copy(at, src, bytes);
    }
  }
  __syncthreads();
  // A release is cumulative: it orders the block's copies (before the barrier) ahead of the
  // count, so a waiter that sees the count sees the data. Device scope on one GPU; system scope
  // towards another process (its GPU may be another).
  if (op != Op::put && leader()) {
    if (peer) fetch_add_release<Scope::system>(&to->peer_notes[tag], 1);
    else fetch_add_release<Scope::device>(&to->device_notes[tag], 1);
  }
  return DCUDA_SUCCESS;
}

}  // namespace dcuda::detail

namespace dcuda::detail {

// Notifications of `tag` for this rank that arrived and are not consumed. Acquire loads (the
// data behind a count is visible once the count is), which on this GPU cost less than relaxed
// polling and a fence after it (measured: bench/results/h200/dcuda); the network's counter only
// where a proxy can write it (more than one process).
__device__ __forceinline__ uint32_t arrived(const BlockState& s, uint32_t tag, uint32_t consumed) {
  const RankDevice& me = *s.self;
  if (s.p.processes <= 1) return waiting(load_acquire<Scope::device>(&me.device_notes[tag]), 0, consumed);
  const uint32_t others = load_acquire<Scope::system>(&me.network_notes[tag]) + load_acquire<Scope::system>(&me.peer_notes[tag]);
  return waiting(load_acquire<Scope::device>(&me.device_notes[tag]), others, consumed);
}

// The communicator window `win` of this rank was made over.
__device__ __forceinline__ dcuda_comm window_comm(const BlockState& s, dcuda_win win) {
  return (s.device_windows >> win) & 1 ? DCUDA_COMM_DEVICE : DCUDA_COMM_WORLD;
}

__device__ __forceinline__ bool valid_window(const BlockState& s, dcuda_win win) {
  return win < kMaxWindows && s.self->windows[win].bytes != 0;
}

// A put or put_notify with the reference's arguments: `rank` in the window's communicator. Only
// the translation of a device rank and the sizes' signs here; put_common checks the window id,
// the target rank and the target's window.
__device__ __forceinline__ void put_to(BlockState& s, dcuda_win win, int rank, int offset, int size, const void* buffer,
                                       int tag, Op op) {
  int target = rank;
  if (win < kMaxWindows && ((s.device_windows >> win) & 1))
    target = static_cast<uint32_t>(rank) < s.p.ranks_here ? static_cast<int>(s.p.first_rank) + rank : -1;
  if ((offset | size) < 0) {
    DCUDA_FAIL(s, DCUDA_ERROR_ARGUMENT);
    return;
  }
  put_common(s, win, target, static_cast<uint64_t>(offset), static_cast<uint64_t>(size), buffer, tag, op);
}

// A CPU timer event (Listing 3.4's timers): the device's ranks meet, then rank 0 posts the event
// for the host, which takes the CPU's time when it sees it (runtime/cpu_timers.hpp).
__device__ __forceinline__ void cpu_timer_event(BlockState& s, uint32_t stop) {
  device_barrier(s);
  if (s.local == 0 && leader()) {
    RankHost& h = *s.host;
    const uint32_t position = s.self->timer_next;
    // The host takes events as the kernel runs; it falls behind only by a poll.
    while (position - load_acquire<Scope::system>(&h.timer_taken) >= kTimerSlots) __nanosleep(64);
    TimerEvent& e = h.timer[position % kTimerSlots];
    e.stop = stop;
    store_release<Scope::system>(&e.seq, position + 1);
    s.self->timer_next = position + 1;
  }
  __syncthreads();
}

}  // namespace dcuda::detail

// ---- Listing 3.4: initialisation and timing ----

// Sets up the rank's state `gst` (in shared memory) from the kernel's argument and waits for every
// rank of the world. All ranks, all threads.
__device__ __forceinline__ void dcuda_gpu_init(dcuda_context_handle dcuda, dcuda_state& gst) {
  if (dcuda::detail::leader()) {
    gst.p = dcuda->params;
    gst.local = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    gst.host = gst.p.host + gst.local;
    gst.self = gst.p.device + gst.local;
    gst.cached_window = dcuda::detail::kNoWindow;
    gst.consumed_seen = gst.self->ring_tail - dcuda::detail::kRingSlots;
    gst.device_windows = gst.self->device_windows;
    for (uint32_t w = 0; w < dcuda::detail::kMaxWindows; ++w) gst.window_issued[w] = gst.self->issued;
  }
  __syncthreads();
  dcuda::detail::world_barrier(gst);
}

// Waits for every rank of the world (and so for every put made before). All ranks.
__device__ __forceinline__ void dcuda_gpu_finish(dcuda_state& gst) { dcuda::detail::world_barrier(gst); }

// The data given to dcuda_host_run, in device memory (null without). Copied back after the run.
__device__ __forceinline__ void dcuda_get_data(dcuda_state& gst, void** gpu_data) {
  *gpu_data = const_cast<void*>(gst.p.data);
}

// The size of `comm`: the world's ranks, or the ranks (blocks) of this device. Single threads may
// call it. An unknown communicator: -1, and the rank's error.
__device__ __forceinline__ void dcuda_comm_size(dcuda_state& gst, dcuda_comm comm, int* size) {
  if (comm == DCUDA_COMM_WORLD) *size = static_cast<int>(gst.p.world_size);
  else if (comm == DCUDA_COMM_DEVICE) *size = static_cast<int>(gst.p.ranks_here);
  else *size = -1, dcuda::detail::fail_any_thread(gst, DCUDA_ERROR_ARGUMENT, __LINE__);
}

// This rank's index in `comm`: rank_start + the block index in the world, the block index on the
// device. Single threads may call it. An unknown communicator: -1, and the rank's error.
__device__ __forceinline__ void dcuda_comm_rank(dcuda_state& gst, dcuda_comm comm, int* rank) {
  if (comm == DCUDA_COMM_WORLD) *rank = static_cast<int>(gst.p.first_rank + gst.local);
  else if (comm == DCUDA_COMM_DEVICE) *rank = static_cast<int>(gst.local);
  else *rank = -1, dcuda::detail::fail_any_thread(gst, DCUDA_ERROR_ARGUMENT, __LINE__);
}

// Start and stop a timer measured by the CPU (dcuda_host_get_timings: each stop's time since the
// last start, in milliseconds). All ranks of the device.
__device__ __forceinline__ void dcuda_start_cpu_timer(dcuda_state& gst) { dcuda::detail::cpu_timer_event(gst, 0); }
__device__ __forceinline__ void dcuda_stop_cpu_timer(dcuda_state& gst) { dcuda::detail::cpu_timer_event(gst, 1); }

// ---- Listing 3.5: notified RMA ----

// Waits for every rank of `comm`; a world barrier also means every put made before it is in place.
__device__ __forceinline__ void dcuda_comm_barrier(dcuda_state& gst, dcuda_comm comm) {
  if (comm == DCUDA_COMM_DEVICE) dcuda::detail::device_barrier(gst);
  else if (comm == DCUDA_COMM_WORLD) dcuda::detail::world_barrier(gst);
  else DCUDA_FAIL(gst, DCUDA_ERROR_ARGUMENT);
}

// Collective over `comm`: every rank of it makes its [winbase, winbase + size) a window (base and
// size may differ per rank, windows of one GPU may overlap), and all meet. *win is the window, or
// DCUDA_WIN_NONE where it could not be made (a bad argument; DCUDA_MAX_WINDOWS held at once).
__device__ __forceinline__ void dcuda_win_create(dcuda_state& gst, dcuda_comm comm, void* winbase, int size,
                                                 dcuda_win* win) {
  using namespace dcuda::detail;
  BlockState& s = gst;
  if (comm != DCUDA_COMM_WORLD && comm != DCUDA_COMM_DEVICE) {
    DCUDA_FAIL(s, DCUDA_ERROR_ARGUMENT);
    *win = DCUDA_WIN_NONE;
    return;
  }
  const uint32_t id = s.self->next_window % kMaxWindows;
  int rc = DCUDA_SUCCESS;
  if (size < 0) rc = DCUDA_ERROR_ARGUMENT;
  else if (s.self->windows[id].bytes != 0) rc = DCUDA_ERROR_TOO_MANY;
  __syncthreads();
  if (leader()) {
    s.cached_window = kNoWindow;
    s.self->next_window++;
    if (rc == DCUDA_SUCCESS) {
      const WindowEntry w{reinterpret_cast<uint64_t>(winbase), winbase ? static_cast<uint64_t>(size) : 0};
      s.self->windows[id] = w;
      s.host->windows[id] = w;
      s.window_issued[id] = s.self->issued;
      const uint32_t bit = 1u << id;
      s.self->device_windows = comm == DCUDA_COMM_DEVICE ? s.self->device_windows | bit : s.self->device_windows & ~bit;
      s.device_windows = s.self->device_windows;
    }
  }
  dcuda_comm_barrier(gst, comm);
  if (rc != DCUDA_SUCCESS) {
    DCUDA_FAIL(s, rc);
    *win = DCUDA_WIN_NONE;
    return;
  }
  *win = id;
}

// Collective over the window's communicator: waits for all its ranks, then forgets the window.
__device__ __forceinline__ void dcuda_win_free(dcuda_state& gst, dcuda_win win) {
  using namespace dcuda::detail;
  BlockState& s = gst;
  if (!valid_window(s, win)) {
    DCUDA_FAIL(s, DCUDA_ERROR_WINDOW);
    return;
  }
  dcuda_comm_barrier(gst, window_comm(s, win));
  if (leader()) {
    s.self->windows[win] = s.host->windows[win] = WindowEntry{0, 0};
    s.cached_window = kNoWindow;
  }
  __syncthreads();
}

// Notifies rank `rank` of `comm` with `tag` (0 .. 255), after every earlier put of this rank to it.
// (A world rank goes to put_common as it is: it checks the range.)
__device__ __forceinline__ void dcuda_notify(dcuda_state& gst, int rank, dcuda_comm comm, int tag) {
  int target = rank;
  if (comm == DCUDA_COMM_DEVICE) {
    target = static_cast<uint32_t>(rank) < gst.p.ranks_here ? static_cast<int>(gst.p.first_rank) + rank : -1;
  } else if (comm != DCUDA_COMM_WORLD) {
    DCUDA_FAIL(gst, DCUDA_ERROR_ARGUMENT);
    return;
  }
  dcuda::detail::put_common(gst, 0, target, 0, 0, nullptr, tag, dcuda::detail::Op::notify);
}

// Copies `size` bytes at `buffer` into the window of rank `rank` (of the window's communicator)
// at `offset`. No notification: the target learns of it from a later notify of this rank, or a
// barrier.
__device__ __forceinline__ void dcuda_put(dcuda_state& gst, dcuda_win win, int rank, int offset, int size,
                                          void* buffer) {
  dcuda::detail::put_to(gst, win, rank, offset, size, buffer, 0, dcuda::detail::Op::put);
}

// The same, then notifies the target with `tag` once the data is in place.
__device__ __forceinline__ void dcuda_put_notify(dcuda_state& gst, dcuda_win win, int rank, int offset, int size,
                                                 void* buffer, int tag) {
  dcuda::detail::put_to(gst, win, rank, offset, size, buffer, tag, dcuda::detail::Op::put_notify);
}

// Waits until every put this rank made on `win` no longer reads its source buffer (it may be
// reused). Puts to ranks of this GPU or mapped from this host are done when they return.
__device__ __forceinline__ void dcuda_win_flush(dcuda_state& gst, dcuda_win win) {
  using namespace dcuda::detail;
  BlockState& s = gst;
  if (win >= kMaxWindows) {
    DCUDA_FAIL(s, DCUDA_ERROR_WINDOW);
    return;
  }
  const uint32_t until = s.window_issued[win];
  const bool ok = leader() && wait_on_proxy(s, [&] {
    return reached(load_acquire<Scope::system>(&s.host->proxy.completed), until);
  });
  if (!broadcast(ok)) DCUDA_FAIL(s, DCUDA_ERROR_REMOTE);
}

// Consumes `count` notifications of `tag` if that many have arrived: returns 1; else 0 and
// consumes none. A bad argument: 0, and the rank's error.
__device__ __forceinline__ int dcuda_test_notifications(dcuda_state& gst, int tag, int count) {
  using namespace dcuda::detail;
  BlockState& s = gst;
  if (tag < 0 || tag >= static_cast<int>(kTags) || count < 0) {
    DCUDA_FAIL(s, DCUDA_ERROR_ARGUMENT);
    return 0;
  }
  bool got = false;
  if (leader()) {
    uint32_t& consumed = s.self->consumed_notes[tag];
    if (arrived(s, tag, consumed) >= static_cast<uint32_t>(count)) {
      consumed += count;
      got = true;
    }
  }
  return broadcast(got) ? 1 : 0;
}

// Waits until `count` notifications of `tag` have arrived, and consumes them. With other processes,
// gives up (the rank's error: DCUDA_ERROR_REMOTE) when the host proxy has failed.
__device__ __forceinline__ void dcuda_wait_notifications(dcuda_state& gst, int tag, int count) {
  using namespace dcuda::detail;
  BlockState& s = gst;
  if (tag < 0 || tag >= static_cast<int>(kTags) || count < 0) {
    DCUDA_FAIL(s, DCUDA_ERROR_ARGUMENT);
    return;
  }
  bool ok = true;
  if (leader()) {
    const uint32_t consumed = s.self->consumed_notes[tag];
    // Only with other processes can the notifications be lost with the proxy: then the proxy's
    // failure flag is read every kFailureCheckSpins polls (a countdown: no division per poll).
    const bool alone = s.p.processes <= 1;
    for (uint32_t spins = kFailureCheckSpins; arrived(s, tag, consumed) < static_cast<uint32_t>(count);)
      if (!alone && --spins == 0) {
        if (proxy_failed(s)) {
          ok = false;
          break;
        }
        spins = kFailureCheckSpins;
      }
    if (ok) s.self->consumed_notes[tag] = consumed + count;
  }
  if (!broadcast(ok)) DCUDA_FAIL(s, DCUDA_ERROR_REMOTE);
}

// ---- Additions ----

// The rank's first error (DCUDA_SUCCESS: none), as the host also reports it after the run.
__device__ __forceinline__ int dcuda_last_error(dcuda_state& gst) { return gst.self->error; }

// Writes one line to the run's streaming log: `text` (up to 39 bytes are kept) and `value`, which
// the host prints while the kernel runs (to stderr, or the file DCUDA_LOG names) as
// "dcuda rank R [T s]: text value". Never waits: when the host has not caught up with the rank's
// last 16 lines the line is dropped, and the host reports how many were.
__device__ __forceinline__ void dcuda_log(dcuda_state& gst, const char* text, long long value) {
  using namespace dcuda::detail;
  BlockState& s = gst;
  __syncthreads();
  if (leader()) {
    RankHost& h = *s.host;
    const uint32_t position = s.self->log_next;
    if (position - load_acquire<Scope::system>(&h.log_printed) >= kLogSlots) {
      h.log_dropped++;
    } else {
      LogRecord& r = h.log[position % kLogSlots];
      uint32_t i = 0;
      for (; text && text[i] && i + 1 < kLogText; ++i) r.text[i] = text[i];
      r.text[i] = 0;
      r.value = value;
      r.time_ns = globaltimer();
      store_release<Scope::system>(&r.seq, position + 1);
      s.self->log_next = position + 1;
    }
  }
  __syncthreads();
}

// Stamps GPU-clock timer `index` (0 .. DCUDA_MAX_TIMERS - 1) of this rank with the GPU's
// nanosecond global timer; dcuda_host_get_gpu_timings returns them after the run. Costs no
// message to the host (the CPU timers' do).
__device__ __forceinline__ void dcuda_gpu_timer(dcuda_state& gst, int index) {
  __syncthreads();
  if (dcuda::detail::leader() && index >= 0 && index < static_cast<int>(dcuda::detail::kTimers) && gst.p.timings)
    gst.p.timings[gst.local * dcuda::detail::kTimers + index] = dcuda::detail::globaltimer();
}
