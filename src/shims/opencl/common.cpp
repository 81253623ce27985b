// What the ICD's files share: info answers, the registry of live handles, the platforms of every
// server, and failures reported late.
#include <cstdio>
#include <typeinfo>
#include <unordered_map>

#include "shims/opencl/api.hpp"
#include "shims/opencl/registry.hpp"

namespace outboard::opencl {

cl_int answer(const void* value, size_t size, size_t n, void* p, size_t* ret) {
  if (p) {
    if (n < size) return CL_INVALID_VALUE;
    if (size) std::memcpy(p, value, size);
  }
  if (ret) *ret = size;
  return CL_SUCCESS;
}

cl_int answer_text(const std::string& s, size_t n, void* p, size_t* ret) { return answer(s.c_str(), s.size() + 1, n, p, ret); }

namespace {
std::mutex registry_mu;
std::unordered_map<const void*, const std::type_info*>& live() {
  static auto* s = new std::unordered_map<const void*, const std::type_info*>();  // never destroyed: handles outlive static destructors
  return *s;
}
// The registry first: a handle may be any bits (clSetKernelArg's values are checked this way).
template <class T>
bool ours(T h) {
  if (!h) return false;
  std::lock_guard lk(registry_mu);
  auto it = live().find(h);
  return it != live().end() && *it->second == typeid(std::remove_pointer_t<T>) && h->dispatch == &kDispatch;
}
}  // namespace

void registry_add_typed(const void* h, const std::type_info& type) {
  std::lock_guard lk(registry_mu);
  live()[h] = &type;
}
void registry_remove(const void* h) {
  std::lock_guard lk(registry_mu);
  live().erase(h);
}

bool valid(cl_context c) { return ours(c); }
bool valid(cl_command_queue q) { return ours(q); }
bool valid(cl_mem m) { return ours(m); }
bool valid(cl_program p) { return ours(p); }
bool valid(cl_kernel k) { return ours(k); }
bool valid(cl_event e) { return ours(e); }
bool valid(cl_sampler s) { return ours(s); }
bool valid(cl_device_id d) { return ours(d); }
bool valid(cl_platform_id p) { return ours(p); }

namespace {
std::atomic<ClId> next_id{wire::kFirstClientId};
}  // namespace

ClId new_id() { return next_id.fetch_add(1); }
ClId new_ids(uint32_t count) { return next_id.fetch_add(count); }

bool has_device(const std::vector<cl_device_id>& devices, cl_device_id d) {
  return std::find(devices.begin(), devices.end(), d) != devices.end();
}

// ---- late failures ----
namespace {
std::mutex failures_mu;
std::unordered_map<ClId, cl_int>& failures() {
  static auto* f = new std::unordered_map<ClId, cl_int>();
  return *f;
}
}  // namespace

void note_failure(ClId id, cl_int code) {
  std::lock_guard lk(failures_mu);
  failures().emplace(id, code);
}

cl_int take_failure(ClId id) {
  std::lock_guard lk(failures_mu);
  auto it = failures().find(id);
  if (it == failures().end()) return CL_SUCCESS;
  cl_int code = it->second;
  failures().erase(it);
  return code;
}

// ---- platforms ----
namespace {

std::map<cl_uint, wire::ClBlob> info_map(const std::vector<wire::ClInfoValue>& values) {
  std::map<cl_uint, wire::ClBlob> m;
  for (const auto& v : values) m[v.param] = v.value;
  return m;
}

wire::ClBlob text_blob(const std::string& s) {
  wire::ClBlob b(s.size() + 1);
  std::memcpy(b.data(), s.c_str(), s.size() + 1);
  return b;
}

std::string blob_text(const wire::ClBlob& b) {
  std::string s(reinterpret_cast<const char*>(b.data()), b.size());
  while (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}

}  // namespace

const std::vector<cl_platform_id>& platforms() {
  static auto* all = [] {
    auto* out = new std::vector<cl_platform_id>();
    std::vector<std::string> errors;
    for (const auto& channel : client::opencl::opencl_channels(&errors)) {
      channel->set_notice_handler(handle_notice);
      Channel* raw = channel.get();
      channel->on_failure([raw](const std::string& why) { channel_failed(raw, why); });
      for (const auto& pe : channel->platforms().platforms) {
        auto* p = new _cl_platform_id;
        p->channel = channel;
        p->id = pe.id;
        p->info = info_map(pe.info);
        // "<native name> [host:port]": a program choosing by name sees where a platform is.
        p->info[CL_PLATFORM_NAME] = text_blob(blob_text(p->info[CL_PLATFORM_NAME]) + " [" + channel->address() + "]");
        p->info[CL_PLATFORM_ICD_SUFFIX_KHR] = text_blob("OB");
        p->info[kPlatformServerAddress] = text_blob(channel->address());
        for (const auto& de : pe.devices) {
          auto* d = new _cl_device_id;
          d->platform = p;
          d->id = de.id;
          d->info = info_map(de.info);
          d->info[CL_DEVICE_PLATFORM] = wire::ClBlob(sizeof(cl_platform_id));
          std::memcpy(d->info[CL_DEVICE_PLATFORM].data(), &p, sizeof p);
          d->info[CL_DEVICE_PARENT_DEVICE] = wire::ClBlob(sizeof(cl_device_id));  // null: a root device
          d->type = d->value<cl_device_type>(CL_DEVICE_TYPE);
          registry_add(d);
          p->devices.push_back(d);
        }
        registry_add(p);
        out->push_back(p);
      }
    }
    if (out->empty() && !errors.empty() && std::getenv("OUTBOARD_QUIET") == nullptr)
      for (const auto& e : errors) std::fprintf(stderr, "outboard: OpenCL: no platforms from %s\n", e.c_str());
    return out;
  }();
  return *all;
}

}  // namespace outboard::opencl
