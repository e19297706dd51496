#include "core/runtime_enums.h"

#include <array>

namespace nrt {

const char* reduce_op_name(ReduceOp op) {
  static constexpr std::array<const char*, kNumReduceOps> kNames = {
      "SUM", "AVG", "PRODUCT", "MINIMUM", "MAXIMUM", "BAND", "BOR", "BXOR", "PREMUL_SUM"};
  const auto index = static_cast<std::size_t>(op);
  return index < kNames.size() ? kNames[index] : "?";
}

}  // namespace nrt
