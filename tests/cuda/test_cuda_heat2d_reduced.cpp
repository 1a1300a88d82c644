// The reduced systems of the one-GPU heat2d tile step (cuda::solve_reduced by warps and by
// threads, and the host replay of the warp's scans, tiles::replay_reduced_line) against plain
// Thomas on random diagonally dominant systems of awkward sizes: 1, 2 and 3 unknowns, primes,
// fewer than a warp's lanes, around the multiples of 32 and the most positions a lane holds, and
// past them (where the warps hand over to a thread per line), over line counts that leave a
// block's last lines empty; cyclic systems against dense Gaussian elimination. The replay gives
// the kernel's bits. Ranks skip together without a GPU; the replay runs without one.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "../unit/test_tridiag_support.hpp"
#include "cuda/buffer.hpp"
#include "cuda/heat2d_tiles.hpp"
#include "cuda/heat2d_tiles_reduced.hpp"
#include "cuda/stream.hpp"
#include "cuda_test_util.hpp"

namespace tessera {
namespace {

namespace tiles = cuda::tiles;
using std::size_t;

// Row k: a[k] x_{k-1} + b[k] x_k + c[k] x_{k+1} (cyclic: a[0] multiplies x_{K-1} and c[K-1] x_0,
// otherwise both are 0), strictly diagonally dominant, and its factorisation in the tables of
// PartitionedTridiag (Thomas without pivoting, Sherman–Morrison for the corners).
struct System {
  int K = 0;
  bool periodic = false;
  double h = 0.0;
  std::vector<double> a, b, c, sub, inv, cp, z;
  double corner = 0.0, invc = 0.0;
};

System random_system(int K, bool periodic, test::Rng& r) {
  System s;
  s.K = K;
  s.periodic = periodic;
  s.h = std::pow(10.0, 2.0 * r.uniform());
  const auto n = static_cast<size_t>(K);
  s.a.resize(n);
  s.b.resize(n);
  s.c.resize(n);
  for (size_t k = 0; k < n; ++k) {
    s.a[k] = r.uniform();
    s.c[k] = r.uniform();
    const double margin = 1.02 + std::abs(r.uniform());
    s.b[k] =
        (std::abs(s.a[k]) + std::abs(s.c[k]) + 1e-3) * margin * (r.uniform() < 0.0 ? -1.0 : 1.0);
  }
  if (!periodic) {
    s.a[0] = 0.0;
    s.c[n - 1] = 0.0;
  }
  s.sub = s.a;
  const double beta = s.a[0], alpha = s.c[n - 1], gamma = -s.b[0];
  std::vector<double> bb = s.b;
  if (periodic) {
    bb[0] -= gamma;
    bb[n - 1] -= alpha * beta / gamma;
  }
  s.inv.assign(n, 0.0);
  s.cp.assign(n, 0.0);
  s.z.assign(n, 0.0);
  for (size_t k = 0; k < n; ++k) {
    s.inv[k] = 1.0 / (k == 0 ? bb[0] : bb[k] - s.sub[k] * s.cp[k - 1]);
    s.cp[k] = s.c[k] * s.inv[k];
  }
  if (periodic) {
    s.z[0] = gamma * s.inv[0];
    s.z[n - 1] = alpha; // K >= 3: not position 0
    for (size_t k = 1; k < n; ++k)
      s.z[k] = (s.z[k] - s.sub[k] * s.z[k - 1]) * s.inv[k];
    for (size_t k = n - 1; k-- > 0;)
      s.z[k] -= s.cp[k] * s.z[k + 1];
    s.corner = beta / gamma;
    s.invc = 1.0 / (1.0 + s.z[0] + s.corner * s.z[n - 1]);
  }
  return s;
}

// The system's right-hand side on line l, as the kernels form it: P_k + h F_{k+1}.
std::vector<double> rhs(const System& s, const std::vector<double>& P, const std::vector<double>& F,
                        std::int64_t lines, std::int64_t l) {
  std::vector<double> d(static_cast<size_t>(s.K));
  for (int k = 0; k < s.K; ++k) {
    const bool has = k + 1 < s.K || s.periodic;
    const double f = has ? F[static_cast<size_t>((k + 1 < s.K ? k + 1 : 0) * lines + l)] : 0.0;
    d[static_cast<size_t>(k)] = std::fma(s.h, f, P[static_cast<size_t>(k * lines + l)]);
  }
  return d;
}

// Plain Thomas on (a, b, c).
std::vector<double> thomas(const System& s, std::vector<double> d) {
  const auto n = static_cast<size_t>(s.K);
  std::vector<double> cq(n);
  cq[0] = s.c[0] / s.b[0];
  d[0] /= s.b[0];
  for (size_t k = 1; k < n; ++k) {
    const double m = s.b[k] - s.a[k] * cq[k - 1];
    cq[k] = s.c[k] / m;
    d[k] = (d[k] - s.a[k] * d[k - 1]) / m;
  }
  for (size_t k = n - 1; k-- > 0;)
    d[k] -= cq[k] * d[k + 1];
  return d;
}

// Dense Gaussian elimination with partial pivoting on the cyclic matrix.
std::vector<double> dense(const System& s, std::vector<double> d) {
  const auto n = static_cast<size_t>(s.K);
  std::vector<double> A(n * n, 0.0);
  for (size_t k = 0; k < n; ++k) {
    A[k * n + (k + n - 1) % n] += s.a[k];
    A[k * n + k] += s.b[k];
    A[k * n + (k + 1) % n] += s.c[k];
  }
  for (size_t j = 0; j < n; ++j) {
    size_t p = j;
    for (size_t i = j + 1; i < n; ++i)
      if (std::abs(A[i * n + j]) > std::abs(A[p * n + j]))
        p = i;
    for (size_t i = 0; i < n; ++i)
      std::swap(A[j * n + i], A[p * n + i]);
    std::swap(d[j], d[p]);
    for (size_t i = j + 1; i < n; ++i) {
      const double m = A[i * n + j] / A[j * n + j];
      for (size_t c = j; c < n; ++c)
        A[i * n + c] -= m * A[j * n + c];
      d[i] -= m * d[j];
    }
  }
  for (size_t j = n; j-- > 0;) {
    for (size_t c = j + 1; c < n; ++c)
      d[j] -= A[j * n + c] * d[c];
    d[j] /= A[j * n + j];
  }
  return d;
}

// The reference separators of every line, [K][lines].
std::vector<double> reference(const System& s, const std::vector<double>& P,
                              const std::vector<double>& F, std::int64_t lines) {
  std::vector<double> S(P.size());
  for (std::int64_t l = 0; l < lines; ++l) {
    const std::vector<double> d = rhs(s, P, F, lines, l);
    const std::vector<double> x = s.periodic ? dense(s, d) : thomas(s, d);
    for (int k = 0; k < s.K; ++k)
      S[static_cast<size_t>(k * lines + l)] = x[static_cast<size_t>(k)];
  }
  return S;
}

tiles::Reduced reduced(const System& s, std::int64_t lines, const double* sub, const double* inv,
                       const double* cp, const double* z) {
  return {s.K, lines, s.h, s.periodic, sub, inv, cp, z, s.corner, s.invc};
}

// The largest relative difference of one line (over the line's largest reference value).
double worst_line(const std::vector<double>& got, const std::vector<double>& want, int K,
                  std::int64_t lines) {
  double worst = 0.0;
  for (std::int64_t l = 0; l < lines; ++l) {
    std::vector<double> g(static_cast<size_t>(K)), w(g.size());
    for (int k = 0; k < K; ++k) {
      g[static_cast<size_t>(k)] = got[static_cast<size_t>(k * lines + l)];
      w[static_cast<size_t>(k)] = want[static_cast<size_t>(k * lines + l)];
    }
    worst = std::max(worst, tridiag_test::max_rel(g, w));
  }
  return worst;
}

struct Case {
  int K;
  bool periodic;
};
std::vector<Case> cases() {
  std::vector<Case> v;
  for (bool periodic : {false, true})
    for (int K : {1,   2,   3,   5,   7,   13,  31,  32,  33,  61,  64,  97,
                  127, 128, 129, 131, 255, 256, 257, 509, 512, 513, 1031})
      if (!periodic || K >= 3) // the tile step's cyclic lines have three tiles or more
        v.push_back({K, periodic});
  return v;
}
constexpr std::int64_t kLineCounts[] = {1, 3, 6, 37, 130};

std::string name(const Case& c, std::int64_t lines, std::uint64_t seed) {
  return std::string(c.periodic ? "cyclic" : "dirichlet") + " K " + std::to_string(c.K) +
         " lines " + std::to_string(lines) + " seed " + std::to_string(seed);
}

std::vector<double> random_values(size_t n, test::Rng& r) {
  std::vector<double> v(n);
  for (double& x : v)
    x = r.wide();
  return v;
}

TEST(Heat2dReduced, HostReplayOfTheWarpsMatchesThomas) {
  const std::uint64_t seed = test::fresh_seed();
  test::Rng r{seed};
  int i = 0;
  for (const Case& c : cases()) {
    if (tiles::reduced_chunk(c.K) > tiles::kMaxChunk)
      continue; // the thread-per-line solve's lengths
    const std::int64_t lines = kLineCounts[i++ % 5];
    const System s = random_system(c.K, c.periodic, r);
    const auto n = static_cast<size_t>(c.K * lines);
    const std::vector<double> P = random_values(n, r), F = random_values(n, r);
    std::vector<double> S(n);
    const tiles::Reduced red =
        reduced(s, lines, s.sub.data(), s.inv.data(), s.cp.data(), s.z.data());
    for (std::int64_t l = 0; l < lines; ++l)
      tiles::replay_reduced_line(red, P.data(), F.data(), S.data(), l);
    EXPECT_LT(worst_line(S, reference(s, P, F, lines), c.K, lines), 1e-13) << name(c, lines, seed);
  }
}

cuda::DeviceBuffer upload(const std::vector<double>& v) {
  cuda::DeviceBuffer b(v.size() * sizeof(double));
  cuda::copy(b.data(), v.data(), v.size() * sizeof(double));
  return b;
}

TEST(Heat2dReduced, KernelsMatchThomasAndTheWarpsTheirReplay) {
  TESSERA_REQUIRE_GPU();
  using cuda::ReducedSolve;
  const std::uint64_t seed = test::fresh_seed();
  test::Rng r{seed};
  auto stream = cuda::make_stream();
  int i = 0;
  for (const Case& c : cases()) {
    const std::int64_t lines = kLineCounts[i++ % 5];
    SCOPED_TRACE(name(c, lines, seed));
    const System s = random_system(c.K, c.periodic, r);
    const auto n = static_cast<size_t>(c.K * lines);
    const std::vector<double> P = random_values(n, r), F = random_values(n, r);
    const std::vector<double> want = reference(s, P, F, lines);
    const cuda::DeviceBuffer sub = upload(s.sub), inv = upload(s.inv), cp = upload(s.cp),
                             z = upload(s.z), dP = upload(P), dF = upload(F);
    const tiles::Reduced red =
        reduced(s, lines, sub.as<double>(), inv.as<double>(), cp.as<double>(), z.as<double>());
    for (ReducedSolve how : {ReducedSolve::Warp, ReducedSolve::Thread}) {
      cuda::DeviceBuffer dS = upload(std::vector<double>(n, std::nan("")));
      cuda::solve_reduced(stream.get(), red, dP.as<double>(), dF.as<double>(), dS.as<double>(),
                          how);
      cuda::synchronize(stream.get());
      std::vector<double> got(n);
      cuda::copy(got.data(), dS.data(), n * sizeof(double));
      EXPECT_LT(worst_line(got, want, c.K, lines), 1e-13)
          << (how == ReducedSolve::Warp ? "warp" : "thread");
      if (!cuda::reduced_by_warps(red, how))
        continue;
      std::vector<double> replay(n);
      const tiles::Reduced host =
          reduced(s, lines, s.sub.data(), s.inv.data(), s.cp.data(), s.z.data());
      for (std::int64_t l = 0; l < lines; ++l)
        tiles::replay_reduced_line(host, P.data(), F.data(), replay.data(), l);
      EXPECT_EQ(test::first_difference(got, replay), -1) << "the warps against their replay";
    }
  }
}

// The whole tile step with either reduced solve: six steps agree to rounding, on shapes with
// short last tiles, Dirichlet (boundary value nonzero) and periodic.
TEST(Heat2dReduced, TileStepsAgreeEitherWay) {
  TESSERA_REQUIRE_GPU();
  using cuda::ReducedSolve;
  const std::uint64_t seed = test::fresh_seed();
  test::Rng r{seed};
  for (bool periodic : {false, true})
    for (auto [nx, ny] : {std::pair<std::int64_t, std::int64_t>{131, 100}, {1100, 97}, {96, 613}}) {
      SCOPED_TRACE(std::string(periodic ? "periodic " : "dirichlet ") + std::to_string(nx) + "x" +
                   std::to_string(ny) + " seed " + std::to_string(seed));
      const auto n = static_cast<size_t>(nx * ny);
      const std::vector<double> u0 = random_values(n, r);
      const double hx = std::pow(10.0, 2.0 * r.uniform()), hy = std::pow(10.0, 2.0 * r.uniform());
      auto stream = cuda::make_stream();
      std::vector<double> fields[2];
      for (ReducedSolve how : {ReducedSolve::Thread, ReducedSolve::Warp}) {
        cuda::TiledHeat2d t(nx, ny, hx, hy, periodic, -0.4);
        t.set_reduced(how);
        cuda::DeviceBuffer a = upload(u0), b(n * sizeof(double));
        t.prepare(stream.get(), a.as<double>());
        for (int step = 0; step < 6; ++step) {
          t.half(stream.get(), a.as<double>());
          t.full(stream.get(), a.as<double>(), b.as<double>());
          std::swap(a, b);
        }
        cuda::synchronize(stream.get());
        std::vector<double>& got = fields[how == ReducedSolve::Warp ? 1 : 0];
        got.resize(n);
        cuda::copy(got.data(), a.data(), n * sizeof(double));
      }
      EXPECT_LT(tridiag_test::max_rel(fields[1], fields[0]), 1e-12);
    }
}

} // namespace
} // namespace tessera
