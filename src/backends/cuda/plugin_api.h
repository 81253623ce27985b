/* The CUDA plugin's C interface.
 *
 * liboutboard-cuda.so is the only part of Outboard that links the CUDA runtime and cuBLAS. It is
 * loaded with dlopen (see loader.hpp) so the same programs run on hosts without CUDA. This header
 * is plain C and needs no CUDA header: pointers are void*, streams are opaque, and every function
 * returns 0 on success or a negative code (OUTBOARD_CUDA_*, below) that error_text() describes.
 *
 * The plugin exports one symbol, outboard_cuda_plugin_v1(), which returns a function table. A
 * caller checks `version` (and that `size` covers the table it was built against) before using it.
 * A change to any signature, struct or meaning here makes a new version; the loader accepts only
 * its own. Version 2 added, at the end of the table, the events and level3_async (pipelined calls)
 * and lapack (cuSOLVER); version 3 lapack_device (pipelined LAPACK calls); version 4 the cuFFT
 * plans (fft_plan_create, fft_exec, fft_plan_destroy); version 5 device_memory; version 6 the
 * faults (get_device, device_health, device_reset, inject_fault), and state kept per GPU; version 7
 * the LAPACK drivers of issue 35 in `lapack`/`lapack_device` (routines 10..26, the fields after
 * `vt` in struct outboard_cuda_lapack); version 8 orgqr/ungqr and ormqr/unmqr (routines 27, 28;
 * `side` and `k`) and syev/heev (routine 29, no new field).
 *
 * Threads: functions act on the calling thread's current device (set_device), as CUDA does.
 * last_error() is per thread. */
#ifndef OUTBOARD_CUDA_PLUGIN_API_H
#define OUTBOARD_CUDA_PLUGIN_API_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define OUTBOARD_CUDA_API_VERSION 8
#define OUTBOARD_CUDA_PLUGIN_SYMBOL "outboard_cuda_plugin_v1"
#define OUTBOARD_CUDA_PLUGIN_FILE "liboutboard-cuda.so"

/* Return codes. 0 is success. The plugin's own failures are small negative numbers; a failure the
 * CUDA runtime reports as cudaError_t e is OUTBOARD_CUDA_ERR_RUNTIME - e, one cuBLAS reports as
 * cublasStatus_t s is OUTBOARD_CUDA_ERR_CUBLAS - s, and one cuSOLVER reports as cusolverStatus_t s
 * is OUTBOARD_CUDA_ERR_CUSOLVER - s, and one cuFFT reports as cufftResult r is
 * OUTBOARD_CUDA_ERR_CUFFT - r. */
#define OUTBOARD_CUDA_OK 0
#define OUTBOARD_CUDA_ERR_INVALID_ARGUMENT (-1)
#define OUTBOARD_CUDA_ERR_HOST_MEMORY (-2) /* the plugin itself ran out of host memory */
#define OUTBOARD_CUDA_ERR_INTERNAL (-3)
#define OUTBOARD_CUDA_ERR_RUNTIME (-100000)
#define OUTBOARD_CUDA_ERR_CUBLAS (-200000)
#define OUTBOARD_CUDA_ERR_CUSOLVER (-300000)
#define OUTBOARD_CUDA_ERR_CUFFT (-400000)

/* Copy directions. */
#define OUTBOARD_CUDA_H2D 1
#define OUTBOARD_CUDA_D2H 2
#define OUTBOARD_CUDA_D2D 3

/* One Level-3 BLAS call for `level3`: column-major, packed host operands (leading dimension =
 * rows). routine: 0 gemm, 1 symm, 2 hemm, 3 syrk, 4 herk, 5 syr2k, 6 her2k, 7 trmm, 8 trsm;
 * precision 's','d','c','z'; option characters upper case ('N' where unused); alpha and beta as
 * (re, im), herk's alpha and beta and her2k's beta real in [0]. rows/cols: of A, B (0 x 0 where
 * the routine has none) and of the output (C, or B for trmm/trsm). */
struct outboard_cuda_level3 {
  int routine;
  char precision, side, uplo, transa, transb, diag;
  int64_t m, n, k;
  double alpha[2], beta[2];
  int64_t rows[3], cols[3];
};

/* One LAPACK call for `lapack` (the routines and array shapes of src/wire/lapack.hpp; the routine
 * numbers are wire::LapackRoutine's): 0 gesv, 1 getrf, 2 getrs, 3 posv, 4 potrf, 5 potrs, 6 gels,
 * 7 geqrf, 8 syevd (heevd for complex), 9 gesvd; since version 7 10 gesdd, 12 geev, 15 syevr
 * (heevr), 16 syevx (heevx), 17 sygvd (hegvd), 18 sysv, 19 sytrf, 20 sytrs, 24 getri, 25 potri,
 * 26 trtri; since version 8 27 orgqr (ungqr), 28 ormqr (unmqr), 29 syev (heev). precision 's','d','c','z'; option characters upper case ('N' where unused). Host arrays
 * are packed column-major (leading dimension = rows), null where the routine has none:
 *   a     A, m x n (n x n for the square routines; ormqr: the reflectors, m x k for side 'L', n x k
 *         for 'R', read); copied back over itself when a_out is set
 *   b     B, n x nrhs (gels: max(m,n) x nrhs; sygvd: n x n, the Cholesky factor of B on return;
 *         ormqr: C, m x n), updated in place
 *   ipiv  32-bit pivots, 1-based: written by gesv (n), getrf (min(m,n)), sysv and sytrf (n, LAPACK's
 *         Bunch-Kaufman form: negative for 2x2 blocks); read by getrs, getri and sytrs (n; the
 *         caller has checked them: 1..n, |ipiv| for sytrs)
 *   vec   tau (geqrf, min(m,n); orgqr, ormqr: k, read), w (syevd, syev, syevr, syevx, sygvd: n, real type), s (gesvd, gesdd:
 *         min(m,n), real type), geev's wr (real, n) or w (complex, n, the call's precision)
 *   vec2  geev's wi (real precisions; n)
 *   u, vt gesvd's and gesdd's U (m x m, or m x min(m,n) for 'S') and VT (n x n, or min(m,n) x n);
 *         geev's VL in u and VR in vt (n x n); syevr's and syevx's Z in u (n x z: z = iu-il+1 for
 *         range I, else n)
 *   count syevr's and syevx's m (1 value: the eigenvalues found; w and Z hold that many)
 *   ints  syevr's isuppz (2 x z, only where all eigenvalues are asked for) or syevx's ifail (n)
 * Supported (the caller sends other calls to the host's LAPACK, see cuda_backend.cpp's
 * serves_lapack):
 *   gels only with trans 'N' and m >= n; gesvd only with m >= n and jobu, jobvt in {A, S, N}.
 *   gesdd: every jobz and shape, on cuSOLVER's gesvd (QR iteration, not divide and conquer; same
 *     factorization, to rounding); m < n runs on A^H (V and U exchanged); jobz 'O' through a
 *     scratch U or VT. INFO > 0 (no convergence) is cuSOLVER's count of superdiagonals that did
 *     not converge; LAPACK gives "did not converge" as any INFO > 0 too.
 *   geev: jobvl 'N' only (cusolverDnXgeev computes no left eigenvectors); eigenvalues in W as
 *     Xgeev leaves them, vectors normalized as LAPACK's (unit 2-norm, largest component real).
 *   syevr, syevx: cusolverDn syevdx/heevdx (range A, V (vl, vu] or I): eigenvalues ascending, m
 *     found, the vectors of exactly those. abstol is not used (syevdx computes to full accuracy).
 *     isuppz is the first and last nonzero row of each returned vector (LAPACK's is the support of
 *     the tridiagonal's vectors in dstemr); ifail is zero (no vector fails: no inverse iteration).
 *     INFO > 0 only where syevdx's tridiagonal solver does not converge.
 *   sygvd: cusolverDn sygvd/hegvd, itype 1..3: INFO n+i where B's leading minor of order i is not
 *     positive definite, as LAPACK's.
 *   sytrf, sysv, sytrs: real and complex symmetric (cusolverDn sytrf, Xsytrs); not the Hermitian
 *     hetrf/hesv/hetrs, which cuSOLVER lacks.
 *   getri (getrs against the identity), potri (cusolverDn potri) and trtri (cusolverDnXtrtri): a
 *     zero on the diagonal of U or of the factor gives INFO = its index and leaves A as it was, as
 *     LAPACK (trtri checks first).
 *   orgqr, ormqr: cusolverDn orgqr/ungqr and ormqr/unmqr (k >= 1; ormqr's trans 'N', 'T' real or
 *     'N', 'C' complex).
 *   syev: cusolverDn syevd/heevd, as syevd (LAPACK's syev uses QR iteration, syevd divide and
 *     conquer: the same eigenvalues and vectors to rounding; INFO > 0 where it does not converge).
 *   Not at all (cuSOLVER has no routine for them): gesvdx (no selected-range SVD; gesvdr is
 *     randomized), gelsd and gelsy (no rank-revealing least squares), hesv, hetrf, hetrs. */
struct outboard_cuda_lapack {
  int routine;
  char precision, trans, uplo, jobz, jobu, jobvt;
  int a_out;
  int64_t m, n, nrhs;
  void* a;
  void* b;
  int32_t* ipiv;
  void* vec;
  void* u;
  void* vt;
  /* ---- version 7 ---- */
  char jobvl, jobvr, range, diag;
  int64_t itype;     /* sygvd: 1, 2 or 3 */
  int64_t il, iu;    /* range I */
  double vl, vu;     /* range V: (vl, vu] */
  void* vec2;
  int32_t* count;
  int32_t* ints;
  /* ---- version 8 ---- */
  char side;         /* ormqr: 'L' or 'R' */
  int64_t k;         /* orgqr, ormqr: the number of reflectors */
};

/* A batch of dense FFTs for the fft_* functions (src/wire/fft.hpp's layout): `batch` transforms
 * of the row-major shape n[0] x ... x n[rank-1], one after another, complex numbers interleaved.
 * precision 's' or 'd'; kind 0 c2c, 1 r2c, 2 c2r; sign -1 (forward) or +1 (inverse), used by
 * c2c only; rank 1..3. */
struct outboard_cuda_fft {
  char precision;
  int kind;
  int sign;
  int rank;
  int64_t n[3];
  int64_t batch;
};

struct outboard_cuda_device_info {
  char name[256];
  char pci_bus_id[32];          /* as the kernel names it in /sys/bus/pci/devices, e.g. "0000:17:00.0" */
  uint64_t total_memory;        /* bytes */
  int compute_major, compute_minor;
  int multiprocessors;
  int async_engines;            /* copy engines usable concurrently with kernels */
  int memory_bus_width_bits;    /* 0 if unknown */
  int memory_clock_khz;         /* peak; 0 if unknown */
  /* PCIe link as Linux reports it in sysfs (the CUDA runtime does not tell link speed or width);
   * generation 1..6, 0 where unknown. "current" is the negotiated link, which an idle GPU may
   * have slowed down; "max" is what the device and the port above it can both do. */
  int pcie_gen_current, pcie_width_current;
  int pcie_gen_max, pcie_width_max;
  int driver_version;           /* cudaDriverGetVersion: 1000*major + 10*minor; 0 = no driver */
  int runtime_version;          /* cudaRuntimeGetVersion, same encoding */
  int cublas_version;           /* 10000*major + 100*minor + patch */
};

struct outboard_cuda_api_v1 {
  uint32_t version; /* OUTBOARD_CUDA_API_VERSION */
  uint32_t size;    /* sizeof(struct outboard_cuda_api_v1) in the plugin */

  /* Text for a return code; valid until the next error_text call on the same thread. */
  const char* (*error_text)(int code);
  /* The last failure on this thread with its context ("cudaMemcpy(h2d, 4096 bytes): ..."); "" if
   * none. Valid until the next failing call on the same thread. */
  const char* (*last_error)(void);

  /* Devices. */
  int (*device_count)(int* count);
  int (*device_describe)(int device, struct outboard_cuda_device_info* info);
  int (*set_device)(int device);
  int (*device_synchronize)(void);

  /* Memory. Device memory with cudaMalloc; pinned host memory is the plugin's own mapping,
   * registered with cudaHostRegister (portable), so that resetting a GPU never unmaps it; no
   * managed memory. */
  int (*device_alloc)(void** ptr, uint64_t bytes);
  int (*device_free)(void* ptr);
  int (*host_alloc_pinned)(void** ptr, uint64_t bytes);
  int (*host_free_pinned)(void* ptr);

  /* Streams. A null stream is the legacy default stream. */
  int (*stream_create)(void** stream);
  int (*stream_destroy)(void* stream);
  int (*stream_sync)(void* stream);

  /* Copies. memcpy_sync with a null stream is cudaMemcpy (which, as CUDA documents, may return
   * before a device-to-device or pageable host-to-device copy has landed: stream_sync(NULL) waits
   * for it); with a stream it is cudaMemcpyAsync followed by cudaStreamSynchronize.
   * memcpy_async is cudaMemcpyAsync on the stream. */
  int (*memcpy_sync)(int kind, void* dst, const void* src, uint64_t bytes, void* stream);
  int (*memcpy_async)(int kind, void* dst, const void* src, uint64_t bytes, void* stream);
  /* Device fill: cudaMemsetAsync on the stream, then waits for the stream. */
  int (*fill)(void* dst, int byte_value, uint64_t bytes, void* stream);

  /* Event-timed copies, the measurement independent of the host clock: on a stream of its own,
   * records an event, issues `repeats` cudaMemcpyAsync of `bytes`, records a second event, waits,
   * and returns the elapsed milliseconds between the events (all repeats) in *ms. */
  int (*timed_copy)(int kind, void* dst, const void* src, uint64_t bytes, int repeats, float* ms);

  /* C = A*B with cuBLAS {S,D,C,Z}GEMM for precision 's','d','c','z': n x n column-major device
   * matrices, alpha = 1, beta = 0, no transposes, default math mode (no TF32). Runs it `repeats`
   * times between two events on the default stream and returns the elapsed seconds of all
   * repeats in *seconds. The first call on a device creates its cuBLAS handle (not timed). */
  int (*gemm)(char precision, int n, const void* a, const void* b, void* c, int repeats, double* seconds);

  /* Destroys the cuBLAS handles gemm and level3 created (and, since version 2, lapack's cuSOLVER
   * handles); later calls create them again. Call when none is running, before giving the devices
   * up. */
  int (*release)(void);

  /* One Level-3 call on the current device with cuBLAS: copies the host operands a, b (null where
   * the routine has no B) and `output` to the device, computes, and copies the output back over
   * `output` (C, or B for trmm/trsm; its values are read as BLAS defines). Device memory is kept
   * between calls and reused, per GPU; one call at a time per GPU. timing_ns, if not null, receives
   * {to GPU, compute, from GPU} in nanoseconds. */
  int (*level3)(const struct outboard_cuda_level3* call, const void* a, const void* b, void* output,
                uint64_t timing_ns[3]);

  /* ---- version 2: pipelined calls ---- */

  /* Events (cudaEvent_t with timing) for ordering work across streams and timing it. event_query
   * sets *done to 1 once the work recorded before the event has finished, else 0. event_elapsed
   * gives the milliseconds between two finished events. */
  int (*event_create)(void** event);
  int (*event_destroy)(void* event);
  int (*event_record)(void* event, void* stream);
  int (*stream_wait_event)(void* stream, void* event);
  int (*event_query)(void* event, int* done);
  int (*event_elapsed)(void* start, void* end, float* ms);

  /* One Level-3 call on operands already in device memory, enqueued on `stream`; nothing waits.
   * rows[0..2] are the leading dimensions of a, b and output (cols[] is not used). out2: device
   * memory the size of the output, where cuBLAS's trmm writes its result (unused otherwise). Uses
   * a cuBLAS handle of its own, apart from level3's: both may run at once. */
  int (*level3_async)(const struct outboard_cuda_level3* call, const void* a, const void* b, void* output,
                      void* out2, void* stream);

  /* One LAPACK call on the current device with cuSOLVER (and cuBLAS for gels' triangular
   * solve): copies the host arrays in, computes, copies the outputs back, and stores LAPACK's INFO
   * in *info (>= 0; the caller passes valid arguments only). Input-only arrays (A of geev, syevr,
   * gesdd but 'O', ...) are read, never written. One call at a time per GPU.
   * timing_ns as for level3. */
  int (*lapack)(const struct outboard_cuda_lapack* call, int64_t* info, uint64_t timing_ns[3]);

  /* ---- version 3: pipelined LAPACK calls ---- */

  /* As lapack, on arrays already in the current device's memory: the array pointers in `call` are
   * device pointers, with the shapes lapack takes, updated in place (a_out is not used). Runs on
   * the legacy default stream, which it waits for before returning: the results are then in
   * device memory. Work the caller queued on other streams must have finished before the call.
   * compute_ns, if not null, receives the time it took. */
  int (*lapack_device)(const struct outboard_cuda_lapack* call, int64_t* info, uint64_t* compute_ns);

  /* ---- version 4: cuFFT ---- */

  /* Makes a cuFFT plan for `fft` on the current device (cufftMakePlanMany64; cuFFT allocates its
   * work area, whose size goes to *work_bytes). */
  int (*fft_plan_create)(const struct outboard_cuda_fft* fft, void** plan, uint64_t* work_bytes);
  int (*fft_plan_destroy)(void* plan);
  /* Enqueues one execution of `plan` (made for `fft`) on `stream`; nothing waits. `in` and `out`
   * are device memory with the dense layout, the same pointer for an in-place transform. A c2r
   * execution overwrites its input, as cuFFT documents. A plan runs on one stream at a time. */
  int (*fft_exec)(void* plan, const struct outboard_cuda_fft* fft, void* in, void* out, void* stream);

  /* ---- version 5 ---- */

  /* Free and total memory of `device` now (cudaMemGetInfo on it; the calling thread's current
   * device is left as it was). */
  int (*device_memory)(int device, uint64_t* free_bytes, uint64_t* total_bytes);

  /* ---- version 6: faults ---- */

  int (*get_device)(int* device);
  /* 0 when `device`'s context still runs work; else the sticky error that poisoned it (an illegal
   * address, a trap, an uncorrectable ECC error), which every later call on it would return too.
   * Waits for the work queued on the device. The caller's current device is left as it was. */
  int (*device_health)(int device);
  /* Destroys the plugin's handles and scratch on `device` and resets it (cudaDeviceReset: every
   * allocation, stream, event and plan made on it is gone), re-registers the page-locked host
   * memory, and checks that the new context runs a kernel. Nothing may use the device meanwhile.
   * The caller's current device is left as it was. */
  int (*device_reset)(int device);
  /* Tests only: enqueues a kernel that traps on `stream`, which poisons the current device's
   * context as a real fault would. */
  int (*inject_fault)(void* stream);
};

#if defined(__GNUC__)
__attribute__((visibility("default")))
#endif
const struct outboard_cuda_api_v1* outboard_cuda_plugin_v1(void);

typedef const struct outboard_cuda_api_v1* (*outboard_cuda_plugin_v1_fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* OUTBOARD_CUDA_PLUGIN_API_H */
