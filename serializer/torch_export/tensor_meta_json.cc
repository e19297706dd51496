#include "serializer/torch_export/tensor_meta_json.h"

#include <algorithm>

#include "serializer/torch_export/enum_tables.h"
#include "serializer/torch_export/torch_error_codes.h"

namespace nrt::torch_export {
namespace {

Status read_sym_int_list(JsonElement json, const JsonPlace& place, ReadContext& ctx,
                         std::vector<std::unique_ptr<fb::SymDimT>>* out) {
  NRT_TRY(array, as_array(json, place));
  out->reserve(array->size());
  size_t i = 0;
  for (JsonElement item : *array) {
    NRT_TRY(dim, read_sym_int(item, place.item(i++), ctx));
    out->push_back(std::move(*dim));
  }
  return {};
}

// SymExpr{expr_str, hint?}; hint is a SymExprHint union of which a size can only use as_int.
Status read_sym_expr(JsonElement json, const JsonPlace& place, ReadContext& ctx, fb::SymDimT* dim) {
  NRT_TRY(object, as_object(json, place));
  bool has_expr = false, has_hint = false;
  for (auto field : *object) {
    const std::string_view k = field.key;
    const JsonPlace at = place.member(k);
    if (k == "expr_str") {
      NRT_TRY(s, as_string(field.value, at));
      if (s->empty()) return json_error(at, "expr_str is empty");
      dim->expr = std::string(*s);
      has_expr = true;
    } else if (k == "hint") {
      has_hint = true;
      if (is_null(field.value)) {
        ctx.style->observe(OptionalField::kSymExprHint, false, ctx.warnings);
        continue;
      }
      NRT_TRY(member, as_union(field.value, at, "SymExprHint"));
      if (member->key != "as_int") {
        return json_error(at, "a symbolic int's hint must be as_int, found " + std::string(member->key));
      }
      NRT_TRY(hint, as_int64(member->value, at.member(member->key)));
      dim->hint = *hint;
    } else {
      ctx.warnings->unknown_field("SymExpr", k, place);
    }
  }
  if (!has_expr) return missing_field(place, "SymExpr", "expr_str");
  if (!has_hint) ctx.style->observe(OptionalField::kSymExprHint, true, ctx.warnings);
  return {};
}

}  // namespace

Result<std::unique_ptr<fb::SymDimT>> read_sym_int(JsonElement json, const JsonPlace& place, ReadContext& ctx) {
  NRT_TRY(member, as_union(json, place, "SymInt"));
  auto dim = std::make_unique<fb::SymDimT>();
  const JsonPlace at = place.member(member->key);
  if (member->key == "as_int") {
    NRT_TRY(v, as_int64(member->value, at));
    dim->literal = *v;
  } else if (member->key == "as_expr") {
    NRT_RETURN_IF_ERROR(read_sym_expr(member->value, at, ctx, dim.get()));
  } else {
    return make_error(codes::kUnknownUnionMember,
                      place.str() + ": unknown SymInt member '" + std::string(member->key) + "'");
  }
  return dim;
}

Result<std::unique_ptr<fb::DeviceT>> read_device(JsonElement json, const JsonPlace& place, ReadContext& ctx) {
  NRT_TRY(object, as_object(json, place));
  auto device = std::make_unique<fb::DeviceT>();
  bool has_type = false, has_index = false;
  for (auto field : *object) {
    const std::string_view k = field.key;
    const JsonPlace at = place.member(k);
    if (k == "type") {
      NRT_TRY(name, as_string(field.value, at));
      auto type = device_type_from_name(*name);
      if (!type) return prefixed(at, type.error());
      device->type = *type;
      has_type = true;
    } else if (k == "index") {
      has_index = true;
      if (is_null(field.value)) {
        ctx.style->observe(OptionalField::kDeviceIndex, false, ctx.warnings);
        continue;
      }
      NRT_TRY(index, as_int64(field.value, at));
      if (*index < 0 || *index > INT32_MAX) return json_error(at, "device index " + std::to_string(*index));
      device->index = static_cast<int32_t>(*index);
    } else {
      ctx.warnings->unknown_field("Device", k, place);
    }
  }
  if (!has_type) return missing_field(place, "Device", "type");
  if (!has_index) ctx.style->observe(OptionalField::kDeviceIndex, true, ctx.warnings);
  return device;
}

Result<std::unique_ptr<fb::TensorMetaT>> read_tensor_meta(JsonElement json, const JsonPlace& place, ReadContext& ctx) {
  NRT_TRY(object, as_object(json, place));
  auto meta = std::make_unique<fb::TensorMetaT>();
  enum : unsigned { kDtype = 1, kSizes = 2, kGrad = 4, kDevice = 8, kStrides = 16, kOffset = 32, kLayout = 64 };
  unsigned seen = 0;
  for (auto field : *object) {
    const std::string_view k = field.key;
    const JsonPlace at = place.member(k);
    if (k == "dtype") {
      NRT_TRY(v, as_int64(field.value, at));
      auto dtype = scalar_type_from_schema(*v);
      if (!dtype) return prefixed(at, dtype.error());
      meta->dtype = *dtype;
      seen |= kDtype;
    } else if (k == "sizes") {
      NRT_RETURN_IF_ERROR(read_sym_int_list(field.value, at, ctx, &meta->sizes));
      seen |= kSizes;
    } else if (k == "requires_grad") {
      NRT_TRY(v, as_bool(field.value, at));
      meta->requires_grad = *v;
      seen |= kGrad;
    } else if (k == "device") {
      NRT_TRY(device, read_device(field.value, at, ctx));
      meta->device = std::move(*device);
      seen |= kDevice;
    } else if (k == "strides") {
      NRT_RETURN_IF_ERROR(read_sym_int_list(field.value, at, ctx, &meta->strides));
      seen |= kStrides;
    } else if (k == "storage_offset") {
      NRT_TRY(offset, read_sym_int(field.value, at, ctx));
      meta->storage_offset = std::move(*offset);
      seen |= kOffset;
    } else if (k == "layout") {
      NRT_TRY(v, as_int64(field.value, at));
      auto layout = layout_from_schema(*v);
      if (!layout) return prefixed(at, layout.error());
      meta->layout = *layout;
      seen |= kLayout;
    } else {
      ctx.warnings->unknown_field("TensorMeta", k, place);
    }
  }
  static constexpr std::pair<unsigned, const char*> kRequired[] = {
      {kDtype, "dtype"},   {kSizes, "sizes"},           {kGrad, "requires_grad"}, {kDevice, "device"},
      {kStrides, "strides"}, {kOffset, "storage_offset"}, {kLayout, "layout"}};
  for (const auto& [bit, name] : kRequired) {
    if (!(seen & bit)) return missing_field(place, "TensorMeta", name);
  }
  return meta;
}

void write_sym_int(JsonWriter& w, const fb::SymDimT* dim, const NoneStyle& style) {
  w.begin_object();
  if (dim == nullptr || dim->expr.empty()) {
    w.key("as_int");
    w.int64(dim == nullptr ? 0 : dim->literal);
  } else {
    w.key("as_expr");
    w.begin_object();
    w.key("expr_str");
    w.string(dim->expr);
    if (dim->hint.has_value()) {
      w.key("hint");
      w.begin_object();
      w.key("as_int");
      w.int64(*dim->hint);
      w.end_object();
    } else if (!style.omitted(OptionalField::kSymExprHint)) {
      w.key("hint");
      w.null();
    }
    w.end_object();
  }
  w.end_object();
}

Status write_device(JsonWriter& w, const fb::DeviceT* device, const NoneStyle& style) {
  const fb::DeviceType type = device ? device->type : fb::DeviceType::CPU;
  NRT_TRY(name, device_type_to_name(type));
  w.begin_object();
  w.key("type");
  w.string(*name);
  const int32_t index = device ? device->index : -1;
  if (index >= 0) {
    w.key("index");
    w.int64(index);
  } else if (!style.omitted(OptionalField::kDeviceIndex)) {
    w.key("index");
    w.null();
  }
  w.end_object();
  return {};
}

Status write_tensor_meta(JsonWriter& w, const fb::TensorMetaT* meta, const NoneStyle& style, const std::string& what) {
  if (meta == nullptr) return make_error(codes::kNotExpressible, what + " has no tensor metadata");
  auto dtype = scalar_type_to_schema(meta->dtype);
  if (!dtype) return make_error(dtype.error().code, what + ": " + dtype.error().message);
  auto layout = layout_to_schema(meta->layout);
  if (!layout) return make_error(layout.error().code, what + ": " + layout.error().message);
  w.begin_object();
  w.key("dtype");
  w.int64(*dtype);
  w.key("sizes");
  w.begin_array();
  for (const auto& dim : meta->sizes) write_sym_int(w, dim.get(), style);
  w.end_array();
  w.key("requires_grad");
  w.boolean(meta->requires_grad);
  w.key("device");
  if (Status s = write_device(w, meta->device.get(), style); !s) {
    return make_error(s.error().code, what + ": " + s.error().message);
  }
  w.key("strides");
  w.begin_array();
  if (meta->strides.empty() && !meta->sizes.empty()) {
    // nrt may leave strides out for a contiguous tensor; torch.export always lists them.
    std::vector<int64_t> strides(meta->sizes.size(), 1);
    for (size_t d = meta->sizes.size() - 1; d > 0; --d) {
      const auto& size = meta->sizes[d];
      if (!size->expr.empty()) {
        return make_error(codes::kNotExpressible, what + " has symbolic sizes but no strides");
      }
      strides[d - 1] = strides[d] * std::max<int64_t>(size->literal, 1);
    }
    for (int64_t stride : strides) {
      w.begin_object();
      w.key("as_int");
      w.int64(stride);
      w.end_object();
    }
  }
  for (const auto& dim : meta->strides) write_sym_int(w, dim.get(), style);
  w.end_array();
  w.key("storage_offset");
  write_sym_int(w, meta->storage_offset.get(), style);
  w.key("layout");
  w.int64(*layout);
  w.end_object();
  return {};
}

}  // namespace nrt::torch_export
