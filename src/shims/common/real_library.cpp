#include "shims/common/real_library.hpp"

#include <dlfcn.h>
#include <link.h>

#include <atomic>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

namespace outboard::shim {
namespace {

// RTLD_LOCAL: the real library is only used through dlsym on its handle, and it (e.g.
// libopenblas.so.0 with all of LAPACK) must not join the global scope and satisfy other
// libraries' lookups. Its own calls to xerbla_/lsame_ still bind through the global scope first,
// so an application-defined xerbla_ wins; that is also why there is no RTLD_DEEPBIND.
// RTLD_NOW: fail here, not mid-call. (RealLibrary::global asks for RTLD_GLOBAL instead.)
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
void* open_real(const char* path, bool global) noexcept {
    if (std::strchr(path, '/') != nullptr && is_self_file(path)) return nullptr;
    void* handle = dlopen(path, global ? (kOpenFlags & ~RTLD_LOCAL) | RTLD_GLOBAL : kOpenFlags);
    if (handle == nullptr) return nullptr;
    link_map* map = nullptr;  // a bare soname is only known to be us after loading
    if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && is_self_file(map->l_name)) {
        dlclose(handle);
        return nullptr;
    }
    return handle;
}

// The cached state of one real library. Plain static storage (no constructors, no destructors),
// claimed by the library's address: usable at any time, also during static destruction.
struct Cache {
    std::atomic<const RealLibrary*> owner{nullptr};
    std::once_flag env_once;
    char env_path[PATH_MAX];  // $env_var, copied once: later setenv() must not change or free it
    std::once_flag env_handle_once;
    void* env_handle;
    std::once_flag fallback_once[kMaxFallbacks];  // opened lazily and one by one: a preloaded
    void* fallback_handle[kMaxFallbacks];         // program normally never needs any
};
Cache caches[kMaxLibraries];

Cache& cache(const RealLibrary& lib) noexcept {
    for (Cache& c : caches) {
        const RealLibrary* owner = c.owner.load(std::memory_order_acquire);
        if (owner == nullptr && c.owner.compare_exchange_strong(owner, &lib, std::memory_order_acq_rel)) return c;
        if (owner == &lib) return c;
    }
    std::fprintf(stderr, "outboard: %s uses more than %zu real libraries\n", lib.self_name, kMaxLibraries);
    std::abort();
}

const char* env_path(const RealLibrary& lib, Cache& c) noexcept {
    std::call_once(c.env_once, [&] {
        const char* e = std::getenv(lib.env_var);
        std::snprintf(c.env_path, sizeof c.env_path, "%s", e != nullptr ? e : "");
    });
    return c.env_path[0] != '\0' ? c.env_path : nullptr;
}

void* env_handle(const RealLibrary& lib, Cache& c) noexcept {
    std::call_once(c.env_handle_once, [&] {
        dlerror();  // drop a stale message so the one below is ours
        void* h = open_real(c.env_path, lib.global);
        if (h == nullptr) {
            const char* why = dlerror();
            if (why != nullptr)
                std::fprintf(stderr, "outboard: cannot use %s=%s: %s\n", lib.env_var, c.env_path, why);
            else
                std::fprintf(stderr, "outboard: cannot use %s=%s: it is %s itself\n", lib.env_var, c.env_path,
                             lib.self_name);
        }
        c.env_handle = h;
    });
    return c.env_handle;
}

void* fallback_handle(const RealLibrary& lib, Cache& c, std::size_t i) noexcept {
    std::call_once(c.fallback_once[i], [&] { c.fallback_handle[i] = open_real(lib.fallbacks[i], lib.global); });
    return c.fallback_handle[i];
}

}  // namespace

RealSymbol find_real_symbol(const RealLibrary& lib, const char* name) noexcept {
    auto usable = [](void* fn) { return fn != nullptr && !inside_self(fn); };
    Cache& c = cache(lib);
    if (env_path(lib, c) != nullptr) {
        void* handle = env_handle(lib, c);
        void* fn = handle != nullptr ? dlsym(handle, name) : nullptr;
        return usable(fn) ? RealSymbol{fn, lib.env_var} : RealSymbol{};
    }
    // Preloaded: the definition we shadow. In compat mode nothing follows us and this finds nothing.
    if (void* fn = dlsym(RTLD_NEXT, name); usable(fn)) return {fn, "RTLD_NEXT"};
    for (std::size_t i = 0; i < lib.fallbacks.size() && i < kMaxFallbacks; ++i) {
        void* handle = fallback_handle(lib, c, i);
        if (void* fn = handle != nullptr ? dlsym(handle, name) : nullptr; usable(fn)) return {fn, "fallback dlopen"};
    }
    return {};
}

RealSymbol find_loaded_symbol(const char* name) noexcept {
    if (void* fn = dlsym(RTLD_NEXT, name); fn != nullptr && !inside_self(fn)) return {fn, "RTLD_NEXT"};
    // The loaded objects' names first, then the lookups: dlopen must not run under
    // dl_iterate_phdr's lock.
    struct Paths {
        std::vector<std::string> list;
        bool failed = false;
    } paths;
    dl_iterate_phdr(
        [](dl_phdr_info* info, size_t, void* out) {
            auto* p = static_cast<Paths*>(out);
            // The main program (empty name) is the global scope, which RTLD_NEXT covered.
            if (info->dlpi_name == nullptr || info->dlpi_name[0] == '\0') return 0;
            try {  // nothing may unwind through the C library
                p->list.emplace_back(info->dlpi_name);
            } catch (...) {
                p->failed = true;
                return 1;
            }
            return 0;
        },
        &paths);
    if (paths.failed) return {};
    for (const std::string& path : paths.list) {
        if (is_self_file(path.c_str())) continue;
        void* handle = dlopen(path.c_str(), RTLD_LAZY | RTLD_NOLOAD);
        if (handle == nullptr) continue;
        void* fn = dlsym(handle, name);
        if (fn != nullptr && !inside_self(fn)) return {fn, "loaded library"};  // handle kept: fn stays mapped
        dlclose(handle);
    }
    return {};
}

}  // namespace outboard::shim
