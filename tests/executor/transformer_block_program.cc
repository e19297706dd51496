#include "tests/executor/transformer_block_program.h"

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "testdata/program_builder.h"

namespace nrt::testing {
namespace {

using nrt::ScalarType;
using testdata::ProgramBuilder;
namespace arg = testdata::arg;
using testdata::Args;

// Deterministic weights: SplitMix64 uniform in [-scale, scale).
class Weights {
 public:
  std::vector<uint8_t> uniform(size_t count, float scale) {
    std::vector<uint8_t> bytes(count * sizeof(float));
    for (size_t i = 0; i < count; ++i) {
      uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
      z ^= z >> 31;
      const float v = scale * static_cast<float>(static_cast<double>(z >> 11) * 0x1.0p-53 * 2.0 - 1.0);
      std::memcpy(bytes.data() + i * sizeof(float), &v, sizeof v);
    }
    return bytes;
  }

 private:
  uint64_t state_ = 2024;
};

std::vector<uint8_t> around_one(Weights& w, size_t count) {
  auto bytes = w.uniform(count, 0.1f);
  for (size_t i = 0; i < count; ++i) {
    float v;
    std::memcpy(&v, bytes.data() + i * 4, 4);
    v += 1.0f;
    std::memcpy(bytes.data() + i * 4, &v, 4);
  }
  return bytes;
}

}  // namespace

ProgramWithWeights transformer_block_program(const TransformerBlockShape& shape) {
  const int64_t kBatch = shape.batch, kSeq = shape.seq, kDim = shape.dim, kHeads = shape.heads,
                kHeadDim = shape.dim / shape.heads, kHidden = shape.hidden;
  ProgramBuilder p("nrt tests: transformer block (tests/executor/make_transformer_block.cc)");
  const uint32_t layer_norm = p.op("aten::layer_norm", "default");
  const uint32_t linear = p.op("aten::linear", "default");
  const uint32_t split = p.op("aten::split", "Tensor");
  const uint32_t reshape = p.op("aten::reshape", "default");
  const uint32_t permute = p.op("aten::permute", "default");
  const uint32_t transpose = p.op("aten::transpose", "int");
  const uint32_t matmul = p.op("aten::matmul", "default");
  const uint32_t mul = p.op("aten::mul", "Scalar");
  const uint32_t add = p.op("aten::add", "Tensor");
  const uint32_t softmax = p.op("aten::softmax", "int");
  const uint32_t gelu = p.op("aten::gelu", "default");

  Weights w;
  struct Param {
    std::string fqn;
    std::vector<int64_t> sizes;
    std::vector<uint8_t> bytes;
  };
  const float s_in = 1.0f / std::sqrt(static_cast<float>(kDim));
  const float s_hidden = 1.0f / std::sqrt(static_cast<float>(kHidden));
  std::vector<Param> params = {
      {"ln1.weight", {kDim}, around_one(w, kDim)},
      {"ln1.bias", {kDim}, w.uniform(kDim, 0.1f)},
      {"attn.qkv.weight", {3 * kDim, kDim}, w.uniform(3 * kDim * kDim, s_in)},
      {"attn.qkv.bias", {3 * kDim}, w.uniform(3 * kDim, s_in)},
      {"attn.proj.weight", {kDim, kDim}, w.uniform(kDim * kDim, s_in)},
      {"attn.proj.bias", {kDim}, w.uniform(kDim, s_in)},
      {"ln2.weight", {kDim}, around_one(w, kDim)},
      {"ln2.bias", {kDim}, w.uniform(kDim, 0.1f)},
      {"mlp.fc1.weight", {kHidden, kDim}, w.uniform(kHidden * kDim, s_in)},
      {"mlp.fc1.bias", {kHidden}, w.uniform(kHidden, s_in)},
      {"mlp.fc2.weight", {kDim, kHidden}, w.uniform(kDim * kHidden, s_hidden)},
      {"mlp.fc2.bias", {kDim}, w.uniform(kDim, s_hidden)},
  };
  // The causal mask is a constant buffer: 0 on and below the diagonal, -inf above.
  std::vector<uint8_t> mask(kSeq * kSeq * sizeof(float));
  for (int64_t i = 0; i < kSeq; ++i) {
    for (int64_t j = 0; j < kSeq; ++j) {
      const float v = j <= i ? 0.0f : -INFINITY;
      std::memcpy(mask.data() + (i * kSeq + j) * sizeof(float), &v, sizeof v);
    }
  }
  for (auto& param : params) {
    p.weight(param.fqn, p.storage(std::move(param.bytes)), testdata::tensor_meta(ScalarType::FLOAT32, param.sizes),
             true);
  }
  p.weight("attn.causal_mask", p.storage(std::move(mask)), testdata::tensor_meta(ScalarType::FLOAT32, {kSeq, kSeq}),
           false);

  auto g = p.graph("forward", true);
  auto t = [&](const std::string& name, std::vector<int64_t> sizes) { return g.tensor(name, ScalarType::FLOAT32, sizes); };
  std::vector<uint32_t> pv;
  for (const auto& param : params) {
    std::string name = "p_" + param.fqn;
    for (char& c : name) c = c == '.' ? '_' : c;
    pv.push_back(t(name, param.sizes));
  }
  const uint32_t mask_value = t("b_attn_causal_mask", {kSeq, kSeq});
  const uint32_t x = t("x", {kBatch, kSeq, kDim});
  for (size_t i = 0; i < params.size(); ++i) g.input(arg::tensor(pv[i]), fb::InputKind::PARAMETER, params[i].fqn);
  g.input(arg::tensor(mask_value), fb::InputKind::BUFFER, "attn.causal_mask", false);
  g.user_input(arg::tensor(x));

  auto ln = [&](const std::string& name, uint32_t in, uint32_t weight, uint32_t bias) {
    const uint32_t out = t(name, {kBatch, kSeq, kDim});
    g.node(name, layer_norm,
           Args{{"input", arg::tensor(in)}, {"normalized_shape", arg::integers({kDim})}, {"weight", arg::tensor(weight)},
                {"bias", arg::tensor(bias)}, {"eps", arg::real(1e-5)}},
           {}, {arg::tensor(out)});
    return out;
  };
  auto lin = [&](const std::string& name, uint32_t in, uint32_t weight, uint32_t bias, int64_t out_features) {
    const uint32_t out = t(name, {kBatch, kSeq, out_features});
    g.node(name, linear, Args{{"input", arg::tensor(in)}, {"weight", arg::tensor(weight)}, {"bias", arg::tensor(bias)}},
           {}, {arg::tensor(out)});
    return out;
  };
  auto heads = [&](const std::string& name, uint32_t in) {
    const uint32_t r = t(name + "_reshape", {kBatch, kSeq, kHeads, kHeadDim});
    g.node(name + "_reshape", reshape, Args{{"self", arg::tensor(in)}, {"shape", arg::integers({kBatch, kSeq, kHeads, kHeadDim})}},
           {}, {arg::tensor(r)});
    const uint32_t out = t(name, {kBatch, kHeads, kSeq, kHeadDim});
    g.node(name, permute, Args{{"self", arg::tensor(r)}, {"dims", arg::integers({0, 2, 1, 3})}}, {}, {arg::tensor(out)});
    return out;
  };

  const uint32_t ln1 = ln("layer_norm", x, pv[0], pv[1]);
  const uint32_t qkv = lin("linear", ln1, pv[2], pv[3], 3 * kDim);
  const uint32_t q_raw = t("split_q", {kBatch, kSeq, kDim});
  const uint32_t k_raw = t("split_k", {kBatch, kSeq, kDim});
  const uint32_t v_raw = t("split_v", {kBatch, kSeq, kDim});
  g.node("split", split, Args{{"self", arg::tensor(qkv)}, {"split_size", arg::integer(kDim)}, {"dim", arg::integer(-1)}},
         {}, {arg::tensors({q_raw, k_raw, v_raw})});
  const uint32_t q = heads("q", q_raw);
  const uint32_t k = heads("k", k_raw);
  const uint32_t v = heads("v", v_raw);
  const uint32_t k_t = t("k_transposed", {kBatch, kHeads, kHeadDim, kSeq});
  g.node("k_transposed", transpose, Args{{"self", arg::tensor(k)}, {"dim0", arg::integer(-2)}, {"dim1", arg::integer(-1)}},
         {}, {arg::tensor(k_t)});
  const uint32_t scores = t("scores", {kBatch, kHeads, kSeq, kSeq});
  g.node("scores", matmul, Args{{"self", arg::tensor(q)}, {"other", arg::tensor(k_t)}}, {}, {arg::tensor(scores)});
  const uint32_t scaled = t("scaled", {kBatch, kHeads, kSeq, kSeq});
  g.node("scaled", mul, Args{{"self", arg::tensor(scores)}, {"other", arg::real(1.0 / std::sqrt(double(kHeadDim)))}}, {},
         {arg::tensor(scaled)});
  const uint32_t masked = t("masked", {kBatch, kHeads, kSeq, kSeq});
  g.node("masked", add, Args{{"self", arg::tensor(scaled)}, {"other", arg::tensor(mask_value)}}, {}, {arg::tensor(masked)});
  const uint32_t probs = t("probs", {kBatch, kHeads, kSeq, kSeq});
  g.node("probs", softmax, Args{{"self", arg::tensor(masked)}, {"dim", arg::integer(-1)}}, {}, {arg::tensor(probs)});
  const uint32_t context = t("context", {kBatch, kHeads, kSeq, kHeadDim});
  g.node("context", matmul, Args{{"self", arg::tensor(probs)}, {"other", arg::tensor(v)}}, {}, {arg::tensor(context)});
  const uint32_t merged = t("context_permuted", {kBatch, kSeq, kHeads, kHeadDim});
  g.node("context_permuted", permute, Args{{"self", arg::tensor(context)}, {"dims", arg::integers({0, 2, 1, 3})}}, {},
         {arg::tensor(merged)});
  const uint32_t flat = t("context_flat", {kBatch, kSeq, kDim});
  g.node("context_flat", reshape, Args{{"self", arg::tensor(merged)}, {"shape", arg::integers({kBatch, kSeq, kDim})}}, {},
         {arg::tensor(flat)});
  const uint32_t attn = lin("linear_1", flat, pv[4], pv[5], kDim);
  const uint32_t h = t("add", {kBatch, kSeq, kDim});
  g.node("add", add, Args{{"self", arg::tensor(x)}, {"other", arg::tensor(attn)}}, {}, {arg::tensor(h)});
  const uint32_t ln2 = ln("layer_norm_1", h, pv[6], pv[7]);
  const uint32_t fc1 = lin("linear_2", ln2, pv[8], pv[9], kHidden);
  const uint32_t act = t("gelu", {kBatch, kSeq, kHidden});
  g.node("gelu", gelu, Args{{"self", arg::tensor(fc1)}}, {}, {arg::tensor(act)});
  const uint32_t fc2 = lin("linear_3", act, pv[10], pv[11], kDim);
  const uint32_t out = t("add_1", {kBatch, kSeq, kDim});
  g.node("add_1", add, Args{{"self", arg::tensor(h)}, {"other", arg::tensor(fc2)}}, {}, {arg::tensor(out)});
  g.user_output(arg::tensor(out));

  return p.finish();
}

}  // namespace nrt::testing
