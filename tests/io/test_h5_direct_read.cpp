// Reads of contiguous, unfiltered datasets straight from the file (io/h5_direct_read.hpp): every
// kind of box of a 3-D dataset and of matrices, at any rank count, against the values written,
// beside reads HDF5 must still do itself (a conversion, a chunked dataset).
#include <gtest/gtest.h>
#include <hdf5.h>

#include <random>
#include <string>
#include <vector>

#include "core/block_distribution.hpp"
#include "io/h5_array.hpp"
#include "io/h5_file.hpp"
#include "io/h5_matrix.hpp"
#include "io_test_support.hpp"

namespace tessera::io {
namespace {

using test::TempDir;

// The value written at (i, j, k) of a d0 × d1 × d2 array: distinct and exact in f64.
double value_at(std::uint64_t i, std::uint64_t j, std::uint64_t k, const Dims& d) {
  return static_cast<double>((i * d[1] + j) * d[2] + k) + 0.25;
}

TEST(DirectRead, EveryBoxOfAThreeDimensionalDatasetIsWhatWasWritten) {
  TempDir dir;
  const std::uint64_t seed = test::shared_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const Dims d = {rng() % 7 + 1, rng() % 13 + 1, rng() % 29 + 1};
  const std::string name = dir.file("a.h5");
  {
    H5File f = H5File::create(name, MPI_COMM_WORLD);
    nd::create(f, "/u", nd::Elem::f64, d);
    std::vector<double> all(d[0] * d[1] * d[2]);
    for (std::uint64_t i = 0; i < d[0]; ++i)
      for (std::uint64_t j = 0; j < d[1]; ++j)
        for (std::uint64_t k = 0; k < d[2]; ++k)
          all[(i * d[1] + j) * d[2] + k] = value_at(i, j, k, d);
    const Box whole{{0, 0, 0}, d}, none{{0, 0, 0}, {0, 0, 0}};
    nd::write(f, "/u", nd::Elem::f64, test::rank_of() == 0 ? whole : none, all.data());
    f.commit();
  }
  const H5File f = H5File::open_read(name, MPI_COMM_WORLD);
  for (int trial = 0; trial < 40; ++trial) {
    Box b{{0, 0, 0}, {0, 0, 0}};
    for (int k = 0; k < 3; ++k) {
      // Whole, partial, or a single index along each dimension (a single row of a partial
      // stripe is one run that starts past row 0).
      const auto kind = rng() % 3;
      b.start[k] = kind == 0 ? 0 : rng() % d[k];
      b.count[k] = kind == 0 ? d[k] : kind == 1 ? 1 + rng() % (d[k] - b.start[k]) : 1;
    }
    // Each rank reads a box of its own (the ranks' boxes differ).
    for (int r = 0; r < test::rank_of(); ++r)
      b.count[0] = b.count[0] > 1 ? b.count[0] - 1 : b.count[0];
    std::vector<double> got(b.size(), -1.0);
    nd::read(f, "/u", nd::Elem::f64, b, got.data());
    // Counted, not asserted one by one: a rank leaving the loop early would leave the others
    // waiting in the next collective read.
    std::size_t n = 0, wrong = 0;
    for (std::uint64_t i = b.start[0]; i < b.start[0] + b.count[0]; ++i)
      for (std::uint64_t j = b.start[1]; j < b.start[1] + b.count[1]; ++j)
        for (std::uint64_t k = b.start[2]; k < b.start[2] + b.count[2]; ++k, ++n)
          wrong += got[n] != value_at(i, j, k, d);
    EXPECT_EQ(wrong, 0u) << "box start " << b.start[0] << "," << b.start[1] << "," << b.start[2]
                         << " count " << b.count[0] << "," << b.count[1] << "," << b.count[2];
  }
}

// A column panel of a matrix large enough to be read by several threads, and the reads HDF5
// does itself: f32 converted to f64, and a chunked copy of the same matrix.
TEST(DirectRead, PanelsOfLargeMatricesAndConvertedReadsAgree) {
  TempDir dir;
  const Shape shape{2053, 2048 + test::size_of()}; // 32 MiB and more of f64
  const BlockDistribution dist(shape, test::size_of());
  const int rank = test::rank_of();
  const std::uint64_t seed = test::shared_seed();
  const auto mine =
      test::random_block<double>(seed, dist.begin(rank), dist.rows(rank), 0, shape.cols);
  std::vector<float> mine32(mine.begin(), mine.end());
  const std::string name = dir.file("m.h5");
  {
    H5File f = H5File::create(name, MPI_COMM_WORLD);
    write_rows(f, "/A", dist, rank, DType::f64, mine.data());
    write_rows(f, "/A32", dist, rank, DType::f32, mine32.data());
    write_rows(f, "/C", dist, rank, DType::f64, mine.data(), {{.chunk_rows = 100}, false});
    f.commit();
  }
  const H5File f = H5File::open_read(name, MPI_COMM_WORLD);
  const std::int64_t c0 = 7, w = shape.cols - 9;
  const Hyperslab panel{dist.begin(rank), dist.rows(rank), c0, w};
  for (const char* path : {"/A", "/A32", "/C"}) {
    SCOPED_TRACE(path);
    std::vector<double> got(static_cast<std::size_t>(panel.rows * w), -1.0);
    read_block(f, path, panel, DType::f64, got.data());
    std::size_t wrong = 0;
    for (std::int64_t i = 0; i < panel.rows; ++i)
      for (std::int64_t j = 0; j < w; ++j) {
        const double want = mine[static_cast<std::size_t>(i * shape.cols + c0 + j)];
        const double expected = std::string(path) == "/A32" ? double(float(want)) : want;
        wrong += got[static_cast<std::size_t>(i * w + j)] != expected;
      }
    EXPECT_EQ(wrong, 0u);
  }
}

} // namespace
} // namespace tessera::io
