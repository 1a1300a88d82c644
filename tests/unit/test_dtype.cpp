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
  EXPECT_THROW(parse_dtype("i24"), InputError);
  EXPECT_THROW(parse_dtype("uint"), InputError);
}

TEST(DType, IntegerTypesHaveNamesSizesAndNoMatrixDispatch) {
  const struct {
    DType t;
    const char* name;
    const char* long_name;
    std::size_t size;
  } ints[] = {{DType::i8, "i8", "int8", 1},     {DType::i16, "i16", "int16", 2},
              {DType::i32, "i32", "int32", 4},  {DType::i64, "i64", "int64", 8},
              {DType::u8, "u8", "uint8", 1},    {DType::u16, "u16", "uint16", 2},
              {DType::u32, "u32", "uint32", 4}, {DType::u64, "u64", "uint64", 8}};
  for (const auto& i : ints) {
    EXPECT_EQ(dtype_name(i.t), i.name);
    EXPECT_EQ(parse_dtype(i.name), i.t);
    EXPECT_EQ(parse_dtype(i.long_name), i.t);
    EXPECT_EQ(dtype_size(i.t), i.size);
    EXPECT_TRUE(dtype_is_integer(i.t));
    EXPECT_FALSE(dtype_is_real(i.t));
    EXPECT_THROW(dispatch_dtype(i.t, [](auto tag) { return sizeof(tag); }), InputError);
    EXPECT_THROW(dispatch_real_dtype(i.t, [](auto tag) { return sizeof(tag); }), InputError);
  }
  EXPECT_EQ(dtype_of<std::int16_t>, DType::i16);
  EXPECT_EQ(dtype_of<const std::uint64_t>, DType::u64);
  EXPECT_FALSE(dtype_is_integer(DType::c64));
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
