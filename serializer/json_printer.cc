#include "serializer/json_printer.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <vector>

#include "flatbuffers/reflection.h"

namespace nrt {
namespace {

using reflection::BaseType;

class JsonPrinter {
 public:
  explicit JsonPrinter(const reflection::Schema& schema) : schema_(schema) {}

  std::string print_root(const uint8_t* buffer) {
    print_table(*flatbuffers::GetAnyRoot(buffer), *schema_.root_table(), 0);
    out_ += '\n';
    return std::move(out_);
  }

 private:
  void indent(int depth) { out_.append(static_cast<size_t>(depth) * 2, ' '); }

  // Length of the valid UTF-8 sequence starting at s[i], or 0 when the bytes there are not one.
  static size_t utf8_sequence_length(std::string_view s, size_t i) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
    if (n == 0 || i + n > s.size()) return 0;
    for (size_t k = 1; k < n; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) & 0xc0) != 0x80) return 0;
    }
    return n;
  }

  // JSON string; bytes that are not valid UTF-8 are written as \xNN escapes, which FlatBuffers'
  // parser reads back to the same bytes.
  void print_string(std::string_view s) {
    out_ += '"';
    for (size_t i = 0; i < s.size();) {
      const size_t n = utf8_sequence_length(s, i);
      if (n == 0) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\x%02X", static_cast<unsigned char>(s[i]));
        out_ += buf;
        ++i;
        continue;
      }
      if (n > 1) {
        out_.append(s.substr(i, n));
        i += n;
        continue;
      }
      const auto c = static_cast<unsigned char>(s[i++]);
      switch (c) {
        case '"':
          out_ += "\\\"";
          break;
        case '\\':
          out_ += "\\\\";
          break;
        case '\n':
          out_ += "\\n";
          break;
        case '\t':
          out_ += "\\t";
          break;
        case '\r':
          out_ += "\\r";
          break;
        default:
          if (c < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out_ += buf;
          } else {
            out_ += static_cast<char>(c);  // UTF-8 passes through unchanged
          }
      }
    }
    out_ += '"';
  }

  // Shortest text that reads back to the same double; always a float token ("-0.0", "1.0").
  void print_double(double v) {
    if (std::isnan(v)) {
      out_ += "nan";
      return;
    }
    if (std::isinf(v)) {
      out_ += v < 0 ? "-inf" : "inf";
      return;
    }
    char buf[64];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
    std::string_view text(buf, static_cast<size_t>(end - buf));
    out_ += text;
    if (text.find_first_of(".e") == std::string_view::npos) out_ += ".0";
  }

  const reflection::Enum* enum_of(const reflection::Type& type) const {
    if (type.index() < 0) return nullptr;
    return schema_.enums()->Get(static_cast<uint32_t>(type.index()));
  }

  void print_scalar(BaseType base, const uint8_t* data, const reflection::Enum* enum_def) {
    using flatbuffers::ReadScalar;
    switch (base) {
      case BaseType::Bool:
        out_ += ReadScalar<uint8_t>(data) ? "true" : "false";
        return;
      case BaseType::Float:
        print_double(static_cast<double>(ReadScalar<float>(data)));
        return;
      case BaseType::Double:
        print_double(ReadScalar<double>(data));
        return;
      case BaseType::ULong:
        out_ += std::to_string(ReadScalar<uint64_t>(data));
        return;
      default:
        break;
    }
    const int64_t v = flatbuffers::GetAnyValueI(base, data);
    if (enum_def != nullptr) {
      for (const auto* value : *enum_def->values()) {
        if (value->value() == v) {
          print_string(value->name()->string_view());
          return;
        }
      }
    }
    out_ += std::to_string(v);  // unknown enum values stay numbers, so nothing is lost
  }

  void print_struct(const flatbuffers::Struct& st, const reflection::Object& object, int depth) {
    out_ += "{";
    bool first = true;
    for (const auto* field : sorted_fields(object)) {
      out_ += first ? "\n" : ",\n";
      first = false;
      indent(depth + 1);
      print_string(field->name()->string_view());
      out_ += ": ";
      const auto* type = field->type();
      const uint8_t* data = st.GetAddressOf(field->offset());
      if (type->base_type() == BaseType::Obj) {
        const auto* inner = schema_.objects()->Get(static_cast<uint32_t>(type->index()));
        print_struct(*reinterpret_cast<const flatbuffers::Struct*>(data), *inner, depth + 1);
      } else {
        print_scalar(type->base_type(), data, enum_of(*type));
      }
    }
    out_ += "\n";
    indent(depth);
    out_ += "}";
  }

  // Declaration order (field id), which keeps every union's `_type` field before its value.
  std::vector<const reflection::Field*> sorted_fields(const reflection::Object& object) {
    std::vector<const reflection::Field*> fields(object.fields()->begin(), object.fields()->end());
    std::sort(fields.begin(), fields.end(), [](auto* a, auto* b) { return a->id() < b->id(); });
    return fields;
  }

  const reflection::Object* union_member(const flatbuffers::Table& table, const reflection::Object& object,
                                         const reflection::Field& field) {
    // The tag lives in the field declared just before: `<name>_type`.
    const std::string tag_name = field.name()->str() + "_type";
    const reflection::Field* tag_field = nullptr;
    for (const auto* candidate : *object.fields()) {
      if (candidate->name()->string_view() == tag_name) tag_field = candidate;
    }
    if (tag_field == nullptr) return nullptr;
    const int64_t tag = flatbuffers::GetAnyFieldI(table, *tag_field);
    const reflection::EnumVal* value = nullptr;
    for (const auto* candidate : *enum_of(*field.type())->values()) {
      if (candidate->value() == tag) value = candidate;
    }
    if (value == nullptr || value->union_type() == nullptr || value->union_type()->index() < 0) return nullptr;
    return schema_.objects()->Get(static_cast<uint32_t>(value->union_type()->index()));
  }

  void print_vector(const flatbuffers::VectorOfAny& vec, const reflection::Type& type, int depth) {
    const BaseType element = type.element();
    out_ += "[";
    const reflection::Object* object =
        element == BaseType::Obj ? schema_.objects()->Get(static_cast<uint32_t>(type.index())) : nullptr;
    const size_t size = vec.size();
    for (size_t i = 0; i < size; ++i) {
      out_ += i == 0 ? "\n" : ",\n";
      indent(depth + 1);
      if (element == BaseType::String) {
        print_string(flatbuffers::GetAnyVectorElemPointer<const flatbuffers::String>(&vec, i)->string_view());
      } else if (object != nullptr && object->is_struct()) {
        print_struct(*flatbuffers::GetAnyVectorElemAddressOf<const flatbuffers::Struct>(&vec, i, object->bytesize()),
                     *object, depth + 1);
      } else if (object != nullptr) {
        print_table(*flatbuffers::GetAnyVectorElemPointer<const flatbuffers::Table>(&vec, i), *object, depth + 1);
      } else {
        print_scalar(element, vec.Data() + i * flatbuffers::GetTypeSize(element), enum_of(type));
      }
    }
    if (size > 0) {
      out_ += "\n";
      indent(depth);
    }
    out_ += "]";
  }

  void print_table(const flatbuffers::Table& table, const reflection::Object& object, int depth) {
    out_ += "{";
    bool first = true;
    for (const auto* field : sorted_fields(object)) {
      if (field->deprecated() || !table.CheckField(field->offset())) continue;  // absent: default applies
      const auto* type = field->type();
      const reflection::Object* member = nullptr;
      if (type->base_type() == BaseType::Union) {
        member = union_member(table, object, *field);
        if (member == nullptr) continue;  // unknown member of a newer schema: cannot be printed
      }
      out_ += first ? "\n" : ",\n";
      first = false;
      indent(depth + 1);
      print_string(field->name()->string_view());
      out_ += ": ";
      switch (type->base_type()) {
        case BaseType::String:
          print_string(flatbuffers::GetFieldS(table, *field)->string_view());
          break;
        case BaseType::Vector:
          print_vector(*flatbuffers::GetFieldAnyV(table, *field), *type, depth + 1);
          break;
        case BaseType::Obj: {
          const auto* inner = schema_.objects()->Get(static_cast<uint32_t>(type->index()));
          if (inner->is_struct()) {
            print_struct(*flatbuffers::GetFieldStruct(table, *field), *inner, depth + 1);
          } else {
            print_table(*flatbuffers::GetFieldT(table, *field), *inner, depth + 1);
          }
          break;
        }
        case BaseType::Union:
          print_table(*flatbuffers::GetFieldT(table, *field), *member, depth + 1);
          break;
        default:
          print_scalar(type->base_type(), table.GetAddressOf(field->offset()), enum_of(*type));
      }
    }
    if (!first) {
      out_ += "\n";
      indent(depth);
    }
    out_ += "}";
  }

  const reflection::Schema& schema_;
  std::string out_;
};

}  // namespace

std::string print_json(const reflection::Schema& schema, const uint8_t* verified_buffer) {
  return JsonPrinter(schema).print_root(verified_buffer);
}

}  // namespace nrt
