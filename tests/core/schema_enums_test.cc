// core/schema_enums.h: every member of the schema's enums maps to nrt's own and back, nrt's members
// all map to the schema, and values outside the schema's enums map to nothing.
#include "core/schema_enums.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace nrt {
namespace {

// Every schema member maps, distinct members to distinct members, and back to itself.
template <typename SchemaEnum, std::size_t N, typename NameOf>
void expect_every_schema_member_round_trips(const SchemaEnum (&members)[N], NameOf name_of) {
  std::set<int> seen;
  for (SchemaEnum member : members) {
    const auto ours = from_schema(member);
    ASSERT_TRUE(ours.has_value()) << name_of(member);
    EXPECT_TRUE(seen.insert(static_cast<int>(*ours)).second) << name_of(member) << " shares a member";
    EXPECT_EQ(to_schema(*ours), member) << name_of(member);
  }
}

// Every nrt member (dense 0..count-1) maps to a schema member and back to itself.
template <typename Ours>
void expect_every_own_member_round_trips(int count) {
  for (int i = 0; i < count; ++i) {
    const auto ours = static_cast<Ours>(i);
    const auto schema = to_schema(ours);
    const auto back = from_schema(schema);
    ASSERT_TRUE(back.has_value()) << i;
    EXPECT_EQ(*back, ours) << i;
  }
}

TEST(SchemaEnums, EveryScalarTypeMapsBothWays) {
  expect_every_schema_member_round_trips(fb::EnumValuesScalarType(),
                                         [](fb::ScalarType t) { return fb::EnumNameScalarType(t); });
  expect_every_own_member_round_trips<ScalarType>(kNumScalarTypes);
  EXPECT_EQ(std::size(fb::EnumValuesScalarType()), static_cast<std::size_t>(kNumScalarTypes));
}

TEST(SchemaEnums, ScalarTypeNamesAgreeWithTheSchema) {
  // Same member names on both sides: FLOAT32 is FLOAT32, whatever the numbers.
  for (fb::ScalarType member : fb::EnumValuesScalarType()) {
    const ScalarType ours = *from_schema(member);
    EXPECT_EQ(element_size(member), element_size(ours)) << fb::EnumNameScalarType(member);
    EXPECT_EQ(short_name(member), short_name(ours)) << fb::EnumNameScalarType(member);
  }
  EXPECT_EQ(*from_schema(fb::ScalarType::FLOAT32), ScalarType::FLOAT32);
  EXPECT_EQ(*from_schema(fb::ScalarType::BFLOAT16), ScalarType::BFLOAT16);
  EXPECT_EQ(*from_schema(fb::ScalarType::UINT16), ScalarType::UINT16);  // 28 in the schema, 14 here
  EXPECT_EQ(*from_schema(fb::ScalarType::BITS16), ScalarType::BITS16);
  EXPECT_EQ(element_size(ScalarType::COMPLEX128), 16u);
  EXPECT_EQ(element_size(ScalarType::UNKNOWN), 0u);
}

TEST(SchemaEnums, ValuesOutsideTheScalarTypeEnumMapToNothing) {
  for (int value : {-1, 14, 27, 36, 63, 74, 127, 128, 200, 32767}) {
    const auto type = static_cast<fb::ScalarType>(value);
    EXPECT_FALSE(from_schema(type).has_value()) << value;
    EXPECT_FALSE(is_known(type)) << value;
    EXPECT_EQ(element_size(type), 0u) << value;
    EXPECT_EQ(short_name(type), "?") << value;
  }
  EXPECT_FALSE(is_known(static_cast<ScalarType>(kNumScalarTypes)));
  EXPECT_EQ(element_size(static_cast<ScalarType>(200)), 0u);
  EXPECT_EQ(short_name(static_cast<ScalarType>(200)), "?");
}

TEST(SchemaEnums, CheckedConversionNamesTheField) {
  auto good = checked_from_schema(fb::ScalarType::INT64, "value 'x' dtype");
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(*good, ScalarType::INT64);
  auto bad = checked_from_schema(static_cast<fb::ScalarType>(99), "value 'x' dtype");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, ErrorCode::UnknownEnumValue);
  EXPECT_NE(bad.error().message.find("value 'x' dtype holds enum value 99"), std::string::npos) << bad.error().message;
}

TEST(SchemaEnums, ShortNamesParseBack) {
  for (int i = 1; i < kNumScalarTypes; ++i) {
    const auto type = static_cast<ScalarType>(i);
    const auto parsed = scalar_type_from_short_name(short_name(type));
    ASSERT_TRUE(parsed.has_value()) << short_name(type);
    EXPECT_EQ(*parsed, type);
    EXPECT_EQ(schema_scalar_type_from_short_name(short_name(type)), to_schema(type));
  }
  EXPECT_FALSE(scalar_type_from_short_name("?").has_value());
  EXPECT_FALSE(scalar_type_from_short_name("float").has_value());
}

TEST(SchemaEnums, EveryLayoutMemoryFormatAndReduceOpMapsBothWays) {
  expect_every_schema_member_round_trips(fb::EnumValuesLayout(), [](fb::Layout v) { return fb::EnumNameLayout(v); });
  expect_every_own_member_round_trips<Layout>(kNumLayouts);
  EXPECT_EQ(std::size(fb::EnumValuesLayout()), static_cast<std::size_t>(kNumLayouts));

  expect_every_schema_member_round_trips(fb::EnumValuesMemoryFormat(),
                                         [](fb::MemoryFormat v) { return fb::EnumNameMemoryFormat(v); });
  expect_every_own_member_round_trips<MemoryFormat>(kNumMemoryFormats);
  EXPECT_EQ(std::size(fb::EnumValuesMemoryFormat()), static_cast<std::size_t>(kNumMemoryFormats));

  expect_every_schema_member_round_trips(fb::EnumValuesReduceOp(),
                                         [](fb::ReduceOp v) { return fb::EnumNameReduceOp(v); });
  expect_every_own_member_round_trips<ReduceOp>(kNumReduceOps);
  EXPECT_EQ(std::size(fb::EnumValuesReduceOp()), static_cast<std::size_t>(kNumReduceOps));
  for (fb::ReduceOp member : fb::EnumValuesReduceOp()) {
    EXPECT_STREQ(reduce_op_name(*from_schema(member)), fb::EnumNameReduceOp(member));
  }

  EXPECT_FALSE(from_schema(static_cast<fb::Layout>(9)).has_value());
  EXPECT_FALSE(from_schema(static_cast<fb::MemoryFormat>(5)).has_value());
  EXPECT_FALSE(from_schema(static_cast<fb::ReduceOp>(9)).has_value());
  EXPECT_FALSE(from_schema(static_cast<fb::ReduceOp>(-1)).has_value());
  EXPECT_STREQ(reduce_op_name(static_cast<ReduceOp>(kNumReduceOps)), "?");
}

TEST(SchemaEnums, DeviceTypesNrtRunsMapAndTheOthersDoNot) {
  expect_every_own_member_round_trips<DeviceKind>(kNumDeviceKinds);
  EXPECT_EQ(*from_schema(fb::DeviceType::CPU), DeviceKind::kCpu);
  EXPECT_EQ(*from_schema(fb::DeviceType::CUDA), DeviceKind::kCuda);
  int unmapped = 0;
  for (fb::DeviceType member : fb::EnumValuesDeviceType()) {
    if (from_schema(member).has_value()) continue;
    ++unmapped;
    EXPECT_NE(member, fb::DeviceType::CPU);
    EXPECT_NE(member, fb::DeviceType::CUDA);
  }
  // Every member but CPU and CUDA is refused (the executor says NotSupported, naming it).
  EXPECT_EQ(unmapped, static_cast<int>(std::size(fb::EnumValuesDeviceType())) - kNumDeviceKinds);
  EXPECT_FALSE(from_schema(static_cast<fb::DeviceType>(99)).has_value());
}

}  // namespace
}  // namespace nrt
