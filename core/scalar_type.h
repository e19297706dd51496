// nrt's element types, as tensors and kernels see them. The numbering is nrt's own and dense (the
// schema's fb::ScalarType follows torch's sparse numbers); core/schema_enums.h converts between the
// two through checked tables, so a schema change never changes the kernel-library ABI and these
// headers compile without the generated schema (nvcc included).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace nrt {

enum class ScalarType : uint8_t {
  UNKNOWN,
  UINT8,
  INT8,
  INT16,
  INT32,
  INT64,
  FLOAT16,
  FLOAT32,
  FLOAT64,
  COMPLEX32,
  COMPLEX64,
  COMPLEX128,
  BOOL,
  BFLOAT16,
  UINT16,
  FLOAT8_E4M3FN,
  FLOAT8_E5M2,
  FLOAT8_E4M3FNUZ,
  FLOAT8_E5M2FNUZ,
  FLOAT8_E8M0FNU,
  UINT32,
  UINT64,
  QINT8,
  QUINT8,
  QINT32,
  QUINT4X2,
  QUINT2X4,
  BITS1X8,
  BITS2X4,
  BITS4X2,
  BITS8,
  BITS16,
};
inline constexpr int kNumScalarTypes = static_cast<int>(ScalarType::BITS16) + 1;

namespace detail {
// Bytes per element by ScalarType value: looked up on every tensor access, so it is inline.
inline constexpr std::array<uint8_t, kNumScalarTypes> kElementSizes = {
    0, 1, 1, 2, 4, 8, 2, 4, 8, 4, 8, 16, 1, 2, 2, 1, 1, 1, 1, 1, 4, 8, 1, 1, 4, 1, 1, 1, 1, 1, 1, 2};
}  // namespace detail

// Bytes per element; 0 for UNKNOWN and for values outside the enum.
constexpr std::size_t element_size(ScalarType type) {
  const auto value = static_cast<std::size_t>(type);
  return value < detail::kElementSizes.size() ? detail::kElementSizes[value] : 0;
}

// True when `type` is a member of ScalarType.
constexpr bool is_known(ScalarType type) { return static_cast<int>(type) < kNumScalarTypes; }

// Short display name: f32, f16, bf16, i64, u8, b8, c64, f8e4m3fn, ...; "?" outside the enum.
std::string_view short_name(ScalarType type);

// Parses a short name back; nullopt when unknown.
std::optional<ScalarType> scalar_type_from_short_name(std::string_view name);

}  // namespace nrt
