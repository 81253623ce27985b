// The FFTW shim's behaviour, written once for both precisions: templates over a precision's traits
// T (fftw_exports.cpp defines them and stamps the exported symbols from fftw_api.def). T provides
// the types R, C, P, D, D64, K, the runtime's precision, an index (0 double, 1 single) and accessors
// real_<name>() for the real library's functions.
//
// A plan handed to the program is always a Plan of ours, never the real library's plan:
//   - every planner is normalized to one guru64 description (client::FftGuru plus the planning
//     array pointers) and the runtime is asked at once whether the plan runs remotely;
//   - a local plan is the real FFTW plan, made at once with the program's own flags;
//   - a remote-bound plan is not planned locally with MEASURE/PATIENT/EXHAUSTIVE (they would
//     clobber the arrays and cost planning time for nothing). Its local plan is made at once with
//     FFTW_ESTIMATE, on the original planning pointers (ESTIMATE never reads or writes the arrays,
//     costs microseconds, and planning on the original pointers keeps FFTW's alignment contract
//     for new-array execute): it records FFTW's own wisdom for the problem, answers whether FFTW
//     would refuse it, serves flops/cost/print, and runs the plan when it must run locally after all.
//   - wisdom: see "wisdom" below for what a remote plan planned with measuring rigor leaves.
// Every call into the real planner, plan destruction and wisdom holds one process-wide lock: the
// real planner is not thread-safe. The execute functions take no lock once a plan has its local
// plan: one plan may run from many threads at once on different arrays.
#pragma once
#include <fftw3.h>
#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <new>
#include <string>
#include <vector>

#include "client/fft.hpp"
#include "client/runtime.hpp"

namespace outboard::fftw {

using client::FftArrays;
using client::FftGuru;
using client::FftIoDim;
using wire::FftKind;

// Which real guru64 planner makes the local plan.
enum class Planner { dft, split_dft, r2c, split_r2c, c2r, split_c2r, r2r };

struct Plan {
  Planner planner = Planner::dft;
  FftGuru guru;
  void* ri = nullptr;  // the planning arrays: input (real part), input imaginary part (split),
  void* ii = nullptr;  // output (real part), output imaginary part (split); unused ones null
  void* ro = nullptr;
  void* io = nullptr;
  int nthreads = 1;                      // the planner's thread count when the program planned it
  client::RemoteFft* remote = nullptr;   // the runtime's handle
  bool remote_bound = false;             // not planned locally with the program's flags
  std::atomic<void*> local{nullptr};     // the real plan (made at once, or lazily with ESTIMATE)
  Plan* prev = nullptr;                  // the precision's list of live plans, for cleanup
  Plan* next = nullptr;
};

// ---- process-wide state: plain static storage, nothing to construct or destroy ----

// The planner lock. Recursive: the real library calls some public functions through its PLT
// (export_wisdom_to_filename -> export_wisdom_to_file, the threads library's cleanup_threads ->
// cleanup), and those land here again on the same thread.
inline pthread_mutex_t g_planner_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
inline Plan* g_plans[2] = {nullptr, nullptr};    // live plans per precision (under the lock)
inline std::atomic<bool> g_threads_on[2] = {};   // init_threads succeeded

class PlannerLock {
 public:
  PlannerLock() noexcept { pthread_mutex_lock(&g_planner_lock); }
  ~PlannerLock() { pthread_mutex_unlock(&g_planner_lock); }
  PlannerLock(const PlannerLock&) = delete;
  PlannerLock& operator=(const PlannerLock&) = delete;
};

// Test hook: OUTBOARD_FFTW_TEST_REMOTE_BOUND=1 treats every valid plan as remote-bound without a
// runtime handle, so that every execution takes the lazy ESTIMATE path (the runtime's answer "run
// it locally"). Lets the tests exercise that path before a server can serve FFTs.
inline bool test_remote_bound() noexcept {
  static const bool on = [] {
    const char* e = std::getenv("OUTBOARD_FFTW_TEST_REMOTE_BOUND");
    return e != nullptr && *e != '\0' && std::strcmp(e, "0") != 0;
  }();
  return on;
}

// Flags of a stand-in local plan: ESTIMATE instead of any measuring rigor, no WISDOM_ONLY (its
// answer was already given at plan time); the input-preservation, alignment and algorithm-
// restriction flags stay, since they change what the plan may do to the arrays.
inline unsigned estimate_flags(unsigned flags) noexcept {
  return (flags & ~(FFTW_PATIENT | FFTW_EXHAUSTIVE | FFTW_WISDOM_ONLY | FFTW_ESTIMATE_PATIENT)) | FFTW_ESTIMATE;
}

// FFTW's own validity test of a guru problem (what its guru planners check before planning).
inline bool kosher(const FftGuru& g) noexcept {
  for (const FftIoDim& d : g.dims)
    if (d.n <= 0) return false;
  for (const FftIoDim& d : g.howmany)
    if (d.n < 0) return false;
  return true;
}

inline Plan* plan_of(const void* handle) noexcept { return const_cast<Plan*>(static_cast<const Plan*>(handle)); }

inline FftArrays planning_arrays(const Plan& p) noexcept { return {p.ri, p.ii, p.ro, p.io}; }

// ---- the real library ----

template <class T>
void* real_plan(const Plan& p, unsigned flags) noexcept {
  using D64 = typename T::D64;
  using R = typename T::R;
  using C = typename T::C;
  try {
    std::vector<D64> dims, howmany;
    for (const FftIoDim& d : p.guru.dims) dims.push_back(D64{d.n, d.is, d.os});
    for (const FftIoDim& d : p.guru.howmany) howmany.push_back(D64{d.n, d.is, d.os});
    int rank = static_cast<int>(dims.size()), hrank = static_cast<int>(howmany.size());
    const D64* dp = dims.data();
    const D64* hp = howmany.data();
    auto r = [](void* a) { return static_cast<R*>(a); };
    auto c = [](void* a) { return static_cast<C*>(a); };
    typename T::P plan = nullptr;
    switch (p.planner) {
      case Planner::dft:
        plan = T::real_plan_guru64_dft()(rank, dp, hrank, hp, c(p.ri), c(p.ro), p.guru.sign, flags);
        break;
      case Planner::split_dft:
        plan = T::real_plan_guru64_split_dft()(rank, dp, hrank, hp, r(p.ri), r(p.ii), r(p.ro), r(p.io), flags);
        break;
      case Planner::r2c: plan = T::real_plan_guru64_dft_r2c()(rank, dp, hrank, hp, r(p.ri), c(p.ro), flags); break;
      case Planner::split_r2c:
        plan = T::real_plan_guru64_split_dft_r2c()(rank, dp, hrank, hp, r(p.ri), r(p.ro), r(p.io), flags);
        break;
      case Planner::c2r: plan = T::real_plan_guru64_dft_c2r()(rank, dp, hrank, hp, c(p.ri), r(p.ro), flags); break;
      case Planner::split_c2r:
        plan = T::real_plan_guru64_split_dft_c2r()(rank, dp, hrank, hp, r(p.ri), r(p.ii), r(p.ro), flags);
        break;
      case Planner::r2r: {
        std::vector<fftw_r2r_kind> kinds;
        for (int k : p.guru.r2r_kinds) kinds.push_back(static_cast<fftw_r2r_kind>(k));
        plan = T::real_plan_guru64_r2r()(rank, dp, hrank, hp, r(p.ri), r(p.ro), kinds.data(), flags);
        break;
      }
    }
    return plan;
  } catch (...) {  // std::bad_alloc: no plan, as FFTW answers when it cannot plan
    return nullptr;
  }
}

// The plan's local plan, made now (once, under the planner lock) if it has none yet.
template <class T>
void* local_plan(Plan& p) noexcept {
  if (void* l = p.local.load(std::memory_order_acquire)) return l;
  PlannerLock lock;
  if (void* l = p.local.load(std::memory_order_relaxed)) return l;
  // Plan with the thread count the program had set when it planned, not today's.
  int saved = 1;
  bool threads = g_threads_on[T::index].load() && T::real_planner_nthreads() != nullptr;
  if (threads) {
    saved = T::real_planner_nthreads()();
    if (saved != p.nthreads) T::real_plan_with_nthreads()(p.nthreads);
  }
  void* l = real_plan<T>(p, estimate_flags(p.guru.flags));
  if (threads && saved != p.nthreads) T::real_plan_with_nthreads()(saved);
  if (l == nullptr) {
    std::fprintf(stderr, "outboard: FFTW cannot make a local plan for a plan it accepted at plan time\n");
    std::abort();
  }
  p.local.store(l, std::memory_order_release);
  return l;
}

// ---- wisdom ----
// FFTW's contract: planning records wisdom; export_wisdom* writes it, import_wisdom* reads it back
// (here or into any FFTW of the same version), and a FFTW_WISDOM_ONLY plan is granted exactly when
// wisdom of the same problem planned with the same or a stronger rigor is known.
//
// A local plan is ordinary FFTW and records its own wisdom. A remote-bound plan records:
//   - FFTW's own ESTIMATE wisdom, through its local ESTIMATE plan (made at plan time, make_plan);
//   - when planned with MEASURE, PATIENT or EXHAUSTIVE: the problem, remembered at that rigor in a
//     table of our own (per precision). A later WISDOM_ONLY plan of the same problem (same layout,
//     array alignments, sign, kinds, algorithm flags and thread count, as FFTW's wisdom is keyed)
//     with the same or a weaker rigor is granted from it; export writes the table after FFTW's
//     text, import reads it back, forget_wisdom and cleanup forget it.
// Why not the real planner with the program's rigor: MEASURE and above time trial transforms on the
// arrays (clobbering them, or scratch copies as large as the problem) for seconds on large problems,
// for a plan whose transforms run on the server: what the measurement would choose is never used.
// The table gives the program what the rigor promises it (the WISDOM_ONLY answer, and wisdom that
// changes on export and round-trips through import), at no planning cost.
// Format: FFTW's wisdom text unchanged, then "(outboard-fftw-wisdom (remote RIGOR KEY) ...)". A
// plain FFTW imports it: its importer stops at the end of its own list and never reads what
// follows. There, remote problems have their ESTIMATE wisdom only (a WISDOM_ONLY plan of such a
// problem at MEASURE or above is refused, as for any problem that FFTW never measured).
// With no remote plan of measuring rigor, export writes exactly the real FFTW's text.

// The table's order: a type of ours, so that the map's code has hidden visibility like the rest of
// the shim (std's own instantiations would be exported beside FFTW's symbols).
struct KeyOrder {
  bool operator()(const std::string& a, const std::string& b) const noexcept { return a < b; }
};
using Remembered = std::map<std::string, int, KeyOrder>;
inline Remembered* g_remembered[2] = {nullptr, nullptr};  // under the planner lock; made on first use, never freed
constexpr char kWisdomHead[] = "(outboard-fftw-wisdom";

// The rigor FFTW plans a flag set with (its mkapiplan's patience): 0 ESTIMATE ... 3 EXHAUSTIVE.
inline int rigor(unsigned flags) noexcept {
  if (flags & FFTW_ESTIMATE) return 0;
  if (flags & FFTW_EXHAUSTIVE) return 3;
  return (flags & FFTW_PATIENT) ? 2 : 1;
}

// What FFTW's wisdom of a problem depends on, as one token: planner, sign, in-place, algorithm
// flags (input preservation normalised as FFTW's planners default it), thread count, the arrays'
// alignment, sizes and strides, r2r kinds.
template <class T>
std::string problem_key(const Plan& p, unsigned flags) {
  unsigned f = flags & ~(FFTW_ESTIMATE | FFTW_PATIENT | FFTW_EXHAUSTIVE | FFTW_WISDOM_ONLY | FFTW_ESTIMATE_PATIENT);
  const bool c2r = p.guru.kind == FftKind::c2r;
  const bool destroy = c2r ? !(f & FFTW_PRESERVE_INPUT) : (f & FFTW_DESTROY_INPUT) && !(f & FFTW_PRESERVE_INPUT);
  f = (f & ~(FFTW_DESTROY_INPUT | FFTW_PRESERVE_INPUT)) | (destroy ? FFTW_DESTROY_INPUT : 0u);
  auto align = [](void* a) { return a == nullptr ? -1 : T::real_alignment_of()(static_cast<typename T::R*>(a)); };
  char buf[160];
  std::snprintf(buf, sizeof buf, "p%d;s%d;i%d;f%x;t%d;a%d,%d,%d,%d", static_cast<int>(p.planner), p.guru.sign,
                p.guru.in_place ? 1 : 0, f, p.nthreads, align(p.ri), align(p.ii), align(p.ro), align(p.io));
  std::string key = buf;
  auto tensor = [&](char tag, const std::vector<FftIoDim>& dims) {
    key += ';';
    key += tag;
    for (std::size_t i = 0; i < dims.size(); ++i) {
      std::snprintf(buf, sizeof buf, "%s%lld.%lld.%lld", i == 0 ? "" : ",", static_cast<long long>(dims[i].n),
                    static_cast<long long>(dims[i].is), static_cast<long long>(dims[i].os));
      key += buf;
    }
  };
  tensor('d', p.guru.dims);
  tensor('h', p.guru.howmany);
  key += ";k";
  for (std::size_t i = 0; i < p.guru.r2r_kinds.size(); ++i) {
    std::snprintf(buf, sizeof buf, "%s%d", i == 0 ? "" : ",", p.guru.r2r_kinds[i]);
    key += buf;
  }
  return key;
}

// Under the planner lock: a remote-bound plan planned with measuring rigor is remembered.
template <class T>
void remember(const Plan& p, unsigned flags) noexcept {
  const int r = rigor(flags);
  if (r == 0) return;  // ESTIMATE: FFTW's own wisdom, from the local ESTIMATE plan
  try {
    auto*& table = g_remembered[T::index];
    if (table == nullptr) table = new Remembered;
    int& level = (*table)[problem_key<T>(p, flags)];
    if (level < r) level = r;
  } catch (...) {  // std::bad_alloc: not remembered, as if the wisdom had been forgotten
  }
}

// Under the planner lock: whether a WISDOM_ONLY plan with these flags is granted by our table.
template <class T>
bool remembered(const Plan& p, unsigned flags) noexcept {
  const auto* table = g_remembered[T::index];
  if (table == nullptr || table->empty()) return false;
  try {
    auto it = table->find(problem_key<T>(p, flags));
    return it != table->end() && it->second >= rigor(flags);
  } catch (...) {
    return false;
  }
}

template <class T>
void forget_remembered() noexcept {  // under the planner lock
  if (g_remembered[T::index] != nullptr) g_remembered[T::index]->clear();
}

// Under the planner lock: the wisdom text (malloc'ed, freed with free()), or nullptr.
template <class T>
char* wisdom_text() noexcept {
  char* real = T::real_export_wisdom_to_string()();
  const auto* table = g_remembered[T::index];
  if (real == nullptr || table == nullptr || table->empty()) return real;
  try {
    std::string text = real;
    text += kWisdomHead;
    text += '\n';
    for (const auto& [key, level] : *table) {
      text += "  (remote ";
      text += static_cast<char>('0' + level);  // 1-3
      text += ' ';
      text += key;
      text += ")\n";
    }
    text += ")\n";
    char* out = static_cast<char*>(std::malloc(text.size() + 1));
    if (out != nullptr) std::memcpy(out, text.c_str(), text.size() + 1);
    std::free(real);
    return out;
  } catch (...) {
    std::free(real);
    return nullptr;
  }
}

// Reads one wisdom text from a character source: FFTW's list (everything up to the parenthesis that
// closes the first one opened), then, after white space, our list if one follows. get() returns a
// character or EOF; unget(c) gives back a character read past the end where the source can.
template <class Get, class Unget>
void read_wisdom(Get get, Unget unget, std::string& fftw, std::string& ours) {
  int c = EOF, depth = 0;
  while ((c = get()) != EOF) {
    fftw += static_cast<char>(c);
    if (c == '(') ++depth;
    else if (c == ')' && --depth <= 0) break;
  }
  if (c == EOF) return;
  while ((c = get()) != EOF && std::isspace(c)) {
  }
  if (c != '(') {
    if (c != EOF) unget(c);
    return;
  }
  depth = 0;
  do {
    ours += static_cast<char>(c);
    if (c == '(') ++depth;
    else if (c == ')' && --depth == 0) break;
  } while ((c = get()) != EOF);
}

// Our list, parsed into `into`; false if it is not well formed. Text that is not ours is ignored
// (as a plain FFTW ignores everything after its list).
inline bool parse_remembered(const std::string& text, Remembered& into) {
  if (text.compare(0, sizeof kWisdomHead - 1, kWisdomHead) != 0) return true;
  std::size_t i = sizeof kWisdomHead - 1;
  auto skip = [&] {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  };
  auto token = [&] {
    skip();
    std::size_t start = i;
    while (i < text.size() && !std::isspace(static_cast<unsigned char>(text[i])) && text[i] != '(' && text[i] != ')') ++i;
    return text.substr(start, i - start);
  };
  if (i < text.size() && !std::isspace(static_cast<unsigned char>(text[i]))) return false;
  while (true) {
    skip();
    if (i >= text.size()) return false;
    if (text[i] == ')') return true;
    if (text[i] != '(') return false;
    ++i;
    if (token() != "remote") return false;
    std::string level = token(), key = token();
    skip();
    if (i >= text.size() || text[i] != ')' || key.empty() || level.size() != 1 || level[0] < '1' || level[0] > '3')
      return false;
    ++i;
    int& l = into[key];
    l = std::max(l, level[0] - '0');
  }
}

// Under the planner lock: imports a text read by read_wisdom. FFTW's answer; our list joins the
// table only when FFTW accepted its part and ours is well formed (wisdom is all or nothing).
template <class T>
int import_text(const std::string& fftw, const std::string& ours) noexcept {
  try {
    Remembered add;
    if (!parse_remembered(ours, add)) return 0;
    int ok = T::real_import_wisdom_from_string()(fftw.c_str());
    if (ok && !add.empty()) {
      auto*& table = g_remembered[T::index];
      if (table == nullptr) table = new Remembered;
      for (const auto& [key, level] : add) (*table)[key] = std::max((*table)[key], level);
    }
    return ok;
  } catch (...) {
    return 0;
  }
}

template <class T>
void forget_wisdom() noexcept {
  PlannerLock lock;
  T::real_forget_wisdom()();
  forget_remembered<T>();
}
template <class T>
char* export_wisdom_to_string() noexcept {
  PlannerLock lock;
  return wisdom_text<T>();
}
template <class T>
void export_wisdom_to_file(FILE* f) noexcept {
  PlannerLock lock;
  if (char* s = wisdom_text<T>()) {
    std::fputs(s, f);
    std::free(s);
  }
}
template <class T>
int export_wisdom_to_filename(const char* filename) noexcept {
  PlannerLock lock;
  FILE* f = std::fopen(filename, "w");
  if (f == nullptr) return 0;
  export_wisdom_to_file<T>(f);
  return std::fclose(f) == 0 ? 1 : 0;
}
template <class T, class WriteChar>
void export_wisdom(WriteChar write_char, void* data) noexcept {
  PlannerLock lock;
  if (char* s = wisdom_text<T>()) {
    for (const char* c = s; *c != '\0'; ++c) write_char(*c, data);
    std::free(s);
  }
}
template <class T>
int import_wisdom_from_string(const char* s) noexcept {
  if (s == nullptr) return 0;
  PlannerLock lock;
  try {
    std::string fftw, ours;
    read_wisdom([&] { return *s == '\0' ? EOF : static_cast<unsigned char>(*s++); }, [&](int) { --s; }, fftw, ours);
    return import_text<T>(fftw, ours);
  } catch (...) {
    return 0;
  }
}
template <class T>
int import_wisdom_from_file(FILE* f) noexcept {
  PlannerLock lock;
  try {
    std::string fftw, ours;
    read_wisdom([&] { return std::getc(f); }, [&](int c) { std::ungetc(c, f); }, fftw, ours);
    return import_text<T>(fftw, ours);
  } catch (...) {
    return 0;
  }
}
template <class T>
int import_wisdom_from_filename(const char* filename) noexcept {
  PlannerLock lock;
  FILE* f = std::fopen(filename, "r");
  if (f == nullptr) return 0;
  int ok = import_wisdom_from_file<T>(f);
  std::fclose(f);
  return ok;
}
// A read_char source cannot give back a character: at most the white space after FFTW's list and
// one character more are read past it (FFTW's own importer reads none).
template <class T, class ReadChar>
int import_wisdom(ReadChar read_char, void* data) noexcept {
  PlannerLock lock;
  try {
    std::string fftw, ours;
    read_wisdom([&] { return read_char(data); }, [](int) {}, fftw, ours);
    return import_text<T>(fftw, ours);
  } catch (...) {
    return 0;
  }
}

// ---- planning ----

// The real library's answer for a valid-looking problem, in the Plan p (planner, guru, arrays set).
template <class T>
typename T::P make_plan(Plan* p) noexcept {
  FftGuru& g = p->guru;
  g.precision = T::precision;
  if (!kosher(g)) {
    delete p;
    return nullptr;
  }
  const unsigned flags = g.flags;
  p->remote = client::fft_plan(g);
  p->remote_bound = p->remote != nullptr || test_remote_bound();
  void* local = nullptr;
  bool refused = false;
  {
    PlannerLock lock;
    if (g_threads_on[T::index].load() && T::real_planner_nthreads() != nullptr)
      p->nthreads = T::real_planner_nthreads()();
    if (flags & FFTW_WISDOM_ONLY) {
      // WISDOM_ONLY never touches the arrays. Granted when the real planner's wisdom answers the
      // problem, or when our wisdom of remote plans has it at the same or a stronger rigor (then
      // the local plan is an ESTIMATE stand-in, as for any remote-bound plan).
      local = real_plan<T>(*p, flags);
      if (local == nullptr && remembered<T>(*p, flags)) local = real_plan<T>(*p, estimate_flags(flags));
      refused = local == nullptr;
    } else if (!p->remote_bound) {
      local = real_plan<T>(*p, flags);  // local: ordinary FFTW
      refused = local == nullptr;
    } else {
      // Remote-bound: the local ESTIMATE plan now (FFTW's wisdom for ESTIMATE, and whether FFTW
      // would refuse the problem), and the problem remembered at the program's rigor.
      local = real_plan<T>(*p, estimate_flags(flags));
      refused = local == nullptr;
      if (!refused) remember<T>(*p, flags);
    }
    if (!refused) {
      p->local.store(local, std::memory_order_relaxed);
      p->next = g_plans[T::index];
      if (p->next != nullptr) p->next->prev = p;
      g_plans[T::index] = p;
    }
  }
  if (refused) {
    if (p->remote != nullptr) client::fft_destroy(p->remote);
    delete p;
    return nullptr;
  }
  return reinterpret_cast<typename T::P>(p);
}

inline Plan* new_plan(Planner planner, FftKind kind, int sign, unsigned flags, bool split, void* ri, void* ii,
                      void* ro, void* io, bool in_place) noexcept {
  Plan* p = new (std::nothrow) Plan;
  if (p == nullptr) return nullptr;
  p->planner = planner;
  p->guru.kind = kind;
  p->guru.sign = sign;
  p->guru.flags = flags;
  p->guru.split = split;
  p->guru.in_place = in_place;
  p->ri = ri;
  p->ii = ii;
  p->ro = ro;
  p->io = io;
  return p;
}

// dims of a row-major array of `rank` dimensions n, in arrays whose physical dimensions are niphys
// and nophys, innermost strides is and os (FFTW's mktensor_rowmajor).
inline bool rowmajor(std::vector<FftIoDim>& dims, int rank, const int* n, const int* niphys, const int* nophys,
                     int64_t is, int64_t os) {
  dims.resize(static_cast<std::size_t>(rank));
  for (int i = rank - 1; i >= 0; --i) {
    dims[i].n = n[i];
    dims[i].is = i == rank - 1 ? is : dims[i + 1].is * niphys[i + 1];
    dims[i].os = i == rank - 1 ? os : dims[i + 1].os * nophys[i + 1];
  }
  return true;
}

// FFTW's layout of the real side (cmplx false) or the complex side (cmplx true) of an r2c/c2r
// problem when the program gives no embedding: the complex side's last dimension is n/2+1, an
// in-place real side's is padded to 2(n/2+1).
inline const int* rdft2_pad(std::vector<int>& store, int rank, const int* n, const int* nembed, bool inplace,
                            bool cmplx) {
  if (nembed != nullptr || rank == 0) return nembed != nullptr ? nembed : n;
  if (!inplace && !cmplx) return n;
  store.assign(n, n + rank);
  store[rank - 1] = (n[rank - 1] / 2 + 1) * (cmplx ? 1 : 2);
  return store.data();
}

inline bool many_kosher(int rank, const int* n, int howmany) noexcept {
  if (rank < 0 || howmany < 0 || (rank > 0 && n == nullptr)) return false;
  for (int i = 0; i < rank; ++i)
    if (n[i] <= 0) return false;
  return true;
}

template <class T>
typename T::P plan_many(Planner planner, FftKind kind, int rank, const int* n, int howmany, void* in,
                        const int* inembed, int istride, int idist, void* out, const int* onembed, int ostride,
                        int odist, int sign, const fftw_r2r_kind* kinds, unsigned flags) noexcept {
  if (!many_kosher(rank, n, howmany)) return nullptr;
  Plan* p = new_plan(planner, kind, sign, flags, false, in, nullptr, out, nullptr, in == out);
  if (p == nullptr) return nullptr;
  try {
    std::vector<int> ipad, opad;
    const int* ni = inembed != nullptr ? inembed : n;
    const int* no = onembed != nullptr ? onembed : n;
    if (kind == FftKind::r2c) {
      ni = rdft2_pad(ipad, rank, n, inembed, p->guru.in_place, false);
      no = rdft2_pad(opad, rank, n, onembed, p->guru.in_place, true);
    } else if (kind == FftKind::c2r) {
      ni = rdft2_pad(ipad, rank, n, inembed, p->guru.in_place, true);
      no = rdft2_pad(opad, rank, n, onembed, p->guru.in_place, false);
    }
    rowmajor(p->guru.dims, rank, n, ni, no, istride, ostride);
    p->guru.howmany = {FftIoDim{howmany, idist, odist}};
    if (kinds != nullptr) p->guru.r2r_kinds.assign(kinds, kinds + rank);
  } catch (...) {
    delete p;
    return nullptr;
  }
  return make_plan<T>(p);
}

template <class T, class Dim>
typename T::P plan_guru(Planner planner, FftKind kind, bool split, int rank, const Dim* dims, int howmany_rank,
                        const Dim* howmany_dims, void* ri, void* ii, void* ro, void* io, int sign,
                        const fftw_r2r_kind* kinds, unsigned flags) noexcept {
  if (rank < 0 || howmany_rank < 0) return nullptr;
  Plan* p = new_plan(planner, kind, sign, flags, split, ri, ii, ro, io, ri == ro);
  if (p == nullptr) return nullptr;
  try {
    for (int i = 0; i < rank; ++i) p->guru.dims.push_back({dims[i].n, dims[i].is, dims[i].os});
    for (int i = 0; i < howmany_rank; ++i)
      p->guru.howmany.push_back({howmany_dims[i].n, howmany_dims[i].is, howmany_dims[i].os});
    if (kinds != nullptr) p->guru.r2r_kinds.assign(kinds, kinds + rank);
  } catch (...) {
    delete p;
    return nullptr;
  }
  return make_plan<T>(p);
}

// ---- the API, one template per function of fftw_api.def ----

template <class T>
typename T::P plan_many_dft(int rank, const int* n, int howmany, typename T::C* in, const int* inembed, int istride,
                            int idist, typename T::C* out, const int* onembed, int ostride, int odist, int sign,
                            unsigned flags) noexcept {
  return plan_many<T>(Planner::dft, FftKind::c2c, rank, n, howmany, in, inembed, istride, idist, out, onembed,
                      ostride, odist, sign, nullptr, flags);
}
template <class T>
typename T::P plan_dft(int rank, const int* n, typename T::C* in, typename T::C* out, int sign,
                       unsigned flags) noexcept {
  return plan_many_dft<T>(rank, n, 1, in, nullptr, 1, 1, out, nullptr, 1, 1, sign, flags);
}
template <class T>
typename T::P plan_dft_1d(int n, typename T::C* in, typename T::C* out, int sign, unsigned flags) noexcept {
  return plan_dft<T>(1, &n, in, out, sign, flags);
}
template <class T>
typename T::P plan_dft_2d(int n0, int n1, typename T::C* in, typename T::C* out, int sign, unsigned flags) noexcept {
  const int n[] = {n0, n1};
  return plan_dft<T>(2, n, in, out, sign, flags);
}
template <class T>
typename T::P plan_dft_3d(int n0, int n1, int n2, typename T::C* in, typename T::C* out, int sign,
                          unsigned flags) noexcept {
  const int n[] = {n0, n1, n2};
  return plan_dft<T>(3, n, in, out, sign, flags);
}
template <class T, class Dim>
typename T::P guru_dft(int rank, const Dim* dims, int hrank, const Dim* hdims, typename T::C* in,
                       typename T::C* out, int sign, unsigned flags) noexcept {
  return plan_guru<T>(Planner::dft, FftKind::c2c, false, rank, dims, hrank, hdims, in, nullptr, out, nullptr, sign,
                      nullptr, flags);
}
template <class T>
typename T::P plan_guru_dft(int rank, const typename T::D* dims, int hrank, const typename T::D* hdims,
                            typename T::C* in, typename T::C* out, int sign, unsigned flags) noexcept {
  return guru_dft<T>(rank, dims, hrank, hdims, in, out, sign, flags);
}
template <class T>
typename T::P plan_guru64_dft(int rank, const typename T::D64* dims, int hrank, const typename T::D64* hdims,
                              typename T::C* in, typename T::C* out, int sign, unsigned flags) noexcept {
  return guru_dft<T>(rank, dims, hrank, hdims, in, out, sign, flags);
}
// Split complex transforms are forward in FFTW's terms; a backward one swaps the parts.
template <class T, class Dim>
typename T::P guru_split_dft(int rank, const Dim* dims, int hrank, const Dim* hdims, typename T::R* ri,
                             typename T::R* ii, typename T::R* ro, typename T::R* io, unsigned flags) noexcept {
  return plan_guru<T>(Planner::split_dft, FftKind::c2c, true, rank, dims, hrank, hdims, ri, ii, ro, io,
                      FFTW_FORWARD, nullptr, flags);
}
template <class T>
typename T::P plan_guru_split_dft(int rank, const typename T::D* dims, int hrank, const typename T::D* hdims,
                                  typename T::R* ri, typename T::R* ii, typename T::R* ro, typename T::R* io,
                                  unsigned flags) noexcept {
  return guru_split_dft<T>(rank, dims, hrank, hdims, ri, ii, ro, io, flags);
}
template <class T>
typename T::P plan_guru64_split_dft(int rank, const typename T::D64* dims, int hrank, const typename T::D64* hdims,
                                    typename T::R* ri, typename T::R* ii, typename T::R* ro, typename T::R* io,
                                    unsigned flags) noexcept {
  return guru_split_dft<T>(rank, dims, hrank, hdims, ri, ii, ro, io, flags);
}

// r2c: in place when the complex output starts at the real input (FFTW's test).
template <class T>
typename T::P plan_many_dft_r2c(int rank, const int* n, int howmany, typename T::R* in, const int* inembed,
                                int istride, int idist, typename T::C* out, const int* onembed, int ostride,
                                int odist, unsigned flags) noexcept {
  return plan_many<T>(Planner::r2c, FftKind::r2c, rank, n, howmany, in, inembed, istride, idist, out, onembed,
                      ostride, odist, FFTW_FORWARD, nullptr, flags);
}
template <class T>
typename T::P plan_dft_r2c(int rank, const int* n, typename T::R* in, typename T::C* out, unsigned flags) noexcept {
  return plan_many_dft_r2c<T>(rank, n, 1, in, nullptr, 1, 1, out, nullptr, 1, 1, flags);
}
template <class T>
typename T::P plan_dft_r2c_1d(int n, typename T::R* in, typename T::C* out, unsigned flags) noexcept {
  return plan_dft_r2c<T>(1, &n, in, out, flags);
}
template <class T>
typename T::P plan_dft_r2c_2d(int n0, int n1, typename T::R* in, typename T::C* out, unsigned flags) noexcept {
  const int n[] = {n0, n1};
  return plan_dft_r2c<T>(2, n, in, out, flags);
}
template <class T>
typename T::P plan_dft_r2c_3d(int n0, int n1, int n2, typename T::R* in, typename T::C* out, unsigned flags) noexcept {
  const int n[] = {n0, n1, n2};
  return plan_dft_r2c<T>(3, n, in, out, flags);
}
template <class T>
typename T::P plan_many_dft_c2r(int rank, const int* n, int howmany, typename T::C* in, const int* inembed,
                                int istride, int idist, typename T::R* out, const int* onembed, int ostride,
                                int odist, unsigned flags) noexcept {
  return plan_many<T>(Planner::c2r, FftKind::c2r, rank, n, howmany, in, inembed, istride, idist, out, onembed,
                      ostride, odist, FFTW_BACKWARD, nullptr, flags);
}
template <class T>
typename T::P plan_dft_c2r(int rank, const int* n, typename T::C* in, typename T::R* out, unsigned flags) noexcept {
  return plan_many_dft_c2r<T>(rank, n, 1, in, nullptr, 1, 1, out, nullptr, 1, 1, flags);
}
template <class T>
typename T::P plan_dft_c2r_1d(int n, typename T::C* in, typename T::R* out, unsigned flags) noexcept {
  return plan_dft_c2r<T>(1, &n, in, out, flags);
}
template <class T>
typename T::P plan_dft_c2r_2d(int n0, int n1, typename T::C* in, typename T::R* out, unsigned flags) noexcept {
  const int n[] = {n0, n1};
  return plan_dft_c2r<T>(2, n, in, out, flags);
}
template <class T>
typename T::P plan_dft_c2r_3d(int n0, int n1, int n2, typename T::C* in, typename T::R* out, unsigned flags) noexcept {
  const int n[] = {n0, n1, n2};
  return plan_dft_c2r<T>(3, n, in, out, flags);
}
template <class T>
typename T::P plan_guru_dft_r2c(int rank, const typename T::D* dims, int hrank, const typename T::D* hdims,
                                typename T::R* in, typename T::C* out, unsigned flags) noexcept {
  return plan_guru<T>(Planner::r2c, FftKind::r2c, false, rank, dims, hrank, hdims, in, nullptr, out, nullptr,
                      FFTW_FORWARD, nullptr, flags);
}
template <class T>
typename T::P plan_guru64_dft_r2c(int rank, const typename T::D64* dims, int hrank, const typename T::D64* hdims,
                                  typename T::R* in, typename T::C* out, unsigned flags) noexcept {
  return plan_guru<T>(Planner::r2c, FftKind::r2c, false, rank, dims, hrank, hdims, in, nullptr, out, nullptr,
                      FFTW_FORWARD, nullptr, flags);
}
template <class T>
typename T::P plan_guru_split_dft_r2c(int rank, const typename T::D* dims, int hrank, const typename T::D* hdims,
                                      typename T::R* in, typename T::R* ro, typename T::R* io, unsigned flags) noexcept {
  return plan_guru<T>(Planner::split_r2c, FftKind::r2c, true, rank, dims, hrank, hdims, in, nullptr, ro, io,
                      FFTW_FORWARD, nullptr, flags);
}
template <class T>
typename T::P plan_guru64_split_dft_r2c(int rank, const typename T::D64* dims, int hrank,
                                        const typename T::D64* hdims, typename T::R* in, typename T::R* ro,
                                        typename T::R* io, unsigned flags) noexcept {
  return plan_guru<T>(Planner::split_r2c, FftKind::r2c, true, rank, dims, hrank, hdims, in, nullptr, ro, io,
                      FFTW_FORWARD, nullptr, flags);
}
template <class T>
typename T::P plan_guru_dft_c2r(int rank, const typename T::D* dims, int hrank, const typename T::D* hdims,
                                typename T::C* in, typename T::R* out, unsigned flags) noexcept {
  return plan_guru<T>(Planner::c2r, FftKind::c2r, false, rank, dims, hrank, hdims, in, nullptr, out, nullptr,
                      FFTW_BACKWARD, nullptr, flags);
}
template <class T>
typename T::P plan_guru64_dft_c2r(int rank, const typename T::D64* dims, int hrank, const typename T::D64* hdims,
                                  typename T::C* in, typename T::R* out, unsigned flags) noexcept {
  return plan_guru<T>(Planner::c2r, FftKind::c2r, false, rank, dims, hrank, hdims, in, nullptr, out, nullptr,
                      FFTW_BACKWARD, nullptr, flags);
}
template <class T>
typename T::P plan_guru_split_dft_c2r(int rank, const typename T::D* dims, int hrank, const typename T::D* hdims,
                                      typename T::R* ri, typename T::R* ii, typename T::R* out, unsigned flags) noexcept {
  return plan_guru<T>(Planner::split_c2r, FftKind::c2r, true, rank, dims, hrank, hdims, ri, ii, out, nullptr,
                      FFTW_BACKWARD, nullptr, flags);
}
template <class T>
typename T::P plan_guru64_split_dft_c2r(int rank, const typename T::D64* dims, int hrank,
                                        const typename T::D64* hdims, typename T::R* ri, typename T::R* ii,
                                        typename T::R* out, unsigned flags) noexcept {
  return plan_guru<T>(Planner::split_c2r, FftKind::c2r, true, rank, dims, hrank, hdims, ri, ii, out, nullptr,
                      FFTW_BACKWARD, nullptr, flags);
}

template <class T>
typename T::P plan_many_r2r(int rank, const int* n, int howmany, typename T::R* in, const int* inembed, int istride,
                            int idist, typename T::R* out, const int* onembed, int ostride, int odist,
                            const fftw_r2r_kind* kind, unsigned flags) noexcept {
  if (rank > 0 && kind == nullptr) return nullptr;
  return plan_many<T>(Planner::r2r, FftKind::r2r, rank, n, howmany, in, inembed, istride, idist, out, onembed,
                      ostride, odist, 0, kind, flags);
}
template <class T>
typename T::P plan_r2r(int rank, const int* n, typename T::R* in, typename T::R* out, const fftw_r2r_kind* kind,
                       unsigned flags) noexcept {
  return plan_many_r2r<T>(rank, n, 1, in, nullptr, 1, 1, out, nullptr, 1, 1, kind, flags);
}
template <class T>
typename T::P plan_r2r_1d(int n, typename T::R* in, typename T::R* out, fftw_r2r_kind kind, unsigned flags) noexcept {
  return plan_r2r<T>(1, &n, in, out, &kind, flags);
}
template <class T>
typename T::P plan_r2r_2d(int n0, int n1, typename T::R* in, typename T::R* out, fftw_r2r_kind kind0,
                          fftw_r2r_kind kind1, unsigned flags) noexcept {
  const int n[] = {n0, n1};
  const fftw_r2r_kind k[] = {kind0, kind1};
  return plan_r2r<T>(2, n, in, out, k, flags);
}
template <class T>
typename T::P plan_r2r_3d(int n0, int n1, int n2, typename T::R* in, typename T::R* out, fftw_r2r_kind kind0,
                          fftw_r2r_kind kind1, fftw_r2r_kind kind2, unsigned flags) noexcept {
  const int n[] = {n0, n1, n2};
  const fftw_r2r_kind k[] = {kind0, kind1, kind2};
  return plan_r2r<T>(3, n, in, out, k, flags);
}
template <class T>
typename T::P plan_guru_r2r(int rank, const typename T::D* dims, int hrank, const typename T::D* hdims,
                            typename T::R* in, typename T::R* out, const fftw_r2r_kind* kind, unsigned flags) noexcept {
  if (rank > 0 && kind == nullptr) return nullptr;
  return plan_guru<T>(Planner::r2r, FftKind::r2r, false, rank, dims, hrank, hdims, in, nullptr, out, nullptr, 0,
                      kind, flags);
}
template <class T>
typename T::P plan_guru64_r2r(int rank, const typename T::D64* dims, int hrank, const typename T::D64* hdims,
                              typename T::R* in, typename T::R* out, const fftw_r2r_kind* kind,
                              unsigned flags) noexcept {
  if (rank > 0 && kind == nullptr) return nullptr;
  return plan_guru<T>(Planner::r2r, FftKind::r2r, false, rank, dims, hrank, hdims, in, nullptr, out, nullptr, 0,
                      kind, flags);
}

// ---- execution ----

// The local plan to run `arrays` on, or nullptr when the runtime ran them remotely.
template <class T>
typename T::P local_run(Plan& p, const FftArrays& arrays) noexcept {
  if (p.remote != nullptr && client::fft_execute(p.remote, arrays)) return nullptr;
  void* l = local_plan<T>(p);
  client::fft_ran_locally(p.guru);
  return static_cast<typename T::P>(l);
}

template <class T>
void execute(const typename T::P h) noexcept {
  Plan* p = plan_of(h);
  if (p == nullptr) return;
  if (auto l = local_run<T>(*p, planning_arrays(*p))) {
    const client::LocalTiming timing(nullptr);  // for the cost model, where it kept this plan here
    T::real_execute()(l);
  }
}
template <class T>
void execute_dft(const typename T::P h, typename T::C* in, typename T::C* out) noexcept {
  Plan* p = plan_of(h);
  if (p == nullptr) return;
  if (auto l = local_run<T>(*p, {in, nullptr, out, nullptr})) {
    const client::LocalTiming timing(nullptr);  // for the cost model, where it kept this plan here
    T::real_execute_dft()(l, in, out);
  }
}
template <class T>
void execute_split_dft(const typename T::P h, typename T::R* ri, typename T::R* ii, typename T::R* ro,
                       typename T::R* io) noexcept {
  Plan* p = plan_of(h);
  if (p == nullptr) return;
  if (auto l = local_run<T>(*p, {ri, ii, ro, io})) {
    const client::LocalTiming timing(nullptr);  // for the cost model, where it kept this plan here
    T::real_execute_split_dft()(l, ri, ii, ro, io);
  }
}
template <class T>
void execute_dft_r2c(const typename T::P h, typename T::R* in, typename T::C* out) noexcept {
  Plan* p = plan_of(h);
  if (p == nullptr) return;
  if (auto l = local_run<T>(*p, {in, nullptr, out, nullptr})) {
    const client::LocalTiming timing(nullptr);  // for the cost model, where it kept this plan here
    T::real_execute_dft_r2c()(l, in, out);
  }
}
template <class T>
void execute_split_dft_r2c(const typename T::P h, typename T::R* in, typename T::R* ro, typename T::R* io) noexcept {
  Plan* p = plan_of(h);
  if (p == nullptr) return;
  if (auto l = local_run<T>(*p, {in, nullptr, ro, io})) {
    const client::LocalTiming timing(nullptr);  // for the cost model, where it kept this plan here
    T::real_execute_split_dft_r2c()(l, in, ro, io);
  }
}
template <class T>
void execute_dft_c2r(const typename T::P h, typename T::C* in, typename T::R* out) noexcept {
  Plan* p = plan_of(h);
  if (p == nullptr) return;
  if (auto l = local_run<T>(*p, {in, nullptr, out, nullptr})) {
    const client::LocalTiming timing(nullptr);  // for the cost model, where it kept this plan here
    T::real_execute_dft_c2r()(l, in, out);
  }
}
template <class T>
void execute_split_dft_c2r(const typename T::P h, typename T::R* ri, typename T::R* ii, typename T::R* out) noexcept {
  Plan* p = plan_of(h);
  if (p == nullptr) return;
  if (auto l = local_run<T>(*p, {ri, ii, out, nullptr})) {
    const client::LocalTiming timing(nullptr);  // for the cost model, where it kept this plan here
    T::real_execute_split_dft_c2r()(l, ri, ii, out);
  }
}
template <class T>
void execute_r2r(const typename T::P h, typename T::R* in, typename T::R* out) noexcept {
  Plan* p = plan_of(h);
  if (p == nullptr) return;
  if (auto l = local_run<T>(*p, {in, nullptr, out, nullptr})) {
    const client::LocalTiming timing(nullptr);  // for the cost model, where it kept this plan here
    T::real_execute_r2r()(l, in, out);
  }
}

// ---- plans ----

template <class T>
void unlink_plan(Plan* p) noexcept {  // under the planner lock
  if (p->prev != nullptr) p->prev->next = p->next;
  if (p->next != nullptr) p->next->prev = p->prev;
  if (g_plans[T::index] == p) g_plans[T::index] = p->next;
  p->prev = p->next = nullptr;
}

// Destroying NULL is harmless, as in FFTW.
template <class T>
void destroy_plan(typename T::P h) noexcept {
  Plan* p = plan_of(h);
  if (p == nullptr) return;
  {
    PlannerLock lock;
    unlink_plan<T>(p);
    if (void* l = p->local.load(std::memory_order_acquire)) T::real_destroy_plan()(static_cast<typename T::P>(l));
  }
  if (p->remote != nullptr) client::fft_destroy(p->remote);  // outside the lock: it may talk to the server
  delete p;
}

// As FFTW: every plan of this precision is destroyed (the program must not use them after).
template <class T>
void cleanup() noexcept {
  Plan* plans = nullptr;
  {
    PlannerLock lock;
    plans = g_plans[T::index];
    g_plans[T::index] = nullptr;
    for (Plan* p = plans; p != nullptr; p = p->next)
      if (void* l = p->local.load(std::memory_order_acquire)) T::real_destroy_plan()(static_cast<typename T::P>(l));
    T::real_cleanup()();  // which forgets FFTW's wisdom: ours too
    forget_remembered<T>();
  }
  while (plans != nullptr) {
    Plan* next = plans->next;
    if (plans->remote != nullptr) client::fft_destroy(plans->remote);
    delete plans;
    plans = next;
  }
}

// A remote-bound plan prints as "(outboard-remote <its local stand-in>)".
template <class T>
void fprint_plan(const typename T::P h, FILE* f) noexcept {
  Plan* p = plan_of(h);
  if (p == nullptr || f == nullptr) return;
  void* l = local_plan<T>(*p);
  PlannerLock lock;
  if (p->remote_bound) std::fputs("(outboard-remote ", f);
  T::real_fprint_plan()(static_cast<typename T::P>(l), f);
  if (p->remote_bound) std::fputs(")", f);
}
// Not the real print_plan: it calls fprint_plan through the PLT, which would land here with a real plan.
template <class T>
void print_plan(const typename T::P h) noexcept {
  fprint_plan<T>(h, stdout);
}
template <class T>
char* sprint_plan(const typename T::P h) noexcept {
  Plan* p = plan_of(h);
  if (p == nullptr) return nullptr;
  void* l = local_plan<T>(*p);
  PlannerLock lock;
  char* s = T::real_sprint_plan()(static_cast<typename T::P>(l));
  if (s == nullptr || !p->remote_bound) return s;
  static const char kHead[] = "(outboard-remote ";
  std::size_t len = std::strlen(s);
  char* r = static_cast<char*>(std::malloc(sizeof kHead - 1 + len + 2));  // freed by the program with free()
  if (r != nullptr) {
    std::memcpy(r, kHead, sizeof kHead - 1);
    std::memcpy(r + sizeof kHead - 1, s, len);
    std::memcpy(r + sizeof kHead - 1 + len, ")", 2);
  }
  std::free(s);
  return r;
}
template <class T>
void flops(const typename T::P h, double* add, double* mul, double* fmas) noexcept {
  Plan* p = plan_of(h);
  if (p == nullptr) {
    *add = *mul = *fmas = 0;
    return;
  }
  void* l = local_plan<T>(*p);
  PlannerLock lock;
  T::real_flops()(static_cast<typename T::P>(l), add, mul, fmas);
}
template <class T>
double estimate_cost(const typename T::P h) noexcept {
  Plan* p = plan_of(h);
  if (p == nullptr) return 0;
  void* l = local_plan<T>(*p);
  PlannerLock lock;
  return T::real_estimate_cost()(static_cast<typename T::P>(l));
}
template <class T>
double cost(const typename T::P h) noexcept {
  Plan* p = plan_of(h);
  if (p == nullptr) return 0;
  void* l = local_plan<T>(*p);
  PlannerLock lock;
  return T::real_cost()(static_cast<typename T::P>(l));
}

// ---- threads ----
// Over the real threads library when it can be found; without it init_threads fails (FFTW's
// answer when threads cannot be used) and the rest do nothing, so local plans run on one thread.

template <class T>
int init_threads() noexcept {
  auto fn = T::real_init_threads();
  if (fn == nullptr) return 0;
  PlannerLock lock;
  int ok = fn();
  if (ok != 0) g_threads_on[T::index].store(true);
  return ok;
}
template <class T>
void plan_with_nthreads(int nthreads) noexcept {
  if (auto fn = T::real_plan_with_nthreads()) {
    PlannerLock lock;
    fn(nthreads);
  }
}
template <class T>
int planner_nthreads() noexcept {
  auto fn = T::real_planner_nthreads();
  if (fn == nullptr) return 1;
  PlannerLock lock;
  return fn();
}
// FFTW's cleanup_threads also cleans up (every plan becomes invalid): ours first, then the real.
template <class T>
void cleanup_threads() noexcept {
  cleanup<T>();
  if (auto fn = T::real_cleanup_threads()) {
    PlannerLock lock;
    fn();
    g_threads_on[T::index].store(false);
  }
}
template <class T>
void make_planner_thread_safe() noexcept {
  if (auto fn = T::real_make_planner_thread_safe()) {
    PlannerLock lock;
    fn();
  }
}
template <class T>
void threads_set_callback(void (*parallel_loop)(void* (*work)(char*), char* jobdata, size_t elsize, int njobs,
                                                void* data),
                          void* data) noexcept {
  if (auto fn = T::real_threads_set_callback()) {
    PlannerLock lock;
    fn(parallel_loop, data);
  }
}

}  // namespace outboard::fftw
