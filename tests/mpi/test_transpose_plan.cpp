// The distributed transpose against the serial reference: every dtype, every exchange
// algorithm, awkward shapes (1×1, 1×N, N×1, primes, more ranks than rows or columns), the
// large-message path, repeated executes, thread counts, and the plan's error handling.
#include <gtest/gtest.h>
#include <mpi.h>
#include <omp.h>

#include <algorithm>
#include <complex>
#include <random>
#include <string>
#include <vector>

#include "core/throw.hpp"
#include "cpu/reference.hpp"
#include "cuda/device.hpp"
#include "mpi/transpose_plan.hpp"

namespace {

using tessera::BlockDistribution;
using tessera::DType;
using tessera::Exchange;
using tessera::Shape;
using tessera::TransposeOptions;
using tessera::TransposePlan;

int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
int world_size() {
  int s = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

// A fresh seed from rank 0, the same on every rank.
unsigned shared_seed() {
  unsigned seed = world_rank() == 0 ? std::random_device{}() : 0u;
  MPI_Bcast(&seed, 1, MPI_UNSIGNED, 0, MPI_COMM_WORLD);
  return seed;
}

template <class T>
T random_value(std::mt19937_64& gen) {
  std::uniform_real_distribution<double> u(-1e3, 1e3);
  if constexpr (std::is_floating_point_v<T>)
    return static_cast<T>(u(gen));
  else {
    using R = typename T::value_type;
    const auto re = static_cast<R>(u(gen));
    return T(re, static_cast<R>(u(gen)));
  }
}

// The whole global matrix, the same on every rank.
template <class T>
std::vector<T> global_matrix(Shape s, unsigned seed) {
  std::mt19937_64 gen(seed);
  std::vector<T> a(static_cast<std::size_t>(s.size()));
  for (auto& x : a)
    x = random_value<T>(gen);
  return a;
}

// A global matrix (the same on every rank, from a fresh shared seed) and its serial transpose.
template <class T>
struct Case {
  Shape shape;
  unsigned seed;
  std::vector<T> a, at;
  explicit Case(Shape s) : shape(s), seed(shared_seed()), a(global_matrix<T>(s, seed)) {
    at.resize(a.size());
    tessera::reference::transpose(a.data(), at.data(), s.rows, s.cols);
  }
};

// Transposes the case's matrix with `options` and checks this rank's rows of the result against
// the serial reference, `executes` times with the same plan.
template <class T>
void check_transpose(const Case<T>& c, TransposeOptions options, int executes = 1) {
  const int rank = world_rank(), size = world_size();
  const Shape shape = c.shape;
  SCOPED_TRACE("shape " + shape.str() + ", dtype " +
               std::string(tessera::dtype_name(tessera::dtype_of<T>)) + ", exchange " +
               std::string(tessera::exchange_name(options.algorithm)) + ", seed " +
               std::to_string(c.seed) + ", ranks " + std::to_string(size) + ", threads " +
               std::to_string(omp_get_max_threads()));
  const BlockDistribution dist(shape, size);
  TransposePlan plan(dist, tessera::dtype_of<T>, MPI_COMM_WORLD, tessera::Backend::Cpu, options);
  const auto& od = plan.output_distribution();
  ASSERT_EQ(od.global(), shape.transposed());
  std::vector<T> in(c.a.begin() + dist.begin(rank) * shape.cols,
                    c.a.begin() + dist.end(rank) * shape.cols);
  for (int e = 0; e < executes; ++e) {
    std::vector<T> out(static_cast<std::size_t>(od.local_size(rank)), T(-7));
    plan.execute(in.data(), out.data());
    const T* expect = c.at.data() + od.begin(rank) * shape.rows;
    std::int64_t bad = 0, first = -1;
    for (std::size_t k = 0; k < out.size(); ++k)
      if (out[k] != expect[k]) {
        if (first < 0)
          first = static_cast<std::int64_t>(k);
        ++bad;
      }
    EXPECT_EQ(bad, 0) << "execute " << e << ": first mismatch at local element " << first
                      << " (local row " << (first >= 0 ? first / shape.rows : -1) << ")";
  }
  EXPECT_NE(plan.algorithm(), Exchange::Auto);
  EXPECT_EQ(plan.backend(), tessera::Backend::Cpu);
}

template <class T>
void check_transpose(Shape shape, TransposeOptions options, int executes = 1) {
  check_transpose(Case<T>(shape), options, executes);
}

const std::vector<Shape> kShapes = {{1, 1}, {1, 37}, {41, 1}, {17, 31},   {2, 5},
                                    {3, 1}, {5, 2},  {0, 4},  {1000, 999}};
// Test jobs run on one node, so the shared-memory exchange is available at every rank count.
const std::vector<Exchange> kExchanges = {Exchange::Alltoallv, Exchange::PairwiseP2P,
                                          Exchange::Pipelined, Exchange::SharedMemory,
                                          Exchange::Auto};

template <class T>
void all_shapes_and_exchanges() {
  for (const auto& shape : kShapes) {
    const Case<T> c(shape);
    for (auto ex : kExchanges)
      check_transpose(c, {.algorithm = ex});
  }
}

TEST(TransposePlan, F32) {
  all_shapes_and_exchanges<float>();
}
TEST(TransposePlan, F64) {
  all_shapes_and_exchanges<double>();
}
TEST(TransposePlan, C64) {
  all_shapes_and_exchanges<std::complex<float>>();
}
TEST(TransposePlan, C128) {
  all_shapes_and_exchanges<std::complex<double>>();
}

TEST(TransposePlan, MoreRanksThanRowsAndColumns) {
  const int size = world_size();
  for (auto ex : kExchanges) {
    check_transpose<double>({1, static_cast<std::int64_t>(size) + 2}, {.algorithm = ex});
    check_transpose<double>({static_cast<std::int64_t>(size) - 1, 1}, {.algorithm = ex});
    check_transpose<double>({2, 3}, {.algorithm = ex});
  }
}

// Segments longer than message_limit elements travel as derived datatypes, which is how
// messages of more than INT_MAX elements work; a small limit exercises that path cheaply.
TEST(TransposePlan, LargeMessagePath) {
  for (auto ex : kExchanges)
    for (std::int64_t limit : {2, 7, 1000}) {
      TransposeOptions o{.algorithm = ex};
      o.message_limit = limit;
      check_transpose<float>({17, 31}, o);
      check_transpose<std::complex<double>>({300, 299}, o);
    }
  TransposeOptions bad;
  bad.message_limit = 1;
  EXPECT_THROW(TransposePlan(BlockDistribution({4, 4}, world_size()), DType::f64, MPI_COMM_WORLD,
                             tessera::Backend::Cpu, bad),
               tessera::InputError);
}

TEST(TransposePlan, RepeatedExecutesAndThreadCounts) {
  const int saved = omp_get_max_threads();
  const Case<double> c({257, 130});
  for (int threads = 1; threads <= 3; ++threads) {
    omp_set_num_threads(threads);
    for (auto ex : kExchanges)
      check_transpose(c, {.algorithm = ex}, 2);
  }
  omp_set_num_threads(saved);
}

// The direct execute: inputs in the plan's node-shared buffer, read in place by every rank.
template <class T>
void check_direct(Shape shape) {
  const Case<T> c(shape);
  const int rank = world_rank(), size = world_size();
  SCOPED_TRACE("direct, shape " + shape.str() + ", seed " + std::to_string(c.seed) + ", ranks " +
               std::to_string(size));
  const BlockDistribution dist(shape, size);
  TransposePlan plan(dist, tessera::dtype_of<T>, MPI_COMM_WORLD, tessera::Backend::Cpu);
  T* in = static_cast<T*>(plan.input_buffer());
  ASSERT_TRUE(in != nullptr || dist.local_size(rank) == 0) << "no shared input on one node";
  std::copy(c.a.begin() + dist.begin(rank) * shape.cols, c.a.begin() + dist.end(rank) * shape.cols,
            in);
  const auto& od = plan.output_distribution();
  const T* expect = c.at.data() + od.begin(rank) * shape.rows;
  for (int e = 0; e < 2; ++e) {
    std::vector<T> out(static_cast<std::size_t>(od.local_size(rank)), T(-7));
    // First straight from the shared buffer, then from a private copy (the exchange path).
    if (e == 0) {
      plan.execute(in, out.data());
      if (size > 1) {
        EXPECT_EQ(plan.algorithm(), Exchange::SharedMemory);
      }
    } else {
      const std::vector<T> copy(in, in + dist.local_size(rank));
      plan.execute(copy.data(), out.data());
    }
    EXPECT_TRUE(std::equal(out.begin(), out.end(), expect)) << "execute " << e;
  }
}

TEST(TransposePlan, DirectFromSharedInput) {
  for (Shape s : {Shape{1, 1}, Shape{1, 37}, Shape{41, 1}, Shape{17, 31}, Shape{2, 5}, Shape{0, 3},
                  Shape{300, 299}}) {
    check_direct<float>(s);
    check_direct<std::complex<double>>(s);
  }
}

// Column-major blocks: this rank's rows of A stored by columns (N × m_r), and its rows of Aᵀ
// expected stored by columns (M × n_r); through the exchanges and through the shared input.
template <class T>
void check_column_major(const Case<T>& c, Exchange algorithm, bool shared_input) {
  const int rank = world_rank(), size = world_size();
  const Shape shape = c.shape;
  SCOPED_TRACE("column-major, shape " + shape.str() + ", exchange " +
               std::string(tessera::exchange_name(algorithm)) + (shared_input ? ", shared" : "") +
               ", seed " + std::to_string(c.seed) + ", ranks " + std::to_string(size));
  const BlockDistribution dist(shape, size);
  TransposePlan plan(dist, tessera::dtype_of<T>, MPI_COMM_WORLD, tessera::Backend::Cpu,
                     {.algorithm = algorithm, .column_major = true});
  const auto& od = plan.output_distribution();
  const std::int64_t m = dist.rows(rank), n = od.rows(rank);
  std::vector<T> own(static_cast<std::size_t>(m * shape.cols));
  tessera::reference::transpose(c.a.data() + dist.begin(rank) * shape.cols, own.data(), m,
                                shape.cols);
  T* in = own.data();
  if (shared_input) {
    in = static_cast<T*>(plan.input_buffer());
    ASSERT_TRUE(in != nullptr || own.empty()) << "no shared input on one node";
    std::copy(own.begin(), own.end(), in);
  }
  std::vector<T> expect(static_cast<std::size_t>(n * shape.rows));
  tessera::reference::transpose(c.at.data() + od.begin(rank) * shape.rows, expect.data(), n,
                                shape.rows);
  for (int e = 0; e < 2; ++e) {
    std::vector<T> out(expect.size(), T(-7));
    plan.execute(in, out.data());
    EXPECT_TRUE(std::equal(out.begin(), out.end(), expect.begin())) << "execute " << e;
  }
}

TEST(TransposePlan, ColumnMajorBlocks) {
  for (const auto& shape : kShapes) {
    const Case<double> c(shape);
    for (auto ex : kExchanges)
      check_column_major(c, ex, false);
    check_column_major(c, Exchange::Auto, true);
    const Case<std::complex<float>> z(shape);
    check_column_major(z, Exchange::Pipelined, false);
    check_column_major(z, Exchange::Auto, true);
  }
}

TEST(TransposePlan, RecordsPhasesAndBytes) {
  tessera::PhaseTimers timers;
  const Shape shape{64, 48};
  const BlockDistribution dist(shape, world_size());
  TransposePlan plan(dist, DType::f64, MPI_COMM_WORLD, tessera::Backend::Cpu,
                     {.algorithm = Exchange::PairwiseP2P, .timers = &timers});
  const int rank = world_rank();
  std::vector<double> in(static_cast<std::size_t>(dist.local_size(rank)), 1.0);
  std::vector<double> out(static_cast<std::size_t>(plan.output_distribution().local_size(rank)));
  plan.execute(in.data(), out.data());
  plan.execute(in.data(), out.data());
  EXPECT_EQ(timers.phases().at("transpose.self").calls, 2);
  if (world_size() > 1) {
    EXPECT_EQ(timers.phases().at("transpose.exchange").calls, 2);
    EXPECT_EQ(timers.phases().at("transpose.pack").calls, 2);
    EXPECT_EQ(timers.phases().at("transpose.unpack").calls, 2);
  }
  EXPECT_DOUBLE_EQ(plan.bytes_moved(),
                   8.0 * static_cast<double>(dist.local_size(rank) +
                                             plan.output_distribution().local_size(rank)));
}

TEST(TransposePlan, WrongElementTypeIsAnInputError) {
  const BlockDistribution dist({4, 4}, world_size());
  TransposePlan plan(dist, DType::f32, MPI_COMM_WORLD, tessera::Backend::Cpu);
  std::vector<double> in(16), out(16);
  EXPECT_THROW(plan.execute(in.data(), out.data()), tessera::InputError);
}

TEST(TransposePlan, DistributionOverOtherRankCountFailsOnEveryRank) {
  const BlockDistribution dist({10, 10}, world_size() + 1);
  try {
    TransposePlan plan(dist, DType::f64, MPI_COMM_WORLD, tessera::Backend::Cpu);
    ADD_FAILURE() << "no error";
  } catch (const tessera::InputError& e) {
    EXPECT_TRUE(e.collective());
    EXPECT_NE(std::string(e.what()).find("ranks"), std::string::npos) << e.what();
  }
}

TEST(TransposePlan, CudaWithoutDeviceFailsOnEveryRank) {
  int have = tessera::cuda::device_count() > 0 ? 1 : 0, any = 0;
  MPI_Allreduce(&have, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (any)
    GTEST_SKIP() << "a GPU is present";
  const BlockDistribution dist({10, 10}, world_size());
  try {
    TransposePlan plan(dist, DType::f64, MPI_COMM_WORLD, tessera::Backend::Cuda);
    ADD_FAILURE() << "no error";
  } catch (const tessera::InputError& e) {
    EXPECT_TRUE(e.collective());
    EXPECT_NE(std::string(e.what()).find("CUDA"), std::string::npos) << e.what();
  }
  // Auto falls back to the CPU.
  TransposePlan plan(dist, DType::f64, MPI_COMM_WORLD, tessera::Backend::Auto);
  EXPECT_EQ(plan.backend(), tessera::Backend::Cpu);
}

TEST(Exchange, NamesRoundTrip) {
  for (auto e : kExchanges)
    EXPECT_EQ(tessera::parse_exchange(tessera::exchange_name(e)), e);
  EXPECT_THROW(tessera::parse_exchange("bogus"), tessera::InputError);
}

} // namespace
