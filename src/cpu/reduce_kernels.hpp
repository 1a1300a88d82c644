// The reduction kernels of cpu/reduce.hpp as one table per instruction set. The kernels are
// compute-bound when several ops fold each element (f32 widened to double), so a build without
// -march=native ran them at half the speed of a native one: each instruction set gets its own
// build of cpu/reduce_kernels.inl, and the public functions go through the best table the
// processor supports, chosen once. Every table gives the same bits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "core/reduction.hpp"
#include "cpu/transpose_kernel.hpp"

namespace tessera::cpu::detail {

template <class T>
struct ReduceKernelsOf {
  void (*reduce_rows)(Op, const T*, std::int64_t, std::int64_t, double*);
  void (*reduce_rows_multi)(const Op*, std::size_t, const T*, std::int64_t, std::int64_t,
                            double* const*);
  void (*reduce_col_groups)(Op, const T*, std::int64_t, std::int64_t, double*);
  void (*reduce_col_groups_multi)(const Op*, std::size_t, const T*, std::int64_t, std::int64_t,
                                  double* const*);
  void (*fold_rows)(Op, const T*, std::int64_t, std::int64_t, double*);
};

struct ReduceKernels {
  ReduceKernelsOf<float> f32;
  ReduceKernelsOf<double> f64;
  void (*fold_partials)(Op, double*, const double*, std::int64_t, std::int64_t);
  void (*fold_row_blocks)(Op, const double*, std::int64_t, double*);

  template <class T>
  const ReduceKernelsOf<T>& of() const noexcept {
    if constexpr (std::is_same_v<T, float>)
      return f32;
    else
      return f64;
  }
};

// The table built for isa (which the processor must support: isa_supported(isa)).
const ReduceKernels& reduce_kernels(Isa isa) noexcept;

} // namespace tessera::cpu::detail
