/* libsuffix64.so's exports (suffix64_lib.c): the generated table over the Outboard pass-through
   trampolines. */
#define OUTBOARD_PASSTHROUGH_DEF "suffix64_symbols.def"
#include "shims/blas/passthrough_x86_64.S"
