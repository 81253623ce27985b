// What a shim library needs to find the real library it stands in for without finding itself
// (the compat directory's libblas.so.3 / liblapack.so.3 are the shim under another name).
// Compiled into each shim (self_library.cpp is one of its sources), so "self" is that shim.
// Safe on any thread at any time, also during static destruction: no exceptions, no heap.
#pragma once

namespace outboard::shim {

// Whether `path` names this library (after resolving links).
bool is_self_file(const char* path) noexcept;
// Whether `addr` (a symbol found by dlsym, say) lies in this library.
bool inside_self(const void* addr) noexcept;
// dlopen(path, RTLD_NOW | RTLD_LOCAL), or nullptr if that fails or loads this library.
void* open_real(const char* path) noexcept;

}  // namespace outboard::shim
