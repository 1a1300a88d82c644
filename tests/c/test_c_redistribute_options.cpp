// The C API's plan options (tessera_redistribute_plan_create_ex) through libtessera.so: with
// TESSERA_REDISTRIBUTE_RELABEL the relabelling and the target layout match the C++ plan's and
// execute writes the reference's result under the target; a lowered buffer bound splits the
// exchange into rounds that the buffer query reports, with the same result; bad flags or bounds
// fail on every rank. The main is c_test_main.cpp.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <numeric>
#include <vector>

#include <tessera/layout.hpp>
#include <tessera/redistribute_plan.hpp>
#include <tessera/tessera.h>

#include "../mpi/redistribute_reference.hpp"
#include "c_test_support.hpp"

namespace {

using tessera::Layout;
using tessera::MatrixOp;
using tessera::RedistributeOptions;
using tessera::StorageOrder;

using tessera::c_test::comm_rank;
using tessera::c_test::comm_size;
using tessera::c_test::expect_input_error;

std::vector<double> values(const Layout& l, int rank, int salt) {
  std::vector<double> v(static_cast<std::size_t>(l.local_extent(rank)));
  for (std::size_t k = 0; k < v.size(); ++k)
    v[k] = static_cast<double>((static_cast<int>(k) * 7 + salt + rank * 13) % 61) - 30;
  return v;
}

// Row blocks of a 13 × 9 matrix, and the same blocks dealt to the ranks in reverse.
struct ReversedRows {
  static constexpr std::int64_t m = 13, n = 9;
  Layout a, b;
  tessera_layout ca = nullptr, cb = nullptr;
  ReversedRows() {
    const int p = comm_size();
    a = Layout::row_blocks({m, n}, p);
    std::vector<int> owners(static_cast<std::size_t>(p));
    std::iota(owners.rbegin(), owners.rend(), 0);
    b = Layout::grid(a.row_splits(), a.col_splits(), owners, p, StorageOrder::ColMajor);
    tessera_layout_create_rows(&ca, m, n, p, TESSERA_ROW_MAJOR);
    tessera_layout_create_grid(&cb, p, b.row_splits().data(), 1, b.col_splits().data(),
                               owners.data(), p, TESSERA_COL_MAJOR, 0);
  }
  ~ReversedRows() {
    tessera_layout_destroy(ca);
    tessera_layout_destroy(cb);
  }
};

TEST(CRedistributeOptions, RelabelMovesNothingAndSaysWhere) {
  const int p = comm_size(), rank = comm_rank();
  ReversedRows l;
  ASSERT_NE(l.ca, nullptr);
  ASSERT_NE(l.cb, nullptr);
  for (bool fortran : {false, true}) {
    tessera_redistribute_plan plan = nullptr;
    const int rc = fortran
                       ? tessera_redistribute_plan_create_ex_f(
                             &plan, l.ca, l.cb, TESSERA_MATRIX_OP_NONE, TESSERA_F64, -1, -1, 0, 0,
                             0, 0, TESSERA_REDISTRIBUTE_RELABEL, 0, MPI_Comm_c2f(MPI_COMM_WORLD))
                       : tessera_redistribute_plan_create_ex(
                             &plan, l.ca, l.cb, TESSERA_MATRIX_OP_NONE, TESSERA_F64, -1, -1, 0, 0,
                             0, 0, TESSERA_REDISTRIBUTE_RELABEL, 0, MPI_COMM_WORLD);
    ASSERT_EQ(rc, TESSERA_OK) << tessera_last_error();
    RedistributeOptions o;
    o.relabel = true;
    const tessera::RedistributePlan cpp(l.a, l.b, tessera::DType::f64, MPI_COMM_WORLD, o);
    std::vector<int> relabelling(static_cast<std::size_t>(p), -1);
    ASSERT_EQ(tessera_redistribute_plan_relabelling(plan, relabelling.data(), p), TESSERA_OK);
    EXPECT_EQ(relabelling, cpp.relabelling());
    // Rank r's rows go back to rank r: nothing travels.
    for (int r = 0; r < p; ++r)
      EXPECT_EQ(relabelling[static_cast<std::size_t>(r)], p - 1 - r);
    std::int64_t sent = -1, received = -1;
    ASSERT_EQ(tessera_redistribute_plan_traffic(plan, &sent, &received, nullptr, nullptr),
              TESSERA_OK);
    EXPECT_EQ(sent, 0);
    EXPECT_EQ(received, 0);

    tessera_layout target = nullptr;
    ASSERT_EQ(tessera_redistribute_plan_target(plan, &target), TESSERA_OK);
    const Layout& t = cpp.target();
    std::int64_t rows = -1, cols = -1, ld = -1, elements = -1;
    tessera_storage storage = TESSERA_ROW_MAJOR;
    ASSERT_EQ(tessera_layout_local_block(target, rank, &rows, &cols, &ld, &storage, &elements),
              TESSERA_OK);
    EXPECT_EQ(rows, t.local_shape(rank).rows);
    EXPECT_EQ(cols, t.local_shape(rank).cols);
    EXPECT_EQ(ld, t.leading_dimension(rank));
    EXPECT_EQ(storage, TESSERA_COL_MAJOR);
    EXPECT_EQ(elements, t.local_extent(rank));
    for (std::int64_t bi = 0; bi < t.block_rows(); ++bi) {
      int owner = -1;
      ASSERT_EQ(tessera_layout_block(target, bi, 0, nullptr, nullptr, nullptr, nullptr, &owner,
                                     nullptr, nullptr),
                TESSERA_OK);
      EXPECT_EQ(owner, t.block_owner(bi, 0));
    }
    EXPECT_EQ(tessera_layout_destroy(target), TESSERA_OK);

    const auto a_local = values(l.a, rank, 1);
    std::vector<double> got(static_cast<std::size_t>(t.local_extent(rank)), -99.0);
    auto expected = got;
    o.rows = l.m;
    o.cols = l.n;
    tessera::test::redistribute_reference(l.a, t, o, a_local.data(), expected.data(),
                                          MPI_COMM_WORLD);
    EXPECT_EQ(tessera_redistribute_plan_execute(plan, 1.0,
                                                a_local.empty() ? nullptr : a_local.data(), 0.0,
                                                got.empty() ? nullptr : got.data()),
              TESSERA_OK)
        << tessera_last_error();
    EXPECT_EQ(got, expected);
    // beta != 0 would need B's old values where they are not.
    EXPECT_EQ(tessera_redistribute_plan_execute(plan, 1.0, a_local.data(), 1.0, got.data()),
              TESSERA_ERROR_INPUT);
    EXPECT_EQ(tessera_redistribute_plan_destroy(plan), TESSERA_OK);
  }
}

TEST(CRedistributeOptions, BufferBoundSplitsIntoRounds) {
  const int p = comm_size(), rank = comm_rank();
  ReversedRows l;
  // A transpose from row blocks: every rank sends to every other.
  tessera_layout bt = nullptr;
  ASSERT_EQ(tessera_layout_create_rows(&bt, l.n, l.m, p, TESSERA_COL_MAJOR), TESSERA_OK);
  const Layout cpp_bt = Layout::row_blocks({l.n, l.m}, p, StorageOrder::ColMajor);
  RedistributeOptions o;
  o.op = MatrixOp::Transpose;
  o.rows = l.n;
  o.cols = l.m;
  const auto a_local = values(l.a, rank, 1);
  auto expected = values(cpp_bt, rank, 2);
  tessera::test::redistribute_reference(l.a, cpp_bt, o, a_local.data(), expected.data(),
                                        MPI_COMM_WORLD);
  for (std::int64_t limit : {0, 8, 100}) {
    tessera_redistribute_plan plan = nullptr;
    ASSERT_EQ(tessera_redistribute_plan_create_ex(&plan, l.ca, bt, TESSERA_MATRIX_OP_TRANSPOSE,
                                                  TESSERA_F64, -1, -1, 0, 0, 0, 0, 0, limit,
                                                  MPI_COMM_WORLD),
              TESSERA_OK)
        << tessera_last_error();
    std::int64_t buffer = -1, rounds = -1;
    ASSERT_EQ(tessera_redistribute_plan_buffer(plan, &buffer, &rounds), TESSERA_OK);
    if (limit > 0) {
      EXPECT_LE(buffer, std::max<std::int64_t>(limit, 2 * (p - 1) * 8));
    }
    if (limit == 8 && p > 1) {
      EXPECT_GT(rounds, 1);
    }
    auto got = values(cpp_bt, rank, 2);
    EXPECT_EQ(tessera_redistribute_plan_execute(plan, 1.0,
                                                a_local.empty() ? nullptr : a_local.data(), 0.0,
                                                got.empty() ? nullptr : got.data()),
              TESSERA_OK);
    EXPECT_EQ(got, expected) << "limit " << limit;
    EXPECT_EQ(tessera_redistribute_plan_destroy(plan), TESSERA_OK);
  }
  tessera_layout_destroy(bt);
}

TEST(CRedistributeOptions, RejectsBadOptionsOnEveryRank) {
  const int p = comm_size(), rank = comm_rank();
  ReversedRows l;
  tessera_redistribute_plan plan = nullptr;
  const bool last = rank == p - 1;
  expect_input_error(tessera_redistribute_plan_create_ex(&plan, l.ca, l.cb, TESSERA_MATRIX_OP_NONE,
                                                         TESSERA_F64, -1, -1, 0, 0, 0, 0,
                                                         last ? 6 : 0, 0, MPI_COMM_WORLD));
  EXPECT_EQ(plan, nullptr);
  expect_input_error(tessera_redistribute_plan_create_ex(&plan, l.ca, l.cb, TESSERA_MATRIX_OP_NONE,
                                                         TESSERA_F64, -1, -1, 0, 0, 0, 0, 0,
                                                         last ? -1 : 0, MPI_COMM_WORLD));
  // Relabelling needs the whole of B.
  expect_input_error(tessera_redistribute_plan_create_ex(
      &plan, l.ca, l.cb, TESSERA_MATRIX_OP_NONE, TESSERA_F64, 2, 2, 0, 0, 1, 1,
      TESSERA_REDISTRIBUTE_RELABEL, 0, MPI_COMM_WORLD));
  ASSERT_EQ(tessera_redistribute_plan_create_ex(&plan, l.ca, l.cb, TESSERA_MATRIX_OP_NONE,
                                                TESSERA_F64, -1, -1, 0, 0, 0, 0, 0, 0,
                                                MPI_COMM_WORLD),
            TESSERA_OK);
  // Without relabelling: the identity, and B's own layout.
  std::vector<int> relabelling(static_cast<std::size_t>(p), -1), identity(relabelling.size());
  std::iota(identity.begin(), identity.end(), 0);
  ASSERT_EQ(tessera_redistribute_plan_relabelling(plan, relabelling.data(), p), TESSERA_OK);
  EXPECT_EQ(relabelling, identity);
  EXPECT_EQ(tessera_redistribute_plan_relabelling(plan, relabelling.data(), p + 1),
            TESSERA_ERROR_INPUT);
  EXPECT_EQ(tessera_redistribute_plan_relabelling(plan, nullptr, p), TESSERA_ERROR_INPUT);
  EXPECT_EQ(tessera_redistribute_plan_target(plan, nullptr), TESSERA_ERROR_INPUT);
  EXPECT_EQ(tessera_redistribute_plan_target(nullptr, nullptr), TESSERA_ERROR_INPUT);
  EXPECT_EQ(tessera_redistribute_plan_buffer(nullptr, nullptr, nullptr), TESSERA_ERROR_INPUT);
  EXPECT_EQ(tessera_redistribute_plan_destroy(plan), TESSERA_OK);
}

// The backend and memory choice: Auto with host memory resolves to the CPU; bad values, and
// device memory on the CPU backend, fail on every rank (tests/cuda/test_cuda_redistribute.cpp
// executes device plans against the CPU's).
TEST(CRedistributeOptions, BackendAndMemory) {
  const int rank = comm_rank();
  ReversedRows l;
  tessera_redistribute_plan plan = nullptr;
  const bool first = rank == 0;
  expect_input_error(tessera_redistribute_plan_create_on(
      &plan, l.ca, l.cb, TESSERA_MATRIX_OP_NONE, TESSERA_F64, -1, -1, 0, 0, 0, 0, 0, 0,
      TESSERA_BACKEND_AUTO, static_cast<tessera_memory>(first ? 2 : 0), MPI_COMM_WORLD));
  expect_input_error(tessera_redistribute_plan_create_on(
      &plan, l.ca, l.cb, TESSERA_MATRIX_OP_NONE, TESSERA_F64, -1, -1, 0, 0, 0, 0, 0, 0,
      static_cast<tessera_backend>(first ? 9 : 0), TESSERA_MEMORY_HOST, MPI_COMM_WORLD));
  // Device memory on the CPU backend: an input error, or "not compiled" in a build without CUDA.
  const int rc = tessera_redistribute_plan_create_on(
      &plan, l.ca, l.cb, TESSERA_MATRIX_OP_NONE, TESSERA_F64, -1, -1, 0, 0, 0, 0, 0, 0,
      TESSERA_BACKEND_CPU, TESSERA_MEMORY_DEVICE, MPI_COMM_WORLD);
  EXPECT_TRUE(rc == TESSERA_ERROR_INPUT || rc == TESSERA_ERROR_NOT_COMPILED) << rc;
  EXPECT_EQ(plan, nullptr);
  ASSERT_EQ(tessera_redistribute_plan_create_on(
                &plan, l.ca, l.cb, TESSERA_MATRIX_OP_NONE, TESSERA_F64, -1, -1, 0, 0, 0, 0, 0, 0,
                TESSERA_BACKEND_AUTO, TESSERA_MEMORY_HOST, MPI_COMM_WORLD),
            TESSERA_OK);
  tessera_backend backend = TESSERA_BACKEND_AUTO;
  EXPECT_EQ(tessera_redistribute_plan_backend(plan, &backend), TESSERA_OK);
  EXPECT_EQ(backend, TESSERA_BACKEND_CPU);
  EXPECT_EQ(tessera_redistribute_plan_backend(nullptr, &backend), TESSERA_ERROR_INPUT);
  EXPECT_EQ(tessera_redistribute_plan_destroy(plan), TESSERA_OK);
}

} // namespace
