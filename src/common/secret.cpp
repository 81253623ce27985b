#include "common/secret.hpp"

#include <fcntl.h>
#include <sodium.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "common/error.hpp"

namespace outboard {
namespace {

void ensure_sodium() {
  static const int rc = sodium_init();  // thread-safe static init; idempotent
  if (rc < 0) throw Error("libsodium could not be initialised");
}

}  // namespace

std::string default_token_path() {
  if (const char* p = std::getenv("OUTBOARD_TOKEN_FILE"); p && *p) return p;
  if (const char* x = std::getenv("XDG_CONFIG_HOME"); x && *x) return std::string(x) + "/outboard/token";
  const char* home = std::getenv("HOME");
  return std::string(home && *home ? home : "/tmp") + "/.config/outboard/token";
}

void write_new_secret(const std::string& path, bool overwrite) {
  ensure_sodium();
  std::filesystem::path p(path);
  if (p.has_parent_path() && !std::filesystem::exists(p.parent_path())) {
    std::filesystem::create_directories(p.parent_path());
    ::chmod(p.parent_path().c_str(), 0700);
  }
  int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (overwrite ? O_TRUNC : O_EXCL);
  int fd = ::open(path.c_str(), flags, 0600);
  if (fd < 0) {
    int e = errno;
    if (e == EEXIST) throw Error("secret file " + path + " already exists (use --force to replace it)");
    throw Error("cannot create secret file " + path + ": " + errno_text(e));
  }
  ::fchmod(fd, 0600);  // O_TRUNC keeps the old mode; the secret must never be group/world readable
  Secret s;
  randombytes_buf(s.data(), s.size());
  char hex[2 * sizeof(Secret) + 1];
  sodium_bin2hex(hex, sizeof hex, s.data(), s.size());
  std::string text = std::string(hex) + "\n";
  sodium_memzero(s.data(), s.size());
  bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  sodium_memzero(text.data(), text.size());
  ok = (::close(fd) == 0) && ok;
  if (!ok) throw Error("cannot write secret file " + path);
}

Secret read_secret(const std::string& path) {
  ensure_sodium();
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    throw Error("cannot read secret file " + path + ": " + errno_text(e) +
                " (create one with 'outboard token', or set OUTBOARD_TOKEN_FILE)");
  }
  struct stat st{};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw Error("secret file " + path + " is not a regular file");
  }
  if ((st.st_mode & 077) != 0) {
    ::close(fd);
    throw Error("secret file " + path + " is readable by others; run: chmod 600 " + path);
  }
  char buf[256];
  ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n < 0) throw Error("cannot read secret file " + path);
  std::string text(buf, static_cast<size_t>(n));
  sodium_memzero(buf, sizeof buf);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) text.pop_back();
  Secret s{};
  size_t len = 0;
  if (text.size() != 2 * s.size() ||
      sodium_hex2bin(s.data(), s.size(), text.data(), text.size(), nullptr, &len, nullptr) != 0 ||
      len != s.size())
    throw Error("secret file " + path + " is malformed: expected 64 hex digits");
  return s;
}

Nonce random_nonce() {
  ensure_sodium();
  Nonce n;
  randombytes_buf(n.data(), n.size());
  return n;
}

Mac compute_mac(const Secret& key, std::initializer_list<std::span<const uint8_t>> parts) {
  ensure_sodium();
  crypto_auth_hmacsha256_state st;
  crypto_auth_hmacsha256_init(&st, key.data(), key.size());
  for (auto part : parts) crypto_auth_hmacsha256_update(&st, part.data(), part.size());
  Mac m;
  crypto_auth_hmacsha256_final(&st, m.data());
  return m;
}

bool macs_equal(const Mac& a, const Mac& b) { return sodium_memcmp(a.data(), b.data(), a.size()) == 0; }

SessionKeys session_keys(const Secret& s, const Nonce& client_nonce, const Nonce& server_nonce) {
  ensure_sodium();
  auto derive = [&](const char* label, std::array<uint8_t, 32>& out) {
    crypto_generichash_blake2b_state st;
    crypto_generichash_blake2b_init(&st, s.data(), s.size(), out.size());
    crypto_generichash_blake2b_update(&st, reinterpret_cast<const uint8_t*>(label), std::strlen(label) + 1);
    crypto_generichash_blake2b_update(&st, client_nonce.data(), client_nonce.size());
    crypto_generichash_blake2b_update(&st, server_nonce.data(), server_nonce.size());
    crypto_generichash_blake2b_final(&st, out.data(), out.size());
    sodium_memzero(&st, sizeof st);
  };
  SessionKeys k;
  derive("outboard session key v1: client to server", k.client_to_server);
  derive("outboard session key v1: server to client", k.server_to_client);
  return k;
}

}  // namespace outboard
