// torch.export's TensorMeta, SymInt and Device in JSON, both ways, shared by graphs and by the
// .pt2 weights configs. Enums go through enum_tables.h. A SymInt becomes an nrt SymDim: `as_int`
// a literal, `as_expr` an expression with its optional integer hint.
#pragma once

#include <memory>

#include "schema/nrt_generated.h"
#include "core/error.h"
#include "serializer/torch_export/json_fields.h"
#include "serializer/torch_export/json_writer.h"
#include "serializer/torch_export/torch_extras.h"

namespace nrt::torch_export {

// What reading needs besides the JSON: where warnings go and how None was written.
struct ReadContext {
  ImportWarnings* warnings;
  NoneStyle* style;
};

Result<std::unique_ptr<fb::TensorMetaT>> read_tensor_meta(JsonElement json, const JsonPlace& place, ReadContext& ctx);
Result<std::unique_ptr<fb::SymDimT>> read_sym_int(JsonElement json, const JsonPlace& place, ReadContext& ctx);
Result<std::unique_ptr<fb::DeviceT>> read_device(JsonElement json, const JsonPlace& place, ReadContext& ctx);

// `what` names the tensor in error messages.
Status write_tensor_meta(JsonWriter& w, const fb::TensorMetaT* meta, const NoneStyle& style, const std::string& what);
void write_sym_int(JsonWriter& w, const fb::SymDimT* dim, const NoneStyle& style);
Status write_device(JsonWriter& w, const fb::DeviceT* device, const NoneStyle& style);

}  // namespace nrt::torch_export
