#include "io/output_files.h"

namespace nrt::exec {

bool safe_file_name(const std::string& name) {
  if (name.empty() || name[0] == '.' || name.size() > 200) return false;
  for (char c : name) {
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
    if (!ok) return false;
  }
  return true;
}

Result<Tensor> output_tensor(const NamedOutput& output, std::string* type) {
  const auto& v = output.value;
  if (const auto* t = std::get_if<Tensor>(&v); t && t->defined()) {
    *type = t->type_string();
    return *t;
  }
  Tensor scalar;
  if (const auto* i = std::get_if<int64_t>(&v)) {
    scalar = Tensor::empty(ScalarType::INT64, {});
    scalar.data<int64_t>()[0] = *i;
    *type = "int";
  } else if (const auto* d = std::get_if<double>(&v)) {
    scalar = Tensor::empty(ScalarType::FLOAT64, {});
    scalar.data<double>()[0] = *d;
    *type = "float";
  } else if (const auto* b = std::get_if<bool>(&v)) {
    scalar = Tensor::empty(ScalarType::BOOL, {});
    scalar.data<uint8_t>()[0] = *b ? 1 : 0;
    *type = "bool";
  } else {
    return make_error(ErrorCode::InvalidArgument,
                      "output '" + output.name + "' is neither a tensor nor a number and cannot be written as .npy");
  }
  return scalar;
}

}  // namespace nrt::exec
