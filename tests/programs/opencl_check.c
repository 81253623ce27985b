/* An ordinary OpenCL program (linked with -lOpenCL, nothing of Outboard's): it uses the first
   platform the ICD loader offers and prints its results and the error codes it gets, one line each,
   so a run on PoCL directly and a run through Outboard's ICD can be compared line by line. */
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_1_APIS
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#define CL_USE_DEPRECATED_OPENCL_2_0_APIS
#define CL_USE_DEPRECATED_OPENCL_2_2_APIS
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define N 4096
static const char* kSource =
    "__kernel void axpy(float a, __global const float* x, __global float* y) {\n"
    "  size_t i = get_global_id(0); y[i] = a * x[i] + y[i]; }\n"
    "__kernel void sum_local(__global const int* in, __global int* out, __local int* scratch) {\n"
    "  size_t l = get_local_id(0), g = get_group_id(0);\n"
    "  scratch[l] = in[get_global_id(0)]; barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  if (l == 0) { int s = 0; for (size_t i = 0; i < get_local_size(0); ++i) s += scratch[i]; out[g] = s; } }\n";

static int callbacks_seen = 0;
static void CL_CALLBACK on_complete(cl_event e, cl_int status, void* data) {
  (void)e;
  *(int*)data = status == CL_COMPLETE ? 1 : -1;
  __atomic_add_fetch(&callbacks_seen, 1, __ATOMIC_SEQ_CST);
}

#define SHOW(what, rc) printf("%s: %d\n", what, (int)(rc))
/* Where a platform is laxer than OpenCL (PoCL 3.1 takes a buffer for an image or a sampler
   argument), the answer is checked against the specification's: opencl_programs compares the
   "spec" lines with no platform, and requires them "ok" through Outboard. */
#define SPEC(what, rc, want) printf("spec %s: %s\n", what, (rc) == (want) ? "ok" : "wrong")

/* ---- images ---- */
static const char* kImageSource =
    "__kernel void sample(__read_only image2d_t img, sampler_t s, __global float4* out) {\n"
    "  int x = get_global_id(0), y = get_global_id(1);\n"
    "  out[y * get_global_size(0) + x] = read_imagef(img, s, (int2)(x, y)); }\n"
    "__constant sampler_t kNearest = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_NEAREST;\n"
    "__kernel void edge(__read_only image2d_t img, __global float4* out) {\n"
    "  out[get_global_id(0)] = read_imagef(img, kNearest, (int2)(get_global_id(0) * 5 - 3, 0)); }\n"
    "__kernel void paint(__write_only image2d_t img) {\n"
    "  int x = get_global_id(0), y = get_global_id(1);\n"
    "  write_imageui(img, (int2)(x, y), (uint4)(x, y, x + y, 255)); }\n"
    "__kernel void layers(__read_only image2d_array_t img, __global uint4* out) {\n"
    "  out[get_global_id(0)] = read_imageui(img, (int4)(1, 1, get_global_id(0), 0)); }\n"
    "__kernel void tex1d(__read_only image1d_buffer_t img, __global uint4* out) {\n"
    "  out[get_global_id(0)] = read_imageui(img, (int)get_global_id(0)); }\n"
    "__kernel void vol(__read_only image3d_t img, sampler_t s, __global float4* out) {\n"
    "  out[get_global_id(0)] = read_imagef(img, s, (int4)(0, 0, get_global_id(0), 0)); }\n";

/* An image of `type` (RGBA8 unsigned ints), written through pitched host memory, read back tight
   and pitched, filled, copied, copied to and from a buffer, mapped; each result one line. */
static void image_round(cl_context ctx, cl_command_queue q, const char* name, cl_mem_object_type type, size_t w,
                        size_t h, size_t d, size_t layers) {
  cl_int rc;
  cl_image_format f = {CL_RGBA, CL_UNSIGNED_INT8};
  cl_image_desc desc;
  memset(&desc, 0, sizeof desc);
  desc.image_type = type;
  desc.image_width = w;
  desc.image_height = h;
  desc.image_depth = d;
  desc.image_array_size = layers;
  cl_mem backing = NULL;
  if (type == CL_MEM_OBJECT_IMAGE1D_BUFFER) {
    backing = clCreateBuffer(ctx, CL_MEM_READ_WRITE, w * 4, NULL, &rc);
    desc.buffer = backing;
  }
  cl_mem img = clCreateImage(ctx, CL_MEM_READ_WRITE, &f, &desc, NULL, &rc);
  printf("%s create: %d\n", name, rc);
  if (rc != CL_SUCCESS) return;
  /* The region: the whole image in OpenCL's convention. */
  size_t region[3] = {w, 1, 1};
  if (type == CL_MEM_OBJECT_IMAGE1D_ARRAY) region[1] = layers;
  if (type == CL_MEM_OBJECT_IMAGE2D || type == CL_MEM_OBJECT_IMAGE2D_ARRAY || type == CL_MEM_OBJECT_IMAGE3D) region[1] = h;
  if (type == CL_MEM_OBJECT_IMAGE2D_ARRAY) region[2] = layers;
  if (type == CL_MEM_OBJECT_IMAGE3D) region[2] = d;
  size_t origin[3] = {0, 0, 0};
  const size_t row = w * 4, pitch = row + 12, rows = region[1], slices = region[2];
  const size_t slice_pitch = type == CL_MEM_OBJECT_IMAGE1D_ARRAY ? pitch : pitch * rows;
  const size_t host_bytes = (type == CL_MEM_OBJECT_IMAGE1D_ARRAY ? slice_pitch * rows : slice_pitch * slices) + pitch;
  unsigned char* src = calloc(host_bytes, 1);
  for (size_t z = 0; z < slices; ++z)
    for (size_t y = 0; y < rows; ++y)
      for (size_t x = 0; x < row; ++x) {
        size_t at = type == CL_MEM_OBJECT_IMAGE1D_ARRAY ? y * slice_pitch + x : z * slice_pitch + y * pitch + x;
        src[at] = (unsigned char)(x * 7 + y * 13 + z * 29);
      }
  int multi = type == CL_MEM_OBJECT_IMAGE3D || type == CL_MEM_OBJECT_IMAGE2D_ARRAY || type == CL_MEM_OBJECT_IMAGE1D_ARRAY;
  printf("%s write pitched: %d\n", name, clEnqueueWriteImage(q, img, CL_TRUE, origin, region, pitch, multi ? slice_pitch : 0, src, 0, NULL, NULL));
  unsigned char* tight = calloc(row * rows * slices, 1);
  printf("%s read tight: %d\n", name, clEnqueueReadImage(q, img, CL_TRUE, origin, region, 0, 0, tight, 0, NULL, NULL));
  int ok = 1;
  for (size_t z = 0; z < slices; ++z)
    for (size_t y = 0; y < rows; ++y)
      for (size_t x = 0; x < row; ++x) {
        size_t at = type == CL_MEM_OBJECT_IMAGE1D_ARRAY ? y * slice_pitch + x : z * slice_pitch + y * pitch + x;
        ok &= tight[(z * rows + y) * row + x] == src[at];
      }
  printf("%s round trip: %d\n", name, ok);
  unsigned char* pitched = calloc(host_bytes, 1);
  cl_event ev;
  printf("%s read pitched: %d\n", name, clEnqueueReadImage(q, img, CL_FALSE, origin, region, pitch, multi ? slice_pitch : 0, pitched, 0, NULL, &ev));
  clWaitForEvents(1, &ev);
  cl_command_type ct = 0;
  clGetEventInfo(ev, CL_EVENT_COMMAND_TYPE, sizeof ct, &ct, NULL);
  /* PoCL 3.1 calls reading a 1D buffer image a buffer read. */
  if (type != CL_MEM_OBJECT_IMAGE1D_BUFFER) printf("%s read event type: %x\n", name, ct);
  clReleaseEvent(ev);
  printf("%s pitched equal: %d\n", name, memcmp(pitched, src, host_bytes - 2 * pitch + row) == 0);
  /* Fill a corner, then read one pixel of it and one outside. */
  cl_uint colour[4] = {1, 2, 3, 4};
  size_t corner[3] = {1, 1, 1};
  /* PoCL 3.1 crashes filling a 1D buffer image: that one is filled through its buffer. */
  if (type == CL_MEM_OBJECT_IMAGE1D_BUFFER)
    printf("%s fill: %d\n", name, clEnqueueFillBuffer(q, backing, (cl_uchar[4]){1, 2, 3, 4}, 4, 0, 4, 0, NULL, NULL));
  else
    printf("%s fill: %d\n", name, clEnqueueFillImage(q, img, colour, origin, corner, 0, NULL, NULL));
  unsigned char px[8] = {0};
  printf("%s read pixel: %d\n", name, clEnqueueReadImage(q, img, CL_TRUE, origin, (size_t[3]){2, 1, 1}, 0, 0, px, 0, NULL, NULL));
  printf("%s pixels: %d %d %d %d | %d %d\n", name, px[0], px[1], px[2], px[3], px[4], px[5]);
  /* Copy the image to a second one, to a buffer and back into a third. */
  /* Copy the image to a second one, to a buffer and back into a third (PoCL 3.1 fails or crashes
     copying 1D buffer images: those are not copied). */
  cl_mem copy = NULL, buf = NULL, third = NULL;
  if (type != CL_MEM_OBJECT_IMAGE1D_BUFFER) {
    copy = clCreateImage(ctx, CL_MEM_READ_WRITE, &f, &desc, NULL, &rc);
    printf("%s copy: %d\n", name, clEnqueueCopyImage(q, img, copy, origin, origin, region, 0, NULL, NULL));
    buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, row * rows * slices + 64, NULL, &rc);
    printf("%s to buffer: %d\n", name, clEnqueueCopyImageToBuffer(q, copy, buf, origin, region, 64, 0, NULL, NULL));
    third = clCreateImage(ctx, CL_MEM_READ_WRITE, &f, &desc, NULL, &rc);
    printf("%s from buffer: %d\n", name, clEnqueueCopyBufferToImage(q, buf, third, 64, origin, region, 0, NULL, NULL));
    memset(tight, 0, row * rows * slices);
    clEnqueueReadImage(q, third, CL_TRUE, origin, region, 0, 0, tight, 0, NULL, NULL);
    unsigned char* via = calloc(row * rows * slices, 1);
    clEnqueueReadImage(q, img, CL_TRUE, origin, region, 0, 0, via, 0, NULL, NULL);
    printf("%s copies equal: %d\n", name, memcmp(tight, via, row * rows * slices) == 0);
    free(via);
  }
  /* Map for writing, change a pixel, unmap; map for reading. */
  size_t rp = 0, sp = 0;
  unsigned char* m = clEnqueueMapImage(q, img, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, origin, region, &rp, &sp, 0, NULL, NULL, &rc);
  printf("%s map: %d\n", name, rc);
  if (m) {
    printf("%s mapped first: %d %d\n", name, m[0], m[4]);
    m[rp * (rows - 1) + 5] = 200;
    printf("%s unmap: %d\n", name, clEnqueueUnmapMemObject(q, img, m, 0, NULL, NULL));
  }
  m = clEnqueueMapImage(q, img, CL_TRUE, CL_MAP_READ, origin, region, &rp, &sp, 0, NULL, NULL, &rc);
  if (m) {
    printf("%s mapped again: %d\n", name, m[rp * (rows - 1) + 5]);
    clEnqueueUnmapMemObject(q, img, m, 0, NULL, NULL);
  }
  /* Info. */
  size_t v[6] = {0};
  clGetImageInfo(img, CL_IMAGE_WIDTH, sizeof v[0], &v[0], NULL);
  clGetImageInfo(img, CL_IMAGE_HEIGHT, sizeof v[1], &v[1], NULL);
  clGetImageInfo(img, CL_IMAGE_DEPTH, sizeof v[2], &v[2], NULL);
  clGetImageInfo(img, CL_IMAGE_ARRAY_SIZE, sizeof v[3], &v[3], NULL);
  clGetImageInfo(img, CL_IMAGE_ELEMENT_SIZE, sizeof v[4], &v[4], NULL);
  clGetImageInfo(img, CL_IMAGE_ROW_PITCH, sizeof v[5], &v[5], NULL);
  printf("%s info: %zu %zu %zu %zu %zu %zu\n", name, v[0], v[1], v[2], v[3], v[4], v[5]);
  cl_image_format got;
  clGetImageInfo(img, CL_IMAGE_FORMAT, sizeof got, &got, NULL);
  cl_mem_object_type mt = 0;
  cl_mem assoc = NULL;
  clGetMemObjectInfo(img, CL_MEM_TYPE, sizeof mt, &mt, NULL);
  clGetMemObjectInfo(img, CL_MEM_ASSOCIATED_MEMOBJECT, sizeof assoc, &assoc, NULL);
  printf("%s format and type: %x %x %x buffer %d\n", name, got.image_channel_order, got.image_channel_data_type, mt,
         assoc == backing);
  /* Out of bounds. */
  size_t far[3] = {w, 0, 0};
  printf("%s read beyond: %d\n", name, clEnqueueReadImage(q, img, CL_TRUE, far, region, 0, 0, tight, 0, NULL, NULL));
  free(src), free(tight), free(pitched);
  clReleaseMemObject(img);
  if (copy) clReleaseMemObject(copy), clReleaseMemObject(third), clReleaseMemObject(buf);
  if (backing) clReleaseMemObject(backing);
}

static void images(cl_context ctx, cl_command_queue q, cl_device_id device) {
  cl_int rc;
  cl_uint count = 0;
  SHOW("image formats", clGetSupportedImageFormats(ctx, CL_MEM_READ_WRITE, CL_MEM_OBJECT_IMAGE2D, 0, NULL, &count));
  printf("image format count nonzero: %d\n", count > 0);
  cl_image_format* fs = malloc(count * sizeof *fs);
  clGetSupportedImageFormats(ctx, CL_MEM_READ_WRITE, CL_MEM_OBJECT_IMAGE2D, count, fs, NULL);
  int has_rgba8 = 0;
  for (cl_uint i = 0; i < count; ++i) has_rgba8 |= fs[i].image_channel_order == CL_RGBA && fs[i].image_channel_data_type == CL_UNSIGNED_INT8;
  printf("rgba8 supported: %d\n", has_rgba8);
  free(fs);
  SHOW("image formats bad type", clGetSupportedImageFormats(ctx, CL_MEM_READ_WRITE, CL_MEM_OBJECT_BUFFER, 0, NULL, &count));
  image_round(ctx, q, "1d", CL_MEM_OBJECT_IMAGE1D, 40, 0, 0, 0);
  image_round(ctx, q, "1d buffer", CL_MEM_OBJECT_IMAGE1D_BUFFER, 48, 0, 0, 0);
  image_round(ctx, q, "1d array", CL_MEM_OBJECT_IMAGE1D_ARRAY, 24, 0, 0, 5);
  image_round(ctx, q, "2d", CL_MEM_OBJECT_IMAGE2D, 33, 17, 0, 0);
  image_round(ctx, q, "2d array", CL_MEM_OBJECT_IMAGE2D_ARRAY, 9, 7, 0, 4);
  image_round(ctx, q, "3d", CL_MEM_OBJECT_IMAGE3D, 8, 6, 5, 0);

  /* Bad arguments: the same codes both ways. PoCL 3.1 accepts some that OpenCL refuses (a row
     pitch below the row, a 3D image of depth 1, an image passed as a buffer, unknown sampler
     modes) and answers others with codes of its own (an unknown format, a zero or too large
     width): the ICD answers those as OpenCL says, so they are not compared here. */
  cl_image_format f = {CL_RGBA, CL_UNSIGNED_INT8}, bad = {0x1234, CL_UNSIGNED_INT8}, ff = {CL_RGBA, CL_FLOAT};
  cl_image_desc d2;
  memset(&d2, 0, sizeof d2);
  d2.image_type = CL_MEM_OBJECT_IMAGE2D;
  d2.image_width = 16;
  d2.image_height = 16;
  (void)bad;
  clCreateImage(ctx, CL_MEM_READ_WRITE, &f, NULL, NULL, &rc);
  SHOW("image no descriptor", rc);
  unsigned char host[16 * 16 * 16];
  for (size_t i = 0; i < sizeof host; ++i) host[i] = (unsigned char)i;
  clCreateImage(ctx, CL_MEM_READ_WRITE, &f, &d2, host, &rc);
  SHOW("image host pointer without flag", rc);
  clCreateImage(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, &f, &d2, NULL, &rc);
  SHOW("image flag without host pointer", rc);
  cl_mem a = clCreateImage(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, &f, &d2, host, &rc);
  SHOW("image with contents", rc);
  unsigned char back[16 * 16 * 4];
  clEnqueueReadImage(q, a, CL_TRUE, (size_t[3]){0, 0, 0}, (size_t[3]){16, 16, 1}, 0, 0, back, 0, NULL, NULL);
  printf("image contents: %d %d\n", back[5], back[1023]);
  cl_mem fl = clCreateImage(ctx, CL_MEM_READ_WRITE, &ff, &d2, NULL, &rc);
  SHOW("float image", rc);
  SHOW("copy format mismatch", clEnqueueCopyImage(q, a, fl, (size_t[3]){0, 0, 0}, (size_t[3]){0, 0, 0}, (size_t[3]){4, 4, 1}, 0, NULL, NULL));
  SHOW("copy overlap", clEnqueueCopyImage(q, a, a, (size_t[3]){0, 0, 0}, (size_t[3]){2, 2, 0}, (size_t[3]){4, 4, 1}, 0, NULL, NULL));
  SHOW("copy disjoint", clEnqueueCopyImage(q, a, a, (size_t[3]){0, 0, 0}, (size_t[3]){8, 8, 0}, (size_t[3]){4, 4, 1}, 0, NULL, NULL));
  SHOW("2d region depth", clEnqueueReadImage(q, a, CL_TRUE, (size_t[3]){0, 0, 0}, (size_t[3]){4, 4, 2}, 0, 0, back, 0, NULL, NULL));
  SHOW("2d origin z", clEnqueueReadImage(q, a, CL_TRUE, (size_t[3]){0, 0, 1}, (size_t[3]){4, 4, 1}, 0, 0, back, 0, NULL, NULL));
  SHOW("read null pointer", clEnqueueReadImage(q, a, CL_TRUE, (size_t[3]){0, 0, 0}, (size_t[3]){4, 4, 1}, 0, 0, NULL, 0, NULL, NULL));
  SHOW("fill null colour", clEnqueueFillImage(q, a, NULL, (size_t[3]){0, 0, 0}, (size_t[3]){4, 4, 1}, 0, NULL, NULL));
  cl_mem plain = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64, NULL, &rc);
  SHOW("buffer as image", clEnqueueReadImage(q, plain, CL_TRUE, (size_t[3]){0, 0, 0}, (size_t[3]){1, 1, 1}, 0, 0, back, 0, NULL, NULL));
  SHOW("image to small buffer", clEnqueueCopyImageToBuffer(q, a, plain, (size_t[3]){0, 0, 0}, (size_t[3]){16, 16, 1}, 0, 0, NULL, NULL));
  size_t rp;
  clEnqueueMapImage(q, a, CL_TRUE, CL_MAP_READ, (size_t[3]){0, 0, 0}, (size_t[3]){4, 4, 1}, NULL, NULL, 0, NULL, NULL, &rc);
  SHOW("map without pitch", rc);
  /* The 1.1 forms. */
  cl_mem i2 = clCreateImage2D(ctx, CL_MEM_READ_WRITE, &f, 32, 8, 0, NULL, &rc);
  SHOW("image2d", rc);
  cl_mem i3 = clCreateImage3D(ctx, CL_MEM_READ_ONLY, &f, 8, 8, 4, 0, 0, NULL, &rc);
  SHOW("image3d", rc);
  size_t depth = 0;
  clGetImageInfo(i3, CL_IMAGE_DEPTH, sizeof depth, &depth, NULL);
  printf("image3d depth: %zu\n", depth);
  /* CL_MEM_USE_HOST_PTR: a map shows the program's own memory, in its layout. */
  unsigned char* mine = calloc(20 * 8, 1);
  for (int i = 0; i < 20 * 8; ++i) mine[i] = (unsigned char)(i * 3);
  cl_image_desc du;
  memset(&du, 0, sizeof du);
  du.image_type = CL_MEM_OBJECT_IMAGE2D;
  du.image_width = 4;
  du.image_height = 8;
  du.image_row_pitch = 20;
  cl_mem use = clCreateImage(ctx, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, &f, &du, mine, &rc);
  SHOW("use host image", rc);
  clEnqueueFillImage(q, use, (cl_uint[4]){9, 9, 9, 9}, (size_t[3]){0, 0, 0}, (size_t[3]){1, 1, 1}, 0, NULL, NULL);
  unsigned char* um = clEnqueueMapImage(q, use, CL_TRUE, CL_MAP_READ, (size_t[3]){0, 0, 0}, (size_t[3]){4, 8, 1}, &rp, NULL, 0, NULL, NULL, &rc);
  SHOW("map use host", rc);
  printf("use host map: pointer is host %d, pitch %zu, values %d %d\n", um == mine, rp, um ? um[0] : -1, um ? um[20 + 1] : -1);
  if (um) clEnqueueUnmapMemObject(q, use, um, 0, NULL, NULL);
  clFinish(q);

  /* Kernels with images and samplers. */
  cl_program p = clCreateProgramWithSource(ctx, 1, &kImageSource, NULL, &rc);
  SHOW("image program", clBuildProgram(p, 1, &device, NULL, NULL, NULL));
  cl_sampler s = clCreateSampler(ctx, CL_FALSE, CL_ADDRESS_CLAMP_TO_EDGE, CL_FILTER_NEAREST, &rc);
  SHOW("sampler", rc);
  cl_image_desc dk;
  memset(&dk, 0, sizeof dk);
  dk.image_type = CL_MEM_OBJECT_IMAGE2D;
  dk.image_width = 8;
  dk.image_height = 4;
  float texels[8 * 4 * 4];
  for (int i = 0; i < 8 * 4 * 4; ++i) texels[i] = (float)i;
  cl_mem tex = clCreateImage(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, &ff, &dk, texels, &rc);
  SHOW("float texture", rc);
  cl_mem out = clCreateBuffer(ctx, CL_MEM_WRITE_ONLY, sizeof texels, NULL, &rc);
  cl_kernel k = clCreateKernel(p, "sample", &rc);
  SHOW("sample kernel", rc);
  SPEC("buffer as image arg", clSetKernelArg(k, 0, sizeof out, &out), CL_INVALID_MEM_OBJECT);
  SPEC("image as buffer arg", clSetKernelArg(k, 2, sizeof tex, &tex), CL_INVALID_MEM_OBJECT);
  SHOW("image arg", clSetKernelArg(k, 0, sizeof tex, &tex));
  SHOW("sampler arg", clSetKernelArg(k, 1, sizeof s, &s));
  SPEC("buffer as sampler arg", clSetKernelArg(k, 1, sizeof s, &(cl_sampler){(cl_sampler)plain}), CL_INVALID_SAMPLER);
  SHOW("out arg", clSetKernelArg(k, 2, sizeof out, &out));
  SHOW("sample launch", clEnqueueNDRangeKernel(q, k, 2, NULL, (size_t[2]){8, 4}, NULL, 0, NULL, NULL));
  float res[8 * 4 * 4];
  clEnqueueReadBuffer(q, out, CL_TRUE, 0, sizeof res, res, 0, NULL, NULL);
  printf("sampled: %g %g %g\n", res[0], res[4 * 9 + 2], res[8 * 4 * 4 - 1]);
  cl_kernel e = clCreateKernel(p, "edge", &rc);
  clSetKernelArg(e, 0, sizeof tex, &tex);
  clSetKernelArg(e, 1, sizeof out, &out);
  SHOW("edge launch", clEnqueueNDRangeKernel(q, e, 1, NULL, (size_t[1]){4}, NULL, 0, NULL, NULL));
  clEnqueueReadBuffer(q, out, CL_TRUE, 0, 4 * 4 * sizeof(float), res, 0, NULL, NULL);
  printf("clamped: %g %g %g %g\n", res[0], res[4], res[8], res[12]);
  cl_mem canvas = clCreateImage2D(ctx, CL_MEM_WRITE_ONLY, &f, 6, 3, 0, NULL, &rc);
  cl_kernel pk = clCreateKernel(p, "paint", &rc);
  SHOW("write image arg", clSetKernelArg(pk, 0, sizeof canvas, &canvas));
  SHOW("paint launch", clEnqueueNDRangeKernel(q, pk, 2, NULL, (size_t[2]){6, 3}, NULL, 0, NULL, NULL));
  unsigned char painted[6 * 3 * 4];
  clEnqueueReadImage(q, canvas, CL_TRUE, (size_t[3]){0, 0, 0}, (size_t[3]){6, 3, 1}, 0, 0, painted, 0, NULL, NULL);
  printf("painted: %d %d %d %d\n", painted[(2 * 6 + 5) * 4], painted[(2 * 6 + 5) * 4 + 1], painted[(2 * 6 + 5) * 4 + 2], painted[3]);
  /* A 2D array, a 1D buffer image and a 3D image read by kernels. */
  cl_image_desc da;
  memset(&da, 0, sizeof da);
  da.image_type = CL_MEM_OBJECT_IMAGE2D_ARRAY;
  da.image_width = 2, da.image_height = 2, da.image_array_size = 3;
  unsigned char la[2 * 2 * 3 * 4];
  for (int i = 0; i < (int)sizeof la; ++i) la[i] = (unsigned char)i;
  cl_mem arr = clCreateImage(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, &f, &da, la, &rc);
  cl_kernel lk = clCreateKernel(p, "layers", &rc);
  cl_mem lout = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 3 * 16, NULL, &rc);
  SHOW("array arg", clSetKernelArg(lk, 0, sizeof arr, &arr));
  clSetKernelArg(lk, 1, sizeof lout, &lout);
  SHOW("array launch", clEnqueueNDRangeKernel(q, lk, 1, NULL, (size_t[1]){3}, NULL, 0, NULL, NULL));
  cl_uint lv[12];
  clEnqueueReadBuffer(q, lout, CL_TRUE, 0, sizeof lv, lv, 0, NULL, NULL);
  printf("layers: %u %u %u\n", lv[0], lv[4], lv[8]);
  cl_mem tb = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof la, la, &rc);
  cl_image_desc db;
  memset(&db, 0, sizeof db);
  db.image_type = CL_MEM_OBJECT_IMAGE1D_BUFFER;
  db.image_width = 3;
  db.buffer = tb;
  cl_mem t1 = clCreateImage(ctx, CL_MEM_READ_ONLY, &f, &db, NULL, &rc);
  cl_kernel tk = clCreateKernel(p, "tex1d", &rc);
  SHOW("buffer image arg", clSetKernelArg(tk, 0, sizeof t1, &t1));
  clSetKernelArg(tk, 1, sizeof lout, &lout);
  SHOW("buffer image launch", clEnqueueNDRangeKernel(q, tk, 1, NULL, (size_t[1]){3}, NULL, 0, NULL, NULL));
  clEnqueueReadBuffer(q, lout, CL_TRUE, 0, sizeof lv, lv, 0, NULL, NULL);
  printf("texels: %u %u %u\n", lv[0], lv[5], lv[11]);
  cl_image_desc dv;
  memset(&dv, 0, sizeof dv);
  dv.image_type = CL_MEM_OBJECT_IMAGE3D;
  dv.image_width = 2, dv.image_height = 2, dv.image_depth = 3;
  float vox[2 * 2 * 3 * 4];
  for (int i = 0; i < 48; ++i) vox[i] = (float)i / 2;
  cl_mem v3 = clCreateImage(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, &ff, &dv, vox, &rc);
  cl_kernel vk = clCreateKernel(p, "vol", &rc);
  cl_mem vout = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 3 * 16, NULL, &rc);
  clSetKernelArg(vk, 0, sizeof v3, &v3);
  clSetKernelArg(vk, 1, sizeof s, &s);
  clSetKernelArg(vk, 2, sizeof vout, &vout);
  SHOW("3d launch", clEnqueueNDRangeKernel(q, vk, 1, NULL, (size_t[1]){3}, NULL, 0, NULL, NULL));
  float vv[12];
  clEnqueueReadBuffer(q, vout, CL_TRUE, 0, sizeof vv, vv, 0, NULL, NULL);
  printf("voxels: %g %g %g\n", vv[0], vv[4], vv[8]);
  float vback[48];
  clEnqueueReadImage(q, v3, CL_TRUE, (size_t[3]){0, 0, 0}, (size_t[3]){2, 2, 3}, 0, 0, vback, 0, NULL, NULL);
  printf("voxel contents: %g %g %g\n", vback[0], vback[16], vback[47]);
  cl_mem objs[] = {a, fl, plain, i2, i3, use, tex, out, canvas, arr, lout, tb, t1, v3, vout};
  for (size_t i = 0; i < sizeof objs / sizeof objs[0]; ++i) clReleaseMemObject(objs[i]);
  cl_kernel ks[] = {k, e, pk, lk, tk, vk};
  for (size_t i = 0; i < sizeof ks / sizeof ks[0]; ++i) clReleaseKernel(ks[i]);
  clReleaseSampler(s);
  clReleaseProgram(p);
  free(mine);
}


/* ---- sub-devices ---- */
static const char* kSmall = "__kernel void twice(__global int* a) { a[get_global_id(0)] *= 2; }\n";

static void subdevices(cl_device_id device) {
  cl_int rc;
  cl_uint max_sub = 0, units = 0;
  clGetDeviceInfo(device, CL_DEVICE_PARTITION_MAX_SUB_DEVICES, sizeof max_sub, &max_sub, NULL);
  clGetDeviceInfo(device, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units, &units, NULL);
  if (max_sub < 2) {
    printf("sub-devices: not offered\n");
    return;
  }
  cl_device_partition_property equally[] = {CL_DEVICE_PARTITION_EQUALLY, 1, 0};
  cl_uint count = 0;
  SHOW("partition count", clCreateSubDevices(device, equally, 0, NULL, &count));
  printf("partition equally 1: %d\n", count == units || count == max_sub);
  cl_device_id subs[64];
  cl_uint got = 0;
  SHOW("partition", clCreateSubDevices(device, equally, 64, subs, &got));
  printf("partition made: %d\n", got == count);
  cl_device_id parent = NULL;
  cl_uint cu = 0, refs = 0;
  cl_device_partition_property type[4] = {0};
  SHOW("sub-device parent", clGetDeviceInfo(subs[0], CL_DEVICE_PARENT_DEVICE, sizeof parent, &parent, NULL));
  clGetDeviceInfo(subs[0], CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cu, &cu, NULL);
  size_t type_size = 0;
  SHOW("sub-device partition type", clGetDeviceInfo(subs[0], CL_DEVICE_PARTITION_TYPE, sizeof type, type, &type_size));
  printf("sub-device: parent %d, units %u, type %lx %ld (%zu bytes)\n", parent == device, cu, (long)type[0], (long)type[1],
         type_size);
  clGetDeviceInfo(device, CL_DEVICE_PARENT_DEVICE, sizeof parent, &parent, NULL);
  printf("root parent null: %d\n", parent == NULL);
  SHOW("retain sub-device", clRetainDevice(subs[0]));
  clGetDeviceInfo(subs[0], CL_DEVICE_REFERENCE_COUNT, sizeof refs, &refs, NULL);
  printf("sub-device refs: %u\n", refs);
  SHOW("release sub-device", clReleaseDevice(subs[0]));
  cl_platform_id pl = NULL, root_pl = NULL;
  clGetDeviceInfo(subs[0], CL_DEVICE_PLATFORM, sizeof pl, &pl, NULL);
  clGetDeviceInfo(device, CL_DEVICE_PLATFORM, sizeof root_pl, &root_pl, NULL);
  printf("sub-device platform: %d\n", pl == root_pl);

  /* A context and a queue on a sub-device, a kernel run there. */
  cl_context sc = clCreateContext(NULL, 1, &subs[0], NULL, NULL, &rc);
  SHOW("sub-device context", rc);
  cl_command_queue sq = clCreateCommandQueue(sc, subs[0], 0, &rc);
  SHOW("sub-device queue", rc);
  cl_program sp = clCreateProgramWithSource(sc, 1, &kSmall, NULL, &rc);
  SHOW("sub-device build", clBuildProgram(sp, 1, &subs[0], NULL, NULL, NULL));
  cl_kernel k = clCreateKernel(sp, "twice", &rc);
  int v[64];
  for (int i = 0; i < 64; ++i) v[i] = i;
  cl_mem b = clCreateBuffer(sc, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof v, v, &rc);
  clSetKernelArg(k, 0, sizeof b, &b);
  SHOW("sub-device launch", clEnqueueNDRangeKernel(sq, k, 1, NULL, (size_t[1]){64}, NULL, 0, NULL, NULL));
  clEnqueueReadBuffer(sq, b, CL_TRUE, 0, sizeof v, v, 0, NULL, NULL);
  printf("sub-device result: %d %d\n", v[1], v[63]);
  size_t wg = 0;
  SHOW("sub-device work group", clGetKernelWorkGroupInfo(k, subs[0], CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg, NULL));
  SHOW("root device not in sub context", clGetKernelWorkGroupInfo(k, device, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg, NULL) == CL_SUCCESS);
  clReleaseMemObject(b), clReleaseKernel(k), clReleaseProgram(sp), clReleaseCommandQueue(sq);
  SHOW("release sub-device context", clReleaseContext(sc));

  cl_device_partition_property counts[] = {CL_DEVICE_PARTITION_BY_COUNTS, 1, 1, CL_DEVICE_PARTITION_BY_COUNTS_LIST_END, 0};
  cl_device_id two[2];
  SHOW("partition by counts", clCreateSubDevices(device, counts, 2, two, &got));
  printf("by counts made: %u\n", got);
  cl_uint cu2 = 0;
  clGetDeviceInfo(two[1], CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cu2, &cu2, NULL);
  printf("by counts units: %u\n", cu2);
  /* A sub-device of a sub-device where it has more than one unit. */
  clReleaseDevice(two[0]), clReleaseDevice(two[1]);
  SHOW("partition array too small", clCreateSubDevices(device, counts, 1, two, &got));
  cl_device_partition_property too_many[] = {CL_DEVICE_PARTITION_BY_COUNTS, (cl_device_partition_property)units + 1, CL_DEVICE_PARTITION_BY_COUNTS_LIST_END, 0};
  SHOW("partition too many units", clCreateSubDevices(device, too_many, 2, two, &got));
  cl_device_partition_property bad[] = {0x4242, 1, 0};
  SHOW("partition unknown", clCreateSubDevices(device, bad, 2, two, &got));
  SHOW("partition no properties", clCreateSubDevices(device, NULL, 2, two, &got));
  SHOW("partition no device", clCreateSubDevices(NULL, equally, 2, two, &got));
  for (cl_uint i = 0; i < count; ++i) clReleaseDevice(subs[i]);
}

/* ---- OpenCL 2.x and 3.0 ---- */
static volatile int destructor_order[4];
static volatile int destructors_run = 0;
static void CL_CALLBACK on_context_gone(cl_context c, void* data) {
  (void)c;
  destructor_order[__atomic_fetch_add(&destructors_run, 1, __ATOMIC_SEQ_CST)] = (int)(size_t)data;
}
static volatile int mem_gone[4];
static volatile int mem_gone_count = 0;
static void CL_CALLBACK on_mem_gone(cl_mem m, void* data) {
  (void)m;
  mem_gone[__atomic_fetch_add(&mem_gone_count, 1, __ATOMIC_SEQ_CST)] = (int)(size_t)data;
}
static void wait_for_count(volatile int* count, int want) {
  for (int i = 0; i < 5000 && __atomic_load_n(count, __ATOMIC_SEQ_CST) < want; ++i) {
    struct timespec t = {0, 1000000};
    nanosleep(&t, NULL);
  }
}
static void CL_CALLBACK native_fn(void* args) { (void)args; }

static void cl2(cl_platform_id platform, cl_device_id device, cl_context ctx, cl_command_queue q, cl_kernel k) {
  cl_int rc;
  cl_mem b = clCreateBufferWithProperties(ctx, NULL, CL_MEM_READ_WRITE, 64, NULL, &rc);
  SHOW("buffer with no properties", rc);
  size_t size = 1;
  SHOW("buffer properties", clGetMemObjectInfo(b, CL_MEM_PROPERTIES, 0, NULL, &size));
  printf("buffer properties size: %zu\n", size);
  clReleaseMemObject(b);
  cl_mem_properties empty[] = {0}, bad[] = {0x4242, 1, 0};
  b = clCreateBufferWithProperties(ctx, empty, CL_MEM_READ_WRITE, 64, NULL, &rc);
  SHOW("buffer with empty properties", rc);
  clGetMemObjectInfo(b, CL_MEM_PROPERTIES, 0, NULL, &size);
  printf("empty properties size: %zu\n", size);
  clReleaseMemObject(b);
  clCreateBufferWithProperties(ctx, bad, CL_MEM_READ_WRITE, 64, NULL, &rc);
  SHOW("buffer with bad property", rc);
  cl_image_format f = {CL_R, CL_FLOAT};
  cl_image_desc d;
  memset(&d, 0, sizeof d);
  d.image_type = CL_MEM_OBJECT_IMAGE2D;
  d.image_width = d.image_height = 4;
  cl_mem im = clCreateImageWithProperties(ctx, empty, CL_MEM_READ_WRITE, &f, &d, NULL, &rc);
  SHOW("image with properties", rc);
  clReleaseMemObject(im);
  clCreateImageWithProperties(ctx, bad, CL_MEM_READ_WRITE, &f, &d, NULL, &rc);
  SHOW("image with bad property", rc);

  /* Destructor callbacks, in reverse order of registration. */
  cl_context c2 = clCreateContext(NULL, 1, &device, NULL, NULL, &rc);
  SHOW("context destructor", clSetContextDestructorCallback(c2, on_context_gone, (void*)1));
  clSetContextDestructorCallback(c2, on_context_gone, (void*)2);
  SHOW("context destructor null", clSetContextDestructorCallback(c2, NULL, NULL));
  cl_mem mb = clCreateBuffer(c2, CL_MEM_READ_WRITE, 16, NULL, &rc);
  SHOW("mem destructor", clSetMemObjectDestructorCallback(mb, on_mem_gone, (void*)1));
  clSetMemObjectDestructorCallback(mb, on_mem_gone, (void*)2);
  clReleaseMemObject(mb);
  wait_for_count(&mem_gone_count, 2);
  printf("mem destructors: %d, order %d %d\n", mem_gone_count, mem_gone[0], mem_gone[1]);
  clReleaseContext(c2);
  wait_for_count(&destructors_run, 2);
  printf("context destructors: %d, order %d %d\n", destructors_run, destructor_order[0], destructor_order[1]);

  cl_program p = NULL;
  clGetKernelInfo(k, CL_KERNEL_PROGRAM, sizeof p, &p, NULL);
  SHOW("program release callback", clSetProgramReleaseCallback(p, NULL, NULL));
  size_t il_size = 0;
  clGetDeviceInfo(device, CL_DEVICE_IL_VERSION, 0, NULL, &il_size);
  SPEC("specialization constant", clSetProgramSpecializationConstant(p, 0, 4, &(int){1}),
       il_size > 1 ? CL_INVALID_PROGRAM : CL_INVALID_OPERATION);
  const unsigned int spirv[5] = {0x07230203, 0x00010000, 0, 1, 0};
  clCreateProgramWithIL(ctx, spirv, sizeof spirv, &rc);
  /* A device without IL refuses it (PoCL 3.1 with a code of its own). */
  printf("program with IL: %s\n", il_size > 1 ? (rc == CL_SUCCESS || rc == CL_INVALID_VALUE ? "ok" : "wrong") : (rc != CL_SUCCESS ? "ok" : "wrong"));
  clCreateProgramWithIL(ctx, NULL, 0, &rc);
  SHOW("program with no IL", rc);
  cl_uint sub_groups = 0;
  clGetDeviceInfo(device, CL_DEVICE_MAX_NUM_SUB_GROUPS, sizeof sub_groups, &sub_groups, NULL);
  size_t local = 64, sg = 0;
  rc = clGetKernelSubGroupInfo(k, device, CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE, sizeof local, &local, sizeof sg, &sg, NULL);
  printf("sub-group info: %s\n", sub_groups ? (rc == CL_SUCCESS ? "ok" : "wrong") : (rc == CL_INVALID_OPERATION ? "ok" : "wrong"));
  SHOW("sub-group info no kernel", clGetKernelSubGroupInfo(NULL, device, CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE, sizeof local, &local, sizeof sg, &sg, NULL));
  SHOW("exec info no kernel", clSetKernelExecInfo(NULL, CL_KERNEL_EXEC_INFO_SVM_PTRS, 0, NULL));

  cl_ulong resolution = 0, dt = 0, ht = 0;
  clGetPlatformInfo(platform, CL_PLATFORM_HOST_TIMER_RESOLUTION, sizeof resolution, &resolution, NULL);
  rc = clGetDeviceAndHostTimer(device, &dt, &ht);
  cl_int rc2 = clGetHostTimer(device, &ht);
  printf("timers: %s\n", resolution ? (rc == CL_SUCCESS && rc2 == CL_SUCCESS && ht > 0 ? "ok" : "wrong")
                                    : (rc == CL_INVALID_OPERATION && rc2 == CL_INVALID_OPERATION ? "ok" : "wrong"));
  SHOW("timer no device", clGetHostTimer(NULL, &ht));
  /* A platform without timers says so before it looks at the pointers (OpenCL-CTS
   * negative_get_device_and_host_timer). */
  SHOW("timers no pointers", clGetDeviceAndHostTimer(device, NULL, NULL));
  SHOW("host timer no pointer", clGetHostTimer(device, NULL));
  cl_device_device_enqueue_capabilities enq = 0;
  clGetDeviceInfo(device, CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES, sizeof enq, &enq, NULL);
  rc = clSetDefaultDeviceCommandQueue(ctx, device, q);
  printf("default device queue: %s\n", (enq & CL_DEVICE_QUEUE_REPLACEABLE_DEFAULT) ? (rc == CL_INVALID_COMMAND_QUEUE ? "ok" : "wrong")
                                                                                   : (rc == CL_INVALID_OPERATION ? "ok" : "wrong"));
  SHOW("default device queue no context", clSetDefaultDeviceCommandQueue(NULL, device, q));

  cl_bool pipes = CL_FALSE;
  clGetDeviceInfo(device, CL_DEVICE_PIPE_SUPPORT, sizeof pipes, &pipes, NULL);
  cl_mem pipe = clCreatePipe(ctx, 0, 4, 16, NULL, &rc);
  printf("pipe: %s\n", pipes ? (rc == CL_SUCCESS ? "ok" : "wrong") : (rc == CL_INVALID_OPERATION ? "ok" : "wrong"));
  if (pipe) {
    cl_uint packet = 0;
    clGetPipeInfo(pipe, CL_PIPE_PACKET_SIZE, sizeof packet, &packet, NULL);
    printf("pipe packet: %u\n", packet);
    clReleaseMemObject(pipe);
  } else {
    printf("pipe packet: 4\n");
  }
  cl_mem plain = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64, NULL, &rc);
  SHOW("pipe info of buffer", clGetPipeInfo(plain, CL_PIPE_PACKET_SIZE, sizeof(cl_uint), &(cl_uint){0}, NULL));

  /* SVM and native kernels: what a device reports and what its calls do agree. */
  cl_device_svm_capabilities svm = 0;
  clGetDeviceInfo(device, CL_DEVICE_SVM_CAPABILITIES, sizeof svm, &svm, NULL);
  void* ptr = clSVMAlloc(ctx, CL_MEM_READ_WRITE, 1024, 0);
  cl_int fill = clEnqueueSVMMemFill(q, ptr ? ptr : (void*)&svm, &(int){5}, 4, 64, 0, NULL, NULL);
  cl_int arg = clSetKernelArgSVMPointer(k, 1, ptr ? ptr : (void*)&svm);
  cl_int exec = clSetKernelExecInfo(k, CL_KERNEL_EXEC_INFO_SVM_PTRS, sizeof ptr, &ptr);
  int svm_ok = svm ? (ptr != NULL && fill == CL_SUCCESS && arg == CL_SUCCESS && exec == CL_SUCCESS)
                   : (ptr == NULL && fill == CL_INVALID_OPERATION && arg == CL_INVALID_OPERATION && exec == CL_INVALID_OPERATION);
  clFinish(q);
  if (ptr) clSVMFree(ctx, ptr);
  printf("svm consistent: %d\n", svm_ok);
  SHOW("svm no queue", clEnqueueSVMMemFill(NULL, &svm, &(int){5}, 4, 4, 0, NULL, NULL));
  cl_device_exec_capabilities exe = 0;
  clGetDeviceInfo(device, CL_DEVICE_EXECUTION_CAPABILITIES, sizeof exe, &exe, NULL);
  rc = clEnqueueNativeKernel(q, native_fn, NULL, 0, 0, NULL, NULL, 0, NULL, NULL);
  clFinish(q);
  printf("native kernel consistent: %d\n", (exe & CL_EXEC_NATIVE_KERNEL) ? rc == CL_SUCCESS : rc == CL_INVALID_OPERATION);
  clReleaseMemObject(plain);
}

/* ---- events, queues and contexts ---- */
static volatile int marker_status = 1, marker_seen = 0;
static void CL_CALLBACK on_marker(cl_event e, cl_int status, void* data) {
  (void)e, (void)data;
  marker_status = status;
  __atomic_add_fetch(&marker_seen, 1, __ATOMIC_SEQ_CST);
}

static void queues_and_contexts(cl_device_id device, cl_context ctx, cl_command_queue q) {
  cl_int rc;
  /* A second queue; a write on it gates a kernel on the first. */
  cl_command_queue q2 = clCreateCommandQueueWithProperties(ctx, device, (cl_queue_properties[]){CL_QUEUE_PROPERTIES, 0, 0}, &rc);
  SHOW("second queue", rc);
  cl_program p = clCreateProgramWithSource(ctx, 1, &kSmall, NULL, &rc);
  clBuildProgram(p, 1, &device, NULL, NULL, NULL);
  cl_kernel k = clCreateKernel(p, "twice", &rc);
  int v[256];
  for (int i = 0; i < 256; ++i) v[i] = i + 1;
  cl_mem b = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof v, NULL, &rc);
  cl_event written, doubled;
  SHOW("write on second queue", clEnqueueWriteBuffer(q2, b, CL_FALSE, 0, sizeof v, v, 0, NULL, &written));
  clSetKernelArg(k, 0, sizeof b, &b);
  SHOW("kernel after other queue", clEnqueueNDRangeKernel(q, k, 1, NULL, (size_t[1]){256}, NULL, 1, &written, &doubled));
  int out[256];
  SHOW("read after kernel", clEnqueueReadBuffer(q2, b, CL_TRUE, 0, sizeof out, out, 1, &doubled, NULL));
  printf("across queues: %d %d\n", out[0], out[255]);
  /* OpenCL 2.1 and later: an empty NDRange is a no-op that still orders the queue; a host
   * queue has no size and no default device queue (OpenCL-CTS zero_sized_enqueue,
   * consistency_device_enqueue). */
  cl_event empty;
  SHOW("zero-sized kernel", clEnqueueNDRangeKernel(q, k, 1, NULL, (size_t[1]){0}, NULL, 0, NULL, &empty));
  SHOW("zero-sized kernel done", clWaitForEvents(1, &empty));
  clReleaseEvent(empty);
  SHOW("no-size kernel", clEnqueueNDRangeKernel(q, k, 1, NULL, NULL, NULL, 0, NULL, NULL));
  SHOW("kernels after the empty ones", clFinish(q));
  cl_uint queue_size = 0;
  SHOW("host queue size", clGetCommandQueueInfo(q, CL_QUEUE_SIZE, sizeof queue_size, &queue_size, NULL));
  cl_command_queue device_default = (cl_command_queue)1;
  SHOW("host queue device default", clGetCommandQueueInfo(q, CL_QUEUE_DEVICE_DEFAULT, sizeof device_default, &device_default, NULL));
  printf("device default: %s\n", device_default ? "set" : "none");
  cl_command_queue got_q = NULL;
  clGetEventInfo(written, CL_EVENT_COMMAND_QUEUE, sizeof got_q, &got_q, NULL);
  printf("event queue: %d\n", got_q == q2);
  SHOW("profiling off", clGetEventProfilingInfo(written, CL_PROFILING_COMMAND_END, sizeof(cl_ulong), &(cl_ulong){0}, NULL));
  clReleaseEvent(written), clReleaseEvent(doubled);

  /* A user event gates a marker on the second queue; the marker's callback sees it complete. (A
     user event set to an error is not tried: PoCL 3.1 then never completes what waits for it.) */
  cl_event gate = clCreateUserEvent(ctx, &rc), marker;
  SHOW("marker on user event", clEnqueueMarkerWithWaitList(q2, 1, &gate, &marker));
  SHOW("marker callback", clSetEventCallback(marker, CL_COMPLETE, on_marker, NULL));
  SHOW("user event bad status", clSetUserEventStatus(gate, 5));
  SHOW("user event set", clSetUserEventStatus(gate, CL_COMPLETE));
  SHOW("user event twice", clSetUserEventStatus(gate, CL_COMPLETE));
  SHOW("wait marker", clWaitForEvents(1, &marker));
  wait_for_count(&marker_seen, 1);
  printf("marker callback: %d, status %d\n", marker_seen, marker_status);
  cl_int st = 0;
  clGetEventInfo(gate, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL);
  printf("user event status: %d\n", st);
  clReleaseEvent(gate), clReleaseEvent(marker);
  clFinish(q2);

  /* A second context: its objects do not mix with the first's. */
  cl_context c2 = clCreateContext(NULL, 1, &device, NULL, NULL, &rc);
  SHOW("second context", rc);
  cl_mem other = clCreateBuffer(c2, CL_MEM_READ_WRITE, sizeof v, NULL, &rc);
  SHOW("buffer of other context", clEnqueueWriteBuffer(q, other, CL_TRUE, 0, sizeof v, v, 0, NULL, NULL));
  cl_event e2 = clCreateUserEvent(c2, &rc);
  SHOW("wait list of other context", clEnqueueMarkerWithWaitList(q, 1, &e2, NULL));
  clSetUserEventStatus(e2, CL_COMPLETE);
  clReleaseEvent(e2);
  cl_command_queue q3 = clCreateCommandQueue(c2, device, 0, &rc);
  SHOW("queue of second context", rc);
  SHOW("write second context", clEnqueueWriteBuffer(q3, other, CL_TRUE, 0, sizeof v, v, 0, NULL, NULL));
  SHOW("finish second context", clFinish(q3));
  clReleaseCommandQueue(q3), clReleaseMemObject(other), clReleaseContext(c2);
  clReleaseMemObject(b), clReleaseKernel(k), clReleaseProgram(p), clReleaseCommandQueue(q2);

  /* More bad arguments. */
  SHOW("device info unknown", clGetDeviceInfo(device, 0x4242, 0, NULL, &(size_t){0}));
  clCreateContext(NULL, 0, NULL, NULL, NULL, &rc);
  SHOW("context no devices", rc);
  clCreateCommandQueue(ctx, NULL, 0, &rc);
  SHOW("queue no device", rc);
  SHOW("wait none", clWaitForEvents(0, NULL));
  SHOW("release null buffer", clReleaseMemObject(NULL));
  SHOW("finish null", clFinish(NULL));
  SHOW("write null queue", clEnqueueWriteBuffer(NULL, NULL, CL_TRUE, 0, 4, v, 0, NULL, NULL));
  SHOW("wait list count without list", clEnqueueMarkerWithWaitList(q, 1, NULL, NULL));
}

/* ---- separate compilation with headers ---- */
static void compile_and_link(cl_device_id device, cl_context ctx, cl_command_queue q) {
  cl_int rc;
  const char* header_src = "#define SCALE 3\nint scaled(int x);\n";
  const char* lib_src = "#include \"scale.h\"\nint scaled(int x) { return x * SCALE; }\n";
  const char* main_src = "#include \"scale.h\"\n__kernel void apply(__global int* a) { a[get_global_id(0)] = scaled(a[get_global_id(0)]); }\n";
  cl_program header = clCreateProgramWithSource(ctx, 1, &header_src, NULL, &rc);
  cl_program lib = clCreateProgramWithSource(ctx, 1, &lib_src, NULL, &rc);
  cl_program mainp = clCreateProgramWithSource(ctx, 1, &main_src, NULL, &rc);
  const char* names[] = {"scale.h"};
  SHOW("compile lib", clCompileProgram(lib, 1, &device, "-DUNUSED=1", 1, &header, names, NULL, NULL));
  SHOW("compile main", clCompileProgram(mainp, 1, &device, NULL, 1, &header, names, NULL, NULL));
  SHOW("compile missing header", clCompileProgram(mainp, 1, &device, NULL, 0, NULL, NULL, NULL, NULL));
  SHOW("compile again", clCompileProgram(mainp, 1, &device, NULL, 1, &header, names, NULL, NULL));
  cl_program inputs[] = {lib, mainp};
  cl_program linked = clLinkProgram(ctx, 1, &device, NULL, 2, inputs, NULL, NULL, &rc);
  SHOW("link", rc);
  /* A linked program's build options are its link options (the server compiled its inputs with
     -cl-kernel-arg-info added, which must not show here). */
  cl_program linked2 = clLinkProgram(ctx, 1, &device, "-create-library", 2, inputs, NULL, NULL, &rc);
  SHOW("link with options", rc);
  char link_options[64] = "";
  if (linked2) {
    clGetProgramBuildInfo(linked2, device, CL_PROGRAM_BUILD_OPTIONS, sizeof link_options, link_options, NULL);
    clReleaseProgram(linked2);
  }
  printf("link options: '%s'\n", link_options);
  char compile_options[64] = "";
  clGetProgramBuildInfo(lib, device, CL_PROGRAM_BUILD_OPTIONS, sizeof compile_options, compile_options, NULL);
  printf("compile options: '%s'\n", compile_options);
  cl_build_status bs = 0;
  SHOW("link status", clGetProgramBuildInfo(linked, device, CL_PROGRAM_BUILD_STATUS, sizeof bs, &bs, NULL));
  printf("build status: %d\n", bs);
  cl_kernel k = clCreateKernel(linked, "apply", &rc);
  SHOW("linked kernel", rc);
  int v[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  cl_mem b = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof v, v, &rc);
  clSetKernelArg(k, 0, sizeof b, &b);
  SHOW("linked launch", clEnqueueNDRangeKernel(q, k, 1, NULL, (size_t[1]){8}, NULL, 0, NULL, NULL));
  clEnqueueReadBuffer(q, b, CL_TRUE, 0, sizeof v, v, 0, NULL, NULL);
  printf("linked result: %d %d\n", v[0], v[7]);
  cl_program alone[] = {mainp};
  cl_program unresolved = clLinkProgram(ctx, 1, &device, NULL, 1, alone, NULL, NULL, &rc);
  SHOW("link unresolved", rc);
  if (unresolved) clReleaseProgram(unresolved);
  clLinkProgram(ctx, 1, &device, NULL, 0, NULL, NULL, NULL, &rc);
  SHOW("link nothing", rc);
  clReleaseMemObject(b), clReleaseKernel(k);
  clReleaseProgram(linked), clReleaseProgram(mainp), clReleaseProgram(lib), clReleaseProgram(header);
}

/* ---- samplers ---- */
/* A kernel taking a struct by value: NVIDIA's compiler (driver 580) emits PTX its assembler
   refuses for it when built with -cl-kernel-arg-info, which the server adds for its argument
   checks: the server then builds it again as the program asked. */
static void struct_argument(cl_device_id device, cl_context ctx, cl_command_queue q) {
  const char* src =
      "typedef struct { int i; float f; } pair;\n"
      "__kernel void with_struct(int n, pair p, __local int* scratch, __global float* out) {\n"
      "  scratch[0] = n; out[get_global_id(0)] = p.i * p.f + scratch[0]; }\n";
  cl_int rc;
  cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &rc);
  SHOW("struct program build", clBuildProgram(p, 1, &device, "", NULL, NULL));
  cl_kernel k = clCreateKernel(p, "with_struct", &rc);
  SHOW("struct kernel", rc);
  struct { cl_int i; cl_float f; } pair = {3, 1.5f};
  cl_mem out = clCreateBuffer(ctx, CL_MEM_WRITE_ONLY, 4 * sizeof(float), NULL, &rc);
  SHOW("struct arg n", clSetKernelArg(k, 0, sizeof(cl_int), &(cl_int){2}));
  SHOW("struct arg", clSetKernelArg(k, 1, sizeof pair, &pair));
  SHOW("struct local arg", clSetKernelArg(k, 2, sizeof(cl_int), NULL));
  SHOW("struct out arg", clSetKernelArg(k, 3, sizeof out, &out));
  SHOW("struct launch", clEnqueueNDRangeKernel(q, k, 1, NULL, (size_t[1]){4}, NULL, 0, NULL, NULL));
  float res[4] = {0};
  clEnqueueReadBuffer(q, out, CL_TRUE, 0, sizeof res, res, 0, NULL, NULL);
  printf("struct result: %g %g\n", res[0], res[3]);
  clReleaseMemObject(out);
  clReleaseKernel(k);
  clReleaseProgram(p);
}

static void samplers(cl_context ctx) {
  cl_int rc;
  cl_sampler s = clCreateSampler(ctx, CL_TRUE, CL_ADDRESS_REPEAT, CL_FILTER_LINEAR, &rc);
  SHOW("sampler create", rc);
  cl_bool norm = 0;
  cl_addressing_mode am = 0;
  cl_filter_mode fm = 0;
  cl_uint refs = 0;
  cl_context c = NULL;
  SHOW("sampler info", clGetSamplerInfo(s, CL_SAMPLER_NORMALIZED_COORDS, sizeof norm, &norm, NULL));
  clGetSamplerInfo(s, CL_SAMPLER_ADDRESSING_MODE, sizeof am, &am, NULL);
  clGetSamplerInfo(s, CL_SAMPLER_FILTER_MODE, sizeof fm, &fm, NULL);
  clGetSamplerInfo(s, CL_SAMPLER_CONTEXT, sizeof c, &c, NULL);
  SHOW("sampler retain", clRetainSampler(s));
  clGetSamplerInfo(s, CL_SAMPLER_REFERENCE_COUNT, sizeof refs, &refs, NULL);
  printf("sampler values: %u %x %x context %d refs %u\n", norm, am, fm, c == ctx, refs);
  SHOW("sampler release", clReleaseSampler(s));
  SHOW("sampler release last", clReleaseSampler(s));
  cl_sampler_properties props[] = {CL_SAMPLER_NORMALIZED_COORDS, CL_FALSE, CL_SAMPLER_FILTER_MODE, CL_FILTER_NEAREST, 0};
  cl_sampler sp = clCreateSamplerWithProperties(ctx, props, &rc);
  SHOW("sampler with properties", rc);
  size_t size = 0;
  SHOW("sampler properties", clGetSamplerInfo(sp, CL_SAMPLER_PROPERTIES, 0, NULL, &size));
  clGetSamplerInfo(sp, CL_SAMPLER_ADDRESSING_MODE, sizeof am, &am, NULL);
  printf("sampler properties size %zu, default addressing %x\n", size, am);
  clReleaseSampler(sp);
  cl_sampler_properties badp[] = {0x9999, 1, 0};
  clCreateSamplerWithProperties(ctx, badp, &rc);
  SHOW("sampler bad property", rc);
  clCreateSampler(NULL, CL_TRUE, CL_ADDRESS_CLAMP, CL_FILTER_LINEAR, &rc);
  SHOW("sampler no context", rc);
  SHOW("sampler info null", clGetSamplerInfo(NULL, CL_SAMPLER_FILTER_MODE, sizeof fm, &fm, NULL));
  SHOW("release null sampler", clReleaseSampler(NULL));
}

int main(void) {
  setvbuf(stdout, NULL, _IOLBF, 0);  /* lines reach a file as they come, even if the program dies */
  cl_platform_id platform;
  cl_uint n = 0;
  cl_int rc = clGetPlatformIDs(1, &platform, &n);
  SHOW("platforms", rc);
  if (rc != CL_SUCCESS || n == 0) return 1;
  cl_device_id device;
  SHOW("devices", clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL));
  cl_context ctx = clCreateContext(NULL, 1, &device, NULL, NULL, &rc);
  SHOW("context", rc);
  cl_command_queue q = clCreateCommandQueue(ctx, device, CL_QUEUE_PROFILING_ENABLE, &rc);
  SHOW("queue", rc);

  float x[N], y[N], out[N];
  for (int i = 0; i < N; ++i) x[i] = (float)i, y[i] = 1.0f;
  cl_mem bx = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof x, x, &rc);
  SHOW("buffer x", rc);
  cl_mem by = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof y, NULL, &rc);
  SHOW("buffer y", rc);
  SHOW("write y", clEnqueueWriteBuffer(q, by, CL_TRUE, 0, sizeof y, y, 0, NULL, NULL));
  SHOW("bad size buffer", (clCreateBuffer(ctx, CL_MEM_READ_WRITE, 0, NULL, &rc), rc));

  cl_program bad = clCreateProgramWithSource(ctx, 1, &(const char*){"__kernel void f( {"}, NULL, &rc);
  SHOW("bad program", rc);
  SHOW("bad build", clBuildProgram(bad, 1, &device, "", NULL, NULL));
  size_t log_size = 0;
  SHOW("build log", clGetProgramBuildInfo(bad, device, CL_PROGRAM_BUILD_LOG, 0, NULL, &log_size));
  printf("build log non-empty: %d\n", log_size > 1);
  clReleaseProgram(bad);

  cl_program prog = clCreateProgramWithSource(ctx, 1, &kSource, NULL, &rc);
  SHOW("program", rc);
  SHOW("build", clBuildProgram(prog, 1, &device, "-cl-std=CL1.2", NULL, NULL));
  cl_uint kernels = 0;
  SHOW("num kernels", clGetProgramInfo(prog, CL_PROGRAM_NUM_KERNELS, sizeof(size_t), &(size_t){0}, NULL));
  SHOW("kernels in program", clCreateKernelsInProgram(prog, 0, NULL, &kernels));
  printf("kernel count: %u\n", kernels);
  clCreateKernel(prog, "nope", &rc);
  SHOW("unknown kernel", rc);
  cl_kernel axpy = clCreateKernel(prog, "axpy", &rc);
  SHOW("kernel", rc);
  cl_uint nargs = 0;
  clGetKernelInfo(axpy, CL_KERNEL_NUM_ARGS, sizeof nargs, &nargs, NULL);
  printf("axpy args: %u\n", nargs);
  size_t wg = 0;
  SHOW("work group info", clGetKernelWorkGroupInfo(axpy, device, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg, NULL));
  float a = 2.0f;
  SHOW("arg index", clSetKernelArg(axpy, 3, sizeof a, &a));
  SHOW("arg 0", clSetKernelArg(axpy, 0, sizeof a, &a));
  SHOW("arg 1", clSetKernelArg(axpy, 1, sizeof bx, &bx));
  size_t global = N;
  SHOW("launch unset arg", clEnqueueNDRangeKernel(q, axpy, 1, NULL, &global, NULL, 0, NULL, NULL));
  SHOW("arg 2", clSetKernelArg(axpy, 2, sizeof by, &by));
  /* The ICD checks arguments by their types (the server builds with -cl-kernel-arg-info added),
     yet the program sees its own options, and no argument info it did not ask for. */
  SHOW("arg of the wrong size", clSetKernelArg(axpy, 0, sizeof(double), &(double){2.0}));
  char options[64] = "";
  SHOW("build options", clGetProgramBuildInfo(prog, device, CL_PROGRAM_BUILD_OPTIONS, sizeof options, options, NULL));
  printf("build options: '%s'\n", options);
  cl_kernel_arg_address_qualifier qualifier = 0;
  SHOW("arg info unasked",
       clGetKernelArgInfo(axpy, 1, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof qualifier, &qualifier, NULL));
  cl_device_id none = NULL;
  SPEC("device type 0", clGetDeviceIDs(platform, 0, 1, &none, NULL), CL_INVALID_DEVICE_TYPE);

  // A user event gates the launch; its callback and profiling after.
  cl_event gate = clCreateUserEvent(ctx, &rc);
  SHOW("user event", rc);
  cl_event run;
  SHOW("launch", clEnqueueNDRangeKernel(q, axpy, 1, NULL, &global, NULL, 1, &gate, &run));
  int flag = 0;
  SHOW("callback", clSetEventCallback(run, CL_COMPLETE, on_complete, &flag));
  cl_int status = 0;
  clGetEventInfo(run, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL);
  printf("gated still pending: %d\n", status > CL_COMPLETE);
  SHOW("set user event", clSetUserEventStatus(gate, CL_COMPLETE));
  SHOW("wait", clWaitForEvents(1, &run));
  cl_ulong t0 = 0, t1 = 0;
  clGetEventProfilingInfo(run, CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL);
  SHOW("profiling", clGetEventProfilingInfo(run, CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL));
  printf("profile ordered: %d\n", t1 >= t0 && t0 > 0);

  // After clFinish every command before it is complete, its profile there (clpeak reads the
  // profile right after a finish).
  int finished_ok = 1, zero = 0;
  cl_mem scratch = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 4096, NULL, &rc);
  for (int i = 0; i < 200; ++i) {
    cl_event e;
    clEnqueueFillBuffer(q, scratch, &zero, sizeof zero, 0, 4096, 0, NULL, &e);
    clFinish(q);
    clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL);
    finished_ok &= status == CL_COMPLETE &&
                   clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL) == CL_SUCCESS;
    clReleaseEvent(e);
  }
  printf("complete with a profile after clFinish: %d\n", finished_ok);
  clReleaseMemObject(scratch);

  SHOW("read", clEnqueueReadBuffer(q, by, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL));
  int ok = 1;
  for (int i = 0; i < N; ++i) ok &= out[i] == 2.0f * i + 1.0f;
  printf("axpy correct: %d\n", ok);
  SHOW("read out of bounds", clEnqueueReadBuffer(q, by, CL_TRUE, 8, sizeof out, out, 0, NULL, NULL));

  // Non-blocking read, then a marker; clFinish makes the data land.
  float half[N / 2];
  cl_event marker;
  SHOW("read async", clEnqueueReadBuffer(q, by, CL_FALSE, sizeof out / 2, sizeof half, half, 0, NULL, NULL));
  SHOW("marker", clEnqueueMarkerWithWaitList(q, 0, NULL, &marker));
  SHOW("finish", clFinish(q));
  printf("async read correct: %d\n", half[0] == 2.0f * (N / 2) + 1.0f && half[N / 2 - 1] == 2.0f * (N - 1) + 1.0f);

  // Fill, copy, rect read, map/unmap, sub-buffer.
  int pattern = 7, ints[N], sums[N / 64];
  cl_mem bi = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof ints, NULL, &rc);
  SHOW("fill", clEnqueueFillBuffer(q, bi, &pattern, sizeof pattern, 0, sizeof ints, 0, NULL, NULL));
  cl_mem bc = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof ints, NULL, &rc);
  SHOW("copy", clEnqueueCopyBuffer(q, bi, bc, 0, 0, sizeof ints, 0, NULL, NULL));
  int* mapped = clEnqueueMapBuffer(q, bc, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, sizeof ints, 0, NULL, NULL, &rc);
  SHOW("map", rc);
  printf("mapped value: %d\n", mapped ? mapped[N - 1] : -1);
  for (int i = 0; i < N; ++i) mapped[i] = i;
  SHOW("unmap", clEnqueueUnmapMemObject(q, bc, mapped, 0, NULL, NULL));
  size_t origin[3] = {16, 2, 0}, host[3] = {0, 0, 0}, region[3] = {32, 3, 1};
  char rect[96];
  SHOW("read rect", clEnqueueReadBufferRect(q, bc, CL_TRUE, origin, host, region, 256, 0, 32, 0, rect, 0, NULL, NULL));
  int* r0 = (int*)rect;
  printf("rect values: %d %d\n", r0[0], ((int*)(rect + 64))[7]);
  cl_buffer_region sub = {1024, 1024};
  cl_mem bs = clCreateSubBuffer(bc, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &sub, &rc);
  SHOW("sub-buffer", rc);
  int first = 0;
  SHOW("read sub", clEnqueueReadBuffer(q, bs, CL_TRUE, 0, sizeof first, &first, 0, NULL, NULL));
  printf("sub value: %d\n", first);

  cl_kernel sum = clCreateKernel(prog, "sum_local", &rc);
  cl_mem bsum = clCreateBuffer(ctx, CL_MEM_WRITE_ONLY, sizeof sums, NULL, &rc);
  clSetKernelArg(sum, 0, sizeof bc, &bc);
  clSetKernelArg(sum, 1, sizeof bsum, &bsum);
  SHOW("local arg", clSetKernelArg(sum, 2, 64 * sizeof(int), NULL));
  size_t local = 64;
  SHOW("bad local size", clEnqueueNDRangeKernel(q, sum, 1, NULL, &global, &(size_t){100}, 0, NULL, NULL));
  SHOW("launch local", clEnqueueNDRangeKernel(q, sum, 1, NULL, &global, &local, 0, NULL, NULL));
  SHOW("read sums", clEnqueueReadBuffer(q, bsum, CL_TRUE, 0, sizeof sums, sums, 0, NULL, NULL));
  printf("sums: %d %d\n", sums[0], sums[N / 64 - 1]);

  // Binaries back, and a program made from them.
  size_t bin_size = 0;
  SHOW("binary sizes", clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof bin_size, &bin_size, NULL));
  unsigned char* bin = malloc(bin_size);
  SHOW("binaries", clGetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof bin, &bin, NULL));
  cl_int bin_status = 1;
  cl_program from_bin = clCreateProgramWithBinary(ctx, 1, &device, &bin_size, (const unsigned char**)&bin, &bin_status, &rc);
  SHOW("program from binary", rc);
  SHOW("binary status", bin_status);
  SHOW("build binary", clBuildProgram(from_bin, 1, &device, NULL, NULL, NULL));
  cl_kernel axpy2 = clCreateKernel(from_bin, "axpy", &rc);
  SHOW("kernel from binary", rc);
  clSetKernelArg(axpy2, 0, sizeof a, &a);
  clSetKernelArg(axpy2, 1, sizeof bx, &bx);
  clSetKernelArg(axpy2, 2, sizeof by, &by);
  SHOW("launch binary", clEnqueueNDRangeKernel(q, axpy2, 1, NULL, &global, NULL, 0, NULL, NULL));
  SHOW("read again", clEnqueueReadBuffer(q, by, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL));
  printf("second axpy: %g %g\n", out[0], out[N - 1]);
  free(bin);

  SHOW("finish", clFinish(q));
  printf("callback ran: %d (flag %d)\n", callbacks_seen, flag);

  images(ctx, q, device);
  samplers(ctx);
  struct_argument(device, ctx, q);
  subdevices(device);
  cl2(platform, device, ctx, q, axpy);
  queues_and_contexts(device, ctx, q);
  compile_and_link(device, ctx, q);
  clReleaseEvent(run);
  clReleaseEvent(gate);
  clReleaseEvent(marker);
  clReleaseKernel(axpy);
  clReleaseKernel(axpy2);
  clReleaseKernel(sum);
  clReleaseProgram(prog);
  clReleaseProgram(from_bin);
  clReleaseMemObject(bs);
  clReleaseMemObject(bx);
  clReleaseMemObject(by);
  clReleaseMemObject(bi);
  clReleaseMemObject(bc);
  clReleaseMemObject(bsum);
  SHOW("release queue", clReleaseCommandQueue(q));
  SHOW("release context", clReleaseContext(ctx));
  return 0;
}
