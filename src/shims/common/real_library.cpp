#include "shims/common/real_library.hpp"

#include <dlfcn.h>
#include <link.h>

#include <array>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace outboard::shim {
namespace {

// RTLD_LOCAL: the real library is only used through dlsym on its handle, and it (e.g.
// libopenblas.so.0 with all of LAPACK) must not join the global scope and satisfy other
// libraries' lookups. Its own calls to xerbla_/lsame_ still bind through the global scope first,
// so an application-defined xerbla_ wins; that is also why there is no RTLD_DEEPBIND.
// RTLD_NOW: fail here, not mid-call.
constexpr int kOpenFlags = RTLD_NOW | RTLD_LOCAL;

void anchor() noexcept {}  // internal linkage: its address is always in this library

struct Self {
    const void* base = nullptr;
    char path[PATH_MAX] = {};  // realpath of this library; empty if unknown
};

const Self& self() noexcept {
    static const Self s = [] {
        Self r;
        Dl_info info{};
        if (dladdr(reinterpret_cast<void*>(&anchor), &info) != 0) {
            r.base = info.dli_fbase;
            if (info.dli_fname == nullptr || realpath(info.dli_fname, r.path) == nullptr) r.path[0] = '\0';
        }
        return r;
    }();
    return s;
}

// Whether `path` names this library (after resolving links).
bool is_self_file(const char* path) noexcept {
    char real[PATH_MAX];
    return path != nullptr && self().path[0] != '\0' && realpath(path, real) != nullptr &&
           std::strcmp(real, self().path) == 0;
}

// Whether `addr` (a symbol found by dlsym, say) lies in this library.
bool inside_self(const void* addr) noexcept {
    Dl_info info{};
    if (dladdr(addr, &info) == 0) return false;
    return info.dli_fbase == self().base || is_self_file(info.dli_fname);
}

// dlopen(path), or nullptr if that fails or loads this library.
void* open_real(const char* path) noexcept {
    if (std::strchr(path, '/') != nullptr && is_self_file(path)) return nullptr;
    void* handle = dlopen(path, kOpenFlags);
    if (handle == nullptr) return nullptr;
    link_map* map = nullptr;  // a bare soname is only known to be us after loading
    if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && is_self_file(map->l_name)) {
        dlclose(handle);
        return nullptr;
    }
    return handle;
}

// $env_var, copied once: later setenv() must not change or free it.
const char* env_path(const RealLibrary& lib) noexcept {
    static const std::array<char, PATH_MAX> path = [&] {
        std::array<char, PATH_MAX> p{};
        if (const char* e = std::getenv(lib.env_var); e != nullptr) std::snprintf(p.data(), p.size(), "%s", e);
        return p;
    }();
    return path[0] != '\0' ? path.data() : nullptr;
}

void* env_handle(const RealLibrary& lib) noexcept {
    static void* const handle = [&] {
        dlerror();  // drop a stale message so the one below is ours
        void* h = open_real(env_path(lib));
        if (h == nullptr) {
            const char* why = dlerror();
            if (why != nullptr)
                std::fprintf(stderr, "outboard: cannot use %s=%s: %s\n", lib.env_var, env_path(lib), why);
            else
                std::fprintf(stderr, "outboard: cannot use %s=%s: it is %s itself\n", lib.env_var, env_path(lib),
                             lib.self_name);
        }
        return h;
    }();
    return handle;
}

// Opened lazily and one by one: a preloaded program normally never needs any.
void* fallback_handle(const RealLibrary& lib, std::size_t i) noexcept {
    static std::once_flag once[kMaxFallbacks];
    static void* handle[kMaxFallbacks];
    std::call_once(once[i], [&] { handle[i] = open_real(lib.fallbacks[i]); });
    return handle[i];
}

}  // namespace

RealSymbol find_real_symbol(const RealLibrary& lib, const char* name) noexcept {
    auto usable = [](void* fn) { return fn != nullptr && !inside_self(fn); };
    if (env_path(lib) != nullptr) {
        void* handle = env_handle(lib);
        void* fn = handle != nullptr ? dlsym(handle, name) : nullptr;
        return usable(fn) ? RealSymbol{fn, lib.env_var} : RealSymbol{};
    }
    // Preloaded: the definition we shadow. In compat mode nothing follows us and this finds nothing.
    if (void* fn = dlsym(RTLD_NEXT, name); usable(fn)) return {fn, "RTLD_NEXT"};
    for (std::size_t i = 0; i < lib.fallbacks.size() && i < kMaxFallbacks; ++i) {
        void* handle = fallback_handle(lib, i);
        if (void* fn = handle != nullptr ? dlsym(handle, name) : nullptr; usable(fn)) return {fn, "fallback dlopen"};
    }
    return {};
}

}  // namespace outboard::shim
