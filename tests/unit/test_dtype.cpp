#include <gtest/gtest.h>

#include "core/dtype.hpp"
#include "core/error.hpp"
#include "core/reduction.hpp"

using namespace tessera;

TEST(DType, RoundTripsNamesAndSizes) {
  for (DType t : {DType::f32, DType::f64, DType::c64, DType::c128}) {
    EXPECT_EQ(parse_dtype(dtype_name(t)), t);
    const std::size_t sz = dispatch_dtype(t, [](auto tag) { return sizeof(tag); });
    EXPECT_EQ(dtype_size(t), sz);
  }
  EXPECT_THROW(parse_dtype("i32"), InputError);
}

TEST(DType, OnlyRealTypesReduce) {
  EXPECT_NO_THROW(dispatch_real_dtype(DType::f32, [](auto) { return 0; }));
  EXPECT_THROW(dispatch_real_dtype(DType::c64, [](auto) { return 0; }), InputError);
}

TEST(Reduction, ParsesOpListsAndRejectsUnknownOps) {
  const auto ops = parse_ops("sum,norm2,max");
  ASSERT_EQ(ops.size(), 3u);
  EXPECT_EQ(ops[0], Op::Sum);
  EXPECT_EQ(ops[1], Op::Norm2);
  EXPECT_EQ(ops[2], Op::Max);
  EXPECT_THROW(parse_ops("sum,median"), InputError);
  EXPECT_THROW(parse_ops(""), InputError);
  EXPECT_EQ(parse_axis("cols"), Axis::Cols);
}
