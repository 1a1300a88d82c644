// HDF5 datasets read into and written from any layout (io/h5_layout.hpp, the library's
// h5::read_layout and h5::write_layout),
// against the row-block reader and writer: a random matrix written in row blocks is read into
// row, column, 2-D, block-cyclic (awkward block sizes, source processes, padded column-major
// local blocks) and general grid layouts and compared element by element; each layout's local
// blocks written back are read in row blocks and compared. Also in slices under a memory limit,
// on sub-communicators, and the errors every rank must raise together.
#include <gtest/gtest.h>

#include <algorithm>
#include <complex>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "core/block_distribution.hpp"
#include "io/h5_file.hpp"
#include "io/h5_layout.hpp"
#include "io/h5_matrix.hpp"
#include "io_test_support.hpp"

namespace tessera::io {
namespace {

using test::TempDir;

// Each a whole file, as the library's calls of the same names.
template <class T>
void write_rows_file(const std::string& name, const BlockDistribution& dist, const T* rows,
                     MPI_Comm comm) {
  H5File f = H5File::create(name, comm);
  write_rows(f, "/A", dist, test::rank_of(comm), dtype_of<T>, rows);
  f.commit();
}
template <class T>
void read_rows_file(const std::string& name, const BlockDistribution& dist, T* rows,
                    MPI_Comm comm) {
  const H5File f = H5File::open_read(name, comm);
  read_rows(f, "/A", dist, test::rank_of(comm), dtype_of<T>, rows);
}
template <class T>
void read_layout_file(const std::string& name, const Layout& l, T* block, MPI_Comm comm,
                      std::int64_t memory_limit = 0) {
  const H5File f = H5File::open_read(name, comm);
  read_layout(f, "/A", l, dtype_of<T>, block, memory_limit);
}
template <class T>
void write_layout_file(const std::string& name, const Layout& l, const T* block, MPI_Comm comm,
                       std::int64_t memory_limit = 0) {
  H5File f = H5File::create(name, comm);
  write_layout(f, "/A", l, dtype_of<T>, block, {}, memory_limit);
  f.commit();
}

// What padding (elements inside the leading dimension but outside the block) holds: a read
// must leave it alone.
template <class T>
T sentinel() {
  return T(-777);
}

// This rank's local block of `l` filled from the random matrix, padding set to the sentinel.
template <class T>
std::vector<T> local_block_of(const Layout& l, int rank, std::uint64_t seed) {
  std::vector<T> v(static_cast<std::size_t>(l.local_extent(rank)), sentinel<T>());
  for (std::int64_t bi = 0; bi < l.block_rows(); ++bi)
    for (std::int64_t bj = 0; bj < l.block_cols(); ++bj) {
      if (l.block_owner(bi, bj) != rank)
        continue;
      const std::int64_t r0 = l.row_splits()[static_cast<std::size_t>(bi)];
      const std::int64_t r1 = l.row_splits()[static_cast<std::size_t>(bi + 1)];
      const std::int64_t c0 = l.col_splits()[static_cast<std::size_t>(bj)];
      const std::int64_t c1 = l.col_splits()[static_cast<std::size_t>(bj + 1)];
      for (std::int64_t i = r0; i < r1; ++i)
        for (std::int64_t j = c0; j < c1; ++j) {
          const std::int64_t off = l.local_offset(rank, l.block_local_row(bi, bj) + i - r0,
                                                  l.block_local_col(bi, bj) + j - c0);
          v[static_cast<std::size_t>(off)] = test::random_element<T>(seed, i, j);
        }
    }
  return v;
}

// A block-cyclic layout whose column-major local blocks are padded: lld = local rows + 3.
Layout padded_cyclic(BlockCyclicSpec spec, int rank) {
  spec.lld = Layout::block_cyclic(spec).local_shape(rank).rows + 3;
  return Layout::block_cyclic(spec);
}

// A grid of random split points with random owners (some ranks may own nothing).
Layout random_grid(Shape s, int nranks, std::mt19937_64& rng, StorageOrder storage) {
  const auto splits = [&](std::int64_t n) {
    std::vector<std::int64_t> v{0};
    while (v.back() < n)
      v.push_back(std::min<std::int64_t>(n, v.back() + 1 + static_cast<std::int64_t>(rng() % 5)));
    return v;
  };
  std::vector<std::int64_t> rows = splits(s.rows), cols = splits(s.cols);
  std::vector<int> owners((rows.size() - 1) * (cols.size() - 1));
  for (int& o : owners)
    o = static_cast<int>(rng() % static_cast<std::uint64_t>(nranks));
  return Layout::grid(rows, cols, owners, nranks, storage);
}

// The layouts under test over `nranks` ranks (the same on every rank: rng is seeded alike).
std::vector<Layout> layouts_for(Shape s, int nranks, int rank, std::mt19937_64& rng) {
  std::vector<Layout> out = {Layout::row_blocks(s, nranks),
                             Layout::col_blocks(s, nranks, StorageOrder::ColMajor)};
  const int grids[][2] = {{1, 1}, {1, 2}, {2, 1}, {2, 2}, {3, 1}};
  for (const auto& g : grids) {
    if (g[0] * g[1] > nranks)
      continue;
    out.push_back(
        Layout::blocks_2d(s, g[0], g[1], GridOrder::ColMajor, StorageOrder::ColMajor, nranks));
    for (const auto& [mb, nb] : {std::pair<std::int64_t, std::int64_t>{1, 7}, {3, 2}, {5, 7}}) {
      BlockCyclicSpec spec;
      spec.global = s;
      spec.mb = mb;
      spec.nb = nb;
      spec.pr = g[0];
      spec.pc = g[1];
      spec.rsrc = static_cast<int>(rng() % static_cast<std::uint64_t>(g[0]));
      spec.csrc = static_cast<int>(rng() % static_cast<std::uint64_t>(g[1]));
      spec.nranks = nranks;
      spec.grid_order = mb == 3 ? GridOrder::ColMajor : GridOrder::RowMajor;
      spec.storage = nb == 2 ? StorageOrder::RowMajor : StorageOrder::ColMajor;
      out.push_back(nb == 7 ? padded_cyclic(spec, rank) : Layout::block_cyclic(spec));
    }
  }
  out.push_back(random_grid(s, nranks, rng, StorageOrder::RowMajor));
  out.push_back(random_grid(s, nranks, rng, StorageOrder::ColMajor));
  return out;
}

std::string describe(const Layout& l, int rank) {
  return std::to_string(l.block_rows()) + "x" + std::to_string(l.block_cols()) + " blocks, " +
         (l.storage() == StorageOrder::RowMajor ? "row" : "column") + "-major, ld " +
         std::to_string(l.leading_dimension(rank));
}

// Reads the row-block file into the layouts and writes each layout back, for one element type,
// shape and memory limit, over `comm`: every layout, or `sample` of them picked at random.
template <class T>
void check_layouts(Shape s, std::int64_t memory_limit, MPI_Comm comm, const std::string& dir,
                   std::size_t sample = 0) {
  const int rank = test::rank_of(comm);
  const int size = test::size_of(comm);
  const std::uint64_t seed = test::shared_seed() + static_cast<std::uint64_t>(size);
  SCOPED_TRACE("dtype " + std::string(dtype_name(dtype_of<T>)) + ", shape " + s.str() + ", " +
               std::to_string(size) + " ranks, memory limit " + std::to_string(memory_limit) +
               ", seed " + std::to_string(seed));
  const std::string in = dir + "/in.h5";
  const BlockDistribution dist(s, size);
  const std::vector<T> rows =
      test::random_block<T>(seed, dist.begin(rank), dist.rows(rank), 0, s.cols);
  write_rows_file(in, dist, rows.data(), comm);

  std::mt19937_64 rng(seed);
  std::vector<Layout> layouts = layouts_for(s, size, rank, rng);
  if (sample > 0 && sample < layouts.size()) {
    std::shuffle(layouts.begin(), layouts.end(), rng);
    layouts.resize(sample);
  }
  int k = 0;
  for (const Layout& l : layouts) {
    SCOPED_TRACE("layout " + std::to_string(k) + ": " + describe(l, rank));
    const std::vector<T> expected = local_block_of<T>(l, rank, seed);
    std::vector<T> got(expected.size(), sentinel<T>());
    read_layout_file(in, l, got.empty() ? nullptr : got.data(), comm, memory_limit);
    EXPECT_EQ(got, expected) << "rank " << rank << " read other values into its local block";

    const std::string out = dir + "/out" + std::to_string(k++) + ".h5";
    write_layout_file(out, l, expected.empty() ? nullptr : expected.data(), comm, memory_limit);
    std::vector<T> back(rows.size());
    read_rows_file(out, dist, back.data(), comm);
    EXPECT_EQ(back, rows) << "rank " << rank << " read back other rows than the layout wrote";
  }
}

TEST(H5Layout, EveryLayoutEveryType) {
  TempDir dir("h5layout");
  check_layouts<double>({13, 11}, 0, MPI_COMM_WORLD, dir.path());
  check_layouts<float>({6, 9}, 0, MPI_COMM_WORLD, dir.path(), 4);
  check_layouts<std::complex<float>>({7, 5}, 0, MPI_COMM_WORLD, dir.path(), 4);
  check_layouts<std::complex<double>>({5, 8}, 0, MPI_COMM_WORLD, dir.path(), 4);
}

TEST(H5Layout, ThinMatrices) {
  TempDir dir("h5layout");
  check_layouts<double>({1, 9}, 0, MPI_COMM_WORLD, dir.path(), 5);
  check_layouts<double>({10, 1}, 0, MPI_COMM_WORLD, dir.path(), 5);
}

// Slices of a few rows (the least: one row per rank each) instead of one row block.
TEST(H5Layout, SlicesUnderAMemoryLimit) {
  TempDir dir("h5layout");
  check_layouts<double>({17, 6}, 1, MPI_COMM_WORLD, dir.path(), 4);
  check_layouts<std::complex<float>>({9, 4}, 3 * 4 * 8 * 2, MPI_COMM_WORLD, dir.path(), 3);
}

// With a serial HDF5 the ranks take turns on the row blocks (TESSERA_HDF5_IO=serial forces it).
TEST(H5Layout, SerialMode) {
  test::IoModeScope scope("serial");
  TempDir dir("h5layout");
  check_layouts<double>({11, 7}, 0, MPI_COMM_WORLD, dir.path(), 4);
  check_layouts<double>({11, 7}, 1, MPI_COMM_WORLD, dir.path(), 2);
}

// Each half of the ranks reads and writes its own files over its own communicator.
TEST(H5Layout, SubCommunicators) {
  TempDir dir("h5layout");
  const int color = test::rank_of() % 2;
  MPI_Comm half = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, color, test::rank_of(), &half);
  // shared_seed() broadcasts over the world: both halves call it the same number of times.
  const std::string sub = dir.path() + "/half" + std::to_string(color);
  if (test::rank_of(half) == 0)
    std::filesystem::create_directory(sub);
  MPI_Barrier(half);
  check_layouts<double>({9, 7}, 0, half, sub, 6);
  MPI_Comm_free(&half);
}

// The dataset's f64 read as f32 (HDF5 converts).
TEST(H5Layout, ReadConverts) {
  TempDir dir("h5layout");
  const int rank = test::rank_of();
  const int size = test::size_of();
  const Shape s{8, 6};
  const std::uint64_t seed = test::shared_seed();
  const BlockDistribution dist(s, size);
  const auto rows = test::random_block<double>(seed, dist.begin(rank), dist.rows(rank), 0, s.cols);
  write_rows_file(dir.file("a.h5"), dist, rows.data(), MPI_COMM_WORLD);
  const Layout l = Layout::col_blocks(s, size, StorageOrder::ColMajor);
  std::vector<float> got(static_cast<std::size_t>(l.local_extent(rank)));
  read_layout_file(dir.file("a.h5"), l, got.empty() ? nullptr : got.data(), MPI_COMM_WORLD);
  const std::vector<double> wide = local_block_of<double>(l, rank, seed);
  ASSERT_EQ(got.size(), wide.size());
  for (std::size_t i = 0; i < got.size(); ++i)
    EXPECT_EQ(got[i], static_cast<float>(wide[i])) << "element " << i << " on rank " << rank;
}

TEST(H5Layout, ErrorsOnEveryRank) {
  TempDir dir("h5layout");
  const int rank = test::rank_of();
  const int size = test::size_of();
  const Shape s{6, 4};
  const std::string name = dir.file("a.h5");
  const BlockDistribution dist(s, size);
  std::vector<double> rows(static_cast<std::size_t>(dist.rows(rank) * s.cols), 1.0);
  write_rows_file(name, dist, rows.data(), MPI_COMM_WORLD);
  std::vector<double> block(static_cast<std::size_t>(s.rows * s.cols));

  test::expect_error<InputError>(
      [&] {
        read_layout_file(name, Layout::row_blocks(s, size + 1), block.data(), MPI_COMM_WORLD);
      },
      {"/A", "layout over", "communicator of"});
  test::expect_error<InputError>(
      [&] {
        read_layout_file(name, Layout::row_blocks({6, 5}, size), block.data(), MPI_COMM_WORLD);
      },
      {"/A", "6x4", "6x5"});
  // Rank 0 alone passes no block: every rank raises.
  const Layout l = Layout::blocks_2d(s, 1, 1, GridOrder::RowMajor, StorageOrder::RowMajor, size);
  test::expect_error<InputError>(
      [&] { read_layout_file(name, l, rank == 0 ? nullptr : block.data(), MPI_COMM_WORLD); },
      {"null"});
  test::expect_error<InputError>(
      [&] {
        write_layout_file(dir.file("b.h5"), l, rank == 0 ? nullptr : block.data(), MPI_COMM_WORLD);
      },
      {"null"});
  EXPECT_TRUE(test::leftovers_of(dir.file("b.h5")).empty()) << "a failed write left files";
  EXPECT_FALSE(test::exists(dir.file("b.h5")));
  // A complex dataset into a real layout.
  test::expect_error<InputError>(
      [&] {
        std::vector<std::complex<double>> z(block.size());
        read_layout_file(name, Layout::row_blocks(s, size), z.data(), MPI_COMM_WORLD);
      },
      {"/A"});
}

} // namespace
} // namespace tessera::io
