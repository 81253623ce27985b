// Probe: how process_vm_readv / process_vm_writev (CMA, what UCX's shared-memory rendezvous uses
// on one host) and plain memcpy scale with the number of threads copying at once.
// Build: g++ -O2 -pthread cma_scaling.cpp -o cma_scaling; run: ./cma_scaling [MiB] (not built with the
// project: it stands alone)
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace {
using Clock = std::chrono::steady_clock;

// Copies `bytes` with `threads` threads, each a contiguous slice in 8 MiB steps.
template <class Copy>
double run(size_t bytes, int threads, Copy copy) {
  double best = 1e30;
  for (int trial = 0; trial < 3; ++trial) {
    auto t0 = Clock::now();
    std::vector<std::thread> ts;
    size_t slice = bytes / threads;
    for (int t = 0; t < threads; ++t)
      ts.emplace_back([&, t] {
        for (size_t off = t * slice; off < (t + 1) * slice; off += 8u << 20)
          copy(off, std::min<size_t>(8u << 20, (t + 1) * slice - off));
      });
    for (auto& th : ts) th.join();
    best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
  }
  return bytes / best / 1e9;
}
}  // namespace

int main(int argc, char** argv) {
  size_t bytes = (argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 2048) << 20;
  auto* src = static_cast<char*>(std::aligned_alloc(4096, bytes));
  std::memset(src, 1, bytes);
  int fds[2];
  if (pipe(fds) != 0) return 1;
  pid_t parent = getpid();
  pid_t child = fork();
  if (child == 0) {
    auto* dst = static_cast<char*>(std::aligned_alloc(4096, bytes));
    std::memset(dst, 2, bytes);
    int threads[] = {1, 2, 4, 6, 8, 12, 16};
    std::printf("%8s %12s %12s %12s\n", "threads", "readv GB/s", "writev GB/s", "memcpy GB/s");
    for (int t : threads) {
      double r = run(bytes, t, [&](size_t off, size_t n) {
        iovec l{dst + off, n}, rm{src + off, n};
        if (process_vm_readv(parent, &l, 1, &rm, 1, 0) != ssize_t(n)) std::abort();
      });
      double w = run(bytes, t, [&](size_t off, size_t n) {
        iovec l{dst + off, n}, rm{src + off, n};
        if (process_vm_writev(parent, &l, 1, &rm, 1, 0) != ssize_t(n)) std::abort();
      });
      double m = run(bytes, t, [&](size_t off, size_t n) { std::memcpy(dst + off, src + off, n); });
      std::printf("%8d %12.1f %12.1f %12.1f\n", t, r, w, m);
    }
    std::fflush(stdout);
    _exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
