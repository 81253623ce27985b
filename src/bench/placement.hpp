// Where the two ends of a loopback comparison run. On a small shared VM, two processes that
// exchange small messages through shared memory stream at very different speeds on one CPU or on
// two, and the scheduler moves them between the two states as it likes; a comparison with
// ucx_perftest is only side by side when both pairs run with the same, stated placement.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace outboard::bench {

struct Placement {
  int server_cpu;
  int client_cpu;
};

// Parses "--cpus SERVER,CLIENT" (two CPU numbers this process may run on). Throws Error saying
// what is wrong.
Placement parse_placement(const std::vector<int>& cpus);

// Pins the calling process (all its threads created from now on) to one CPU. Throws Error.
void pin_process(int cpu);
// The same without throwing, for a forked child before exec: false if it could not.
bool pin_to_cpu(int cpu) noexcept;

// taskset's spelling of running on `cpu`, for recorded commands.
std::string pinned_command(const std::optional<int>& cpu, const std::string& command);

}  // namespace outboard::bench
