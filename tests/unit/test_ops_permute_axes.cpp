// --axes and --dims against an input's dimension names: names, indices, the 2-D default, and
// the errors that name the dataset and its dimensions.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.hpp"
#include "ops/permute_axes.hpp"

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
