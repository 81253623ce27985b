// Programs and kernels. Builds wait for the server (OpenCL's build is synchronous); their answer
// lists the program's kernels and arguments, so clCreateKernel and clSetKernelArg are checked
// here and never wait: a kernel's arguments travel with each launch.
#include <algorithm>
#include <cctype>
#include <cstring>
#include <string>

#include "shims/opencl/api.hpp"
#include "shims/opencl/registry.hpp"

namespace outboard::opencl {
namespace {

using client::opencl::Answer;
using client::opencl::Bytes;

cl_int lost_or(const Answer& a) { return a.status == client::opencl::kLost ? CL_OUT_OF_RESOURCES : a.status; }

// Whether a device takes programs in an intermediate language (SPIR-V).
bool takes_il(cl_device_id d) {
  auto it = d->info.find(CL_DEVICE_IL_VERSION);
  return it != d->info.end() && it->second.size() > 1;  // more than the empty string's 0
}

cl_program new_program(cl_context context) {
  auto* p = new _cl_program;
  p->context = context;
  p->id = new_id();
  p->devices = context->devices;
  return p;
}

cl_int device_ids(cl_program p, cl_uint n, const cl_device_id* list, wire::ClIds& ids) {
  if ((n == 0) != (list == nullptr)) return CL_INVALID_VALUE;
  for (cl_uint i = 0; i < n; ++i) {
    if (!valid(list[i]) || std::find(p->devices.begin(), p->devices.end(), list[i]) == p->devices.end())
      return CL_INVALID_DEVICE;
    ids.push_back(list[i]->id);
  }
  return CL_SUCCESS;
}

// Sends a build step and takes its answer (the program's kernels).
cl_int build_step(cl_program p, wire::ClBuildProgram b, void(CL_CALLBACK* notify)(cl_program, void*), void* data) {
  Answer a = p->context->channel().call(b);
  cl_int rc = lost_or(a);
  if (rc == CL_SUCCESS) {
    try {
      wire::ClBuildResult r = wire::decode_cl_build_result(a.payload);
      std::lock_guard lk(p->mu);
      p->kernels = std::move(r.kernels);
      p->built = true;
    } catch (const std::exception&) {
      rc = CL_OUT_OF_RESOURCES;
    }
  }
  if (notify) run_callback([notify, p, data] { notify(p, data); });
  return rc;
}

cl_int server_info(Channel& ch, wire::ClInfo what, ClId object, ClId device, cl_uint param, cl_uint index, size_t n,
                   void* value, size_t* ret) {
  Answer a = ch.call(wire::ClGetInfo{static_cast<uint8_t>(what), object, device, param, index});
  if (a.status != CL_SUCCESS) return lost_or(a);
  const wire::ClBlob& v = a.payload.empty() ? a.data : reinterpret_cast<const wire::ClBlob&>(a.payload);
  return answer(v.data(), v.size(), n, value, ret);
}

}  // namespace

cl_program CL_API_CALL Api::clCreateProgramWithSource(cl_context context, cl_uint count, const char** strings,
                                                      const size_t* lengths, cl_int* errcode_ret) {
  if (!valid(context)) return fail_with<cl_program>(CL_INVALID_CONTEXT, errcode_ret);
  if (count == 0 || !strings) return fail_with<cl_program>(CL_INVALID_VALUE, errcode_ret);
  std::string source;
  for (cl_uint i = 0; i < count; ++i) {
    if (!strings[i]) return fail_with<cl_program>(CL_INVALID_VALUE, errcode_ret);
    source.append(strings[i], lengths && lengths[i] ? lengths[i] : std::strlen(strings[i]));
  }
  cl_program p = new_program(context);
  p->source = std::move(source);
  if (!context->channel().post(wire::ClCreateProgramSource{p->id, context->id}, Bytes{p->source.data(), p->source.size()},
                               true)) {
    delete p;
    return fail_with<cl_program>(CL_OUT_OF_RESOURCES, errcode_ret);
  }
  context->retain();
  registry_add(p);
  return fail_with<cl_program>(CL_SUCCESS, errcode_ret, p);
}

cl_program CL_API_CALL Api::clCreateProgramWithBinary(cl_context context, cl_uint num_devices,
                                                      const cl_device_id* device_list, const size_t* lengths,
                                                      const unsigned char** binaries, cl_int* binary_status,
                                                      cl_int* errcode_ret) {
  if (!valid(context)) return fail_with<cl_program>(CL_INVALID_CONTEXT, errcode_ret);
  if (num_devices == 0 || !device_list || !lengths || !binaries) return fail_with<cl_program>(CL_INVALID_VALUE, errcode_ret);
  wire::ClIds ids;
  wire::ClWords sizes;
  std::vector<std::byte> all;
  for (cl_uint i = 0; i < num_devices; ++i) {
    if (!valid(device_list[i]) ||
        std::find(context->devices.begin(), context->devices.end(), device_list[i]) == context->devices.end())
      return fail_with<cl_program>(CL_INVALID_DEVICE, errcode_ret);
    if (lengths[i] == 0 || !binaries[i]) {
      if (binary_status) binary_status[i] = CL_INVALID_VALUE;
      return fail_with<cl_program>(CL_INVALID_VALUE, errcode_ret);
    }
    ids.push_back(device_list[i]->id);
    sizes.push_back(lengths[i]);
    auto* b = reinterpret_cast<const std::byte*>(binaries[i]);
    all.insert(all.end(), b, b + lengths[i]);
  }
  cl_program p = new_program(context);
  p->devices.assign(device_list, device_list + num_devices);
  p->from_binary = true;
  Answer a = context->channel().call(wire::ClCreateProgramBinary{p->id, context->id, ids, sizes}, Bytes{all.data(), all.size()});
  if (binary_status && a.data.size() == num_devices * sizeof(cl_int)) std::memcpy(binary_status, a.data.data(), a.data.size());
  if (a.status != CL_SUCCESS) {
    delete p;
    return fail_with<cl_program>(lost_or(a), errcode_ret);
  }
  context->retain();
  registry_add(p);
  return fail_with<cl_program>(CL_SUCCESS, errcode_ret, p);
}

cl_program CL_API_CALL Api::clCreateProgramWithBuiltInKernels(cl_context context, cl_uint num_devices,
                                                              const cl_device_id* device_list, const char* kernel_names,
                                                              cl_int* errcode_ret) {
  if (!valid(context)) return fail_with<cl_program>(CL_INVALID_CONTEXT, errcode_ret);
  if (num_devices == 0 || !device_list || !kernel_names) return fail_with<cl_program>(CL_INVALID_VALUE, errcode_ret);
  cl_program p = new_program(context);
  wire::ClIds ids;
  if (cl_int rc = device_ids(p, num_devices, device_list, ids); rc != CL_SUCCESS) {
    delete p;
    return fail_with<cl_program>(rc, errcode_ret);
  }
  p->devices.assign(device_list, device_list + num_devices);
  p->built_in_names = kernel_names;
  if (!context->channel().post(wire::ClCreateProgramBuiltIn{p->id, context->id, ids, kernel_names})) {
    delete p;
    return fail_with<cl_program>(CL_OUT_OF_RESOURCES, errcode_ret);
  }
  context->retain();
  registry_add(p);
  return fail_with<cl_program>(CL_SUCCESS, errcode_ret, p);
}

// Passed through to the server where a device of the context takes an intermediate language.
cl_program CL_API_CALL Api::clCreateProgramWithIL(cl_context context, const void* il, size_t length, cl_int* errcode_ret) {
  if (!valid(context)) return fail_with<cl_program>(CL_INVALID_CONTEXT, errcode_ret);
  if (!il || length == 0) return fail_with<cl_program>(CL_INVALID_VALUE, errcode_ret);
  if (std::none_of(context->devices.begin(), context->devices.end(), takes_il))
    return fail_with<cl_program>(CL_INVALID_OPERATION, errcode_ret);
  cl_program p = new_program(context);
  p->from_il = true;
  if (!context->channel().post(wire::ClCreateProgramIL{p->id, context->id}, Bytes{il, length}, true)) {
    delete p;
    return fail_with<cl_program>(CL_OUT_OF_RESOURCES, errcode_ret);
  }
  context->retain();
  registry_add(p);
  return fail_with<cl_program>(CL_SUCCESS, errcode_ret, p);
}

// Deprecated by OpenCL 3.0, which makes CL_INVALID_OPERATION its answer.
cl_int CL_API_CALL Api::clSetProgramReleaseCallback(cl_program program, void(CL_CALLBACK*)(cl_program, void*), void*) {
  return valid(program) ? CL_INVALID_OPERATION : CL_INVALID_PROGRAM;
}

// Specialization constants belong to programs from IL, whose constants the server's platform
// takes. For any other program the answer is OpenCL 3.0's, as NVIDIA's (PoCL 3.1 answers
// CL_INVALID_PROGRAM without IL, and aborts on a program not yet built).
cl_int CL_API_CALL Api::clSetProgramSpecializationConstant(cl_program program, cl_uint spec_id, size_t spec_size,
                                                           const void* spec_value) {
  if (!valid(program)) return CL_INVALID_PROGRAM;
  if (!program->from_il) {
    for (cl_device_id d : program->devices)
      if (takes_il(d)) return CL_INVALID_PROGRAM;
    return CL_INVALID_OPERATION;
  }
  if (spec_size > wire::kMaxClBlob) return CL_INVALID_VALUE;
  wire::ClSetSpecConstant c{program->id, spec_id, spec_size, spec_value != nullptr, {}};
  if (spec_value) c.value.assign(static_cast<const std::byte*>(spec_value), static_cast<const std::byte*>(spec_value) + spec_size);
  return lost_or(program->context->channel().call(c));
}

cl_int CL_API_CALL Api::clRetainProgram(cl_program program) {
  if (!valid(program)) return CL_INVALID_PROGRAM;
  program->retain();
  return CL_SUCCESS;
}

void release_program(cl_program p) {
  if (!p->release()) return;
  registry_remove(p);
  p->context->channel().post(wire::ClRelease{p->id});
  release_context(p->context);
  delete p;
}

cl_int CL_API_CALL Api::clReleaseProgram(cl_program program) {
  if (!valid(program)) return CL_INVALID_PROGRAM;
  release_program(program);
  return CL_SUCCESS;
}

cl_int CL_API_CALL Api::clBuildProgram(cl_program program, cl_uint num_devices, const cl_device_id* device_list,
                                       const char* options, void(CL_CALLBACK* pfn_notify)(cl_program, void*),
                                       void* user_data) {
  if (!valid(program)) return CL_INVALID_PROGRAM;
  if (!pfn_notify && user_data) return CL_INVALID_VALUE;
  wire::ClBuildProgram b;
  b.step = static_cast<uint8_t>(wire::ClBuildStep::build);
  b.program = program->id;
  if (cl_int rc = device_ids(program, num_devices, device_list, b.devices); rc != CL_SUCCESS) return rc;
  b.options = options ? options : "";
  {
    std::lock_guard lk(program->mu);
    if (program->kernels_attached) return CL_INVALID_OPERATION;
    program->options = b.options;
  }
  return build_step(program, std::move(b), pfn_notify, user_data);
}

cl_int CL_API_CALL Api::clCompileProgram(cl_program program, cl_uint num_devices, const cl_device_id* device_list,
                                         const char* options, cl_uint num_input_headers,
                                         const cl_program* input_headers, const char** header_include_names,
                                         void(CL_CALLBACK* pfn_notify)(cl_program, void*), void* user_data) {
  if (!valid(program)) return CL_INVALID_PROGRAM;
  if ((!pfn_notify && user_data) || ((num_input_headers == 0) != (input_headers == nullptr)) ||
      (num_input_headers && !header_include_names))
    return CL_INVALID_VALUE;
  wire::ClBuildProgram b;
  b.step = static_cast<uint8_t>(wire::ClBuildStep::compile);
  b.program = program->id;
  if (cl_int rc = device_ids(program, num_devices, device_list, b.devices); rc != CL_SUCCESS) return rc;
  b.options = options ? options : "";
  for (cl_uint i = 0; i < num_input_headers; ++i) {
    if (!valid(input_headers[i])) return CL_INVALID_PROGRAM;
    b.inputs.push_back(input_headers[i]->id);
    b.header_names.push_back(header_include_names[i] ? header_include_names[i] : "");
  }
  return build_step(program, std::move(b), pfn_notify, user_data);
}

cl_program CL_API_CALL Api::clLinkProgram(cl_context context, cl_uint num_devices, const cl_device_id* device_list,
                                          const char* options, cl_uint num_input_programs,
                                          const cl_program* input_programs,
                                          void(CL_CALLBACK* pfn_notify)(cl_program, void*), void* user_data,
                                          cl_int* errcode_ret) {
  if (!valid(context)) return fail_with<cl_program>(CL_INVALID_CONTEXT, errcode_ret);
  if ((!pfn_notify && user_data) || num_input_programs == 0 || !input_programs)
    return fail_with<cl_program>(CL_INVALID_VALUE, errcode_ret);
  cl_program p = new_program(context);
  wire::ClBuildProgram b;
  b.step = static_cast<uint8_t>(wire::ClBuildStep::link);
  b.program = p->id;
  b.context = context->id;
  if (cl_int rc = device_ids(p, num_devices, device_list, b.devices); rc != CL_SUCCESS) {
    delete p;
    return fail_with<cl_program>(rc, errcode_ret);
  }
  if (num_devices) p->devices.assign(device_list, device_list + num_devices);
  b.options = options ? options : "";
  for (cl_uint i = 0; i < num_input_programs; ++i) {
    if (!valid(input_programs[i])) {
      delete p;
      return fail_with<cl_program>(CL_INVALID_PROGRAM, errcode_ret);
    }
    b.inputs.push_back(input_programs[i]->id);
  }
  context->retain();
  registry_add(p);
  cl_int rc = build_step(p, std::move(b), pfn_notify, user_data);
  if (rc != CL_SUCCESS) {
    // The server keeps a program that failed to link (its log is asked for); one it could not make is gone.
    if (rc == CL_OUT_OF_RESOURCES) {
      release_program(p);
      return fail_with<cl_program>(rc, errcode_ret);
    }
    return fail_with<cl_program>(rc, errcode_ret, rc == CL_LINK_PROGRAM_FAILURE ? p : (release_program(p), nullptr));
  }
  return fail_with<cl_program>(CL_SUCCESS, errcode_ret, p);
}

cl_int CL_API_CALL Api::clUnloadPlatformCompiler(cl_platform_id platform) {
  return valid(platform) ? CL_SUCCESS : CL_INVALID_PLATFORM;
}
cl_int CL_API_CALL Api::clUnloadCompiler() { return CL_SUCCESS; }

cl_int CL_API_CALL Api::clGetProgramInfo(cl_program p, cl_program_info param_name, size_t param_value_size,
                                         void* param_value, size_t* param_value_size_ret) {
  if (!valid(p)) return CL_INVALID_PROGRAM;
  auto n = param_value_size;
  auto v = param_value;
  auto r = param_value_size_ret;
  switch (param_name) {
    case CL_PROGRAM_REFERENCE_COUNT: return answer_value(p->refs.load(), n, v, r);
    case CL_PROGRAM_CONTEXT: return answer_value(p->context, n, v, r);
    case CL_PROGRAM_NUM_DEVICES: return answer_value(static_cast<cl_uint>(p->devices.size()), n, v, r);
    case CL_PROGRAM_DEVICES: return answer(p->devices.data(), p->devices.size() * sizeof(cl_device_id), n, v, r);
    case CL_PROGRAM_SOURCE: return answer_text(p->source, n, v, r);
    case CL_PROGRAM_NUM_KERNELS:
    case CL_PROGRAM_KERNEL_NAMES: {
      std::lock_guard lk(p->mu);
      if (!p->built) return CL_INVALID_PROGRAM_EXECUTABLE;
      if (param_name == CL_PROGRAM_NUM_KERNELS) return answer_value(p->kernels.size(), n, v, r);
      std::string names;
      for (const auto& k : p->kernels) names += (names.empty() ? "" : ";") + k.name;
      return answer_text(names, n, v, r);
    }
    case CL_PROGRAM_BINARIES: {
      // An array of the program's pointers, one per device, each filled with its binary.
      size_t sizes_bytes = p->devices.size() * sizeof(size_t);
      std::vector<size_t> sizes(p->devices.size());
      cl_int rc = server_info(p->context->channel(), wire::ClInfo::program, p->id, 0, CL_PROGRAM_BINARY_SIZES, 0,
                              sizes_bytes, sizes.data(), nullptr);
      if (rc != CL_SUCCESS) return rc;
      if (r) *r = p->devices.size() * sizeof(unsigned char*);
      if (!v) return CL_SUCCESS;
      if (n < p->devices.size() * sizeof(unsigned char*)) return CL_INVALID_VALUE;
      Answer a = p->context->channel().call(
          wire::ClGetInfo{static_cast<uint8_t>(wire::ClInfo::program), p->id, 0, CL_PROGRAM_BINARIES, 0});
      if (a.status != CL_SUCCESS) return lost_or(a);
      const std::vector<std::byte>& all = a.payload.empty() ? a.data : a.payload;
      auto** out = static_cast<unsigned char**>(v);
      size_t off = 0;
      for (size_t i = 0; i < sizes.size(); ++i) {
        if (off + sizes[i] > all.size()) return CL_OUT_OF_RESOURCES;
        if (out[i]) std::memcpy(out[i], all.data() + off, sizes[i]);
        off += sizes[i];
      }
      return CL_SUCCESS;
    }
    default:
      return server_info(p->context->channel(), wire::ClInfo::program, p->id, 0, param_name, 0, n, v, r);
  }
}

cl_int CL_API_CALL Api::clGetProgramBuildInfo(cl_program p, cl_device_id device, cl_program_build_info param_name,
                                              size_t param_value_size, void* param_value,
                                              size_t* param_value_size_ret) {
  if (!valid(p)) return CL_INVALID_PROGRAM;
  if (!valid(device) || std::find(p->devices.begin(), p->devices.end(), device) == p->devices.end())
    return CL_INVALID_DEVICE;
  return server_info(p->context->channel(), wire::ClInfo::program_build, p->id, device->id, param_name, 0,
                     param_value_size, param_value, param_value_size_ret);
}

// ---- kernels ----

namespace {

cl_kernel make_kernel(cl_program p, const wire::ClKernelEntry& entry) {
  auto* k = new _cl_kernel;
  k->program = p;
  k->id = new_id();
  k->entry = entry;
  k->args.resize(entry.args.size());
  for (size_t i = 0; i < k->args.size(); ++i) {
    k->args[i].index = static_cast<uint32_t>(i);
    k->args[i].kind = static_cast<uint8_t>(wire::ClArgKind::none);
  }
  return k;
}

cl_int attach(cl_kernel k) {
  if (!k->program->context->channel().post(wire::ClCreateKernel{k->id, k->program->id, k->entry.name})) {
    delete k;
    return CL_OUT_OF_RESOURCES;
  }
  k->program->retain();
  {
    std::lock_guard lk(k->program->mu);
    k->program->kernels_attached++;
  }
  registry_add(k);
  return CL_SUCCESS;
}

}  // namespace

cl_kernel CL_API_CALL Api::clCreateKernel(cl_program program, const char* kernel_name, cl_int* errcode_ret) {
  if (!valid(program)) return fail_with<cl_kernel>(CL_INVALID_PROGRAM, errcode_ret);
  if (!kernel_name) return fail_with<cl_kernel>(CL_INVALID_VALUE, errcode_ret);
  wire::ClKernelEntry entry;
  {
    std::lock_guard lk(program->mu);
    if (!program->built) return fail_with<cl_kernel>(CL_INVALID_PROGRAM_EXECUTABLE, errcode_ret);
    const wire::ClKernelEntry* e = program->kernel(kernel_name);
    if (!e) return fail_with<cl_kernel>(CL_INVALID_KERNEL_NAME, errcode_ret);
    entry = *e;
  }
  cl_kernel k = make_kernel(program, entry);
  if (cl_int rc = attach(k); rc != CL_SUCCESS) return fail_with<cl_kernel>(rc, errcode_ret);
  return fail_with<cl_kernel>(CL_SUCCESS, errcode_ret, k);
}

cl_int CL_API_CALL Api::clCreateKernelsInProgram(cl_program program, cl_uint num_kernels, cl_kernel* kernels,
                                                 cl_uint* num_kernels_ret) {
  if (!valid(program)) return CL_INVALID_PROGRAM;
  std::vector<wire::ClKernelEntry> entries;
  {
    std::lock_guard lk(program->mu);
    if (!program->built) return CL_INVALID_PROGRAM_EXECUTABLE;
    entries = program->kernels;
  }
  if (kernels && num_kernels < entries.size()) return CL_INVALID_VALUE;
  if (num_kernels_ret) *num_kernels_ret = static_cast<cl_uint>(entries.size());
  if (!kernels) return CL_SUCCESS;
  for (size_t i = 0; i < entries.size(); ++i) {
    cl_kernel k = make_kernel(program, entries[i]);
    if (cl_int rc = attach(k); rc != CL_SUCCESS) return rc;
    kernels[i] = k;
  }
  return CL_SUCCESS;
}

cl_int CL_API_CALL Api::clRetainKernel(cl_kernel kernel) {
  if (!valid(kernel)) return CL_INVALID_KERNEL;
  kernel->retain();
  return CL_SUCCESS;
}

cl_int CL_API_CALL Api::clReleaseKernel(cl_kernel kernel) {
  if (!valid(kernel)) return CL_INVALID_KERNEL;
  if (!kernel->release()) return CL_SUCCESS;
  registry_remove(kernel);
  cl_program p = kernel->program;
  p->context->channel().post(wire::ClRelease{kernel->id});
  {
    std::lock_guard lk(p->mu);
    p->kernels_attached--;
  }
  delete kernel;
  release_program(p);
  return CL_SUCCESS;
}

namespace {

// The size of an argument of a built-in scalar or vector type by its name ("int", "float4",
// "unsigned char"), or 0 where the type is not one (a struct, a typedef, size_t, a pointer).
size_t builtin_type_size(std::string name) {
  if (name.rfind("unsigned ", 0) == 0) name = "u" + name.substr(9);
  size_t digits = name.size();
  while (digits > 0 && std::isdigit(static_cast<unsigned char>(name[digits - 1]))) --digits;
  size_t lanes = 1;
  if (digits < name.size()) {
    if (name.size() - digits > 2) return 0;  // the server's text: no vector has more than 16 lanes
    lanes = std::stoul(name.substr(digits));
    if (lanes != 2 && lanes != 3 && lanes != 4 && lanes != 8 && lanes != 16) return 0;
    if (lanes == 3) lanes = 4;  // a 3-vector is stored as a 4-vector
    name.resize(digits);
  }
  static const std::pair<const char*, size_t> kScalars[] = {
      {"char", 1}, {"uchar", 1}, {"short", 2}, {"ushort", 2}, {"half", 2}, {"int", 4},
      {"uint", 4}, {"float", 4}, {"long", 8},  {"ulong", 8},  {"double", 8}};
  for (auto [scalar, bytes] : kScalars)
    if (name == scalar) return bytes * lanes;
  return 0;
}

// The memory object type an image argument takes, by its type's name (0: not an image type).
cl_mem_object_type image_type_of(const std::string& type_name) {
  static const std::pair<const char*, cl_mem_object_type> kImages[] = {
      {"image1d_buffer_t", CL_MEM_OBJECT_IMAGE1D_BUFFER}, {"image1d_array_t", CL_MEM_OBJECT_IMAGE1D_ARRAY},
      {"image1d_t", CL_MEM_OBJECT_IMAGE1D},               {"image2d_array_depth_t", CL_MEM_OBJECT_IMAGE2D_ARRAY},
      {"image2d_array_msaa_t", CL_MEM_OBJECT_IMAGE2D_ARRAY}, {"image2d_array_msaa_depth_t", CL_MEM_OBJECT_IMAGE2D_ARRAY},
      {"image2d_array_t", CL_MEM_OBJECT_IMAGE2D_ARRAY},   {"image2d_depth_t", CL_MEM_OBJECT_IMAGE2D},
      {"image2d_msaa_t", CL_MEM_OBJECT_IMAGE2D},          {"image2d_msaa_depth_t", CL_MEM_OBJECT_IMAGE2D},
      {"image2d_t", CL_MEM_OBJECT_IMAGE2D},               {"image3d_t", CL_MEM_OBJECT_IMAGE3D}};
  for (auto [name, type] : kImages)
    if (type_name == name) return type;
  return 0;
}

bool is_depth(const cl_image_format& f) {
  return f.image_channel_order == CL_DEPTH || f.image_channel_order == CL_DEPTH_STENCIL;
}

}  // namespace

cl_int CL_API_CALL Api::clSetKernelArg(cl_kernel kernel, cl_uint arg_index, size_t arg_size, const void* arg_value) {
  if (!valid(kernel)) return CL_INVALID_KERNEL;
  std::lock_guard lk(kernel->mu);
  if (arg_index >= kernel->args.size()) return CL_INVALID_ARG_INDEX;
  const wire::ClKernelArgInfo& info = kernel->entry.args[arg_index];
  wire::ClArg a;
  a.index = arg_index;
  // Without argument info (a program built without -cl-kernel-arg-info may have none) a handle
  // of ours tells what the argument is.
  const bool unknown = info.type_name.empty() && info.address == 0;
  const bool is_sampler = info.type_name == "sampler_t" ||
                          (unknown && arg_value && arg_size == sizeof(cl_sampler) &&
                           valid(*static_cast<const cl_sampler*>(arg_value)));
  const bool is_image = info.type_name.rfind("image", 0) == 0;
  const bool is_pointer = !info.type_name.empty() && info.type_name.back() == '*';
  if (info.address == CL_KERNEL_ARG_ADDRESS_LOCAL || (info.address == 0 && !arg_value && arg_size > 0 && !is_image)) {
    if (arg_value) return CL_INVALID_ARG_VALUE;
    if (arg_size == 0) return CL_INVALID_ARG_SIZE;
    a.kind = static_cast<uint8_t>(wire::ClArgKind::local);
    a.local_bytes = arg_size;
  } else if (is_sampler) {
    if (arg_size != sizeof(cl_sampler)) return CL_INVALID_ARG_SIZE;
    cl_sampler s = arg_value ? *static_cast<const cl_sampler*>(arg_value) : nullptr;
    if (!valid(s)) return CL_INVALID_SAMPLER;
    a.kind = static_cast<uint8_t>(wire::ClArgKind::sampler);
    a.object = s->id;
  } else if (info.address == CL_KERNEL_ARG_ADDRESS_GLOBAL || info.address == CL_KERNEL_ARG_ADDRESS_CONSTANT || is_image ||
             (info.address == 0 && arg_size == sizeof(cl_mem) && arg_value &&
              valid(*static_cast<const cl_mem*>(arg_value)))) {
    if (arg_size != sizeof(cl_mem)) return CL_INVALID_ARG_SIZE;
    cl_mem m = arg_value ? *static_cast<const cl_mem*>(arg_value) : nullptr;
    if (m && !valid(m)) return CL_INVALID_MEM_OBJECT;
    if (!m && is_image) return CL_INVALID_ARG_VALUE;
    // Where the argument's type is known, the object's must match it: a buffer for a pointer, an
    // image of the declared kind (and depth) for an image.
    if (m && is_pointer && m->type != CL_MEM_OBJECT_BUFFER) return CL_INVALID_MEM_OBJECT;
    if (m && is_image) {
      const cl_mem_object_type want = image_type_of(info.type_name);
      const bool depth = info.type_name.find("depth") != std::string::npos;
      if ((want && m->type != want) || m->type == CL_MEM_OBJECT_BUFFER || m->type == CL_MEM_OBJECT_PIPE ||
          (want && is_depth(m->format) != depth))
        return CL_INVALID_MEM_OBJECT;
    }
    a.kind = static_cast<uint8_t>(wire::ClArgKind::mem);
    a.object = m ? m->id : 0;
  } else {
    if (!arg_value) return CL_INVALID_ARG_VALUE;
    if (arg_size == 0 || arg_size > wire::kMaxClBlob) return CL_INVALID_ARG_SIZE;
    if (const size_t bytes = builtin_type_size(info.type_name); bytes && arg_size != bytes) return CL_INVALID_ARG_SIZE;
    a.kind = static_cast<uint8_t>(wire::ClArgKind::value);
    a.value.resize(arg_size);
    std::memcpy(a.value.data(), arg_value, arg_size);
  }
  kernel->args[arg_index] = std::move(a);
  return CL_SUCCESS;
}

cl_int CL_API_CALL Api::clGetKernelInfo(cl_kernel k, cl_kernel_info param_name, size_t param_value_size,
                                        void* param_value, size_t* param_value_size_ret) {
  if (!valid(k)) return CL_INVALID_KERNEL;
  auto n = param_value_size;
  auto v = param_value;
  auto r = param_value_size_ret;
  switch (param_name) {
    case CL_KERNEL_FUNCTION_NAME: return answer_text(k->entry.name, n, v, r);
    case CL_KERNEL_NUM_ARGS: return answer_value(static_cast<cl_uint>(k->entry.args.size()), n, v, r);
    case CL_KERNEL_REFERENCE_COUNT: return answer_value(k->refs.load(), n, v, r);
    case CL_KERNEL_CONTEXT: return answer_value(k->program->context, n, v, r);
    case CL_KERNEL_PROGRAM: return answer_value(k->program, n, v, r);
    default:
      return server_info(k->program->context->channel(), wire::ClInfo::kernel, k->id, 0, param_name, 0, n, v, r);
  }
}

cl_int CL_API_CALL Api::clGetKernelWorkGroupInfo(cl_kernel k, cl_device_id device, cl_kernel_work_group_info param_name,
                                                 size_t param_value_size, void* param_value,
                                                 size_t* param_value_size_ret) {
  if (!valid(k)) return CL_INVALID_KERNEL;
  if (device && !valid(device)) return CL_INVALID_DEVICE;
  if (!device && k->program->devices.size() != 1) return CL_INVALID_DEVICE;
  return server_info(k->program->context->channel(), wire::ClInfo::kernel_work_group, k->id, device ? device->id : 0,
                     param_name, 0, param_value_size, param_value, param_value_size_ret);
}

cl_int CL_API_CALL Api::clGetKernelArgInfo(cl_kernel k, cl_uint arg_indx, cl_kernel_arg_info param_name,
                                           size_t param_value_size, void* param_value, size_t* param_value_size_ret) {
  if (!valid(k)) return CL_INVALID_KERNEL;
  if (arg_indx >= k->entry.args.size()) return CL_INVALID_ARG_INDEX;
  return server_info(k->program->context->channel(), wire::ClInfo::kernel_arg, k->id, 0, param_name, arg_indx,
                     param_value_size, param_value, param_value_size_ret);
}

cl_int CL_API_CALL Api::clGetKernelSubGroupInfo(cl_kernel k, cl_device_id device, cl_kernel_sub_group_info param_name,
                                                size_t input_value_size, const void* input_value,
                                                size_t param_value_size, void* param_value,
                                                size_t* param_value_size_ret) {
  if (!valid(k)) return CL_INVALID_KERNEL;
  if (device && (!valid(device) || !has_device(k->program->devices, device))) return CL_INVALID_DEVICE;
  if (!device && k->program->devices.size() != 1) return CL_INVALID_DEVICE;
  cl_device_id d = device ? device : k->program->devices.front();
  // OpenCL 3.0: a device without sub-groups answers no sub-group query.
  if (d->value<cl_uint>(CL_DEVICE_MAX_NUM_SUB_GROUPS, 0) == 0) return CL_INVALID_OPERATION;
  if (input_value_size % sizeof(size_t) || input_value_size > 3 * sizeof(size_t) || (input_value_size && !input_value))
    return CL_INVALID_VALUE;
  wire::ClWords input(input_value_size / sizeof(size_t));
  for (size_t i = 0; i < input.size(); ++i) input[i] = static_cast<const size_t*>(input_value)[i];
  Answer a = k->program->context->channel().call(wire::ClGetSubGroupInfo{k->id, d->id, param_name, input});
  if (a.status != CL_SUCCESS) return lost_or(a);
  const wire::ClBlob& v = a.payload.empty() ? a.data : reinterpret_cast<const wire::ClBlob&>(a.payload);
  return answer(v.data(), v.size(), param_value_size, param_value, param_value_size_ret);
}

cl_int CL_API_CALL Api::clGetKernelSubGroupInfoKHR(cl_kernel k, cl_device_id device, cl_kernel_sub_group_info param_name,
                                                   size_t input_value_size, const void* input_value,
                                                   size_t param_value_size, void* param_value,
                                                   size_t* param_value_size_ret) {
  return clGetKernelSubGroupInfo(k, device, param_name, input_value_size, input_value, param_value_size, param_value,
                                 param_value_size_ret);
}

// The core parameters are SVM's, which no device here offers (svm.cpp).
cl_int CL_API_CALL Api::clSetKernelExecInfo(cl_kernel kernel, cl_kernel_exec_info param_name, size_t, const void*) {
  if (!valid(kernel)) return CL_INVALID_KERNEL;
  if (param_name != CL_KERNEL_EXEC_INFO_SVM_PTRS && param_name != CL_KERNEL_EXEC_INFO_SVM_FINE_GRAIN_SYSTEM)
    return CL_INVALID_VALUE;
  return CL_INVALID_OPERATION;
}

cl_kernel CL_API_CALL Api::clCloneKernel(cl_kernel source_kernel, cl_int* errcode_ret) {
  if (!valid(source_kernel)) return fail_with<cl_kernel>(CL_INVALID_KERNEL, errcode_ret);
  auto* k = new _cl_kernel;
  k->program = source_kernel->program;
  k->id = new_id();
  k->entry = source_kernel->entry;
  {
    std::lock_guard lk(source_kernel->mu);
    k->args = source_kernel->args;
  }
  if (!k->program->context->channel().post(wire::ClCloneKernel{k->id, source_kernel->id})) {
    delete k;
    return fail_with<cl_kernel>(CL_OUT_OF_RESOURCES, errcode_ret);
  }
  k->program->retain();
  {
    std::lock_guard lk(k->program->mu);
    k->program->kernels_attached++;
  }
  registry_add(k);
  return fail_with<cl_kernel>(CL_SUCCESS, errcode_ret, k);
}

}  // namespace outboard::opencl
