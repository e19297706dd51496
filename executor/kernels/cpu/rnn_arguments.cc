#include "executor/kernels/cpu/rnn_arguments.h"

#include <string>

namespace nrt::exec::cpu {

Result<RnnArguments> read_arguments(KernelContext& ctx, Cell cell) {
  RnnArguments args;
  NRT_TRY(input, ctx.tensor("input", 0));
  args.input = *input;
  if (cell == Cell::kLstm) {
    NRT_TRY(hx, ctx.tensor_list("hx", 1));
    if (hx->size() != 2) return ctx.error("hx must hold (h0, c0), got " + std::to_string(hx->size()) + " tensors");
    args.hx = *hx;
  } else {
    NRT_TRY(hx, ctx.tensor("hx", 1));
    args.hx = {*hx};
  }
  NRT_TRY(params, ctx.tensor_list("params", 2));
  args.params = *params;
  NRT_TRY(has_biases, ctx.boolean("has_biases", 3));
  args.has_biases = *has_biases;
  NRT_TRY(layers, ctx.int64("num_layers", 4));
  args.layers = *layers;
  NRT_TRY(dropout, ctx.real("dropout", 5));
  NRT_TRY(train, ctx.boolean("train", 6));
  if (*train && *dropout > 0) return ctx.error("training-mode dropout between layers is not supported (inference only)");
  NRT_TRY(bidirectional, ctx.boolean("bidirectional", 7));
  args.bidirectional = *bidirectional;
  NRT_TRY(batch_first, ctx.boolean("batch_first", 8));
  args.batch_first = *batch_first;
  return args;
}

}  // namespace nrt::exec::cpu
