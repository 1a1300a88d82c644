// The C API's HDF5 reads and writes in any layout (tessera_h5_read_layout, _write_layout and
// their Fortran-handle variants), called as a C application calls them through libtessera.so: a
// matrix written in row blocks read into block-cyclic layouts from ScaLAPACK descriptors (padded
// column-major local blocks, awkward block sizes) and written back, compared element by
// element; the errors fail every rank together, with a message. The main is
// c_test_main.cpp.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <tessera/layout.hpp>
#include <tessera/tessera.h>

#include "c_test_support.hpp"

namespace {

using tessera::c_test::comm_rank;
using tessera::c_test::comm_size;

double value(std::int64_t i, std::int64_t j) {
  return static_cast<double>(i * 1000 + j) + 0.25;
}

// A directory every rank sees, made by rank 0 and removed by it at the end.
class SharedDir {
public:
  SharedDir() {
    std::string name(256, '\0');
    if (comm_rank() == 0) {
      const char* base = std::getenv("TMPDIR");
      std::string t = std::string(base && *base ? base : "/tmp") + "/tessera-c-h5-XXXXXX";
      if (::mkdtemp(t.data()) == nullptr)
        std::abort();
      name.assign(t).resize(256, '\0');
    }
    MPI_Bcast(name.data(), 256, MPI_CHAR, 0, MPI_COMM_WORLD);
    path_ = name.c_str();
  }
  ~SharedDir() {
    MPI_Barrier(MPI_COMM_WORLD);
    if (comm_rank() == 0)
      std::filesystem::remove_all(path_);
  }
  std::string file(const std::string& n) const { return path_ + "/" + n; }

private:
  std::string path_;
};

// Writes the m x n matrix of value() in row blocks through the C API.
void write_reference(const std::string& name, std::int64_t m, std::int64_t n) {
  const int p = comm_size(), r = comm_rank();
  const std::int64_t b = tessera_block_begin(m, p, r), rows = tessera_block_rows(m, p, r);
  std::vector<double> v(static_cast<std::size_t>(rows * n) + 1);
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < n; ++j)
      v[static_cast<std::size_t>(i * n + j)] = value(b + i, j);
  ASSERT_EQ(tessera_h5_write_rows(name.c_str(), "/A", m, n, TESSERA_F64, v.data(), MPI_COMM_WORLD),
            TESSERA_OK)
      << tessera_last_error();
}

struct Case {
  int m, n, mb, nb, nprow, npcol, rsrc, csrc;
  int pad; // the leading dimension beyond the local rows
};

TEST(CLayoutHdf5, BlockCyclicReadAndWrite) {
  const int p = comm_size(), me = comm_rank();
  SharedDir dir;
  const Case cases[] = {{13, 9, 3, 2, 1, p, 0, p - 1, 2},
                        {11, 6, 5, 7, p, 1, p / 2, 0, 0},
                        {7, 10, 1, 3, p >= 2 ? 2 : 1, p >= 4 ? 2 : 1, 0, 0, 1}};
  int k = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE("case " + std::to_string(k));
    const std::string in = dir.file("in" + std::to_string(k) + ".h5");
    const std::string out = dir.file("out" + std::to_string(k++) + ".h5");
    write_reference(in, c.m, c.n);
    // The descriptor as descinit fills it: this rank's local rows plus the padding.
    int desc[9] = {1, 0, c.m, c.n, c.mb, c.nb, c.rsrc, c.csrc, 1};
    tessera_layout tight = nullptr;
    ASSERT_EQ(tessera_layout_create_scalapack(&tight, desc, c.nprow, c.npcol,
                                              TESSERA_GRID_ROW_MAJOR, nullptr, p),
              TESSERA_OK)
        << tessera_last_error();
    int64_t rows = 0, cols = 0;
    tessera_layout_local_block(tight, me, &rows, &cols, nullptr, nullptr, nullptr);
    tessera_layout_destroy(tight);
    desc[8] = static_cast<int>(std::max<int64_t>(rows, 1) + c.pad);
    tessera_layout layout = nullptr;
    ASSERT_EQ(tessera_layout_create_scalapack(&layout, desc, c.nprow, c.npcol,
                                              TESSERA_GRID_ROW_MAJOR, nullptr, p),
              TESSERA_OK)
        << tessera_last_error();
    const tessera::Layout ref = tessera::Layout::from_scalapack(desc, c.nprow, c.npcol, p);
    std::vector<double> block(static_cast<std::size_t>(ref.local_extent(me)) + 1, -1.0);

    ASSERT_EQ(tessera_h5_read_layout(in.c_str(), "/A", layout, TESSERA_F64, block.data(), 0,
                                     MPI_COMM_WORLD),
              TESSERA_OK)
        << tessera_last_error();
    int wrong = 0;
    for (std::int64_t i = 0; i < c.m; ++i)
      for (std::int64_t j = 0; j < c.n; ++j) {
        const tessera::LocalIndex x = ref.local_index(i, j);
        if (x.rank == me &&
            block[static_cast<std::size_t>(ref.local_offset(me, x.row, x.col))] != value(i, j))
          ++wrong;
      }
    // The padding below each local column is left as it was.
    for (std::int64_t j = 0; j < cols; ++j)
      for (std::int64_t i = rows; i < desc[8]; ++i)
        if (block[static_cast<std::size_t>(j * desc[8] + i)] != -1.0)
          ++wrong;
    EXPECT_EQ(wrong, 0) << "rank " << me << ": elements read wrong";

    // Written back through the Fortran-handle variant, in slices of few rows.
    ASSERT_EQ(tessera_h5_write_layout_f(out.c_str(), "/A", layout, TESSERA_F64, block.data(), 64,
                                        MPI_Comm_c2f(MPI_COMM_WORLD)),
              TESSERA_OK)
        << tessera_last_error();
    const std::int64_t my_rows = tessera_block_rows(c.m, p, me);
    const std::int64_t first = tessera_block_begin(c.m, p, me);
    std::vector<double> back(static_cast<std::size_t>(my_rows * c.n) + 1);
    ASSERT_EQ(
        tessera_h5_read_rows(out.c_str(), "/A", c.m, c.n, TESSERA_F64, back.data(), MPI_COMM_WORLD),
        TESSERA_OK)
        << tessera_last_error();
    wrong = 0;
    for (std::int64_t i = 0; i < my_rows; ++i)
      for (std::int64_t j = 0; j < c.n; ++j)
        if (back[static_cast<std::size_t>(i * c.n + j)] != value(first + i, j))
          ++wrong;
    EXPECT_EQ(wrong, 0) << "rank " << me << ": rows written wrong";
    tessera_layout_destroy(layout);
  }
}

TEST(CLayoutHdf5, ErrorsOnEveryRank) {
  const int p = comm_size(), me = comm_rank();
  SharedDir dir;
  const std::string in = dir.file("a.h5");
  write_reference(in, 5, 4);
  tessera_layout layout = nullptr;
  ASSERT_EQ(tessera_layout_create_rows(&layout, 5, 4, p, TESSERA_ROW_MAJOR), TESSERA_OK);
  std::vector<double> block(20);
  // A null layout on rank 0 alone: every rank fails, and says why.
  EXPECT_EQ(tessera_h5_read_layout(in.c_str(), "/A", me == 0 ? nullptr : layout, TESSERA_F64,
                                   block.data(), 0, MPI_COMM_WORLD),
            TESSERA_ERROR_INPUT);
  EXPECT_NE(std::string(tessera_last_error()).find("layout"), std::string::npos)
      << tessera_last_error();
  EXPECT_EQ(tessera_h5_read_layout(in.c_str(), "/A", layout, static_cast<tessera_dtype>(42),
                                   block.data(), 0, MPI_COMM_WORLD),
            TESSERA_ERROR_INPUT);
  EXPECT_EQ(tessera_h5_read_layout(in.c_str(), "/missing", layout, TESSERA_F64, block.data(), 0,
                                   MPI_COMM_WORLD),
            TESSERA_ERROR_INPUT);
  EXPECT_NE(std::string(tessera_last_error()).find("/missing"), std::string::npos)
      << tessera_last_error();
  EXPECT_EQ(tessera_h5_write_layout(dir.file("b.h5").c_str(), "/B", layout, TESSERA_F64,
                                    block.data(), -1, MPI_COMM_WORLD),
            TESSERA_ERROR_INPUT);
  EXPECT_FALSE(std::filesystem::exists(dir.file("b.h5")));
  tessera_layout_destroy(layout);
}

} // namespace
