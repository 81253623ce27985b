// Unit tests of the shared secret file and the MAC used for authentication.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "common/error.hpp"
#include "common/secret.hpp"
#include "wire/messages.hpp"

namespace outboard {
namespace {

namespace fs = std::filesystem;

class SecretFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string templ = (fs::temp_directory_path() / "outboard-secret-test-XXXXXX").string();
    ASSERT_NE(::mkdtemp(templ.data()), nullptr);
    dir_ = templ;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  static std::string slurp(const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }
  // Writes a file with the given content and permission bits.
  static void write_file(const std::string& p, const std::string& content, mode_t mode) {
    std::ofstream(p, std::ios::binary) << content;
    ASSERT_EQ(::chmod(p.c_str(), mode), 0);
  }
  static mode_t mode_of(const std::string& p) {
    struct stat st{};
    EXPECT_EQ(::stat(p.c_str(), &st), 0) << p;
    return st.st_mode & 07777;
  }
  static std::string read_error(const std::string& p) {
    try {
      read_secret(p);
      ADD_FAILURE() << "read_secret accepted " << p;
    } catch (const Error& e) {
      return e.what();
    }
    return {};
  }
  fs::path dir_;
};

bool contains(const std::string& s, const std::string& fragment) { return s.find(fragment) != std::string::npos; }

const std::string kHex = "00112233445566778899aabbccddeeff0123456789ABCDEFfedcba9876543210";

TEST_F(SecretFileTest, NewSecretHasMode0600) {
  std::string p = path("token");
  write_new_secret(p, false);
  struct stat st{};
  ASSERT_EQ(::stat(p.c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_EQ(st.st_uid, ::getuid());
  std::string text = slurp(p);
  ASSERT_EQ(text.size(), 65u);  // 64 hex digits and a newline
  EXPECT_EQ(text.back(), '\n');
  EXPECT_EQ(text.find_first_not_of("0123456789abcdef"), 64u);
  EXPECT_NO_THROW(read_secret(p));
}

TEST_F(SecretFileTest, ModeDoesNotDependOnUmask) {
  mode_t old = ::umask(0);  // the most permissive umask must still give 0600
  std::string p = path("token");
  write_new_secret(p, false);
  ::umask(old);
  EXPECT_EQ(mode_of(p), 0600u);
}

TEST_F(SecretFileTest, CreatesMissingDirectoriesPrivately) {
  std::string p = path("config/outboard/token");
  write_new_secret(p, false);
  EXPECT_EQ(mode_of(p), 0600u);
  EXPECT_EQ(mode_of(path("config/outboard")), 0700u);
}

TEST_F(SecretFileTest, RefusesToOverwrite) {
  std::string p = path("token");
  write_new_secret(p, false);
  std::string before = slurp(p);
  try {
    write_new_secret(p, false);
    ADD_FAILURE() << "an existing secret was replaced";
  } catch (const Error& e) {
    EXPECT_TRUE(contains(e.what(), "already exists")) << e.what();
  }
  EXPECT_EQ(slurp(p), before);
}

TEST_F(SecretFileTest, OverwriteWorks) {
  std::string p = path("token");
  write_new_secret(p, false);
  Secret first = read_secret(p);
  write_new_secret(p, true);
  EXPECT_EQ(mode_of(p), 0600u);
  Secret second = read_secret(p);
  EXPECT_NE(first, second);  // a fresh random secret (2^-256 chance of a false failure)
  EXPECT_EQ(slurp(p).size(), 65u);
}

TEST_F(SecretFileTest, OverwriteOfAGroupReadableFileMakesIt0600) {
  std::string p = path("token");
  write_file(p, std::string(300, 'x'), 0644);  // longer than a secret: must be truncated
  write_new_secret(p, true);
  EXPECT_EQ(mode_of(p), 0600u);
  EXPECT_EQ(slurp(p).size(), 65u);
  EXPECT_NO_THROW(read_secret(p));
}

TEST_F(SecretFileTest, ReadsWhatWasWritten) {
  std::string p = path("token");
  write_file(p, kHex + "\n", 0600);
  Secret s = read_secret(p);
  EXPECT_EQ(s[0], 0x00);
  EXPECT_EQ(s[1], 0x11);
  EXPECT_EQ(s[15], 0xff);
  EXPECT_EQ(s[21], 0xab);  // upper-case digits are accepted
  EXPECT_EQ(s[31], 0x10);
  // Without the newline, and with CR LF or trailing spaces, it is the same secret.
  for (const std::string& variant : {kHex, kHex + "\r\n", kHex + "  \n\n"}) {
    write_file(p, variant, 0600);
    EXPECT_EQ(read_secret(p), s);
  }
  // Owner-only modes stricter than 0600 are fine.
  ASSERT_EQ(::chmod(p.c_str(), 0400), 0);
  EXPECT_EQ(read_secret(p), s);
}

TEST_F(SecretFileTest, GroupOrWorldReadableIsRefused) {
  std::string p = path("token");
  for (mode_t mode : {0640, 0604, 0644, 0660, 0610, 0601, 0666}) {
    write_file(p, kHex + "\n", mode);
    std::string e = read_error(p);
    EXPECT_TRUE(contains(e, "chmod 600")) << std::oct << mode << ": " << e;
    EXPECT_TRUE(contains(e, p)) << e;
  }
}

TEST_F(SecretFileTest, MalformedContent) {
  std::string p = path("token");
  for (const std::string& bad : {std::string(), std::string("\n"), kHex.substr(0, 63), kHex.substr(0, 62),
                                 kHex + "0", kHex + "00", "g" + kHex.substr(1), " " + kHex,
                                 kHex.substr(0, 32) + " " + kHex.substr(32, 31), kHex + "\nextra\n"}) {
    write_file(p, bad, 0600);
    std::string e = read_error(p);
    EXPECT_TRUE(contains(e, "malformed")) << "'" << bad << "': " << e;
  }
}

TEST_F(SecretFileTest, MissingFile) {
  std::string p = path("nope/token");
  std::string e = read_error(p);
  EXPECT_TRUE(contains(e, "outboard token")) << e;
  EXPECT_TRUE(contains(e, p)) << e;
}

TEST_F(SecretFileTest, DirectoryIsNotASecret) {
  fs::create_directory(path("dir"));
  ASSERT_EQ(::chmod(path("dir").c_str(), 0700), 0);
  EXPECT_TRUE(contains(read_error(path("dir")), "not a regular file"));
}

// ---------------------------------------------------------------------------------------------
// MAC

std::span<const uint8_t> bytes(const std::string& s) { return {reinterpret_cast<const uint8_t*>(s.data()), s.size()}; }

Secret key_of(uint8_t v) {
  Secret k;
  k.fill(v);
  return k;
}

TEST(Mac, Deterministic) {
  Secret k = key_of(7);
  std::string a = "first", b = "second";
  EXPECT_EQ(compute_mac(k, {bytes(a), bytes(b)}), compute_mac(k, {bytes(a), bytes(b)}));
  // The parts are concatenated: how the bytes are split does not matter.
  std::string ab = a + b;
  EXPECT_EQ(compute_mac(k, {bytes(a), bytes(b)}), compute_mac(k, {bytes(ab)}));
}

TEST(Mac, KnownAnswer) {
  // HMAC-SHA-256 with the 32-byte key 0x0b0b.. over "Hi There", computed independently with
  // Python's hmac module: pins the algorithm (a different MAC would break old clients).
  Secret k = key_of(0x0b);
  Mac m = compute_mac(k, {bytes("Hi There")});
  static const uint8_t expected[32] = {0x19, 0x8a, 0x60, 0x7e, 0xb4, 0x4b, 0xfb, 0xc6, 0x99, 0x03, 0xa0,
                                       0xf1, 0xcf, 0x2b, 0xbd, 0xc5, 0xba, 0x0a, 0xa3, 0xf3, 0xd9, 0xae,
                                       0x3c, 0x1c, 0x7a, 0x3b, 0x16, 0x96, 0xa0, 0xb6, 0x8c, 0xf7};
  EXPECT_EQ(std::memcmp(m.data(), expected, 32), 0);
}

TEST(Mac, ChangesWithKey) {
  std::string msg = "message";
  Mac base = compute_mac(key_of(1), {bytes(msg)});
  for (size_t i = 0; i < 32; ++i) {
    Secret k = key_of(1);
    k[i] ^= 0x80;
    EXPECT_NE(compute_mac(k, {bytes(msg)}), base) << "key byte " << i;
  }
}

TEST(Mac, ChangesWithEachPart) {
  Secret k = key_of(3);
  Nonce n1 = random_nonce(), n2 = random_nonce();
  std::string label = "label";
  Mac base = compute_mac(k, {bytes(label), n1, n2});
  std::string label2 = "lAbel";
  EXPECT_NE(compute_mac(k, {bytes(label2), n1, n2}), base);
  Nonce m1 = n1, m2 = n2;
  m1[0] ^= 1;
  m2[31] ^= 1;
  EXPECT_NE(compute_mac(k, {bytes(label), m1, n2}), base);
  EXPECT_NE(compute_mac(k, {bytes(label), n1, m2}), base);
  EXPECT_NE(compute_mac(k, {bytes(label), n2, n1}), base);  // order matters
  EXPECT_NE(compute_mac(k, {bytes(label), n1}), base);      // a missing part matters
}

TEST(Mac, RandomNoncesDiffer) { EXPECT_NE(random_nonce(), random_nonce()); }

TEST(Mac, MacsEqual) {
  Mac a = compute_mac(key_of(9), {bytes("x")});
  Mac b = a;
  EXPECT_TRUE(macs_equal(a, b));
  for (size_t i = 0; i < a.size(); ++i) {
    Mac c = a;
    c[i] ^= 1;
    EXPECT_FALSE(macs_equal(a, c)) << i;
  }
  EXPECT_TRUE(macs_equal(Mac{}, Mac{}));
}

TEST(Mac, ServerProofIsNotClientProof) {
  Secret k = key_of(0x42);
  Nonce c = random_nonce(), s = random_nonce();
  Mac server = wire::server_proof(k, c, s);
  Mac client = wire::client_proof(k, s, c);
  EXPECT_FALSE(macs_equal(server, client));
  // Same argument order, and even identical nonces, still differ: a proof cannot be reflected.
  EXPECT_NE(wire::server_proof(k, c, s), wire::client_proof(k, c, s));
  EXPECT_NE(wire::server_proof(k, c, c), wire::client_proof(k, c, c));
  // Both are deterministic, and both depend on the secret.
  EXPECT_EQ(wire::server_proof(k, c, s), server);
  EXPECT_EQ(wire::client_proof(k, s, c), client);
  EXPECT_NE(wire::server_proof(key_of(0x43), c, s), server);
  EXPECT_NE(wire::client_proof(key_of(0x43), s, c), client);
}

}  // namespace
}  // namespace outboard
