// Row kernels: one thread block per row of a contiguous [rows, n] tensor, with a block-wide
// reduction through warp shuffles. Accumulation in float (double for float64), as torch's CUDA
// kernels do; softmax subtracts the row's max first.
#include <cuda_runtime.h>

#include <cfloat>

#include "executor/kernels/cuda/device_types.cuh"
#include "executor/kernels/cuda/row_launch.h"

namespace nrt::exec::cuda {
namespace {

constexpr int kThreads = 256;

template <typename A>
__device__ A warp_sum(A v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}
template <typename A>
__device__ A warp_max(A v) {
  for (int offset = 16; offset > 0; offset /= 2) {
    const A other = __shfl_down_sync(0xffffffffu, v, offset);
    v = (other > v || other != other) ? other : v;  // NaN wins, as torch's max
  }
  return v;
}

// The block's sum (max) of every thread's `v`, returned to all threads.
template <typename A, bool kMax>
__device__ A block_reduce(A v) {
  __shared__ A partial[kThreads / 32];
  __shared__ A result;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  v = kMax ? warp_max(v) : warp_sum(v);
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  if (warp == 0) {
    A w = lane < static_cast<int>(blockDim.x / 32) ? partial[lane] : (kMax ? -A(INFINITY) : A(0));
    w = kMax ? warp_max(w) : warp_sum(w);
    if (lane == 0) result = w;
  }
  __syncthreads();
  const A r = result;
  __syncthreads();  // `result` and `partial` may be reused by the next reduction
  return r;
}

template <typename S>
using acc_t = std::conditional_t<std::is_same_v<S, double>, double, float>;

template <typename S>
__global__ void rows_kernel(RowOp op, const S* in, S* out, int64_t n, int64_t causal_rows, bool safe) {
  using A = acc_t<S>;
  const S* row = in + static_cast<int64_t>(blockIdx.x) * n;
  if (op == RowOp::kSum || op == RowOp::kMean) {
    A sum = 0;
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) sum += to_compute<A>(row[j]);
    sum = block_reduce<A, false>(sum);
    if (threadIdx.x == 0) out[blockIdx.x] = from_compute<S>(op == RowOp::kMean ? sum / A(n) : sum);
    return;
  }
  S* dst = out + static_cast<int64_t>(blockIdx.x) * n;
  // Columns past `seen` are masked out (causal attention): they take no part and come out 0.
  const int64_t seen = causal_rows > 0 ? (blockIdx.x % causal_rows) + 1 : n;
  A max = -A(INFINITY);
  for (int64_t j = threadIdx.x; j < seen && j < n; j += blockDim.x) {
    const A x = to_compute<A>(row[j]);
    max = (x > max || x != x) ? x : max;
  }
  max = block_reduce<A, true>(max);
  if (safe && max == -A(INFINITY)) {
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) dst[j] = from_compute<S>(A(0));
    return;
  }
  A sum = 0;
  for (int64_t j = threadIdx.x; j < seen && j < n; j += blockDim.x) sum += exp(to_compute<A>(row[j]) - max);
  sum = block_reduce<A, false>(sum);
  const A log_sum = log(sum);
  for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
    const A shifted = to_compute<A>(row[j]) - max;
    if (j >= seen) {
      dst[j] = from_compute<S>(op == RowOp::kLogSoftmax ? -A(INFINITY) : A(0));
    } else {
      dst[j] = from_compute<S>(op == RowOp::kLogSoftmax ? shifted - log_sum : exp(shifted) / sum);
    }
  }
}

template <typename S>
__global__ void norm_kernel(bool rms, const S* in, const S* weight, const S* bias, S* out, acc_t<S>* mean_out,
                            acc_t<S>* rstd_out, int64_t n, double eps) {
  using A = acc_t<S>;
  const S* row = in + static_cast<int64_t>(blockIdx.x) * n;
  S* dst = out + static_cast<int64_t>(blockIdx.x) * n;
  A mean = 0;
  if (!rms) {
    A sum = 0;
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) sum += to_compute<A>(row[j]);
    mean = block_reduce<A, false>(sum) / A(n);
  }
  // Two passes (the centred squares), as stable as torch's Welford for these sizes.
  A squares = 0;
  for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
    const A d = to_compute<A>(row[j]) - mean;
    squares += d * d;
  }
  const A variance = block_reduce<A, false>(squares) / A(n);
  const A rstd = A(1) / sqrt(variance + A(eps));
  for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
    A y = (to_compute<A>(row[j]) - mean) * rstd;
    if (weight != nullptr) y *= to_compute<A>(weight[j]);
    if (bias != nullptr) y += to_compute<A>(bias[j]);
    dst[j] = from_compute<S>(y);
  }
  if (threadIdx.x == 0) {
    if (mean_out != nullptr) mean_out[blockIdx.x] = mean;
    if (rstd_out != nullptr) rstd_out[blockIdx.x] = rstd;
  }
}

// Whether (v, i) comes before (best, best_i) as the row's answer (see launch_arg_rows).
template <typename C>
__device__ __forceinline__ bool wins(bool is_max, C v, int64_t i, C best, int64_t best_i) {
  const bool v_nan = v != v, best_nan = best != best;
  if (v_nan || best_nan) return v_nan && (!best_nan || i < best_i);
  if (v == best) return i < best_i;
  return is_max ? v > best : v < best;
}

template <typename S>
__global__ void arg_rows_kernel(bool is_max, const S* in, S* values, int64_t* indices, int64_t n) {
  using C = compute_t<S>;
  __shared__ C best_value[kThreads];
  __shared__ int64_t best_index[kThreads];
  const S* row = in + static_cast<int64_t>(blockIdx.x) * n;
  C best = C(0);
  int64_t best_i = -1;  // none yet
  for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
    const C v = to_compute<C>(row[j]);
    if (best_i < 0 || wins(is_max, v, j, best, best_i)) {
      best = v;
      best_i = j;
    }
  }
  best_value[threadIdx.x] = best;
  best_index[threadIdx.x] = best_i;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) {
      const int other = threadIdx.x + half;
      const int64_t oi = best_index[other];
      if (oi >= 0 && (best_index[threadIdx.x] < 0 ||
                      wins(is_max, best_value[other], oi, best_value[threadIdx.x], best_index[threadIdx.x]))) {
        best_value[threadIdx.x] = best_value[other];
        best_index[threadIdx.x] = oi;
      }
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    if (values != nullptr) values[blockIdx.x] = from_compute<S>(best_value[0]);
    if (indices != nullptr) indices[blockIdx.x] = best_index[0];
  }
}

template <typename S>
__global__ void any_rows_kernel(bool all, const S* in, bool* out, int64_t n) {
  using C = compute_t<S>;
  const S* row = in + static_cast<int64_t>(blockIdx.x) * n;
  int found = 0;  // a nonzero (any) or a zero (all)
  for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
    const bool nonzero = to_compute<C>(row[j]) != C(0);
    found |= all ? !nonzero : nonzero;
  }
  found = __syncthreads_or(found);
  if (threadIdx.x == 0) out[blockIdx.x] = all ? !found : found;
}

template <typename S>
__global__ void scan_rows_kernel(bool product, const S* in, S* out, int64_t rows, int64_t n) {
  using C = compute_t<S>;
  using A = std::conditional_t<std::is_floating_point_v<C>, double, uint64_t>;  // unsigned: wraps
  for (int64_t r = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; r < rows;
       r += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    A acc = product ? A(1) : A(0);
    for (int64_t j = 0; j < n; ++j) {
      const A v = static_cast<A>(to_compute<C>(in[r * n + j]));
      acc = product ? acc * v : acc + v;
      out[r * n + j] = from_compute<S>(static_cast<C>(acc));
    }
  }
}

template <typename I>
__global__ void gather_rows_kernel(const unsigned char* table, int64_t table_rows, int64_t row_bytes, const I* index,
                                   int64_t count, unsigned char* out, int32_t* bad) {
  for (int64_t r = blockIdx.x; r < count; r += gridDim.x) {
    const int64_t i = static_cast<int64_t>(index[r]);
    unsigned char* dst = out + r * row_bytes;
    const bool inside = i >= 0 && i < table_rows;
    if (!inside && threadIdx.x == 0) *bad = 1;
    const unsigned char* src = table + (inside ? i : 0) * row_bytes;
    for (int64_t b = threadIdx.x; b < row_bytes; b += blockDim.x) dst[b] = inside ? src[b] : 0;
  }
}

}  // namespace

cudaError_t launch_rows(RowOp op, ScalarType dtype, const void* in, void* out, int64_t rows, int64_t n,
                        cudaStream_t stream, int64_t causal_rows, bool safe) {
  if (rows == 0) return cudaSuccess;
  if (rows > 0x7fffffff) return cudaErrorInvalidValue;
  const bool ok = dispatch_floating(dtype, [&](auto s) {
    using S = decltype(s);
    rows_kernel<S><<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(op, static_cast<const S*>(in),
                                                                        static_cast<S*>(out), n, causal_rows, safe);
  });
  return ok ? cudaGetLastError() : cudaErrorInvalidValue;
}

cudaError_t launch_norm_rows(bool rms, ScalarType dtype, const void* in, const void* weight, const void* bias,
                             void* out, void* mean, void* rstd, int64_t rows, int64_t n, double eps,
                             cudaStream_t stream) {
  if (rows == 0) return cudaSuccess;
  if (rows > 0x7fffffff) return cudaErrorInvalidValue;
  const bool ok = dispatch_floating(dtype, [&](auto s) {
    using S = decltype(s);
    using A = acc_t<S>;
    norm_kernel<S><<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(
        rms, static_cast<const S*>(in), static_cast<const S*>(weight), static_cast<const S*>(bias),
        static_cast<S*>(out), static_cast<A*>(mean), static_cast<A*>(rstd), n, eps);
  });
  return ok ? cudaGetLastError() : cudaErrorInvalidValue;
}

cudaError_t launch_arg_rows(bool is_max, ScalarType dtype, const void* in, void* values, int64_t* indices, int64_t rows,
                            int64_t n, cudaStream_t stream) {
  if (rows == 0) return cudaSuccess;
  if (rows > 0x7fffffff || n == 0) return cudaErrorInvalidValue;
  const bool ok = dispatch_storage(dtype, [&](auto s) {
    using S = decltype(s);
    arg_rows_kernel<S><<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(is_max, static_cast<const S*>(in),
                                                                             static_cast<S*>(values), indices, n);
  });
  return ok ? cudaGetLastError() : cudaErrorInvalidValue;
}

cudaError_t launch_any_rows(bool all, ScalarType dtype, const void* in, bool* out, int64_t rows, int64_t n,
                            cudaStream_t stream) {
  if (rows == 0) return cudaSuccess;
  if (rows > 0x7fffffff) return cudaErrorInvalidValue;
  const bool ok = dispatch_storage(dtype, [&](auto s) {
    using S = decltype(s);
    any_rows_kernel<S><<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(all, static_cast<const S*>(in), out, n);
  });
  return ok ? cudaGetLastError() : cudaErrorInvalidValue;
}

cudaError_t launch_scan_rows(bool product, ScalarType dtype, const void* in, void* out, int64_t rows, int64_t n,
                             cudaStream_t stream) {
  if (rows == 0 || n == 0) return cudaSuccess;
  const bool ok = dispatch_storage(dtype, [&](auto s) {
    using S = decltype(s);
    scan_rows_kernel<S><<<blocks_for(rows, 128), 128, 0, stream>>>(product, static_cast<const S*>(in), static_cast<S*>(out),
                                                                   rows, n);
  });
  return ok ? cudaGetLastError() : cudaErrorInvalidValue;
}

cudaError_t launch_gather_rows(const void* table, int64_t table_rows, int64_t width, int64_t element_bytes,
                               const void* index, bool index_is_int64, int64_t count, void* out, int32_t* bad,
                               cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  const unsigned blocks = static_cast<unsigned>(count < 65535 ? count : 65535);
  const auto* t = static_cast<const unsigned char*>(table);
  auto* o = static_cast<unsigned char*>(out);
  if (index_is_int64) {
    gather_rows_kernel<int64_t><<<blocks, 128, 0, stream>>>(t, table_rows, width * element_bytes,
                                                            static_cast<const int64_t*>(index), count, o, bad);
  } else {
    gather_rows_kernel<int32_t><<<blocks, 128, 0, stream>>>(t, table_rows, width * element_bytes,
                                                            static_cast<const int32_t*>(index), count, o, bad);
  }
  return cudaGetLastError();
}

}  // namespace nrt::exec::cuda
