// Pipes (OpenCL 2.0): made on the server where a device of the context has them, else refused
// with OpenCL 3.0's answer. Only kernels touch a pipe's data, so besides creation and its info
// a pipe is just a memory object to pass as a kernel argument.
#include "shims/opencl/api.hpp"
#include "shims/opencl/registry.hpp"

namespace outboard::opencl {

cl_mem CL_API_CALL Api::clCreatePipe(cl_context context, cl_mem_flags flags, cl_uint pipe_packet_size,
                                     cl_uint pipe_max_packets, const cl_pipe_properties* properties,
                                     cl_int* errcode_ret) {
  if (!valid(context)) return fail_with<cl_mem>(CL_INVALID_CONTEXT, errcode_ret);
  if (flags & ~cl_mem_flags(CL_MEM_READ_WRITE | CL_MEM_HOST_NO_ACCESS)) return fail_with<cl_mem>(CL_INVALID_VALUE, errcode_ret);
  if (properties && *properties) return fail_with<cl_mem>(CL_INVALID_VALUE, errcode_ret);
  cl_uint max_packet = 0;
  for (cl_device_id d : context->devices)
    if (d->value<cl_bool>(CL_DEVICE_PIPE_SUPPORT, CL_FALSE))
      max_packet = std::max(max_packet, d->value<cl_uint>(CL_DEVICE_PIPE_MAX_PACKET_SIZE, 0));
  if (max_packet == 0) return fail_with<cl_mem>(CL_INVALID_OPERATION, errcode_ret);
  if (pipe_packet_size == 0 || pipe_packet_size > max_packet || pipe_max_packets == 0)
    return fail_with<cl_mem>(CL_INVALID_PIPE_SIZE, errcode_ret);
  if (flags == 0) flags = CL_MEM_READ_WRITE | CL_MEM_HOST_NO_ACCESS;
  auto* m = new _cl_mem;
  m->context = context;
  m->id = new_id();
  m->type = CL_MEM_OBJECT_PIPE;
  m->flags = flags;
  m->size = size_t(pipe_packet_size) * pipe_max_packets;
  m->packet_size = pipe_packet_size;
  m->max_packets = pipe_max_packets;
  if (!context->channel().post(wire::ClCreatePipe{m->id, context->id, flags, pipe_packet_size, pipe_max_packets})) {
    delete m;
    return fail_with<cl_mem>(CL_OUT_OF_RESOURCES, errcode_ret);
  }
  context->retain();
  registry_add(m);
  return fail_with<cl_mem>(CL_SUCCESS, errcode_ret, m);
}

cl_int CL_API_CALL Api::clGetPipeInfo(cl_mem pipe, cl_pipe_info param_name, size_t param_value_size, void* param_value,
                                      size_t* param_value_size_ret) {
  if (!valid(pipe) || pipe->type != CL_MEM_OBJECT_PIPE) return CL_INVALID_MEM_OBJECT;
  auto n = param_value_size;
  auto p = param_value;
  auto r = param_value_size_ret;
  switch (param_name) {
    case CL_PIPE_PACKET_SIZE: return answer_value(pipe->packet_size, n, p, r);
    case CL_PIPE_MAX_PACKETS: return answer_value(pipe->max_packets, n, p, r);
    case CL_PIPE_PROPERTIES: return answer(nullptr, 0, n, p, r);
    default: return CL_INVALID_VALUE;
  }
}

}  // namespace outboard::opencl
