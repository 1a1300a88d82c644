// PermutePlan on the CUDA backend, with device- and host-resident blocks, against the serial
// reference (byte for byte): every element size, permutations that exchange and ones that do
// not, awkward shapes. Ranks share a GPU when there are more ranks than GPUs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "cpu/reference.hpp"
#include "cuda/buffer.hpp"
#include "cuda_test_util.hpp"
#include "mpi/permute_plan.hpp"

namespace tessera {
namespace {

using ShapeN = std::vector<std::int64_t>;
using Axes = std::vector<int>;

std::uint64_t shared_seed() {
  std::uint64_t seed = test::fresh_seed();
  MPI_Bcast(&seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  return seed;
}

void check_permute_plan(const ShapeN& shape, const Axes& axes, std::size_t esize, Memory memory) {
  const DType t = esize == 1   ? DType::u8
                  : esize == 2 ? DType::i16
                  : esize == 4 ? DType::f32
                  : esize == 8 ? DType::f64
                               : DType::c128;
  const std::uint64_t seed = shared_seed();
  SCOPED_TRACE(::testing::Message()
               << ::testing::PrintToString(shape) << " axes " << ::testing::PrintToString(axes)
               << " " << dtype_name(t) << (memory == Memory::Device ? " device" : " host")
               << " seed " << seed);
  std::int64_t n = 1;
  for (const std::int64_t l : shape)
    n *= l;
  test::Rng rng{seed};
  std::vector<unsigned char> a(static_cast<std::size_t>(n) * esize), want(a.size());
  for (auto& b : a)
    b = static_cast<unsigned char>(rng.next());
  reference::permute(a.data(), want.data(), esize, shape, axes);
  PermutePlan plan(shape, axes, t, MPI_COMM_WORLD, Backend::Cuda, {.memory = memory});
  EXPECT_EQ(plan.backend(), Backend::Cuda);
  const PermuteBlock& ib = plan.input_block();
  const PermuteBlock& ob = plan.output_block();
  const auto in_bytes = static_cast<std::size_t>(ib.elements) * esize;
  const auto out_bytes = static_cast<std::size_t>(ob.elements) * esize;
  const unsigned char* in =
      a.data() + static_cast<std::size_t>(ib.begin) *
                     (shape[0] ? a.size() / static_cast<std::size_t>(shape[0]) : 0);
  const std::int64_t n_out = plan.output_shape()[0];
  const unsigned char* expect =
      want.data() + static_cast<std::size_t>(ob.begin) *
                        (n_out ? want.size() / static_cast<std::size_t>(n_out) : 0);
  std::vector<unsigned char> out(out_bytes + 1);
  for (int round = 0; round < 2; ++round) { // a plan runs many times
    std::fill(out.begin(), out.end(), 0xA5);
    if (memory == Memory::Device) {
      cuda::DeviceBuffer din(in_bytes + 16), dout(out_bytes + 16);
      cuda::copy(din.data(), in, in_bytes);
      plan.execute(din.data(), dout.data());
      cuda::copy(out.data(), dout.data(), out_bytes);
    } else { // untyped: the bytes stand for elements of any size
      plan.execute(static_cast<const void*>(in), static_cast<void*>(out.data()));
    }
    ASSERT_EQ(std::memcmp(out.data(), expect, out_bytes), 0) << "round " << round;
  }
}

TEST(CudaPermutePlan, MatchesReference) {
  TESSERA_REQUIRE_GPU();
  const std::vector<std::pair<ShapeN, Axes>> cases = {
      {{5, 3, 7}, {2, 0, 1}}, {{5, 3, 7}, {1, 2, 0}},       {{5, 3, 7}, {0, 2, 1}},
      {{2, 9, 4}, {2, 1, 0}}, {{1, 4, 3}, {1, 0, 2}},       {{13}, {0}},
      {{6, 11}, {1, 0}},      {{3, 1, 4, 5}, {3, 1, 0, 2}}, {{2, 3, 2, 3, 2}, {4, 0, 3, 1, 2}},
      {{0, 3, 2}, {2, 0, 1}}, {{37, 65, 33}, {2, 0, 1}},    {{64, 3, 257}, {2, 1, 0}}};
  for (const auto& [shape, axes] : cases)
    for (std::size_t esize : {1, 2, 4, 8, 16})
      for (Memory m : {Memory::Device, Memory::Host})
        check_permute_plan(shape, axes, esize, m);
}

} // namespace
} // namespace tessera
