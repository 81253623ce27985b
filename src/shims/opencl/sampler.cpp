// Samplers: checked and answered here (their state is three values), made on the server without
// waiting; kernels take them as arguments (program.cpp: clSetKernelArg).
#include "shims/opencl/api.hpp"
#include "shims/opencl/registry.hpp"

namespace outboard::opencl {
namespace {

bool known_addressing(cl_ulong a) {
  return a == CL_ADDRESS_NONE || a == CL_ADDRESS_CLAMP_TO_EDGE || a == CL_ADDRESS_CLAMP || a == CL_ADDRESS_REPEAT ||
         a == CL_ADDRESS_MIRRORED_REPEAT;
}
bool known_filter(cl_ulong f) { return f == CL_FILTER_NEAREST || f == CL_FILTER_LINEAR; }

cl_sampler make_sampler(cl_context context, cl_bool normalized, cl_addressing_mode addressing, cl_filter_mode filter,
                        std::vector<cl_sampler_properties> list, cl_int* errcode_ret) {
  bool any_images = false;
  for (cl_device_id d : context->devices) any_images |= d->value<cl_bool>(CL_DEVICE_IMAGE_SUPPORT, CL_FALSE) != 0;
  if (!any_images) return fail_with<cl_sampler>(CL_INVALID_OPERATION, errcode_ret);
  auto* s = new _cl_sampler;
  s->context = context;
  s->id = new_id();
  s->normalized = normalized ? CL_TRUE : CL_FALSE;
  s->addressing = addressing;
  s->filter = filter;
  s->property_list = std::move(list);
  wire::ClCreateSampler op{s->id, context->id,
                           {CL_SAMPLER_NORMALIZED_COORDS, s->normalized, CL_SAMPLER_ADDRESSING_MODE, addressing,
                            CL_SAMPLER_FILTER_MODE, filter}};
  if (!context->channel().post(op)) {
    delete s;
    return fail_with<cl_sampler>(CL_OUT_OF_RESOURCES, errcode_ret);
  }
  context->retain();
  registry_add(s);
  return fail_with<cl_sampler>(CL_SUCCESS, errcode_ret, s);
}

}  // namespace

cl_sampler CL_API_CALL Api::clCreateSampler(cl_context context, cl_bool normalized_coords,
                                            cl_addressing_mode addressing_mode, cl_filter_mode filter_mode,
                                            cl_int* errcode_ret) {
  if (!valid(context)) return fail_with<cl_sampler>(CL_INVALID_CONTEXT, errcode_ret);
  if (!known_addressing(addressing_mode) || !known_filter(filter_mode) ||
      (normalized_coords != CL_TRUE && normalized_coords != CL_FALSE))
    return fail_with<cl_sampler>(CL_INVALID_VALUE, errcode_ret);
  return make_sampler(context, normalized_coords, addressing_mode, filter_mode, {}, errcode_ret);
}

cl_sampler CL_API_CALL Api::clCreateSamplerWithProperties(cl_context context, const cl_sampler_properties* properties,
                                                          cl_int* errcode_ret) {
  if (!valid(context)) return fail_with<cl_sampler>(CL_INVALID_CONTEXT, errcode_ret);
  cl_bool normalized = CL_TRUE;
  cl_addressing_mode addressing = CL_ADDRESS_CLAMP;
  cl_filter_mode filter = CL_FILTER_NEAREST;
  std::vector<cl_sampler_properties> list;
  std::set<cl_sampler_properties> seen;
  for (const cl_sampler_properties* p = properties; p && *p; p += 2) {
    if (!seen.insert(p[0]).second) return fail_with<cl_sampler>(CL_INVALID_VALUE, errcode_ret);
    list.push_back(p[0]);
    list.push_back(p[1]);
    switch (p[0]) {
      case CL_SAMPLER_NORMALIZED_COORDS:
        if (p[1] != CL_TRUE && p[1] != CL_FALSE) return fail_with<cl_sampler>(CL_INVALID_VALUE, errcode_ret);
        normalized = static_cast<cl_bool>(p[1]);
        break;
      case CL_SAMPLER_ADDRESSING_MODE:
        if (!known_addressing(p[1])) return fail_with<cl_sampler>(CL_INVALID_VALUE, errcode_ret);
        addressing = static_cast<cl_addressing_mode>(p[1]);
        break;
      case CL_SAMPLER_FILTER_MODE:
        if (!known_filter(p[1])) return fail_with<cl_sampler>(CL_INVALID_VALUE, errcode_ret);
        filter = static_cast<cl_filter_mode>(p[1]);
        break;
      default:
        return fail_with<cl_sampler>(CL_INVALID_VALUE, errcode_ret);
    }
  }
  if (properties) list.push_back(0);
  return make_sampler(context, normalized, addressing, filter, std::move(list), errcode_ret);
}

cl_int CL_API_CALL Api::clRetainSampler(cl_sampler sampler) {
  if (!valid(sampler)) return CL_INVALID_SAMPLER;
  sampler->retain();
  return CL_SUCCESS;
}

cl_int CL_API_CALL Api::clReleaseSampler(cl_sampler sampler) {
  if (!valid(sampler)) return CL_INVALID_SAMPLER;
  if (!sampler->release()) return CL_SUCCESS;
  registry_remove(sampler);
  cl_context context = sampler->context;
  context->channel().post(wire::ClRelease{sampler->id});
  delete sampler;
  release_context(context);
  return CL_SUCCESS;
}

cl_int CL_API_CALL Api::clGetSamplerInfo(cl_sampler s, cl_sampler_info param_name, size_t param_value_size,
                                         void* param_value, size_t* param_value_size_ret) {
  if (!valid(s)) return CL_INVALID_SAMPLER;
  auto n = param_value_size;
  auto p = param_value;
  auto r = param_value_size_ret;
  switch (param_name) {
    case CL_SAMPLER_REFERENCE_COUNT: return answer_value(s->refs.load(), n, p, r);
    case CL_SAMPLER_CONTEXT: return answer_value(s->context, n, p, r);
    case CL_SAMPLER_NORMALIZED_COORDS: return answer_value(s->normalized, n, p, r);
    case CL_SAMPLER_ADDRESSING_MODE: return answer_value(s->addressing, n, p, r);
    case CL_SAMPLER_FILTER_MODE: return answer_value(s->filter, n, p, r);
    case CL_SAMPLER_PROPERTIES:
      return answer(s->property_list.data(), s->property_list.size() * sizeof(cl_sampler_properties), n, p, r);
    default: return CL_INVALID_VALUE;
  }
}

}  // namespace outboard::opencl
