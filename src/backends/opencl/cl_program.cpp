// Programs and kernels: made, built, asked about (the ICD's program.cpp).
#include <cctype>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>

#include "backends/opencl/cl_session.hpp"
#include "backends/opencl/native_quirks.hpp"

namespace outboard::backends::opencl {

void ClSession::handle(const wire::ClRequest& r, const wire::ClGetInfo& q, transport::Buffer&, ClId&, ClId&) {
  if (!r.call_id) throw ClFail{CL_INVALID_VALUE, "an info query must be answered"};
  wire::ClBlob value;
  auto ask = [&](auto fn) {
    size_t size = 0;
    check(fn(0, nullptr, &size), "the info query");
    if (size > (uint64_t(1) << 30)) throw ClFail{CL_OUT_OF_RESOURCES, "info value too large"};
    value.resize(size);
    check(fn(size, value.data(), nullptr), "the info query");
  };
  switch (static_cast<wire::ClInfo>(q.what)) {
    case wire::ClInfo::program: {
      cl_program p = handle_of<cl_program>(q.object, Kind::program);
      if (q.param == CL_PROGRAM_CONTEXT || q.param == CL_PROGRAM_DEVICES)
        throw ClFail{CL_INVALID_VALUE, "handle-valued program info is the client's"};
      if (q.param == CL_PROGRAM_BINARIES) {
        value = program_binaries(p);
        break;
      }
      ask([&](size_t s, void* v, size_t* rs) { return clGetProgramInfo(p, q.param, s, v, rs); });
      break;
    }
    case wire::ClInfo::program_build: {
      Object& o = find(q.object, {Kind::program});
      cl_program p = static_cast<cl_program>(o.handle);
      cl_device_id d = device(q.device);
      if (!o.build_refusal.empty() && q.param == CL_PROGRAM_BUILD_LOG) {
        const std::string& log = o.build_refusal;
        value.assign(reinterpret_cast<const std::byte*>(log.c_str()), reinterpret_cast<const std::byte*>(log.c_str()) + log.size() + 1);
        break;
      }
      if (!o.build_refusal.empty() && q.param == CL_PROGRAM_BUILD_STATUS) {
        const cl_build_status status = CL_BUILD_ERROR;
        value.resize(sizeof status);
        std::memcpy(value.data(), &status, sizeof status);
        break;
      }
      ask([&](size_t s, void* v, size_t* rs) { return clGetProgramBuildInfo(p, d, q.param, s, v, rs); });
      // Built here with an option the client did not give: its own options (where built at all).
      // (A linked program's are its link options, as the client gave them.)
      if (q.param == CL_PROGRAM_BUILD_OPTIONS && o.from_source && o.arg_info_added && value.size() > 1)
        value.assign(reinterpret_cast<const std::byte*>(o.client_options.c_str()),
                     reinterpret_cast<const std::byte*>(o.client_options.c_str()) + o.client_options.size() + 1);
      break;
    }
    case wire::ClInfo::kernel: {
      cl_kernel k = handle_of<cl_kernel>(q.object, Kind::kernel);
      if (q.param == CL_KERNEL_CONTEXT || q.param == CL_KERNEL_PROGRAM)
        throw ClFail{CL_INVALID_VALUE, "handle-valued kernel info is the client's"};
      ask([&](size_t s, void* v, size_t* rs) { return clGetKernelInfo(k, q.param, s, v, rs); });
      break;
    }
    case wire::ClInfo::kernel_work_group: {
      cl_kernel k = handle_of<cl_kernel>(q.object, Kind::kernel);
      cl_device_id d = q.device ? device(q.device) : nullptr;
      ask([&](size_t s, void* v, size_t* rs) { return clGetKernelWorkGroupInfo(k, d, q.param, s, v, rs); });
      break;
    }
    case wire::ClInfo::kernel_arg: {
      Object& o = find(q.object, {Kind::kernel});
      cl_kernel k = static_cast<cl_kernel>(o.handle);
      cl_context ctx = nullptr;
      clGetKernelInfo(k, CL_KERNEL_CONTEXT, sizeof ctx, &ctx, nullptr);  // the client may have let its go
      if (o.arg_info_added && ctx && hides_arg_info(ctx))
        throw ClFail{CL_KERNEL_ARG_INFO_NOT_AVAILABLE, "the program was built without -cl-kernel-arg-info"};
      ask([&](size_t s, void* v, size_t* rs) { return clGetKernelArgInfo(k, q.index, q.param, s, v, rs); });
      break;
    }
    default:
      throw ClFail{CL_INVALID_VALUE, "unknown info family"};
  }
  reply_data(r.call_id, value);
}

void ClSession::handle(const wire::ClRequest& r, const wire::ClCreateProgramSource& c, transport::Buffer& payload,
                       ClId& created, ClId&) {
  created = c.id;
  check_new(c.id);
  cl_context ctx = handle_of<cl_context>(c.context, Kind::context);
  if (payload.size() != r.payload_bytes || r.payload_bytes == 0) throw ClFail{CL_INVALID_VALUE, "no source"};
  const char* text = reinterpret_cast<const char*>(payload.data());
  size_t length = payload.size();
  cl_int rc = CL_SUCCESS;
  cl_program p = clCreateProgramWithSource(ctx, 1, &text, &length, &rc);
  check(rc, "clCreateProgramWithSource");
  Object o{Kind::program, p, 0, 0, c.context};
  o.from_source = true;
  o.build_refusal = build_refusal_for(ctx, std::string_view(text, length));
  insert(c.id, o);
}

void ClSession::handle(const wire::ClRequest& r, const wire::ClCreateProgramBinary& c, transport::Buffer& payload,
                       ClId& created, ClId&) {
  created = c.id;
  if (!r.call_id) throw ClFail{CL_INVALID_VALUE, "a program from binaries is answered"};
  check_new(c.id);
  cl_context ctx = handle_of<cl_context>(c.context, Kind::context);
  std::vector<cl_device_id> ds = devices(c.devices);
  if (ds.empty() || c.sizes.size() != ds.size()) throw ClFail{CL_INVALID_VALUE, "one binary per device"};
  std::vector<const unsigned char*> bins;
  uint64_t offset = 0;
  for (uint64_t s : c.sizes) {
    if (s == 0 || add(offset, s) > payload.size()) throw ClFail{CL_INVALID_VALUE, "binary sizes do not match the data"};
    bins.push_back(reinterpret_cast<const unsigned char*>(payload.data()) + offset);
    offset += s;
  }
  if (offset != payload.size()) throw ClFail{CL_INVALID_VALUE, "binary sizes do not match the data"};
  std::vector<size_t> sizes(c.sizes.begin(), c.sizes.end());
  std::vector<cl_int> status(ds.size(), CL_SUCCESS);
  cl_int rc = CL_SUCCESS;
  cl_program p = clCreateProgramWithBinary(ctx, static_cast<cl_uint>(ds.size()), ds.data(), sizes.data(), bins.data(),
                                           status.data(), &rc);
  wire::ClBlob data(status.size() * sizeof(cl_int));
  std::memcpy(data.data(), status.data(), data.size());
  if (rc != CL_SUCCESS) {
    out_->reply(r.call_id, rc, data);
    return;
  }
  insert(c.id, Object{Kind::program, p, 0, 0, c.context});
  out_->reply(r.call_id, CL_SUCCESS, data);
}

void ClSession::handle(const wire::ClRequest&, const wire::ClCreateProgramBuiltIn& c, transport::Buffer&,
                       ClId& created, ClId&) {
  created = c.id;
  check_new(c.id);
  cl_context ctx = handle_of<cl_context>(c.context, Kind::context);
  std::vector<cl_device_id> ds = devices(c.devices);
  cl_int rc = CL_SUCCESS;
  cl_program p = clCreateProgramWithBuiltInKernels(ctx, static_cast<cl_uint>(ds.size()), ds.data(), c.names.c_str(), &rc);
  check(rc, "clCreateProgramWithBuiltInKernels");
  insert(c.id, Object{Kind::program, p, 0, 0, c.context});
}

void ClSession::handle(const wire::ClRequest& r, const wire::ClBuildProgram& b, transport::Buffer&, ClId& created,
                       ClId&) {
  std::vector<cl_device_id> ds = devices(b.devices);
  const cl_device_id* dp = ds.empty() ? nullptr : ds.data();
  const cl_uint nd = static_cast<cl_uint>(ds.size());
  cl_program p = nullptr;
  cl_int rc = CL_SUCCESS;
  switch (static_cast<wire::ClBuildStep>(b.step)) {
    case wire::ClBuildStep::build:
    case wire::ClBuildStep::compile: {
      Object& o = find(b.program, {Kind::program});
      p = static_cast<cl_program>(o.handle);
      if (b.header_names.size() != b.inputs.size()) throw ClFail{CL_INVALID_VALUE, "one name per header"};
      if (!o.build_refusal.empty()) {  // the platform would crash on it: its log says why
        if (!r.call_id) throw ClFail{CL_INVALID_VALUE, "a build is answered"};
        counters_.failures++;
        out_->reply(r.call_id, static_cast<wire::ClBuildStep>(b.step) == wire::ClBuildStep::build ? CL_BUILD_PROGRAM_FAILURE
                                                                                                 : CL_COMPILE_PROGRAM_FAILURE,
                    {});
        return;
      }
      std::vector<cl_program> headers;
      std::vector<const char*> names;
      for (size_t i = 0; i < b.inputs.size(); ++i) {
        headers.push_back(handle_of<cl_program>(b.inputs[i], Kind::program));
        names.push_back(b.header_names[i].c_str());
      }
      auto attempt = [&](const std::string& options) {
        if (static_cast<wire::ClBuildStep>(b.step) == wire::ClBuildStep::build)
          return clBuildProgram(p, nd, dp, options.c_str(), nullptr, nullptr);
        return clCompileProgram(p, nd, dp, options.c_str(), static_cast<cl_uint>(headers.size()),
                                headers.empty() ? nullptr : headers.data(), names.empty() ? nullptr : names.data(),
                                nullptr, nullptr);
      };
      rc = attempt(build_options(o, b.options));
      // The option added can break a build (NVIDIA's 580 driver emits PTX that ptxas refuses for
      // a kernel taking a struct): once more as the client asked, whose log the client then sees.
      if (rc != CL_SUCCESS && o.arg_info_added) {
        o.arg_info_added = false;
        rc = attempt(b.options);
      }
      break;
    }
    case wire::ClBuildStep::link: {
      created = b.program;
      check_new(b.program);
      cl_context ctx = handle_of<cl_context>(b.context, Kind::context);
      std::vector<cl_program> inputs;
      bool arg_info_added = false;
      for (ClId id : b.inputs) {
        Object& in = find(id, {Kind::program});
        inputs.push_back(static_cast<cl_program>(in.handle));
        arg_info_added |= in.arg_info_added;
      }
      if (inputs.empty()) throw ClFail{CL_INVALID_VALUE, "nothing to link"};
      p = clLinkProgram(ctx, nd, dp, b.options.c_str(), static_cast<cl_uint>(inputs.size()), inputs.data(), nullptr,
                        nullptr, &rc);
      if (p) {
        Object o{Kind::program, p, 0, 0, b.context};
        o.arg_info_added = arg_info_added;  // its kernels' argument info came from the inputs
        insert(b.program, o);
      }
      break;
    }
    default:
      throw ClFail{CL_INVALID_VALUE, "unknown build step"};
  }
  if (!r.call_id) throw ClFail{CL_INVALID_VALUE, "a build is answered"};
  if (rc != CL_SUCCESS) {
    counters_.failures++;
    out_->reply(r.call_id, rc, {});
    return;
  }
  reply_payload(r.call_id, wire::encode_cl(kernels_of(p)));
}

wire::ClBuildResult ClSession::kernels_of(cl_program p) {
  wire::ClBuildResult out;
  cl_uint n = 0;
  if (clCreateKernelsInProgram(p, 0, nullptr, &n) != CL_SUCCESS || n == 0) return out;
  std::vector<cl_kernel> ks(n);
  if (clCreateKernelsInProgram(p, n, ks.data(), nullptr) != CL_SUCCESS) return out;
  for (cl_kernel k : ks) {
    wire::ClKernelEntry e;
    size_t size = 0;
    clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, 0, nullptr, &size);
    e.name.resize(size);
    clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, size, e.name.data(), nullptr);
    if (!e.name.empty() && e.name.back() == '\0') e.name.pop_back();
    cl_uint args = 0;
    clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof args, &args, nullptr);
    for (cl_uint a = 0; a < args; ++a) {
      wire::ClKernelArgInfo ai;
      cl_kernel_arg_address_qualifier addr = 0;
      cl_kernel_arg_access_qualifier access = 0;
      cl_kernel_arg_type_qualifier tq = 0;
      if (clGetKernelArgInfo(k, a, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof addr, &addr, nullptr) == CL_SUCCESS)
        ai.address = addr;
      if (clGetKernelArgInfo(k, a, CL_KERNEL_ARG_ACCESS_QUALIFIER, sizeof access, &access, nullptr) == CL_SUCCESS)
        ai.access = access;
      if (clGetKernelArgInfo(k, a, CL_KERNEL_ARG_TYPE_QUALIFIER, sizeof tq, &tq, nullptr) == CL_SUCCESS)
        ai.type_qualifier = tq;
      for (auto [param, into] : {std::pair{CL_KERNEL_ARG_TYPE_NAME, &ai.type_name}, std::pair{CL_KERNEL_ARG_NAME, &ai.name}}) {
        size_t s = 0;
        if (clGetKernelArgInfo(k, a, param, 0, nullptr, &s) != CL_SUCCESS || s == 0 || s > 1024) continue;
        into->resize(s);
        clGetKernelArgInfo(k, a, param, s, into->data(), nullptr);
        if (into->back() == '\0') into->pop_back();
      }
      e.args.push_back(std::move(ai));
    }
    out.kernels.push_back(std::move(e));
    clReleaseKernel(k);
  }
  return out;
}

namespace {

bool has_option(const std::string& options, const std::string& option) {
  size_t at = 0;
  while ((at = options.find(option, at)) != std::string::npos) {
    const size_t end = at + option.size();
    if ((at == 0 || std::isspace(static_cast<unsigned char>(options[at - 1]))) &&
        (end == options.size() || std::isspace(static_cast<unsigned char>(options[end]))))
      return true;
    at = end;
  }
  return false;
}

}  // namespace

std::string ClSession::build_options(Object& o, const std::string& client_options) {
  constexpr const char* kArgInfo = "-cl-kernel-arg-info";
  o.arg_info_added = o.from_source && !has_option(client_options, kArgInfo);
  if (!o.arg_info_added) return client_options;
  o.client_options = client_options;
  return client_options.empty() ? kArgInfo : client_options + " " + kArgInfo;
}

namespace {

// The first device of a program, or of a context.
cl_device_id first_device(cl_program p) {
  cl_uint n = 0;
  if (clGetProgramInfo(p, CL_PROGRAM_NUM_DEVICES, sizeof n, &n, nullptr) != CL_SUCCESS || n == 0) return nullptr;
  std::vector<cl_device_id> ds(n);
  if (clGetProgramInfo(p, CL_PROGRAM_DEVICES, n * sizeof(cl_device_id), ds.data(), nullptr) != CL_SUCCESS) return nullptr;
  return ds.front();
}
cl_device_id first_device(cl_context ctx) {
  size_t bytes = 0;
  if (clGetContextInfo(ctx, CL_CONTEXT_DEVICES, 0, nullptr, &bytes) != CL_SUCCESS || bytes < sizeof(cl_device_id))
    return nullptr;
  std::vector<cl_device_id> ds(bytes / sizeof(cl_device_id));
  if (clGetContextInfo(ctx, CL_CONTEXT_DEVICES, bytes, ds.data(), nullptr) != CL_SUCCESS) return nullptr;
  return ds.front();
}
cl_platform_id platform_of_device(cl_device_id d) {
  cl_platform_id platform = nullptr;
  if (d) clGetDeviceInfo(d, CL_DEVICE_PLATFORM, sizeof platform, &platform, nullptr);
  return platform;
}

}  // namespace

std::string ClSession::build_refusal_for(cl_context ctx, std::string_view source) {
  cl_platform_id platform = platform_of_device(first_device(ctx));
  return platform ? build_refusal(platform_text(platform, CL_PLATFORM_NAME), source) : std::string();
}

bool ClSession::hides_arg_info(cl_context ctx) {
  cl_device_id d = first_device(ctx);
  cl_platform_id platform = platform_of_device(d);
  if (!platform) return true;
  static std::mutex mu;
  static std::map<cl_platform_id, bool> known;
  std::lock_guard lk(mu);
  if (auto it = known.find(platform); it != known.end()) return it->second;
  // A build of the smallest kernel with an argument, without the option.
  bool hides = true;
  const char* source = "kernel void outboard_arg_info_probe(global int* a) { a[0] = 0; }";
  cl_int rc = CL_SUCCESS;
  if (cl_program p = clCreateProgramWithSource(ctx, 1, &source, nullptr, &rc)) {
    if (clBuildProgram(p, 1, &d, "", nullptr, nullptr) == CL_SUCCESS) {
      if (cl_kernel k = clCreateKernel(p, "outboard_arg_info_probe", &rc)) {
        cl_kernel_arg_address_qualifier q = 0;
        hides = clGetKernelArgInfo(k, 0, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof q, &q, nullptr) != CL_SUCCESS;
        clReleaseKernel(k);
      }
    }
    clReleaseProgram(p);
  }
  known[platform] = hides;
  return hides;
}

void ClSession::handle(const wire::ClRequest& r, const wire::ClSetSpecConstant& s, transport::Buffer&, ClId&, ClId&) {
  if (!r.call_id) throw ClFail{CL_INVALID_VALUE, "a specialization constant is answered"};
  Object& o = find(s.program, {Kind::program});
  cl_program p = static_cast<cl_program>(o.handle);
  // Not asked of the platform for other programs (the ICD answers those): PoCL 3.1 aborts on one
  // not yet built.
  if (!o.from_il) throw ClFail{CL_INVALID_PROGRAM, "not a program from intermediate language"};
  // Introduced by OpenCL 2.2: a platform before it has no entry for it in its dispatch table.
  std::string version(1024, '\0');  // "OpenCL 3.0 " and the vendor's words
  cl_platform_id platform = platform_of_device(first_device(p));
  if (platform) clGetPlatformInfo(platform, CL_PLATFORM_VERSION, version.size() - 1, version.data(), nullptr);
  int major = 0, minor = 0;
  if (std::sscanf(version.c_str(), "OpenCL %d.%d", &major, &minor) != 2 || major * 10 + minor < 22) {
    out_->reply(r.call_id, CL_INVALID_OPERATION, {});
    return;
  }
  if (s.given && s.value.size() != s.size) throw ClFail{CL_INVALID_VALUE, "the constant's size and bytes differ"};
  const std::byte none{};  // a given value of no bytes: a pointer that is not null
  const void* value = !s.given ? nullptr : s.value.empty() ? &none : s.value.data();
  const cl_int rc = clSetProgramSpecializationConstant(p, s.spec_id, s.size, value);
  out_->reply(r.call_id, rc, {});
}

void ClSession::handle(const wire::ClRequest&, const wire::ClCreateKernel& c, transport::Buffer&, ClId& created,
                       ClId&) {
  created = c.id;
  check_new(c.id);
  Object& p = find(c.program, {Kind::program});
  cl_int rc = CL_SUCCESS;
  cl_kernel k = clCreateKernel(static_cast<cl_program>(p.handle), c.name.c_str(), &rc);
  check(rc, "clCreateKernel");
  Object o{Kind::kernel, k, 0, 0, p.context};
  o.arg_info_added = p.arg_info_added;
  insert(c.id, o);
}

void ClSession::handle(const wire::ClRequest&, const wire::ClCloneKernel& c, transport::Buffer&, ClId& created, ClId&) {
  created = c.id;
  check_new(c.id);
  Object& src = find(c.source, {Kind::kernel});
  cl_int rc = CL_SUCCESS;
  cl_kernel k = clCloneKernel(static_cast<cl_kernel>(src.handle), &rc);
  check(rc, "clCloneKernel");
  Object o{Kind::kernel, k, 0, 0, src.context};
  o.arg_info_added = src.arg_info_added;
  insert(c.id, o);
}

void ClSession::handle(const wire::ClRequest& r, const wire::ClCreateProgramIL& c, transport::Buffer& payload,
                       ClId& created, ClId&) {
  created = c.id;
  check_new(c.id);
  cl_context ctx = handle_of<cl_context>(c.context, Kind::context);
  if (payload.size() != r.payload_bytes || r.payload_bytes == 0) throw ClFail{CL_INVALID_VALUE, "no intermediate language"};
  cl_int rc = CL_SUCCESS;
  cl_program p = clCreateProgramWithIL(ctx, payload.data(), payload.size(), &rc);
  check(rc, "clCreateProgramWithIL");
  Object o{Kind::program, p, 0, 0, c.context};
  o.from_il = true;
  insert(c.id, o);
}

void ClSession::handle(const wire::ClRequest& r, const wire::ClGetSubGroupInfo& q, transport::Buffer&, ClId&, ClId&) {
  if (!r.call_id) throw ClFail{CL_INVALID_VALUE, "an info query must be answered"};
  cl_kernel k = handle_of<cl_kernel>(q.kernel, Kind::kernel);
  cl_device_id d = q.device ? device(q.device) : nullptr;
  if (q.input.size() > 3) throw ClFail{CL_INVALID_VALUE, "at most three input values"};
  std::vector<size_t> in(q.input.begin(), q.input.end());
  const void* ip = in.empty() ? nullptr : in.data();
  const size_t is = in.size() * sizeof(size_t);
  size_t size = 0;
  check(clGetKernelSubGroupInfo(k, d, q.param, is, ip, 0, nullptr, &size), "clGetKernelSubGroupInfo");
  if (size > wire::kMaxClBlob) throw ClFail{CL_OUT_OF_RESOURCES, "info value too large"};
  wire::ClBlob value(size);
  check(clGetKernelSubGroupInfo(k, d, q.param, is, ip, size, value.data(), nullptr), "clGetKernelSubGroupInfo");
  reply_data(r.call_id, value);
}

wire::ClBlob ClSession::program_binaries(cl_program p) {
  cl_uint devices = 0;
  check(clGetProgramInfo(p, CL_PROGRAM_NUM_DEVICES, sizeof devices, &devices, nullptr), "clGetProgramInfo");
  std::vector<size_t> sizes(devices);
  check(clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizes.size() * sizeof(size_t), sizes.data(), nullptr),
        "clGetProgramInfo");
  uint64_t total = 0;
  for (size_t s : sizes) total = add(total, s);
  if (total > (uint64_t(1) << 30)) throw ClFail{CL_OUT_OF_RESOURCES, "binaries too large"};
  wire::ClBlob all(total);
  std::vector<unsigned char*> ptrs;
  uint64_t off = 0;
  for (size_t s : sizes) {
    ptrs.push_back(s ? reinterpret_cast<unsigned char*>(all.data()) + off : nullptr);
    off += s;
  }
  check(clGetProgramInfo(p, CL_PROGRAM_BINARIES, ptrs.size() * sizeof(void*), ptrs.data(), nullptr), "clGetProgramInfo");
  return all;
}

}  // namespace outboard::backends::opencl
