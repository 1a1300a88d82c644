// The NCCL exchange of the distributed transpose (Exchange::Nccl) against the CPU plan, bit for
// bit, on random data, awkward shapes and all four element types, with device- and
// host-resident blocks. It needs one distinct GPU per rank and a build with NCCL: without them
// every rank skips (the decision is collective), except that ranks sharing a GPU check that
// asking for nccl is a clear error on every rank.
#include <gtest/gtest.h>

#include <complex>
#include <cstring>

#include "cuda/buffer.hpp"
#include "cuda_test_util.hpp"
#include "mpi/nccl_comm.hpp"
#include "mpi/transpose_plan.hpp"

namespace tessera {
namespace {

struct Shape2 {
  std::int64_t rows, cols;
};

using test::shared_seed;
using test::world_size;

// Collective: "" when the nccl exchange can run here, else why not (the same on every rank).
std::string nccl_skip_reason() {
  std::string why;
  if (!test::all_ranks_have_gpu(why))
    return "no GPU: " + why;
  test::bind_gpu();
  if (!mpi::nccl_compiled())
    return "this build has no NCCL (TESSERA_ENABLE_NCCL)";
  why = mpi::nccl_unavailable(MPI_COMM_WORLD);
  return why.empty() ? "" : "NCCL is unavailable: " + why;
}

#define TESSERA_REQUIRE_NCCL()                                                                     \
  do {                                                                                             \
    const std::string tessera_why_ = nccl_skip_reason();                                           \
    if (!tessera_why_.empty())                                                                     \
      GTEST_SKIP() << tessera_why_;                                                                \
  } while (false)

// This rank's rows of the transpose of a shared random matrix, by `backend`/`algo`.
template <class T>
std::vector<T> transpose_with(const std::vector<T>& a, Shape2 s, Backend backend, Exchange algo,
                              Memory memory, PhaseTimers* timers = nullptr,
                              bool column_major = false) {
  const int rank = test::world_rank();
  const BlockDistribution dist({s.rows, s.cols}, world_size());
  const auto n_in = static_cast<std::size_t>(dist.local_size(rank));
  const auto n_out = static_cast<std::size_t>(dist.transposed().local_size(rank));
  const T* in = a.data() + dist.begin(rank) * s.cols;
  std::vector<T> out(n_out);
  TransposeOptions opt;
  opt.algorithm = algo;
  opt.memory = memory;
  opt.timers = timers;
  opt.column_major = column_major; // the same bytes, read as blocks stored by columns
  TransposePlan plan(dist, dtype_of<T>, MPI_COMM_WORLD, backend, opt);
  EXPECT_EQ(plan.backend(), backend);
  for (int round = 0; round < 2; ++round) { // a plan runs many times
    std::fill(out.begin(), out.end(), T{});
    if (memory == Memory::Device) {
      cuda::DeviceBuffer din(n_in * sizeof(T) + 16), dout(n_out * sizeof(T) + 16);
      cuda::copy(din.data(), in, n_in * sizeof(T));
      plan.execute(din.as<T>(), dout.as<T>());
      cuda::copy(out.data(), dout.data(), n_out * sizeof(T));
    } else {
      plan.execute(in, out.data());
    }
  }
  if (algo != Exchange::Auto) {
    EXPECT_EQ(plan.algorithm(), algo);
  }
  return out;
}

template <class T>
void check_nccl(Shape2 s, Memory memory, Exchange algo = Exchange::Nccl) {
  const std::uint64_t seed = shared_seed();
  SCOPED_TRACE(::testing::Message() << s.rows << "x" << s.cols << " " << dtype_name(dtype_of<T>)
                                    << (memory == Memory::Device ? " device" : " host") << " "
                                    << exchange_name(algo) << " seed " << seed);
  const auto a = test::random_vector<T>(static_cast<std::size_t>(s.rows * s.cols), seed);
  const auto want = transpose_with(a, s, Backend::Cpu, Exchange::Alltoallv, Memory::Host);
  const auto got = transpose_with(a, s, Backend::Cuda, algo, memory);
  ASSERT_EQ(got.size(), want.size());
  ASSERT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(T)), 0);
}

template <class T>
class CudaNcclTranspose : public ::testing::Test {};
using Types = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(CudaNcclTranspose, Types);

TYPED_TEST(CudaNcclTranspose, BitForBitWithTheCpuPlan) {
  TESSERA_REQUIRE_NCCL();
  for (Shape2 s : {Shape2{1, 1}, Shape2{1, 100}, Shape2{100, 1}, Shape2{31, 33}, Shape2{1000, 999},
                   Shape2{257, 4097}})
    for (Memory m : {Memory::Device, Memory::Host})
      check_nccl<TypeParam>(s, m);
}

// Column-major blocks: NCCL sends straight from the input and transposes on arrival.
TEST(CudaNccl, ColumnMajorBlocksMatchTheCpuPlan) {
  TESSERA_REQUIRE_NCCL();
  for (Shape2 s : {Shape2{1, 1}, Shape2{31, 33}, Shape2{257, 4097}})
    for (Memory m : {Memory::Device, Memory::Host}) {
      const auto a =
          test::random_vector<double>(static_cast<std::size_t>(s.rows * s.cols), shared_seed());
      const auto want =
          transpose_with(a, s, Backend::Cpu, Exchange::Alltoallv, Memory::Host, nullptr, true);
      const auto got = transpose_with(a, s, Backend::Cuda, Exchange::Nccl, m, nullptr, true);
      ASSERT_EQ(got.size(), want.size());
      EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(double)), 0)
          << s.rows << "x" << s.cols << (m == Memory::Device ? " device" : " host");
    }
}

// Auto times nccl with the others; whichever wins, the result is the same bits.
TEST(CudaNccl, AutoMatchesTheCpuPlan) {
  TESSERA_REQUIRE_NCCL();
  check_nccl<double>({1000, 999}, Memory::Device, Exchange::Auto);
  check_nccl<std::complex<float>>({257, 4097}, Memory::Host, Exchange::Auto);
}

TEST(CudaNccl, RecordsEveryPhase) {
  TESSERA_REQUIRE_NCCL();
  PhaseTimers timers;
  const auto a = test::random_vector<float>(64 * 48, shared_seed());
  transpose_with(a, {64, 48}, Backend::Cuda, Exchange::Nccl, Memory::Device, &timers);
  EXPECT_EQ(timers.phases().at("transpose.self").calls, 2);
  if (world_size() > 1) {
    for (const char* phase : {"transpose.pack", "transpose.exchange", "transpose.unpack"}) {
      EXPECT_EQ(timers.phases().at(phase).calls, 2) << phase;
    }
  }
}

// Ranks that share a GPU (more ranks than GPUs on a node): asking for nccl fails on every rank
// with a message that says why, instead of NCCL's "duplicate GPU" hang or abort.
TEST(CudaNccl, SharedGpuIsAClearErrorOnEveryRank) {
  std::string why;
  if (!test::all_ranks_have_gpu(why))
    GTEST_SKIP() << "no GPU: " << why;
  test::bind_gpu();
  if (!mpi::nccl_compiled())
    GTEST_SKIP() << "this build has no NCCL (TESSERA_ENABLE_NCCL)";
  why = mpi::nccl_unavailable(MPI_COMM_WORLD);
  if (why.empty())
    GTEST_SKIP() << "every rank has a GPU of its own";
  const BlockDistribution dist({10, 10}, world_size());
  try {
    TransposePlan plan(dist, DType::f64, MPI_COMM_WORLD, Backend::Cuda,
                       {.algorithm = Exchange::Nccl, .memory = Memory::Device});
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_TRUE(e.collective());
    EXPECT_NE(std::string(e.what()).find("share"), std::string::npos) << e.what();
  }
  // Auto leaves nccl out and still transposes.
  check_nccl<double>({31, 33}, Memory::Device, Exchange::Auto);
}

} // namespace
} // namespace tessera
