// GPU reductions against the serial reference, bit for bit: every op, every axis, f32 and f64,
// awkward shapes, padded and misaligned rows; the plan-facing pieces against the CPU backend's;
// the Norm2 rescue of the CUDA backend's plans against the CPU backend's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "../norm2_test_support.hpp"
#include "cpu/reduce.hpp"
#include "cpu/reference.hpp"
#include "cuda/buffer.hpp"
#include "cuda/reduce.hpp"
#include "cuda/stream.hpp"
#include "cuda_test_util.hpp"
#include "mpi/reduce_engine.hpp"
#include "mpi/reduce_plan.hpp"
#include "reduce_test_support.hpp"

namespace tessera {
namespace {

using test::dense;
using test::kAxes;
using test::kOps;
using test::result_size;

struct Case {
  std::int64_t rows, cols;
};
// 5000 x 7: enough row groups that the column fold loads several batches ahead. 9001 x 40:
// more rows than the device runs warps at once (each warp takes several), and 141 blocks whose
// in-order fold spans several rounds of every lane.
// 66000 × 40 and 65600 × 257: several super-blocks of row groups, the last one partial.
// 4194404 × 2: 257 super-blocks (the fold of the super-blocks takes a warp per column).
// 200 × 3, 5000 × 7, 2000 × 11, 17 × 31: narrow rows at 1, 2, 4 and 8 threads a row.
const Case kShapes[] = {{1, 1},      {1, 1000},    {1000, 1},    {31, 33},    {17, 31},
                        {64, 128},   {65, 129},    {130, 257},   {200, 3},    {1000, 999},
                        {5000, 7},   {2000, 11},   {0, 5},       {5, 0},      {9001, 40},
                        {66000, 40}, {65600, 257}, {4194404, 2}, {1001, 200}, {99, 509}};

template <class T>
void check_reduce(std::int64_t rows, std::int64_t cols, std::int64_t pad, std::int64_t off,
                  cuda::ReduceWorkspace& ws, CUstream_st* s) {
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE(::testing::Message()
               << rows << "x" << cols << " pad " << pad << " offset " << off << " seed " << seed);
  const std::int64_t ld = cols + pad;
  const auto n = static_cast<std::size_t>(off + rows * ld + 1);
  const auto stored = test::random_vector<T>(n, seed);
  const auto a = dense(stored, rows, cols, ld, off);
  cuda::DeviceBuffer dev(n * sizeof(T)), out(8 * static_cast<std::size_t>(rows + cols + 1));
  cuda::copy(dev.data(), stored.data(), n * sizeof(T));
  for (Axis axis : kAxes)
    for (Op op : kOps) {
      SCOPED_TRACE(::testing::Message() << op_name(op) << " over " << axis_name(axis));
      const auto want = reference::reduce(op, axis, a.data(), rows, cols);
      ws.reserve(s, axis, rows, cols);
      cuda::reduce(s, op, axis, dtype_of<T>, dev.as<T>() + off, rows, cols, ld, out.as<double>(),
                   ws);
      std::vector<double> got(result_size(axis, rows, cols));
      cuda::synchronize(s);
      cuda::copy(got.data(), out.data(), got.size() * sizeof(double));
      const std::int64_t at = test::first_difference(got, want);
      ASSERT_EQ(at, -1) << "GPU " << got[at] << " reference " << want[at];
    }
}

template <class T>
class CudaReduce : public ::testing::Test {};
using Types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CudaReduce, Types);

TYPED_TEST(CudaReduce, EveryOpAndAxisBitForBit) {
  TESSERA_REQUIRE_GPU();
  cuda::StreamPool pool(1);
  cuda::ReduceWorkspace ws;
  for (const Case& c : kShapes)
    check_reduce<TypeParam>(c.rows, c.cols, 0, 0, ws, pool[0]);
}

TYPED_TEST(CudaReduce, PaddedAndMisalignedRows) {
  TESSERA_REQUIRE_GPU();
  cuda::StreamPool pool(1);
  cuda::ReduceWorkspace ws;
  // 253 to 512 columns: the last rows that four (two) rows a warp take at every phase, and
  // the first that they do not.
  const Case shapes[] = {{1, 300}, {31, 33},  {130, 257}, {67, 1000}, {50, 3},  {45, 7},
                         {40, 13}, {33, 253}, {7, 254},   {29, 509},  {5, 511}, {3, 512}};
  for (const Case& c : shapes)
    for (std::int64_t off : {1, 2, 3})
      for (std::int64_t pad : {0, 1, 3})
        check_reduce<TypeParam>(c.rows, c.cols, pad, off, ws, pool[0]);
}

// Several ops from one pass (reduce_fused) give each op's bits, on every axis, at any
// alignment of the rows; op lists with shared kernels (sum and mean) and repeats included.
TYPED_TEST(CudaReduce, FusedOpsMatchTheReferenceBitForBit) {
  TESSERA_REQUIRE_GPU();
  cuda::StreamPool pool(1);
  CUstream_st* s = pool[0];
  cuda::ReduceWorkspace ws;
  const std::vector<std::vector<Op>> lists = {
      {Op::Sum, Op::Max, Op::Norm2},
      {Op::Sum, Op::Min, Op::Max, Op::Mean, Op::Norm1, Op::Norm2, Op::NormInf},
      {Op::Mean, Op::Sum, Op::Mean}};
  // 66000 x 3: several super-blocks of row groups over few columns;
  // 520 x 2100: rows long enough for steps read without checks (1024 columns of f32).
  // 40 x 129, 9 x 256, 7 x 300, 5 x 512: the strided row kernel's two and four chunks, full and
  // not.
  const Case shapes[] = {{1, 1},      {1, 1000}, {1000, 1}, {31, 33},  {130, 257},
                         {67, 1000},  {200, 3},  {700, 6},  {300, 12}, {66000, 3},
                         {520, 2100}, {40, 129}, {9, 256},  {7, 300},  {5, 512}};
  for (const Case& c : shapes)
    for (std::int64_t off : {0, 1, 3})
      for (const auto& ops : lists) {
        const std::uint64_t seed = test::fresh_seed();
        const std::int64_t ld = c.cols + (off ? 1 : 0);
        const auto n = static_cast<std::size_t>(off + c.rows * ld + 1);
        const auto stored = test::random_vector<TypeParam>(n, seed);
        const auto a = dense(stored, c.rows, c.cols, ld, off);
        cuda::DeviceBuffer dev(n * sizeof(TypeParam));
        cuda::copy(dev.data(), stored.data(), n * sizeof(TypeParam));
        for (Axis axis : kAxes) {
          SCOPED_TRACE(::testing::Message() << c.rows << "x" << c.cols << " offset " << off
                                            << " over " << axis_name(axis) << " seed " << seed);
          const std::size_t len = result_size(axis, c.rows, c.cols);
          cuda::DeviceBuffer out(8 * len * ops.size());
          std::vector<double*> outs;
          for (std::size_t k = 0; k < ops.size(); ++k)
            outs.push_back(out.as<double>() + k * len);
          ws.reserve(s, axis, c.rows, c.cols, static_cast<int>(ops.size()));
          cuda::reduce_fused(s, ops, axis, dtype_of<TypeParam>, dev.as<TypeParam>() + off, c.rows,
                             c.cols, ld, outs.data(), ws);
          cuda::synchronize(s);
          for (std::size_t k = 0; k < ops.size(); ++k) {
            std::vector<double> got(len);
            cuda::copy(got.data(), outs[k], len * sizeof(double));
            const auto want = reference::reduce(ops[k], axis, a.data(), c.rows, c.cols);
            const std::int64_t at = test::first_difference(got, want);
            ASSERT_EQ(at, -1) << op_name(ops[k]) << ": GPU " << got[at] << " reference "
                              << want[at];
          }
        }
      }
}

// One small misaligned case of each kernel, plain and fused (what compute-sanitizer runs).
TEST(CudaReduceKernels, OneOfEachForTheSanitizers) {
  TESSERA_REQUIRE_GPU();
  cuda::StreamPool pool(1);
  cuda::ReduceWorkspace ws;
  check_reduce<float>(67, 1000, 1, 1, ws, pool[0]);
  check_reduce<double>(66000, 3, 1, 1, ws, pool[0]); // narrow rows, several super-blocks
  check_reduce<float>(70, 40, 1, 1, ws, pool[0]);    // a thread to a row (the tree kernel)
  check_reduce<double>(9, 150, 1, 1, ws, pool[0]);   // strided rows, two chunks
  check_reduce<float>(7, 300, 1, 1, ws, pool[0]);    // strided rows, four chunks
  const std::vector<Op> ops = {Op::Sum, Op::Max, Op::Norm2};
  cuda::DeviceBuffer dev(4 * 67 * 1001 + 8), out(8 * 3 * 1000);
  cuda::memset_async(pool[0], dev.data(), 0, dev.bytes());
  std::vector<double*> outs = {out.as<double>(), out.as<double>() + 1000, out.as<double>() + 2000};
  for (Axis axis : kAxes) {
    ws.reserve(pool[0], axis, 67, 1000, 3);
    cuda::reduce_fused(pool[0], ops, axis, DType::f32, dev.as<float>() + 1, 67, 1000, 1001,
                       outs.data(), ws);
    ws.reserve(pool[0], axis, 9, 150, 3); // the strided rows of several ops
    cuda::reduce_fused(pool[0], ops, axis, DType::f32, dev.as<float>() + 1, 9, 150, 151,
                       outs.data(), ws);
  }
  cuda::synchronize(pool[0]);
}

// The pieces a distributed plan assembles, against the CPU backend's pieces.
TYPED_TEST(CudaReduce, PlanPiecesMatchTheCpuBackend) {
  TESSERA_REQUIRE_GPU();
  using T = TypeParam;
  cuda::StreamPool pool(1);
  CUstream_st* s = pool[0];
  for (const Case& c : {Case{1, 1}, Case{200, 333}, Case{129, 64}, Case{9, 150}}) {
    const std::uint64_t seed = test::fresh_seed();
    SCOPED_TRACE(::testing::Message() << c.rows << "x" << c.cols << " seed " << seed);
    const auto n = static_cast<std::size_t>(c.rows * c.cols);
    const auto a = test::random_vector<T>(n, seed);
    const std::int64_t groups = (c.rows + kReduceBlockRows - 1) / kReduceBlockRows;
    cuda::DeviceBuffer dev(n * sizeof(T)),
        dout(8 * static_cast<std::size_t>(groups * c.cols + c.rows)),
        dacc(8 * static_cast<std::size_t>(c.cols + 1));
    cuda::copy(dev.data(), a.data(), n * sizeof(T));
    for (Op op : kOps) {
      SCOPED_TRACE(op_name(op));
      std::vector<double> want(static_cast<std::size_t>(c.rows)), got(want.size());
      cpu::reduce_rows(op, a.data(), c.rows, c.cols, want.data());
      cuda::reduce_rows(s, op, dtype_of<T>, dev.data(), c.rows, c.cols, c.cols, dout.as<double>());
      cuda::synchronize(s);
      cuda::copy(got.data(), dout.data(), got.size() * 8);
      ASSERT_EQ(test::first_difference(got, want), -1) << "reduce_rows";

      want.assign(static_cast<std::size_t>(groups * c.cols), 0.0);
      got.assign(want.size(), 0.0);
      cpu::reduce_col_groups(op, a.data(), c.rows, c.cols, want.data());
      cuda::reduce_col_groups(s, op, dtype_of<T>, dev.data(), c.rows, c.cols, c.cols,
                              dout.as<double>());
      cuda::synchronize(s);
      cuda::copy(got.data(), dout.data(), got.size() * 8);
      ASSERT_EQ(test::first_difference(got, want), -1) << "reduce_col_groups";

      // fold_rows continues an accumulator.
      want.assign(static_cast<std::size_t>(c.cols), identity(op));
      cpu::fold_rows(op, a.data(), c.rows, c.cols, want.data());
      cuda::fill_identity(s, op, dacc.as<double>(), c.cols);
      cuda::fold_rows(s, op, dtype_of<T>, dev.data(), c.rows, c.cols, c.cols, dacc.as<double>());
      got.assign(want.size(), 0.0);
      cuda::synchronize(s);
      cuda::copy(got.data(), dacc.data(), got.size() * 8);
      ASSERT_EQ(test::first_difference(got, want), -1) << "fold_rows";
    }
  }
}

// Several ops' plan pieces from one read (cuda::reduce_rows_fused / reduce_col_groups_fused,
// and the CUDA engine's *_multi on device and host blocks) against the CPU backend's pieces.
TYPED_TEST(CudaReduce, FusedPlanPiecesMatchTheCpuBackend) {
  TESSERA_REQUIRE_GPU();
  using T = TypeParam;
  cuda::StreamPool pool(1);
  CUstream_st* s = pool[0];
  const std::vector<Op> ops = {Op::Sum, Op::Max,   Op::Norm2,  Op::Mean,
                               Op::Min, Op::Norm1, Op::NormInf};
  // 17 x 5000: few long rows (the staged row kernel); 3000 x 20: narrow rows (four a warp).
  // 40000 x 3: more than a super-block of row blocks (625).
  for (const Case& c : {Case{1, 1}, Case{200, 333}, Case{129, 64}, Case{17, 5000}, Case{3000, 20},
                        Case{520, 2100}, Case{40000, 3}}) {
    const std::uint64_t seed = test::fresh_seed();
    SCOPED_TRACE(::testing::Message() << c.rows << "x" << c.cols << " seed " << seed);
    const auto n = static_cast<std::size_t>(c.rows * c.cols);
    const auto a = test::random_vector<T>(n, seed);
    const std::int64_t groups = (c.rows + kReduceBlockRows - 1) / kReduceBlockRows;
    const std::int64_t row_stride = c.rows + 3, col_stride = groups * c.cols + 5;
    const auto slots = static_cast<std::size_t>(cuda::reduce_fused_slots(ops));
    ASSERT_EQ(slots, ops.size() - 1) << "Mean shares Sum's slot";
    cuda::DeviceBuffer dev(n * sizeof(T)),
        dout(8 * slots * static_cast<std::size_t>(std::max(row_stride, col_stride)));
    cuda::copy(dev.data(), a.data(), n * sizeof(T));
    std::vector<std::vector<double>> want_rows(ops.size()), want_cols(ops.size());
    for (std::size_t k = 0; k < ops.size(); ++k) {
      want_rows[k].resize(static_cast<std::size_t>(c.rows));
      cpu::reduce_rows(ops[k], a.data(), c.rows, c.cols, want_rows[k].data());
      want_cols[k].resize(static_cast<std::size_t>(groups * c.cols));
      cpu::reduce_col_groups(ops[k], a.data(), c.rows, c.cols, want_cols[k].data());
    }
    // Each op's slot of the fused results against the CPU's pieces.
    const auto check_slots = [&](const std::vector<std::vector<double>>& want, std::int64_t stride,
                                 const char* what) {
      cuda::synchronize(s);
      for (std::size_t k = 0; k < ops.size(); ++k) {
        std::vector<double> got(want[k].size());
        cuda::copy(got.data(), dout.as<double>() + cuda::reduce_fused_slot(ops, ops[k]) * stride,
                   got.size() * 8);
        ASSERT_EQ(test::first_difference(got, want[k]), -1) << what << ", " << op_name(ops[k]);
      }
    };
    cuda::reduce_rows_fused(s, ops, dtype_of<T>, dev.data(), c.rows, c.cols, c.cols,
                            dout.as<double>(), row_stride);
    check_slots(want_rows, row_stride, "reduce_rows_fused");
    cuda::reduce_col_groups_fused(s, ops, dtype_of<T>, dev.data(), c.rows, c.cols, c.cols,
                                  dout.as<double>(), col_stride);
    check_slots(want_cols, col_stride, "reduce_col_groups_fused");
    // The engine, on a device block and on a host block (streamed through the GPU).
    for (Memory memory : {Memory::Device, Memory::Host}) {
      auto engine = make_cuda_reduce_engine({dtype_of<T>, memory});
      const void* block =
          memory == Memory::Device ? dev.data() : static_cast<const void*>(a.data());
      std::vector<std::vector<double>> got_rows(ops.size()), got_cols(ops.size());
      std::vector<double*> rows_out, cols_out;
      for (std::size_t k = 0; k < ops.size(); ++k) {
        got_rows[k].assign(want_rows[k].size(), -1.0);
        got_cols[k].assign(want_cols[k].size(), -1.0);
        rows_out.push_back(got_rows[k].data());
        cols_out.push_back(got_cols[k].data());
      }
      engine->reduce_rows_multi(ops, block, c.rows, c.cols, rows_out.data());
      engine->reduce_col_groups_multi(ops, block, c.rows, c.cols, cols_out.data());
      for (std::size_t k = 0; k < ops.size(); ++k) {
        ASSERT_EQ(test::first_difference(got_rows[k], want_rows[k]), -1)
            << "engine rows, " << op_name(ops[k]) << (memory == Memory::Host ? ", host" : "");
        ASSERT_EQ(test::first_difference(got_cols[k], want_cols[k]), -1)
            << "engine cols, " << op_name(ops[k]) << (memory == Memory::Host ? ", host" : "");
      }
      // Partials kept by the engine and folded there, continuing a running fold (the state a
      // distributed chain receives: closed super-blocks and the open one) from global blocks
      // that start, continue or cross super-blocks, for all ops and for one (the single-op
      // kernel).
      const auto start =
          test::random_vector<double>(static_cast<std::size_t>(2 * c.cols), seed + 1);
      for (const std::vector<Op>& kept : {ops, std::vector<Op>{Op::Norm2}}) {
        engine->keep_col_groups_multi(kept, block, c.rows, c.cols);
        for (std::size_t k = 0; k < kept.size(); ++k) {
          const auto want_k =
              static_cast<std::size_t>(std::find(ops.begin(), ops.end(), kept[k]) - ops.begin());
          for (const std::int64_t first :
               {std::int64_t{0}, kReduceSuperBlocks - 1, 3 * kReduceSuperBlocks - 5}) {
            std::vector<double> got = start, want = start;
            engine->fold_kept_col_groups(k, got.data(), got.data() + c.cols, first);
            cpu::fold_partials(kept[k], want.data(), want.data() + c.cols, first,
                               want_cols[want_k].data(), groups, c.cols);
            ASSERT_EQ(test::first_difference(got, want), -1)
                << "kept cols from block " << first << ", " << op_name(kept[k])
                << (memory == Memory::Host ? ", host" : "");
          }
        }
      }
    }
  }
}

// The Sum family on the large prime-sided shape (one rank: time), all three axes.
TYPED_TEST(CudaReduce, LargePrimeShapeSumFamily) {
  TESSERA_REQUIRE_GPU();
  if (test::world_rank() != 0)
    GTEST_SKIP() << "rank 0 only";
  using T = TypeParam;
  const std::int64_t rows = 16411, cols = 16363;
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  const auto n = static_cast<std::size_t>(rows * cols);
  const auto a = test::random_vector<T>(n, seed);
  cuda::StreamPool pool(1);
  cuda::ReduceWorkspace ws;
  cuda::DeviceBuffer dev(n * sizeof(T)), out(8 * static_cast<std::size_t>(rows + cols));
  cuda::copy(dev.data(), a.data(), n * sizeof(T));
  for (Axis axis : kAxes)
    for (Op op : {Op::Sum, Op::Norm2}) {
      SCOPED_TRACE(::testing::Message() << op_name(op) << " over " << axis_name(axis));
      // The reference walks columns with a stride of a whole row: at this size the CPU
      // backend's pieces (tested against it) give the Cols values instead.
      std::vector<double> want;
      if (axis == Axis::Cols) {
        const std::int64_t groups = (rows + kReduceBlockRows - 1) / kReduceBlockRows;
        std::vector<double> parts(static_cast<std::size_t>(groups * cols));
        cpu::reduce_col_groups(op, a.data(), rows, cols, parts.data());
        want.assign(static_cast<std::size_t>(cols), identity(op));
        for (std::int64_t g = 0; g < groups; ++g)
          for (std::int64_t j = 0; j < cols; ++j)
            want[j] = combine(op, want[j], parts[g * cols + j]);
        for (auto& v : want)
          v = finalize(op, v, static_cast<double>(rows));
      } else {
        want = reference::reduce(op, axis, a.data(), rows, cols);
      }
      ws.reserve(pool[0], axis, rows, cols);
      cuda::reduce(pool[0], op, axis, dtype_of<T>, dev.data(), rows, cols, cols, out.as<double>(),
                   ws);
      std::vector<double> got(result_size(axis, rows, cols));
      cuda::synchronize(pool[0]);
      cuda::copy(got.data(), out.data(), got.size() * 8);
      const std::int64_t at = test::first_difference(got, want);
      ASSERT_EQ(at, -1) << "GPU " << got[at] << " reference " << want[at];
    }
}

// One f64 matrix through ReducePlan on the CUDA backend (device- and host-resident blocks) and
// on the CPU backend, along axis: the same bits for every op. `check_reference`: and the same
// as the serial reference.
void check_norm2_plans(const std::vector<double>& a, Case s, Axis axis, const std::vector<Op>& ops,
                       bool check_reference) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const BlockDistribution dist({s.rows, s.cols}, size);
  const auto n = static_cast<std::size_t>(dist.local_size(rank));
  const double* block = a.data() + dist.begin(rank) * s.cols;
  cuda::DeviceBuffer dev(n * sizeof(double) + 16);
  cuda::copy(dev.data(), block, n * sizeof(double));
  ReducePlan cpu(dist, DType::f64, MPI_COMM_WORLD, Backend::Cpu, ops, axis);
  const ReduceResult want = cpu.execute(block);
  for (Memory memory : {Memory::Device, Memory::Host}) {
    SCOPED_TRACE(memory == Memory::Device ? "device block" : "host block");
    ReduceOptions opt;
    opt.memory = memory;
    ReducePlan gpu(dist, DType::f64, MPI_COMM_WORLD, Backend::Cuda, ops, axis, opt);
    const ReduceResult got = gpu.execute(memory == Memory::Device ? dev.data() : block);
    for (Op op : ops) {
      const std::int64_t at = test::first_difference(got[op], want[op]);
      ASSERT_EQ(at, -1) << op_name(op) << ": CUDA " << got[op][at] << " CPU " << want[op][at];
    }
  }
  if (check_reference) {
    const auto ref = reference::reduce(Op::Norm2, axis, a.data(), s.rows, s.cols);
    const std::int64_t at = test::first_difference(want[Op::Norm2], ref);
    ASSERT_EQ(at, -1) << "norm2: plan " << want[Op::Norm2][at] << " reference " << ref[at];
  }
  const auto accurate = test::accurate_norms(axis, a.data(), s.rows, s.cols);
  for (std::size_t k = 0; k < accurate.size(); ++k)
    ASSERT_TRUE(test::close_norm(want[Op::Norm2][k], accurate[k],
                                 test::vector_length(axis, s.rows, s.cols)))
        << "norm2 " << k << " is " << want[Op::Norm2][k] << ", accurately " << accurate[k];
}

// Sums of squares that overflow or underflow (tests/norm2_test_support.hpp): the rescued norms
// of the CUDA backend are the CPU backend's, for every op at once and for Norm2 alone (the
// rescue then takes M from the GPU's NormInf kernel).
TEST(CudaReduceNorm2Rescue, PlansMatchTheCpuBackendBitForBit) {
  TESSERA_REQUIRE_GPU();
  const std::vector<Op> all = {Op::Sum,   Op::Min,   Op::Max,    Op::Mean,
                               Op::Norm1, Op::Norm2, Op::NormInf};
  for (const auto& c : test::extreme_cases())
    for (Case s : {Case{1, 1}, Case{130, 7}, Case{191, 300}}) {
      SCOPED_TRACE(::testing::Message() << c.name << ", " << s.rows << "x" << s.cols);
      const auto a = test::extreme_matrix(c, s.rows, s.cols);
      for (Axis axis : kAxes) {
        SCOPED_TRACE(axis_name(axis));
        check_norm2_plans(a, s, axis, all, true);
        check_norm2_plans(a, s, axis, {Op::Norm2}, true);
      }
    }
}

// A device block larger than the rescue's host pieces (mpi/norm2_rescue.hpp) goes to the host in
// several of them; the sums continue across pieces in the canonical order.
TEST(CudaReduceNorm2Rescue, LargeDeviceBlocksInPieces) {
  TESSERA_REQUIRE_GPU();
  const Case s{2100, 1100}; // 18 MB of f64: more than one 16 MiB piece on one rank
  for (const auto& c : test::extreme_cases()) {
    if (c.name != "huge and tiny mixed" &&
        c.name != "a tiny column and a huge column among normal ones")
      continue;
    SCOPED_TRACE(c.name);
    const auto a = test::extreme_matrix(c, s.rows, s.cols);
    for (Axis axis : kAxes) {
      SCOPED_TRACE(axis_name(axis));
      check_norm2_plans(a, s, axis, {Op::Norm2}, false);
    }
  }
}

TEST(CudaReduceArgs, RejectsComplexDataAndShortWorkspace) {
  TESSERA_REQUIRE_GPU();
  cuda::DeviceBuffer a(1024), out(64);
  cuda::ReduceWorkspace ws;
  EXPECT_THROW(cuda::reduce(nullptr, Op::Sum, Axis::All, DType::c64, a.data(), 2, 2, 2,
                            out.as<double>(), ws),
               InputError);
  EXPECT_THROW(cuda::reduce(nullptr, Op::Sum, Axis::All, DType::f32, a.data(), 8, 8, 8,
                            out.as<double>(), ws),
               InputError);
  EXPECT_THROW(cuda::reduce(nullptr, Op::Sum, Axis::Rows, DType::f32, a.data(), 8, 8, 7,
                            out.as<double>(), ws),
               InputError);
}

} // namespace
} // namespace tessera
