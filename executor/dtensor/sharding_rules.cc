#include "executor/dtensor/sharding_rules.h"

#include <algorithm>
#include <functional>
#include <unordered_map>

#include "executor/dtensor/dtensor_ops.h"
#include "executor/dtensor/schema_args.h"

namespace nrt::dist {
namespace {

int64_t rank_of(const RuleInput& in) { return static_cast<int64_t>(in.global_sizes.size()); }

int64_t normalize(int64_t dim, int64_t rank) { return dim < 0 ? dim + rank : dim; }

// What an input broadcast into an output of `out_sizes` needs when the output holds `out`.
Placement aligned(const Placement& out, const RuleInput& in, const std::vector<int64_t>& out_sizes) {
  if (!out.is_shard() || out.dim < 0 || out.dim >= static_cast<int64_t>(out_sizes.size())) return Placement::replicate();
  const int64_t j = out.dim - (static_cast<int64_t>(out_sizes.size()) - rank_of(in));
  if (j < 0 || j >= rank_of(in) || in.global_sizes[static_cast<size_t>(j)] != out_sizes[static_cast<size_t>(out.dim)]) {
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
      if (e < 0 || e >= static_cast<int64_t>(out_sizes.size())) continue;  // shapes that do not broadcast
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
  // Shapes a product cannot have (the file's metadata is not checked against the op): no rule.
  if (rank_of(x) < 1 || rank_of(w) != 2 || out_sizes.size() != x.global_sizes.size()) return std::nullopt;
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
        if (__builtin_mul_overflow(pin, in[i++], &pin)) return std::nullopt;
      } else {
        if (j == out.size()) return std::nullopt;
        g.out.push_back(static_cast<int64_t>(j));
        if (__builtin_mul_overflow(pout, out[j++], &pout)) return std::nullopt;
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

// Ops whose output dim map(d) is input dim d; nullopt: the dim is consumed or changed, so its
// shard is gathered first. Partial inputs are reduced first; further inputs (norm weights) whole.
std::optional<RuleDecision> dim_mapped(const std::string& rule, const RuleInput& in,
                                       const std::function<std::optional<int64_t>(int64_t)>& map, size_t extra_inputs) {
  RuleDecision d{rule, {in.placements}, in.placements};
  for (size_t i = 0; i < d.output.size(); ++i) {
    Placement& p = d.output[i];
    std::optional<int64_t> to;
    if (p.is_shard()) to = map(p.dim);
    if (p.is_partial() || (p.is_shard() && !to)) {
      p = Placement::replicate();
      d.inputs[0][i] = p;
    } else if (p.is_shard()) {
      p.dim = static_cast<int32_t>(*to);
    }
  }
  for (size_t k = 0; k < extra_inputs; ++k) d.inputs.emplace_back(in.placements.size(), Placement::replicate());
  return d;
}

// Every dim but `blocked` keeps its shard.
std::function<std::optional<int64_t>(int64_t)> all_but(int64_t blocked) {
  return [blocked](int64_t d) { return d == blocked ? std::nullopt : std::optional<int64_t>(d); };
}

// Batched matrix products of equal ranks: a [..., M, K] @ b [..., K, N] -> [..., M, N]. The batch
// dims shard both alike; M (a's rows) and N (b's columns) shard the output; K gives Partial(sum).
std::optional<RuleDecision> batched_matmul(const std::string& rule, const RuleInput& a, const RuleInput& b) {
  const int64_t r = rank_of(a);
  if (r < 3 || rank_of(b) != r) return std::nullopt;
  for (int64_t d = 0; d < r - 2; ++d) {
    if (a.global_sizes[static_cast<size_t>(d)] != b.global_sizes[static_cast<size_t>(d)]) return std::nullopt;
  }
  const auto m = static_cast<int32_t>(r - 2), n = static_cast<int32_t>(r - 1);
  const size_t mesh_ndim = a.placements.size();
  RuleDecision d{rule, {Placements(mesh_ndim), Placements(mesh_ndim)}, Placements(mesh_ndim)};
  for (size_t i = 0; i < mesh_ndim; ++i) {
    const Placement& pa = a.placements[i];
    const Placement& pb = b.placements[i];
    Placement ra, rb, out;
    if (pa.kind == Placement::Kind::kShard && pa.dim < m) {
      ra = rb = out = pa;
    } else if (pb.kind == Placement::Kind::kShard && pb.dim < m) {
      ra = rb = out = pb;
    } else if (pa.is_shard(m)) {
      ra = out = pa;
    } else if (pb.is_shard(n)) {
      rb = out = pb;
    } else if (pa.is_shard(n) || pb.is_shard(m)) {
      ra = Placement::shard(n);
      rb = Placement::shard(m);
      out = Placement::partial();
    }
    d.inputs[0][i] = ra;
    d.inputs[1][i] = rb;
    d.output[i] = out;
  }
  return d;
}

// embedding(weight [V, D], indices): indices sharded shard the output alike; a weight sharded on
// D shards the output's last dim; a vocabulary-sharded weight (Shard(0)) gives Partial(sum): each
// rank looks up the indices its rows hold and zeros the others (the caller runs
// nrt::masked_embedding for that).
std::optional<RuleDecision> embedding(const RuleInput& weight, const RuleInput& indices) {
  if (rank_of(weight) != 2) return std::nullopt;
  const size_t mesh_ndim = weight.placements.size();
  RuleDecision d{"embedding", {Placements(mesh_ndim), Placements(mesh_ndim)}, Placements(mesh_ndim)};
  for (size_t i = 0; i < mesh_ndim; ++i) {
    const Placement& pw = weight.placements[i];
    const Placement& pi = indices.placements[i];
    Placement rw, ri, out;
    if (pi.kind == Placement::Kind::kShard) {
      ri = out = pi;
    } else if (pw.kind == Placement::Kind::kShard && pw.dim == 1) {
      rw = pw;
      out = Placement::shard(static_cast<int32_t>(rank_of(indices)));
    } else if (pw.kind == Placement::Kind::kShard && pw.dim == 0) {
      rw = pw;
      out = Placement::partial();
      d.rule = kVocabularyShardedEmbedding;
    }
    d.inputs[0][i] = rw;
    d.inputs[1][i] = ri;
    d.output[i] = out;
  }
  return d;
}

// The rules, one function per target or family of targets alike; each checks the argument counts
// it knows.

std::optional<RuleDecision> elementwise_rule(const RuleQuery& q) { return elementwise(q.inputs, q.output_sizes); }

// torch's key split and fold-in: a key is two words read together, so keys are derived whole (a
// few words per rank, no traffic) and a sharded key is gathered first.
std::optional<RuleDecision> key_derivation_rule(const RuleQuery& q) {
  Placements whole(q.mesh_shape.size(), Placement::replicate());
  return RuleDecision{"key derivation (whole)", std::vector<Placements>(q.inputs.size(), whole), whole};
}

std::optional<RuleDecision> view_rule(const RuleQuery& q) {
  if (q.inputs.size() != 1) return std::nullopt;
  return view_like(q.inputs[0], q.output_sizes, q.mesh_shape);
}

// Reshapes by another name: flatten merges a run of dims, unflatten splits one.
std::optional<RuleDecision> renamed_view(const RuleQuery& q, const char* rule) {
  auto d = view_rule(q);
  if (d) d->rule = rule;
  return d;
}
std::optional<RuleDecision> flatten_rule(const RuleQuery& q) { return renamed_view(q, "flatten"); }
std::optional<RuleDecision> unflatten_rule(const RuleQuery& q) { return renamed_view(q, "unflatten"); }

std::optional<RuleDecision> attention_rule(const RuleQuery& q) { return attention(q.inputs, q.output_sizes); }

std::optional<RuleDecision> linear_rule(const RuleQuery& q) {
  if (q.inputs.size() != 2 && q.inputs.size() != 3) return std::nullopt;
  return matmul_like("linear", q.inputs[0], q.inputs[1], q.inputs.size() == 3 ? &q.inputs[2] : nullptr, 1, 0,
                     q.output_sizes);
}

std::optional<RuleDecision> mm_rule(const RuleQuery& q) {
  if (q.inputs.size() != 2) return std::nullopt;
  return matmul_like("mm", q.inputs[0], q.inputs[1], nullptr, 0, 1, q.output_sizes);
}

std::optional<RuleDecision> addmm_rule(const RuleQuery& q) {
  if (q.inputs.size() != 3) return std::nullopt;
  auto d = matmul_like("addmm", q.inputs[1], q.inputs[2], &q.inputs[0], 0, 1, q.output_sizes);
  if (!d) return d;
  // addmm's bias comes first.
  std::rotate(d->inputs.rbegin(), d->inputs.rbegin() + 1, d->inputs.rend());
  return d;
}

std::vector<int64_t> identity_perm(int64_t rank) {
  std::vector<int64_t> perm(static_cast<size_t>(rank));
  for (int64_t d = 0; d < rank; ++d) perm[static_cast<size_t>(d)] = d;
  return perm;
}

std::optional<RuleDecision> t_rule(const RuleQuery& q) {
  if (rank_of(q.inputs[0]) != 2) return std::nullopt;
  return permuted("transpose", q.inputs[0], {1, 0});
}

std::optional<RuleDecision> transpose_rule(const RuleQuery& q) {
  const int64_t rank = rank_of(q.inputs[0]);
  std::vector<int64_t> perm = identity_perm(rank);
  auto a = int_argument(q.node, "dim0", 1), b = int_argument(q.node, "dim1", 2);
  if (!a || !b || normalize(*a, rank) < 0 || normalize(*a, rank) >= rank || normalize(*b, rank) < 0 ||
      normalize(*b, rank) >= rank) {
    return std::nullopt;
  }
  std::swap(perm[static_cast<size_t>(normalize(*a, rank))], perm[static_cast<size_t>(normalize(*b, rank))]);
  return permuted("transpose", q.inputs[0], perm);
}

std::optional<RuleDecision> permute_rule(const RuleQuery& q) {
  const int64_t rank = rank_of(q.inputs[0]);
  std::vector<int64_t> perm = identity_perm(rank);
  auto dims = int_list_argument(q.node, "dims", 1);
  if (!dims || static_cast<int64_t>(dims->size()) != rank) return std::nullopt;
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t from = normalize((*dims)[static_cast<size_t>(d)], rank);
    if (from < 0 || from >= rank) return std::nullopt;
    perm[static_cast<size_t>(d)] = from;
  }
  return permuted("permute", q.inputs[0], perm);
}

std::optional<RuleDecision> softmax_rule(const RuleQuery& q) {
  auto dim = int_argument(q.node, "dim", 1);
  if (!dim) return std::nullopt;
  const RuleInput& in = q.inputs[0];
  RuleDecision d{"softmax", {in.placements}, in.placements};
  for (size_t i = 0; i < d.output.size(); ++i) {
    Placement& p = d.output[i];
    if (p.is_partial() || p.is_shard(static_cast<int32_t>(normalize(*dim, rank_of(in))))) {
      p = Placement::replicate();
      d.inputs[0][i] = p;
    }
  }
  return d;
}

std::optional<RuleDecision> normalized(const RuleQuery& q, const char* rule) {
  if (q.inputs.size() > 3) return std::nullopt;
  const int64_t rank = rank_of(q.inputs[0]);
  auto shape = int_list_argument(q.node, "normalized_shape", 1);
  if (!shape || static_cast<int64_t>(shape->size()) > rank) return std::nullopt;
  const int64_t first = rank - static_cast<int64_t>(shape->size());
  return dim_mapped(rule, q.inputs[0], [first](int64_t d) { return d < first ? std::optional<int64_t>(d) : std::nullopt; },
                    q.inputs.size() - 1);
}
std::optional<RuleDecision> layer_norm_rule(const RuleQuery& q) { return normalized(q, "layer_norm"); }
std::optional<RuleDecision> rms_norm_rule(const RuleQuery& q) { return normalized(q, "rms_norm"); }

std::optional<RuleDecision> slice_rule(const RuleQuery& q) {
  if (q.inputs.size() != 1) return std::nullopt;
  auto dim = int_argument(q.node, "dim", 1);
  return dim_mapped("slice", q.inputs[0], all_but(normalize(dim.value_or(0), rank_of(q.inputs[0]))), 0);
}

std::optional<RuleDecision> select_rule(const RuleQuery& q) {
  if (q.inputs.size() != 1) return std::nullopt;
  auto dim = int_argument(q.node, "dim", 1);
  if (!dim) return std::nullopt;
  const int64_t selected = normalize(*dim, rank_of(q.inputs[0]));
  return dim_mapped("select", q.inputs[0], [selected](int64_t d) {
    return d == selected ? std::nullopt : std::optional<int64_t>(d < selected ? d : d - 1);
  }, 0);
}

std::optional<RuleDecision> unsqueeze_rule(const RuleQuery& q) {
  if (q.inputs.size() != 1) return std::nullopt;
  auto dim = int_argument(q.node, "dim", 1);
  if (!dim) return std::nullopt;
  const int64_t at = normalize(*dim, rank_of(q.inputs[0]) + 1);
  return dim_mapped("unsqueeze", q.inputs[0], [at](int64_t d) { return std::optional<int64_t>(d < at ? d : d + 1); }, 0);
}

// split, split_with_sizes, chunk: every output keeps the shards off the split dim.
std::optional<RuleDecision> split_rule(const RuleQuery& q) {
  if (q.inputs.size() != 1) return std::nullopt;
  auto dim = int_argument(q.node, "dim", 2);
  auto d = dim_mapped("split", q.inputs[0], all_but(normalize(dim.value_or(0), rank_of(q.inputs[0]))), 0);
  d->every_output = true;
  return d;
}

// The list's tensors, each taking the first one's placements; the cat dim gathered.
std::optional<RuleDecision> cat_rule(const RuleQuery& q) {
  auto dim = int_argument(q.node, "dim", 1);
  auto d = dim_mapped("cat", q.inputs[0], all_but(normalize(dim.value_or(0), rank_of(q.inputs[0]))), 0);
  for (size_t k = 1; k < q.inputs.size(); ++k) d->inputs.push_back(d->inputs[0]);
  return d;
}

// Input dims align to the output's trailing dims; a dim broadcast from 1 has nothing sharded.
std::optional<RuleDecision> expand_rule(const RuleQuery& q) {
  if (q.inputs.size() != 1) return std::nullopt;
  const RuleInput& in = q.inputs[0];
  const std::vector<int64_t>& out_sizes = q.output_sizes;
  const int64_t shift = static_cast<int64_t>(out_sizes.size()) - rank_of(in);
  if (shift < 0) return std::nullopt;
  return dim_mapped("expand", in, [&](int64_t d) {
    return in.global_sizes[static_cast<size_t>(d)] == out_sizes[static_cast<size_t>(d + shift)]
               ? std::optional<int64_t>(d + shift)
               : std::nullopt;
  }, 0);
}

std::optional<RuleDecision> bmm_rule(const RuleQuery& q) {
  if (q.inputs.size() != 2) return std::nullopt;
  return batched_matmul("bmm", q.inputs[0], q.inputs[1]);
}

std::optional<RuleDecision> matmul_rule(const RuleQuery& q) {
  if (q.inputs.size() != 2) return std::nullopt;
  if (rank_of(q.inputs[1]) == 2 && rank_of(q.inputs[0]) >= 2) {
    return matmul_like("matmul", q.inputs[0], q.inputs[1], nullptr, 0, 1, q.output_sizes);
  }
  return batched_matmul("matmul", q.inputs[0], q.inputs[1]);
}

std::optional<RuleDecision> embedding_rule(const RuleQuery& q) {
  if (q.inputs.size() != 2) return std::nullopt;
  return embedding(q.inputs[0], q.inputs[1]);
}

// sum, mean, prod: a reduced sharded dim gives Partial(op).
std::optional<RuleDecision> summed(const RuleQuery& q, const char* rule, ReduceOp op, std::vector<int64_t> dims,
                                   bool keepdim) {
  const RuleInput& in = q.inputs[0];
  auto d = reduction(rule, op, in, std::move(dims), keepdim);
  // The mean of shard means is the mean only when every shard holds as many elements.
  for (size_t i = 0; op == ReduceOp::AVG && i < d->output.size(); ++i) {
    const Placement& p = in.placements[i];
    if (d->output[i].is_partial() && p.is_shard() && in.global_sizes[static_cast<size_t>(p.dim)] % q.mesh_shape[i] != 0) {
      d->inputs[0][i] = d->output[i] = Placement::replicate();
    }
  }
  return d;
}

std::vector<int64_t> dims_argument(const RuleQuery& q) {
  return int_list_argument(q.node, "dim", 1).value_or(std::vector<int64_t>{});
}
bool keepdim_argument(const RuleQuery& q) { return bool_argument(q.node, "keepdim", 2).value_or(false); }

std::optional<RuleDecision> mean_dim_rule(const RuleQuery& q) {
  return summed(q, "mean", ReduceOp::AVG, dims_argument(q), keepdim_argument(q));
}
std::optional<RuleDecision> mean_rule(const RuleQuery& q) { return summed(q, "mean", ReduceOp::AVG, {}, false); }
std::optional<RuleDecision> sum_rule(const RuleQuery& q) { return summed(q, "sum", ReduceOp::SUM, {}, false); }
std::optional<RuleDecision> prod_dim_rule(const RuleQuery& q) {
  auto dim = int_argument(q.node, "dim", 1);
  if (!dim) return std::nullopt;
  return summed(q, "prod", ReduceOp::PRODUCT, {*dim}, keepdim_argument(q));
}
std::optional<RuleDecision> sum_dims_rule(const RuleQuery& q) {
  return reduction("sum", ReduceOp::SUM, q.inputs[0], dims_argument(q), keepdim_argument(q));
}
std::optional<RuleDecision> amax_rule(const RuleQuery& q) {
  return reduction("amax/amin", ReduceOp::MAXIMUM, q.inputs[0], dims_argument(q), keepdim_argument(q));
}
std::optional<RuleDecision> amin_rule(const RuleQuery& q) {
  return reduction("amax/amin", ReduceOp::MINIMUM, q.inputs[0], dims_argument(q), keepdim_argument(q));
}

// The registry: one entry per target, the only place the sharding code names a target.
constexpr ShardingEntry kEntries[] = {
    // elementwise
    {.target = "aten::add.Tensor", .rule = elementwise_rule},
    {.target = "aten::sub.Tensor", .rule = elementwise_rule},
    {.target = "aten::mul.Tensor", .rule = elementwise_rule},
    {.target = "aten::div.Tensor", .rule = elementwise_rule},
    {.target = "aten::add.Scalar", .rule = elementwise_rule},
    {.target = "aten::sub.Scalar", .rule = elementwise_rule},
    {.target = "aten::mul.Scalar", .rule = elementwise_rule},
    {.target = "aten::div.Scalar", .rule = elementwise_rule},
    {.target = "aten::relu.default", .rule = elementwise_rule},
    {.target = "aten::gelu.default", .rule = elementwise_rule},
    {.target = "aten::silu.default", .rule = elementwise_rule},
    {.target = "aten::sigmoid.default", .rule = elementwise_rule},
    {.target = "aten::tanh.default", .rule = elementwise_rule},
    {.target = "aten::neg.default", .rule = elementwise_rule},
    {.target = "aten::exp.default", .rule = elementwise_rule},
    {.target = "aten::log.default", .rule = elementwise_rule},
    {.target = "aten::sqrt.default", .rule = elementwise_rule},
    {.target = "aten::rsqrt.default", .rule = elementwise_rule},
    {.target = "aten::abs.default", .rule = elementwise_rule},
    {.target = "aten::pow.Tensor_Scalar", .rule = elementwise_rule},
    {.target = "aten::where.self", .rule = elementwise_rule},
    {.target = "aten::clamp.default", .rule = elementwise_rule},
    {.target = "aten::clamp_min.default", .rule = elementwise_rule},
    {.target = "aten::clamp_max.default", .rule = elementwise_rule},
    {.target = "aten::_to_copy.default", .rule = elementwise_rule},
    {.target = "aten::to.dtype", .rule = elementwise_rule},
    {.target = kCloneTarget, .rule = elementwise_rule},
    {.target = "aten::maximum.default", .rule = elementwise_rule},
    {.target = "aten::minimum.default", .rule = elementwise_rule},
    {.target = "aten::eq.Tensor", .rule = elementwise_rule},
    {.target = "aten::ne.Tensor", .rule = elementwise_rule},
    {.target = "aten::gt.Tensor", .rule = elementwise_rule},
    {.target = "aten::lt.Tensor", .rule = elementwise_rule},
    {.target = "aten::ge.Tensor", .rule = elementwise_rule},
    {.target = "aten::le.Tensor", .rule = elementwise_rule},
    {.target = "aten::eq.Scalar", .rule = elementwise_rule},
    {.target = "aten::gt.Scalar", .rule = elementwise_rule},
    {.target = "aten::lt.Scalar", .rule = elementwise_rule},
    {.target = "aten::logical_not.default", .rule = elementwise_rule},
    {.target = "aten::dropout.default", .rule = elementwise_rule, .planning = NodePlanning::kDraw},
    {.target = "aten::alias.default", .rule = elementwise_rule},
    {.target = "aten::contiguous.default", .rule = elementwise_rule},
    // random draws (NodePlanning::kDraw: the pass places them; docs/RANDOM.md)
    {.target = "aten::rand.default", .rewrite = ArgumentRewrite::kViewSizes, .planning = NodePlanning::kDraw},
    {.target = "aten::randn.default", .rewrite = ArgumentRewrite::kViewSizes, .planning = NodePlanning::kDraw},
    {.target = "aten::randint.default", .rewrite = ArgumentRewrite::kViewSizes, .planning = NodePlanning::kDraw},
    {.target = "aten::randint.low", .rewrite = ArgumentRewrite::kViewSizes, .planning = NodePlanning::kDraw},
    {.target = "aten::normal.float_float", .rewrite = ArgumentRewrite::kViewSizes, .planning = NodePlanning::kDraw},
    {.target = "aten::rand_like.default", .rule = elementwise_rule, .planning = NodePlanning::kDraw},
    {.target = "aten::randn_like.default", .rule = elementwise_rule, .planning = NodePlanning::kDraw},
    {.target = "aten::randint_like.default", .rule = elementwise_rule, .planning = NodePlanning::kDraw},
    {.target = "aten::randint_like.low_dtype", .rule = elementwise_rule, .planning = NodePlanning::kDraw},
    {.target = "aten::normal_functional.default", .rule = elementwise_rule, .planning = NodePlanning::kDraw},
    {.target = "aten::uniform.default", .rule = elementwise_rule, .planning = NodePlanning::kDraw},
    {.target = "aten::bernoulli.p", .rule = elementwise_rule, .planning = NodePlanning::kDraw},
    {.target = "aten::native_dropout.default", .planning = NodePlanning::kDraw},
    {.target = "aten::bernoulli.default", .rule = elementwise_rule, .planning = NodePlanning::kDraw},
    {.target = "aten::normal.Tensor_float", .rule = elementwise_rule, .planning = NodePlanning::kDraw},
    {.target = "aten::normal.float_Tensor", .rule = elementwise_rule, .planning = NodePlanning::kDraw},
    {.target = "aten::normal.Tensor_Tensor", .rule = elementwise_rule, .planning = NodePlanning::kDraw},
    {.target = "aten::_philox_key_split.default", .rule = key_derivation_rule},
    {.target = "aten::_philox_key_fold_in.default", .rule = key_derivation_rule},
    {.target = "aten::_philox_key_fold_in.Tensor", .rule = key_derivation_rule},
    {.target = "aten::_philox_uniform.default", .planning = NodePlanning::kDraw},
    {.target = "aten::_philox_normal.default", .planning = NodePlanning::kDraw},
    {.target = "aten::_philox_randint.default", .planning = NodePlanning::kDraw},
    // matrix products
    {.target = "aten::linear.default", .rule = linear_rule},
    {.target = "aten::mm.default", .rule = mm_rule},
    {.target = "aten::addmm.default", .rule = addmm_rule},
    {.target = "aten::bmm.default", .rule = bmm_rule},
    {.target = "aten::matmul.default", .rule = matmul_rule},
    // dims moved
    {.target = "aten::t.default", .rule = t_rule},
    {.target = "aten::transpose.int", .rule = transpose_rule},
    {.target = "aten::permute.default", .rule = permute_rule},
    // softmax over a dim
    {.target = "aten::_softmax.default", .rule = softmax_rule},
    {.target = "aten::softmax.int", .rule = softmax_rule},
    {.target = "aten::_log_softmax.default", .rule = softmax_rule},
    {.target = "aten::log_softmax.int", .rule = softmax_rule},
    // reductions
    {.target = "aten::sum.dim_IntList", .rule = sum_dims_rule},
    {.target = "aten::amax.default", .rule = amax_rule},
    {.target = "aten::amin.default", .rule = amin_rule},
    {.target = "aten::mean.dim", .rule = mean_dim_rule},
    {.target = "aten::prod.dim_int", .rule = prod_dim_rule},
    {.target = "aten::sum.default", .rule = sum_rule},
    {.target = "aten::mean.default", .rule = mean_rule},
    // views and reshapes
    {.target = "aten::view.default", .rule = view_rule, .rewrite = ArgumentRewrite::kViewSizes},
    {.target = "aten::reshape.default", .rule = view_rule, .rewrite = ArgumentRewrite::kViewSizes},
    {.target = "aten::_unsafe_view.default", .rule = view_rule, .rewrite = ArgumentRewrite::kViewSizes},
    {.target = "aten::flatten.using_ints", .rule = flatten_rule},
    {.target = "aten::unflatten.int", .rule = unflatten_rule, .rewrite = ArgumentRewrite::kUnflattenSizes},
    // attention, norms
    {.target = "aten::scaled_dot_product_attention.default", .rule = attention_rule},
    {.target = "aten::layer_norm.default", .rule = layer_norm_rule},
    {.target = "aten::rms_norm.default", .rule = rms_norm_rule},
    // indexing and shape ops
    {.target = "aten::slice.Tensor", .rule = slice_rule},
    {.target = "aten::select.int", .rule = select_rule},
    {.target = "aten::unsqueeze.default", .rule = unsqueeze_rule},
    {.target = "aten::split.Tensor", .rule = split_rule},
    {.target = "aten::split_with_sizes.default", .rule = split_rule},
    {.target = "aten::chunk.default", .rule = split_rule},
    {.target = "aten::cat.default", .rule = cat_rule, .list_input = true},
    {.target = "aten::expand.default", .rule = expand_rule, .rewrite = ArgumentRewrite::kExpandSizes},
    {.target = "aten::embedding.default", .rule = embedding_rule},
    // planned by the pass itself: no rule (the fallback where the pass does not take them)
    {.target = "aten::argmax.default",
     .planning = NodePlanning::kArgReduce,
     .arg_reduction = {.maximum = true, .indices_only = true}},
    {.target = "aten::argmin.default",
     .planning = NodePlanning::kArgReduce,
     .arg_reduction = {.maximum = false, .indices_only = true}},
    {.target = "aten::max.dim", .planning = NodePlanning::kArgReduce, .arg_reduction = {.maximum = true}},
    {.target = "aten::min.dim", .planning = NodePlanning::kArgReduce, .arg_reduction = {.maximum = false}},
    {.target = "aten::_assert_tensor_metadata.default", .planning = NodePlanning::kMetadataOnly},
    {.target = kRedistributeTarget, .planning = NodePlanning::kRedistribute},
    {.target = kFromLocalTarget, .planning = NodePlanning::kFromLocal},
    {.target = kToLocalTarget, .planning = NodePlanning::kToLocal},
    {.target = kAccessInnerTensorTarget, .planning = NodePlanning::kToLocal},
};

}  // namespace

bool keeps_input_placements(std::string_view target) {
  const ShardingEntry* entry = sharding_entry(target);
  return entry != nullptr && entry->rule == elementwise_rule;
}

const ShardingEntry* sharding_entry(std::string_view target) {
  static const std::unordered_map<std::string_view, const ShardingEntry*> kByTarget = [] {
    std::unordered_map<std::string_view, const ShardingEntry*> index;
    for (const ShardingEntry& entry : kEntries) index.emplace(entry.target, &entry);
    return index;
  }();
  auto it = kByTarget.find(target);
  return it == kByTarget.end() ? nullptr : it->second;
}

std::span<const ShardingEntry> sharding_entries() { return kEntries; }

std::optional<RuleDecision> propagate(std::string_view target, const fb::NodeT& node,
                                      const std::vector<RuleInput>& inputs,
                                      const std::vector<int64_t>& output_sizes,
                                      const std::vector<int64_t>& mesh_shape) {
  if (inputs.empty()) return std::nullopt;
  const ShardingEntry* entry = sharding_entry(target);
  if (entry == nullptr || entry->rule == nullptr) return std::nullopt;
  return entry->rule(RuleQuery{node, inputs, output_sizes, mesh_shape});
}

}  // namespace nrt::dist
