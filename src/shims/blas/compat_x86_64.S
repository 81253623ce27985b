/* liboutboard-blas-compat.so's exports: the BLAS error handlers (xerbla_symbols.def) as pass-through
   trampolines to the real BLAS, whose resolver is real_blas.cpp's. */
#define OUTBOARD_PASSTHROUGH_DEF "shims/blas/xerbla_symbols.def"
#include "shims/blas/passthrough_x86_64.S"
