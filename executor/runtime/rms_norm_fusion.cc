#include "executor/runtime/rms_norm_fusion.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "executor/runtime/rms_norm_chain.h"

namespace nrt::exec {
namespace {

namespace chain = rms_norm_chain;

class RmsNormFusion {
 public:
  RmsNormFusion(ExecutionPlan& plan, const KernelRegistry& registry) : plan_(plan), registry_(registry) {}

  void run() {
    const KernelInfo* fused = registry_.find(chain::kKernelTarget, plan_.device.kind);
    const KernelInfo* absorbed = registry_.find(chain::kAbsorbedTarget, plan_.device.kind);
    const KernelInfo* alias = registry_.find("aten::alias.default", plan_.device.kind);
    if (fused == nullptr || absorbed == nullptr || alias == nullptr || !alias->is_view) return;
    fused_ = *fused;
    absorbed_ = *absorbed;
    alias_ = *alias;
    index_slots();
    for (size_t n = 0; n < plan_.nodes.size(); ++n) fuse_at(n);
  }

 private:
  // Which value each slot holds, which constant, and how many reads (graph outputs counted) it has.
  void index_slots() {
    const auto slots = static_cast<size_t>(plan_.num_slots);
    value_of_slot_.assign(slots, -1);
    constant_of_slot_.assign(slots, -1);
    reads_.assign(slots, 0);
    for (size_t v = 0; v < plan_.values.size(); ++v) {
      const int32_t slot = plan_.values[v].slot;
      if (slot >= 0) value_of_slot_[static_cast<size_t>(slot)] = static_cast<int32_t>(v);
    }
    for (size_t c = 0; c < plan_.constants.size(); ++c) {
      constant_of_slot_[static_cast<size_t>(plan_.constants[c].slot)] = static_cast<int32_t>(c);
    }
    auto count = [&](int32_t slot, int times) {
      if (slot >= 0) reads_[static_cast<size_t>(slot)] += times;
    };
    for (const PlannedNode& node : plan_.nodes) {
      for (int32_t slot : node.arg_slots) count(slot, 1);
      for (const GatherStep& gather : node.gathers) {
        for (const auto& item : gather.items) count(item.slot, 2);  // a list: never the chain's alone
      }
    }
    for (const PlannedGraphOutput& out : plan_.outputs) {
      if (out.value >= 0) count(plan_.values[static_cast<size_t>(out.value)].slot, 2);
    }
  }

  // The slot of the argument called `name`, or -1 where the node lacks it.
  static int32_t argument(const PlannedNode& node, std::string_view name) {
    for (size_t i = 0; i < node.arg_names.size(); ++i) {
      if (node.arg_names[i] == name) return node.arg_slots[i];
    }
    return -1;
  }
  const RuntimeValue* constant(int32_t slot) const {
    if (slot < 0 || constant_of_slot_[static_cast<size_t>(slot)] < 0) return nullptr;
    return &plan_.constants[static_cast<size_t>(constant_of_slot_[static_cast<size_t>(slot)])].value;
  }
  std::optional<double> number(int32_t slot) const {
    const RuntimeValue* c = constant(slot);
    if (c == nullptr) return std::nullopt;
    if (const auto* d = std::get_if<double>(c)) return *d;
    if (const auto* i = std::get_if<int64_t>(c)) return static_cast<double>(*i);
    return std::nullopt;
  }
  const ValueInfo* value_in(int32_t slot) const {
    if (slot < 0 || value_of_slot_[static_cast<size_t>(slot)] < 0) return nullptr;
    return &plan_.values[static_cast<size_t>(value_of_slot_[static_cast<size_t>(slot)])];
  }
  static bool same_dim(const PlannedDim& a, const PlannedDim& b) { return a.literal == b.literal && a.expr == b.expr; }
  static bool same_sizes(const ValueInfo& a, const ValueInfo& b) {
    return a.sizes.size() == b.sizes.size() && std::equal(a.sizes.begin(), a.sizes.end(), b.sizes.begin(), same_dim);
  }

  // Node `n` runs nrt's own kernel for `target` on its arguments alone, and has one float32 tensor
  // result, whose value it returns (else -1).
  int32_t plain_node(size_t n, std::string_view target) const {
    if (n >= plan_.nodes.size()) return -1;
    const PlannedNode& node = plan_.nodes[n];
    if (node.target != target || node.in_place || !node.gathers.empty() || node.outputs.size() != 1 ||
        node.outputs[0].kind != OutputSlotKind::kValue) {
      return -1;
    }
    if (!registry_.origin(target, plan_.device.kind).starts_with("executor/kernels/")) return -1;
    const ValueInfo& result = plan_.values[static_cast<size_t>(node.outputs[0].value)];
    if (result.kind != fb::ValueKind::TENSOR || result.dtype != ScalarType::FLOAT32) return -1;
    return node.outputs[0].value;
  }
  int32_t slot_of(int32_t value) const { return plan_.values[static_cast<size_t>(value)].slot; }
  // `value` is read `times` times in all (by the chain's nodes).
  bool read_only(int32_t value, int times) const { return reads_[static_cast<size_t>(slot_of(value))] == times; }
  // A mul.Tensor at `n` of `a` by anything: the other operand's slot, or -1.
  int32_t mul_partner(size_t n, int32_t a_slot) const {
    if (plain_node(n, "aten::mul.Tensor") < 0) return -1;
    const PlannedNode& node = plan_.nodes[n];
    const int32_t self = argument(node, "self"), other = argument(node, "other");
    if (self < 0 || other < 0 || node.arg_slots.size() != 2) return -1;
    if (self == a_slot && other != a_slot) return other;
    if (other == a_slot && self != a_slot) return self;
    return -1;
  }

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
    const RuntimeValue* dims = constant(argument(plan_.nodes[n + 1], "dim"));
    const RuntimeValue* keepdim = constant(argument(plan_.nodes[n + 1], "keepdim"));
    const auto* dim_list = dims ? std::get_if<std::vector<int64_t>>(dims) : nullptr;
    const auto last = static_cast<int64_t>(x->sizes.size()) - 1;
    if (dim_list == nullptr || dim_list->size() != 1 || ((*dim_list)[0] != -1 && (*dim_list)[0] != last) ||
        keepdim == nullptr || std::get_if<bool>(keepdim) == nullptr || !std::get<bool>(*keepdim)) {
      return;
    }
    const int32_t mean_dtype = argument(plan_.nodes[n + 1], "dtype");
    if (mean_dtype >= 0 && !std::holds_alternative<std::monostate>(*constant_or_none(mean_dtype))) return;
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
    if (y < 0 || mul_partner(n + 4, slot_of(r)) != x_slot || !same_sizes(plan_.values[static_cast<size_t>(y)], *x)) {
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
    const int32_t weight_slot = mul_partner(next, slot_of(current));
    const bool weighted = weight_vector(weight_slot, *x, static_cast<int64_t>(n));
    // The chain's last node, whose result becomes the fused one; y's readers past its mul (the
    // check, the copy or the weight's mul) are the chain's own once y is no longer made.
    const size_t end = weighted ? next : copied ? next - 1 : n + 4;
    if (end > n + 4 && !read_only(y, (checked ? 1 : 0) + 1)) return;
    if (copied && weighted && !read_only(copy, 1)) return;

    PlannedNode& head = plan_.nodes[n];
    head.kernel = fused_;
    head.arg_names = {std::string(chain::kInput), std::string(chain::kEps)};
    head.arg_slots = {x_slot, eps_slot};
    if (weighted) {
      head.arg_names.emplace_back(chain::kWeight);
      head.arg_slots.push_back(weight_slot);
    }
    for (size_t b = n + 1; b < end; ++b) absorb(b);
    make_view(end, slot_of(p), p);
  }

  const RuntimeValue* constant_or_none(int32_t slot) const {
    static const RuntimeValue kNone;
    const RuntimeValue* c = constant(slot);
    return c != nullptr ? c : &kNone;
  }
  // _assert_tensor_metadata(y, ..., dtype=float32, ...): nothing but checks, which the fused
  // float32 result passes.
  bool assert_float32(const PlannedNode& node, int32_t y_slot) const {
    if (node.target != "aten::_assert_tensor_metadata.default" || node.in_place || !node.gathers.empty()) return false;
    if (!registry_.origin(node.target, plan_.device.kind).starts_with("executor/kernels/")) return false;
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

  // Node `b` does nothing: no arguments, its results neither planned nor made.
  void absorb(size_t b) {
    PlannedNode& node = plan_.nodes[b];
    node.kernel = absorbed_;
    node.arg_names.clear();
    node.arg_slots.clear();
    for (PlannedOutput& out : node.outputs) {
      if (out.kind == OutputSlotKind::kValue) plan_.values[static_cast<size_t>(out.value)].planned = false;
      out.kind = OutputSlotKind::kIgnored;
    }
  }

  // Node `e` becomes a view (aten::alias) of `base`, the fused result (base views nothing: a
  // planned result of its own), and so does every view of e's result.
  void make_view(size_t e, int32_t base_slot, int32_t base) {
    PlannedNode& node = plan_.nodes[e];
    node.kernel = alias_;
    node.arg_names = {std::string()};
    node.arg_slots = {base_slot};
    const int32_t view_index = node.outputs[0].value;
    ValueInfo& view = plan_.values[static_cast<size_t>(view_index)];
    view.planned = false;
    for (ValueInfo& other : plan_.values) {
      auto& roots = other.alias_roots;
      const auto at = std::find(roots.begin(), roots.end(), view_index);
      if (at == roots.end()) continue;
      roots.erase(at);
      if (std::find(roots.begin(), roots.end(), base) == roots.end()) roots.push_back(base);
      std::sort(roots.begin(), roots.end());
    }
    view.alias_roots = {base};
  }

  ExecutionPlan& plan_;
  const KernelRegistry& registry_;
  KernelInfo fused_, absorbed_, alias_;
  std::vector<int32_t> value_of_slot_, constant_of_slot_;
  std::vector<int> reads_;
};

}  // namespace

void fuse_rms_norms(ExecutionPlan& plan, const KernelRegistry& registry) { RmsNormFusion(plan, registry).run(); }

}  // namespace nrt::exec
