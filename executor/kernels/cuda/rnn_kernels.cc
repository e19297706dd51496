// Recurrent layers on CUDA (lstm.input, gru.input, rnn_tanh.input, rnn_relu.input), with the
// host's argument rules (executor/kernels/cpu/rnn_arguments.h): per layer and direction the
// input projection of every step is one cuBLASLt product, and each step is one product of the
// hidden state and one cell kernel (rnn_kernels.cu). float32 and float64, as on the host.
#include <optional>
#include <string>
#include <vector>

#include "executor/kernels/cpu/output_slot.h"
#include "executor/kernels/cpu/rnn_arguments.h"
#include "executor/kernels/cuda/kernel_support.h"
#include "executor/kernels/cuda/rnn_launch.h"

namespace nrt::exec::cuda {
namespace {

using cpu::Cell;

RnnCell device_cell(Cell cell) {
  switch (cell) {
    case Cell::kLstm: return RnnCell::kLstm;
    case Cell::kGru: return RnnCell::kGru;
    case Cell::kTanh: return RnnCell::kTanh;
    case Cell::kRelu: return RnnCell::kRelu;
  }
  return RnnCell::kTanh;
}

// `w` [rows, cols] as the [1, cols, rows] transposed view of a contiguous copy in `dtype`.
Result<Tensor> transposed(const KernelContext& ctx, const Tensor& w, ScalarType dtype) {
  NRT_TRY(converted, as_dtype(ctx, w, dtype));
  NRT_TRY(c, contiguous(ctx, *converted));
  return c->as_strided({1, c->sizes()[1], c->sizes()[0]}, {0, 1, c->sizes()[1]}, c->storage_offset());
}

template <Cell kCell>
Status rnn(KernelContext& ctx) {
  NRT_TRY(args, cpu::read_arguments(ctx, kCell));
  const Tensor& input = args->input;
  if (input.dim() != 2 && input.dim() != 3) return ctx.error("input must be 2-D (unbatched) or 3-D, got " + input.type_string());
  const ScalarType dtype = input.dtype();
  if (dtype != ScalarType::FLOAT32 && dtype != ScalarType::FLOAT64) {
    return ctx.error("recurrent layers need float32 or float64, got " + input.type_string());
  }
  const bool batched = input.dim() == 3;
  const int64_t directions = args->bidirectional ? 2 : 1, G = cpu::gates_of(kCell);
  Tensor x = input;
  if (!batched) x = x.as_strided({x.sizes()[0], 1, x.sizes()[1]}, {x.strides()[0], 0, x.strides()[1]}, x.storage_offset());
  if (args->batch_first && batched) {
    x = x.as_strided({x.sizes()[1], x.sizes()[0], x.sizes()[2]}, {x.strides()[1], x.strides()[0], x.strides()[2]},
                     x.storage_offset());
  }
  NRT_TRY(time_major, contiguous(ctx, x));
  Tensor layer_input = *time_major;
  const int64_t T = layer_input.sizes()[0], B = layer_input.sizes()[1];
  const int64_t H = args->hx[0].dim() > 0 ? args->hx[0].sizes().back() : 0;
  const std::vector<int64_t> state_sizes = batched ? std::vector<int64_t>{args->layers * directions, B, H}
                                                   : std::vector<int64_t>{args->layers * directions, H};
  for (const Tensor& state : args->hx) {
    if (state.sizes() != state_sizes) return ctx.error("hidden state is " + state.type_string() + ", expected another shape");
  }
  const size_t per_direction = args->has_biases ? 4 : 2;
  if (args->params.size() != per_direction * static_cast<size_t>(args->layers * directions)) {
    return ctx.error("expects " + std::to_string(per_direction * static_cast<size_t>(args->layers * directions)) +
                     " parameter tensors, got " + std::to_string(args->params.size()));
  }
  const std::vector<int64_t> full_state{args->layers * directions, B, H};
  Tensor hy = Tensor::empty(dtype, full_state, input.device());
  Tensor cy = kCell == Cell::kLstm ? Tensor::empty(dtype, full_state, input.device()) : Tensor();
  // An unbatched state [L*D, H] is read as [L*D, 1, H].
  auto as_full = [&](const Tensor& s) {
    return batched ? s : s.as_strided(full_state, {s.strides()[0], 0, s.strides()[1]}, s.storage_offset());
  };
  NRT_RETURN_IF_ERROR(copy_into(ctx, hy, as_full(args->hx[0])));
  if (kCell == Cell::kLstm) NRT_RETURN_IF_ERROR(copy_into(ctx, cy, as_full(args->hx[1])));
  for (int64_t layer = 0; layer < args->layers; ++layer) {
    const int64_t in = layer_input.sizes()[2];
    Tensor layer_output = Tensor::empty(dtype, {T, B, directions * H}, input.device());
    for (int64_t d = 0; d < directions; ++d) {
      const size_t p = per_direction * static_cast<size_t>(layer * directions + d);
      const Tensor& w_ih = args->params[p];
      const Tensor& w_hh = args->params[p + 1];
      if (w_ih.sizes() != std::vector<int64_t>{G * H, in} || w_hh.sizes() != std::vector<int64_t>{G * H, H}) {
        return ctx.error("layer " + std::to_string(layer) + " weights are " + w_ih.type_string() + " and " + w_hh.type_string());
      }
      std::optional<Tensor> b_ih, b_hh;
      if (args->has_biases) {
        for (size_t which : {p + 2, p + 3}) {
          if (args->params[which].sizes() != std::vector<int64_t>{G * H}) return ctx.error("a bias has the wrong shape");
          NRT_TRY(converted, as_dtype(ctx, args->params[which], dtype));
          NRT_TRY(dense, contiguous(ctx, *converted));
          (which == p + 2 ? b_ih : b_hh) = *dense;
        }
      }
      // Every step's input projection at once: [1, T*B, in] @ [1, in, G*H].
      NRT_TRY(w_ih_t, transposed(ctx, w_ih, dtype));
      NRT_TRY(w_hh_t, transposed(ctx, w_hh, dtype));
      Tensor xw = Tensor::empty(dtype, {1, T * B, G * H}, input.device());
      NRT_RETURN_IF_ERROR(batched_product(ctx, layer_input.as_strided({1, T * B, in}, {0, in, 1}, layer_input.storage_offset()),
                                          *w_ih_t, xw, 1.0));
      const int64_t state = layer * directions + d;
      const Tensor h = hy.as_strided({1, B, H}, {0, H, 1}, state * B * H);
      Tensor hw = Tensor::empty(dtype, {1, B, G * H}, input.device());
      const int64_t element = static_cast<int64_t>(hy.element_size());
      for (int64_t step = 0; step < T; ++step) {
        const int64_t t = d == 0 ? step : T - 1 - step;
        NRT_RETURN_IF_ERROR(batched_product(ctx, h, *w_hh_t, hw, 1.0));
        RnnStep s;
        s.cell = device_cell(kCell);
        s.batch = B;
        s.hidden = H;
        s.gx = xw.raw_data() + t * B * G * H * element;
        s.gh = hw.raw_data();
        s.b_ih = b_ih ? b_ih->raw_data() : nullptr;
        s.b_hh = b_hh ? b_hh->raw_data() : nullptr;
        s.h = h.raw_data();
        s.c = kCell == Cell::kLstm ? cy.raw_data() + state * B * H * element : nullptr;
        s.out = layer_output.raw_data() + (t * B * directions * H + d * H) * element;
        s.out_stride = directions * H;
        NRT_RETURN_IF_ERROR(launch_result(ctx, launch_rnn_step(dtype, s, context_of(ctx).stream), "recurrent step launch"));
      }
    }
    layer_input = layer_output;
  }
  Tensor result = layer_input;
  if (!batched) {
    result = result.as_strided({T, directions * H}, {directions * H, 1}, 0);
  } else if (args->batch_first) {
    result = result.as_strided({B, T, directions * H}, {directions * H, B * directions * H, 1}, 0);
  }
  NRT_TRY(out, cpu::bind_output(ctx, 0, dtype, result.sizes()));
  NRT_RETURN_IF_ERROR(copy_into(ctx, *out, result));
  auto write_state = [&](size_t index, const Tensor& value) -> Status {
    const Tensor shaped = batched ? value : value.as_strided(state_sizes, {H, 1}, 0);
    NRT_TRY(slot, cpu::OutputSlot::bind_secondary(ctx, index, dtype, state_sizes));
    return copy_into(ctx, slot->tensor(), shaped);
  };
  NRT_RETURN_IF_ERROR(write_state(1, hy));
  if (kCell == Cell::kLstm) return write_state(2, cy);
  return {};
}

constexpr DeviceKind kCuda = DeviceKind::kCuda;
const KernelRegistration kRegistrations[] = {
    {"aten::lstm.input", kCuda, {&rnn<Cell::kLstm>, false}},
    {"aten::gru.input", kCuda, {&rnn<Cell::kGru>, false}},
    {"aten::rnn_tanh.input", kCuda, {&rnn<Cell::kTanh>, false}},
    {"aten::rnn_relu.input", kCuda, {&rnn<Cell::kRelu>, false}},
};

}  // namespace
}  // namespace nrt::exec::cuda
