#include "backends/opencl/opencl_backend.hpp"

#include <cstdlib>

#include "backends/opencl/native.hpp"
#include "backends/opencl/native_watch.hpp"

namespace outboard::backends {
namespace {

class OpenClBackend final : public server::Backend, public server::ClExecutor {
 public:
  explicit OpenClBackend(NativePlatforms n) : natives_(std::move(n)), watch_(platform_names(natives_)) {
    provide<server::ClExecutor>(this);
  }

  std::string name() const override { return "opencl"; }
  nlohmann::json describe() const override {
    nlohmann::json platforms = nlohmann::json::array();
    for (cl_platform_id p : natives_.platforms)
      platforms.push_back({{"name", platform_text(p, CL_PLATFORM_NAME)}, {"version", platform_text(p, CL_PLATFORM_VERSION)}});
    return {{"platforms", platforms}, {"devices", natives_.devices.size()}};
  }

  const std::vector<std::byte>& snapshot() const override { return natives_.snapshot; }
  std::unique_ptr<server::ClSessionObjects> open_session(std::shared_ptr<server::ClOutput> out,
                                                         const server::ClLimits& limits,
                                                         std::shared_ptr<server::ClClientMemory> memory) override {
    return make_cl_session(natives_, std::move(out), limits, std::move(memory), counters_, watch_);
  }
  server::ClCounters counters() const override {
    return {counters_.operations.load(),    counters_.kernels.load(),          counters_.failures.load(),
            counters_.bytes_written.load(), counters_.bytes_read.load(),       counters_.direct_bytes_written.load(),
            counters_.direct_bytes_read.load(), counters_.staging.now.load(),  counters_.staging.peak.load(),
            counters_.pinned_bytes_read.load(), counters_.write_waits.load()};
  }
  std::vector<server::ClStuckCall> stuck() const override {
    std::vector<server::ClStuckCall> out;
    for (const opencl::NativeWatch::Stuck& s : watch_.stuck())
      out.push_back({watch_.platform_name(s.platform), s.operation, s.session, s.seconds});
    return out;
  }

 private:
  static std::vector<std::string> platform_names(const NativePlatforms& n) {
    std::vector<std::string> names;
    for (cl_platform_id p : n.platforms) names.push_back(platform_text(p, CL_PLATFORM_NAME));
    return names;
  }

  NativePlatforms natives_;
  SharedCounters counters_;
  opencl::NativeWatch watch_;  // after natives_ (named from them); its monitor ends before the sessions' table goes
};

}  // namespace

std::unique_ptr<server::Backend> make_opencl_backend(std::string& why, bool gpu_platforms_only) {
  // The server forwards to the host's real platforms: Outboard's own ICD, if installed here,
  // must not show the server its own remote platforms (or itself).
  setenv("OUTBOARD_ICD_DISABLE", "1", 1);
  NativePlatforms n = scan_platforms(gpu_platforms_only);
  if (n.platforms.empty()) {
    why = gpu_platforms_only ? "the ICD loader finds no OpenCL platform with a GPU here"
                             : "the ICD loader finds no OpenCL platform on this host";
    return nullptr;
  }
  return std::make_unique<OpenClBackend>(std::move(n));
}

}  // namespace outboard::backends
