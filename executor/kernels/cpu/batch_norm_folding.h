// An inference batch norm folded into the convolution before it, as a fused convolution node
// runs it (executor/runtime/convolution_fusion.h): with scale = weight / sqrt(running_var + eps)
// and shift = bias - running_mean * scale per output channel (torch's inference formula, in
// double), the convolution with weights w * scale and bias b * scale + shift gives
// batch_norm(conv(x, w, b)) without a pass over its result.
//
// Where every tensor involved lies in a constant storage (a loaded program's weights), the folded
// pair is kept while those storages live, itself in a constant storage, so that oneDNN keeps its
// reordered weights too (onednn_convolution.h); otherwise it is folded on every call.
#pragma once

#include <optional>

#include "executor/runtime/tensor.h"

namespace nrt::exec::cpu {

struct BatchNormParameters {
  std::optional<Tensor> weight, bias;  // [C] each, absent: 1 and 0
  Tensor running_mean, running_var;    // [C]
  double eps = 1e-5;
};

struct FoldedConvolution {
  Tensor weight;  // the shape of the convolution's weights
  Tensor bias;    // [C]
};

// `weight` [C, ...] and `bias` [C] (or undefined) are contiguous in the compute dtype (float32 or
// float64), the batch norm's parameters of any floating dtype, all of C elements (the caller
// checks). The result is contiguous in the weights' dtype.
FoldedConvolution fold_batch_norm(const Tensor& weight, const Tensor& bias, const BatchNormParameters& batch_norm);

}  // namespace nrt::exec::cpu
