#include <link.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string_view>

#include "common/error.hpp"
#include "tools/outboard/commands.hpp"

namespace outboard::tool {
namespace {

// The shims (liboutboard-blas.so, liboutboard-lapack.so, liboutboard-fftw3.so) sit in ../lib beside this executable, in
// the build tree and installed.
std::string shim_path(const char* file = "liboutboard-blas.so") {
  std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe");
  std::filesystem::path lib = exe.parent_path().parent_path() / "lib" / file;
  if (!std::filesystem::exists(lib)) throw Error("cannot find " + lib.string());
  return lib.string();
}

// The sanitizer runtime this process runs with (ASan's or TSan's shared library), or "". In a
// build with a sanitizer (the asan and tsan presets) the shims need it too, and it must be the
// first library of the program: ASan stops the program otherwise, TSan misses what ran before it.
std::string sanitizer_runtime() {
  std::string found;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* out) {
        const std::string_view path = info->dlpi_name ? info->dlpi_name : "";
        const std::string_view base = path.substr(path.rfind('/') + 1);
        if (!base.starts_with("libasan.so") && !base.starts_with("libtsan.so")) return 0;
        *static_cast<std::string*>(out) = path;
        return 1;
      },
      &found);
  return found;
}

}  // namespace

Runner add_run(CLI::App& app) {
  auto* cmd = app.add_subcommand("run", "Run a program with its BLAS, LAPACK and FFTW calls offloaded and the servers' OpenCL platforms as its own (outboard run -- PROGRAM ARGS)");
  struct Args {
    std::string server, token, offload, fallback;
    bool encrypt = false;
    std::vector<std::string> command;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("--server", a->server, "Server(s), host:port[,host:port...] (sets OUTBOARD_SERVERS)");
  cmd->add_option("--token-file", a->token, "Secret file (sets OUTBOARD_TOKEN_FILE)");
  cmd->add_option("--offload", a->offload, "auto|always|never (sets OUTBOARD_OFFLOAD)")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  cmd->add_option("--fallback", a->fallback, "local|fail (sets OUTBOARD_FALLBACK)")->check(CLI::IsMember({"local", "fail"}));
  cmd->add_flag("--encrypt", a->encrypt, "Insist on encrypted sessions (sets OUTBOARD_ENCRYPT=1; docs/servers.md: Encryption)");
  cmd->add_option("command", a->command, "Program and its arguments")->required();
  return [=]() -> int {
    std::string preload =
        shim_path() + ":" + shim_path("liboutboard-lapack.so") + ":" + shim_path("liboutboard-fftw3.so");
    if (const char* old = std::getenv("LD_PRELOAD"); old && *old) preload += std::string(":") + old;
    if (const std::string runtime = sanitizer_runtime(); !runtime.empty()) preload = runtime + ":" + preload;
    setenv("LD_PRELOAD", preload.c_str(), 1);
    // Remote OpenCL: the ICD loader (ocl-icd) reads its vendor files from here instead of
    // /etc/OpenCL/vendors, so the program sees the servers' platforms without anything installed.
    const auto vendors = std::filesystem::path(shim_path()).parent_path().parent_path() / "etc/OpenCL/vendors";
    if (std::filesystem::exists(vendors / "outboard.icd") && !std::getenv("OCL_ICD_VENDORS"))
      setenv("OCL_ICD_VENDORS", vendors.c_str(), 1);
    if (!a->server.empty()) setenv("OUTBOARD_SERVERS", a->server.c_str(), 1);
    if (!a->token.empty()) setenv("OUTBOARD_TOKEN_FILE", std::filesystem::absolute(a->token).c_str(), 1);
    if (!a->offload.empty()) setenv("OUTBOARD_OFFLOAD", a->offload.c_str(), 1);
    if (!a->fallback.empty()) setenv("OUTBOARD_FALLBACK", a->fallback.c_str(), 1);
    if (a->encrypt) setenv("OUTBOARD_ENCRYPT", "1", 1);
    std::vector<char*> argv;
    for (auto& s : a->command) argv.push_back(s.data());
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    throw Error("cannot run " + a->command[0] + ": " + errno_text(errno));
  };
}

}  // namespace outboard::tool
