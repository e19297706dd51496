// Every row of every enum table converts both ways, every nrt member has exactly one row, the
// foreign numbers are unique, and values without a row are errors with a code (never a cast).
#include <set>

#include <gtest/gtest.h>

#include "serializer/torch_export/enum_tables.h"
#include "serializer/torch_export/torch_error_codes.h"

namespace nrt::torch_export {
namespace {

// Each table lists each member of the nrt enum exactly once, and nothing else.
template <typename Row, typename Enum, size_t N>
void expect_exhaustive(std::span<const Row> table, const Enum (&members)[N]) {
  std::multiset<Enum> listed;
  for (const auto& row : table) listed.insert(row.nrt);
  EXPECT_EQ(listed.size(), N);
  for (const Enum member : members) EXPECT_EQ(listed.count(member), 1u) << static_cast<int>(member);
}

template <typename Row, typename Field>
void expect_unique(std::span<const Row> table, Field field) {
  std::set<int32_t> seen;
  for (const auto& row : table) {
    if (row.*field) {
      EXPECT_TRUE(seen.insert(*(row.*field)).second) << *(row.*field);
    }
  }
}

TEST(EnumTables, ScalarTypeTableIsExhaustiveAndUnique) {
  expect_exhaustive(scalar_type_table(), fb::EnumValuesScalarType());
  expect_unique(scalar_type_table(), &ScalarTypeRow::schema);
  expect_unique(scalar_type_table(), &ScalarTypeRow::c10);
}

TEST(EnumTables, EveryScalarTypeRowConvertsBothWays) {
  for (const auto& row : scalar_type_table()) {
    SCOPED_TRACE(std::string(row.torch_name));
    if (row.schema) {
      ASSERT_TRUE(scalar_type_from_schema(*row.schema).ok());
      EXPECT_EQ(*scalar_type_from_schema(*row.schema), row.nrt);
      ASSERT_TRUE(scalar_type_to_schema(row.nrt).ok());
      EXPECT_EQ(*scalar_type_to_schema(row.nrt), *row.schema);
    } else {
      ASSERT_FALSE(scalar_type_to_schema(row.nrt).ok());
      EXPECT_EQ(scalar_type_to_schema(row.nrt).error().code, codes::kUnmappedEnumValue);
    }
    if (row.c10) {
      ASSERT_TRUE(scalar_type_from_c10(*row.c10).ok());
      EXPECT_EQ(*scalar_type_from_c10(*row.c10), row.nrt);
      EXPECT_EQ(*scalar_type_to_c10(row.nrt), *row.c10);
    } else {
      EXPECT_EQ(scalar_type_to_c10(row.nrt).error().code, codes::kUnmappedEnumValue);
    }
  }
}

// The rows of docs/TORCH_EXPORT.md "Enum numberings", spelled out: the three numberings differ.
TEST(EnumTables, ScalarTypeNumberingsOfRecord) {
  struct Expect {
    fb::ScalarType nrt;
    int schema;
    int c10;
  };
  const Expect rows[] = {
      {fb::ScalarType::UINT8, 1, 0},          {fb::ScalarType::INT8, 2, 1},
      {fb::ScalarType::INT16, 3, 2},          {fb::ScalarType::INT32, 4, 3},
      {fb::ScalarType::INT64, 5, 4},          {fb::ScalarType::FLOAT16, 6, 5},
      {fb::ScalarType::FLOAT32, 7, 6},        {fb::ScalarType::FLOAT64, 8, 7},
      {fb::ScalarType::COMPLEX32, 9, 8},      {fb::ScalarType::COMPLEX64, 10, 9},
      {fb::ScalarType::COMPLEX128, 11, 10},   {fb::ScalarType::BOOL, 12, 11},
      {fb::ScalarType::BFLOAT16, 13, 15},     {fb::ScalarType::UINT16, 28, 27},
      {fb::ScalarType::FLOAT8_E5M2, 30, 23},  {fb::ScalarType::FLOAT8_E4M3FN, 29, 24},
      {fb::ScalarType::FLOAT8_E5M2FNUZ, 32, 25}, {fb::ScalarType::FLOAT8_E4M3FNUZ, 31, 26},
      {fb::ScalarType::UINT32, 34, 28},       {fb::ScalarType::UINT64, 35, 29},
      {fb::ScalarType::FLOAT8_E8M0FNU, 33, 44},
  };
  for (const auto& r : rows) {
    EXPECT_EQ(*scalar_type_from_schema(r.schema), r.nrt) << r.schema;
    EXPECT_EQ(*scalar_type_to_c10(r.nrt), r.c10) << r.schema;
  }
  // The bug class: torch.int8 is schema CHAR=2, which as a raw c10 number would be Short.
  EXPECT_EQ(*scalar_type_to_c10(*scalar_type_from_schema(2)), 1);
  EXPECT_EQ(*scalar_type_from_c10(2), fb::ScalarType::INT16);
  // Quantized types exist in c10 only.
  EXPECT_EQ(*scalar_type_from_c10(12), fb::ScalarType::QINT8);
  EXPECT_EQ(scalar_type_to_schema(fb::ScalarType::QINT8).error().code, codes::kUnmappedEnumValue);
  EXPECT_EQ(*scalar_type_from_schema(0), fb::ScalarType::UNKNOWN);
}

TEST(EnumTables, UnmappedScalarTypesAreErrors) {
  for (const int64_t v : {-1, 14, 27, 36, 64, 1000}) {
    auto r = scalar_type_from_schema(v);
    ASSERT_FALSE(r.ok()) << v;
    EXPECT_EQ(r.error().code, codes::kUnmappedEnumValue);
    EXPECT_NE(r.error().message.find(std::to_string(v)), std::string::npos);
  }
  for (const int64_t v : {-1, 30, 43, 45}) EXPECT_FALSE(scalar_type_from_c10(v).ok()) << v;
  EXPECT_FALSE(scalar_type_to_schema(static_cast<fb::ScalarType>(200)).ok());
}

TEST(EnumTables, LayoutTable) {
  expect_exhaustive(layout_table(), fb::EnumValuesLayout());
  expect_unique(layout_table(), &LayoutRow::schema);
  expect_unique(layout_table(), &LayoutRow::c10);
  const std::pair<int, fb::Layout> schema[] = {
      {0, fb::Layout::UNKNOWN},    {1, fb::Layout::SPARSE_COO}, {2, fb::Layout::SPARSE_CSR},
      {3, fb::Layout::SPARSE_CSC}, {4, fb::Layout::SPARSE_BSR}, {5, fb::Layout::SPARSE_BSC},
      {6, fb::Layout::MKLDNN},     {7, fb::Layout::STRIDED}};
  for (const auto& [number, layout] : schema) {
    EXPECT_EQ(*layout_from_schema(number), layout);
    EXPECT_EQ(*layout_to_schema(layout), number);
  }
  // Strided is schema 7 but c10 0; schema 7 read as a c10 number would be Jagged.
  EXPECT_EQ(*layout_to_c10(fb::Layout::STRIDED), 0);
  EXPECT_EQ(*layout_from_c10(7), fb::Layout::JAGGED);
  const std::pair<int, fb::Layout> c10[] = {{0, fb::Layout::STRIDED},    {1, fb::Layout::SPARSE_COO},
                                             {2, fb::Layout::SPARSE_CSR}, {3, fb::Layout::MKLDNN},
                                             {4, fb::Layout::SPARSE_CSC}, {5, fb::Layout::SPARSE_BSR},
                                             {6, fb::Layout::SPARSE_BSC}, {7, fb::Layout::JAGGED}};
  for (const auto& [number, layout] : c10) {
    EXPECT_EQ(*layout_from_c10(number), layout);
    EXPECT_EQ(*layout_to_c10(layout), number);
  }
  EXPECT_EQ(layout_to_schema(fb::Layout::JAGGED).error().code, codes::kUnmappedEnumValue);
  EXPECT_EQ(layout_from_schema(8).error().code, codes::kUnmappedEnumValue);
  EXPECT_EQ(layout_to_c10(fb::Layout::UNKNOWN).error().code, codes::kUnmappedEnumValue);
}

TEST(EnumTables, MemoryFormatTable) {
  expect_exhaustive(memory_format_table(), fb::EnumValuesMemoryFormat());
  expect_unique(memory_format_table(), &MemoryFormatRow::schema);
  expect_unique(memory_format_table(), &MemoryFormatRow::c10);
  const std::tuple<int, int, fb::MemoryFormat> rows[] = {
      {1, 0, fb::MemoryFormat::CONTIGUOUS},
      {2, 2, fb::MemoryFormat::CHANNELS_LAST},
      {3, 3, fb::MemoryFormat::CHANNELS_LAST_3D},
      {4, 1, fb::MemoryFormat::PRESERVE},
  };
  for (const auto& [schema, c10, format] : rows) {
    EXPECT_EQ(*memory_format_from_schema(schema), format);
    EXPECT_EQ(*memory_format_to_schema(format), schema);
    EXPECT_EQ(*memory_format_from_c10(c10), format);
    EXPECT_EQ(*memory_format_to_c10(format), c10);
  }
  EXPECT_EQ(*memory_format_from_schema(0), fb::MemoryFormat::UNKNOWN);
  EXPECT_EQ(memory_format_from_schema(5).error().code, codes::kUnmappedEnumValue);
  EXPECT_EQ(memory_format_to_c10(fb::MemoryFormat::UNKNOWN).error().code, codes::kUnmappedEnumValue);
}

TEST(EnumTables, DeviceTypeTable) {
  expect_exhaustive(device_type_table(), fb::EnumValuesDeviceType());
  expect_unique(device_type_table(), &DeviceTypeRow::c10);
  std::set<std::string_view> names;
  for (const auto& row : device_type_table()) {
    if (row.torch_name) {
      EXPECT_TRUE(names.insert(*row.torch_name).second);
      EXPECT_EQ(*device_type_from_name(*row.torch_name), row.nrt);
      EXPECT_EQ(*device_type_to_name(row.nrt), *row.torch_name);
    }
    if (row.c10) {
      EXPECT_EQ(*device_type_from_c10(*row.c10), row.nrt);
      EXPECT_EQ(*device_type_to_c10(row.nrt), *row.c10);
    }
  }
  EXPECT_EQ(*device_type_from_name("cpu"), fb::DeviceType::CPU);
  EXPECT_EQ(*device_type_from_name("cuda"), fb::DeviceType::CUDA);
  EXPECT_EQ(*device_type_to_c10(fb::DeviceType::CUDA), 1);
  EXPECT_EQ(*device_type_to_c10(fb::DeviceType::PRIVATEUSE1), 20);
  EXPECT_EQ(device_type_from_name("npu").error().code, codes::kUnmappedEnumValue);
  EXPECT_EQ(device_type_from_name("CUDA").error().code, codes::kUnmappedEnumValue);
  EXPECT_EQ(device_type_to_name(fb::DeviceType::UNKNOWN).error().code, codes::kUnmappedEnumValue);
}

}  // namespace
}  // namespace nrt::torch_export
