// The CPU kernels OpenBLAS runs with. OpenBLAS 0.3.21 (Debian 12's) falls back to its generic
// PRESCOTT (SSE) kernels on CPUs it does not know, the H200 host's Xeon among them, and there its
// results depend on the calls made before: ssyevd on one matrix returns INFO = 0 in a fresh
// process and 15 (no convergence) after some sgesv calls (found by fuzz_session on that host;
// reproduced here without Outboard, OPENBLAS_CORETYPE=Prescott, and not with the Nehalem, Haswell
// or SkylakeX kernels). OpenBLAS picks its kernels when it loads, so a server that got PRESCOTT on
// a CPU with newer instructions runs itself again with OPENBLAS_CORETYPE naming them.
#pragma once

namespace outboard::backends {

struct CpuFeatures {
  bool sse42 = false, avx2 = false, avx512 = false;  // avx512: F, VL, BW and DQ
};
CpuFeatures this_cpu();

// The OPENBLAS_CORETYPE to run with instead of `picked` (openblas_get_corename()), or nullptr:
// none where the user set OPENBLAS_CORETYPE (`set`), or where OpenBLAS picked more than PRESCOTT.
const char* better_openblas_core(const char* set, const char* picked, const CpuFeatures& cpu);

// Runs this program again (execv of /proc/self/exe with argv) with the better core type, when
// there is one; returns if there is none or the exec failed (the server then goes on as it is).
void reexec_with_better_openblas_core(char** argv);

// The core OpenBLAS runs with, for logs and status ("unknown" where it does not say).
const char* openblas_core();

}  // namespace outboard::backends
