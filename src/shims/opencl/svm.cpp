// Shared virtual memory is not offered: it would share the program's address space with a device
// on another host. Devices report no SVM capability (CL_DEVICE_SVM_CAPABILITIES is 0, set by the
// server), and every SVM call answers as OpenCL 3.0 says for such a device.
#include "shims/opencl/api.hpp"

namespace outboard::opencl {

void* CL_API_CALL Api::clSVMAlloc(cl_context, cl_svm_mem_flags, size_t, cl_uint) { return nullptr; }
void CL_API_CALL Api::clSVMFree(cl_context, void*) {}

cl_int CL_API_CALL Api::clSetKernelArgSVMPointer(cl_kernel kernel, cl_uint, const void*) {
  return valid(kernel) ? CL_INVALID_OPERATION : CL_INVALID_KERNEL;
}

namespace {
cl_int no_svm(cl_command_queue q) { return valid(q) ? CL_INVALID_OPERATION : CL_INVALID_COMMAND_QUEUE; }
}  // namespace

cl_int CL_API_CALL Api::clEnqueueSVMFree(cl_command_queue q, cl_uint, void*[],
                                         void(CL_CALLBACK*)(cl_command_queue, cl_uint, void*[], void*), void*, cl_uint,
                                         const cl_event*, cl_event*) {
  return no_svm(q);
}
cl_int CL_API_CALL Api::clEnqueueSVMMemcpy(cl_command_queue q, cl_bool, void*, const void*, size_t, cl_uint,
                                           const cl_event*, cl_event*) {
  return no_svm(q);
}
cl_int CL_API_CALL Api::clEnqueueSVMMemFill(cl_command_queue q, void*, const void*, size_t, size_t, cl_uint,
                                            const cl_event*, cl_event*) {
  return no_svm(q);
}
cl_int CL_API_CALL Api::clEnqueueSVMMap(cl_command_queue q, cl_bool, cl_map_flags, void*, size_t, cl_uint,
                                        const cl_event*, cl_event*) {
  return no_svm(q);
}
cl_int CL_API_CALL Api::clEnqueueSVMUnmap(cl_command_queue q, void*, cl_uint, const cl_event*, cl_event*) {
  return no_svm(q);
}
cl_int CL_API_CALL Api::clEnqueueSVMMigrateMem(cl_command_queue q, cl_uint, const void**, const size_t*,
                                               cl_mem_migration_flags, cl_uint, const cl_event*, cl_event*) {
  return no_svm(q);
}

}  // namespace outboard::opencl
