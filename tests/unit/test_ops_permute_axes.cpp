// --axes and --dims against an input's dimension names: names, indices, the 2-D default, and
// the errors that name the dataset and its dimensions; the ops over --dims; the chunks of N-D
// outputs.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.hpp"
#include "io/h5_typed_array.hpp"
#include "ops/permute_axes.hpp"
#include "ops/reduce_dims.hpp"

using namespace tessera;

namespace {

const std::vector<std::string> kNames{"time", "lat", "lon"};

std::string error_of(const std::string& spec, const std::vector<std::string>& names) {
  try {
    ops::resolve_axes(spec, names, "in.nc:/temp");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

} // namespace

TEST(PermuteAxes, ByNameByIndexAndMixed) {
  EXPECT_EQ(ops::resolve_axes("lat,lon,time", kNames, "x"), (std::vector<int>{1, 2, 0}));
  EXPECT_EQ(ops::resolve_axes("2,0,1", kNames, "x"), (std::vector<int>{2, 0, 1}));
  EXPECT_EQ(ops::resolve_axes(" lon , 0,lat", kNames, "x"), (std::vector<int>{2, 0, 1}));
}

TEST(PermuteAxes, EmptyIsTheTransposeOfAMatrixOnly) {
  EXPECT_EQ(ops::resolve_axes("", {"y", "x"}, "x"), (std::vector<int>{1, 0}));
  EXPECT_EQ(ops::resolve_axes("", {"", ""}, "x"), (std::vector<int>{1, 0}));
  const std::string e = error_of("", kNames);
  EXPECT_NE(e.find("in.nc:/temp has rank 3"), std::string::npos) << e;
  EXPECT_NE(e.find("(time, lat, lon)"), std::string::npos) << e;
  EXPECT_NE(e.find("--axes 2,1,0"), std::string::npos) << e;
}

TEST(PermuteAxes, ErrorsNameTheProblem) {
  EXPECT_NE(error_of("lat,lat,time", kNames).find("named twice"), std::string::npos);
  EXPECT_NE(error_of("lat,lon", kNames).find("name every one of them once"), std::string::npos);
  EXPECT_NE(error_of("lat,lon,depth", kNames).find("'depth' is neither"), std::string::npos);
  EXPECT_NE(error_of("0,1,3", kNames).find("'3' is neither"), std::string::npos);
  EXPECT_NE(error_of("0,1,-1", kNames).find("'-1' is neither"), std::string::npos);
  // Dimensions without names are reachable by index, and shown by index.
  EXPECT_EQ(ops::resolve_axes("1,0,2", {"", "", ""}, "x"), (std::vector<int>{1, 0, 2}));
  EXPECT_NE(error_of("", {"", "", "", ""}).find("(dim0, dim1, dim2, dim3)"), std::string::npos);
}

TEST(PermuteAxes, DimsAreAnySubsetInTheInputsOrder) {
  EXPECT_EQ(ops::resolve_dims("lon,lat", kNames, "x"), (std::vector<int>{1, 2}));
  EXPECT_EQ(ops::resolve_dims("0", kNames, "x"), (std::vector<int>{0}));
  EXPECT_THROW(ops::resolve_dims("lat,1", kNames, "x"), InputError);
  EXPECT_THROW(ops::resolve_dims("depth", kNames, "x"), InputError);
}

TEST(ReduceDimsOps, EveryOpOfThe2DReducePlusTheStatistics) {
  using ops::DimsOp;
  EXPECT_EQ(ops::parse_dims_ops("sum,mean,min,max,norm1,norm2,norminf,count"),
            (std::vector<DimsOp>{DimsOp::Sum, DimsOp::Mean, DimsOp::Min, DimsOp::Max, DimsOp::Norm1,
                                 DimsOp::Norm2, DimsOp::NormInf, DimsOp::Count}));
  EXPECT_EQ(ops::parse_dims_ops("var,std,,argmin,argmax,var"),
            (std::vector<DimsOp>{DimsOp::Var, DimsOp::Std, DimsOp::ArgMin, DimsOp::ArgMax}));
  for (const DimsOp op : ops::parse_dims_ops("argmax,norminf,std"))
    EXPECT_EQ(ops::parse_dims_ops(ops::dims_op_name(op)), std::vector<DimsOp>{op});
  EXPECT_TRUE(ops::dims_only("argmin"));
  EXPECT_FALSE(ops::dims_only("norm2"));
  try {
    ops::parse_dims_ops("mean,median");
    FAIL() << "median was taken";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("'median'"), std::string::npos) << e.what();
  }
}

TEST(NdChunks, ContiguousUnlessAskedThenAboutOneMiB) {
  using io::Dims;
  const io::WriteOptions none;
  EXPECT_TRUE(io::nd::chunk_dims({64, 2048, 2048}, DType::f32, none).empty());
  io::WriteOptions gz;
  gz.deflate = 4;
  // The innermost dimension whole, the next filled to about 1 MiB, the outermost 1.
  EXPECT_EQ(io::nd::chunk_dims({64, 2048, 2048}, DType::f32, gz), (Dims{1, 128, 2048}));
  // Small inner dimensions whole; the outermost filled to about 1 MiB (at most its extent).
  EXPECT_EQ(io::nd::chunk_dims({100000, 7, 11}, DType::f64, gz), (Dims{1702, 7, 11}));
  EXPECT_EQ(io::nd::chunk_dims({3, 1, 5, 7}, DType::f64, gz), (Dims{3, 1, 5, 7}));
  EXPECT_EQ(io::nd::chunk_dims({1000000}, DType::f64, gz), (Dims{131072}));
  // A rank-2 array is chunked as a matrix with the same options.
  EXPECT_EQ(io::nd::chunk_dims({5000, 300}, DType::f64, gz),
            (Dims{static_cast<hsize_t>(io::chunk_dims({5000, 300}, DType::f64, gz).rows), 300}));
  io::WriteOptions rows;
  rows.chunk_rows = 2;
  EXPECT_EQ(io::nd::chunk_dims({5, 3, 4}, DType::i16, rows), (Dims{2, 3, 4}));
  rows.chunk_rows = 9;
  EXPECT_EQ(io::nd::chunk_dims({5, 3, 4}, DType::i16, rows), (Dims{5, 3, 4}));
  io::WriteOptions whole;
  whole.chunk = {1, 100, 2};
  EXPECT_EQ(io::nd::chunk_dims({5, 3, 4}, DType::u8, whole), (Dims{1, 3, 2}));
}
