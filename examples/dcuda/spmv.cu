// dcuda case study 3: repeated sparse matrix–vector products with a 2D decomposition.
//
// What it computes: `iterations` steps of x = A x for a generated sparse matrix A of order
// N = P · block (every row has P · nnz nonzeros, nnz in each block of columns, stratified
// pseudo-random columns, positive values of expected row sum 1, so x stays bounded). x starts as a
// hash of the index. Each block is stored as ELLPACK (column-major rows of equal length).
//
// Decomposition: a P × P grid of ranks, P = floor(sqrt(ranks)) (ranks beyond P² take no part):
// rank (i, j) = i·P + j holds the block A_ij (block × block) and x_j, the piece of x of column
// block j. A step: every rank computes its partial y_ij = A_ij x_j; the partials of row i are added
// on the diagonal rank (i, i), in the order j = 0 .. P-1; y_i is x_i of the next step, which the
// diagonal rank sends down column i to every rank (k, i).
//
// dcuda version (one launch): the partials travel with put_notify into per-source slots of the
// diagonal rank (tag 16 + j: one per source column), which adds each as soon as it is there (in
// order j = 0 .. P-1) while later ones still arrive, then put_notifies y_i down its column as a
// binomial tree (each rank passes it on, as the baseline's doubling copies do). x buffers and slots
// are double buffered by the parity of the step (the argument is at the kernel).
//
// Baseline (host-driven): per step a kernel computes every partial (the same code), the host
// gathers the partials of each row into the diagonal's slots (one cudaMemcpy2DAsync for all rows),
// a second kernel adds them on the diagonals (the same order), and the host broadcasts each y_i
// down its column (one strided copy to row 0 of the grid, then doubling copies to the other rows,
// log2 P + 1 cudaMemcpy2DAsync) before the next step. Same arithmetic, same order: the results
// are expected bitwise equal; the check allows 1e-12 relative.
//
// Several processes: each checks the x pieces of its diagonal ranks (cases_common.cuh). Exit
// status: 0 when the results agree, 1 when not, 2 on an error, 77 without a GPU.
//
//   spmv [--quick] [--block 4096] [--nnz 16] [--iterations 100] [--threads 256] [--json PATH]
//                                         --quick: blocks of 256, nnz 8, 10 iterations unless given
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "cases_common.cuh"
#include "dcuda/dcuda.h"
#include "dcuda/dcuda_device.cuh"

namespace {

constexpr int kX = 1;         // a new x piece from the diagonal of the column
constexpr int kPartial = 16;  // + source column j: a partial for the diagonal of the row

struct Args {
  const int* cols;      // per used rank: nnz · block local columns (ELLPACK, column-major)
  const double* vals;
  double* x;            // per rank: 2 (parity) · block
  double* partial;      // per rank: block (a non-diagonal rank's partial, the put's source)
  double* slots;        // per diagonal rank i: 2 (parity) · P (source column) · block
  int grid, block, nnz, iterations;
};

// The diagonal's sum of the partials of source column jj into `sum` (jj == 0 starts it).
__device__ void add_partial(double* sum, const double* part, int block, int jj) {
  for (int l = threadIdx.x; l < block; l += blockDim.x) sum[l] = jj == 0 ? part[l] : sum[l] + part[l];
}

__global__ void spmv_dcuda(dcuda_context_handle handle) {
  __shared__ dcuda_state c;
  dcuda_gpu_init(handle, c);
  const auto [a, r, ranks, device_ranks] = cases::rank_start<Args>(c);
  const int P = a.grid, nb = a.block;
  const bool used = r < P * P;
  const int i = r / P, j = r % P;
  const bool diagonal = used && i == j;
  const long nnz = static_cast<long>(a.nnz) * nb;
  // Window offsets and sizes are ints (the host checked that the slots' bytes fit one).
  const int piece = static_cast<int>(sizeof(double) * nb);
  double* x = a.x + 2l * nb * r;
  double* partial = a.partial + static_cast<long>(nb) * r;
  double* slots = diagonal ? a.slots + 2l * P * nb * i : nullptr;
  // Every rank creates both windows, in the same order. A rank with nothing to receive on one
  // (the slots of a non-diagonal rank, both of a rank outside the grid) makes it over memory of
  // its own that nobody writes: an empty window would make dcuda_win_free fail.
  dcuda_win xwin, swin;
  dcuda_win_create(c, DCUDA_COMM_WORLD, x, 2 * piece, &xwin);
  dcuda_win_create(c, DCUDA_COMM_WORLD, diagonal ? slots : partial, diagonal ? 2 * P * piece : piece, &swin);
  const bool several_processes = ranks != device_ranks;
  // Safety of the double buffers (parity q = t % 2; i != j, k != j below):
  // - (i, j) writes slot [q][j] of (i, i) in steps t and t+2. Its step t+2 needs x_j(t+2) from
  //   (j, j), which needs the partial of (j, i) of step t+1, which needs x_i(t+1) from (i, i),
  //   sent after (i, i) added the slots of step t. So the slot is read before it is rewritten.
  // - x[q] of (k, j) is written in steps t-1 (for step t) and t+1, by its parent in column j's
  //   tree, each time after x_j reached the parent from the diagonal's send of that step. The
  //   diagonal's step t+1 send needs the partial of (j, k) of step t+1, which needs x_k(t+1) from
  //   (k, k), which needs the partial of (k, j) of step t — computed from x[q]. So x[q] is read
  //   before it is rewritten (and a parent passes on from its own x[1-q], written only in its
  //   steps t-1 and t+1 as well).
  // - A diagonal reads x[q] and writes its own x[1-q]; nobody else writes a diagonal's x.
  // - Tags: one message per step from each sender on its tag; a sender can be one step ahead,
  //   not two (the chains above), and the message ahead went to the other parity.
  // x_i goes down column i as a binomial tree rooted at the diagonal, as the baseline's doubling
  // copies do: the rank d = (k - i) mod P below the diagonal gets it from the rank at d - msb(d)
  // and passes it on to d + m for every power of two m > d (the largest subtree first), so the
  // last rank has it after about log2 P hops instead of after P - 1 puts of the diagonal.
  const int below = (i - j + P) % P;  // this rank's d in its column (j is the column)
  auto pass_on = [&](double* piece_src, int q) {
    int top = 1;
    while (top < P) top <<= 1;
    for (int m = top >> 1; m > below; m >>= 1) {
      const int child = ((j + below + m) % P) * P + j;
      if (below + m < P) dcuda_put_notify(c, xwin, child, (1 - q) * piece, piece, piece_src, kX);
    }
    if (several_processes) dcuda_win_flush(c, xwin);
  };
  if (used) {
    const int* cols = a.cols + r * nnz;
    const double* vals = a.vals + r * nnz;
    for (int t = 0; t < a.iterations; ++t) {
      const int q = t % 2;
      double* mine = diagonal ? slots + (static_cast<long>(q) * P + i) * nb : partial;
      cases::ell_rows(cols, vals, x + q * nb, mine, nb, a.nnz, 0, nb);
      __syncthreads();
      if (!diagonal) {
        dcuda_put_notify(c, swin, i * P + i, (q * P + j) * piece, piece, mine, kPartial + j);
        if (several_processes) dcuda_win_flush(c, swin);
        dcuda_wait_notifications(c, kX, 1);  // x_j of step t+1 is in x[1-q]
        pass_on(x + (1 - q) * nb, q);
      } else {
        double* sum = x + (1 - q) * nb;
        for (int jj = 0; jj < P; ++jj) {  // add each partial as it comes, in column order
          if (jj != i) dcuda_wait_notifications(c, kPartial + jj, 1);
          add_partial(sum, slots + (static_cast<long>(q) * P + jj) * nb, nb, jj);
        }
        __syncthreads();
        pass_on(sum, q);
      }
    }
  }
  dcuda_win_free(c, swin);
  dcuda_win_free(c, xwin);
  dcuda_gpu_finish(c);
}

// Baseline kernels: block r of the first is rank r; block i of the second is the diagonal (i, i).
__global__ void partial_kernel(const int* cols, const double* vals, const double* x, double* partial, int block, int nnz,
                               int q) {
  const long r = blockIdx.x, entries = static_cast<long>(nnz) * block;
  cases::ell_rows(cols + r * entries, vals + r * entries, x + (2 * r + q) * block, partial + r * block, block, nnz, 0, block);
}
__global__ void sum_kernel(const double* slots, double* x, int P, int block, int q) {
  const long i = blockIdx.x;
  double* sum = x + (2 * (i * P + i) + 1 - q) * block;
  for (int jj = 0; jj < P; ++jj) add_partial(sum, slots + ((2 * i + q) * P + jj) * block, block, jj);
}

__global__ void make_blocks(int* cols, double* vals, int P, int block, int nnz) {
  const long entries = static_cast<long>(nnz) * block, total = entries * P * P;
  const int stride = block / nnz;
  for (long e = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; e < total; e += gridDim.x * static_cast<long>(blockDim.x)) {
    const long r = e / entries, k = (e % entries) / block, l = e % block;  // rank, entry of the row, row
    const uint64_t key = (static_cast<uint64_t>(r) * block + l) * nnz + k;
    cols[e] = static_cast<int>(k * stride + cases::mix(key) % stride);
    vals[e] = 2.0 * cases::unit(key ^ 0x77777777ull) / (static_cast<double>(P) * nnz);
  }
}
__global__ void fill_x(double* x, double* slots, int P, int block) {
  const long total = 2l * block * P * P;
  for (long e = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; e < total; e += gridDim.x * static_cast<long>(blockDim.x)) {
    const long r = e / (2l * block), q = (e / block) % 2, l = e % block;
    x[e] = q == 0 ? 0.5 + cases::unit(static_cast<uint64_t>((r % P) * block + l) ^ 0x1234ull) : 0.0;
    slots[e] = 0.0;  // the slots: 2 · P · block per diagonal, P diagonals: the same count
  }
}

}  // namespace

int main(int argc, char** argv) {
  cases::Options o(argc, argv);
  const bool quick = o.quick;
  const int nb = static_cast<int>(o.integer("block", quick ? 256 : 4096)), nnz = static_cast<int>(o.integer("nnz", quick ? 8 : 16));
  const int iterations = static_cast<int>(o.integer("iterations", quick ? 10 : 100));
  o.done("spmv: x = A x repeated, A in P x P blocks over the ranks (block x block each, nnz per row per block); dcuda against "
         "host-driven gathers and broadcasts");
  const int threads = o.threads;
  if (nb < 1 || nnz < 1 || nnz > nb || iterations < 1) return std::fprintf(stderr, "spmv: need 1 <= nnz <= block\n"), 2;

  cases::World world;
  dcuda_host_context_handle ctx = cases::start_dcuda(spmv_dcuda, threads, &world);
  const int ranks = world.ranks;
  int P = static_cast<int>(std::sqrt(static_cast<double>(ranks)));
  while ((P + 1) * (P + 1) <= ranks) ++P;
  while (P * P > ranks) --P;
  if (kPartial + P > 256) return std::fprintf(stderr, "spmv: %d columns need more than 256 tags\n", P), 2;
  cases::check_window_bytes("spmv", "slots", double(sizeof(double)) * 2 * P * nb);
  const int used = P * P;
  const long entries = static_cast<long>(nnz) * nb;
  int* cols;
  double *vals, *x, *partial, *slots;
  CASE_CHECK(cudaMalloc(&cols, sizeof(int) * entries * used));
  CASE_CHECK(cudaMalloc(&vals, sizeof(double) * entries * used));
  CASE_CHECK(cudaMalloc(&x, sizeof(double) * 2 * nb * ranks));
  CASE_CHECK(cudaMalloc(&partial, sizeof(double) * nb * ranks));
  CASE_CHECK(cudaMalloc(&slots, sizeof(double) * 2 * nb * used));
  make_blocks<<<1024, 256>>>(cols, vals, P, nb, nnz);
  CASE_CHECK(cudaDeviceSynchronize());
  auto reset = [&] {
    fill_x<<<1024, 256>>>(x, slots, P, nb);
    CASE_CHECK(cudaDeviceSynchronize());
  };
  std::printf("spmv: %d ranks of %d threads, a %d x %d grid of them used, blocks of %d x %d with %d nonzeros per row (N = %ld), "
              "%d iterations\n",
              ranks, threads, P, P, nb, nb, nnz, static_cast<long>(P) * nb, iterations);

  Args a{cols, vals, x, partial, slots, P, nb, nnz, 1};
  const double dcuda_ms = cases::warm_then_time(
      reset, [&](int count) { return a.iterations = count, cases::run_dcuda(ctx, &a, sizeof a); }, iterations);
  // The result: x_i on each diagonal rank (i, i) of this process, parity iterations % 2.
  auto result = [&] {
    std::vector<double> v;
    for (int i = 0; i < P; ++i)
      if (const int d = i * P + i; d >= world.first && d < world.first + world.here)
        cases::append_from_device(v, x + (2l * d + iterations % 2) * nb, nb);
    return v;
  };
  const std::vector<double> got = result();

  cudaStream_t stream;
  CASE_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const size_t piece = sizeof(double) * nb, rank_pitch = 2 * piece;
  auto baseline = [&](int steps) {
    for (int t = 0; t < steps; ++t) {
      const int q = t % 2, n = 1 - q;
      partial_kernel<<<used, threads, 0, stream>>>(cols, vals, x, partial, nb, nnz, q);
      // Gather: the partials of row i (ranks i·P .. i·P + P-1, contiguous) into slots [i][q].
      CASE_CHECK(cudaMemcpy2DAsync(slots + static_cast<long>(q) * P * nb, 2 * P * piece, partial, P * piece, P * piece, P,
                                   cudaMemcpyDeviceToDevice, stream));
      sum_kernel<<<P, threads, 0, stream>>>(slots, x, P, nb, q);
      // Broadcast x[n] of each diagonal (i, i) down its column: first to row 0 of the grid (rank
      // (0, i), i >= 1: source pitch one grid row plus one rank), then rows [0, c) to [c, 2c).
      if (P > 1)
        CASE_CHECK(cudaMemcpy2DAsync(x + (2l + n) * nb, rank_pitch, x + (2l * (P + 1) + n) * nb, (P + 1) * rank_pitch, piece,
                                     P - 1, cudaMemcpyDeviceToDevice, stream));
      for (int c = 1; c < P; c *= 2) {
        const int rows = c < P - c ? c : P - c;
        CASE_CHECK(cudaMemcpy2DAsync(x + (2l * c * P + n) * nb, rank_pitch, x + n * nb, rank_pitch, piece,
                                     static_cast<size_t>(rows) * P, cudaMemcpyDeviceToDevice, stream));
      }
    }
  };
  const double baseline_ms = cases::warm_then_time(
      reset, [&](int count) { return cases::time_on(stream, [&] { baseline(count); }); }, iterations);
  const std::vector<double> want = result();

  cases::Report rep("spmv", world, "partial kernel, cudaMemcpy2DAsync gather, sum kernel, cudaMemcpy2DAsync broadcast", dcuda_ms,
                    baseline_ms, cases::compare(got, want), 1e-12);
  rep.sizes = {{"grid", P}, {"threads", threads}, {"block", nb}, {"nnz_per_row_per_block", nnz}, {"iterations", iterations}};
  const int status = rep.finish(o.json);
  cudaStreamDestroy(stream);
  for (void* v : {static_cast<void*>(cols), static_cast<void*>(vals), static_cast<void*>(x), static_cast<void*>(partial),
                  static_cast<void*>(slots)})
    cudaFree(v);
  dcuda_host_finish(ctx);
  return status;
}
