// Batched tridiagonal solvers (src/cpu/tridiag) against a dense Gaussian elimination with
// partial pivoting, on random diagonally dominant systems, in row and interleaved layouts.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "core/error.hpp"
#include "cpu/tridiag.hpp"
#include "test_tridiag_support.hpp"

namespace {

using tessera::BatchLayout;
using tessera::cpu::ConstTridiag;
using tridiag_test::fresh_seed;

// Dense solve of the n×n system built from one tridiagonal row set (cyclic: wrapped entries
// add, as tridiag.hpp defines for n = 1, 2).
std::vector<double> dense_solve(const std::vector<double>& a, const std::vector<double>& b,
                                const std::vector<double>& c, std::vector<double> d, bool cyclic) {
  const std::size_t n = b.size();
  std::vector<double> m(n * n, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    m[i * n + i] += b[i];
    if (i > 0)
      m[i * n + i - 1] += a[i];
    else if (cyclic)
      m[i * n + n - 1] += a[i];
    if (i + 1 < n)
      m[i * n + i + 1] += c[i];
    else if (cyclic)
      m[i * n + 0] += c[i];
  }
  for (std::size_t k = 0; k < n; ++k) {
    std::size_t p = k;
    for (std::size_t i = k + 1; i < n; ++i)
      if (std::abs(m[i * n + k]) > std::abs(m[p * n + k]))
        p = i;
    if (p != k) {
      for (std::size_t j = 0; j < n; ++j)
        std::swap(m[k * n + j], m[p * n + j]);
      std::swap(d[k], d[p]);
    }
    for (std::size_t i = k + 1; i < n; ++i) {
      const double f = m[i * n + k] / m[k * n + k];
      for (std::size_t j = k; j < n; ++j)
        m[i * n + j] -= f * m[k * n + j];
      d[i] -= f * d[k];
    }
  }
  std::vector<double> x(n);
  for (std::size_t k = n; k-- > 0;) {
    double s = d[k];
    for (std::size_t j = k + 1; j < n; ++j)
      s -= m[k * n + j] * x[j];
    x[k] = s / m[k * n + k];
  }
  return x;
}

std::size_t index(const BatchLayout& L, std::int64_t s, std::int64_t i) {
  return static_cast<std::size_t>(s * L.system_stride + i * L.element_stride);
}
std::size_t storage(const BatchLayout& L) {
  return index(L, L.count - 1, L.n - 1) + 1;
}

struct Case {
  std::int64_t n, count;
  bool interleaved;
  std::int64_t pad; // extra leading dimension
};

BatchLayout layout_of(const Case& c) {
  return c.interleaved ? BatchLayout::interleaved(c.n, c.count, c.count + c.pad)
                       : BatchLayout::rows(c.n, c.count, c.n + c.pad);
}

const std::vector<Case> kCases = {
    {1, 1, false, 0},  {1, 5, true, 0},     {2, 3, false, 1},   {2, 4, true, 2},
    {3, 1, false, 0},  {3, 9, true, 0},     {17, 31, false, 3}, {17, 31, true, 0},
    {31, 17, true, 5}, {100, 13, false, 0}, {64, 8, false, 0},  {97, 33, true, 1},
};

// Random diagonally dominant coefficients (|b| > |a| + |c|), with either sign of b.
void fill_general(std::mt19937_64& rng, const BatchLayout& L, std::vector<double>& a,
                  std::vector<double>& b, std::vector<double>& c, std::vector<double>& d) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const std::size_t size = storage(L);
  a.assign(size, 0.0);
  b.assign(size, 0.0);
  c.assign(size, 0.0);
  d.assign(size, 0.0);
  for (std::int64_t s = 0; s < L.count; ++s)
    for (std::int64_t i = 0; i < L.n; ++i) {
      const auto k = index(L, s, i);
      a[k] = u(rng);
      c[k] = u(rng);
      const double mag = std::abs(a[k]) + std::abs(c[k]) + 0.5 + std::abs(u(rng));
      b[k] = u(rng) < 0 ? -mag : mag;
      d[k] = 10.0 * u(rng);
    }
}

std::vector<double> column(const std::vector<double>& v, const BatchLayout& L, std::int64_t s) {
  std::vector<double> out(static_cast<std::size_t>(L.n));
  for (std::int64_t i = 0; i < L.n; ++i)
    out[static_cast<std::size_t>(i)] = v[index(L, s, i)];
  return out;
}

// max |x - ref| / max(1, max |ref|) over one system.
double rel_error(const std::vector<double>& x, const std::vector<double>& ref) {
  double err = 0.0, scale = 1.0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    err = std::max(err, std::abs(x[i] - ref[i]));
    scale = std::max(scale, std::abs(ref[i]));
  }
  return err / scale;
}

void check_general(bool cyclic) {
  const unsigned seed = fresh_seed();
  std::mt19937_64 rng(seed);
  for (const Case& cs : kCases) {
    const BatchLayout L = layout_of(cs);
    std::vector<double> a, b, c, d;
    fill_general(rng, L, a, b, c, d);
    std::vector<double> x = d;
    if (cyclic)
      tessera::cpu::cyclic_batched(a.data(), b.data(), c.data(), x.data(), L);
    else
      tessera::cpu::thomas_batched(a.data(), b.data(), c.data(), x.data(), L);
    for (std::int64_t s = 0; s < L.count; ++s) {
      const auto ref =
          dense_solve(column(a, L, s), column(b, L, s), column(c, L, s), column(d, L, s), cyclic);
      ASSERT_LT(rel_error(column(x, L, s), ref), 1e-12)
          << "seed " << seed << ", n " << cs.n << ", count " << cs.count << ", system " << s
          << (cs.interleaved ? ", interleaved" : ", rows");
    }
  }
}

TEST(Tridiag, ThomasMatchesDenseSolve) {
  check_general(false);
}
TEST(Tridiag, CyclicMatchesDenseSolve) {
  check_general(true);
}

void check_constant(bool periodic) {
  const unsigned seed = fresh_seed();
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (const Case& cs : kCases) {
    const BatchLayout L = layout_of(cs);
    // An ADI-like matrix (1 + r, -r/2) half the time, random dominant coefficients otherwise.
    double a, b, c;
    if (u(rng) < 0) {
      const double r = 100.0 * std::abs(u(rng));
      a = c = -0.5 * r;
      b = 1.0 + r;
    } else {
      a = u(rng);
      c = u(rng);
      b = (std::abs(a) + std::abs(c) + 0.5) * (u(rng) < 0 ? -1.0 : 1.0);
    }
    const ConstTridiag f(a, b, c, cs.n, periodic);
    std::vector<double> d(storage(L), 0.0);
    for (std::int64_t s = 0; s < L.count; ++s)
      for (std::int64_t i = 0; i < L.n; ++i)
        d[index(L, s, i)] = 10.0 * u(rng);
    std::vector<double> x = d;
    f.solve(x.data(), L);
    const std::vector<double> av(static_cast<std::size_t>(cs.n), a),
        bv(static_cast<std::size_t>(cs.n), b), cv(static_cast<std::size_t>(cs.n), c);
    for (std::int64_t s = 0; s < L.count; ++s) {
      const auto ref = dense_solve(av, bv, cv, column(d, L, s), periodic);
      ASSERT_LT(rel_error(column(x, L, s), ref), 1e-12)
          << "seed " << seed << ", a " << a << ", b " << b << ", c " << c << ", n " << cs.n
          << ", count " << cs.count << ", system " << s
          << (cs.interleaved ? ", interleaved" : ", rows");
    }
    // Padding between systems is never written.
    for (std::size_t k = 0; k < d.size(); ++k) {
      const std::int64_t s = cs.interleaved ? static_cast<std::int64_t>(k) % L.element_stride
                                            : static_cast<std::int64_t>(k) / L.system_stride;
      const std::int64_t i = cs.interleaved ? static_cast<std::int64_t>(k) / L.element_stride
                                            : static_cast<std::int64_t>(k) % L.system_stride;
      if (s >= L.count || i >= L.n) {
        ASSERT_EQ(x[k], d[k]) << "padding element " << k << " was written";
      }
    }
  }
}

TEST(Tridiag, ConstantDirichletMatchesDenseSolve) {
  check_constant(false);
}
TEST(Tridiag, ConstantPeriodicMatchesDenseSolve) {
  check_constant(true);
}

// Grouped and single-system sweeps, and both layouts, give the same bits: what lets the solver
// produce identical fields on any rank count and the GPU replay the same operations.
TEST(Tridiag, ConstantSolveIsBitIdenticalAcrossLayoutsAndRanges) {
  const unsigned seed = fresh_seed();
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (bool periodic : {false, true}) {
    const std::int64_t n = 37, count = 45;
    const ConstTridiag f(-0.7, 2.4, -0.7, n, periodic);
    std::vector<double> rows(static_cast<std::size_t>(n * count));
    for (auto& v : rows)
      v = u(rng);
    std::vector<double> inter(rows.size());
    for (std::int64_t s = 0; s < count; ++s)
      for (std::int64_t i = 0; i < n; ++i)
        inter[static_cast<std::size_t>(i * count + s)] = rows[static_cast<std::size_t>(s * n + i)];
    std::vector<double> pieces = rows;
    f.solve(rows.data(), BatchLayout::rows(n, count));
    f.solve(inter.data(), BatchLayout::interleaved(n, count));
    const BatchLayout L = BatchLayout::rows(n, count);
    // Ranges that start and end inside groups, and whole groups plus a remainder.
    f.solve_range(pieces.data(), L, 0, 3);
    f.solve_range(pieces.data(), L, 3, 17);
    f.solve_range(pieces.data(), L, 20, count - 20);
    for (std::int64_t s = 0; s < count; ++s)
      for (std::int64_t i = 0; i < n; ++i) {
        const auto k = static_cast<std::size_t>(s * n + i);
        ASSERT_EQ(rows[k], inter[static_cast<std::size_t>(i * count + s)])
            << "seed " << seed << ", system " << s << ", element " << i;
        ASSERT_EQ(rows[k], pieces[k]) << "seed " << seed << ", system " << s << ", element " << i;
      }
  }
}

TEST(Tridiag, EmptyBatchesAreNoOps) {
  const ConstTridiag f(-1.0, 4.0, -1.0, 5, true);
  f.solve(nullptr, BatchLayout::rows(5, 0));
  tessera::cpu::thomas_batched(nullptr, nullptr, nullptr, nullptr, BatchLayout::rows(0, 4));
}

TEST(Tridiag, RejectsBadInput) {
  EXPECT_THROW(ConstTridiag(1.0, 2.0, 1.0, 0, false), tessera::InputError);
  // Singular without pivoting: the first pivot is zero.
  EXPECT_THROW(ConstTridiag(1.0, 0.0, 1.0, 4, false), tessera::InputError);
  const ConstTridiag f(-1.0, 4.0, -1.0, 5, false);
  std::vector<double> x(12, 1.0);
  EXPECT_THROW(f.solve(x.data(), BatchLayout::rows(6, 2)), tessera::InputError);
}

} // namespace
