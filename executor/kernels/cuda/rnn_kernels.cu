// One recurrent step per launch (rnn_launch.h): a thread per (batch row, hidden unit).
#include <cuda_runtime.h>

#include "executor/kernels/cuda/device_types.cuh"
#include "executor/kernels/cuda/rnn_launch.h"

namespace nrt::exec::cuda {
namespace {

template <typename C>
__device__ C sigmoid(C x) {
  return C(1) / (C(1) + exp(-x));
}

template <typename C>
__global__ void rnn_step_kernel(RnnStep s) {
  const int64_t H = s.hidden;
  const int G = s.cell == RnnCell::kLstm ? 4 : s.cell == RnnCell::kGru ? 3 : 1;
  const auto* gx = static_cast<const C*>(s.gx);
  const auto* gh = static_cast<const C*>(s.gh);
  const auto* b_ih = static_cast<const C*>(s.b_ih);
  const auto* b_hh = static_cast<const C*>(s.b_hh);
  auto* h = static_cast<C*>(s.h);
  auto* c = static_cast<C*>(s.c);
  auto* out = static_cast<C*>(s.out);
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < s.batch * H;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t b = i / H, j = i % H;
    const int64_t row = b * G * H;
    auto x_part = [&](int gate) { return gx[row + gate * H + j] + (b_ih ? b_ih[gate * H + j] : C(0)); };
    auto h_part = [&](int gate) { return gh[row + gate * H + j] + (b_hh ? b_hh[gate * H + j] : C(0)); };
    C next;
    switch (s.cell) {
      case RnnCell::kLstm: {
        const C in = sigmoid(x_part(0) + h_part(0)), forget = sigmoid(x_part(1) + h_part(1));
        const C g = tanh(x_part(2) + h_part(2)), o = sigmoid(x_part(3) + h_part(3));
        const C cell = forget * c[i] + in * g;
        c[i] = cell;
        next = o * tanh(cell);
        break;
      }
      case RnnCell::kGru: {
        const C r = sigmoid(x_part(0) + h_part(0)), z = sigmoid(x_part(1) + h_part(1));
        const C n = tanh(x_part(2) + r * h_part(2));
        next = (C(1) - z) * n + z * h[i];
        break;
      }
      case RnnCell::kTanh: next = tanh(x_part(0) + h_part(0)); break;
      default: {
        const C v = x_part(0) + h_part(0);
        next = v > C(0) ? v : C(0);
      }
    }
    h[i] = next;
    out[b * s.out_stride + j] = next;
  }
}

}  // namespace

cudaError_t launch_rnn_step(ScalarType dtype, const RnnStep& s, cudaStream_t stream) {
  if (s.batch * s.hidden == 0) return cudaSuccess;
  const unsigned blocks = blocks_for(s.batch * s.hidden, 256);
  if (dtype == ScalarType::FLOAT32) {
    rnn_step_kernel<float><<<blocks, 256, 0, stream>>>(s);
  } else if (dtype == ScalarType::FLOAT64) {
    rnn_step_kernel<double><<<blocks, 256, 0, stream>>>(s);
  } else {
    return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace nrt::exec::cuda
