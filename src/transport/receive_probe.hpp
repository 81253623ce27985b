// Whether a worker still receives (private to src/transport; Worker::receiving is its interface).
//
// UCX 1.13's shared-memory transport (uct mm: posix, sysv) gives each worker one receive queue
// that every peer on the host writes into. A sender takes a slot by moving the queue's head
// (compare-and-swap), fills it, and only then marks it written (mm_ep.c,
// uct_mm_ep_am_common_send). A peer killed between the two leaves its slot unmarked for good: the
// worker reads its queue in order, so it never reads another message from any local peer, and no
// new connection gets past its handshake (issue 33: the churn soak's server stopped serving after
// about 750 s of clients killed at random points; three streaming clients killed at once do it
// within a few tries). UCX has no way to skip the slot; only a new worker (a new process) reads
// again.
//
// The probe finds it out from outside: a second UCX worker of this process, on the same context,
// sends the watched worker a small active message (its own id, a token only this process knows)
// over the same transports a local peer uses, one at a time, and sees whether it arrives.
#pragma once
#include <cstdint>

#include "transport/ucx.hpp"

namespace outboard::transport {

class ReceiveProbe {
 public:
  // The active-message id probes arrive on (the worker's highest; sinks use 1 .. kMaxSinks).
  static constexpr unsigned kAmId = (1u << 16) - 1;

  // Registers the arrival handler on `watched`. The probing worker is made at the first send.
  ReceiveProbe(const Ucx& ucx, ucp_context_h context, ucp_worker_h watched);
  ~ReceiveProbe();
  ReceiveProbe(const ReceiveProbe&) = delete;
  ReceiveProbe& operator=(const ReceiveProbe&) = delete;

  // Called by the watched worker's progress(): counts the rounds a probe has had to arrive.
  void count_round() { ++rounds_; }

  // One step, from the watched worker's thread. Sends a probe when none is out and the last
  // arrived at least `interval_ns` ago (and `send_more`); returns how long the one out has waited
  // (ns) once it has had at least kMinRounds progress rounds of the watched worker to arrive,
  // else 0. Throws Error where the probing worker cannot be made.
  uint64_t step(uint64_t now_ns, uint64_t interval_ns, bool send_more);

  uint64_t sent() const { return sent_; }
  uint64_t arrived() const { return arrived_; }

  // A probe being out for so many rounds says the watched worker was progressed meanwhile (not
  // a thread held up elsewhere).
  static constexpr uint64_t kMinRounds = 10;

 private:
  static ucs_status_t on_arrival(void* arg, const void* header, size_t header_len, void* data, size_t len,
                                 const ucp_am_recv_param_t* param);
  void start_prober();
  void send(uint64_t now_ns);

  const Ucx& ucx_;
  ucp_context_h context_;
  ucp_worker_h watched_;
  ucp_worker_h prober_ = nullptr;
  ucp_ep_h ep_ = nullptr;
  void* request_ = nullptr;  // the send UCX has not finished
  uint64_t token_ = 0;
  uint64_t message_[2] = {0, 0};  // token, number: what is out (must outlive its send)
  uint64_t sent_ = 0, arrived_ = 0;
  uint64_t sent_ns_ = 0, arrived_ns_ = 0, rounds_ = 0, rounds_at_send_ = 0;
};

}  // namespace outboard::transport
