#include "core/scalar_type_info.h"

#include <array>
#include <iterator>

namespace nrt {
namespace {

struct ScalarTypeRow {
  fb::ScalarType type;
  std::size_t size;
  std::string_view name;
};

// One row per member of fb::ScalarType except UNKNOWN; tests check the table covers the enum.
constexpr ScalarTypeRow kRows[] = {
    {fb::ScalarType::UINT8, 1, "u8"},
    {fb::ScalarType::INT8, 1, "i8"},
    {fb::ScalarType::INT16, 2, "i16"},
    {fb::ScalarType::INT32, 4, "i32"},
    {fb::ScalarType::INT64, 8, "i64"},
    {fb::ScalarType::FLOAT16, 2, "f16"},
    {fb::ScalarType::FLOAT32, 4, "f32"},
    {fb::ScalarType::FLOAT64, 8, "f64"},
    {fb::ScalarType::COMPLEX32, 4, "c32"},
    {fb::ScalarType::COMPLEX64, 8, "c64"},
    {fb::ScalarType::COMPLEX128, 16, "c128"},
    {fb::ScalarType::BOOL, 1, "b8"},
    {fb::ScalarType::BFLOAT16, 2, "bf16"},
    {fb::ScalarType::UINT16, 2, "u16"},
    {fb::ScalarType::FLOAT8_E4M3FN, 1, "f8e4m3fn"},
    {fb::ScalarType::FLOAT8_E5M2, 1, "f8e5m2"},
    {fb::ScalarType::FLOAT8_E4M3FNUZ, 1, "f8e4m3fnuz"},
    {fb::ScalarType::FLOAT8_E5M2FNUZ, 1, "f8e5m2fnuz"},
    {fb::ScalarType::FLOAT8_E8M0FNU, 1, "f8e8m0fnu"},
    {fb::ScalarType::UINT32, 4, "u32"},
    {fb::ScalarType::UINT64, 8, "u64"},
    {fb::ScalarType::QINT8, 1, "qi8"},
    {fb::ScalarType::QUINT8, 1, "qu8"},
    {fb::ScalarType::QINT32, 4, "qi32"},
    {fb::ScalarType::QUINT4X2, 1, "qu4x2"},
    {fb::ScalarType::QUINT2X4, 1, "qu2x4"},
    {fb::ScalarType::BITS1X8, 1, "bits1x8"},
    {fb::ScalarType::BITS2X4, 1, "bits2x4"},
    {fb::ScalarType::BITS4X2, 1, "bits4x2"},
    {fb::ScalarType::BITS8, 1, "bits8"},
    {fb::ScalarType::BITS16, 2, "bits16"},
};

// Row index by enum value (-1: no row; every member is below 256): element sizes are looked up on every tensor access.
constexpr std::array<int8_t, 256> kRowOf = [] {
  std::array<int8_t, 256> index{};
  index.fill(-1);
  for (size_t i = 0; i < std::size(kRows); ++i) index[static_cast<size_t>(kRows[i].type)] = static_cast<int8_t>(i);
  return index;
}();

const ScalarTypeRow* find_row(fb::ScalarType type) {
  const auto value = static_cast<int>(type);  // the enum is a short: unknown values reach past a byte
  if (value < 0 || value >= static_cast<int>(kRowOf.size())) return nullptr;
  const int8_t row = kRowOf[static_cast<size_t>(value)];
  return row < 0 ? nullptr : &kRows[row];
}

}  // namespace

std::size_t element_size(fb::ScalarType type) {
  const auto* row = find_row(type);
  return row ? row->size : 0;
}

std::string_view short_name(fb::ScalarType type) {
  const auto* row = find_row(type);
  return row ? row->name : "?";
}

std::optional<fb::ScalarType> scalar_type_from_short_name(std::string_view name) {
  for (const auto& row : kRows) {
    if (row.name == name) return row.type;
  }
  return std::nullopt;
}

bool is_known(fb::ScalarType type) { return type == fb::ScalarType::UNKNOWN || find_row(type) != nullptr; }

}  // namespace nrt
