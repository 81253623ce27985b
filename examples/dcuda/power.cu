// dcuda case study 4: power iteration.
//
// What it computes: `iterations` steps of y = A x, x = y / ||y|| for a symmetric banded sparse
// matrix A of order n = ranks · rows (bandwidth `band`: A(i,j) != 0 for |i-j| <= band; positive
// entries, so the dominant eigenvalue is simple and ||y|| converges to it). x starts as a hash of
// the index. The matrix is stored as ELLPACK (every row 2·band+1 entries, column-major per rank,
// explicit zeros past the ends of the matrix).
//
// Decomposition: rank r owns rows r·rows .. (r+1)·rows - 1 and the same piece of x, kept with
// `band` halo entries either side (the neighbours' boundary entries; rows >= band).
//
// dcuda version (one launch), per step: put_notify the first/last `band` entries of x into the
// neighbours' halos; compute the rows that need no halo while they travel; wait for the halos and
// compute the boundary rows; the partial sum of y² of the rank; a global sum over the ranks as a
// binomial tree of put_notifies (reduce to rank 0, then broadcast) — the same tree and order of
// additions on every run; x = y / sqrt(sum).
//
// Baseline (host-driven): per step a kernel computes y and each rank's partial sum (the same
// code), the host copies the partials back, adds them in the same tree order and takes the root,
// a second kernel scales x, and the host copies the halos between the ranks' pieces
// (cudaMemcpy2DAsync, one per direction) before the next step. Same arithmetic, same order: the
// results (every rank's x and every step's norm) are expected bitwise equal; the check allows
// 1e-12 relative.
//
// Several processes: each checks its own ranks' x, the process of rank 0 also the norms
// (cases_common.cuh). Exit status: 0 when the results agree, 1 when not, 2 on an error, 77
// without a GPU.
//
//   power [--quick] [--rows 16384] [--band 8] [--iterations 100] [--threads 256] [--json PATH]
//                                         --quick: 256 rows, band 4, 10 iterations unless given
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "cases_common.cuh"
#include "dcuda/dcuda.h"
#include "dcuda/dcuda_device.cuh"

namespace {

constexpr int kFromLeft = 1, kFromRight = 2;  // halo tags, as the receiver sees them
constexpr int kBroadcast = 3;                 // the global sum, down the tree
constexpr int kReduce = 16;                   // + level: partial sums, up the tree
constexpr int kSlots = 33;                    // per rank: 32 levels of the reduce tree, the broadcast

struct Args {
  const int* cols;     // per rank: width · rows local columns (column-major), into the rank's x
  const double* vals;  // the same layout
  double* x;           // per rank: band + rows + band
  double* y;           // per rank: rows
  double* slots;       // per rank: kSlots doubles (the tree's window)
  double* norms;       // out: rank 0 writes each step's norm
  int rows, band, iterations;
};

// The rank's sum of y², in an order fixed by the block size. Collective; y must be complete.
__device__ double partial_norm(const double* y, int rows) {
  double s = 0;
  for (int i = threadIdx.x; i < rows; i += blockDim.x) s = s + y[i] * y[i];
  return cases::block_sum(s);
}

__device__ void scale(const double* y, double* x_own, int rows, double norm) {
  for (int i = threadIdx.x; i < rows; i += blockDim.x) x_own[i] = y[i] / norm;
}

__global__ void power_dcuda(dcuda_context_handle handle) {
  __shared__ dcuda_state c;
  dcuda_gpu_init(handle, c);
  const auto [a, r, ranks, device_ranks] = cases::rank_start<Args>(c);
  const int m = a.rows, b = a.band, width = 2 * b + 1;
  const long nnz = static_cast<long>(width) * m;
  const int* cols = a.cols + r * nnz;
  const double* vals = a.vals + r * nnz;
  double* x = a.x + static_cast<long>(r) * (m + 2 * b);
  double* y = a.y + static_cast<long>(r) * m;
  double* slots = a.slots + r * kSlots;
  // Window offsets and sizes are ints (the host checked that x's bytes fit one).
  constexpr int kDouble = static_cast<int>(sizeof(double));
  const int halo_bytes = kDouble * b, upper_halo = kDouble * (b + m);  // x[b+m ..): the halo from the right
  dcuda_win xwin, twin;
  dcuda_win_create(c, DCUDA_COMM_WORLD, x, kDouble * (m + 2 * b), &xwin);
  dcuda_win_create(c, DCUDA_COMM_WORLD, slots, kDouble * kSlots, &twin);
  const bool left = r > 0, right = r + 1 < ranks;
  const bool several_processes = ranks != device_ranks;
  __shared__ double acc;  // the put's source for the tree (8 bytes: shared memory is allowed)
  // Why one x (no double buffer) is safe: a neighbour writes this rank's halo in step t+1 only
  // after it has the global sum of step t, which needs this rank's partial of step t, which this
  // rank computes after its last read of the halo in step t. The tree's slots likewise: a child's
  // value for step t+1 comes after the child received the broadcast of step t from this rank,
  // which this rank sends after it read the child's slot of step t; the broadcast slot is
  // written for step t+1 only once the sum of t+1 is complete, which needs this rank's partial of
  // t+1, made after it read the broadcast of t. Tags: one message per tag and step from one
  // sender, and no sender can be a step ahead before this rank consumed its message.
  for (int t = 0; t < a.iterations; ++t) {
    // Halos out: x[b .. 2b) to the left neighbour's x[b+m ..), x[m .. m+b) to the right one's x[0 .. b).
    if (left) dcuda_put_notify(c, xwin, r - 1, upper_halo, halo_bytes, x + b, kFromRight);
    if (right) dcuda_put_notify(c, xwin, r + 1, 0, halo_bytes, x + m, kFromLeft);
    cases::ell_rows(cols, vals, x, y, m, width, b, m - b);  // no halo needed: overlaps the exchange
    if (left) dcuda_wait_notifications(c, kFromLeft, 1);
    if (right) dcuda_wait_notifications(c, kFromRight, 1);
    cases::ell_rows(cols, vals, x, y, m, width, 0, b);
    cases::ell_rows(cols, vals, x, y, m, width, m - b, m);
    __syncthreads();
    double sum = partial_norm(y, m);
    // Reduce up the binomial tree: at level k, rank r (a multiple of 2^(k+1)) adds what rank
    // r + 2^k has gathered; the rank with bit k lowest sends and is done.
    int level = 0;
    for (; (1 << level) < ranks; ++level) {
      const int step = 1 << level;
      if (r & step) {
        if (threadIdx.x == 0) acc = sum;
        __syncthreads();
        dcuda_put_notify(c, twin, r - step, kDouble * level, kDouble, &acc, kReduce + level);
        break;
      }
      if (r + step < ranks) {
        dcuda_wait_notifications(c, kReduce + level, 1);
        sum = sum + slots[level];
        __syncthreads();
      }
    }
    // Broadcast down the same tree: a rank other than 0 receives from r - 2^level (its lowest
    // bit), then sends on to r + 2^k for the levels below.
    if (r != 0) {
      dcuda_wait_notifications(c, kBroadcast, 1);
      sum = slots[kSlots - 1];
    }
    if (threadIdx.x == 0) acc = sum;
    __syncthreads();
    for (int k = level - 1; k >= 0; --k)
      if (r + (1 << k) < ranks) dcuda_put_notify(c, twin, r + (1 << k), kDouble * (kSlots - 1), kDouble, &acc, kBroadcast);
    const double norm = sqrt(sum);
    if (r == 0 && threadIdx.x == 0) a.norms[t] = norm;
    // A halo put to another process may read its source (x's own entries, rewritten now) after it
    // returned (more than 4 KiB: --band above 512): wait for it here, after the step's work. On
    // one GPU a put is done when it returns.
    if (several_processes) dcuda_win_flush(c, xwin);
    scale(y, x + b, m, norm);
    __syncthreads();  // x complete before the next step's puts read it; acc no longer read
  }
  dcuda_win_free(c, twin);
  dcuda_win_free(c, xwin);
  dcuda_gpu_finish(c);
}

// Baseline kernels: block r is rank r.
__global__ void product_kernel(const int* all_cols, const double* all_vals, const double* all_x, double* all_y, double* partials,
                               int m, int b) {
  const int r = blockIdx.x, width = 2 * b + 1;
  const long nnz = static_cast<long>(width) * m;
  const double* x = all_x + static_cast<long>(r) * (m + 2 * b);
  double* y = all_y + static_cast<long>(r) * m;
  cases::ell_rows(all_cols + r * nnz, all_vals + r * nnz, x, y, m, width, 0, m);
  __syncthreads();
  const double s = partial_norm(y, m);
  if (threadIdx.x == 0) partials[r] = s;
}
__global__ void scale_kernel(const double* all_y, double* all_x, int m, int b, double norm) {
  const int r = blockIdx.x;
  scale(all_y + static_cast<long>(r) * m, all_x + static_cast<long>(r) * (m + 2 * b) + b, m, norm);
}

// A(i, j), symmetric, positive in the band; 0 outside the matrix.
__device__ double entry(long i, long j, long n) {
  if (j < 0 || j >= n) return 0;
  if (i == j) return 2.0 + cases::unit(static_cast<uint64_t>(i));
  const long lo = i < j ? i : j, hi = i < j ? j : i;
  return 0.5 * cases::unit(static_cast<uint64_t>(lo) * 1000003ull + static_cast<uint64_t>(hi - lo) + 0x5eed);
}
__global__ void make_matrix(int* cols, double* vals, int ranks, int m, int b) {
  const int width = 2 * b + 1;
  const long n = static_cast<long>(ranks) * m, nnz = static_cast<long>(width) * m;
  for (long e = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; e < nnz * ranks; e += gridDim.x * static_cast<long>(blockDim.x)) {
    const long r = e / nnz, k = (e % nnz) / m, i = e % m;  // rank, entry of the row, local row
    const long gi = r * m + i, gj = gi - b + k;
    cols[e] = static_cast<int>(i + k);  // x index: local row i, offset k - b, plus the halo b
    vals[e] = entry(gi, gj, n);
  }
}
__global__ void fill_x(double* x, int ranks, int m, int b) {
  const long piece = m + 2 * b, n = static_cast<long>(ranks) * m;
  for (long e = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; e < piece * ranks; e += gridDim.x * static_cast<long>(blockDim.x)) {
    const long g = (e / piece) * m + (e % piece) - b;
    x[e] = g >= 0 && g < n ? 0.5 + cases::unit(static_cast<uint64_t>(g) ^ 0xabcdefull) : 0.0;
  }
}

// The same tree as the dcuda kernel's: level by level, r += r + 2^k for r a multiple of 2^(k+1).
double tree_sum(std::vector<double> v) {
  const int n = static_cast<int>(v.size());
  for (int step = 1; step < n; step *= 2)
    for (int r = 0; r + step < n; r += 2 * step) v[r] = v[r] + v[r + step];
  return v[0];
}

}  // namespace

int main(int argc, char** argv) {
  cases::Options o(argc, argv);
  const bool quick = o.quick;
  const int m = static_cast<int>(o.integer("rows", quick ? 256 : 16384)), b = static_cast<int>(o.integer("band", quick ? 4 : 8));
  const int iterations = static_cast<int>(o.integer("iterations", quick ? 10 : 100));
  o.done("power: power iteration on a banded symmetric matrix, rows per rank; dcuda against a host-driven reduction");
  const int threads = o.threads;
  if (b < 1 || m < 2 * b || iterations < 1) return std::fprintf(stderr, "power: need band >= 1, rows >= 2 band\n"), 2;

  cases::check_window_bytes("power", "x", double(sizeof(double)) * (m + 2.0 * b));
  cases::World world;
  dcuda_host_context_handle ctx = cases::start_dcuda(power_dcuda, threads, &world);
  const int ranks = world.ranks;
  const int width = 2 * b + 1;
  const long nnz = static_cast<long>(width) * m, piece = m + 2 * b;
  if (static_cast<long>(ranks) * m >= (1l << 31)) return std::fprintf(stderr, "power: too many rows\n"), 2;
  int* cols;
  double *vals, *x, *y, *slots, *norms, *partials;
  CASE_CHECK(cudaMalloc(&cols, sizeof(int) * nnz * ranks));
  CASE_CHECK(cudaMalloc(&vals, sizeof(double) * nnz * ranks));
  CASE_CHECK(cudaMalloc(&x, sizeof(double) * piece * ranks));
  CASE_CHECK(cudaMalloc(&y, sizeof(double) * m * ranks));
  CASE_CHECK(cudaMalloc(&slots, sizeof(double) * kSlots * ranks));
  CASE_CHECK(cudaMalloc(&norms, sizeof(double) * iterations));
  CASE_CHECK(cudaMalloc(&partials, sizeof(double) * ranks));
  make_matrix<<<1024, 256>>>(cols, vals, ranks, m, b);
  CASE_CHECK(cudaDeviceSynchronize());
  auto reset = [&] {
    fill_x<<<1024, 256>>>(x, ranks, m, b);
    CASE_CHECK(cudaMemset(slots, 0, sizeof(double) * kSlots * ranks));
    CASE_CHECK(cudaMemset(norms, 0, sizeof(double) * iterations));
    CASE_CHECK(cudaDeviceSynchronize());
  };
  // The result: the own entries of x of this process's ranks (the halos of the dcuda run hold the
  // neighbours' values of the step before the last — the last step sends nothing after scaling —
  // the baseline's were refreshed), and where rank 0 is, `norms` (every step's norm).
  auto result = [&](const double* step_norms) {
    std::vector<double> v;
    for (int r = world.first; r < world.first + world.here; ++r) cases::append_from_device(v, x + r * piece + b, m);
    if (world.first == 0) v.insert(v.end(), step_norms, step_norms + iterations);
    return v;
  };
  std::printf("power: %d ranks of %d threads, %d rows each (n = %ld), band %d, %d iterations\n", ranks, threads, m,
              static_cast<long>(ranks) * m, b, iterations);

  Args a{cols, vals, x, y, slots, norms, m, b, 1};
  const double dcuda_ms = cases::warm_then_time(
      reset, [&](int count) { return a.iterations = count, cases::run_dcuda(ctx, &a, sizeof a); }, iterations);
  std::vector<double> got_norms(iterations);
  CASE_CHECK(cudaMemcpy(got_norms.data(), norms, sizeof(double) * iterations, cudaMemcpyDeviceToHost));
  const std::vector<double> got = result(got_norms.data());

  cudaStream_t stream;
  CASE_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  double* host_partials;
  CASE_CHECK(cudaMallocHost(&host_partials, sizeof(double) * ranks));
  std::vector<double> want_norms(iterations);
  const size_t pitch = sizeof(double) * piece, hb = sizeof(double) * b;
  auto baseline = [&](int steps) {
    for (int t = 0; t < steps; ++t) {
      product_kernel<<<ranks, threads, 0, stream>>>(cols, vals, x, y, partials, m, b);
      CASE_CHECK(cudaMemcpyAsync(host_partials, partials, sizeof(double) * ranks, cudaMemcpyDeviceToHost, stream));
      CASE_CHECK(cudaStreamSynchronize(stream));
      const double norm = std::sqrt(tree_sum(std::vector<double>(host_partials, host_partials + ranks)));
      want_norms[t] = norm;
      scale_kernel<<<ranks, threads, 0, stream>>>(y, x, m, b, norm);
      if (ranks > 1) {  // x[b ..) of rank r+1 → x[b+m ..) of rank r; x[m ..) of rank r → x[0 ..) of rank r+1
        CASE_CHECK(cudaMemcpy2DAsync(x + b + m, pitch, x + piece + b, pitch, hb, ranks - 1, cudaMemcpyDeviceToDevice, stream));
        CASE_CHECK(cudaMemcpy2DAsync(x + piece, pitch, x + m, pitch, hb, ranks - 1, cudaMemcpyDeviceToDevice, stream));
      }
    }
  };
  const double baseline_ms = cases::warm_then_time(
      reset, [&](int count) { return cases::time_on(stream, [&] { baseline(count); }); }, iterations);
  const std::vector<double> want = result(want_norms.data());

  cases::Report rep("power", world, "kernel, partials to the host, host tree sum, scale kernel, cudaMemcpy2DAsync halos",
                    dcuda_ms, baseline_ms, cases::compare(got, want), 1e-12);
  rep.sizes = {{"threads", threads}, {"rows_per_rank", m}, {"band", b}, {"iterations", iterations}};
  rep.extra = {{"eigenvalue_baseline", want_norms.back()}};
  if (world.first == 0) rep.extra.insert(rep.extra.begin(), {"eigenvalue_dcuda", got_norms.back()});
  const int status = rep.finish(o.json);
  cudaFreeHost(host_partials);
  cudaStreamDestroy(stream);
  for (void* q : {static_cast<void*>(cols), static_cast<void*>(vals), static_cast<void*>(x), static_cast<void*>(y),
                  static_cast<void*>(slots), static_cast<void*>(norms), static_cast<void*>(partials)})
    cudaFree(q);
  dcuda_host_finish(ctx);
  return status;
}
