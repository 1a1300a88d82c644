// The engine of the Norm2 rescue (core/reduction.hpp): a ReduceEngine whose only op, Norm2, sums
// the squares of power-of-two-scaled f64 elements with the CPU rescue kernels
// (cpu::reduce_rows_scaled, cpu::fold_rows_scaled). The canonical chain and the out-of-core
// reduction run it exactly as they run the ordinary engines, so the rescued sums follow the
// canonical order, and since it is the same host code whatever backend made the ordinary pass,
// they have the same bits on every backend.
//
// Calls go through the data in pieces of whole rows, at most kRescuePieceBytes (or one row, if a
// row is larger): device-resident blocks (Memory::Device) are copied to the host piece by piece
// through cuda::copy, so the host memory the rescue needs stays bounded. Host data is read in
// place (the pieces change no bits: every sum continues across them in order).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/backend.hpp"
#include "mpi/reduce_engine.hpp"

namespace tessera {

inline constexpr std::size_t kRescuePieceBytes = std::size_t{16} << 20;

// The exponents e of the scaled squares (x·2^e)².
struct Norm2Exponents {
  int all = 0;           // of every element, unless one of these is given:
  std::vector<int> rows; // reduce_rows: row i of a call is row first_row + i of this
  std::vector<int> cols; // reduce_col_groups, fold_rows: column j of a call
};

class ScaledNorm2Engine final : public ReduceEngine {
public:
  ScaledNorm2Engine(Memory memory, Norm2Exponents e, std::size_t piece_bytes = kRescuePieceBytes);
  // Which entry of Norm2Exponents::rows the next reduce_rows call's first row takes.
  void set_first_row(std::int64_t row) noexcept { first_row_ = row; }

  // The contracts of ReduceEngine for op == Norm2 (anything else is an InternalError), with the
  // scaled squares; `a` holds f64 data.
  void reduce_rows(Op op, const void* a, std::int64_t rows, std::int64_t cols,
                   double* out) override;
  void reduce_col_groups(Op op, const void* a, std::int64_t rows, std::int64_t cols,
                         double* out) override;
  void fold_rows(Op op, const void* a, std::int64_t rows, std::int64_t cols, double* acc) override;

private:
  std::int64_t piece_rows(std::int64_t cols) const;
  // Host view of rows [r0, r0 + n) of a.
  const double* fetch(const void* a, std::int64_t r0, std::int64_t n, std::int64_t cols);
  const int* col_exponents(std::int64_t cols);

  Memory memory_;
  Norm2Exponents e_;
  std::size_t piece_bytes_;
  std::int64_t first_row_ = 0;
  std::vector<double> host_; // a piece of device data
  std::vector<int> scratch_; // exponents of the rows of a call, or of every column
};

} // namespace tessera
