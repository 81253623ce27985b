// The dispatch table every object carries, and the ICD's exported entry points (cl_khr_icd):
// clIcdGetPlatformIDsKHR, clGetExtensionFunctionAddress and clGetPlatformInfo. The table's slots
// come from the Khronos header's own list (generated: dispatch_slots.inc); a slot the ICD does
// not implement (window-system sharing, ...) gets a function of the slot's exact type that
// answers CL_INVALID_OPERATION, so no call through the table ever reaches a null pointer.
#include <cstdlib>
#include <tuple>
#include <string_view>
#include <type_traits>

#include "shims/opencl/api.hpp"

namespace outboard::opencl {
namespace {

template <class Fn>
struct Unsupported;
template <class R, class... Args>
struct Unsupported<R CL_API_CALL(Args...)> {
  static R CL_API_CALL call(Args... args) {
    if constexpr (std::is_same_v<R, cl_int>) {
      return CL_INVALID_OPERATION;
    } else {
      // Functions that make an object report through their last argument, errcode_ret.
      auto last = std::get<sizeof...(Args) - 1>(std::tuple<Args...>(args...));
      if constexpr (std::is_same_v<decltype(last), cl_int*>)
        if (last) *last = CL_INVALID_OPERATION;
      return R{};
    }
  }
};

template <class Slot>
constexpr Slot unsupported() {
  if constexpr (std::is_pointer_v<Slot> && std::is_function_v<std::remove_pointer_t<Slot>>)
    return &Unsupported<std::remove_pointer_t<Slot>>::call;
  else
    return Slot{};  // a slot the header leaves untyped on this system (Direct3D's): null
}

#define OB_DISPATCH_SLOT(name)                                  \
  template <class I>                                            \
  constexpr bool has_##name() {                                 \
    return requires { &I::name; };                              \
  }                                                             \
  template <class I>                                            \
  constexpr auto slot_##name() {                                \
    using Slot = decltype(cl_icd_dispatch::name);               \
    if constexpr (requires { &I::name; })                       \
      return static_cast<Slot>(&I::name);                       \
    else                                                        \
      return unsupported<Slot>();                               \
  }
#include "shims/opencl/dispatch_slots.inc"
#undef OB_DISPATCH_SLOT

cl_icd_dispatch make_dispatch() {
  cl_icd_dispatch d{};
#define OB_DISPATCH_SLOT(name) d.name = slot_##name<Api>();
#include "shims/opencl/dispatch_slots.inc"
#undef OB_DISPATCH_SLOT
  return d;
}

}  // namespace

const cl_icd_dispatch kDispatch = make_dispatch();

// What clGetExtensionFunctionAddress answers: the ICD's own entry, and the entry points it
// implements (a program may ask for core functions too).
void* function_address(const char* name) {
  if (!name) return nullptr;
  const std::string_view n(name);
  if (n == "clIcdGetPlatformIDsKHR") return reinterpret_cast<void*>(&::clIcdGetPlatformIDsKHR);
#define OB_DISPATCH_SLOT(name)                     \
  if (has_##name<Api>() && n == #name) return reinterpret_cast<void*>(kDispatch.name);
#include "shims/opencl/dispatch_slots.inc"
#undef OB_DISPATCH_SLOT
  return nullptr;
}

void* CL_API_CALL Api::clGetExtensionFunctionAddress(const char* func_name) { return function_address(func_name); }
void* CL_API_CALL Api::clGetExtensionFunctionAddressForPlatform(cl_platform_id platform, const char* func_name) {
  return valid(platform) ? function_address(func_name) : nullptr;
}

}  // namespace outboard::opencl

// The three symbols the ICD loader looks up in an ICD library.
extern "C" {
__attribute__((visibility("default"))) CL_API_ENTRY cl_int CL_API_CALL
clIcdGetPlatformIDsKHR(cl_uint num_entries, cl_platform_id* platforms, cl_uint* num_platforms) {
  // Inside an Outboard server the host's real platforms are served; its own remote ones are not.
  if (std::getenv("OUTBOARD_ICD_DISABLE")) {
    if (num_platforms) *num_platforms = 0;
    return CL_PLATFORM_NOT_FOUND_KHR;
  }
  cl_int rc = outboard::opencl::Api::clGetPlatformIDs(num_entries, platforms, num_platforms);
  if (rc == CL_SUCCESS && num_platforms && *num_platforms == 0) return CL_PLATFORM_NOT_FOUND_KHR;
  return rc;
}
__attribute__((visibility("default"))) CL_API_ENTRY void* CL_API_CALL clGetExtensionFunctionAddress(const char* name) {
  return outboard::opencl::function_address(name);
}
__attribute__((visibility("default"))) CL_API_ENTRY cl_int CL_API_CALL
clGetPlatformInfo(cl_platform_id platform, cl_platform_info param_name, size_t param_value_size, void* param_value,
                  size_t* param_value_size_ret) {
  return outboard::opencl::Api::clGetPlatformInfo(platform, param_name, param_value_size, param_value,
                                                  param_value_size_ret);
}
}
