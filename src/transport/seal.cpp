#include "transport/seal.hpp"

#include <sodium.h>

#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

namespace outboard::transport {
namespace {

constexpr uint32_t kHeaderPart = 0xffffffffu;

void put_u32(std::byte* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = std::byte(v >> (8 * i));
}
void put_u64(std::byte* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = std::byte(v >> (8 * i));
}
uint32_t get_u32(const std::byte* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= uint32_t(p[i]) << (8 * i);
  return v;
}
uint64_t get_u64(const std::byte* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t(p[i]) << (8 * i);
  return v;
}

using NonceBytes = std::array<unsigned char, crypto_aead_chacha20poly1305_IETF_NPUBBYTES>;
static_assert(crypto_aead_chacha20poly1305_IETF_NPUBBYTES == 12);
static_assert(crypto_aead_chacha20poly1305_IETF_ABYTES == kSealTag);
static_assert(crypto_aead_chacha20poly1305_IETF_KEYBYTES == sizeof(SealKey));

NonceBytes nonce(uint64_t counter, uint32_t part) {
  NonceBytes n;
  put_u64(reinterpret_cast<std::byte*>(n.data()), counter);
  put_u32(reinterpret_cast<std::byte*>(n.data() + 8), part);
  return n;
}

std::array<std::byte, kSealPrefix> prefix(uint64_t counter, uint64_t payload_bytes) {
  std::array<std::byte, kSealPrefix> p;
  put_u32(p.data(), kSealMagic);
  put_u64(p.data() + 4, counter);
  put_u64(p.data() + 12, payload_bytes);
  return p;
}

const unsigned char* uc(const std::byte* p) { return reinterpret_cast<const unsigned char*>(p); }
unsigned char* uc(std::byte* p) { return reinterpret_cast<unsigned char*>(p); }

// Copies [from, from + n) of the segments' concatenation to `to`.
void gather(std::span<const Segment> segments, uint64_t from, uint64_t n, std::byte* to) {
  uint64_t at = 0;
  for (const Segment& s : segments) {
    if (n == 0) return;
    if (from < at + s.bytes) {
      const uint64_t skip = from - at, take = std::min<uint64_t>(n, s.bytes - skip);
      std::memcpy(to, static_cast<const std::byte*>(s.data) + skip, take);
      to += take, from += take, n -= take;
    }
    at += s.bytes;
  }
}

// Where [from, from + n) lies in one segment: its address; else nullptr.
const std::byte* contiguous(std::span<const Segment> segments, uint64_t from, uint64_t n) {
  uint64_t at = 0;
  for (const Segment& s : segments) {
    if (from < at + s.bytes)
      return from + n <= at + s.bytes ? static_cast<const std::byte*>(s.data) + (from - at) : nullptr;
    at += s.bytes;
  }
  return nullptr;
}

// Large payloads are sealed and opened in pieces on several cores: one core's ChaCha20-Poly1305
// (about 1.5 GB/s) is slower than shared memory and fast networks. A small process-wide pool,
// OUTBOARD_SEAL_THREADS threads in all (default: up to 4, no more than the cores; 1: the calling
// thread alone); the calling thread takes a share too. Made on first use, and made again in a
// process forked from the one that made it (its threads are not there).
class SealPool {
 public:
  static SealPool& get() {
    static std::mutex mu;
    static SealPool* pool = nullptr;
    std::lock_guard lk(mu);
    if (!pool || pool->owner_ != getpid()) pool = new SealPool();  // a forked child's stale one is leaked
    return *pool;
  }
  unsigned threads() const { return unsigned(workers_.size()) + 1; }

  // Runs fn(first, last) over [0, pieces) in up to threads() ranges; rethrows the first failure.
  void run(uint64_t pieces, const std::function<void(uint64_t, uint64_t)>& fn) {
    const uint64_t parts = std::min<uint64_t>(pieces, threads());
    if (parts <= 1) return fn(0, pieces);
    struct Job {
      std::mutex mu;
      std::condition_variable cv;
      uint64_t left;
      std::exception_ptr error;
    };
    auto job = std::make_shared<Job>();
    job->left = parts - 1;
    auto range = [&](uint64_t i) { return std::pair(pieces * i / parts, pieces * (i + 1) / parts); };
    {
      std::lock_guard lk(mu_);
      for (uint64_t i = 1; i < parts; ++i)
        queue_.push_back([job, &fn, r = range(i)] {
          std::exception_ptr e;
          try {
            fn(r.first, r.second);
          } catch (...) {
            e = std::current_exception();
          }
          std::lock_guard jl(job->mu);
          if (e && !job->error) job->error = e;
          if (--job->left == 0) job->cv.notify_all();
        });
    }
    cv_.notify_all();
    std::exception_ptr mine;
    try {
      auto r = range(0);
      fn(r.first, r.second);
    } catch (...) {
      mine = std::current_exception();
    }
    std::unique_lock jl(job->mu);
    job->cv.wait(jl, [&] { return job->left == 0; });
    if (mine) std::rethrow_exception(mine);
    if (job->error) std::rethrow_exception(job->error);
  }

 private:
  SealPool() : owner_(getpid()) {
    unsigned n = std::min(4u, std::max(1u, std::thread::hardware_concurrency()));
    if (const char* v = std::getenv("OUTBOARD_SEAL_THREADS"); v && *v) n = unsigned(std::clamp(std::atoi(v), 1, 64));
    for (unsigned i = 1; i < n; ++i)
      workers_.emplace_back([this] {
        for (;;) {
          std::function<void()> task;
          {
            std::unique_lock lk(mu_);
            cv_.wait(lk, [&] { return !queue_.empty(); });
            task = std::move(queue_.front());
            queue_.pop_front();
          }
          task();
        }
      });
    for (auto& t : workers_) t.detach();  // they live as long as the process
  }
  pid_t owner_;
  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
};

// Payloads of at least this many pieces are spread over the pool.
constexpr uint64_t kParallelPieces = 4;  // 1 MiB

}  // namespace

Seal::Seal(const SealKeys& keys) : keys_(keys) {
  if (sodium_init() < 0) throw SealError("libsodium could not be initialised");
}

Seal::~Seal() { sodium_memzero(&keys_, sizeof keys_); }

uint64_t Seal::seal_header(std::span<const std::byte> header, uint64_t payload_bytes, std::vector<std::byte>& out) {
  if (payload_bytes > kSealMaxPayload) throw SealError("payload too large to seal");
  const uint64_t counter = sent_++;
  out.resize(kSealPrefix + header.size() + kSealTag);
  const auto p = prefix(counter, payload_bytes);
  std::memcpy(out.data(), p.data(), p.size());
  const NonceBytes n = nonce(counter, kHeaderPart);
  crypto_aead_chacha20poly1305_ietf_encrypt_detached(uc(out.data() + kSealPrefix), uc(out.data() + kSealPrefix + header.size()),
                                                     nullptr, uc(header.data()), header.size(), uc(p.data()), p.size(),
                                                     nullptr, n.data(), keys_.send.data());
  return counter;
}

void Seal::seal_payload(uint64_t counter, std::span<const Segment> payload, uint64_t payload_bytes, std::byte* out,
                        uint64_t first, uint64_t last) const {
  const uint64_t pieces = seal_pieces(payload_bytes);
  if (first == 0 && last == UINT64_MAX && pieces >= kParallelPieces && SealPool::get().threads() > 1)
    return SealPool::get().run(pieces, [&](uint64_t a, uint64_t b) { seal_payload(counter, payload, payload_bytes, out, a, b); });
  const auto p = prefix(counter, payload_bytes);
  std::byte* tags = out + payload_bytes;
  for (uint64_t i = first; i < std::min(last, pieces); ++i) {
    const uint64_t at = i * kSealPiece, n = std::min(kSealPiece, payload_bytes - at);
    const std::byte* from = contiguous(payload, at, n);
    if (!from) {  // the piece spans segments: gathered, then sealed in place
      gather(payload, at, n, out + at);
      from = out + at;
    }
    const NonceBytes nn = nonce(counter, static_cast<uint32_t>(i));
    crypto_aead_chacha20poly1305_ietf_encrypt_detached(uc(out + at), uc(tags + i * kSealTag), nullptr, uc(from), n,
                                                       uc(p.data()), p.size(), nullptr, nn.data(), keys_.send.data());
  }
}

Seal::Opened Seal::open_header(std::span<const std::byte> sealed, std::vector<std::byte>& header) {
  if (sealed.size() >= 4 && get_u32(sealed.data()) != kSealMagic)
    throw SealError("message " + std::to_string(received_) +
                    " is not sealed: a plaintext message after encryption started");
  if (sealed.size() < kSealHeaderOverhead)
    throw SealError("message " + std::to_string(received_) + " is truncated (" + std::to_string(sealed.size()) +
                    " bytes)");
  Opened o{get_u64(sealed.data() + 4), get_u64(sealed.data() + 12)};
  const size_t len = sealed.size() - kSealHeaderOverhead;
  header.resize(len);
  const NonceBytes n = nonce(o.counter, kHeaderPart);
  const bool ok = crypto_aead_chacha20poly1305_ietf_decrypt_detached(
                      uc(header.data()), nullptr, uc(sealed.data() + kSealPrefix), len,
                      uc(sealed.data() + kSealPrefix + len), uc(sealed.data()), kSealPrefix, n.data(),
                      keys_.receive.data()) == 0;
  if (!ok) {
    header.clear();
    throw SealError("message " + std::to_string(received_) + " failed authentication");
  }
  if (o.counter != received_) {
    header.clear();
    throw SealError("message " + std::to_string(o.counter) + " arrived out of order (expected message " +
                    std::to_string(received_) + "): replayed, reordered or lost");
  }
  if (o.payload_bytes > kSealMaxPayload) {
    header.clear();
    throw SealError("message " + std::to_string(o.counter) + " announces an impossible payload");
  }
  ++received_;
  return o;
}

void Seal::open_payload(uint64_t counter, std::span<const std::byte> sealed, uint64_t payload_bytes,
                        std::byte* out) const {
  if (sealed.size() != sealed_payload_bytes(payload_bytes))
    throw SealError("message " + std::to_string(counter) + ": payload of " + std::to_string(sealed.size()) +
                    " bytes, sealed size " + std::to_string(sealed_payload_bytes(payload_bytes)) + " (truncated?)");
  const uint64_t pieces = seal_pieces(payload_bytes);
  const auto p = prefix(counter, payload_bytes);
  const std::byte* tags = sealed.data() + payload_bytes;
  auto open_range = [&](uint64_t first, uint64_t last) {
  for (uint64_t i = first; i < last; ++i) {
    const uint64_t at = i * kSealPiece, n = std::min(kSealPiece, payload_bytes - at);
    const NonceBytes nn = nonce(counter, static_cast<uint32_t>(i));
    if (crypto_aead_chacha20poly1305_ietf_decrypt_detached(uc(out + at), nullptr, uc(sealed.data() + at), n,
                                                           uc(tags + i * kSealTag), uc(p.data()), p.size(), nn.data(),
                                                           keys_.receive.data()) != 0)
      throw SealError("message " + std::to_string(counter) + " failed authentication (payload piece " +
                      std::to_string(i) + ")");
  }
  };
  if (pieces >= kParallelPieces && SealPool::get().threads() > 1) SealPool::get().run(pieces, open_range);
  else open_range(0, pieces);
}

}  // namespace outboard::transport
