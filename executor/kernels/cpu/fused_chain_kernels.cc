// The kernels of fused op chains (executor/runtime/fused_chains.h). Each rounds every step as the
// chain's node rounds it, so the values are the same bits as the nodes run apart (this library is
// built for baseline x86-64: no multiply-add is contracted into an FMA here).
//
// RMSNorm (executor/runtime/rms_norm_fusion.h): the chain's first
// node computes x * rsqrt(mean(x * x, -1) + eps) [* weight] a row at a time, rounding each step as
// the chain's node rounds it (pow: x * x in float; mean: four double lanes over the row as
// reduction_kernels.cc's sum_in_double adds them, divided in double, then float; add: eps as
// float; rsqrt: 1 / sqrt in float; the muls in float), so the values are the same bits as the nodes
// run apart. The nodes between do nothing.
#include <cmath>
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "executor/kernels/cpu/broadcast.h"
#include "executor/kernels/cpu/float_activation_loops.h"
#include "executor/kernels/cpu/output_slot.h"
#include "executor/kernels/cpu/tensor_copy.h"
#include "executor/runtime/intra_op_threads.h"
#include "executor/runtime/kernel.h"
#include "executor/runtime/fused_chains.h"

namespace nrt::exec::cpu {
namespace {

namespace chains = fused_chains;

// Rows [begin, end) of `length` floats.
void rms_norm_rows(const float* x, const float* weight, float eps, int64_t length, int64_t begin, int64_t end,
                   float* y) {
  for (int64_t row = begin; row < end; ++row) {
    const float* in = x + row * length;
    float* out = y + row * length;
    double lanes[4] = {};
    int64_t i = 0;
    for (; i + 4 <= length; i += 4) {
      for (int k = 0; k < 4; ++k) lanes[k] += static_cast<double>(in[i + k] * in[i + k]);
    }
    for (; i < length; ++i) lanes[i % 4] += static_cast<double>(in[i] * in[i]);
    const double total = (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
    const auto mean = static_cast<float>(total / static_cast<double>(length));
    const float scale = 1.0f / std::sqrt(mean + eps);
    if (weight != nullptr) {
      for (int64_t j = 0; j < length; ++j) out[j] = weight[j] * (in[j] * scale);
    } else {
      for (int64_t j = 0; j < length; ++j) out[j] = in[j] * scale;
    }
  }
}

Status rms_norm_chain_kernel(KernelContext& ctx) {
  NRT_TRY(input, ctx.tensor(chains::kRmsNormInput, -1));
  NRT_TRY(weight, ctx.optional_tensor(chains::kRmsNormWeight, -1));
  NRT_TRY(eps, ctx.real(chains::kRmsNormEps, -1));
  if (input->dtype() != ScalarType::FLOAT32 || input->dim() == 0) {
    return ctx.error("the fused RMSNorm's input must be float32 with a dimension, got " + input->type_string());
  }
  const int64_t length = input->sizes().back();
  if (*weight && ((*weight)->dtype() != ScalarType::FLOAT32 || (*weight)->sizes() != std::vector<int64_t>{length})) {
    return ctx.error("the fused RMSNorm's weight " + (*weight)->type_string() + " must be float32 [" +
                     std::to_string(length) + "]");
  }
  const Tensor x = contiguous_as(*input, ScalarType::FLOAT32);
  const Tensor w = *weight ? contiguous_as(**weight, ScalarType::FLOAT32) : Tensor();
  NRT_TRY(out, bind_output_ref(ctx, 0, ScalarType::FLOAT32, x.sizes()));
  const Tensor result = (*out)->is_contiguous() ? **out : Tensor::empty(ScalarType::FLOAT32, x.sizes());
  const int64_t rows = length == 0 ? 0 : x.numel() / length;
  const float* weights = w.defined() ? w.data<float>() : nullptr;
  // Rows of 16k floats and more a part: a row is one pass over its floats.
  parallel_for(rows, std::max<int64_t>(1, (int64_t{1} << 14) / std::max<int64_t>(length, 1)),
               [&](int64_t begin, int64_t end) {
                 rms_norm_rows(x.data<float>(), weights, static_cast<float>(*eps), length, begin, end,
                               result.data<float>());
               });
  if (result.storage() != (*out)->storage()) copy_into(**out, result);
  return Status::Ok();
}


// One row of the rotary embedding below where x, cos and sin are contiguous: each half apart,
// without the strided loop's select, so that the compiler vectorises them (mistral_tiny's heads
// took 5.5 us for 4096 elements a float at a time); the same products and sums. Not inlined, its
// pointers restricted (the output is never an input's memory): inlined, GCC left it scalar.
[[gnu::noinline]] void rotary_contiguous_row(const float* __restrict x, const float* __restrict cs,
                                             const float* __restrict sn, int64_t half, float* __restrict to) {
  for (int64_t j = 0; j < half; ++j) {
    const float straight = x[j] * cs[j];
    const float rotated = -x[j + half] * sn[j];
    to[j] = straight + rotated;
  }
  for (int64_t j = half; j < 2 * half; ++j) {
    const float straight = x[j] * cs[j];
    const float rotated = x[j - half] * sn[j];
    to[j] = straight + rotated;
  }
}

// Rotary embedding (executor/runtime/rotary_fusion.h): out = x * cos + rotate_half(x) * sin, as
// mul, slice, slice, neg, cat, mul and add compute it: each product rounded, then their sum.
Status rotary_chain_kernel(KernelContext& ctx) {
  NRT_TRY(input, ctx.tensor(chains::kRotaryInput, -1));
  NRT_TRY(cos, ctx.tensor(chains::kRotaryCos, -1));
  NRT_TRY(sin, ctx.tensor(chains::kRotarySin, -1));
  const std::vector<int64_t>& sizes = input->sizes();
  if (input->dtype() != ScalarType::FLOAT32 || cos->dtype() != ScalarType::FLOAT32 ||
      sin->dtype() != ScalarType::FLOAT32 || sizes.empty() || sizes.back() % 2 != 0 ||
      !broadcasts_to(cos->sizes(), sizes) || !broadcasts_to(sin->sizes(), sizes)) {
    return ctx.error("the fused rotary embedding needs float32 x with an even last dim and cos and sin broadcast to "
                     "it, got " + input->type_string() + ", " + cos->type_string() + " and " + sin->type_string());
  }
  NRT_TRY(out, bind_output_ref(ctx, 0, ScalarType::FLOAT32, sizes));
  // Rows are written in place where the output's last dim has stride 1 (outputs come laid out
  // densely, kernel.h): torch lays a transposed x's result out as x, [batch, heads, positions,
  // features] over the memory of [batch, positions, heads, features].
  const Tensor result = (*out)->strides().back() == 1 ? **out : Tensor::empty(ScalarType::FLOAT32, sizes);
  const Tensor c = expand_to(*cos, sizes), s = expand_to(*sin, sizes);
  const int64_t length = sizes.back(), half = length / 2, rank = static_cast<int64_t>(sizes.size());
  const int64_t rows = length == 0 ? 0 : input->numel() / length;
  const float* x = input->data<float>();
  const float* cs = c.data<float>();
  const float* sn = s.data<float>();
  float* y = result.data<float>();
  const int64_t x_step = input->strides().back(), c_step = c.strides().back(), s_step = s.strides().back();
  std::vector<int64_t> index(static_cast<size_t>(rank - 1), 0);
  for (int64_t row = 0; row < rows; ++row) {
    int64_t xo = 0, co = 0, so = 0, yo = 0;
    for (int64_t d = 0; d + 1 < rank; ++d) {
      yo += index[static_cast<size_t>(d)] * result.strides()[static_cast<size_t>(d)];
      xo += index[static_cast<size_t>(d)] * input->strides()[static_cast<size_t>(d)];
      co += index[static_cast<size_t>(d)] * c.strides()[static_cast<size_t>(d)];
      so += index[static_cast<size_t>(d)] * s.strides()[static_cast<size_t>(d)];
    }
    float* to = y + yo;
    if (x_step == 1 && c_step == 1 && s_step == 1) {
      rotary_contiguous_row(x + xo, cs + co, sn + so, half, to);
    } else {
      for (int64_t j = 0; j < length; ++j) {
        const float turned = j < half ? -x[xo + (j + half) * x_step] : x[xo + (j - half) * x_step];
        const float straight = x[xo + j * x_step] * cs[co + j * c_step];
        const float rotated = turned * sn[so + j * s_step];
        to[j] = straight + rotated;
      }
    }
    for (int64_t d = rank - 2; d >= 0; --d) {
      if (++index[static_cast<size_t>(d)] < sizes[static_cast<size_t>(d)]) break;
      index[static_cast<size_t>(d)] = 0;
    }
  }
  if (result.storage() != (*out)->storage()) copy_into(**out, result);
  return Status::Ok();
}

// SiLU times up (executor/runtime/silu_mul_fusion.h): float_activation_loops.h's silu_products,
// SiLU rounded as the silu node's loop rounds it (over a contiguous float32 input), then the product.
Status silu_mul_chain_kernel(KernelContext& ctx) {
  NRT_TRY(gate, ctx.tensor(chains::kSiluMulGate, -1));
  NRT_TRY(up, ctx.tensor(chains::kSiluMulUp, -1));
  if (gate->dtype() != ScalarType::FLOAT32 || up->dtype() != ScalarType::FLOAT32 || gate->sizes() != up->sizes()) {
    return ctx.error("the fused SiLU product needs float32 gate and up of the same sizes, got " + gate->type_string() +
                     " and " + up->type_string());
  }
  const Tensor g = contiguous_as(*gate, ScalarType::FLOAT32), u = contiguous_as(*up, ScalarType::FLOAT32);
  NRT_TRY(out, bind_output_ref(ctx, 0, ScalarType::FLOAT32, g.sizes()));
  // The result may be gate's or up's memory (the plan reuses a value's memory from its last reader on).
  const Tensor result = (*out)->is_contiguous() ? **out : Tensor::empty(ScalarType::FLOAT32, g.sizes());
  silu_products(result.data<float>(), g.data<float>(), u.data<float>(), g.numel());
  if (result.storage() != (*out)->storage()) copy_into(**out, result);
  return Status::Ok();
}

constexpr DeviceKind kCpu = DeviceKind::kCpu;
const KernelRegistration kRegistrations[] = {
    {chains::kRmsNormTarget, kCpu, {&rms_norm_chain_kernel, false}},
    {chains::kRotaryTarget, kCpu, {&rotary_chain_kernel, false}},
    {chains::kSiluMulTarget, kCpu, {&silu_mul_chain_kernel, false}},
    {chains::kAbsorbedTarget, kCpu, {[](KernelContext&) { return Status::Ok(); }, false}},
};

}  // namespace
}  // namespace nrt::exec::cpu
