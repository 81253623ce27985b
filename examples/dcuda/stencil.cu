// dcuda case study 1: a 3D 7-point Jacobi stencil.
//
// What it computes: `iterations` sweeps of u'(i,j,k) = w0 u(i,j,k) + w1 (sum of the 6 neighbours)
// on an nx × ny × (ranks · nz) grid of doubles; the outer faces (i or j on the border, the first and
// last plane in z) keep their initial values. The initial grid is a hash of the point's indices.
//
// Decomposition: along z, rank r owns planes r·nz .. r·nz + nz - 1 as a slab of nz + 2 planes:
// local plane 0 is the halo below (a copy of rank r-1's last plane), 1..nz its own planes, nz + 1
// the halo above (rank r+1's first plane). Two buffers (double buffering): sweep t reads buffer
// t % 2 and writes buffer (t + 1) % 2. Rank 0's plane 0 and the last rank's plane nz + 1 are the
// fixed faces of the grid. Weak scaling: nx, ny, nz are per rank; the grid grows with the ranks.
//
// dcuda version (one launch): each sweep computes its two boundary planes (1 and nz) first,
// put_notifies them into the neighbours' halos of the buffer being written (plane 1 to rank r-1's
// plane nz + 1, plane nz to rank r+1's plane 0), then computes the inner planes 2 .. nz-1 while the
// neighbours receive, and only then waits for the two notifications of its own halos.
//
// Baseline (host-driven): one kernel per sweep over the same slabs (a block per slab, the same
// number of "ranks", the same code per point), then the host copies the halos between the slabs
// on the stream (cudaMemcpy2DAsync: all "plane 1 of slab r+1 → plane nz+1 of slab r" copies in one
// strided call, and the other direction in another; --plane-copies makes it 2 (ranks-1)
// cudaMemcpyAsync of one plane each), then the next kernel. The arithmetic per point is the same in
// both, so the results are expected bitwise equal; the check allows 1e-12 relative.
//
// Several processes: each checks its own slabs (cases_common.cuh). Exit status: 0 when the results
// agree, 1 when not, 2 on an error, 77 without a GPU.
//
//   stencil [--quick] [--nx 64] [--ny 64] [--nz 8] [--iterations 200] [--threads 256] [--plane-copies]
//           [--json PATH]                 --quick: nx 16, ny 16, nz 2, 10 sweeps unless given
#include <cuda_runtime.h>

#include <cstdio>
#include <vector>

#include "cases_common.cuh"
#include "dcuda/dcuda.h"
#include "dcuda/dcuda_device.cuh"

namespace {

constexpr int kFromBelow = 1;  // tag of the halo plane 0 (sent by rank r-1)
constexpr int kFromAbove = 2;  // tag of the halo plane nz + 1 (sent by rank r+1)
constexpr double kW0 = 0.4, kW1 = 0.1;

struct Args {
  double* buf[2];  // ranks slabs of (nz + 2) planes of nx·ny doubles each
  int nx, ny, nz, iterations;
};

// Planes [k0, k1) of a slab: out from in (both point at the slab's plane 0). The border points of
// each plane are copied, the others get the stencil. Collective over the block. No __restrict__:
// the halos are written by other blocks during the dcuda kernel, so `in` must not be read through
// the non-coherent (read-only) path.
__device__ void sweep_planes(const double* in, double* out, int nx, int ny, int k0, int k1) {
  const long plane = static_cast<long>(nx) * ny;
  const long first = k0 * plane, last = k1 * plane;
  for (long p = first + threadIdx.x; p < last; p += blockDim.x) {
    const int i = static_cast<int>(p % nx), j = static_cast<int>((p / nx) % ny);
    if (i == 0 || j == 0 || i == nx - 1 || j == ny - 1) {
      out[p] = in[p];
    } else {
      const double s = ((in[p - 1] + in[p + 1]) + (in[p - nx] + in[p + nx])) + (in[p - plane] + in[p + plane]);
      out[p] = kW0 * in[p] + kW1 * s;
    }
  }
}

__global__ void stencil_dcuda(dcuda_context_handle handle) {
  __shared__ dcuda_state c;
  dcuda_gpu_init(handle, c);
  const auto [a, r, ranks, device_ranks] = cases::rank_start<Args>(c);
  const long plane = static_cast<long>(a.nx) * a.ny, slab = plane * (a.nz + 2);
  // Window offsets and sizes are ints (the host checked that a slab's bytes fit one).
  const int plane_bytes = static_cast<int>(sizeof(double) * plane), slab_bytes = static_cast<int>(sizeof(double) * slab);
  const int upper_halo = plane_bytes * (a.nz + 1);  // the offset of plane nz + 1 in a slab
  double* mine[2] = {a.buf[0] + r * slab, a.buf[1] + r * slab};
  dcuda_win win[2];  // window b: this rank's slab of buffer b (every rank creates both, in order)
  dcuda_win_create(c, DCUDA_COMM_WORLD, mine[0], slab_bytes, &win[0]);
  dcuda_win_create(c, DCUDA_COMM_WORLD, mine[1], slab_bytes, &win[1]);
  const bool below = r > 0, above = r + 1 < ranks;
  const bool several_processes = ranks != device_ranks;
  // Why two buffers suffice, and why a put never lands in a halo still being read:
  // - Sweep t reads buffer t%2 (halos included) and writes buffer n = (t+1)%2, whose halos the
  //   neighbours fill during sweep t. The halos of a buffer are read only by the boundary planes
  //   1 and nz, which each rank computes before it sends anything in that sweep.
  // - A put of sweep t writes the neighbour's halo of buffer n. The neighbour last read that halo
  //   in sweep t-1 (n was its input then), in its boundary planes, before its puts of sweep t-1 —
  //   and this rank waited for those puts at the end of sweep t-1 before starting sweep t. So the
  //   neighbour is done reading; its next read of that halo is in sweep t+1, after it waited for
  //   this put's notification.
  // - One tag per direction, one put per sweep and direction: a neighbour can be at most one sweep
  //   ahead (its sweep t+1 needs this rank's put of sweep t), so when this rank consumes one
  //   notification per tag it consumes the one of its sweep (the one ahead went to the other
  //   buffer, which this rank no longer reads in sweep t).
  for (int t = 0; t < a.iterations; ++t) {
    const double* in = mine[t % 2];
    double* out = mine[(t + 1) % 2];
    const dcuda_win w = win[(t + 1) % 2];
    sweep_planes(in, out, a.nx, a.ny, 1, 2);
    if (a.nz > 1) sweep_planes(in, out, a.nx, a.ny, a.nz, a.nz + 1);
    __syncthreads();  // the boundary planes are complete before the block copies them out
    if (below) dcuda_put_notify(c, w, r - 1, upper_halo, plane_bytes, out + plane, kFromAbove);
    if (above) dcuda_put_notify(c, w, r + 1, 0, plane_bytes, out + plane * a.nz, kFromBelow);
    if (a.nz > 2) sweep_planes(in, out, a.nx, a.ny, 2, a.nz);  // overlaps the neighbours' receipt
    // A put to another process may read its source (plane 1 or nz of `out`, rewritten in sweep
    // t+2) after it returns: flush then. On one GPU a put is done when it returns, and the flush
    // (a read of host memory) is skipped.
    if (several_processes) dcuda_win_flush(c, w);
    if (below) dcuda_wait_notifications(c, kFromBelow, 1);
    if (above) dcuda_wait_notifications(c, kFromAbove, 1);
    __syncthreads();
  }
  dcuda_win_free(c, win[1]);
  dcuda_win_free(c, win[0]);
  dcuda_gpu_finish(c);
}

// The baseline's sweep: block r computes its slab's planes 1..nz (the same per-point code).
__global__ void stencil_sweep(const double* in, double* out, int nx, int ny, int nz) {
  const long slab = static_cast<long>(nx) * ny * (nz + 2);
  sweep_planes(in + blockIdx.x * slab, out + blockIdx.x * slab, nx, ny, 1, nz + 1);
}

// The initial grid, both buffers, halos included (a halo holds its neighbour's initial plane).
__global__ void fill(double* b0, double* b1, long total, int nx, int ny, int nz) {
  const long plane = static_cast<long>(nx) * ny, slab = plane * (nz + 2);
  for (long e = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; e < total; e += gridDim.x * static_cast<long>(blockDim.x)) {
    const long r = e / slab, p = (e % slab) / plane, ij = e % plane;
    const long z = r * nz + p;  // global plane + 1 (the bottom face is 0)
    const double v = cases::unit(static_cast<uint64_t>(z * plane + ij));
    b0[e] = v;
    b1[e] = v;
  }
}

}  // namespace

int main(int argc, char** argv) {
  cases::Options o(argc, argv);
  const bool quick = o.quick;
  const int nx = static_cast<int>(o.integer("nx", quick ? 16 : 64)), ny = static_cast<int>(o.integer("ny", quick ? 16 : 64));
  const int nz = static_cast<int>(o.integer("nz", quick ? 2 : 8));
  const int iterations = static_cast<int>(o.integer("iterations", quick ? 10 : 200));
  const bool plane_copies = o.flag("plane-copies", "the baseline copies plane by plane, not with cudaMemcpy2DAsync");
  o.done("stencil: 3D 7-point Jacobi, z-slabs per rank; dcuda against host-driven halo copies (nx, ny, nz per rank)");
  const int threads = o.threads;
  if (nx < 3 || ny < 3 || nz < 1 || iterations < 1) return std::fprintf(stderr, "stencil: bad sizes\n"), 2;

  cases::check_window_bytes("stencil", "slab", double(sizeof(double)) * nx * ny * (nz + 2));
  cases::World world;
  dcuda_host_context_handle ctx = cases::start_dcuda(stencil_dcuda, threads, &world);
  const int ranks = world.ranks;
  const long plane = static_cast<long>(nx) * ny, slab = plane * (nz + 2), total = slab * ranks;
  double* buf[2];
  CASE_CHECK(cudaMalloc(&buf[0], sizeof(double) * total));
  CASE_CHECK(cudaMalloc(&buf[1], sizeof(double) * total));
  auto reset = [&] {
    fill<<<1024, 256>>>(buf[0], buf[1], total, nx, ny, nz);
    CASE_CHECK(cudaDeviceSynchronize());
  };
  // The result: this process's slabs (halos included) of the buffer the last sweep wrote.
  auto result = [&] {
    std::vector<double> v;
    cases::append_from_device(v, buf[iterations % 2] + world.first * slab, static_cast<size_t>(world.here) * slab);
    return v;
  };
  std::printf("stencil: %d ranks of %d threads, slabs of %d x %d x %d (+2 halo planes), grid %d x %d x %ld, %d sweeps\n",
              ranks, threads, nx, ny, nz, nx, ny, static_cast<long>(nz) * ranks, iterations);

  // dcuda: a short warm-up run, then the timed one from the initial grid.
  Args a{{buf[0], buf[1]}, nx, ny, nz, 1};
  const double dcuda_ms = cases::warm_then_time(
      reset, [&](int count) { return a.iterations = count, cases::run_dcuda(ctx, &a, sizeof a); }, iterations);
  const std::vector<double> got = result();

  // Baseline: kernel, host-driven halo copies, kernel...
  cudaStream_t stream;
  CASE_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const size_t pb = sizeof(double) * plane, sb = sizeof(double) * slab;
  auto exchange = [&](double* b) {
    if (ranks < 2) return;
    if (plane_copies) {
      for (int r = 0; r + 1 < ranks; ++r) {
        CASE_CHECK(cudaMemcpyAsync(b + r * slab + (nz + 1) * plane, b + (r + 1) * slab + plane, pb, cudaMemcpyDeviceToDevice, stream));
        CASE_CHECK(cudaMemcpyAsync(b + (r + 1) * slab, b + r * slab + nz * plane, pb, cudaMemcpyDeviceToDevice, stream));
      }
    } else {
      // plane 1 of slabs 1.. → plane nz+1 of slabs 0..; plane nz of slabs 0.. → plane 0 of slabs 1..
      CASE_CHECK(cudaMemcpy2DAsync(b + (nz + 1) * plane, sb, b + slab + plane, sb, pb, ranks - 1, cudaMemcpyDeviceToDevice, stream));
      CASE_CHECK(cudaMemcpy2DAsync(b + slab, sb, b + nz * plane, sb, pb, ranks - 1, cudaMemcpyDeviceToDevice, stream));
    }
  };
  auto baseline = [&](int sweeps) {
    for (int t = 0; t < sweeps; ++t) {
      stencil_sweep<<<ranks, threads, 0, stream>>>(buf[t % 2], buf[(t + 1) % 2], nx, ny, nz);
      exchange(buf[(t + 1) % 2]);
    }
  };
  const double baseline_ms = cases::warm_then_time(
      reset, [&](int count) { return cases::time_on(stream, [&] { baseline(count); }); }, iterations);
  const std::vector<double> want = result();

  cases::Report rep("stencil", world,
                    plane_copies ? "kernel per sweep + per-plane cudaMemcpyAsync halos" : "kernel per sweep + cudaMemcpy2DAsync halos",
                    dcuda_ms, baseline_ms, cases::compare(got, want), 1e-12);
  rep.sizes = {{"threads", threads}, {"nx", nx}, {"ny", ny}, {"nz_per_rank", nz}, {"iterations", iterations}};
  rep.extra = {{"points_per_second_dcuda", double(plane) * nz * world.here * iterations / (dcuda_ms * 1e-3)}};
  const int status = rep.finish(o.json);
  cudaStreamDestroy(stream);
  cudaFree(buf[0]);
  cudaFree(buf[1]);
  dcuda_host_finish(ctx);
  return status;
}
