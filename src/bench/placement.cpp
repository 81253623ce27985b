#include "bench/placement.hpp"

#include <sched.h>

#include <cerrno>
#include <cstring>

#include "common/error.hpp"

namespace outboard::bench {

Placement parse_placement(const std::vector<int>& cpus) {
  if (cpus.size() != 2) throw Error("--cpus takes two CPU numbers: SERVER,CLIENT");
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0)
    throw Error(std::string("cannot read this process's CPU set: ") + std::strerror(errno));
  for (int cpu : cpus)
    if (cpu < 0 || cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &allowed))
      throw Error("--cpus: CPU " + std::to_string(cpu) + " is not one this process may run on (" +
                  std::to_string(CPU_COUNT(&allowed)) + " allowed)");
  return {cpus[0], cpus[1]};
}

bool pin_to_cpu(int cpu) noexcept {
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  return sched_setaffinity(0, sizeof one, &one) == 0;
}

void pin_process(int cpu) {
  if (!pin_to_cpu(cpu)) throw Error("cannot pin to CPU " + std::to_string(cpu) + ": " + std::strerror(errno));
}

std::string pinned_command(const std::optional<int>& cpu, const std::string& command) {
  return cpu ? "taskset -c " + std::to_string(*cpu) + " " + command : command;
}

}  // namespace outboard::bench
