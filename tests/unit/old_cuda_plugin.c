/* A stand-in for a CUDA plugin built against interface version 1 (before `lapack` was added to the
 * table): the loader must refuse it with a clear message, never read past its shorter table. */
#include <stdint.h>

struct old_table {
  uint32_t version, size;
  void* functions[21]; /* error_text .. level3 of version 1 */
};

static const struct old_table table = {1, sizeof(struct old_table), {0}};

__attribute__((visibility("default"))) const void* outboard_cuda_plugin_v1(void) { return &table; }
