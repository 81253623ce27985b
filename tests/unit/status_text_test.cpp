// `outboard status` for people (tools/outboard/status_text.cpp): sections, human units, and a
// document from a server of another version (missing keys, other types) printed without error.
#include "tools/outboard/status_text.hpp"

#include <gtest/gtest.h>

namespace outboard::tool {
namespace {

TEST(StatusText, HumanUnits) {
  EXPECT_EQ(human_bytes(0), "0 B");
  EXPECT_EQ(human_bytes(1023), "1023 B");
  EXPECT_EQ(human_bytes(1536), "1.50 KiB");
  EXPECT_EQ(human_bytes(12ull << 20), "12.0 MiB");
  EXPECT_EQ(human_bytes(8ull << 30), "8.00 GiB");
  EXPECT_EQ(human_bytes(150ull << 30), "150 GiB");
  EXPECT_EQ(human_bytes(~0ull), "16.0 EiB");
  EXPECT_EQ(human_seconds(0.25), "0.25 s");
  EXPECT_EQ(human_seconds(42), "42 s");
  EXPECT_EQ(human_seconds(185), "3 min 05 s");
  EXPECT_EQ(human_seconds(7800), "2 h 10 min");
  EXPECT_EQ(human_seconds(3 * 86400 + 4 * 3600 + 5), "3 d 4 h");
  EXPECT_EQ(human_seconds(-1), "?");
}

TEST(StatusText, SectionsFromAServersDocument) {
  const auto doc = nlohmann::json::parse(R"({
    "server": "gpu-host", "listen": "0.0.0.0:7700", "version": "0.1.0", "pid": 4242, "uptime_seconds": 3725.4,
    "encrypt": true, "restarts": {"count": 1, "last_reason": "gpu fault"},
    "calls": 12, "errors": 1, "connections": 5, "refused_authentications": 2, "held_bytes": 3145728,
    "buffer_bytes": 1073741824, "load": {"calls": 2, "sessions": 3, "free_device_bytes": 0},
    "worker": {"index": 1, "of": 2, "sibling_ports": [7701]},
    "backends": [
      {"name": "cpu", "library": "OpenBLAS 0.3.21", "threads": 16,
       "fft": {"library": "fftw-3.3.10", "planner": "measure", "plans": 4, "hits": 9}},
      {"name": "cuda", "device": 1, "gpu": "NVIDIA H200", "memory_bytes": 150754820096, "compute_capability": "9.0",
       "pcie": "Gen5 x16", "health": {"state": "serving", "uses": 30, "faults": 1, "recoveries": 1,
       "last_fault": "Xid 79"}},
      {"devices": 1, "platforms": [{"name": "NVIDIA CUDA", "version": "OpenCL 3.0 CUDA"}]}],
    "calls_by_routine": {"dtrsm": 1, "dgemm": 9, "zfft": 2},
    "pipelined_calls": 3, "direct_calls": 1,
    "fft": {"plans_made_ahead": 2, "session_plans": 1, "plans_over_limit": 0},
    "resident": {"bytes": 67108864, "limit": 8589934592, "hits": 5, "misses": 2, "bytes_not_sent": 335544320},
    "lanes": {"offered": 8, "open": 2, "joined": 1},
    "opencl": {"sessions": 1, "objects": 7, "operations": 100, "kernels": 40, "failures": 0,
               "bytes_written": 2048, "bytes_read": 4096, "direct_bytes_written": 0, "direct_bytes_read": 0,
               "stuck": [{"platform": "NVIDIA CUDA", "operation": "write", "session": 9, "seconds": 75.2}]},
    "clients": [{"id": 7, "address": "10.0.0.5:50000", "client": "node3:123:python3", "identity": "alice",
                 "connected_seconds": 65.2, "calls": 12, "errors": 1, "bytes_in": 5242880, "bytes_out": 1024}],
    "clients_not_listed": 3})");
  const std::string t = status_text(doc);
  for (const char* want :
       {"Server gpu-host at 0.0.0.0:7700 (outboard 0.1.0, pid 4242)\n", "  up            1 h 02 min\n",
        "  worker        1 of 2 (a process per GPU; the others on ports 7701", "  encryption    required\n",
        "  restarts      1 (last: gpu fault)\n", "  calls         12, errors 1, in progress 2\n",
        "  memory held   3.00 MiB for calls, 1.00 GiB of buffers\n", "\nBackends\n",
        "  cpu           OpenBLAS 0.3.21 (16 threads)\n", "FFTW fftw-3.3.10 (measure planner, 4 plans, 9 hits)",
        "  cuda 1        NVIDIA H200, 140 GiB, compute 9.0, PCIe Gen5 x16: serving; 30 uses, 1 faults, 1 recoveries; "
        "last fault: Xid 79\n",
        "  opencl        NVIDIA CUDA (OpenCL 3.0 CUDA); 1 device\n", "\nServices\n",
        "  routines      dgemm 9, zfft 2, dtrsm 1\n", "  resident      64.0 MiB kept of 8.00 GiB; 5 hits, 2 misses; 320 MiB",
        "  lanes         8 offered, 2 open, 1 joined\n", "  OpenCL        1 sessions, 7 objects, 100 operations, 40 kernels",
        "2.00 KiB written, 4.00 KiB read",
        "STUCK: write on \"NVIDIA CUDA\" has not returned for 1 min 15 s (session 9); new work there is refused\n",
        "\nClients (1)\n", "alice", "1 min 05 s", "5.00 MiB", "1.00 KiB",
        "  (3 more not listed)\n"})
    EXPECT_NE(t.find(want), std::string::npos) << "missing: " << want << "\nin:\n" << t;
  // No raw JSON: every backend is described in words.
  EXPECT_EQ(t.find('{'), std::string::npos) << t;
}

TEST(StatusText, AnotherVersionsDocument) {
  // Missing sections and members of other types: printed as far as they go, never thrown.
  const auto doc = nlohmann::json::parse(
      R"({"server": 5, "calls": "many", "backends": [{"name": "future", "x": 1}, 7], "clients": {"not": "a list"}})");
  std::string t;
  EXPECT_NO_THROW(t = status_text(doc));
  EXPECT_NE(t.find("Clients (0)"), std::string::npos) << t;
  EXPECT_NO_THROW(status_text(nlohmann::json::array()));
}

}  // namespace
}  // namespace outboard::tool
