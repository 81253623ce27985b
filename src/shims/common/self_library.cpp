#include "shims/common/self_library.hpp"

#include <dlfcn.h>
#include <link.h>

#include <climits>
#include <cstdlib>
#include <cstring>

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

}  // namespace

bool is_self_file(const char* path) noexcept {
    char real[PATH_MAX];
    return path != nullptr && self().path[0] != '\0' && realpath(path, real) != nullptr &&
           std::strcmp(real, self().path) == 0;
}

bool inside_self(const void* addr) noexcept {
    Dl_info info{};
    if (dladdr(addr, &info) == 0) return false;
    return info.dli_fbase == self().base || is_self_file(info.dli_fname);
}

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

}  // namespace outboard::shim
