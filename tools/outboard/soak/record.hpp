// What a soak client process (outboard-soak-client) tells `outboard bench soak`: its calls, wrong
// results and failures per routine since its previous record, written whole to a pipe every few
// seconds and once more as it ends. Shared by the two programs; nothing else.
#pragma once
#include <climits>
#include <cstdint>
#include <string_view>

namespace outboard::soak {

// The routines the soak calls, named as the server's calls_by_routine and the runtime's exit
// report name them; "opencl" is one OpenCL round trip (buffers written, a kernel, read back).
inline constexpr const char* kRoutines[] = {
    // Level-3 BLAS
    "sgemm", "dgemm", "cgemm", "zgemm", "dsymm", "zhemm", "dsyrk", "cherk", "ssyr2k", "zher2k", "dtrmm", "ctrmm",
    "strsm", "dtrsm", "ztrsm",
    // LAPACK
    "dgesv", "zgesv", "sgetrf", "sgetrs", "dposv", "cposv", "dpotrf", "dgels", "dgeqrf", "dsyevd", "zheevd", "dgesvd",
    "sgesvd",
    // FFTW
    "fftw_c2c", "fftw_r2c", "fftw_c2r", "fftwf_c2c", "fftwf_r2c", "fftwf_c2r",
    // OpenCL
    "opencl"};
inline constexpr int kRoutineCount = sizeof(kRoutines) / sizeof(kRoutines[0]);

constexpr int routine_index(std::string_view name) {
  for (int i = 0; i < kRoutineCount; ++i)
    if (name == kRoutines[i]) return i;
  return -1;
}
inline constexpr int kFirstFft = routine_index("fftw_c2c"), kOpenCl = routine_index("opencl");

struct Record {
  int32_t slot = 0;
  int32_t generation = 0;  // the how-manieth process of its slot
  int32_t pid = 0;
  int32_t last = 0;              // the process's final record
  int32_t opencl_platforms = -1; // what it found through the ICD; -1: not looked yet
  int32_t opencl_kernels = 0;    // kernels enqueued since the previous record
  uint32_t calls[kRoutineCount] = {};
  uint32_t wrong[kRoutineCount] = {};
  uint32_t failed[kRoutineCount] = {};
  float worst[kRoutineCount] = {};  // the largest error / tolerance seen (1 = at the tolerance)
  char message[512] = {};           // the first wrong result or failure since the previous record
};
// One write of it to a pipe is atomic: records of many processes never interleave.
static_assert(sizeof(Record) <= PIPE_BUF);

}  // namespace outboard::soak
