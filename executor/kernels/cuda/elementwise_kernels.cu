// The element-wise CUDA kernels: one generic strided kernel per kind (binary, unary, convert,
// where, clamp), computing in the compute type of the operands (device_types.cuh) with the math of
// elementwise_math.h. When every operand is dense in the output's order (and 16-byte aligned), a
// vectorized path reads and writes 16 bytes per operand per step.
#include <cuda_runtime.h>

#include "executor/kernels/cuda/device_types.cuh"
#include "executor/kernels/cuda/elementwise_launch.h"

namespace nrt::exec::cuda {
namespace {

constexpr int kThreads = 256;

template <typename T, int N>
struct alignas(sizeof(T) * N) Pack {
  T v[N];
};

__device__ __forceinline__ int64_t first_index() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ int64_t grid_stride() { return static_cast<int64_t>(gridDim.x) * blockDim.x; }

template <typename S, typename O>
__global__ void binary_kernel(BinaryOp op, StridedIndexer ix, int64_t n, bool contiguous, O* out, const S* a,
                              const S* b, bool scalar_operand, compute_t<S> scalar, compute_t<S> alpha) {
  using C = compute_t<S>;
  for (int64_t i = first_index(); i < n; i += grid_stride()) {
    int64_t off[3] = {i, i, i};
    if (!contiguous) strided_offsets<3>(ix, i, off);
    const C x = to_compute<C>(a[off[1]]);
    const C y = scalar_operand ? scalar : to_compute<C>(b[off[2]]);
    out[off[0]] = from_compute<O>(apply_binary<C>(op, x, y, alpha));
  }
}

// Dense operands: N elements per step, loaded and stored as one aligned pack.
template <typename S, typename O, int N>
__global__ void binary_packed_kernel(BinaryOp op, int64_t packs, O* out, const S* a, const S* b, bool scalar_operand,
                                     compute_t<S> scalar, compute_t<S> alpha) {
  using C = compute_t<S>;
  for (int64_t p = first_index(); p < packs; p += grid_stride()) {
    const Pack<S, N> x = reinterpret_cast<const Pack<S, N>*>(a)[p];
    Pack<S, N> y{};
    if (!scalar_operand) y = reinterpret_cast<const Pack<S, N>*>(b)[p];
    Pack<O, N> r;
#pragma unroll
    for (int k = 0; k < N; ++k) {
      const C yk = scalar_operand ? scalar : to_compute<C>(y.v[k]);
      r.v[k] = from_compute<O>(apply_binary<C>(op, to_compute<C>(x.v[k]), yk, alpha));
    }
    reinterpret_cast<Pack<O, N>*>(out)[p] = r;
  }
}

template <typename S, typename O>
__global__ void unary_kernel(UnaryOp op, StridedIndexer ix, int64_t n, bool contiguous, O* out, const S* a) {
  using C = compute_t<S>;
  for (int64_t i = first_index(); i < n; i += grid_stride()) {
    int64_t off[2] = {i, i};
    if (!contiguous) strided_offsets<2>(ix, i, off);
    out[off[0]] = from_compute<O>(apply_unary<C>(op, to_compute<C>(a[off[1]])));
  }
}

template <typename S, int N>
__global__ void unary_packed_kernel(UnaryOp op, int64_t packs, S* out, const S* a) {
  using C = compute_t<S>;
  for (int64_t p = first_index(); p < packs; p += grid_stride()) {
    const Pack<S, N> x = reinterpret_cast<const Pack<S, N>*>(a)[p];
    Pack<S, N> r;
#pragma unroll
    for (int k = 0; k < N; ++k) r.v[k] = from_compute<S>(apply_unary<C>(op, to_compute<C>(x.v[k])));
    reinterpret_cast<Pack<S, N>*>(out)[p] = r;
  }
}

// The type a conversion from S to O goes through: double when either is double, float when either
// is a float, else int64_t (so an int64 survives a copy exactly).
template <typename S, typename O>
using via_t = std::conditional_t<
    std::is_same_v<S, double> || std::is_same_v<O, double>, double,
    std::conditional_t<std::is_same_v<compute_t<S>, float> || std::is_same_v<compute_t<O>, float>, float, int64_t>>;

template <typename S, typename O>
__global__ void convert_kernel(StridedIndexer ix, int64_t n, bool contiguous, O* out, const S* a) {
  using V = via_t<S, O>;
  for (int64_t i = first_index(); i < n; i += grid_stride()) {
    int64_t off[2] = {i, i};
    if (!contiguous) strided_offsets<2>(ix, i, off);
    if constexpr (std::is_same_v<S, O>) {
      out[off[0]] = a[off[1]];
    } else {
      out[off[0]] = from_compute<O>(to_compute<V>(a[off[1]]));
    }
  }
}

template <typename S>
__global__ void where_kernel(StridedIndexer ix, int64_t n, bool contiguous, S* out, const bool* cond, const S* a,
                             const S* b) {
  for (int64_t i = first_index(); i < n; i += grid_stride()) {
    int64_t off[4] = {i, i, i, i};
    if (!contiguous) strided_offsets<4>(ix, i, off);
    out[off[0]] = cond[off[1]] ? a[off[2]] : b[off[3]];
  }
}

template <typename S>
__global__ void clamp_kernel(StridedIndexer ix, int64_t n, bool contiguous, S* out, const S* a, bool has_lo,
                             compute_t<S> lo, bool has_hi, compute_t<S> hi) {
  using C = compute_t<S>;
  for (int64_t i = first_index(); i < n; i += grid_stride()) {
    int64_t off[2] = {i, i};
    if (!contiguous) strided_offsets<2>(ix, i, off);
    C x = to_compute<C>(a[off[1]]);
    if (!is_nan(x)) {
      if (has_lo && x < lo) x = lo;
      if (has_hi && x > hi) x = hi;
    }
    out[off[0]] = from_compute<S>(x);
  }
}

bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15) == 0; }

template <typename C>
C scalar_of(const ElementwiseLaunch& l) {
  if constexpr (std::is_integral_v<C>) {
    return static_cast<C>(l.scalar_integer);
  } else {
    return static_cast<C>(l.scalar);
  }
}

template <typename S, typename O>
void run_binary(BinaryOp op, const ElementwiseLaunch& l, cudaStream_t stream) {
  using C = compute_t<S>;
  auto* out = static_cast<O*>(l.out);
  const auto* a = static_cast<const S*>(l.in[0]);
  const auto* b = static_cast<const S*>(l.in[1]);
  const C scalar = scalar_of<C>(l);
  const C alpha = std::is_integral_v<C> ? static_cast<C>(static_cast<int64_t>(l.alpha)) : static_cast<C>(l.alpha);
  constexpr int N = 16 / sizeof(S) < 16 / sizeof(O) ? 16 / sizeof(S) : 16 / sizeof(O);
  int64_t done = 0;
  if (l.contiguous && N > 1 && aligned16(out) && aligned16(a) && (l.scalar_operand || aligned16(b))) {
    const int64_t packs = l.numel / N;
    if (packs > 0) {
      binary_packed_kernel<S, O, N><<<blocks_for(packs, kThreads), kThreads, 0, stream>>>(op, packs, out, a, b,
                                                                                        l.scalar_operand, scalar, alpha);
    }
    done = packs * N;
  }
  if (done < l.numel) {
    // The tail of a packed launch (dense: offsets from `done`), or the whole strided launch.
    const int64_t rest = l.numel - done;
    binary_kernel<S, O><<<blocks_for(rest, kThreads), kThreads, 0, stream>>>(
        op, l.indexer, rest, l.contiguous, out + (l.contiguous ? done : 0), a + (l.contiguous ? done : 0),
        l.scalar_operand ? b : b + (l.contiguous ? done : 0), l.scalar_operand, scalar, alpha);
  }
}

template <typename S>
void run_unary(UnaryOp op, const ElementwiseLaunch& l, cudaStream_t stream) {
  auto* a = static_cast<const S*>(l.in[0]);
  if (l.out_dtype == ScalarType::BOOL && !std::is_same_v<S, bool>) {
    unary_kernel<S, bool><<<blocks_for(l.numel, kThreads), kThreads, 0, stream>>>(op, l.indexer, l.numel, l.contiguous,
                                                                                  static_cast<bool*>(l.out), a);
    return;
  }
  auto* out = static_cast<S*>(l.out);
  constexpr int N = 16 / sizeof(S);
  int64_t done = 0;
  if (l.contiguous && aligned16(out) && aligned16(a)) {
    const int64_t packs = l.numel / N;
    if (packs > 0) unary_packed_kernel<S, N><<<blocks_for(packs, kThreads), kThreads, 0, stream>>>(op, packs, out, a);
    done = packs * N;
  }
  if (done < l.numel) {
    const int64_t rest = l.numel - done;
    const int64_t shift = l.contiguous ? done : 0;
    unary_kernel<S, S><<<blocks_for(rest, kThreads), kThreads, 0, stream>>>(op, l.indexer, rest, l.contiguous,
                                                                            out + shift, a + shift);
  }
}

}  // namespace

cudaError_t launch_binary(BinaryOp op, const ElementwiseLaunch& l, cudaStream_t stream) {
  if (l.numel == 0) return cudaSuccess;
  const bool ok = dispatch_storage(l.in_dtype, [&](auto s) {
    using S = decltype(s);
    if (l.out_dtype == ScalarType::BOOL && !std::is_same_v<S, bool>) {
      run_binary<S, bool>(op, l, stream);
    } else {
      run_binary<S, S>(op, l, stream);
    }
  });
  return ok ? cudaGetLastError() : cudaErrorInvalidValue;
}

cudaError_t launch_unary(UnaryOp op, const ElementwiseLaunch& l, cudaStream_t stream) {
  if (l.numel == 0) return cudaSuccess;
  const bool ok = dispatch_storage(l.in_dtype, [&](auto s) { run_unary<decltype(s)>(op, l, stream); });
  return ok ? cudaGetLastError() : cudaErrorInvalidValue;
}

cudaError_t launch_convert(const ElementwiseLaunch& l, cudaStream_t stream) {
  if (l.numel == 0) return cudaSuccess;
  bool ok = false;
  dispatch_storage(l.in_dtype, [&](auto s) {
    using S = decltype(s);
    ok = dispatch_storage(l.out_dtype, [&](auto o) {
      using O = decltype(o);
      convert_kernel<S, O><<<blocks_for(l.numel, kThreads), kThreads, 0, stream>>>(
          l.indexer, l.numel, l.contiguous, static_cast<O*>(l.out), static_cast<const S*>(l.in[0]));
    });
  });
  return ok ? cudaGetLastError() : cudaErrorInvalidValue;
}

cudaError_t launch_where(const ElementwiseLaunch& l, cudaStream_t stream) {
  if (l.numel == 0) return cudaSuccess;
  const bool ok = dispatch_storage(l.in_dtype, [&](auto s) {
    using S = decltype(s);
    where_kernel<S><<<blocks_for(l.numel, kThreads), kThreads, 0, stream>>>(
        l.indexer, l.numel, l.contiguous, static_cast<S*>(l.out), static_cast<const bool*>(l.in[0]),
        static_cast<const S*>(l.in[1]), static_cast<const S*>(l.in[2]));
  });
  return ok ? cudaGetLastError() : cudaErrorInvalidValue;
}

cudaError_t launch_clamp(const ElementwiseLaunch& l, bool has_lo, double lo, bool has_hi, double hi,
                         cudaStream_t stream) {
  if (l.numel == 0) return cudaSuccess;
  const bool ok = dispatch_storage(l.in_dtype, [&](auto s) {
    using S = decltype(s);
    using C = compute_t<S>;
    clamp_kernel<S><<<blocks_for(l.numel, kThreads), kThreads, 0, stream>>>(
        l.indexer, l.numel, l.contiguous, static_cast<S*>(l.out), static_cast<const S*>(l.in[0]), has_lo,
        static_cast<C>(lo), has_hi, static_cast<C>(hi));
  });
  return ok ? cudaGetLastError() : cudaErrorInvalidValue;
}

}  // namespace nrt::exec::cuda
