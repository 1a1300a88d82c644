// Output-file life cycle: a temporary NAME.XXXXXX.partial and the lock NAME.lock while writing,
// NAME after commit() with complete = 1, nothing left behind by an uncommitted file; attributes
// and root provenance.
#include <gtest/gtest.h>

#include <regex>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/block_distribution.hpp"
#include "core/build_info.hpp"
#include "io/h5_attribute.hpp"
#include "io/h5_file.hpp"
#include "io/h5_matrix.hpp"
#include "io/provenance.hpp"
#include "io_test_support.hpp"
#include "mpi/agreement.hpp"

namespace tessera::io {
namespace {

using test::exists;
using test::IoModeScope;
using test::TempDir;

class FileLife : public testing::TestWithParam<const char*> {
protected:
  IoModeScope scope_{GetParam()};
  TempDir dir_;
};

void write_small(H5File& f, std::uint64_t seed) {
  const BlockDistribution dist({5, 3}, test::size_of());
  const int rank = test::rank_of();
  const auto v = test::random_block<double>(seed, dist.begin(rank), dist.rows(rank), 0, 3);
  write_rows(f, "/A", dist, rank, DType::f64, v.data());
}

TEST_P(FileLife, PartialUntilCommitThenCompleteIsOne) {
  const std::string name = dir_.file("out.h5");
  {
    H5File f = H5File::create(name, MPI_COMM_WORLD);
    EXPECT_EQ(f.path(), name);
    const std::string temporary = f.disk_path();
    EXPECT_TRUE(std::regex_match(temporary, std::regex(".*/out\\.h5\\.[A-Za-z0-9]{6}\\.partial")))
        << temporary;
    write_small(f, test::shared_seed());
    EXPECT_TRUE(exists(temporary));
    EXPECT_TRUE(exists(name + ".lock"));
    EXPECT_FALSE(exists(name));
    f.commit();
    EXPECT_EQ(f.disk_path(), name);
    EXPECT_TRUE(exists(name));
    EXPECT_FALSE(exists(temporary));
    EXPECT_EQ(test::leftovers_of(name), std::vector<std::string>{});
  }
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_TRUE(exists(name)) << "the committed file must survive its H5File";
  H5File f = H5File::open_read(name, MPI_COMM_WORLD);
  EXPECT_EQ(read_int_attribute(f, "/", "complete"), 1LL);
}

TEST_P(FileLife, UncommittedFileLeavesNothing) {
  const std::string name = dir_.file("gone.h5");
  {
    H5File f = H5File::create(name, MPI_COMM_WORLD);
    write_small(f, test::shared_seed());
    // An uncommitted file is removed by rank 0 without waiting for the others, so look
    // before any rank can unwind.
    MPI_Barrier(MPI_COMM_WORLD);
    EXPECT_TRUE(exists(f.disk_path()));
    MPI_Barrier(MPI_COMM_WORLD);
  }
  MPI_Barrier(MPI_COMM_WORLD); // rank 0 removes it
  EXPECT_EQ(test::leftovers_of(name), std::vector<std::string>{});
  EXPECT_FALSE(exists(name));
  MPI_Barrier(MPI_COMM_WORLD); // everyone has looked before rank 0 creates the next one

  H5File g = H5File::create(name, MPI_COMM_WORLD);
  g.close();
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_EQ(test::leftovers_of(name), std::vector<std::string>{});
}

// An error that every rank raises (agreed) while the file is open: the file unwinds on every
// rank and nothing is left behind, without a hang.
TEST_P(FileLife, FileUnwoundByAnAgreedErrorLeavesNothing) {
  const std::string name = dir_.file("unwound.h5");
  try {
    H5File f = H5File::create(name, MPI_COMM_WORLD);
    write_small(f, test::shared_seed());
    mpi::collectively(MPI_COMM_WORLD, [] {
      if (test::rank_of() == test::size_of() - 1)
        throw InputError("bad input on the last rank", __FILE__, __LINE__);
    });
    ADD_FAILURE() << "collectively() did not throw";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("bad input on the last rank"), std::string::npos);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_EQ(test::leftovers_of(name), std::vector<std::string>{});
  EXPECT_FALSE(exists(name));
}

// An error on the last rank alone (not agreed): its file unwinds while the other ranks are
// elsewhere — here in a barrier that the last rank joins only after unwinding. A destructor that
// waited for the other ranks (a collective close) would hang the test.
TEST_P(FileLife, FileUnwoundOnOneRankAloneDoesNotWait) {
  const std::string name = dir_.file("alone.h5");
  const bool last = test::rank_of() == test::size_of() - 1;
  auto unwind = [&](H5File f) {
    try {
      H5File mine = std::move(f);
      throw IoError("failed on this rank only", __FILE__, __LINE__);
    } catch (const IoError&) {
    }
  };
  H5File f = H5File::create(name, MPI_COMM_WORLD);
  write_small(f, test::shared_seed());
  if (last) {
    unwind(std::move(f));
    MPI_Barrier(MPI_COMM_WORLD);
  } else {
    MPI_Barrier(MPI_COMM_WORLD);
    unwind(std::move(f));
  }
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_EQ(test::leftovers_of(name), std::vector<std::string>{});
  EXPECT_FALSE(exists(name));
}

TEST_P(FileLife, CommitReplacesAnOldFile) {
  const std::string name = dir_.file("again.h5");
  for (int round = 0; round < 2; ++round) {
    H5File f = H5File::create(name, MPI_COMM_WORLD);
    write_attribute(f, "/", "round", static_cast<long long>(round));
    f.commit();
  }
  H5File f = H5File::open_read(name, MPI_COMM_WORLD);
  EXPECT_EQ(read_int_attribute(f, "/", "round"), 1LL);
}

TEST_P(FileLife, AttributesOnRootAndDataset) {
  const std::string name = dir_.file("attrs.h5");
  {
    H5File f = H5File::create(name, MPI_COMM_WORLD);
    write_small(f, test::shared_seed());
    write_attribute(f, "/", "title", "heat π ≈ 3.14159 — UTF-8");
    write_attribute(f, "/", "steps", 42LL);
    write_attribute(f, "/A", "alpha", 0.25);
    write_attribute(f, "/A", "alpha", 0.5); // replaces
    write_attribute(f, "/A", "empty", "");
    // Before commit, reads see the temporary.
    EXPECT_EQ(read_double_attribute(f, "/A", "alpha"), 0.5);
    f.commit();
  }
  H5File f = H5File::open_read(name, MPI_COMM_WORLD);
  EXPECT_EQ(read_string_attribute(f, "/", "title"), "heat π ≈ 3.14159 — UTF-8");
  EXPECT_EQ(read_int_attribute(f, "/", "steps"), 42LL);
  EXPECT_EQ(read_double_attribute(f, "/A", "alpha"), 0.5);
  EXPECT_EQ(read_string_attribute(f, "/A", "empty"), "");
  EXPECT_EQ(read_string_attribute(f, "/", "missing"), std::nullopt);
  test::expect_error<InputError>([&] { (void)read_int_attribute(f, "/", "title"); },
                                 {"title", "not an integer", name});
  test::expect_error<InputError>([&] { (void)read_int_attribute(f, "/nope", "x"); },
                                 {"/nope", name});
}

TEST_P(FileLife, Provenance) {
  const std::string name = dir_.file("prov.h5");
  Provenance p;
  p.command_line = "tessera run deck.toml --set grid.nx=17";
  p.deck = "[grid]\nnx = 17\n";
  p.backend = "cpu";
  p.ranks = test::size_of();
  p.threads = 3;
  p.gpus = {"GPU A", "GPU B"};
  {
    H5File f = H5File::create(name, MPI_COMM_WORLD);
    write_provenance(f, p);
    f.commit();
  }
  H5File f = H5File::open_read(name, MPI_COMM_WORLD);
  EXPECT_EQ(read_string_attribute(f, "/", "software"), "tessera");
  EXPECT_EQ(read_string_attribute(f, "/", "version"), TESSERA_VERSION);
  EXPECT_EQ(read_string_attribute(f, "/", "git_hash"), build_git_hash());
  EXPECT_EQ(read_string_attribute(f, "/", "command_line"), p.command_line);
  EXPECT_EQ(read_string_attribute(f, "/", "deck"), p.deck);
  EXPECT_EQ(read_string_attribute(f, "/", "backend"), "cpu");
  EXPECT_EQ(read_string_attribute(f, "/", "gpus"), "GPU A,GPU B");
  EXPECT_EQ(read_int_attribute(f, "/", "ranks"), test::size_of());
  EXPECT_EQ(read_int_attribute(f, "/", "threads"), 3);
  EXPECT_EQ(read_int_attribute(f, "/", "hdf5_parallel"), hdf5_is_parallel() ? 1 : 0);
  EXPECT_EQ(read_string_attribute(f, "/", "hdf5_io"), *GetParam() ? "serial" : "collective");
  EXPECT_EQ(read_string_attribute(f, "/", "hdf5_version"), hdf5_version());
  EXPECT_EQ(read_int_attribute(f, "/", "complete"), 1);
  const auto date = read_string_attribute(f, "/", "date").value_or("");
  EXPECT_TRUE(std::regex_match(date, std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)"))) << date;
  const auto mpi = read_string_attribute(f, "/", "mpi_library").value_or("");
  EXPECT_FALSE(mpi.empty());
  EXPECT_EQ(mpi.find('\n'), std::string::npos);
  EXPECT_TRUE(read_string_attribute(f, "/", "cuda_runtime").has_value());
}

INSTANTIATE_TEST_SUITE_P(IoModes, FileLife, testing::Values("", "serial"), test::mode_name);

} // namespace
} // namespace tessera::io
