// The Level-3 BLAS call as it travels: one column-major description shared by client (packing),
// server (validation) and backends (execution). Matrices travel densely packed (leading dimension
// = rows), in the order of operands(); the output matrix is returned packed the same way.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace outboard::wire {

enum class Routine : uint8_t { gemm, symm, hemm, syrk, herk, syr2k, her2k, trmm, trsm, count_ };
enum class Scalar : uint8_t { s, d, c, z, count_ };

struct Level3Call {
  Routine routine = Routine::gemm;
  Scalar scalar = Scalar::d;
  // Upper-case option characters as BLAS takes them; unused ones are 'N'.
  char side = 'N', uplo = 'N', transa = 'N', transb = 'N', diag = 'N';
  int64_t m = 0, n = 0, k = 0;
  // alpha and beta as (real, imaginary); herk/her2k's real beta (and herk's alpha) use [0].
  std::array<double, 2> alpha{1, 0}, beta{0, 0};
  // The output matrix's input values travel too (beta != 0, or an in/out matrix like trmm's B).
  bool output_sent = true;
};

// One matrix of the payload: its shape in elements.
struct Operand {
  char name;  // 'A', 'B' or 'C'
  int64_t rows, cols;
};

struct Layout {
  std::vector<Operand> inputs;  // in payload order; the output (if sent) is the last of them
  Operand output;               // written in place and returned
  bool output_triangle;         // only the uplo triangle of the output is defined (syrk & co.)
};

size_t element_bytes(Scalar s);
bool is_complex(Scalar s);
const char* routine_name(Routine r);
// "dgemm", "zher2k", ...
std::string call_name(const Level3Call& c);

// Throws ProtocolError if the call is not a valid Level-3 BLAS call: unknown routine or scalar,
// a routine not defined for the scalar type (hemm for d), an option character out of its set,
// negative or over-limit dimensions.
void validate(const Level3Call& c);

// Operand shapes of a valid call.
Layout layout(const Level3Call& c);
// Bytes of the request payload (inputs) and of the reply payload (output) of a valid call.
uint64_t request_bytes(const Level3Call& c);
uint64_t reply_bytes(const Level3Call& c);
// Real floating-point operations (a complex multiply-add counts 8), for the offload policy and benchmarks.
double flops(const Level3Call& c);

// Largest dimension accepted: the Fortran BLAS interface takes 32-bit integers.
inline constexpr int64_t kMaxDimension = 0x7fffffff;

}  // namespace outboard::wire
