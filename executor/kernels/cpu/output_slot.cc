#include "executor/kernels/cpu/output_slot.h"

#include <new>

#include "executor/kernels/cpu/broadcast.h"
#include "executor/kernels/cpu/channels_last_layout.h"
#include "executor/kernels/cpu/dim_vector.h"
#include "executor/kernels/cpu/tensor_copy.h"
#include "core/scalar_type.h"

namespace nrt::exec::cpu {
namespace {

// Sizes come from arguments (zeros, full, arange, view): refuse negative ones and byte counts
// that overflow or cannot be allocated, as errors rather than crashes.
Result<Tensor> allocate(const KernelContext& ctx, ScalarType dtype, std::span<const int64_t> sizes) {
  int64_t bytes = static_cast<int64_t>(nrt::element_size(dtype));
  for (int64_t s : sizes) {
    if (s < 0) return ctx.error("negative size in output shape " + shape_string(sizes));
    if (__builtin_mul_overflow(bytes, s, &bytes)) return ctx.error("output shape " + shape_string(sizes) + " is too large");
  }
  try {
    return Tensor::empty(dtype, std::vector<int64_t>(sizes.begin(), sizes.end()), ctx.device());
  } catch (const std::bad_alloc& failure) {
    Error error = kernel_memory_error(ctx, failure);
    error.message += " (an output of shape " + shape_string(sizes) + ")";
    return error;
  }
}

// The tensor in slot `index` after binding: the placed one when it fits, else a fresh one put there.
Result<const Tensor*> bind_slot(KernelContext& ctx, size_t index, ScalarType dtype, std::span<const int64_t> sizes) {
  if (index >= ctx.outputs().size()) {
    return ctx.error("expects at least " + std::to_string(index + 1) + " outputs, the node has " +
                     std::to_string(ctx.outputs().size()));
  }
  RuntimeValue& slot = ctx.outputs()[index];
  if (const auto* placed = std::get_if<Tensor>(&slot)) {
    if (placed->defined() && placed->dtype() == dtype && same_dims(placed->sizes(), sizes) &&
        placed->device() == ctx.device()) {
      return placed;
    }
  }
  NRT_TRY(fresh, allocate(ctx, dtype, sizes));
  slot = std::move(*fresh);
  return &std::get<Tensor>(slot);
}

}  // namespace

Result<OutputSlot> OutputSlot::bind(KernelContext& ctx, size_t index, ScalarType dtype, std::vector<int64_t> sizes) {
  NRT_TRY(bound, bind_slot(ctx, index, dtype, sizes));
  return OutputSlot(**bound);
}

Result<OutputSlot> OutputSlot::bind_secondary(KernelContext& ctx, size_t index, ScalarType dtype,
                                              std::vector<int64_t> sizes) {
  if (index < ctx.outputs().size()) return bind(ctx, index, dtype, std::move(sizes));
  NRT_TRY(scratch, allocate(ctx, dtype, sizes));
  return OutputSlot(std::move(*scratch));
}

Tensor OutputSlot::staging(ScalarType dtype) {
  if (output_.dtype() == dtype && output_.is_contiguous()) return output_;
  staging_ = Tensor::empty(dtype, output_.sizes(), output_.device());
  return staging_;
}

void OutputSlot::commit() {
  if (staging_.defined()) copy_into(output_, staging_);
  staging_ = Tensor();
}

Result<Tensor> bind_output(KernelContext& ctx, size_t index, ScalarType dtype, std::vector<int64_t> sizes) {
  NRT_TRY(bound, bind_slot(ctx, index, dtype, sizes));
  return **bound;
}

Result<const Tensor*> bind_output_ref(KernelContext& ctx, size_t index, ScalarType dtype,
                                      std::span<const int64_t> sizes) {
  return bind_slot(ctx, index, dtype, sizes);
}

Result<Tensor> bind_channels_last_output(KernelContext& ctx, size_t index, const std::vector<int64_t>& sizes) {
  NRT_TRY(placed, bind_slot(ctx, index, ScalarType::FLOAT32, sizes));
  const Tensor& tensor = **placed;
  if (is_channels_last(tensor)) return tensor;
  const Tensor out =
      tensor.is_contiguous()
          ? tensor.as_strided(sizes, channels_last_strides(sizes), tensor.storage_offset())
          : Tensor::empty(ScalarType::FLOAT32, {sizes[0], sizes[2], sizes[3], sizes[1]})
                .as_strided(sizes, channels_last_strides(sizes), 0);
  NRT_RETURN_IF_ERROR(set_output(ctx, index, out));
  return out;
}

Status set_output(KernelContext& ctx, size_t index, RuntimeValue value) {
  if (index >= ctx.outputs().size()) {
    return ctx.error("expects at least " + std::to_string(index + 1) + " outputs, the node has " +
                     std::to_string(ctx.outputs().size()));
  }
  ctx.outputs()[index] = std::move(value);
  return Status::Ok();
}

}  // namespace nrt::exec::cpu
