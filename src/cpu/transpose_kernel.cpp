// Kernel names, the processor's instruction sets, the candidate list and the dispatch.
#include "cpu/transpose_kernel.hpp"

#include <charconv>

#include "core/log.hpp"
#include "core/settings.hpp"

namespace tessera::cpu::detail {

const char* isa_name(Isa isa) noexcept {
  switch (isa) {
  case Isa::Avx2:
    return "avx2";
  case Isa::Avx512:
    return "avx512";
  default:
    return "portable";
  }
}

namespace {

// Reads "<letter><digits>" at the front of `s` (e.g. "r64"), advancing past it and a '-'.
bool take_number(std::string_view& s, char letter, int& value) {
  if (s.empty() || s.front() != letter)
    return false;
  s.remove_prefix(1);
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc{} || value <= 0 || value > 4096)
    return false;
  s.remove_prefix(static_cast<std::size_t>(end - s.data()));
  if (!s.empty() && s.front() == '-')
    s.remove_prefix(1);
  return true;
}

bool take_word(std::string_view& s, std::string_view word) {
  if (s.substr(0, word.size()) != word)
    return false;
  s.remove_prefix(word.size());
  if (!s.empty() && s.front() == '-')
    s.remove_prefix(1);
  return true;
}

} // namespace

std::string kernel_name(const KernelParams& k) {
  std::string s = isa_name(k.isa);
  s += "-r" + std::to_string(k.tile_rows);
  if (k.isa == Isa::Portable)
    return s;
  s += "-b" + std::to_string(k.tile_bands);
  if (k.prefetch)
    s += "-p";
  if (k.streaming)
    s += "-nt";
  return s;
}

std::optional<KernelParams> parse_kernel_name(std::string_view s) {
  KernelParams k;
  if (take_word(s, "portable"))
    k.isa = Isa::Portable;
  else if (take_word(s, "avx512"))
    k.isa = Isa::Avx512;
  else if (take_word(s, "avx2"))
    k.isa = Isa::Avx2;
  else
    return std::nullopt;
  if (!take_number(s, 'r', k.tile_rows))
    return std::nullopt;
  k.prefetch = false;
  if (k.isa == Isa::Portable)
    return s.empty() ? std::optional<KernelParams>(k) : std::nullopt;
  if (!take_number(s, 'b', k.tile_bands))
    return std::nullopt;
  k.prefetch = take_word(s, "p");
  k.streaming = take_word(s, "nt");
  if (!s.empty() || (k.streaming && k.isa == Isa::Portable))
    return std::nullopt;
  return k;
}

bool isa_supported(Isa isa) noexcept {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  switch (isa) {
  case Isa::Avx512:
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx2");
  case Isa::Avx2:
    return __builtin_cpu_supports("avx2");
  default:
    return true;
  }
#else
  return isa == Isa::Portable;
#endif
}

Isa best_isa() noexcept {
  if (isa_supported(Isa::Avx512))
    return Isa::Avx512;
  if (isa_supported(Isa::Avx2))
    return Isa::Avx2;
  return Isa::Portable;
}

Isa configured_isa() noexcept {
  static const Isa isa = [] {
    const Isa best = best_isa();
    // The setting's values are isa_name() of Portable, Avx2 and Avx512, in the enum's order.
    const auto named =
        static_cast<Isa>(settings::choice(settings::Setting::CpuIsa, static_cast<int>(best)));
    if (!isa_supported(named)) {
      log::warn("TESSERA_CPU_ISA: this processor lacks {}: ignored", isa_name(named));
      return best;
    }
    return named;
  }();
  return isa;
}

KernelParams estimate(std::size_t element_size) {
  KernelParams k;
  k.isa = best_isa();
  // 4-byte elements: AVX2's 8 x 8 blocks beat AVX-512's 16 x 16 ones in the cache, where small
  // transposes run the estimate untimed (1000² f32, 2 threads, Intel Xeon: 39 against 31 GB/s);
  // the AVX-512 ones, which win in memory, are left to the trials (candidates).
  if (k.isa == Isa::Avx512 && element_size == 4)
    k.isa = Isa::Avx2;
  if (k.isa == Isa::Portable) {
    k.tile_rows = element_size <= 4 ? 64 : (element_size <= 8 ? 32 : 16);
    k.prefetch = false;
  }
  return k;
}

std::vector<KernelParams> candidates(std::size_t element_size) {
  const KernelParams first = estimate(element_size);
  std::vector<KernelParams> list{first};
  const auto add = [&](KernelParams k) {
    for (const auto& c : list)
      if (c == k)
        return;
    list.push_back(k);
  };
  // The register-block kernels of every supported set, a few tile shapes, with and without
  // software prefetch; tiles of different heights also move the cache-set conflicts of
  // power-of-two row strides around.
  for (Isa isa : {Isa::Avx512, Isa::Avx2}) {
    if (!isa_supported(isa))
      continue;
    // AVX-512 moves 4-byte elements in 16 x 16 blocks, and its tiles are whole blocks high.
    const int block = isa == Isa::Avx512 && element_size == 4 ? 16 : 8;
    for (int rows : {32, 64, 128})
      add({isa, rows, 32, true, false});
    add({isa, 64, 8, true, false});
    add({isa, 64, 32, false, false});
    // Short tiles with long input runs: few input streams for the hardware prefetchers and
    // few lines in flight per cache set, which power-of-two row strides need.
    add({isa, block, 32, false, false});
    add({isa, 16, 16, false, false});
    // Non-temporal stores: 8-byte elements on both sets, 4- and 16-byte ones on AVX-512 (whose
    // blocks' output rows are whole lines for every element size): 4099 x 4111 c128 ran at 36
    // GB/s with them against 21 without (2 threads, Intel Xeon). Output rows of a few lines
    // (17 x 1048573) run slower with them, and the trial keeps ordinary stores there.
    if (element_size == 8 || isa == Isa::Avx512) {
      // Short tiles of long input runs (1 to 8 KiB a row) won on 8192² f64, where ordinary
      // stores pay a read for every output line.
      add({isa, 64, 32, true, true});
      add({isa, 16, 32, false, true});
      add({isa, 16, 128, false, true});
      // Two 16 x 16 blocks of 4-byte elements a band: 20 against 18 GB/s for one on 8191 x 12289
      // f32, whose output rows all start at different offsets in a line (2 threads, Intel Xeon).
      if (block == 16)
        add({isa, 32, 128, false, true});
    }
  }
  add({Isa::Portable, element_size <= 4 ? 64 : (element_size <= 8 ? 32 : 16), 32, false, false});
  return list;
}

void run_kernel(const KernelParams& k, std::size_t element_size, const void* in, void* out,
                std::int64_t rows, std::int64_t cols, std::int64_t ld_in, std::int64_t ld_out) {
  // Called inside OpenMP teams, where nothing may throw: a kernel this processor cannot run
  // (never chosen: candidates and wisdom are checked) falls back to the portable one, as do
  // 8-byte elements off an 8-byte boundary (the register blocks move them as uint64_t words).
  const bool registers = isa_supported(k.isa) && words_aligned(element_size, in, out);
  switch (registers ? k.isa : Isa::Portable) {
#if defined(__x86_64__) // the instruction-set files define these on x86-64 only
  case Isa::Avx512:
    run_avx512(k, element_size, in, out, rows, cols, ld_in, ld_out);
    break;
  case Isa::Avx2:
    run_avx2(k, element_size, in, out, rows, cols, ld_in, ld_out);
    break;
#endif
  default:
    run_portable(k, element_size, in, out, rows, cols, ld_in, ld_out);
    break;
  }
}

} // namespace tessera::cpu::detail
