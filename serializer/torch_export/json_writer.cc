#include "serializer/torch_export/json_writer.h"

#include <charconv>
#include <cmath>
#include <cstdlib>

namespace nrt::torch_export {

void JsonWriter::before_value() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!first_.empty()) {
    if (!first_.back()) out_.append(", ");
    first_.back() = false;
  }
}

void JsonWriter::begin_object() {
  before_value();
  out_.push_back('{');
  first_.push_back(true);
}

void JsonWriter::end_object() {
  out_.push_back('}');
  first_.pop_back();
}

void JsonWriter::begin_array() {
  before_value();
  out_.push_back('[');
  first_.push_back(true);
}

void JsonWriter::end_array() {
  out_.push_back(']');
  first_.pop_back();
}

void JsonWriter::key(std::string_view name) {
  before_value();
  append_escaped(name);
  out_.append(": ");
  after_key_ = true;
}

void JsonWriter::string(std::string_view value) {
  before_value();
  append_escaped(value);
}

void JsonWriter::append_escaped(std::string_view value) {
  static constexpr char kHex[] = "0123456789abcdef";
  out_.push_back('"');
  for (const char c : value) {
    switch (c) {
      case '"':
        out_.append("\\\"");
        break;
      case '\\':
        out_.append("\\\\");
        break;
      case '\n':
        out_.append("\\n");
        break;
      case '\r':
        out_.append("\\r");
        break;
      case '\t':
        out_.append("\\t");
        break;
      case '\b':
        out_.append("\\b");
        break;
      case '\f':
        out_.append("\\f");
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out_.append("\\u00");
          out_.push_back(kHex[(c >> 4) & 0xf]);
          out_.push_back(kHex[c & 0xf]);
        } else {
          out_.push_back(c);
        }
    }
  }
  out_.push_back('"');
}

void JsonWriter::int64(int64_t value) {
  before_value();
  char buf[24];
  const auto result = std::to_chars(buf, buf + sizeof buf, value);
  out_.append(buf, result.ptr);
}

void JsonWriter::boolean(bool value) {
  before_value();
  out_.append(value ? "true" : "false");
}

void JsonWriter::null() {
  before_value();
  out_.append("null");
}

void JsonWriter::float64(double value) {
  if (std::isnan(value)) return string("NaN");
  if (std::isinf(value)) return string(value > 0 ? "Infinity" : "-Infinity");
  before_value();
  append_python_float(&out_, value);
}

void JsonWriter::raw(std::string_view json) {
  before_value();
  out_.append(json);
}

void append_python_float(std::string* out, double value) {
  char buf[48];
  const auto result = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::scientific);
  std::string_view sci(buf, static_cast<size_t>(result.ptr - buf));  // "-d.ddde+XX"
  if (!sci.empty() && sci[0] == '-') {
    out->push_back('-');
    sci.remove_prefix(1);
  }
  const size_t e = sci.find('e');
  std::string digits;
  for (const char c : sci.substr(0, e)) {
    if (c != '.') digits.push_back(c);
  }
  const int exponent = std::atoi(std::string(sci.substr(e + 1)).c_str());
  const int n = static_cast<int>(digits.size());
  if (exponent >= -4 && exponent < 16) {
    if (exponent >= 0) {
      if (n <= exponent + 1) {
        out->append(digits);
        out->append(static_cast<size_t>(exponent + 1 - n), '0');
        out->append(".0");
      } else {
        out->append(digits, 0, static_cast<size_t>(exponent + 1));
        out->push_back('.');
        out->append(digits, static_cast<size_t>(exponent + 1));
      }
    } else {
      out->append("0.");
      out->append(static_cast<size_t>(-exponent - 1), '0');
      out->append(digits);
    }
    return;
  }
  out->push_back(digits[0]);
  if (n > 1) {
    out->push_back('.');
    out->append(digits, 1);
  }
  out->push_back('e');
  out->push_back(exponent < 0 ? '-' : '+');
  const int magnitude = std::abs(exponent);
  if (magnitude < 10) out->push_back('0');
  out->append(std::to_string(magnitude));
}

}  // namespace nrt::torch_export
