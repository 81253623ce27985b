/* libsuffix64.so: a stand-in for an ILP64 BLAS and LAPACK that carries the 64_ suffix on every
 * name, as OpenBLAS built with INTERFACE64=1 SYMBOLSUFFIX=64_ (Julia's libopenblas64_.so) and the
 * reference's INDEX64_EXT_API do: dgemm_64_, cblas_dgemm64_, cblas_dgemm_64, dgesv_64_. Debian has
 * no such package (its ILP64 libblas64.so.3 and liblapack64.so.3 keep the standard names), so this
 * library exports every function of those two under the suffixed names (suffix64_symbols.def,
 * generated from them by gen_suffix64_def.sh) as jumps into them: the Outboard BLAS shim's
 * pass-through trampolines with this resolver, which strips the suffix. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int ends_with(const char* s, size_t n, const char* tail) {
  size_t t = strlen(tail);
  return n >= t && memcmp(s + n - t, tail, t) == 0;
}

__attribute__((visibility("hidden"))) void* outboard_passthrough_resolve(void** slot) {
  const char* name = (const char*)slot[1];
  char base[256];
  size_t n = strlen(name);
  if (n >= sizeof base) abort();
  memcpy(base, name, n + 1);
  /* dgemm_64_ -> dgemm_, cblas_dgemm64_ -> cblas_dgemm, cblas_dgemm_64 -> cblas_dgemm */
  if (ends_with(base, n, "64_")) base[n - 3] = 0;
  else if (ends_with(base, n, "_64")) base[n - 3] = 0;
  /* Their own definitions (a handle's scope), never the Outboard shim's of the standard names. */
  static void* libs[2];
  if (libs[0] == NULL) libs[0] = dlopen("liblapack64.so.3", RTLD_NOW | RTLD_NOLOAD);
  if (libs[1] == NULL) libs[1] = dlopen("libblas64.so.3", RTLD_NOW | RTLD_NOLOAD);
  void* fn = NULL;
  for (int i = 0; i < 2 && fn == NULL; ++i)
    if (libs[i] != NULL) fn = dlsym(libs[i], base);
  if (fn == NULL) {
    fprintf(stderr, "libsuffix64: no %s for %s\n", base, name);
    abort();
  }
  __atomic_store_n(&slot[0], fn, __ATOMIC_RELEASE);
  return fn;
}
