// The arguments of torch's recurrent layers (lstm.input, gru.input, rnn_tanh.input,
// rnn_relu.input), read once for the host's kernels (rnn_kernels.cc) and CUDA's.
#pragma once

#include <cstdint>
#include <vector>

#include "executor/runtime/kernel.h"

namespace nrt::exec::cpu {

enum class Cell { kLstm, kGru, kTanh, kRelu };

// Gates per hidden unit: LSTM i, f, g, o; GRU r, z, n; plain RNN one.
constexpr int64_t gates_of(Cell cell) { return cell == Cell::kLstm ? 4 : cell == Cell::kGru ? 3 : 1; }

struct RnnArguments {
  Tensor input;
  std::vector<Tensor> hx;  // h0 (and c0 for LSTM), [layers * directions, B, H] or unbatched [L*D, H]
  std::vector<Tensor> params;
  bool has_biases = true;
  int64_t layers = 1;
  bool bidirectional = false;
  bool batch_first = false;
};

// The arguments of `cell`'s op; training-mode dropout is refused (inference only).
Result<RnnArguments> read_arguments(KernelContext& ctx, Cell cell);

}  // namespace nrt::exec::cpu
