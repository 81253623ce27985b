#include "server/pipeline.hpp"

#include <algorithm>

namespace outboard::server {
namespace {

using wire::Level3Call;
using wire::Routine;
using Pair = std::array<double, 2>;

bool rank_update(Routine r) {
  return r == Routine::syrk || r == Routine::herk || r == Routine::syr2k || r == Routine::her2k;
}
bool two_operands(Routine r) { return r == Routine::syr2k || r == Routine::her2k; }
bool hermitian(Routine r) { return r == Routine::hemm || r == Routine::herk || r == Routine::her2k; }

BlockOrder order_for(const Level3Call& c) {
  switch (c.routine) {
    // With C sent, C arrives last and a k-split would need it (beta) before its first block:
    // C's column blocks instead, each reading B's rows (op(B) = B^T) with B's leading dimension.
    case Routine::gemm: return c.transb == 'N' || c.output_sent ? BlockOrder::columns : BlockOrder::inner;
    case Routine::symm:
    case Routine::hemm: return c.side == 'L' || c.output_sent ? BlockOrder::columns : BlockOrder::inner;
    case Routine::syrk:
    case Routine::herk:
    case Routine::syr2k:
    case Routine::her2k: return c.transa == 'N' && !c.output_sent ? BlockOrder::inner : BlockOrder::triangle;
    case Routine::trmm:
    case Routine::trsm:
      if (c.side == 'L') return BlockOrder::columns;
      // alpha = 0 sets B to 0 without reading A; blocks solving with A_jj could make NaNs of it.
      return c.alpha[0] == 0 && c.alpha[1] == 0 ? BlockOrder::whole : BlockOrder::substitution;
    default: return BlockOrder::whole;
  }
}

// The dimension an order splits: k for gemm's and the rank updates' inner order (right-side
// symm's k is n), n otherwise.
int64_t split_extent(const Level3Call& c, BlockOrder o) {
  return o == BlockOrder::inner && (c.routine == Routine::gemm || rank_update(c.routine)) ? c.k : c.n;
}

struct Range {
  int64_t lo, hi;
  int64_t size() const { return hi - lo; }
  bool empty() const { return hi <= lo; }
};

// Builds a plan's blocks: sub-calls on parts of the staging buffer's operands.
class Planner {
 public:
  Planner(const Level3Call& c, Plan& p)
      : c_(c), p_(p), l_(wire::layout(c)), e_(wire::element_bytes(c.scalar)) {
    const uint64_t a_bytes = bytes(l_.inputs[0]);
    b0_ = a_bytes;
    const size_t operands = l_.inputs.size() - (c.output_sent ? 1 : 0);
    inputs_end_ = a_bytes + (operands > 1 ? bytes(l_.inputs[1]) : 0);  // A and B, before C
    out0_ = p.output_offset;
    lda_ = l_.inputs[0].rows;
    ldb_ = operands > 1 ? l_.inputs[1].rows : 0;
    ldo_ = l_.output.rows;
  }

  void plan(BlockOrder order, int64_t cols) {
    const int64_t extent = split_extent(c_, order);
    std::vector<Range> ranges;
    for (int64_t j0 = 0; j0 < extent; j0 += cols) ranges.push_back({j0, std::min(j0 + cols, extent)});
    if (order == BlockOrder::inner) {
      p_.pieces.push_back({out0_, p_.output_bytes, 0});
      for (size_t i = 0; i < ranges.size(); ++i) inner(ranges[i], i == 0);
      p_.blocks.back().piece = 0;
      return;
    }
    for (const Range& j : ranges) p_.pieces.push_back({at_out(0, j.lo), column_bytes(j), column_bytes({0, j.lo})});
    if (order == BlockOrder::substitution && !forward_substitution()) std::reverse(ranges.begin(), ranges.end());
    for (const Range& j : ranges) {
      if (order == BlockOrder::columns) columns(j);
      else if (order == BlockOrder::triangle) triangle(j);
      else substitution(j);
      p_.blocks.back().piece = j.lo / cols;
    }
  }

 private:
  uint64_t bytes(const wire::Operand& o) const { return static_cast<uint64_t>(o.rows) * o.cols * e_; }
  uint64_t at(uint64_t base, int64_t ld, int64_t i, int64_t j) const {
    return base + (static_cast<uint64_t>(j) * ld + i) * e_;
  }
  uint64_t at_a(int64_t i, int64_t j) const { return at(0, lda_, i, j); }
  uint64_t at_b(int64_t i, int64_t j) const { return at(b0_, ldb_, i, j); }
  uint64_t at_out(int64_t i, int64_t j) const { return at(out0_, ldo_, i, j); }
  uint64_t column_bytes(Range j) const { return static_cast<uint64_t>(j.size()) * ldo_ * e_; }
  // The payload up to the end of the output's columns j (where they are sent), or up to `needed`.
  uint64_t with_output(Range j, uint64_t needed) const {
    return c_.output_sent ? std::max(needed, at_out(0, j.hi)) : needed;
  }
  bool upper_op() const { return (c_.uplo == 'U') == (c_.transa == 'N'); }
  bool forward_substitution() const { return c_.routine == Routine::trsm ? upper_op() : !upper_op(); }

  Level3Call sub(Routine r, int64_t m, int64_t n, int64_t k, Pair alpha, Pair beta) const {
    Level3Call s = c_;
    s.routine = r;
    s.m = m, s.n = n, s.k = k;
    s.alpha = alpha, s.beta = beta;
    const bool real_beta = r == Routine::herk || r == Routine::her2k;
    s.output_sent = r == Routine::trmm || r == Routine::trsm || beta[0] != 0 || (!real_beta && beta[1] != 0);
    return s;
  }
  Level3Call gemm(char ta, char tb, int64_t m, int64_t n, int64_t k, Pair alpha, Pair beta) const {
    Level3Call s = sub(Routine::gemm, m, n, k, alpha, beta);
    s.side = s.uplo = s.diag = 'N';
    s.transa = ta, s.transb = tb;
    return s;
  }
  // Appends a sub-call; leading dimensions equal to the packed sub-operand's rows are left 0.
  void add(const Level3Call& s, uint64_t a, int64_t lda, uint64_t b, int64_t ldb, uint64_t out, int64_t ldo,
           uint64_t needed) {
    const wire::Layout l = wire::layout(s);
    auto packed = [](int64_t ld, const wire::Operand& o) { return ld == o.rows ? 0 : ld; };
    Block blk;
    blk.call = s;
    blk.a_offset = a;
    blk.b_offset = b;
    blk.out_offset = out;
    blk.ld.a = packed(lda, l.inputs[0]);
    blk.ld.b = l.inputs.size() - (s.output_sent ? 1 : 0) > 1 ? packed(ldb, l.inputs[1]) : 0;
    blk.ld.out = packed(ldo, l.output);
    blk.input_needed = needed;
    p_.blocks.push_back(blk);
  }

  // op(A)[k, j] of a triangular or symmetric A as a stored block for gemm's B operand, with its
  // transpose: k and j are disjoint; `stored_kj` says whether A[k, j] is in the stored triangle.
  void a_block(Range k, Range j, bool stored_kj, char trans, uint64_t* offset, char* tb) const {
    *offset = stored_kj ? at_a(k.lo, j.lo) : at_a(j.lo, k.lo);
    *tb = stored_kj ? 'N' : trans;
  }

  // C's columns j = alpha op(A) B_j + beta C_j, and the left-side symm/trmm/trsm on B's columns j:
  // all of A, B's (or for op(B) = B^T, all of B) and C's columns j.
  void columns(Range j) {
    Level3Call s = c_;
    s.n = j.size();
    switch (c_.routine) {
      case Routine::gemm: {
        const bool rows_of_b = c_.transb != 'N';
        const uint64_t b = rows_of_b ? at_b(j.lo, 0) : at_b(0, j.lo);
        const uint64_t needed = rows_of_b ? inputs_end_ : at_b(0, j.hi);
        return add(s, 0, lda_, b, ldb_, at_out(0, j.lo), ldo_, with_output(j, needed));
      }
      case Routine::symm:
      case Routine::hemm:
        if (c_.side == 'L') return add(s, 0, lda_, at_b(0, j.lo), ldb_, at_out(0, j.lo), ldo_, with_output(j, at_b(0, j.hi)));
        // Right side: C_j = alpha (B_<j A_<j,j + B_j A_jj + B_>j A_>j,j) + beta C_j; all of B.
        symm_product(j, j, c_.beta, with_output(j, inputs_end_));
        symm_product({0, j.lo}, j, {1, 0}, with_output(j, inputs_end_));
        symm_product({j.hi, c_.n}, j, {1, 0}, with_output(j, inputs_end_));
        return;
      default:  // trmm, trsm: B is the output, in place
        return add(s, 0, lda_, 0, 0, at_out(0, j.lo), ldo_, at_out(0, j.hi));
    }
  }

  // Right-side symm/hemm's C_j += alpha B_k Afull[k, j] (+ beta C_j): the diagonal block with
  // symm itself, the others with gemm on the stored triangle.
  void symm_product(Range k, Range j, Pair beta, uint64_t needed) {
    if (k.empty() || j.empty()) return;
    if (k.lo == j.lo)
      return add(sub(c_.routine, c_.m, j.size(), 0, c_.alpha, beta), at_a(j.lo, j.lo), lda_, at_b(0, j.lo), ldb_,
                 at_out(0, j.lo), ldo_, needed);
    uint64_t a;
    char tb;
    a_block(k, j, (c_.uplo == 'U') == (k.lo < j.lo), hermitian(c_.routine) ? 'C' : 'T', &a, &tb);
    add(gemm('N', tb, c_.m, j.size(), k.size(), c_.alpha, beta), at_b(0, k.lo), ldb_, a, lda_, at_out(0, j.lo), ldo_,
        needed);
  }

  // C += alpha op(A)[:, k] op(B)[k, :] (rank updates: A_k B_k^T and the like); beta on the first.
  void inner(Range k, bool first) {
    const Pair beta = first ? c_.beta : Pair{1, 0};
    if (c_.routine == Routine::symm || c_.routine == Routine::hemm) {  // k: B's columns, A's rows
      const uint64_t needed = at_b(0, k.hi);
      symm_product(k, k, beta, needed);
      symm_product(k, {k.hi, c_.n}, beta, needed);
      symm_product(k, {0, k.lo}, {1, 0}, needed);  // first: empty
      return;
    }
    Level3Call s = c_;
    s.k = k.size();
    s.beta = beta;
    s.output_sent = !first || c_.output_sent;
    if (c_.routine == Routine::gemm) {  // op(B) = B^T or B^H: B's columns k; A's columns k, or rows
      const uint64_t a = c_.transa == 'N' ? at_a(0, k.lo) : at_a(k.lo, 0);
      return add(s, a, lda_, at_b(0, k.lo), ldb_, out0_, ldo_, at_b(0, k.hi));
    }
    // trans 'N': A's (and B's) columns k.
    const bool two = two_operands(c_.routine);
    add(s, at_a(0, k.lo), lda_, two ? at_b(0, k.lo) : 0, ldb_, out0_, ldo_, two ? at_b(0, k.hi) : at_a(0, k.hi));
  }

  // C's columns j of a rank update: the diagonal block with the routine itself, the rest of the
  // columns' uplo triangle (rows r) with gemm. With trans 'T'/'C' A's (and B's) columns are read:
  // for uplo 'U' those up to j.hi only.
  void triangle(Range j) {
    const Routine r = c_.routine;
    const bool t = c_.transa != 'N', two = two_operands(r);
    const Range rows = c_.uplo == 'U' ? Range{0, j.lo} : Range{j.hi, c_.n};
    uint64_t needed = inputs_end_;
    if (t && c_.uplo == 'U') needed = two ? at_b(0, j.hi) : at_a(0, j.hi);
    needed = with_output(j, needed);
    // Rows i of op(A) (n x k): A's rows i, or its columns i when transposed.
    auto part = [&](bool of_b, Range i) { return t ? at(of_b ? b0_ : 0, c_.k, 0, i.lo) : at(of_b ? b0_ : 0, c_.n, i.lo, 0); };
    const int64_t ld = t ? c_.k : c_.n;
    Level3Call d = c_;
    d.n = j.size();
    add(d, part(false, j), ld, two ? part(true, j) : 0, ld, at_out(j.lo, j.lo), ldo_, needed);
    if (rows.empty()) return;
    // C_rj = alpha op(A)_r op(B)_j^T (+ alpha' op(B)_r op(A)_j^T for the 2k forms) + beta C_rj.
    const bool herm = hermitian(r);
    const char ta = t ? c_.transa : 'N', tb = t ? 'N' : (herm ? 'C' : 'T');
    const Pair alpha = r == Routine::herk ? Pair{c_.alpha[0], 0} : c_.alpha;
    const Pair beta = herm ? Pair{c_.beta[0], 0} : c_.beta;
    const uint64_t out = at_out(rows.lo, j.lo);
    add(gemm(ta, tb, rows.size(), j.size(), c_.k, alpha, beta), part(false, rows), ld, part(two, j), ld, out, ldo_,
        needed);
    if (!two) return;
    const Pair alpha2 = herm ? Pair{c_.alpha[0], -c_.alpha[1]} : c_.alpha;
    add(gemm(ta, tb, rows.size(), j.size(), c_.k, alpha2, {1, 0}), part(true, rows), ld, part(false, j), ld, out, ldo_,
        needed);
  }

  // Right-side trsm: X_j = (alpha B_j - X_prev op(A)_prev,j) op(A)_jj^-1, prev the columns solved
  // before. Right-side trmm in place: B_j := alpha (B_j op(A)_jj + B_rest op(A)_rest,j), rest the
  // columns not yet overwritten.
  void substitution(Range j) {
    const int64_t m = c_.m;
    const bool forward = forward_substitution();
    const Range other = forward == (c_.routine == Routine::trsm) ? Range{0, j.lo} : Range{j.hi, c_.n};
    const uint64_t needed = c_.routine == Routine::trsm && forward ? at_out(0, j.hi) : p_.input_bytes;
    uint64_t a;
    char tb;
    a_block(other, j, c_.transa == 'N', c_.transa, &a, &tb);
    Level3Call d = c_;
    d.n = j.size();
    if (c_.routine == Routine::trsm) {
      if (!other.empty()) {
        add(gemm('N', tb, m, j.size(), other.size(), {-1, 0}, c_.alpha), at_out(0, other.lo), ldo_, a, lda_,
            at_out(0, j.lo), ldo_, needed);
        d.alpha = {1, 0};
      }
      return add(d, at_a(j.lo, j.lo), lda_, 0, 0, at_out(0, j.lo), ldo_, needed);
    }
    add(d, at_a(j.lo, j.lo), lda_, 0, 0, at_out(0, j.lo), ldo_, needed);
    if (!other.empty())
      add(gemm('N', tb, m, j.size(), other.size(), c_.alpha, {1, 0}), at_out(0, other.lo), ldo_, a, lda_,
          at_out(0, j.lo), ldo_, needed);
  }

  const Level3Call& c_;
  Plan& p_;
  wire::Layout l_;
  uint64_t e_;
  uint64_t b0_ = 0, inputs_end_ = 0, out0_ = 0;
  int64_t lda_ = 0, ldb_ = 0, ldo_ = 0;
};

}  // namespace

const char* order_name(BlockOrder o) {
  static const char* names[] = {"whole", "columns", "inner", "triangle", "substitution"};
  return names[static_cast<int>(o)];
}

bool independent_pieces(const Plan& p) { return p.order == BlockOrder::columns || p.order == BlockOrder::triangle; }

int64_t choose_block_cols(const wire::Level3Call& c, const MeasuredRates& rates) {
  auto round64 = [](double cols) { return std::max<int64_t>(64, (static_cast<int64_t>(cols) + 63) / 64 * 64); };
  const BlockOrder order = order_for(c);
  const int64_t extent = split_extent(c, order);
  if (rates.link_bytes_per_second <= 0 || rates.device_flops_per_second <= 0)
    return round64((extent + kTargetBlocks - 1) / kTargetBlocks);
  const double arrival = static_cast<double>(wire::request_bytes(c)) / rates.link_bytes_per_second;
  // The last block's share of the flops; its columns of the result travel back (inner: all of C).
  const double x = static_cast<double>(std::max<int64_t>(extent, 1));
  const double out_per_col = order == BlockOrder::inner ? 0 : static_cast<double>(wire::reply_bytes(c)) / x;
  const double tail_per_col = wire::flops(c) / x / rates.device_flops_per_second + out_per_col / rates.link_bytes_per_second;
  double cols = kTailShare * arrival / tail_per_col;
  cols = std::max(cols, static_cast<double>(kMinBlockCols));
  cols = std::min(cols, static_cast<double>(extent) / kMinBlocks);  // something to overlap comes first
  return round64(cols);
}

Plan plan_pipeline(const wire::Level3Call& c, int64_t block_cols) {
  Plan p;
  p.input_bytes = wire::request_bytes(c);
  p.output_bytes = wire::reply_bytes(c);
  p.output_offset = c.output_sent ? p.input_bytes - p.output_bytes : p.input_bytes;
  p.staging_bytes = c.output_sent ? p.input_bytes : p.input_bytes + p.output_bytes;
  if (block_cols <= 0) block_cols = choose_block_cols(c);
  p.order = order_for(c);
  if (p.output_bytes == 0 || split_extent(c, p.order) <= block_cols) p.order = BlockOrder::whole;
  if (p.order != BlockOrder::whole) {
    Planner(c, p).plan(p.order, block_cols);
    return p;
  }
  const wire::Layout l = wire::layout(c);
  Block b;
  b.call = c;
  b.b_offset = l.inputs.size() > 1 ? static_cast<uint64_t>(l.inputs[0].rows) * l.inputs[0].cols * wire::element_bytes(c.scalar) : 0;
  b.out_offset = p.output_offset;
  b.input_needed = p.input_bytes;
  b.piece = 0;
  p.blocks.push_back(b);
  p.pieces.push_back({p.output_offset, p.output_bytes, 0});
  return p;
}

BlockOperands block_operands(const Block& b, std::byte* staging) {
  const wire::Layout l = wire::layout(b.call);
  BlockOperands o{{staging + b.a_offset, nullptr, nullptr}, 1, staging + b.out_offset, b.ld};
  const size_t operands = l.inputs.size() - (b.call.output_sent ? 1 : 0);  // A, and B where there is one
  if (operands > 1) o.inputs[o.count++] = staging + b.b_offset;
  if (b.call.output_sent) o.inputs[o.count++] = o.output;  // in place
  return o;
}

}  // namespace outboard::server
