#include "backends/cpu/openblas_core.hpp"

#include <spdlog/spdlog.h>
#include <stdlib.h>
#include <strings.h>
#include <unistd.h>

extern "C" char* openblas_get_corename(void);

namespace outboard::backends {

CpuFeatures this_cpu() {
  __builtin_cpu_init();
  CpuFeatures f;
  f.sse42 = __builtin_cpu_supports("sse4.2");
  f.avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  f.avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
             __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq");
  return f;
}

const char* better_openblas_core(const char* set, const char* picked, const CpuFeatures& cpu) {
  if (set && *set) return nullptr;  // the user's choice (and the second run's)
  if (!picked || strcasecmp(picked, "prescott") != 0) return nullptr;
  if (cpu.avx512) return "SkylakeX";
  if (cpu.avx2) return "Haswell";
  if (cpu.sse42) return "Nehalem";
  return nullptr;
}

void reexec_with_better_openblas_core(char** argv) {
  const char* core = better_openblas_core(getenv("OPENBLAS_CORETYPE"), openblas_core(), this_cpu());
  if (!core) return;
  spdlog::info("server.openblas_core picked=PRESCOTT running_again_with={}", core);
  setenv("OPENBLAS_CORETYPE", core, 1);
  execv("/proc/self/exe", argv);
  spdlog::warn("server.openblas_core could not run again with OPENBLAS_CORETYPE={}: going on with PRESCOTT", core);
}

const char* openblas_core() {
  const char* name = openblas_get_corename();
  return name ? name : "unknown";
}

}  // namespace outboard::backends
