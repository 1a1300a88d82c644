// The serial reference of a redistribution, obviously correct: every rank gathers all of A's
// local blocks, reads op(A) element by element through A's layout, and updates its own part of
// B element by element through B's layout. Layouts must use one leading dimension on every rank.
#pragma once

#include <mpi.h>

#include <complex>
#include <cstdint>
#include <numeric>
#include <type_traits>
#include <vector>

#include <tessera/layout.hpp>
#include <tessera/redistribute_plan.hpp>

namespace tessera::test {

template <class T>
T reference_scalar(std::complex<double> v) {
  if constexpr (std::is_floating_point_v<T>)
    return static_cast<T>(v.real());
  else
    return T(static_cast<typename T::value_type>(v.real()),
             static_cast<typename T::value_type>(v.imag()));
}

template <class T>
T reference_conj(T x) {
  if constexpr (std::is_floating_point_v<T>)
    return x;
  else
    return std::conj(x);
}

template <class T>
void redistribute_reference(const Layout& a, const Layout& b, const RedistributeOptions& o,
                            const T* a_local, T* b_local, MPI_Comm comm) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  std::vector<int> counts(static_cast<std::size_t>(size)), displs(counts.size());
  for (int r = 0; r < size; ++r)
    counts[static_cast<std::size_t>(r)] = static_cast<int>(a.local_extent(r) * sizeof(T));
  std::exclusive_scan(counts.begin(), counts.end(), displs.begin(), 0);
  std::vector<T> all(static_cast<std::size_t>(displs.back() + counts.back()) / sizeof(T) + 1);
  MPI_Allgatherv(a_local, counts[static_cast<std::size_t>(rank)], MPI_BYTE, all.data(),
                 counts.data(), displs.data(), MPI_BYTE, comm);
  const bool transpose = o.op != MatrixOp::None;
  const T alpha = reference_scalar<T>(o.alpha), beta = reference_scalar<T>(o.beta);
  for (std::int64_t i = 0; i < o.rows; ++i)
    for (std::int64_t j = 0; j < o.cols; ++j) {
      const LocalIndex bi = b.local_index(o.b_row + i, o.b_col + j);
      if (bi.rank != rank)
        continue;
      const LocalIndex ai = transpose ? a.local_index(o.a_row + j, o.a_col + i)
                                      : a.local_index(o.a_row + i, o.a_col + j);
      T x = all[static_cast<std::size_t>(displs[static_cast<std::size_t>(ai.rank)]) / sizeof(T) +
                static_cast<std::size_t>(a.local_offset(ai.rank, ai.row, ai.col))];
      if (o.op == MatrixOp::ConjTranspose)
        x = reference_conj(x);
      T& y = b_local[b.local_offset(rank, bi.row, bi.col)];
      y = beta == T{0} ? alpha * x : beta * y + alpha * x;
    }
}

} // namespace tessera::test
