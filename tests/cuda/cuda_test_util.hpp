// Shared by the CUDA tests: the collective "does every rank have a GPU" skip, device binding,
// seeded random data and bit-exact comparison of doubles.
#pragma once

#include <gtest/gtest.h>
#include <mpi.h>

#include <bit>
#include <cmath>
#include <complex>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "../mpi_test_support.hpp"
#include "core/error.hpp"
#include "cuda/device.hpp"
#include "mpi/communicator.hpp"

namespace tessera::test {

// Collective over MPI_COMM_WORLD: true when every rank has a usable GPU; otherwise `reason` says
// why (the same decision on every rank, so no rank waits in a collective the others skip).
inline bool all_ranks_have_gpu(std::string& reason) {
  const int have = cuda::device_count() > 0 ? 1 : 0;
  int all = 0;
  MPI_Allreduce(&have, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (all == 0)
    reason = have ? "another rank has no usable GPU" : cuda::unavailable_reason();
  return all != 0;
}

// One GPU per rank: node-local rank mod device count (ranks share a GPU when there are more).
inline void bind_gpu() {
  static const int device = cuda::bind_device(mpi::Communicator(MPI_COMM_WORLD).node_local_rank());
  (void)device;
}

inline int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

#define TESSERA_REQUIRE_GPU()                                                                      \
  do {                                                                                             \
    std::string tessera_why_;                                                                      \
    if (!::tessera::test::all_ranks_have_gpu(tessera_why_))                                        \
      GTEST_SKIP() << tessera_why_;                                                                \
    ::tessera::test::bind_gpu();                                                                   \
  } while (false)

inline std::uint64_t fresh_seed() {
  std::random_device rd;
  return (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
}

inline int world_size() {
  int s = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

// splitmix64: fast enough for the 268-million-element cases.
struct Rng {
  std::uint64_t s;
  std::uint64_t next() {
    std::uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [-1, 1).
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-52 - 1.0; }
  // Signed values over 2^-8 … 2^8: sums of these depend on the order of the additions.
  double wide() { return std::ldexp(uniform(), static_cast<int>(next() % 17) - 8); }
};

template <class T>
T random_value(Rng& r) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>)
    return static_cast<T>(r.wide());
  else {
    using R = typename T::value_type;
    const R re = static_cast<R>(r.uniform());
    return T(re, static_cast<R>(r.uniform()));
  }
}

template <class T>
std::vector<T> random_vector(std::size_t n, std::uint64_t seed) {
  Rng r{seed};
  std::vector<T> v(n);
  for (auto& x : v)
    x = random_value<T>(r);
  return v;
}

// Equal bits, or both NaN (0/0 has a different sign bit on the CPU and the GPU).
inline bool same_bits(double a, double b) {
  if (std::isnan(a) && std::isnan(b))
    return true;
  return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b);
}

// Index of the first element whose bits differ, or -1.
inline std::int64_t first_difference(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size())
    return 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!same_bits(a[i], b[i]))
      return static_cast<std::int64_t>(i);
  return -1;
}

} // namespace tessera::test
