// Writes JSON text the way Python's json.dumps does with its default separators (", " and ": "),
// which is how torch.export writes model.json: floats in Python's repr form ("1.0", "1e-05"),
// the non-finite floats as the strings torch.export uses ("Infinity", "-Infinity", "NaN").
// Strings are written as UTF-8 with the escapes JSON requires; the caller validates UTF-8.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace nrt::torch_export {

class JsonWriter {
 public:
  void begin_object();
  void end_object();
  void begin_array();
  void end_array();
  // The next value is the value of member `name` of the enclosing object.
  void key(std::string_view name);

  void string(std::string_view value);
  void int64(int64_t value);
  void boolean(bool value);
  void null();
  void float64(double value);
  // A value already in JSON form (validated by the caller).
  void raw(std::string_view json);

  std::string& text() { return out_; }

 private:
  void before_value();
  void append_escaped(std::string_view value);

  std::string out_;
  std::vector<bool> first_;  // per open container: no member written yet
  bool after_key_ = false;
};

// Python's repr(float) for finite values: shortest round-trip digits, fixed notation for
// exponents in [-4, 16) with at least one fractional digit, scientific otherwise.
void append_python_float(std::string* out, double value);

}  // namespace nrt::torch_export
