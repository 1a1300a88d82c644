// One direction of the Peaceman–Rachford ADI scheme, applied to full grid lines stored as the
// rows of a row-major block (the solver transposes so that the lines of the direction at hand
// are always rows). With h = alpha dt / (2 dx^2) and the 3-point second difference
// D u_i = u_{i-1} - 2 u_i + u_{i+1}:
//   explicit half:  v = (I + h D) u      v_i = u_i + h ((u_{i-1} + u_{i+1}) - 2 u_i)
//   implicit half:  (I - h D) w = v      a constant tridiagonal solve (cpu/tridiag.hpp)
// Dirichlet lines take the boundary value as u_{-1} = u_n; periodic lines wrap.
// Every line is computed the same way wherever it lives, which makes the fields independent of
// the number of ranks and threads.
#pragma once

#include <cstdint>

#include "cpu/tridiag.hpp"
#include "solver/heat2d_config.hpp"

namespace tessera::heat2d {

class AdiLine {
public:
  AdiLine() = default;
  // n: points per line; h = alpha dt / (2 spacing^2).
  AdiLine(std::int64_t n, double h, Boundary boundary, double boundary_value);

  // dst = (I + h D) src for `rows` lines of n contiguous values. OpenMP over lines.
  void apply_explicit(const double* src, double* dst, std::int64_t rows) const;
  // lines := (I - h D)^{-1} lines, in place; then, when `explicit_out` is not null,
  // explicit_out = (I + h D) lines — fused while the lines are still in cache. OpenMP over lines,
  // 8 at a time, their sweeps interleaved; when 8 rows of n >= 64 values would not all start in
  // different cache sets (n * 8 bytes a multiple of 4 KiB, or close: n = 4096), each group is
  // solved in a per-thread copy whose rows are padded apart, then copied back.
  void solve(double* lines, std::int64_t rows, double* explicit_out = nullptr) const;

  // As solve() for lines stored as the columns of an n × lines block (element i of line s at
  // lines_block[i * lines + s]), with the same operations per line, so the same bits: a rank that
  // holds whole lines of both directions solves the strided ones where they lie instead of
  // transposing. OpenMP: each thread sweeps one wide range of columns row by row, every pass
  // along contiguous memory (ConstTridiag::solve_columns_streaming), the explicit half of each
  // row computed as soon as its neighbours are solved; narrow blocks (fewer than 64 lines) go by
  // panels of adjacent columns instead. explicit_out must not overlap lines_block.
  void solve_columns(double* lines_block, std::int64_t lines, double* explicit_out) const;

  std::int64_t n() const noexcept { return n_; }
  double h() const noexcept { return h_; }
  const cpu::ConstTridiag& implicit_matrix() const noexcept { return implicit_; }

private:
  // The known Dirichlet boundary values of the implicit unknowns moved to the right-hand side
  // of count lines: first[k * step] and last[k * step] gain h g (nothing for a zero or
  // periodic boundary). Every solve path adds them the same way, so that all give the same bits.
  void add_boundary_values(double* first, double* last, std::int64_t count,
                           std::int64_t step) const;
  // The explicit half of one line: v = (I + h D) u.
  void explicit_row(const double* u, double* v) const;
  void explicit_lines(const double* src, double* dst, std::int64_t first, std::int64_t count) const;
  // solve() for lines whose rows would share cache sets: each task's rows are solved in a
  // per-thread copy at a padded stride (same operations per value, so the same bits).
  void solve_copied(double* lines, std::int64_t rows, double* explicit_out) const;
  // solve_columns' work on columns [first, first + count): the boundary values, the solve
  // (streamed row by row, the explicit half fused in, or by groups of columns), the explicit
  // half.
  void solve_column_range(double* x, std::int64_t lines, double* explicit_out, std::int64_t first,
                          std::int64_t count, bool streaming) const;
  // The explicit half of one row of a column block, for columns [first, first + count).
  void explicit_columns(const double* x, std::int64_t lines, double* out, std::int64_t first,
                        std::int64_t count, std::int64_t row) const;

  std::int64_t n_ = 0;
  double h_ = 0.0;
  Boundary boundary_ = Boundary::Dirichlet;
  double g_ = 0.0;
  cpu::ConstTridiag implicit_;
};

} // namespace tessera::heat2d
