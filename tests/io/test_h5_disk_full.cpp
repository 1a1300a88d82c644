// A full disk on one rank: the output cannot grow past a few hundred KiB on rank 0 (its
// RLIMIT_FSIZE, with SIGXFSZ ignored: writes fail with EFBIG, "File too large", as they fail with
// ENOSPC on a full file system). Every rank must get the same IoError naming the file and the
// cause, nobody may hang inside a collective write (a guard ends a hung job within a minute),
// nothing may be left behind, and the job must still finalize cleanly.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/block_distribution.hpp"
#include "io/dataset_ref.hpp"
#include "io/h5_file.hpp"
#include "io/h5_matrix.hpp"
#include "io_test_support.hpp"
#include "ops/out_of_core.hpp"
#include "solver/run.hpp"

namespace tessera::ops {
namespace {

using test::expect_error;
using test::IoModeScope;
using test::leftovers_of;
using test::TempDir;

const std::vector<std::string> kNothing;
constexpr rlim_t kLimit = 256 * 1024; // bytes rank 0 may write to one file

// Rank `rank` may not write files larger than `bytes` while this lives.
class FileSizeLimit {
public:
  FileSizeLimit(int rank, rlim_t bytes) : active_(test::rank_of() == rank) {
    if (!active_)
      return;
    ::getrlimit(RLIMIT_FSIZE, &old_);
    old_handler_ = std::signal(SIGXFSZ, SIG_IGN);
    rlimit lim = old_;
    lim.rlim_cur = std::min(bytes, old_.rlim_max);
    ::setrlimit(RLIMIT_FSIZE, &lim);
  }
  ~FileSizeLimit() {
    if (!active_)
      return;
    ::setrlimit(RLIMIT_FSIZE, &old_);
    std::signal(SIGXFSZ, old_handler_);
  }
  FileSizeLimit(const FileSizeLimit&) = delete;
  FileSizeLimit& operator=(const FileSizeLimit&) = delete;

private:
  bool active_;
  rlimit old_{};
  void (*old_handler_)(int) = SIG_DFL;
};

// Ends the job when the guarded code has not finished within a minute (ranks stuck in a
// collective call): the test fails at once instead of at ctest's timeout.
class HangGuard {
public:
  explicit HangGuard(const char* what) : what_(what), thread_([this] { watch(); }) {}
  ~HangGuard() {
    {
      const std::lock_guard<std::mutex> lock(m_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  HangGuard(const HangGuard&) = delete;
  HangGuard& operator=(const HangGuard&) = delete;

private:
  void watch() {
    std::unique_lock<std::mutex> lock(m_);
    if (cv_.wait_for(lock, std::chrono::seconds(60), [&] { return done_; }))
      return;
    std::fprintf(stderr, "[rank %d] %s has not finished after 60 s: the job hangs\n",
                 test::rank_of(), what_);
    std::fflush(stderr);
    std::_Exit(3);
  }
  const char* what_;
  std::mutex m_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

class DiskFull : public testing::TestWithParam<const char*> {
protected:
  IoModeScope scope_{GetParam()};
  TempDir dir_;
};

TEST_P(DiskFull, WritingAMatrix) {
  const std::string name = dir_.file("big.h5");
  const BlockDistribution dist({512, 512}, test::size_of()); // 2 MiB of f64
  const int rank = test::rank_of();
  const std::vector<double> mine(static_cast<std::size_t>(dist.local_size(rank)), 1.5);
  {
    HangGuard guard("writing a matrix to a full disk");
    FileSizeLimit limit(0, kLimit);
    expect_error<IoError>(
        [&] {
          io::H5File f = io::H5File::create(name, MPI_COMM_WORLD);
          write_rows(f, "/A", dist, rank, DType::f64, mine.data());
          f.commit();
        },
        {name, "File too large"});
  }
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_FALSE(test::exists(name));
  EXPECT_EQ(leftovers_of(name), kNothing);
}

TEST_P(DiskFull, OutOfCoreTranspose) {
  const io::DatasetRef in = io::DatasetRef::parse(dir_.file("in.h5") + ":/A");
  const io::DatasetRef out = io::DatasetRef::parse(dir_.file("out.h5") + ":/AT");
  const BlockDistribution dist({256, 1024}, test::size_of()); // 2 MiB of f64
  const int rank = test::rank_of();
  {
    io::H5File f = io::H5File::create(in.file, MPI_COMM_WORLD);
    const std::vector<double> mine(static_cast<std::size_t>(dist.local_size(rank)), 2.5);
    write_rows(f, in.path, dist, rank, DType::f64, mine.data());
    f.commit();
  }
  OutOfCoreOptions o;
  o.chunk_bytes = 256 * 1024;
  o.progress = false;
  {
    HangGuard guard("an out-of-core transpose to a full disk");
    FileSizeLimit limit(0, kLimit);
    expect_error<IoError>([&] { (void)transpose_out_of_core(in, out, o, MPI_COMM_WORLD); },
                          {out.file, "File too large"});
  }
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_FALSE(test::exists(out.file));
  EXPECT_EQ(leftovers_of(out.file), kNothing);
}

// The snapshots of a heat2d run outgrow the disk mid-run; at one rank this used to end in a
// crash inside MPI_Finalize (an HDF5 handle left open by the error).
TEST_P(DiskFull, Heat2dSnapshots) {
  heat2d::RunSettings s;
  s.config.nx = 128;
  s.config.ny = 128; // 128 KiB a snapshot
  s.config.dt = 1e-4;
  s.steps = 8;
  s.snapshot_every = 1;
  s.diagnostics_every = 0;
  s.output_file = dir_.file("heat.h5");
  {
    HangGuard guard("a heat2d run with snapshots on a full disk");
    FileSizeLimit limit(0, kLimit);
    expect_error<IoError>([&] { (void)heat2d::run(s, MPI_COMM_WORLD); },
                          {s.output_file, "File too large"});
  }
  EXPECT_TRUE(io::close_abandoned_files());
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_FALSE(test::exists(s.output_file));
  EXPECT_EQ(leftovers_of(s.output_file), kNothing);
}

INSTANTIATE_TEST_SUITE_P(IoModes, DiskFull, testing::Values("", "serial"), test::mode_name);

} // namespace
} // namespace tessera::ops
