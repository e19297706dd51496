// The kernels of a fused RMSNorm chain (executor/runtime/rms_norm_fusion.h, rms_norm_chain.h): the chain's first
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

#include "executor/kernels/cpu/output_slot.h"
#include "executor/kernels/cpu/tensor_copy.h"
#include "executor/runtime/intra_op_threads.h"
#include "executor/runtime/kernel.h"
#include "executor/runtime/rms_norm_chain.h"

namespace nrt::exec::cpu {
namespace {

namespace chain = rms_norm_chain;

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
  NRT_TRY(input, ctx.tensor(chain::kInput, -1));
  NRT_TRY(weight, ctx.optional_tensor(chain::kWeight, -1));
  NRT_TRY(eps, ctx.real(chain::kEps, -1));
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

constexpr DeviceKind kCpu = DeviceKind::kCpu;
const KernelRegistration kRegistrations[] = {
    {chain::kKernelTarget, kCpu, {&rms_norm_chain_kernel, false}},
    {chain::kAbsorbedTarget, kCpu, {[](KernelContext&) { return Status::Ok(); }, false}},
};

}  // namespace
}  // namespace nrt::exec::cpu
