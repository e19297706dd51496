#include "core/scalar_type.h"

namespace nrt {
namespace {

// By ScalarType value; "?" for UNKNOWN.
constexpr std::array<std::string_view, kNumScalarTypes> kShortNames = {
    "?",     "u8",   "i8",       "i16",    "i32",        "i64",        "f16",       "f32",
    "f64",   "c32",  "c64",      "c128",   "b8",         "bf16",       "u16",       "f8e4m3fn",
    "f8e5m2", "f8e4m3fnuz", "f8e5m2fnuz", "f8e8m0fnu", "u32", "u64", "qi8", "qu8",
    "qi32",  "qu4x2", "qu2x4",   "bits1x8", "bits2x4",   "bits4x2",    "bits8",     "bits16"};

}  // namespace

std::string_view short_name(ScalarType type) {
  return is_known(type) ? kShortNames[static_cast<std::size_t>(type)] : "?";
}

std::optional<ScalarType> scalar_type_from_short_name(std::string_view name) {
  for (int i = 1; i < kNumScalarTypes; ++i) {
    if (kShortNames[static_cast<std::size_t>(i)] == name) return static_cast<ScalarType>(i);
  }
  return std::nullopt;
}

}  // namespace nrt
