// ConstTridiag::solve_columns_streaming (src/cpu/tridiag) against the grouped sweeps of
// solve_range and solve on the same interleaved systems: the same bits, nothing outside the
// range written, and each row reported once it holds its solution.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "cpu/tridiag.hpp"

namespace {

using tessera::BatchLayout;
using tessera::cpu::ConstTridiag;

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

bool same_row(const double* a, const double* b, std::int64_t count) {
  return std::memcmp(a, b, static_cast<std::size_t>(count) * sizeof(double)) == 0;
}

TEST(TridiagStreaming, BitIdenticalToGroupedSweeps) {
  const unsigned seed = std::random_device{}();
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (bool periodic : {false, true})
    for (std::int64_t n : {1, 2, 3, 4, 7, 64, 97})
      for (std::int64_t width : {1, 7, 8, 9, 63, 64, 65, 1000}) {
        // The range is a part of each row: columns before it and after it stay untouched.
        const std::int64_t first = 1 + static_cast<std::int64_t>(rng() % 9);
        const std::int64_t stride = first + width + 1 + static_cast<std::int64_t>(rng() % 5);
        // An ADI matrix (I - h D) with h over four decades, or random dominant coefficients.
        double a, b, c;
        if (u(rng) < 0) {
          const double h = std::pow(10.0, 2.0 * u(rng));
          a = c = -h;
          b = 1.0 + 2.0 * h;
        } else {
          a = u(rng);
          c = u(rng);
          b = (std::abs(a) + std::abs(c) + 0.5) * (u(rng) < 0 ? -1.0 : 1.0);
        }
        const ConstTridiag f(a, b, c, n, periodic);
        std::vector<double> d(static_cast<std::size_t>(n * stride));
        for (double& v : d)
          v = 10.0 * u(rng);
        std::vector<double> by_range = d, by_solve = d, streamed = d;
        f.solve_range(by_range.data(), BatchLayout::interleaved(n, first + width, stride), first,
                      width);
        f.solve(by_solve.data() + first, BatchLayout::interleaved(n, width, stride));
        std::vector<std::int64_t> reported;
        bool final_when_reported = true;
        f.solve_columns_streaming(streamed.data(), stride, first, width, [&](std::int64_t i) {
          reported.push_back(i);
          const std::size_t at = static_cast<std::size_t>(i * stride + first);
          final_when_reported =
              final_when_reported && same_row(streamed.data() + at, by_range.data() + at, width);
        });
        const std::string what = "seed " + std::to_string(seed) + ", n " + std::to_string(n) +
                                 ", first " + std::to_string(first) + ", width " +
                                 std::to_string(width) + ", row stride " + std::to_string(stride) +
                                 (periodic ? ", periodic" : ", dirichlet");
        ASSERT_TRUE(same_bits(by_range, by_solve)) << what;
        ASSERT_TRUE(same_bits(streamed, by_range)) << what;
        // Every row once, in the order documented (the correction's when cyclic).
        ASSERT_EQ(reported.size(), static_cast<std::size_t>(n)) << what;
        for (std::int64_t k = 0; k < n; ++k)
          ASSERT_EQ(reported[static_cast<std::size_t>(k)], f.cyclic() ? k : n - 1 - k) << what;
        ASSERT_TRUE(final_when_reported) << what;
        // Without the callback: the same bits.
        std::vector<double> quiet = d;
        f.solve_columns_streaming(quiet.data(), stride, first, width);
        ASSERT_TRUE(same_bits(quiet, by_range)) << what;
      }
}

TEST(TridiagStreaming, EmptyRangeAndBadRanges) {
  const ConstTridiag f(-1.0, 4.0, -1.0, 5, true);
  f.solve_columns_streaming(nullptr, 8, 3, 0);
  std::vector<double> x(40, 1.0);
  EXPECT_THROW(f.solve_columns_streaming(x.data(), 8, 4, 5), tessera::InputError);
  EXPECT_THROW(f.solve_columns_streaming(x.data(), 8, -1, 2), tessera::InputError);
  EXPECT_THROW(f.solve_columns_streaming(x.data(), 8, 0, -1), tessera::InputError);
}

} // namespace
