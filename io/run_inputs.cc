#include "io/run_inputs.h"

#include <set>

#include "io/npy.h"
#include "io/random_inputs.h"

namespace nrt::exec {
namespace {

Result<RuntimeValue> scalar_from_array(const Tensor& t, const std::string& what) {
  if (t.numel() != 1) return make_error(ErrorCode::InvalidArgument, what + " must hold a single integer");
  switch (t.dtype()) {
    case ScalarType::INT64: return RuntimeValue{t.data<int64_t>()[0]};
    case ScalarType::INT32: return RuntimeValue{static_cast<int64_t>(t.data<int32_t>()[0])};
    default: return make_error(ErrorCode::InvalidArgument, what + " must be an int64 or int32 array");
  }
}

}  // namespace

Result<NamedInputs> load_run_inputs(const std::vector<InputDescription>& declared,
                                          const std::vector<std::string>& specs, std::optional<uint64_t> random_seed) {
  NamedInputs inputs;
  std::set<std::string, std::less<>> given;
  for (const auto& spec : specs) {
    const auto eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size()) {
      return make_error(ErrorCode::InvalidArgument, "--input '" + spec + "' is not NAME=PATH.npy");
    }
    const std::string name = spec.substr(0, eq);
    const std::string path = spec.substr(eq + 1);
    const InputDescription* input = nullptr;
    for (const auto& d : declared) {
      if (d.name == name) input = &d;
    }
    if (input == nullptr) {
      std::string names;
      for (const auto& d : declared) names += (names.empty() ? "" : ", ") + d.name;
      return make_error(ErrorCode::InvalidArgument,
                        "--input " + name + ": the graph has no user input of that name (user inputs: " + names + ")");
    }
    if (!given.insert(name).second) return make_error(ErrorCode::InvalidArgument, "--input " + name + " is given twice");
    NRT_TRY(tensor, exec::read_npy(path));
    if (input->kind == fb::ValueKind::SYM_INT) {
      NRT_TRY(value, scalar_from_array(*tensor, path));
      inputs[name] = std::move(*value);
      continue;
    }
    if (input->dtype != ScalarType::UNKNOWN) {
      NRT_TRY(adapted, exec::convert_npy_for(*tensor, input->dtype, path));
      inputs[name] = std::move(*adapted);
    } else {
      inputs[name] = std::move(*tensor);
    }
  }
  if (random_seed) {
    NRT_TRY(generated, exec::random_inputs(declared, *random_seed, given));
    for (auto& [name, value] : *generated) inputs[name] = std::move(value);
  }
  return inputs;
}

}  // namespace nrt::exec
