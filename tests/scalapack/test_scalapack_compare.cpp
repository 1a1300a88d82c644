// tessera's pxgemr2d and pxtran (bindings/scalapack) against ScaLAPACK's own, bit for bit: the
// same random block-cyclic matrices (blocks 1 to 64 and awkward, grids from 1 × 1 up to the
// ranks available, any source process, sub-matrices, padded leading dimensions, ranks outside a
// grid) go through both, and every rank compares its local blocks.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <complex>
#include <random>
#include <vector>

#include "scalapack_calls.hpp"

extern "C" {
void Cblacs_get(int context, int what, int* value);
void Cblacs_gridinit(int* context, const char* order, int nprow, int npcol);
void Cblacs_gridinfo(int context, int* nprow, int* npcol, int* myrow, int* mycol);
int numroc_(const int* n, const int* nb, const int* iproc, const int* isrc, const int* nprocs);
void pdgemr2d_(const int* m, const int* n, const double* a, const int* ia, const int* ja,
               const int* desca, double* b, const int* ib, const int* jb, const int* descb,
               const int* ictxt);
void pzgemr2d_(const int* m, const int* n, const std::complex<double>* a, const int* ia,
               const int* ja, const int* desca, std::complex<double>* b, const int* ib,
               const int* jb, const int* descb, const int* ictxt);
void pdtran_(const int* m, const int* n, const double* alpha, const double* a, const int* ia,
             const int* ja, const int* desca, const double* beta, double* c, const int* ic,
             const int* jc, const int* descc);
void pstran_(const int* m, const int* n, const float* alpha, const float* a, const int* ia,
             const int* ja, const int* desca, const float* beta, float* c, const int* ic,
             const int* jc, const int* descc);
void pztranu_(const int* m, const int* n, const std::complex<double>* alpha,
              const std::complex<double>* a, const int* ia, const int* ja, const int* desca,
              const std::complex<double>* beta, std::complex<double>* c, const int* ic,
              const int* jc, const int* descc);
void pztranc_(const int* m, const int* n, const std::complex<double>* alpha,
              const std::complex<double>* a, const int* ia, const int* ja, const int* desca,
              const std::complex<double>* beta, std::complex<double>* c, const int* ic,
              const int* jc, const int* descc);
}

namespace {

using tessera::MatrixOp;
using c128 = std::complex<double>;

int world_size() {
  int s = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

int pick(std::mt19937& g, int lo, int hi) {
  return std::uniform_int_distribution<int>(lo, hi)(g);
}

// One BLACS grid on the first pr·pc ranks (the others are outside it: context -1).
struct Grid {
  int context = -1, pr = 1, pc = 1, myrow = -1, mycol = -1;
};

Grid make_grid(int pr, int pc, const char* order) {
  Grid g;
  Cblacs_get(0, 0, &g.context);
  Cblacs_gridinit(&g.context, order, pr, pc);
  g.pr = pr;
  g.pc = pc;
  if (g.context >= 0) {
    int nr = 0, nc = 0;
    Cblacs_gridinfo(g.context, &nr, &nc, &g.myrow, &g.mycol);
  }
  return g;
}

// Every grid with at most `ranks` processes and at most 3 along a side, made once.
const std::vector<Grid>& grids() {
  static const std::vector<Grid> all = [] {
    std::vector<Grid> v;
    const int p = world_size();
    for (int pr = 1; pr <= 3; ++pr)
      for (int pc = 1; pc <= 3; ++pc)
        if (pr * pc <= p)
          v.push_back(make_grid(pr, pc, (pr + pc) % 2 ? "Col" : "Row"));
    return v;
  }();
  return all;
}

// A block-cyclic matrix on one grid: its descriptor and this rank's local block.
template <class T>
struct Matrix {
  int desc[9] = {};
  std::vector<T> local;
};

template <class T>
T test_value(int k, int salt) {
  const double re = (k * 7 + salt) % 41 - 20;
  if constexpr (std::is_floating_point_v<T>)
    return static_cast<T>(re);
  else
    return T(re, (k * 5 + salt) % 13 - 6.5);
}

template <class T>
Matrix<T> random_matrix(std::mt19937& g, const Grid& grid, int m, int n, int salt) {
  static constexpr int sizes[] = {1, 2, 3, 4, 5, 7, 8, 13, 31, 64};
  Matrix<T> x;
  const int mb = sizes[pick(g, 0, 9)], nb = sizes[pick(g, 0, 9)];
  const int rsrc = pick(g, 0, grid.pr - 1), csrc = pick(g, 0, grid.pc - 1);
  const int pad = pick(g, 0, 2);
  int rows = 0, cols = 0;
  if (grid.context >= 0) {
    rows = numroc_(&m, &mb, &grid.myrow, &rsrc, &grid.pr);
    cols = numroc_(&n, &nb, &grid.mycol, &csrc, &grid.pc);
  }
  const int lld = std::max(1, rows) + pad;
  const int d[9] = {1, grid.context, m, n, mb, nb, rsrc, csrc, lld};
  std::copy(d, d + 9, x.desc);
  x.local.resize(static_cast<std::size_t>(lld) * static_cast<std::size_t>(cols));
  for (std::size_t k = 0; k < x.local.size(); ++k)
    x.local[k] = test_value<T>(static_cast<int>(k), salt);
  return x;
}

const Grid& random_grid(std::mt19937& g) {
  const auto& all = grids();
  return all[static_cast<std::size_t>(pick(g, 0, static_cast<int>(all.size()) - 1))];
}

// The context of all ranks, for pxgemr2d's ictxt: the widest grid made (1 × p is made first
// among those with p processes, and the grids are ordered by pr).
int all_ranks_context() {
  for (const Grid& g : grids())
    if (g.pr * g.pc == world_size())
      return g.context;
  return -1;
}

TEST(ScalapackCompare, Gemr2dMatchesScalapack) {
  std::mt19937 g(21);
  const int ictxt = all_ranks_context();
  int changed = 0; // cases where ScaLAPACK changed this rank's B: the comparison is not empty
  for (int c = 0; c < 40; ++c) {
    const int ma = pick(g, 1, 90), na = pick(g, 1, 90), mb = pick(g, 1, 90), nb = pick(g, 1, 90);
    const int m = pick(g, 1, std::min(ma, mb)), n = pick(g, 1, std::min(na, nb));
    const int ia = pick(g, 1, ma - m + 1), ja = pick(g, 1, na - n + 1);
    const int ib = pick(g, 1, mb - m + 1), jb = pick(g, 1, nb - n + 1);
    const Grid& ga = random_grid(g);
    const Grid& gb = random_grid(g);
    const bool complex_case = c % 3 == 0;
    SCOPED_TRACE(testing::Message() << "case " << c);
    if (complex_case) {
      auto a = random_matrix<c128>(g, ga, ma, na, 1);
      auto b = random_matrix<c128>(g, gb, mb, nb, 2);
      auto expected = b.local;
      pzgemr2d_(&m, &n, a.local.data(), &ia, &ja, a.desc, expected.data(), &ib, &jb, b.desc,
                &ictxt);
      tessera::scalapack::redistribute<c128>(m, n, 1.0, a.local.data(), ia, ja, a.desc, 0.0,
                                             b.local.data(), ib, jb, b.desc, MatrixOp::None, ictxt);
      EXPECT_EQ(b.local, expected);
    } else {
      auto a = random_matrix<double>(g, ga, ma, na, 1);
      auto b = random_matrix<double>(g, gb, mb, nb, 2);
      auto expected = b.local;
      pdgemr2d_(&m, &n, a.local.data(), &ia, &ja, a.desc, expected.data(), &ib, &jb, b.desc,
                &ictxt);
      changed += expected != b.local;
      tessera::scalapack::redistribute<double>(m, n, 1.0, a.local.data(), ia, ja, a.desc, 0.0,
                                               b.local.data(), ib, jb, b.desc, MatrixOp::None,
                                               ictxt);
      EXPECT_EQ(b.local, expected);
    }
  }
  MPI_Allreduce(MPI_IN_PLACE, &changed, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_GT(changed, 20);
}

// pxtran works within one context: A and C on the same grid, blocks and sources of their own.
template <class T, class Reference>
void tran_cases(unsigned seed, int count, MatrixOp op, Reference reference) {
  std::mt19937 g(seed);
  static constexpr double alphas[] = {1, 2, -0.5};
  static constexpr double betas[] = {0, 1, -2};
  int changed = 0; // cases where ScaLAPACK changed this rank's C: the comparison is not empty
  for (int c = 0; c < count; ++c) {
    const Grid& grid = random_grid(g);
    const int ma = pick(g, 1, 80), na = pick(g, 1, 80), mc = pick(g, 1, 80), nc = pick(g, 1, 80);
    const int m = pick(g, 1, std::min(mc, na)), n = pick(g, 1, std::min(nc, ma));
    const int ia = pick(g, 1, ma - n + 1), ja = pick(g, 1, na - m + 1);
    const int ic = pick(g, 1, mc - m + 1), jc = pick(g, 1, nc - n + 1);
    const T alpha = static_cast<T>(alphas[pick(g, 0, 2)]);
    const T beta = static_cast<T>(betas[pick(g, 0, 2)]);
    auto a = random_matrix<T>(g, grid, ma, na, 3);
    auto cm = random_matrix<T>(g, grid, mc, nc, 4);
    if (grid.context < 0) // outside the grid: no part in pxtran (every rank draws alike)
      continue;
    SCOPED_TRACE(testing::Message() << "case " << c);
    auto expected = cm.local;
    const auto before = cm.local;
    reference(&m, &n, &alpha, a.local.data(), &ia, &ja, a.desc, &beta, expected.data(), &ic, &jc,
              cm.desc);
    tessera::scalapack::redistribute<T>(m, n, alpha, a.local.data(), ia, ja, a.desc, beta,
                                        cm.local.data(), ic, jc, cm.desc, op, grid.context);
    EXPECT_EQ(cm.local, expected);
    changed += expected != before;
  }
  MPI_Allreduce(MPI_IN_PLACE, &changed, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_GT(changed, count / 2);
}

TEST(ScalapackCompare, TranMatchesScalapack) {
  tran_cases<double>(31, 30, MatrixOp::Transpose, pdtran_);
  tran_cases<float>(32, 10, MatrixOp::Transpose, pstran_);
  tran_cases<c128>(33, 15, MatrixOp::ConjTranspose, pztranc_);
  tran_cases<c128>(34, 10, MatrixOp::Transpose, pztranu_);
}

} // namespace
