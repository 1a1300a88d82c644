// move_rectangles (cuda/redistribute.hpp): blocks of 32 × 8 threads walk the 32 × 32 tiles of
// all rectangles of a list (grid-stride); each finds its rectangle by a binary search over the
// tile counts, loads the tile along the source's contiguous side into shared memory and stores
// it along the destination's, so both sides are coalesced whether or not the rectangle is
// transposed between them.
#include "cuda/launch.cuh"
#include "cuda/redistribute.hpp"

namespace tessera::cuda {

// A namespace of their own: in unity builds these names share a translation unit with other
// kernel files' file-local ones.
namespace detail::moves {
namespace {

// std::complex cannot live in shared memory (it has constructors): the element as two parts.
template <class R>
struct Parts {
  R re, im;
};

// Each operation rounded on its own, whatever --fmad says: the CPU's bits.
__device__ inline float mul_rn(float a, float b) {
  return __fmul_rn(a, b);
}
__device__ inline double mul_rn(double a, double b) {
  return __dmul_rn(a, b);
}
__device__ inline float add_rn(float a, float b) {
  return __fadd_rn(a, b);
}
__device__ inline double add_rn(double a, double b) {
  return __dadd_rn(a, b);
}
__device__ inline float sub_rn(float a, float b) {
  return __fsub_rn(a, b);
}
__device__ inline double sub_rn(double a, double b) {
  return __dsub_rn(a, b);
}

template <class R>
__device__ inline R conj_of(R x) {
  return x;
}
template <class R>
__device__ inline Parts<R> conj_of(Parts<R> x) {
  return {x.re, -x.im};
}
template <class R>
__device__ inline R mul(R a, R b) {
  return mul_rn(a, b);
}
// (a + bi)(c + di) = (ac - bd) + (ad + bc)i, as GCC evaluates std::complex products of finite
// values.
template <class R>
__device__ inline Parts<R> mul(Parts<R> a, Parts<R> b) {
  return {sub_rn(mul_rn(a.re, b.re), mul_rn(a.im, b.im)),
          add_rn(mul_rn(a.re, b.im), mul_rn(a.im, b.re))};
}
template <class R>
__device__ inline R add(R a, R b) {
  return add_rn(a, b);
}
template <class R>
__device__ inline Parts<R> add(Parts<R> a, Parts<R> b) {
  return {add_rn(a.re, b.re), add_rn(a.im, b.im)};
}

// What each element of the destination becomes (cpu::ScaleUpdate's cases).
enum class Landing : int {
  Copy,    // the bits of x
  Source,  // conj?(x)
  Scaled,  // alpha·conj?(x)
  Updated, // beta·b + alpha·conj?(x)
};

template <class T>
struct Scalars {
  T alpha, beta;
  Landing landing;
  bool conjugate;
};

template <class T>
__device__ inline T land(const Scalars<T>& s, T x, const T* b) {
  if (s.landing == Landing::Copy)
    return x;
  const T y = s.conjugate ? conj_of(x) : x;
  if (s.landing == Landing::Source)
    return y;
  if (s.landing == Landing::Scaled)
    return mul(s.alpha, y);
  return add(mul(s.beta, *b), mul(s.alpha, y));
}

constexpr int kTile = static_cast<int>(kRectangleTile);
constexpr int kRowsPerPass = 8; // threadIdx.y's extent: four passes cover a tile

__device__ inline i64 find_rectangle(const RectangleMove* moves, i64 count, i64 tile) {
  // The last rectangle whose first tile is at or before `tile` (empty ones share their
  // successor's first tile and are skipped by taking the last).
  i64 lo = 0, hi = count - 1;
  while (lo < hi) {
    const i64 mid = lo + (hi - lo + 1) / 2;
    if (moves[mid].first_tile <= tile)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

template <class T>
__global__ void __launch_bounds__(kTile* kRowsPerPass)
    move_rectangles_kernel(const RectangleMove* __restrict__ moves, i64 count, i64 tiles,
                           const T* __restrict__ src, T* __restrict__ dst, Scalars<T> s) {
  __shared__ T tile[kTile][kTile + 1]; // padded: a column of the tile spans all banks
  const int tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y);
  for (i64 t = blockIdx.x; t < tiles; t += gridDim.x) {
    const RectangleMove m = moves[find_rectangle(moves, count, t)];
    const i64 across = (m.cols + kTile - 1) / kTile;
    const i64 r0 = (t - m.first_tile) / across * kTile;
    const i64 c0 = (t - m.first_tile) % across * kTile;
    const int nr = static_cast<int>(min(static_cast<i64>(kTile), m.rows - r0));
    const int nc = static_cast<int>(min(static_cast<i64>(kTile), m.cols - c0));
    // Consecutive threads take consecutive addresses: along columns when rows are contiguous.
    const bool src_rows = m.src_col_stride == 1;
    for (int k = ty; k < kTile; k += kRowsPerPass) {
      const int r = src_rows ? k : tx, c = src_rows ? tx : k;
      if (r < nr && c < nc)
        tile[r][c] = src[m.src_offset + (r0 + r) * m.src_row_stride + (c0 + c) * m.src_col_stride];
    }
    __syncthreads();
    const bool dst_rows = m.dst_col_stride == 1;
    for (int k = ty; k < kTile; k += kRowsPerPass) {
      const int r = dst_rows ? k : tx, c = dst_rows ? tx : k;
      if (r < nr && c < nc) {
        T* to = dst + m.dst_offset + (r0 + r) * m.dst_row_stride + (c0 + c) * m.dst_col_stride;
        *to = land(s, tile[r][c], to);
      }
    }
    __syncthreads(); // the tile is refilled by the next iteration
  }
}

template <class R>
R scalar_as(std::complex<double> v, R*) {
  return static_cast<R>(v.real());
}
template <class R>
Parts<R> scalar_as(std::complex<double> v, Parts<R>*) {
  return {static_cast<R>(v.real()), static_cast<R>(v.imag())};
}
template <class R>
bool equals(R a, double re) {
  return a == static_cast<R>(re);
}
template <class R>
bool equals(Parts<R> a, double re) {
  return a.re == static_cast<R>(re) && a.im == R(0);
}
template <class R>
constexpr bool is_complex(R*) {
  return false;
}
template <class R>
constexpr bool is_complex(Parts<R>*) {
  return true;
}

template <class T>
void launch(cudaStream_t stream, const RectangleMove* moves, i64 count, i64 tiles, const void* src,
            void* dst, const ElementUpdate& u) {
  Scalars<T> s{};
  s.alpha = scalar_as(u.alpha, static_cast<T*>(nullptr));
  s.beta = scalar_as(u.beta, static_cast<T*>(nullptr));
  // The scalars compared as the element type holds them, as cpu::ScaleUpdate compares them.
  const bool conjugate = u.conjugate && is_complex(static_cast<T*>(nullptr));
  s.conjugate = conjugate;
  if (!equals(s.beta, 0.0))
    s.landing = Landing::Updated;
  else if (!equals(s.alpha, 1.0))
    s.landing = Landing::Scaled;
  else
    s.landing = conjugate ? Landing::Source : Landing::Copy;
  // Enough blocks to fill the GPU several times over; the rest go round the grid-stride loop.
  const i64 most = static_cast<i64>(sm_count()) * 32;
  const dim3 grid(static_cast<unsigned>(min(tiles, most)));
  move_rectangles_kernel<T><<<grid, dim3(kTile, kRowsPerPass), 0, stream>>>(
      moves, count, tiles, static_cast<const T*>(src), static_cast<T*>(dst), s);
  CHECK_CUDA_LAUNCH();
}

} // namespace
} // namespace detail::moves

void move_rectangles(CUstream_st* stream, DType t, const RectangleMove* d_moves, std::int64_t count,
                     std::int64_t tiles, const void* src, void* dst, const ElementUpdate& update) {
  TESSERA_CUDA_REQUIRE(count >= 0 && tiles >= 0, "cuda::move_rectangles: negative count");
  if (count == 0 || tiles == 0)
    return;
  TESSERA_CUDA_REQUIRE(d_moves != nullptr && src != nullptr && dst != nullptr,
                       "cuda::move_rectangles: null pointer");
  using detail::moves::launch;
  using detail::moves::Parts;
  switch (t) {
  case DType::f32:
    return launch<float>(stream, d_moves, count, tiles, src, dst, update);
  case DType::f64:
    return launch<double>(stream, d_moves, count, tiles, src, dst, update);
  case DType::c64:
    return launch<Parts<float>>(stream, d_moves, count, tiles, src, dst, update);
  case DType::c128:
    return launch<Parts<double>>(stream, d_moves, count, tiles, src, dst, update);
  default:
    TESSERA_CUDA_REQUIRE(false, "cuda::move_rectangles: f32, f64, c64 or c128 data only");
  }
}

} // namespace tessera::cuda
