// One process of a dcuda run whose ranks are host threads (fake_ranks.hpp) and whose proxy is
// the real one, over UCX: started N times by `outboard dcuda run -n N -- dcuda_proxy_check
// SCENARIO`. Exits 0 when the scenario's checks pass; prints what failed otherwise.
//
//   order     every rank streams mixed puts / notifies / put_notifies (4 B .. 1 MiB, staged and
//             not) to every remote rank; each notification is checked against the data before it
//   barrier   puts, then world barriers of several generations: after each, every put is in place
//   flood     many more commands than ring slots, with no waiting in between
//   hostile   process 0 posts invalid commands to process 1: refused, nothing touched, recorded
//   killed    process 1 dies mid-run: process 0 reports it and does not hang ("peer loss reported")
#include <signal.h>
#include <unistd.h>

#include <barrier>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <mutex>

#include "dcuda/runtime/bootstrap.hpp"
#include "dcuda/runtime/cpu_link.hpp"
#include "dcuda/runtime/proxy.hpp"
#include "tests/dcuda/fake_ranks.hpp"

using namespace dcuda;
using test::Rank;
using namespace dcuda::detail;

namespace {

constexpr uint32_t kRanksHere = 2;
// The order scenario: per (source, target) a region of slots, one per step of a batch.
constexpr uint64_t kSlotBytes[] = {4, 1 << 20, 64, 4096, 100000, 8, 4095, 3000, 1, 65536};
constexpr uint32_t kBatch = sizeof kSlotBytes / sizeof kSlotBytes[0];
constexpr uint32_t kBatches = 6;
constexpr uint32_t kDoneTag = 200;  // target -> source: a batch was checked (tag = kDoneTag + target % 50)

uint64_t slot_offset(uint32_t slot) {
  uint64_t o = 0;
  for (uint32_t i = 0; i < slot; ++i) o += kSlotBytes[i];
  return o;
}
constexpr uint64_t region_bytes() {
  uint64_t o = 0;
  for (uint64_t b : kSlotBytes) o += b;
  return o;
}
unsigned char pattern(uint32_t source, uint32_t step, uint64_t k) {
  return static_cast<unsigned char>(source * 31 + step * 7 + k * 13 + (k >> 8));
}

struct Run {
  runtime::World world;
  test::Ranks* ranks;
  std::mutex m;
  std::string failure;
  void fail(const std::string& what) {
    std::lock_guard lock(m);
    if (failure.empty()) failure = what;
  }
  uint32_t first() const { return world.processes[world.self].first_rank; }
  std::vector<uint32_t> remote_ranks() const {
    std::vector<uint32_t> v;
    for (uint32_t r = 0; r < world.world_size(); ++r)
      if (world.process_of(r) != world.self) v.push_back(r);
    return v;
  }
};

// Each rank streams kBatches batches of kBatch steps to every remote rank and checks what the
// remote ranks stream to it: step i's notification must find step i's data complete.
void order(Run& run, Rank& me, uint32_t local) {
  const auto remote = run.remote_ranks();
  struct Out { uint32_t step = 0; bool awaiting_done = false; std::vector<std::vector<unsigned char>> src; };
  struct In { uint32_t step = 0; };
  std::vector<Out> outs(remote.size());
  std::vector<In> ins(remote.size());
  for (auto& o : outs) {
    o.src.resize(kBatch);
    for (uint32_t j = 0; j < kBatch; ++j) o.src[j].resize(kSlotBytes[j]);
  }
  const uint32_t steps = kBatch * kBatches;
  auto& window = run.ranks->windows[local];
  for (bool busy = true; busy;) {
    busy = false;
    for (size_t t = 0; t < remote.size(); ++t) {  // sending
      Out& o = outs[t];
      const uint32_t target = remote[t];
      if (o.awaiting_done) {
        if (!me.test(kDoneTag + target % 50)) { busy = true; continue; }
        o.awaiting_done = false;
      }
      if (o.step == steps) continue;
      busy = true;
      if (o.step % kBatch == 0) me.flush();  // the batch's sources are about to be rewritten
      for (uint32_t j = 0; j < kBatch; ++j, ++o.step) {
        auto& src = o.src[j];
        for (uint64_t k = 0; k < src.size(); ++k) src[k] = pattern(me.me(), o.step, k);
        // Where this source's region sits in the target's window: one region per world rank.
        const uint64_t offset = me.me() * region_bytes() + slot_offset(j);
        const bool staged = src.size() <= kInlineBytes && (o.step / kBatch + j) % 2 == 0;
        const uint32_t tag = me.me() % 100;
        if ((o.step + j) % 3 == 0) {
          me.put(target, 0, offset, src.data(), src.size(), staged, Op::put_notify, tag);
        } else {
          me.put(target, 0, offset, src.data(), src.size(), staged);
          me.notify(target, tag);  // after a rendezvous put, an eager notify: must not overtake it
        }
      }
      o.awaiting_done = true;
    }
    for (size_t s = 0; s < remote.size(); ++s) {  // receiving
      In& in = ins[s];
      const uint32_t source = remote[s];
      if (in.step == steps) continue;
      busy = true;
      if (!me.test(source % 100)) continue;
      const uint32_t j = in.step % kBatch;
      const unsigned char* got = window.data() + source * region_bytes() + slot_offset(j);
      for (uint64_t k = 0; k < kSlotBytes[j]; ++k)
        if (got[k] != pattern(source, in.step, k))
          throw std::runtime_error("rank " + std::to_string(me.me()) + ": step " + std::to_string(in.step) + " from rank " +
                                   std::to_string(source) + " (" + std::to_string(kSlotBytes[j]) + " bytes): byte " +
                                   std::to_string(k) + " not in place when its notification arrived");
      if (++in.step % kBatch == 0) me.notify(source, kDoneTag + me.me() % 50);
    }
  }
  me.flush();
}

// Generations g = 1..8: every rank puts g into its word of every remote rank's window, then the
// world barrier; after it every remote word must read g. Odd and even generations use separate
// words: a remote rank released earlier may already be putting g + 1.
void barrier(Run& run, Rank& me, uint32_t local, std::barrier<>& device_barrier) {
  const auto remote = run.remote_ranks();
  const uint32_t n = run.world.world_size();
  for (uint32_t g = 1; g <= 8; ++g) {
    auto* words = reinterpret_cast<volatile uint64_t*>(run.ranks->windows[local].data()) + (g % 2) * n;
    const uint64_t value = g;
    for (uint32_t t : remote) me.put(t, 0, ((g % 2) * n + me.me()) * 8, &value, 8, /*staged=*/g % 4 < 2);
    me.flush();  // `value` is reused next round (not staged: read by the proxy until completed)
    device_barrier.arrive_and_wait();  // the device-wide barrier before the world's
    if (local == 0) me.barrier_command(g);
    me.wait_released(g);
    for (uint32_t s : remote)
      if (words[s] != g)
        throw std::runtime_error("rank " + std::to_string(me.me()) + ": after world barrier " + std::to_string(g) +
                                 " the word of rank " + std::to_string(s) + " reads " + std::to_string(words[s]));
    device_barrier.arrive_and_wait();  // nobody overwrites before all have checked
  }
}

// Far more commands than ring slots, posted without waiting: back-pressure, then all arrive.
void flood(Run& run, Rank& me, uint32_t) {
  constexpr uint32_t kCount = 20 * kRingSlots;
  const auto remote = run.remote_ranks();
  for (uint32_t i = 0; i < kCount; ++i)
    for (uint32_t t : remote) {
      const uint32_t v = i;
      if (i % 2) me.notify(t, 7);
      else me.put(t, 0, me.me() * 4, &v, 4, true, Op::put_notify, 7);
    }
  me.wait(7, kCount * static_cast<uint32_t>(remote.size()));
  me.flush();
  if (!reached(me.posted(), kCount * static_cast<uint32_t>(remote.size())))
    throw std::runtime_error("flood: posted count is wrong");
}

// Process 0's rank 0 posts invalid commands to process 1's first rank, then a valid one.
void hostile(Run& run, Rank& me, uint32_t local, runtime::Proxy& proxy) {
  me.tolerate_failure = true;
  auto& window = run.ranks->windows[local];
  const uint32_t victim = run.world.processes[1].first_rank;
  const uint64_t wbytes = window.size();
  if (run.world.self == 0 && local == 0) {
    const uint64_t v = 0xdeadbeef;
    me.put(victim, 7, 0, &v, 8, true);                            // window not registered
    me.put(victim, 40, 0, &v, 8, true);                           // window id out of range
    me.put(victim, 0, ~uint64_t(0) - 3, &v, 8, true);             // offset + bytes overflows
    me.put(victim, 0, wbytes - 4, &v, 8, true);                   // past the window's end
    me.put(victim, 0, 0, &v, 8, true, Op::put_notify, 300);       // tag out of range
    me.notify(victim, 256);                                       // tag out of range
    me.put(1000000, 0, 0, &v, 8, true);                           // no such rank (refused here)
    me.put(me.me() + 1, 0, 0, &v, 8, true);                       // a rank of our own GPU (refused here)
    Command bad{};
    bad.op = 99, bad.target = victim;
    me.post(bad, nullptr);                                        // unknown op (refused here)
    const uint64_t good = 0x0123456789abcdefull;
    me.put(victim, 0, 64, &good, 8, true, Op::put_notify, 5);     // and a valid one still works
    me.flush();
  }
  if (run.world.self == 1 && local == 0) {
    me.wait(5);
    uint64_t got;
    std::memcpy(&got, window.data() + 64, 8);
    if (got != 0x0123456789abcdefull) throw std::runtime_error("hostile: the valid put did not land");
    for (uint64_t k = 0; k < window.size(); ++k)
      if ((k < 64 || k >= 72) && window[k] != 0)
        throw std::runtime_error("hostile: byte " + std::to_string(k) + " of the window was touched");
    // Every invalid command that reached us was refused: bad window, window id, overflow, past
    // the end, and two bad tags.
    const uint64_t end = outboard::now_ns() + 10'000'000'000ull;
    while (proxy.stats().refused < 6 && outboard::now_ns() < end) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    if (proxy.stats().refused != 6) throw std::runtime_error("hostile: refused " + std::to_string(proxy.stats().refused) + ", expected 6");
  }
}

// Process 1 sends a little, then dies; process 0 keeps posting to it and waiting for it.
void killed(Run& run, Rank& me, uint32_t local, std::barrier<>& device_barrier) {
  me.tolerate_failure = true;
  me.timeout_s = 30;
  const uint32_t other = run.world.processes[1 - run.world.self].first_rank + local;
  const uint64_t v = 1;
  me.put(other, 0, 0, &v, 8, true, Op::put_notify, 1);
  // (process 1 may die before its proxy has sent this rank's notification)
  me.wait_until([&] { return me.test(1) || me.failed(); }, "the first notification");
  if (run.world.self == 1) {
    device_barrier.arrive_and_wait();  // both ranks have sent theirs
    if (local == 0) kill(getpid(), SIGKILL);
    std::this_thread::sleep_for(std::chrono::seconds(30));
  }
  // Process 0: the wait for a notification that never comes must end with the proxy's error.
  try {
    for (int i = 0; i < 100 && !me.failed(); ++i) me.put(other, 0, 0, &v, 8, i % 2, Op::put_notify, 2);
    me.wait_until([&] { return me.failed(); }, "the proxy to notice the dead peer");
  } catch (const std::exception& e) {
    if (!me.failed()) run.fail(e.what());  // failed: the loss this scenario expects to be reported
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s order|barrier|flood|hostile|killed\n", argv[0]);
    return 2;
  }
  const std::string scenario = argv[1];
  try {
    const runtime::Launch launch = runtime::launch_from_env();
    if (launch.processes < 2) throw std::runtime_error("run me with at least 2 processes (outboard dcuda run -n 2 -- ...)");
    runtime::Proxy proxy;
    test::Ranks ranks(kRanksHere, region_bytes() * kRanksHere * launch.processes);
    Run run{runtime::bootstrap(launch, kRanksHere, proxy.address(), proxy.key(), runtime::bootstrap_dir(launch),
                               runtime::bootstrap_timeout()),
            &ranks, {}, {}};
    runtime::CpuLink link;
    proxy.start(run.world, ranks.host.data(), ranks.device.data(), link);
    std::barrier<> device_barrier(kRanksHere);
    std::vector<std::thread> threads;
    for (uint32_t r = 0; r < kRanksHere; ++r)
      threads.emplace_back([&, r] {
        Rank me(ranks.host[r], ranks.device[r], run.first() + r);
        try {
          if (scenario == "order") order(run, me, r);
          else if (scenario == "barrier") barrier(run, me, r, device_barrier);
          else if (scenario == "flood") flood(run, me, r);
          else if (scenario == "hostile") hostile(run, me, r, proxy);
          else if (scenario == "killed") killed(run, me, r, device_barrier);
          else throw std::runtime_error("unknown scenario " + scenario);
        } catch (const std::exception& e) {
          // At once: the process's other ranks may wait for this one forever.
          std::fprintf(stderr, "process %u: FAILED: %s\n", run.world.self, e.what());
          std::fflush(stderr);
          std::_Exit(1);
        }
      });
    for (auto& t : threads) t.join();
    proxy.stop();
    const std::string error = proxy.error();
    const auto stats = proxy.stats();
    std::printf("process %u: %s: sent %llu, applied %llu, refused %llu, errors %llu%s%s\n", run.world.self,
                scenario.c_str(), (unsigned long long)stats.sent, (unsigned long long)stats.applied,
                (unsigned long long)stats.refused, (unsigned long long)stats.failures, error.empty() ? "" : ": first: ",
                error.c_str());
    if (!run.failure.empty()) {
      std::fprintf(stderr, "process %u: FAILED: %s\n", run.world.self, run.failure.c_str());
      return 1;
    }
    if (scenario == "hostile") {
      if (error.empty()) throw std::runtime_error("hostile: no error recorded");
      std::printf("process %u: hostile commands refused and recorded\n", run.world.self);
      return 0;
    }
    if (scenario == "killed") {
      if (error.empty()) throw std::runtime_error("killed: the dead peer went unnoticed");
      std::printf("process %u: peer loss reported\n", run.world.self);
      return 0;
    }
    if (!error.empty()) {
      std::fprintf(stderr, "process %u: FAILED: proxy error: %s\n", run.world.self, error.c_str());
      return 1;
    }
    std::printf("process %u: %s OK\n", run.world.self, scenario.c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dcuda_proxy_check (%s): %s\n", scenario.c_str(), e.what());
    return 1;
  }
}
