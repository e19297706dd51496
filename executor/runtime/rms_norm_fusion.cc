#include "executor/runtime/rms_norm_fusion.h"

#include <string>
#include <utility>
#include <vector>

#include "executor/runtime/chain_fusion.h"
#include "executor/runtime/fused_chains.h"

namespace nrt::exec {
namespace {

class RmsNormFusion : public ChainFusion {
 public:
  RmsNormFusion(ExecutionPlan& plan, const KernelRegistry& registry)
      : ChainFusion(plan, registry, fused_chains::kRmsNormTarget) {}

  void run() {
    if (!ready()) return;
    for (size_t n = 0; n < plan_.nodes.size(); ++n) fuse_at(n);
  }

 private:
  void fuse_at(size_t n) {
    // p = x.pow(2)
    const int32_t p = plain_node(n, "aten::pow.Tensor_Scalar");
    if (p < 0 || !read_only(p, 1)) return;
    const int32_t x_slot = argument(plan_.nodes[n], "self");
    const ValueInfo* x = value_in(x_slot);
    if (x == nullptr || x->kind != fb::ValueKind::TENSOR || x->dtype != ScalarType::FLOAT32 || x->sizes.empty() ||
        number(argument(plan_.nodes[n], "exponent")) != 2.0) {
      return;
    }
    // m = p.mean([-1], keepdim=True)
    const int32_t m = plain_node(n + 1, "aten::mean.dim");
    if (m < 0 || !read_only(m, 1) || argument(plan_.nodes[n + 1], "self") != slot_of(p)) return;
    const std::vector<int64_t>* dim_list = int_list(argument(plan_.nodes[n + 1], "dim"));
    const RuntimeValue* keepdim = constant(argument(plan_.nodes[n + 1], "keepdim"));
    const auto last = static_cast<int64_t>(x->sizes.size()) - 1;
    if (dim_list == nullptr || dim_list->size() != 1 || ((*dim_list)[0] != -1 && (*dim_list)[0] != last) ||
        keepdim == nullptr || std::get_if<bool>(keepdim) == nullptr || !std::get<bool>(*keepdim)) {
      return;
    }
    const int32_t mean_dtype = argument(plan_.nodes[n + 1], "dtype");
    if (mean_dtype >= 0 && (constant(mean_dtype) == nullptr || !std::holds_alternative<std::monostate>(*constant(mean_dtype)))) {
      return;
    }
    // a = m + eps
    const int32_t a = plain_node(n + 2, "aten::add.Tensor");
    if (a < 0 || !read_only(a, 1) || argument(plan_.nodes[n + 2], "self") != slot_of(m)) return;
    const int32_t eps_slot = argument(plan_.nodes[n + 2], "other");
    if (!number(eps_slot)) return;
    const int32_t alpha = argument(plan_.nodes[n + 2], "alpha");
    if (alpha >= 0 && number(alpha) != 1.0) return;
    // r = a.rsqrt()
    const int32_t r = plain_node(n + 3, "aten::rsqrt.default");
    if (r < 0 || !read_only(r, 1) || argument(plan_.nodes[n + 3], "self") != slot_of(a)) return;
    // y = x * r
    const int32_t y = plain_node(n + 4, "aten::mul.Tensor");
    if (y < 0 || partner(n + 4, "aten::mul.Tensor", slot_of(r)) != x_slot || !same_sizes(plan_.values[static_cast<size_t>(y)], *x)) {
      return;
    }
    // [_assert_tensor_metadata(y, dtype=float32)], [y2 = y.to(float32)]: they check or copy y as it is.
    size_t next = n + 5;
    const bool checked = next < plan_.nodes.size() && assert_float32(plan_.nodes[next], slot_of(y));
    if (checked) ++next;
    const int32_t copy = plain_node(next, "aten::to.dtype");
    const bool copied = copy >= 0 && argument(plan_.nodes[next], "self") == slot_of(y) && to_float32(plan_.nodes[next]);
    if (copied) ++next;
    // out = weight * y (or y2)
    const int32_t current = copied ? copy : y;
    const int32_t weight_slot = partner(next, "aten::mul.Tensor", slot_of(current));
    const bool weighted = weight_vector(weight_slot, *x, static_cast<int64_t>(n));
    // The chain's last node, whose result becomes the fused one; y's readers past its mul (the
    // check, the copy or the weight's mul) are the chain's own once y is no longer made.
    const size_t end = weighted ? next : copied ? next - 1 : n + 4;
    if (end > n + 4 && !read_only(y, (checked ? 1 : 0) + 1)) return;
    if (copied && weighted && !read_only(copy, 1)) return;

    std::vector<std::pair<std::string_view, int32_t>> arguments{{fused_chains::kRmsNormInput, x_slot},
                                                                 {fused_chains::kRmsNormEps, eps_slot}};
    if (weighted) arguments.emplace_back(fused_chains::kRmsNormWeight, weight_slot);
    fuse(n, end, arguments);
  }

  // _assert_tensor_metadata(y, ..., dtype=float32, ...): nothing but checks, which the fused
  // float32 result passes.
  bool assert_float32(const PlannedNode& node, int32_t y_slot) const {
    if (node.target != "aten::_assert_tensor_metadata.default" || node.in_place || !node.gathers.empty()) return false;
    if (!builtin(node.target)) return false;
    if (argument(node, "a") != y_slot) return false;
    for (size_t i = 0; i < node.arg_names.size(); ++i) {
      if (node.arg_names[i] == "a") continue;
      const RuntimeValue* c = constant(node.arg_slots[i]);
      if (c == nullptr) return false;
      if (node.arg_names[i] == "dtype" && !std::holds_alternative<std::monostate>(*c)) {
        const auto* dtype = std::get_if<ScalarType>(c);
        if (dtype == nullptr || *dtype != ScalarType::FLOAT32) return false;
      }
      if (node.arg_names[i] == "size" || node.arg_names[i] == "stride") return false;  // checks we do not repeat
    }
    return true;
  }
  // to(float32) with no other effect asked (no copy=True, no memory format).
  bool to_float32(const PlannedNode& node) const {
    for (size_t i = 0; i < node.arg_names.size(); ++i) {
      const std::string& name = node.arg_names[i];
      if (name == "self") continue;
      const RuntimeValue* c = constant(node.arg_slots[i]);
      if (c == nullptr) return false;
      if (name == "dtype") {
        const auto* dtype = std::get_if<ScalarType>(c);
        if (dtype == nullptr || *dtype != ScalarType::FLOAT32) return false;
      } else if (name == "copy" || name == "non_blocking") {
        const auto* flag = std::get_if<bool>(c);
        if (flag == nullptr || (name == "copy" && *flag)) return false;
      } else if (!std::holds_alternative<std::monostate>(*c)) {
        return false;  // memory_format
      }
    }
    return true;
  }
  // A float32 weight [rows' length], a constant or a value defined before step `step`.
  bool weight_vector(int32_t slot, const ValueInfo& x, int64_t step) const {
    if (slot < 0) return false;
    const ValueInfo* weight = value_in(slot);
    if (weight == nullptr) {
      const RuntimeValue* c = constant(slot);
      const auto* t = c ? std::get_if<Tensor>(c) : nullptr;
      const PlannedDim& row = x.sizes.back();
      return t != nullptr && t->dtype() == ScalarType::FLOAT32 && t->dim() == 1 && row.expr.empty() &&
             t->sizes()[0] == row.literal;
    }
    return weight->kind == fb::ValueKind::TENSOR && weight->dtype == ScalarType::FLOAT32 && weight->sizes.size() == 1 &&
           same_dim(weight->sizes[0], x.sizes.back()) && weight->def_step < step;
  }
};

}  // namespace

void fuse_rms_norms(ExecutionPlan& plan, const KernelRegistry& registry) { RmsNormFusion(plan, registry).run(); }

}  // namespace nrt::exec
