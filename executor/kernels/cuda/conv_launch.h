// The launchers of the convolution and pooling kernels (conv_kernels.cu) over [N, C, H, W]
// tensors (1-D ones as H = 1), contiguous.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "core/scalar_type.h"

namespace nrt::exec::cuda {

struct Window2d {
  int64_t n = 0, c = 0, h = 0, w = 0;      // input
  int64_t out_h = 0, out_w = 0;
  int64_t kh = 1, kw = 1;
  int64_t stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0, dilation_h = 1, dilation_w = 1;
};

// col [N, C*kh*kw, out_h*out_w] of input [N, C, H, W] (zeros where the window is in the padding):
// a convolution is then one product with the weight per group.
cudaError_t launch_im2col(ScalarType dtype, const Window2d& window, const void* input, void* col, cudaStream_t stream);

// max_pool2d: out [N, C, out_h, out_w] and, when not null, the flat h*W+w index of each maximum
// (torch's max_pool2d_with_indices); NaN wins, padding is -inf.
cudaError_t launch_max_pool2d(ScalarType dtype, const Window2d& window, const void* input, void* out, int64_t* indices,
                              cudaStream_t stream);

// adaptive_avg_pool2d: out [N, C, out_h, out_w], window [floor(i*H/oh), ceil((i+1)*H/oh)).
cudaError_t launch_adaptive_avg_pool2d(ScalarType dtype, const Window2d& window, const void* input, void* out,
                                       cudaStream_t stream);

// Batch norm at inference over [N, C, inner]: out = (x - mean[c]) / sqrt(var[c] + eps) * w[c] + b[c]
// (w, b may be null); statistics and affine parameters of `dtype` too.
cudaError_t launch_batch_norm(ScalarType dtype, const void* input, const void* mean, const void* var, const void* weight,
                              const void* bias, void* out, int64_t n, int64_t c, int64_t inner, double eps,
                              cudaStream_t stream);

}  // namespace nrt::exec::cuda
