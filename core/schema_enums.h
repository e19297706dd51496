// Checked conversions between the schema's enums (schema/nrt.fbs, torch's numbering) and nrt's
// own (core/scalar_type.h, core/runtime_enums.h, core/device.h). Every conversion goes through a
// table with one row per member; tests/core/schema_enums_test.cc proves every schema member maps
// and every nrt member maps back. A value outside the schema enum (the FlatBuffers verifier does
// not check enums) converts to nullopt, never to a neighbouring member.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "core/device.h"
#include "core/error.h"
#include "core/runtime_enums.h"
#include "core/scalar_type.h"
#include "schema/nrt_generated.h"

namespace nrt {

std::optional<ScalarType> from_schema(fb::ScalarType type);
fb::ScalarType to_schema(ScalarType type);

std::optional<Layout> from_schema(fb::Layout layout);
fb::Layout to_schema(Layout layout);

std::optional<MemoryFormat> from_schema(fb::MemoryFormat format);
fb::MemoryFormat to_schema(MemoryFormat format);

std::optional<ReduceOp> from_schema(fb::ReduceOp op);
fb::ReduceOp to_schema(ReduceOp op);

// The device kinds nrt runs; nullopt for the schema's other device types (META, MPS, XPU, ...),
// which the executor refuses as NotSupported, and for values outside the enum.
std::optional<DeviceKind> from_schema(fb::DeviceType type);
fb::DeviceType to_schema(DeviceKind kind);

// from_schema, or UnknownEnumValue naming `what` for a value outside the schema's enum (the
// verifier refuses such files; this guards loaders of unverified buffers).
template <typename SchemaEnum>
auto checked_from_schema(SchemaEnum value, std::string_view what)
    -> Result<typename decltype(from_schema(value))::value_type> {
  if (auto ours = from_schema(value)) return *ours;
  return make_error(ErrorCode::UnknownEnumValue,
                    std::string(what) + " holds enum value " + std::to_string(static_cast<int>(value)) +
                        ", which this version does not know");
}

// Facts about a schema element type, for code that reads the file (serializer, printers):
// 0 / "?" / false for values outside the enum.
std::size_t element_size(fb::ScalarType type);
std::string_view short_name(fb::ScalarType type);
bool is_known(fb::ScalarType type);
std::optional<fb::ScalarType> schema_scalar_type_from_short_name(std::string_view name);

}  // namespace nrt
