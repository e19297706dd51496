#include "serializer/torch_export/payload_config.h"

#include "serializer/torch_export/json_fields.h"
#include "serializer/torch_export/json_writer.h"
#include "serializer/torch_export/tensor_meta_json.h"

namespace nrt::torch_export {

Result<std::vector<PayloadEntry>> read_payload_config(std::string_view text, const std::string& what,
                                                      std::vector<std::string>* warnings_out) {
  simdjson::dom::parser parser;
  NRT_TRY(root, parse_json(parser, text, what));
  const JsonPlace place{nullptr, what, -1};
  NRT_TRY(object, as_object(*root, place));
  ImportWarnings warnings;
  NoneStyle style;  // how a config writes None does not matter: nrt writes its own configs
  ReadContext ctx{&warnings, &style};
  std::vector<PayloadEntry> entries;
  bool has_config = false;
  for (auto field : *object) {
    if (field.key != "config") {
      warnings.unknown_field("PayloadConfig", field.key, place);
      continue;
    }
    has_config = true;
    const JsonPlace at = place.member("config");
    NRT_TRY(config, as_object(field.value, at));
    for (auto item : *config) {
      const JsonPlace p = at.member(item.key);
      NRT_TRY(meta, as_object(item.value, p));
      PayloadEntry entry;
      entry.fqn = std::string(item.key);
      bool has_path = false, has_param = false, has_pickle = false;
      for (auto m : *meta) {
        const JsonPlace q = p.member(m.key);
        if (m.key == "path_name") {
          NRT_TRY(s, as_string(m.value, q));
          entry.path_name = std::string(*s);
          has_path = true;
        } else if (m.key == "is_param" || m.key == "use_pickle") {
          NRT_TRY(b, as_bool(m.value, q));
          (m.key == "is_param" ? entry.is_param : entry.use_pickle) = *b;
          (m.key == "is_param" ? has_param : has_pickle) = true;
        } else if (m.key == "tensor_meta") {
          if (is_null(m.value)) continue;
          NRT_TRY(tensor_meta, read_tensor_meta(m.value, q, ctx));
          entry.tensor_meta = std::move(*tensor_meta);
        } else {
          warnings.unknown_field("PayloadMeta", m.key, p);
        }
      }
      if (!has_path) return missing_field(p, "PayloadMeta", "path_name");
      if (!has_param) return missing_field(p, "PayloadMeta", "is_param");
      if (!has_pickle) return missing_field(p, "PayloadMeta", "use_pickle");
      entries.push_back(std::move(entry));
    }
  }
  if (!has_config) return missing_field(place, "PayloadConfig", "config");
  for (const auto& message : warnings.messages()) warnings_out->push_back(what + ": " + message);
  return entries;
}

Result<std::string> write_payload_config(const std::vector<PayloadEntry>& entries, const NoneStyle& style) {
  JsonWriter w;
  w.begin_object();
  w.key("config");
  w.begin_object();
  for (const auto& entry : entries) {
    w.key(entry.fqn);
    w.begin_object();
    w.key("path_name");
    w.string(entry.path_name);
    w.key("is_param");
    w.boolean(entry.is_param);
    w.key("use_pickle");
    w.boolean(entry.use_pickle);
    w.key("tensor_meta");
    if (entry.tensor_meta) {
      if (Status s = write_tensor_meta(w, entry.tensor_meta.get(), style, "weight '" + entry.fqn + "'"); !s) {
        return s.error();
      }
    } else {
      w.null();
    }
    w.end_object();
  }
  w.end_object();
  w.end_object();
  if (!simdjson::validate_utf8(w.text().data(), w.text().size())) {
    return make_error(ErrorCode::InvalidArgument, "a weight name is not valid UTF-8");
  }
  return std::move(w.text());
}

}  // namespace nrt::torch_export
