/* nfq_delay: holds every packet of a netfilter queue for a fixed time, and drops a share of them
 * at random, for tests on a slow, lossy network where the kernel has no netem qdisc.
 *
 *   nfq_delay QUEUE DELAY_MS LOSS_PERCENT [SEED]
 *
 * Packets reach it through an nftables rule `queue num QUEUE` (netns_faults.sh puts one in the
 * forward chain of its router namespace, so both directions of every connection through the
 * router are delayed). Each packet is taken as it arrives: with probability LOSS_PERCENT/100 it
 * is dropped at once (NF_DROP), otherwise it is accepted (NF_ACCEPT, the kernel sends it on) once
 * DELAY_MS have passed. The kernel cuts GSO super-packets into wire-sized segments before they
 * are queued (the queue is not asked to take them whole), so delay and loss act on packets as a
 * NIC would send them. The delay is the same for all, so packets leave in the order they came.
 * Prints "ready" once the queue is bound; on SIGTERM or SIGINT prints what it did and exits.
 * A queue without a listener drops its packets: a test whose nfq_delay died sees loss, not a
 * fast network. */
#define _GNU_SOURCE /* ppoll */
#include <arpa/inet.h>
#include <errno.h>
#include <libnetfilter_queue/libnetfilter_queue.h>
#include <linux/netfilter.h> /* NF_ACCEPT, NF_DROP */
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#define QUEUE_PACKETS 65536 /* packets held at once, at most (the kernel queue's length too) */

static struct {
  uint32_t id[QUEUE_PACKETS];
  uint64_t due_ns[QUEUE_PACKETS];
  size_t head, count;
} held;
static uint64_t delay_ns, delayed, dropped, overflowed;
static double loss;
static uint64_t rng;
static volatile sig_atomic_t stopping;

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static double uniform(void) { /* xorshift64*, in [0, 1) */
  rng ^= rng >> 12, rng ^= rng << 25, rng ^= rng >> 27;
  return (double)((rng * 2685821657736338717ull) >> 11) / 9007199254740992.0;
}

static int on_packet(struct nfq_q_handle* qh, struct nfgenmsg* msg, struct nfq_data* nfa, void* data) {
  (void)msg, (void)data;
  struct nfqnl_msg_packet_hdr* ph = nfq_get_msg_packet_hdr(nfa);
  if (!ph) return 0;
  uint32_t id = ntohl(ph->packet_id);
  if (loss > 0 && uniform() < loss) {
    ++dropped;
    return nfq_set_verdict(qh, id, NF_DROP, 0, NULL);
  }
  if (held.count == QUEUE_PACKETS) { /* cannot happen with the kernel queue as long: dropped */
    ++overflowed;
    return nfq_set_verdict(qh, id, NF_DROP, 0, NULL);
  }
  size_t at = (held.head + held.count++) % QUEUE_PACKETS;
  held.id[at] = id;
  held.due_ns[at] = now_ns() + delay_ns;
  return 0;
}

static void stop(int sig) {
  (void)sig;
  stopping = 1;
}

int main(int argc, char** argv) {
  if (argc < 4 || argc > 5) {
    fprintf(stderr, "usage: nfq_delay QUEUE DELAY_MS LOSS_PERCENT [SEED]\n");
    return 2;
  }
  const int queue = atoi(argv[1]);
  delay_ns = (uint64_t)(atof(argv[2]) * 1e6);
  loss = atof(argv[3]) / 100;
  rng = argc > 4 ? strtoull(argv[4], NULL, 10) : 1;
  if (rng == 0) rng = 1;

  struct nfq_handle* h = nfq_open();
  if (!h) return perror("nfq_open"), 1;
  nfq_unbind_pf(h, AF_INET); /* older kernels want this; newer ones ignore it */
  if (nfq_bind_pf(h, AF_INET) < 0) return perror("nfq_bind_pf"), 1;
  struct nfq_q_handle* qh = nfq_create_queue(h, (uint16_t)queue, on_packet, NULL);
  if (!qh) return perror("nfq_create_queue"), 1;
  /* Metadata only: the verdict needs the packet's id, not its bytes. */
  if (nfq_set_mode(qh, NFQNL_COPY_META, 0) < 0) return perror("nfq_set_mode"), 1;
  if (nfq_set_queue_maxlen(qh, QUEUE_PACKETS) < 0) return perror("nfq_set_queue_maxlen"), 1;
  const int fd = nfq_fd(h);
  int on = 1, rcvbuf = 16 << 20;
  setsockopt(fd, SOL_NETLINK, NETLINK_NO_ENOBUFS, &on, sizeof on);
  setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof rcvbuf);

  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = stop;
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  printf("ready\n");
  fflush(stdout);

  static char buf[1 << 16];
  while (!stopping) {
    /* Release what is due, then sleep until the next is due or a packet comes. */
    uint64_t now = now_ns();
    while (held.count && held.due_ns[held.head] <= now) {
      nfq_set_verdict(qh, held.id[held.head], NF_ACCEPT, 0, NULL);
      held.head = (held.head + 1) % QUEUE_PACKETS, --held.count, ++delayed;
    }
    struct timespec wait = {1, 0};
    if (held.count) {
      uint64_t left = held.due_ns[held.head] - now;
      wait.tv_sec = (time_t)(left / 1000000000u), wait.tv_nsec = (long)(left % 1000000000u);
    }
    struct pollfd p = {fd, POLLIN, 0};
    int r = ppoll(&p, 1, &wait, NULL);
    if (r < 0 && errno != EINTR) return perror("ppoll"), 1;
    if (r > 0) {
      for (;;) { /* everything waiting now */
        ssize_t n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
        if (n <= 0) break;
        nfq_handle_packet(h, buf, (int)n);
      }
    }
  }
  /* What is still held goes on, late rather than lost. */
  while (held.count) {
    nfq_set_verdict(qh, held.id[held.head], NF_ACCEPT, 0, NULL);
    held.head = (held.head + 1) % QUEUE_PACKETS, --held.count, ++delayed;
  }
  fprintf(stderr, "nfq_delay: %llu packets delayed %.0f ms, %llu dropped at random, %llu dropped for want of room\n",
          (unsigned long long)delayed, delay_ns / 1e6, (unsigned long long)dropped, (unsigned long long)overflowed);
  nfq_destroy_queue(qh);
  nfq_close(h);
  return 0;
}
