#include "serializer/program_text.h"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "core/schema_enums.h"
#include "serializer/schema_access.h"

namespace nrt {
namespace {

// Map arguments nest (StringToArgumentArg); the FlatBuffers verifier bounds the depth already,
// this bound keeps the renderer's stack small even on an unverified buffer.
constexpr int kMaxArgumentDepth = 64;

// A graph header longer than this puts each input on its own line.
constexpr size_t kMaxHeaderWidth = 100;

std::string str(const flatbuffers::String* s) { return s ? printable(s->string_view()) : std::string(); }

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

// "[a, b]" from a FlatBuffers vector (nullptr: "[]") and a renderer of one element.
template <typename Vector, typename Render>
std::string join_list(const Vector* vector, Render render, std::string_view separator = ", ") {
  std::string out = "[";
  for (uint32_t i = 0; i < vector_size(vector); ++i) {
    if (i > 0) out += separator;
    out += render(vector->Get(i));
  }
  return out + "]";
}

// Length of the valid UTF-8 sequence at `text[i]` that encodes a printable code point, or 0.
// C1 controls (U+0080..U+009F) count as unprintable: some terminals act on them.
size_t printable_utf8_length(std::string_view text, size_t i) {
  const auto lead = static_cast<unsigned char>(text[i]);
  size_t length = 0;
  uint32_t code = 0;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
    code = lead & 0x1F;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    code = lead & 0x0F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    code = lead & 0x07;
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  for (size_t k = 1; k < length; ++k) {
    const auto byte = static_cast<unsigned char>(text[i + k]);
    if ((byte & 0xC0) != 0x80) return 0;
    code = (code << 6) | (byte & 0x3F);
  }
  static constexpr uint32_t kMinimum[] = {0, 0, 0x80, 0x800, 0x10000};
  if (code < kMinimum[length] || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return 0;
  if (code >= 0x80 && code <= 0x9F) return 0;
  return length;
}

// Appends `text` with backslash escapes; `quote` (if not 0) is escaped too.
void append_escaped(std::string& out, std::string_view text, char quote) {
  for (size_t i = 0; i < text.size();) {
    const char c = text[i];
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\\' || (quote != 0 && c == quote)) {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (byte >= 0x20 && byte < 0x7F) {
      out += c;
    } else if (size_t length = byte >= 0x80 ? printable_utf8_length(text, i) : 0; length > 0) {
      out.append(text.substr(i, length));
      i += length;
      continue;
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", byte);
      out += buf;
    }
    ++i;
  }
}

const fb::Value* value_at(const fb::Graph& graph, int64_t index) {
  if (index < 0 || index >= static_cast<int64_t>(vector_size(graph.values()))) return nullptr;
  return graph.values()->Get(static_cast<uint32_t>(index));
}

std::string render_definition_of(int64_t index, const fb::Graph& graph, const fb::Program& program) {
  const fb::Value* value = value_at(graph, index);
  if (value == nullptr) return render_value_ref(index, graph);
  return render_value_ref(index, graph) + " : " + render_type(*value, program);
}

std::string render_process_group(int64_t index, const fb::Program& program) {
  if (index < 0 || index >= static_cast<int64_t>(vector_size(program.process_groups()))) {
    return "pg<?" + std::to_string(index) + ">";
  }
  return "pg<" + str(program.process_groups()->Get(static_cast<uint32_t>(index))->name()) + ">";
}

std::string render_graph_name(int64_t index, const fb::Program& program) {
  if (index < 0 || index >= static_cast<int64_t>(vector_size(program.graphs()))) return "?" + std::to_string(index);
  return str(program.graphs()->Get(static_cast<uint32_t>(index))->name());
}

// Python's repr of a complex part: like a float, without a trailing ".0".
std::string render_complex_part(double value) {
  std::string text = render_float(value);
  if (text.size() > 2 && text.compare(text.size() - 2, 2, ".0") == 0) text.resize(text.size() - 2);
  return text;
}

std::string render_complex(const fb::ComplexArg& arg) {
  const double real = arg.real().has_value() ? *arg.real() : 0.0;
  const double imag = arg.imag().has_value() ? *arg.imag() : 0.0;
  const bool imag_negative = std::signbit(imag) && !std::isnan(imag);
  const std::string imag_text = render_complex_part(imag_negative ? -imag : imag) + "j";
  if (real == 0.0 && !std::signbit(real)) return (imag_negative ? "-" : "") + imag_text;
  return "(" + render_complex_part(real) + (imag_negative ? "-" : "+") + imag_text + ")";
}

std::string render_bool(bool value) { return value ? "True" : "False"; }

std::string render_argument_at_depth(fb::Argument type, const void* arg, const fb::Graph& graph,
                                     const fb::Program& program, int depth) {
  using A = fb::Argument;
  if (type == A::NONE) return "None";
  if (arg == nullptr) return "?";
  const auto ref = [&graph](int64_t index) { return render_value_ref(index, graph); };
  switch (type) {
    case A::NONE:
    case A::NoneArg:
      return "None";
    case A::TensorArg:
      return ref(static_cast<const fb::TensorArg*>(arg)->value());
    case A::TensorListArg:
      return join_list(static_cast<const fb::TensorListArg*>(arg)->values(), ref);
    case A::IntArg:
      return std::to_string(static_cast<const fb::IntArg*>(arg)->value());
    case A::IntListArg:
      return join_list(static_cast<const fb::IntListArg*>(arg)->values(), [](int64_t v) { return std::to_string(v); });
    case A::FloatArg: {
      const auto value = static_cast<const fb::FloatArg*>(arg)->value();
      return value.has_value() ? render_float(*value) : "None";
    }
    case A::FloatListArg:
      return join_list(static_cast<const fb::FloatListArg*>(arg)->values(), render_float);
    case A::StringArg: {
      const auto* value = static_cast<const fb::StringArg*>(arg)->value();
      return render_string(value ? value->string_view() : std::string_view());
    }
    case A::StringListArg:
      return join_list(static_cast<const fb::StringListArg*>(arg)->values(),
                       [](const flatbuffers::String* s) { return render_string(s ? s->string_view() : ""); });
    case A::SymIntArg: {
      const auto* a = static_cast<const fb::SymIntArg*>(arg);
      return a->value() >= 0 ? ref(a->value()) : std::to_string(a->literal());
    }
    case A::SymIntListArg:
      return join_list(static_cast<const fb::SymIntListArg*>(arg)->items(), [&](const fb::SymIntItem* item) {
        return item->value() >= 0 ? ref(item->value()) : std::to_string(item->literal());
      });
    case A::ScalarTypeArg:
      return render_scalar_type(static_cast<const fb::ScalarTypeArg*>(arg)->value());
    case A::MemoryFormatArg:
      return render_memory_format(static_cast<const fb::MemoryFormatArg*>(arg)->value());
    case A::LayoutArg:
      return render_layout(static_cast<const fb::LayoutArg*>(arg)->value());
    case A::DeviceArg:
      return render_device(static_cast<const fb::DeviceArg*>(arg)->value());
    case A::BoolArg:
      return render_bool(static_cast<const fb::BoolArg*>(arg)->value());
    case A::BoolListArg:
      return join_list(static_cast<const fb::BoolListArg*>(arg)->values(), [](uint8_t v) { return render_bool(v != 0); });
    case A::SymBoolArg: {
      const auto* a = static_cast<const fb::SymBoolArg*>(arg);
      return a->value() >= 0 ? ref(a->value()) : render_bool(a->literal());
    }
    case A::SymBoolListArg:
      return join_list(static_cast<const fb::SymBoolListArg*>(arg)->items(), [&](const fb::SymBoolItem* item) {
        return item->value() >= 0 ? ref(item->value()) : render_bool(item->literal());
      });
    case A::OptionalTensorListArg:
      return join_list(static_cast<const fb::OptionalTensorListArg*>(arg)->values(),
                       [&](int32_t v) { return v >= 0 ? ref(v) : std::string("None"); });
    case A::GraphArg:
      return "@" + render_graph_name(static_cast<const fb::GraphArg*>(arg)->graph(), program);
    case A::CustomObjArg:
      return ref(static_cast<const fb::CustomObjArg*>(arg)->value());
    case A::OperatorArg: {
      const uint32_t op = static_cast<const fb::OperatorArg*>(arg)->op();
      if (op >= vector_size(program.operators())) return "?op" + std::to_string(op);
      return render_target(*program.operators()->Get(op));
    }
    case A::SymFloatArg: {
      const auto* a = static_cast<const fb::SymFloatArg*>(arg);
      if (a->value() >= 0) return ref(a->value());
      return a->literal().has_value() ? render_float(*a->literal()) : "None";
    }
    case A::SymFloatListArg:
      return join_list(static_cast<const fb::SymFloatListArg*>(arg)->items(), [&](const fb::SymFloatItem* item) {
        return item->value() >= 0 ? ref(item->value()) : render_float(item->literal());
      });
    case A::OptionalTensorArg: {
      const int32_t v = static_cast<const fb::OptionalTensorArg*>(arg)->value();
      return v >= 0 ? ref(v) : "None";
    }
    case A::ComplexArg:
      return render_complex(*static_cast<const fb::ComplexArg*>(arg));
    case A::NestedTensorsArg:
      return join_list(static_cast<const fb::NestedTensorsArg*>(arg)->lists(),
                       [&](const fb::TensorListArg* list) { return join_list(list->values(), ref); });
    case A::IntListListArg:
      return join_list(static_cast<const fb::IntListListArg*>(arg)->lists(), [](const fb::IntListArg* list) {
        return join_list(list->values(), [](int64_t v) { return std::to_string(v); });
      });
    case A::StringToArgumentArg: {
      if (depth >= kMaxArgumentDepth) return "{...}";
      const auto* entries = static_cast<const fb::StringToArgumentArg*>(arg)->entries();
      std::string out = "{";
      for (uint32_t i = 0; i < vector_size(entries); ++i) {
        const auto* entry = entries->Get(i);
        if (i > 0) out += ", ";
        out += render_string(entry->key() ? entry->key()->string_view() : "");
        out += ": ";
        out += render_argument_at_depth(entry->value_type(), entry->value(), graph, program, depth + 1);
      }
      return out + "}";
    }
    case A::FloatListListArg:
      return join_list(static_cast<const fb::FloatListListArg*>(arg)->lists(),
                       [](const fb::FloatListArg* list) { return join_list(list->values(), render_float); });
    case A::ProcessGroupArg:
      return render_process_group(static_cast<const fb::ProcessGroupArg*>(arg)->group(), program);
    case A::ValueArg:
      return ref(static_cast<const fb::ValueArg*>(arg)->value());
  }
  return "<unknown argument " + std::to_string(static_cast<int>(type)) + ">";
}

// Python's repr rule: scientific notation when the decimal exponent is below -4 or at least 16.
std::string format_shortest(double value) {
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::scientific);
  if (ec != std::errc()) return "?";
  const std::string_view sci(buf, static_cast<size_t>(end - buf));  // "-1.2345e+02"
  const size_t e_pos = sci.find('e');
  std::string sign;
  std::string digits;
  for (char c : sci.substr(0, e_pos)) {
    if (c == '-') {
      sign = "-";
    } else if (c != '.') {
      digits += c;
    }
  }
  const int exponent = std::atoi(std::string(sci.substr(e_pos + 1)).c_str());
  if (exponent < -4 || exponent >= 16) {
    std::string out = sign + digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    char exp_buf[16];
    std::snprintf(exp_buf, sizeof exp_buf, "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
    return out + exp_buf;
  }
  const int point = exponent + 1;  // digits before the decimal point
  const int num_digits = static_cast<int>(digits.size());
  if (point <= 0) return sign + "0." + std::string(static_cast<size_t>(-point), '0') + digits;
  if (point >= num_digits) return sign + digits + std::string(static_cast<size_t>(point - num_digits), '0') + ".0";
  return sign + digits.substr(0, static_cast<size_t>(point)) + "." + digits.substr(static_cast<size_t>(point));
}

}  // namespace

// --- scalars and enums ------------------------------------------------------------------------

std::string render_float(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  if (value == 0.0) return std::signbit(value) ? "-0.0" : "0.0";
  return format_shortest(value);
}

std::string render_string(std::string_view text) {
  std::string out = "'";
  append_escaped(out, text, '\'');
  return out + "'";
}

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  append_escaped(out, text, 0);
  return out;
}

std::string render_scalar_type(fb::ScalarType type) {
  using S = fb::ScalarType;
  switch (type) {
    case S::UINT8: return "torch.uint8";
    case S::INT8: return "torch.int8";
    case S::INT16: return "torch.int16";
    case S::INT32: return "torch.int32";
    case S::INT64: return "torch.int64";
    case S::FLOAT16: return "torch.float16";
    case S::FLOAT32: return "torch.float32";
    case S::FLOAT64: return "torch.float64";
    case S::COMPLEX32: return "torch.complex32";
    case S::COMPLEX64: return "torch.complex64";
    case S::COMPLEX128: return "torch.complex128";
    case S::BOOL: return "torch.bool";
    case S::BFLOAT16: return "torch.bfloat16";
    case S::UINT16: return "torch.uint16";
    case S::FLOAT8_E4M3FN: return "torch.float8_e4m3fn";
    case S::FLOAT8_E5M2: return "torch.float8_e5m2";
    case S::FLOAT8_E4M3FNUZ: return "torch.float8_e4m3fnuz";
    case S::FLOAT8_E5M2FNUZ: return "torch.float8_e5m2fnuz";
    case S::FLOAT8_E8M0FNU: return "torch.float8_e8m0fnu";
    case S::UINT32: return "torch.uint32";
    case S::UINT64: return "torch.uint64";
    case S::QINT8: return "torch.qint8";
    case S::QUINT8: return "torch.quint8";
    case S::QINT32: return "torch.qint32";
    case S::QUINT4X2: return "torch.quint4x2";
    case S::QUINT2X4: return "torch.quint2x4";
    case S::BITS1X8: return "torch.bits1x8";
    case S::BITS2X4: return "torch.bits2x4";
    case S::BITS4X2: return "torch.bits4x2";
    case S::BITS8: return "torch.bits8";
    case S::BITS16: return "torch.bits16";
    case S::UNKNOWN: break;
  }
  return "torch.<unknown " + std::to_string(static_cast<int>(type)) + ">";
}

std::string render_layout(fb::Layout layout) {
  using L = fb::Layout;
  switch (layout) {
    case L::STRIDED: return "torch.strided";
    case L::SPARSE_COO: return "torch.sparse_coo";
    case L::SPARSE_CSR: return "torch.sparse_csr";
    case L::SPARSE_CSC: return "torch.sparse_csc";
    case L::SPARSE_BSR: return "torch.sparse_bsr";
    case L::SPARSE_BSC: return "torch.sparse_bsc";
    case L::MKLDNN: return "torch._mkldnn";
    case L::JAGGED: return "torch.jagged";
    case L::UNKNOWN: break;
  }
  return "torch.<unknown " + std::to_string(static_cast<int>(layout)) + ">";
}

std::string render_memory_format(fb::MemoryFormat format) {
  using M = fb::MemoryFormat;
  switch (format) {
    case M::CONTIGUOUS: return "torch.contiguous_format";
    case M::CHANNELS_LAST: return "torch.channels_last";
    case M::CHANNELS_LAST_3D: return "torch.channels_last_3d";
    case M::PRESERVE: return "torch.preserve_format";
    case M::UNKNOWN: break;
  }
  return "torch.<unknown " + std::to_string(static_cast<int>(format)) + ">";
}

std::string render_device_type(fb::DeviceType type) {
  // torch's device type strings; PRIVATEUSE1 prints as torch does before a backend renames it.
  if (type == fb::DeviceType::PRIVATEUSE1) return "privateuseone";
  const char* name = fb::EnumNameDeviceType(type);
  if (name == nullptr || name[0] == '\0') return "<unknown device " + std::to_string(static_cast<int>(type)) + ">";
  return lower(name);
}

std::string render_device(const fb::Device* device) {
  if (device == nullptr) return "cpu";
  std::string out = render_device_type(device->type());
  if (device->index() >= 0) out += ":" + std::to_string(device->index());
  return out;
}

std::string render_reduce_op(fb::ReduceOp op) {
  using R = fb::ReduceOp;
  switch (op) {
    case R::SUM: return "sum";
    case R::AVG: return "avg";
    case R::PRODUCT: return "product";
    case R::MINIMUM: return "min";
    case R::MAXIMUM: return "max";
    case R::BAND: return "band";
    case R::BOR: return "bor";
    case R::BXOR: return "bxor";
    case R::PREMUL_SUM: return "premul_sum";
  }
  return "<unknown reduce op " + std::to_string(static_cast<int>(op)) + ">";
}

std::string render_input_kind(fb::InputKind kind) {
  const char* name = fb::EnumNameInputKind(kind);
  if (name == nullptr || name[0] == '\0') return "<unknown input kind " + std::to_string(static_cast<int>(kind)) + ">";
  return lower(name);
}

std::string render_output_kind(fb::OutputKind kind) {
  const char* name = fb::EnumNameOutputKind(kind);
  if (name == nullptr || name[0] == '\0') return "<unknown output kind " + std::to_string(static_cast<int>(kind)) + ">";
  return lower(name);
}

// --- types ------------------------------------------------------------------------------------

std::string render_symbolic(std::string_view expr) {
  std::string out;
  out.reserve(expr.size());
  size_t i = 0;
  while (i < expr.size()) {
    const std::string_view rest = expr.substr(i);
    if (rest.starts_with("Symbol('")) {
      // Symbol('s0', positive=True, integer=True): the assumptions end at the first ')'.
      const size_t name_end = rest.find('\'', 8);
      const size_t close = name_end == std::string_view::npos ? name_end : rest.find(')', name_end);
      if (close != std::string_view::npos) {
        out.append(rest.substr(8, name_end - 8));
        i += close + 1;
        continue;
      }
    } else if (rest.starts_with("Integer(")) {
      const size_t close = rest.find(')');
      const std::string_view number = close == std::string_view::npos ? "" : rest.substr(8, close - 8);
      if (!number.empty() && number.find_first_not_of("-0123456789") == std::string_view::npos) {
        out.append(number);
        i += close + 1;
        continue;
      }
    }
    out += expr[i++];
  }
  return printable(out);
}

std::string render_dim(const fb::SymDim* dim) {
  if (dim == nullptr) return "?";
  if (dim->expr() != nullptr) return render_symbolic(dim->expr()->string_view());
  return std::to_string(dim->literal());
}

std::string render_shape(const flatbuffers::Vector<flatbuffers::Offset<fb::SymDim>>* sizes) {
  return join_list(sizes, render_dim, ",");
}

std::string render_tensor_meta(const fb::TensorMeta* meta) {
  if (meta == nullptr) return "tensor";
  std::string out = std::string(short_name(meta->dtype())) + render_shape(meta->sizes());
  if (meta->device() != nullptr && meta->device()->type() != fb::DeviceType::CPU) {
    out += "@" + render_device(meta->device());
  }
  return out;
}

std::string render_placement(const fb::Placement& placement) {
  switch (placement.kind()) {
    case fb::PlacementKind::REPLICATE:
      return "Replicate()";
    case fb::PlacementKind::SHARD:
      return "Shard(" + std::to_string(placement.dim()) + ")";
    case fb::PlacementKind::STRIDED_SHARD:
      return "_StridedShard(dim=" + std::to_string(placement.dim()) +  // as torch prints it
             ", sf=" + std::to_string(placement.split_factor()) + ")";
    case fb::PlacementKind::PARTIAL:
      return "Partial(" + render_reduce_op(placement.reduce_op()) + ")";
  }
  return "<unknown placement " + std::to_string(static_cast<int>(placement.kind())) + ">";
}

std::string render_type(const fb::Value& value, const fb::Program& program) {
  using K = fb::ValueKind;
  switch (value.kind()) {
    case K::TENSOR:
      return render_tensor_meta(value.tensor());
    case K::OPTIONAL_TENSOR:
      return render_tensor_meta(value.tensor()) + "?";
    case K::DTENSOR: {
      const auto* spec = value.dtensor();
      std::string out = "dtensor<" + render_tensor_meta(value.tensor());
      if (spec == nullptr) return out + ">";
      if (spec->global_sizes() != nullptr) out += " global " + render_shape(spec->global_sizes());
      out += ", mesh " + std::to_string(spec->mesh()) + " ";
      out += join_list(spec->placements(), [](const fb::Placement* p) { return render_placement(*p); });
      return out + ">";
    }
    case K::TENSOR_LIST:
      if (vector_size(value.elements()) == 0) return "tensor[]";
      return join_list(value.elements(), render_tensor_meta);
    case K::OPTIONAL_TENSOR_LIST:
      if (vector_size(value.elements()) == 0) return "tensor?[]";
      return join_list(value.elements(), [](const fb::TensorMeta* meta) { return render_tensor_meta(meta) + "?"; });
    case K::SYM_INT:
      return "symint";
    case K::SYM_FLOAT:
      return "symfloat";
    case K::SYM_BOOL:
      return "symbool";
    case K::PROCESS_GROUP:
      return render_process_group(value.process_group(), program);
    case K::CUSTOM_OBJ:
      return value.class_fqn() ? "obj<" + str(value.class_fqn()) + ">" : "obj";
    case K::NONE:
      return "None";
    case K::GRAPH:
      return "graph<" + render_graph_name(value.graph(), program) + ">";
    case K::UNKNOWN:
      break;
  }
  return "?";
}

// --- arguments, nodes, graphs -----------------------------------------------------------------

std::string render_target(const fb::Operator& op) { return operator_target(op); }

std::string render_value_ref(int64_t index, const fb::Graph& graph) {
  const fb::Value* value = value_at(graph, index);
  if (value == nullptr) return "%?" + std::to_string(index);
  return "%" + str(value->name());
}

std::string render_argument(fb::Argument type, const void* arg, const fb::Graph& graph, const fb::Program& program) {
  return render_argument_at_depth(type, arg, graph, program, 0);
}

std::string render_definition(fb::Argument type, const void* arg, const fb::Graph& graph, const fb::Program& program) {
  using A = fb::Argument;
  if (type == A::NONE || type == A::NoneArg) return "_";
  if (arg == nullptr) return "?";
  const auto define = [&](int64_t index) { return render_definition_of(index, graph, program); };
  switch (type) {
    case A::TensorArg:
      return define(static_cast<const fb::TensorArg*>(arg)->value());
    case A::TensorListArg:
      return join_list(static_cast<const fb::TensorListArg*>(arg)->values(), define);
    case A::OptionalTensorArg: {
      const int32_t v = static_cast<const fb::OptionalTensorArg*>(arg)->value();
      return v >= 0 ? define(v) : "_";
    }
    case A::SymIntArg:
      if (static_cast<const fb::SymIntArg*>(arg)->value() >= 0) {
        return define(static_cast<const fb::SymIntArg*>(arg)->value());
      }
      break;
    case A::SymFloatArg:
      if (static_cast<const fb::SymFloatArg*>(arg)->value() >= 0) {
        return define(static_cast<const fb::SymFloatArg*>(arg)->value());
      }
      break;
    case A::SymBoolArg:
      if (static_cast<const fb::SymBoolArg*>(arg)->value() >= 0) {
        return define(static_cast<const fb::SymBoolArg*>(arg)->value());
      }
      break;
    case A::CustomObjArg:
      return define(static_cast<const fb::CustomObjArg*>(arg)->value());
    case A::ValueArg:
      return define(static_cast<const fb::ValueArg*>(arg)->value());
    default:
      break;
  }
  return render_argument(type, arg, graph, program);
}

std::string render_node(const fb::Node& node, const fb::Graph& graph, const fb::Program& program,
                        const TextStyle& style) {
  std::string out;
  const auto* outputs = node.outputs();
  for (uint32_t i = 0; i < vector_size(outputs); ++i) {
    if (i > 0) out += ", ";
    const auto* holder = outputs->Get(i);
    out += render_definition(holder->arg_type(), holder->arg(), graph, program);
  }
  if (!out.empty()) out += " = ";
  out += style.target_begin;
  if (node.op() < vector_size(program.operators())) {
    out += render_target(*program.operators()->Get(node.op()));
  } else {
    out += "?op" + std::to_string(node.op());
  }
  out += style.target_end;
  out += "(";
  for (uint32_t i = 0; i < vector_size(node.inputs()); ++i) {
    const auto* named = node.inputs()->Get(i);
    if (i > 0) out += ", ";
    if (named->kind() == fb::ArgumentKind::KEYWORD) out += str(named->name()) + "=";
    out += render_argument(named->arg_type(), named->arg(), graph, program);
  }
  return out + ")";
}

std::string render_graph(const fb::Graph& graph, const fb::Program& program, const TextStyle& style,
                         std::string_view keyword) {
  std::vector<std::string> inputs;
  size_t inputs_length = 0;
  for (uint32_t i = 0; i < vector_size(graph.inputs()); ++i) {
    const auto* holder = graph.inputs()->Get(i);
    inputs.push_back(render_definition(holder->arg_type(), holder->arg(), graph, program));
    inputs_length += inputs.back().size() + 2;
  }
  std::string out = std::string(keyword) + " " + str(graph.name()) + "(";
  // Real models have hundreds of parameters: past one screen line, one input per line.
  const bool one_per_line = out.size() + inputs_length > kMaxHeaderWidth;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (one_per_line) {
      out += "\n    " + inputs[i] + (i + 1 < inputs.size() ? "," : "\n");
    } else {
      out += (i > 0 ? ", " : "") + inputs[i];
    }
  }
  out += ") -> (";
  for (uint32_t i = 0; i < vector_size(graph.outputs()); ++i) {
    const auto* holder = graph.outputs()->Get(i);
    if (i > 0) out += ", ";
    out += render_argument(holder->arg_type(), holder->arg(), graph, program);
  }
  out += ")\n";

  if (const auto* signature = graph.signature()) {
    for (uint32_t i = 0; i < vector_size(signature->inputs()); ++i) {
      const auto* spec = signature->inputs()->Get(i);
      out += "  # input " + (spec->value() >= 0 ? render_value_ref(spec->value(), graph) : std::string("_")) + " : " +
             render_input_kind(spec->kind());
      if (spec->target() != nullptr && spec->target()->size() > 0) {
        out += " target=" + render_string(spec->target()->string_view());
      }
      if (spec->kind() == fb::InputKind::BUFFER && !spec->persistent()) out += " persistent=False";
      if (const auto* constant = spec->constant()) {
        out += " value=" + render_argument(constant->arg_type(), constant->arg(), graph, program);
      }
      out += "\n";
    }
    for (uint32_t i = 0; i < vector_size(signature->outputs()); ++i) {
      const auto* spec = signature->outputs()->Get(i);
      out += "  # output " + (spec->value() >= 0 ? render_value_ref(spec->value(), graph) : std::string("_")) +
             " : " + render_output_kind(spec->kind());
      if (spec->target() != nullptr && spec->target()->size() > 0) {
        out += " target=" + render_string(spec->target()->string_view());
      }
      out += "\n";
    }
  }

  for (uint32_t n = 0; n < vector_size(graph.nodes()); ++n) {
    out += "  " + render_node(*graph.nodes()->Get(n), graph, program, style) + "\n";
  }
  return out;
}

std::string render_program(const fb::Program& program, const TextStyle& style) {
  const uint32_t num_graphs = vector_size(program.graphs());
  std::vector<bool> is_entry(num_graphs, false);
  std::string out;
  for (uint32_t e = 0; e < vector_size(program.entry_points()); ++e) {
    const uint32_t g = program.entry_points()->Get(e);
    if (g >= num_graphs || is_entry[g]) continue;
    is_entry[g] = true;
    if (!out.empty()) out += "\n";
    out += render_graph(*program.graphs()->Get(g), program, style, "graph");
  }
  for (uint32_t g = 0; g < num_graphs; ++g) {
    if (is_entry[g]) continue;
    if (!out.empty()) out += "\n";
    out += render_graph(*program.graphs()->Get(g), program, style, "subgraph");
  }
  return out;
}

std::optional<std::string> render_named_graph(const fb::Program& program, std::string_view name,
                                              const TextStyle& style) {
  for (uint32_t g = 0; g < vector_size(program.graphs()); ++g) {
    if (program.graphs()->Get(g)->name()->string_view() != name) continue;
    bool entry = false;
    for (uint32_t e = 0; e < vector_size(program.entry_points()); ++e) entry = entry || program.entry_points()->Get(e) == g;
    return render_graph(*program.graphs()->Get(g), program, style, entry ? "graph" : "subgraph");
  }
  return std::nullopt;
}

std::string graph_names(const fb::Program& program) {
  std::string names;
  for (uint32_t g = 0; g < vector_size(program.graphs()); ++g) {
    names += (g > 0 ? ", " : "") + printable(program.graphs()->Get(g)->name()->string_view());
  }
  return names;
}

}  // namespace nrt
