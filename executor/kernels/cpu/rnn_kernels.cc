// Recurrent layers as torch.nn's LSTM, GRU and RNN export them: lstm.input, gru.input,
// rnn_tanh.input and rnn_relu.input — multi-layer, bidirectional, batch_first or time-major,
// batched or unbatched (2-D input), with or without biases. Inference only: dropout between
// layers applies in training, which is refused. float32 and float64.
//
// Per layer and direction, the input projection of the whole sequence is one GEMM
// (x [T*B, in] @ w_ih^T); each step adds h @ w_hh^T (one GEMM of [B, H]) and applies the cell:
//   LSTM (gates i, f, g, o): c' = f*c + i*g, h' = o * tanh(c')
//   GRU (gates r, z, n): n = tanh(x_n + b_in + r * (h W_hn + b_hn)), h' = (1 - z) * n + z * h
//   RNN: h' = tanh or relu(x W_ih + b_ih + h W_hh + b_hh)
#include <cmath>
#include <vector>

#include "executor/kernels/cpu/dtype_dispatch.h"
#include "executor/kernels/cpu/broadcast.h"
#include "executor/kernels/cpu/gemm.h"
#include "executor/kernels/cpu/output_slot.h"
#include "executor/kernels/cpu/rnn_arguments.h"
#include "executor/kernels/cpu/tensor_copy.h"

namespace nrt::exec::cpu {
namespace {

// `w` [rows, cols] as a [cols, rows] view of a contiguous copy: w^T for the GEMMs.
Tensor transposed(const Tensor& w, ScalarType dtype) {
  const Tensor c = contiguous_as(w, dtype);
  return c.as_strided({c.sizes()[1], c.sizes()[0]}, {1, c.sizes()[1]}, c.storage_offset());
}

template <class C>
C sigmoid(C x) { return C(1) / (C(1) + std::exp(-x)); }

template <class C>
Status run_rnn(KernelContext& ctx, Cell cell, const RnnArguments& args, ScalarType dtype) {
  const bool batched = args.input.dim() == 3;
  const int64_t directions = args.bidirectional ? 2 : 1;
  const int64_t G = gates_of(cell);
  // Time-major [T, B, in], contiguous.
  Tensor x = args.input;
  if (!batched) x = x.as_strided({x.sizes()[0], 1, x.sizes()[1]}, {x.strides()[0], 0, x.strides()[1]}, x.storage_offset());
  if (args.batch_first && batched) {
    x = x.as_strided({x.sizes()[1], x.sizes()[0], x.sizes()[2]}, {x.strides()[1], x.strides()[0], x.strides()[2]},
                     x.storage_offset());
  }
  Tensor layer_input = converted_copy(x, dtype);
  const int64_t T = layer_input.sizes()[0], B = layer_input.sizes()[1];
  const Tensor& h0 = args.hx[0];
  const int64_t H = h0.dim() > 0 ? h0.sizes().back() : 0;
  const std::vector<int64_t> state_sizes = batched ? std::vector<int64_t>{args.layers * directions, B, H}
                                                   : std::vector<int64_t>{args.layers * directions, H};
  for (const Tensor& state : args.hx) {
    if (state.sizes() != state_sizes) {
      return ctx.error("hidden state is " + state.type_string() + ", expected shape " + shape_string(state_sizes));
    }
  }
  const size_t per_direction = args.has_biases ? 4 : 2;
  if (args.params.size() != per_direction * static_cast<size_t>(args.layers * directions)) {
    return ctx.error("expects " + std::to_string(per_direction * static_cast<size_t>(args.layers * directions)) +
                     " parameter tensors, got " + std::to_string(args.params.size()) +
                     " (projections, proj_size > 0, are not supported)");
  }
  const Tensor h_init = converted_copy(args.hx[0], dtype);
  const Tensor c_init = cell == Cell::kLstm ? converted_copy(args.hx[1], dtype) : Tensor();
  Tensor hy = Tensor::empty(dtype, {args.layers * directions, B, H});
  Tensor cy = cell == Cell::kLstm ? Tensor::empty(dtype, {args.layers * directions, B, H}) : Tensor();

  std::vector<C> h(static_cast<size_t>(B * H)), c(static_cast<size_t>(B * H));
  for (int64_t layer = 0; layer < args.layers; ++layer) {
    const int64_t in = layer_input.sizes()[2];
    Tensor layer_output = Tensor::empty(dtype, {T, B, directions * H});
    for (int64_t d = 0; d < directions; ++d) {
      const size_t p = per_direction * static_cast<size_t>(layer * directions + d);
      const Tensor& w_ih = args.params[p];
      const Tensor& w_hh = args.params[p + 1];
      if (w_ih.sizes() != std::vector<int64_t>{G * H, in} || w_hh.sizes() != std::vector<int64_t>{G * H, H}) {
        return ctx.error("layer " + std::to_string(layer) + " weights are " + w_ih.type_string() + " and " +
                         w_hh.type_string() + ", expected [" + std::to_string(G * H) + "," + std::to_string(in) +
                         "] and [" + std::to_string(G * H) + "," + std::to_string(H) + "]");
      }
      std::vector<C> b_ih(static_cast<size_t>(G * H), C(0)), b_hh(static_cast<size_t>(G * H), C(0));
      if (args.has_biases) {
        for (size_t which : {p + 2, p + 3}) {
          if (args.params[which].sizes() != std::vector<int64_t>{G * H}) {
            return ctx.error("layer " + std::to_string(layer) + " bias is " + args.params[which].type_string() +
                             ", expected [" + std::to_string(G * H) + "]");
          }
          const Tensor b = contiguous_as(args.params[which], dtype);
          auto& target = which == p + 2 ? b_ih : b_hh;
          for (int64_t i = 0; i < G * H; ++i) target[static_cast<size_t>(i)] = b.data<C>()[i];
        }
      }
      // The input projection of every step at once.
      Tensor xw = Tensor::empty(dtype, {T * B, G * H});
      gemm(layer_input.as_strided({T * B, in}, {in, 1}, 0), transposed(w_ih, dtype), xw, 1.0, 0.0);
      const Tensor w_hh_t = transposed(w_hh, dtype);
      Tensor hw = Tensor::empty(dtype, {B, G * H});
      const int64_t state = layer * directions + d;
      const C* h_start = h_init.data<C>() + state * B * H;
      std::copy(h_start, h_start + B * H, h.begin());
      if (cell == Cell::kLstm) {
        const C* c_start = c_init.data<C>() + state * B * H;
        std::copy(c_start, c_start + B * H, c.begin());
      }
      Tensor h_view = Tensor::empty(dtype, {B, H});
      for (int64_t step = 0; step < T; ++step) {
        const int64_t t = d == 0 ? step : T - 1 - step;
        std::copy(h.begin(), h.end(), h_view.data<C>());
        gemm(h_view, w_hh_t, hw, 1.0, 0.0);
        C* out = layer_output.data<C>() + (t * B) * directions * H + d * H;
        for (int64_t b = 0; b < B; ++b) {
          const C* gx = xw.data<C>() + (t * B + b) * G * H;
          const C* gh = hw.data<C>() + b * G * H;
          C* hb = h.data() + b * H;
          for (int64_t j = 0; j < H; ++j) {
            auto pre = [&](int64_t gate) {
              const size_t k = static_cast<size_t>(gate * H + j);
              return gx[k] + b_ih[k] + gh[k] + b_hh[k];
            };
            switch (cell) {
              case Cell::kLstm: {
                const C i = sigmoid(pre(0)), f = sigmoid(pre(1)), g = std::tanh(pre(2)), o = sigmoid(pre(3));
                C& cb = c[static_cast<size_t>(b * H + j)];
                cb = f * cb + i * g;
                hb[j] = o * std::tanh(cb);
                break;
              }
              case Cell::kGru: {
                const C r = sigmoid(pre(0)), z = sigmoid(pre(1));
                const size_t k = static_cast<size_t>(2 * H + j);
                const C n = std::tanh(gx[k] + b_ih[k] + r * (gh[k] + b_hh[k]));
                hb[j] = (C(1) - z) * n + z * hb[j];
                break;
              }
              case Cell::kTanh:
                hb[j] = std::tanh(pre(0));
                break;
              case Cell::kRelu: {
                const C v = pre(0);
                hb[j] = v > C(0) ? v : C(0);
                break;
              }
            }
          }
          std::copy(hb, hb + H, out + b * directions * H);
        }
      }
      std::copy(h.begin(), h.end(), hy.data<C>() + state * B * H);
      if (cell == Cell::kLstm) std::copy(c.begin(), c.end(), cy.data<C>() + state * B * H);
    }
    layer_input = std::move(layer_output);
  }

  // Outputs in the caller's layout: batch_first and unbatched views of the time-major result.
  Tensor result = layer_input;
  if (!batched) {
    result = result.as_strided({T, directions * H}, {directions * H, 1}, 0);
  } else if (args.batch_first) {
    result = result.as_strided({B, T, directions * H}, {directions * H, B * directions * H, 1}, 0);
  }
  NRT_TRY(out, bind_output(ctx, 0, dtype, result.sizes()));
  copy_into(*out, result);
  auto write_state = [&](size_t index, const Tensor& value) -> Status {
    const Tensor shaped = batched ? value : value.as_strided(state_sizes, {H, 1}, 0);
    NRT_TRY(slot, OutputSlot::bind_secondary(ctx, index, dtype, state_sizes));
    copy_into(slot->tensor(), shaped);
    return Status::Ok();
  };
  if (Status s = write_state(1, hy); !s.ok()) return s;
  if (cell == Cell::kLstm) return write_state(2, cy);
  return Status::Ok();
}

template <Cell kCell>
Status rnn(KernelContext& ctx) {
  NRT_TRY(args, read_arguments(ctx, kCell));
  if (args->input.dim() != 2 && args->input.dim() != 3) {
    return ctx.error("input must be 2-D (unbatched) or 3-D, got " + args->input.type_string());
  }
  const ScalarType dtype = args->input.dtype();
  if (dtype == ScalarType::FLOAT32) return run_rnn<float>(ctx, kCell, *args, dtype);
  if (dtype == ScalarType::FLOAT64) return run_rnn<double>(ctx, kCell, *args, dtype);
  return unsupported_dtype(ctx, dtype);
}

constexpr DeviceKind kCpu = DeviceKind::kCpu;
const KernelRegistration kRegistrations[] = {
    {"aten::lstm.input", kCpu, {&rnn<Cell::kLstm>, false}},
    {"aten::gru.input", kCpu, {&rnn<Cell::kGru>, false}},
    {"aten::rnn_tanh.input", kCpu, {&rnn<Cell::kTanh>, false}},
    {"aten::rnn_relu.input", kCpu, {&rnn<Cell::kRelu>, false}},
};

}  // namespace
}  // namespace nrt::exec::cpu
