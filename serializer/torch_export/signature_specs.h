// The members of torch.export's InputSpec and OutputSpec unions, the nrt kind each maps to, the
// shape of its `arg` and the field holding its target name. Import and export read this one
// table, so a spec kind cannot be handled on one side only.
#pragma once

#include <span>
#include <string_view>

#include "schema/nrt_generated.h"

namespace nrt::torch_export {

enum class SpecArg {
  kArgument,   // an Argument union (user inputs and outputs)
  kTensor,     // TensorArgument{name}
  kToken,      // TokenArgument{name}
  kCustomObj,  // CustomObjArgument{name, class_fqn}
  kConstant,   // InputToConstantInputSpec: {name, value: ConstantValue}, no arg
};

struct InputSpecShape {
  std::string_view member;        // "parameter"
  fb::InputKind kind;
  SpecArg arg;
  std::string_view target_field;  // "parameter_name"; empty when the spec names no target
};

struct OutputSpecShape {
  std::string_view member;
  fb::OutputKind kind;
  SpecArg arg;
  std::string_view target_field;
};

std::span<const InputSpecShape> input_spec_shapes();
std::span<const OutputSpecShape> output_spec_shapes();
const InputSpecShape* input_spec_shape(std::string_view member);
const InputSpecShape* input_spec_shape(fb::InputKind kind);
const OutputSpecShape* output_spec_shape(std::string_view member);
const OutputSpecShape* output_spec_shape(fb::OutputKind kind);

}  // namespace nrt::torch_export
