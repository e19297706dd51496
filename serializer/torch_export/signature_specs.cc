#include "serializer/torch_export/signature_specs.h"

#include <array>

namespace nrt::torch_export {
namespace {

using IK = fb::InputKind;
using OK = fb::OutputKind;

// torch/_export/serde/schema.py, schema 8.20.
constexpr std::array kInputSpecs = {
    InputSpecShape{"user_input", IK::USER_INPUT, SpecArg::kArgument, ""},
    InputSpecShape{"parameter", IK::PARAMETER, SpecArg::kTensor, "parameter_name"},
    InputSpecShape{"buffer", IK::BUFFER, SpecArg::kTensor, "buffer_name"},
    InputSpecShape{"tensor_constant", IK::TENSOR_CONSTANT, SpecArg::kTensor, "tensor_constant_name"},
    InputSpecShape{"custom_obj", IK::CUSTOM_OBJ, SpecArg::kCustomObj, "custom_obj_name"},
    InputSpecShape{"token", IK::TOKEN, SpecArg::kToken, ""},
    InputSpecShape{"constant_input", IK::CONSTANT_INPUT, SpecArg::kConstant, "name"},
};

constexpr std::array kOutputSpecs = {
    OutputSpecShape{"user_output", OK::USER_OUTPUT, SpecArg::kArgument, ""},
    OutputSpecShape{"loss_output", OK::LOSS_OUTPUT, SpecArg::kTensor, ""},
    OutputSpecShape{"buffer_mutation", OK::BUFFER_MUTATION, SpecArg::kTensor, "buffer_name"},
    OutputSpecShape{"gradient_to_parameter", OK::GRADIENT_TO_PARAMETER, SpecArg::kTensor, "parameter_name"},
    OutputSpecShape{"gradient_to_user_input", OK::GRADIENT_TO_USER_INPUT, SpecArg::kTensor, "user_input_name"},
    OutputSpecShape{"user_input_mutation", OK::USER_INPUT_MUTATION, SpecArg::kTensor, "user_input_name"},
    OutputSpecShape{"token", OK::TOKEN, SpecArg::kToken, ""},
    OutputSpecShape{"parameter_mutation", OK::PARAMETER_MUTATION, SpecArg::kTensor, "parameter_name"},
};

template <typename Table, typename Key, typename Field>
auto find(const Table& table, Key key, Field field) -> decltype(&table[0]) {
  for (const auto& row : table) {
    if (row.*field == key) return &row;
  }
  return nullptr;
}

}  // namespace

std::span<const InputSpecShape> input_spec_shapes() { return kInputSpecs; }
std::span<const OutputSpecShape> output_spec_shapes() { return kOutputSpecs; }

const InputSpecShape* input_spec_shape(std::string_view member) {
  return find(kInputSpecs, member, &InputSpecShape::member);
}
const InputSpecShape* input_spec_shape(fb::InputKind kind) { return find(kInputSpecs, kind, &InputSpecShape::kind); }
const OutputSpecShape* output_spec_shape(std::string_view member) {
  return find(kOutputSpecs, member, &OutputSpecShape::member);
}
const OutputSpecShape* output_spec_shape(fb::OutputKind kind) {
  return find(kOutputSpecs, kind, &OutputSpecShape::kind);
}

}  // namespace nrt::torch_export
