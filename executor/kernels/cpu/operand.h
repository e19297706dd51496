// Arguments that are a Tensor or a Scalar (a Python number: bool, int or float). Element-wise
// kernels accept either in every operand position, because torch.export records `x + 1` as
// aten::add.Tensor with an int `other`. A scalar takes part in type promotion as a wrapped number
// and is then materialised as a 0-d tensor of the computation's dtype.
#pragma once

#include <optional>
#include <span>
#include <string_view>
#include <variant>
#include <vector>

#include "executor/kernel.h"
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
};

using Operand = std::variant<Tensor, ScalarValue>;

// The argument as a tensor or scalar; an error when absent or of another kind, or a tensor whose
// dtype the kernels do not compute on.
Result<Operand> read_operand(const KernelContext& ctx, std::string_view name, int position);
// A Scalar argument; `fallback` applies when absent or None.
Result<ScalarValue> read_scalar(const KernelContext& ctx, std::string_view name, int position,
                                std::optional<ScalarValue> fallback = std::nullopt);
Result<std::optional<ScalarValue>> read_optional_scalar(const KernelContext& ctx, std::string_view name, int position);
// A `str?` argument.
Result<std::optional<std::string>> read_optional_string(const KernelContext& ctx, std::string_view name,
                                                        int position);

// torch.result_type over the operands (UNKNOWN when a tensor's dtype is outside the kernels' set).
ScalarType operands_result_type(std::span<const Operand> operands);
// Shape of the operands broadcast together; nullopt when they do not broadcast.
std::optional<std::vector<int64_t>> operands_broadcast_shape(std::span<const Operand> operands);

// The operand as a tensor of `dtype` broadcast to `sizes`: a view when the tensor already has the
// dtype, else a converted copy; a scalar becomes a 0-d tensor expanded with stride 0.
Tensor operand_as(const Operand& operand, ScalarType dtype, const std::vector<int64_t>& sizes);

}  // namespace nrt::exec::cpu
