#include "executor/runtime/identity_conversions.h"

#include <string_view>

#include "executor/runtime/chain_fusion.h"

namespace nrt::exec {
namespace {

constexpr std::string_view kConversion = "aten::to.dtype";

class IdentityConversions : public ChainFusion {
 public:
  IdentityConversions(ExecutionPlan& plan, const KernelRegistry& registry) : ChainFusion(plan, registry, kConversion) {}

  void run() {
    if (!ready()) return;
    for (size_t n = 0; n < plan_.nodes.size(); ++n) view_at(n);
  }

 private:
  void view_at(size_t n) {
    const int32_t result = plain_node(n, kConversion);
    if (result < 0) return;
    const PlannedNode& node = plan_.nodes[n];
    const int32_t self = argument(node, "self");
    const ValueInfo* input = value_in(self);
    if (input == nullptr || input->kind != fb::ValueKind::TENSOR || input->dtype != ScalarType::FLOAT32 ||
        !same_sizes(*input, plan_.values[static_cast<size_t>(result)])) {
      return;
    }
    const RuntimeValue* dtype = constant(argument(node, "dtype"));
    if (dtype == nullptr || std::get_if<ScalarType>(dtype) == nullptr || std::get<ScalarType>(*dtype) != ScalarType::FLOAT32) {
      return;
    }
    const int32_t copy = argument(node, "copy");
    if (copy >= 0) {
      const RuntimeValue* given = constant(copy);
      if (given == nullptr || std::get_if<bool>(given) == nullptr || std::get<bool>(*given)) return;
    }
    if (!memory_format_is(node, MemoryFormat::PRESERVE)) return;
    become_view(n, self);
  }
};

}  // namespace

void view_identity_conversions(ExecutionPlan& plan, const KernelRegistry& registry) {
  IdentityConversions(plan, registry).run();
}

}  // namespace nrt::exec
