// The distributed tridiagonal solve against a serial Thomas solve (cpu/tridiag.hpp) on random
// diagonally dominant systems, Dirichlet and periodic, with awkward sizes and splits: ranks with
// no point or one point, lines shorter than the rank count, everything on one rank.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "../mpi_test_support.hpp"
#include "core/error.hpp"
#include "cpu/tridiag.hpp"
#include "mpi/distributed_tridiag.hpp"

namespace {

using tessera::DistributedTridiag;
using tessera::test::rank_of;
using tessera::test::size_of;

// Point counts per rank that add up to n.
std::vector<std::vector<std::int64_t>> splits(std::int64_t n, int p, std::mt19937_64& rng) {
  std::vector<std::vector<std::int64_t>> out;
  std::vector<std::int64_t> block(static_cast<std::size_t>(p), n / p);
  for (std::int64_t r = 0; r < n % p; ++r)
    ++block[static_cast<std::size_t>(r)];
  out.push_back(block);
  std::vector<std::int64_t> last(static_cast<std::size_t>(p), 0);
  last.back() = n;
  out.push_back(last);
  std::vector<std::int64_t> first(static_cast<std::size_t>(p), 0);
  first.front() = n;
  out.push_back(first);
  // One point on every rank but the last (while there are points).
  std::vector<std::int64_t> ones(static_cast<std::size_t>(p), 0);
  std::int64_t left = n;
  for (int r = 0; r + 1 < p && left > 0; ++r, --left)
    ones[static_cast<std::size_t>(r)] = 1;
  ones.back() += left;
  out.push_back(ones);
  for (int t = 0; t < 3; ++t) {
    std::uniform_int_distribution<std::int64_t> cut(0, n);
    std::vector<std::int64_t> cuts(static_cast<std::size_t>(p - 1));
    for (auto& c : cuts)
      c = cut(rng);
    std::sort(cuts.begin(), cuts.end());
    std::vector<std::int64_t> counts;
    std::int64_t prev = 0;
    for (std::int64_t c : cuts) {
      counts.push_back(c - prev);
      prev = c;
    }
    counts.push_back(n - prev);
    out.push_back(counts);
  }
  return out;
}

TEST(DistributedTridiag, MatchesThomasOnRandomDiagonallyDominantSystems) {
  const int p = size_of(), me = rank_of();
  std::mt19937_64 rng(20261201); // the same draws on every rank
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const std::vector<std::int64_t> sizes = {1, 2, 3, 4, 5, 7, 11, 13, 31, 97, 211};
  const std::vector<std::int64_t> line_counts = {1, 3, 67, 130};
  int cases = 0;
  for (bool periodic : {false, true})
    for (std::int64_t n : sizes)
      for (const auto& counts : splits(n, p, rng)) {
        const std::int64_t lines = line_counts[static_cast<std::size_t>(cases++) % 4];
        // |a| + |c| < 1 < b: diagonally dominant, also with the coefficients of a repeated
        // neighbour added (periodic n = 1, 2).
        std::vector<double> a(static_cast<std::size_t>(n)), b(a.size()), c(a.size());
        for (std::size_t i = 0; i < a.size(); ++i) {
          a[i] = 0.49 * u(rng);
          c[i] = 0.49 * u(rng);
          b[i] = 1.5 + u(rng) * 0.4;
        }
        // Right-hand sides, rows layout for the reference (line s: ref[s * n + i]).
        std::vector<double> ref(static_cast<std::size_t>(n * lines));
        for (double& v : ref)
          v = 10.0 * u(rng);
        std::int64_t begin = 0;
        for (int r = 0; r < me; ++r)
          begin += counts[static_cast<std::size_t>(r)];
        const std::int64_t L = counts[static_cast<std::size_t>(me)];
        std::vector<double> x(static_cast<std::size_t>(L * lines));
        for (std::int64_t m = 0; m < L; ++m)
          for (std::int64_t s = 0; s < lines; ++s)
            x[static_cast<std::size_t>(m * lines + s)] =
                ref[static_cast<std::size_t>(s * n + begin + m)];
        const auto part = [&](const std::vector<double>& v) {
          return std::span<const double>(v.data() + begin, static_cast<std::size_t>(L));
        };
        DistributedTridiag solver(MPI_COMM_WORLD, part(a), part(b), part(c), lines, periodic);
        solver.solve(x.data());
        // Broadcast coefficients for the batched reference.
        std::vector<double> A(ref.size()), B(ref.size()), C(ref.size());
        for (std::int64_t s = 0; s < lines; ++s)
          for (std::int64_t i = 0; i < n; ++i) {
            const auto k = static_cast<std::size_t>(s * n + i);
            A[k] = a[static_cast<std::size_t>(i)];
            B[k] = b[static_cast<std::size_t>(i)];
            C[k] = c[static_cast<std::size_t>(i)];
          }
        const auto layout = tessera::BatchLayout::rows(n, lines);
        if (periodic)
          tessera::cpu::cyclic_batched(A.data(), B.data(), C.data(), ref.data(), layout);
        else
          tessera::cpu::thomas_batched(A.data(), B.data(), C.data(), ref.data(), layout);
        double scale = 0.0;
        for (double v : ref)
          scale = std::max(scale, std::abs(v));
        double err = 0.0;
        for (std::int64_t m = 0; m < L; ++m)
          for (std::int64_t s = 0; s < lines; ++s)
            err = std::max(err, std::abs(x[static_cast<std::size_t>(m * lines + s)] -
                                         ref[static_cast<std::size_t>(s * n + begin + m)]));
        EXPECT_LE(err, 1e-13 * scale)
            << "n = " << n << (periodic ? " periodic" : " dirichlet") << ", " << lines
            << " lines, rank " << me << " of " << p << " holding " << L << " points from " << begin;
        // The neighbours' points, as the reference has them.
        const auto at = [&](std::int64_t i, std::int64_t s) {
          return ref[static_cast<std::size_t>(s * n + i)];
        };
        if (L > 0) {
          const bool has_before = begin > 0 || periodic;
          const bool has_after = begin + L < n || periodic;
          ASSERT_EQ(solver.before() != nullptr, has_before);
          ASSERT_EQ(solver.after() != nullptr, has_after);
          for (std::int64_t s = 0; s < lines; ++s) {
            if (has_before) {
              EXPECT_LE(std::abs(solver.before()[s] - at((begin + n - 1) % n, s)), 1e-13 * scale);
            }
            if (has_after) {
              EXPECT_LE(std::abs(solver.after()[s] - at((begin + L) % n, s)), 1e-13 * scale);
            }
          }
        }
      }
}

TEST(DistributedTridiag, SingularRowsFailOnEveryRank) {
  const int p = size_of(), me = rank_of();
  // Four points per rank; the last rank's interior has a zero pivot (b = 0, a = c = 0).
  const std::int64_t L = 4;
  std::vector<double> a(L, -0.25), b(L, 1.0), c(L, -0.25);
  if (me == p - 1) {
    a[1] = b[1] = c[1] = 0.0;
  }
  EXPECT_THROW(DistributedTridiag(MPI_COMM_WORLD, a, b, c, 3, false), tessera::InputError);
}

} // namespace
