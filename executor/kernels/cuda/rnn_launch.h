// The launcher of the recurrent cell kernel (rnn_kernels.cu): one time step of an LSTM, GRU or
// plain RNN layer for every batch row and hidden unit, from the step's input projection and the
// hidden projection (each [B, G*H], gates in torch's order), biases of G*H (or null), updating h
// (and c for the LSTM) in place and writing h to the step's output rows.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "core/scalar_type.h"

namespace nrt::exec::cuda {

enum class RnnCell : int32_t { kLstm, kGru, kTanh, kRelu };

struct RnnStep {
  RnnCell cell = RnnCell::kLstm;
  int64_t batch = 0, hidden = 0;
  const void* gx = nullptr;  // [B, G*H] (the step's rows of x @ w_ih^T)
  const void* gh = nullptr;  // [B, G*H] (h @ w_hh^T)
  const void* b_ih = nullptr;
  const void* b_hh = nullptr;
  void* h = nullptr;  // [B, H]
  void* c = nullptr;  // [B, H] (LSTM)
  void* out = nullptr;     // the step's output: row b at out + b * out_stride
  int64_t out_stride = 0;  // elements between batch rows of the output
};

// float32 or float64.
cudaError_t launch_rnn_step(ScalarType dtype, const RnnStep& step, cudaStream_t stream);

}  // namespace nrt::exec::cuda
