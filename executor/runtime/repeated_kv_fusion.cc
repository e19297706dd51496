#include "executor/runtime/repeated_kv_fusion.h"

#include <algorithm>
#include <array>
#include <optional>
#include <string_view>

#include "executor/runtime/chain_fusion.h"

namespace nrt::exec {
namespace {

constexpr std::string_view kAttention = "aten::scaled_dot_product_attention.default";

// One repeat_kv chain: x's slot, its nodes (unsqueeze, expand, reshape) and what it repeats.
struct Repeat {
  int32_t source = -1;
  std::array<size_t, 3> nodes{};
  int64_t heads = 0, group = 0;
};

class RepeatedKeyValueFusion : public ChainFusion {
 public:
  RepeatedKeyValueFusion(ExecutionPlan& plan, const KernelRegistry& registry) : ChainFusion(plan, registry, kAttention) {}

  void run() {
    if (!ready()) return;
    for (size_t n = 0; n < plan_.nodes.size(); ++n) fuse_at(n);
  }

 private:
  void fuse_at(size_t n) {
    const int32_t result = plain_node(n, kAttention);
    if (result < 0) return;
    PlannedNode& node = plan_.nodes[n];
    const int32_t gqa = argument(node, "enable_gqa");
    if (gqa >= 0) {
      const RuntimeValue* given = constant(gqa);
      if (given == nullptr || std::get_if<bool>(given) == nullptr || std::get<bool>(*given)) return;
    }
    const std::optional<Repeat> key = repeated(argument(node, "key")), value = repeated(argument(node, "value"));
    const ValueInfo* query = value_in(argument(node, "query"));
    if (!key || !value || key->group != value->group || key->heads != value->heads || query == nullptr ||
        query->kind != fb::ValueKind::TENSOR || query->sizes.size() < 3) {
      return;
    }
    const PlannedDim& query_heads = query->sizes[query->sizes.size() - 3];
    if (!query_heads.expr.empty() || query_heads.literal != key->heads * key->group) return;
    // x is read at the attention now: no write in place may come between.
    const size_t first = std::min(*std::min_element(key->nodes.begin(), key->nodes.end()),
                                  *std::min_element(value->nodes.begin(), value->nodes.end()));
    if (writes_in_place_between(plan_, first, n)) return;
    for (size_t i = 0; i < node.arg_names.size(); ++i) {
      if (node.arg_names[i] == "key") node.arg_slots[i] = key->source;
      if (node.arg_names[i] == "value") node.arg_slots[i] = value->source;
    }
    const int32_t enabled = constant_slot(RuntimeValue(true));
    if (gqa >= 0) {
      for (size_t i = 0; i < node.arg_names.size(); ++i) {
        if (node.arg_names[i] == "enable_gqa") node.arg_slots[i] = enabled;
      }
    } else {
      node.arg_names.emplace_back("enable_gqa");
      node.arg_slots.push_back(enabled);
    }
    for (const Repeat* chain : {&*key, &*value}) {
      for (size_t m : chain->nodes) absorb(m);
      read_at(value_of(chain->source), n);
    }
  }

  // The repeat_kv chain whose reshape fills `slot`, or none.
  std::optional<Repeat> repeated(int32_t slot) const {
    Repeat chain;
    const int32_t r = producer(slot, "aten::reshape.default", chain.nodes[2]);
    if (r < 0) return std::nullopt;
    const int32_t e = producer(argument(plan_.nodes[chain.nodes[2]], "self"), "aten::expand.default", chain.nodes[1]);
    if (e < 0) return std::nullopt;
    const int32_t u = producer(argument(plan_.nodes[chain.nodes[1]], "self"), "aten::unsqueeze.default", chain.nodes[0]);
    if (u < 0) return std::nullopt;
    chain.source = argument(plan_.nodes[chain.nodes[0]], "self");
    const ValueInfo* x = value_in(chain.source);
    if (x == nullptr || x->kind != fb::ValueKind::TENSOR || x->dtype != ScalarType::FLOAT32 || x->sizes.size() < 3) {
      return std::nullopt;
    }
    // u = x with a dim of 1 before its last two, e = u with that dim `group`, r = e with it merged
    // into the heads' dim.
    const size_t rank = x->sizes.size(), inserted = rank - 2;
    const std::optional<double> dim = number(argument(plan_.nodes[chain.nodes[0]], "dim"));
    if (!dim || (*dim != static_cast<double>(inserted) && *dim != -3.0)) return std::nullopt;
    const ValueInfo& unsqueezed = plan_.values[static_cast<size_t>(u)];
    const ValueInfo& expanded = plan_.values[static_cast<size_t>(e)];
    const ValueInfo& merged = plan_.values[static_cast<size_t>(r)];
    if (unsqueezed.sizes.size() != rank + 1 || expanded.sizes.size() != rank + 1 || merged.sizes.size() != rank) {
      return std::nullopt;
    }
    const PlannedDim& heads = x->sizes[inserted - 1];
    const PlannedDim& group = expanded.sizes[inserted];
    const PlannedDim& repeated_heads = merged.sizes[inserted - 1];
    if (!heads.expr.empty() || !group.expr.empty() || !repeated_heads.expr.empty() || unsqueezed.sizes[inserted].literal != 1 ||
        !unsqueezed.sizes[inserted].expr.empty() || group.literal < 1 || repeated_heads.literal != heads.literal * group.literal) {
      return std::nullopt;
    }
    for (size_t d = 0; d < rank; ++d) {
      const size_t grown = d < inserted ? d : d + 1;
      if (!same_dim(unsqueezed.sizes[grown], x->sizes[d]) || !same_dim(expanded.sizes[grown], x->sizes[d])) return std::nullopt;
      if (d != inserted - 1 && !same_dim(merged.sizes[d], x->sizes[d])) return std::nullopt;
    }
    chain.heads = heads.literal;
    chain.group = group.literal;
    return chain;
  }

  // The value in `slot` where a plain `target` node defines it and nothing else reads it (the node
  // in `node`), else -1.
  int32_t producer(int32_t slot, std::string_view target, size_t& node) const {
    const ValueInfo* made = value_in(slot);
    if (made == nullptr || made->def_step < 0) return -1;
    node = static_cast<size_t>(made->def_step);
    const int32_t value = plain_node(node, target);
    return value >= 0 && value == value_of(slot) && read_only(value, 1) ? value : -1;
  }
};

}  // namespace

void fuse_repeated_key_values(ExecutionPlan& plan, const KernelRegistry& registry) {
  RepeatedKeyValueFusion(plan, registry).run();
}

}  // namespace nrt::exec
