#include "executor/runtime/attention_operand_views.h"

#include <string_view>

#include "executor/runtime/chain_fusion.h"

namespace nrt::exec {
namespace {

constexpr std::string_view kAttention = "aten::scaled_dot_product_attention.default";
constexpr std::string_view kContiguous = "aten::contiguous.default";

class AttentionOperandViews : public ChainFusion {
 public:
  AttentionOperandViews(ExecutionPlan& plan, const KernelRegistry& registry) : ChainFusion(plan, registry, kAttention) {}

  void run() {
    // The CPU attention reads strided operands; another device's kernel may not.
    if (!ready() || plan_.device.kind != DeviceKind::kCpu || !builtin(kContiguous)) return;
    for (size_t n = 0; n < plan_.nodes.size(); ++n) {
      if (plain_node(n, kAttention) < 0) continue;
      for (std::string_view operand : {"query", "key", "value"}) view_copy_into(n, argument(plan_.nodes[n], operand));
    }
  }

 private:
  // The copy that makes the attention's operand in `slot` becomes a view of its input.
  void view_copy_into(size_t attention, int32_t slot) {
    const ValueInfo* operand = value_in(slot);
    if (operand == nullptr || operand->def_step < 0) return;
    const auto copy = static_cast<size_t>(operand->def_step);
    const int32_t result = plain_node(copy, kContiguous);
    if (result < 0 || result != value_of(slot) || !read_only(result, 1)) return;
    const PlannedNode& node = plan_.nodes[copy];
    if (!memory_format_is(node, MemoryFormat::CONTIGUOUS)) return;
    // The view reads its input when the attention runs: nothing may write it in place before.
    if (writes_in_place_between(plan_, copy, attention)) return;
    become_view(copy, argument(node, "self"));
  }
};

}  // namespace

void view_attention_operands(ExecutionPlan& plan, const KernelRegistry& registry) {
  AttentionOperandViews(plan, registry).run();
}

}  // namespace nrt::exec
