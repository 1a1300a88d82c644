// Random data for the reduction tests, alike on every rank: a seed rank 0 draws and sends to
// all, and a matrix built from it.
#pragma once

#include <mpi.h>

#include <cmath>
#include <random>
#include <vector>

#include <tessera/shape.hpp>

#include "../mpi_test_support.hpp"

namespace tessera::test {

// Seeds: shared_seed() (mpi_test_support.hpp), fresh at each run so that runs cover more data.

// Values over many binades, so that any change in the order of additions changes the bits.
template <class T>
std::vector<T> global_matrix(Shape s, unsigned seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::uniform_int_distribution<int> e(-20, 20);
  std::vector<T> a(static_cast<std::size_t>(s.size()));
  for (auto& x : a)
    x = static_cast<T>(std::ldexp(u(gen), e(gen)));
  return a;
}

} // namespace tessera::test
