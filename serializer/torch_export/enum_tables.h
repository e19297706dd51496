// The three numberings of every enum torch.export carries, one table per enum: the torch.export
// schema's numbers (what .pt2 JSON holds), nrt's own (schema/nrt.fbs) and c10's (libtorch,
// ExecuTorch). Each table lists every nrt member exactly once (tests/torch_export checks it);
// a member absent from a foreign numbering has no number there. Converting looks a row up and
// fails with codes::kUnmappedEnumValue when there is none: never an integer cast, which is how
// torch.int8 (schema CHAR=2) once arrived as c10 Short (2).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "schema/nrt_generated.h"
#include "core/error.h"

namespace nrt::torch_export {

struct ScalarTypeRow {
  fb::ScalarType nrt;
  std::optional<int32_t> schema;  // torch.export schema ScalarType
  std::optional<int32_t> c10;     // c10::ScalarType
  std::string_view torch_name;    // torch.<name>
};

struct LayoutRow {
  fb::Layout nrt;
  std::optional<int32_t> schema;
  std::optional<int32_t> c10;
  std::string_view torch_name;
};

struct MemoryFormatRow {
  fb::MemoryFormat nrt;
  std::optional<int32_t> schema;
  std::optional<int32_t> c10;
  std::string_view torch_name;
};

// Devices travel by name in torch.export JSON ({"type": "cuda", "index": 0}).
struct DeviceTypeRow {
  fb::DeviceType nrt;
  std::optional<std::string_view> torch_name;  // torch.device(type) spelling
  std::optional<int32_t> c10;                  // c10::DeviceType
};

std::span<const ScalarTypeRow> scalar_type_table();
std::span<const LayoutRow> layout_table();
std::span<const MemoryFormatRow> memory_format_table();
std::span<const DeviceTypeRow> device_type_table();

Result<fb::ScalarType> scalar_type_from_schema(int64_t schema_value);
Result<int32_t> scalar_type_to_schema(fb::ScalarType type);
Result<fb::ScalarType> scalar_type_from_c10(int64_t c10_value);
Result<int32_t> scalar_type_to_c10(fb::ScalarType type);

Result<fb::Layout> layout_from_schema(int64_t schema_value);
Result<int32_t> layout_to_schema(fb::Layout layout);
Result<fb::Layout> layout_from_c10(int64_t c10_value);
Result<int32_t> layout_to_c10(fb::Layout layout);

Result<fb::MemoryFormat> memory_format_from_schema(int64_t schema_value);
Result<int32_t> memory_format_to_schema(fb::MemoryFormat format);
Result<fb::MemoryFormat> memory_format_from_c10(int64_t c10_value);
Result<int32_t> memory_format_to_c10(fb::MemoryFormat format);

Result<fb::DeviceType> device_type_from_name(std::string_view name);
Result<std::string_view> device_type_to_name(fb::DeviceType type);
Result<fb::DeviceType> device_type_from_c10(int64_t c10_value);
Result<int32_t> device_type_to_c10(fb::DeviceType type);

}  // namespace nrt::torch_export
