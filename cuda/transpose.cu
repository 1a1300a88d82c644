// The transpose entry points: argument checks, the choice of kernel for a shape and layout, and
// the dispatch to the launchers of cuda/transpose_launch.cuh.
#include "cuda/transpose.hpp"
#include "cuda/transpose_launch.cuh"

namespace tessera::cuda {

namespace detail {
namespace {

// The choice table: the kernels choose() can pick, and nothing else (the kernels kept for
// comparison are the benchmark's: bench/cuda/transpose_variants.cu). 0 is the choice itself.
enum Kernel : int {
  kAuto = 0,
  kClassicTile,
  kTile32Square,
  kLean32,
  kLean64,
  kLeanTall,
  kVariants
};

// Matrices of at most this many rows take the 32×32 tiles (one row of tiles, many small blocks).
constexpr i64 kShortMaxRows = 32;

// Matrices up to this size stay in the L2 cache (50 MB on an H100, 60 MB on an H200) between
// the phases of a tile: the 64×64 tiles' many blocks win there.
constexpr i64 kCachedBytes = i64{48} << 20;

// The kernel for a shape and layout (see transpose.hpp). Chosen from measurements on an H200
// (bench/RESULTS.md, section GPU): for each class, the kernel that moved the most bytes.
int choose(int E, const void* in, const void* out, i64 rows, i64 cols) {
  if (E > 4 && !(aligned_to(in, E) && aligned_to(out, E)))
    return kClassicTile; // only its element-word path takes 4-byte aligned complex data
  // Short and wide: 32×32 tiles, many small blocks (one row of tiles); 16×16 threads for 4-byte
  // elements (two 64-byte row runs per warp access).
  if (rows <= kShortMaxRows)
    return E == 4 ? kTile32Square : kLean32;
  // Fewer rows than a tall tile holds: 64×64 tiles; cached matrices too (their many blocks).
  if (rows < kScalarTallRows<4> || rows * cols * E <= kCachedBytes)
    return kLean64;
  // Everything else, aligned or not, tall-and-skinny included: 128 rows × 256 bytes.
  return kLeanTall;
}

template <int E>
void launch_elem(cudaStream_t s, int variant, const void* in, void* out, i64 rows, i64 cols,
                 i64 ld_in, i64 ld_out) {
  if (variant == kAuto)
    variant = choose(E, in, out, rows, cols);
  if (E > 4 && !(aligned_to(in, E) && aligned_to(out, E)))
    variant = kClassicTile; // the asked kernel cannot take this layout
  switch (variant) {
  case kTile32Square:
    return launch_scalar_tile<E, 32, 32, 1, 16, 16>(s, in, out, rows, cols, ld_in, ld_out);
  case kLean32:
    return launch_lean_tile<E, 32, 32, 8>(s, in, out, rows, cols, ld_in, ld_out);
  case kLean64:
    return launch_lean_tile<E, kScalar64Rows<E>, kScalar64Cols<E>, 1>(s, in, out, rows, cols, ld_in,
                                                                      ld_out);
  case kLeanTall:
    return launch_lean_tile<E, kScalarTallRows<E>, kScalarTallCols<E>, 1>(s, in, out, rows, cols,
                                                                          ld_in, ld_out);
  default:
    return launch_variant<E, 0>(s, in, out, rows, cols, ld_in, ld_out);
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
  using namespace detail;
  const int e = static_cast<int>(dtype_size(t));
  switch (variant) {
  case kAuto:
    return "auto";
  case kClassicTile: {
    const Tile& x = tile_of(e, 0);
    return "tile " + std::to_string(x.rows) + "x" + std::to_string(x.cols) + "/" +
           std::to_string(x.threads) + "/mb" + std::to_string(x.min_blocks);
  }
  case kTile32Square:
    return "tile 32x32/16x16";
  case kLean32:
    return "lean 32x32/32x8";
  case kLean64:
    return e < 16 ? "lean 64x64/32x8" : "lean 32x32/32x8/mb1";
  case kLeanTall:
    return e < 16 ? "lean 128x" + std::to_string(256 / e) + "/32x8" : "lean 64x32/32x8";
  default:
    return "?";
  }
}

// The choice depends on the shape and the pointers' alignment only, not the leading dimensions.
int transpose_choice(DType t, const void* in, const void* out, std::int64_t rows, std::int64_t cols,
                     std::int64_t /*ld_in*/, std::int64_t /*ld_out*/) {
  return detail::choose(static_cast<int>(dtype_size(t)), in, out, rows, cols);
}

} // namespace tessera::cuda
