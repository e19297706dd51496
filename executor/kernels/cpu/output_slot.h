// Where a kernel writes output i. The executor may have placed a tensor there (planned arena
// memory with the graph's static shape); it is used when its dtype and sizes match, else a fresh
// tensor replaces it (negative sizes, overflowing or unallocatable byte counts are errors). Kernels that need contiguous memory of a compute dtype (BLAS, float
// computation of Half/BFloat16) write into staging() and call commit(), which converts into the
// output when staging was scratch.
#pragma once

#include <span>
#include <vector>

#include "executor/runtime/kernel.h"

namespace nrt::exec::cpu {

class OutputSlot {
 public:
  static Result<OutputSlot> bind(KernelContext& ctx, size_t index, ScalarType dtype, std::vector<int64_t> sizes);
  // For secondary outputs (statistics, indices) a graph may not record: when the node has no
  // output `index`, the kernel still gets a tensor to write, which is then dropped.
  static Result<OutputSlot> bind_secondary(KernelContext& ctx, size_t index, ScalarType dtype,
                                           std::vector<int64_t> sizes);

  const Tensor& tensor() const { return output_; }
  // A contiguous tensor of `dtype` with the output's sizes: the output itself when it already is
  // one, else scratch that commit() copies into the output.
  Tensor staging(ScalarType dtype);
  void commit();

 private:
  OutputSlot(Tensor output) : output_(std::move(output)) {}
  Tensor output_;
  Tensor staging_;
};

// Binds output `index` and returns its tensor (the common case without staging).
Result<Tensor> bind_output(KernelContext& ctx, size_t index, ScalarType dtype, std::vector<int64_t> sizes);
// The same, returning the tensor the slot holds rather than a copy (whose sizes and strides would
// be allocated): kernels that run per tiny node use it. Valid until the slot is assigned again.
Result<const Tensor*> bind_output_ref(KernelContext& ctx, size_t index, ScalarType dtype,
                                      std::span<const int64_t> sizes);

// Binds float32 output `index` of 4-D `sizes` [N, C, H, W] laid out channels-last (NHWC in
// memory, its strides saying so: channels_last_layout.h): the planned memory viewed so, or a fresh
// NHWC tensor where the placed one is not dense. For the results the plan marked channels-last
// (convolution_epilogue.h's kChannelsLastOutput).
Result<Tensor> bind_channels_last_output(KernelContext& ctx, size_t index, const std::vector<int64_t>& sizes);

// Sets output `index` to `value` (views, lists, symbolic values).
Status set_output(KernelContext& ctx, size_t index, RuntimeValue value);

}  // namespace nrt::exec::cpu
