#include "executor/distributed/sharding_rules.h"

#include <algorithm>
#include <set>

#include "executor/distributed/schema_args.h"

namespace nrt::dist {
namespace {

const std::set<std::string_view, std::less<>> kElementwise = {
    "aten::add.Tensor", "aten::sub.Tensor", "aten::mul.Tensor", "aten::div.Tensor", "aten::add.Scalar",
    "aten::sub.Scalar", "aten::mul.Scalar", "aten::div.Scalar", "aten::relu.default", "aten::gelu.default",
    "aten::silu.default", "aten::sigmoid.default", "aten::tanh.default", "aten::neg.default", "aten::exp.default",
    "aten::log.default", "aten::sqrt.default", "aten::rsqrt.default", "aten::abs.default", "aten::pow.Tensor_Scalar",
    "aten::where.self", "aten::clamp.default", "aten::clamp_min.default", "aten::clamp_max.default",
    "aten::_to_copy.default", "aten::to.dtype", "aten::clone.default", "aten::maximum.default",
    "aten::minimum.default", "aten::eq.Tensor", "aten::ne.Tensor", "aten::gt.Tensor", "aten::lt.Tensor",
    "aten::ge.Tensor", "aten::le.Tensor", "aten::eq.Scalar", "aten::gt.Scalar", "aten::lt.Scalar",
    "aten::logical_not.default", "aten::dropout.default", "aten::alias.default", "aten::contiguous.default",
};

int64_t rank_of(const RuleInput& in) { return static_cast<int64_t>(in.global_sizes.size()); }

int64_t normalize(int64_t dim, int64_t rank) { return dim < 0 ? dim + rank : dim; }

// What an input broadcast into an output of `out_sizes` needs when the output holds `out`.
Placement aligned(const Placement& out, const RuleInput& in, const std::vector<int64_t>& out_sizes) {
  if (!out.is_shard()) return Placement::replicate();
  const int64_t j = out.dim - (static_cast<int64_t>(out_sizes.size()) - rank_of(in));
  if (j < 0 || in.global_sizes[static_cast<size_t>(j)] != out_sizes[static_cast<size_t>(out.dim)]) {
    return Placement::replicate();
  }
  return Placement::shard(static_cast<int32_t>(j));
}

std::optional<RuleDecision> elementwise(const std::vector<RuleInput>& inputs, const std::vector<int64_t>& out_sizes) {
  if (inputs.empty()) return std::nullopt;
  const size_t mesh_ndim = inputs[0].placements.size();
  RuleDecision d{"elementwise", std::vector<Placements>(inputs.size()), Placements(mesh_ndim)};
  for (size_t i = 0; i < mesh_ndim; ++i) {
    Placement out = Placement::replicate();
    for (const RuleInput& in : inputs) {
      const Placement& p = in.placements[i];
      if (!p.is_shard()) continue;
      const int64_t e = p.dim + (static_cast<int64_t>(out_sizes.size()) - rank_of(in));
      if (in.global_sizes[static_cast<size_t>(p.dim)] == out_sizes[static_cast<size_t>(e)]) {
        out = Placement::shard(static_cast<int32_t>(e));
        break;
      }
    }
    // Two inputs sharding different output dims on one mesh dim: the first wins, the other follows.
    d.output[i] = out;
    for (size_t k = 0; k < inputs.size(); ++k) d.inputs[k].push_back(aligned(out, inputs[k], out_sizes));
  }
  return d;
}

// Matrix products: x is [..., K] (contraction on its last dim), w's contraction dim is
// `w_contract`, its output dim `w_out`; the output is [..., N].
std::optional<RuleDecision> matmul_like(const std::string& rule, const RuleInput& x, const RuleInput& w,
                                        const RuleInput* bias, int32_t w_contract, int32_t w_out,
                                        const std::vector<int64_t>& out_sizes) {
  const size_t mesh_ndim = x.placements.size();
  const auto x_last = static_cast<int32_t>(rank_of(x) - 1);
  const auto out_last = static_cast<int32_t>(out_sizes.size() - 1);
  RuleDecision d{rule, {Placements(mesh_ndim), Placements(mesh_ndim)}, Placements(mesh_ndim)};
  if (bias) d.inputs.emplace_back(mesh_ndim);
  for (size_t i = 0; i < mesh_ndim; ++i) {
    const Placement& px = x.placements[i];
    const Placement& pw = w.placements[i];
    Placement rx = Placement::replicate(), rw = Placement::replicate(), out = Placement::replicate();
    if (px.is_shard() && px.dim < x_last) {  // batch / row sharding
      rx = px;
      out = Placement::shard(px.dim + (out_last - x_last));
    } else if (pw.is_shard(w_out) && !px.is_shard(x_last)) {  // column-wise weight
      rw = pw;
      out = Placement::shard(out_last);
    } else if (px.is_shard(x_last) || pw.is_shard(w_contract)) {  // contraction: partial sums
      rx = Placement::shard(x_last);
      rw = Placement::shard(w_contract);
      out = Placement::partial();
    } else if (px.is_partial() && px.reduce_op == ReduceOp::SUM && pw.is_replicate()) {
      rx = px;
      out = px;
    }
    d.inputs[0][i] = rx;
    d.inputs[1][i] = rw;
    d.output[i] = out;
    if (bias) d.inputs[2][i] = out.is_partial() ? Placement::partial() : aligned(out, *bias, out_sizes);
  }
  return d;
}

// Ops whose output dim k is input dim perm[k].
std::optional<RuleDecision> permuted(const std::string& rule, const RuleInput& in, const std::vector<int64_t>& perm) {
  RuleDecision d{rule, {in.placements}, in.placements};
  for (auto& p : d.output) {
    if (!p.is_shard()) continue;
    auto it = std::find(perm.begin(), perm.end(), p.dim);
    if (it == perm.end()) return std::nullopt;
    p.dim = static_cast<int32_t>(it - perm.begin());
  }
  return d;
}

std::optional<RuleDecision> reduction(const std::string& rule, ReduceOp op, const RuleInput& in,
                                      std::vector<int64_t> dims, bool keepdim) {
  const int64_t rank = rank_of(in);
  for (auto& d : dims) d = normalize(d, rank);
  if (dims.empty()) {
    for (int64_t d = 0; d < rank; ++d) dims.push_back(d);
  }
  RuleDecision d{rule, {in.placements}, in.placements};
  for (size_t i = 0; i < d.output.size(); ++i) {
    Placement& p = d.output[i];
    if (p.is_partial()) {
      if (p.reduce_op != op) {  // a partial value reduced by another op: reduce it first
        d.inputs[0][i] = Placement::replicate();
        p = Placement::replicate();
      }
      continue;
    }
    if (!p.is_shard()) continue;
    if (std::find(dims.begin(), dims.end(), p.dim) != dims.end()) {
      p = Placement::partial(op);
    } else if (!keepdim) {
      p.dim -= static_cast<int32_t>(std::count_if(dims.begin(), dims.end(), [&](int64_t r) { return r < p.dim; }));
    }
  }
  return d;
}

// Reshape as groups of input dims and output dims with equal products.
struct DimGroup {
  std::vector<int64_t> in, out;
};

std::optional<std::vector<DimGroup>> reshape_groups(const std::vector<int64_t>& in, const std::vector<int64_t>& out) {
  for (int64_t s : in) {
    if (s <= 0) return std::nullopt;
  }
  for (int64_t s : out) {
    if (s <= 0) return std::nullopt;
  }
  std::vector<DimGroup> groups;
  size_t i = 0, j = 0;
  while (i < in.size() || j < out.size()) {
    DimGroup g;
    int64_t pin = 1, pout = 1;
    if (i < in.size()) {
      g.in.push_back(static_cast<int64_t>(i));
      pin = in[i++];
    }
    if (j < out.size()) {
      g.out.push_back(static_cast<int64_t>(j));
      pout = out[j++];
    }
    while (pin != pout) {
      if (pin < pout) {
        if (i == in.size()) return std::nullopt;
        g.in.push_back(static_cast<int64_t>(i));
        pin *= in[i++];
      } else {
        if (j == out.size()) return std::nullopt;
        g.out.push_back(static_cast<int64_t>(j));
        pout *= out[j++];
      }
    }
    groups.push_back(std::move(g));
  }
  return groups;
}

std::optional<int64_t> first_non_unit(const std::vector<int64_t>& dims, const std::vector<int64_t>& sizes) {
  for (int64_t d : dims) {
    if (sizes[static_cast<size_t>(d)] != 1) return d;
  }
  return std::nullopt;
}

std::optional<RuleDecision> view_like(const RuleInput& in, const std::vector<int64_t>& out_sizes,
                                      const std::vector<int64_t>& mesh_shape) {
  auto groups = reshape_groups(in.global_sizes, out_sizes);
  if (!groups) return std::nullopt;
  RuleDecision d{"view", {in.placements}, in.placements};
  std::vector<bool> seen(in.global_sizes.size(), false);
  for (size_t i = 0; i < in.placements.size(); ++i) {
    const Placement& p = in.placements[i];
    if (!p.is_shard()) continue;
    Placement out = Placement::replicate();
    if (p.kind == Placement::Kind::kShard && !seen[static_cast<size_t>(p.dim)]) {
      for (const DimGroup& g : *groups) {
        if (std::find(g.in.begin(), g.in.end(), p.dim) == g.in.end()) continue;
        const auto first_in = first_non_unit(g.in, in.global_sizes);
        const auto first_out = first_non_unit(g.out, out_sizes);
        if (!first_in || *first_in != p.dim || !first_out) break;
        const int64_t n = mesh_shape[i];
        const int64_t in_size = in.global_sizes[static_cast<size_t>(p.dim)];
        const int64_t out_size = out_sizes[static_cast<size_t>(*first_out)];
        if (in_size == out_size || (in_size % n == 0 && out_size % n == 0)) {
          out = Placement::shard(static_cast<int32_t>(*first_out));
        }
        break;
      }
    }
    seen[static_cast<size_t>(p.dim)] = true;
    if (out.is_replicate()) d.inputs[0][i] = Placement::replicate();
    d.output[i] = out;
  }
  return d;
}

std::optional<RuleDecision> attention(const std::vector<RuleInput>& inputs, const std::vector<int64_t>& out_sizes) {
  if (inputs.size() < 3 || rank_of(inputs[0]) != 4) return std::nullopt;
  const size_t mesh_ndim = inputs[0].placements.size();
  RuleDecision d{"attention", std::vector<Placements>(inputs.size()), Placements(mesh_ndim)};
  for (size_t i = 0; i < mesh_ndim; ++i) {
    Placement out = Placement::replicate();
    for (size_t k = 0; k < 3; ++k) {
      const Placement& p = inputs[k].placements[i];
      if (p.is_shard(0) || p.is_shard(1)) {
        out = p;
        break;
      }
    }
    if (out.kind == Placement::Kind::kStridedShard) out = Placement::replicate();
    d.output[i] = out;
    for (size_t k = 0; k < inputs.size(); ++k) {
      d.inputs[k].push_back(k < 3 ? out : aligned(out, inputs[k], out_sizes));
    }
  }
  return d;
}

}  // namespace

bool is_view_like(std::string_view target) {
  return target == "aten::view.default" || target == "aten::reshape.default" || target == "aten::_unsafe_view.default";
}

std::optional<RuleDecision> propagate(std::string_view target, const fb::NodeT& node,
                                      const std::vector<RuleInput>& inputs,
                                      const std::vector<int64_t>& output_sizes,
                                      const std::vector<int64_t>& mesh_shape) {
  if (inputs.empty()) return std::nullopt;
  if (is_view_like(target) && inputs.size() == 1) return view_like(inputs[0], output_sizes, mesh_shape);
  if (target == "aten::scaled_dot_product_attention.default") return attention(inputs, output_sizes);
  if (kElementwise.contains(target)) return elementwise(inputs, output_sizes);
  if (target == "aten::linear.default" && (inputs.size() == 2 || inputs.size() == 3)) {
    return matmul_like("linear", inputs[0], inputs[1], inputs.size() == 3 ? &inputs[2] : nullptr, 1, 0, output_sizes);
  }
  if (target == "aten::mm.default" && inputs.size() == 2) {
    return matmul_like("mm", inputs[0], inputs[1], nullptr, 0, 1, output_sizes);
  }
  if (target == "aten::addmm.default" && inputs.size() == 3) {
    auto d = matmul_like("addmm", inputs[1], inputs[2], &inputs[0], 0, 1, output_sizes);
    // addmm's bias comes first.
    std::rotate(d->inputs.rbegin(), d->inputs.rbegin() + 1, d->inputs.rend());
    return d;
  }
  const int64_t rank = rank_of(inputs[0]);
  if (target == "aten::t.default" && rank == 2) return permuted("transpose", inputs[0], {1, 0});
  if (target == "aten::transpose.int" || target == "aten::permute.default") {
    std::vector<int64_t> perm(static_cast<size_t>(rank));
    for (int64_t d = 0; d < rank; ++d) perm[static_cast<size_t>(d)] = d;
    if (target == "aten::transpose.int") {
      auto a = int_argument(node, "dim0", 1), b = int_argument(node, "dim1", 2);
      if (!a || !b) return std::nullopt;
      std::swap(perm[static_cast<size_t>(normalize(*a, rank))], perm[static_cast<size_t>(normalize(*b, rank))]);
    } else {
      auto dims = int_list_argument(node, "dims", 1);
      if (!dims || static_cast<int64_t>(dims->size()) != rank) return std::nullopt;
      for (int64_t d = 0; d < rank; ++d) perm[static_cast<size_t>(d)] = normalize((*dims)[static_cast<size_t>(d)], rank);
    }
    return permuted(target == "aten::transpose.int" ? "transpose" : "permute", inputs[0], perm);
  }
  if (target == "aten::_softmax.default" || target == "aten::softmax.int" || target == "aten::_log_softmax.default" ||
      target == "aten::log_softmax.int") {
    auto dim = int_argument(node, "dim", 1);
    if (!dim) return std::nullopt;
    RuleDecision d{"softmax", {inputs[0].placements}, inputs[0].placements};
    for (size_t i = 0; i < d.output.size(); ++i) {
      Placement& p = d.output[i];
      if (p.is_partial() || p.is_shard(static_cast<int32_t>(normalize(*dim, rank)))) {
        p = Placement::replicate();
        d.inputs[0][i] = p;
      }
    }
    return d;
  }
  if (target == "aten::sum.dim_IntList" || target == "aten::amax.default" || target == "aten::amin.default") {
    auto dims = int_list_argument(node, "dim", 1);
    const bool keepdim = bool_argument(node, "keepdim", 2).value_or(false);
    const ReduceOp op = target == "aten::sum.dim_IntList" ? ReduceOp::SUM
                        : target == "aten::amax.default"   ? ReduceOp::MAXIMUM
                                                            : ReduceOp::MINIMUM;
    return reduction(target == "aten::sum.dim_IntList" ? "sum" : "amax/amin", op, inputs[0], dims.value_or(std::vector<int64_t>{}),
                     keepdim);
  }
  return std::nullopt;
}

}  // namespace nrt::dist
