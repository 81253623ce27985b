// The memory a dcuda process shares between its GPU's ranks (thread blocks), its host proxy and
// its copy engine, and the kernel parameter that points at it. Plain structs of fixed layout, so
// device code, the proxy and the CPU tests all read the same bytes.
//
// Two regions per process:
// - HostShared, page-locked and mapped into the device (cudaHostAlloc mapped): per rank the
//   command ring the rank posts remote work into (device → proxy), the staging slots of small
//   payloads, the counters the proxy writes back (ring slots consumed, commands completed, world
//   barrier releases), and a mirror of the rank's windows for the proxy to check puts against.
// - DeviceShared, device memory: per rank the notification counters (same-GPU writers with
//   device atomics; the proxy with stream-ordered writes behind the data), the counts the rank
//   has consumed, its windows, and the device-wide barrier.
#pragma once
#include <stdint.h>

namespace dcuda::detail {

constexpr uint32_t kTags = 256;           // tags 0 .. 255
constexpr uint32_t kRingSlots = 32;       // commands a rank may have posted and not yet consumed
constexpr uint32_t kInlineBytes = 4096;   // payloads up to this travel in the command's staging slot
constexpr uint32_t kMaxWindows = 32;      // windows a rank may hold at once
constexpr uint32_t kNoWindow = 0xffffffffu;
constexpr uint32_t kLogSlots = 16;        // log records a rank may have written and the host not yet printed
constexpr uint32_t kLogText = 40;         // bytes of a record's text, its terminating zero included
constexpr uint32_t kTimerSlots = 64;      // CPU timer events the device may have posted and the host not yet taken

enum class Op : uint32_t {
  put = 1,         // bytes at `source` (or staged) into the target's window at `offset`
  notify = 2,      // the target's counter of `tag`, no data
  put_notify = 3,  // put, then notify once the data is in place
  barrier = 4,     // the world barrier of `generation` (one per process, from its last block)
};

// One remote operation, posted by a rank's thread 0 into its ring in host memory. The proxy
// reads a slot once `seq` (written last, with release) equals its position + 1.
struct alignas(64) Command {
  uint32_t seq;
  uint32_t op;         // Op
  uint32_t target;     // world rank
  uint32_t tag;
  uint32_t window;     // window id (put, put_notify)
  uint32_t staged;     // 1: the payload is in the slot's staging, else at `source` on the device
  uint64_t offset;     // byte offset in the target's window
  uint64_t bytes;
  uint64_t source;     // device address of the payload when not staged
  uint32_t generation; // barrier
  uint32_t pad[3];
};
static_assert(sizeof(Command) == 64, "one cache line per command");

// What the proxy writes back to one rank (host memory, read by the device with system-scope
// acquire loads). Monotonic 32-bit counts, compared wrap-safely.
struct alignas(64) ProxyCounters {
  uint32_t consumed;  // ring slots the proxy is done with (their staging may be reused)
  uint32_t completed; // commands whose source the proxy no longer reads (dcuda_win_flush)
  uint32_t released;  // world barriers completed by every process (generation)
  uint32_t failed;    // nonzero: the proxy has failed (its error ends the run); waits should give up
  uint32_t pad[12];
};

// One line of a rank's streaming log (dcuda_log), written by the rank's thread 0 into host memory
// and printed by the host while the kernel runs. The host reads a slot once `seq` (written last,
// with release) equals its position + 1.
struct alignas(64) LogRecord {
  uint32_t seq;
  uint32_t pad;
  int64_t value;
  uint64_t time_ns;    // the GPU's global timer
  char text[kLogText];
};
static_assert(sizeof(LogRecord) == 64, "one cache line per record");

// One CPU timer event (dcuda_start_cpu_timer, dcuda_stop_cpu_timer), posted by the device's rank 0
// into host memory; the host takes the CPU's time when it sees it (`seq`, written last with
// release, equal to its position + 1).
struct TimerEvent {
  uint32_t seq;
  uint32_t stop;  // 1: stop, 0: start
};

// A window as one rank registered it: the device address of its base and its size in bytes;
// bytes == 0 and base == 0: no window under that id.
struct WindowEntry {
  uint64_t base;
  uint64_t bytes;
};

// Per-rank part of HostShared.
struct alignas(64) RankHost {
  Command ring[kRingSlots];
  ProxyCounters proxy;
  WindowEntry windows[kMaxWindows];  // mirror of RankDevice::windows for the proxy
  LogRecord log[kLogSlots];
  uint32_t log_printed;  // records the host has printed (it writes; the rank reads)
  uint32_t log_dropped;  // records the rank dropped because the host had not caught up (the rank writes)
  TimerEvent timer[kTimerSlots];  // rank 0's CPU timer events (the device's ranks start and stop together)
  uint32_t timer_taken;           // events the host has taken (it writes; rank 0 reads)
  unsigned char staging[kRingSlots][kInlineBytes];
};

// Per-rank part of DeviceShared.
struct alignas(64) RankDevice {
  uint32_t device_notes[kTags];   // bumped by ranks of this GPU (device-scope atomics)
  uint32_t network_notes[kTags];  // written by the proxy (stream-ordered after the data)
  uint32_t peer_notes[kTags];     // bumped by ranks of other processes of this host (system-scope atomics)
  uint32_t consumed_notes[kTags]; // what this rank's test/wait took (its own thread 0 only)
  WindowEntry windows[kMaxWindows];
  // The rank's own bookkeeping, kept from one run (kernel launch) to the next.
  uint32_t ring_tail;        // next ring position
  uint32_t issued;           // commands posted (dcuda_win_flush waits for completed to reach it)
  uint32_t next_window;      // windows created so far (ids are this modulo kMaxWindows)
  uint32_t world_barriers;   // world barriers passed
  int32_t error;             // first error of a dcuda call in this rank (0: none)
  uint32_t error_line;       // where (the dcuda header's line), for the host's report
  uint32_t device_windows;   // bit i: window i was made over DCUDA_COMM_DEVICE (else the world)
  uint32_t log_next;         // log records written
  uint32_t timer_next;       // CPU timer events posted (rank 0)
  uint32_t pad[7];
};

// The device-wide barrier of all blocks of the grid.
struct alignas(64) DeviceBarrier {
  uint32_t arrived;
  uint32_t generation;
  uint32_t pad[14];
};

// Another process of the run as this process's ranks reach it: `state` its RankDevice region
// mapped into ours when it is of this host and could be mapped (then its ranks are reached
// directly, as on one GPU, through memory mapped with CUDA IPC), else 0 (through the proxies).
struct PeerProcess {
  uint64_t state;
  uint32_t first_rank;
  uint32_t ranks;
};

// Where everything is and who this process is: the kernel reaches it through its dcuda_context.
struct Params {
  RankHost* host;          // device pointers to the mapped host region, one entry per local rank
  RankDevice* device;
  DeviceBarrier* barrier;
  uint32_t world_size;     // ranks of all processes
  uint32_t first_rank;     // world rank of this process's block 0
  uint32_t ranks_here;     // blocks of this grid
  uint32_t processes;
  const void* data;        // the user's data (dcuda_get_data), device memory
  uint64_t data_bytes;
  uint64_t* timings;       // per rank kTimers clock values (ns), device memory
  // Several processes: per process how to reach it (device memory), the process of each world
  // rank (device memory), and the windows of directly reached ranks as mapped here
  // ([world rank * kMaxWindows + window], page-locked host memory the proxy fills at the world
  // barrier that ends dcuda_win_create). Null in a run of one process.
  const PeerProcess* peers;
  const uint32_t* rank_process;
  const WindowEntry* peer_windows;
  uint32_t pad[2];
};

constexpr uint32_t kTimers = 16;

}  // namespace dcuda::detail

// What dcuda_context_handle points to: the kernel's one argument is a pointer to this, in device
// memory (the reference's dcuda_kernel_t takes a single pointer), and dcuda_gpu_init copies it
// into the rank's state.
struct dcuda_context {
  dcuda::detail::Params params;
};
