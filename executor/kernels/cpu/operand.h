// Arguments that are a Tensor or a Scalar (a Python number: bool, int or float). Element-wise
// kernels accept either in every operand position, because torch.export records `x + 1` as
// aten::add.Tensor with an int `other`. A scalar takes part in type promotion as a wrapped number
// and is then read as one element of the computation's dtype, repeated (loop_operand.h).
// A tensor operand is the context's own argument, by address: reading operands copies no Tensor.
#pragma once

#include <optional>
#include <span>
#include <string_view>

#include "executor/runtime/kernel.h"
#include "executor/kernels/cpu/dim_vector.h"
#include "executor/kernels/cpu/element_conversion.h"

namespace nrt::exec::cpu {

struct ScalarValue {
  enum class Kind { kBool, kInt, kFloat };
  Kind kind = Kind::kInt;
  int64_t integer = 0;  // kBool (0/1) and kInt
  double real = 0.0;    // kFloat

  static ScalarValue of_bool(bool b) { return {Kind::kBool, b ? 1 : 0, 0.0}; }
  static ScalarValue of_int(int64_t i) { return {Kind::kInt, i, 0.0}; }
  static ScalarValue of_float(double d) { return {Kind::kFloat, 0, d}; }

  // The dtype a Python scalar of this kind promotes as (bool, int64, float32).
  ScalarType dtype() const;
  bool is_floating() const { return kind == Kind::kFloat; }
  double to_double() const { return kind == Kind::kFloat ? real : static_cast<double>(integer); }

  // The value in element type T (integers wrap, floats saturate as convert<> does).
  template <class T>
  T as() const {
    if (kind == Kind::kFloat) return convert<T>(real);
    if (kind == Kind::kBool) return convert<T>(integer != 0);
    return convert<T>(integer);
  }
  // Stores the value as one element of `dtype` at `element` (8 bytes suffice for every kernel
  // dtype); false, writing nothing, for a dtype outside the kernels' set.
  bool store_as(ScalarType dtype, void* element) const;
};

struct Operand {
  const Tensor* tensor = nullptr;  // the context's argument (lives while the kernel runs); null for a scalar
  ScalarValue scalar;
};

// The argument as a tensor or scalar; an error when absent or of another kind, or a tensor whose
// dtype the kernels do not compute on.
Result<Operand> read_operand(const KernelContext& ctx, std::string_view name, int position);
// A Tensor argument without copying it (KernelContext::tensor returns a copy, whose sizes and
// strides vectors are allocated on every call).
Result<const Tensor*> read_tensor(const KernelContext& ctx, std::string_view name, int position);
// A Scalar argument; `fallback` applies when absent or None.
Result<ScalarValue> read_scalar(const KernelContext& ctx, std::string_view name, int position,
                                std::optional<ScalarValue> fallback = std::nullopt);
Result<std::optional<ScalarValue>> read_optional_scalar(const KernelContext& ctx, std::string_view name, int position);
// A `str?` argument.
Result<std::optional<std::string>> read_optional_string(const KernelContext& ctx, std::string_view name,
                                                        int position);

// torch.result_type over the operands (UNKNOWN when a tensor's dtype is outside the kernels' set).
ScalarType operands_result_type(std::span<const Operand> operands);
// Sets `shape` to the operands' shapes broadcast together; false when they do not broadcast.
bool operands_broadcast_shape(std::span<const Operand> operands, DimVector& shape);

}  // namespace nrt::exec::cpu
