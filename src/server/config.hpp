// The daemon's settings: defaults, then the TOML file, then command-line flags.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <thread>

#include "common/spin.hpp"

namespace outboard::server {

inline unsigned default_copy_lanes() {
  return std::clamp(std::thread::hardware_concurrency() * 3 / 4, 1u, 16u);
}

inline constexpr uint64_t kMinOpenclStagingBytes = 4 << 20;

struct Config {
  std::string host = "127.0.0.1";  // loopback unless asked: a server is a remote-execution service
  uint16_t port = 7700;
  std::string token_file;          // empty: common default_token_path()
  unsigned compute_threads = 4;    // calls executed at once (each backend call may use many cores)
  uint64_t max_request_bytes = 8ull << 30;      // largest payload of one call
  uint64_t max_client_bytes = 16ull << 30;      // payload memory one client may hold at once
  // Sessions at once, and (a bound of their own) connections still authenticating: a storm of
  // clients starting together (an MPI job's ranks) is held, not refused, up to this many.
  unsigned max_clients = 1024;
  // Connections one session may have in all (its first and its lanes, wire::JoinSession): where
  // one TCP connection moves less than the link (about 30 Gbit/s, a core's worth), a client sends
  // its chunks and receives its results over several. 1: none beside the first.
  unsigned lanes = 8;
  // Threads that serve sessions' lanes, each with a UCX worker and a port of its own (a free one,
  // named to each client in wire::AuthResult): a lane's bytes are then moved by its own core, not
  // by the progress thread that serves everything else. 0: lanes join on `port` and share that thread.
  // 8: each moves about 30-40 Gbit/s, and a call's input and result cross at once (4 left the calls
  // across 100 Gbit/s at 1.25-1.36x their bytes at its rate, 8: 0.91-1.12x).
  unsigned lane_threads = 8;
  // Lane thread i listens on lane_port + i (a worker per GPU w: lane_port + w * lane_threads + i),
  // for firewalls; 0: on free ports.
  uint16_t lane_port = 0;
  uint64_t buffer_cache_bytes = 0;  // freed payload memory kept for reuse; 0: an eighth of the RAM
  // Inputs kept between calls so that they need not travel again (wire::ResidentInput): per
  // session, and for all sessions together; 0 (either): none kept.
  uint64_t resident_bytes = 1ull << 30;
  uint64_t resident_total_bytes = 8ull << 30;
  double gpu_min_flops = 1e9;        // smaller Level-3 calls run on the CPU backend even with a GPU
  // Pipelined calls on a host backend run in column blocks at least this wide: a CPU BLAS loses
  // more to narrow blocks than it gains from starting early (a GPU backend chooses its own).
  uint64_t host_block_columns = 1024;
  unsigned gpus = 0;                 // GPUs to serve with (the first ones); 0: all there are
  // Where the host has NVIDIA GPUs, `outboard serve` runs the server in a child process and starts
  // it again when a GPU fault has left the GPUs unusable in that process (serve_restarts.hpp).
  bool restart_after_gpu_fault = true;
  // With two or more GPUs, a process per GPU (worker i on port + i, serve_restarts.hpp): a fault
  // then costs only its GPU while the others serve on, and concurrent clients' calls scale better
  // (issue 32: 8 DGEMM 8192 clients on 2 H200s 1.43x one process owning both); but no single call
  // spreads over several GPUs, and OpenCL programs see a platform per GPU.
  bool worker_per_gpu = true;
  uint64_t gpu_memory_bytes = 0;     // most GPU memory one pipelined call uses before it is tiled; 0: 85%
  // The direct path (LAPACK calls whose arrays the server copies itself, see direct.hpp): threads
  // that copy at once (each ~6 GB/s between processes of one host; on the 16-core H200 host 8
  // lanes solved DGESV 16384 in 0.296 s, 12 in 0.236 s); 0: off, calls are sent in chunks.
  // Default: three quarters of the cores, at most 16.
  unsigned copy_lanes = default_copy_lanes();
  uint64_t direct_chunk_bytes = 8ull << 20;  // one copy's size on the direct path
  double auth_timeout_seconds = 10;  // a connection that has not authenticated by then is closed
  // Identities: a folder of secret files (mode 0600, as `outboard token` writes them), one per
  // client group, named by the file's name; reread on SIGHUP (a removed file revokes it, and ends
  // its sessions). Empty: one identity, "default", whose secret is token_file.
  std::string identities_dir;
  // Per identity, over all its sessions (0: no limit): sessions at once, payload memory held,
  // calls admitted and not yet answered.
  unsigned identity_max_sessions = 0;
  uint64_t identity_max_bytes = 0;
  unsigned identity_max_calls = 0;
  // The same-host copy lanes (CMA) read and write a client's memory: offered only to clients
  // running as the server's user, unless this is on.
  bool cma_other_users = false;
  // Encrypted sessions only (networks that are not trusted): every message and payload sealed
  // with keys from the handshake (transport::Worker::protect); clients must set
  // OUTBOARD_ENCRYPT=1, others are refused. No copy lanes, no direct path, no sinks then.
  bool encrypt = false;
  // After activity the progress thread polls on for this long, pausing the core briefly between
  // empty polls, before it yields on each one (then sleeps after 2 ms). Side by side on the 2-core
  // VM with client and server on two CPUs, 5 us streamed 16-64 KiB 2-4% faster (1-8 KiB: -2% to
  // +9% in two runs), 2-3% unpinned; with both on one CPU it costs 15-30% (the client waits
  // out the polling): 0 there, to yield at once. With cores to spare (8 or more hardware
  // threads) 100 us, as the OpenCL sessions' threads poll (common/spin.hpp): a remote kernel +
  // clFinish waits ~15 us for the device, and a progress thread yielding meanwhile answered it
  // 1-2.5 us later (bench/results/h200/opencl-launch).
  uint64_t idle_spin_ns = spare_core_poll_ns() ? spare_core_poll_ns() : 5000;
  // FFTs on the host (FFTW): threads per plan (0: all cores); planner estimate | measure | patient
  // (measure and patient plan on scratch memory, then reuse the plan; their wisdom goes to
  // fft_wisdom_file, read again at start); plans cached (least recently used out).
  unsigned fft_threads = 0;
  std::string fft_planner = "estimate";
  std::string fft_wisdom_file;
  unsigned fft_max_plans = 64;
  // FFTs on a GPU (cuFFT): device memory the cached plans and their buffers may hold; 0: 40%.
  uint64_t fft_gpu_memory_bytes = 0;
  // A batched FFT on a GPU runs as up to this many cuFFT calls (slices of the batch), so the first
  // slices are computed and returned while later ones arrive; 1: one call.
  int64_t fft_batch_slices = 8;
  // Page-locked staging reserved at start for the GPU backends (backends::CudaOptions says why);
  // -1: the smaller of 16 GiB and an eighth of the RAM; 0: none, staging is locked per call.
  int64_t pinned_reserve_bytes = -1;
  // Remote OpenCL: serve the host's OpenCL platforms (when the ICD loader finds any); objects and
  // buffer/image bytes one session may hold at once (0: no limit but the device's).
  bool opencl = true;
  uint64_t opencl_max_objects = 1 << 16;
  uint64_t opencl_max_memory_bytes = 0;
  // Host memory one session's large buffer transfers (the direct path) stage in on their way
  // between the device and the client, at once: a transfer streams through it in pieces, and
  // queued transfers wait their turn. At least kMinOpenclStagingBytes (four of the smallest pieces).
  uint64_t opencl_direct_staging_bytes = 256ull << 20;
  // One session's writes (from their received data) the native platform holds at once; a write
  // beyond it waits, at most 2 s, for the earlier ones (backends/opencl/write_gate.hpp). 0: no bound.
  uint64_t opencl_write_bytes_in_flight = 512ull << 20;
  // A session's operation whose native call has not returned after this many seconds is logged
  // and shown in the status, and new work on its platform is refused until it returns
  // (backends/opencl/native_watch.hpp). Builds are not counted. 0: never.
  unsigned opencl_stuck_seconds = 60;
  // How a session learns that the commands its client waits for have ended: "poll" (a thread
  // polls their status: soonest, costs a core while commands are pending), "wait" (blocking waits
  // and the platform's completion callbacks), "auto": poll with 8 or more hardware threads.
  std::string opencl_event_polling = "auto";
  std::string log_level = "info";
  std::string log_format = "text";
  // Prometheus metrics over HTTP (GET /metrics, metrics.hpp) on this address; port 0: off.
  std::string metrics_host = "127.0.0.1";
  uint16_t metrics_port = 0;

  bool operator==(const Config&) const = default;  // the shipped outboard.toml's test compares defaults
};

// Reads a TOML file whose keys are the field names above (host, port, token_file,
// compute_threads, max_request_bytes, max_client_bytes, max_clients, lanes, lane_threads, lane_port, buffer_cache_bytes,
// resident_bytes, resident_total_bytes,
// gpu_min_flops, host_block_columns, gpus, restart_after_gpu_fault, worker_per_gpu, gpu_memory_bytes, copy_lanes, direct_chunk_bytes,
// auth_timeout_seconds, idle_spin_ns, fft_threads, fft_planner, fft_wisdom_file, fft_max_plans,
// fft_gpu_memory_bytes, fft_batch_slices, pinned_reserve_bytes, opencl, opencl_max_objects,
// opencl_max_memory_bytes, opencl_direct_staging_bytes, opencl_write_bytes_in_flight, opencl_stuck_seconds, opencl_event_polling, log_level,
// log_format, metrics_host,
// metrics_port), on top of `base`. Throws Error naming the file, line and key on unknown
// keys, wrong types or out-of-range values.
Config load_config_file(const std::string& path, Config base = {});

// Checks ranges; throws Error with the offending setting's name.
void validate(const Config& c);

}  // namespace outboard::server
