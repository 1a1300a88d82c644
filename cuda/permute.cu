// The permutation of dimensions on the GPU (permute.hpp): the reduced form's moves
// (core/permute_layout.hpp), the kernel for each, and the host-resident runs.
#include <algorithm>
#include <climits>
#include <vector>

#include "core/permute_layout.hpp"
#include "cuda/permute.hpp"
#include "cuda/permute_kernels.cuh"
#include "cuda/permute_packed_tile.cuh"
#include "cuda/transpose.hpp"
#include "cuda/transpose_launch.cuh"

namespace tessera::cuda {

namespace detail {
namespace {

// Matrices with both sides at least this long take the tiles; narrower ones the walk.
constexpr i64 kMinTileSide = 16;

enum class Kernel { None, Copy, Rows, Transpose, Tall, Square64, Square32, Packed, Walk };

// The batch's tile (transpose_launch.cuh's shapes): 128 rows × 256 bytes for matrices that fill
// it, else 64×64 (32×32 for 16-byte elements), else 32×32. 1- and 2-byte elements, staged as
// 32-bit words, take 64×64 at most (the tall tile's shared memory would pass 48 KiB).
Kernel tile_kernel(std::size_t e, i64 rows, i64 cols) {
  if (e >= 4 && rows >= 128 && cols * static_cast<i64>(e) >= 256)
    return Kernel::Tall;
  const i64 side = e == 16 ? 32 : 64;
  if (rows >= side && cols >= side)
    return Kernel::Square64;
  return Kernel::Square32;
}

// Row groups per packed tile (permute_packed_tile.cuh): 128 × 128 bytes, 128 × 64 shorts. Both
// tiles are 16 KiB: the 64 × 64 tile of shorts (8 KiB) reached 0.63–0.68 of the device copy where
// the bytes' tile reached 0.94–0.96 (docs/performance.md).
template <int P>
inline constexpr int kPackedGroups = P == 4 ? 32 : 64;

// 1- and 2-byte elements moved as 32-bit words (permute_packed_tile.cuh) when every side,
// leading dimension and batch stride is a multiple of the elements per word (the pointers'
// alignment is checked at the launch), and the matrices fill at least half a tile each way.
bool packed_fits(const PermuteMoves& m, std::size_t e) {
  if (e >= 4)
    return false;
  const i64 per_word = 4 / static_cast<i64>(e);
  const i64 tile_rows =
      e == 1 ? PackedTile<4, kPackedGroups<4>>::TR : PackedTile<2, kPackedGroups<2>>::TR;
  const i64 tile_cols =
      e == 1 ? PackedTile<4, kPackedGroups<4>>::TC : PackedTile<2, kPackedGroups<2>>::TC;
  auto fits = [&](i64 x) { return x % per_word == 0; };
  if (!(fits(m.rows) && fits(m.cols) && fits(m.ld_in) && fits(m.ld_out)) ||
      m.rows < tile_rows / 2 || m.cols < tile_cols / 2)
    return false;
  for (std::size_t d = 0; d < m.outer.length.size(); ++d)
    if (!fits(m.outer.in_stride[d]) || !fits(m.outer.out_stride[d]))
      return false;
  return true;
}

Kernel choose(const PermuteMoves& m, std::size_t e) {
  switch (m.kind) {
  case PermuteMoves::Kind::None:
    return Kernel::None;
  case PermuteMoves::Kind::Copy:
    return Kernel::Copy;
  case PermuteMoves::Kind::Rows:
    return Kernel::Rows;
  case PermuteMoves::Kind::Transpose:
    break;
  }
  if (m.outer.count() == 1 && e >= 4)
    return Kernel::Transpose;
  if (packed_fits(m, e))
    return Kernel::Packed;
  if (m.rows >= kMinTileSide && m.cols >= kMinTileSide)
    return tile_kernel(e, m.rows, m.cols);
  return Kernel::Walk;
}

std::string kernel_name(Kernel k, std::size_t e) {
  switch (k) {
  case Kernel::None:
    return "none";
  case Kernel::Copy:
    return "copy";
  case Kernel::Rows:
    return "rows";
  case Kernel::Transpose:
    return "transpose";
  case Kernel::Tall:
    return e == 16 ? "tiles 64x32" : "tiles 128x" + std::to_string(256 / e);
  case Kernel::Square64:
    return e == 16 ? "tiles 32x32" : "tiles 64x64";
  case Kernel::Square32:
    return "tiles 32x32";
  case Kernel::Packed:
    return e == 1 ? "tiles 128x128 (4 bytes a word)" : "tiles 128x64 (2 shorts a word)";
  case Kernel::Walk:
    return "walk";
  }
  return "?";
}

PermuteBatch batch_of(const PermuteOuter& o) {
  PermuteBatch b;
  b.dims = static_cast<int>(o.length.size());
  b.n = o.count();
  for (std::size_t d = 0; d < o.length.size(); ++d) {
    b.length[d] = o.length[d];
    b.in_stride[d] = o.in_stride[d];
    b.out_stride[d] = o.out_stride[d];
  }
  return b;
}

// ---- rows ----

template <class W>
void launch_rows(cudaStream_t s, const void* in, void* out, i64 row_words, const PermuteBatch& b) {
  const i64 runs = (row_words + kRowRun - 1) / kRowRun;
  TESSERA_CUDA_REQUIRE(runs <= INT_MAX, "cuda::permute: rows too long");
  const dim3 grid(static_cast<unsigned>(runs),
                  static_cast<unsigned>(std::min<i64>(b.count(), 65535)));
  permute_rows<W>
      <<<grid, kRowThreads, 0, s>>>(static_cast<const W*>(in), static_cast<W*>(out), row_words, b);
  CHECK_CUDA_LAUNCH();
}

// ---- 1- and 2-byte elements as words ----

template <int P>
void launch_packed(cudaStream_t s, const void* in, void* out, const PermuteMoves& m) {
  constexpr int G = kPackedGroups<P>;
  constexpr i64 TR = PackedTile<P, G>::TR, TC = PackedTile<P, G>::TC;
  const i64 tiles_x = (m.cols + TC - 1) / TC, tiles_y = (m.rows + TR - 1) / TR;
  TESSERA_CUDA_REQUIRE(tiles_x * tiles_y <= INT_MAX,
                       "cuda::permute: " + shape_str(m.rows, m.cols) + " has too many tiles");
  const PermuteBatch b = batch_of(m.outer);
  const dim3 grid(static_cast<unsigned>(tiles_x * tiles_y),
                  static_cast<unsigned>(std::min<i64>(b.count(), 65535)));
  permute_packed_tile<P, G, PermuteBatch><<<grid, PackedTile<P, G>::kThreads, 0, s>>>(
      static_cast<const unsigned char*>(in), static_cast<unsigned char*>(out), m.rows, m.cols,
      m.ld_in, m.ld_out, static_cast<unsigned>(tiles_y), b);
  CHECK_CUDA_LAUNCH();
}

// ---- the walk ----

// The driving array's dimensions and the other's strides, in words of w bytes (e / w per
// element when w < e: rows walked as words).
template <class I>
PermuteWalk<I> walk_of(const std::vector<std::int64_t>& length,
                       const std::vector<std::int64_t>& other_stride, i64 total) {
  PermuteWalk<I> w;
  w.dims = static_cast<int>(length.size());
  w.total = static_cast<I>(total);
  for (std::size_t d = 0; d < length.size(); ++d) {
    w.length[d] = static_cast<I>(length[d]);
    w.other_stride[d] = static_cast<I>(other_stride[d]);
    if constexpr (sizeof(I) == 4)
      w.div[d] = FastDiv(static_cast<std::uint32_t>(length[d]));
  }
  return w;
}

template <class W>
void launch_walk(cudaStream_t s, const void* in, void* out, bool out_drives,
                 const std::vector<std::int64_t>& length,
                 const std::vector<std::int64_t>& other_stride, i64 total) {
  const i64 per_block = i64{kWalkThreads} * kWalkWords;
  const i64 blocks = std::min<i64>((total + per_block - 1) / per_block, i64{1} << 30);
  const auto grid = static_cast<unsigned>(blocks);
  const auto* src = static_cast<const W*>(in);
  auto* dst = static_cast<W*>(out);
  if (total <= static_cast<i64>(UINT32_MAX)) {
    const auto w = walk_of<std::uint32_t>(length, other_stride, total);
    if (out_drives)
      permute_walk<W, std::uint32_t, true><<<grid, kWalkThreads, 0, s>>>(src, dst, w);
    else
      permute_walk<W, std::uint32_t, false><<<grid, kWalkThreads, 0, s>>>(src, dst, w);
  } else {
    const auto w = walk_of<i64>(length, other_stride, total);
    if (out_drives)
      permute_walk<W, i64, true><<<grid, kWalkThreads, 0, s>>>(src, dst, w);
    else
      permute_walk<W, i64, false><<<grid, kWalkThreads, 0, s>>>(src, dst, w);
  }
  CHECK_CUDA_LAUNCH();
}

// Walks the reduced permutation element by element: over the output (out[e] = in[...]) when its
// innermost dimension is the shorter, else over the input.
template <class W>
void walk(cudaStream_t s, const void* in, void* out, const PermuteLayout& p) {
  const std::vector<std::int64_t> in_stride = row_major_strides(p.shape);
  const std::vector<std::int64_t> out_shape = permuted_shape(p.shape, p.axes);
  const std::vector<std::int64_t> out_stride = row_major_strides(out_shape);
  const bool out_drives = out_shape.back() <= p.shape.back();
  std::vector<std::int64_t> length, other;
  if (out_drives) {
    length = out_shape;
    for (const int a : p.axes)
      other.push_back(in_stride[static_cast<std::size_t>(a)]);
  } else {
    length = p.shape;
    other.resize(p.shape.size());
    for (std::size_t k = 0; k < p.axes.size(); ++k)
      other[static_cast<std::size_t>(p.axes[k])] = out_stride[k];
  }
  launch_walk<W>(s, in, out, out_drives, length, other, p.elements);
}

// ---- dispatch per element size ----

template <int E>
void launch_elem(cudaStream_t s, Kernel k, const void* in, void* out, const PermuteLayout& p,
                 const PermuteMoves& m) {
  switch (k) {
  case Kernel::Tall:
    if constexpr (E >= 4) // never chosen for narrower elements (tile_kernel)
      return launch_lean_tile<E, kScalarTallRows<E>, kScalarTallCols<E>, 1>(
          s, in, out, m.rows, m.cols, m.ld_in, m.ld_out, batch_of(m.outer));
    return;
  case Kernel::Square64:
    return launch_lean_tile<E, kScalar64Rows<E>, kScalar64Cols<E>, 1>(
        s, in, out, m.rows, m.cols, m.ld_in, m.ld_out, batch_of(m.outer));
  case Kernel::Square32:
    return launch_lean_tile<E, 32, 32, 1>(s, in, out, m.rows, m.cols, m.ld_in, m.ld_out,
                                          batch_of(m.outer));
  case Kernel::Walk:
    return walk<typename Word<E>::type>(s, in, out, p);
  default:
    return;
  }
}

// Rows shorter than this many words are walked word by word over the output (permute_walk) rather
// than a block per row, which would leave most of its threads idle (docs/performance.md).
constexpr i64 kShortRowWords = kRowThreads;

// The output's words in order (the outer dimensions by decreasing output stride, then the row),
// each read from its input offset.
void walk_rows(cudaStream_t s, const void* in, void* out, int w, i64 words, const PermuteOuter& o) {
  std::vector<std::size_t> order(o.length.size());
  for (std::size_t d = 0; d < order.size(); ++d)
    order[d] = d;
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return o.out_stride[a] > o.out_stride[b]; });
  std::vector<std::int64_t> length, other;
  for (const std::size_t d : order) {
    length.push_back(o.length[d]);
    other.push_back(o.in_stride[d]);
  }
  length.push_back(words);
  other.push_back(1);
  const i64 total = o.count() * words;
  switch (w) {
  case 16:
    return launch_walk<uint4>(s, in, out, true, length, other, total);
  case 8:
    return launch_walk<unsigned long long>(s, in, out, true, length, other, total);
  case 4:
    return launch_walk<unsigned int>(s, in, out, true, length, other, total);
  case 2:
    return launch_walk<unsigned short>(s, in, out, true, length, other, total);
  default:
    return launch_walk<unsigned char>(s, in, out, true, length, other, total);
  }
}

// Rows move as the widest words (up to 16 bytes) that the row length and both pointers allow;
// the outer strides are multiples of the row length.
void launch_rows_any(cudaStream_t s, const void* in, void* out, std::size_t e,
                     const PermuteMoves& m) {
  const i64 row_bytes = m.row * static_cast<i64>(e);
  int w = 16;
  while (w > 1 && !(row_bytes % w == 0 && aligned_to(in, static_cast<std::size_t>(w)) &&
                    aligned_to(out, static_cast<std::size_t>(w))))
    w /= 2;
  const i64 words = row_bytes / w;
  // The outer strides, multiples of the row, in words.
  PermuteOuter o = m.outer;
  for (std::size_t d = 0; d < o.length.size(); ++d) {
    o.in_stride[d] = o.in_stride[d] * static_cast<i64>(e) / w;
    o.out_stride[d] = o.out_stride[d] * static_cast<i64>(e) / w;
  }
  if (words < kShortRowWords)
    return walk_rows(s, in, out, w, words, o);
  const PermuteBatch b = batch_of(o);
  switch (w) {
  case 16:
    return launch_rows<uint4>(s, in, out, words, b);
  case 8:
    return launch_rows<unsigned long long>(s, in, out, words, b);
  case 4:
    return launch_rows<unsigned int>(s, in, out, words, b);
  case 2:
    return launch_rows<unsigned short>(s, in, out, words, b);
  default:
    return launch_rows<unsigned char>(s, in, out, words, b);
  }
}

DType word_type(std::size_t e) {
  return e == 4 ? DType::f32 : e == 8 ? DType::c64 : DType::c128;
}

bool element_size_ok(std::size_t e) {
  return e == 1 || e == 2 || e == 4 || e == 8 || e == 16;
}

void check_element_size(std::size_t e) {
  TESSERA_CUDA_REQUIRE(element_size_ok(e), "cuda::permute: elements of 1, 2, 4, 8 or 16 bytes, "
                                           "not " +
                                               std::to_string(e));
}

} // namespace
} // namespace detail

void permute(CUstream_st* stream, const void* in, void* out, std::size_t element_size,
             std::span<const std::int64_t> shape, std::span<const int> axes) {
  using namespace detail;
  check_element_size(element_size);
  const PermuteLayout p = reduce_permutation(shape, axes);
  const PermuteMoves m = permute_moves(p);
  Kernel k = choose(m, element_size);
  if (k == Kernel::None)
    return;
  if (k == Kernel::Packed && !(aligned_to(in, 4) && aligned_to(out, 4)))
    k = tile_kernel(element_size, m.rows, m.cols);
  TESSERA_CUDA_REQUIRE(in != nullptr && out != nullptr, "cuda::permute: null pointer");
  TESSERA_CUDA_REQUIRE(in != out, "cuda::permute: in and out are the same buffer (out of place "
                                  "only)");
  TESSERA_CUDA_REQUIRE(aligned_to(in, element_size) && aligned_to(out, element_size),
                       "cuda::permute: pointers must be aligned to the element size (" +
                           std::to_string(element_size) + " bytes)");
  const auto bytes = static_cast<std::size_t>(m.elements) * element_size;
  switch (k) {
  case Kernel::Copy:
    CHECK_CUDA(cudaMemcpyAsync(out, in, bytes, cudaMemcpyDeviceToDevice, stream));
    return;
  case Kernel::Rows:
    return launch_rows_any(stream, in, out, element_size, m);
  case Kernel::Transpose:
    return transpose(stream, word_type(element_size), in, out, m.rows, m.cols, m.ld_in, m.ld_out);
  default:
    break;
  }
  if (k == Kernel::Packed)
    return element_size == 1 ? launch_packed<4>(stream, in, out, m)
                             : launch_packed<2>(stream, in, out, m);
  switch (element_size) {
  case 1:
    return launch_elem<1>(stream, k, in, out, p, m);
  case 2:
    return launch_elem<2>(stream, k, in, out, p, m);
  case 4:
    return launch_elem<4>(stream, k, in, out, p, m);
  case 8:
    return launch_elem<8>(stream, k, in, out, p, m);
  default:
    return launch_elem<16>(stream, k, in, out, p, m);
  }
}

std::string permute_kernel(std::size_t element_size, std::span<const std::int64_t> shape,
                           std::span<const int> axes) {
  using namespace detail;
  check_element_size(element_size);
  return kernel_name(choose(permute_moves(reduce_permutation(shape, axes)), element_size),
                     element_size);
}

HostPermute::HostPermute() : stream_(make_stream()) {}

void HostPermute::run(const void* host_in, void* host_out, std::size_t element_size,
                      std::span<const std::int64_t> shape, std::span<const int> axes) {
  detail::check_element_size(element_size);
  const PermuteLayout p = reduce_permutation(shape, axes);
  const auto bytes = static_cast<std::size_t>(p.elements) * element_size;
  if (bytes == 0)
    return;
  in_.reserve(bytes);
  out_.reserve(bytes);
  copy_async(stream_.get(), in_.data(), host_in, bytes);
  permute(stream_.get(), in_.data(), out_.data(), element_size, shape, axes);
  copy_async(stream_.get(), host_out, out_.data(), bytes);
  synchronize(stream_.get());
}

} // namespace tessera::cuda
