// A writer owns its output: a second writer of the same name fails at once and the first one's
// file comes out intact; outputs that are not regular files are refused (a symbolic link is
// written through); names too long for the file system or for MPI-IO are errors before any
// MPI-IO call; what killed runs left behind does not get in the way.
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fcntl.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/block_distribution.hpp"
#include "io/h5_attribute.hpp"
#include "io/h5_file.hpp"
#include "io/h5_matrix.hpp"
#include "io_test_support.hpp"
#include "solver/run.hpp"

namespace tessera::io {
namespace {

namespace fs = std::filesystem;
using test::exists;
using test::expect_error;
using test::IoModeScope;
using test::leftovers_of;
using test::TempDir;

const std::vector<std::string> kNothing;

class Ownership : public testing::TestWithParam<const char*> {
protected:
  IoModeScope scope_{GetParam()};
  TempDir dir_;
};

std::vector<double> my_rows(const BlockDistribution& dist, std::uint64_t seed) {
  const int rank = test::rank_of();
  return test::random_block<double>(seed, dist.begin(rank), dist.rows(rank), 0, dist.global().cols);
}

void expect_rows(const std::string& name, const BlockDistribution& dist, std::uint64_t seed) {
  H5File f = H5File::open_read(name, MPI_COMM_WORLD);
  EXPECT_EQ(read_int_attribute(f, "/", "complete"), 1LL);
  std::vector<double> got(static_cast<std::size_t>(dist.local_size(test::rank_of())));
  read_rows(f, "/A", dist, test::rank_of(), DType::f64, got.data());
  EXPECT_EQ(got, my_rows(dist, seed)) << name << " does not hold the first writer's matrix";
}

bool is_char_device(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISCHR(st.st_mode);
}

// A second writer of a name that is being written fails at once, naming it; the first writer
// goes on and commits exactly its own matrix.
TEST_P(Ownership, SecondWriterFailsAtOnce) {
  const std::string name = dir_.file("shared.h5");
  const BlockDistribution dist({6, 5}, test::size_of());
  const std::uint64_t seed = test::shared_seed();
  {
    H5File first = H5File::create(name, MPI_COMM_WORLD);
    write_rows(first, "/A", dist, test::rank_of(), DType::f64, my_rows(dist, seed).data());
    expect_error<IoError>([&] { (void)H5File::create(name, MPI_COMM_WORLD); },
                          {name, "already writing it"});
    first.commit();
  }
  expect_rows(name, dist, seed);
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_EQ(leftovers_of(name), kNothing);
}

// The lock held by another process (as another job would hold it): refused, naming the holder.
TEST_P(Ownership, LockHeldElsewhereIsRefused) {
  const std::string name = dir_.file("held.h5");
  int fd = -1;
  if (test::rank_of() == 0) {
    fd = ::open((name + ".lock").c_str(), O_RDWR | O_CREAT, 0666);
    ASSERT_GE(fd, 0);
    // An open file description of its own: to flock() it is another owner, as another job is.
    ASSERT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);
    const std::string owner = "4242 elsewhere\n";
    ASSERT_EQ(::write(fd, owner.data(), owner.size()), static_cast<ssize_t>(owner.size()));
  }
  MPI_Barrier(MPI_COMM_WORLD);
  expect_error<IoError>([&] { (void)H5File::create(name, MPI_COMM_WORLD); },
                        {name, "another job", "4242", "elsewhere"});
  MPI_Barrier(MPI_COMM_WORLD);
  if (fd >= 0)
    ::close(fd);
  EXPECT_FALSE(exists(name));
}

TEST_P(Ownership, DevicesAndFifosAreRefused) {
  expect_error<IoError>([&] { (void)H5File::create("/dev/null", MPI_COMM_WORLD); },
                        {"/dev/null", "character device", "not a regular file"});
  EXPECT_TRUE(is_char_device("/dev/null")) << "/dev/null was replaced";
  const std::string fifo = dir_.file("pipe.h5");
  if (test::rank_of() == 0) {
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0666), 0);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  expect_error<IoError>([&] { (void)H5File::create(fifo, MPI_COMM_WORLD); }, {fifo, "FIFO"});
  EXPECT_TRUE(fs::is_fifo(fifo));
  EXPECT_EQ(leftovers_of(fifo), kNothing);
}

// A symbolic link is written through: the file it points to is created (or replaced) and the
// link stays a link. A link to a device is refused like the device.
TEST_P(Ownership, SymbolicLinksAreWrittenThrough) {
  const std::string link = dir_.file("link.h5");
  const std::string target = dir_.file("target.h5");
  const BlockDistribution dist({4, 3}, test::size_of());
  const std::uint64_t seed = test::shared_seed();
  if (test::rank_of() == 0)
    fs::create_symlink("target.h5", link); // dangling until written
  MPI_Barrier(MPI_COMM_WORLD);
  for (int round = 0; round < 2; ++round) {
    H5File f = H5File::create(link, MPI_COMM_WORLD);
    write_rows(f, "/A", dist, test::rank_of(), DType::f64, my_rows(dist, seed + round).data());
    f.commit();
  }
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(target)));
  expect_rows(link, dist, seed + 1);
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_EQ(leftovers_of(target), kNothing);

  const std::string to_null = dir_.file("null.h5");
  if (test::rank_of() == 0)
    fs::create_symlink("/dev/null", to_null);
  MPI_Barrier(MPI_COMM_WORLD);
  expect_error<IoError>([&] { (void)H5File::create(to_null, MPI_COMM_WORLD); },
                        {to_null, "/dev/null", "character device"});
  EXPECT_TRUE(is_char_device("/dev/null"));
}

// Names longer than the file system takes (counting what tessera adds while writing) and paths
// longer than Open MPI's MPI-IO handles are InputErrors, not aborts inside MPI_File_open.
TEST_P(Ownership, TooLongNamesAreErrors) {
  const std::string long_base = dir_.file(std::string(250, 'n') + ".h5");
  expect_error<InputError>([&] { (void)H5File::create(long_base, MPI_COMM_WORLD); },
                           {"file name has 253 characters", "at most 240"});
  const std::string huge = dir_.file(std::string(5000, 'd') + "/out.h5");
  expect_error<InputError>([&] { (void)H5File::create(huge, MPI_COMM_WORLD); },
                           {"directory name", "5000 characters"});
  // Fits the file system, but not Open MPI's MPI-IO: a path of 249 characters in all.
  if (dir_.path().size() > 200)
    GTEST_SKIP() << "the temporary directory's name is too long for this test";
  const std::size_t fill = 245 - dir_.path().size();
  const std::string deep = dir_.file(std::string(fill, 'x') + ".h5");
  const bool mpiio = *GetParam() == '\0';
#ifdef OMPI_MAJOR_VERSION
  if (mpiio) {
    expect_error<InputError>([&] { (void)H5File::create(deep, MPI_COMM_WORLD); },
                             {"Open MPI's MPI-IO", "TESSERA_HDF5_IO=serial"});
    MPI_Barrier(MPI_COMM_WORLD);
    EXPECT_EQ(leftovers_of(deep), kNothing);
    MPI_Barrier(MPI_COMM_WORLD);
    {
      // Written in turns, the same name works; reading it through MPI-IO does not.
      IoModeScope serial("serial");
      H5File f = H5File::create(deep, MPI_COMM_WORLD);
      f.commit();
    }
    expect_error<InputError>([&] { (void)H5File::open_read(deep, MPI_COMM_WORLD); },
                             {"cannot open", "Open MPI's MPI-IO"});
    return;
  }
#endif
  (void)mpiio;
  H5File f = H5File::create(deep, MPI_COMM_WORLD);
  f.commit();
  EXPECT_TRUE(exists(deep));
}

// What earlier runs left: an old-style NAME.partial directory is no obstacle, a temporary of
// a killed run is removed, and a lock file that is a directory is reported as such.
TEST_P(Ownership, RemaindersOfEarlierRuns) {
  const std::string name = dir_.file("again.h5");
  const std::string stale = name + ".Ab12Cd.partial";
  if (test::rank_of() == 0) {
    fs::create_directory(name + ".partial");
    std::ofstream(stale) << "left by a killed run\n";
  }
  MPI_Barrier(MPI_COMM_WORLD);
  {
    H5File f = H5File::create(name, MPI_COMM_WORLD);
    f.commit();
  }
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_TRUE(exists(name));
  EXPECT_FALSE(exists(stale));
  EXPECT_EQ(leftovers_of(name), std::vector<std::string>{"again.h5.partial"}); // the directory

  const std::string locked = dir_.file("locked.h5");
  if (test::rank_of() == 0)
    fs::create_directory(locked + ".lock");
  MPI_Barrier(MPI_COMM_WORLD);
  expect_error<IoError>([&] { (void)H5File::create(locked, MPI_COMM_WORLD); },
                        {locked + ".lock", "is a directory"});
}

// heat2d: a checkpoint of the same name as the output is refused before the run starts.
TEST_P(Ownership, CheckpointCannotBeTheOutput) {
  heat2d::RunSettings s;
  s.config.nx = 8;
  s.config.ny = 6;
  s.config.dt = 1e-3;
  s.steps = 3;
  s.checkpoint_every = 1;
  s.output_file = dir_.file("run.h5");
  s.checkpoint_file = dir_.path() + "/./run.h5";
  expect_error<InputError>([&] { (void)heat2d::run(s, MPI_COMM_WORLD); },
                           {"checkpoint", "same file"});
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_FALSE(exists(s.output_file));
  EXPECT_EQ(leftovers_of(s.output_file), kNothing);
}

INSTANTIATE_TEST_SUITE_P(IoModes, Ownership, testing::Values("", "serial"), test::mode_name);

} // namespace
} // namespace tessera::io
