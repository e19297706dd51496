// Tensors made from arguments: zeros, ones, full, empty (contents unspecified), arange, scalar_tensor,
// and the _like / new_ forms (dtype defaults to the input's). Layout, device, pin_memory and
// memory_format arguments are accepted and ignored (strided, contiguous; the device is the node's).
// The same kernels serve CUDA: a value is made on the host and broadcast on the device by its
// strided copy (executor/runtime/tensor_copy.h), an arange is made on the host and copied over.
#include <algorithm>
#include <cmath>

#include "executor/kernels/cpu/broadcast.h"
#include "executor/kernels/cpu/dtype_dispatch.h"
#include "executor/kernels/cpu/operand.h"
#include "executor/kernels/cpu/output_slot.h"
#include "executor/kernels/cpu/tensor_copy.h"
#include "executor/runtime/tensor_copy.h"

namespace nrt::exec::cpu {
namespace {

Result<std::vector<int64_t>> read_sizes(const KernelContext& ctx, std::string_view name, int position) {
  NRT_TRY(sizes, ctx.int_list(name, position));
  for (int64_t s : *sizes) {
    if (s < 0) return ctx.error("negative size in " + shape_string(*sizes));
  }
  return sizes;
}

Status make_filled(KernelContext& ctx, const std::vector<int64_t>& sizes, ScalarType dtype,
                   std::optional<ScalarValue> value) {
  if (value && !is_kernel_dtype(dtype)) return unsupported_dtype(ctx, dtype);
  NRT_TRY(out, bind_output(ctx, 0, dtype, sizes));
  if (value) fill_with(*out, *value);
  return Status::Ok();
}

// The fill value of full(): None for empty, else a constant or the `fill_value` argument.
enum class Fill { kEmpty, kZero, kOne, kArgument };

Result<std::optional<ScalarValue>> fill_value(const KernelContext& ctx, Fill fill, int position) {
  switch (fill) {
    case Fill::kEmpty: return std::optional<ScalarValue>{};
    case Fill::kZero: return std::optional<ScalarValue>(ScalarValue::of_int(0));
    case Fill::kOne: return std::optional<ScalarValue>(ScalarValue::of_int(1));
    case Fill::kArgument: {
      NRT_TRY(v, read_scalar(ctx, "fill_value", position));
      return std::optional<ScalarValue>(*v);
    }
  }
  return std::optional<ScalarValue>{};
}

// zeros(SymInt[] size, *, ScalarType? dtype=None, ...); full(SymInt[] size, Scalar fill_value, *, dtype, ...)
template <Fill kFill>
Status from_size(KernelContext& ctx) {
  NRT_TRY(sizes, read_sizes(ctx, "size", 0));
  NRT_TRY(value, fill_value(ctx, kFill, 1));
  NRT_TRY(dtype, ctx.scalar_type("dtype", kFill == Fill::kArgument ? 2 : 1));
  // full() infers its dtype from the fill value; the others default to float32.
  const ScalarType fallback = kFill == Fill::kArgument ? (*value)->dtype() : ScalarType::FLOAT32;
  return make_filled(ctx, *sizes, dtype->value_or(fallback), *value);
}

// zeros_like(Tensor self, *, ScalarType? dtype=None, ...); full_like(Tensor self, Scalar fill_value, *, dtype, ...)
template <Fill kFill>
Status like(KernelContext& ctx) {
  NRT_TRY(self, ctx.tensor("self", 0));
  NRT_TRY(value, fill_value(ctx, kFill, 1));
  NRT_TRY(dtype, ctx.scalar_type("dtype", kFill == Fill::kArgument ? 2 : 1));
  return make_filled(ctx, self->sizes(), dtype->value_or(self->dtype()), *value);
}

// new_zeros(Tensor self, SymInt[] size, *, ScalarType? dtype=None, ...); new_full(self, size, fill_value, *, ...)
template <Fill kFill>
Status new_from(KernelContext& ctx) {
  NRT_TRY(self, ctx.tensor("self", 0));
  NRT_TRY(sizes, read_sizes(ctx, "size", 1));
  NRT_TRY(value, fill_value(ctx, kFill, 2));
  NRT_TRY(dtype, ctx.scalar_type("dtype", kFill == Fill::kArgument ? 3 : 2));
  return make_filled(ctx, *sizes, dtype->value_or(self->dtype()), *value);
}

// fill.Scalar(Tensor self, Scalar value), fill.Tensor(Tensor self, Tensor value) (0-d), zero(self):
// self's shape and dtype, every element the value (the functional forms of fill_ and zero_).
Status fill(KernelContext& ctx) {
  NRT_TRY(self, ctx.tensor("self", 0));
  std::optional<ScalarValue> value;
  if (const RuntimeValue* arg = ctx.find("value", 1); arg != nullptr && std::holds_alternative<Tensor>(*arg)) {
    const Tensor& given = std::get<Tensor>(*arg);
    // A value on a device is read through a copy to the host.
    NRT_TRY(t, given.device().kind == DeviceKind::kCpu ? Result<Tensor>(given) : exec::copy_to_device(given, Device{}));
    if (t->dim() != 0) return ctx.error("fill expects a 0-d value tensor, got " + t->type_string());
    if (is_floating_dtype(t->dtype())) {
      value = ScalarValue::of_float(*converted_copy(*t, ScalarType::FLOAT64).data<double>());
    } else {
      value = ScalarValue::of_int(*converted_copy(*t, ScalarType::INT64).data<int64_t>());
    }
  } else if (ctx.target().starts_with("aten::zero")) {
    value = ScalarValue::of_int(0);
  } else {
    NRT_TRY(scalar, read_scalar(ctx, "value", 1));
    value = *scalar;
  }
  return make_filled(ctx, self->sizes(), self->dtype(), value);
}

// empty_strided(SymInt[] size, SymInt[] stride, *, dtype, ...): contiguous here, which holds the
// same values; nothing reads the strides of a fresh tensor but views made from it.
Status empty_strided(KernelContext& ctx) {
  NRT_TRY(sizes, read_sizes(ctx, "size", 0));
  NRT_TRY(dtype, ctx.scalar_type("dtype", 2));
  return make_filled(ctx, *sizes, dtype->value_or(ScalarType::FLOAT32), std::nullopt);
}

// empty_permuted(SymInt[] size, int[] physical_layout, *, dtype, ...): contiguous here too, as
// empty_strided; physical_layout must be a permutation of the dims.
Status empty_permuted(KernelContext& ctx) {
  NRT_TRY(sizes, read_sizes(ctx, "size", 0));
  NRT_TRY(layout, ctx.int_list("physical_layout", 1));
  std::vector<int64_t> sorted = *layout;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (sorted[i] != static_cast<int64_t>(i)) sorted.clear();
  }
  if (sorted.size() != sizes->size()) {
    return ctx.error("physical_layout " + shape_string(*layout) + " is not a permutation of the " +
                     std::to_string(sizes->size()) + " dims of " + shape_string(*sizes));
  }
  NRT_TRY(dtype, ctx.scalar_type("dtype", 2));
  return make_filled(ctx, *sizes, dtype->value_or(ScalarType::FLOAT32), std::nullopt);
}

// scalar_tensor(Scalar s, *, ScalarType? dtype=None, ...)
Status scalar_tensor(KernelContext& ctx) {
  NRT_TRY(s, read_scalar(ctx, "s", 0));
  NRT_TRY(dtype, ctx.scalar_type("dtype", 1));
  return make_filled(ctx, {}, dtype->value_or(ScalarType::FLOAT32), *s);
}

// arange.default(Scalar end, *, dtype), arange.start(Scalar start, Scalar end, *, dtype),
// arange.start_step(Scalar start, Scalar end, Scalar step=1, *, dtype)
Status arange_with(KernelContext& ctx, bool has_start, bool has_step) {
  ScalarValue start = ScalarValue::of_int(0), step = ScalarValue::of_int(1);
  if (has_start) {
    NRT_TRY(v, read_scalar(ctx, "start", 0));
    start = *v;
  }
  NRT_TRY(end, read_scalar(ctx, "end", has_start ? 1 : 0));
  if (has_step) {
    NRT_TRY(v, read_scalar(ctx, "step", 2, ScalarValue::of_int(1)));
    step = *v;
  }
  NRT_TRY(dtype_arg, ctx.scalar_type("dtype", has_step ? 3 : has_start ? 2 : 1));
  const bool any_float = start.is_floating() || end->is_floating() || step.is_floating();
  const ScalarType dtype = dtype_arg->value_or(any_float ? ScalarType::FLOAT32 : ScalarType::INT64);
  const double first = start.to_double(), last = end->to_double(), delta = step.to_double();
  if (delta == 0.0) return ctx.error("step must be nonzero");
  if (!std::isfinite(first) || !std::isfinite(last)) return ctx.error("unsupported range: bounds must be finite");
  if ((delta > 0 && last < first) || (delta < 0 && last > first)) {
    return ctx.error("the bounds are inconsistent with the sign of step");
  }
  const double count = std::ceil((last - first) / delta);
  if (count > 9.0e18) return ctx.error("the range has too many elements");
  const auto n = static_cast<int64_t>(count);
  NRT_TRY(out, bind_output(ctx, 0, dtype, {n}));
  // Off the host the values are made there and copied over.
  const Tensor host = out->device().kind == DeviceKind::kCpu ? *out : Tensor::empty(dtype, {n});
  NRT_RETURN_IF_ERROR(dispatch_dtype<kFloating | kIntegral>(ctx, dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* data = host.template data<T>();
    const int64_t stride = host.strides()[0];
    if (!any_float && is_integral_v<T>) {
      for (int64_t i = 0; i < n; ++i) {
        data[i * stride] = convert<T>(wrapping_add(start.integer, wrapping_mul(step.integer, i)));
      }
    } else {
      for (int64_t i = 0; i < n; ++i) data[i * stride] = convert<T>(first + delta * static_cast<double>(i));
    }
  }));
  if (out->device().kind == DeviceKind::kCpu) return Status::Ok();
  return exec::copy_elements(host, *out);
}

const NamedKernel kCreationKernels[] = {
    {"aten::zeros.default", {&from_size<Fill::kZero>, false}},
    {"aten::ones.default", {&from_size<Fill::kOne>, false}},
    {"aten::full.default", {&from_size<Fill::kArgument>, false}},
    {"aten::empty.memory_format", {&from_size<Fill::kEmpty>, false}},
    {"aten::empty_strided.default", {&empty_strided, false}},
    {"aten::empty_permuted.default", {&empty_permuted, false}},
    {"aten::zeros_like.default", {&like<Fill::kZero>, false}},
    {"aten::ones_like.default", {&like<Fill::kOne>, false}},
    {"aten::full_like.default", {&like<Fill::kArgument>, false}},
    {"aten::fill.Scalar", {&fill, false}},
    {"aten::fill.Tensor", {&fill, false}},
    {"aten::zero.default", {&fill, false}},
    {"aten::empty_like.default", {&like<Fill::kEmpty>, false}},
    {"aten::new_zeros.default", {&new_from<Fill::kZero>, false}},
    {"aten::new_ones.default", {&new_from<Fill::kOne>, false}},
    {"aten::new_full.default", {&new_from<Fill::kArgument>, false}},
    {"aten::new_empty.default", {&new_from<Fill::kEmpty>, false}},
    {"aten::scalar_tensor.default", {&scalar_tensor, false}},
    {"aten::arange.default", {[](KernelContext& ctx) { return arange_with(ctx, false, false); }, false}},
    {"aten::arange.start", {[](KernelContext& ctx) { return arange_with(ctx, true, false); }, false}},
    {"aten::arange.start_step", {[](KernelContext& ctx) { return arange_with(ctx, true, true); }, false}},
};

// One kernel per target for the host and CUDA (see the top of this file).
const bool kCreationKernelsRegistered = register_for_devices(kCreationKernels, {DeviceKind::kCpu, DeviceKind::kCuda});

}  // namespace
}  // namespace nrt::exec::cpu
