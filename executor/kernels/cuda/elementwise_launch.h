// The launchers of the element-wise CUDA kernels (elementwise_kernels.cu), callable from host code
// compiled by the host compiler: plain parameters, CUDA's error code back (the caller names the
// node: cuda_status.h). Operand 0 of the indexer is the output; 1, 2, 3 the inputs in order.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "core/scalar_type.h"
#include "executor/kernels/cuda/elementwise_math.h"
#include "executor/kernels/cuda/strided_indexer.h"

namespace nrt::exec::cuda {

struct ElementwiseLaunch {
  StridedIndexer indexer;
  int64_t numel = 0;
  bool contiguous = false;  // every operand dense in the output's order: element i at offset i
  void* out = nullptr;
  const void* in[3] = {};
  ScalarType out_dtype = ScalarType::UNKNOWN;
  ScalarType in_dtype = ScalarType::UNKNOWN;  // binary: both inputs; where: inputs 2 and 3
  // A binary op's second operand given as a number (a Python scalar): `in[1]` is not read.
  bool scalar_operand = false;
  double scalar = 0;
  int64_t scalar_integer = 0;
  double alpha = 1;  // add/sub's multiplier of the second operand
};

// out = op(in[0], in[1]) in in_dtype's compute type; out_dtype is in_dtype, or BOOL for
// comparisons and logical ops.
cudaError_t launch_binary(BinaryOp op, const ElementwiseLaunch& launch, cudaStream_t stream);
// out = op(in[0]); out_dtype is in_dtype, or BOOL for logical_not.
cudaError_t launch_unary(UnaryOp op, const ElementwiseLaunch& launch, cudaStream_t stream);
// out = in[0] converted from in_dtype to out_dtype (any strides): copies, casts, broadcasts.
cudaError_t launch_convert(const ElementwiseLaunch& launch, cudaStream_t stream);
// out = in[0] (BOOL) ? in[1] : in[2], inputs 1 and 2 and out of in_dtype.
cudaError_t launch_where(const ElementwiseLaunch& launch, cudaStream_t stream);
// out = clamp(in[0], lo, hi) in in_dtype (NaN propagates); a bound absent when has_lo/has_hi is false.
cudaError_t launch_clamp(const ElementwiseLaunch& launch, bool has_lo, double lo, bool has_hi, double hi,
                         cudaStream_t stream);

// Whether the CUDA kernels take `dtype` (the CPU executor's dtypes).
constexpr bool elementwise_dtype(ScalarType dtype) {
  switch (dtype) {
    case ScalarType::FLOAT32: case ScalarType::FLOAT64: case ScalarType::FLOAT16: case ScalarType::BFLOAT16:
    case ScalarType::INT64: case ScalarType::INT32: case ScalarType::INT16: case ScalarType::INT8:
    case ScalarType::UINT8: case ScalarType::BOOL:
      return true;
    default:
      return false;
  }
}

}  // namespace nrt::exec::cuda
