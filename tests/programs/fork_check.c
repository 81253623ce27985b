/*
 * fork_check -- BLAS calls on both sides of fork(), self-checked.
 *
 * A plain client program linked against the system BLAS (dgemm_ only). Every
 * dgemm_ multiplies integer-valued matrices, so the product is exact and is
 * compared with naive loops for equality.
 *
 *   1. after calls: the parent makes calls, then forks; the child makes calls
 *      and forks a grandchild, which makes calls too; the parent goes on
 *      calling while they run.
 *   2. mid call: a second thread of the parent calls dgemm_ in a loop; the
 *      main thread forks --forks times while that thread is inside a call; each
 *      child makes calls (its only thread is the one that forked); the thread
 *      and the main thread of the parent go on calling and checking.
 *
 * Every process prints how long its first dgemm_ took ("first call"), and a
 * child's verdict comes back as its exit status.
 *
 * Usage: fork_check [--size N] [--forks F] [--calls C]
 *   --size N   matrix order (default 300)
 *   --forks F  forks in scenario 2 (default 4)
 *   --calls C  calls per process and phase (default 3)
 * Prints one line per failing check and finally
 *   fork_check: N passed, M failed
 * Exit status 0 only if every check passed.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

void dgemm_(const char *, const char *, const int *, const int *, const int *, const double *, const double *,
            const int *, const double *, const int *, const double *, double *, const int *, size_t, size_t);

static int n = 300, forks = 4, calls = 3;
static atomic_long passed, failed;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

static double *alloc(void) {
  double *p = malloc(sizeof(double) * (size_t)n * (size_t)n);
  if (!p) {
    fprintf(stderr, "fork_check: out of memory\n");
    exit(2);
  }
  return p;
}

/* One checked call C = A*B; `seed` makes each call's matrices its own. */
static int checked_dgemm(const char *who, int seed) {
  double *a = alloc(), *b = alloc(), *c = alloc();
  for (int j = 0; j < n; j++)
    for (int i = 0; i < n; i++) {
      a[i + (size_t)j * n] = (double)((i * 3 + j * 5 + seed) % 11 - 5);
      b[i + (size_t)j * n] = (double)((i * 7 + j * 2 + 3 * seed) % 9 - 4);
      c[i + (size_t)j * n] = 1e300; /* beta = 0: must be overwritten */
    }
  const double one = 1, zero = 0;
  dgemm_("N", "N", &n, &n, &n, &one, a, &n, b, &n, &zero, c, &n, 1, 1);
  int bad = 0;
  for (int j = 0; j < n && !bad; j++)
    for (int i = 0; i < n; i++) {
      double s = 0;
      for (int l = 0; l < n; l++) s += a[i + (size_t)l * n] * b[l + (size_t)j * n];
      if (c[i + (size_t)j * n] != s) {
        printf("FAIL: %s (pid %d): dgemm_ seed %d: C(%d,%d) = %g, expected %g\n", who, (int)getpid(), seed, i, j,
               c[i + (size_t)j * n], s);
        bad = 1;
        break;
      }
    }
  free(a), free(b), free(c);
  if (bad) atomic_fetch_add(&failed, 1);
  else atomic_fetch_add(&passed, 1);
  return !bad;
}

/* `count` checked calls; the first one timed. Returns the failures. */
static int calls_of(const char *who, int seed, int count) {
  int bad = 0;
  double t = now();
  bad += !checked_dgemm(who, seed);
  printf("fork_check: first call of %s (pid %d) took %.1f ms\n", who, (int)getpid(), (now() - t) * 1e3);
  for (int i = 1; i < count; i++) bad += !checked_dgemm(who, seed + i);
  fflush(stdout);
  return bad;
}

static void check_child(const char *who, pid_t pid) {
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    printf("FAIL: %s (pid %d) ended with status %#x\n", who, (int)pid, status);
    atomic_fetch_add(&failed, 1);
  } else {
    atomic_fetch_add(&passed, 1);
  }
}

static pid_t fork_or_die(void) {
  fflush(stdout);
  pid_t p = fork();
  if (p < 0) {
    perror("fork_check: fork");
    exit(2);
  }
  return p;
}

/* A child's exit: only its own checks count (its copies of the counters). */
static void child_exit(int bad) {
  fflush(stdout);
  exit(bad || atomic_load(&failed) ? 1 : 0);
}

static void after_calls(void) {
  calls_of("parent", 1, calls);
  pid_t child = fork_or_die();
  if (child == 0) {
    atomic_store(&passed, 0), atomic_store(&failed, 0);
    int bad = calls_of("child", 20, calls);
    pid_t grandchild = fork_or_die();
    if (grandchild == 0) {
      atomic_store(&passed, 0), atomic_store(&failed, 0);
      child_exit(calls_of("grandchild", 40, calls));
    }
    bad += checked_dgemm("child after forking", 60) ? 0 : 1;
    check_child("grandchild", grandchild);
    child_exit(bad);
  }
  for (int i = 0; i < calls; i++) checked_dgemm("parent while its child runs", 80 + i);
  check_child("child", child);
}

static atomic_int in_call, stop;
static atomic_long thread_calls;

static void *caller(void *arg) {
  (void)arg;
  for (int i = 0; !atomic_load(&stop); i++) {
    atomic_store(&in_call, 1);
    checked_dgemm("parent's second thread", 100 + i % 50);
    atomic_store(&in_call, 0);
    atomic_fetch_add(&thread_calls, 1);
  }
  return NULL;
}

static void mid_call(void) {
  pthread_t t;
  if (pthread_create(&t, NULL, caller, NULL) != 0) {
    fprintf(stderr, "fork_check: pthread_create failed\n");
    exit(2);
  }
  int inside = 0;
  pid_t children[64];
  for (int f = 0; f < forks; f++) {
    const long before = atomic_load(&thread_calls);
    while (!atomic_load(&in_call) || atomic_load(&thread_calls) == before) sched_yield();
    pid_t p = fork_or_die();
    if (p == 0) {
      atomic_store(&passed, 0), atomic_store(&failed, 0);
      char who[64];
      snprintf(who, sizeof who, "child %d forked mid-call", f);
      child_exit(calls_of(who, 200 + 10 * f, calls));
    }
    inside += atomic_load(&in_call); /* still in that call after fork() returned: forked inside it */
    children[f] = p;
    checked_dgemm("parent between forks", 300 + f);
  }
  for (int f = 0; f < forks; f++) check_child("child forked mid-call", children[f]);
  atomic_store(&stop, 1);
  pthread_join(t, NULL);
  printf("fork_check: %d of %d forks happened while the second thread was inside dgemm_; it made %ld calls\n", inside,
         forks, atomic_load(&thread_calls));
}

int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--size") && i + 1 < argc) n = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--forks") && i + 1 < argc) forks = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--calls") && i + 1 < argc) calls = atoi(argv[++i]);
    else {
      fprintf(stderr, "usage: fork_check [--size N] [--forks F] [--calls C]\n");
      return 2;
    }
  }
  if (n < 1 || forks < 0 || forks > 64 || calls < 1) {
    fprintf(stderr, "fork_check: bad arguments\n");
    return 2;
  }
  setvbuf(stdout, NULL, _IOLBF, 0);
  after_calls();
  mid_call();
  printf("fork_check: %ld passed, %ld failed\n", atomic_load(&passed), atomic_load(&failed));
  return atomic_load(&failed) ? 1 : 0;
}
