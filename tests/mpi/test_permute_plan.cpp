// The distributed permutation of dimensions against a serial nested-index reference, byte for
// byte on random bytes: ranks 1 to 8, every permutation of ranks 2 and 3 and some of ranks 4 to
// 8, awkward shapes (lengths of 1 and 0, primes, outermost dimensions shorter than the rank
// count), every element size, the large-message path, sub-communicators, repeated executes, and
// the plan's errors (raised on every rank together).
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <complex>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "../mpi_test_support.hpp"
#include "../permute_test_support.hpp"
#include "core/block_distribution.hpp"
#include "core/error.hpp"
#include "mpi/permute_plan.hpp"

namespace tessera {
namespace {

using ShapeN = std::vector<std::int64_t>;
using tessera::test::all_permutations;
using tessera::test::Axes;
using test::rank_of;
using test::size_of;

std::int64_t elements_of(const ShapeN& shape) {
  std::int64_t n = 1;
  for (const std::int64_t l : shape)
    n *= l;
  return n;
}

// A fresh seed from rank 0, the same on every rank.
std::uint64_t shared_seed() {
  std::uint64_t seed = rank_of() == 0 ? std::random_device{}() : 0;
  MPI_Bcast(&seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  return seed;
}

// The whole global array as bytes, the same on every rank for the same seed.
std::vector<unsigned char> random_bytes(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<unsigned char> v(n);
  for (auto& b : v)
    b = static_cast<unsigned char>(rng() >> 32);
  return v;
}

// out[j_0 … j_{r-1}] = in[i_0 … i_{r-1}] with j_k = i_{axes[k]}: every input index visited by
// nested counting, its output offset computed from the output's row-major strides.
std::vector<unsigned char> reference_permute(const std::vector<unsigned char>& in,
                                             std::size_t esize, const ShapeN& shape,
                                             const Axes& axes) {
  const std::size_t rank = shape.size();
  ShapeN out_shape(rank), out_stride(rank, 1), stride_of_input_dim(rank, 0);
  for (std::size_t k = 0; k < rank; ++k)
    out_shape[k] = shape[static_cast<std::size_t>(axes[k])];
  for (std::size_t k = rank - 1; k > 0; --k)
    out_stride[k - 1] = out_stride[k] * out_shape[k];
  for (std::size_t k = 0; k < rank; ++k)
    stride_of_input_dim[static_cast<std::size_t>(axes[k])] = out_stride[k];
  std::vector<unsigned char> out(in.size());
  const std::int64_t n = elements_of(shape);
  ShapeN index(rank, 0);
  for (std::int64_t i = 0; i < n; ++i) {
    std::int64_t o = 0;
    for (std::size_t d = 0; d < rank; ++d)
      o += index[d] * stride_of_input_dim[d];
    std::memcpy(out.data() + static_cast<std::size_t>(o) * esize,
                in.data() + static_cast<std::size_t>(i) * esize, esize);
    for (std::size_t d = rank; d-- > 0;) { // the next input index, the last dimension fastest
      if (++index[d] < shape[d])
        break;
      index[d] = 0;
    }
  }
  return out;
}

std::string describe(const ShapeN& shape, const Axes& axes, DType t, MPI_Comm comm) {
  return "shape " + ::testing::PrintToString(shape) + " axes " + ::testing::PrintToString(axes) +
         " " + std::string(dtype_name(t)) + " on " + std::to_string(size_of(comm)) + " ranks";
}

// Every rank's output block equals its rows of the reference, byte for byte; executed twice on
// different data, as a plan is meant to be.
template <class T>
void expect_permuted(const ShapeN& shape, const Axes& axes, MPI_Comm comm = MPI_COMM_WORLD,
                     PermuteOptions options = {}) {
  const DType t = dtype_of<T>;
  const std::uint64_t seed = shared_seed();
  SCOPED_TRACE(describe(shape, axes, t, comm) + " seed " + std::to_string(seed));
  const int rank = rank_of(comm), nranks = size_of(comm);
  PermutePlan plan(shape, axes, t, comm, Backend::Cpu, options);
  ASSERT_EQ(plan.input_shape(), shape);
  const PermuteBlock& ib = plan.input_block();
  const PermuteBlock& ob = plan.output_block();
  const BlockDistribution din({shape[0], 1}, nranks);
  const BlockDistribution dout({plan.output_shape()[0], 1}, nranks);
  EXPECT_EQ(ib.begin, din.begin(rank));
  EXPECT_EQ(ib.length, din.rows(rank));
  EXPECT_EQ(ob.begin, dout.begin(rank));
  EXPECT_EQ(ob.length, dout.rows(rank));
  EXPECT_EQ(ib.elements, elements_of(ib.shape));
  EXPECT_EQ(ob.elements, elements_of(ob.shape));
  const std::size_t esize = sizeof(T);
  const auto n = static_cast<std::size_t>(elements_of(shape));
  const auto in_row = shape[0] == 0 ? 0 : n / static_cast<std::size_t>(shape[0]) * esize;
  const std::int64_t n_out = plan.output_shape()[0];
  const auto out_row = n_out == 0 ? 0 : n / static_cast<std::size_t>(n_out) * esize;
  for (int round = 0; round < 2; ++round) {
    const std::vector<unsigned char> global = random_bytes(n * esize, seed + round);
    const std::vector<unsigned char> want = reference_permute(global, esize, shape, axes);
    // Blocks one element longer than needed, so that an empty block is not a null pointer.
    std::vector<T> in(static_cast<std::size_t>(ib.elements) + 1);
    std::vector<T> out(static_cast<std::size_t>(ob.elements) + 1);
    if (ib.elements > 0) // an empty matrix's vectors hold no pointer at all
      std::memcpy(in.data(), global.data() + static_cast<std::size_t>(ib.begin) * in_row,
                  static_cast<std::size_t>(ib.elements) * esize);
    std::memset(static_cast<void*>(out.data()), 0xA5, out.size() * esize);
    plan.execute(in.data(), out.data());
    if (ob.elements > 0) {
      const unsigned char* expect = want.data() + static_cast<std::size_t>(ob.begin) * out_row;
      ASSERT_EQ(std::memcmp(out.data(), expect, static_cast<std::size_t>(ob.elements) * esize), 0)
          << "rank " << rank << ", round " << round;
    }
    // Nothing written past the block.
    const std::vector<unsigned char> tail(esize, 0xA5);
    ASSERT_EQ(std::memcmp(out.data() + ob.elements, tail.data(), esize), 0);
  }
}

TEST(PermutePlan, EveryPermutationOfRanksTwoAndThree) {
  // Primes, a length of 1 in each place, and outermost dimensions shorter than the rank count
  // (some ranks hold nothing of the input or of the output).
  const std::vector<ShapeN> shapes3 = {{5, 3, 7}, {1, 4, 3}, {3, 1, 5},
                                       {6, 5, 1}, {2, 7, 3}, {3, 2, 11}};
  for (const ShapeN& shape : shapes3)
    for (const Axes& axes : all_permutations(3))
      expect_permuted<double>(shape, axes);
  for (const ShapeN& shape : std::vector<ShapeN>{{7, 5}, {1, 9}, {9, 1}, {2, 3}})
    for (const Axes& axes : all_permutations(2))
      expect_permuted<float>(shape, axes);
}

TEST(PermutePlan, RanksOneAndFourToEight) {
  expect_permuted<double>({13}, {0});
  expect_permuted<double>({1}, {0});
  for (const Axes& axes : all_permutations(4))
    expect_permuted<std::complex<double>>({3, 2, 5, 2}, axes);
  expect_permuted<double>({2, 3, 1, 5, 3}, {4, 2, 0, 3, 1});
  expect_permuted<double>({5, 2, 3, 3, 2}, {1, 0, 4, 3, 2});
  expect_permuted<double>({3, 4, 2, 3, 2}, {0, 4, 3, 2, 1});
  expect_permuted<float>({2, 3, 2, 2, 3, 2}, {5, 3, 1, 0, 2, 4});
  expect_permuted<float>({2, 2, 3, 1, 2, 2, 3}, {6, 5, 4, 3, 2, 1, 0});
  expect_permuted<std::uint8_t>({2, 1, 2, 3, 2, 1, 2, 3}, {7, 0, 6, 1, 5, 2, 4, 3});
  // Random permutations of ranks 4 to 8, the same on every rank.
  std::mt19937_64 rng(shared_seed());
  for (int r = 4; r <= 8; ++r)
    for (int trial = 0; trial < 3; ++trial) {
      Axes axes(static_cast<std::size_t>(r));
      std::iota(axes.begin(), axes.end(), 0);
      std::shuffle(axes.begin(), axes.end(), rng);
      ShapeN shape(static_cast<std::size_t>(r));
      for (auto& l : shape)
        l = 1 + static_cast<std::int64_t>(rng() % (r <= 5 ? 4 : 2)) + (r <= 5 ? 0 : 1);
      expect_permuted<double>(shape, axes);
    }
}

TEST(PermutePlan, EveryElementSize) {
  const ShapeN shape = {4, 3, 5};
  for (const Axes& axes : {Axes{1, 2, 0}, Axes{2, 0, 1}, Axes{0, 2, 1}}) {
    expect_permuted<std::int8_t>(shape, axes);
    expect_permuted<std::uint8_t>(shape, axes);
    expect_permuted<std::int16_t>(shape, axes);
    expect_permuted<std::uint16_t>(shape, axes);
    expect_permuted<float>(shape, axes);
    expect_permuted<std::int32_t>(shape, axes);
    expect_permuted<double>(shape, axes);
    expect_permuted<std::uint64_t>(shape, axes);
    expect_permuted<std::complex<float>>(shape, axes);
    expect_permuted<std::complex<double>>(shape, axes);
  }
}

TEST(PermutePlan, EmptyArraysAndMoreRanksThanIndices) {
  expect_permuted<double>({0, 3, 4}, {2, 0, 1});
  expect_permuted<double>({3, 0, 4}, {1, 2, 0});
  expect_permuted<double>({3, 4, 0}, {2, 1, 0});
  // One index along each outermost dimension: a single rank holds all of input or output.
  expect_permuted<double>({1, 6, 1}, {2, 1, 0});
  expect_permuted<double>({1, 3, 4}, {1, 2, 0});
  expect_permuted<double>({3, 4, 1}, {2, 0, 1});
}

TEST(PermutePlan, LargerArrays) {
  // Large enough that the local kernel takes its tuned path and the placement its long rows.
  expect_permuted<double>({37, 41, 43}, {2, 0, 1});
  expect_permuted<float>({64, 3, 1031}, {2, 1, 0});
  expect_permuted<std::int16_t>({29, 257, 13}, {1, 0, 2});
}

TEST(PermutePlan, MessagesLongerThanTheLimitTravelAsDerivedTypes) {
  const PermuteOptions small{.message_limit = 3};
  expect_permuted<double>({5, 7, 3}, {1, 2, 0}, MPI_COMM_WORLD, small);
  expect_permuted<std::complex<double>>({6, 4, 5}, {2, 0, 1}, MPI_COMM_WORLD, small);
  expect_permuted<std::uint8_t>({7, 9, 2}, {2, 1, 0}, MPI_COMM_WORLD,
                                PermuteOptions{.message_limit = 2});
}

TEST(PermutePlan, SubCommunicators) {
  // Ranks split in two groups of different sizes, each permuting its own array.
  MPI_Comm half = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, rank_of() % 2, rank_of(), &half);
  expect_permuted<double>({7, 3, 5}, {2, 0, 1}, half);
  expect_permuted<std::int32_t>({4, 5, 2, 3}, {3, 1, 0, 2}, half);
  MPI_Comm_free(&half);
  expect_permuted<double>({5, 4, 3}, {1, 0, 2}, MPI_COMM_SELF);
}

TEST(PermutePlan, ExchangesOnlyWhenTheOutermostDimensionMoves) {
  const bool peers = size_of() > 1;
  EXPECT_FALSE(
      PermutePlan({4, 5, 6}, {0, 2, 1}, DType::f64, MPI_COMM_WORLD, Backend::Cpu).exchanges());
  EXPECT_EQ(PermutePlan({4, 5, 6}, {1, 0, 2}, DType::f64, MPI_COMM_WORLD, Backend::Cpu).exchanges(),
            peers);
  PermutePlan plan({4, 5, 6}, {2, 0, 1}, DType::f64, MPI_COMM_WORLD);
  EXPECT_EQ(plan.output_shape(), (ShapeN{6, 4, 5}));
  EXPECT_EQ(plan.axes(), (Axes{2, 0, 1}));
  EXPECT_NE(plan.backend(), Backend::Auto);
  std::int64_t in_total = 0, out_total = 0;
  for (int r = 0; r < size_of(); ++r) {
    in_total += plan.input_block(r).length;
    out_total += plan.output_block(r).length;
    EXPECT_EQ(plan.output_block(r).shape, (ShapeN{plan.output_block(r).length, 4, 5}));
  }
  EXPECT_EQ(in_total, 4);
  EXPECT_EQ(out_total, 6);
  EXPECT_THROW((void)plan.input_block(size_of()), InputError);
}

// `call` must throw InputError on every rank, the message holding `what`.
template <class F>
void expect_input_error_everywhere(const std::string& what, F&& call) {
  try {
    call();
    ADD_FAILURE() << "no error on rank " << rank_of() << " (expected: " << what << ")";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
  }
}

TEST(PermutePlan, BadPermutationsRaiseOnEveryRank) {
  const auto make = [](ShapeN s, Axes a) {
    return [s, a] { PermutePlan p(s, a, DType::f64, MPI_COMM_WORLD, Backend::Cpu); };
  };
  expect_input_error_everywhere("axis 1 is given twice", make({2, 3}, {1, 1}));
  expect_input_error_everywhere("axis 3 is outside 0..2", make({2, 3, 4}, {0, 1, 3}));
  expect_input_error_everywhere("2 axes given for an array of rank 3", make({2, 3, 4}, {0, 1}));
  expect_input_error_everywhere("rank 1 to 8, not 0", make({}, {}));
  expect_input_error_everywhere("rank 1 to 8, not 9",
                                make(ShapeN(9, 1), Axes{0, 1, 2, 3, 4, 5, 6, 7, 8}));
  expect_input_error_everywhere("negative dimension length", make({2, -3}, {1, 0}));
  expect_input_error_everywhere("too large to address",
                                make({std::int64_t{1} << 40, std::int64_t{1} << 30}, {1, 0}));
  // Only the last rank is wrong: every rank raises, the others naming it.
  const int bad = size_of() - 1;
  expect_input_error_everywhere(
      rank_of() == bad ? "axis 0 is given twice" : "rank " + std::to_string(bad) + ": ", [&] {
        PermutePlan p({2, 3, 4}, rank_of() == bad ? Axes{0, 0, 1} : Axes{2, 1, 0}, DType::f64,
                      MPI_COMM_WORLD, Backend::Cpu);
      });
}

TEST(PermutePlan, RanksThatDisagreeRaiseOnEveryRank) {
  if (size_of() == 1)
    GTEST_SKIP() << "needs two ranks";
  const bool last = rank_of() == size_of() - 1;
  expect_input_error_everywhere("different shapes", [&] {
    PermutePlan p({4, last ? 6 : 5, 3}, {2, 0, 1}, DType::f64, MPI_COMM_WORLD, Backend::Cpu);
  });
  expect_input_error_everywhere("different axes", [&] {
    PermutePlan p({4, 5, 3}, last ? Axes{2, 1, 0} : Axes{2, 0, 1}, DType::f64, MPI_COMM_WORLD,
                  Backend::Cpu);
  });
  expect_input_error_everywhere("different dtypes", [&] {
    PermutePlan p({4, 5, 3}, {2, 0, 1}, last ? DType::f32 : DType::f64, MPI_COMM_WORLD,
                  Backend::Cpu);
  });
  expect_input_error_everywhere("different ranks", [&] {
    PermutePlan p(last ? ShapeN{4, 15} : ShapeN{4, 5, 3}, last ? Axes{1, 0} : Axes{2, 0, 1},
                  DType::f64, MPI_COMM_WORLD, Backend::Cpu);
  });
}

TEST(PermutePlan, BadExecuteArgumentsRaiseOnEveryRank) {
  PermutePlan plan({6, 5, 4}, {2, 1, 0}, DType::f64, MPI_COMM_WORLD, Backend::Cpu);
  std::vector<double> in(static_cast<std::size_t>(plan.input_block().elements) + 1, 1.0);
  std::vector<double> out(static_cast<std::size_t>(plan.output_block().elements) + 1);
  const int bad = size_of() - 1;
  const bool mine = rank_of() == bad;
  const std::string others = size_of() > 1 ? "rank " + std::to_string(bad) + ": " : "";
  std::vector<float> in32(in.size()), out32(out.size());
  expect_input_error_everywhere(mine ? "built for f64 data but execute() got f32" : others, [&] {
    if (mine)
      plan.execute(in32.data(), out32.data());
    else
      plan.execute(in.data(), out.data());
  });
  // The last rank holds part of both blocks (6 and 4 indices over the 1 to 4 ranks the test
  // runs on).
  expect_input_error_everywhere(mine ? "null input block" : others,
                                [&] { plan.execute(mine ? nullptr : in.data(), out.data()); });
  expect_input_error_everywhere(mine ? "null output block" : others,
                                [&] { plan.execute(in.data(), mine ? nullptr : out.data()); });
  std::vector<double> both(in.size() + out.size());
  expect_input_error_everywhere(mine ? "overlap" : others, [&] {
    if (mine)
      plan.execute(both.data(), both.data() + 1);
    else
      plan.execute(in.data(), out.data());
  });
  // Device memory needs the CUDA backend.
  expect_input_error_everywhere("device pointers need the CUDA backend", [] {
    PermutePlan p({3, 4}, {1, 0}, DType::f64, MPI_COMM_WORLD, Backend::Cpu,
                  {.memory = Memory::Device});
  });
  // Nobody was left inside the exchange: the plan still works.
  EXPECT_NO_THROW(plan.execute(in.data(), out.data()));
}

} // namespace
} // namespace tessera
