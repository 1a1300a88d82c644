// Launchers of the tiled transpose: argument checks, the alignment analysis that picks the
// vector path, and the tile shape per element size.
#include "cuda/transpose.hpp"
#include "cuda/transpose_kernel.cuh"

namespace tessera::cuda {

namespace detail {
namespace {

struct Tile {
  int rows, cols, threads;
  int min_blocks;  // per multiprocessor, for the register allocation (0: the compiler's choice)
  bool persistent; // one block per resident slot walking the tiles, or one block per tile
};

// Tile shapes per element size (bytes): variant 0 is the default.
constexpr int kVariants = 3;
constexpr Tile kTiles4[kVariants] = {
    {64, 64, 256, 4, false}, {128, 64, 256, 2, false}, {64, 64, 256, 5, false}};
constexpr Tile kTiles8[kVariants] = {
    {64, 32, 256, 4, false}, {128, 32, 256, 2, false}, {64, 32, 256, 5, false}};
constexpr Tile kTiles16[kVariants] = {
    {32, 32, 256, 4, false}, {64, 32, 256, 2, false}, {32, 32, 256, 5, false}};

const Tile& tile_of(int elem, int variant) {
  return elem == 4 ? kTiles4[variant] : elem == 8 ? kTiles8[variant] : kTiles16[variant];
}

template <class W, int VW, int TR, int TC, int NT, int MB, bool kIn, bool kOut>
void launch_tiles(cudaStream_t s, const TransposeTile<W, VW, TR, TC, NT, kIn, kOut>& k, i64 ntiles,
                  bool persistent) {
  auto kernel = transpose_tiles<W, VW, TR, TC, NT, MB, kIn, kOut>;
  // Persistent blocks: as many as fit on the device at once (asked once per kernel).
  static const i64 resident = [&] {
    int per_sm = 0;
    CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, NT, 0));
    return static_cast<i64>(std::max(1, per_sm)) * sm_count();
  }();
  const unsigned grid =
      static_cast<unsigned>(std::min(ntiles, persistent ? resident : i64{1} << 30));
  kernel<<<grid, NT, 0, s>>>(k, ntiles);
  CHECK_CUDA_LAUNCH();
}

template <class W, int VW, int TR, int TC, int NT, int MB, bool kIn, bool kOut>
void launch_shape(cudaStream_t s, const void* in, void* out, i64 rows, i64 cols, i64 ld_in,
                  i64 ld_out, int phase_in, int phase_out, bool persistent) {
  using K = TransposeTile<W, VW, TR, TC, NT, kIn, kOut>;
  const i64 tiles_x = (cols + TC - 1) / TC;
  // Shifted output tiles reach up to kSector - 1 rows past the last multiple of TR.
  const i64 tiles_y = (rows + (kOut ? 0 : K::kSector - 1) + TR - 1) / TR;
  const K k{static_cast<const W*>(in),
            static_cast<W*>(out),
            rows,
            cols,
            ld_in,
            ld_out,
            (rows - 1) * ld_in + cols,
            phase_in,
            phase_out,
            tiles_x};
  launch_tiles<W, VW, TR, TC, NT, MB>(s, k, tiles_x * tiles_y, persistent);
}

template <class W, int VW, int TR, int TC, int NT, int MB>
void launch(cudaStream_t s, const void* in, void* out, i64 rows, i64 cols, i64 ld_in, i64 ld_out,
            bool persistent) {
  constexpr int kSector = 32 / static_cast<int>(sizeof(W));
  const auto elem = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) / sizeof(W); };
  // Input: rows read as whole 16-byte vectors when each starts on one. Output: rows written
  // in whole 32-byte sectors when each starts on one.
  const int phase_in = VW > 1 ? static_cast<int>(elem(in) % VW) : 0;
  const int phase_out = static_cast<int>(elem(out) % kSector);
  const bool align_in = phase_in == 0 && (rows == 1 || ld_in % VW == 0);
  const bool align_out = phase_out == 0 && (cols == 1 || ld_out % kSector == 0);
  if (align_in && align_out)
    launch_shape<W, VW, TR, TC, NT, MB, true, true>(s, in, out, rows, cols, ld_in, ld_out, phase_in,
                                                    phase_out, persistent);
  else if (align_in)
    launch_shape<W, VW, TR, TC, NT, MB, true, false>(s, in, out, rows, cols, ld_in, ld_out,
                                                     phase_in, phase_out, persistent);
  else if (align_out)
    launch_shape<W, VW, TR, TC, NT, MB, false, true>(s, in, out, rows, cols, ld_in, ld_out,
                                                     phase_in, phase_out, persistent);
  else
    launch_shape<W, VW, TR, TC, NT, MB, false, false>(s, in, out, rows, cols, ld_in, ld_out,
                                                      phase_in, phase_out, persistent);
}

template <int E, int Variant>
void launch_variant(cudaStream_t s, const void* in, void* out, i64 rows, i64 cols, i64 ld_in,
                    i64 ld_out) {
  constexpr Tile t = E == 4 ? kTiles4[Variant] : E == 8 ? kTiles8[Variant] : kTiles16[Variant];
  if constexpr (E > 4) {
    if (!(aligned_to(in, E) && aligned_to(out, E))) {
      // Element-aligned only to 4 bytes: whole elements without vectors or sector cuts.
      launch_shape<LooseWord<E>, 1, t.rows, t.cols, t.threads, t.min_blocks, true, true>(
          s, in, out, rows, cols, ld_in, ld_out, 0, 0, t.persistent);
      return;
    }
  }
  launch<typename Word<E>::type, 16 / E, t.rows, t.cols, t.threads, t.min_blocks>(
      s, in, out, rows, cols, ld_in, ld_out, t.persistent);
}

template <int E>
void launch_elem(cudaStream_t s, int variant, const void* in, void* out, i64 rows, i64 cols,
                 i64 ld_in, i64 ld_out) {
  switch (variant) {
  case 0:
    return launch_variant<E, 0>(s, in, out, rows, cols, ld_in, ld_out);
  case 1:
    return launch_variant<E, 1>(s, in, out, rows, cols, ld_in, ld_out);
  default:
    return launch_variant<E, 2>(s, in, out, rows, cols, ld_in, ld_out);
  }
}

void check_args(DType t, int variant, const void* in, void* out, i64 rows, i64 cols, i64 ld_in,
                i64 ld_out) {
  const std::string what = "cuda::transpose of a " + shape_str(rows, cols) + " " +
                           std::string(dtype_name(t)) + " matrix: ";
  TESSERA_CUDA_REQUIRE(rows >= 0 && cols >= 0, what + "negative shape");
  TESSERA_CUDA_REQUIRE(variant >= 0 && variant < kVariants,
                       what + "no tile variant " + std::to_string(variant));
  if (rows == 0 || cols == 0)
    return;
  TESSERA_CUDA_REQUIRE(ld_in >= cols, what + "ld_in " + std::to_string(ld_in) + " < cols");
  TESSERA_CUDA_REQUIRE(ld_out >= rows, what + "ld_out " + std::to_string(ld_out) + " < rows");
  TESSERA_CUDA_REQUIRE(in != nullptr && out != nullptr, what + "null pointer");
  TESSERA_CUDA_REQUIRE(in != out, what + "in and out are the same buffer (out of place only)");
  TESSERA_CUDA_REQUIRE(aligned_to(in, 4) && aligned_to(out, 4),
                       what + "pointers must be aligned to 4 bytes");
}

} // namespace
} // namespace detail

void transpose_variant(CUstream_st* stream, DType t, int variant, const void* in, void* out,
                       std::int64_t rows, std::int64_t cols, std::int64_t ld_in,
                       std::int64_t ld_out) {
  detail::check_args(t, variant, in, out, rows, cols, ld_in, ld_out);
  if (rows == 0 || cols == 0)
    return;
  switch (dtype_size(t)) {
  case 4:
    return detail::launch_elem<4>(stream, variant, in, out, rows, cols, ld_in, ld_out);
  case 8:
    return detail::launch_elem<8>(stream, variant, in, out, rows, cols, ld_in, ld_out);
  default:
    return detail::launch_elem<16>(stream, variant, in, out, rows, cols, ld_in, ld_out);
  }
}

void transpose(CUstream_st* stream, DType t, const void* in, void* out, std::int64_t rows,
               std::int64_t cols, std::int64_t ld_in, std::int64_t ld_out) {
  transpose_variant(stream, t, 0, in, out, rows, cols, ld_in, ld_out);
}

int transpose_variant_count() {
  return detail::kVariants;
}

std::string transpose_variant_name(DType t, int variant) {
  if (variant < 0 || variant >= detail::kVariants)
    return "?";
  const detail::Tile& x = detail::tile_of(static_cast<int>(dtype_size(t)), variant);
  return std::to_string(x.rows) + "x" + std::to_string(x.cols) + "/" + std::to_string(x.threads) +
         (x.min_blocks ? "/mb" + std::to_string(x.min_blocks) : "") + (x.persistent ? "/p" : "");
}

} // namespace tessera::cuda
