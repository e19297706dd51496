// The launchers of the row kernels (row_kernels.cu): softmax, log_softmax, layer_norm, rms_norm
// and the sum/mean of each row of a contiguous [rows, n] tensor, one thread block per row,
// accumulating in float (double for float64); and embedding's row gather.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "core/scalar_type.h"

namespace nrt::exec::cuda {

enum class RowOp : int32_t { kSoftmax, kLogSoftmax, kSum, kMean };

// out (rows x n, or rows x 1 for kSum/kMean) = op over each row of `in`; both of `dtype`.
// `causal_rows` > 0 (softmax only): rows come in groups of that many, and row i of a group sees
// only columns j <= i (attention's is_causal, torch's lower-triangular mask); 0: every column.
// `safe` (softmax only): a row whose every score is -inf gives zeros (attention's math path, as
// torch's), not NaN.
cudaError_t launch_rows(RowOp op, ScalarType dtype, const void* in, void* out, int64_t rows, int64_t n,
                        cudaStream_t stream, int64_t causal_rows = 0, bool safe = false);

// out = (in - mean) * rstd * weight + bias per row (layer_norm; weight and bias of length n or
// null), or in * rsqrt(mean(in^2) + eps) * weight (rms_norm when `rms`). mean and rstd, when not
// null, receive float (double for float64) statistics per row.
cudaError_t launch_norm_rows(bool rms, ScalarType dtype, const void* in, const void* weight, const void* bias,
                             void* out, void* mean, void* rstd, int64_t rows, int64_t n, double eps,
                             cudaStream_t stream);

// The max (is_max) or min of each row with its index, torch's rules: NaN is greater and smaller
// than every number (the first NaN wins), ties go to the first index, bool compares as 0/1.
// `values` (dtype, may be null) and `indices` (int64, may be null) get one element per row.
cudaError_t launch_arg_rows(bool is_max, ScalarType dtype, const void* in, void* values, int64_t* indices, int64_t rows,
                            int64_t n, cudaStream_t stream);

// out[r] = any (or all, when `all`) element of row r is nonzero (NaN is nonzero); out is bool.
cudaError_t launch_any_rows(bool all, ScalarType dtype, const void* in, bool* out, int64_t rows, int64_t n,
                            cudaStream_t stream);

// The running sum (or product) along each row, accumulated in double for floats and in wrapping
// int64 for integers, as the CPU kernels do; in and out of `dtype`. One thread per row.
cudaError_t launch_scan_rows(bool product, ScalarType dtype, const void* in, void* out, int64_t rows, int64_t n,
                             cudaStream_t stream);

// out[i, :] = table[index[i], :] for `count` indices (int64 or int32) into a contiguous
// [table_rows, width] table of `element_bytes`-sized elements; an index outside the table sets
// *bad (device memory, int32) to 1 and writes zeros for that row.
cudaError_t launch_gather_rows(const void* table, int64_t table_rows, int64_t width, int64_t element_bytes,
                               const void* index, bool index_is_int64, int64_t count, void* out, int32_t* bad,
                               cudaStream_t stream);

}  // namespace nrt::exec::cuda
