#include "serializer/torch_export/operator_target.h"

#include "serializer/torch_export/torch_error_codes.h"

namespace nrt::torch_export {
namespace {

constexpr std::string_view kOpsPrefix = "torch.ops.";

}  // namespace

Result<fb::OperatorT> operator_from_target(std::string_view target) {
  fb::OperatorT op;
  if (target.empty()) return make_error(codes::kJson, "node target is empty");
  if (target.substr(0, kOpsPrefix.size()) != kOpsPrefix) {
    if (target.find("::") != std::string_view::npos) {
      return make_error(codes::kJson, "node target '" + std::string(target) +
                                          "' contains '::' but is not a torch.ops path");
    }
    op.name = std::string(target);
    return op;
  }
  // torch.ops.<namespace>.<op>[.<overload>]; op and namespace names hold no dots.
  const std::string_view path = target.substr(kOpsPrefix.size());
  const size_t first = path.find('.');
  if (first == std::string_view::npos || first == 0 || first + 1 == path.size()) {
    return make_error(codes::kJson, "node target '" + std::string(target) + "' lacks an op name");
  }
  const std::string_view ns = path.substr(0, first);
  const std::string_view rest = path.substr(first + 1);
  const size_t second = rest.find('.');
  const std::string_view name = rest.substr(0, second);
  const std::string_view overload = second == std::string_view::npos ? std::string_view{} : rest.substr(second + 1);
  if (name.empty() || (second != std::string_view::npos && overload.empty()) ||
      overload.find('.') != std::string_view::npos) {
    return make_error(codes::kJson, "node target '" + std::string(target) + "' is not torch.ops.<ns>.<op>[.<overload>]");
  }
  op.name = std::string(ns) + "::" + std::string(name);
  op.overload = std::string(overload);
  return op;
}

Result<std::string> target_from_operator(const fb::OperatorT& op) {
  const size_t sep = op.name.find("::");
  if (sep == std::string::npos) {
    if (!op.overload.empty()) {
      return make_error(codes::kNotExpressible, "operator '" + op.name + "' has overload '" + op.overload +
                                                    "' but no namespace; torch.export cannot name it");
    }
    return op.name;
  }
  std::string target = std::string(kOpsPrefix) + op.name.substr(0, sep) + "." + op.name.substr(sep + 2);
  if (!op.overload.empty()) target += "." + op.overload;
  return target;
}

}  // namespace nrt::torch_export
