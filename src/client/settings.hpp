// The client runtime's settings, read from the environment of the application.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace outboard::client {

enum class OffloadMode { automatic, always, never };
enum class FallbackMode { local, fail };
// How OUTBOARD_OFFLOAD=auto decides: the link-aware cost model (link_model.hpp), or only the
// call's flops against min_flops (as before the model; the tests that need a call served use it).
enum class AutoRule { model, flops };

struct ServerAddress {
  std::string host;
  uint16_t port;
  std::string text() const;
};

struct Settings {
  std::vector<ServerAddress> servers;  // tried in order
  std::string token_file;
  std::string identity;  // OUTBOARD_IDENTITY: whose secret token_file holds (empty: "default")
  OffloadMode offload = OffloadMode::automatic;
  FallbackMode fallback = FallbackMode::local;
  AutoRule auto_rule = AutoRule::model;
  double min_flops = 1e9;        // auto mode: smaller calls run locally (the model decides above)
  double retry_seconds = 10;     // after a failure, stay local this long before trying again
  double timeout_seconds = 0;    // per remote call; 0 = no limit (a dead server is detected anyway)
  double connect_timeout_seconds = 5;
  bool encrypt = false;          // OUTBOARD_ENCRYPT=1: insist on an encrypted session (docs/servers.md: Encryption)
  bool connect_early = true;     // connect while a BLAS/LAPACK/FFTW program starts (early_connect.cpp)
  bool report = false;           // print where the time went when the program exits
  std::string trace_file;        // write every remote call's phases here at exit
  // The cost model's memory between processes (model_memory.hpp): read at the start, written at
  // exit; empty: none (the model starts from its priors in every process).
  std::string model_file;
  // Calls of at least two chunks travel in chunks of this many bytes, so the server starts
  // copying and computing before all of the input is there; 0 sends every call whole.
  double chunk_bytes = 8 << 20;
  double chunk_window = 4;  // chunks of one call in flight at once, per connection
  // Connections a session may carry its chunks and streams over where its data crosses TCP (its
  // own and lanes, wire::JoinSession): one TCP connection moves about a core's worth (~30 Gbit/s
  // on the H200 host), less than a fast link. The server's offer bounds it; 1: one only. Each lane
  // has a UCX worker and a thread of its own on both sides where the server has lane threads, and
  // then the lanes carry all the bulk data: 5 (4 lanes) moved 0.93 of a 100 Gbit/s link where 1
  // moved 0.33; 8 (7 lanes, on the server's 8 lane threads) brought the calls across it within
  // 1.15x their bytes at its rate, where 5 left them at 1.25-1.36x, as both directions at once
  // need more lane threads than one (bench/results/h200/link/lanes, 2026-11-30).
  double lanes = 8;
  // Which of remote OpenCL's large transfers use the lanes too (OUTBOARD_CL_LANES): reads (their
  // results; the default), 1 (writes' data too), 0 (none). Writes stay on the session's connection
  // by default: with their data over the lanes NVIDIA's OpenCL hung inside clEnqueueWriteBuffer on
  // the H200 host, 1 run in 3 to 10; with the reads alone it did not in 24, and they came 2x
  // faster (bench/results/h200/link/cl-lanes, runs 12-17).
  enum class ClLanes { none, reads, all };
  ClLanes cl_lanes = ClLanes::reads;
  // Released staging memory kept for the next call (a fresh large buffer costs a page fault per
  // page, which for matrices of GiB costs more than moving them); -1: an eighth of physical memory.
  double cache_bytes = -1;
  // The direct path: where the server offers copy lanes, large LAPACK calls let the server copy
  // their arrays out of and into this process's memory itself (no packing, no chunk sends).
  bool direct = true;
  bool direct_cma = true;  // on one host, let the server copy with CMA (else through UCX's RMA)
  // UCX's one-sided copies also where UCX runs them over TCP (OUTBOARD_DIRECT=ucx). Otherwise such
  // a session's large calls go in chunked messages: over TCP the server's gets crawl (numpy matmul
  // 8192 across the link rig on the H200 host: 1.5 s through them, 0.54 s in chunks).
  bool direct_over_tcp = false;
  // Inputs of at least resident_min_bytes that the server holds from an earlier call (the same
  // bytes, by their digest) are not sent again (resident_inputs.hpp); OUTBOARD_RESIDENT=0: off.
  bool resident = true;
  double resident_min_bytes = 1 << 20;
  // Threads that keep the values of arrays updated in place, on the direct path, while the server
  // works (so a failed call can still run locally); also the threads that digest resident inputs.
  double copy_threads = 4;
  // A GEMM of at least split_flops is spread over at most split_servers idle servers (the workers
  // of a host's GPUs, or several servers), C's columns dealt out in blocks; 1: never.
  double split_servers = 16;
  double split_flops = 4e12;
  // A batch of FFTs of at least this many bytes of input is spread the same way, by transforms.
  double split_fft_bytes = 256 << 20;
  // The cost model's priors (link_model.hpp), each replaced by measurements as calls run; 0: derived.
  double local_gflops = 0;       // this host's double GEMM (0: 30 per core)
  double fft_local_gflops = 0;   // this host's FFTW, 5 N log2 N convention (0: 4 x sqrt(cores))
  double server_gflops = 0;      // the server's double GEMM (0: 20000 with a GPU, else as here)
  double link_gbytes = 2;        // GB/s, until the connect-time probe measures it
  double latency_seconds = 50e-6;
  // The probe's bytes at each connection (auto mode, model rule); 0: no probe.
  double link_probe_bytes = 8 << 20;
  std::vector<std::string> problems;  // malformed variables: reported once, defaults used instead
};

inline constexpr uint16_t kDefaultPort = 7700;

// OUTBOARD_SERVERS (comma-separated host:port, [v6]:port), else RCPU_SERVER (ip:port), else the
// hostfile ~/.config/outboard/hosts, else /etc/outboard/hosts (one address per line, '#'
// comments), else 127.0.0.1:7700; OUTBOARD_TOKEN_FILE; OUTBOARD_OFFLOAD=auto|always|never;
// OUTBOARD_FALLBACK=local|fail; OUTBOARD_MIN_FLOPS; OUTBOARD_RETRY_SECONDS; OUTBOARD_TIMEOUT;
// OUTBOARD_CONNECT_TIMEOUT; OUTBOARD_CONNECT_EARLY=1|0; OUTBOARD_ENCRYPT=1|0; OUTBOARD_REPORT=1; OUTBOARD_TRACE=FILE; OUTBOARD_CHUNK_BYTES (0, or at
// least 65536); OUTBOARD_CHUNK_WINDOW (1..1024); OUTBOARD_CACHE_BYTES; OUTBOARD_DIRECT=1|0|ucx;
// OUTBOARD_COPY_THREADS (1..64); OUTBOARD_SPLIT_SERVERS (1..64), OUTBOARD_SPLIT_FLOPS,
// OUTBOARD_SPLIT_FFT_BYTES; OUTBOARD_AUTO_RULE=model|flops; OUTBOARD_LOCAL_GFLOPS,
// OUTBOARD_FFT_LOCAL_GFLOPS, OUTBOARD_SERVER_GFLOPS, OUTBOARD_LINK_GBYTES (> 0);
// OUTBOARD_LINK_PROBE_BYTES (0 to 2^30); OUTBOARD_RESIDENT=1|0, OUTBOARD_RESIDENT_MIN_BYTES (>= 4096).
Settings settings_from_environment();

// "host:port", "[v6addr]:port" or "host" (default port). Throws Error when malformed.
ServerAddress parse_server_address(const std::string& text);

}  // namespace outboard::client
