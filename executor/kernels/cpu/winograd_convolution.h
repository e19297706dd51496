// Float32 3x3 convolutions of stride 1 by Winograd's minimal filtering (Lavin and Gray, "Fast
// Algorithms for Convolutional Neural Networks", 2016): with F(2x2, 3x3) each 2x2 block of
// outputs takes 16 products per channel pair where the direct convolution takes 36, 2.25x fewer
// multiplications; with F(4x4, 3x3), 36 for 16 outputs, 4x fewer; at the cost of transforming
// inputs, weights and outputs. oneDNN 2.6 has Winograd for AVX-512 Intel cores only, and only
// when asked for; its direct 3x3 convolutions were 80% of resnet18's run (docs/PERFORMANCE.md).
//
// The weights' transform is kept while their constant storage lives, as oneDNN's reordered
// weights are (kept_by_storage.h); the inputs are transformed and multiplied in chunks of tile rows
// sized to stay in cache. The products run on the intra-op threads; every output element is
// computed by one thread in one order, so results do not depend on the thread count.
// F(2x2, 3x3)'s transforms add rounding of the size of the direct sum's (their coefficients are
// 0, +-1 and +-1/2); F(4x4, 3x3)'s more (winograd_tile).
#pragma once

#include <memory>

#include "executor/kernels/cpu/onednn_convolution.h"
#include "executor/runtime/storage.h"

namespace nrt::exec::cpu {

// Whether winograd_convolution_forward takes `shape`: 2-D (depth 1), 3x3, stride 1, no dilation,
// one group, padding at most 2 on each side, at least 8 outputs a side, a CPU with AVX2 and FMA,
// and at least 24 input and output channels; or, where either side is channels-last (as nrt's
// fused CNN chains run: executor/runtime/convolution_fusion.h), at least 16, multiples of 8. It
// then runs on channels-last tensors, the other side reordered.
bool winograd_takes(const OneDnnConvolution& shape);

// The outputs a side of each tile it would compute `shape` with: 2 (F(2x2, 3x3)), 4 (F(4x4, 3x3):
// 36 products for 16 outputs, 4x fewer multiplications than the direct sum; channels-last only,
// where the tiles cover at most 15% more than the outputs), or 0 where it does not take `shape`.
// F(4x4, 3x3)'s transforms have coefficients up to 8 (and 1/6, 1/24 in the weights'): against the
// direct sum in double its error is about 7x F(2x2, 3x3)'s (64 channels: 3.4e-5 on outputs of
// magnitude 7; a relative error of 5e-6).
int winograd_tile(const OneDnnConvolution& shape);

// The canonical 3-D form of onednn_convolution.h (input [N, C, 1, H, W], weight [K, C, 1, 3, 3],
// bias [K] or null, output [N, K, 1, OH, OW]; the channels-last flags as there) for a shape
// winograd_takes; refused, having written nothing, otherwise. The bias is added and
// relu or clip applied as outputs are written; silu is left to the caller (kActivationLeftToCaller).
OneDnnOutcome winograd_convolution_forward(const OneDnnConvolution& shape, const float* input, const float* weight,
                                           const float* bias, float* output,
                                           const std::shared_ptr<const Storage>& weight_storage = nullptr);

}  // namespace nrt::exec::cpu
