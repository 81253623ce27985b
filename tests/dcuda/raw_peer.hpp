// A hand-driven peer for the proxy's CPU tests: a raw transport::Worker that plays process 1 of a
// run and sends hand-made messages (what a real proxy would send, or what it never would).
#pragma once
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "common/clock.hpp"
#include "transport/transport.hpp"
#include "wire/dcuda.hpp"

namespace dcuda::test {

namespace tp = outboard::transport;
namespace msg = outboard::wire::dcuda;

struct RawPeer {
  std::vector<msg::Message> answers;
  std::vector<std::string> disconnects;
  tp::Worker worker{[this] {
    tp::Events ev;
    // As process 1 would: welcomes the proxy's hello and answers its finish.
    ev.on_message = [this](tp::PeerId from, std::vector<std::byte> header, tp::Buffer, bool) {
      answers.push_back(msg::decode(header));
      if (std::holds_alternative<msg::Hello>(answers.back())) send(from, msg::Welcome{});
      if (std::holds_alternative<msg::Finished>(answers.back())) send(from, msg::Finished{});
    };
    ev.on_disconnect = [this](tp::PeerId, const std::string& reason) { disconnects.push_back(reason); };
    return ev;
  }()};
  void send(tp::PeerId to, const msg::Message& m, std::span<const std::byte> payload = {}) {
    std::vector<std::byte> header;
    msg::encode(m, header);
    send_raw(to, header, payload);
  }
  void send_raw(tp::PeerId to, std::span<const std::byte> header, std::span<const std::byte> payload = {}) {
    tp::Segment seg{payload.data(), payload.size()};
    worker.send(to, header, payload.empty() ? std::span<const tp::Segment>() : std::span<const tp::Segment>(&seg, 1),
                std::function<void(bool)>());
  }
  // Progresses until `done` holds (false after 10 s).
  bool until(const std::function<bool()>& done) {
    const uint64_t end = outboard::now_ns() + 10'000'000'000ull;
    while (!done()) {
      if (outboard::now_ns() > end) return false;
      worker.progress();
    }
    return true;
  }
  template <class T>
  size_t count() const {
    size_t n = 0;
    for (auto& m : answers) n += std::holds_alternative<T>(m);
    return n;
  }
};

inline uint16_t port_of(const std::string& address) { return static_cast<uint16_t>(std::stoi(address.substr(address.rfind(':') + 1))); }

}  // namespace dcuda::test
