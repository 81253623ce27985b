// UCX implementation of CopyLanes: one ucp worker per lane in one shared context; each lane's
// thread alone touches its worker, endpoints and unpacked keys, and takes jobs from a queue.
#include "transport/copy_lanes.hpp"

#include <poll.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <sys/uio.h>
#include <unistd.h>
#include <ucp/api/ucp.h>

#include <algorithm>
#include <atomic>
#include <deque>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "common/error.hpp"
#include "transport/ucx.hpp"

namespace outboard::transport {
namespace {

void check(const Ucx& ucx, ucs_status_t s, const char* what) {
  if (s != UCS_OK) throw Error(std::string(what) + ": " + ucx.ucs_status_string(s));
}

}  // namespace

struct CopyLanes::Impl {
  struct Job {
    enum class Kind { copy, drop_key, detach } kind = Kind::copy;
    Copy c;
    std::function<void(bool)> done;
    std::shared_ptr<const std::vector<std::byte>> blob;  // copy: the remote's address / key, as known when queued
    std::shared_ptr<const std::vector<std::byte>> key_blob;
    int pid = 0;  // copy: the remote's verified process, for CMA
  };
  struct Lane;
  // One operation in flight, completed from the lane's progress.
  struct Op {
    Lane* lane;
    std::function<void(bool)> done;
  };
  struct Lane {
    const Ucx* ucx = nullptr;  // the instance that made the context (ucx.hpp)
    ucp_worker_h worker = nullptr;
    int wake_fd = -1;
    std::thread thread;
    std::mutex mu;
    std::deque<Job> jobs;  // guarded by mu
    // Owned by the lane's thread.
    std::unordered_map<Remote, ucp_ep_h> eps;
    std::unordered_map<Key, ucp_rkey_h> rkeys;
    std::unordered_map<Key, Remote> key_remote;
    size_t in_flight = 0;
    std::vector<void*> closing;
  };

  const Ucx* ucx = nullptr;
  pid_t owner = 0;  // the process that made the context and started the threads
  ucp_context_h context = nullptr;
  std::vector<std::unique_ptr<Lane>> lanes;
  std::atomic<bool> stopping{false};
  std::mutex mu;  // guards the tables below
  uint64_t next_id = 1;
  struct RemoteInfo {
    std::shared_ptr<const std::vector<std::byte>> address;
    int pid = 0;
  };
  std::unordered_map<Remote, RemoteInfo> remotes;
  std::unordered_map<Key, std::pair<Remote, std::shared_ptr<const std::vector<std::byte>>>> keys;

  static void on_done(void* request, ucs_status_t status, void* user) {
    auto* op = static_cast<Op*>(user);
    if (request) op->lane->ucx->ucp_request_free(request);
    finish(op, status == UCS_OK);
  }
  static void finish(Op* op, bool ok) {
    --op->lane->in_flight;
    try {
      op->done(ok);
    } catch (...) {
    }
    delete op;
  }

  void push(Lane& l, Job j) {
    {
      std::lock_guard lk(l.mu);
      l.jobs.push_back(std::move(j));
    }
    uint64_t one = 1;
    [[maybe_unused]] auto n = ::write(l.wake_fd, &one, sizeof one);
  }

  // An endpoint to the remote on this lane, created on first use.
  static ucp_ep_h endpoint(Lane& l, Remote r, const std::vector<std::byte>& address) {
    if (auto it = l.eps.find(r); it != l.eps.end()) return it->second;
    ucp_ep_params_t p{};
    p.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
    p.address = reinterpret_cast<const ucp_address_t*>(address.data());
    // Peer-failure mode: without it a copy in flight to a peer that dies (or drops off the
    // network) never completes, not even when the endpoint is closed with force: its callback
    // (holding the call's staging memory) never ran and the lane's thread spun on it for good.
    // With it UCX fails those copies. (It leaves CMA out of the endpoint, which costs nothing:
    // a verified local peer is copied with process_vm_* above, never through an endpoint.)
    p.err_mode = UCP_ERR_HANDLING_MODE_PEER;
    ucp_ep_h ep = nullptr;
    if (l.ucx->ucp_ep_create(l.worker, &p, &ep) != UCS_OK) return nullptr;
    l.eps[r] = ep;
    return ep;
  }

  static void close_ep(Lane& l, ucp_ep_h ep) {
    ucp_request_param_t p{};
    p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    p.flags = UCP_EP_CLOSE_FLAG_FORCE;
    ucs_status_ptr_t r = l.ucx->ucp_ep_close_nbx(ep, &p);
    if (r && !UCS_PTR_IS_ERR(r)) l.closing.push_back(r);
  }

  // A CMA copy, whole or failed (process_vm_* may move less than asked: the rest is retried).
  static bool cma_copy(const Job& j) {
    uint64_t done = 0;
    while (done < j.c.bytes) {
      iovec local{j.c.local + done, j.c.bytes - done};
      iovec remote{reinterpret_cast<void*>(j.c.remote_address + done), j.c.bytes - done};
      const ssize_t n = j.c.put ? process_vm_writev(j.pid, &local, 1, &remote, 1, 0)
                                : process_vm_readv(j.pid, &local, 1, &remote, 1, 0);
      if (n <= 0) return false;
      done += static_cast<uint64_t>(n);
    }
    return true;
  }

  static void run_copy(Lane& l, Job& j) {
    auto* op = new Op{&l, std::move(j.done)};
    ++l.in_flight;
    if (j.pid && j.key_blob) return finish(op, cma_copy(j));
    ucp_ep_h ep = j.blob ? endpoint(l, j.c.remote, *j.blob) : nullptr;
    if (!ep || !j.key_blob) return finish(op, false);
    ucp_rkey_h rkey = nullptr;
    if (auto it = l.rkeys.find(j.c.key); it != l.rkeys.end()) {
      rkey = it->second;
    } else {
      if (l.ucx->ucp_ep_rkey_unpack(ep, j.key_blob->data(), &rkey) != UCS_OK) return finish(op, false);
      l.rkeys[j.c.key] = rkey;
      l.key_remote[j.c.key] = j.c.remote;
    }
    ucp_request_param_t p{};
    p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    p.cb.send = on_done;
    p.user_data = op;
    ucs_status_ptr_t r;
    if (j.c.put) {
      // A put's completion frees only the local buffer; the flush behind it completes once the
      // data is in the peer's memory.
      ucp_request_param_t q{};
      ucs_status_ptr_t w = l.ucx->ucp_put_nbx(ep, j.c.local, j.c.bytes, j.c.remote_address, rkey, &q);
      if (UCS_PTR_IS_ERR(w)) return finish(op, false);
      if (w) l.ucx->ucp_request_free(w);  // the flush below reports its outcome
      r = l.ucx->ucp_ep_flush_nbx(ep, &p);
    } else {
      r = l.ucx->ucp_get_nbx(ep, j.c.local, j.c.bytes, j.c.remote_address, rkey, &p);
    }
    if (r == nullptr) return finish(op, true);
    if (UCS_PTR_IS_ERR(r)) return finish(op, false);
  }

  static void drop_key_on(Lane& l, Key k) {
    if (auto it = l.rkeys.find(k); it != l.rkeys.end()) {
      l.ucx->ucp_rkey_destroy(it->second);
      l.rkeys.erase(it);
    }
    l.key_remote.erase(k);
  }

  static void detach_on(Lane& l, Remote r) {
    for (auto it = l.key_remote.begin(); it != l.key_remote.end();) {
      auto next = std::next(it);
      if (it->second == r) drop_key_on(l, it->first);
      it = next;
    }
    if (auto it = l.eps.find(r); it != l.eps.end()) {
      close_ep(l, it->second);
      l.eps.erase(it);
    }
  }

  // Rounds in a row in which a lane did nothing but wait on closes (or see UCX report progress
  // with nothing under way); past kFruitlessRoundsBeforeSleep it looks again only every
  // kBusySleepMs rather than spin: a close of an endpoint to a peer that died may never end with
  // UCX 1.13 (Worker::wait says why; issue 33). Copies in flight are kept moving as before: they
  // end, or fail with their peer.
  static constexpr unsigned kFruitlessRoundsBeforeSleep = 1000;
  static constexpr int kBusySleepMs = 5;

  void run_lane(Lane& l) {
    std::deque<Job> batch;
    unsigned fruitless_rounds = 0;
    for (;;) {
      {
        std::lock_guard lk(l.mu);
        batch.swap(l.jobs);
      }
      for (Job& j : batch) {
        switch (j.kind) {
          case Job::Kind::copy: run_copy(l, j); break;
          case Job::Kind::drop_key: drop_key_on(l, j.c.key); break;
          case Job::Kind::detach: detach_on(l, j.c.remote); break;
        }
      }
      batch.clear();
      bool any = false;  // bounded: a UCX that always reports progress cannot hold the loop here
      for (int round = 0; round < 256 && l.ucx->ucp_worker_progress(l.worker); ++round) any = true;
      for (size_t i = 0; i < l.closing.size();) {
        if (l.ucx->ucp_request_check_status(l.closing[i]) != UCS_INPROGRESS) {
          l.ucx->ucp_request_free(l.closing[i]);
          l.closing[i] = l.closing.back();
          l.closing.pop_back();
        } else {
          ++i;
        }
      }
      bool queued;
      {
        std::lock_guard lk(l.mu);
        queued = !l.jobs.empty();
      }
      // UCX's progress is work while copies or closes are under way; with none, only for a while.
      const bool under_way = l.in_flight > 0 || !l.closing.empty();
      const bool fruitless = !queued && l.in_flight == 0 && (any ? !under_way : !l.closing.empty());
      fruitless_rounds = fruitless ? std::min(fruitless_rounds + 1, kFruitlessRoundsBeforeSleep) : 0;
      const bool stalled = fruitless_rounds >= kFruitlessRoundsBeforeSleep;
      if (queued || (any && !stalled)) continue;
      if (stopping.load() && !under_way) return;
      if (under_way && !stalled) {  // copies under way: keep them moving
        sched_yield();
        continue;
      }
      // Idle: sleep until a job is queued, and look at UCX every 100 ms (its messages to a lane are
      // the endpoints' own: wire-up, keepalive). The lanes' context has no wake-up feature, so UCX
      // has no fd to wait on here (asking for it logged an error at every server start).
      pollfd fd = {l.wake_fd, POLLIN, 0};
      if (::poll(&fd, 1, stalled ? kBusySleepMs : 100) > 0 && (fd.revents & POLLIN)) {
        uint64_t v;
        [[maybe_unused]] auto n = ::read(l.wake_fd, &v, sizeof v);
      }
    }
  }
};

CopyLanes::CopyLanes(unsigned count) : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  const Ucx& ucx = ucx_for_new_context();
  m.ucx = &ucx;
  m.owner = getpid();
  ucp_config_t* config = nullptr;
  check(ucx, ucx.ucp_config_read(nullptr, nullptr, &config), "UCX configuration");
  ucp_params_t params{};
  params.field_mask = UCP_PARAM_FIELD_FEATURES;
  // AM too: UCX selects its bandwidth lanes (RDMA reads and writes) only for contexts with it.
  params.features = UCP_FEATURE_RMA | UCP_FEATURE_AM;
  ucs_status_t s = ucx.init(&params, config, &m.context);
  ucx.ucp_config_release(config);
  check(ucx, s, "UCX initialisation (copy lanes)");
  try {
    for (unsigned i = 0; i < std::max(1u, count); ++i) {
      auto l = std::make_unique<Impl::Lane>();
      ucp_worker_params_t wp{};
      wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
      wp.thread_mode = UCS_THREAD_MODE_SINGLE;
      l->ucx = &ucx;
      check(ucx, ucx.ucp_worker_create(m.context, &wp, &l->worker), "UCX worker creation (copy lane)");
      l->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
      if (l->wake_fd < 0) {
        m.ucx->ucp_worker_destroy(l->worker);
        throw Error("eventfd for a copy lane failed");
      }
      m.lanes.push_back(std::move(l));
    }
  } catch (...) {
    for (auto& l : m.lanes) {
      m.ucx->ucp_worker_destroy(l->worker);
      ::close(l->wake_fd);
    }
    ucx.ucp_cleanup(m.context);
    throw;
  }
  for (auto& l : m.lanes) l->thread = std::thread([&m, lane = l.get()] { m.run_lane(*lane); });
}

void CopyLanes::stop() {
  Impl& m = *impl_;
  {
    std::lock_guard lk(m.mu);
    if (m.stopping.load()) return;
    for (auto& [r, _] : m.remotes)
      for (auto& l : m.lanes) m.push(*l, Impl::Job{Impl::Job::Kind::detach, Copy{false, r}, nullptr, nullptr, nullptr});
    m.stopping.store(true);  // under mu: copy() queues nothing after this
  }
  for (auto& l : m.lanes) {
    uint64_t one = 1;
    [[maybe_unused]] auto n = ::write(l->wake_fd, &one, sizeof one);
    l->thread.join();
  }
  // A copy queued as its lane's thread was leaving: failed, so that its owner hears of it.
  for (auto& l : m.lanes) {
    std::deque<Impl::Job> left;
    {
      std::lock_guard lk(l->mu);
      left.swap(l->jobs);
    }
    for (Impl::Job& j : left)
      if (j.kind == Impl::Job::Kind::copy && j.done) j.done(false);
  }
}

CopyLanes::~CopyLanes() {
  Impl& m = *impl_;
  if (!made_here(m.owner)) {  // inherited through fork(): its threads are not here (ucx.hpp)
    (void)impl_.release();
    return;
  }
  stop();
  for (auto& l : m.lanes) {
    for (auto& [_, rkey] : l->rkeys) m.ucx->ucp_rkey_destroy(rkey);
    for (auto& [_, ep] : l->eps) Impl::close_ep(*l, ep);
    for (void* r : l->closing) {
      while (m.ucx->ucp_request_check_status(r) == UCS_INPROGRESS) m.ucx->ucp_worker_progress(l->worker);
      m.ucx->ucp_request_free(r);
    }
    m.ucx->ucp_worker_destroy(l->worker);
    ::close(l->wake_fd);
  }
  m.ucx->ucp_cleanup(m.context);
}

unsigned CopyLanes::lanes() const { return static_cast<unsigned>(impl_->lanes.size()); }

CopyLanes::Remote CopyLanes::attach(std::vector<std::byte> worker_address, int pid) {
  std::lock_guard lk(impl_->mu);
  Remote r = impl_->next_id++;
  impl_->remotes[r] = {std::make_shared<const std::vector<std::byte>>(std::move(worker_address)), pid};
  return r;
}

bool CopyLanes::verify_process(int pid, uint64_t address, std::span<const std::byte> expected) {
  if (pid <= 0 || expected.empty()) return false;
  std::vector<std::byte> got(expected.size());
  iovec local{got.data(), got.size()}, remote{reinterpret_cast<void*>(address), got.size()};
  return process_vm_readv(pid, &local, 1, &remote, 1, 0) == static_cast<ssize_t>(got.size()) &&
         std::equal(got.begin(), got.end(), expected.begin());
}

void CopyLanes::detach(Remote remote) {
  Impl& m = *impl_;
  std::lock_guard lk(m.mu);
  if (!m.remotes.erase(remote)) return;
  for (auto it = m.keys.begin(); it != m.keys.end();) it = it->second.first == remote ? m.keys.erase(it) : std::next(it);
  for (auto& l : m.lanes) m.push(*l, Impl::Job{Impl::Job::Kind::detach, Copy{false, remote}, nullptr, nullptr, nullptr});
}

CopyLanes::Key CopyLanes::add_key(Remote remote, std::vector<std::byte> packed_key) {
  std::lock_guard lk(impl_->mu);
  if (!impl_->remotes.count(remote)) throw Error("copy lanes: unknown remote");
  Key k = impl_->next_id++;
  impl_->keys[k] = {remote, std::make_shared<const std::vector<std::byte>>(std::move(packed_key))};
  return k;
}

void CopyLanes::drop_key(Key key) {
  Impl& m = *impl_;
  std::lock_guard lk(m.mu);
  if (!m.keys.erase(key)) return;
  Copy c;
  c.key = key;
  for (auto& l : m.lanes) m.push(*l, Impl::Job{Impl::Job::Kind::drop_key, c, nullptr, nullptr, nullptr});
}

void CopyLanes::copy(unsigned lane, const Copy& c, std::function<void(bool ok)> done) {
  Impl& m = *impl_;
  Impl::Job j{Impl::Job::Kind::copy, c, std::move(done), nullptr, nullptr};
  std::unique_lock lk(m.mu);
  if (m.stopping.load()) {
    lk.unlock();
    if (j.done) j.done(false);
    return;
  }
  if (auto it = m.remotes.find(c.remote); it != m.remotes.end()) j.blob = it->second.address, j.pid = it->second.pid;
  if (auto it = m.keys.find(c.key); it != m.keys.end() && it->second.first == c.remote) j.key_blob = it->second.second;
  m.push(*m.lanes[lane % m.lanes.size()], std::move(j));
}

}  // namespace outboard::transport
