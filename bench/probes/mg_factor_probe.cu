// What one large factorization gains from several GPUs of one process: cuSOLVER's multi-GPU API
// (cusolverMg, 1-D column block-cyclic over G GPUs) against cusolverDn on one GPU, for an LU
// (getrf) and a Cholesky (potrf) of order N in double precision. The matrix is made on the GPUs
// (no host transfer is timed: this is the factorization's own scaling, the upper bound of what a
// server could give one such call). Issue 32, item 3 (bench/gpu/large_call.sh runs it).
//   mg_factor_probe N GPUS [BLOCK]     prints "probe lu|chol N=.. gpus=.. seconds=.. gflops=.. info=.."
#include <cuda_runtime.h>
#include <cusolverDn.h>
#include <cusolverMg.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(x)                                                                              \
  do {                                                                                        \
    auto s_ = (x);                                                                            \
    if (static_cast<int>(s_) != 0) {                                                          \
      std::fprintf(stderr, "%s:%d: %s failed (%d)\n", __FILE__, __LINE__, #x, int(s_));       \
      std::exit(1);                                                                           \
    }                                                                                         \
  } while (0)

// Element (i, j) of the test matrix: pseudo-random in [0, 1), symmetric, with n added on the
// diagonal (diagonally dominant: LU needs no pivoting to be stable, Cholesky holds).
__device__ double element(int64_t i, int64_t j, int64_t n) {
  uint64_t a = i < j ? i : j, b = i < j ? j : i;
  uint64_t h = (a * 0x9E3779B97F4A7C15ull) ^ (b + 0x632BE59BD9B4E019ull + (a << 6) + (a >> 2));
  h ^= h >> 31;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 29;
  return double(h >> 11) * (1.0 / 9007199254740992.0) + (i == j ? double(n) : 0.0);
}

// Fills a device's local columns: local column c is global column (c / block) * G * block +
// d * block + c % block (1-D block-cyclic); one device alone holds every column in order.
__global__ void fill(double* a, int64_t n, int64_t local_cols, int64_t block, int devices, int d) {
  for (int64_t k = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; k < n * local_cols; k += int64_t(gridDim.x) * blockDim.x) {
    const int64_t i = k % n, c = k / n;
    const int64_t j = (c / block) * devices * block + d * block + c % block;
    a[k] = j < n ? element(i, j, n) : 0.0;
  }
}

static double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

static void report(const char* kind, int64_t n, int gpus, double seconds, double flops, int info) {
  std::printf("probe %s N=%lld gpus=%d seconds=%.3f gflops=%.0f info=%d\n", kind, (long long)n, gpus, seconds,
              flops / seconds / 1e9, info);
  std::fflush(stdout);
}

// cusolverDn on GPU 0: the one-GPU baseline.
static void one_gpu(int64_t n) {
  CHECK(cudaSetDevice(0));
  cusolverDnHandle_t h;
  CHECK(cusolverDnCreate(&h));
  double* a;
  int *ipiv, *info;
  CHECK(cudaMalloc(&a, sizeof(double) * n * n));
  CHECK(cudaMalloc(&ipiv, sizeof(int) * n));
  CHECK(cudaMalloc(&info, sizeof(int)));
  int lwork = 0;
  CHECK(cusolverDnDgetrf_bufferSize(h, int(n), int(n), a, int(n), &lwork));
  int lwork_chol = 0;
  CHECK(cusolverDnDpotrf_bufferSize(h, CUBLAS_FILL_MODE_LOWER, int(n), a, int(n), &lwork_chol));
  double* work;
  CHECK(cudaMalloc(&work, sizeof(double) * (lwork > lwork_chol ? lwork : lwork_chol)));
  for (int kind = 0; kind < 2; ++kind)
    for (int rep = 0; rep < 2; ++rep) {  // the first pays cuSOLVER's set-up
      fill<<<1024, 256>>>(a, n, n, n, 1, 0);
      CHECK(cudaDeviceSynchronize());
      const double t = now();
      if (kind == 0) CHECK(cusolverDnDgetrf(h, int(n), int(n), a, int(n), work, ipiv, info));
      else CHECK(cusolverDnDpotrf(h, CUBLAS_FILL_MODE_LOWER, int(n), a, int(n), work, lwork_chol, info));
      CHECK(cudaDeviceSynchronize());
      const double s = now() - t;
      int host_info = 0;
      CHECK(cudaMemcpy(&host_info, info, sizeof(int), cudaMemcpyDeviceToHost));
      if (rep == 1) report(kind == 0 ? "lu" : "chol", n, 1, s, kind == 0 ? 2.0 / 3 * n * n * n : 1.0 / 3 * n * n * n, host_info);
    }
  cudaFree(a), cudaFree(ipiv), cudaFree(info), cudaFree(work);
  cusolverDnDestroy(h);
}

static void sync_all(int gpus) {
  for (int d = 0; d < gpus; ++d) {
    CHECK(cudaSetDevice(d));
    CHECK(cudaDeviceSynchronize());
  }
}

// cusolverMg over GPUs 0..gpus-1.
static void many_gpus(int64_t n, int gpus, int64_t block) {
  std::vector<int> ids(gpus);
  for (int d = 0; d < gpus; ++d) ids[d] = d;
  for (int d = 0; d < gpus; ++d) {  // cusolverMg reads other devices' columns directly
    CHECK(cudaSetDevice(d));
    for (int e = 0; e < gpus; ++e)
      if (e != d) {
        const cudaError_t r = cudaDeviceEnablePeerAccess(e, 0);
        if (r != cudaSuccess && r != cudaErrorPeerAccessAlreadyEnabled) CHECK(r);
        cudaGetLastError();
      }
  }
  cusolverMgHandle_t h;
  CHECK(cusolverMgCreate(&h));
  CHECK(cusolverMgDeviceSelect(h, gpus, ids.data()));
  cudaLibMgGrid_t grid;
  CHECK(cusolverMgCreateDeviceGrid(&grid, 1, gpus, ids.data(), CUDALIBMG_GRID_MAPPING_COL_MAJOR));
  cudaLibMgMatrixDesc_t desc;
  CHECK(cusolverMgCreateMatrixDesc(&desc, n, n, n, block, CUDA_R_64F, grid));
  const int64_t blocks = (n + block - 1) / block, local_blocks = (blocks + gpus - 1) / gpus;
  const int64_t local_cols = local_blocks * block;
  std::vector<void*> a(gpus), work(gpus);
  std::vector<int*> ipiv(gpus);
  for (int d = 0; d < gpus; ++d) {
    CHECK(cudaSetDevice(d));
    CHECK(cudaMalloc(&a[d], sizeof(double) * n * local_cols));
    CHECK(cudaMalloc(&ipiv[d], sizeof(int) * local_cols));
  }
  int64_t lwork = 0, lwork_chol = 0;
  CHECK(cusolverMgGetrf_bufferSize(h, int(n), int(n), a.data(), 1, 1, desc, ipiv.data(), CUDA_R_64F, &lwork));
  CHECK(cusolverMgPotrf_bufferSize(h, CUBLAS_FILL_MODE_LOWER, int(n), a.data(), 1, 1, desc, CUDA_R_64F, &lwork_chol));
  if (lwork_chol > lwork) lwork = lwork_chol;
  for (int d = 0; d < gpus; ++d) {
    CHECK(cudaSetDevice(d));
    CHECK(cudaMalloc(&work[d], sizeof(double) * lwork));
  }
  for (int kind = 0; kind < 2; ++kind)
    for (int rep = 0; rep < 2; ++rep) {
      for (int d = 0; d < gpus; ++d) {
        CHECK(cudaSetDevice(d));
        fill<<<1024, 256>>>(static_cast<double*>(a[d]), n, local_cols, block, gpus, d);
      }
      sync_all(gpus);
      int info = 0;
      const double t = now();
      if (kind == 0)
        CHECK(cusolverMgGetrf(h, int(n), int(n), a.data(), 1, 1, desc, ipiv.data(), CUDA_R_64F, work.data(), lwork, &info));
      else
        CHECK(cusolverMgPotrf(h, CUBLAS_FILL_MODE_LOWER, int(n), a.data(), 1, 1, desc, CUDA_R_64F, work.data(), lwork, &info));
      sync_all(gpus);
      const double s = now() - t;
      if (rep == 1) report(kind == 0 ? "lu" : "chol", n, gpus, s, kind == 0 ? 2.0 / 3 * n * n * n : 1.0 / 3 * n * n * n, info);
    }
  for (int d = 0; d < gpus; ++d) {
    CHECK(cudaSetDevice(d));
    cudaFree(a[d]), cudaFree(ipiv[d]), cudaFree(work[d]);
  }
  cusolverMgDestroyMatrixDesc(desc);
  cusolverMgDestroyGrid(grid);
  cusolverMgDestroy(h);
}

int main(int argc, char** argv) {
  if (argc < 3) return std::fprintf(stderr, "usage: mg_factor_probe N GPUS [BLOCK]\n"), 2;
  const int64_t n = std::atoll(argv[1]);
  const int gpus = std::atoi(argv[2]);
  const int64_t block = argc > 3 ? std::atoll(argv[3]) : 256;
  if (n < 1 || gpus < 1 || block < 1) return std::fprintf(stderr, "usage: mg_factor_probe N GPUS [BLOCK]\n"), 2;
  if (gpus == 1) one_gpu(n);
  else many_gpus(n, gpus, block);
  return 0;
}
