// Files that h5py writes, tessera reads, and the other way round: f32, f64 and numpy's
// complex64 / complex128 (h5py's compound {r, i}). Skipped when /usr/bin/python3 has no h5py.
#include <gtest/gtest.h>

#include <complex>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "core/block_distribution.hpp"
#include "io/h5_file.hpp"
#include "io/h5_matrix.hpp"
#include "io_test_support.hpp"

namespace tessera::io {
namespace {

using test::IoModeScope;
using test::TempDir;

constexpr const char* python = "/usr/bin/python3";

// Values both sides compute exactly: small integers and halves.
template <class T>
T formula(std::int64_t i, std::int64_t j) {
  if constexpr (std::is_floating_point_v<T>)
    return static_cast<T>(i * 64 + j) + T(0.5);
  else
    return T(static_cast<typename T::value_type>(i) + 0.25f,
             static_cast<typename T::value_type>(j) - 0.5f);
}

// The same matrices in numpy.
const char* const numpy_formulas = R"(
import sys, numpy as np, h5py
def mats(m, n):
    i, j = np.meshgrid(np.arange(m), np.arange(n), indexing="ij")
    real = i * 64 + j + 0.5
    cplx = (i + 0.25) + 1j * (j - 0.5)
    return {"f32": real.astype(np.float32), "f64": real.astype(np.float64),
            "c64": cplx.astype(np.complex64), "c128": cplx.astype(np.complex128)}
)";

// Rank 0 runs a python script; every rank gets its exit status.
int run_python(const TempDir& dir, const std::string& body) {
  int rc = 0;
  if (test::rank_of() == 0) {
    const std::string script = dir.file("check.py");
    std::ofstream(script) << numpy_formulas << body;
    rc = std::system((std::string(python) + " " + script + " 2>&1").c_str());
  }
  MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return rc;
}

bool have_h5py(const TempDir& dir) {
  return run_python(dir, "\n") == 0;
}

template <class T>
void expect_formula(const H5File& f, const std::string& path, Shape shape) {
  const int rank = test::rank_of();
  const BlockDistribution dist(shape, test::size_of());
  const DatasetInfo info = inspect_dataset(f, path);
  EXPECT_EQ(info.dtype, dtype_of<T>) << path;
  EXPECT_EQ(info.shape, shape) << path;
  std::vector<T> v(static_cast<std::size_t>(dist.local_size(rank)));
  read_rows(f, path, dist, rank, dtype_of<T>, v.data());
  for (std::int64_t i = 0; i < dist.rows(rank); ++i)
    for (std::int64_t j = 0; j < shape.cols; ++j)
      ASSERT_EQ(v[static_cast<std::size_t>(i * shape.cols + j)],
                formula<T>(dist.begin(rank) + i, j))
          << path << " element (" << dist.begin(rank) + i << ", " << j << ")";
}

template <class T>
void write_formula(H5File& f, const std::string& path, Shape shape) {
  const int rank = test::rank_of();
  const BlockDistribution dist(shape, test::size_of());
  std::vector<T> v(static_cast<std::size_t>(dist.local_size(rank)));
  for (std::int64_t i = 0; i < dist.rows(rank); ++i)
    for (std::int64_t j = 0; j < shape.cols; ++j)
      v[static_cast<std::size_t>(i * shape.cols + j)] = formula<T>(dist.begin(rank) + i, j);
  write_rows(f, path, dist, rank, dtype_of<T>, v.data());
}

class H5py : public testing::TestWithParam<const char*> {
protected:
  void SetUp() override {
    if (!have_h5py(dir_))
      GTEST_SKIP() << python << " cannot import numpy and h5py";
  }
  IoModeScope scope_{GetParam()};
  TempDir dir_;
};

TEST_P(H5py, TesseraReadsWhatH5pyWrites) {
  const std::string name = dir_.file("from_h5py.h5");
  ASSERT_EQ(run_python(dir_, "with h5py.File('" + name +
                                 "', 'w') as f:\n"
                                 "    for k, a in mats(7, 5).items(): f['g/' + k] = a\n"),
            0);
  H5File f = H5File::open_read(name, MPI_COMM_WORLD);
  expect_formula<float>(f, "/g/f32", {7, 5});
  expect_formula<double>(f, "/g/f64", {7, 5});
  expect_formula<std::complex<float>>(f, "/g/c64", {7, 5});
  expect_formula<std::complex<double>>(f, "/g/c128", {7, 5});
}

TEST_P(H5py, H5pyReadsWhatTesseraWrites) {
  const std::string name = dir_.file("from_tessera.h5");
  {
    H5File f = H5File::create(name, MPI_COMM_WORLD);
    write_formula<float>(f, "/f32", {9, 4});
    write_formula<double>(f, "/f64", {9, 4});
    write_formula<std::complex<float>>(f, "/c64", {9, 4});
    write_formula<std::complex<double>>(f, "/c128", {9, 4});
    f.commit();
  }
  EXPECT_EQ(run_python(dir_, "with h5py.File('" + name +
                                 "', 'r') as f:\n"
                                 "    assert f.attrs['complete'] == 1\n"
                                 "    for k, a in mats(9, 4).items():\n"
                                 "        b = f[k][...]\n"
                                 "        assert b.dtype == a.dtype, (k, b.dtype)\n"
                                 "        assert np.array_equal(a, b), k\n"),
            0);
}

INSTANTIATE_TEST_SUITE_P(IoModes, H5py, testing::Values("", "serial"), test::mode_name);

} // namespace
} // namespace tessera::io
