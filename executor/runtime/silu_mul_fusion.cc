#include "executor/runtime/silu_mul_fusion.h"

#include <algorithm>

#include "executor/runtime/chain_fusion.h"
#include "executor/runtime/fused_chains.h"

namespace nrt::exec {
namespace {

class SiluMulFusion : public ChainFusion {
 public:
  SiluMulFusion(ExecutionPlan& plan, const KernelRegistry& registry)
      : ChainFusion(plan, registry, fused_chains::kSiluMulTarget) {}

  void run() {
    if (!ready()) return;
    for (size_t n = 0; n < plan_.nodes.size(); ++n) fuse_at(n);
  }

 private:
  void fuse_at(size_t n) {
    // s = silu(gate)
    const int32_t s = plain_node(n, "aten::silu.default");
    if (s < 0 || !read_only(s, 1)) return;
    const int32_t gate_slot = argument(plan_.nodes[n], "self");
    const ValueInfo* gate = value_in(gate_slot);
    if (gate == nullptr || gate->kind != fb::ValueKind::TENSOR || gate->dtype != ScalarType::FLOAT32 ||
        !same_sizes(*gate, plan_.values[static_cast<size_t>(s)])) {
      return;
    }
    // out = s * up, the one reader of s, with no in-place write before it
    const size_t m = reader(n, slot_of(s));
    if (m == 0) return;
    const int32_t out = plain_node(m, "aten::mul.Tensor");
    const int32_t up_slot = partner(m, "aten::mul.Tensor", slot_of(s));
    if (out < 0 || up_slot < 0) return;
    const ValueInfo* up = value_in(up_slot);
    if (up == nullptr || up->kind != fb::ValueKind::TENSOR || up->dtype != ScalarType::FLOAT32 ||
        !same_sizes(*up, *gate) || !same_sizes(plan_.values[static_cast<size_t>(out)], *gate)) {
      return;
    }
    run_fused(m, {{fused_chains::kSiluMulGate, gate_slot}, {fused_chains::kSiluMulUp, up_slot}});
    absorb(n);
    read_at(value_of(gate_slot), m);  // gate's memory lives until the mul
  }

  // The first node after `n` that reads `slot`, or 0 where a node before it writes in place or none
  // reads it.
  size_t reader(size_t n, int32_t slot) const {
    for (size_t m = n + 1; m < plan_.nodes.size(); ++m) {
      const PlannedNode& node = plan_.nodes[m];
      if (std::find(node.arg_slots.begin(), node.arg_slots.end(), slot) != node.arg_slots.end()) return m;
      if (node.in_place) return 0;  // it may write gate, which the fused kernel reads later
    }
    return 0;
  }
};

}  // namespace

void fuse_silu_products(ExecutionPlan& plan, const KernelRegistry& registry) { SiluMulFusion(plan, registry).run(); }

}  // namespace nrt::exec
