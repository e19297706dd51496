#include "serializer/argument_values.h"

namespace nrt {

int64_t single_value_of(fb::Argument type, const void* arg) {
  if (arg == nullptr) return -1;
  using A = fb::Argument;
  switch (type) {
    case A::TensorArg:
      return static_cast<const fb::TensorArg*>(arg)->value();
    case A::OptionalTensorArg:
      return static_cast<const fb::OptionalTensorArg*>(arg)->value();
    case A::SymIntArg:
      return static_cast<const fb::SymIntArg*>(arg)->value();
    case A::SymFloatArg:
      return static_cast<const fb::SymFloatArg*>(arg)->value();
    case A::SymBoolArg:
      return static_cast<const fb::SymBoolArg*>(arg)->value();
    case A::CustomObjArg:
      return static_cast<const fb::CustomObjArg*>(arg)->value();
    case A::ValueArg:
      return static_cast<const fb::ValueArg*>(arg)->value();
    default:
      return -1;
  }
}

int64_t single_value_of(const fb::ArgumentUnion& arg) {
  using A = fb::Argument;
  switch (arg.type) {
    case A::TensorArg:
      return arg.AsTensorArg()->value;
    case A::OptionalTensorArg:
      return arg.AsOptionalTensorArg()->value;
    case A::SymIntArg:
      return arg.AsSymIntArg()->value;
    case A::SymFloatArg:
      return arg.AsSymFloatArg()->value;
    case A::SymBoolArg:
      return arg.AsSymBoolArg()->value;
    case A::CustomObjArg:
      return arg.AsCustomObjArg()->value;
    case A::ValueArg:
      return arg.AsValueArg()->value;
    default:
      return -1;
  }
}

std::vector<int64_t> defined_values(fb::Argument type, const void* arg) {
  if (arg == nullptr) return {};
  if (type == fb::Argument::TensorListArg) {
    std::vector<int64_t> values;
    if (const auto* list = static_cast<const fb::TensorListArg*>(arg)->values()) {
      for (uint32_t v : *list) values.push_back(v);
    }
    return values;
  }
  switch (type) {
    case fb::Argument::TensorArg:
    case fb::Argument::OptionalTensorArg:
    case fb::Argument::SymIntArg:
    case fb::Argument::SymFloatArg:
    case fb::Argument::SymBoolArg:
    case fb::Argument::CustomObjArg:
    case fb::Argument::ValueArg:
      return {single_value_of(type, arg)};
    default:
      return {};
  }
}

}  // namespace nrt
