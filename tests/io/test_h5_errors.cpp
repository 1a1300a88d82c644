// Bad input and failing file systems: every rank raises the same typed error naming the file
// or dataset, nobody hangs (ctest's timeout would catch it), and no output is left behind.
#include <gtest/gtest.h>
#include <hdf5.h>

#include <fstream>
#include <string>
#include <vector>

#include "core/block_distribution.hpp"
#include "io/h5_file.hpp"
#include "io/h5_matrix.hpp"
#include "io_test_support.hpp"

namespace tessera::io {
namespace {

using test::exists;
using test::expect_error;
using test::IoModeScope;
using test::TempDir;

// Rank 0 writes a file of awkward objects with plain HDF5 (no tessera code involved).
void write_bad_inputs(const std::string& name) {
  if (test::rank_of() != 0)
    return;
  const hid_t file = H5Fcreate(name.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  auto dataset = [&](const char* path, int rank, const hsize_t* dims, hid_t type) {
    const hid_t space = H5Screate_simple(rank, dims, nullptr);
    const hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    H5Pset_create_intermediate_group(lcpl, 1);
    const hid_t d = H5Dcreate2(file, path, type, space, lcpl, H5P_DEFAULT, H5P_DEFAULT);
    EXPECT_GE(d, 0) << path;
    H5Dclose(d);
    H5Pclose(lcpl);
    H5Sclose(space);
  };
  const hsize_t cube[3] = {2, 3, 4}, mat[2] = {4, 5};
  dataset("/cube", 3, cube, H5T_IEEE_F64LE);
  dataset("/ints", 2, mat, H5T_STD_I32LE);
  dataset("/grp/ok", 2, mat, H5T_IEEE_F64LE);
  const hid_t str = H5Tcopy(H5T_C_S1);
  H5Tset_size(str, 8);
  dataset("/text", 2, mat, str);
  H5Tclose(str);
  const hid_t xyz = H5Tcreate(H5T_COMPOUND, 24);
  H5Tinsert(xyz, "x", 0, H5T_IEEE_F64LE);
  H5Tinsert(xyz, "y", 8, H5T_IEEE_F64LE);
  H5Tinsert(xyz, "z", 16, H5T_IEEE_F64LE);
  dataset("/xyz", 2, mat, xyz);
  H5Tclose(xyz);
  H5Fclose(file);
}

class Errors : public testing::TestWithParam<const char*> {
protected:
  void SetUp() override {
    write_bad_inputs(bad_);
    std::ofstream(dir_.file("notes.txt")) << "not HDF5\n";
    MPI_Barrier(MPI_COMM_WORLD);
  }
  IoModeScope scope_{GetParam()};
  TempDir dir_;
  std::string bad_ = dir_.file("bad.h5");
};

TEST_P(Errors, MissingFile) {
  const std::string name = dir_.file("missing.h5");
  expect_error<IoError>([&] { H5File::open_read(name, MPI_COMM_WORLD); }, {name, "no such file"});
}

TEST_P(Errors, NotAnHdf5File) {
  const std::string name = dir_.file("notes.txt");
  expect_error<InputError>([&] { H5File::open_read(name, MPI_COMM_WORLD); },
                           {name, "not an HDF5 file"});
  expect_error<InputError>([&] { H5File::open_read(dir_.path(), MPI_COMM_WORLD); },
                           {dir_.path(), "directory"});
}

TEST_P(Errors, MissingDataset) {
  H5File f = H5File::open_read(bad_, MPI_COMM_WORLD);
  expect_error<InputError>([&] { inspect_dataset(f, "/nope"); }, {"/nope", bad_});
  expect_error<InputError>([&] { inspect_dataset(f, "/no/such/group/A"); },
                           {"/no/such/group/A", bad_});
  expect_error<InputError>([&] { inspect_dataset(f, "/grp"); }, {"/grp", "is a group"});
  expect_error<InputError>([&] { inspect_dataset(f, "/cube/x"); }, {"/cube/x", bad_});
  EXPECT_FALSE(has_dataset(f, "/nope"));
  EXPECT_FALSE(has_dataset(f, "/grp"));
  EXPECT_TRUE(has_dataset(f, "/grp/ok"));
}

TEST_P(Errors, WrongRank) {
  H5File f = H5File::open_read(bad_, MPI_COMM_WORLD);
  expect_error<InputError>([&] { inspect_dataset(f, "/cube"); },
                           {"dataset /cube", bad_, "has rank 3, expected a 2-D matrix"});
}

TEST_P(Errors, UnsupportedElementTypes) {
  H5File f = H5File::open_read(bad_, MPI_COMM_WORLD);
  expect_error<InputError>([&] { inspect_dataset(f, "/ints"); },
                           {"/ints", bad_, "32-bit signed integer", "f32", "f64", "c64", "c128"});
  expect_error<InputError>([&] { inspect_dataset(f, "/text"); }, {"/text", "string"});
  expect_error<InputError>([&] { inspect_dataset(f, "/xyz"); }, {"/xyz", "compound {x, y, z}"});
  std::vector<double> buf(20);
  const BlockDistribution dist({4, 5}, test::size_of());
  expect_error<InputError>(
      [&] { read_rows(f, "/ints", dist, test::rank_of(), DType::f64, buf.data()); },
      {"/ints", "integer"});
}

TEST_P(Errors, WrongShapeOrKind) {
  H5File f = H5File::open_read(bad_, MPI_COMM_WORLD);
  const int rank = test::rank_of();
  std::vector<std::complex<double>> buf(20);
  const BlockDistribution wrong({5, 4}, test::size_of());
  expect_error<InputError>([&] { read_rows(f, "/grp/ok", wrong, rank, DType::f64, buf.data()); },
                           {"/grp/ok", "shape 4x5", "expected 5x4"});
  const BlockDistribution right({4, 5}, test::size_of());
  expect_error<InputError>([&] { read_rows(f, "/grp/ok", right, rank, DType::c128, buf.data()); },
                           {"/grp/ok", "f64", "c128"});
}

// Only the last rank asks for rows outside the matrix; every rank must hear of it.
TEST_P(Errors, OneRankOutOfBounds) {
  H5File f = H5File::open_read(bad_, MPI_COMM_WORLD);
  const bool last = test::rank_of() == test::size_of() - 1;
  std::vector<double> buf(20);
  const Hyperslab mine = last ? Hyperslab{3, 2, 0, 5} : Hyperslab{0, 1, 0, 5};
  expect_error<InputError>([&] { read_block(f, "/grp/ok", mine, DType::f64, buf.data()); },
                           {"outside dataset /grp/ok", "4x5"});
}

TEST_P(Errors, MissingOutputDirectory) {
  const std::string name = dir_.file("no/such/dir/out.h5");
  expect_error<IoError>([&] { H5File::create(name, MPI_COMM_WORLD); }, {name, "does not exist"});
  EXPECT_EQ(test::leftovers_of(name), std::vector<std::string>{});
}

// The tests run as root, for whom permission bits do not stop a write; /proc refuses new files
// whoever asks.
TEST_P(Errors, UnwritableOutputDirectory) {
  const std::string name = "/proc/tessera-test-output.h5";
  expect_error<IoError>([&] { H5File::create(name, MPI_COMM_WORLD); }, {name});
  EXPECT_EQ(test::leftovers_of(name), std::vector<std::string>{});
  expect_error<IoError>([&] { H5File::create(dir_.path(), MPI_COMM_WORLD); },
                        {dir_.path(), "directory"});
}

TEST_P(Errors, BadWrites) {
  const std::string name = dir_.file("w.h5");
  {
    H5File f = H5File::create(name, MPI_COMM_WORLD);
    create_dataset(f, "/A", {3, 4}, DType::f32);
    expect_error<InputError>(
        [&] {
          create_dataset(f, "/A", {3, 4}, DType::f32);
        },
        {"/A", "exists already", name});
    expect_error<InputError>(
        [&] {
          create_dataset(f, "B", {3, 4}, DType::f32);
        },
        {"'B'", "not a dataset path"});
    expect_error<InputError>(
        [&] {
          create_dataset(f, "/C", {3, 4}, DType::f32, {{.deflate = 12}});
        },
        {"/C", "deflate", "12"});
    std::vector<float> buf(12);
    expect_error<InputError>(
        [&] {
          write_block(f, "/nope", {0, 1, 0, 4}, DType::f32, buf.data());
        },
        {"/nope", name});
  }
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_EQ(test::leftovers_of(name), std::vector<std::string>{});
  EXPECT_FALSE(exists(name));

  H5File r = H5File::open_read(bad_, MPI_COMM_WORLD);
  std::vector<double> buf(20);
  expect_error<InternalError>(
      [&] {
        write_block(r, "/grp/ok", {0, 0, 0, 0}, DType::f64, buf.data());
      },
      {bad_});
}

TEST_P(Errors, UnknownIoMode) {
  IoModeScope bogus("bogus");
  expect_error<InputError>([&] { H5File::open_read(bad_, MPI_COMM_WORLD); },
                           {"TESSERA_HDF5_IO", "bogus"});
}

INSTANTIATE_TEST_SUITE_P(IoModes, Errors, testing::Values("", "serial"), test::mode_name);

} // namespace
} // namespace tessera::io
