// Images: made and moved like buffers, with regions in pixels. Their data always travels packed
// (rows of width * pixel bytes, no padding); the program's row and slice pitches are applied here,
// on its side, so the server and the wire never see the program's layout. Mapping is emulated as
// for buffers: a map reads the region, an unmap for writing sends it back.
#include <cstdlib>

#include "shims/opencl/api.hpp"
#include "shims/opencl/registry.hpp"

namespace outboard::opencl {
namespace {

using client::opencl::Answer;
using client::opencl::Bytes;

constexpr cl_mem_flags kAccess = CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY | CL_MEM_READ_ONLY;

size_t channel_count(cl_channel_order order) {
  switch (order) {
    case CL_R: case CL_A: case CL_INTENSITY: case CL_LUMINANCE: case CL_DEPTH: case CL_Rx: return 1;
    case CL_RG: case CL_RA: case CL_RGx: return 2;
    case CL_RGB: case CL_RGBx: case CL_sRGB: case CL_sRGBx: return 3;
    case CL_RGBA: case CL_BGRA: case CL_ARGB: case CL_ABGR: case CL_sRGBA: case CL_sBGRA: return 4;
    default: return 0;
  }
}

// Bytes per pixel, or 0 for a format OpenCL does not define.
size_t pixel_size(const cl_image_format* f) {
  if (!f) return 0;
  const size_t channels = channel_count(f->image_channel_order);
  if (channels == 0) return 0;
  switch (f->image_channel_data_type) {
    case CL_SNORM_INT8: case CL_UNORM_INT8: case CL_SIGNED_INT8: case CL_UNSIGNED_INT8: return channels;
    case CL_SNORM_INT16: case CL_UNORM_INT16: case CL_SIGNED_INT16: case CL_UNSIGNED_INT16: case CL_HALF_FLOAT:
      return 2 * channels;
    case CL_SIGNED_INT32: case CL_UNSIGNED_INT32: case CL_FLOAT: return 4 * channels;
    // Packed formats: only with three channels (RGB, RGBx).
    case CL_UNORM_SHORT_565: case CL_UNORM_SHORT_555: return channels == 3 ? 2 : 0;
    case CL_UNORM_INT_101010: return channels == 3 ? 4 : 0;
    default: return 0;
  }
}

bool is_image_type(cl_mem_object_type t) {
  return t == CL_MEM_OBJECT_IMAGE1D || t == CL_MEM_OBJECT_IMAGE1D_BUFFER || t == CL_MEM_OBJECT_IMAGE1D_ARRAY ||
         t == CL_MEM_OBJECT_IMAGE2D || t == CL_MEM_OBJECT_IMAGE2D_ARRAY || t == CL_MEM_OBJECT_IMAGE3D;
}

// The largest region of an image (OpenCL's convention: a 1D array's layers are its second
// dimension, a 2D array's its third).
std::array<size_t, 3> extent(const cl_image_desc& d) {
  switch (d.image_type) {
    case CL_MEM_OBJECT_IMAGE1D_ARRAY: return {d.image_width, d.image_array_size, 1};
    case CL_MEM_OBJECT_IMAGE2D: return {d.image_width, d.image_height, 1};
    case CL_MEM_OBJECT_IMAGE2D_ARRAY: return {d.image_width, d.image_height, d.image_array_size};
    case CL_MEM_OBJECT_IMAGE3D: return {d.image_width, d.image_height, d.image_depth};
    default: return {d.image_width, 1, 1};
  }
}

// How far apart a region's rows (second index) and slices (third index) lie in host memory of
// the given pitches: a 1D array's rows are its layers, one slice pitch apart.
struct Steps {
  size_t row, slice;
};
Steps host_steps(cl_mem_object_type type, size_t row_bytes, size_t rows, size_t row_pitch, size_t slice_pitch) {
  if (row_pitch == 0) row_pitch = row_bytes;
  if (type == CL_MEM_OBJECT_IMAGE1D_ARRAY) return {slice_pitch ? slice_pitch : row_pitch, 0};
  return {row_pitch, slice_pitch ? slice_pitch : row_pitch * rows};
}

// Copies a region's rows between packed memory and host memory of the given steps.
void scatter(char* host, Steps s, const char* packed, size_t row_bytes, size_t rows, size_t slices) {
  for (size_t z = 0; z < slices; ++z)
    for (size_t y = 0; y < rows; ++y)
      std::memcpy(host + z * s.slice + y * s.row, packed + (z * rows + y) * row_bytes, row_bytes);
}
void gather(char* packed, const char* host, Steps s, size_t row_bytes, size_t rows, size_t slices) {
  for (size_t z = 0; z < slices; ++z)
    for (size_t y = 0; y < rows; ++y)
      std::memcpy(packed + (z * rows + y) * row_bytes, host + z * s.slice + y * s.row, row_bytes);
}

bool is_image(cl_mem m) { return valid(m) && is_image_type(m->type); }

cl_int check_queue_image(cl_command_queue q, cl_mem image) {
  if (!valid(q)) return CL_INVALID_COMMAND_QUEUE;
  if (!is_image(image)) return CL_INVALID_MEM_OBJECT;
  if (image->context != q->context) return CL_INVALID_CONTEXT;
  if (!q->device->value<cl_bool>(CL_DEVICE_IMAGE_SUPPORT, CL_FALSE)) return CL_INVALID_OPERATION;
  return CL_SUCCESS;
}

// A region inside the image, with the dimensions its type has.
cl_int check_region(cl_mem image, const size_t* origin, const size_t* region) {
  if (!origin || !region) return CL_INVALID_VALUE;
  const auto e = extent(image->desc);
  for (int i = 0; i < 3; ++i)
    if (region[i] == 0 || origin[i] > e[i] || region[i] > e[i] - origin[i]) return CL_INVALID_VALUE;
  return CL_SUCCESS;
}

wire::ClRegion image_region(const size_t* origin, const size_t* region) {
  wire::ClRegion r;
  for (int i = 0; i < 3; ++i) r.origin[i] = origin[i], r.region[i] = region[i];
  return r;
}

wire::ClRegion linear(size_t offset, size_t size) {
  wire::ClRegion r;
  r.origin = {offset, 0, 0};
  r.region = {size, 1, 1};
  return r;
}

size_t region_bytes(cl_mem image, const size_t* region) { return region[0] * image->pixel * region[1] * region[2]; }

// The formats the server's platform supports for (flags, type), asked once per context.
cl_int supported_formats(cl_context c, cl_mem_flags flags, cl_mem_object_type type, std::vector<cl_image_format>& out) {
  const auto key = std::make_pair(flags, type);
  {
    std::lock_guard lk(c->mu);
    if (auto it = c->image_formats.find(key); it != c->image_formats.end()) {
      out = it->second;
      return CL_SUCCESS;
    }
  }
  Answer a = c->channel().call(wire::ClGetImageFormats{c->id, flags, static_cast<uint32_t>(type)});
  if (a.status == client::opencl::kLost) return CL_OUT_OF_RESOURCES;
  if (a.status != CL_SUCCESS) return a.status;
  const auto& bytes = a.payload.empty() ? a.data : reinterpret_cast<const wire::ClBlob&>(a.payload);
  if (bytes.size() % sizeof(cl_image_format)) return CL_OUT_OF_RESOURCES;
  out.resize(bytes.size() / sizeof(cl_image_format));
  if (!out.empty()) std::memcpy(out.data(), bytes.data(), bytes.size());
  std::lock_guard lk(c->mu);
  c->image_formats[key] = out;
  return CL_SUCCESS;
}

// The device limits an image's size must respect on at least one of the context's devices.
bool size_fits(cl_context c, const cl_image_desc& d, size_t pixel) {
  for (cl_device_id dev : c->devices) {
    auto v = [&](cl_device_info p) { return dev->value<size_t>(p, 0); };
    bool ok = true;
    switch (d.image_type) {
      case CL_MEM_OBJECT_IMAGE1D: ok = d.image_width <= v(CL_DEVICE_IMAGE2D_MAX_WIDTH); break;
      case CL_MEM_OBJECT_IMAGE1D_BUFFER: ok = d.image_width <= v(CL_DEVICE_IMAGE_MAX_BUFFER_SIZE); break;
      case CL_MEM_OBJECT_IMAGE1D_ARRAY:
        ok = d.image_width <= v(CL_DEVICE_IMAGE2D_MAX_WIDTH) && d.image_array_size <= v(CL_DEVICE_IMAGE_MAX_ARRAY_SIZE);
        break;
      case CL_MEM_OBJECT_IMAGE2D:
        ok = d.image_width <= v(CL_DEVICE_IMAGE2D_MAX_WIDTH) && d.image_height <= v(CL_DEVICE_IMAGE2D_MAX_HEIGHT);
        break;
      case CL_MEM_OBJECT_IMAGE2D_ARRAY:
        ok = d.image_width <= v(CL_DEVICE_IMAGE2D_MAX_WIDTH) && d.image_height <= v(CL_DEVICE_IMAGE2D_MAX_HEIGHT) &&
             d.image_array_size <= v(CL_DEVICE_IMAGE_MAX_ARRAY_SIZE);
        break;
      case CL_MEM_OBJECT_IMAGE3D:
        ok = d.image_width <= v(CL_DEVICE_IMAGE3D_MAX_WIDTH) && d.image_height <= v(CL_DEVICE_IMAGE3D_MAX_HEIGHT) &&
             d.image_depth <= v(CL_DEVICE_IMAGE3D_MAX_DEPTH);
        break;
    }
    const auto max_alloc = dev->value<cl_ulong>(CL_DEVICE_MAX_MEM_ALLOC_SIZE, 0);
    const auto e = extent(d);
    if (max_alloc && e[0] * pixel * e[1] * e[2] > max_alloc) ok = false;
    if (ok) return true;
  }
  return false;
}

// The descriptor's own checks (OpenCL 1.2, 5.3.1.2), then the sizes.
cl_int check_desc(cl_context c, cl_mem_flags flags, const cl_image_desc* d, size_t pixel, const void* host_ptr) {
  if (!d || !is_image_type(d->image_type) || d->num_mip_levels || d->num_samples) return CL_INVALID_IMAGE_DESCRIPTOR;
  const bool one_d_buffer = d->image_type == CL_MEM_OBJECT_IMAGE1D_BUFFER;
  if (one_d_buffer) {
    if (!valid(d->buffer) || d->buffer->type != CL_MEM_OBJECT_BUFFER || d->buffer->context != c)
      return CL_INVALID_IMAGE_DESCRIPTOR;
  } else if (d->buffer) {
    return CL_INVALID_OPERATION;  // 2D images of buffers and images of images: not served
  }
  const auto e = extent(*d);
  if (e[0] == 0 || e[1] == 0 || e[2] == 0) return CL_INVALID_IMAGE_SIZE;
  const size_t row = d->image_width * pixel;
  if (!host_ptr && (d->image_row_pitch || d->image_slice_pitch)) return CL_INVALID_IMAGE_DESCRIPTOR;
  if (d->image_row_pitch && (d->image_row_pitch < row || d->image_row_pitch % pixel)) return CL_INVALID_IMAGE_DESCRIPTOR;
  const size_t rp = d->image_row_pitch ? d->image_row_pitch : row;
  const bool has_slices = d->image_type == CL_MEM_OBJECT_IMAGE3D || d->image_type == CL_MEM_OBJECT_IMAGE2D_ARRAY ||
                          d->image_type == CL_MEM_OBJECT_IMAGE1D_ARRAY;
  if (d->image_slice_pitch) {
    const size_t min = d->image_type == CL_MEM_OBJECT_IMAGE1D_ARRAY ? rp : rp * d->image_height;
    if (!has_slices || d->image_slice_pitch < min || d->image_slice_pitch % rp) return CL_INVALID_IMAGE_DESCRIPTOR;
  }
  if (!size_fits(c, *d, pixel)) return CL_INVALID_IMAGE_SIZE;
  if (one_d_buffer && d->image_width * pixel > d->buffer->size) return CL_INVALID_IMAGE_SIZE;
  (void)flags;
  return CL_SUCCESS;
}

cl_mem make_image(cl_context context, cl_mem_flags flags, const cl_image_format* format, const cl_image_desc* desc,
                  void* host_ptr, cl_int* errcode_ret) {
  if (!valid(context)) return fail_with<cl_mem>(CL_INVALID_CONTEXT, errcode_ret);
  const bool one_d_buffer = desc && desc->image_type == CL_MEM_OBJECT_IMAGE1D_BUFFER;
  // A 1D buffer image takes what its flags leave open from its buffer's: its access for the
  // platform, the host pointer flags for CL_MEM_FLAGS only (NVIDIA refuses an image made with
  // CL_MEM_COPY_HOST_PTR and no host pointer).
  cl_mem_flags inherited = 0;
  if (one_d_buffer && valid(desc->buffer)) {
    const cl_mem_flags parent = desc->buffer->flags;
    if (!(flags & kAccess)) flags |= parent & kAccess;
    inherited = parent & (CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR) & ~flags;
  }
  if (flags == 0) flags = CL_MEM_READ_WRITE;
  if (check_mem_flags(flags & ~cl_mem_flags(CL_MEM_KERNEL_READ_AND_WRITE)) != CL_SUCCESS)
    return fail_with<cl_mem>(CL_INVALID_VALUE, errcode_ret);
  const size_t pixel = pixel_size(format);
  if (pixel == 0) return fail_with<cl_mem>(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR, errcode_ret);
  if (cl_int rc = check_desc(context, flags, desc, pixel, host_ptr); rc != CL_SUCCESS)
    return fail_with<cl_mem>(rc, errcode_ret);
  const bool with_data = !one_d_buffer && (flags & (CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR));
  if (with_data != (host_ptr != nullptr)) return fail_with<cl_mem>(CL_INVALID_HOST_PTR, errcode_ret);
  bool any_images = false;
  for (cl_device_id d : context->devices) any_images |= d->value<cl_bool>(CL_DEVICE_IMAGE_SUPPORT, CL_FALSE) != 0;
  if (!any_images) return fail_with<cl_mem>(CL_INVALID_OPERATION, errcode_ret);
  std::vector<cl_image_format> formats;
  // The formats for this access (read-write where no access flag is given, as OpenCL's default;
  // NVIDIA refuses to list formats for flags without one).
  cl_mem_flags kind = flags & (kAccess | CL_MEM_KERNEL_READ_AND_WRITE);
  if (!(kind & kAccess)) kind |= CL_MEM_READ_WRITE;
  if (cl_int rc = supported_formats(context, kind, desc->image_type, formats); rc != CL_SUCCESS)
    return fail_with<cl_mem>(rc, errcode_ret);
  bool supported = false;
  for (const auto& f : formats)
    supported |= f.image_channel_order == format->image_channel_order &&
                 f.image_channel_data_type == format->image_channel_data_type;
  if (!supported) return fail_with<cl_mem>(CL_IMAGE_FORMAT_NOT_SUPPORTED, errcode_ret);

  auto* m = new _cl_mem;
  m->context = context;
  m->id = new_id();
  m->type = desc->image_type;
  m->flags = flags | inherited;
  m->format = *format;
  m->desc = *desc;
  m->desc.image_row_pitch = m->desc.image_slice_pitch = 0;
  m->pixel = pixel;
  const auto e = extent(*desc);
  m->size = e[0] * pixel * e[1] * e[2];
  if (one_d_buffer) m->parent = desc->buffer;
  // Initial contents travel packed; the program's memory is free once this returns.
  std::vector<char> packed;
  if (with_data) {
    const Steps s = host_steps(desc->image_type, e[0] * pixel, e[1], desc->image_row_pitch, desc->image_slice_pitch);
    packed.resize(m->size);
    gather(packed.data(), static_cast<const char*>(host_ptr), s, e[0] * pixel, e[1], e[2]);
    if (flags & CL_MEM_USE_HOST_PTR) {
      m->host_ptr = host_ptr;
      m->host_row_pitch = desc->image_row_pitch ? desc->image_row_pitch : e[0] * pixel;
      m->host_slice_pitch = desc->image_type == CL_MEM_OBJECT_IMAGE1D_ARRAY ? s.row : s.slice;
    }
  }
  wire::ClCreateImage op{m->id, context->id, flags, format->image_channel_order, format->image_channel_data_type,
                         static_cast<uint32_t>(desc->image_type), desc->image_width, desc->image_height,
                         desc->image_depth, desc->image_array_size, one_d_buffer ? desc->buffer->id : 0};
  // 1D and 2D images carry no depth, only arrays an array size: the server sees what OpenCL reads.
  if (desc->image_type != CL_MEM_OBJECT_IMAGE3D) op.depth = 0;
  if (desc->image_type != CL_MEM_OBJECT_IMAGE1D_ARRAY && desc->image_type != CL_MEM_OBJECT_IMAGE2D_ARRAY) op.array_size = 0;
  if (!context->channel().post(op, Bytes{packed.data(), packed.size()}, !packed.empty())) {
    delete m;
    return fail_with<cl_mem>(CL_OUT_OF_RESOURCES, errcode_ret);
  }
  if (m->parent) m->parent->retain();
  context->retain();
  registry_add(m);
  return fail_with<cl_mem>(CL_SUCCESS, errcode_ret, m);
}

}  // namespace

cl_mem CL_API_CALL Api::clCreateImage(cl_context context, cl_mem_flags flags, const cl_image_format* image_format,
                                      const cl_image_desc* image_desc, void* host_ptr, cl_int* errcode_ret) {
  return make_image(context, flags, image_format, image_desc, host_ptr, errcode_ret);
}

cl_mem CL_API_CALL Api::clCreateImageWithProperties(cl_context context, const cl_mem_properties* properties,
                                                    cl_mem_flags flags, const cl_image_format* image_format,
                                                    const cl_image_desc* image_desc, void* host_ptr,
                                                    cl_int* errcode_ret) {
  if (!valid(context)) return fail_with<cl_mem>(CL_INVALID_CONTEXT, errcode_ret);
  std::vector<cl_mem_properties> list;
  if (cl_int rc = mem_properties(properties, list); rc != CL_SUCCESS) return fail_with<cl_mem>(rc, errcode_ret);
  cl_mem m = make_image(context, flags, image_format, image_desc, host_ptr, errcode_ret);
  if (m) m->property_list = std::move(list);
  return m;
}

cl_mem CL_API_CALL Api::clCreateImage2D(cl_context context, cl_mem_flags flags, const cl_image_format* image_format,
                                        size_t image_width, size_t image_height, size_t image_row_pitch, void* host_ptr,
                                        cl_int* errcode_ret) {
  cl_image_desc d{};
  d.image_type = CL_MEM_OBJECT_IMAGE2D;
  d.image_width = image_width;
  d.image_height = image_height;
  d.image_row_pitch = image_row_pitch;
  return make_image(context, flags, image_format, &d, host_ptr, errcode_ret);
}

cl_mem CL_API_CALL Api::clCreateImage3D(cl_context context, cl_mem_flags flags, const cl_image_format* image_format,
                                        size_t image_width, size_t image_height, size_t image_depth,
                                        size_t image_row_pitch, size_t image_slice_pitch, void* host_ptr,
                                        cl_int* errcode_ret) {
  // OpenCL 1.1: a 3D image has a depth above 1.
  if (image_depth <= 1) return fail_with<cl_mem>(valid(context) ? CL_INVALID_IMAGE_SIZE : CL_INVALID_CONTEXT, errcode_ret);
  cl_image_desc d{};
  d.image_type = CL_MEM_OBJECT_IMAGE3D;
  d.image_width = image_width;
  d.image_height = image_height;
  d.image_depth = image_depth;
  d.image_row_pitch = image_row_pitch;
  d.image_slice_pitch = image_slice_pitch;
  return make_image(context, flags, image_format, &d, host_ptr, errcode_ret);
}

cl_int CL_API_CALL Api::clGetSupportedImageFormats(cl_context context, cl_mem_flags flags, cl_mem_object_type image_type,
                                                   cl_uint num_entries, cl_image_format* image_formats,
                                                   cl_uint* num_image_formats) {
  if (!valid(context)) return CL_INVALID_CONTEXT;
  if (check_mem_flags(flags & ~cl_mem_flags(CL_MEM_KERNEL_READ_AND_WRITE)) != CL_SUCCESS || !is_image_type(image_type) ||
      (num_entries == 0 && image_formats))
    return CL_INVALID_VALUE;
  std::vector<cl_image_format> formats;
  if (cl_int rc = supported_formats(context, flags, image_type, formats); rc != CL_SUCCESS) return rc;
  if (num_image_formats) *num_image_formats = static_cast<cl_uint>(formats.size());
  for (cl_uint i = 0; image_formats && i < num_entries && i < formats.size(); ++i) image_formats[i] = formats[i];
  return CL_SUCCESS;
}

cl_int CL_API_CALL Api::clGetImageInfo(cl_mem image, cl_image_info param_name, size_t param_value_size,
                                       void* param_value, size_t* param_value_size_ret) {
  if (!is_image(image)) return CL_INVALID_MEM_OBJECT;
  auto n = param_value_size;
  auto p = param_value;
  auto r = param_value_size_ret;
  const cl_image_desc& d = image->desc;
  const size_t row = d.image_width * image->pixel;
  const bool arrays = d.image_type == CL_MEM_OBJECT_IMAGE1D_ARRAY || d.image_type == CL_MEM_OBJECT_IMAGE2D_ARRAY;
  const bool has_height = d.image_type == CL_MEM_OBJECT_IMAGE2D || d.image_type == CL_MEM_OBJECT_IMAGE2D_ARRAY ||
                          d.image_type == CL_MEM_OBJECT_IMAGE3D;
  size_t slice = 0;
  if (d.image_type == CL_MEM_OBJECT_IMAGE1D_ARRAY) slice = row;
  if (d.image_type == CL_MEM_OBJECT_IMAGE2D_ARRAY || d.image_type == CL_MEM_OBJECT_IMAGE3D) slice = row * d.image_height;
  switch (param_name) {
    case CL_IMAGE_FORMAT: return answer_value(image->format, n, p, r);
    case CL_IMAGE_ELEMENT_SIZE: return answer_value(image->pixel, n, p, r);
    case CL_IMAGE_ROW_PITCH: return answer_value(row, n, p, r);
    case CL_IMAGE_SLICE_PITCH: return answer_value(slice, n, p, r);
    case CL_IMAGE_WIDTH: return answer_value(d.image_width, n, p, r);
    case CL_IMAGE_HEIGHT: return answer_value(has_height ? d.image_height : size_t(0), n, p, r);
    case CL_IMAGE_DEPTH:
      return answer_value(d.image_type == CL_MEM_OBJECT_IMAGE3D ? d.image_depth : size_t(0), n, p, r);
    case CL_IMAGE_ARRAY_SIZE: return answer_value(arrays ? d.image_array_size : size_t(0), n, p, r);
    case CL_IMAGE_BUFFER: return answer_value(image->parent, n, p, r);
    case CL_IMAGE_NUM_MIP_LEVELS: return answer_value(cl_uint(0), n, p, r);
    case CL_IMAGE_NUM_SAMPLES: return answer_value(cl_uint(0), n, p, r);
    default: return CL_INVALID_VALUE;
  }
}

cl_int CL_API_CALL Api::clEnqueueReadImage(cl_command_queue q, cl_mem image, cl_bool blocking_read, const size_t* origin,
                                           const size_t* region, size_t row_pitch, size_t slice_pitch, void* ptr,
                                           cl_uint n, const cl_event* wait, cl_event* event) {
  if (cl_int rc = check_queue_image(q, image); rc != CL_SUCCESS) return rc;
  if (cl_int rc = check_region(image, origin, region); rc != CL_SUCCESS) return rc;
  const size_t row_bytes = region[0] * image->pixel;
  if (!ptr || (row_pitch && row_pitch < row_bytes)) return CL_INVALID_VALUE;
  if (image->flags & (CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_NO_ACCESS)) return CL_INVALID_OPERATION;
  const Steps s = host_steps(image->type, row_bytes, region[1], row_pitch, slice_pitch);
  const size_t bytes = region_bytes(image, region);
  const bool tight = s.row == row_bytes && (region[2] == 1 || s.slice == row_bytes * region[1]);
  if (tight)  // straight into the program's memory, blocking or not as asked
    return read_into(q, image, image_region(origin, region), ptr, bytes, blocking_read, n, wait, event,
                     CL_COMMAND_READ_IMAGE);
  // Pitched: packed data lands here first, then goes to its place (so this one always blocks).
  std::vector<char> staging(bytes);
  cl_event mine = nullptr;
  cl_int rc = read_into(q, image, image_region(origin, region), staging.data(), bytes, true, n, wait, &mine,
                        CL_COMMAND_READ_IMAGE);
  if (rc != CL_SUCCESS) return rc;
  scatter(static_cast<char*>(ptr), s, staging.data(), row_bytes, region[1], region[2]);
  if (event) *event = mine;
  else Api::clReleaseEvent(mine);
  return CL_SUCCESS;
}

cl_int CL_API_CALL Api::clEnqueueWriteImage(cl_command_queue q, cl_mem image, cl_bool blocking_write,
                                            const size_t* origin, const size_t* region, size_t input_row_pitch,
                                            size_t input_slice_pitch, const void* ptr, cl_uint n, const cl_event* wait,
                                            cl_event* event) {
  if (cl_int rc = check_queue_image(q, image); rc != CL_SUCCESS) return rc;
  if (cl_int rc = check_region(image, origin, region); rc != CL_SUCCESS) return rc;
  const size_t row_bytes = region[0] * image->pixel;
  if (!ptr || (input_row_pitch && input_row_pitch < row_bytes)) return CL_INVALID_VALUE;
  if (image->flags & (CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS)) return CL_INVALID_OPERATION;
  const Steps s = host_steps(image->type, row_bytes, region[1], input_row_pitch, input_slice_pitch);
  const size_t bytes = region_bytes(image, region);
  const bool tight = s.row == row_bytes && (region[2] == 1 || s.slice == row_bytes * region[1]);
  if (tight)
    return write_from(q, image, image_region(origin, region), ptr, bytes, blocking_write, n, wait, event,
                      CL_COMMAND_WRITE_IMAGE);
  std::vector<char> packed(bytes);
  gather(packed.data(), static_cast<const char*>(ptr), s, row_bytes, region[1], region[2]);
  // Packed here: sent before this returns, so the program's memory is free at once.
  return write_from(q, image, image_region(origin, region), packed.data(), bytes, true, n, wait, event,
                    CL_COMMAND_WRITE_IMAGE);
}

cl_int CL_API_CALL Api::clEnqueueCopyImage(cl_command_queue q, cl_mem src, cl_mem dst, const size_t* src_origin,
                                           const size_t* dst_origin, const size_t* region, cl_uint n,
                                           const cl_event* wait, cl_event* event) {
  if (cl_int rc = check_queue_image(q, src); rc != CL_SUCCESS) return rc;
  if (cl_int rc = check_queue_image(q, dst); rc != CL_SUCCESS) return rc;
  if (src->format.image_channel_order != dst->format.image_channel_order ||
      src->format.image_channel_data_type != dst->format.image_channel_data_type)
    return CL_IMAGE_FORMAT_MISMATCH;
  if (cl_int rc = check_region(src, src_origin, region); rc != CL_SUCCESS) return rc;
  if (cl_int rc = check_region(dst, dst_origin, region); rc != CL_SUCCESS) return rc;
  if (src == dst) {
    bool overlap = true;
    for (int i = 0; i < 3; ++i)
      overlap &= src_origin[i] < dst_origin[i] + region[i] && dst_origin[i] < src_origin[i] + region[i];
    if (overlap) return CL_MEM_COPY_OVERLAP;
  }
  Command c;
  if (cl_int rc = begin_command(q, n, wait, event, CL_COMMAND_COPY_IMAGE, c); rc != CL_SUCCESS) return rc;
  return send_command(q, wire::ClCopy{c.cmd, src->id, dst->id, image_region(src_origin, region),
                                      image_region(dst_origin, region)},
                      c, event);
}

cl_int CL_API_CALL Api::clEnqueueFillImage(cl_command_queue q, cl_mem image, const void* fill_color, const size_t* origin,
                                           const size_t* region, cl_uint n, const cl_event* wait, cl_event* event) {
  if (cl_int rc = check_queue_image(q, image); rc != CL_SUCCESS) return rc;
  if (!fill_color) return CL_INVALID_VALUE;
  if (cl_int rc = check_region(image, origin, region); rc != CL_SUCCESS) return rc;
  Command c;
  if (cl_int rc = begin_command(q, n, wait, event, CL_COMMAND_FILL_IMAGE, c); rc != CL_SUCCESS) return rc;
  // The colour is a float4, int4 or uint4, by the image's channel type: 16 bytes in every case.
  wire::ClBlob colour(16);
  std::memcpy(colour.data(), fill_color, 16);
  return send_command(q, wire::ClFill{c.cmd, image->id, colour, image_region(origin, region)}, c, event);
}

cl_int CL_API_CALL Api::clEnqueueCopyImageToBuffer(cl_command_queue q, cl_mem src_image, cl_mem dst_buffer,
                                                   const size_t* src_origin, const size_t* region, size_t dst_offset,
                                                   cl_uint n, const cl_event* wait, cl_event* event) {
  if (cl_int rc = check_queue_image(q, src_image); rc != CL_SUCCESS) return rc;
  if (!valid(dst_buffer) || dst_buffer->type != CL_MEM_OBJECT_BUFFER) return CL_INVALID_MEM_OBJECT;
  if (dst_buffer->context != q->context) return CL_INVALID_CONTEXT;
  if (cl_int rc = check_region(src_image, src_origin, region); rc != CL_SUCCESS) return rc;
  const size_t bytes = region_bytes(src_image, region);
  if (dst_offset > dst_buffer->size || bytes > dst_buffer->size - dst_offset) return CL_INVALID_VALUE;
  Command c;
  if (cl_int rc = begin_command(q, n, wait, event, CL_COMMAND_COPY_IMAGE_TO_BUFFER, c); rc != CL_SUCCESS) return rc;
  return send_command(
      q, wire::ClCopy{c.cmd, src_image->id, dst_buffer->id, image_region(src_origin, region), linear(dst_offset, bytes)},
      c, event);
}

cl_int CL_API_CALL Api::clEnqueueCopyBufferToImage(cl_command_queue q, cl_mem src_buffer, cl_mem dst_image,
                                                   size_t src_offset, const size_t* dst_origin, const size_t* region,
                                                   cl_uint n, const cl_event* wait, cl_event* event) {
  if (!valid(q)) return CL_INVALID_COMMAND_QUEUE;
  if (!valid(src_buffer) || src_buffer->type != CL_MEM_OBJECT_BUFFER) return CL_INVALID_MEM_OBJECT;
  if (src_buffer->context != q->context) return CL_INVALID_CONTEXT;
  if (cl_int rc = check_queue_image(q, dst_image); rc != CL_SUCCESS) return rc;
  if (cl_int rc = check_region(dst_image, dst_origin, region); rc != CL_SUCCESS) return rc;
  const size_t bytes = region_bytes(dst_image, region);
  if (src_offset > src_buffer->size || bytes > src_buffer->size - src_offset) return CL_INVALID_VALUE;
  Command c;
  if (cl_int rc = begin_command(q, n, wait, event, CL_COMMAND_COPY_BUFFER_TO_IMAGE, c); rc != CL_SUCCESS) return rc;
  return send_command(
      q, wire::ClCopy{c.cmd, src_buffer->id, dst_image->id, linear(src_offset, bytes), image_region(dst_origin, region)},
      c, event);
}

void* CL_API_CALL Api::clEnqueueMapImage(cl_command_queue q, cl_mem image, cl_bool blocking_map, cl_map_flags flags,
                                         const size_t* origin, const size_t* region, size_t* image_row_pitch,
                                         size_t* image_slice_pitch, cl_uint n, const cl_event* wait, cl_event* event,
                                         cl_int* errcode_ret) {
  if (cl_int rc = check_queue_image(q, image); rc != CL_SUCCESS) return fail_with<void*>(rc, errcode_ret);
  if (cl_int rc = check_region(image, origin, region); rc != CL_SUCCESS) return fail_with<void*>(rc, errcode_ret);
  const bool needs_slice = image->type == CL_MEM_OBJECT_IMAGE3D || image->type == CL_MEM_OBJECT_IMAGE1D_ARRAY ||
                           image->type == CL_MEM_OBJECT_IMAGE2D_ARRAY;
  if (!image_row_pitch || (needs_slice && !image_slice_pitch)) return fail_with<void*>(CL_INVALID_VALUE, errcode_ret);
  const cl_map_flags known = CL_MAP_READ | CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION;
  if ((flags & ~known) || ((flags & CL_MAP_WRITE_INVALIDATE_REGION) && (flags & (CL_MAP_READ | CL_MAP_WRITE))))
    return fail_with<void*>(CL_INVALID_VALUE, errcode_ret);
  const size_t row_bytes = region[0] * image->pixel;
  const size_t bytes = region_bytes(image, region);
  _cl_mem::Mapping mapping;
  for (int i = 0; i < 3; ++i) mapping.origin[i] = origin[i], mapping.region[i] = region[i];
  mapping.write = (flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION)) != 0;
  const bool reads = !(flags & CL_MAP_WRITE_INVALIDATE_REGION);
  void* ptr;
  cl_int rc;
  if (image->host_ptr) {
    // CL_MEM_USE_HOST_PTR: the mapping is the program's own memory, laid out as it gave it.
    mapping.row_pitch = image->host_row_pitch;
    mapping.slice_pitch = image->host_slice_pitch;
    const Steps s = host_steps(image->type, row_bytes, region[1], mapping.row_pitch, mapping.slice_pitch);
    ptr = static_cast<char*>(image->host_ptr) + origin[0] * image->pixel +
          (image->type == CL_MEM_OBJECT_IMAGE1D_ARRAY ? origin[1] * s.row : origin[1] * s.row + origin[2] * s.slice);
    if (reads) {
      std::vector<char> staging(bytes);
      cl_event mine = nullptr;
      rc = read_into(q, image, image_region(origin, region), staging.data(), bytes, true, n, wait, &mine,
                     CL_COMMAND_MAP_IMAGE);
      if (rc == CL_SUCCESS) {
        scatter(static_cast<char*>(ptr), s, staging.data(), row_bytes, region[1], region[2]);
        if (event) *event = mine;
        else Api::clReleaseEvent(mine);
      }
    } else {
      rc = clEnqueueMarkerWithWaitList(q, n, wait, event);
      if (rc == CL_SUCCESS && event && *event) (*event)->command = CL_COMMAND_MAP_IMAGE;
    }
  } else {
    mapping.row_pitch = row_bytes;
    mapping.slice_pitch = image->type == CL_MEM_OBJECT_IMAGE1D_ARRAY ? row_bytes : row_bytes * region[1];
    ptr = std::aligned_alloc(128, (bytes + 127) / 128 * 128);
    if (!ptr) return fail_with<void*>(CL_MAP_FAILURE, errcode_ret);
    mapping.owned = true;
    if (reads) {
      rc = read_into(q, image, image_region(origin, region), ptr, bytes, blocking_map, n, wait, event,
                     CL_COMMAND_MAP_IMAGE);
    } else {
      rc = clEnqueueMarkerWithWaitList(q, n, wait, event);
      if (rc == CL_SUCCESS && event && *event) (*event)->command = CL_COMMAND_MAP_IMAGE;
    }
  }
  if (rc != CL_SUCCESS) {
    if (mapping.owned) std::free(ptr);
    return fail_with<void*>(rc, errcode_ret);
  }
  *image_row_pitch = mapping.row_pitch;
  if (image_slice_pitch) *image_slice_pitch = needs_slice ? mapping.slice_pitch : 0;
  std::lock_guard lk(image->mu);
  image->mappings.emplace(ptr, mapping);
  image->map_count++;
  return fail_with<void*>(CL_SUCCESS, errcode_ret, ptr);
}

cl_int unmap_image(cl_command_queue q, cl_mem image, void* ptr, const _cl_mem::Mapping& m, cl_uint n,
                   const cl_event* wait, cl_event* event) {
  cl_int rc;
  if (m.write) {
    const size_t row_bytes = m.region[0] * image->pixel;
    const Steps s = host_steps(image->type, row_bytes, m.region[1], m.row_pitch, m.slice_pitch);
    std::vector<char> packed(region_bytes(image, m.region));
    gather(packed.data(), static_cast<const char*>(ptr), s, row_bytes, m.region[1], m.region[2]);
    rc = write_from(q, image, image_region(m.origin, m.region), packed.data(), packed.size(), true, n, wait, event,
                    CL_COMMAND_UNMAP_MEM_OBJECT);
  } else {
    rc = Api::clEnqueueMarkerWithWaitList(q, n, wait, event);
    if (rc == CL_SUCCESS && event && *event) (*event)->command = CL_COMMAND_UNMAP_MEM_OBJECT;
  }
  if (m.owned) std::free(ptr);
  return rc;
}

}  // namespace outboard::opencl
