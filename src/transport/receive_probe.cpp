#include "transport/receive_probe.hpp"

#include <cstring>
#include <random>
#include <string>

#include "common/clock.hpp"
#include "common/error.hpp"

namespace outboard::transport {
namespace {

void set_handler(const Ucx& ucx, ucp_worker_h worker, ucp_am_recv_callback_t cb, void* arg) {
  ucp_am_handler_param_t hp{};
  hp.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB | UCP_AM_HANDLER_PARAM_FIELD_ARG |
                  UCP_AM_HANDLER_PARAM_FIELD_FLAGS;
  hp.id = ReceiveProbe::kAmId;
  hp.cb = cb;
  hp.arg = arg;
  hp.flags = UCP_AM_FLAG_WHOLE_MSG;
  if (ucs_status_t s = ucx.ucp_worker_set_am_recv_handler(worker, &hp); s != UCS_OK)
    throw Error(std::string("UCX active-message handler for the receive probe: ") + ucx.ucs_status_string(s));
}

ucs_status_t ignore(void*, const void*, size_t, void*, size_t, const ucp_am_recv_param_t*) { return UCS_OK; }

}  // namespace

ReceiveProbe::ReceiveProbe(const Ucx& ucx, ucp_context_h context, ucp_worker_h watched)
    : ucx_(ucx), context_(context), watched_(watched) {
  std::random_device random;
  token_ = (uint64_t(random()) << 32) ^ random();
  set_handler(ucx_, watched_, on_arrival, this);
}

ReceiveProbe::~ReceiveProbe() {
  try {
    set_handler(ucx_, watched_, ignore, nullptr);  // a probe still on its way finds no one
  } catch (...) {
  }
  if (!prober_) return;
  // A probe that never arrived may still be queued on an endpoint whose wire-up never finished;
  // ucp_worker_destroy aborts the process on such a send (transport.hpp, ~Worker). The probing
  // worker is then left as it is: its process is about to start again.
  if (request_ || sent_ != arrived_) return;
  ucp_request_param_t p{};
  p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  p.flags = UCP_EP_CLOSE_FLAG_FORCE;
  ucs_status_ptr_t r = ucx_.ucp_ep_close_nbx(ep_, &p);
  if (UCS_PTR_IS_PTR(r)) {
    const uint64_t give_up = now_ns() + 1'000'000'000;
    while (ucx_.ucp_request_check_status(r) == UCS_INPROGRESS && now_ns() < give_up) {
      ucx_.ucp_worker_progress(prober_);
      ucx_.ucp_worker_progress(watched_);
    }
    if (ucx_.ucp_request_check_status(r) == UCS_INPROGRESS) return;  // left, as above
    ucx_.ucp_request_free(r);
  }
  ucx_.ucp_worker_destroy(prober_);
}

ucs_status_t ReceiveProbe::on_arrival(void* arg, const void* header, size_t header_len, void*, size_t,
                                      const ucp_am_recv_param_t*) {
  auto* self = static_cast<ReceiveProbe*>(arg);
  uint64_t m[2];
  if (header_len != sizeof m) return UCS_OK;  // not ours: a peer may name any id
  std::memcpy(m, header, sizeof m);
  if (m[0] != self->token_ || m[1] > self->sent_ || m[1] <= self->arrived_) return UCS_OK;
  self->arrived_ = m[1];
  self->arrived_ns_ = now_ns();
  return UCS_OK;
}

void ReceiveProbe::start_prober() {
  ucp_worker_params_t wp{};
  wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  wp.thread_mode = UCS_THREAD_MODE_SERIALIZED;
  ucs_status_t s = ucx_.ucp_worker_create(context_, &wp, &prober_);
  if (s != UCS_OK) {
    prober_ = nullptr;
    throw Error(std::string("UCX worker for the receive probe: ") + ucx_.ucs_status_string(s));
  }
  ucp_address_t* address = nullptr;
  size_t length = 0;
  s = ucx_.ucp_worker_get_address(watched_, &address, &length);
  if (s == UCS_OK) {
    ucp_ep_params_t ep{};
    ep.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
    ep.address = address;
    ep.err_mode = UCP_ERR_HANDLING_MODE_NONE;  // the watched worker is this process's
    s = ucx_.ucp_ep_create(prober_, &ep, &ep_);
    ucx_.ucp_worker_release_address(watched_, address);
  }
  if (s != UCS_OK) {
    ucx_.ucp_worker_destroy(prober_);
    prober_ = nullptr;
    ep_ = nullptr;
    throw Error(std::string("UCX endpoint for the receive probe: ") + ucx_.ucs_status_string(s));
  }
}

void ReceiveProbe::send(uint64_t now) {
  if (!prober_) start_prober();
  message_[0] = token_;
  message_[1] = sent_ + 1;
  ucp_request_param_t p{};
  p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  p.flags = UCP_AM_SEND_FLAG_EAGER;
  ucs_status_ptr_t r = ucx_.ucp_am_send_nbx(ep_, kAmId, message_, sizeof message_, nullptr, 0, &p);
  if (UCS_PTR_IS_ERR(r)) return;  // not out: tried again at the next step
  if (r) request_ = r;
  ++sent_;
  sent_ns_ = now;
  rounds_at_send_ = rounds_;
}

uint64_t ReceiveProbe::step(uint64_t now, uint64_t interval_ns, bool send_more) {
  if (prober_)
    for (int i = 0; i < 16 && ucx_.ucp_worker_progress(prober_); ++i) {
    }
  if (request_ && ucx_.ucp_request_check_status(request_) != UCS_INPROGRESS) {
    ucx_.ucp_request_free(request_);
    request_ = nullptr;
  }
  if (sent_ != arrived_) return rounds_ - rounds_at_send_ >= kMinRounds ? now - sent_ns_ : 0;
  if (send_more && !request_ && now - arrived_ns_ >= interval_ns) send(now);
  return 0;
}

}  // namespace outboard::transport
