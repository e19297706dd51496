// The transformer block of the executor's end-to-end tests and memory benchmark: a pre-LayerNorm
// block the way torch.export spells it in ATen ops,
//
//   h   = x + linear(attention(layer_norm(x)))      attention: qkv linear, split, reshape,
//   out = h + linear(gelu(linear(layer_norm(h))))   permute, q @ k^T / sqrt(head_dim), causal
//                                                    mask (a buffer), softmax, @ v, permute, reshape
//
// Graph "forward", user input "x" f32[batch, seq, dim], user output "add_1". Weights are
// deterministic (SplitMix64, scaled by 1/sqrt(fan_in); LayerNorm weights around 1).
#pragma once

#include <cstdint>

#include "serializer/json_form.h"

namespace nrt::testing {

struct TransformerBlockShape {
  int64_t batch = 2;
  int64_t seq = 8;
  int64_t dim = 32;
  int64_t heads = 4;  // must divide dim
  int64_t hidden = 64;
};

ProgramWithWeights transformer_block_program(const TransformerBlockShape& shape = {});

}  // namespace nrt::testing
