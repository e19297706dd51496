#include "executor/runtime/rotary_fusion.h"

#include <string_view>
#include <utility>
#include <vector>

#include "executor/runtime/chain_fusion.h"
#include "executor/runtime/fused_chains.h"

namespace nrt::exec {
namespace {

class RotaryFusion : public ChainFusion {
 public:
  RotaryFusion(ExecutionPlan& plan, const KernelRegistry& registry)
      : ChainFusion(plan, registry, fused_chains::kRotaryTarget) {}

  void run() {
    if (!ready()) return;
    for (size_t n = 0; n + 6 < plan_.nodes.size(); ++n) fuse_at(n);
  }

 private:
  void fuse_at(size_t n) {
    // lo = x[..., :h], hi = x[..., h:] (nodes n + 1 and n + 2)
    const int32_t lo = plain_node(n + 1, "aten::slice.Tensor"), hi = plain_node(n + 2, "aten::slice.Tensor");
    if (lo < 0 || hi < 0 || !read_only(lo, 1) || !read_only(hi, 1)) return;
    const int32_t x_slot = argument(plan_.nodes[n + 1], "self");
    const ValueInfo* x = value_in(x_slot);
    if (x == nullptr || x->kind != fb::ValueKind::TENSOR || x->dtype != ScalarType::FLOAT32 || x->sizes.empty() ||
        !x->sizes.back().expr.empty() || x->sizes.back().literal % 2 != 0 || argument(plan_.nodes[n + 2], "self") != x_slot) {
      return;
    }
    const int64_t length = x->sizes.back().literal, half = length / 2;
    if (!last_dim_slice(plan_.nodes[n + 1], *x, 0, half, false) || !last_dim_slice(plan_.nodes[n + 2], *x, half, length, true)) {
      return;
    }
    // a = x * cos (node n)
    const int32_t a = plain_node(n, "aten::mul.Tensor");
    const int32_t cos_slot = partner(n, "aten::mul.Tensor", x_slot);
    if (a < 0 || cos_slot < 0 || !read_only(a, 1) || !same_sizes(plan_.values[static_cast<size_t>(a)], *x) ||
        !table(cos_slot, *x, static_cast<int64_t>(n))) {
      return;
    }
    // neg = -hi; r = cat([neg, lo], -1)
    const int32_t negated = plain_node(n + 3, "aten::neg.default");
    if (negated < 0 || !read_only(negated, 1) || argument(plan_.nodes[n + 3], "self") != slot_of(hi)) return;
    const int32_t r = cat_of(n + 4, slot_of(negated), slot_of(lo), *x);
    if (r < 0 || !read_only(r, 1)) return;
    // b = r * sin; out = a + b
    const int32_t b = plain_node(n + 5, "aten::mul.Tensor");
    const int32_t sin_slot = partner(n + 5, "aten::mul.Tensor", slot_of(r));
    if (b < 0 || sin_slot < 0 || !read_only(b, 1) || !table(sin_slot, *x, static_cast<int64_t>(n))) return;
    const int32_t out = plain_node(n + 6, "aten::add.Tensor");
    if (out < 0 || partner(n + 6, "aten::add.Tensor", slot_of(a)) != slot_of(b)) return;
    fuse(n, n + 6,
         {{fused_chains::kRotaryInput, x_slot}, {fused_chains::kRotaryCos, cos_slot}, {fused_chains::kRotarySin, sin_slot}});
  }

  // slice(x, last dim, start, end, step 1) with `start` and `end` as given (`to_end`: any end at or
  // past the dim's length).
  bool last_dim_slice(const PlannedNode& node, const ValueInfo& x, int64_t start, int64_t end, bool to_end) const {
    const auto rank = static_cast<int64_t>(x.sizes.size());
    const std::optional<double> dim = number(argument(node, "dim"));
    if (!dim || (*dim != -1 && *dim != static_cast<double>(rank - 1))) return false;
    const int32_t start_slot = argument(node, "start"), end_slot = argument(node, "end"), step_slot = argument(node, "step");
    if (start_slot >= 0 && number(start_slot) != static_cast<double>(start)) return false;
    if (start_slot < 0 && start != 0) return false;
    if (step_slot >= 0 && number(step_slot) != 1.0) return false;
    const std::optional<double> stop = number(end_slot);
    if (to_end) return end_slot < 0 || (stop && *stop >= static_cast<double>(end));
    return stop && *stop == static_cast<double>(end);
  }

  // cat([first, second], last dim) at `n` with nrt's own kernel: its float32 result, or -1.
  int32_t cat_of(size_t n, int32_t first, int32_t second, const ValueInfo& x) const {
    const PlannedNode& node = plan_.nodes[n];
    if (node.target != "aten::cat.default" || node.in_place || !builtin(node.target) || node.outputs.size() != 1 ||
        node.outputs[0].kind != OutputSlotKind::kValue || node.gathers.size() != 1) {
      return -1;
    }
    const GatherStep& list = node.gathers[0];
    if (list.kind != GatherStep::Kind::kTensors || list.target_slot != argument(node, "tensors") ||
        list.items.size() != 2 || list.items[0].slot != first || list.items[1].slot != second) {
      return -1;
    }
    const std::optional<double> dim = number(argument(node, "dim"));
    const auto rank = static_cast<double>(x.sizes.size());
    if (!dim || (*dim != -1 && *dim != rank - 1)) return -1;
    const ValueInfo& result = plan_.values[static_cast<size_t>(node.outputs[0].value)];
    if (result.dtype != ScalarType::FLOAT32 || !same_sizes(result, x)) return -1;
    return node.outputs[0].value;
  }

  // cos or sin: a float32 value defined before `step` (or a constant) whose sizes broadcast to x's.
  bool table(int32_t slot, const ValueInfo& x, int64_t step) const {
    const ValueInfo* t = value_in(slot);
    if (t == nullptr || t->kind != fb::ValueKind::TENSOR || t->dtype != ScalarType::FLOAT32 || t->def_step >= step ||
        t->sizes.size() > x.sizes.size() || t->sizes.empty()) {
      return false;
    }
    const size_t skip = x.sizes.size() - t->sizes.size();
    for (size_t d = 0; d < t->sizes.size(); ++d) {
      const PlannedDim& dim = t->sizes[d];
      if (!(dim.expr.empty() && dim.literal == 1) && !same_dim(dim, x.sizes[skip + d])) return false;
    }
    return same_dim(t->sizes.back(), x.sizes.back());
  }
};

}  // namespace

void fuse_rotary_embeddings(ExecutionPlan& plan, const KernelRegistry& registry) { RotaryFusion(plan, registry).run(); }

}  // namespace nrt::exec
