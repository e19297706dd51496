#include "serializer/element_value.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

namespace nrt {
namespace {

template <typename T>
T load(const uint8_t* data) {
  T v;
  std::memcpy(&v, data, sizeof v);
  return v;
}

}  // namespace

float half_to_float(uint16_t bits) {
  const uint32_t sign = (bits >> 15) & 1;
  const uint32_t exponent = (bits >> 10) & 0x1f;
  const uint32_t mantissa = bits & 0x3ff;
  float magnitude;
  if (exponent == 0) {
    magnitude = std::ldexp(static_cast<float>(mantissa), -24);  // subnormal
  } else if (exponent == 31) {
    magnitude = mantissa ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
  } else {
    magnitude = std::ldexp(static_cast<float>(mantissa | 0x400), static_cast<int>(exponent) - 25);
  }
  return sign ? -magnitude : magnitude;
}

float bfloat16_to_float(uint16_t bits) { return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16); }

std::optional<double> element_as_double(fb::ScalarType dtype, const uint8_t* data) {
  using S = fb::ScalarType;
  switch (dtype) {
    case S::FLOAT32:
      return load<float>(data);
    case S::FLOAT64:
      return load<double>(data);
    case S::FLOAT16:
      return half_to_float(load<uint16_t>(data));
    case S::BFLOAT16:
      return bfloat16_to_float(load<uint16_t>(data));
    case S::UINT8:
    case S::BOOL:
      return load<uint8_t>(data);
    case S::INT8:
      return load<int8_t>(data);
    case S::INT16:
      return load<int16_t>(data);
    case S::INT32:
      return load<int32_t>(data);
    case S::INT64:
      return static_cast<double>(load<int64_t>(data));
    case S::UINT16:
      return load<uint16_t>(data);
    case S::UINT32:
      return load<uint32_t>(data);
    case S::UINT64:
      return static_cast<double>(load<uint64_t>(data));
    default:
      return std::nullopt;
  }
}

}  // namespace nrt
