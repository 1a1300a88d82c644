// Chunked datasets of which only some chunks were ever written, as h5py and netCDF4 leave them
// (the others are not allocated in the file and read as the fill value): read correctly in both
// I/O modes at every rank count, in memory (read_rows, read_block) and out of core. HDF5 1.10's
// collective reads fail on such chunks on the ranks that hold them and hang the others.
#include <gtest/gtest.h>
#include <hdf5.h>
#include <mpi.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/block_distribution.hpp"
#include "io/h5_file.hpp"
#include "io/h5_matrix.hpp"
#include "io_test_support.hpp"
#include "ops/out_of_core.hpp"

namespace tessera::ops {
namespace {

using test::IoModeScope;
using test::TempDir;

const Shape kShape{61, 45};
constexpr double kFill = -999.0;

// Rows [0, 30) and the block rows [40, 50) x columns [10, 20) are written; with 8 x 8 chunks
// the chunks of rows 30..39 and most of rows 48.. are not.
bool written(std::int64_t i, std::int64_t j) {
  return i < 30 || (i >= 40 && i < 50 && j >= 10 && j < 20);
}
double expected(std::int64_t i, std::int64_t j) {
  return written(i, j) ? static_cast<double>(i * 64 + j) + 0.5 : kFill;
}

// Rank 0 writes the file with plain serial HDF5, which allocates only the chunks written to (a
// parallel writer allocates every chunk at creation).
void write_partly(const std::string& file) {
  if (test::rank_of() == 0) {
    const hid_t f = H5Fcreate(file.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    const hsize_t dims[2] = {static_cast<hsize_t>(kShape.rows), static_cast<hsize_t>(kShape.cols)};
    const hsize_t chunk[2] = {8, 8};
    const hid_t space = H5Screate_simple(2, dims, nullptr);
    for (const char* name : {"A", "Z"}) {
      const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
      H5Pset_chunk(dcpl, 2, chunk);
      H5Pset_fill_value(dcpl, H5T_NATIVE_DOUBLE, &kFill);
      if (std::string(name) == "Z")
        H5Pset_deflate(dcpl, 4); // as netCDF4 variables usually are
      const hid_t d = H5Dcreate2(f, name, H5T_IEEE_F64LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
      const auto put = [&](std::int64_t r0, std::int64_t rows, std::int64_t c0, std::int64_t cols) {
        std::vector<double> v;
        for (std::int64_t i = r0; i < r0 + rows; ++i)
          for (std::int64_t j = c0; j < c0 + cols; ++j)
            v.push_back(expected(i, j));
        const hsize_t start[2] = {static_cast<hsize_t>(r0), static_cast<hsize_t>(c0)};
        const hsize_t count[2] = {static_cast<hsize_t>(rows), static_cast<hsize_t>(cols)};
        const hid_t fs = H5Dget_space(d);
        H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, nullptr, count, nullptr);
        const hid_t ms = H5Screate_simple(2, count, nullptr);
        H5Dwrite(d, H5T_NATIVE_DOUBLE, ms, fs, H5P_DEFAULT, v.data());
        H5Sclose(ms);
        H5Sclose(fs);
      };
      put(0, 30, 0, kShape.cols);
      put(40, 10, 10, 10);
      H5Dclose(d);
      H5Pclose(dcpl);
    }
    H5Sclose(space);
    H5Fclose(f);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

void expect_block(const std::vector<double>& v, const io::Hyperslab& h, const std::string& what) {
  for (std::int64_t i = 0; i < h.rows; ++i)
    for (std::int64_t j = 0; j < h.cols; ++j)
      ASSERT_EQ(v[static_cast<std::size_t>(i * h.cols + j)], expected(h.row0 + i, h.col0 + j))
          << "[rank " << test::rank_of() << "] " << what << " element (" << h.row0 + i << ", "
          << h.col0 + j << ")";
}

class UnwrittenChunks : public testing::TestWithParam<const char*> {
protected:
  UnwrittenChunks() { write_partly(file_); }
  IoModeScope scope_{GetParam()};
  TempDir dir_;
  std::string file_ = dir_.file("part.h5");
};

TEST_P(UnwrittenChunks, ReadRowsAndBlocksGiveTheFillValueWhereNothingWasWritten) {
  const int rank = test::rank_of(), nranks = test::size_of();
  io::H5File f = io::H5File::open_read(file_, MPI_COMM_WORLD);
  for (const char* path : {"/A", "/Z"}) {
    const BlockDistribution dist(kShape, nranks);
    const io::Hyperslab mine = io::Hyperslab::rows_of(dist, rank);
    std::vector<double> v(static_cast<std::size_t>(mine.size()));
    read_rows(f, path, dist, rank, DType::f64, v.data());
    expect_block(v, mine, std::string(path) + " read_rows");
    // Rank r alone reads one of: all written, all unwritten, mixed, nothing; the others
    // read other rectangles in the same call.
    const io::Hyperslab shapes[] = {{0, 10, 3, 20}, {30, 8, 0, 16}, {25, 30, 5, 30}, {0, 0, 0, 0}};
    for (int k = 0; k < 4; ++k) {
      const io::Hyperslab h = shapes[(k + rank) % 4];
      std::vector<double> b(static_cast<std::size_t>(h.size()));
      io::read_block(f, path, h, DType::f64, b.data());
      expect_block(b, h, std::string(path) + " io::read_block");
    }
  }
}

TEST_P(UnwrittenChunks, OutOfCoreTransposeAndReduceSeeTheFillValue) {
  const int rank = test::rank_of(), nranks = test::size_of();
  OutOfCoreOptions o;
  o.chunk_cols = 7;
  o.chunk_rows = 9;
  o.progress = false;
  for (const char* path : {"/A", "/Z"}) {
    const io::DatasetRef in{file_, path}, out{dir_.file("t.h5"), "/T"};
    transpose_out_of_core(in, out, o, MPI_COMM_WORLD);
    {
      io::H5File t = io::H5File::open_read(out.file, MPI_COMM_WORLD);
      const BlockDistribution dist(kShape.transposed(), nranks);
      std::vector<double> v(static_cast<std::size_t>(dist.local_size(rank)));
      read_rows(t, "/T", dist, rank, DType::f64, v.data());
      for (std::int64_t i = 0; i < dist.rows(rank); ++i)
        for (std::int64_t j = 0; j < kShape.rows; ++j)
          ASSERT_EQ(v[static_cast<std::size_t>(i * kShape.rows + j)],
                    expected(j, dist.begin(rank) + i))
              << path << " transposed element (" << dist.begin(rank) + i << ", " << j << ")";
    }
    const ReduceResult r =
        reduce_out_of_core(in, {Op::Min, Op::Max}, Axis::Cols, o, MPI_COMM_WORLD);
    ASSERT_EQ(r.values.size(), 2u);
    for (std::int64_t j = 0; j < kShape.cols; ++j) {
      double lo = expected(0, j), hi = lo;
      for (std::int64_t i = 1; i < kShape.rows; ++i) {
        lo = std::min(lo, expected(i, j));
        hi = std::max(hi, expected(i, j));
      }
      EXPECT_EQ(r.values[0][static_cast<std::size_t>(j)], lo) << path << " column " << j;
      EXPECT_EQ(r.values[1][static_cast<std::size_t>(j)], hi) << path << " column " << j;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(IoModes, UnwrittenChunks, testing::Values("", "serial"), test::mode_name);

} // namespace
} // namespace tessera::ops
