// scaled_dot_product_attention, math path: softmax(q @ k^T * scale + bias) @ v per batch element,
// with batch dims broadcast among q, k, v and the mask. The bias comes from a bool attn_mask
// (false: -inf) or a float one (added), or from is_causal (top-left aligned lower triangle).
// Rows whose every score is -inf give zeros (torch's safe softmax in the math path). enable_gqa
// gives each key/value head to its group of query heads. Dropout is not supported (inference).
// _scaled_dot_product_flash_attention_for_cpu (what CPU decompositions produce) computes the same
// and also returns the log-sum-exp of each row's scaled scores (float32, float64 for float64 inputs; -inf
// for rows masked entirely).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <limits>

#include "executor/runtime/intra_op_threads.h"
#include "executor/kernels/cpu/batched_transpose.h"
#include "executor/kernels/cpu/broadcast.h"
#include "executor/kernels/cpu/dimensions.h"
#include "executor/kernels/cpu/dtype_dispatch.h"
#include "executor/kernels/cpu/float_activation_loops.h"
#include "executor/kernels/cpu/gemm.h"
#include "executor/kernels/cpu/output_slot.h"
#include "executor/kernels/cpu/small_product.h"
#include "executor/kernels/cpu/tensor_copy.h"

namespace nrt::exec::cpu {
namespace {

Tensor batch_matrix(const Tensor& t, const std::vector<int64_t>& index) {
  int64_t offset = t.storage_offset();
  for (size_t d = 0; d < index.size(); ++d) offset += index[d] * t.strides()[d];
  const size_t r = t.sizes().size() - 2;
  return t.as_strided({t.sizes()[r], t.sizes()[r + 1]}, {t.strides()[r], t.strides()[r + 1]}, offset);
}

// scores[i] = exp(scores[i] - maxima[row]), totals[row] = the row's sum.
void exponentiate_rows(float* scores, int64_t rows, int64_t cols, const float* maxima, float* totals) {
  // float32: every row through one call of the vectorised exp (std::exp was most of a small
  // model's attention; a call per row, its setup).
  shifted_exponentials(scores, scores, maxima, rows, cols, totals);
}

void exponentiate_rows(double* scores, int64_t rows, int64_t cols, const double* maxima, double* totals) {
  for (int64_t i = 0; i < rows; ++i) {
    double* row = scores + i * cols;
    double total = 0;
    for (int64_t j = 0; j < cols; ++j) {
      row[j] = std::exp(row[j] - maxima[i]);
      total += row[j];
    }
    totals[i] = total;
  }
}

// `statistics` holds 2 * rows elements of scratch: each row's maximum and its sum.
template <class C>
void masked_softmax_rows(C* scores, int64_t rows, int64_t cols, const Tensor* mask, bool causal, C* statistics,
                         C* logsumexp) {
  const C minus_inf = -std::numeric_limits<C>::infinity();
  C* maxima = statistics;
  C* totals = statistics + rows;
  for (int64_t i = 0; i < rows; ++i) {
    C* row = scores + i * cols;
    if (causal) std::fill(row + std::min(i + 1, cols), row + cols, minus_inf);
    if (mask != nullptr) {  // one row of the mask, its stride hoisted (per element it was a tenth of a small model)
      const int64_t step = mask->strides()[1];
      if (mask->dtype() == ScalarType::BOOL) {
        // Read as bytes: GCC vectorises a select on a byte's test, not on a bool (a mask's row
        // was branchy scalar code, mispredicted at each causal boundary).
        const auto* allowed = reinterpret_cast<const uint8_t*>(mask->data<bool>()) + i * mask->strides()[0];
        if (step == 1) {
          for (int64_t j = 0; j < cols; ++j) row[j] = allowed[j] != 0 ? row[j] : minus_inf;
        } else {
          for (int64_t j = 0; j < cols; ++j) row[j] = allowed[j * step] != 0 ? row[j] : minus_inf;
        }
      } else {
        const C* added = mask->data<C>() + i * mask->strides()[0];
        for (int64_t j = 0; j < cols; ++j) row[j] += added[j * step];
      }
    }
    maxima[i] = maximum_of(row, cols);
  }
  exponentiate_rows(scores, rows, cols, maxima, totals);
  for (int64_t i = 0; i < rows; ++i) {
    C* row = scores + i * cols;
    if (maxima[i] == minus_inf) {  // masked entirely (its exponentials are NaN: -inf - -inf)
      std::fill(row, row + cols, C(0));
      if (logsumexp) logsumexp[i] = minus_inf;
      continue;
    }
    if (logsumexp) logsumexp[i] = maxima[i] + std::log(totals[i]);
    const C scale = C(1) / totals[i];  // as softmax (and torch's): one division a row
    for (int64_t j = 0; j < cols; ++j) row[j] *= scale;
  }
}

struct AttentionArguments {
  Tensor q, k, v;
  std::optional<Tensor> mask;
  double dropout = 0.0;
  bool causal = false;
  std::optional<double> scale;
  bool gqa = false;
  bool with_logsumexp = false;  // output 1
};

Status attention(KernelContext& ctx, const AttentionArguments& args) {
  const Tensor& q = args.q;
  const Tensor& k = args.k;
  const Tensor& v = args.v;
  const std::optional<Tensor>& mask = args.mask;
  if (args.dropout != 0.0) return ctx.error("dropout_p must be 0 (inference only), got " + std::to_string(args.dropout));
  if (args.causal && mask) return ctx.error("is_causal and attn_mask cannot both be given");
  if (!is_floating_dtype(q.dtype())) return unsupported_dtype(ctx, q.dtype());
  if (k.dtype() != q.dtype() || v.dtype() != q.dtype()) return ctx.error("query, key and value must share one dtype");
  if (q.dim() < 2 || k.dim() < 2 || v.dim() < 2) return ctx.error("query, key and value need at least 2 dimensions");
  const int64_t L = q.sizes()[q.sizes().size() - 2], E = q.sizes().back();
  const int64_t S = k.sizes()[k.sizes().size() - 2], Ev = v.sizes().back();
  if (k.sizes().back() != E || v.sizes()[v.sizes().size() - 2] != S) {
    return ctx.error("query " + shape_string(q.sizes()) + ", key " + shape_string(k.sizes()) + " and value " +
                     shape_string(v.sizes()) + " do not fit");
  }
  const double scale = args.scale.value_or(1.0 / std::sqrt(static_cast<double>(E)));
  const ScalarType compute = q.dtype() == ScalarType::FLOAT64 ? ScalarType::FLOAT64 : ScalarType::FLOAT32;
  // enable_gqa: query head h reads key/value head h / group, through the index (no repeated copy).
  int64_t group = 1;
  if (args.gqa && q.dim() >= 3 && k.dim() >= 3 && v.dim() >= 3) {
    const int64_t heads = q.sizes()[q.sizes().size() - 3];
    const int64_t kv_heads = k.sizes()[k.sizes().size() - 3];
    if (kv_heads != v.sizes()[v.sizes().size() - 3] || kv_heads == 0 || heads % kv_heads != 0) {
      return ctx.error("enable_gqa needs the query heads to be a multiple of the key/value heads");
    }
    group = heads / kv_heads;
  }
  const std::vector<int64_t> q_batch(q.sizes().begin(), q.sizes().end() - 2);
  std::vector<int64_t> k_batch(k.sizes().begin(), k.sizes().end() - 2);
  std::vector<int64_t> v_batch(v.sizes().begin(), v.sizes().end() - 2);
  if (group > 1) {  // the heads each key/value head serves
    k_batch.back() *= group;
    v_batch.back() *= group;
  }
  auto batch = broadcast_shapes(q_batch, k_batch);
  if (batch) batch = broadcast_shapes(*batch, v_batch);
  if (!batch) return ctx.error("batch dimensions of query, key and value do not broadcast");
  std::vector<int64_t> mask_sizes = *batch;
  mask_sizes.insert(mask_sizes.end(), {L, S});
  Tensor bias;
  if (mask) {
    if (mask->dtype() != ScalarType::BOOL && !is_floating_dtype(mask->dtype())) {
      return ctx.error("attn_mask must be bool or floating, got " + std::string(short_name(mask->dtype())));
    }
    if (!broadcasts_to(mask->sizes(), mask_sizes)) {
      auto grown = broadcast_shapes(mask->sizes(), mask_sizes);
      if (!grown || grown->size() < 2 || (*grown)[grown->size() - 2] != L || grown->back() != S) {
        return ctx.error("attn_mask " + shape_string(mask->sizes()) + " does not broadcast to " +
                         shape_string(mask_sizes));
      }
      batch->assign(grown->begin(), grown->end() - 2);
      mask_sizes = *grown;
    }
    const Tensor typed = mask->dtype() == ScalarType::BOOL ? *mask : contiguous_as(*mask, compute);
    bias = expand_to(typed, mask_sizes);
  }
  std::vector<int64_t> out_sizes = *batch;
  out_sizes.insert(out_sizes.end(), {L, Ev});
  NRT_TRY(slot, OutputSlot::bind(ctx, 0, q.dtype(), out_sizes));
  // Each batch matrix goes to gemm through its strides (a transposed view's heads included): an
  // operand of the compute dtype is not copied.
  auto expand_batch = [&](const Tensor& t, int64_t heads_per_matrix) {
    std::vector<int64_t> sizes = *batch;
    sizes.back() /= heads_per_matrix;
    sizes.insert(sizes.end(), t.sizes().end() - 2, t.sizes().end());
    return expand_to(t.dtype() == compute ? t : converted_copy(t, compute), sizes);
  };
  const Tensor qx = expand_batch(q, 1), kx = expand_batch(k, group), vx = expand_batch(v, group);
  Tensor staging = slot->staging(compute);
  std::optional<OutputSlot> lse_slot;
  Tensor lse;
  if (args.with_logsumexp) {
    std::vector<int64_t> lse_sizes = *batch;
    lse_sizes.push_back(L);
    NRT_TRY(s, OutputSlot::bind_secondary(ctx, 1, compute, lse_sizes));
    lse_slot = *s;
    lse = lse_slot->staging(compute);
  }
  const int64_t batches = product(*batch);
  // Each (batch, head) matrix is independent: with intra-op threads, heads are split over them,
  // each chunk with its own scores buffer, and every product inside on one BLAS thread.
  // Heads whose products are small run them on small_product.h's tiles: oneDNN's call took most of
  // a 32 x 32 x 16 head's time.
  const bool small = compute == ScalarType::FLOAT32 && small_product_available() &&
                     L * S * std::max(E, Ev) <= kSmallProductMultiplyAdds;
  auto heads = [&](int64_t begin, int64_t end) {
    Tensor scores = Tensor::empty(compute, {L, S});
    Tensor statistics = Tensor::empty(compute, {2, L});  // masked_softmax_rows' scratch
    // k^T, then v's rows (or k's rows gathered before their transpose)
    Tensor packed = small ? Tensor::empty(compute, {E * S + S * std::max(E, Ev)}) : Tensor();
    std::vector<int64_t> index(batch->size(), 0);
    for (int64_t rest = begin, d = static_cast<int64_t>(batch->size()) - 1; d >= 0; --d) {
      index[static_cast<size_t>(d)] = rest % (*batch)[static_cast<size_t>(d)];
      rest /= (*batch)[static_cast<size_t>(d)];
    }
    for (int64_t b = begin; b < end; ++b) {
      std::vector<int64_t> kv_index = index;
      kv_index.back() /= group;
      const Tensor qm = batch_matrix(qx, index), km = batch_matrix(kx, kv_index), vm = batch_matrix(vx, kv_index);
      if (small) {
        float* key_columns = packed.data<float>();  // [E, S]
        const float* key = km.data<float>();
        if (km.strides()[1] == 1 && transposes_floats(S, E)) {
          // Rows of k as they come from a product: whisper's heads took ~2 us a head gathering
          // them a float at a time. Rows apart (a head of a [positions, heads, features] result,
          // as the rotary embedding writes it) are first copied together.
          if (km.strides()[0] != E) {
            float* rows = packed.data<float>() + E * S;
            for (int64_t j = 0; j < S; ++j) std::copy_n(key + j * km.strides()[0], E, rows + j * E);
            key = rows;
          }
          transpose_floats(BatchedTranspose{1, S, E}, key, key_columns);
        } else {
          for (int64_t e = 0; e < E; ++e) {
            for (int64_t j = 0; j < S; ++j) key_columns[e * S + j] = key[j * km.strides()[0] + e * km.strides()[1]];
          }
        }
        avx512::small_product(L, S, E, static_cast<float>(scale), qm.data<float>(), qm.strides()[0], qm.strides()[1],
                              key_columns, S, 16, nullptr, scores.data<float>(), S);
      } else {
        const Tensor kt = km.as_strided({E, S}, {km.strides()[1], km.strides()[0]}, km.storage_offset());
        gemm(qm, kt, scores, scale, 0.0);
      }
      const Tensor mask_matrix = bias.defined() ? batch_matrix(bias, index) : Tensor();
      if (compute == ScalarType::FLOAT64) {
        masked_softmax_rows(scores.data<double>(), L, S, bias.defined() ? &mask_matrix : nullptr, args.causal,
                            statistics.data<double>(), lse.defined() ? lse.data<double>() + b * L : nullptr);
      } else {
        masked_softmax_rows(scores.data<float>(), L, S, bias.defined() ? &mask_matrix : nullptr, args.causal,
                            statistics.data<float>(), lse.defined() ? lse.data<float>() + b * L : nullptr);
      }
      const Tensor out = staging.as_strided({L, Ev}, {Ev, 1}, staging.storage_offset() + b * L * Ev);
      if (small) {
        const float* values = vm.data<float>();
        int64_t value_row = vm.strides()[0];
        if (vm.strides()[1] != 1) {  // rows of v gathered where its columns are strided
          float* rows = packed.data<float>() + E * S;
          for (int64_t j = 0; j < S; ++j) {
            for (int64_t c = 0; c < Ev; ++c) rows[j * Ev + c] = values[j * vm.strides()[0] + c * vm.strides()[1]];
          }
          values = rows;
          value_row = Ev;
        }
        avx512::small_product(L, Ev, S, 1.0f, scores.data<float>(), S, 1, values, value_row, 16, nullptr,
                              out.data<float>(), Ev);
      } else {
        gemm(scores, vm, out, 1.0, 0.0);
      }
      for (size_t d = batch->size(); d-- > 0;) {
        if (++index[d] < (*batch)[d]) break;
        index[d] = 0;
      }
    }
  };
  if (intra_op_threads() > 1 && batches > 1) {
    OneBlasThreadPerProduct one_thread;
    parallel_for(batches, 1, heads);
  } else {
    heads(0, batches);
  }
  slot->commit();
  if (lse_slot) lse_slot->commit();
  return Status::Ok();
}

// Reads the arguments at the given positions (names take precedence).
struct AttentionPositions {
  int mask, dropout, causal, scale, gqa;
};

Status attention_call(KernelContext& ctx, AttentionPositions at, bool with_logsumexp) {
  AttentionArguments args;
  args.with_logsumexp = with_logsumexp;
  NRT_TRY(q, ctx.tensor("query", 0));
  NRT_TRY(k, ctx.tensor("key", 1));
  NRT_TRY(v, ctx.tensor("value", 2));
  NRT_TRY(mask, ctx.optional_tensor("attn_mask", at.mask));
  NRT_TRY(dropout, ctx.real("dropout_p", at.dropout, 0.0));
  NRT_TRY(causal, ctx.boolean("is_causal", at.causal, false));
  const RuntimeValue* scale = ctx.find("scale", at.scale);
  if (scale != nullptr && !std::holds_alternative<std::monostate>(*scale)) {
    NRT_TRY(s, ctx.real("scale", at.scale));
    args.scale = *s;
  }
  if (at.gqa >= 0) {
    NRT_TRY(gqa, ctx.boolean("enable_gqa", at.gqa, false));
    args.gqa = *gqa;
  }
  args.q = *q;
  args.k = *k;
  args.v = *v;
  args.mask = *mask;
  args.dropout = *dropout;
  args.causal = *causal;
  return attention(ctx, args);
}

// scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None,
//   float dropout_p=0.0, bool is_causal=False, *, float? scale=None, bool enable_gqa=False)
Status scaled_dot_product_attention(KernelContext& ctx) { return attention_call(ctx, {3, 4, 5, 6, 7}, false); }

// _scaled_dot_product_flash_attention_for_cpu(Tensor query, Tensor key, Tensor value,
//   float dropout_p=0.0, bool is_causal=False, *, Tensor? attn_mask=None, float? scale=None)
//   -> (Tensor output, Tensor logsumexp)
Status flash_attention_for_cpu(KernelContext& ctx) { return attention_call(ctx, {5, 3, 4, 6, -1}, true); }

constexpr DeviceKind kCpu = DeviceKind::kCpu;
const KernelRegistration kRegistrations[] = {
    {"aten::scaled_dot_product_attention.default", kCpu, {&scaled_dot_product_attention, false}},
    {"aten::_scaled_dot_product_flash_attention_for_cpu.default", kCpu, {&flash_attention_for_cpu, false}},
};

}  // namespace
}  // namespace nrt::exec::cpu
