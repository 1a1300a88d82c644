// The C API's reductions over a layout (tessera_reduce_plan_create_layout), called as a C
// application calls them through libtessera.so: block-cyclic, 2-D, column and row blocks in
// either storage order against tessera_reduce_plan_create over the same matrix in row blocks,
// bit for bit, for f32 and f64, every axis, with and without missing values; the Fortran-handle
// variant; and the errors (every rank fails together, with a message). The main is
// c_test_main.cpp.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <tessera/tessera.h>

#include "c_test_support.hpp"

namespace {

using tessera::c_test::comm_rank;
using tessera::c_test::comm_size;
using tessera::c_test::expect_input_error;

unsigned shared_seed() {
  unsigned seed = comm_rank() == 0 ? std::random_device{}() : 0u;
  MPI_Bcast(&seed, 1, MPI_UNSIGNED, 0, MPI_COMM_WORLD);
  return seed;
}

// A rows × cols matrix over many binades (any other order of additions changes the bits), with
// a NaN at every 11th element when `nans`.
template <class T>
std::vector<T> global_matrix(std::int64_t rows, std::int64_t cols, unsigned seed, bool nans) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::uniform_int_distribution<int> e(-20, 20);
  std::vector<T> a(static_cast<std::size_t>(rows * cols));
  for (std::size_t k = 0; k < a.size(); ++k)
    a[k] = nans && k % 11 == seed % 11 ? std::numeric_limits<T>::quiet_NaN()
                                       : static_cast<T>(std::ldexp(u(gen), e(gen)));
  return a;
}

// This rank's local block of `a` in `layout`, found through the C API alone.
template <class T>
std::vector<T> local_block(tessera_layout layout, const std::vector<T>& a) {
  std::int64_t rows = 0, cols = 0, ld = 0, elements = 0;
  tessera_storage storage = TESSERA_ROW_MAJOR;
  EXPECT_EQ(tessera_layout_global(layout, &rows, &cols, nullptr), TESSERA_OK);
  EXPECT_EQ(
      tessera_layout_local_block(layout, comm_rank(), nullptr, nullptr, &ld, &storage, &elements),
      TESSERA_OK);
  std::vector<T> b(static_cast<std::size_t>(elements), std::numeric_limits<T>::quiet_NaN());
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) {
      int owner = -1;
      std::int64_t r = 0, c = 0;
      EXPECT_EQ(tessera_layout_locate(layout, i, j, &owner, &r, &c), TESSERA_OK);
      if (owner == comm_rank())
        b[static_cast<std::size_t>(storage == TESSERA_ROW_MAJOR ? r * ld + c : c * ld + r)] =
            a[static_cast<std::size_t>(i * cols + j)];
    }
  return b;
}

bool same_bits(const std::vector<double>& x, const std::vector<double>& y) {
  return x.size() == y.size() &&
         (x.empty() || std::memcmp(x.data(), y.data(), x.size() * sizeof(double)) == 0);
}

const tessera_op kOps[] = {TESSERA_OP_SUM, TESSERA_OP_MEAN, TESSERA_OP_NORM2, TESSERA_OP_MIN,
                           TESSERA_OP_MAX};
constexpr int kNops = 5;

// The plan over `layout` against the row-block plan, for every axis.
template <class T>
void check(tessera_layout layout, const std::string& what, bool nans = false) {
  SCOPED_TRACE(what + ", ranks " + std::to_string(comm_size()) + (nans ? ", NaN skipped" : ""));
  const tessera_dtype dtype = sizeof(T) == 4 ? TESSERA_F32 : TESSERA_F64;
  std::int64_t rows = 0, cols = 0;
  ASSERT_EQ(tessera_layout_global(layout, &rows, &cols, nullptr), TESSERA_OK);
  const auto a = global_matrix<T>(rows, cols, shared_seed(), nans);
  const auto block = local_block(layout, a);
  const std::int64_t first = tessera_block_begin(rows, comm_size(), comm_rank());
  const tessera_missing skip{1, nullptr, 0};
  for (tessera_axis axis : {TESSERA_AXIS_ALL, TESSERA_AXIS_ROWS, TESSERA_AXIS_COLS}) {
    tessera_reduce_plan plan = nullptr, ref = nullptr;
    ASSERT_EQ(tessera_reduce_plan_create_layout(&plan, layout, dtype, MPI_COMM_WORLD,
                                                TESSERA_BACKEND_CPU, kOps, kNops, axis,
                                                nans ? &skip : nullptr),
              TESSERA_OK)
        << tessera_last_error();
    ASSERT_EQ(tessera_reduce_plan_create_missing(&ref, rows, cols, dtype, MPI_COMM_WORLD,
                                                 TESSERA_BACKEND_CPU, kOps, kNops, axis,
                                                 nans ? &skip : nullptr),
              TESSERA_OK)
        << tessera_last_error();
    const std::int64_t count = tessera_reduce_plan_count(plan);
    EXPECT_EQ(count, tessera_reduce_plan_count(ref));
    std::vector<double> got(static_cast<std::size_t>(kNops * count)), want(got.size());
    EXPECT_EQ(tessera_reduce_plan_execute(plan, block.empty() ? nullptr : block.data(), got.data()),
              TESSERA_OK)
        << tessera_last_error();
    EXPECT_EQ(tessera_reduce_plan_execute(ref, a.data() + first * cols, want.data()), TESSERA_OK);
    EXPECT_TRUE(same_bits(got, want)) << "axis " << axis;
    EXPECT_EQ(tessera_reduce_plan_destroy(plan), TESSERA_OK);
    EXPECT_EQ(tessera_reduce_plan_destroy(ref), TESSERA_OK);
  }
}

template <class T>
void every_layout() {
  const int p = comm_size();
  const std::int64_t m = 67, n = 45;
  for (std::int64_t nb : {1, 3, 64, 7})
    for (int pr = 1; pr <= 3; ++pr)
      for (int pc = 1; pc <= 3 && pr * pc <= p; ++pc) {
        tessera_layout l = nullptr;
        ASSERT_EQ(tessera_layout_create_block_cyclic(&l, m, n, nb == 7 ? 13 : nb, nb, pr, pc, 0,
                                                     pc - 1, TESSERA_GRID_ROW_MAJOR, p, 0,
                                                     TESSERA_COL_MAJOR),
                  TESSERA_OK);
        check<T>(l, "block-cyclic, nb " + std::to_string(nb) + ", " + std::to_string(pr) + " x " +
                        std::to_string(pc));
        tessera_layout_destroy(l);
        ASSERT_EQ(tessera_layout_create_2d(&l, m, n, pr, pc, TESSERA_GRID_COL_MAJOR,
                                           TESSERA_ROW_MAJOR, p),
                  TESSERA_OK);
        check<T>(l, "2-D blocks " + std::to_string(pr) + " x " + std::to_string(pc));
        tessera_layout_destroy(l);
      }
  for (tessera_storage s : {TESSERA_ROW_MAJOR, TESSERA_COL_MAJOR}) {
    tessera_layout l = nullptr;
    ASSERT_EQ(tessera_layout_create_cols(&l, m, n, p, s), TESSERA_OK);
    check<T>(l, "column blocks");
    tessera_layout_destroy(l);
    ASSERT_EQ(tessera_layout_create_rows(&l, m, n, p, s), TESSERA_OK);
    check<T>(l, "row blocks");
    tessera_layout_destroy(l);
  }
}

TEST(CReduceLayout, EveryLayoutF64) {
  every_layout<double>();
}

TEST(CReduceLayout, EveryLayoutF32) {
  every_layout<float>();
}

TEST(CReduceLayout, SkipsNaNAsRowBlocksDo) {
  tessera_layout l = nullptr;
  ASSERT_EQ(tessera_layout_create_block_cyclic(&l, 30, 41, 4, 3, 1, comm_size(), 0, 0,
                                               TESSERA_GRID_ROW_MAJOR, 0, 0, TESSERA_COL_MAJOR),
            TESSERA_OK);
  check<double>(l, "block-cyclic 4 x 3", true);
  tessera_layout_destroy(l);
}

TEST(CReduceLayout, RejectsBadArgumentsOnEveryRank) {
  const int p = comm_size(), rank = comm_rank();
  const bool last = rank == p - 1;
  tessera_layout l = nullptr, other = nullptr;
  ASSERT_EQ(tessera_layout_create_cols(&l, 6, 5, p, TESSERA_COL_MAJOR), TESSERA_OK);
  ASSERT_EQ(tessera_layout_create_cols(&other, 6, 5, p + 1, TESSERA_COL_MAJOR), TESSERA_OK);
  tessera_reduce_plan plan = reinterpret_cast<tessera_reduce_plan>(1);
  const tessera_op bad_op = static_cast<tessera_op>(99);
  // Wrong on the last rank only: every rank fails.
  expect_input_error(tessera_reduce_plan_create_layout(&plan, last ? nullptr : l, TESSERA_F64,
                                                       MPI_COMM_WORLD, TESSERA_BACKEND_CPU, kOps,
                                                       kNops, TESSERA_AXIS_ALL, nullptr));
  EXPECT_EQ(plan, nullptr); // left null on failure
  expect_input_error(tessera_reduce_plan_create_layout(&plan, l, TESSERA_F64, MPI_COMM_WORLD,
                                                       TESSERA_BACKEND_CPU, last ? &bad_op : kOps,
                                                       1, TESSERA_AXIS_ALL, nullptr));
  expect_input_error(tessera_reduce_plan_create_layout(&plan, l, last ? TESSERA_C64 : TESSERA_F64,
                                                       MPI_COMM_WORLD, TESSERA_BACKEND_CPU, kOps,
                                                       kNops, TESSERA_AXIS_ALL, nullptr));
  expect_input_error(tessera_reduce_plan_create_layout(
      &plan, l, TESSERA_F64, MPI_COMM_WORLD, TESSERA_BACKEND_CPU, kOps, kNops,
      last ? static_cast<tessera_axis>(5) : TESSERA_AXIS_COLS, nullptr));
  const tessera_missing broken{0, nullptr, 2};
  expect_input_error(tessera_reduce_plan_create_layout(&plan, l, TESSERA_F64, MPI_COMM_WORLD,
                                                       TESSERA_BACKEND_CPU, kOps, kNops,
                                                       TESSERA_AXIS_ALL, last ? &broken : nullptr));
  expect_input_error(tessera_reduce_plan_create_layout(&plan, other, TESSERA_F64, MPI_COMM_WORLD,
                                                       TESSERA_BACKEND_CPU, kOps, kNops,
                                                       TESSERA_AXIS_ALL, nullptr)); // p + 1 ranks
  EXPECT_EQ(tessera_reduce_plan_create_layout(&plan, l, TESSERA_F64, MPI_COMM_NULL,
                                              TESSERA_BACKEND_CPU, kOps, kNops, TESSERA_AXIS_ALL,
                                              nullptr),
            TESSERA_ERROR_INPUT);
  EXPECT_EQ(tessera_reduce_plan_create_layout_f(
                &plan, l, TESSERA_F64, MPI_Comm_c2f(MPI_COMM_NULL), TESSERA_BACKEND_CPU,
                reinterpret_cast<const int*>(kOps), kNops, TESSERA_AXIS_ALL, 0, nullptr, 0),
            TESSERA_ERROR_INPUT);

  // The Fortran-handle variant, then a null block on the rank holding column 0.
  ASSERT_EQ(tessera_reduce_plan_create_layout_f(
                &plan, l, TESSERA_F64, MPI_Comm_c2f(MPI_COMM_WORLD), TESSERA_BACKEND_CPU,
                reinterpret_cast<const int*>(kOps), kNops, TESSERA_AXIS_COLS, 0, nullptr, 0),
            TESSERA_OK)
      << tessera_last_error();
  EXPECT_EQ(tessera_reduce_plan_count(plan), 5);
  std::vector<double> x(30, 2.0), values(kNops * 5);
  expect_input_error(
      tessera_reduce_plan_execute(plan, rank == 0 ? nullptr : x.data(), values.data()));
  ASSERT_EQ(tessera_reduce_plan_execute(plan, x.data(), values.data()), TESSERA_OK);
  EXPECT_EQ(values[0], 12.0); // the sum of column 0: six 2s
  EXPECT_EQ(tessera_reduce_plan_destroy(plan), TESSERA_OK);
  tessera_layout_destroy(l);
  tessera_layout_destroy(other);
}

} // namespace
