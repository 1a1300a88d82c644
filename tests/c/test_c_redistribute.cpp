// The C API's layouts and redistribution plans (tessera.h), called as a C application calls them
// through libtessera.so: each layout constructor against the C++ Layout it wraps (shapes, local
// blocks, blocks, element positions), plans on random layout pairs, ops, dtypes, sub-matrices
// and scalars against the serial reference, the Fortran-handle variant, and the errors (every
// rank fails together, with a message). The main is
// c_test_main.cpp.
#include <gtest/gtest.h>
#include <mpi.h>

#include <complex>
#include <random>
#include <string>
#include <vector>

#include <tessera/layout.hpp>
#include <tessera/redistribute_plan.hpp>
#include <tessera/tessera.h>

#include "../mpi/redistribute_reference.hpp"
#include "c_test_support.hpp"

namespace {

using tessera::BlockCyclicSpec;
using tessera::GridOrder;
using tessera::Layout;
using tessera::MatrixOp;
using tessera::RedistributeOptions;
using tessera::Shape;
using tessera::StorageOrder;

using tessera::c_test::comm_rank;
using tessera::c_test::comm_size;
using tessera::c_test::expect_input_error;
std::int64_t pick(std::mt19937_64& g, std::int64_t lo, std::int64_t hi) {
  return std::uniform_int_distribution<std::int64_t>(lo, hi)(g);
}

// A layout made twice, through the C API and in C++ from the same arguments.
struct Both {
  tessera_layout c = nullptr;
  Layout cpp;
  Both() = default;
  Both(const Both&) = delete;
  Both& operator=(const Both&) = delete;
  ~Both() { tessera_layout_destroy(c); }
};

tessera_storage c_storage(StorageOrder s) {
  return s == StorageOrder::RowMajor ? TESSERA_ROW_MAJOR : TESSERA_COL_MAJOR;
}
tessera_grid_order c_order(GridOrder o) {
  return o == GridOrder::RowMajor ? TESSERA_GRID_ROW_MAJOR : TESSERA_GRID_COL_MAJOR;
}

// One of the six constructors, chosen by `kind`, with random arguments (the same on every rank).
void make_layout(std::mt19937_64& g, int kind, Shape s, int p, Both& out) {
  const StorageOrder storage = pick(g, 0, 1) ? StorageOrder::RowMajor : StorageOrder::ColMajor;
  const GridOrder order = pick(g, 0, 1) ? GridOrder::RowMajor : GridOrder::ColMajor;
  int rc = TESSERA_OK;
  switch (kind) {
  case 0:
    rc = tessera_layout_create_rows(&out.c, s.rows, s.cols, p, c_storage(storage));
    out.cpp = Layout::row_blocks(s, p, storage);
    break;
  case 1:
    rc = tessera_layout_create_cols(&out.c, s.rows, s.cols, p, c_storage(storage));
    out.cpp = Layout::col_blocks(s, p, storage);
    break;
  case 2: {
    const int pr = static_cast<int>(pick(g, 1, p));
    const int pc = static_cast<int>(pick(g, 1, p / pr));
    rc = tessera_layout_create_2d(&out.c, s.rows, s.cols, pr, pc, c_order(order),
                                  c_storage(storage), p);
    out.cpp = Layout::blocks_2d(s, pr, pc, order, storage, p);
    break;
  }
  case 3:
  case 4: {
    BlockCyclicSpec b;
    b.global = s;
    b.mb = pick(g, 1, 9);
    b.nb = pick(g, 1, 9);
    b.pr = static_cast<int>(pick(g, 1, std::min(p, 3)));
    b.pc = static_cast<int>(pick(g, 1, std::min(p / b.pr, 3)));
    b.rsrc = static_cast<int>(pick(g, 0, b.pr - 1));
    b.csrc = static_cast<int>(pick(g, 0, b.pc - 1));
    b.grid_order = order;
    b.nranks = p;
    b.storage = kind == 3 ? storage : StorageOrder::ColMajor; // descriptors: column-major
    // One leading dimension on every rank (the reference needs it), padded.
    std::int64_t ld = 1;
    for (int r = 0; r < p; ++r)
      ld = std::max(ld, Layout::block_cyclic(b).leading_dimension(r));
    b.lld = ld + pick(g, 0, 2);
    if (kind == 3) {
      rc =
          tessera_layout_create_block_cyclic(&out.c, s.rows, s.cols, b.mb, b.nb, b.pr, b.pc, b.rsrc,
                                             b.csrc, c_order(order), p, b.lld, c_storage(storage));
    } else {
      const int desc[9] = {1,
                           0,
                           static_cast<int>(s.rows),
                           static_cast<int>(s.cols),
                           static_cast<int>(b.mb),
                           static_cast<int>(b.nb),
                           b.rsrc,
                           b.csrc,
                           static_cast<int>(b.lld)};
      rc = tessera_layout_create_scalapack(&out.c, desc, b.pr, b.pc, c_order(order), nullptr, p);
    }
    out.cpp = Layout::block_cyclic(b);
    break;
  }
  default: {
    std::vector<std::int64_t> rows{0, s.rows}, cols{0, s.cols};
    for (std::int64_t k = pick(g, 0, 3); k > 0; --k)
      rows.push_back(pick(g, 0, s.rows));
    for (std::int64_t k = pick(g, 0, 3); k > 0; --k)
      cols.push_back(pick(g, 0, s.cols));
    std::sort(rows.begin(), rows.end());
    std::sort(cols.begin(), cols.end());
    std::vector<int> owners((rows.size() - 1) * (cols.size() - 1));
    for (int& o : owners)
      o = static_cast<int>(pick(g, 0, p - 1));
    const auto nbr = static_cast<std::int64_t>(rows.size()) - 1;
    const auto nbc = static_cast<std::int64_t>(cols.size()) - 1;
    rc = tessera_layout_create_grid(&out.c, nbr, rows.data(), nbc, cols.data(), owners.data(), p,
                                    c_storage(storage), 0);
    out.cpp = Layout::grid(rows, cols, owners, p, storage);
  }
  }
  ASSERT_EQ(rc, TESSERA_OK) << tessera_last_error();
}

// Everything the C queries say about a layout, against the C++ layout.
void expect_same(const Both& l) {
  std::int64_t rows = -1, cols = -1;
  int nranks = -1;
  ASSERT_EQ(tessera_layout_global(l.c, &rows, &cols, &nranks), TESSERA_OK);
  EXPECT_EQ(rows, l.cpp.global().rows);
  EXPECT_EQ(cols, l.cpp.global().cols);
  EXPECT_EQ(nranks, l.cpp.nranks());
  for (int r = 0; r < l.cpp.nranks(); ++r) {
    std::int64_t lr = -1, lc = -1, ld = -1, elements = -1;
    tessera_storage storage{};
    ASSERT_EQ(tessera_layout_local_block(l.c, r, &lr, &lc, &ld, &storage, &elements), TESSERA_OK);
    const Shape s = l.cpp.local_shape(r);
    EXPECT_EQ(lr, s.rows);
    EXPECT_EQ(lc, s.cols);
    EXPECT_EQ(ld, l.cpp.leading_dimension(r));
    EXPECT_EQ(storage, c_storage(l.cpp.storage()));
    EXPECT_EQ(elements, s.empty() ? 0 : l.cpp.local_extent(r));
  }
  std::int64_t nbr = -1, nbc = -1;
  ASSERT_EQ(tessera_layout_blocks(l.c, &nbr, &nbc), TESSERA_OK);
  EXPECT_EQ(nbr, l.cpp.block_rows());
  EXPECT_EQ(nbc, l.cpp.block_cols());
  // Every element through the blocks, and through locate.
  for (std::int64_t bi = 0; bi < nbr; ++bi)
    for (std::int64_t bj = 0; bj < nbc; ++bj) {
      std::int64_t r0 = -1, nr = -1, c0 = -1, nc = -1, lr = -1, lc = -1;
      int owner = -1;
      ASSERT_EQ(tessera_layout_block(l.c, bi, bj, &r0, &nr, &c0, &nc, &owner, &lr, &lc),
                TESSERA_OK);
      for (std::int64_t i = r0; i < r0 + nr; ++i)
        for (std::int64_t j = c0; j < c0 + nc; ++j) {
          const tessera::LocalIndex x = l.cpp.local_index(i, j);
          EXPECT_EQ(owner, x.rank);
          EXPECT_EQ(lr + i - r0, x.row);
          EXPECT_EQ(lc + j - c0, x.col);
          int rank = -1;
          std::int64_t row = -1, col = -1;
          ASSERT_EQ(tessera_layout_locate(l.c, i, j, &rank, &row, &col), TESSERA_OK);
          EXPECT_EQ(rank, x.rank);
          EXPECT_EQ(row, x.row);
          EXPECT_EQ(col, x.col);
        }
    }
}

TEST(CLayout, EachConstructorMatchesTheCppLayout) {
  const int p = comm_size();
  std::mt19937_64 g(5);
  for (int c = 0; c < 60; ++c) {
    const int kind = c % 6;
    const Shape s{pick(g, 0, 30), pick(g, 0, 30)};
    SCOPED_TRACE(testing::Message() << "case " << c << " kind " << kind);
    Both l;
    make_layout(g, kind, s, p, l);
    if (l.c)
      expect_same(l);
  }
}

// Exact in every type (small integers and halves): any order of evaluation gives the same bits.
template <class T>
std::vector<T> local_values(const Layout& l, int rank, int salt) {
  std::vector<T> v(static_cast<std::size_t>(l.local_extent(rank)));
  for (std::size_t k = 0; k < v.size(); ++k) {
    const double re = static_cast<double>((static_cast<int>(k) * 7 + salt + rank * 13) % 61) - 30;
    if constexpr (std::is_floating_point_v<T>)
      v[k] = static_cast<T>(re);
    else
      v[k] = T(static_cast<typename T::value_type>(re),
               static_cast<typename T::value_type>((static_cast<int>(k) * 3 + salt) % 17) - 8.5f);
  }
  return v;
}

template <class T>
void random_plans(unsigned seed, int count, tessera_dtype dtype) {
  const int p = comm_size(), rank = comm_rank();
  constexpr bool complex = !std::is_floating_point_v<T>;
  std::mt19937_64 g(seed);
  for (int c = 0; c < count; ++c) {
    SCOPED_TRACE(testing::Message() << "case " << c << " seed " << seed);
    const auto op = static_cast<tessera_matrix_op>(pick(g, 0, complex ? 2 : 1));
    const bool t = op != TESSERA_MATRIX_OP_NONE;
    const Shape as{pick(g, 1, 40), pick(g, 1, 40)};
    const Shape bs =
        pick(g, 0, 1) ? (t ? as.transposed() : as) : Shape{pick(g, 1, 40), pick(g, 1, 40)};
    Both a, b;
    make_layout(g, static_cast<int>(pick(g, 0, 5)), as, p, a);
    make_layout(g, static_cast<int>(pick(g, 0, 5)), bs, p, b);
    RedistributeOptions o;
    o.op = static_cast<MatrixOp>(op);
    const bool whole = pick(g, 0, 2) == 0;
    if (whole && (t ? as.transposed() : as) == bs) {
      o.rows = bs.rows;
      o.cols = bs.cols;
    } else {
      o.rows = pick(g, 0, std::min(bs.rows, t ? as.cols : as.rows));
      o.cols = pick(g, 0, std::min(bs.cols, t ? as.rows : as.cols));
      o.b_row = pick(g, 0, bs.rows - o.rows);
      o.b_col = pick(g, 0, bs.cols - o.cols);
      o.a_row = pick(g, 0, as.rows - (t ? o.cols : o.rows));
      o.a_col = pick(g, 0, as.cols - (t ? o.rows : o.cols));
    }
    const bool whole_b = o.b_row == 0 && o.b_col == 0 && o.rows == bs.rows && o.cols == bs.cols;
    static constexpr std::complex<double> alphas[] = {{1, 0}, {-2, 0}, {0.5, 1.5}};
    static constexpr std::complex<double> betas[] = {{0, 0}, {0.5, 0}, {-1, 2}};
    o.alpha = alphas[pick(g, 0, complex ? 2 : 1)];
    o.beta = betas[pick(g, 0, complex ? 2 : 1)];
    const bool pass_complex = complex && pick(g, 0, 1);

    tessera_redistribute_plan plan = nullptr;
    // The whole of B (rows, cols < 0) where the window is all of it.
    const std::int64_t rows = whole_b && pick(g, 0, 1) ? -1 : o.rows;
    int rc = TESSERA_OK;
    if (pick(g, 0, 1))
      rc = tessera_redistribute_plan_create(&plan, a.c, b.c, op, dtype, rows, o.cols, o.a_row,
                                            o.a_col, o.b_row, o.b_col, MPI_COMM_WORLD);
    else
      rc = tessera_redistribute_plan_create_f(&plan, a.c, b.c, op, dtype, rows, o.cols, o.a_row,
                                              o.a_col, o.b_row, o.b_col,
                                              MPI_Comm_c2f(MPI_COMM_WORLD));
    ASSERT_EQ(rc, TESSERA_OK) << tessera_last_error();
    const auto a_local = local_values<T>(a.cpp, rank, 1);
    const auto b_start = local_values<T>(b.cpp, rank, 2);
    auto expected = b_start;
    tessera::test::redistribute_reference(a.cpp, b.cpp, o, a_local.data(), expected.data(),
                                          MPI_COMM_WORLD);
    auto got = b_start;
    const void* ap = a_local.empty() ? nullptr : a_local.data();
    void* bp = got.empty() ? nullptr : got.data();
    if (pass_complex) {
      const double al[2] = {o.alpha.real(), o.alpha.imag()};
      const double be[2] = {o.beta.real(), o.beta.imag()};
      rc = tessera_redistribute_plan_execute_complex(plan, al, ap, be, bp);
    } else {
      rc = tessera_redistribute_plan_execute(plan, o.alpha.real(), ap, o.beta.real(), bp);
      if (o.alpha.imag() != 0 || o.beta.imag() != 0) { // the reference's scalars: real parts
        o.alpha = o.alpha.real();
        o.beta = o.beta.real();
        expected = b_start;
        tessera::test::redistribute_reference(a.cpp, b.cpp, o, a_local.data(), expected.data(),
                                              MPI_COMM_WORLD);
      }
    }
    EXPECT_EQ(rc, TESSERA_OK) << tessera_last_error();
    EXPECT_EQ(got, expected);
    std::int64_t sent = -1, received = -1, kept = -1, bound = -1;
    ASSERT_EQ(tessera_redistribute_plan_traffic(plan, &sent, &received, &kept, &bound), TESSERA_OK);
    EXPECT_EQ(sent, bound);
    std::int64_t totals[3] = {sent, received, kept};
    MPI_Allreduce(MPI_IN_PLACE, totals, 3, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    EXPECT_EQ(totals[0], totals[1]);
    EXPECT_EQ(totals[1] + totals[2], o.rows * o.cols * static_cast<std::int64_t>(sizeof(T)));
    EXPECT_EQ(tessera_redistribute_plan_destroy(plan), TESSERA_OK);
  }
}

TEST(CRedistributePlan, RandomLayoutsF64) {
  random_plans<double>(21, 40, TESSERA_F64);
}
TEST(CRedistributePlan, RandomLayoutsF32) {
  random_plans<float>(22, 15, TESSERA_F32);
}
TEST(CRedistributePlan, RandomLayoutsC64) {
  random_plans<std::complex<float>>(23, 15, TESSERA_C64);
}
TEST(CRedistributePlan, RandomLayoutsC128) {
  random_plans<std::complex<double>>(24, 30, TESSERA_C128);
}

TEST(CLayout, RejectsBadArguments) {
  tessera_layout l = reinterpret_cast<tessera_layout>(1);
  EXPECT_EQ(tessera_layout_create_rows(&l, 4, 4, 0, TESSERA_ROW_MAJOR), TESSERA_ERROR_INPUT);
  EXPECT_EQ(l, nullptr); // left null on failure
  EXPECT_STRNE(tessera_last_error(), "");
  EXPECT_EQ(tessera_layout_create_cols(&l, 4, 4, 2, static_cast<tessera_storage>(7)),
            TESSERA_ERROR_INPUT);
  EXPECT_EQ(tessera_layout_create_2d(&l, 4, 4, 2, 2, static_cast<tessera_grid_order>(9),
                                     TESSERA_ROW_MAJOR, 4),
            TESSERA_ERROR_INPUT);
  EXPECT_EQ(tessera_layout_create_block_cyclic(&l, 4, 4, 0, 1, 1, 1, 0, 0, TESSERA_GRID_ROW_MAJOR,
                                               1, 0, TESSERA_COL_MAJOR),
            TESSERA_ERROR_INPUT);
  const int desc[9] = {2, 0, 4, 4, 2, 2, 0, 0, 4}; // type 2: not dense block-cyclic
  EXPECT_EQ(tessera_layout_create_scalapack(&l, desc, 1, 1, TESSERA_GRID_ROW_MAJOR, nullptr, 1),
            TESSERA_ERROR_INPUT);
  EXPECT_EQ(tessera_layout_create_scalapack(&l, nullptr, 1, 1, TESSERA_GRID_ROW_MAJOR, nullptr, 1),
            TESSERA_ERROR_INPUT);
  const std::int64_t rows[] = {0, 5}, cols[] = {0, 4};
  const int owners[] = {3};
  EXPECT_EQ(tessera_layout_create_grid(&l, 1, rows, 1, cols, owners, 2, TESSERA_ROW_MAJOR, 0),
            TESSERA_ERROR_INPUT); // owner 3 of 2 ranks
  EXPECT_EQ(tessera_layout_create_rows(nullptr, 4, 4, 1, TESSERA_ROW_MAJOR), TESSERA_ERROR_INPUT);
  EXPECT_EQ(tessera_layout_global(nullptr, nullptr, nullptr, nullptr), TESSERA_ERROR_INPUT);
  ASSERT_EQ(tessera_layout_create_rows(&l, 4, 4, 2, TESSERA_ROW_MAJOR), TESSERA_OK);
  EXPECT_EQ(tessera_layout_local_block(l, 2, nullptr, nullptr, nullptr, nullptr, nullptr),
            TESSERA_ERROR_INPUT);
  EXPECT_EQ(
      tessera_layout_block(l, 2, 0, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr),
      TESSERA_ERROR_INPUT);
  EXPECT_EQ(tessera_layout_locate(l, 4, 0, nullptr, nullptr, nullptr), TESSERA_ERROR_INPUT);
  EXPECT_EQ(tessera_layout_destroy(l), TESSERA_OK);
  EXPECT_EQ(tessera_layout_destroy(nullptr), TESSERA_OK);
}

TEST(CRedistributePlan, RejectsBadArgumentsOnEveryRank) {
  const int p = comm_size(), rank = comm_rank();
  tessera_layout a = nullptr, other = nullptr;
  ASSERT_EQ(tessera_layout_create_rows(&a, 6, 5, p, TESSERA_ROW_MAJOR), TESSERA_OK);
  ASSERT_EQ(tessera_layout_create_rows(&other, 6, 5, p + 1, TESSERA_ROW_MAJOR), TESSERA_OK);
  tessera_redistribute_plan plan = nullptr;
  // Wrong on the last rank only: every rank fails.
  expect_input_error(tessera_redistribute_plan_create(&plan, a, rank == p - 1 ? nullptr : a,
                                                      TESSERA_MATRIX_OP_NONE, TESSERA_F64, -1, -1,
                                                      0, 0, 0, 0, MPI_COMM_WORLD));
  EXPECT_EQ(plan, nullptr);
  expect_input_error(tessera_redistribute_plan_create(
      &plan, a, a, rank == p - 1 ? static_cast<tessera_matrix_op>(3) : TESSERA_MATRIX_OP_NONE,
      TESSERA_F64, -1, -1, 0, 0, 0, 0, MPI_COMM_WORLD));
  expect_input_error(tessera_redistribute_plan_create(&plan, a, a, TESSERA_MATRIX_OP_NONE,
                                                      rank == p - 1 ? TESSERA_I32 : TESSERA_F64, -1,
                                                      -1, 0, 0, 0, 0, MPI_COMM_WORLD));
  expect_input_error(tessera_redistribute_plan_create(&plan, a, other, TESSERA_MATRIX_OP_NONE,
                                                      TESSERA_F64, -1, -1, 0, 0, 0, 0,
                                                      MPI_COMM_WORLD)); // p + 1 ranks
  expect_input_error(tessera_redistribute_plan_create(&plan, a, a, TESSERA_MATRIX_OP_TRANSPOSE,
                                                      TESSERA_F64, -1, -1, 0, 0, 0, 0,
                                                      MPI_COMM_WORLD)); // 5 x 6 from 6 x 5
  EXPECT_EQ(tessera_redistribute_plan_create(&plan, a, a, TESSERA_MATRIX_OP_NONE, TESSERA_F64, -1,
                                             -1, 0, 0, 0, 0, MPI_COMM_NULL),
            TESSERA_ERROR_INPUT);
  EXPECT_EQ(tessera_redistribute_plan_create_f(&plan, a, a, TESSERA_MATRIX_OP_NONE, TESSERA_F64, -1,
                                               -1, 0, 0, 0, 0, MPI_Comm_c2f(MPI_COMM_NULL)),
            TESSERA_ERROR_INPUT);

  ASSERT_EQ(tessera_redistribute_plan_create(&plan, a, a, TESSERA_MATRIX_OP_NONE, TESSERA_F64, -1,
                                             -1, 0, 0, 0, 0, MPI_COMM_WORLD),
            TESSERA_OK)
      << tessera_last_error();
  std::vector<double> x(static_cast<std::size_t>(std::max<std::int64_t>(1, 6 * 5))), y(x.size());
  // An imaginary part for a real plan, on the last rank only.
  const double one[2] = {1, rank == p - 1 ? 1.0 : 0.0}, zero[2] = {0, 0};
  expect_input_error(
      tessera_redistribute_plan_execute_complex(plan, one, x.data(), zero, y.data()));
  expect_input_error(tessera_redistribute_plan_execute_complex(plan, rank == p - 1 ? nullptr : one,
                                                               x.data(), zero, y.data()));
  // A null block on rank 0, which holds rows.
  expect_input_error(
      tessera_redistribute_plan_execute(plan, 1.0, rank == 0 ? nullptr : x.data(), 0.0, y.data()));
  EXPECT_EQ(tessera_redistribute_plan_execute(nullptr, 1.0, x.data(), 0.0, y.data()),
            TESSERA_ERROR_INPUT);
  EXPECT_EQ(tessera_redistribute_plan_traffic(nullptr, nullptr, nullptr, nullptr, nullptr),
            TESSERA_ERROR_INPUT);
  EXPECT_EQ(tessera_redistribute_plan_execute(plan, 1.0, x.data(), 0.0, y.data()), TESSERA_OK);
  EXPECT_EQ(tessera_redistribute_plan_destroy(plan), TESSERA_OK);
  EXPECT_EQ(tessera_redistribute_plan_destroy(nullptr), TESSERA_OK);
  tessera_layout_destroy(a);
  tessera_layout_destroy(other);
}

} // namespace
