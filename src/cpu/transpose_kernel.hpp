// The local transpose's candidate kernels: how each one is named, run and chosen.
//
// A kernel is an instruction set (portable C++, AVX2 or AVX-512, picked at run time from what
// the processor supports, never from the build flags) plus the tile it walks: input rows per
// tile, register blocks per tile along the columns, software prefetch of the next tile, and
// (8-byte elements; 4- and 16-byte ones with AVX-512) non-temporal stores. Which one is fastest
// depends on the shape, the leading dimensions, the thread count and the machine, so the plan times
// a few on first use (transpose_tuner.hpp) and remembers the winner.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::cpu::detail {

enum class Isa : std::uint8_t { Portable, Avx2, Avx512 };

struct KernelParams {
  Isa isa = Isa::Portable;
  int tile_rows = 64;  // input rows per tile (a multiple of the register block)
  int tile_bands = 32; // register blocks per tile along the input's columns
  bool prefetch = true;
  // Non-temporal stores: 8-byte elements (AVX2, AVX-512), 4- and 16-byte ones (AVX-512); other
  // combinations run with ordinary stores.
  bool streaming = false;
  bool operator==(const KernelParams&) const = default;
};

// A 16-byte element moved as one unit (complex<double>); only copied, never interpreted.
struct Word16 {
  std::uint64_t lo, hi;
};

// Whether both pointers are aligned to the word an element moves as (8-byte elements as one
// uint64_t; 4- and 16-byte words need no more than the element's own alignment). Only the
// portable kernel takes 8-byte elements that are not (complex<float> aligned to 4 bytes).
inline bool words_aligned(std::size_t element_size, const void* in, const void* out) noexcept {
  return element_size != 8 || (reinterpret_cast<std::uintptr_t>(in) % 8 == 0 &&
                               reinterpret_cast<std::uintptr_t>(out) % 8 == 0);
}

// "avx2-r64-b32-p", "avx512-r64-b32-p-nt", "portable-r32": stable names for wisdom files.
std::string kernel_name(const KernelParams& k);
std::optional<KernelParams> parse_kernel_name(std::string_view name);

// "portable", "avx2", "avx512": the names of kernel_name, wisdom files and TESSERA_CPU_ISA.
const char* isa_name(Isa isa) noexcept;

// The richest instruction set this processor and OS support (cpuid, at run time).
Isa best_isa() noexcept;
bool isa_supported(Isa isa) noexcept;
// The instruction set the reductions and the permutation's small slices run with: best_isa(), or
// TESSERA_CPU_ISA (portable, avx2, avx512) where set to one the processor supports. Chosen on
// first use. (The transposes time their candidates instead: transpose_tuner.hpp.)
Isa configured_isa() noexcept;

// The kernels worth timing for this element size on this processor, the estimate first.
std::vector<KernelParams> candidates(std::size_t element_size);
// The kernel chosen without timing anything.
KernelParams estimate(std::size_t element_size);

// out[j*ld_out + i] = in[i*ld_in + j] for element_size in {4, 8, 16}. A worksharing step: every
// thread of the calling team calls it with the same arguments; it ends with a barrier.
void run_kernel(const KernelParams& k, std::size_t element_size, const void* in, void* out,
                std::int64_t rows, std::int64_t cols, std::int64_t ld_in, std::int64_t ld_out);

// The per-instruction-set entry points behind run_kernel (one file each; the AVX ones exist on
// x86-64 only).
void run_portable(const KernelParams& k, std::size_t element_size, const void* in, void* out,
                  std::int64_t rows, std::int64_t cols, std::int64_t ld_in, std::int64_t ld_out);
void run_avx2(const KernelParams& k, std::size_t element_size, const void* in, void* out,
              std::int64_t rows, std::int64_t cols, std::int64_t ld_in, std::int64_t ld_out);
void run_avx512(const KernelParams& k, std::size_t element_size, const void* in, void* out,
                std::int64_t rows, std::int64_t cols, std::int64_t ld_in, std::int64_t ld_out);

// Serial (one thread, no barrier): the whole rows × cols matrix by AVX-512 register blocks (4-, 8-
// and 16-byte elements), for the many small matrices of a permutation's batch. `stream`:
// non-temporal stores (fenced before it returns), which need every output row's start 64-byte
// aligned (ld_out and out).
// Only on x86-64 processors with AVX-512 (best_isa() == Isa::Avx512).
void transpose_blocks_avx512(std::size_t element_size, const void* in, void* out, std::int64_t rows,
                             std::int64_t cols, std::int64_t ld_in, std::int64_t ld_out,
                             bool stream);

} // namespace tessera::cpu::detail
