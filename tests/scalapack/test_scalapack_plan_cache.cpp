// The plan cache behind tessera's pxgemr2d and pxtran: repeated calls, with new data each time
// and descriptors that alternate and differ in one argument at a time, must give ScaLAPACK's
// own results bit for bit, whether the plan is found or built; so must a call whose context
// number BLACS has handed out again for another grid. A plan found under the wrong key gives
// another sub-matrix, operation, element type or grid, and a wrong result here.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "scalapack_calls.hpp"

extern "C" {
void Cblacs_get(int context, int what, int* value);
void Cblacs_gridinit(int* context, const char* order, int nprow, int npcol);
void Cblacs_gridmap(int* context, int* usermap, int ldumap, int nprow, int npcol);
void Cblacs_gridexit(int context);
void Cblacs_gridinfo(int context, int* nprow, int* npcol, int* myrow, int* mycol);
int numroc_(const int* n, const int* nb, const int* iproc, const int* isrc, const int* nprocs);
void pdgemr2d_(const int* m, const int* n, const double* a, const int* ia, const int* ja,
               const int* desca, double* b, const int* ib, const int* jb, const int* descb,
               const int* ictxt);
void psgemr2d_(const int* m, const int* n, const float* a, const int* ia, const int* ja,
               const int* desca, float* b, const int* ib, const int* jb, const int* descb,
               const int* ictxt);
void pdtran_(const int* m, const int* n, const double* alpha, const double* a, const int* ia,
             const int* ja, const int* desca, const double* beta, double* c, const int* ic,
             const int* jc, const int* descc);
}

namespace {

using tessera::MatrixOp;
namespace sp = tessera::scalapack;

int world_size() {
  int s = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

struct Grid {
  int context = -1, pr = 1, pc = 1, myrow = -1, mycol = -1;
};

// A 1 × p grid (p: every rank) whose positions hold the ranks in `order`.
Grid mapped_grid(std::vector<int> order) {
  Grid g;
  g.pc = static_cast<int>(order.size());
  Cblacs_get(0, 0, &g.context);
  Cblacs_gridmap(&g.context, order.data(), 1, 1, g.pc);
  int nr = 0, nc = 0;
  Cblacs_gridinfo(g.context, &nr, &nc, &g.myrow, &g.mycol);
  return g;
}

Grid square_grid() {
  Grid g;
  const int p = world_size();
  g.pr = p == 4 ? 2 : 1;
  g.pc = p / g.pr;
  Cblacs_get(0, 0, &g.context);
  Cblacs_gridinit(&g.context, "Row", g.pr, g.pc);
  int nr = 0, nc = 0;
  Cblacs_gridinfo(g.context, &nr, &nc, &g.myrow, &g.mycol);
  return g;
}

// One block-cyclic matrix: descriptor and local block; `pad` widens this rank's lld.
template <class T>
struct Matrix {
  int desc[9] = {};
  std::vector<T> local;
};

template <class T>
Matrix<T> matrix(const Grid& g, int m, int n, int mb, int nb, int rsrc, int csrc, int pad,
                 int salt) {
  Matrix<T> x;
  const int rows = numroc_(&m, &mb, &g.myrow, &rsrc, &g.pr);
  const int cols = numroc_(&n, &nb, &g.mycol, &csrc, &g.pc);
  const int lld = std::max(1, rows) + pad;
  const int d[9] = {1, g.context, m, n, mb, nb, rsrc, csrc, lld};
  std::copy(d, d + 9, x.desc);
  x.local.resize(static_cast<std::size_t>(lld) * static_cast<std::size_t>(cols));
  for (std::size_t k = 0; k < x.local.size(); ++k)
    x.local[k] =
        static_cast<T>(static_cast<int>((k * 7 + static_cast<std::size_t>(salt)) % 41) - 20);
  return x;
}

// One call's arguments; each case below differs from the first in one of them.
struct Case {
  int m = 30, n = 26, ia = 1, ja = 1, ib = 1, jb = 1;
  int a_mb = 4, a_nb = 3, a_rsrc = 0, a_pad = 0;
  int b_mb = 5, b_nb = 7, b_csrc = 0, b_pad = 0;
  bool tran = false, single = false;
};

std::vector<Case> cases(const Grid& g) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::vector<Case> v(12);
  v[1].ia = 3;
  v[2].jb = 2;
  v[3].m = 29;
  v[4].a_mb = 5;
  v[5].b_csrc = g.pc - 1;
  v[5].b_nb = 6; // on one grid column the source alone would not differ
  v[6].a_pad = rank == g.pr * g.pc - 1 ? 2 : 0; // the last rank's lld alone differs
  v[7].tran = true;
  v[8].tran = true;
  v[8].ja = 4;
  v[9].single = true;
  v[10].a_rsrc = g.pr - 1;
  v[10].ja = 2;
  v[11].b_pad = 1;
  return v;
}

// Runs one case through tessera and ScaLAPACK with data salted by `round`; true when equal.
template <class T>
bool run_case(const Grid& g, const Case& c, int round) {
  auto a = matrix<T>(g, 40, 40, c.a_mb, c.a_nb, c.a_rsrc, 0, c.a_pad, round);
  auto b = matrix<T>(g, 40, 40, c.b_mb, c.b_nb, 0, c.b_csrc, c.b_pad, round + 5);
  auto expected = b.local;
  if constexpr (std::is_same_v<T, double>) {
    if (c.tran) {
      const double alpha = 1.5 + round, beta = -0.5;
      pdtran_(&c.m, &c.n, &alpha, a.local.data(), &c.ia, &c.ja, a.desc, &beta, expected.data(),
              &c.ib, &c.jb, b.desc);
      sp::redistribute<double>(c.m, c.n, alpha, a.local.data(), c.ia, c.ja, a.desc, beta,
                               b.local.data(), c.ib, c.jb, b.desc, MatrixOp::Transpose, g.context);
      return b.local == expected;
    }
    pdgemr2d_(&c.m, &c.n, a.local.data(), &c.ia, &c.ja, a.desc, expected.data(), &c.ib, &c.jb,
              b.desc, &g.context);
  } else {
    psgemr2d_(&c.m, &c.n, a.local.data(), &c.ia, &c.ja, a.desc, expected.data(), &c.ib, &c.jb,
              b.desc, &g.context);
  }
  sp::redistribute<T>(c.m, c.n, T{1}, a.local.data(), c.ia, c.ja, a.desc, T{0}, b.local.data(),
                      c.ib, c.jb, b.desc, MatrixOp::None, g.context);
  return b.local == expected;
}

bool run_any(const Grid& g, const Case& c, int round) {
  return c.single ? run_case<float>(g, c, round) : run_case<double>(g, c, round);
}

TEST(ScalapackPlanCache, RepeatedAlternatingCallsMatchScalapack) {
  const Grid g = square_grid();
  auto all = cases(g);
  const Case last_rank_lld = all[6];
  all.erase(all.begin() + 6);
  sp::set_plan_cache_capacity(16);
  const sp::PlanCacheStats before = sp::plan_cache_stats();
  for (int round = 0; round < 3; ++round)
    for (std::size_t k = 0; k < all.size(); ++k)
      EXPECT_TRUE(run_any(g, all[k], round)) << "case " << k << ", round " << round;
  const sp::PlanCacheStats after = sp::plan_cache_stats();
  // Every case after the first round found its plan.
  EXPECT_EQ(after.hits - before.hits, 2 * static_cast<std::int64_t>(all.size()));
  EXPECT_EQ(after.misses - before.misses, static_cast<std::int64_t>(all.size()));
  // Arguments that differ from a kept plan's on one rank only: the others find that plan, the
  // ranks agree that it is not theirs, and all build anew (the new plan replaces the old one on
  // the ranks that cannot tell them apart, so alternating the two rebuilds each time).
  const sp::PlanCacheStats mixed = sp::plan_cache_stats();
  for (int round = 0; round < 2; ++round) {
    EXPECT_TRUE(run_any(g, last_rank_lld, round)) << "one rank's lld, round " << round;
    EXPECT_TRUE(run_any(g, all[0], round)) << "all ranks' lld, round " << round;
  }
  // The decision is one for all ranks: none counted a hit, though all but the last found a plan
  // under their own key each time (finishing at all shows that no rank executed a plan alone).
  if (world_size() > 1) {
    EXPECT_EQ(sp::plan_cache_stats().hits, mixed.hits);
    EXPECT_EQ(sp::plan_cache_stats().misses - mixed.misses, 4);
  }
}

TEST(ScalapackPlanCache, SmallAndNoCacheStayCorrect) {
  const Grid g = square_grid();
  const auto all = cases(g);
  for (int capacity : {3, 0}) {
    sp::set_plan_cache_capacity(0); // empty: the earlier tests' plans would be found
    sp::set_plan_cache_capacity(capacity);
    const sp::PlanCacheStats before = sp::plan_cache_stats();
    for (int round = 0; round < 2; ++round)
      for (std::size_t k = 0; k < 6; ++k)
        EXPECT_TRUE(run_any(g, all[k], round)) << "capacity " << capacity << ", case " << k;
    // Six plans cycled through three places: each is evicted before its turn comes again.
    EXPECT_EQ(sp::plan_cache_stats().hits, before.hits);
    EXPECT_LE(sp::plan_cache_stats().size, capacity);
  }
  sp::set_plan_cache_capacity(16);
}

// A context number freed by blacs_gridexit comes back for the next grid: the same descriptors
// then mean another layout, which ranks whose own position did not change cannot tell alone.
TEST(ScalapackPlanCache, ReusedContextNumberGetsANewPlan) {
  const int p = world_size();
  std::vector<int> identity(static_cast<std::size_t>(p)), swapped;
  for (int r = 0; r < p; ++r)
    identity[static_cast<std::size_t>(r)] = r;
  swapped = identity;
  if (p > 1) // ranks 0 and p-1 swap places; the others (from 3 ranks) keep theirs
    std::swap(swapped.front(), swapped.back());
  sp::set_plan_cache_capacity(16);
  const Case c;
  Grid first = mapped_grid(identity);
  EXPECT_TRUE(run_any(first, c, 0));
  EXPECT_TRUE(run_any(first, c, 1));
  Cblacs_gridexit(first.context);
  Grid second = mapped_grid(swapped);
  EXPECT_TRUE(run_any(second, c, 2));
  EXPECT_TRUE(run_any(second, c, 3));
  Cblacs_gridexit(second.context);
  Grid third = mapped_grid(identity);
  EXPECT_TRUE(run_any(third, c, 4));
  Cblacs_gridexit(third.context);
}

} // namespace
