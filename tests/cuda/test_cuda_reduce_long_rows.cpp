// GPU reductions of matrices with few long rows (the staged row kernel on Hopper GPUs, a warp
// per row elsewhere) against the serial reference, bit for bit: every op and axis, one op and
// several fused, rows starting at every element offset within a 16-byte vector, and buffers
// that end exactly at the matrix's last element (so that compute-sanitizer sees any read past
// it).
#include <gtest/gtest.h>

#include "cpu/reference.hpp"
#include "cuda/buffer.hpp"
#include "cuda/reduce.hpp"
#include "cuda/stream.hpp"
#include "cuda_test_util.hpp"
#include "reduce_test_support.hpp"

namespace tessera {
namespace {

using test::kAxes;
using test::kOps;

struct Layout {
  std::int64_t rows, cols, pad, off;
  std::int64_t ld() const { return cols + pad; }
  // Elements from the buffer's start to the matrix's last element, inclusive: nothing after.
  std::size_t extent() const { return static_cast<std::size_t>(off + (rows - 1) * ld() + cols); }
};

// Every op and axis of one layout, one op at a time and all seven fused, against the reference.
template <class T>
void check_layout(const Layout& l, cuda::ReduceWorkspace& ws, CUstream_st* s) {
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE(::testing::Message() << l.rows << "x" << l.cols << " pad " << l.pad << " offset "
                                    << l.off << " seed " << seed);
  const auto stored = test::random_vector<T>(l.extent(), seed);
  const auto a = test::dense(stored, l.rows, l.cols, l.ld(), l.off);
  cuda::DeviceBuffer dev(l.extent() * sizeof(T));
  cuda::copy(dev.data(), stored.data(), dev.bytes());
  const T* data = dev.as<T>() + l.off;
  for (Axis axis : kAxes) {
    SCOPED_TRACE(::testing::Message() << "over " << axis_name(axis));
    const std::size_t len = test::result_size(axis, l.rows, l.cols);
    cuda::DeviceBuffer out(8 * len * std::size(kOps));
    std::vector<double*> outs;
    for (std::size_t k = 0; k < std::size(kOps); ++k)
      outs.push_back(out.as<double>() + k * len);
    const auto compare = [&](Op op, const double* result) {
      std::vector<double> got(len);
      cuda::synchronize(s);
      cuda::copy(got.data(), result, len * sizeof(double));
      const auto want = reference::reduce(op, axis, a.data(), l.rows, l.cols);
      const std::int64_t at = test::first_difference(got, want);
      ASSERT_EQ(at, -1) << op_name(op) << ": GPU " << got[at] << " reference " << want[at];
    };
    for (Op op : kOps) {
      ws.reserve(s, axis, l.rows, l.cols);
      cuda::reduce(s, op, axis, dtype_of<T>, data, l.rows, l.cols, l.ld(), outs[0], ws);
      compare(op, outs[0]);
    }
    const std::vector<Op> all(std::begin(kOps), std::end(kOps));
    ws.reserve(s, axis, l.rows, l.cols, static_cast<int>(all.size()));
    cuda::reduce_fused(s, all, axis, dtype_of<T>, data, l.rows, l.cols, l.ld(), outs.data(), ws);
    for (std::size_t k = 0; k < all.size(); ++k)
      compare(all[k], outs[k]);
  }
}

template <class T>
class CudaReduceLongRows : public ::testing::Test {};
using Types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CudaReduceLongRows, Types);

// Lengths around the staged kernel's stages (32 chunks of 128 columns) and its smallest row
// length (4096), primes, a row count that is not a multiple of anything; every offset within a
// 16-byte vector, with and without padding between rows.
TYPED_TEST(CudaReduceLongRows, EveryOpAxisAndAlignmentBitForBit) {
  TESSERA_REQUIRE_GPU();
  cuda::StreamPool pool(1);
  cuda::ReduceWorkspace ws;
  const std::pair<std::int64_t, std::int64_t> shapes[] = {{1, 4096},   {2, 4099},  {3, 8191},
                                                          {17, 12289}, {5, 40009}, {1, 131101}};
  for (const auto& [rows, cols] : shapes)
    for (std::int64_t off : {0, 1, 2, 3})
      for (std::int64_t pad : {0, 5})
        check_layout<TypeParam>({rows, cols, pad, off}, ws, pool[0]);
}

// One small misaligned case (what compute-sanitizer runs).
TEST(CudaReduceLongRowsKernels, OneForTheSanitizers) {
  TESSERA_REQUIRE_GPU();
  cuda::StreamPool pool(1);
  cuda::ReduceWorkspace ws;
  check_layout<float>({3, 4133, 1, 3}, ws, pool[0]);
  check_layout<double>({2, 4133, 0, 1}, ws, pool[0]);
}

} // namespace
} // namespace tessera
