// The CUDA runtime layer: device discovery and binding, buffers, copies, streams, events, NVML.
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>

#include "cuda/buffer.hpp"
#include "cuda/device.hpp"
#include "cuda/nvml.hpp"
#include "cuda/stream.hpp"
#include "cuda/transpose.hpp"
#include "cuda_test_util.hpp"

namespace tessera {
namespace {

TEST(CudaRuntime, SkipsTogetherWithoutAGpu) {
  // Runs everywhere: the decision is collective, and a build without CUDA reports no devices.
  std::string why;
  const bool all = test::all_ranks_have_gpu(why);
  if (!cuda::compiled()) {
    EXPECT_FALSE(all);
  }
  if (!all) {
    EXPECT_FALSE(why.empty());
  }
}

TEST(CudaRuntime, ListingAgreesWithTheRuntime) {
  TESSERA_REQUIRE_GPU();
  // The listing comes from NVML where it can, the devices from the runtime: the same GPUs in
  // the same order.
  const auto listed = cuda::list_devices();
  const auto devs = cuda::devices();
  ASSERT_EQ(listed.size(), devs.size());
  for (std::size_t i = 0; i < devs.size(); ++i) {
    EXPECT_EQ(listed[i].index, devs[i].index);
    EXPECT_EQ(listed[i].name, devs[i].name);
    EXPECT_EQ(listed[i].cc_major, devs[i].cc_major);
    EXPECT_EQ(listed[i].cc_minor, devs[i].cc_minor);
    EXPECT_EQ(listed[i].memory_total, devs[i].memory_total);
    EXPECT_FALSE(listed[i].driver.empty());
  }
}

TEST(CudaRuntime, DevicesAndBinding) {
  TESSERA_REQUIRE_GPU();
  const auto devs = cuda::devices();
  ASSERT_EQ(static_cast<int>(devs.size()), cuda::device_count());
  for (const auto& d : devs) {
    EXPECT_FALSE(d.name.empty());
    EXPECT_GT(d.memory_total, 0u);
    EXPECT_LE(d.memory_free, d.memory_total);
    EXPECT_GT(d.multiprocessors, 0);
    EXPECT_FALSE(d.driver.empty());
  }
  EXPECT_FALSE(cuda::driver_version().empty());
  EXPECT_EQ(cuda::bind_device(cuda::device_count() + 1), 1 % cuda::device_count());
  EXPECT_EQ(cuda::current_device(), 1 % cuda::device_count());
  const int mine = cuda::bind_device(mpi::Communicator(MPI_COMM_WORLD).node_local_rank());
  EXPECT_EQ(cuda::current_device(), mine);
}

TEST(CudaRuntime, BuffersCopiesAndPointerKinds) {
  TESSERA_REQUIRE_GPU();
  const std::uint64_t seed = test::fresh_seed();
  auto v = test::random_vector<double>(10007, seed);
  cuda::DeviceBuffer dev(v.size() * 8);
  cuda::PinnedBuffer pin(v.size() * 8);
  EXPECT_TRUE(cuda::is_device_pointer(dev.data()));
  EXPECT_FALSE(cuda::is_device_pointer(v.data()));
  EXPECT_TRUE(cuda::is_pinned_host_pointer(pin.data()));
  EXPECT_FALSE(cuda::is_pinned_host_pointer(v.data()));
  cuda::StreamPool pool;
  EXPECT_EQ(pool.size(), cuda::StreamPool::kDefaultSize);
  EXPECT_EQ(pool[0], pool[pool.size()]);
  cuda::copy_async(pool[1], dev.data(), v.data(), v.size() * 8);
  cuda::copy_async(pool[1], pin.data(), dev.data(), v.size() * 8);
  pool.synchronize();
  EXPECT_EQ(std::memcmp(pin.data(), v.data(), v.size() * 8), 0);
  // 2-D copy: every other double of the first 100.
  std::vector<double> strided(50, 0.0);
  cuda::copy_2d_async(pool[2], strided.data(), 8, dev.data(), 16, 8, 50);
  pool.synchronize();
  for (int i = 0; i < 50; ++i)
    EXPECT_EQ(strided[i], v[2 * i]);
  // Moves leave the source empty.
  cuda::DeviceBuffer moved(std::move(dev));
  EXPECT_EQ(dev.data(), nullptr);
  EXPECT_EQ(moved.bytes(), v.size() * 8);
}

TEST(CudaRuntime, HugeAllocationIsAResourceError) {
  TESSERA_REQUIRE_GPU();
  EXPECT_THROW(cuda::DeviceBuffer(std::size_t{1} << 52), ResourceError);
  // The device stays usable afterwards.
  EXPECT_NO_THROW(cuda::DeviceBuffer(1 << 20));
}

TEST(CudaRuntime, EventsTimeWork) {
  TESSERA_REQUIRE_GPU();
  cuda::StreamPool pool(2);
  const std::int64_t n = 2048;
  cuda::DeviceBuffer a(n * n * 4), b(n * n * 4);
  cuda::Event start, stop;
  start.record(pool[0]);
  for (int i = 0; i < 4; ++i)
    cuda::transpose(pool[0], DType::f32, a.data(), b.data(), n, n);
  stop.record(pool[0]);
  stop.wait_on(pool[1]);
  stop.synchronize();
  EXPECT_TRUE(stop.done());
  EXPECT_GT(cuda::Event::elapsed_ms(start, stop), 0.0f);
}

TEST(CudaRuntime, NvmlSamplerSeesTheDevice) {
  TESSERA_REQUIRE_GPU();
  if (!cuda::nvml::available())
    GTEST_SKIP() << cuda::nvml::unavailable_reason();
  EXPECT_FALSE(cuda::nvml::driver_version().empty());
  const auto mem = cuda::nvml::memory(cuda::current_device());
  ASSERT_TRUE(mem.has_value());
  EXPECT_GT(mem->total, 0u);
  cuda::nvml::Sampler sampler(cuda::current_device(), std::chrono::milliseconds(5));
  cuda::StreamPool pool(1);
  const std::int64_t n = 8192;
  cuda::DeviceBuffer a(n * n * 4), b(n * n * 4);
  for (int i = 0; i < 20; ++i)
    cuda::transpose(pool[0], DType::f32, a.data(), b.data(), n, n);
  pool.synchronize();
  const cuda::nvml::Summary s = sampler.stop();
  EXPECT_TRUE(s.valid);
  EXPECT_GE(s.samples, 1);
  EXPECT_GT(s.max_memory_used, std::size_t{2} * n * n * 4 - 1);
  EXPECT_LE(s.mean_utilization, 100.0);
  EXPECT_EQ(sampler.stop().samples, s.samples); // idempotent
}

} // namespace
} // namespace tessera
