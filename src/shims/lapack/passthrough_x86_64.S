/* Pass-through trampolines for every LAPACK symbol the shim does not implement itself: the BLAS
   shim's trampolines (one indirect jump through a lazily resolved slot) over this directory's
   table. The resolver, outboard_passthrough_resolve, is real_lapack.cpp's. */
#define OUTBOARD_PASSTHROUGH_DEF "shims/lapack/passthrough_symbols.def"
#include "shims/blas/passthrough_x86_64.S"
