// dcuda case study 2: a short-range particle simulation, domain-decomposed along x.
//
// What it computes: `steps` time steps of particles in the box [0, ranks · cells) × [0, height)
// (walls in x, periodic in y) under a soft repulsive pair force of range 1 (f = 10 (1 - d) along
// the separation, for distance d < 1): forces, then v += f dt (speed capped so a particle moves
// less than half a cell per step), x += v dt, reflection at the walls. The initial state is a hash
// of (rank, index): `particles` per rank at random places in its slab, random small velocities.
//
// Decomposition: rank r owns the slab x ∈ [r · cells, (r+1) · cells) (cells >= 2 cells of width 1,
// the force's range) and the particles in it, at most `capacity` (kept in index order: the order
// is deterministic, so runs can be compared bitwise). A step needs the neighbours' particles within
// 1 of the slab's edges (halos) and moves the particles that left the slab to the neighbour
// (migration): a step is forces → update → migrate out → take migrants in → send halos.
//
// dcuda version (one launch): the halos of step s are put_notified at the end of step s-1; while
// they travel a rank sums the forces of its own particles on all of its particles and updates the
// inner ones (farther than 1 from both edges: halo particles cannot reach them, so their sums are
// the same with or without the halos), then waits for the halos and adds their forces to the
// particles near the edges (one pass over the particles before the wait: with a thread per
// particle, inner and edge particles in two passes put two sums one after the other on the step's
// critical path, which the exchange on one GPU does not repay — measured, see
// bench/results/h200/dcuda); it put_notifies the particles that left (a count and the particles,
// only as many bytes as there are) and waits for the neighbours' migrants. Messages go into
// double-buffered (by step parity) inboxes.
//
// Baseline (host-driven): per step a kernel computes forces and updates and sorts out the
// migrants (the same code, every particle with the halos), the host copies the migrant boxes
// between neighbours (cudaMemcpy2DAsync over all ranks, a whole box each since the host does not
// know the counts), a second kernel takes the migrants in and builds the halos, and the host copies
// the halo boxes. Same arithmetic, same order: the final particles must be bitwise equal (the
// check is bitwise: the motion is chaotic, a difference in the last bit would soon be everywhere).
// Also checked: no box or particle array overflowed, and no particle was lost.
//
// Several processes: each checks its own ranks' particles (cases_common.cuh). Exit status: 0 when
// the results agree, 1 when not, 2 on an error, 77 without a GPU.
//
//   particles [--quick] [--particles 256] [--cells 4] [--height 16] [--steps 100]
//             [--capacity 4·particles] [--box particles/2] [--dt 0.005] [--threads 256] [--json PATH]
//             --quick: 64 particles, 3 cells, height 8, boxes of 128, 20 steps unless given
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "cases_common.cuh"
#include "dcuda/dcuda.h"
#include "dcuda/dcuda_device.cuh"

namespace {

struct alignas(16) Particle {
  double x, y, vx, vy;
};

constexpr double kStrength = 10.0;  // force at distance 0 (range 1)
constexpr int kMigFromLeft = 1, kMigFromRight = 2, kHaloFromLeft = 3, kHaloFromRight = 4;
constexpr int kMig = 0, kHalo = 1;  // box kinds
constexpr int kLeft = 0, kRight = 1;

// A rank's region of Particles: 8 inboxes (kind, parity, side the message came from), 4 outboxes
// (kind, side it goes to), each of `box` + 1 Particles (the first holds the count, in x), then its
// particles and their next state, `capacity` + 1 each (the first holds the count). The inboxes
// come first: they are the rank's window.
struct Layout {
  int capacity, box;
  __host__ __device__ long slot() const { return box + 1l; }
  __host__ __device__ long inbox(int kind, int parity, int side) const { return ((kind * 2 + parity) * 2 + side) * slot(); }
  __host__ __device__ long outbox(int kind, int side) const { return (8 + kind * 2 + side) * slot(); }
  __host__ __device__ long parts() const { return 12 * slot(); }
  __host__ __device__ long next() const { return parts() + capacity + 1; }
  __host__ __device__ long stride() const { return next() + capacity + 1; }
};

struct Args {
  Particle* all;  // ranks · layout.stride()
  int* overflow;  // per rank: set when a box or the particles overflowed
  Layout layout;
  int cells, steps;
  double width, height, dt;  // width: ranks · cells
};

__device__ int count_of(const Particle* slot) { return static_cast<int>(slot[0].x); }

// The force on p from others[0, n) (skipping index `self`), added to f in index order.
__device__ void add_forces(const Particle& p, const Particle* others, int n, int self, double height, double& fx, double& fy) {
  for (int j = 0; j < n; ++j) {
    if (j == self) continue;
    const Particle q = others[j];
    const double dx = p.x - q.x;
    double dy = p.y - q.y;
    if (dy > 0.5 * height) dy = dy - height;
    else if (dy < -0.5 * height) dy = dy + height;
    const double d2 = dx * dx + dy * dy;
    if (d2 < 1.0 && d2 > 0.0) {
      const double d = sqrt(d2);
      const double f = kStrength * (1.0 - d) / d;
      fx = fx + f * dx;
      fy = fy + f * dy;
    }
  }
}

__device__ Particle advance(Particle p, double fx, double fy, double dt, double width, double height) {
  const double vmax = 0.45 / dt;
  p.vx = fmin(fmax(p.vx + fx * dt, -vmax), vmax);
  p.vy = fmin(fmax(p.vy + fy * dt, -vmax), vmax);
  p.x = p.x + p.vx * dt;
  p.y = p.y + p.vy * dt;
  if (p.x < 0.0) p.x = -p.x, p.vx = -p.vx;
  if (p.x > width) p.x = width - (p.x - width), p.vx = -p.vx;
  if (p.y < 0.0) p.y = p.y + height;
  else if (p.y >= height) p.y = p.y - height;
  return p;
}

// What a pass computes: everything (the baseline), or the two halves the dcuda version splits a
// step's forces into around the halos' arrival.
enum Pass {
  kAll = 0,    // every particle's forces (its own rank's particles, then the halos) and update
  kOwn = 1,    // the forces of the rank's own particles on every particle; the inner ones (which
               // halo particles cannot reach: see the header) updated at once, the others' sums
               // kept in next (x, y) for kHalos
  kHalos = 2,  // the particles near the edges: the halos' forces added to those sums, then updated
};

// Forces and the update of the rank's particles into next (the same index). Every particle's sum
// is added in one order (own particles, left halo, right halo), however it is split, so the dcuda
// version and the baseline agree bitwise. The split keeps one pass over the particles before the
// halos are needed: with a thread per particle the sums of inner and edge particles run at once.
__device__ void forces(Particle* base, const Layout& L, int parity, double lo, double hi, Pass pass, const Args& a) {
  const Particle* parts = base + L.parts() + 1;
  Particle* next = base + L.next() + 1;
  const int n = count_of(base + L.parts());
  const Particle* from_left = base + L.inbox(kHalo, parity, kLeft);
  const Particle* from_right = base + L.inbox(kHalo, parity, kRight);
  const int nl = pass != kOwn ? count_of(from_left) : 0, nr = pass != kOwn ? count_of(from_right) : 0;
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    const Particle p = parts[i];
    const bool inner = p.x >= lo + 1.0 && p.x < hi - 1.0;
    if (pass == kHalos && inner) continue;
    double fx = 0, fy = 0;
    if (pass == kHalos) fx = next[i].x, fy = next[i].y;
    else add_forces(p, parts, n, i, a.height, fx, fy);
    if (pass == kOwn && !inner) {
      next[i].x = fx, next[i].y = fy;
      continue;
    }
    add_forces(p, from_left + 1, nl, -1, a.height, fx, fy);
    add_forces(p, from_right + 1, nr, -1, a.height, fx, fy);
    next[i] = advance(p, fx, fy, a.dt, a.width, a.height);
  }
}

// next → parts (those that stay) and the migrant outboxes; the counts into the boxes' headers.
__device__ void migrate(Particle* base, const Layout& L, int r, int ranks, double lo, double hi, int* overflow) {
  __shared__ int counts[3];
  if (threadIdx.x == 0) counts[0] = counts[1] = counts[2] = 0;
  __syncthreads();
  const int n = count_of(base + L.parts());
  const int caps[3] = {L.capacity, L.box, L.box};
  const bool left = r > 0, right = r + 1 < ranks;
  cases::block_partition3(base + L.next() + 1, n, base + L.parts() + 1, base + L.outbox(kMig, kLeft) + 1,
                          base + L.outbox(kMig, kRight) + 1, caps, counts, [=](const Particle& p) {
                            return left && p.x < lo ? 1 : right && p.x >= hi ? 2 : 0;
                          });
  if (threadIdx.x == 0) {
    if (counts[1] > L.box || counts[2] > L.box) *overflow = 1;
    base[L.parts()].x = counts[0];
    base[L.outbox(kMig, kLeft)].x = counts[1] < L.box ? counts[1] : L.box;
    base[L.outbox(kMig, kRight)].x = counts[2] < L.box ? counts[2] : L.box;
  }
  __syncthreads();
}

// The migrants of `parity` (from the left, then from the right) appended to the particles.
__device__ void absorb(Particle* base, const Layout& L, int parity, int* overflow) {
  int n = count_of(base + L.parts());
  for (int side = 0; side < 2; ++side) {
    const Particle* in = base + L.inbox(kMig, parity, side);
    const int m = count_of(in);
    for (int k = threadIdx.x; k < m; k += blockDim.x)
      if (n + k < L.capacity) base[L.parts() + 1 + n + k] = in[1 + k];
    n += m;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    if (n > L.capacity) *overflow = 1;
    base[L.parts()].x = n < L.capacity ? n : L.capacity;
  }
  __syncthreads();
}

// The halo outboxes: particles within 1 of the left / right edge (where there is a neighbour).
__device__ void make_halos(Particle* base, const Layout& L, int r, int ranks, double lo, double hi, int* overflow) {
  __shared__ int counts[3];
  if (threadIdx.x == 0) counts[0] = counts[1] = counts[2] = 0;
  __syncthreads();
  const int caps[3] = {0, L.box, L.box};
  const bool left = r > 0, right = r + 1 < ranks;
  cases::block_partition3(base + L.parts() + 1, count_of(base + L.parts()), static_cast<Particle*>(nullptr),
                          base + L.outbox(kHalo, kLeft) + 1, base + L.outbox(kHalo, kRight) + 1, caps, counts,
                          [=](const Particle& p) { return left && p.x < lo + 1.0 ? 1 : right && p.x >= hi - 1.0 ? 2 : 0; });
  if (threadIdx.x == 0) {
    if (counts[1] > L.box || counts[2] > L.box) *overflow = 1;
    base[L.outbox(kHalo, kLeft)].x = counts[1] < L.box ? counts[1] : L.box;
    base[L.outbox(kHalo, kRight)].x = counts[2] < L.box ? counts[2] : L.box;
  }
  __syncthreads();
}

__global__ void particles_dcuda(dcuda_context_handle handle) {
  __shared__ dcuda_state c;
  dcuda_gpu_init(handle, c);
  const auto start = cases::rank_start<Args>(c);  // named, not bound: the lambdas below capture r
  const Args a = start.a;
  const int r = start.r, ranks = start.ranks, device_ranks = start.device_ranks;
  const Layout L = a.layout;
  Particle* base = a.all + r * L.stride();
  const double lo = static_cast<double>(r) * a.cells, hi = static_cast<double>(r + 1) * a.cells;
  const bool left = r > 0, right = r + 1 < ranks;
  const bool several_processes = ranks != device_ranks;
  // Window offsets and sizes are ints (the host checked that the inboxes' bytes fit one).
  const int particle = static_cast<int>(sizeof(Particle));
  dcuda_win win;  // the 8 inboxes
  dcuda_win_create(c, DCUDA_COMM_WORLD, base, particle * static_cast<int>(L.outbox(kMig, kLeft)), &win);
  // Sends outbox (kind, side) to the neighbour on `side`, into its inbox (kind, parity, other side).
  auto send = [&](int kind, int parity) {
    for (int side = 0; side < 2; ++side) {
      if (side == kLeft ? !left : !right) continue;
      Particle* box = base + L.outbox(kind, side);
      const int tag = kind == kMig ? (side == kLeft ? kMigFromRight : kMigFromLeft) : (side == kLeft ? kHaloFromRight : kHaloFromLeft);
      dcuda_put_notify(c, win, side == kLeft ? r - 1 : r + 1, particle * static_cast<int>(L.inbox(kind, parity, 1 - side)),
                       particle * (count_of(box) + 1), box, tag);
    }
    if (several_processes) dcuda_win_flush(c, win);
  };
  auto receive = [&](int kind) {
    if (left) dcuda_wait_notifications(c, kind == kMig ? kMigFromLeft : kHaloFromLeft, 1);
    if (right) dcuda_wait_notifications(c, kind == kMig ? kMigFromRight : kHaloFromRight, 1);
  };
  // Safety of the inboxes (parity by step): halos for step s are written in step s-1 and read in
  // step s; the neighbour writes that parity again in step s+1, after it waited for this rank's
  // migrants of step s+1, sent after this rank's forces of step s+1 — long after it read them.
  // Migrants of step s are written and read in step s; the neighbour writes that parity again in
  // step s+2, after it waited for this rank's halos sent at the end of step s+1. A neighbour never
  // has a message on a tag before this rank consumed the previous one (the same chains), and every
  // message of a run is consumed in it (the last step sends no halos), so the next run starts
  // with no notification pending.
  make_halos(base, L, r, ranks, lo, hi, a.overflow + r);
  send(kHalo, 0);
  for (int s = 0; s < a.steps; ++s) {
    const int parity = s % 2;
    forces(base, L, parity, lo, hi, kOwn, a);  // while the halos travel
    receive(kHalo);
    forces(base, L, parity, lo, hi, kHalos, a);
    __syncthreads();
    migrate(base, L, r, ranks, lo, hi, a.overflow + r);
    send(kMig, parity);
    receive(kMig);
    absorb(base, L, parity, a.overflow + r);
    if (s + 1 < a.steps) {
      make_halos(base, L, r, ranks, lo, hi, a.overflow + r);
      send(kHalo, 1 - parity);
    }
  }
  dcuda_win_free(c, win);
  dcuda_gpu_finish(c);
}

// Baseline kernels: block r is rank r.
__global__ void halo_kernel(Args a) {
  const int r = blockIdx.x;
  const double lo = static_cast<double>(r) * a.cells, hi = lo + a.cells;
  make_halos(a.all + r * a.layout.stride(), a.layout, r, gridDim.x, lo, hi, a.overflow + r);
}
__global__ void step_kernel(Args a, int parity) {
  const int r = blockIdx.x;
  const double lo = static_cast<double>(r) * a.cells, hi = static_cast<double>(r + 1) * a.cells;
  Particle* base = a.all + r * a.layout.stride();
  forces(base, a.layout, parity, lo, hi, kAll, a);
  __syncthreads();
  migrate(base, a.layout, r, gridDim.x, lo, hi, a.overflow + r);
}
__global__ void absorb_kernel(Args a, int parity, int halos) {
  const int r = blockIdx.x;
  const double lo = static_cast<double>(r) * a.cells, hi = lo + a.cells;
  Particle* base = a.all + r * a.layout.stride();
  absorb(base, a.layout, parity, a.overflow + r);
  if (halos) make_halos(base, a.layout, r, gridDim.x, lo, hi, a.overflow + r);
}

// The initial state: every box empty, `n` particles per rank.
__global__ void fill(Args a, int ranks, int n) {
  const Layout L = a.layout;
  const long total = L.stride() * ranks;
  for (long e = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; e < total; e += gridDim.x * static_cast<long>(blockDim.x)) {
    const long r = e / L.stride(), k = e % L.stride();
    Particle p{0, 0, 0, 0};
    if (k == L.parts()) {
      p.x = n;
    } else if (k > L.parts() && k <= L.parts() + n) {
      const uint64_t key = static_cast<uint64_t>(r) * 0x100000ull + static_cast<uint64_t>(k - L.parts()) * 4;
      p.x = (static_cast<double>(r) + cases::unit(key)) * a.cells;
      p.y = cases::unit(key + 1) * a.height;
      p.vx = cases::unit(key + 2) - 0.5;
      p.vy = cases::unit(key + 3) - 0.5;
      if (p.x >= (r + 1.0) * a.cells) p.x = r * static_cast<double>(a.cells);  // rounding at the edge
    }
    a.all[e] = p;
  }
  for (long r = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; r < ranks; r += gridDim.x * static_cast<long>(blockDim.x))
    a.overflow[r] = 0;
}

}  // namespace

int main(int argc, char** argv) {
  cases::Options o(argc, argv);
  const bool quick = o.quick;
  const int n = static_cast<int>(o.integer("particles", quick ? 64 : 256)), cells = static_cast<int>(o.integer("cells", quick ? 3 : 4));
  const double height = o.real("height", quick ? 8.0 : 16.0), dt = o.real("dt", 0.005);
  const int steps = static_cast<int>(o.integer("steps", quick ? 20 : 100));
  const int capacity = static_cast<int>(o.integer("capacity", 4l * n));
  const int box = static_cast<int>(o.integer("box", quick ? 2 * n : n / 2 > 32 ? n / 2 : 32));
  o.done("particles: short-range particles in x-slabs (particles and cells per rank); dcuda against host-driven exchanges");
  const int threads = o.threads;
  if (n < 1 || cells < 2 || height < 2 || steps < 1 || capacity < n || box < 1 || !(dt > 0))
    return std::fprintf(stderr, "particles: need particles >= 1, cells >= 2, height >= 2, capacity >= particles\n"), 2;

  cases::check_window_bytes("particles", "inboxes", double(sizeof(Particle)) * 8 * (box + 1.0));
  cases::World world;
  dcuda_host_context_handle ctx = cases::start_dcuda(particles_dcuda, threads, &world);
  const int ranks = world.ranks;
  const Layout L{capacity, box};
  Particle* all;
  int* overflow;
  CASE_CHECK(cudaMalloc(&all, sizeof(Particle) * L.stride() * ranks));
  CASE_CHECK(cudaMalloc(&overflow, sizeof(int) * ranks));
  Args a{all, overflow, L, cells, 1, static_cast<double>(ranks) * cells, height, dt};
  auto reset = [&] {
    fill<<<1024, 256>>>(a, ranks, n);
    CASE_CHECK(cudaDeviceSynchronize());
  };
  std::printf("particles: %d ranks of %d threads, %d particles and %d cells each (box %d x %g), capacity %d, boxes of %d, %d steps\n",
              ranks, threads, n, cells, ranks * cells, height, capacity, box, steps);

  const double dcuda_ms = cases::warm_then_time(
      reset, [&](int count) { return a.steps = count, cases::run_dcuda(ctx, &a, sizeof a); }, steps);
  // The result: the count and particles of ranks [r0, r1); whether one of them overflowed, and
  // their number of particles.
  struct Result {
    std::vector<double> values;
    bool overflowed = false;
    long total = 0;
  };
  auto result = [&](int r0, int r1) {
    std::vector<Particle> h(L.stride() * ranks);
    std::vector<int> of(ranks);
    CASE_CHECK(cudaMemcpy(h.data(), all, sizeof(Particle) * h.size(), cudaMemcpyDeviceToHost));
    CASE_CHECK(cudaMemcpy(of.data(), overflow, sizeof(int) * ranks, cudaMemcpyDeviceToHost));
    Result res;
    for (int r = r0; r < r1; ++r) {
      const Particle* parts = h.data() + r * L.stride() + L.parts();
      const int count = static_cast<int>(parts[0].x);
      res.overflowed = res.overflowed || of[r];
      res.total += count;
      res.values.push_back(count);
      for (int i = 1; i <= count; ++i) res.values.insert(res.values.end(), {parts[i].x, parts[i].y, parts[i].vx, parts[i].vy});
    }
    return res;
  };
  const Result got = result(world.first, world.first + world.here);

  cudaStream_t stream;
  CASE_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const size_t pitch = sizeof(Particle) * L.stride(), box_bytes = sizeof(Particle) * L.slot();
  // Every rank's outbox (kind, side) into its neighbour's inbox (kind, parity, other side).
  auto exchange = [&](int kind, int parity) {
    if (ranks < 2) return;
    CASE_CHECK(cudaMemcpy2DAsync(all + L.stride() + L.inbox(kind, parity, kLeft), pitch, all + L.outbox(kind, kRight), pitch,
                                 box_bytes, ranks - 1, cudaMemcpyDeviceToDevice, stream));
    CASE_CHECK(cudaMemcpy2DAsync(all + L.inbox(kind, parity, kRight), pitch, all + L.stride() + L.outbox(kind, kLeft), pitch,
                                 box_bytes, ranks - 1, cudaMemcpyDeviceToDevice, stream));
  };
  auto baseline = [&](int count) {
    Args b = a;
    b.steps = count;
    halo_kernel<<<ranks, threads, 0, stream>>>(b);
    exchange(kHalo, 0);
    for (int s = 0; s < count; ++s) {
      step_kernel<<<ranks, threads, 0, stream>>>(b, s % 2);
      exchange(kMig, s % 2);
      absorb_kernel<<<ranks, threads, 0, stream>>>(b, s % 2, s + 1 < count);
      if (s + 1 < count) exchange(kHalo, 1 - s % 2);
    }
  };
  const double baseline_ms = cases::warm_then_time(
      reset, [&](int count) { return cases::time_on(stream, [&] { baseline(count); }); }, steps);
  const Result want = result(world.first, world.first + world.here), whole = result(0, ranks);

  // Bitwise (tolerance 0): see the header.
  cases::Report rep("particles", world,
                    "step kernel, cudaMemcpy2DAsync migrant boxes, absorb+halo kernel, cudaMemcpy2DAsync halo boxes", dcuda_ms,
                    baseline_ms, cases::compare(got.values, want.values), 0);
  rep.sizes = {{"threads", threads}, {"particles_per_rank", n}, {"cells_per_rank", cells}, {"height", height},
               {"capacity", capacity}, {"box", box},     {"steps", steps}};
  rep.extra = {{"particles_here_dcuda", static_cast<double>(got.total)}, {"particles_here_baseline", static_cast<double>(want.total)}};
  // The baseline holds the whole world: its particles are all there; so are the dcuda run's where
  // this process is the world.
  const long expected = static_cast<long>(n) * ranks;
  if (got.overflowed || whole.overflowed || whole.total != expected || (world.processes == 1 && got.total != expected)) {
    std::printf("particles: a capacity was exceeded or particles were lost (dcuda: %ld here%s, baseline: %ld of %ld); raise "
                "--capacity / --box\n",
                got.total, got.overflowed ? ", overflowed" : "", whole.total, expected);
    rep.failed = true;
  }
  const int status = rep.finish(o.json);
  cudaStreamDestroy(stream);
  cudaFree(all);
  cudaFree(overflow);
  dcuda_host_finish(ctx);
  return status;
}
