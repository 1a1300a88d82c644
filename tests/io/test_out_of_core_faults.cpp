// Faults in the out-of-core pipelines, one rank at a time: a read, a write or a compute step
// fails on one rank at one chunk (TESSERA_FAULT-style injection), and a compressed chunk of the
// input is corrupt on disk. Every rank must stop and throw an error naming the cause, the
// output's temporary and lock must be gone, nothing may hang (ctest's timeout is the judge of
// that), and the next run in the same processes must work.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <hdf5.h>
#include <mpi.h>
#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/block_distribution.hpp"
#include "io/h5_file.hpp"
#include "io/h5_matrix.hpp"
#include "io_test_support.hpp"
#include "ops/out_of_core.hpp"

namespace tessera::ops {
namespace {

using test::TempDir;

const Shape kShape{120, 50}; // 12 chunks of 10 rows, 5 of 10 columns

void write_matrix(const io::DatasetRef& ref, std::uint64_t seed, const io::WriteOptions& w = {}) {
  const int rank = test::rank_of();
  const BlockDistribution dist(kShape, test::size_of());
  const auto mine =
      test::random_block<double>(seed, dist.begin(rank), dist.rows(rank), 0, kShape.cols);
  io::H5File f = io::H5File::create(ref.file, MPI_COMM_WORLD);
  write_rows(f, ref.path, dist, rank, DType::f64, mine.data(), w);
  f.commit();
}

OutOfCoreOptions options_with_fault(const std::string& fault) {
  OutOfCoreOptions o;
  o.chunk_rows = 10;
  o.chunk_cols = 10;
  o.staging_depth = 2;
  o.progress = false;
  o.fault = fault;
  return o;
}

std::vector<std::string> failing_ranks_sites(const char* const* sites, int nsites) {
  std::vector<std::string> specs;
  for (int r = 0; r < test::size_of(); ++r)
    for (int s = 0; s < nsites; ++s)
      specs.push_back(std::string(sites[s]) + ":rank=" + std::to_string(r) + ":chunk=3");
  return specs;
}

template <class E>
void expect_transpose_fails(const std::string& fault, const char* what) {
  TempDir dir;
  const io::DatasetRef in{dir.file("a.h5"), "/A"}, out{dir.file("at.h5"), "/AT"};
  write_matrix(in, test::shared_seed());
  for (ChunkShape shape : {ChunkShape::ColumnPanels, ChunkShape::RowSlabs}) {
    SCOPED_TRACE(std::string("fault ") + fault + ", chunks of " + chunk_shape_name(shape));
    OutOfCoreOptions o = options_with_fault(fault);
    o.chunk_shape = shape;
    test::expect_error<E>([&] { transpose_out_of_core(in, out, o, MPI_COMM_WORLD); },
                          {"injected fault", fault, what, "chunk 3"});
    MPI_Barrier(MPI_COMM_WORLD);
    EXPECT_FALSE(test::exists(out.file)) << "a failed transpose left its output";
    EXPECT_EQ(test::leftovers_of(out.file), std::vector<std::string>{})
        << "a failed transpose left its temporary";

    // The same processes run the next transpose normally.
    o.fault.clear();
    transpose_out_of_core(in, out, o, MPI_COMM_WORLD);
    EXPECT_TRUE(test::exists(out.file));
    MPI_Barrier(MPI_COMM_WORLD);
    if (test::rank_of() == 0)
      std::filesystem::remove(out.file);
    MPI_Barrier(MPI_COMM_WORLD);
  }
}

TEST(OutOfCoreFaults, AReadFailureOnAnyRankStopsTheTransposeEverywhere) {
  const char* sites[] = {"read"};
  for (const auto& f : failing_ranks_sites(sites, 1))
    expect_transpose_fails<IoError>(f, "read of chunk");
}

TEST(OutOfCoreFaults, AWriteFailureOnAnyRankStopsTheTransposeEverywhere) {
  const char* sites[] = {"write"};
  for (const auto& f : failing_ranks_sites(sites, 1))
    expect_transpose_fails<IoError>(f, "write of chunk");
}

TEST(OutOfCoreFaults, AComputeFailureOnAnyRankStopsTheTransposeEverywhere) {
  const char* sites[] = {"compute"};
  for (const auto& f : failing_ranks_sites(sites, 1))
    expect_transpose_fails<InternalError>(f, "compute of chunk");
}

TEST(OutOfCoreFaults, FaultsStopReductionsEverywhere) {
  TempDir dir;
  const io::DatasetRef in{dir.file("a.h5"), "/A"};
  write_matrix(in, test::shared_seed());
  for (Axis axis : {Axis::All, Axis::Cols}) {
    // Column reductions read whole 64-row blocks: two chunks here.
    const std::string chunk = axis == Axis::Cols ? "1" : "3";
    for (int r = 0; r < test::size_of(); ++r) {
      const std::string where = ":rank=" + std::to_string(r) + ":chunk=" + chunk;
      OutOfCoreOptions o = options_with_fault("read" + where);
      if (axis == Axis::Cols)
        o.chunk_rows = 64;
      test::expect_error<IoError>(
          [&] { reduce_out_of_core(in, {Op::Sum}, axis, o, MPI_COMM_WORLD); },
          {"injected fault", "read of chunk " + chunk});
      o.fault = "compute" + where;
      test::expect_error<InternalError>(
          [&] {
            reduce_out_of_core(in, {Op::Sum, Op::Max}, axis, o, MPI_COMM_WORLD);
          },
          {"injected fault", "compute of chunk " + chunk});
    }
  }
  // And then it works.
  const auto r =
      reduce_out_of_core(in, {Op::Max}, Axis::All, options_with_fault(""), MPI_COMM_WORLD);
  EXPECT_EQ(r.values.size(), 1u);
}

TEST(OutOfCoreFaults, TheFaultSpecIsCheckedAndTheEnvironmentIsReadUnlessTheOptionSaysNone) {
  TempDir dir;
  const io::DatasetRef in{dir.file("a.h5"), "/A"}, out{dir.file("at.h5"), "/AT"};
  write_matrix(in, test::shared_seed());
  test::expect_error<InputError>(
      [&] { transpose_out_of_core(in, out, options_with_fault("disk:rank=0"), MPI_COMM_WORLD); },
      {"SIDE:rank=R:chunk=C"});
  // The environment's fault acts only behind the test-hook gate.
  ::setenv("TESSERA_FAULT", "write:rank=0:chunk=1", 1);
  transpose_out_of_core(in, out, options_with_fault(""), MPI_COMM_WORLD);
  ::setenv("TESSERA_TEST_HOOKS", "1", 1);
  test::expect_error<IoError>(
      [&] { transpose_out_of_core(in, out, options_with_fault(""), MPI_COMM_WORLD); },
      {"injected fault", "write of chunk 1"});
  // "none" (what the library's calls pass) ignores the environment.
  transpose_out_of_core(in, out, options_with_fault("none"), MPI_COMM_WORLD);
  ::unsetenv("TESSERA_FAULT");
  ::unsetenv("TESSERA_TEST_HOOKS");
  EXPECT_EQ(test::leftovers_of(out.file), std::vector<std::string>{});
}

// A real fault: rank 0 scribbles over one compressed chunk of the input, so inflating it fails
// inside HDF5 on the rank that reads it.
TEST(OutOfCoreFaults, ACorruptCompressedChunkStopsEveryRankWithAnIoError) {
  TempDir dir;
  const io::DatasetRef in{dir.file("z.h5"), "/Z"}, out{dir.file("zt.h5"), "/ZT"};
  write_matrix(in, test::shared_seed(),
               io::WriteOptions{{.chunk_rows = 10, .chunk_cols = 50, .deflate = 4}});
  if (test::rank_of() == 0) {
    haddr_t addr = HADDR_UNDEF;
    hsize_t size = 0;
    {
      const hid_t f = H5Fopen(in.file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
      ASSERT_GE(f, 0);
      const hid_t d = H5Dopen2(f, in.path.c_str(), H5P_DEFAULT);
      const hsize_t offset[2] = {70, 0}; // the chunk of rows 70..79
      unsigned mask = 0;
      ASSERT_GE(H5Dget_chunk_info_by_coord(d, offset, &mask, &addr, &size), 0);
      H5Dclose(d);
      H5Fclose(f);
    }
    ASSERT_NE(addr, HADDR_UNDEF);
    std::fstream file(in.file, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(static_cast<std::streamoff>(addr));
    const std::string garbage(static_cast<std::size_t>(size), '\xA5');
    file.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
  }
  MPI_Barrier(MPI_COMM_WORLD);
  OutOfCoreOptions o = options_with_fault("");
  try {
    transpose_out_of_core(in, out, o, MPI_COMM_WORLD);
    ADD_FAILURE() << "[rank " << test::rank_of() << "] reading a corrupt chunk did not fail";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find(in.path), std::string::npos) << e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "[rank " << test::rank_of() << "] wrong exception type: " << e.what();
  }
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_FALSE(test::exists(out.file));
  EXPECT_EQ(test::leftovers_of(out.file), std::vector<std::string>{});
}

// The input changes under a running pipeline: rank 0 truncates it, or rewrites bytes of it in
// place (same size), right after chunk 1 was read. HDF5 would read zeros past the new end, or
// the new bytes, without an error; the input check between chunks must stop every rank.
TEST(OutOfCoreFaults, AnInputThatChangesWhileItIsReadStopsEveryRank) {
  for (const char* mode : {"", "serial"}) {
    const test::IoModeScope scope(mode);
    for (const bool truncate : {true, false}) {
      TempDir dir;
      const io::DatasetRef in{dir.file("a.h5"), "/A"}, out{dir.file("at.h5"), "/AT"};
      std::uintmax_t size = 0;
      // Each run gets a new input with an old modification time, so that the rewrite changes
      // it even on a file system with a coarse clock.
      const auto fresh_input = [&] {
        write_matrix(in, test::shared_seed());
        if (test::rank_of() == 0) {
          const struct timespec old[2] = {{1000000000, 0}, {1000000000, 0}};
          ASSERT_EQ(::utimensat(AT_FDCWD, in.file.c_str(), old, 0), 0);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        size = std::filesystem::file_size(in.file);
      };
      OutOfCoreOptions o = options_with_fault("");
      o.after_read = [&](std::int64_t chunk) {
        if (chunk != 1 || test::rank_of() != 0)
          return;
        if (truncate) {
          std::filesystem::resize_file(in.file, size / 2);
        } else {
          std::fstream file(in.file, std::ios::in | std::ios::out | std::ios::binary);
          file.seekp(static_cast<std::streamoff>(size - 64));
          file.write("rewritten", 9);
        }
      };
      const std::string why = truncate ? "it was truncated" : "it was modified";
      SCOPED_TRACE(std::string(*mode ? mode : "collective") + " mode, " + why);
      // Both chunk shapes and both kinds of reduction loop, spread over the cases.
      fresh_input();
      o.chunk_shape = truncate ? ChunkShape::ColumnPanels : ChunkShape::RowSlabs;
      test::expect_error<IoError>([&] { transpose_out_of_core(in, out, o, MPI_COMM_WORLD); },
                                  {in.file, "changed while it was being read", why});
      MPI_Barrier(MPI_COMM_WORLD);
      EXPECT_FALSE(test::exists(out.file)) << "a failed transpose left its output";
      EXPECT_FALSE(test::exists(out.file + ".partial"));
      fresh_input();
      const Axis axis = truncate ? Axis::All : Axis::Cols;
      o.chunk_rows = axis == Axis::Cols ? 64 : 10;
      test::expect_error<IoError>(
          [&] { reduce_out_of_core(in, {Op::Sum}, axis, o, MPI_COMM_WORLD); },
          {in.file, "changed while it was being read", why});
    }
  }
}

} // namespace
} // namespace tessera::ops
