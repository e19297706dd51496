// What the CUDA kernels' host code shares: the strided indexer of a set of operands (dims merged
// where every operand allows, so most launches index one or two dims), the device error of a
// launch, and device tensors made by conversion (the element-wise kernels compute in one dtype).
#pragma once

#include <cuda_runtime_api.h>

#include <span>
#include <string_view>
#include <vector>

#include "executor/cuda/cuda_context.h"
#include "executor/kernels/cuda/elementwise_launch.h"
#include "executor/runtime/kernel.h"

namespace nrt::exec::cuda {

// The indexer walking `sizes` with each operand's strides (operand 0 first); merges dims that
// are contiguous in every operand. An error when more than kMaxDims dims remain.
Result<StridedIndexer> make_indexer(std::span<const int64_t> sizes,
                                    std::span<const std::vector<int64_t>> strides, bool* dense = nullptr);

// ok, or DeviceError naming the kernel's target and `what` ("elementwise launch").
Status launch_result(const KernelContext& ctx, cudaError_t result, std::string_view what);

// `t` converted to `dtype` on the device (contiguous), or `t` itself when it already has it.
Result<Tensor> as_dtype(const KernelContext& ctx, const Tensor& t, ScalarType dtype);

// Copies `src` into `dst` (same sizes, or broadcastable to them), converting the dtype: clone,
// _to_copy, copy_, cat's pieces; on `stream`.
Status copy_into(cudaStream_t stream, const Tensor& dst, const Tensor& src);
inline Status copy_into(const KernelContext& ctx, const Tensor& dst, const Tensor& src) {
  return copy_into(context_of(ctx).stream, dst, src);
}

// `t` as a contiguous tensor (itself when it is one).
Result<Tensor> contiguous(const KernelContext& ctx, const Tensor& t);

// out (contiguous [batch, m, n]) = alpha * a @ b for [batch, m, k] and [batch, k, n] views whose
// last two dims are row- or column-contiguous (matmul_kernels.cc, through cuBLASLt).
Status batched_product(KernelContext& ctx, const Tensor& a, const Tensor& b, const Tensor& out, double alpha);

// The element-wise kernels' dtypes; an error naming the dtype otherwise.
Status check_dtype(const KernelContext& ctx, ScalarType dtype);

}  // namespace nrt::exec::cuda
