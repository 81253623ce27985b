// Images and samplers (the ICD's image.cpp and sampler.cpp).
#include <cstring>

#include "backends/opencl/cl_session.hpp"

namespace outboard::backends::opencl {

void ClSession::handle(const wire::ClRequest& r, const wire::ClCreateImage& c, transport::Buffer& payload,
                       ClId& created, ClId&) {
  created = c.id;
  check_new(c.id);
  cl_context ctx = handle_of<cl_context>(c.context, Kind::context);
  cl_image_format format{c.channel_order, c.channel_type};
  const size_t pixel = pixel_bytes(format);
  if (pixel == 0) throw ClFail{CL_INVALID_IMAGE_FORMAT_DESCRIPTOR, "unknown image format"};
  const std::array<uint64_t, 3> extent = image_extent(c);
  cl_image_desc desc{};
  desc.image_type = c.type;
  desc.image_width = c.width;
  desc.image_height = c.height;
  desc.image_depth = c.depth;
  desc.image_array_size = c.array_size;
  const uint64_t bytes = mul(mul(mul(extent[0], pixel), extent[1]), extent[2]);
  if (c.type == CL_MEM_OBJECT_IMAGE1D_BUFFER) {
    if (!c.buffer) throw ClFail{CL_INVALID_IMAGE_DESCRIPTOR, "a 1D buffer image needs its buffer"};
    Object& b = find(c.buffer, {Kind::mem});
    if (bytes > b.bytes) throw ClFail{CL_INVALID_IMAGE_SIZE, "the image is larger than its buffer"};
    desc.buffer = static_cast<cl_mem>(b.handle);
  } else if (c.buffer) {
    throw ClFail{CL_INVALID_IMAGE_DESCRIPTOR, "only 1D buffer images are made from a buffer"};
  }
  cl_mem_flags flags = c.flags & ~cl_mem_flags(CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR);
  void* host = nullptr;
  if (c.flags & (CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR)) {
    flags |= CL_MEM_COPY_HOST_PTR;
    host = payload.data();
  }
  if (!desc.buffer) check_memory(bytes);
  if (host ? (r.payload_bytes != bytes || payload.size() != bytes) : r.payload_bytes != 0)
    throw ClFail{CL_INVALID_HOST_PTR, "initial contents must be the packed image"};
  cl_int rc = CL_SUCCESS;
  cl_mem m = clCreateImage(ctx, flags, &format, &desc, host, &rc);
  check(rc, "clCreateImage");
  counters_.bytes_written += host ? bytes : 0;
  Object o{Kind::image, m, bytes, pixel, c.context};
  o.extent = extent;
  o.view = desc.buffer != nullptr;
  if (desc.buffer) {
    o.backing = c.buffer;
    find(c.buffer, {Kind::mem}).images++;
  }
  insert(c.id, o);
}

std::array<uint64_t, 3> ClSession::image_extent(const wire::ClCreateImage& c) {
  std::array<uint64_t, 3> e;
  switch (c.type) {
    case CL_MEM_OBJECT_IMAGE1D:
    case CL_MEM_OBJECT_IMAGE1D_BUFFER: e = {c.width, 1, 1}; break;
    case CL_MEM_OBJECT_IMAGE1D_ARRAY: e = {c.width, c.array_size, 1}; break;
    case CL_MEM_OBJECT_IMAGE2D: e = {c.width, c.height, 1}; break;
    case CL_MEM_OBJECT_IMAGE2D_ARRAY: e = {c.width, c.height, c.array_size}; break;
    case CL_MEM_OBJECT_IMAGE3D: e = {c.width, c.height, c.depth}; break;
    default: throw ClFail{CL_INVALID_IMAGE_DESCRIPTOR, "unknown image type " + std::to_string(c.type)};
  }
  if (e[0] == 0 || e[1] == 0 || e[2] == 0) throw ClFail{CL_INVALID_IMAGE_SIZE, "an image of no pixels"};
  return e;
}

void ClSession::check_image_region(const Object& o, const wire::ClSizes& origin, const wire::ClSizes& region) {
  for (int i = 0; i < 3; ++i)
    if (region[i] == 0 || add(origin[i], region[i]) > o.extent[i])
      throw ClFail{CL_INVALID_VALUE, "the region reaches beyond the image"};
}

size_t ClSession::pixel_bytes(const cl_image_format& f) {
  size_t channels = 0;
  switch (f.image_channel_order) {
    case CL_R: case CL_A: case CL_INTENSITY: case CL_LUMINANCE: case CL_DEPTH: case CL_Rx: channels = 1; break;
    case CL_RG: case CL_RA: case CL_RGx: case CL_DEPTH_STENCIL: channels = 2; break;
    case CL_RGB: case CL_RGBx: channels = 3; break;
    case CL_RGBA: case CL_BGRA: case CL_ARGB: case CL_ABGR: case CL_sRGBA: case CL_sBGRA: case CL_sRGB: case CL_sRGBx:
      channels = 4; break;
    default: return 0;
  }
  switch (f.image_channel_data_type) {
    case CL_SNORM_INT8: case CL_UNORM_INT8: case CL_SIGNED_INT8: case CL_UNSIGNED_INT8: return channels;
    case CL_SNORM_INT16: case CL_UNORM_INT16: case CL_SIGNED_INT16: case CL_UNSIGNED_INT16: case CL_HALF_FLOAT:
      return 2 * channels;
    case CL_SIGNED_INT32: case CL_UNSIGNED_INT32: case CL_FLOAT: return 4 * channels;
    case CL_UNORM_SHORT_565: case CL_UNORM_SHORT_555: return 2;
    case CL_UNORM_INT_101010: case CL_UNORM_INT24: return 4;
    default: return 0;
  }
}

void ClSession::handle(const wire::ClRequest&, const wire::ClCreateSampler& c, transport::Buffer&, ClId& created,
                       ClId&) {
  created = c.id;
  check_new(c.id);
  cl_context ctx = handle_of<cl_context>(c.context, Kind::context);
  cl_bool normalized = CL_TRUE;
  cl_addressing_mode addressing = CL_ADDRESS_CLAMP;
  cl_filter_mode filter = CL_FILTER_NEAREST;
  if (c.properties.size() % 2) throw ClFail{CL_INVALID_VALUE, "properties come in pairs"};
  for (size_t i = 0; i < c.properties.size(); i += 2) {
    const uint64_t v = c.properties[i + 1];
    switch (c.properties[i]) {
      case CL_SAMPLER_NORMALIZED_COORDS: normalized = v ? CL_TRUE : CL_FALSE; break;
      case CL_SAMPLER_ADDRESSING_MODE: addressing = static_cast<cl_addressing_mode>(v); break;
      case CL_SAMPLER_FILTER_MODE: filter = static_cast<cl_filter_mode>(v); break;
      default: throw ClFail{CL_INVALID_VALUE, "sampler property " + std::to_string(c.properties[i]) + " is not served"};
    }
  }
  cl_int rc = CL_SUCCESS;
  cl_sampler s = clCreateSampler(ctx, normalized, addressing, filter, &rc);
  check(rc, "clCreateSampler");
  insert(c.id, Object{Kind::sampler, s, 0, 0, c.context});
}

void ClSession::handle(const wire::ClRequest& r, const wire::ClGetImageFormats& q, transport::Buffer&, ClId&, ClId&) {
  if (!r.call_id) throw ClFail{CL_INVALID_VALUE, "a query must be answered"};
  cl_context ctx = handle_of<cl_context>(q.context, Kind::context);
  cl_uint n = 0;
  check(clGetSupportedImageFormats(ctx, q.flags, q.type, 0, nullptr, &n), "clGetSupportedImageFormats");
  std::vector<cl_image_format> formats(n);
  if (n) check(clGetSupportedImageFormats(ctx, q.flags, q.type, n, formats.data(), nullptr), "clGetSupportedImageFormats");
  wire::ClBlob data(n * sizeof(cl_image_format));
  if (n) std::memcpy(data.data(), formats.data(), data.size());
  reply_data(r.call_id, data);
}

}  // namespace outboard::backends::opencl
