// What an output carries besides its matrices: a sidecar (NAME.xmf) committed with the file and
// removed with an uncommitted one; dimension scales attached and read back; a dataset's
// attributes, fill value and storage carried from one file to another.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/block_distribution.hpp"
#include "io/h5_array.hpp"
#include "io/h5_attribute.hpp"
#include "io/h5_attribute_copy.hpp"
#include "io/h5_dimension_scales.hpp"
#include "io/h5_file.hpp"
#include "io/h5_matrix.hpp"
#include "io/h5_slab_views.hpp"
#include "io/xdmf_sidecar.hpp"
#include "io_test_support.hpp"

namespace tessera::io {
namespace {

using test::exists;
using test::expect_error;
using test::IoModeScope;
using test::leftovers_of;
using test::TempDir;

const std::vector<std::string> kNothing;

class Sidecar : public testing::TestWithParam<const char*> {
protected:
  IoModeScope scope_{GetParam()};
  TempDir dir_;
};

std::string contents(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_text(const std::string& path, const std::string& text) {
  if (test::rank_of() == 0)
    std::ofstream(path) << text;
  MPI_Barrier(MPI_COMM_WORLD);
}

void write_matrix(H5File& f, const std::string& path, Shape shape, const WriteOptions& o = {}) {
  const BlockDistribution d(shape, test::size_of());
  const int r = test::rank_of();
  const auto v = test::random_block<double>(7, d.begin(r), d.rows(r), 0, shape.cols);
  write_rows(f, path, d, r, DType::f64, v.data(), o);
}

TEST_P(Sidecar, IsCommittedWithTheFileAndNamesItRelatively) {
  const std::string name = dir_.file("out.h5");
  write_text(name + ".xmf", "an older run's sidecar");
  {
    H5File f = H5File::create(name, MPI_COMM_WORLD);
    write_matrix(f, "/A", {5, 3});
    f.add_sidecar(".xmf", [](const std::string& data_file) { return "refers to " + data_file; });
    MPI_Barrier(MPI_COMM_WORLD);
    EXPECT_EQ(contents(name + ".xmf"), "an older run's sidecar") << "replaced before the commit";
    f.commit();
  }
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_EQ(contents(name + ".xmf"), "refers to out.h5");
  EXPECT_EQ(leftovers_of(name), kNothing);
}

TEST_P(Sidecar, GoesWithAnUncommittedFile) {
  const std::string name = dir_.file("out.h5");
  {
    H5File f = H5File::create(name, MPI_COMM_WORLD);
    f.add_sidecar(".xmf", [](const std::string&) { return std::string("x"); });
  }
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_FALSE(exists(name));
  EXPECT_FALSE(exists(name + ".xmf"));
  EXPECT_EQ(leftovers_of(name), kNothing);
}

TEST_P(Sidecar, RefusesASidecarNameThatIsADirectory) {
  const std::string name = dir_.file("out.h5");
  if (test::rank_of() == 0)
    std::filesystem::create_directory(name + ".xmf");
  MPI_Barrier(MPI_COMM_WORLD);
  {
    H5File f = H5File::create(name, MPI_COMM_WORLD);
    expect_error<IoError>(
        [&] { f.add_sidecar(".xmf", [](const std::string&) { return std::string("x"); }); },
        {name + ".xmf", "a directory"});
  }
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_FALSE(exists(name));
  EXPECT_EQ(leftovers_of(name), kNothing);
}

// Each snapshot is a 2-D dataset of its own (a view of the series' slab): ParaView's Xdmf3
// readers, its default for .xmf, load no field given as an XDMF hyperslab.
TEST(Xdmf, DescribesEachSnapshotAsATwoDimensionalView) {
  const std::string doc =
      xdmf_rectilinear_series({"a&b.h5", "/grid/x", "/grid/y", "/xdmf/u", "u", 4, 3, {0.0, 0.5}});
  EXPECT_NE(doc.find("CollectionType=\"Temporal\""), std::string::npos);
  EXPECT_NE(doc.find("<Time Value=\"0.5\"/>"), std::string::npos);
  EXPECT_NE(doc.find("TopologyType=\"2DRectMesh\" Dimensions=\"3 4\""), std::string::npos);
  EXPECT_NE(doc.find(">a&amp;b.h5:/xdmf/u/1<"), std::string::npos) << "the second snapshot";
  EXPECT_NE(doc.find(">a&amp;b.h5:/xdmf/u/0<"), std::string::npos) << "escaped, relative";
  EXPECT_EQ(doc.find("HyperSlab"), std::string::npos);
  expect_error<InputError>(
      [] {
        (void)xdmf_rectilinear_series({"c:d.h5", "/x", "/y", "/u", "u", 1, 1, {0.0}});
      },
      {"c:d.h5", "':'"});
}

// The views read back as the slabs of the series, also after the file is renamed (commit).
TEST_P(Sidecar, SlabViewsReadAsTheSlabs) {
  const std::string name = dir_.file("views.h5");
  const hsize_t n = 3, ny = 4, nx = 5;
  std::vector<double> all(n * ny * nx);
  for (std::size_t i = 0; i < all.size(); ++i)
    all[i] = static_cast<double>(i) + 0.25;
  {
    H5File f = H5File::create(name, MPI_COMM_WORLD);
    nd::create(f, "/fields/u", nd::Elem::f64, {n, ny, nx});
    const bool root = test::rank_of() == 0;
    nd::write(f, "/fields/u", nd::Elem::f64, {{0, 0, 0}, {root ? n : 0, ny, nx}}, all.data());
    create_slab_views(f, "/fields/u", "/xdmf/u", 3);
    f.commit();
  }
  // As viewers read them: serially (HDF5 1.10 reads no virtual dataset through MPI-IO).
  const hid_t f = H5Fopen(name.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(f, 0);
  for (hsize_t k = 0; k < n; ++k) {
    const std::string view = slab_view_path("/xdmf/u", static_cast<std::int64_t>(k));
    const hid_t d = H5Dopen2(f, view.c_str(), H5P_DEFAULT);
    ASSERT_GE(d, 0) << view;
    const hid_t space = H5Dget_space(d);
    hsize_t dims[2] = {0, 0};
    EXPECT_EQ(H5Sget_simple_extent_ndims(space), 2);
    H5Sget_simple_extent_dims(space, dims, nullptr);
    EXPECT_EQ(dims[0], ny);
    EXPECT_EQ(dims[1], nx);
    std::vector<double> got(ny * nx);
    EXPECT_GE(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, got.data()), 0);
    EXPECT_EQ(got,
              std::vector<double>(all.begin() + static_cast<std::ptrdiff_t>(k * ny * nx),
                                  all.begin() + static_cast<std::ptrdiff_t>((k + 1) * ny * nx)))
        << view;
    H5Sclose(space);
    H5Dclose(d);
  }
  H5Fclose(f);
}

TEST_P(Sidecar, DimensionScalesAreAttachedAndReadBack) {
  const std::string name = dir_.file("scales.h5");
  {
    H5File f = H5File::create(name, MPI_COMM_WORLD);
    write_matrix(f, "/A", {3, 4});
    write_vector_values(f, "/coords/x", {false, 8, true, {0.5, 1.5, 2.5, 3.5}, {}});
    write_vector_values(f, "/coords/y", {true, 8, true, {}, {10, 20, 30}});
    attach_dimension_scale(f, "/A", 1, "/coords/x", "x");
    attach_dimension_scale(f, "/A", 0, "/coords/y", "y");
    f.commit();
  }
  const H5File f = H5File::open_read(name, MPI_COMM_WORLD);
  const std::vector<DimensionScale> s = dimension_scales(f, "/A");
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].path, "/coords/y");
  EXPECT_EQ(s[0].name, "y");
  EXPECT_EQ(s[1].path, "/coords/x");
  EXPECT_EQ(s[1].name, "x");
  const VectorValues y = read_vector_values(f, "/coords/y");
  EXPECT_TRUE(y.integer);
  EXPECT_EQ(y.ints, (std::vector<std::int64_t>{10, 20, 30}));
  EXPECT_EQ(read_vector_values(f, "/coords/x").reals, (std::vector<double>{0.5, 1.5, 2.5, 3.5}));
}

TEST_P(Sidecar, AttributesFillValueAndStorageAreCarriedOver) {
  const std::string in = dir_.file("in.h5"), out = dir_.file("out.h5");
  WriteOptions o;
  o.chunk_rows = 2;
  o.chunk_cols = 3;
  o.deflate = 4;
  o.shuffle = true;
  const double fill = -999.0;
  o.fill_value.resize(sizeof fill);
  std::memcpy(o.fill_value.data(), &fill, sizeof fill);
  {
    H5File f = H5File::create(in, MPI_COMM_WORLD);
    write_matrix(f, "/A", {7, 5}, o);
    write_attribute(f, "/A", "units", "K");
    write_attribute(f, "/A", "count", 3LL);
    write_attribute(f, "/A", "scale", 0.25);
    f.commit();
  }
  DatasetAttributes attrs;
  DatasetStorage storage;
  {
    const H5File f = H5File::open_read(in, MPI_COMM_WORLD);
    attrs = DatasetAttributes::read(f, "/A");
    storage = dataset_storage(f, "/A", DType::f64);
  }
  EXPECT_EQ(attrs.names(), (std::vector<std::string>{"count", "scale", "units"}));
  EXPECT_EQ(storage.options.chunk_rows, 2);
  EXPECT_EQ(storage.options.chunk_cols, 3);
  EXPECT_EQ(storage.options.deflate, 4);
  EXPECT_TRUE(storage.options.shuffle);
  EXPECT_EQ(storage.options.fill_value, o.fill_value);
  EXPECT_TRUE(storage.dropped.empty());
  {
    H5File f = H5File::create(out, MPI_COMM_WORLD);
    write_matrix(f, "/B", {5, 7}, storage.options);
    attrs.write(f, "/B");
    f.commit();
  }
  const H5File f = H5File::open_read(out, MPI_COMM_WORLD);
  EXPECT_EQ(read_string_attribute(f, "/B", "units"), "K");
  EXPECT_EQ(read_int_attribute(f, "/B", "count"), 3LL);
  EXPECT_EQ(read_double_attribute(f, "/B", "scale"), 0.25);
  const DatasetStorage again = dataset_storage(f, "/B", DType::f64);
  EXPECT_EQ(again.options.fill_value, o.fill_value);
  EXPECT_TRUE(again.options.shuffle);
  EXPECT_EQ(again.options.deflate, 4);
}

INSTANTIATE_TEST_SUITE_P(IoModes, Sidecar, testing::Values("", "serial"), test::mode_name);

} // namespace
} // namespace tessera::io
