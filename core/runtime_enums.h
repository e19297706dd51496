// nrt's own layout, memory-format and reduction enums, as kernels and process groups see them
// (element types are in core/scalar_type.h, devices in core/device.h). core/schema_enums.h
// converts the schema's enums to these through checked tables.
#pragma once

#include <cstdint>

namespace nrt {

enum class Layout : uint8_t {
  UNKNOWN,
  STRIDED,
  SPARSE_COO,
  SPARSE_CSR,
  SPARSE_CSC,
  SPARSE_BSR,
  SPARSE_BSC,
  MKLDNN,
  JAGGED,
};
inline constexpr int kNumLayouts = static_cast<int>(Layout::JAGGED) + 1;

enum class MemoryFormat : uint8_t {
  UNKNOWN,
  CONTIGUOUS,
  CHANNELS_LAST,
  CHANNELS_LAST_3D,
  PRESERVE,
};
inline constexpr int kNumMemoryFormats = static_cast<int>(MemoryFormat::PRESERVE) + 1;

// A collective's reduction (c10d::ReduceOp's members).
enum class ReduceOp : uint8_t {
  SUM,
  AVG,
  PRODUCT,
  MINIMUM,
  MAXIMUM,
  BAND,
  BOR,
  BXOR,
  PREMUL_SUM,
};
inline constexpr int kNumReduceOps = static_cast<int>(ReduceOp::PREMUL_SUM) + 1;

// Upper-case name as c10d prints it ("SUM", "AVG", ...); "?" outside the enum.
const char* reduce_op_name(ReduceOp op);

}  // namespace nrt
