// The explicit and implicit half-steps of ADI along rows (see adi_line.hpp).
#include "solver/adi_line.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include <omp.h>

#include "core/aligned_buffer.hpp"
#include "core/aligned_part.hpp"

namespace tessera::heat2d {

namespace {
// Lines one thread takes at a time: the tridiagonal sweeps interleave this many systems, and
// they stay in cache between the solve and the explicit half that follows it.
constexpr std::int64_t kLinesPerTask = 8;
// Column blocks at least this wide are swept row by row, one range of columns per thread;
// narrower ones by panels of adjacent columns, whose rows stay in cache between the passes.
constexpr std::int64_t kStreamingLines = 64;
// Lines shorter than this are solved where they lie: a task's rows fit in L1 whatever their
// addresses.
constexpr std::int64_t kMinCopiedLine = 64;
constexpr std::int64_t kCacheLine = 64; // bytes
constexpr std::int64_t kPerLine = kCacheLine / std::int64_t{sizeof(double)};
constexpr std::int64_t kSetPeriod = 4096; // bytes: 64 sets of 64-byte lines (L1 data cache)

// True when the rows of one task, `stride` values apart, do not all start in different cache
// sets: the sweeps then walk kLinesPerTask streams through the same few sets (rows a multiple
// of 4 KiB apart, e.g. n = 4096, all share one), which evict each other, and loads alias the
// stores of other rows.
bool rows_share_sets(std::int64_t stride) {
  bool used[kSetPeriod / kCacheLine] = {};
  for (std::int64_t k = 0; k < kLinesPerTask; ++k) {
    const std::int64_t set = k * stride * std::int64_t{sizeof(double)} % kSetPeriod / kCacheLine;
    if (used[set])
      return true;
    used[set] = true;
  }
  return false;
}

// The row stride of the per-thread copy: whole cache lines (rows stay 64-byte aligned) and an
// odd number of them, so that the rows of a task start in kLinesPerTask different sets (an odd
// number of lines is invertible modulo the 64 sets) for every n, powers of two included.
std::int64_t copy_stride(std::int64_t n) {
  std::int64_t s = (n + kPerLine - 1) / kPerLine * kPerLine;
  if (s / kPerLine % 2 == 0)
    s += kPerLine;
  return s;
}
} // namespace

AdiLine::AdiLine(std::int64_t n, double h, Boundary boundary, double boundary_value)
    : n_(n), h_(h), boundary_(boundary), g_(boundary == Boundary::Dirichlet ? boundary_value : 0.0),
      implicit_(-h, 1.0 + 2.0 * h, -h, n, boundary == Boundary::Periodic) {}

void AdiLine::explicit_row(const double* u, double* v) const {
  const std::int64_t n = n_;
  const double h = h_;
  const bool periodic = boundary_ == Boundary::Periodic;
  const double before = periodic ? u[n - 1] : g_; // u_{-1}
  const double after = periodic ? u[0] : g_;      // u_n
  if (n == 1) {
    v[0] = u[0] + h * ((before + after) - 2.0 * u[0]);
    return;
  }
  v[0] = u[0] + h * ((before + u[1]) - 2.0 * u[0]);
  for (std::int64_t i = 1; i < n - 1; ++i)
    v[i] = u[i] + h * ((u[i - 1] + u[i + 1]) - 2.0 * u[i]);
  v[n - 1] = u[n - 1] + h * ((u[n - 2] + after) - 2.0 * u[n - 1]);
}

void AdiLine::explicit_lines(const double* src, double* dst, std::int64_t first,
                             std::int64_t count) const {
  for (std::int64_t r = first; r < first + count; ++r)
    explicit_row(src + r * n_, dst + r * n_);
}

void AdiLine::apply_explicit(const double* src, double* dst, std::int64_t rows) const {
  const std::int64_t tasks = (rows + kLinesPerTask - 1) / kLinesPerTask;
#pragma omp parallel for schedule(static)
  for (std::int64_t t = 0; t < tasks; ++t) {
    const std::int64_t first = t * kLinesPerTask;
    explicit_lines(src, dst, first, std::min(kLinesPerTask, rows - first));
  }
}

void AdiLine::add_boundary_values(double* first, double* last, std::int64_t count,
                                  std::int64_t step) const {
  if (boundary_ != Boundary::Dirichlet || g_ == 0.0)
    return;
  const double hg = h_ * g_;
  for (std::int64_t k = 0; k < count; ++k) {
    first[k * step] += hg;
    last[k * step] += hg;
  }
}

void AdiLine::solve(double* lines, std::int64_t rows, double* explicit_out) const {
  if (n_ >= kMinCopiedLine && rows_share_sets(n_)) {
    solve_copied(lines, rows, explicit_out);
    return;
  }
  const BatchLayout layout = BatchLayout::rows(n_, rows);
  const std::int64_t tasks = (rows + kLinesPerTask - 1) / kLinesPerTask;
#pragma omp parallel for schedule(static)
  for (std::int64_t t = 0; t < tasks; ++t) {
    const std::int64_t first = t * kLinesPerTask;
    const std::int64_t count = std::min(kLinesPerTask, rows - first);
    add_boundary_values(lines + first * n_, lines + first * n_ + n_ - 1, count, n_);
    implicit_.solve_range(lines, layout, first, count);
    if (explicit_out)
      explicit_lines(lines, explicit_out, first, count);
  }
}

void AdiLine::solve_copied(double* lines, std::int64_t rows, double* explicit_out) const {
  const std::int64_t n = n_, stride = copy_stride(n);
  const std::int64_t tasks = (rows + kLinesPerTask - 1) / kLinesPerTask;
  // One task's rows at the padded stride per thread (256 KiB at n = 4096: they stay in L2),
  // allocated here, outside the parallel region, so that a failure is an ordinary exception.
  const std::int64_t slot = kLinesPerTask * stride;
  const AlignedBuffer copies(static_cast<std::size_t>(omp_get_max_threads() * slot) *
                                 sizeof(double),
                             "the padded copies of the heat2d line solves");
#pragma omp parallel
  {
    double* buf = copies.as<double>() + omp_get_thread_num() * slot;
    const BatchLayout layout = BatchLayout::rows(n, kLinesPerTask, stride);
#pragma omp for schedule(static)
    for (std::int64_t t = 0; t < tasks; ++t) {
      const std::int64_t first = t * kLinesPerTask;
      const std::int64_t count = std::min(kLinesPerTask, rows - first);
      for (std::int64_t r = 0; r < count; ++r) {
        double* b = buf + r * stride;
        std::copy_n(lines + (first + r) * n, n, b);
        add_boundary_values(b, b + n - 1, 1, 1);
      }
      implicit_.solve_range(buf, layout, 0, count);
      // Each row back and its explicit half, while the row is in cache.
      for (std::int64_t r = 0; r < count; ++r) {
        const double* b = buf + r * stride;
        std::copy_n(b, n, lines + (first + r) * n);
        if (explicit_out)
          explicit_row(b, explicit_out + (first + r) * n);
      }
    }
  }
}

void AdiLine::explicit_columns(const double* x, std::int64_t lines, double* out, std::int64_t first,
                               std::int64_t count, std::int64_t row) const {
  // explicit_lines on one row of a column block (the same operations per value).
  const std::int64_t n = n_;
  const bool periodic = boundary_ == Boundary::Periodic;
  const double h = h_;
  const double* u = x + row * lines;
  const double* up = row > 0 ? u - lines : (periodic ? x + (n - 1) * lines : nullptr);
  const double* down = row < n - 1 ? u + lines : (periodic ? x : nullptr);
  double* v = out + row * lines;
  for (std::int64_t s = first; s < first + count; ++s) {
    const double before = up ? up[s] : g_;
    const double after = down ? down[s] : g_;
    v[s] = u[s] + h * ((before + after) - 2.0 * u[s]);
  }
}

void AdiLine::solve_column_range(double* x, std::int64_t lines, double* explicit_out,
                                 std::int64_t first, std::int64_t count, bool streaming) const {
  const std::int64_t n = n_;
  add_boundary_values(x + first, x + (n - 1) * lines + first, count, 1);
  if (!streaming) {
    implicit_.solve_range(x, BatchLayout::interleaved(n, lines), first, count);
    for (std::int64_t i = 0; i < n; ++i)
      explicit_columns(x, lines, explicit_out, first, count, i);
    return;
  }
  // The explicit half of a row as soon as the row and its two neighbours hold their solution,
  // while they are still in cache: two passes over the block instead of three (Dirichlet), three
  // instead of four (periodic). Rows become final from the last up, or, when the periodic
  // correction runs, from the first down; the wrapped rows 0 and n - 1 then go last.
  auto explicit_at = [&](std::int64_t i) {
    explicit_columns(x, lines, explicit_out, first, count, i);
  };
  if (!implicit_.cyclic()) {
    implicit_.solve_columns_streaming(x, lines, first, count, [&](std::int64_t i) {
      if (i + 1 < n)
        explicit_at(i + 1);
      if (i == 0)
        explicit_at(0);
    });
  } else {
    implicit_.solve_columns_streaming(x, lines, first, count, [&](std::int64_t i) {
      if (i >= 2)
        explicit_at(i - 1);
      if (i == n - 1) {
        explicit_at(n - 1);
        explicit_at(0);
      }
    });
  }
}

void AdiLine::solve_columns(double* x, std::int64_t lines, double* explicit_out) const {
  if (lines < kStreamingLines) {
    // Panels of 64 columns (512 B of each row), so that the n rows of a panel stay in the core's
    // cache between the sweeps, and the explicit half vectorises along the row.
    constexpr std::int64_t kPanel = 64;
    const std::int64_t tasks = (lines + kPanel - 1) / kPanel;
#pragma omp parallel for schedule(static)
    for (std::int64_t t = 0; t < tasks; ++t) {
      const std::int64_t first = t * kPanel;
      solve_column_range(x, lines, explicit_out, first, std::min(kPanel, lines - first), false);
    }
    return;
  }
  // One wide range of columns per thread, swept row by row (ConstTridiag::
  // solve_columns_streaming), its bounds on multiples of 8 columns (whole cache lines when the
  // rows are aligned).
#pragma omp parallel
  {
    const IndexRange r = aligned_part(lines, 8, omp_get_thread_num(), omp_get_num_threads());
    if (r.size() > 0)
      solve_column_range(x, lines, explicit_out, r.first, r.size(), true);
  }
}

} // namespace tessera::heat2d
