// Convolution's im2col, pooling and inference batch norm: one thread per output element,
// accumulation in float (double for float64).
#include <cuda_runtime.h>

#include "executor/kernels/cuda/conv_launch.h"
#include "executor/kernels/cuda/device_types.cuh"

namespace nrt::exec::cuda {
namespace {

constexpr int kThreads = 256;

template <typename S>
using acc_t = std::conditional_t<std::is_same_v<S, double>, double, float>;

#define NRT_GRID_LOOP(i, n)                                                          \
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); \
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)

template <typename S>
__global__ void im2col_kernel(Window2d w, const S* input, S* col) {
  const int64_t L = w.out_h * w.out_w, K = w.c * w.kh * w.kw;
  NRT_GRID_LOOP(i, w.n * K * L) {
    const int64_t l = i % L, k = (i / L) % K, n = i / (L * K);
    const int64_t kj = k % w.kw, ki = (k / w.kw) % w.kh, c = k / (w.kw * w.kh);
    const int64_t oy = l / w.out_w, ox = l % w.out_w;
    const int64_t y = oy * w.stride_h - w.pad_h + ki * w.dilation_h;
    const int64_t x = ox * w.stride_w - w.pad_w + kj * w.dilation_w;
    const bool inside = y >= 0 && y < w.h && x >= 0 && x < w.w;
    col[i] = inside ? input[((n * w.c + c) * w.h + y) * w.w + x] : from_compute<S>(0.0f);
  }
}

template <typename S>
__global__ void max_pool_kernel(Window2d w, const S* input, S* out, int64_t* indices) {
  using A = acc_t<S>;
  NRT_GRID_LOOP(i, w.n * w.c * w.out_h * w.out_w) {
    const int64_t ox = i % w.out_w, oy = (i / w.out_w) % w.out_h, plane = i / (w.out_w * w.out_h);
    const S* p = input + plane * w.h * w.w;
    A best = -A(INFINITY);
    int64_t best_index = -1;
    for (int64_t ki = 0; ki < w.kh; ++ki) {
      const int64_t y = oy * w.stride_h - w.pad_h + ki * w.dilation_h;
      if (y < 0 || y >= w.h) continue;
      for (int64_t kj = 0; kj < w.kw; ++kj) {
        const int64_t x = ox * w.stride_w - w.pad_w + kj * w.dilation_w;
        if (x < 0 || x >= w.w) continue;
        const A v = to_compute<A>(p[y * w.w + x]);
        if (best_index < 0 || v > best || (v != v && best == best)) {
          best = v;
          best_index = y * w.w + x;
        }
      }
    }
    out[i] = from_compute<S>(best);
    if (indices != nullptr) indices[i] = best_index;
  }
}

template <typename S>
__global__ void adaptive_avg_pool_kernel(Window2d w, const S* input, S* out) {
  using A = acc_t<S>;
  NRT_GRID_LOOP(i, w.n * w.c * w.out_h * w.out_w) {
    const int64_t ox = i % w.out_w, oy = (i / w.out_w) % w.out_h, plane = i / (w.out_w * w.out_h);
    const int64_t y0 = oy * w.h / w.out_h, y1 = ((oy + 1) * w.h + w.out_h - 1) / w.out_h;
    const int64_t x0 = ox * w.w / w.out_w, x1 = ((ox + 1) * w.w + w.out_w - 1) / w.out_w;
    const S* p = input + plane * w.h * w.w;
    A sum = 0;
    for (int64_t y = y0; y < y1; ++y) {
      for (int64_t x = x0; x < x1; ++x) sum += to_compute<A>(p[y * w.w + x]);
    }
    out[i] = from_compute<S>(sum / A((y1 - y0) * (x1 - x0)));
  }
}

template <typename S>
__global__ void batch_norm_kernel(const S* input, const S* mean, const S* var, const S* weight, const S* bias, S* out,
                                  int64_t total, int64_t c, int64_t inner, double eps) {
  using A = acc_t<S>;
  NRT_GRID_LOOP(i, total) {
    const int64_t ch = (i / inner) % c;
    A y = (to_compute<A>(input[i]) - to_compute<A>(mean[ch])) / sqrt(to_compute<A>(var[ch]) + A(eps));
    if (weight != nullptr) y *= to_compute<A>(weight[ch]);
    if (bias != nullptr) y += to_compute<A>(bias[ch]);
    out[i] = from_compute<S>(y);
  }
}

}  // namespace

cudaError_t launch_im2col(ScalarType dtype, const Window2d& w, const void* input, void* col, cudaStream_t stream) {
  const int64_t total = w.n * w.c * w.kh * w.kw * w.out_h * w.out_w;
  if (total == 0) return cudaSuccess;
  const bool ok = dispatch_floating(dtype, [&](auto s) {
    using S = decltype(s);
    im2col_kernel<S><<<blocks_for(total, kThreads), kThreads, 0, stream>>>(w, static_cast<const S*>(input), static_cast<S*>(col));
  });
  return ok ? cudaGetLastError() : cudaErrorInvalidValue;
}

cudaError_t launch_max_pool2d(ScalarType dtype, const Window2d& w, const void* input, void* out, int64_t* indices,
                              cudaStream_t stream) {
  const int64_t total = w.n * w.c * w.out_h * w.out_w;
  if (total == 0) return cudaSuccess;
  const bool ok = dispatch_floating(dtype, [&](auto s) {
    using S = decltype(s);
    max_pool_kernel<S><<<blocks_for(total, kThreads), kThreads, 0, stream>>>(w, static_cast<const S*>(input),
                                                                             static_cast<S*>(out), indices);
  });
  return ok ? cudaGetLastError() : cudaErrorInvalidValue;
}

cudaError_t launch_adaptive_avg_pool2d(ScalarType dtype, const Window2d& w, const void* input, void* out,
                                       cudaStream_t stream) {
  const int64_t total = w.n * w.c * w.out_h * w.out_w;
  if (total == 0) return cudaSuccess;
  const bool ok = dispatch_floating(dtype, [&](auto s) {
    using S = decltype(s);
    adaptive_avg_pool_kernel<S><<<blocks_for(total, kThreads), kThreads, 0, stream>>>(w, static_cast<const S*>(input),
                                                                                      static_cast<S*>(out));
  });
  return ok ? cudaGetLastError() : cudaErrorInvalidValue;
}

cudaError_t launch_batch_norm(ScalarType dtype, const void* input, const void* mean, const void* var, const void* weight,
                              const void* bias, void* out, int64_t n, int64_t c, int64_t inner, double eps,
                              cudaStream_t stream) {
  const int64_t total = n * c * inner;
  if (total == 0) return cudaSuccess;
  const bool ok = dispatch_floating(dtype, [&](auto s) {
    using S = decltype(s);
    batch_norm_kernel<S><<<blocks_for(total, kThreads), kThreads, 0, stream>>>(
        static_cast<const S*>(input), static_cast<const S*>(mean), static_cast<const S*>(var),
        static_cast<const S*>(weight), static_cast<const S*>(bias), static_cast<S*>(out), total, c, inner, eps);
  });
  return ok ? cudaGetLastError() : cudaErrorInvalidValue;
}

}  // namespace nrt::exec::cuda
