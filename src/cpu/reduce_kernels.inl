// The reduction kernels, compiled once per instruction set: cpu/reduce.cpp (the build's own
// flags), cpu/reduce_avx2.cpp and cpu/reduce_avx512.cpp (a target pragma around this file) each
// include it, and cpu/reduce.cpp picks one at run time (cpu/reduce_kernels.hpp). Everything here
// has internal linkage, so the copies built for different instruction sets never merge; the
// standard and project headers it uses come before the includer's target pragma. Each op is a
// compile-time policy so the inner loops vectorise: the kSumLanes lane accumulators of a row map
// onto SIMD registers, and column folds run along contiguous rows. The order of every fold is
// the canonical one of core/reduction.hpp whatever the instruction set (-ffp-contract=off), so
// every build gives the same bits.
//
// The includer defines TESSERA_REDUCE_KERNELS, the name of the table it exports.

namespace tessera::cpu::detail {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// f(x) and ⊕ of one op. Min/Max propagate NaN so that any order gives the same answer.
template <Op O>
struct Policy {
  static constexpr Op op = O;
  static constexpr bool sum = is_sum_family(O);
  static constexpr double id = O == Op::Min ? kInf : (O == Op::Max ? -kInf : 0.0);
  // Templated on the value type so that Min, Max and NormInf (which only compare) can run in the
  // element type: converting to double commutes with them. The Sum family always uses double.
  template <class V>
  static V f(V x) {
    if constexpr (O == Op::Norm1 || O == Op::NormInf)
      return std::fabs(x);
    else if constexpr (O == Op::Norm2)
      return x * x;
    else
      return x;
  }
  template <class V>
  static V combine(V a, V b) {
    if constexpr (sum)
      return a + b;
    else if constexpr (O == Op::Min)
      return ((a < b) | (a != a)) ? a : b; // `|`, not `||`: branch-free, so it vectorises
    else
      return ((a > b) | (a != a)) ? a : b;
  }
};

template <class Fn>
decltype(auto) dispatch_op(Op op, Fn&& fn) {
  switch (op) {
  case Op::Sum:
  case Op::Count: // a Sum of the ones and zeros the masking engine gives it
    return fn(Policy<Op::Sum>{});
  case Op::Min:
    return fn(Policy<Op::Min>{});
  case Op::Max:
    return fn(Policy<Op::Max>{});
  case Op::Mean:
    return fn(Policy<Op::Mean>{});
  case Op::Norm1:
    return fn(Policy<Op::Norm1>{});
  case Op::Norm2:
    return fn(Policy<Op::Norm2>{});
  case Op::NormInf:
    break;
  }
  return fn(Policy<Op::NormInf>{});
}

// Lanes of the ops that only compare (Min, Max, NormInf): their order does not matter, so they
// use as many as keep the compare-and-select chains of a row independent (16 lanes, one
// dependent chain per vector, ran f32 Max at a third of the read bandwidth).
inline constexpr int kCompareLanes = 64;

// How far ahead of its reads a row walk prefetches. The hardware prefetchers stop at each 4 KiB
// page boundary, so on ordinary pages every new page of a row began with misses: f32 Sum along
// rows ran at 0.74 of a plain read of the same buffer on 4 KiB pages and at 1.0-1.08 on 2 MiB
// pages (8192², 2 threads, Intel Xeon).
constexpr std::size_t kPrefetchAhead = 4096;

// Prefetches the lines of [p, p + bytes) shifted kPrefetchAhead ahead. Prefetches never fault,
// so the last ones of a matrix may point past it.
inline void prefetch_ahead(const void* p, std::size_t bytes) {
  const char* c = static_cast<const char*>(p) + kPrefetchAhead;
  for (std::size_t b = 0; b < bytes; b += 64)
    __builtin_prefetch(c + b, 0, 2);
}

// Rows shorter than this take short_row_values.
inline constexpr std::int64_t kShortRowCols = 64;

// Rows taken together by short_row_values.
inline constexpr int kShortBatch = 16;

// Eight doubles, one 512-bit vector (two or four on narrower instruction sets: the compiler
// splits them), and the lane indices of its shuffles.
using Vec8 = double __attribute__((vector_size(64)));
using Idx8 = std::int64_t __attribute__((vector_size(64)));

// The last three levels of the halving tree (off = 4, 2, 1) for eight rows at once: v[b] holds
// lanes 0-7 of row b after the levels above them; value[b] is row b's value. (Vectors pass by
// pointer: by value, their calling convention would differ between instruction sets.)
// Each step pairs the vectors of two row sets so that one pair of shuffles and one addition make a
// level for both, lane c with lane c + off as in the tree (addition commutes exactly).
[[gnu::always_inline]] inline void last_tree_levels(const Vec8* v, double* value) {
  Vec8 h[4], q[2];
  for (int k = 0; k < 4; ++k) // off = 4: [A0+A4 … A3+A7, B0+B4 … B3+B7]
    h[k] = __builtin_shuffle(v[2 * k], v[2 * k + 1], Idx8{0, 1, 2, 3, 8, 9, 10, 11}) +
           __builtin_shuffle(v[2 * k], v[2 * k + 1], Idx8{4, 5, 6, 7, 12, 13, 14, 15});
  for (int k = 0; k < 2; ++k) // off = 2: [A0 A1 B0 B1 C0 C1 D0 D1]
    q[k] = __builtin_shuffle(h[2 * k], h[2 * k + 1], Idx8{0, 1, 4, 5, 8, 9, 12, 13}) +
           __builtin_shuffle(h[2 * k], h[2 * k + 1], Idx8{2, 3, 6, 7, 10, 11, 14, 15});
  const Vec8 r = __builtin_shuffle(q[0], q[1], Idx8{0, 2, 4, 6, 8, 10, 12, 14}) + // off = 1
                 __builtin_shuffle(q[0], q[1], Idx8{1, 3, 5, 7, 9, 11, 13, 15});
  std::memcpy(value, &r, sizeof r);
}

// Eight elements of T as one vector.
template <class T>
struct Eight;
template <>
struct Eight<float> {
  using type = float __attribute__((vector_size(32)));
};
template <>
struct Eight<double> {
  using type = Vec8;
};

// Policy P's f over each element of x, to the bit as P::f: |x| clears the sign bit (as fabs).
template <class P>
[[gnu::always_inline]] inline void f_of_each(Vec8* x) {
  if constexpr (P::op == Op::Norm1 || P::op == Op::NormInf)
    *x = reinterpret_cast<Vec8>(reinterpret_cast<Idx8>(*x) & 0x7fffffffffffffff);
  else if constexpr (P::op == Op::Norm2)
    *x = *x * *x;
}

// Lanes 0-7 of a row of cols <= 8S elements after the halving tree's levels off = 4S, …, 8:
// its 8S lanes (lane c = 0.0 + f(row[c]), 0.0 past the row's end) are S vectors, read from the
// row and on past it, then folded in half S/2, …, 1 times, lane c with lane c + off. (Vectors
// pass by pointer: by value, their calling convention would differ between instruction sets.)
template <int S, class P, class T>
[[gnu::always_inline]] inline void row_to_eight(const T* row, int cols, Vec8* eight) {
  constexpr Idx8 kLane = {0, 1, 2, 3, 4, 5, 6, 7};
  Vec8 seg[S];
  for (int s = 0; s < S; ++s) {
    typename Eight<T>::type raw;
    std::memcpy(&raw, row + 8 * s, sizeof raw);
    Vec8 x = __builtin_convertvector(raw, Vec8);
    f_of_each<P>(&x);
    seg[s] = (kLane + 8 * s < cols) ? Vec8{} + x : Vec8{};
  }
  for (int w = S / 2; w >= 1; w /= 2)
    for (int s = 0; s < w; ++s)
      seg[s] += seg[s + w];
  *eight = seg[0];
}

// out[r] = r(i) of row r of a (consecutive rows of cols < kShortRowCols elements), for r < nrows
// <= kShortBatch; `end` is the end of the matrix. Each lane of such a row holds at most one
// element: lane c = 0.0 + f(row[c]), and the lanes past the row's end hold 0.0, which the halving
// tree's additions leave out here. That keeps the full tree's bits: no lane and no partial sum is
// -0.0 (each lane starts as 0.0 + f(x)), and x + 0.0 == x for every other x. So each row is
// widened into W lanes (the power of two from 8 up that holds it) in registers: vectors of eight
// loaded from the row (reading on into the next row, whose lanes are then set to 0.0; a row so
// near the end of the matrix that this would pass it is copied first), its levels down to eight
// lanes are vector additions, and the last three levels go eight rows at a time
// (last_tree_levels). Rows past nrows repeat the last one and are dropped.
// Walking all kSumLanes lanes and the whole tree for every row held 1000003 × 17 f32 along rows
// to 0.02 of a read (2 threads, Intel Xeon); the rows side by side in the SIMD lanes (a gather of
// one element of each row per vector) to 0.28-0.34 there and to 0.11-0.14 on AMD Zen 5, whose
// gathers are slow; the rows' lanes written to memory and read back as vectors, to 0.14 there
// (the loads waited on the stores).
// Min, Max and NormInf fold each row in element order: their value for +0.0 and -0.0 depends on
// it.
template <class P, class T>
void short_row_values(const T* a, int cols, int nrows, double* out, const T* end) {
  if constexpr (!P::sum) {
    for (int r = 0; r < nrows; ++r) {
      const T* row = a + static_cast<std::int64_t>(r) * cols;
      double acc = P::id;
      for (int c = 0; c < cols; ++c)
        acc = P::combine(acc, P::f(static_cast<double>(row[c])));
      out[r] = acc;
    }
  } else {
    if (cols == 0) { // rows of nothing: 0.0
      std::fill_n(out, nrows, 0.0);
      return;
    }
    int width = 8;
    while (width < cols)
      width *= 2;
    alignas(64) T spare[kShortRowCols]; // a copy of a row near the end, zero past the row
    for (int r0 = 0; r0 < nrows; r0 += 8) {
      Vec8 v[8];
      for (int b = 0; b < 8; ++b) {
        const T* row = a + static_cast<std::int64_t>(std::min(r0 + b, nrows - 1)) * cols;
        if (end - row < width) {
          std::fill(std::copy_n(row, cols, spare), spare + width, T{});
          row = spare;
        }
        switch (width) { // the segments in registers: their number known when compiled
        case 8:
          row_to_eight<1, P>(row, cols, &v[b]);
          break;
        case 16:
          row_to_eight<2, P>(row, cols, &v[b]);
          break;
        case 32:
          row_to_eight<4, P>(row, cols, &v[b]);
          break;
        default:
          row_to_eight<8, P>(row, cols, &v[b]);
          break;
        }
      }
      alignas(64) double values[8];
      last_tree_levels(v, values);
      std::copy_n(values, std::min(8, nrows - r0), out + r0);
    }
  }
}

// g(x, n, i0) for each batch of kShortBatch rows of a (the last may be shorter): x its first row,
// n its rows, i0 the first one's number; batches spread over the threads.
template <class T, class G>
void each_short_batch(const T* a, std::int64_t rows, std::int64_t cols, G&& g) {
  const std::int64_t batches = (rows + kShortBatch - 1) / kShortBatch;
#pragma omp parallel for schedule(static)
  for (std::int64_t t = 0; t < batches; ++t)
    g(a + t * kShortBatch * cols,
      static_cast<int>(std::min<std::int64_t>(kShortBatch, rows - t * kShortBatch)),
      t * kShortBatch);
}

// r(i) of one row: lane c sums the elements j ≡ c (mod kSumLanes), then a fixed halving tree.
template <class P, class T>
double row_value(const T* row, std::int64_t cols) {
  if constexpr (!P::sum) {
    // Order does not matter here: independent lanes let the loop vectorise. The lanes hold the
    // element type (exact: these ops only compare, and |x| is exact), so f32 data is not widened
    // to double; that conversion made f32 Min/Max twice as slow as a read.
    constexpr int kLanes = kCompareLanes;
    T lane[kLanes];
    for (int c = 0; c < kLanes; ++c)
      lane[c] = static_cast<T>(P::id);
    std::int64_t j = 0;
    for (; j + kLanes <= cols; j += kLanes) {
      prefetch_ahead(row + j, kLanes * sizeof(T));
      for (int c = 0; c < kLanes; ++c)
        lane[c] = P::combine(lane[c], P::f(row[j + c]));
    }
    double acc = P::id;
    for (; j < cols; ++j)
      acc = P::combine(acc, P::f(static_cast<double>(row[j])));
    for (int c = 0; c < kLanes; ++c)
      acc = P::combine(acc, static_cast<double>(lane[c]));
    return acc;
  } else {
    alignas(64) double lane[kSumLanes] = {};
    std::int64_t j = 0;
    for (; j + kSumLanes <= cols; j += kSumLanes) {
      prefetch_ahead(row + j, kSumLanes * sizeof(T));
      for (int c = 0; c < kSumLanes; ++c)
        lane[c] += P::f(static_cast<double>(row[j + c]));
    }
    const int tail = static_cast<int>(cols - j);
    for (int c = 0; c < tail; ++c)
      lane[c] += P::f(static_cast<double>(row[j + c]));
    return halving_tree(lane);
  }
}

// A several-op row walk keeps one state per fold that its ops need: Sum and Mean share kPlain
// (same f, same lanes, so the same bits), Norm1 uses kAbs, Norm2 kSquare; Min, Max and NormInf
// (which only compare) kMin, kMax and kAbsMax. A set of folds is a bit mask (bit s = fold s).
enum Fold : int { kPlain, kAbs, kSquare, kMin, kMax, kAbsMax, kFolds };
inline constexpr int kSumFolds = 3; // kPlain, kAbs, kSquare: the Sum family, in double
inline constexpr int kSumMask = (1 << kSumFolds) - 1;
constexpr Fold fold_of(Op op) {
  switch (op) {
  case Op::Norm1:
    return kAbs;
  case Op::Norm2:
    return kSquare;
  case Op::Min:
    return kMin;
  case Op::Max:
    return kMax;
  case Op::NormInf:
    return kAbsMax;
  default:
    return kPlain;
  }
}

// An op of each fold (the one it stands for, or one that shares it).
constexpr Op kFoldOp[kFolds] = {Op::Sum, Op::Norm1, Op::Norm2, Op::Min, Op::Max, Op::NormInf};

constexpr bool has_fold(int mask, Fold f) {
  return (mask >> f & 1) != 0;
}

// The running state of every fold over one row, fed in chunks of consecutive elements. The Sum
// family folds hold kSumLanes lanes in double, each lane taking its elements in order: the same
// lanes, in the same order, as row_value, so the same bits. The compare folds hold kSumLanes
// lanes in the element type T (exact: they hold elements, |elements| or ±inf; their order does
// not matter), which keeps f32 compares at 16 lanes a vector.
template <class T>
struct RowFolds {
  alignas(64) double sum[kSumFolds][kSumLanes];
  alignas(64) T cmp[kFolds - kSumFolds][kSumLanes];
};

// Elements folded together: several groups of kSumLanes, so that each vector of lanes is loaded
// and stored once per chunk instead of once per group.
inline constexpr int kChunk = 8 * kSumLanes;

// Every fold named by kMask fed x[0, n), the row's next n elements (n < kChunk only for its last
// chunk), in one pass: each element is loaded once (and widened once), then folded into each
// state, whose vectors stay in registers across the chunk's groups. Feeding one op at a time held
// three f32 ops (sum, max, norm2) to 0.57 of a read: each op reloaded every element. The chunk is
// walked one line per group at a time, so each line of the next chunk is prefetched as its
// counterpart here is read: the hardware prefetchers stop at each 4 KiB page boundary, and a
// distance of one chunk keeps one prefetch per line.
template <int kMask, class T>
void feed_folds(RowFolds<T>& s, const T* __restrict x, int n) {
  using Min = Policy<Op::Min>;
  using Max = Policy<Op::Max>;
  using AbsMax = Policy<Op::NormInf>;
  constexpr int kVec = 64 / sizeof(T);
  constexpr int kC = kSumFolds;
  const int groups = n / kSumLanes;
  for (int c0 = 0; c0 < kSumLanes; c0 += kVec) {
    double plain[kVec], abs[kVec], square[kVec];
    T lo[kVec], hi[kVec], abs_hi[kVec];
    for (int c = 0; c < kVec; ++c) { // unused folds' lanes are copied too: it keeps one loop
      plain[c] = s.sum[kPlain][c0 + c];
      abs[c] = s.sum[kAbs][c0 + c];
      square[c] = s.sum[kSquare][c0 + c];
      lo[c] = s.cmp[kMin - kC][c0 + c];
      hi[c] = s.cmp[kMax - kC][c0 + c];
      abs_hi[c] = s.cmp[kAbsMax - kC][c0 + c];
    }
    for (int g = 0; g < groups; ++g) {
      const T* __restrict xg = x + g * kSumLanes + c0;
      __builtin_prefetch(xg + kChunk, 0, 2);
#pragma omp simd
      for (int c = 0; c < kVec; ++c) {
        const T e = xg[c];
        const double v = static_cast<double>(e);
        if constexpr (has_fold(kMask, kPlain))
          plain[c] += v;
        if constexpr (has_fold(kMask, kAbs))
          abs[c] += std::fabs(v);
        if constexpr (has_fold(kMask, kSquare))
          square[c] += v * v;
        if constexpr (has_fold(kMask, kMin))
          lo[c] = Min::combine(lo[c], e);
        if constexpr (has_fold(kMask, kMax))
          hi[c] = Max::combine(hi[c], e);
        if constexpr (has_fold(kMask, kAbsMax))
          abs_hi[c] = AbsMax::combine(abs_hi[c], AbsMax::f(e));
      }
    }
    for (int c = 0; c < kVec; ++c) {
      s.sum[kPlain][c0 + c] = plain[c];
      s.sum[kAbs][c0 + c] = abs[c];
      s.sum[kSquare][c0 + c] = square[c];
      s.cmp[kMin - kC][c0 + c] = lo[c];
      s.cmp[kMax - kC][c0 + c] = hi[c];
      s.cmp[kAbsMax - kC][c0 + c] = abs_hi[c];
    }
  }
  // The row's partial group: lane c takes element c.
  const T* rest = x + groups * kSumLanes;
  for (int c = 0; c < n - groups * kSumLanes; ++c) {
    const T e = rest[c];
    const double v = static_cast<double>(e);
    if constexpr (has_fold(kMask, kPlain))
      s.sum[kPlain][c] += v;
    if constexpr (has_fold(kMask, kAbs))
      s.sum[kAbs][c] += std::fabs(v);
    if constexpr (has_fold(kMask, kSquare))
      s.sum[kSquare][c] += v * v;
    if constexpr (has_fold(kMask, kMin))
      s.cmp[kMin - kC][c] = Min::combine(s.cmp[kMin - kC][c], e);
    if constexpr (has_fold(kMask, kMax))
      s.cmp[kMax - kC][c] = Max::combine(s.cmp[kMax - kC][c], e);
    if constexpr (has_fold(kMask, kAbsMax))
      s.cmp[kAbsMax - kC][c] = AbsMax::combine(s.cmp[kAbsMax - kC][c], AbsMax::f(e));
  }
}

// feed_folds<mask> for a mask known at run time: the Sum family's folds, then the compare folds
// over the same chunk (in L1 by then). Built for those two halves of a mask only: a build for
// every mask (64 of them, per element type and instruction set) made these kernels the longest
// compile of the project.
template <class T, int... kHalves>
void feed_folds(int mask, RowFolds<T>& s, const T* x, int n,
                std::integer_sequence<int, kHalves...> /*each half's masks*/) {
  using Feed = void (*)(RowFolds<T>&, const T*, int);
  static constexpr Feed kSum[] = {&feed_folds<kHalves, T>...};
  static constexpr Feed kCompare[] = {&feed_folds<(kHalves << kSumFolds), T>...};
  if ((mask & kSumMask) != 0)
    kSum[mask & kSumMask](s, x, n);
  if ((mask >> kSumFolds) != 0)
    kCompare[mask >> kSumFolds](s, x, n);
}

// The masks of one half of the folds (the Sum family's three, or the three compares).
constexpr auto kHalfMasks = std::make_integer_sequence<int, 1 << kSumFolds>{};
static_assert(kFolds == 2 * kSumFolds, "the two halves of a fold mask have as many folds");

// Several ops' values of row i from one read of it.
template <class T>
void row_values_multi(const Op* ops, std::size_t nops, const T* row, std::int64_t cols,
                      RowFolds<T>& s, double* const* out, std::int64_t i) {
  int mask = 0;
  for (std::size_t k = 0; k < nops; ++k)
    mask |= 1 << fold_of(ops[k]);
  for (int f = 0; f < kSumFolds; ++f)
    std::fill(std::begin(s.sum[f]), std::end(s.sum[f]), 0.0);
  for (int f = kSumFolds; f < kFolds; ++f)
    std::fill(std::begin(s.cmp[f - kSumFolds]), std::end(s.cmp[f - kSumFolds]),
              static_cast<T>(identity(kFoldOp[f])));
  for (std::int64_t j = 0; j < cols; j += kChunk)
    feed_folds(mask, s, row + j, static_cast<int>(std::min<std::int64_t>(kChunk, cols - j)),
               kHalfMasks);
  for (std::size_t k = 0; k < nops; ++k) {
    const Fold f = fold_of(ops[k]);
    out[k][i] = dispatch_op(ops[k], [&](auto p) {
      using P = decltype(p);
      if constexpr (P::sum) {
        alignas(64) double lanes[kSumLanes]; // the tree works in place; ops may share a fold
        std::copy(std::begin(s.sum[f]), std::end(s.sum[f]), lanes);
        return halving_tree(lanes);
      } else {
        double acc = P::id;
        for (const T v : s.cmp[f - kSumFolds])
          acc = P::combine(acc, static_cast<double>(v));
        return acc;
      }
    });
  }
}

// Columns handled together in a column fold. Long runs along each row keep the hardware
// prefetchers streaming (short runs of many rows measured 40% slower); the accumulators (128 KiB
// at most) stay in L2. Wider matrices are split so that the threads still share the work.
constexpr std::int64_t kColTile = 16384;
constexpr int kFoldRows = 8;

// acc[j] = acc[j] ⊕ f(x(k, j)) for k = 0 … R-1 in order, j < n (x(k, j) gives the element, as
// f32 or f64). The Sum family widens it to double and keeps each column's value in a register
// across the R rows (it vectorises that way). The compare-and-select ops (NaN-propagating, so not
// a plain max) were left scalar and branchy in that form (f32 Max along columns at half the read
// bandwidth) and vectorise only as one row at a time over the columns: they go row by row over
// blocks of kFoldBlock columns, whose accumulators stay in L1 in the element's own type (exact:
// they hold elements, |elements| or ±inf), 16 f32 lanes a vector instead of 8.
constexpr std::int64_t kFoldBlock = 512;
template <class P, int R, class X>
void fold_columns(std::int64_t n, double* __restrict acc, X&& x) {
  if constexpr (!P::sum) {
    using E = std::decay_t<decltype(x(0, 0))>;
    alignas(64) E a[kFoldBlock];
    for (std::int64_t j0 = 0; j0 < n; j0 += kFoldBlock) {
      const std::int64_t m = std::min(n - j0, kFoldBlock);
      for (std::int64_t j = 0; j < m; ++j)
        a[j] = static_cast<E>(acc[j0 + j]);
      constexpr std::int64_t kLine = 64 / sizeof(E);
      for (int k = 0; k < R; ++k) {
        // One prefetch per line read: issued all at once, they filled the line-fill buffers.
        for (std::int64_t jl = 0; jl < m; jl += kLine) {
          prefetch_ahead(&x(k, j0 + jl), 64);
          for (std::int64_t j = jl; j < std::min(m, jl + kLine); ++j)
            a[j] = P::combine(a[j], P::f(x(k, j0 + j)));
        }
      }
      for (std::int64_t j = 0; j < m; ++j)
        acc[j0 + j] = static_cast<double>(a[j]);
    }
    return;
  }
  for (std::int64_t j = 0; j < n; ++j) {
    double v = acc[j];
    for (int k = 0; k < R; ++k)
      v = P::combine(v, P::f(static_cast<double>(x(k, j))));
    acc[j] = v;
  }
}

// acc[j] = acc[j] ⊕ f(a[i][j]) over rows [0, rows) of a, columns [j0, j1).
template <class P, class T>
void fold_tile(const T* a, std::int64_t rows, std::int64_t ld, std::int64_t j0, std::int64_t j1,
               double* acc_base) {
  double* __restrict acc = acc_base + j0; // never overlaps the input: lets the loop vectorise
  const std::int64_t n = j1 - j0;
  std::int64_t i = 0;
  // kFoldRows rows per sweep: each column's value stays in a register across them (still added
  // row after row, in order), so the accumulators are loaded and stored once per kFoldRows rows
  // instead of once per row; with one row per sweep that traffic held the fold to 65% of a read.
  for (; i + kFoldRows <= rows; i += kFoldRows) {
    const T* __restrict r[kFoldRows];
    for (int k = 0; k < kFoldRows; ++k)
      r[k] = a + (i + k) * ld + j0;
    fold_columns<P, kFoldRows>(n, acc, [&](int k, std::int64_t j) -> const T& { return r[k][j]; });
  }
  for (; i < rows; ++i) {
    const T* __restrict row = a + i * ld + j0;
    fold_columns<P, 1>(n, acc, [&](int, std::int64_t j) -> const T& { return row[j]; });
  }
}

// Columns folded at a time by the several-op column fold: kFoldRows rows of them stay in L1
// while every fold takes them, and each fold's accumulators for them in L1 too.
constexpr std::int64_t kWideCols = 256;

// Every fold named by kMask takes rows x[k*ld + j], k = 0 … R-1 in order, j < n <= kWideCols,
// into its accumulator row acc[fold][j], from one read of the rows from memory. The Sum family
// folds load (and widen) each element once for all of them, each column's values in registers
// across the R rows. The compare folds then take the rows (now in L1) one at a time over the
// columns, in the element type (exact, as in fold_columns): in the column-major form the
// compare-and-select stays scalar and branchy. Folding one op at a time from a widened copy held
// three f32 ops along columns to 0.59 of a read.
template <int kMask, int R, class T>
void fold_rows_folds(const T* __restrict x, std::int64_t ld, std::int64_t n,
                     double* const* __restrict acc) {
  if constexpr ((kMask & kSumMask) != 0) {
    double* __restrict plain = acc[kPlain];
    double* __restrict abs = acc[kAbs];
    double* __restrict square = acc[kSquare];
#pragma omp simd
    for (std::int64_t j = 0; j < n; ++j) {
      double p = has_fold(kMask, kPlain) ? plain[j] : 0.0;
      double q = has_fold(kMask, kAbs) ? abs[j] : 0.0;
      double r = has_fold(kMask, kSquare) ? square[j] : 0.0;
      for (int k = 0; k < R; ++k) {
        const double v = static_cast<double>(x[k * ld + j]);
        p += v;
        q += std::fabs(v);
        r += v * v;
      }
      if constexpr (has_fold(kMask, kPlain))
        plain[j] = p;
      if constexpr (has_fold(kMask, kAbs))
        abs[j] = q;
      if constexpr (has_fold(kMask, kSquare))
        square[j] = r;
    }
  }
  if constexpr ((kMask & ~kSumMask) != 0) {
    using Min = Policy<Op::Min>;
    using Max = Policy<Op::Max>;
    using AbsMax = Policy<Op::NormInf>;
    alignas(64) T lo[kWideCols], hi[kWideCols], abs_hi[kWideCols];
    for (std::int64_t j = 0; j < n; ++j) {
      if constexpr (has_fold(kMask, kMin))
        lo[j] = static_cast<T>(acc[kMin][j]);
      if constexpr (has_fold(kMask, kMax))
        hi[j] = static_cast<T>(acc[kMax][j]);
      if constexpr (has_fold(kMask, kAbsMax))
        abs_hi[j] = static_cast<T>(acc[kAbsMax][j]);
    }
    for (int k = 0; k < R; ++k) {
      const T* __restrict row = x + k * ld;
      for (std::int64_t j = 0; j < n; ++j) {
        if constexpr (has_fold(kMask, kMin))
          lo[j] = Min::combine(lo[j], row[j]);
        if constexpr (has_fold(kMask, kMax))
          hi[j] = Max::combine(hi[j], row[j]);
        if constexpr (has_fold(kMask, kAbsMax))
          abs_hi[j] = AbsMax::combine(abs_hi[j], AbsMax::f(row[j]));
      }
    }
    for (std::int64_t j = 0; j < n; ++j) {
      if constexpr (has_fold(kMask, kMin))
        acc[kMin][j] = static_cast<double>(lo[j]);
      if constexpr (has_fold(kMask, kMax))
        acc[kMax][j] = static_cast<double>(hi[j]);
      if constexpr (has_fold(kMask, kAbsMax))
        acc[kAbsMax][j] = static_cast<double>(abs_hi[j]);
    }
  }
}

// fold_rows_folds<mask, R> for a mask known at run time, one half of the mask after the other
// (built for those halves only, as feed_folds).
template <int R, class T, int... kHalves>
void fold_rows_folds(int mask, const T* x, std::int64_t ld, std::int64_t n, double* const* acc,
                     std::integer_sequence<int, kHalves...> /*each half's masks*/) {
  using FoldFn = void (*)(const T*, std::int64_t, std::int64_t, double* const*);
  static constexpr FoldFn kSum[] = {&fold_rows_folds<kHalves, R, T>...};
  static constexpr FoldFn kCompare[] = {&fold_rows_folds<(kHalves << kSumFolds), R, T>...};
  if ((mask & kSumMask) != 0)
    kSum[mask & kSumMask](x, ld, n, acc);
  if ((mask >> kSumFolds) != 0)
    kCompare[mask >> kSumFolds](x, ld, n, acc);
}

// fold_tile for several ops from one read of the rows, piece by piece of kFoldRows rows ×
// kWideCols columns. acc[k] is op k's accumulator row (columns indexed from 0 like a's); ops of
// one fold (Sum and Mean) share the first one's row, copied to the others at the end.
template <class T>
void fold_tile_multi(const Op* ops, std::size_t nops, const T* a, std::int64_t rows,
                     std::int64_t ld, std::int64_t j0, std::int64_t j1, double* const* acc) {
  double* fold_acc[kFolds] = {};
  int mask = 0;
  for (std::size_t o = 0; o < nops; ++o) {
    const Fold f = fold_of(ops[o]);
    if (fold_acc[f] == nullptr)
      fold_acc[f] = acc[o];
    mask |= 1 << f;
  }
  for (std::int64_t i = 0; i < rows; i += kFoldRows) {
    const int nr = static_cast<int>(std::min<std::int64_t>(kFoldRows, rows - i));
    for (std::int64_t jc = j0; jc < j1; jc += kWideCols) {
      const std::int64_t n = std::min(kWideCols, j1 - jc);
      double* at[kFolds];
      for (int f = 0; f < kFolds; ++f)
        at[f] = fold_acc[f] == nullptr ? nullptr : fold_acc[f] + jc;
      const T* x = a + i * ld + jc;
      if (nr == kFoldRows)
        fold_rows_folds<kFoldRows>(mask, x, ld, n, at, kHalfMasks);
      else
        for (int k = 0; k < nr; ++k)
          fold_rows_folds<1>(mask, x + k * ld, ld, n, at, kHalfMasks);
    }
  }
  for (std::size_t o = 0; o < nops; ++o) {
    const double* shared = fold_acc[fold_of(ops[o])];
    if (shared != acc[o])
      std::copy(shared + j0, shared + j1, acc[o] + j0);
  }
}

// Work item k of the column-partial kernels: row group g (rows [i0, i0 + n)) × column tile
// [j0, j1), `tiles` tiles of kColTile columns per group.
struct GroupTile {
  std::int64_t g, i0, n, j0, j1;
};
GroupTile group_tile(std::int64_t k, std::int64_t tiles, std::int64_t rows, std::int64_t cols) {
  GroupTile t{};
  t.g = k / tiles;
  t.j0 = (k % tiles) * kColTile;
  t.j1 = std::min(t.j0 + kColTile, cols);
  t.i0 = t.g * kReduceBlockRows;
  t.n = std::min(kReduceBlockRows, rows - t.i0);
  return t;
}

// ---- The kernels the table exports (cpu/reduce.hpp says what each computes). ----

template <class T>
void reduce_rows(Op op, const T* a, std::int64_t rows, std::int64_t cols, double* out) {
  dispatch_op(op, [&](auto p) {
    using P = decltype(p);
    if (cols < kShortRowCols) {
      each_short_batch(a, rows, cols, [&](const T* x, int n, std::int64_t i0) {
        short_row_values<P>(x, static_cast<int>(cols), n, out + i0, a + rows * cols);
      });
      return;
    }
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < rows; ++i)
      out[i] = row_value<P>(a + i * cols, cols);
  });
}

template <class T>
void reduce_rows_multi(const Op* ops, std::size_t nops, const T* a, std::int64_t rows,
                       std::int64_t cols, double* const* out) {
  if (nops == 1) {
    reduce_rows(ops[0], a, rows, cols, out[0]);
    return;
  }
  if (cols < kShortRowCols) { // each batch of rows stays in L1 while every op takes it
    each_short_batch(a, rows, cols, [&](const T* x, int n, std::int64_t i0) {
      for (std::size_t k = 0; k < nops; ++k)
        dispatch_op(ops[k], [&](auto p) {
          short_row_values<decltype(p)>(x, static_cast<int>(cols), n, out[k] + i0,
                                        a + rows * cols);
        });
    });
    return;
  }
#pragma omp parallel
  {
    RowFolds<T> folds;
#pragma omp for schedule(static)
    for (std::int64_t i = 0; i < rows; ++i)
      row_values_multi(ops, nops, a + i * cols, cols, folds, out, i);
  }
}

template <class T>
void reduce_col_groups(Op op, const T* a, std::int64_t rows, std::int64_t cols, double* out) {
  const std::int64_t groups = (rows + kReduceBlockRows - 1) / kReduceBlockRows;
  const std::int64_t tiles = (cols + kColTile - 1) / kColTile;
  dispatch_op(op, [&](auto p) {
    using P = decltype(p);
#pragma omp parallel for schedule(static)
    for (std::int64_t k = 0; k < groups * tiles; ++k) {
      const GroupTile t = group_tile(k, tiles, rows, cols);
      double* acc = out + t.g * cols;
      std::fill(acc + t.j0, acc + t.j1, P::id);
      fold_tile<P>(a + t.i0 * cols, t.n, cols, t.j0, t.j1, acc);
    }
  });
}

template <class T>
void reduce_col_groups_multi(const Op* ops, std::size_t nops, const T* a, std::int64_t rows,
                             std::int64_t cols, double* const* out) {
  if (nops == 1) {
    reduce_col_groups(ops[0], a, rows, cols, out[0]);
    return;
  }
  const std::int64_t groups = (rows + kReduceBlockRows - 1) / kReduceBlockRows;
  const std::int64_t tiles = (cols + kColTile - 1) / kColTile;
#pragma omp parallel
  {
    std::vector<double*> acc(nops);
#pragma omp for schedule(static)
    for (std::int64_t k = 0; k < groups * tiles; ++k) {
      const GroupTile t = group_tile(k, tiles, rows, cols);
      for (std::size_t o = 0; o < nops; ++o) {
        acc[o] = out[o] + t.g * cols;
        std::fill(acc[o] + t.j0, acc[o] + t.j1, identity(ops[o]));
      }
      fold_tile_multi(ops, nops, a + t.i0 * cols, t.n, cols, t.j0, t.j1, acc.data());
    }
  }
}

void fold_partials(Op op, double* acc, const double* partials, std::int64_t groups,
                   std::int64_t cols) {
  // Column tiles keep acc in L1 while the groups stream by.
  constexpr std::int64_t kTile = 512;
  const std::int64_t tiles = (cols + kTile - 1) / kTile;
  dispatch_op(op, [&](auto p) {
    using P = decltype(p);
#pragma omp parallel for schedule(static) if (groups * cols > 65536)
    for (std::int64_t t = 0; t < tiles; ++t) {
      const std::int64_t j0 = t * kTile, j1 = std::min(cols, j0 + kTile);
      for (std::int64_t g = 0; g < groups; ++g) {
        const double* __restrict row = partials + g * cols;
        double* __restrict a = acc;
        for (std::int64_t j = j0; j < j1; ++j)
          a[j] = P::combine(a[j], row[j]);
      }
    }
  });
}

void fold_row_blocks(Op op, const double* r, std::int64_t rows, double* p) {
  // Blocks side by side, one per SIMD lane: each block's fold is a chain of dependent
  // operations, and one block at a time left the adder waiting on each (a serial fold of the
  // row values of 1000003 × 17 f32 took longer than reading the matrix).
  constexpr std::int64_t kSide = 8;
  constexpr std::int64_t kB = kReduceBlockRows;
  const std::int64_t groups = (rows + kB - 1) / kB;
  dispatch_op(op, [&](auto pol) {
    using P = decltype(pol);
#pragma omp parallel for schedule(static) if (groups > 1024)
    for (std::int64_t g0 = 0; g0 < groups; g0 += kSide) {
      alignas(64) double acc[kSide];
      for (std::int64_t b = 0; b < kSide; ++b)
        acc[b] = P::id;
      if ((g0 + kSide) * kB <= rows) {
        for (std::int64_t i = 0; i < kB; ++i)
#pragma omp simd
          for (std::int64_t b = 0; b < kSide; ++b)
            acc[b] = P::combine(acc[b], r[(g0 + b) * kB + i]);
      } else {
        for (std::int64_t b = 0; b < kSide && g0 + b < groups; ++b)
          for (std::int64_t i = (g0 + b) * kB; i < std::min(rows, (g0 + b + 1) * kB); ++i)
            acc[b] = P::combine(acc[b], r[i]);
      }
      std::copy_n(acc, std::min(kSide, groups - g0), p + g0);
    }
  });
}

template <class T>
void fold_rows(Op op, const T* a, std::int64_t rows, std::int64_t cols, double* acc) {
  const std::int64_t tiles = (cols + kColTile - 1) / kColTile;
  dispatch_op(op, [&](auto p) {
    using P = decltype(p);
#pragma omp parallel for schedule(static)
    for (std::int64_t t = 0; t < tiles; ++t)
      fold_tile<P>(a, rows, cols, t * kColTile, std::min((t + 1) * kColTile, cols), acc);
  });
}

} // namespace

extern const ReduceKernels TESSERA_REDUCE_KERNELS;
const ReduceKernels TESSERA_REDUCE_KERNELS = {
    {&reduce_rows<float>, &reduce_rows_multi<float>, &reduce_col_groups<float>,
     &reduce_col_groups_multi<float>, &fold_rows<float>},
    {&reduce_rows<double>, &reduce_rows_multi<double>, &reduce_col_groups<double>,
     &reduce_col_groups_multi<double>, &fold_rows<double>},
    &fold_partials,
    &fold_row_blocks,
};

} // namespace tessera::cpu::detail
