#include "backends/opencl/native_watch.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "common/clock.hpp"

namespace outboard::backends::opencl {

namespace {
// How often the monitor looks while sessions are open: a stuck call is told within this of its
// patience running out; an idle server (no session) does not wake at all.
constexpr auto kTick = std::chrono::milliseconds(250);
}  // namespace

NativeWatch::Running::Running(Slot& slot, const char* op, bool watched) : slot_(slot) {
  slot_.platform.store(0, std::memory_order_relaxed);
  slot_.op.store(op, std::memory_order_relaxed);
  slot_.since_ns.store(watched && slot_.patience_ns ? now_ns() : 0, std::memory_order_release);
}

NativeWatch::Running::~Running() { slot_.since_ns.store(0, std::memory_order_release); }

NativeWatch::NativeWatch(std::vector<std::string> platform_names)
    : names_(std::move(platform_names)), refusing_(names_.size()), thread_([this] { monitor(); }) {}

NativeWatch::~NativeWatch() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

std::shared_ptr<NativeWatch::Slot> NativeWatch::open(std::chrono::milliseconds patience) {
  auto slot = std::make_shared<Slot>();
  slot->patience_ns = static_cast<uint64_t>(std::chrono::nanoseconds(patience).count());
  {
    std::lock_guard<std::mutex> lock(mu_);
    slot->session = next_session_++;
    slots_.push_back(slot);
  }
  wake_.notify_all();
  return slot;
}

std::string NativeWatch::platform_name(wire::ClId platform) const {
  if (platform == 0 || platform > names_.size()) return "";
  return names_[platform - 1];
}

std::vector<std::pair<std::shared_ptr<NativeWatch::Slot>, NativeWatch::Stuck>> NativeWatch::collect() const {
  const uint64_t now = now_ns();
  std::vector<std::pair<std::shared_ptr<Slot>, Stuck>> out;
  for (const auto& weak : slots_) {
    std::shared_ptr<Slot> s = weak.lock();
    if (!s) continue;
    const uint64_t since = s->since_ns.load(std::memory_order_acquire);
    if (since == 0 || now < since || now - since < s->patience_ns) continue;
    Stuck stuck;
    stuck.operation = s->op.load(std::memory_order_relaxed);
    stuck.platform = s->platform.load(std::memory_order_relaxed);
    if (s->since_ns.load(std::memory_order_acquire) != since) continue;  // it returned meanwhile
    stuck.session = s->session;
    stuck.seconds = static_cast<double>(now - since) * 1e-9;
    stuck.since_ns = since;
    out.emplace_back(std::move(s), std::move(stuck));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.second.seconds > b.second.seconds; });
  return out;
}

void NativeWatch::scan() {
  std::unordered_map<wire::ClId, Stuck> held;
  std::lock_guard<std::mutex> lock(mu_);
  std::erase_if(slots_, [](const std::weak_ptr<Slot>& w) { return w.expired(); });
  for (auto& [slot, stuck] : collect()) {  // oldest first: each platform keeps its oldest
    if (slot->reported_since != stuck.since_ns) {
      slot->reported_since = stuck.since_ns;
      spdlog::warn(
          "opencl.stuck session={} operation={} platform=\"{}\" seconds={:.1f}: the native call has not returned; "
          "new work on this platform is refused until it does",
          stuck.session, stuck.operation, platform_name(stuck.platform), stuck.seconds);
    }
    if (stuck.platform != 0) held.emplace(stuck.platform, stuck);  // else reported, nothing to keep away from
  }
  for (const auto& [platform, was] : held_)
    if (!held.count(platform))
      spdlog::info("opencl.unstuck platform=\"{}\" operation={}: it returned; the platform serves again",
                   platform_name(platform), was.operation);
  for (size_t i = 0; i < refusing_.size(); ++i) refusing_[i].store(held.count(i + 1) > 0, std::memory_order_relaxed);
  held_ = std::move(held);
}

std::vector<NativeWatch::Stuck> NativeWatch::stuck() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Stuck> out;
  for (auto& [slot, stuck] : collect()) out.push_back(std::move(stuck));
  return out;
}

std::string NativeWatch::refusal(wire::ClId platform) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = held_.find(platform);
  if (it == held_.end()) return "";
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.0f", it->second.seconds);
  return "the platform \"" + platform_name(platform) + "\" has not returned from another session's " +
         it->second.operation + " for " + seconds + " s or more: its native OpenCL may be hung (see the server's log)";
}

void NativeWatch::monitor() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    if (slots_.empty()) {
      wake_.wait(lock, [this] { return stop_ || !slots_.empty(); });
      continue;
    }
    if (wake_.wait_for(lock, kTick, [this] { return stop_; })) break;
    lock.unlock();
    scan();
    lock.lock();
  }
}

void test_stall(const char* op) {
  struct Plan {
    std::string op;
    long nth = 0;
    double seconds = 0;
  };
  static const Plan plan = [] {
    Plan p;
    const char* v = std::getenv("OUTBOARD_TEST_CL_STALL");
    if (!v || !*v) return p;
    const char* at = std::strchr(v, '@');
    const char* colon = at ? std::strchr(at, ':') : nullptr;
    if (!at || !colon || (p.nth = std::atol(at + 1)) < 1 || (p.seconds = std::atof(colon + 1)) <= 0) {
      spdlog::error("OUTBOARD_TEST_CL_STALL=\"{}\" is not OP@N:SECONDS; ignored", v);
      p.nth = 0;
      return p;
    }
    p.op.assign(v, at);
    spdlog::warn("opencl.test_stall op={} nth={} seconds={} (OUTBOARD_TEST_CL_STALL)", p.op, p.nth, p.seconds);
    return p;
  }();
  static std::atomic<long> seen{0};
  if (plan.nth == 0 || plan.op != op) return;
  if (seen.fetch_add(1) + 1 == plan.nth)
    std::this_thread::sleep_for(std::chrono::duration<double>(plan.seconds));
}

}  // namespace outboard::backends::opencl
